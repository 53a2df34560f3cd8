#!/usr/bin/env python3
"""One rank of tools/bench-python.sh (under mpirun): times a generated step
called from Python, per call, with NumPy arrays and with torch tensors,
for each size N given; prints one line per (N, arrays): the median over
--rounds rounds of the mean of --calls calls, in microseconds.

  python_overhead.py --modules DIR --module NAME --sizes 1,4096,1048576
"""

import argparse
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", required=True)
    ap.add_argument("--module", default="adam")
    ap.add_argument("--sizes", default="1,4096")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, args.modules)
    module = __import__(args.module)
    comm = MPI.COMM_WORLD
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    for n in [int(s) for s in args.sizes.split(",")]:
        n = n * comm.Get_size()
        step = module.Step(comm, sizes={"N": n})
        g = np.full(n, 1e-3, np.float32)
        w = np.zeros(n, np.float32)
        _, shape = step.block("m")
        m, v = np.zeros(shape, np.float32), np.full(shape, 1e-3, np.float32)
        kinds = [("numpy", (g, w, m, v))]
        if torch is not None:
            kinds.append(("torch", tuple(torch.from_numpy(a)
                                         for a in (g, w, m, v))))
        for kind, arrays in kinds:
            rounds = []
            for _ in range(args.rounds):
                comm.Barrier()
                start = time.perf_counter()
                for t in range(args.calls):
                    step(*arrays, 1e-3, 0.9, 0.999, 1e-8, 1 + t % 100)
                rounds.append((time.perf_counter() - start) / args.calls)
            worst = comm.allreduce(statistics.median(rounds), op=MPI.MAX)
            if comm.Get_rank() == 0:
                print(f"{n // comm.Get_size()}\t{kind}\t{1e6 * worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
