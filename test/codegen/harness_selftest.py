#!/usr/bin/env python3
"""run_codegen.py's own machinery against the mistakes it could make:

- the check cache (check_outputs): results the simulator accepted once are
  accepted again without it, and any other results -- one bit changed, or
  the same bytes under other arguments -- go to the simulator, which
  refuses them;
- run_mpi: an mpirun that started is not paused or run again; one that
  Open MPI failed to start ("orte_init failed") is tried MPI_RETRIES more
  times, each after a pause (a pause before every mpirun once cost the
  suite minutes);
- run: a command that never ends is stopped after its time limit
  (RUN_TIMEOUT), with the processes it started.

    harness_selftest.py --coconetc BIN --work DIR

Exit status 0 when every check holds, 1 otherwise.
"""
import argparse
import glob
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_codegen  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    args.build_cache = os.path.join(work, "cache")
    # A fused collective's schedule: the results the program writes are
    # the simulator's own (sim --output-dir), two f32 tensors.
    src = os.path.join(ROOT, "test", "codegen", "paths", "coverage-fused.coco")
    sim_args = [src, "--size", "P=2,N=96", "--seed", "7",
                "--schedule", "kg_fused"]
    res = os.path.join(work, "res")
    ok, out = run_codegen.run([args.coconetc, "--color=never", "sim"] +
                              sim_args + ["--output-dir", res])
    if not ok:
        print(f"FAILED: coconetc sim --output-dir:\n{out}")
        return 1
    failures = []

    def expect(what, want_ok, want_cached, given_args=sim_args):
        ok, out = run_codegen.check_outputs(args, given_args, res)
        cached = "the same bytes as a run it checked before" in out
        good = ok == want_ok and cached == want_cached
        print(f"{'ok' if good else 'FAILED'}: {what}: "
              f"{'accepted' if ok else 'refused'}"
              f"{' (from the cache)' if cached else ''}")
        if not good:
            failures.append(f"{what}:\n{out}")

    expect("first check: the simulator accepts", True, False)
    expect("the same results again: from the cache", True, True)
    # Another seed: the same bytes are now wrong, whatever was accepted.
    other = list(sim_args)
    other[other.index("--seed") + 1] = "8"
    expect("the same results under another seed: refused", False, False,
           other)
    # One bit of one element changed (the last byte of the file: a sign
    # and exponent bit of the last f32).
    last = sorted(glob.glob(os.path.join(res, "*.npy")))[-1]
    data = bytearray(open(last, "rb").read())
    data[-1] ^= 1
    with open(last, "wb") as f:
        f.write(data)
    expect("one bit changed: refused", False, False)
    # Changed back: the accepted bytes again.
    data[-1] ^= 1
    with open(last, "wb") as f:
        f.write(data)
    expect("changed back: from the cache", True, True)
    # run_mpi, with the pauses counted instead of slept and a stand-in for
    # mpirun.
    pauses = []
    run_codegen.mpi_pause = lambda: pauses.append(1)
    started = run_codegen.run_mpi([sys.executable, "-c", "print('ran')"])
    good = started == (True, "ran\n") and not pauses
    print(f"{'ok' if good else 'FAILED'}: an mpirun that started: "
          f"{len(pauses)} pauses")
    if not good:
        failures.append(f"an mpirun that started: {started}, "
                        f"{len(pauses)} pauses")
    tries = os.path.join(work, "tries")
    never = run_codegen.run_mpi([sys.executable, "-c", (
        "import sys; open(sys.argv[1], 'a').write('x'); "
        f"print('{run_codegen.MPI_START_FAILED}'); sys.exit(1)"), tries])
    count = len(open(tries).read())
    good = (not never[0] and count == run_codegen.MPI_RETRIES + 1 and
            len(pauses) == run_codegen.MPI_RETRIES)
    print(f"{'ok' if good else 'FAILED'}: an mpirun that never starts: "
          f"{count} tries, {len(pauses)} pauses")
    if not good:
        failures.append(f"an mpirun that never starts: {count} tries, "
                        f"{len(pauses)} pauses")
    # A command that never ends (a generated program that spins): stopped
    # after its time limit with every process it started (its session: a
    # child that ignores the parent's end is killed too), said TIMED OUT.
    import time
    pid_file = os.path.join(work, "spinner.pid")
    start = time.monotonic()
    spun = run_codegen.run([sys.executable, "-c", (
        "import os, subprocess, sys, time; "
        "child = subprocess.Popen([sys.executable, '-c', "
        "'import time\\nwhile True: time.sleep(0.05)']); "
        "open(sys.argv[1], 'w').write(str(child.pid)); print('spinning', "
        "flush=True)\nwhile True: time.sleep(0.05)"), pid_file], timeout=2)
    took = time.monotonic() - start
    # Alive: a process in any state but a zombie (killed, not yet reaped
    # by whoever adopted it).
    child_alive = True
    try:
        child = int(open(pid_file).read())
        for _ in range(50):
            with open(f"/proc/{child}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "X"):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("still running")
        child_alive = False
    except (OSError, ValueError):
        child_alive = False
    except RuntimeError:
        pass
    good = (not spun[0] and run_codegen.TIMED_OUT in spun[1] and
            "spinning" in spun[1] and took < 30 and not child_alive)
    print(f"{'ok' if good else 'FAILED'}: a command that never ends: stopped "
          f"after {took:.1f} s, its child {'alive' if child_alive else 'gone'}")
    if not good:
        failures.append(f"a command that never ends: {spun}, {took:.1f} s, "
                        f"child alive: {child_alive}")
    if failures:
        print("\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
