#!/usr/bin/env python3
"""samples/moe_layer.coco against the same layers written by hand in PyTorch.

    moe_reference.py --coconetc COCONETC --work DIR [--file FILE] [--only NAME]

The reference is each layer as a PyTorch user writes it, rank by rank, in
float64. moe_layer (Mixtral): softmax router, top 2 (renormalised);
moe_ep_tp is the same layer with each expert cut over a second axis (and
moe_dropless_ep_tp its dropless form).
deepseek_moe (DeepSeek-V3): sigmoid affinities, top 8 normalised over the
chosen, a shared expert. Both: capacity routing in GShard's
order (every token's first choice, then every token's second; an expert
takes at most C assignments from each rank, the rest are dropped), SwiGLU
experts over the tokens every rank sent them, the gate-weighted sum, and
the load-balancing loss (Switch's; DeepSeek's over the affinities
normalised over all experts). The program runs in the simulator (the
oracle the CPU and CUDA targets are held to bit for bit by codegen-cpu and
cuda-emu) on the same inputs, in f32.

Bound: every element of y and the loss within 2^-20 of the reference,
relative to the largest |y| (f32 carries 24 bits; the router's softmax
and three matmuls each round once per element, 2^-20 leaves a factor of
2^4 for their sums; measured: below 2^-23). Cases: each layer on 1, 2
and 4 ranks, with a capacity that drops assignments and one that drops
none: a capacity off by one (positions counted from 1) fails the 6 that
drop, the gate left unnormalised all 12.

Dropless (moe_dropless, deepseek_dropless: alltoallv and grouped_matmul)
on 1, 2 and 4 ranks, also with every token's first choice on expert 0 (one
rank gets every rank's rows): against the reference with no drops (C = N)
within the bound, and bit for bit against the capacity layer with C = N,
which drops nothing and adds the same products in the same order; a count
exchanged for the wrong peer (in the simulator) fails the 4-rank cases.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

BOUND = 2.0 ** -20


def reference(inputs, capacity, k, deepseek):
    """y [P, N, H] and the auxiliary loss, in float64."""
    t = {name: torch.from_numpy(a).double() for name, a in inputs.items()}
    x, wg, w1, w3, w2 = t["x"], t["wg"], t["w1"], t["w3"], t["w2"]
    P, N, H = x.shape
    E = wg.shape[1]
    buf = torch.zeros(P, E, capacity, H, dtype=torch.float64)
    routed = torch.zeros(E, dtype=torch.float64)
    probs_sum = torch.zeros(E, dtype=torch.float64)
    routes = []
    for p in range(P):
        if deepseek:
            probs = torch.sigmoid(x[p] @ wg)                     # [N, E]
            share = probs / probs.sum(dim=-1, keepdim=True)
        else:
            probs = share = torch.softmax(x[p] @ wg, dim=-1)
        top_p, top = probs.topk(k, dim=-1)                       # [N, k]
        gate = top_p / top_p.sum(dim=-1, keepdim=True)
        probs_sum += share.sum(dim=0)
        count = [0] * E
        kept = []                                 # (token, choice, expert, slot)
        for c in range(k):                        # first choices first
            for n in range(N):
                e = int(top[n, c])
                routed[e] += 1
                if count[e] < capacity:
                    buf[p, e, count[e]] = x[p, n]
                    kept.append((n, c, e, count[e]))
                    count[e] += 1
        routes.append((gate, kept))
    out = torch.zeros_like(buf)
    for e in range(E):
        rows = buf[:, e].reshape(P * capacity, H)  # every rank's tokens for e
        h = F.silu(rows @ w1[e]) * (rows @ w3[e])
        out[:, e] = (h @ w2[e]).reshape(P, capacity, H)
    y = torch.zeros(P, N, H, dtype=torch.float64)
    for p, (gate, kept) in enumerate(routes):
        for n, c, e, s in kept:
            y[p, n] += gate[n, c] * out[p, e, s]
    if deepseek:
        y += (F.silu(x @ t["ws1"]) * (x @ t["ws3"])) @ t["ws2"]
    tokens = P * N
    aux = E * torch.sum(routed / (k * tokens) * (probs_sum / tokens))
    return y.numpy(), float(aux)


def run_case(args, program, sizes, seed, skew=False):
    if args.only and program != args.only:
        return True
    P, N, H, E, Fh = (sizes[k] for k in "PNHEF")
    # Dropless: no capacity, so none dropped: the reference with C = N (a
    # token's experts are distinct, so an expert gets at most N of a rank's).
    dropless = "_dropless" in program
    C = N if dropless else sizes["C"]
    deepseek = program.startswith("deepseek")
    rng = np.random.default_rng(seed)
    inputs = {
        "x": rng.uniform(-1, 1, (P, N, H)),
        "wg": rng.uniform(-1, 1, (H, E)),
        "w1": rng.uniform(-1, 1, (E, H, Fh)) / np.sqrt(H),
        "w3": rng.uniform(-1, 1, (E, H, Fh)) / np.sqrt(H),
        "w2": rng.uniform(-1, 1, (E, Fh, H)) / np.sqrt(Fh),
    }
    if skew:
        # Every token's first choice is expert 0: one rank gets every
        # rank's rows, the others none from some peers.
        inputs["x"] = np.abs(inputs["x"])
        inputs["wg"][:, 0] += 4
    if deepseek:
        S = sizes["S"]
        inputs.update({
            "ws1": rng.uniform(-1, 1, (H, S)) / np.sqrt(H),
            "ws3": rng.uniform(-1, 1, (H, S)) / np.sqrt(H),
            "ws2": rng.uniform(-1, 1, (S, H)) / np.sqrt(S),
        })
    work = os.path.join(args.work, f"{program}-p{P}-c{C}-s{seed}{'-skew' if skew else ''}")
    os.makedirs(work, exist_ok=True)
    cmd = [args.coconetc, "sim", "--size",
           ",".join(f"{k}={v}" for k, v in sizes.items()),
           "--output-dir", work, "--program", program]
    for name, value in inputs.items():
        inputs[name] = value.astype(np.float32)
        path = os.path.join(work, name + ".npy")
        np.save(path, inputs[name])
        cmd += ["--input", f"{name}={path}"]
    cmd.append(args.file)
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        return False
    if dropless:
        # The capacity layer that drops nothing (C = N) computes the same
        # sums in the same order: bit for bit the same results.
        same = ("deepseek_moe" if deepseek else
                "moe_ep_tp" if "T" in sizes else "moe_layer")
        cap = os.path.join(work, "capacity")
        os.makedirs(cap, exist_ok=True)
        sized = dict(sizes, C=N)
        ccmd = [c for c in cmd]
        ccmd[ccmd.index("--size") + 1] = ",".join(f"{k}={v}" for k, v in sized.items())
        ccmd[ccmd.index("--output-dir") + 1] = cap
        ccmd[ccmd.index("--program") + 1] = same
        run = subprocess.run(ccmd, capture_output=True, text=True)
        for name in ("y", "aux"):
            a = np.load(os.path.join(work, name + ".npy"))
            b = (np.load(os.path.join(cap, name + ".npy"))
                 if run.returncode == 0 else None)
            if b is None or a.tobytes() != b.tobytes():
                print(run.stdout + run.stderr)
                print(f"FAILED: {program} on {P} ranks: {name} differs from "
                      f"{same}'s with C = N")
                return False
    y = np.load(os.path.join(work, "y.npy")).astype(np.float64)
    aux = float(np.load(os.path.join(work, "aux.npy")))
    ref_y, ref_aux = reference(inputs, C, 8 if deepseek else 2, deepseek)
    scale = max(1.0, float(np.abs(ref_y).max()))
    dy = float(np.abs(y - ref_y).max()) / scale
    daux = abs(aux - ref_aux) / max(1.0, abs(ref_aux))
    ok = dy <= BOUND and daux <= BOUND
    where = f"{P} x {sizes['T']}" if "T" in sizes else str(P)
    print(f"{'ok' if ok else 'FAILED'}: {program} on {where} ranks, N={N} E={E} "
          f"{'dropless' if dropless else f'C={C}'}{' skewed' if skew else ''} "
          f"seed {seed}: y within {dy:.2e}, aux {aux:.6f} within {daux:.2e} "
          f"of the reference (bound {BOUND:.1e})")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", help="run the cases of this program only")
    ap.add_argument("--file", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "samples", "moe_layer.coco"))
    args = ap.parse_args()
    ok = True
    # moe_layer: N=16 tokens a rank make 32 assignments over 4 experts: a
    # capacity of 5 drops some on every rank, 32 drops none. deepseek_moe:
    # 128 assignments over 16 experts: 6 drops some, 128 none.
    for P in (1, 2, 4):
        for C in (5, 32):
            sizes = {"P": P, "N": 16, "H": 8, "E": 4, "F": 12, "C": C}
            ok &= run_case(args, "moe_layer", sizes, seed=P * 100 + C)
        for C in (6, 128):
            sizes = {"P": P, "N": 16, "H": 8, "E": 16, "F": 6, "C": C,
                     "S": 10}
            ok &= run_case(args, "deepseek_moe", sizes, seed=P * 100 + C)
    # Dropless: the rows each expert gets, however many; skewed: every
    # token's first choice on one expert (one rank gets every rank's).
    for P in (1, 2, 4):
        for skew in (False, True):
            sizes = {"P": P, "N": 16, "H": 8, "E": 4, "F": 12}
            ok &= run_case(args, "moe_dropless", sizes, seed=P * 100 + 3, skew=skew)
            sizes = {"P": P, "N": 16, "H": 8, "E": 16, "F": 6, "S": 10}
            ok &= run_case(args, "deepseek_dropless", sizes, seed=P * 100 + 5,
                           skew=skew)
    # moe_ep_tp: the experts' widths cut over T = 2 (row-parallel partial
    # sums completed by an allreduce: the same values within the bound).
    for P in (1, 2):
        for C in (5, 32):
            sizes = {"P": P, "T": 2, "N": 16, "H": 8, "E": 4, "F": 12, "C": C}
            ok &= run_case(args, "moe_ep_tp", sizes, seed=P * 100 + C + 7)
    # moe_dropless_ep_tp: dropless with the same cut (bit for bit moe_ep_tp
    # with C = N), skewed too.
    for P in (1, 2):
        for skew in (False, True):
            sizes = {"P": P, "T": 2, "N": 16, "H": 8, "E": 4, "F": 12}
            ok &= run_case(args, "moe_dropless_ep_tp", sizes,
                           seed=P * 100 + 11, skew=skew)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
