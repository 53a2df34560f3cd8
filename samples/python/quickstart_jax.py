#!/usr/bin/env python3
"""The JAX quick start (README.md): a JAX training step whose only coconet
line is the optax transformation.

    PYTHONPATH=build/python OMP_NUM_THREADS=1 \
        mpirun --oversubscribe -np 2 .venv/bin/python3 samples/python/quickstart_jax.py

Each rank trains the same model on its own share of the data; the update
averages the gradients over the ranks and steps AdamW (compiled on first
use from stdlib/optim/torch.coco under its default schedule: reducescatter,
the update of this rank's slice, allgather; the moments sharded over the
ranks), inside jax.jit, the optimizer state donated so that it is updated
where it lies. Prints the loss every 50 steps and exits 1 unless it fell
below a tenth of its start.
"""
import functools
import sys

import jax
import jax.numpy as jnp
import optax
from mpi4py import MPI

import coconet.jax

rank, ranks = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
k1, k2 = jax.random.split(jax.random.PRNGKey(0))       # the same model on every rank
params = {"w1": jax.random.normal(k1, (16, 64)) / 4, "b1": jnp.zeros(64),
          "w2": jax.random.normal(k2, (64, 1)) / 8, "b2": jnp.zeros(1)}
opt = coconet.jax.adamw(1e-2, weight_decay=0.01)       # the one line: was optax.adamw
state = opt.init(params)

x = jax.random.normal(jax.random.PRNGKey(1 + rank), (256, 16))   # this rank's data
y = jnp.sin(x.sum(axis=1, keepdims=True))


def loss_fn(p):
    return jnp.mean((jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)


@functools.partial(jax.jit, donate_argnums=(1,))
def train_step(p, s):
    loss, grads = jax.value_and_grad(loss_fn)(p)
    updates, s = opt.update(grads, s, p)
    return optax.apply_updates(p, updates), s, loss


first = None
for step in range(1, 201):
    params, state, loss = train_step(params, state)
    first = first or float(loss)
    if rank == 0 and step % 50 == 0:
        print("step %3d  loss %.4f" % (step, float(loss)), flush=True)
if rank == 0:
    print("%d ranks: loss %.4f -> %.4f" % (ranks, first, float(loss)))
sys.exit(0 if float(loss) < first / 10 else 1)
