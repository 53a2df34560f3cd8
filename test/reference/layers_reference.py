#!/usr/bin/env python3
"""LAMB and AdamW over a model's parameter list against a reference written
out here, tensor by tensor, in Python's f64 (no numpy, no coconetc code).

    layers_reference.py --coconetc BIN --root SRC --work DIR

The model is GPT-2 small's table of 148 tensors (samples/gpt2_small.
segments) scaled to N elements (tools/scale-segments.py: the small tensors
become empty or a few elements long, the embedding 2541 of 8192), with the
weight-decay mask that leaves biases and layer norms out. Inputs are drawn
here (f16 gradients on P = 2 ranks, f32 weights and moments) and given to
`coconetc sim` as .npy files; every schedule of stdlib/optim/
lamb_layers.coco and adamw_layers.coco is run and its results (w, m, v)
compared with the reference within f32 rounding: the reference splits the
flat buffers into their tensors and computes each tensor's trust ratio
from its own norms, so a norm over the wrong elements (the whole model, a
neighbour's elements, one rank's part) is far outside the tolerance.
Exit status 0 when every result agrees.
"""
import argparse
import math
import os
import random
import struct
import subprocess
import sys

N = 8192
RANKS = 2
SCALARS = {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-6,
           "wd": 0.01, "step": 3}


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def write_npy(path, code, shape, values):
    descr = {"e": "<f2", "f": "<f4"}[code]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, "(%s)" % "".join(f"{d}, " for d in shape).rstrip(" "))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


def read_npy_f32(path):
    data = open(path, "rb").read()
    size = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + size].decode("latin1")
    if "'<f4'" not in header:
        sys.exit(f"{path}: expected f32, got {header}")
    body = data[10 + size:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


def reference(program, table, decay, g, w, m, v):
    """The step, tensor by tensor, in f64 from the f32 scalars the program
    gets: returns (w1, m1, v1) and, for each element, the magnitudes of the
    terms that make it (what the f32 roundings are relative to)."""
    s = {k: (f32(x) if isinstance(x, float) else x) for k, x in SCALARS.items()}
    b1, b2, step = s["beta1"], s["beta2"], s["step"]
    w1, m1, v1 = [], [], []
    sw, sm, sv = [], [], []
    start = 0
    for i, length in enumerate(table):
        idx = range(start, start + length)
        start += length
        # The gradient: the ranks' f16 sum, rounded to f16 (allreduce).
        gi = [f16(sum(g[r][k] for r in range(RANKS))) for k in idx]
        mi = [b1 * m[k] + (1 - b1) * gk for k, gk in zip(idx, gi)]
        vi = [b2 * v[k] + (1 - b2) * gk * gk for k, gk in zip(idx, gi)]
        mhat = [x / (1 - b1 ** step) for x in mi]
        vhat = [x / (1 - b2 ** step) for x in vi]
        adam = [a / (math.sqrt(b) + s["eps"]) for a, b in zip(mhat, vhat)]
        wi = [w[k] for k in idx]
        u = [a + s["wd"] * decay[i] * x for a, x in zip(adam, wi)]
        if program == "lamb_layers":
            wn = math.sqrt(sum(x * x for x in wi))
            un = math.sqrt(sum(x * x for x in u))
            ratio = wn / un if wn > 0 and un > 0 else 1.0
        else:
            ratio = 1.0
        w1 += [x - s["lr"] * ratio * d for x, d in zip(wi, u)]
        smi = [abs(b1 * m[k]) + abs((1 - b1) * gk) for k, gk in zip(idx, gi)]
        svi = [abs(b2 * v[k]) + abs((1 - b2) * gk * gk)
               for k, gk in zip(idx, gi)]
        # Adam's quotient inherits m1's and v1's rounding (relative to their
        # terms, which may cancel), scaled as the quotient scales them, and
        # that of the bias corrections 1 - beta^step (pow's rounding,
        # relative to beta^step, over what is left after the cancellation).
        c1, c2 = b1 ** step, b2 ** step
        sadam = [(sa / (1 - c1) +
                  abs(mh) * 0.5 * (sb / (1 - c2)) / max(vh, 1e-300)) /
                 (math.sqrt(vh) + s["eps"]) +
                 abs(a) * (c1 / (1 - c1) + 0.5 * c2 / (1 - c2))
                 for sa, sb, mh, vh, a in zip(smi, svi, mhat, vhat, adam)]
        sw += [abs(x) + abs(s["lr"] * ratio) *
               (abs(a) + sa + abs(s["wd"] * x))
               for x, a, sa in zip(wi, adam, sadam)]
        m1 += mi
        v1 += vi
        sm += smi
        sv += svi
    return (w1, m1, v1), (sw, sm, sv)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coconetc", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    table_path = os.path.join(args.work, "table.segments")
    decay_path = os.path.join(args.work, "decay.npy")
    subprocess.run([sys.executable,
                    os.path.join(args.root, "tools", "scale-segments.py"),
                    os.path.join(args.root, "samples", "gpt2_small.segments"),
                    "--total", str(N), "--out", table_path,
                    "--decay", decay_path], check=True)
    table = [int(line.split("#")[0]) for line in open(table_path)
             if line.split("#")[0].strip()]
    decay = [0.0 if ("bias" in line or "ln_" in line) else 1.0
             for line in open(table_path) if line.split("#")[0].strip()]
    assert sum(table) == N and len(table) == 148

    rng = random.Random(22)
    g = [[f16(rng.uniform(-1, 1)) for _ in range(N)] for _ in range(RANKS)]
    w = [f32(rng.uniform(-1, 1)) for _ in range(N)]
    m = [f32(rng.uniform(-0.1, 0.1)) for _ in range(N)]
    v = [f32(rng.uniform(0, 0.01)) for _ in range(N)]
    write_npy(os.path.join(args.work, "g.npy"), "e", (RANKS, N),
              [x for row in g for x in row])
    for name, values in (("w", w), ("m", m), ("v", v)):
        write_npy(os.path.join(args.work, name + ".npy"), "f", (N,), values)

    failures = 0
    for program in ("lamb_layers", "adamw_layers"):
        values, scales = reference(program, table, decay, g, w, m, v)
        ref, scale_of = dict(zip("wmv", values)), dict(zip("wmv", scales))
        source = os.path.join(args.root, "stdlib", "optim", program + ".coco")
        prefix = program.split("_")[0]
        for schedule in ("", prefix + "_ar_c", prefix + "_rs_c_ag",
                         prefix + "_fused_rs_c_ag"):
            out = os.path.join(args.work, program + "_" + (schedule or "none"))
            cmd = [args.coconetc, "sim", "--ranks=%d" % RANKS,
                   "--size", "N=%d" % N,
                   "--segments", "layers=" + table_path,
                   "--input", "decay=" + decay_path,
                   "--output-dir", out, source]
            if schedule:
                cmd.append("--schedule=" + schedule)
            for name in "gwmv":
                cmd += ["--input", f"{name}={args.work}/{name}.npy"]
            for name, value in SCALARS.items():
                cmd += ["--set", f"{name}={value}"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            what = program + (" schedule " + schedule if schedule else "")
            if run.returncode != 0:
                print(f"FAIL: {what}: coconetc sim: {run.stderr.strip()}")
                failures += 1
                continue
            worst = 0.0
            for name in "wmv":
                got = read_npy_f32(os.path.join(out, name + ".npy"))
                for k, (a, b) in enumerate(zip(got, ref[name])):
                    # Within f32 rounding of the terms (a few roundings of
                    # each, relative 2^-24 apiece).
                    tol = 2.0 ** -20 * scale_of[name][k] + 1e-30
                    worst = max(worst, abs(a - b) / tol)
                    if abs(a - b) > tol:
                        print(f"FAIL: {what}: {name}[{k}] = {a!r}, the "
                              f"reference {b!r} (tolerance {tol:.3g})")
                        failures += 1
                        break
            print(f"{'ok' if worst <= 1 else 'FAIL'}: {what}: within "
                  f"{worst:.3f} of the tolerance")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
