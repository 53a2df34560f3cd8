#!/usr/bin/env python3
"""The generated Adam step (samples/python/adam.coco) in a NumPy training
loop: data-parallel least squares, every rank with its own rows.

    python3 -m coconet build samples/python/adam.coco --program adam \
        --schedule rs_c_ag -o build/modules
    mpirun -np 2 python3 samples/python/numpy_adam.py --modules build/modules

The step sums the ranks' gradients (reducescatter), updates this rank's
slice of the weights with its slice of the moments (ZeRO) and gathers the
weights (allgather), in place in the NumPy arrays. Prints the loss every
--every steps; exit status 1 unless it fell below a tenth of its start.
"""

import argparse
import os
import sys

import numpy as np
from mpi4py import MPI


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", required=True)
    ap.add_argument("--module", default="adam_rs_c_ag")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--every", type=int, default=50)
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.modules))
    step_module = __import__(args.module)

    comm = MPI.COMM_WORLD
    rank, ranks = comm.Get_rank(), comm.Get_size()
    features, rows = 64 * ranks, 256          # N: a multiple of the ranks
    rng = np.random.default_rng(100 + rank)   # this rank's own rows
    truth = np.random.default_rng(0).standard_normal(features)
    x = rng.standard_normal((rows, features)).astype(np.float32)
    y = (x @ truth).astype(np.float32)

    step = step_module.Step(comm, sizes={"N": features})
    w = np.zeros(features, np.float32)        # replicated: every rank
    g = np.zeros(features, np.float32)        # local: this rank's gradient
    # The moments: this rank's block of them (a slice where the schedule
    # shards them).
    _, shape = step.block("m")
    m, v = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
    first = None
    for t in range(1, args.steps + 1):
        r = x @ w - y
        loss = comm.allreduce(float(r @ r), op=MPI.SUM) / (rows * ranks)
        first = loss if first is None else first
        g[:] = (2.0 / (rows * ranks)) * (x.T @ r)
        step(g, w, m, v, 0.05, 0.9, 0.999, 1e-8, t)
        if rank == 0 and (t == 1 or t % args.every == 0):
            print(f"step {t:4d}  loss {loss:.6f}")
    if rank == 0:
        print(f"{args.module}: block of m on rank 0: {step.block('m')}")
    return 0 if loss < first / 10 else 1


if __name__ == "__main__":
    sys.exit(main())
