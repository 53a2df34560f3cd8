#!/usr/bin/env python3
"""Generated code against the simulator, for every program and schedule of
the given .coco files.

    run_codegen.py --target cpu  --coconetc BIN --runtime-include DIR \
        --runtime-lib DIR --work DIR [--ranks 1,2,4] FILE.coco...
    run_codegen.py --target cuda --coconetc BIN --runtime-include DIR \
        --work DIR FILE.coco...

cpu:  each (program, schedule) -- the unscheduled program included -- is
      emitted with --target=cpu --emit=driver, compiled with mpicxx (-Wall
      -Wextra -Werror, OpenMP, no floating-point contraction), run under
      `mpirun -np R` for every R in --ranks (every factorisation of R over a
      mesh's axes) and its results checked against `coconetc sim
      --check-outputs`: bit for bit, the CPU target's promise.
cuda: each is emitted with --target=cuda --emit=driver and compiled with
      nvcc -arch=sm_90 with warnings as errors (compile only: no GPU here).

Every size name that is not a mesh axis gets --unit (default 32): a multiple
of every rank count times every overlap's chunk count in the samples.
Exit status 0 when every case passes, 1 otherwise, 77 (skipped) when the
compiler of the target is missing.
"""
import argparse
import itertools
import os
import re
import shutil
import subprocess
import sys
import time


def run(cmd, cwd=None, env=None):
    """Runs `cmd`; returns (ok, output)."""
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode == 0, p.stdout


def cases(coconetc, path):
    """(program, schedule or None) of a file, unscheduled first."""
    ok, out = run([coconetc, "--color=never", path])
    if not ok:
        raise RuntimeError(out)
    result = []
    for line in out.splitlines():
        m = re.match(r"program (\w+)", line)
        if m:
            result.append((m.group(1), None))
        m = re.match(r"schedule (\w+) for (\w+)", line)
        if m:
            result.append((m.group(2), m.group(1)))
    return result


def selector(program, schedule):
    return ["--schedule", schedule] if schedule else ["--program", program]


def plan_info(coconetc, path, program, schedule):
    """(mesh axes [(name, size name)], size names) from --emit=plan."""
    ok, out = run([coconetc, "--color=never", "--emit=plan", path] +
                  selector(program, schedule))
    if not ok:
        raise RuntimeError(out)
    axes, sizes = [], []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("mesh"):
            axes = [tuple(a.split(":")) for a in line.split()[1:]]
        elif line.startswith("sizes"):
            sizes = line.split()[1:]
    return axes, sizes


def factorisations(ranks, axes):
    """Every way to give `axes` axes sizes whose product is `ranks`."""
    out = []
    for combo in itertools.product(range(1, ranks + 1), repeat=axes):
        prod = 1
        for c in combo:
            prod *= c
        if prod == ranks:
            out.append(combo)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["cpu", "cuda"], required=True)
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--runtime-include", required=True)
    ap.add_argument("--runtime-lib", default="")
    ap.add_argument("--work", required=True)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--unit", type=int, default=32)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()

    compiler = "mpicxx" if args.target == "cpu" else "nvcc"
    if not shutil.which(compiler):
        print(f"SKIPPED: {compiler} is not installed")
        return 77
    if args.target == "cpu" and not shutil.which("mpirun"):
        print("SKIPPED: mpirun is not installed")
        return 77
    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ)
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMP_NUM_THREADS": "1"})
    ranks = [int(r) for r in args.ranks.split(",")]
    failures, checked = [], 0
    start = time.time()
    for path in args.files:
        for program, schedule in cases(args.coconetc, path):
            name = program + ("_" + schedule if schedule else "")
            title = f"{os.path.basename(path)}: {program}" + (
                f", schedule {schedule}" if schedule else "")
            out_dir = os.path.join(args.work, name)
            shutil.rmtree(out_dir, ignore_errors=True)
            ok, out = run([args.coconetc, "--color=never", "--emit=driver",
                           "--target=" + args.target, "-o", out_dir, path] +
                          selector(program, schedule))
            if not ok:
                failures.append(f"{title}: coconetc failed:\n{out}")
                continue
            if args.target == "cuda":
                ok = True
                for src in (name + ".cu", name + "_main.cu"):
                    good, out = run(
                        ["nvcc", "-std=c++17", "-O2", "-arch=sm_90",
                         "-Werror", "all-warnings",
                         "-Xcompiler", "-Wall,-Wextra",
                         "-I" + args.runtime_include, "-c", src,
                         "-o", src + ".o"], cwd=out_dir)
                    if not good:
                        failures.append(f"{title}: nvcc {src}:\n{out}")
                        ok = False
                checked += 1
                print(f"{'ok' if ok else 'FAILED'}: {title}: nvcc", flush=True)
                continue
            lib = args.runtime_lib
            ok, out = run(["mpicxx", "-std=c++17", "-O2", "-fopenmp",
                           "-ffp-contract=off", "-Wall", "-Wextra", "-Werror",
                           "-I" + args.runtime_include,
                           name + ".cpp", name + "_main.cpp", "-o", name,
                           os.path.join(lib, "libcoconet_rt_mpi.a"),
                           os.path.join(lib, "libcoconet_rt_cpu.a"),
                           os.path.join(lib, "libcoconet_rt.a")],
                          cwd=out_dir)
            if not ok:
                failures.append(f"{title}: mpicxx:\n{out}")
                print(f"FAILED: {title}: mpicxx", flush=True)
                continue
            axes, sizes = plan_info(args.coconetc, path, program, schedule)
            for r in ranks:
                for shape in factorisations(r, len(axes)):
                    binding = {size: v for (_, size), v in zip(axes, shape)}
                    for s in sizes:
                        binding.setdefault(s, args.unit)
                    size_arg = ",".join(f"{k}={v}" for k, v in binding.items())
                    res = os.path.join(out_dir, f"out-{'x'.join(map(str, shape))}")
                    shutil.rmtree(res, ignore_errors=True)
                    what = f"{title} on {r} ranks ({size_arg})"
                    ok, out = run(["mpirun", "--oversubscribe", "-np", str(r),
                                   "./" + name, "--size", size_arg, "--seed",
                                   str(args.seed), "--output-dir", res,
                                   "--quiet"], cwd=out_dir, env=env)
                    if not ok:
                        failures.append(f"{what}: the program failed:\n{out}")
                        print(f"FAILED: {what}: run", flush=True)
                        continue
                    ok, out = run([args.coconetc, "--color=never", "sim",
                                   path, "--size", size_arg, "--seed",
                                   str(args.seed), "--check-outputs", res] +
                                  selector(program, schedule))
                    checked += 1
                    last = out.strip().splitlines()[-1] if out.strip() else ""
                    print(f"{'ok' if ok else 'FAILED'}: {what}: {last}",
                          flush=True)
                    if not ok:
                        failures.append(f"{what}:\n{out}")
    seconds = time.time() - start
    print(f"\n{checked} cases checked, {len(failures)} failures, "
          f"{seconds:.1f} s")
    for f in failures:
        print("\n" + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
