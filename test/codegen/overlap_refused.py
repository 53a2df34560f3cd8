#!/usr/bin/env python3
"""An overlap whose chunk count does not divide a rank's rows is refused by
the generated program when it is created, with a message that names the
dimension and the sizes (the schedule refuses a constant size itself:
[overlap-indivisible], test/lit/passes). CTest codegen-cpu:overlap-refused.

    overlap_refused.py --coconetc BIN --runtime-include DIR --runtime-lib DIR
        --work DIR

Builds megatron_mlp's `overlapped` schedule (4 chunks of each of the P
blocks of y's rows) for the CPU target and runs it on 2 ranks with B = 36
(36 rows are not 2 x 4 parts: refused) and B = 40 (runs, and equals the
simulator). Exit status 0 when both behave, 1 otherwise, 77 without mpicxx.
"""
import argparse
import os
import shutil
import sys

from run_codegen import CPU_FLAGS, run, run_mpi

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--runtime-include", required=True)
    ap.add_argument("--runtime-lib", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if not shutil.which("mpicxx") or not shutil.which("mpirun"):
        print("SKIPPED: mpicxx or mpirun is not installed")
        return 77
    sample = os.path.join(ROOT, "samples", "megatron_mlp.coco")
    name = "megatron_mlp_overlapped"
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    ok, out = run([args.coconetc, "--emit=driver", "--target=cpu",
                   "--schedule", "overlapped", "-o", work, sample])
    if not ok:
        print(out)
        return 1
    lib = args.runtime_lib
    ok, out = run(["mpicxx", "-std=c++17", "-fopenmp"] + CPU_FLAGS +
                  ["-Wall", "-Wextra", "-Werror", "-I" + args.runtime_include,
                   name + ".cpp", name + "_main.cpp", "-o", name,
                   os.path.join(lib, "libcoconet_rt_mpi.a"),
                   os.path.join(lib, "libcoconet_rt_cpu.a"),
                   os.path.join(lib, "libcoconet_rt.a")], cwd=work)
    if not ok:
        print(out)
        return 1
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    failures = 0
    expected = ("dimension 0 of 'y', overlapped in 4 chunks has size B = 36, "
                "which is not a multiple of P*4 = 8")
    ok, out = run_mpi(["mpirun", "--oversubscribe", "-np", "2", "./" + name,
                       "--size", "B=36,H=16", "--quiet"], cwd=work, env=env)
    if ok or expected not in out:
        print(f"FAILED: B=36 on 2 ranks should be refused with\n  {expected}\n"
              f"but {'ran' if ok else 'said'}:\n{out}")
        failures += 1
    else:
        print(f"ok: B=36 on 2 ranks refused: {expected}")
    res = os.path.join(work, "out")
    ok, out = run_mpi(["mpirun", "--oversubscribe", "-np", "2", "./" + name,
                       "--size", "B=40,H=16", "--quiet", "--output-dir", res],
                      cwd=work, env=env)
    if ok:
        ok, out = run([args.coconetc, "--color=never", "sim", sample,
                       "--schedule", "overlapped", "--size", "P=2,B=40,H=16",
                       "--check-outputs", res])
    if not ok:
        print(f"FAILED: B=40 on 2 ranks:\n{out}")
        failures += 1
    else:
        print("ok: B=40 on 2 ranks equals the simulator")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
