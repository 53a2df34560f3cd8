#!/usr/bin/env python3
"""Random programs and schedules through a code generator (CTest
random-codegen-cpu).

    random_codegen.py --generator BIN --count N --seed S --dir DIR \
        -- RUN_CODEGEN_ARGS...

Writes a fixed-seed batch with `coconet-random-programs --count N --seed S
--write-dir DIR` (DIR/case-<seed>.coco: the programs and the schedules that
applied; test/random/README.md) and runs test/codegen/run_codegen.py with
RUN_CODEGEN_ARGS on DIR. When a case fails, prints how to write and check
that file alone. Exit status: run_codegen.py's (77: skipped), or 1 when
the generator fails.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True,
                    help="the coconet-random-programs binary")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("run_codegen", nargs=argparse.REMAINDER,
                    help="-- then the arguments of run_codegen.py")
    args = ap.parse_args()
    rest = args.run_codegen[1:] if args.run_codegen[:1] == ["--"] \
        else args.run_codegen

    shutil.rmtree(args.dir, ignore_errors=True)
    gen = subprocess.run([args.generator, "--count", str(args.count),
                          "--seed", str(args.seed), "--write-dir", args.dir],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    print(gen.stdout, end="", flush=True)
    if gen.returncode != 0:
        print("FAILED: coconet-random-programs (above)")
        return 1

    script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "run_codegen.py")
    cmd = [sys.executable, script] + rest + [args.dir]
    check = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    print(check.stdout, end="", flush=True)
    if check.returncode in (0, 77):
        return check.returncode
    failed = sorted(set(re.findall(r"^FAILED: case-(\d+)\.coco",
                                   check.stdout, re.M)))
    print("\nTo check one failing case again (the same file, by its seed):")
    for seed in failed:
        # The file's first line has the generator's options for it.
        with open(os.path.join(args.dir, f"case-{seed}.coco")) as f:
            header = f.readline().split()
        options = header[header.index("--case-seed"):] \
            if "--case-seed" in header else ["--case-seed", seed]
        one = os.path.join(args.dir, "one-" + seed)
        print("\n  " + " ".join(shlex.quote(c) for c in
                                [args.generator] + options +
                                ["--write-dir", one]))
        print("  " + " ".join(shlex.quote(c) for c in
                              [sys.executable, script] + rest +
                              [os.path.join(one, f"case-{seed}.coco")]))
    return check.returncode


if __name__ == "__main__":
    sys.exit(main())
