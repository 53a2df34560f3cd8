#!/usr/bin/env python3
"""samples/moe_layer.coco against the same layer written by hand in PyTorch.

    moe_reference.py --coconetc COCONETC --work DIR [--program FILE]

The reference is the layer as a PyTorch user writes it, rank by rank, in
float64: softmax router, top 2 (renormalised), capacity routing in GShard's
order (every token's first choice, then every token's second; an expert
takes at most C assignments from each rank, the rest are dropped), SwiGLU
experts over the tokens every rank sent them, the gate-weighted sum, and
Switch's load-balancing loss. The program runs in the simulator (the
oracle the CPU and CUDA targets are held to bit for bit by codegen-cpu and
cuda-emu) on the same inputs, in f32.

Bound: every element of y and the loss within 2^-20 of the reference,
relative to the largest |y| (f32 carries 24 bits; the router's softmax
and three matmuls each round once per element, 2^-20 leaves a factor of
2^4 for their sums; measured: below 2^-23). Cases: 1, 2 and 4 ranks, capacities that drop
assignments and one that drops none: a capacity off by one (positions
counted from 1) fails 3 of the 6 cases, the gate left unnormalised all 6.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

BOUND = 2.0 ** -20


def reference(x, wg, w1, w3, w2, capacity):
    """y [P, N, H] and the auxiliary loss, in float64."""
    x, wg, w1, w3, w2 = (torch.from_numpy(a).double()
                         for a in (x, wg, w1, w3, w2))
    P, N, H = x.shape
    E = wg.shape[1]
    buf = torch.zeros(P, E, capacity, H, dtype=torch.float64)
    routed = torch.zeros(E, dtype=torch.float64)
    probs_sum = torch.zeros(E, dtype=torch.float64)
    routes = []
    for p in range(P):
        probs = torch.softmax(x[p] @ wg, dim=-1)                 # [N, E]
        top_p, top = probs.topk(2, dim=-1)                       # [N, 2]
        gate = top_p / top_p.sum(dim=-1, keepdim=True)
        probs_sum += probs.sum(dim=0)
        count = [0] * E
        kept = []                                 # (token, choice, expert, slot)
        for k in range(2):                        # first choices first
            for n in range(N):
                e = int(top[n, k])
                routed[e] += 1
                if count[e] < capacity:
                    buf[p, e, count[e]] = x[p, n]
                    kept.append((n, k, e, count[e]))
                    count[e] += 1
        routes.append((gate, kept))
    out = torch.zeros_like(buf)
    for e in range(E):
        t = buf[:, e].reshape(P * capacity, H)   # every rank's tokens for e
        h = F.silu(t @ w1[e]) * (t @ w3[e])
        out[:, e] = (h @ w2[e]).reshape(P, capacity, H)
    y = torch.zeros(P, N, H, dtype=torch.float64)
    for p, (gate, kept) in enumerate(routes):
        for n, k, e, s in kept:
            y[p, n] += gate[n, k] * out[p, e, s]
    tokens = P * N
    aux = E * torch.sum(routed / (2 * tokens) * (probs_sum / tokens))
    return y.numpy(), float(aux)


def run_case(args, ranks, sizes, seed):
    P, N, H, E, Fh, C = (sizes[k] for k in "PNHEFC")
    rng = np.random.default_rng(seed)
    inputs = {
        "x": rng.uniform(-1, 1, (P, N, H)),
        "wg": rng.uniform(-1, 1, (H, E)),
        "w1": rng.uniform(-1, 1, (E, H, Fh)) / np.sqrt(H),
        "w3": rng.uniform(-1, 1, (E, H, Fh)) / np.sqrt(H),
        "w2": rng.uniform(-1, 1, (E, Fh, H)) / np.sqrt(Fh),
    }
    work = os.path.join(args.work, f"p{P}-c{C}-s{seed}")
    os.makedirs(work, exist_ok=True)
    cmd = [args.coconetc, "sim", "--size",
           ",".join(f"{k}={v}" for k, v in sizes.items()),
           "--output-dir", work]
    for name, value in inputs.items():
        inputs[name] = value.astype(np.float32)
        path = os.path.join(work, name + ".npy")
        np.save(path, inputs[name])
        cmd += ["--input", f"{name}={path}"]
    cmd.append(args.program)
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        return False
    y = np.load(os.path.join(work, "y.npy")).astype(np.float64)
    aux = float(np.load(os.path.join(work, "aux.npy")))
    ref_y, ref_aux = reference(inputs["x"], inputs["wg"], inputs["w1"],
                               inputs["w3"], inputs["w2"], C)
    scale = max(1.0, float(np.abs(ref_y).max()))
    dy = float(np.abs(y - ref_y).max()) / scale
    daux = abs(aux - ref_aux) / max(1.0, abs(ref_aux))
    ok = dy <= BOUND and daux <= BOUND
    print(f"{'ok' if ok else 'FAILED'}: {P} ranks, N={N} E={E} C={C} "
          f"seed {seed}: y within {dy:.2e}, aux {aux:.6f} within {daux:.2e} "
          f"of the reference (bound {BOUND:.1e})")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--program", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "samples", "moe_layer.coco"))
    args = ap.parse_args()
    ok = True
    # N=16 tokens a rank make 32 assignments over 4 experts: a capacity of
    # 5 drops some on every rank, 32 drops none.
    for P in (1, 2, 4):
        for C in (5, 32):
            sizes = {"P": P, "N": 16, "H": 8, "E": 4, "F": 12, "C": C}
            ok &= run_case(args, P, sizes, seed=P * 100 + C)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
