#!/usr/bin/env python3
"""Times an optimizer step of coconet.torch against torch.optim on the CPU:

    PYTHONPATH=build/python OMP_NUM_THREADS=1 \
        mpirun --oversubscribe -np 2 .venv/bin/python3 tools/bench-torch-optim.py

prints a table (rank 0) of the median time per step of each row, its
ratio to the reference (`torch`: the gradients averaged with one
MPI_Allreduce of the flat gradient buffer, as DDP's bucketed allreduce
does, then torch.optim.AdamW over views of flat buffers; foreach, torch's
fastest CPU path), and to the memory floor (`x floor`: AdamW reads g, w,
m, v and writes w, m, v, 28 bytes per parameter, at the bandwidth of a
torch copy measured here). Rows are timed in rounds (A B C ... A B C ...)
so that a drift of the machine touches each alike; each time is the
median over the rounds of the mean of --steps steps.
"""
import argparse
import time

import numpy as np
import torch
from mpi4py import MPI

import coconet.torch as ct


def model(n, layers):
    torch.manual_seed(0)
    width = int((n / layers) ** 0.5)
    return torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)])


class TorchReference:
    """torch.optim.AdamW after one allreduce of the flat gradients."""

    def __init__(self, m, comm):
        params = list(m.parameters())
        n = sum(p.numel() for p in params)
        self.w, self.g = torch.zeros(n), torch.zeros(n)
        o = 0
        for p in params:
            k = p.numel()
            self.w[o:o + k].copy_(p.data.reshape(-1))
            p.data = self.w[o:o + k].view_as(p)
            p.grad = self.g[o:o + k].view_as(p)
            o += k
        self.comm = comm
        self.opt = torch.optim.AdamW(params, lr=1e-3, foreach=True)

    def step(self):
        self.comm.Allreduce(MPI.IN_PLACE, self.g.numpy(), op=MPI.SUM)
        self.g.mul_(1.0 / self.comm.Get_size())
        self.opt.step()


class Coconet:
    def __init__(self, m, schedule, cache):
        self.opt = ct.AdamW(m.parameters(), lr=1e-3, schedule=schedule, cache_dir=cache)

    def step(self):
        self.opt.step()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--params", type=int, default=1 << 22, help="parameters (about)")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cache", default=None, help="coconet.cache's directory")
    args = parser.parse_args()
    torch.set_num_threads(1)
    comm = MPI.COMM_WORLD
    rows = [("torch", lambda m: TorchReference(m, comm))]
    for s in ("ar_c", "rs_c_ag", "fused_rs_c_ag"):
        rows.append(("coconet " + s, lambda m, s=s: Coconet(m, s, args.cache)))
    runs = []
    for name, make in rows:
        m = model(args.params, args.layers)
        r = make(m)
        for p in m.parameters():
            p.grad.normal_()
        r.step()  # compiles and creates the program
        runs.append((name, r, sum(p.numel() for p in m.parameters())))
    n = runs[0][2]
    a, b = torch.empty(7 * n), torch.empty(7 * n)
    times = {name: [] for name, _, _ in runs}
    floors = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        b.copy_(a)
        floors.append((time.perf_counter() - t0) / 2)  # 7n floats read and written: 2 x 28n bytes
        for name, r, _ in runs:
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(args.steps):
                r.step()
            comm.Barrier()
            times[name].append((time.perf_counter() - t0) / args.steps)
    if comm.Get_rank() == 0:
        floor = float(np.median(floors))
        ref = float(np.median(times["torch"]))
        print("%d ranks, %d parameters (%d layers), AdamW step, median of %d rounds of %d steps"
              % (comm.Get_size(), n, args.layers, args.rounds, args.steps))
        print("memory floor (28 bytes per parameter at a torch copy's bandwidth): %.2f ms"
              % (floor * 1e3))
        print("%-24s %9s %8s %8s" % ("", "ms/step", "x torch", "x floor"))
        for name, _, _ in runs:
            t = float(np.median(times[name]))
            print("%-24s %9.2f %8.2f %8.2f" % (name, t * 1e3, t / ref, t / floor))


if __name__ == "__main__":
    main()
