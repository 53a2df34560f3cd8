#!/usr/bin/env python3
"""The plan coverage check's own test (CTest plan-coverage-selftest): it
passes on records that hold every feature on every target and path, and
fails, naming what is missing, when one cell lacks its feature, when a
record has a feature outside the vocabulary, and when the plan printer has
a word no feature claims. Also: every plan of the samples reads without
error, and a line the reader does not know is an error.

    plan_coverage_selftest.py --printer PlanPrinter.cpp --coconetc BIN
        --root REPO
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan_features  # noqa: E402
from run_codegen import cases, plan_text  # noqa: E402


def coverage(records, printer):
    p = subprocess.run([sys.executable, os.path.join(HERE, "plan_coverage.py"),
                        "--records", records, "--printer", printer],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return p.returncode, p.stdout


def write_records(directory, skip=None, extra=None):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "all.tsv"), "w") as f:
        for target in ("cpu", "cuda-emu"):
            for path in ("team", "staging", "fallback", "sequential"):
                names = [n for n in plan_features.NAMES
                         if (target, path, n) != skip]
                names += extra or []
                f.write("\t".join([target, path, "x.coco", "p"] + names) +
                        "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--printer", required=True)
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    failures = []

    def expect(what, ok, out=""):
        print(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            failures.append(what)
            print(out)

    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "full")
        write_records(full)
        rc, out = coverage(full, args.printer)
        expect("every feature everywhere passes", rc == 0, out)

        gap = os.path.join(tmp, "gap")
        write_records(gap, skip=("cuda-emu", "staging", "fused:stores-reduced"))
        rc, out = coverage(gap, args.printer)
        expect("a path feature missing on one target and path fails, named",
               rc == 1 and "not covered: fused:stores-reduced" in out and
               "on cuda-emu, path staging" in out, out)

        bad = os.path.join(tmp, "bad")
        write_records(bad, extra=["fused:made-up"])
        rc, out = coverage(bad, args.printer)
        expect("a feature outside the vocabulary fails",
               rc == 1 and "'fused:made-up' is not in the vocabulary" in out,
               out)

        printer = os.path.join(tmp, "PlanPrinter.cpp")
        with open(args.printer) as f:
            text = f.read()
        with open(printer, "w") as f:
            f.write(text + '\nconst char *x = ", stores the halved value";\n')
        rc, out = coverage(full, printer)
        expect("a word of the printer no feature claims fails, quoted",
               rc == 1 and '", stores the halved value"' in out, out)

        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        rc, out = coverage(empty, args.printer)
        expect("no records fails", rc == 1 and "no records" in out, out)

    # The reader knows every line of the samples' plans, and no other.
    read = 0
    for path in sorted(glob.glob(os.path.join(args.root, "samples", "*.coco"))):
        for program, schedule in cases(args.coconetc, path):
            text = plan_text(args.coconetc, path, program, schedule)
            try:
                plan_features.features(text)
                read += 1
            except plan_features.PlanError as e:
                expect(f"{os.path.basename(path)} {program} {schedule}: {e}",
                       False)
            text += "  overlap: something new\n"
            try:
                plan_features.features(text)
                expect("an unknown line is an error", False)
            except plan_features.PlanError:
                pass
    expect(f"the plans of {read} sample cases read", read > 0)

    # A fused collective's kernel line must agree with the rest of the
    # plan: it is there, and runs in parts iff an overlap's parts hold it.
    mlp = os.path.join(args.root, "samples", "megatron_mlp.coco")
    text = plan_text(args.coconetc, mlp, "megatron_mlp", "overlapped")
    expect("the overlapped MLP's kernel runs in parts",
           "    kernel: step 4, in parts;" in text, text)
    for what, bad in [
            ("without its kernel line",
             "\n".join(l for l in text.splitlines()
                       if not l.startswith("    kernel: "))),
            ("whose kernel is not in parts",
             text.replace("    kernel: step 4, in parts;",
                          "    kernel: step 4;")),
            ("whose kernel is another step",
             text.replace("    kernel: step 4,", "    kernel: step 3,"))]:
        try:
            plan_features.features(bad)
            expect(f"a plan {what} is an error", False)
        except plan_features.PlanError as e:
            expect(f"a plan {what} is an error", True, str(e))
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
