#!/usr/bin/env python3
"""A generated driver's mistakes are said once, with the right exit status
(CTest codegen-cpu:driver-errors).

    driver_errors.py --coconetc BIN --runtime-include DIR --runtime-lib DIR
        --work DIR [--target cpu | --target cuda-emu --emu-include DIR
        --emu-lib DIR --cuda-include DIR]

Builds samples/sgd.coco's driver for the CPU target (or the CUDA target
under the emulation, test/emu/) and runs it on 2 ranks with bad command
lines, inputs, output directories and sizes that memory cannot hold or
whose counts overflow (and a program with a rank-3 tensor whose element
count overflows). Each must exit with the status docs/codegen.md gives (2:
the command line, or a result that cannot be written; 1: anything else),
end by itself (no signal), and print its message exactly once (rank 0
speaks for every rank that met it; once the program's name led the line
twice and each rank printed it), cut to 512 bytes, with no other error
line. Exit status 0 when every case behaves, 1 otherwise, 77 without
mpicxx.
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys

from run_codegen import (CPU_FLAGS, MPI_RETRIES, MPI_START_FAILED,
                         RUN_TIMEOUT, emu_command, mpi_pause, run, run_all)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def build(args, source, name, work):
    """Emits and builds the driver of `source` (program `name`) in work."""
    target = "cpu" if args.target == "cpu" else "cuda"
    ok, out = run([args.coconetc, "--emit=driver", "--target=" + target,
                   "-o", work, source])
    if not ok:
        print(out)
        return False
    lib = args.runtime_lib
    if args.target == "cuda-emu":
        commands = emu_command(args, name)
    else:
        commands = [["mpicxx", "-std=c++17", "-fopenmp"] + CPU_FLAGS +
                   ["-Wall", "-Wextra", "-Werror",
                    "-I" + args.runtime_include, name + ".cpp",
                    name + "_main.cpp", "-o", name,
                    os.path.join(lib, "libcoconet_rt_mpi.a"),
                    os.path.join(lib, "libcoconet_rt_cpu.a"),
                    os.path.join(lib, "libcoconet_rt.a")]]
    ok, out = run_all(commands, work)
    if not ok:
        print(out)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--runtime-include", required=True)
    ap.add_argument("--runtime-lib", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--target", choices=["cpu", "cuda-emu"], default="cpu")
    ap.add_argument("--emu-include", default="")
    ap.add_argument("--emu-lib", default="")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    ap.add_argument("--sanitize", action="store_true")
    ap.add_argument("--sizes-only", action="store_true",
                    help="only the sizes that overflow or that memory cannot "
                         "hold and the requirements (the other cases check "
                         "the same runtime code on either target)")
    args = ap.parse_args()
    if not shutil.which("mpicxx") or not shutil.which("mpirun"):
        print("SKIPPED: mpicxx or mpirun is not installed")
        return 77
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name in ("runtime_include", "runtime_lib", "emu_include", "emu_lib"):
        if getattr(args, name):
            setattr(args, name, os.path.abspath(getattr(args, name)))
    with open(os.path.join(work, "cube.coco"), "w") as f:
        f.write("program cube(x: f32[N, N, N] replicated) {\n"
                "    y = x * 2;\n    return y;\n}\n")
    with open(os.path.join(work, "seg.coco"), "w") as f:
        f.write("program seg(layers: segments[T], w: f32[N] segmented(layers))"
                " {\n    n = norm(w, by=layers);\n    return n;\n}\n")
    # The segment table's kernel table is made by create() on either
    # target: seg is built for --sizes-only too.
    builds = [(os.path.join(ROOT, "samples", "sgd.coco"), "sgd"),
              (os.path.join(work, "cube.coco"), "cube"),
              (os.path.join(work, "seg.coco"), "seg"),
              (os.path.join(ROOT, "samples", "adam.coco"), "adam")]
    for source, name in builds:
        if not build(args, source, name, work):
            return 1
    # Segment tables that do not fit (bad tables are usage errors).
    tables = {"sum": b"5 2\n", "neg": b"5\n-1 4\n", "frac": b"5 2.5\n",
              "two": b"4 4\n", "npy": b"\x93NUMPY garbage",
              "huge-n": b"1152921504606846976\n",
              "esc": b"5 \x1b[2J\n"}
    for name, data in tables.items():
        with open(os.path.join(work, "table-" + name), "wb") as f:
            f.write(data)

    def table(name):
        return os.path.join(work, "table-" + name)
    # Files that are not regular, or past a table's 1 GiB (sparse): refused
    # before a byte is read (once a directory aborted the driver with an
    # uncaught std::ios_failure, and /dev/zero was read until memory ran
    # out).
    os.makedirs(table("dir"))
    os.mkfifo(table("fifo"))
    with open(table("huge"), "wb") as f:
        f.truncate((1 << 30) + 1)
    with open(os.path.join(work, "a-file"), "w") as f:
        f.write("not a directory\n")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")

    # (driver arguments, exit status, the one error line[, program])
    cases = [
        # Sizes whose counts overflow, or that memory cannot hold: every
        # rank exits 1, rank 0 names the tensor, its size and why (once
        # SIGSEGV, an uncaught std::bad_alloc per rank, or "'x' is null").
        (["--size", "N=4611686018427387904"], 1,
         "sgd: invalid argument: 'g' (f16[N]) has 4611686018427387904 "
         "elements of 2 bytes, more than 2^63 - 1 bytes: choose smaller "
         "sizes"),
        (["--size", "N=1152921504606846976"], 1,
         "sgd: invalid argument: the scratch memory (t_gs): cannot allocate "
         "2305843009213693952 bytes of " +
         ("host" if args.target == "cpu" else "device") + " memory"),
        (["--size", "N=2097152"], 1,
         "cube: invalid argument: 'x' (f32[N, N, N]) has 2097152 x 2097152 "
         "x 2097152 elements, a count that overflows 64 bits: choose smaller "
         "sizes", "cube"),
        (["--size", "N=1048576"], 1,
         "cube: invalid argument: cannot allocate 'x' (f32[1048576, 1048576, "
         "1048576]): its block of 1152921504606846976 elements is "
         "4611686018427387904 bytes (4.0 EiB) of host memory", "cube"),
        (["--size", "N=8,Q=3"], 2,
         "sgd: --size Q: the program has no size named 'Q' (its sizes: P, N)"),
        (["--set", "nothere=1"], 2,
         "sgd: --set nothere: the program has no parameter named 'nothere' "
         "(its parameters: g, w, lr)"),
        (["--input", "nothere=x.npy"], 2,
         "sgd: --input nothere: the program has no parameter named "
         "'nothere' (its parameters: g, w, lr)"),
        (["--bogus"], 2, "sgd: unknown option '--bogus'"),
        (["--set", "lr=1e999"], 2,
         "sgd: --set lr=1e999: out of the range of a double"),
        (["--set", "lr=1e-50"], 2, "sgd: --set lr=1e-50: rounds to 0 in f32"),
        (["--set", "lr=0.5", "--input", "lr=x.npy"], 2,
         "sgd: parameter 'lr' is given by both --set and --input; give it "
         "one value"),
        (["--size", "N=0"], 2,
         "sgd: --size N expects an integer from 1 to 2^63-1, got '0'"),
        (["--input", "w=" + os.path.join(work, "no-such.npy")], 1,
         "sgd: I/O error: cannot read '" + os.path.join(work, "no-such.npy") +
         "'"),
        (["--output-dir", os.path.join(work, "a-file", "out")], 2,
         "sgd: I/O error: cannot create directory '" +
         os.path.join(work, "a-file", "out") + "': Not a directory (rank 0)"),
        (["--size", "P=3"], 1,
         "sgd: invalid argument: the mesh needs more ranks than the world's "
         "2 (an axis of size 3)"),
        # What the user typed is escaped as coconetc escapes it, and a
        # message is cut to 512 bytes: ESC and BEL (an OSC sequence that
        # would set the terminal's title), a byte that is not UTF-8, a
        # right-to-left override, a 3000-byte name.
        (["--bo\x1b]0;pwned\x07gus"], 2,
         "sgd: unknown option '--bo<U+001B>]0;pwned<U+0007>gus'"),
        (["--set", "lr=\udcff"], 2, "sgd: --set lr=<FF>: "),
        (["--set", "\u202elr=1"], 2, "sgd: --set <U+202E>lr: "),
        (["--size", "N=8," + "Q" * 3000 + "=3"], 2,
         "sgd: --size " + "Q" * 100),
        # Segment tables: named, before anything runs or is written.
        (["--segments", "layers=" + table("sum"), "--output-dir",
          os.path.join(work, "not-written")], 2,
         "seg: " + table("sum") + ": the 2 lengths sum to "
         "7 elements, but 'N' has 8", "seg"),
        (["--segments", "layers=" + table("neg")], 2,
         "seg: " + table("neg") + ":2: '-1' is not a "
         "length (an integer, 0 or more)", "seg"),
        (["--segments", "layers=" + table("frac")], 2,
         "seg: " + table("frac") + ":1: '2.5' is not a "
         "length (an integer, 0 or more)", "seg"),
        (["--segments", "layers=" + table("two"), "--size", "T=3"], 2,
         "seg: segment table 'layers' has 2 segments, but "
         "its count T is bound to 3", "seg"),
        (["--segments", "layers=" + table("npy")], 2,
         "seg: " + table("npy") + ": ", "seg"),
        # A word that is not a length, escaped (the check below refuses
        # any raw control character in the driver's lines).
        (["--segments", "layers=" + table("esc")], 2,
         "seg: " + table("esc") + ":1: '<U+001B>[2J' is not a length", "seg"),
        (["--segments", "heads=" + table("two")], 2,
         "seg: --segments heads: the program has no segment table named "
         "'heads' (its tables: layers)", "seg"),
        (["--segments", "layers=" + table("missing")], 2,
         "seg: I/O error: cannot read the segment table '" +
         table("missing") + "': No such file or directory", "seg"),
        (["--segments", "layers=" + table("dir"), "--output-dir",
          os.path.join(work, "not-written")], 2,
         "seg: I/O error: cannot read the segment table '" + table("dir") +
         "': it is a directory, not a file", "seg"),
        (["--segments", "layers=/dev/zero"], 2,
         "seg: I/O error: cannot read the segment table '/dev/zero': it is a "
         "character device, not a regular file", "seg"),
        (["--segments", "layers=" + table("fifo")], 2,
         "seg: I/O error: cannot read the segment table '" + table("fifo") +
         "': it is a FIFO, not a regular file", "seg"),
        (["--segments", "layers=" + table("huge")], 2,
         "seg: cannot read the segment table '" +
         table("huge") + "': it has 1073741825 bytes; at most 1 GiB are "
         "read", "seg"),
        (["--input", "w=/dev/zero"], 1,
         "sgd: I/O error: cannot read '/dev/zero': it is a character device, "
         "not a regular file"),
        (["--input", "w=" + table("dir")], 1,
         "sgd: I/O error: cannot read '" + table("dir") + "': it is a "
         "directory, not a file"),
        # One segment over 2^60 elements (4 EiB of f32: within 2^63 bytes):
        # its kernel table, a chunk start every 2^k elements, does not fit
        # (once std::bad_alloc out of create()).
        (["--size", "N=1152921504606846976", "--segments",
          "layers=" + table("huge-n")], 1,
         "seg: invalid argument: segment table 'layers': cannot allocate "
         "its kernel table: ", "seg"),
        # A generated table's count, checked before the table is made (once
        # std::length_error, or memory run out).
        (["--size", "T=9223372036854775807", "--output-dir",
          os.path.join(work, "not-written")], 2,
         "seg: layers: a generated table of "
         "9223372036854775807 segments would take more than 2^63 - 1 bytes: "
         "choose a smaller count", "seg"),
        (["--size", "T=1099511627776"], 2,
         "seg: layers: a generated table of 1099511627776 segments does not "
         "fit in memory (17 bytes a segment while it is made): choose a "
         "smaller count", "seg"),
        # A requirement (samples/adam.coco: step >= 1), checked by
        # operator() before anything runs, on every rank alike.
        (["--set", "step=0"], 1,
         "adam: invalid argument: step = 0: the step counts from 1 "
         "(require(step >= 1) at adam.coco:11)", "adam"),
        (["--set", "beta1=1", "--set", "step=2"], 1,
         "adam: invalid argument: beta1 = 1: beta1 must be below 1 "
         "(require(beta1 < 1) at adam.coco:12)", "adam"),
    ]
    if args.sizes_only:
        cases = [c for c in cases if c[1] == 1 and
                 ("elements" in c[2] or "cannot allocate" in c[2] or
                  "require(" in c[2])]

    def check(case):
        """Runs one case: (whether it behaves, its report)."""
        extra, status, line = case[:3]
        program = case[3] if len(case) > 3 else "sgd"
        cmd = ["mpirun", "--oversubscribe", "-np", "2", "./" + program,
               "--quiet", "--size", "N=8"] + extra
        def once():
            # A driver that hangs is a failed case after RUN_TIMEOUT: its
            # mpirun and ranks (one session) are killed.
            with subprocess.Popen(cmd, cwd=work, env=env,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  errors="surrogateescape",
                                  start_new_session=True) as proc:
                try:
                    out, _ = proc.communicate(timeout=RUN_TIMEOUT)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, 9)
                    out, _ = proc.communicate()
                    out += "\nTIMED OUT after %d s (a signal)\n" % RUN_TIMEOUT
                    return subprocess.CompletedProcess(cmd, -9, out)
                return subprocess.CompletedProcess(cmd, proc.returncode, out)
        p = once()
        # Open MPI's failure to start exits 1 too, the status of most cases:
        # whether it started is what decides a retry.
        for _ in range(MPI_RETRIES):
            if MPI_START_FAILED not in p.stdout:
                break
            mpi_pause()
            p = once()
        prefix = program + ": "
        lines = [l for l in p.stdout.splitlines() if l.startswith(prefix)]
        said = [l for l in lines if l.startswith(line)]
        problems = []
        if p.returncode != status:
            problems.append(f"exit status {p.returncode}, expected {status}")
        if "signal" in p.stdout or "bad_alloc" in p.stdout:
            problems.append("a rank ended by a signal or an exception")
        if len(said) != 1:
            problems.append(f"the error printed {len(said)} times, not once")
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines from the driver, not 1")
        if prefix * 2 in p.stdout:
            problems.append("the program's name twice")
        for l in lines:
            if any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or
                   0xdc80 <= ord(c) <= 0xdcff or c == "\u202e" for c in l):
                problems.append("a character a terminal acts on or cannot "
                                "show, printed raw")
            if len(l.encode("utf-8", "surrogateescape")) > len(prefix) + 512:
                problems.append(f"a line of {len(l)} characters (at most "
                                f"{len(prefix) + 512})")
        name = ascii(" ".join(extra))[1:-1][:120]
        if problems:
            return False, (f"FAILED: {name}: " + "; ".join(problems) +
                           "\n  expected: " + line + "\n" +
                           "\n".join("  | " + ascii(l)[1:-1][:300]
                                     for l in p.stdout.splitlines()))
        return True, f"ok: {name}: exit {status}: {said[0][:200]}"

    # Four at a time (each case is mostly mpirun starting its ranks; no
    # two cases write the same file), reported in order.
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for good, text in pool.map(check, cases):
            failures += 0 if good else 1
            print(text)
    if os.path.exists(os.path.join(work, "not-written")):
        failures += 1
        print("FAILED: a driver given a bad segment table wrote results")
    ok, out = run(["mpirun", "--oversubscribe", "-np", "2", "./sgd",
                   "--quiet", "--size", "N=8"], cwd=work, env=env)
    if not ok:
        failures += 1
        print("FAILED: a good command line:\n" + out)
    else:
        print("ok: a good command line runs")
    print(f"{len(cases) + 1 - failures} of {len(cases) + 1} cases behave")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
