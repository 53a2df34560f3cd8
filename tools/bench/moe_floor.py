#!/usr/bin/env python3
"""The floor of one rank's MoE step: the experts' three matmuls on its
share (E / P experts, P * C rows each) with numpy's BLAS (a pip numpy
brings OpenBLAS), float32, the median of --iterations after a warm-up.
Prints `bmm X ms`.

    moe_floor.py --experts-local EL --rows R --hidden H --width F \
        --threads T --iterations I
"""
import argparse
import statistics
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    for name in ("experts-local", "rows", "hidden", "width", "threads",
                 "iterations"):
        ap.add_argument("--" + name, type=int, required=True)
    a = ap.parse_args()
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(a.threads)
    except ImportError:
        pass
    rng = np.random.default_rng(0)
    t = rng.random((a.experts_local, a.rows, a.hidden), dtype=np.float32)
    w1 = rng.random((a.experts_local, a.hidden, a.width), dtype=np.float32)
    w3 = rng.random((a.experts_local, a.hidden, a.width), dtype=np.float32)
    w2 = rng.random((a.experts_local, a.width, a.hidden), dtype=np.float32)

    def experts():
        h = np.matmul(t, w1)
        h *= np.matmul(t, w3)
        np.matmul(h, w2)
    experts()
    times = []
    for _ in range(a.iterations):
        start = time.perf_counter()
        experts()
        times.append((time.perf_counter() - start) * 1e3)
    print(f"bmm {statistics.median(times):.3f} ms")


if __name__ == "__main__":
    main()
