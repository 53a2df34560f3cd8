#!/usr/bin/env python3
"""The MoE layer of samples/moe_layer.coco as a PyTorch user writes it,
timed on one process per rank (under mpirun, over gloo). Prints
`torch X ms` on rank 0: the median step.

Capacity routing as GShard and Switch do it: each token's top k, the
assignments in order (every token's first choice, then every second...),
an assignment's position in its expert from a cumsum of the one-hot mask,
those past the capacity dropped; index_put into the [E * C, H] buffer,
all_to_all_single to the experts' ranks, bmm, back, and the gate-weighted
sum. Timed between barriers; inputs random, seeded by rank.

Dropless (`--capacity 0`) as Megatron's all-to-all dispatcher does it:
the assignments sorted by expert (a stable argsort), the per-expert
counts exchanged with all_to_all_single and brought to the host (the
split sizes are Python lists), the rows with all_to_all_single of those
splits, each (source rank, expert) segment through its expert's SwiGLU,
the rows back with the splits reversed, un-permuted, and the same
weighted sum.
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def route(x, wg, k, deepseek):
    """The router: each expert's share of every token (for the loss), each
    token's k gates and its assignments in GShard's order ([k*N])."""
    logits = x @ wg
    if deepseek:
        s = torch.sigmoid(logits)
        share = s / s.sum(-1, keepdim=True)
    else:
        s = share = torch.softmax(logits, dim=-1)
    top_s, top = s.topk(k, dim=-1)
    gate = top_s / top_s.sum(-1, keepdim=True)
    return share, gate, top.t().reshape(-1)


def combine(x, out, gate, shared, k, routed, share):
    """The gate-weighted sum of each token's k outputs, the shared expert,
    and the load-balancing loss."""
    N, H = x.shape
    E = share.shape[1]
    y = (out * gate.t().reshape(-1, 1)).view(k, N, H).sum(0)
    if shared is not None:
        ws1, ws3, ws2 = shared
        y = y + (F.silu(x @ ws1) * (x @ ws3)) @ ws2
    mean = share.sum(0)
    tokens = torch.tensor([float(N)])
    for v in (routed, mean, tokens):
        dist.all_reduce(v)
    aux = E * (routed * mean).sum() / (k * tokens * tokens)
    return y, aux


def layer(x, wg, w1, w3, w2, shared, k, C, deepseek, P):
    N, H = x.shape
    E = wg.shape[1]
    share, gate, choice = route(x, wg, k, deepseek)
    mask = F.one_hot(choice, E)                        # [k*N, E]
    pos = (mask.cumsum(0) - mask).gather(1, choice[:, None]).squeeze(1)
    keep = pos < C
    flat = choice * C + pos
    token = torch.arange(N).repeat(k)
    buf = x.new_zeros(E * C, H)
    buf[flat[keep]] = x[token[keep]]
    El = E // P
    recv = torch.empty_like(buf)
    dist.all_to_all_single(recv, buf)
    t = recv.view(P, El, C, H).transpose(0, 1).reshape(El, P * C, H)
    h = F.silu(torch.bmm(t, w1)) * torch.bmm(t, w3)
    o = torch.bmm(h, w2)
    send = o.view(El, P, C, H).transpose(0, 1).contiguous()
    back = torch.empty_like(send)
    dist.all_to_all_single(back, send)
    back = back.view(E * C, H)
    out = x.new_zeros(k * N, H)
    out[keep] = back[flat[keep]]
    return combine(x, out, gate, shared, k, mask.sum(0).float(), share)


def dropless(x, wg, w1, w3, w2, shared, k, deepseek, P):
    N, H = x.shape
    E = wg.shape[1]
    El = E // P
    share, gate, choice = route(x, wg, k, deepseek)
    order = torch.argsort(choice, stable=True)
    counts = torch.bincount(choice, minlength=E)
    received = torch.empty_like(counts)
    dist.all_to_all_single(received, counts)
    send_split = counts.view(P, El).sum(1).tolist()    # to the host
    recv_split = received.view(P, El).sum(1).tolist()
    token = torch.arange(N).repeat(k)
    send = x[token[order]]
    recv = x.new_empty(sum(recv_split), H)
    dist.all_to_all_single(recv, send, recv_split, send_split)
    outs, start = [], 0
    for j, n in enumerate(received.tolist()):
        seg, g = recv[start:start + n], j % El
        outs.append((F.silu(seg @ w1[g]) * (seg @ w3[g])) @ w2[g])
        start += n
    o = torch.cat(outs)
    back = torch.empty_like(send)
    dist.all_to_all_single(back, o, send_split, recv_split)
    out = torch.empty_like(back)
    out[order] = back
    return combine(x, out, gate, shared, k, counts.float(), share)


def median_ms(f, iterations):
    f()
    times = []
    for _ in range(iterations):
        dist.barrier()
        start = time.perf_counter()
        f()
        dist.barrier()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    for name in ("tokens", "hidden", "experts", "k", "width", "shared",
                 "capacity", "threads", "iterations"):
        ap.add_argument("--" + name, type=int, required=True)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    dist.init_process_group("gloo", rank=rank, world_size=size)
    torch.manual_seed(rank)
    N, H, E, Fw = a.tokens, a.hidden, a.experts, a.width
    El = E // size
    x = torch.rand(N, H) * 2 - 1
    torch.manual_seed(1234)  # the router and shared expert are replicated
    wg = (torch.rand(H, E) * 2 - 1)
    shared = None
    if a.shared:
        shared = tuple((torch.rand(*s) * 2 - 1) / s[0] ** 0.5
                       for s in ((H, a.shared), (H, a.shared), (a.shared, H)))
    torch.manual_seed(100 + rank)
    w1 = (torch.rand(El, H, Fw) * 2 - 1) / H ** 0.5
    w3 = (torch.rand(El, H, Fw) * 2 - 1) / H ** 0.5
    w2 = (torch.rand(El, Fw, H) * 2 - 1) / Fw ** 0.5
    if a.capacity == 0:
        step = median_ms(lambda: dropless(x, wg, w1, w3, w2, shared, a.k,
                                          a.shared > 0, size), a.iterations)
    else:
        step = median_ms(lambda: layer(x, wg, w1, w3, w2, shared, a.k,
                                       a.capacity, a.shared > 0, size),
                         a.iterations)
    if rank == 0:
        print(f"torch {step:.3f} ms")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
