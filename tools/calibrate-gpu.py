#!/usr/bin/env python3
"""Calibrates coconetc's cost model for one GPU and checks its predictions
there, in three steps split like the GPU check (test/gpu/README.md): the
compiler runs here, the GPU machine only builds and times.

    tools/calibrate-gpu.py prepare DIR [--samples adam,sgd]  # drivers, runs
    tools/calibrate-gpu.sh DIR [--phase P]      # on the GPU: times.tsv
    tools/calibrate-gpu.py fit DIR TIMES.tsv -o tools/machines/NAME.machine
        [--csv docs/bench/tuner-gpu.csv]        # here: machine file, proof

`prepare` writes, with the CUDA target's generated drivers (one rank):

- calibration programs: an elementwise kernel z = y * 0.5 + x over
  N = 2^10 .. 2^28 f32 (memory-bandwidth: the line through the largest
  sizes; kernel-launch: the smallest's time beyond its bytes), a
  [n, n] x [n, n] matmul per element type (cuBLAS: the matmul rates), an
  allreduce of one member (NCCL's copy: checks the model's price of a
  collective of one member);
- the proof: every schedule `coconetc tune` enumerates for Adam, SGD, the
  Megatron MLP and LAMB on one rank (tune --write-table), each a case;
- DIR/manifest.tsv (test/gpu/run.sh --build-only builds every case) and
  DIR/runs.tsv: `time CASE PHASE ROUNDS WARMUP ITERATIONS SIZES`.

`fit` reads the times (`CASE ROUND MS` per line, what calibrate-gpu.sh
writes), takes each case's bytes and FLOPs from `coconetc --emit=report`,
writes the machine file, then predicts every proof schedule with it
(`--emit=report --machine`) and prints predicted against measured per
sample: Spearman's rank correlation, the median error and the pick.
"""
import argparse
import datetime
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from calibrate import fit_line, total  # noqa: E402

# (sample, sizes): large enough that memory, not launches, dominates.
PROOF = [
    ("adam", "N=33554432"),
    ("sgd", "N=33554432"),
    ("megatron_mlp", "B=4096,H=4096"),
    ("lamb", "N=33554432"),
]
MATMUL = {"f16": (4096, 8192), "bf16": (4096, 8192), "f32": (2048, 4096),
          "f64": (2048, 4096)}
BW_EXPS = range(10, 29, 2)
AR_EXPS = range(10, 27, 4)

SOURCES = {
    "bw": """
program bw(x: f32[N] replicated, y: f32[N] replicated) {
    z = update(y, y * 0.5 + x);
}
""",
    "ar": """
program ar(x: f32[N] local) {
    y = allreduce(sum, x);
    return y;
}
""",
}
for _dt in MATMUL:
    SOURCES[f"mm_{_dt}"] = f"""
program mm_{_dt}(a: {_dt}[M, K] replicated, c: {_dt}[K, N] replicated) {{
    y = matmul(a, c);
    return y;
}}
"""


def sh(cmd):
    p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"calibrate-gpu: {' '.join(map(str, cmd))} failed:\n"
                 f"{p.stdout}")
    return p.stdout


def emit(coconetc, src, out, select):
    sh([coconetc, "--color=never", "--emit=driver", "--target=cuda", "-o", out,
        src] + select)
    mains = list(pathlib.Path(out).glob("*_main.cu"))
    return mains[0].name[:-len("_main.cu")]


def prepare(args):
    out = pathlib.Path(args.dir).resolve()
    if out.exists():
        shutil.rmtree(out)
    (out / "src").mkdir(parents=True)
    coconetc = args.coconetc
    cases = []  # (case, name, file, program, schedule)
    runs = []   # (case, phase, rounds, warmup, iterations, sizes)

    def add(case, src, program, schedule=None):
        select = ["--schedule", schedule] if schedule else ["--program",
                                                            program]
        name = emit(coconetc, src, out / case, select)
        cases.append((case, name, src, program, schedule or "-"))

    for prog, text in SOURCES.items():
        src = out / "src" / f"{prog}.coco"
        src.write_text(text)
        add(prog, src, prog)
    for e in BW_EXPS:
        # About 20 ms per run at least: launches for small N.
        it = max(20, min(4000, 2 ** (27 - e) * 20))
        runs.append(("bw", "calibrate", 3, 5, it, f"N={2 ** e}"))
    for dt, ns in MATMUL.items():
        for n in ns:
            runs.append((f"mm_{dt}", "calibrate", 2, 2, 10,
                         f"M={n},K={n},N={n}"))
    for e in AR_EXPS:
        it = max(20, min(2000, 2 ** (26 - e) * 20))
        runs.append(("ar", "calibrate", 2, 5, it, f"N={2 ** e}"))

    wanted = args.samples.split(",") if args.samples else None
    for sample, sizes in PROOF:
        if wanted is not None and sample not in wanted:
            continue
        table = out / "src" / f"{sample}_table.coco"
        sh([coconetc, "tune", "--machine", ROOT / "tools" / "machines" /
            "h100-sxm-8.machine", "--size", sizes, "--ranks", "1",
            "--top", "0", "--write-table", "--name", "t", "-o", table,
            ROOT / "samples" / f"{sample}.coco"])
        src = out / "src" / f"{sample}.coco"
        src.write_text((ROOT / "samples" / f"{sample}.coco").read_text() +
                       table.read_text())
        count = len(re.findall(r"^schedule t_\d+ ", table.read_text(), re.M))
        for i in range(1, count + 1):
            case = f"{sample}_{i}"
            add(case, src, sample, f"t_{i}")
            runs.append((case, "proof", 1, 2, 10, sizes))
        print(f"prepared {sample}: {count} schedules at {sizes}", flush=True)

    with open(out / "manifest.tsv", "w") as f:
        f.write("# coconetc GPU calibration: what test/gpu/run.sh "
                "--build-only builds (tools/calibrate-gpu.py).\n")
        f.write(f"meta\tcreated\t{datetime.datetime.now():%Y-%m-%d %H:%M:%S}"
                "\n")
        for case, name, src, program, schedule in cases:
            f.write("\t".join(["case", case, name, "-",
                               os.path.relpath(src, out), program,
                               schedule]) + "\n")
    with open(out / "runs.tsv", "w") as f:
        f.write("# time CASE PHASE ROUNDS WARMUP ITERATIONS SIZES\n")
        for r in runs:
            f.write("\t".join(["time"] + [str(x) for x in r]) + "\n")
    print(f"{len(cases)} cases, {len(runs)} timed runs in {out}")


def read_times(path):
    """CASE SIZES -> the fastest round's seconds per step (a GPU's rounds
    differ by clocks and other tenants; the fastest is the machine's)."""
    times = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) != 4 or f[0].startswith("#"):
            continue
        case, sizes, _, ms = f
        times.setdefault((case, sizes), []).append(float(ms) / 1000)
    return {k: min(v) for k, v in times.items()}


def report(args, case_dir, src, select, sizes, machine=None):
    cmd = [args.coconetc, "--color=never", "--emit=report", "--size", sizes,
           "--ranks", "1", src] + select
    if machine:
        cmd += ["--machine", machine]
    return sh(cmd)


def seconds(text):
    m = re.match(r"([0-9.]+) (ns|us|ms|s)$", text.strip())
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[m.group(2)]
    return float(m.group(1)) * scale


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return r
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    sab = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    saa = sum((x - ma) ** 2 for x in ra)
    sbb = sum((y - mb) ** 2 for y in rb)
    return sab / (saa * sbb) ** 0.5 if saa and sbb else 1.0


def fit(args):
    d = pathlib.Path(args.dir).resolve()
    times = read_times(args.times)
    src = {p.stem: p for p in (d / "src").glob("*.coco")}
    gpu = args.gpu
    notes = []

    def t(case, sizes):
        if (case, sizes) not in times:
            sys.exit(f"calibrate-gpu: no time for {case} at {sizes} in "
                     f"{args.times}")
        return times[(case, sizes)]

    # Bandwidth and launch.
    xs, ys = [], []
    for e in BW_EXPS:
        sizes = f"N={2 ** e}"
        rep = report(args, d, src["bw"], ["--program", "bw"], sizes)
        xs.append(total(rep, "memory"))
        ys.append(t("bw", sizes))
    _, slope = fit_line(xs[-3:], ys[-3:])
    bandwidth = 1 / slope
    launch = max(ys[0] - xs[0] / bandwidth, 0.0)
    print(f"memory: {bandwidth / 1e9:.1f} GB/s, launch {launch * 1e6:.2f} us")
    for x, y in zip(xs, ys):
        print(f"  bw {x:>12} B  {y * 1e6:10.2f} us  "
              f"{x / y / 1e9:8.1f} GB/s")
    notes.append(f"memory-bandwidth, kernel-launch: z = y * 0.5 + x over "
                 f"N = 2^{BW_EXPS[0]}..2^{BW_EXPS[-1]} f32 (12*N bytes), "
                 f"the fastest of 3 runs of many steps each; the line "
                 f"through the three largest sizes (bandwidth); the "
                 f"smallest's time beyond its bytes at that bandwidth "
                 f"(launch: one step of one kernel, launched back to back)")
    # Matmul rates.
    rates = {}
    for dt, ns in MATMUL.items():
        best = 0
        for n in ns:
            sizes = f"M={n},K={n},N={n}"
            rep = report(args, d, src[f"mm_{dt}"], ["--program", f"mm_{dt}"],
                         sizes)
            best = max(best, total(rep, "flops") / t(f"mm_{dt}", sizes))
        rates[dt] = best
        print(f"matmul {dt}: {best / 1e12:.1f} TFLOP/s")
    notes.append("matmul: cuda::matmul (cuBLAS) on [n, n] x [n, n], n = " +
                 "; ".join(f"{dt} {' and '.join(map(str, ns))}"
                           for dt, ns in MATMUL.items()) +
                 ", the faster (the report's FLOPs over the time)")
    # One-member allreduce against the model's copy.
    ar_rows = []
    for e in AR_EXPS:
        sizes = f"N={2 ** e}"
        nb = 4 * 2 ** e
        model = launch + 2 * nb / bandwidth
        ar_rows.append((nb, t("ar", sizes), model))
        print(f"  allreduce of one member, {nb} B: {ar_rows[-1][1] * 1e6:.2f}"
              f" us (a copy at the bandwidth above: {model * 1e6:.2f} us)")
    notes.append("an allreduce of one member (NCCL, one rank): " +
                 ", ".join(f"{nb >> 10} KiB {m * 1e6:.3g} us" for nb, m, _ in
                           ar_rows) +
                 " (the model prices it as a copy: read + write at the "
                 "bandwidth, plus a launch)")

    out = pathlib.Path(args.output)
    name = args.name or out.stem
    with out.open("w") as f:
        f.write(f"# Measured by tools/calibrate-gpu.py on {args.date}: "
                f"{gpu}, one rank.\n")
        for n in notes:
            f.write("# " + n + ".\n")
        f.write("# Not measured on one GPU: collectives over ranks (none "
                "are stated; the model prices a\n# collective of one member "
                "as a copy), the fused collectives' transfers and the\n"
                "# overlap (stated as on h100-sxm-8: the SMs of a matmul and "
                "a collective run side by side).\n")
        f.write(f"machine {name}\ntarget cuda\nranks-per-node 1\n"
                "threads-per-rank 1\n")
        f.write(f"kernel-launch {launch * 1e6:.3g} us\n")
        f.write(f"memory-bandwidth {bandwidth / 1e9:.4g} GB/s\n")
        for dt, rate in rates.items():
            f.write(f"matmul {dt} {rate / 1e12:.4g} TFLOP/s\n")
        f.write("fused-collective overlapped\noverlap concurrent\n")
    print(f"calibrate-gpu: wrote {out}")

    # The proof: predicted (with the new file) against measured.
    rows = []
    for sample, sizes in PROOF:
        pred, meas, names = [], [], []
        i = 1
        while (f"{sample}_{i}", sizes) in times:
            rep = report(args, d, src[sample], ["--schedule", f"t_{i}"], sizes,
                         machine=out)
            m = re.search(r"time\s+(\S+ \S+) per step on machine", rep)
            pred.append(seconds(m.group(1)))
            meas.append(times[(f"{sample}_{i}", sizes)])
            text = (d / "src" / f"{sample}_table.coco").read_text()
            body = re.search(rf"schedule t_{i} for \w+ {{\n(.*?)}}", text,
                             re.S).group(1)
            names.append(" ".join(x.strip() for x in body.splitlines()) or
                         "(unscheduled)")
            i += 1
        if not pred:
            print(f"{sample}: not measured")
            continue
        errs = sorted(abs(p - m) / m for p, m in zip(pred, meas))
        pick = min(range(len(pred)), key=lambda k: pred[k])
        fastest = min(range(len(meas)), key=lambda k: meas[k])
        rho = spearman(pred, meas)
        print(f"\n{sample} at {sizes}: {len(pred)} schedules; Spearman "
              f"{rho:.2f}, median error {100 * statistics.median(errs):.0f}%,"
              f" the pick {meas[pick] / meas[fastest]:.2f}x the fastest")
        for k in sorted(range(len(pred)), key=lambda k: meas[k]):
            print(f"  {meas[k] * 1e3:9.3f} ms measured  {pred[k] * 1e3:9.3f} "
                  f"ms predicted  {names[k]}")
            rows.append((sample, sizes, k + 1, names[k], pred[k], meas[k]))
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("sample,sizes,schedule,directives,predicted_s,"
                    "measured_s\n")
            for s, z, k, n, p, m in rows:
                f.write(f"{s},\"{z}\",t_{k},\"{n}\",{p:.9g},{m:.9g}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coconetc", default=str(ROOT / "build" / "bin" /
                                              "coconetc"))
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="write the drivers and runs.tsv")
    p.add_argument("dir")
    p.add_argument("--samples", help="the proof's samples, comma-separated "
                   "(default: " + ",".join(s for s, _ in PROOF) + "; "
                   "'none' for the calibration alone)")
    f = sub.add_parser("fit", help="write the machine file from the times")
    f.add_argument("dir")
    f.add_argument("times")
    f.add_argument("-o", "--output", required=True)
    f.add_argument("--name")
    f.add_argument("--gpu", default="one GPU",
                   help="the GPU, as the machine file's header names it")
    f.add_argument("--date", default=str(datetime.date.today()))
    f.add_argument("--csv")
    args = ap.parse_args()
    if args.command == "prepare":
        prepare(args)
    else:
        fit(args)


if __name__ == "__main__":
    main()
