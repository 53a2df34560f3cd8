#!/usr/bin/env python3
"""Times an optimizer update of coconet.jax against optax on the CPU:

    PYTHONPATH=build/python OMP_NUM_THREADS=1 \
        mpirun --oversubscribe -np 2 .venv/bin/python3 tools/bench-jax-optim.py

prints a table (rank 0) of the median time per update of each row, its
ratio to the reference (`optax`: the gradients averaged with one
MPI_Allreduce of their flat concatenation through mpi4py, as a
multi-process JAX user without a collective library does, then
optax.adamw's update and optax.apply_updates, jitted, the state donated;
on one rank the update alone), and to the memory floor (`x floor`: AdamW
reads g, w, m, v and writes w, m, v, 28 bytes per parameter, at the
bandwidth of a NumPy copy measured here). `coconet S` is
coconet.jax.adamw under schedule S, jitted the same way: its gradients'
average is inside the update. Rows are timed in rounds (A B C ... A B C
...) so that a drift of the machine touches each alike; each time is the
median over the rounds of the mean of --steps updates.
"""
import argparse
import functools
import time

import numpy as np
from mpi4py import MPI

import jax
import jax.numpy as jnp
import optax

import coconet.jax as cj


def model(n, layers):
    width = int((n / layers) ** 0.5)
    keys = jax.random.split(jax.random.PRNGKey(0), layers)
    return [jax.random.normal(k, (width, width), jnp.float32) / width for k in keys]


def stepper(opt):
    def step(params, state, grads):
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state
    return jax.jit(step, donate_argnums=(1,))


class Optax:
    def __init__(self, params, comm):
        self.opt = optax.adamw(1e-3)
        self.state = self.opt.init(params)
        self.step_fn = stepper(self.opt)
        self.comm = comm

    def step(self, params, grads):
        if self.comm.Get_size() > 1:
            leaves, treedef = jax.tree_util.tree_flatten(grads)
            flat = np.concatenate([np.asarray(g).ravel() for g in leaves])
            self.comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)
            flat *= np.float32(1.0 / self.comm.Get_size())
            out, o = [], 0
            for g in leaves:
                out.append(jnp.asarray(flat[o:o + g.size].reshape(g.shape)))
                o += g.size
            grads = treedef.unflatten(out)
        params, self.state = self.step_fn(params, self.state, grads)
        return params


class Coconet:
    def __init__(self, params, schedule, cache):
        self.opt = cj.adamw(1e-3, schedule=schedule, cache_dir=cache)
        self.state = self.opt.init(params)
        self.step_fn = stepper(self.opt)

    def step(self, params, grads):
        params, self.state = self.step_fn(params, self.state, grads)
        return params


def bandwidth(n):
    """Bytes per second of a NumPy copy of n f32 (read + write)."""
    a, b = np.ones(n, np.float32), np.empty(n, np.float32)
    best = float("inf")
    for _ in range(10):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 8.0 * n / best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", type=int, default=4_200_000)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--schedules", default="ar_c,rs_c_ag,fused_rs_c_ag")
    ap.add_argument("--cache", default=None)
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    rank, ranks = comm.Get_rank(), comm.Get_size()
    base = model(args.params, args.layers)
    n = sum(p.size for p in base)
    rng = np.random.default_rng(rank)
    grads = [jnp.asarray(rng.standard_normal(p.shape, np.float32) * 1e-3) for p in base]
    rows = [("optax", Optax(base, comm))]
    for s in args.schedules.split(","):
        rows.append(("coconet " + s, Coconet(base, s, args.cache)))
    params = {name: [jnp.array(p) for p in base] for name, _ in rows}
    for name, row in rows:  # compiled and warm
        for _ in range(2):
            params[name] = row.step(params[name], grads)
        jax.block_until_ready(params[name])
    times = {name: [] for name, _ in rows}
    for _ in range(args.rounds):
        for name, row in rows:
            comm.Barrier()
            t = time.perf_counter()
            p = params[name]
            for _ in range(args.steps):
                p = row.step(p, grads)
            jax.block_until_ready(p)
            params[name] = p
            dt = comm.allreduce((time.perf_counter() - t) / args.steps, op=MPI.MAX)
            times[name].append(dt)
    floor = 28.0 * n / comm.allreduce(bandwidth(n), op=MPI.MIN)
    if rank == 0:
        ref = np.median(times["optax"])
        print("%d parameters (%d leaves), %d ranks, jax %s" % (n, len(base), ranks, jax.__version__))
        print("| ranks | row | ms/step | x optax | x floor |")
        print("|---|---|---|---|---|")
        for name, _ in rows:
            t = np.median(times[name])
            print("| %d | %s | %.2f | %.2f | %.2f |" % (ranks, name, 1e3 * t, t / ref, t / floor))


if __name__ == "__main__":
    main()
