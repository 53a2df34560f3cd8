#!/usr/bin/env python3
"""samples/moe_layer.coco on the CPU target beside the same layer written by
hand in PyTorch, in one run, and prints a table with the ratios.

    tools/bench-moe.sh [--ranks 1,2] [--tokens 4096] [--hidden 1024]
                       [--iterations 3]

For each layer (moe_layer: top 2 of E = 8; deepseek_moe: top 8 of E = 64
and a shared expert) and each rank count R (one process per rank, 2 / R
threads each on this 2-core machine):

- ours: the generated driver (`coconetc --emit=driver --target=cpu`,
  tools/build-generated.sh), `--step-times`: the mean of 3 steps, each
  timed alone between barriers, after a warm-up step.
- torch: the layer as a PyTorch user writes it (tools/bench/moe_torch.py:
  one-hot and cumsum for the capacity positions, index_put into the
  buffer, all_to_all_single over gloo, bmm for the experts), the median of
  `--iterations` steps after a warm-up, between barriers.
- floor: the experts' three matmuls alone on one rank's share of the work
  (E / P experts of P * C rows; dropless: of the k * N * P / E rows an even
  routing gives each), with numpy's BLAS (tools/bench/moe_floor.py;
  `--floor-python` with a pip numpy brings OpenBLAS sgemm): the compute no
  step avoids, at sgemm speed (the SiLU and the product left out).

The overlapped schedules (`--tables overlap`): moe_layer and moe_dropless
unscheduled, under their schedule (overlapped, dropless_overlapped: the
dispatch and the combine in 2 parts beside the experts' matmuls) and under
the same schedule compiled --sequential (each overlap's collective and
matmul whole, one after the other): the schedule's gain is sequential /
overlapped; the schedule's layout against the unscheduled program's is
sequential / unscheduled.

The fused gathers (`--tables fusion`, tools/bench/moe_gather.coco): the
combine (each assignment's row read through its index, times its gate)
and the permutation before the dispatch (each slot's token cast to bf16)
alone, k * N rows of H a rank and the index a random permutation,
unscheduled (the gather's kernel stores the rows, the elementwise kernel
reads them back) and fused (one kernel reads the rows through the index),
beside torch's index_select as moe_torch.py writes it and the memory floor
(tools/bench/gather_torch.py: the bytes the fused kernel must move, at
numpy's copy speed).

The dropless layers (moe_dropless, deepseek_dropless: alltoallv and
grouped_matmul) beside torch's dropless layer as Megatron's all-to-all
dispatcher writes it (moe_torch.py --capacity 0). Capacity factor 1.25:
C = 1.25 * k * N / E. Ours is exact (f64
accumulation in every matmul, the simulator's bits); torch's sgemm
accumulates in f32.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

LAYERS = [
    # name, k, E, F (expert width), S (shared expert width, 0: none)
    ("moe_layer", 2, 8, 1024, 0),
    ("deepseek_moe", 8, 64, 256, 512),
    ("moe_dropless", 2, 8, 1024, 0),
    ("deepseek_dropless", 8, 64, 256, 512),
]


def mpirun(ranks, command, env):
    env = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return subprocess.run(["mpirun", "--oversubscribe", "--bind-to", "none",
                           "-np", str(ranks)] + command, env=env,
                          capture_output=True, text=True)


def build(args, name, work, schedule=None, sequential=False,
          source=os.path.join(ROOT, "samples", "moe_layer.coco")):
    stem = name + ("_" + schedule if schedule else "")
    out = os.path.join(work, stem + ("-sequential" if sequential else ""))
    os.makedirs(out, exist_ok=True)
    subprocess.run([args.coconetc, "--emit=driver", "--target=cpu", "-o", out,
                    "--program", name] +
                   (["--schedule", schedule] if schedule else []) +
                   (["--sequential"] if sequential else []) + [source],
                   check=True)
    subprocess.run([os.path.join(ROOT, "tools", "build-generated.sh"), "cpu",
                    out, stem], check=True)
    return os.path.join(out, stem)


# The overlapped schedules' table: layer, schedule.
OVERLAPPED = [("moe_layer", "overlapped"),
              ("moe_dropless", "dropless_overlapped")]


def layer_sizes(name, R, N, H):
    """(sizes, k, E, F, C) of a layer of LAYERS on R ranks."""
    _, k, E, Fw, S = next(layer for layer in LAYERS if layer[0] == name)
    dropless = name.endswith("_dropless")
    C = 0 if dropless else (5 * k * N) // (4 * E)
    sizes = f"P={R},N={N},H={H},E={E},F={Fw}"
    if not dropless:
        sizes += f",C={C}"
    if S:
        sizes += f",S={S}"
    return sizes, k, E, Fw, C


def step_ms(R, driver, sizes, env, inputs=()):
    """The driver's mean ms per step (3 steps after a warm-up), or None."""
    ours = mpirun(R, [driver, "--size", sizes, "--iterations", "3",
                      "--step-times"] +
                  [a for name, path in inputs
                   for a in ("--input", f"{name}={path}")], env)
    m = re.search(r"([0-9.]+) ms per step", ours.stdout)
    if ours.returncode != 0 or not m:
        print(ours.stdout + ours.stderr)
        return None
    return float(m.group(1))


def overlap_table(args, ranks, cores):
    rows = []
    for name, schedule in OVERLAPPED:
        drivers = [build(args, name, args.work),
                   build(args, name, args.work, schedule, sequential=True),
                   build(args, name, args.work, schedule)]
        for R in ranks:
            env = dict(os.environ,
                       OMP_NUM_THREADS=str(max(1, cores // R)))
            sizes = layer_sizes(name, R, args.tokens, args.hidden)[0]
            times = [step_ms(R, d, sizes, env) for d in drivers]
            if None in times:
                return None
            rows.append((name, schedule, R) + tuple(times))
    print(f"Overlapped against sequential: {args.tokens} tokens a rank, "
          f"H = {args.hidden}, 2 parts; ms per step")
    print("| layer | schedule | ranks | unscheduled | schedule, sequential "
          "| schedule | sequential/overlapped | overlapped/unscheduled |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, schedule, R, plain, seq, ov) in rows:
        print(f"| {name} | {schedule} | {R} | {plain:.1f} | {seq:.1f} | "
              f"{ov:.1f} | {seq / ov:.2f} | {ov / plain:.2f} |")
    return rows


def fusion_table(args, ranks, cores):
    import numpy as np
    source = os.path.join(HERE, "moe_gather.coco")
    programs = [("combine", "fused", ("back", "row", "gate")),
                ("dispatch", "fused_dispatch", ("x", "holder"))]
    M, H = 2 * args.tokens, args.hidden
    rows = []
    for R in ranks:
        threads = max(1, cores // R)
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        rng = np.random.default_rng(R)
        data = {"back": rng.random((R, M, H), dtype=np.float32),
                "row": np.stack([rng.permutation(M) for _ in range(R)])
                .astype(np.int32),
                "gate": rng.random((R, M, 1), dtype=np.float32)}
        data["x"], data["holder"] = data["back"], data["row"]
        paths = {}
        for name, value in data.items():
            paths[name] = os.path.join(args.work, f"{name}-r{R}.npy")
            np.save(paths[name], value)
        ref = mpirun(R, [args.python, os.path.join(HERE, "gather_torch.py"),
                         "--rows", str(M), "--hidden", str(H), "--threads",
                         str(threads), "--iterations", str(args.iterations)],
                     env)
        m = re.search(r"combine ([0-9.]+) ms dispatch ([0-9.]+) ms "
                      r"floor-combine ([0-9.]+) ms floor-dispatch ([0-9.]+) ms",
                      ref.stdout)
        if ref.returncode != 0 or not m:
            print(ref.stdout + ref.stderr)
            return None
        torch_ms = {"combine": float(m.group(1)),
                    "dispatch": float(m.group(2))}
        floor_ms = {"combine": float(m.group(3)),
                    "dispatch": float(m.group(4))}
        for name, schedule, params in programs:
            inputs = [(p, paths[p]) for p in params]
            times = [step_ms(R, build(args, name, args.work, s, source=source),
                             f"P={R},M={M},H={H}", env, inputs)
                     for s in (None, schedule)]
            if None in times:
                return None
            rows.append((name, schedule, R, threads) + tuple(times) +
                        (torch_ms[name], floor_ms[name]))
    print(f"Fused gathers: {M} rows of {H} a rank (k * N, N = {args.tokens}), "
          "a random permutation; ms per step (torch, floor: the median of "
          f"{args.iterations})")
    print("| gather | schedule | ranks x threads | unfused | fused | torch "
          "| floor | unfused/fused | fused/torch | fused/floor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (name, schedule, R, th, plain, fused, t, f) in rows:
        print(f"| {name} | {schedule} | {R} x {th} | {plain:.1f} | "
              f"{fused:.1f} | {t:.1f} | {f:.1f} | {plain / fused:.2f} | "
              f"{fused / t:.2f} | {fused / f:.2f} |")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--floor-python", default=sys.executable)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--layers", default=",".join(l[0] for l in LAYERS),
                    help="the layers of the layers table (names in LAYERS)")
    ap.add_argument("--tables", default="layers,overlap",
                    help="which tables: layers (with the dispatch alone), "
                    "overlap, fusion")
    args = ap.parse_args()
    ranks = [int(r) for r in args.ranks.split(",")]
    cores = os.cpu_count() or 1
    tables = set(args.tables.split(","))
    if not tables <= {"layers", "overlap", "fusion"}:
        ap.error(f"--tables: unknown table in {args.tables!r}")
    layers = args.layers.split(",")
    known = [l[0] for l in LAYERS]
    if not layers or any(l not in known for l in layers):
        ap.error(f"--layers: each of {args.layers!r} must be one of {known}")
    if "fusion" in tables:
        if fusion_table(args, ranks, cores) is None:
            return 1
        if not tables & {"layers", "overlap"}:
            return 0
        print()
    if "overlap" in tables:
        if overlap_table(args, ranks, cores) is None:
            return 1
        if "layers" not in tables:
            return 0
        print()
    rows = []
    for name, k, E, Fw, S in LAYERS:
        if name not in layers:
            continue
        driver = build(args, name, args.work)
        N, H = args.tokens, args.hidden
        # Dropless: no capacity (C = 0 in the table); the floor's experts
        # multiply the rows an even routing gives them, k * N * R / E.
        dropless = name.endswith("_dropless")
        for R in ranks:
            threads = max(1, cores // R)
            env = dict(os.environ, OMP_NUM_THREADS=str(threads))
            sizes, k, E, Fw, C = layer_sizes(name, R, N, H)
            ours_ms = step_ms(R, driver, sizes, env)
            if ours_ms is None:
                return 1
            ref = mpirun(R, [args.python, os.path.join(HERE, "moe_torch.py"),
                             "--tokens", str(N), "--hidden", str(H),
                             "--experts", str(E), "--k", str(k),
                             "--width", str(Fw), "--shared", str(S),
                             "--capacity", str(C), "--threads", str(threads),
                             "--iterations", str(args.iterations)], env)
            t = re.search(r"torch ([0-9.]+) ms", ref.stdout)
            if ref.returncode != 0 or not t:
                print(ref.stdout + ref.stderr)
                return 1
            floor = subprocess.run(
                [args.floor_python, os.path.join(HERE, "moe_floor.py"),
                 "--experts-local", str(E // R),
                 "--rows", str(k * N * R // E if dropless else R * C),
                 "--hidden", str(H), "--width", str(Fw), "--threads",
                 str(threads), "--iterations", str(args.iterations)],
                capture_output=True, text=True)
            f = re.search(r"bmm ([0-9.]+) ms", floor.stdout)
            if floor.returncode != 0 or not f:
                print(floor.stdout + floor.stderr)
                return 1
            rows.append((name, R, threads, N, H, E, k, C, ours_ms,
                         float(t.group(1)), float(f.group(1))))
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f
                       if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    # The dispatch alone: a dropless moe_layer's rows (k * N a rank, spread
    # over E = 8 experts, and all to one) through the runtime's alltoallv,
    # beside MPI_Alltoall + MPI_Alltoallv by hand and a memcpy of the rows.
    bench = os.path.join(args.work, "alltoallv_bench")
    rt = os.path.join(os.path.dirname(os.path.dirname(args.coconetc)),
                      "runtime")
    subprocess.run(["mpicxx", "-std=c++17", "-O2", "-fopenmp",
                    "-I", os.path.join(ROOT, "runtime", "include"),
                    os.path.join(HERE, "alltoallv_bench.cpp"), "-o", bench,
                    os.path.join(rt, "libcoconet_rt_cpu.a"),
                    os.path.join(rt, "libcoconet_rt.a")], check=True)
    dispatch = []
    for R in ranks:
        for skew in (False, True):
            k, E = 2, 8
            M = k * args.tokens
            run = mpirun(R, [bench, str(M), str(args.hidden), str(E),
                             str(M * R), "5"] + (["skew"] if skew else []),
                         dict(os.environ, OMP_NUM_THREADS="1"))
            m = re.search(r"ours ([0-9.]+) ms team ([0-9.]+) ms hand "
                          r"([0-9.]+) ms copy ([0-9.]+) ms", run.stdout)
            if run.returncode != 0 or not m:
                print(run.stdout + run.stderr)
                return 1
            dispatch.append((R, M, skew) + tuple(float(g) for g in m.groups()))
    print(f"CPU: {cpu}, {cores} cores; ms per step (one rank's, ranks in "
          f"step); capacity factor 1.25")
    print("| layer | ranks x threads | N/rank | H | E | k | C | ours | torch "
          "| floor | ours/torch | ours/floor | torch/floor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (name, R, th, N, H, E, k, C, ours, torch_ms, bmm) in rows:
        print(f"| {name} | {R} x {th} | {N} | {H} | {E} | {k} | {C} | "
              f"{ours:.1f} | {torch_ms:.1f} | {bmm:.1f} | "
              f"{ours / torch_ms:.2f} | {ours / bmm:.2f} | "
              f"{torch_ms / bmm:.2f} |")
    print()
    print(f"The dispatch alone: f32 rows of {args.hidden}, E = 8 experts; ms, "
          "the median of 5")
    print("| ranks | rows/rank | routing | ours (MPI) | ours (one shot) | "
          "MPI by hand | memcpy of the rows | MPI ours/hand | one shot/hand "
          "| one shot/memcpy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (R, M, skew, ours, team, hand, copy) in dispatch:
        print(f"| {R} | {M} | {'all to expert 0' if skew else 'even'} | "
              f"{ours:.2f} | {team:.2f} | {hand:.2f} | {copy:.2f} | "
              f"{ours / hand:.2f} | {team / hand:.2f} | {team / copy:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
