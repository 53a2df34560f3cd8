#!/usr/bin/env python3
"""Random programs and schedules through a code generator (CTest
random-codegen-cpu).

    random_codegen.py --generator BIN --count N --seed S --dir DIR \
        [--pool P --require FEATURE,...] -- RUN_CODEGEN_ARGS...

Writes a fixed-seed batch with `coconet-random-programs --count P --seed S
--write-dir DIR` (DIR/case-<seed>.coco: the programs and the schedules that
applied; test/random/README.md; P defaults to N) and runs
test/codegen/run_codegen.py with RUN_CODEGEN_ARGS on N of its files: the
first N by name, and for every --require plan feature (test/codegen/
plan_features.py, e.g. fused:stores-reduced, overlap:parts) that those
lack, the first file that has it. So what a batch must contain does not
depend on the luck of a seed: a required feature that no file of the pool
has fails the test (make --pool larger). When a case fails, prints how to
write and check that file alone. Exit status: run_codegen.py's (77:
skipped), or 1 when the generator fails or a feature is missing.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan_features  # noqa: E402
from run_codegen import cases, plan_text  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True,
                    help="the coconet-random-programs binary")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--pool", type=int, default=0,
                    help="cases to generate (default --count)")
    ap.add_argument("--require", default="",
                    help="FEATURE,...: plan features the batch must have")
    ap.add_argument("--coconetc", default="",
                    help="for --require: the compiler that prints the plans "
                         "(default: the --coconetc after --)")
    ap.add_argument("run_codegen", nargs=argparse.REMAINDER,
                    help="-- then the arguments of run_codegen.py")
    args = ap.parse_args()
    rest = args.run_codegen[1:] if args.run_codegen[:1] == ["--"] \
        else args.run_codegen

    shutil.rmtree(args.dir, ignore_errors=True)
    pool = max(args.pool, args.count)
    gen = subprocess.run([args.generator, "--count", str(pool),
                          "--seed", str(args.seed), "--write-dir", args.dir],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    print(gen.stdout, end="", flush=True)
    if gen.returncode != 0:
        print("FAILED: coconet-random-programs (above)")
        return 1

    files = sorted(f for f in os.listdir(args.dir) if f.endswith(".coco"))
    chosen = files[:args.count]
    required = [r for r in args.require.split(",") if r]
    if required:
        coconetc = args.coconetc or (rest[rest.index("--coconetc") + 1]
                                     if "--coconetc" in rest else "")
        unknown = [r for r in required if r not in plan_features.KIND]
        if unknown or not coconetc:
            print(f"FAILED: --require: unknown features {unknown}" if unknown
                  else "FAILED: --require needs --coconetc")
            return 1
        cache = {}

        def features_of(name):
            if name not in cache:
                path = os.path.join(args.dir, name)
                found = set()
                for program, schedule in cases(coconetc, path):
                    found |= plan_features.features(
                        plan_text(coconetc, path, program, schedule))
                cache[name] = found
            return cache[name]

        have = set()
        for name in chosen:
            have |= features_of(name)
        for feature in required:
            if feature in have:
                continue
            hit = next((f for f in files if feature in features_of(f)), None)
            if hit is None:
                print(f"FAILED: none of the {len(files)} generated files has "
                      f"the plan feature '{feature}' (--require); make "
                      "--pool larger")
                return 1
            print(f"added {hit}: it has '{feature}'", flush=True)
            chosen.append(hit)
            have |= features_of(hit)
        print("the batch has " + ", ".join(required), flush=True)
    # Only the chosen files are checked.
    for name in files:
        if name not in chosen:
            os.remove(os.path.join(args.dir, name))

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
