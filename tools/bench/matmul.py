#!/usr/bin/env python3
"""The exact matmul against the cores' FMA peak and OpenBLAS, in one run.

tools/bench-matmul.sh builds the harness (tools/bench/matmul_cpu.cpp) and
runs this. For each thread count it runs the harness (the FMA and
multiply + add peaks, coconet::rt::cpu::matmul per element type and shape)
and, in a separate process with as many OpenBLAS threads, numpy's matmul in
f64 (dgemm) and f32 (sgemm) on the same shapes (median of --repeats calls
after one warm-up). numpy must link OpenBLAS (the pip wheel does); the
OpenBLAS kernel it runs is named (threadpoolctl, when installed).
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset in that process alone.

    matmul.py HARNESS [--threads 1,2] [--repeats N] [--shape M,N,K[,BATCH]]...
              [--python PYTHON] [--markdown FILE]

Prints a table: GFLOP/s of each, and the ratios the issue asks for: each
exact matmul over the FMA peak of the cores used, f64 and f32 over dgemm,
sgemm over f32. --markdown FILE also writes the table as Markdown.
"""

import argparse
import csv
import io
import json
import os
import platform
import subprocess
import sys

DEFAULT_SHAPES = [
    # Megatron MLP on one rank, B = 1024 tokens, H = 512: X W1, then (X W1) W2.
    (1024, 2048, 512, 1),
    (1024, 512, 2048, 1),
    # Mixture-of-experts FFN: 4 experts per rank, capacity 256, H = 512,
    # FFN 1024, batched with one weight per expert.
    (256, 1024, 512, 4),
    (256, 512, 1024, 4),
]

BLAS_SCRIPT = r"""
import json, sys, time
import numpy as np
shapes, repeats = json.loads(sys.argv[1]), int(sys.argv[2])
try:
    from threadpoolctl import threadpool_info
    info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    kernel = ", ".join(f"{i.get('internal_api')} {i.get('version')} "
                       f"{i.get('architecture')} x{i.get('num_threads')}"
                       for i in info)
except ImportError:
    kernel = "unknown (pip install threadpoolctl)"
rng = np.random.default_rng(42)
out = {"kernel": kernel, "times": []}
for m, n, k, batch in shapes:
    for dtype in ("float64", "float32"):
        a = rng.uniform(-1, 1, (batch, m, k)).astype(dtype)
        b = rng.uniform(-1, 1, (batch, k, n)).astype(dtype)
        if batch == 1:
            a, b = a[0], b[0]
        times = []
        for r in range(repeats + 1):
            start = time.perf_counter()
            np.matmul(a, b)
            if r:
                times.append(time.perf_counter() - start)
        times.sort()
        out["times"].append([m, n, k, batch, dtype, times[len(times) // 2]])
print(json.dumps(out))
"""


def parse_shape(text):
    parts = [int(p) for p in text.split(",")]
    if len(parts) == 3:
        parts.append(1)
    if len(parts) != 4 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"not M,N,K[,BATCH]: {text}")
    return tuple(parts)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def run_harness(harness, threads, shapes, repeats):
    args = [harness, "--repeats", str(repeats)]
    for s in shapes:
        args += ["--shape", ",".join(map(str, s))]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    text = subprocess.run(args, env=env, check=True, capture_output=True,
                          text=True).stdout
    peak, rates = {}, {}
    for row in csv.DictReader(io.StringIO(text)):
        if row["what"] == "peak":
            peak[row["dtype"]] = float(row["gflops"])
        elif row["what"] == "matmul":
            key = (int(row["m"]), int(row["n"]), int(row["k"]),
                   int(row["batch"]))
            rates.setdefault(key, {})[row["dtype"]] = float(row["gflops"])
    return peak, rates


def run_blas(python, threads, shapes, repeats):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    text = subprocess.run(
        [python, "-c", BLAS_SCRIPT, json.dumps(shapes), str(repeats)],
        env=env, check=True, capture_output=True, text=True).stdout
    out = json.loads(text)
    rates = {}
    for m, n, k, batch, dtype, seconds in out["times"]:
        name = "dgemm" if dtype == "float64" else "sgemm"
        rates.setdefault((m, n, k, batch), {})[name] = (
            2.0 * m * n * k * batch / seconds / 1e9)
    return out["kernel"], rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("harness")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--shape", type=parse_shape, action="append")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--markdown")
    args = parser.parse_args()
    shapes = args.shape or DEFAULT_SHAPES
    threads = [int(t) for t in args.threads.split(",")]

    lines = [f"CPU: {cpu_name()}, {os.cpu_count()} cores seen; "
             "GFLOP/s (2 M N K BATCH flops over the median time)"]
    header = ("threads | M x N x K x batch | FMA peak | mul+add peak | f64 | "
              "f32 | bf16 | f16 | dgemm | sgemm | f64/peak | f32/peak | "
              "f64/dgemm | f32/dgemm | f32/sgemm")
    rows = []
    kernels = set()
    for t in threads:
        peak, ours = run_harness(args.harness, t, shapes, args.repeats)
        kernel, blas = run_blas(args.python, t, shapes, args.repeats)
        kernels.add(kernel)
        for s in shapes:
            o, b = ours[s], blas[s]
            p = peak["fma"]
            rows.append([
                str(t), "x".join(map(str, s)), f"{p:.1f}",
                f"{peak['mul+add']:.1f}", f"{o['f64']:.1f}", f"{o['f32']:.1f}",
                f"{o['bf16']:.1f}", f"{o['f16']:.1f}", f"{b['dgemm']:.1f}",
                f"{b['sgemm']:.1f}", f"{o['f64'] / p:.2f}",
                f"{o['f32'] / p:.2f}", f"{o['f64'] / b['dgemm']:.2f}",
                f"{o['f32'] / b['dgemm']:.2f}", f"{o['f32'] / b['sgemm']:.2f}"
            ])
    lines.append("OpenBLAS: " + "; ".join(sorted(kernels)))
    cols = header.split(" | ")
    widths = [max(len(c), *(len(r[i]) for r in rows))
              for i, c in enumerate(cols)]
    print("\n".join(lines))
    print("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
    for r in rows:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths)))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n\n".join(lines) + "\n\n")
            f.write("| " + header + " |\n")
            f.write("|" + "---|" * len(cols) + "\n")
            for r in rows:
                f.write("| " + " | ".join(r) + " |\n")


if __name__ == "__main__":
    main()
