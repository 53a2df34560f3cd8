#!/usr/bin/env python3
"""The Python quick start (README.md): a PyTorch training loop whose only
coconet line is the optimizer.

    PYTHONPATH=build/python OMP_NUM_THREADS=1 \
        mpirun --oversubscribe -np 2 .venv/bin/python3 samples/python/quickstart.py

Each rank trains the same model on its own share of the data; the
optimizer averages the gradients over the ranks and updates the weights
(AdamW, compiled on first use from stdlib/optim/torch.coco under its
default schedule: reducescatter + update + allgather as one kernel, the
moments sharded over the ranks). Prints the loss every 50 steps and exits
1 unless it fell below a tenth of its start.
"""
import sys

import torch
from mpi4py import MPI

import coconet.torch

rank, ranks = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
torch.manual_seed(0)                                   # the same model on every rank
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 1))
opt = coconet.torch.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)  # the one line

gen = torch.Generator().manual_seed(1 + rank)          # this rank's data
x = torch.randn(256, 16, generator=gen)
y = torch.sin(x.sum(dim=1, keepdim=True))
first = None
for step in range(1, 201):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    first = first or loss.item()
    if rank == 0 and step % 50 == 0:
        print("step %3d  loss %.4f" % (step, loss.item()), flush=True)
if rank == 0:
    print("%d ranks: loss %.4f -> %.4f" % (ranks, first, loss.item()))
sys.exit(0 if loss.item() < first / 10 else 1)
