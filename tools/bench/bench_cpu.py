#!/usr/bin/env python3
"""Times one step of every schedule of a sample on the CPU target, beside
hand-written references and the memory floor measured in the same run, and
prints a table (tools/bench-cpu.sh runs this).

    tools/bench-cpu.sh [--ranks 1,2] [--size N=16777216] [--iterations 10]
        [--rounds 7] [--threads T] samples/adam.coco

A time is the slowest rank's mean over --iterations steps after one
untimed warm-up step, as the generated driver (--warmup 1) and the
reference print it. Every command runs once per round, the rounds one
after another (A B C ... A B C ...), so that a drift of the machine's speed
reaches every command alike; the table shows each command's fastest and
median run, and its ratios to the floor and to the fastest hand-written
mode at the same rank count as the median over rounds of the ratio within
a round. (On a shared VM one process's memory bandwidth can differ from the
next one's by 2x: compare ratios, not single times.)

References: when tools/bench/STEM_hand.cpp exists for the sample
(adam_hand.cpp for adam.coco) it is built with mpicxx -O3 -march=native
-fopenmp -ffp-contract=off -fno-math-errno, and each mode its line
"// modes: ..." names runs at every rank count, except those its line
"// one rank: ..." names (the memory floor and the loop without
communication), which run on one rank with every core.

Every rank gets T OpenMP threads (default: cores / ranks, at least 1);
ranks are not bound to cores (mpirun --bind-to none). Needs tools/build.sh
to have built the compiler and the runtime.

A schedule with fused collectives or overlaps gets three rows: its own
(the fused kernels on the team's symmetric memory, the shared tensors in
it: zero copy), `(staging)` (the same program given the driver's own
memory: it copies them in and out) and `(sequential)` (compiled with
coconetc --sequential: its steps in sequence, the form the fusion and
overlap replace); "x seq" is each row's ratio to the sequential form, and
"MiB" the bytes a rank reads and writes in one step by the report
(coconetc --emit=report, with --sequential for that form, plus the
staging copies). --chunks K1,K2,... adds each overlapped schedule again
with its chunk counts replaced by each Ki (`NAME_kKi`); --schedules keeps
only the named schedules (and variants).
"""
import argparse
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(cmd, env=None, cwd=None):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-cpu: {' '.join(map(str, cmd))} failed:\n{p.stdout}")
    return p.stdout


def ms_per_step(out):
    m = re.search(r"([0-9.]+) ms per step", out)
    if not m:
        sys.exit(f"bench-cpu: no 'ms per step' in:\n{out}")
    return float(m.group(1))


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--size", default="N=16777216")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--chunks", default="",
                    help="chunk counts of added variants of overlaps")
    ap.add_argument("--schedules", default="",
                    help="only these schedules (comma-separated)")
    ap.add_argument("--no-hand", action="store_true",
                    help="no hand-written references")
    ap.add_argument("--hand", help="the hand-written reference (default: "
                    "tools/bench/STEM_hand.cpp)")
    ap.add_argument("--hand-args", default="",
                    help="arguments after the reference's MODE N ITER")
    ap.add_argument("--driver-args", default="",
                    help="arguments for every generated driver (e.g. "
                    "--segments layers=FILE)")
    ap.add_argument("--label", default="",
                    help="added to every row's name (e.g. the table)")
    ap.add_argument("sample")
    args = ap.parse_args()
    build = pathlib.Path(os.environ.get("COCONET_BUILD_DIR", ROOT / "build"))
    coconetc = build / "bin" / "coconetc"
    work = build / "bench-cpu"
    work.mkdir(parents=True, exist_ok=True)
    ranks = [int(r) for r in args.ranks.split(",")]
    cores = os.cpu_count() or 1
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def threads(r):
        return args.threads or max(1, cores // r)

    def mpirun(r, cmd):
        return ["mpirun", "--oversubscribe", "--bind-to", "none", "-x",
                f"OMP_NUM_THREADS={threads(r)}", "-np", str(r)] + cmd

    # Commands: (label, ranks, kind, argv, bytes, sequential twin); kind is
    # "floor", "hand" or "gen"; the twin is the index of the command of the
    # same program's sequential form (None: none).
    commands = []
    stem = pathlib.Path(args.sample).stem
    reference = pathlib.Path(args.hand) if args.hand else \
        ROOT / "tools" / "bench" / f"{stem}_hand.cpp"
    hand_args = args.hand_args.split()
    driver_args = args.driver_args.split()
    sizes = dict(kv.split("=") for kv in args.size.split(","))
    # Overlap variants: a copy of the sample with each overlapped schedule
    # again under every --chunks count.
    sample = pathlib.Path(args.sample)
    chunks = [int(k) for k in args.chunks.split(",") if k]
    if chunks:
        text = sample.read_text()
        extra = []
        for m in re.finditer(r"schedule (\w+) for (\w+) \{(.*?)\n\}", text,
                             re.S):
            if "overlap(" not in m.group(3):
                continue
            for k in chunks:
                body = re.sub(r"chunks \d+", f"chunks {k}", m.group(3))
                extra.append(f"schedule {m.group(1)}_k{k} for {m.group(2)} "
                             f"{{{body}\n}}\n")
        sample = work / sample.name
        sample.write_text(text + "\n" + "".join(extra))
    wanted = [w for w in args.schedules.split(",") if w]

    def selected(schedule):
        if not wanted:
            return True
        return schedule is not None and any(
            schedule == w or schedule.startswith(w + "_k") for w in wanted)

    def report_bytes(select, r, sequential, staging):
        """A rank's bytes read and written in one step, by the report."""
        size = ",".join(f"{k}={v}" for k, v in sizes.items())
        out = run([str(coconetc), "--color=never", "--emit=report", "--size",
                   size, "--ranks", str(r)] +
                  (["--sequential"] if sequential else []) + select +
                  [str(sample)])
        total = out[out.index("  total:"):]
        m = re.search(r"memory .*= (\d+)", total)
        value = int(m.group(1)) if m else 0
        if staging:
            value += sum(int(c) for c in
                         re.findall(r"copies .*= (\d+)", out))
        return value / 2**20

    if reference.exists() and not args.no_hand:
        text = reference.read_text()
        modes = re.search(r"^// modes: *(.*)$", text, re.M).group(1).split()
        single = re.search(r"^// one rank: *(.*)$", text, re.M)
        single = single.group(1).split() if single else []
        hand = work / "hand"
        run(["mpicxx", "-std=c++17", "-O3", "-march=native", "-fopenmp",
             "-ffp-contract=off", "-fno-math-errno", str(reference), "-o",
             str(hand)])
        n = args.size.split("=", 1)[1]
        for mode in modes:
            for r in ranks:
                if r != 1 and mode in single:
                    continue
                commands.append((f"hand-written: {mode}{args.label}", r,
                                 "floor" if mode == "floor" else "hand",
                                 mpirun(r, [str(hand), mode, n,
                                            str(args.iterations)] +
                                        hand_args),
                                 None, None))
    listing = run([str(coconetc), "--color=never", str(sample)])
    for line in listing.splitlines():
        m = re.match(r"program (\w+)", line)
        s = re.match(r"schedule (\w+) for (\w+)", line)
        if m:
            program, schedule = m.group(1), None
        elif s:
            program, schedule = s.group(2), s.group(1)
        else:
            continue
        if not selected(schedule):
            continue
        name = program + (f"_{schedule}" if schedule else "")
        select = (["--schedule", schedule] if schedule
                  else ["--program", program])
        plan = run([str(coconetc), "--color=never", "--emit=plan"] + select +
                   [str(sample)])
        fused = "fused collective:" in plan or "  overlap:" in plan
        label = f"{program} / {schedule}" if schedule else \
            f"{program} (unscheduled)"
        # (label suffix, coconetc flags, driver flags)
        forms = [("", [], [])]
        if fused:
            forms = [(" (sequential)", ["--sequential"], []), ("", [], []),
                     (" (staging)", [], ["--staging"])]
        built = {}
        for suffix, flags, _ in forms:
            key = tuple(flags)
            if key in built:
                continue
            out = work / (name + ("_seq" if flags else ""))
            run([str(coconetc), "--emit=driver", "--target=cpu"] + flags +
                select + ["-o", str(out), str(sample)])
            run([str(ROOT / "tools" / "build-generated.sh"), "cpu", str(out),
                 name])
            built[key] = out / name
        for r in ranks:
            twin = None
            for suffix, flags, driver in forms:
                if flags:
                    twin = len(commands)
                commands.append((
                    label + args.label + suffix, r, "gen",
                    mpirun(r, [str(built[tuple(flags)]), "--size", args.size,
                               "--quiet", "--warmup", "1", "--iterations",
                               str(args.iterations)] + driver + driver_args),
                    report_bytes(select, r, bool(flags), bool(driver)),
                    twin if fused else None))

    times = [[] for _ in commands]  # times[command][round]
    for _ in range(args.rounds):
        for i, command in enumerate(commands):
            times[i].append(ms_per_step(run(command[3], env=env)))

    floor = next((i for i, c in enumerate(commands) if c[2] == "floor"), None)
    fastest_hand = {}  # ranks -> the hand-written command fastest there
    for i, (_, r, kind, _, _, _) in enumerate(commands):
        if kind == "hand" and (r not in fastest_hand or
                               min(times[i]) < min(times[fastest_hand[r]])):
            fastest_hand[r] = i

    def ratio(i, j):
        if j is None:
            return "-"
        return "%.2f" % statistics.median(
            a / b for a, b in zip(times[i], times[j]))

    print(f"{os.path.basename(args.sample)} on the CPU target, {args.size}, "
          f"{platform.machine()}, {cores} cores, {cpu_name()}")
    print(f"ms per step: fastest and median of {args.rounds} rounds; ratios: "
          f"median over rounds of the ratio within a round")
    print("%-42s %5s %7s %8s %8s %8s %8s %7s %8s" % (
        "program / schedule", "ranks", "threads", "min ms", "median",
        "x floor", "x hand", "x seq", "MiB"))
    for i, (label, r, _, _, mib, twin) in enumerate(commands):
        print("%-42s %5d %7d %8.2f %8.2f %8s %8s %7s %8s" % (
            label, r, threads(r), min(times[i]), statistics.median(times[i]),
            ratio(i, floor), ratio(i, fastest_hand.get(r)), ratio(i, twin),
            "-" if mib is None else "%.1f" % mib))


if __name__ == "__main__":
    main()
