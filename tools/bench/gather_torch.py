#!/usr/bin/env python3
"""The MoE gathers as a PyTorch user writes them, and the memory floor:
one rank's M rows of H float32, a random permutation of them as the index.

- combine: `back.index_select(0, row) * gate` (the gathered rows stored,
  then weighted: what moe_torch.py's combine does);
- dispatch: `x.index_select(0, holder).to(torch.bfloat16)`;
- floor: the bytes the fused kernel cannot avoid at this machine's copy
  speed: the combine reads M * H floats and writes M * H (numpy's copyto
  of a contiguous [M, H] float32 array: 8 bytes an element); the dispatch
  reads M * H floats and writes M * H bf16 (6 bytes an element: the
  copy's time times 6 / 8).

Prints `combine X ms dispatch Y ms floor-combine Z ms floor-dispatch W ms`,
each the median of --iterations after a warm-up.

    gather_torch.py --rows M --hidden H --threads T --iterations I
"""
import argparse
import statistics
import time

import numpy as np
import torch


def median_ms(f, iterations):
    f()
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    for name in ("rows", "hidden", "threads", "iterations"):
        ap.add_argument("--" + name, type=int, required=True)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    g = torch.Generator().manual_seed(0)
    back = torch.rand(a.rows, a.hidden, generator=g)
    gate = torch.rand(a.rows, 1, generator=g)
    row = torch.randperm(a.rows, generator=g)
    combine = median_ms(lambda: back.index_select(0, row) * gate, a.iterations)
    dispatch = median_ms(
        lambda: back.index_select(0, row).to(torch.bfloat16), a.iterations)
    src = np.random.default_rng(0).random((a.rows, a.hidden), dtype=np.float32)
    dst = np.empty_like(src)
    floor_c = median_ms(lambda: np.copyto(dst, src), a.iterations)
    floor_d = floor_c * 6 / 8
    print(f"combine {combine:.3f} ms dispatch {dispatch:.3f} ms "
          f"floor-combine {floor_c:.3f} ms floor-dispatch {floor_d:.3f} ms")


if __name__ == "__main__":
    main()
