"""train.cpp's step from Python: the module coconet_add_python_module built
(momentum_py/), the installed coconet package on PYTHONPATH."""
import sys

import numpy as np
from mpi4py import MPI

import sgd_momentum_momentum_rs_c_ag as momentum

comm = MPI.COMM_WORLD
P = comm.Get_size()
step = momentum.Step(comm)
g, w = np.full(80 * P, 1.0, np.float32), np.full(80 * P, 2.0, np.float32)
vel = np.full(80, 0.5, np.float32)  # sharded: this rank's slice (N / P)
lr, mu, wd = 0.125, 0.875, 0.25
step(g, w, vel, lr, mu, wd)
v1 = mu * 0.5 + P + wd * 2.0
w1 = 2.0 - lr * v1
ok = bool(np.all(np.abs(w - w1) < 1e-6) and np.all(np.abs(vel - v1) < 1e-6))
if comm.Get_rank() == 0:
    print(f"train.py on {P} ranks: w[0] = {w[0]:.6f} (expected {w1:.6f})"
          + ("" if ok else ": WRONG"))
sys.exit(0 if ok else 1)
