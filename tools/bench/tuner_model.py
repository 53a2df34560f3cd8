#!/usr/bin/env python3
"""Modelled, not measured: the predicted time per step of every schedule of
the Adam and Megatron MLP samples on a stated GPU system (a machine file of
tools/machines/, default h100-sxm-8), against the unscheduled program and
the baseline a user would run (Adam: ar_c, an allreduce and one fused update
kernel, what PyTorch DDP with a fused Adam does; the MLP: mm_ar_c), and the
tuner's own pick. Prints markdown tables (docs/bench/tuner.md).

    python3 tools/bench/tuner_model.py [--machine h100-sxm-8]
"""
import argparse
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def report_times(coconetc, sample, program, sizes, ranks, machine):
    """{schedule: seconds} from --emit=report --machine (all schedules)."""
    out = subprocess.run(
        [coconetc, "--color=never", "--emit=report", "--program", program,
         "--machine", machine, "--ranks", str(ranks), "--size", sizes,
         str(ROOT / "samples" / sample)], check=True, stdout=subprocess.PIPE,
        text=True).stdout
    times = {}
    name = None
    for line in out.splitlines():
        m = re.match(r"report \w+, (?:schedule )?(\S+):", line)
        if m:
            name = m.group(1)
        m = re.search(r"time\s+([0-9.]+) (\w+) per step", line)
        if m:
            times[name] = float(m.group(1)) * {"s": 1, "ms": 1e-3,
                                               "us": 1e-6}[m.group(2)]
    return times


def tuned(coconetc, sample, sizes, ranks, machine, shard):
    cmd = [coconetc, "--color=never", "tune", str(ROOT / "samples" / sample),
           "--machine", machine, "--ranks", str(ranks), "--size", sizes,
           "--top", "1"]
    if shard:
        cmd += ["--shard", shard]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    row = next(l for l in out.splitlines() if re.match(r"\s+1\s", l))
    m = re.match(r"\s+1\s+([0-9.]+) (\w+)", row)
    sec = float(m.group(1)) * {"s": 1, "ms": 1e-3, "us": 1e-6}[m.group(2)]
    what = re.search(r"  ((?:split|fuse|reorder|shard|overlap)\(.*)$", row)
    return sec, what.group(1) if what else "(unscheduled)"


def ms(s):
    return f"{s * 1e3:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machine", default="h100-sxm-8")
    ap.add_argument("--coconetc",
                    default=str(ROOT / "build" / "bin" / "coconetc"))
    args = ap.parse_args()
    c, m = args.coconetc, args.machine

    print(f"Adam, f16 gradients, 8 ranks, machine {m} (modelled):\n")
    print("| N | unscheduled | ar_c (baseline) | rs_c_ag | fused_rs_c_ag "
          "| speedup of fused over ar_c | tuner's pick (--shard m,v) |")
    print("|---|---|---|---|---|---|---|")
    for e in (28, 29, 30):
        t = report_times(c, "adam.coco", "adam", f"N={2 ** e}", 8, m)
        best, what = tuned(c, "adam.coco", f"N={2 ** e}", 8, m, "m,v")
        print(f"| 2^{e} | {ms(t['unscheduled'])} ms | {ms(t['ar_c'])} ms "
              f"| {ms(t['rs_c_ag'])} ms | {ms(t['fused_rs_c_ag'])} ms "
              f"| {t['ar_c'] / t['fused_rs_c_ag']:.2f}x | {ms(best)} ms: "
              f"`{what}` |")
    print(f"\nMegatron MLP layer (H = 12288, f16), 8 ranks, machine {m} "
          f"(modelled):\n")
    print("| B | unscheduled | mm_ar_c (baseline) | mm_rs_c_ag | overlapped "
          "| speedup of overlapped over mm_ar_c | tuner's pick |")
    print("|---|---|---|---|---|---|---|")
    for b in (1024, 4096, 16384):
        sizes = f"B={b},H=12288"
        t = report_times(c, "megatron_mlp.coco", "megatron_mlp", sizes, 8, m)
        best, what = tuned(c, "megatron_mlp.coco", sizes, 8, m, None)
        print(f"| {b} | {ms(t['unscheduled'])} ms | {ms(t['mm_ar_c'])} ms "
              f"| {ms(t['mm_rs_c_ag'])} ms | {ms(t['overlapped'])} ms "
              f"| {t['mm_ar_c'] / t['overlapped']:.2f}x | {ms(best)} ms: "
              f"`{what}` |")


if __name__ == "__main__":
    main()
