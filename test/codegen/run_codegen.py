#!/usr/bin/env python3
"""Generated code against the simulator, for every program and schedule of
the given .coco files.

    run_codegen.py --target cpu  --coconetc BIN --runtime-include DIR \
        --runtime-lib DIR --work DIR [--ranks 1,2,4] [--jobs J] FILE.coco...
    run_codegen.py --target cuda --coconetc BIN --runtime-include DIR \
        --work DIR FILE.coco...

cpu:  each (program, schedule) -- the unscheduled program included -- is
      emitted with --target=cpu --emit=driver, compiled with mpicxx (-Wall
      -Wextra -Werror, OpenMP, no floating-point contraction), run under
      `mpirun -np R` for every R in --ranks (every factorisation of R over a
      mesh's axes) and its results checked against `coconetc sim
      --check-outputs`: bit for bit, the CPU target's promise.
cuda: each is emitted with --target=cuda --emit=driver and compiled with
      nvcc -arch=sm_90 with warnings as errors (compile only: no GPU here;
      --nvcc-front-end: nvcc --ptx, its front end and the kernels' PTX);
      the driver, host code only, with g++ on the CUDA headers, -Werror.

A directory argument stands for the .coco files in it (sorted). Each case
works in WORK/FILE-STEM/PROGRAM[_SCHEDULE]; --jobs runs that many cases at
once (their reports still print in order).

--inputs wide draws the generated inputs (driver and simulator alike) so
that the order in which a sum adds its terms changes its bits (`coconetc
sim --inputs`): the default, uniform, 24-bit values, sums exactly in f64
in any order, so it cannot see a collective or kernel that combines its
members in another order than the simulator. --wide-ranks R,... runs each
case once more with --inputs wide on each of those rank counts (every
factorisation), after the --ranks runs, with --wide-unit (default 96, a
multiple of 3) in place of --unit.

Every size name that is not a mesh axis gets --unit (default 32): a multiple
of every rank count times every overlap's chunk count in the samples;
--size NAME=V,... gives some names other values (e.g. B=16,H=48, so that a
mix-up of two dimensions cannot go unnoticed); a mesh axis's size name
there keeps only the factorisations that give the axis that size.
--fused keeps only the (program, schedule) cases whose plan has a fused
collective or an overlap, and runs each of them in every --modes mode:
`team` (the fused kernels on the team's symmetric memory, the tensors they
share bound to the program's own memory: zero copy), `staging` (the
driver's own memory: the program copies in and out) and `fallback`
(COCONET_TEAM=off: the steps in sequence); `sequential` (the program
compiled with --sequential, built once more) and, on cuda-emu, `nosym` (the
emulated NCCL refusing symmetric memory, COCONET_EMU_NO_SYMMETRIC=1) can be
asked for too; the driver must say which path it took (its path() line).
--features-out FILE records the plan features (test/codegen/
plan_features.py) of every run that matched the simulator, with its target
and path, for the plan coverage check (plan_coverage.py). --race-seeds N (cuda-emu) runs each case once
more per mode and seed 1..N in the emulation's stream-race mode
(COCONET_EMU_RACE).

Exit status 0 when every case passes, 1 otherwise, 77 (skipped) when the
compiler of the target is missing.
"""
import argparse
import concurrent.futures
import hashlib
import itertools
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan_features  # noqa: E402


# The flags generated CPU code is built with (tools/cpu-flags.txt, which
# tools/build-generated.sh and tools/cmake/Coconet.cmake read too).
CPU_FLAGS = open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "..", "..", "tools", "cpu-flags.txt")
                 ).read().split()


# The linker of the generated programs: gold where it is installed (0.06 s
# a CPU program's link instead of GNU ld's 0.17, a few hundred links a
# run); the default otherwise. The same objects either way.
FAST_LINKER = ["-fuse-ld=gold"] if shutil.which("ld.gold") else []


# The most seconds one command (a compile, an mpirun of a generated
# program, a simulator run) may take: a program that spins for ever fails
# its case after this, instead of costing the suite its whole CTest time
# limit. COCONET_TEST_RUN_TIMEOUT changes it (seconds, a whole number).
RUN_TIMEOUT = int(os.environ.get("COCONET_TEST_RUN_TIMEOUT", "") or 300)

# What a command that ran past RUN_TIMEOUT says, after its output so far.
TIMED_OUT = "TIMED OUT"


def run(cmd, cwd=None, env=None, timeout=None):
    """Runs `cmd`; returns (ok, output). Past `timeout` seconds (default
    RUN_TIMEOUT) the command and every process it started (its session:
    mpirun's ranks) are killed, and it failed."""
    limit = RUN_TIMEOUT if timeout is None else timeout
    _t0 = time.time()
    try:
        return _run(cmd, cwd, env, limit)
    finally:
        if os.environ.get("COCONET_PROFILE"):
            with open(os.environ["COCONET_PROFILE"], "a") as f:
                f.write("%.3f\t%s\n" % (time.time() - _t0, " ".join(str(c) for c in cmd)[:400]))


def _run(cmd, cwd, env, limit):
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          errors="replace", start_new_session=True) as p:
        try:
            out, _ = p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
            out, _ = p.communicate()
            return False, (out or "") + "\n%s after %d s: %s\n" % (
                TIMED_OUT, limit, " ".join(str(c) for c in cmd)[:300])
        return p.returncode == 0, out


# Open MPI failed to start: mpiruns starting at once race creating (and,
# as the last job ends, removing) its session directory in /tmp.
MPI_START_FAILED = "orte_init failed"


# How many more times an mpirun that failed to start is tried, each after
# a pause of its own (apart from the other mpiruns starting at once).
MPI_RETRIES = 4


def mpi_pause():
    """The pause before trying again an mpirun that failed to start."""
    time.sleep(random.uniform(0.1, 0.5))


def run_mpi(cmd, cwd=None, env=None):
    """`run` for mpirun, tried again while Open MPI failed to start (an
    mpirun that started pays no pause)."""
    ok, out = run(cmd, cwd=cwd, env=env)
    for _ in range(MPI_RETRIES):
        if ok or MPI_START_FAILED not in out:
            break
        mpi_pause()
        ok, out = run(cmd, cwd=cwd, env=env)
    return ok, out


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


def plan_text(coconetc, path, program, schedule):
    ok, out = run([coconetc, "--color=never", "--emit=plan", path] +
                  selector(program, schedule))
    if not ok:
        raise RuntimeError(out)
    return out


def plan_info(coconetc, path, program, schedule):
    """(mesh axes [(name, size name)], size names) from --emit=plan."""
    axes, sizes = [], []
    for line in plan_text(coconetc, path, program, schedule).splitlines():
        line = line.strip()
        if line.startswith("mesh"):
            axes = [tuple(a.split(":")) for a in line.split()[1:]]
        elif line.startswith("sizes"):
            sizes = line.split()[1:]
    return axes, sizes


def has_fusion(coconetc, path, program, schedule):
    """(the plan has a fused collective or an overlap, and one kernel
    computes some fused collective)."""
    text = plan_text(coconetc, path, program, schedule)
    fused = "fused collective:" in text or "  overlap:" in text
    return fused, "one kernel over the team" in text


# --fused modes: (driver arguments, environment, what the driver's path()
# line must say when one kernel computes some fused collective). The
# `sequential` mode runs the program compiled with --sequential (its own
# build); `nosym` (cuda-emu) the emulated NCCL refusing symmetric memory,
# as NCCL does on one GPU.
MODES = {
    "team": ([], {}, "one kernel on the team's symmetric memory"),
    "staging": (["--staging"], {},
                "one kernel on the team's symmetric memory"),
    "fallback": ([], {"COCONET_TEAM": "off"},
                 "steps in sequence (COCONET_TEAM=off)"),
    "sequential": ([], {}, "(the sequential form was asked for)"),
    "nosym": ([], {"COCONET_EMU_NO_SYMMETRIC": "1"},
              "NCCL refused symmetric memory"),
}


def nosym_path(out, says):
    """(what the path() line must say, the path taken) of a run with
    the emulated NCCL refusing symmetric memory: the fused collectives
    over an axis of one member run their kernel (cuda/team.h), the others
    fall back with NCCL's reason."""
    parts = [p for line in out.splitlines()
             for p in re.split(r"; (?=fused collectives|overlap of)",
                               line.split(": ", 1)[-1])
             if p.startswith("fused collectives over")]
    alone = [p for p in parts if p.endswith("(1 member)")]
    if parts and len(alone) == len(parts):
        return MODES["team"][2], "team"
    return says, "nosym"


def record_features(args, path, program, schedule, mode):
    """Appends a record of a run that matched the simulator to
    --features-out (test/codegen/plan_coverage.py reads them)."""
    if not args.features_out:
        return
    key = (path, program, schedule)
    if key not in args.feature_cache:
        text = plan_text(args.coconetc, path, program, schedule)
        args.feature_cache[key] = (sorted(plan_features.features(text)),
                                   plan_features.has_fusion(text))
    feats, fusion = args.feature_cache[key]
    where = mode if mode else ("team" if fusion else "any")
    case = program + (f", schedule {schedule}" if schedule else "")
    with args.features_lock, open(args.features_out, "a") as f:
        f.write("\t".join([args.target, where, os.path.basename(path),
                           case] + feats) + "\n")


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


class Report:
    """What checking one case printed, failed and counted."""

    def __init__(self):
        self.lines, self.failures, self.checked = [], [], 0

    def line(self, text):
        self.lines.append(text)

    def fail(self, text):
        self.failures.append(text)


def check_cuda(args, path, name, title, out_dir, report):
    for src in (name + ".cu", name + "_main.cu"):
        # Launches go through cc_launch (coconet/cuda/kernels.h): the
        # generated text holds no nvcc-only launch syntax.
        with open(os.path.join(out_dir, src)) as f:
            for number, text in enumerate(f, start=1):
                if "<<<" in text:
                    report.fail(f"{title}: {src}:{number}: a launch with "
                                f"<<<...>>> (use cc_launch): {text.strip()}")
        with open(os.path.join(out_dir, src)) as f:
            text = f.read()
        device = not src.endswith("_main.cu") or "__global__" in text or \
            "kernels.h" in text
        if device and args.nvcc_front_end:
            # --ptx: nvcc's front end (cicc), which diagnoses the whole
            # file, host code included, and compiles the kernels to PTX;
            # no host compiler and no ptxas: a third of a full compile
            # (the regression cases; the samples and gpu-build compile in
            # full, cuda-emu compiles the same file's host code with g++).
            # -Xcicc -O0: the kernels' PTX unoptimised (a quarter less
            # time; what the front end diagnoses is the same, and
            # gpu-build's and the GPU check's builds optimise).
            command = ["nvcc", "-std=c++17", "-arch=sm_90", "-Werror",
                       "all-warnings", "-I" + args.runtime_include, "--ptx",
                       "-Xcicc", "-O0", src, "-o", src + ".ptx"]
        elif device:
            # -O0: what nvcc and its host compiler accept and warn about,
            # a quarter faster than -O2 (tools/build-generated.sh, gpu-build
            # and the GPU check build at -O2).
            command = ["nvcc", "-std=c++17", "-O0", "-arch=sm_90",
                       "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra",
                       "-I" + args.runtime_include, "-c", src, "-o",
                       src + ".o"]
        elif args.host_code_elsewhere:
            continue
        else:
            # Host code only (the driver): the host compiler nvcc would
            # hand it to, on the real CUDA headers, with the same warnings
            # (a quarter of nvcc's time; tools/build-generated.sh, gpu-build
            # and the GPU check build drivers with nvcc itself).
            command = ["g++", "-std=c++17", "-x", "c++", "-fsyntax-only",
                       "-Wall", "-Wextra", "-Werror",
                       "-I" + args.runtime_include,
                       "-I" + args.cuda_include, src]
        good, out = run(command, cwd=out_dir)
        if not good:
            report.fail(f"{title}: {command[0]} {src}:\n{out}")
    report.checked += 1
    report.line(f"{'FAILED' if report.failures else 'ok'}: {title}: nvcc")


def emu_command(args, name):
    """g++ on the generated .cu files with the CUDA emulation (test/emu/):
    the prelude force-included, the real CUDA headers, the CUDA runtime
    library built for the emulation, NCCL on MPI. Two commands: the driver
    compiled alone, without the sanitizers (its code is the runtime's
    target driver and the program's API; instrumenting it only cost time),
    then the program, sanitized, linked with it. Each finds the prelude
    precompiled (prelude_pch) where it can."""
    lib, emu = args.runtime_lib, args.emu_lib
    mpi = (subprocess.run(["mpicxx", "--showme:compile"], text=True,
                          stdout=subprocess.PIPE).stdout.split(),
           subprocess.run(["mpicxx", "--showme:link"], text=True,
                          stdout=subprocess.PIPE).stdout.split())
    # AddressSanitizer and UBSan: a kernel's index past a buffer's end
    # (cudaMalloc allocates exactly what is asked) fails the run.
    sanitize = ["-g", "-fsanitize=address,undefined",
                "-fno-sanitize-recover=undefined"] if args.sanitize else []
    # The warnings nvcc's host compiler would give (codegen-cuda's nvcc
    # --ptx checks the front end and the kernels, not the host compiler).
    compile = (["-ffp-contract=off", "-Wall", "-Wextra", "-Werror",
                "-Wno-attributes", "-Wno-unknown-pragmas", "-DCOCONET_WITH_MPI",
                "-I" + args.emu_include, "-I" + args.runtime_include,
                "-I" + args.cuda_include] + mpi[0])
    driver_flags = ["-std=c++17", "-O1"] + compile
    # The sanitized program at -O0: a quarter less compile time than -O1,
    # and its runs are small.
    # (-fopenmp and -pthread as the link needs them: they are compile
    # options too, and a precompiled prelude built without them is not
    # taken: the whole prelude parsed again, 1.6 s of every program.)
    program_flags = (["-std=c++17", "-O0" if args.sanitize else "-O1"] +
                     sanitize + compile + ["-fopenmp", "-pthread"])
    def prelude(flags):
        # The harness's prelude (the emulation's and the runtime's
        # headers), precompiled; read as text where that failed.
        return (prelude_pch(args, flags, "g++", EMU_PRELUDE,
                            os.path.basename(EMU_PRELUDE)) +
                ["-I" + os.path.dirname(EMU_PRELUDE)])
    force = ["-include", os.path.basename(EMU_PRELUDE)]
    driver = (["g++"] + prelude(driver_flags) + driver_flags +
              ["-x", "c++"] + force +
              ["-c", name + "_main.cu", "-o", name + "_main.o"])
    return [driver, ["g++"] + prelude(program_flags) +
            program_flags +
            ["-x", "c++"] + force +
            [name + ".cu", "-x", "none", name + "_main.o", "-o", name,
             os.path.join(emu, "libcoconet_rt_cuda_emu.a"),
             os.path.join(lib, "libcoconet_rt_mpi.a"),
             os.path.join(emu, "libcoconet_emu.a"),
             os.path.join(lib, "libcoconet_rt_cpu.a"),
             os.path.join(lib, "libcoconet_rt.a"),
             "-lboost_context"] + mpi[1] + FAST_LINKER]


# The CUDA emulation's prelude, force-included into every .cu file it
# compiles (test/emu/include/coconet/emu/prelude.h: the CUDA headers and
# the emulated device), and the harness's, which includes it and the
# headers generated CUDA code includes (test/codegen/cuda_emu_prelude.h).
PRELUDE = "coconet/emu/prelude.h"
EMU_PRELUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "cuda_emu_prelude.h")
_pch_lock = threading.Lock()
# File digests by (path, size, mtime), and the runtime and emulation
# headers' digest ("headers").
_digests = {}
_digests_lock = threading.RLock()


def prelude_pch(args, flags, compiler="g++", header=None, name=PRELUDE):
    """["-I", DIR], DIR holding the precompiled header (.gch) of the
    prelude NAME (HEADER's file; default: the CUDA emulation's) built by
    `compiler` with `flags` (those of the compile that uses it: GCC takes a
    .gch only when its options match, and reads the header itself
    otherwise), or [] where it could not be built. The force-included
    prelude is the same text either way; parsing it took 0.4 s of each
    0.9 s compile. Kept under --build-cache (else --work), named by the
    compiler, the flags, the prelude's and the headers' digests, so an
    edited header makes a new one."""
    header = header or os.path.join(args.emu_include, PRELUDE)
    h = hashlib.sha256()
    for f in [compiler] + flags:
        h.update(f.encode() + b"\0")
    h.update(file_digest(header).encode())
    h.update(headers_digest(args).encode())
    root = os.path.abspath(os.path.join(
        getattr(args, "build_cache", "") or args.work, "pch", h.hexdigest()))
    gch = os.path.join(root, name + ".gch")
    with _pch_lock:
        if not os.path.isfile(gch):
            os.makedirs(os.path.dirname(gch), exist_ok=True)
            temp = f"{gch}.{os.getpid()}"
            ok, _ = run([compiler] + flags + [
                "-c", "-x", "c++-header", header, "-o", temp])
            if not ok:
                return []
            os.replace(temp, gch)
    return ["-I" + root]


# The headers generated CPU code includes (test/codegen/cpu_prelude.h),
# precompiled and force-included with --precompiled-prelude.
CPU_PRELUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "cpu_prelude.h")


def cpu_prelude(args, flags):
    """The options that force-include cpu_prelude.h, precompiled (under
    --build-cache, else --work) for an mpicxx compile with `flags`; read as
    text where the precompiled header could not be built."""
    return (prelude_pch(args, flags, "mpicxx", CPU_PRELUDE,
                        os.path.basename(CPU_PRELUDE)) +
            ["-I" + os.path.dirname(CPU_PRELUDE), "-include",
             os.path.basename(CPU_PRELUDE)])


# GCC's vectorisation remarks on a CPU build's program (its own file, not
# the driver's): NAME.cpp.vec beside it, kept with the binary in the build
# cache (build_cached's `side`), which the vectorized test reads
# (check_vectorized.py) instead of compiling every program again.
VEC_REPORT = ".cpp.vec"


def cpu_command(args, name):
    """Two mpicxx commands: the generated program compiled (-c), its
    vectorisation remarks written to NAME.cpp.vec; then its driver,
    linked with it and the CPU runtime. With --precompiled-prelude the
    runtime's and the standard headers come precompiled (cpu_prelude.h)."""
    lib = args.runtime_lib
    flags = (["-std=c++17", "-fopenmp"] + CPU_FLAGS +
             ["-Wall", "-Wextra", "-Werror", "-I" + args.runtime_include])
    prelude = cpu_prelude(args, flags) if args.precompiled_prelude else []
    return [["mpicxx"] + prelude + flags +
            ["-fopt-info-vec-optimized-missed=" + name + VEC_REPORT,
             "-c", name + ".cpp", "-o", name + ".o"],
            ["mpicxx"] + prelude + flags + FAST_LINKER +
            [name + ".o", name + "_main.cpp", "-o", name,
             os.path.join(lib, "libcoconet_rt_mpi.a"),
             os.path.join(lib, "libcoconet_rt_cpu.a"),
             os.path.join(lib, "libcoconet_rt.a")]]


def file_digest(path):
    """sha256 of a file's bytes, remembered by (path, size, mtime)."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    with _digests_lock:
        if key in _digests:
            return _digests[key]
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with _digests_lock:
        _digests[key] = digest
    return digest


def headers_digest(args):
    """The digest of the runtime's and the emulation's headers (once)."""
    with _digests_lock:
        if "headers" not in _digests:
            _digests["headers"] = "".join(
                tree_digest(d) for d in (args.runtime_include,
                                         getattr(args, "emu_include", ""))
                if d)
        return _digests["headers"]


def tree_digest(root, remember=True):
    """sha256 over every file under `root` (names and bytes); remember=False
    reads every file again (a run's results: rewritten in place)."""
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            full = os.path.join(d, f)
            h.update(os.path.relpath(full, root).encode() + b"\0")
            if remember:
                h.update(file_digest(full).encode())
            else:
                with open(full, "rb") as data:
                    h.update(hashlib.sha256(data.read()).digest())
    return h.hexdigest()


def run_all(commands, cwd):
    """Runs `commands` in turn until one fails; returns (ok, output)."""
    output = ""
    for command in commands:
        ok, out = run(command, cwd=cwd)
        output += out
        if not ok:
            return False, output
    return True, output


def build_cached(args, command, out_dir, name, side=()):
    """Runs the build `command` (or a list of commands, in turn) in
    `out_dir` (making ./NAME and the files named in `side`), or copies
    them from --build-cache when an identical build made them before: the
    same command, the same generated files (coconetc's output is
    deterministic, so tests that build one program share it), the same
    libraries and runtime headers."""
    commands = command if isinstance(command[0], list) else [command]
    if not args.build_cache:
        return run_all(commands, out_dir)
    h = hashlib.sha256()
    for part in (p for c in commands for p in c):
        h.update(part.encode() + b"\0")
        if os.path.isabs(part) and os.path.isfile(part):
            h.update(file_digest(part).encode())
    for f in sorted(os.listdir(out_dir)):
        if f.startswith(name + ".") or f.startswith(name + "_main."):
            h.update(f.encode() + b"\0" +
                     file_digest(os.path.join(out_dir, f)).encode())
    h.update(headers_digest(args).encode())
    cached = os.path.join(args.build_cache, h.hexdigest())
    # (out_dir's file, the cache's) for the binary and each side output.
    files = [(os.path.join(out_dir, f), cached + f[len(name):])
             for f in [name] + list(side)]
    if all(os.path.isfile(c) for _, c in files):
        for mine, c in files:
            shutil.copy2(c, mine)
        return True, ""
    ok, out = run_all(commands, out_dir)
    if ok:
        os.makedirs(args.build_cache, exist_ok=True)
        # The binary last: an entry whose binary is there is whole.
        for mine, c in reversed(files):
            temp = f"{c}.{os.getpid()}.{threading.get_ident()}"
            shutil.copy2(mine, temp)
            os.replace(temp, c)
    return ok, out


# The CUDA target reduces each row of a layernorm or rmsnorm through a tree
# of its block's threads (docs/codegen.md): in f64, as the simulator, but
# in another order, so an f64 result may differ in its last bits (an
# f32/f16/bf16 one rounds them away). The CUDA emulation's check allows
# those cases the GPU check's tolerance for f64 norms (test/gpu/prepare.py:
# 64 ulp); every other case is bitwise, sums and norms of tensors included
# (the runtime's Reducer, in the order of a reduction).
F64_REDUCTION = re.compile(r"^%\d+ \S+ : f64\S*.*? = (layernorm|rmsnorm)\b")


def emu_ulps(args, path, program, schedule):
    """The --check-ulps a cuda-emu case needs (none: bitwise)."""
    if args.target != "cuda-emu":
        return []
    ok, out = run([args.coconetc, "--color=never", "--emit=ir", path] +
                  selector(program, schedule))
    if ok and any(F64_REDUCTION.match(line.strip())
                  for line in out.splitlines()):
        return ["--check-ulps", "64"]
    return []


def check_cpu(args, env, path, program, schedule, name, title, out_dir,
              report, modes):
    """Builds (cpu: mpicxx; cuda-emu: g++ with the CUDA emulation) and runs
    one program on every rank count (in each of `modes` with --fused),
    against the simulator."""
    if args.target == "cuda-emu":
        compiler = "g++ (CUDA emulation)"
        command = emu_command(args, name)
    else:
        compiler = "mpicxx"
        command = cpu_command(args, name)
    side = [name + VEC_REPORT] if args.target == "cpu" else []
    ok, out = build_cached(args, command, out_dir, name, side)
    if not ok:
        report.fail(f"{title}: {compiler}:\n{out}")
        report.line(f"FAILED: {title}: {compiler}")
        return
    axes, sizes = plan_info(args.coconetc, path, program, schedule)
    kernel = args.fused and has_fusion(args.coconetc, path, program,
                                       schedule)[1]
    ulps = emu_ulps(args, path, program, schedule)
    # (what, driver arguments, environment, the path() line it must print,
    # the mode)
    runs = [("", ["--quiet"], {}, None, None)]
    if args.fused:
        runs = []
        for m in modes:
            extra, mode_env, says = MODES[m]
            runs.append((f", {m}", extra, mode_env, says, m))
            # The stream-race mode (cuda-emu): every stream's tasks start
            # after a random delay, so a missing event wait shows.
            runs += [(f", {m}, race seed {seed}", extra,
                      dict(mode_env, COCONET_EMU_RACE=str(seed)), says, m)
                     for seed in range(1, args.race_seeds + 1)]
    # (rank count, how inputs are drawn)
    counts = ([(r, args.inputs, args.unit) for r in args.rank_counts] +
              [(r, "wide", args.wide_unit) for r in args.wide_ranks])
    for r, inputs, unit in counts:
        drawn = [] if inputs == "uniform" else ["--inputs", inputs]
        # A mesh axis whose size --size gives keeps it (e.g. the ranks of
        # an algorithm file over that axis).
        shapes = [shape for shape in factorisations(r, len(axes))
                  if all(args.fixed.get(size, v) == v
                         for (_, size), v in zip(axes, shape))]
        for shape, (mode, extra, mode_env, says, mode_name) in \
                itertools.product(shapes, runs):
            binding = {size: v for (_, size), v in zip(axes, shape)}
            for s in sizes:
                binding.setdefault(s, args.fixed.get(s, unit))
            size_arg = ",".join(f"{k}={v}" for k, v in binding.items())
            res = os.path.join(out_dir, f"out-{'x'.join(map(str, shape))}")
            shutil.rmtree(res, ignore_errors=True)
            what = (f"{title} on {r} ranks ({size_arg}{mode}" +
                    ("" if inputs == "uniform" else f", {inputs} inputs") +
                    ")")
            run_env = dict(env, **mode_env)
            exports = [a for k in mode_env for a in ("-x", k)]
            ok, out = run_mpi(["mpirun", "--oversubscribe"] + exports +
                          ["-np", str(r), "./" + name, "--size", size_arg,
                           "--seed", str(args.seed), "--output-dir", res] +
                          drawn + extra, cwd=out_dir, env=run_env)
            if not ok:
                report.fail(f"{what}: the program failed:\n{out}")
                report.line(f"FAILED: {what}: run")
                continue
            if mode_name == "nosym":
                # A team of one member (an axis of size 1) uses no
                # symmetric memory (its own device memory, cuda/team.h):
                # its kernel runs; every other team is refused.
                says, mode_name = nosym_path(out, says)
            if says and (kernel or mode_name == "sequential") and \
                    says not in out:
                report.fail(f"{what}: the driver does not say "
                            f"'{says}':\n{out}")
                report.line(f"FAILED: {what}: path")
                continue
            ok, out = check_outputs(
                args, [path, "--size", size_arg, "--seed", str(args.seed)] +
                drawn + ulps + selector(program, schedule), res)
            report.checked += 1
            last = out.strip().splitlines()[-1] if out.strip() else ""
            report.line(f"{'ok' if ok else 'FAILED'}: {what}: {last}")
            if not ok:
                report.fail(f"{what}:\n{out}")
            else:
                record_features(args, path, program, schedule, mode_name)
    if args.step_times:
        check_step_times(args, report, title, name, out_dir, env, axes,
                         sizes)


def check_step_times(args, report, title, name, out_dir, env, axes, sizes):
    """--step-times R: the driver times 3 steps on R ranks, each one by one
    (its --step-times), and says so on one line: `PROGRAM: 3 steps on R
    ranks, X ms per step, fastest Y ms` with Y at most X."""
    r = args.step_times
    shape = next(iter(factorisations(r, len(axes))))
    binding = {size: v for (_, size), v in zip(axes, shape)}
    for s in sizes:
        binding.setdefault(s, args.fixed.get(s, args.unit))
    size_arg = ",".join(f"{k}={v}" for k, v in binding.items())
    what = f"{title} on {r} ranks ({size_arg}, 3 steps timed one by one)"
    ok, out = run_mpi(["mpirun", "--oversubscribe", "-np", str(r),
                       "./" + name, "--size", size_arg, "--seed",
                       str(args.seed), "--iterations", "3", "--step-times"],
                      cwd=out_dir, env=env)
    line = re.search(r"^\S+: 3 steps on (\d+) ranks, ([0-9.]+) ms per step, "
                     r"fastest ([0-9.]+) ms$", out, re.M)
    if not ok or not line or int(line.group(1)) != r or \
            float(line.group(3)) > float(line.group(2)):
        report.fail(f"{what}: no timing line with the fastest step at most "
                    f"the mean:\n{out}")
        report.line(f"FAILED: {what}")
        return
    report.checked += 1
    report.line(f"ok: {what}: {line.group(0)}")


def check_outputs(args, sim_args, res):
    """`coconetc sim SIM_ARGS --check-outputs RES`: (ok, output). Results
    byte for byte those of a run the simulator accepted before with the same
    arguments (another mode, path or target of the same program, sizes and
    inputs: they must all be the simulator's) are accepted without running
    it again: its verdict depends on nothing else. Remembered under
    --build-cache by the compiler's and the program file's digests, the
    arguments and the results' digest."""
    command = [args.coconetc, "--color=never", "sim"] + sim_args + [
        "--check-outputs", res]
    if not args.build_cache:
        return run(command)
    h = hashlib.sha256(b"check-outputs\0")
    for part in sim_args:
        h.update(part.encode() + b"\0")
        if os.path.isabs(part) and os.path.isfile(part):
            h.update(file_digest(part).encode())
    h.update(file_digest(args.coconetc).encode())
    h.update(tree_digest(res, remember=False).encode())
    accepted = os.path.join(args.build_cache, "accepted", h.hexdigest())
    if os.path.isfile(accepted):
        with open(accepted) as f:
            return True, f.read()
    ok, out = run(command)
    if ok:
        os.makedirs(os.path.dirname(accepted), exist_ok=True)
        temp = f"{accepted}.{os.getpid()}.{threading.get_ident()}"
        with open(temp, "w") as f:
            f.write(out.rstrip("\n") + " (the same bytes as a run it "
                    "checked before)\n")
        os.replace(temp, accepted)
    return ok, out


def check_case(args, env, path, file_dir, program, schedule):
    """Emits, compiles and (cpu) runs one (program, schedule) in a
    directory under `file_dir`."""
    report = Report()
    name = program + ("_" + schedule if schedule else "")
    title = f"{os.path.basename(path)}: {program}" + (
        f", schedule {schedule}" if schedule else "")
    out_dir = os.path.join(file_dir, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    target = "cuda" if args.target == "cuda-emu" else args.target
    ok, out = run([args.coconetc, "--color=never", "--emit=driver",
                   "--target=" + target, "-o", out_dir, path] +
                  selector(program, schedule))
    if not ok:
        report.fail(f"{title}: coconetc failed:\n{out}")
        report.line(f"FAILED: {title}: coconetc")
    elif args.target == "cuda":
        check_cuda(args, path, name, title, out_dir, report)
    else:
        modes = [m for m in args.modes if m != "sequential"] if args.fused \
            else []
        if not args.fused or modes:
            check_cpu(args, env, path, program, schedule, name, title,
                      out_dir, report, modes)
        if args.fused and "sequential" in args.modes:
            # The same program compiled with --sequential: its own build.
            seq_dir = out_dir + "-sequential"
            shutil.rmtree(seq_dir, ignore_errors=True)
            ok, out = run([args.coconetc, "--color=never", "--emit=driver",
                           "--sequential", "--target=" + target, "-o",
                           seq_dir, path] + selector(program, schedule))
            if not ok:
                report.fail(f"{title}: coconetc --sequential failed:\n{out}")
                report.line(f"FAILED: {title}: coconetc --sequential")
            else:
                check_cpu(args, env, path, program, schedule, name, title,
                          seq_dir, report, ["sequential"])
    return report


def expand(paths):
    """Files, with each directory replaced by its .coco files."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, f) for f in os.listdir(p)
                          if f.endswith(".coco"))
        else:
            out.append(p)
    return [os.path.abspath(f) for f in out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["cpu", "cuda", "cuda-emu"],
                    required=True)
    ap.add_argument("--emu-include", default="",
                    help="cuda-emu: test/emu/include")
    ap.add_argument("--emu-lib", default="",
                    help="cuda-emu: the directory of libcoconet_emu.a")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include",
                    help="cuda-emu, cuda: the CUDA headers")
    ap.add_argument("--sanitize", action="store_true",
                    help="cuda-emu: build with AddressSanitizer and UBSan")
    ap.add_argument("--nvcc-front-end", action="store_true",
                    help="cuda: nvcc --ptx (its front end and the kernels' "
                         "PTX) instead of a full compile of each .cu file")
    ap.add_argument("--host-code-elsewhere", action="store_true",
                    help="cuda: leave out the g++ check of host-only files "
                         "(the drivers) where cuda-emu compiles the same "
                         "files with the same warnings on the real CUDA "
                         "headers (2 s a driver)")
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--runtime-include", required=True)
    ap.add_argument("--runtime-lib", default="")
    ap.add_argument("--work", required=True)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--unit", type=int, default=32)
    ap.add_argument("--size", default="",
                    help="NAME=V,... values of some size names (else --unit)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--inputs", choices=["uniform", "wide"], default="uniform",
                    help="how generated inputs are drawn (coconetc sim "
                         "--inputs)")
    ap.add_argument("--wide-ranks", default="",
                    help="R,...: each case also runs with --inputs wide on "
                         "these rank counts (cpu, cuda-emu)")
    ap.add_argument("--wide-unit", type=int, default=96,
                    help="--unit of the --wide-ranks runs")
    ap.add_argument("--jobs", type=int, default=1,
                    help="cases checked at once")
    ap.add_argument("--omp-threads", type=int, default=1,
                    help="OpenMP threads of each rank (cpu)")
    ap.add_argument("--fused", action="store_true",
                    help="only cases with fused collectives or overlaps, "
                         "in every --modes mode")
    ap.add_argument("--modes", default="team,staging,fallback",
                    help="--fused: team, staging, fallback, sequential, "
                         "nosym (cuda-emu)")
    ap.add_argument("--precompiled-prelude",
                    action=argparse.BooleanOptionalAction, default=True,
                    help="cpu: force-include test/codegen/cpu_prelude.h, "
                         "precompiled once (the runtime's and the standard "
                         "headers: half of each build's time; default on; "
                         "the vectorized test takes it too). The build-rule "
                         "tests compile generated files without it")
    ap.add_argument("--build-cache", default="",
                    help="a directory of built programs shared by runs "
                         "(a build identical in command, generated files, "
                         "libraries and headers is copied, not redone)")
    ap.add_argument("--features-out", default="",
                    help="append a record of the plan features of every "
                         "run that matched the simulator to this file "
                         "(emptied first; test/codegen/plan_coverage.py)")
    ap.add_argument("--step-times", type=int, default=0,
                    help="R: also time 3 steps of each case on R ranks with "
                         "the driver's --step-times and check its line")
    ap.add_argument("--race-seeds", type=int, default=0,
                    help="--fused, cuda-emu: runs in the stream-race mode")
    ap.add_argument("files", nargs="+", help=".coco files or directories")
    args = ap.parse_args()
    args.modes = [m for m in args.modes.split(",") if m]
    for m in args.modes:
        if m not in MODES:
            ap.error(f"unknown mode '{m}' (" + ", ".join(MODES) + ")")
        if m == "nosym" and args.target != "cuda-emu":
            ap.error("the mode nosym is the CUDA emulation's (cuda-emu)")
    args.feature_cache = {}
    args.features_lock = threading.Lock()
    if args.features_out:
        args.features_out = os.path.abspath(args.features_out)
        os.makedirs(os.path.dirname(args.features_out), exist_ok=True)
        open(args.features_out, "w").close()
    # Compilers and programs run inside each case's directory.
    for name in ("coconetc", "runtime_include", "runtime_lib", "work",
                 "emu_include", "emu_lib", "build_cache"):
        if getattr(args, name):
            setattr(args, name, os.path.abspath(getattr(args, name)))
    files = expand(args.files)
    args.rank_counts = [int(r) for r in args.ranks.split(",")]
    args.wide_ranks = [int(r) for r in args.wide_ranks.split(",") if r]
    args.fixed = {}
    for item in filter(None, args.size.split(",")):
        name, _, value = item.partition("=")
        args.fixed[name.strip()] = int(value)

    compiler = {"cpu": "mpicxx", "cuda": "nvcc", "cuda-emu": "g++"}[args.target]
    if not shutil.which(compiler):
        print(f"SKIPPED: {compiler} is not installed")
        return 77
    if args.target != "cuda" and not shutil.which("mpirun"):
        print("SKIPPED: mpirun is not installed")
        return 77
    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ)
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMP_NUM_THREADS": str(args.omp_threads),
                # MPI's and OpenMP's own allocations live to the end.
                "ASAN_OPTIONS": "detect_leaks=0"})
    start = time.time()
    todo, failures, checked = [], [], 0
    stems = set()
    for path in files:
        # One directory per file, emptied first.
        stem = os.path.splitext(os.path.basename(path))[0]
        while stem in stems:
            stem += "_"
        stems.add(stem)
        file_dir = os.path.join(args.work, stem)
        shutil.rmtree(file_dir, ignore_errors=True)
        try:
            todo += [(path, file_dir, program, schedule)
                     for program, schedule in cases(args.coconetc, path)
                     if not args.fused or
                     has_fusion(args.coconetc, path, program, schedule)[0]]
        except RuntimeError as e:
            print(f"FAILED: {os.path.basename(path)}: coconetc", flush=True)
            failures.append(f"{os.path.basename(path)}: coconetc failed:\n{e}")
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        reports = pool.map(lambda c: check_case(args, env, *c), todo)
        for report in reports:
            for line in report.lines:
                print(line, flush=True)
            failures += report.failures
            checked += report.checked
    seconds = time.time() - start
    print(f"\n{checked} cases checked, {len(failures)} failures, "
          f"{seconds:.1f} s")
    for f in failures:
        print("\n" + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
