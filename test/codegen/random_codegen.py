#!/usr/bin/env python3
"""Random programs and schedules through a code generator (CTest
random-codegen-cpu).

    random_codegen.py --generator BIN --count N --seed S --dir DIR \
        [--pool P --require FEATURE,...] -- RUN_CODEGEN_ARGS...

Writes a fixed-seed batch with `coconet-random-programs --count N --seed S
--write-dir DIR` (DIR/case-<seed>.coco: the programs and the schedules that
applied; test/random/README.md) and runs test/codegen/run_codegen.py with
RUN_CODEGEN_ARGS on them, and for every --require plan feature
(test/codegen/plan_features.py, e.g. fused:stores-reduced, overlap:parts)
that they lack, on the first file (by name) of the same seed's batch of P
cases (--pool) that has it. So what a batch must contain does not
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
    pool_dir = args.dir + "-pool"
    shutil.rmtree(pool_dir, ignore_errors=True)

    def generate(count, directory):
        gen = subprocess.run([args.generator, "--count", str(count),
                              "--seed", str(args.seed), "--write-dir",
                              directory],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        print(gen.stdout, end="", flush=True)
        return gen.returncode == 0

    if not generate(args.count, args.dir):
        print("FAILED: coconet-random-programs (above)")
        return 1
    chosen = sorted(f for f in os.listdir(args.dir) if f.endswith(".coco"))
    required = [r for r in args.require.split(",") if r]
    if required:
        coconetc = args.coconetc or (rest[rest.index("--coconetc") + 1]
                                     if "--coconetc" in rest else "")
        unknown = [r for r in required if r not in plan_features.KIND]
        if unknown or not coconetc:
            print(f"FAILED: --require: unknown features {unknown}" if unknown
                  else "FAILED: --require needs --coconetc")
            return 1

        def features_of(path):
            found = set()
            for program, schedule in cases(coconetc, path):
                found |= plan_features.features(
                    plan_text(coconetc, path, program, schedule))
            return found

        have = set()
        for name in chosen:
            have |= features_of(os.path.join(args.dir, name))
        missing = [r for r in required if r not in have]
        if missing:
            # The same seed's longer batch: its files are the batch's and
            # more; the first that has a missing feature joins.
            if not generate(max(args.pool, args.count), pool_dir):
                print("FAILED: coconet-random-programs (above)")
                return 1
            pool = sorted(f for f in os.listdir(pool_dir)
                          if f.endswith(".coco") and f not in chosen)
            for feature in missing:
                if feature in have:
                    continue
                hit = None
                for name in pool:
                    found = features_of(os.path.join(pool_dir, name))
                    if feature in found:
                        hit = name
                        have |= found
                        break
                if hit is None:
                    print(f"FAILED: no file of the batch or of the pool of "
                          f"{max(args.pool, args.count)} has the plan "
                          f"feature '{feature}' (--require); make --pool "
                          "larger")
                    return 1
                print(f"added {hit} from the pool: it has '{feature}'",
                      flush=True)
                shutil.copy(os.path.join(pool_dir, hit), args.dir)
                chosen.append(hit)
                pool.remove(hit)
        print("the batch has " + ", ".join(required), flush=True)

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
