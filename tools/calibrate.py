#!/usr/bin/env python3
"""Measures this machine for coconetc's cost model and writes a machine file
(docs/tuner.md explains every key).

    tools/calibrate.py --ranks 2 --threads 1 -o tools/machines/cpu-2x1.machine
        [--check-ranks 4] [--rounds 3] [--run-time 50] [--quick]

Everything is timed through code coconetc generates for the CPU target, run
by its driver on RANKS MPI ranks of THREADS OpenMP threads each, all ranks
at once (they share the memory bus, as they do in a step), with
tools/measure-cpu.sh; each run times its steps one by one (the driver's
--step-times) and a measurement is the fastest step of --rounds runs of at
least --run-time ms, as `coconetc tune --measure` times a schedule:

- memory-bandwidth, kernel-launch, cache SIZE bandwidth B: an elementwise
  kernel (z = update(y, y * 0.5 + x)) over N f32; the cache's bandwidth:
  the report's bytes over the time at sizes whose buffers on all ranks
  fill an eighth to a half of the last-level cache (sysfs); the launch:
  the time of 2^10..2^14 elements beyond their bytes at that bandwidth;
  the memory's: three sizes whose buffers are at least 3x the cache, their
  time less the launch and the share the model says the cache holds
  (cache / buffers) at its bandwidth, against the bytes it misses (a line
  through the origin); the cache's size: the one (in MiB) whose share fits
  the kernel's times best with buffers of 1/2, 3/4, 1 and 1.5x the named
  cache and the large sizes (a stream does not hit on all of the cache
  its buffers fill), the memory's line fitted again with it;
- write-allocate: the kernel writing a new buffer (z = y * 0.5 + x,
  returned) against the update at the large sizes: `yes` when it takes
  nearer 16/12 of the time (each new line read before it is written)
  than 1;
- matmul RATE per element type, matmul-pack: a [M, 2048] x [2048, 512]
  matmul at M = 512, 256, 128, 64 and 32: least squares of their times
  (each residual relative to its time) against the report's FLOPs (1 /
  RATE) and the elements of B packed (widened to f64 into panels once per
  block of rows a call hands a thread: row_blocks, the same number at
  each M here), the packing's time per element (f16's, the samples' type,
  is written);
- ordered-sum: the time per element of an in-order f64 running sum, one
  thread's chain of dependent adds: n = norm(x) over N = 2^22 f32 on each
  rank, less the launch, over N (a norm is one sum, one thread; the model
  takes the larger of a kernel's memory and compute times, and this one
  is compute-bound);
- libm-call: the time per math library call (z = gelu(x * 8), one erf an
  element over arguments that take every path of libm's erf, over N = 2^22
  f16, the activations' type; less the launch and its two roundings an
  element at `rounding`, over N / threads);
- rounding: the time per rounding to f16 (the exact target's integer
  operations on a float's bits): a chain of 9 operations,
  ((((x + y) * x + y) * x + y) * x + y) * x + y, over N = 2^22 f16 less the
  same over f32, over the report's roundings / THREADS;
- random-draw: the time per element of dropout's Philox draw: z =
  dropout(x, p, seed) over N = 2^22 f32, less the launch, over
  N / THREADS (compute-bound too);
- collective allreduce / reducescatter / allgather / sendrecv / alltoall
  `library` (the runtime's exact collectives on MPI), `oneshot`, `twoshot`
  (on the team's shared memory): one collective of 2^8 .. 2^24 f32 per
  rank; a least-squares fit of time = latency * steps(P) + volume(P, n) *
  (h / bandwidth + (1 - h) / beyond-cache) with the model's steps and
  volume for P = RANKS (CostModel.h) and h the share of the collective's
  buffers (the report's bytes read and written) the cache holds, as the
  model takes it for a step (a collective on shared memory moves its
  volume through the memory: in the cache, and beyond it, at rates apart
  by several times); where that fit has no positive solution, the line
  without beyond-cache (one bandwidth); the reducing ones (allreduce,
  reducescatter) again on f16, written as lines naming f16: each element
  is widened, added in f64 and rounded, so their time per byte depends on
  the element type;
- collective ... `direct` (a fused collective kernel's own transfers over
  the team's shared memory): a fused reducescatter + update + allgather
  kernel and a fused allreduce + update kernel at the same sizes, of f32
  and of f16 gradients; the time less the launch and its memory traffic
  (the share h of the model's footprint of the kernel the cache holds at
  the cache's bandwidth, the rest at the memory's) is fitted the same way,
  in and beyond the cache (the f16 reducescatter's line after the kernel's
  allgather of the f32 weights at the f32 line and the same h: an
  allgather copies bytes whatever their type, so it has no f16 line);
- overlap: a matmul overlapped with its allreduce in 4 parts against the
  two in sequence: `concurrent` when the overlap saves at least a third of
  the shorter of the two, else `alternating`;
- fused-collective: `shared` (on a CPU the team's transfers are memory
  traffic too).

--check-ranks R also times the collectives on R ranks and prints how far the
fitted model (made on RANKS) is from them, to say how it extrapolates. With
one rank there is nothing to fit for collectives: the file says so.
"""
import argparse
import datetime
import math
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def sh(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"calibrate: {' '.join(map(str, cmd))} failed:\n{p.stdout}")
    return p.stdout


class Bench:
    def __init__(self, args, work):
        self.args = args
        self.work = pathlib.Path(work)
        self.coconetc = pathlib.Path(args.coconetc)
        self.built = {}

    def source(self, name, text):
        path = self.work / f"{name}.coco"
        path.write_text(text)
        return path

    def driver(self, path, schedule=None, program=None):
        # One driver per program of a file and schedule (the unscheduled
        # programs of one file are different programs).
        key = (str(path), schedule, program)
        if key in self.built:
            return self.built[key]
        select = ["--schedule", schedule] if schedule else ["--program", program]
        tag = path.stem + (f"_{schedule}" if schedule else
                           f"_{program}" if program else "")
        out = self.work / tag
        sh([str(self.coconetc), "--emit=driver", "--target=cpu"] + select +
           ["-o", str(out), str(path)])
        name = next(out.glob("*_main.cpp")).name[:-len("_main.cpp")]
        self.built[key] = (out, name)
        return out, name

    def time(self, path, sizes, ranks, schedule=None, program=None,
             iterations=None):
        out, name = self.driver(path, schedule, program)
        size = ",".join(f"{k}={v}" for k, v in sizes.items())
        steps = iterations or self.args.iterations

        def run(steps):
            text = sh([str(ROOT / "tools" / "measure-cpu.sh"), str(out), name,
                       str(ranks), str(self.args.threads), str(steps),
                       "--size", size, "--step-times"])
            m = re.search(r"([0-9.]+) ms per step, fastest ([0-9.]+) ms", text)
            return float(m.group(1)) / 1000, float(m.group(2)) / 1000

        # Runs of at least --run-time ms (as coconetc tune --measure's): a
        # first run of the given steps says how many; it counts when no
        # more are needed.
        mean, fastest = run(steps)
        runs = [fastest]
        want = max(steps, math.ceil(self.args.run_time / 1000 /
                                    max(mean, 1e-9)))
        if want > steps:
            runs = []
        while len(runs) < self.args.rounds:
            runs.append(run(want)[1])
        # The fastest step, as `coconetc tune --measure` keeps: this VM's
        # noise only adds time, and slow phases come and go within a run.
        return min(runs)

    def report(self, path, sizes, ranks, schedule=None, program=None):
        select = ["--schedule", schedule] if schedule else ["--program", program]
        size = ",".join(f"{k}={v}" for k, v in sizes.items())
        return sh([str(self.coconetc), "--color=never", "--emit=report",
                   "--size", size, "--ranks", str(ranks)] + select +
                  [str(path)])


def total(report, row):
    m = re.search(rf"^\s+{row}\s+.*= (\d+)", report[report.index("total:"):],
                  re.M)
    return int(m.group(1)) if m else 0


def launches_row(report, row):
    """The sum of a row over the launches (rows the total does not repeat:
    drawn, libm, rounds)."""
    body = report[:report.index("total:")]
    return sum(int(m.group(1)) for m in
               re.finditer(rf"^\s+{row}\s+.*= (\d+)", body, re.M))


def fit_line(xs, ys):
    """Least squares y = a + b x; returns (a, b) (calibrate-gpu.py's lines)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx
    return my - b * mx, b


def row_blocks(batch, rows, cols, threads):
    """The blocks of rows the CPU target's matmul cuts one batch of a call
    into (each packs the batch's B again): runtime/src/cpu/matmul.cpp's
    tasks, as coconetc's cost model mirrors them (tune::matmulRowBlocks)."""
    k_rows, k_nc, k_mr = 768, 480, 8
    col_blocks = -(-cols // k_nc)
    blocks = -(-rows // k_rows)
    while batch * col_blocks * blocks < 2 * threads and blocks * k_mr < rows:
        blocks *= 2
    block = -(-(-(-rows // blocks)) // k_mr) * k_mr
    return -(-rows // block)


def fit_two(rows, scale=None):
    """Least squares t = latency * steps + volume / bandwidth through the
    origin, rows (steps, volume, t), each residual relative to its t (or to
    scale[i], when t is a part of a larger time), so that small messages,
    which show the latency, weigh as much as large ones; returns (latency,
    bandwidth), both kept positive."""
    w = [1 / ((scale[i] if scale else t) ** 2)
         for i, (s, v, t) in enumerate(rows)]
    s11 = sum(wi * s * s for wi, (s, v, t) in zip(w, rows))
    s12 = sum(wi * s * v for wi, (s, v, t) in zip(w, rows))
    s22 = sum(wi * v * v for wi, (s, v, t) in zip(w, rows))
    b1 = sum(wi * s * t for wi, (s, v, t) in zip(w, rows))
    b2 = sum(wi * v * t for wi, (s, v, t) in zip(w, rows))
    det = s11 * s22 - s12 * s12
    lat = (b1 * s22 - b2 * s12) / det
    inv = (s11 * b2 - s12 * b1) / det
    if lat < 0:  # bandwidth alone
        lat, inv = 0.0, b2 / s22
    if inv <= 0:  # latency alone: bandwidth unmeasurably high
        inv = 1e-15
        lat = b1 / s11
    return lat, 1 / inv


def fit_three(rows, scale=None):
    """Least squares t = latency * steps + hit / bandwidth + miss /
    beyond, rows (steps, hit, miss, t) with hit and miss the volume's
    shares in and beyond the cache, residuals relative to t (or to
    scale[i], as fit_two's); returns (latency, bandwidth, beyond), or None
    when a coefficient is not positive (no points beyond the cache, or
    noise)."""
    a = [[0.0] * 3 for _ in range(3)]
    b = [0.0] * 3
    for k, (s, hit, miss, t) in enumerate(rows):
        x = (s, hit, miss)
        w = 1 / (scale[k] if scale else t) ** 2
        for i in range(3):
            b[i] += w * x[i] * t
            for j in range(3):
                a[i][j] += w * x[i] * x[j]
    # Gaussian elimination with partial pivoting.
    for c in range(3):
        p = max(range(c, 3), key=lambda i: abs(a[i][c]))
        if abs(a[p][c]) < 1e-300:
            return None
        a[c], a[p] = a[p], a[c]
        b[c], b[p] = b[p], b[c]
        for i in range(c + 1, 3):
            f = a[i][c] / a[c][c]
            for j in range(c, 3):
                a[i][j] -= f * a[c][j]
            b[i] -= f * b[c]
    x = [0.0] * 3
    for i in (2, 1, 0):
        x[i] = (b[i] - sum(a[i][j] * x[j] for j in range(i + 1, 3))) / a[i][i]
    lat, inv_hit, inv_miss = x
    if lat < 0 or inv_hit <= 0 or inv_miss <= 0:
        return None
    return lat, 1 / inv_hit, 1 / inv_miss


def line_seconds(line, steps, volume, h):
    """A collective line's time, as CostModel.cpp's algorithmSeconds."""
    lat, bw, beyond = line
    per_byte = h / bw + (1 - h) / beyond if beyond else 1 / bw
    return lat * steps + volume * per_byte


def less_line(rest, line, steps, volume, h):
    """What is left of `rest` seconds after a part priced by a collective
    line with h the share of the step's buffers the cache holds."""
    return rest - line_seconds(line, steps, volume, h)


def fused_footprint(grad_bytes, n):
    """The model's footprint (CostModel.cpp: each buffer once, at the most
    of it a launch touches) of the calibration's fused kernels on one
    rank: its gradients, N elements of grad_bytes, and the f32 weights
    whole (updated in place, or gathered in place by the allgather)."""
    return (grad_bytes + 4) * n


def fit_direct(rows):
    """A fused kernel's transfers, rows (steps, volume, rest, total, h):
    fit_three of the rest with the volume's shares in and beyond the cache,
    residuals relative to the kernel's whole time (the rest is a part of
    it); one bandwidth where that has no positive solution. Returns
    (latency, bandwidth, beyond), beyond 0 for one bandwidth."""
    three = fit_three([(s, v * h, v * (1 - h), rest)
                       for s, v, rest, total, h in rows],
                      [total for _, _, _, total, _ in rows])
    if three:
        return three
    return (*fit_two([(s, v, rest) for s, v, rest, _, _ in rows],
                     [total for _, _, _, total, _ in rows]), 0.0)


def shape(collective, algorithm, p, n):
    """CostModel.cpp's algorithmShape for library, oneshot, twoshot and
    direct."""
    ring = (p - 1) / p * n
    if algorithm == "library":
        return {"allreduce": (2 * (p - 1), 2 * ring),
                "reducescatter": (p - 1, ring),
                "allgather": (p - 1, ring), "sendrecv": (1, n),
                "alltoall": (p - 1, ring)}[collective]
    if algorithm == "oneshot":
        return {"allreduce": (1, (p - 1) * n), "reducescatter": (1, ring),
                "allgather": (1, ring), "alltoall": (1, ring)}[collective]
    return {"allreduce": (2, 2 * ring), "reducescatter": (1, ring),
            "allgather": (1, ring)}[collective]


def cache_size():
    """The largest cache of CPU 0 (sysfs), in bytes; 32 MiB when unknown."""
    best = 0
    for index in pathlib.Path("/sys/devices/system/cpu/cpu0/cache").glob(
            "index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            best = max(best, int(digits) * scale)
    return best or 32 * 2 ** 20


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
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--check-ranks", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--run-time", type=float, default=50,
                    help="milliseconds each timed run lasts at least "
                         "(more steps than --iterations where a step is "
                         "short); default 50")
    ap.add_argument("--quick", action="store_true",
                    help="fewer sizes (a smoke run, not a calibration)")
    ap.add_argument("--coconetc", default=str(ROOT / "build" / "bin" /
                                              "coconetc"))
    ap.add_argument("--name")
    ap.add_argument("--csv", help="also write the collectives' measured "
                    "times and the fitted model's: "
                    "collective,algorithm,type,ranks,bytes,measured_s,model_s")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    r, t = args.ranks, args.threads
    name = args.name or f"cpu-{r}x{t}"
    notes = []
    lines = []

    with tempfile.TemporaryDirectory(prefix="coconet-calibrate-") as work:
        b = Bench(args, work)
        step = 4 if args.quick else 2

        # Memory bandwidth and launch; the cache's size and bandwidth;
        # whether stores allocate.
        bw = b.source("bw", """
program bw(x: f32[N] replicated, y: f32[N] replicated) {
    z = update(y, y * 0.5 + x);
}
program nw(x: f32[N] replicated, y: f32[N] replicated) {
    z = y * 0.5 + x;
    return z;
}
""")
        cache = cache_size()

        def bw_point(e, program="bw"):
            sizes = {"N": 2 ** e}
            rep = b.report(bw, sizes, r, program=program)
            return total(rep, "memory"), b.time(bw, sizes, r, program=program)

        # The launch: the three smallest kernels (2^10..2^14 elements).
        small = [bw_point(e) for e in (10, 12, 14)]
        # The cache: sizes whose buffers on all ranks fill an eighth to a
        # half of it (all hits).
        last = 10
        while 12 * 2 ** (last + 1) * r <= cache // 2:
            last += 1
        in_cache = [bw_point(e) for e in range(max(last - 2, 10), last + 1)]
        # The small kernels run from the cache too: their time beyond their
        # bytes at its bandwidth is the launch, and the cache's bandwidth
        # is the in-cache sizes' bytes over their time less the launch
        # (the median of each; twice, from a launch of 0).
        launch = 0.0
        for _ in range(2):
            cache_bandwidth = statistics.median(
                x / max(y - launch, 1e-9) for x, y in in_cache)
            launch = max(statistics.median(
                y - x / cache_bandwidth for x, y in small), 0.0)

        def hits(x, size=None):
            """The model's share of x bytes (a rank's, all of the step's
            buffers: the kernel reads x and y and updates y in place,
            and 2/3 of x are its buffers) a cache of `size` holds."""
            return min(1.0, (size or cache) / (x * 2 / 3 * r))

        # Memory: sizes whose buffers, on all of a node's ranks, are at
        # least 3x the cache (sizes that fit had thrown the fit, once to
        # 68.9 GB/s against 42); even there the cache holds a share (the
        # model's h): a line through their missed bytes against their time
        # less the launch and the hits' at the cache's bandwidth, through
        # the origin, its slope 1 / bandwidth.
        first = 10
        while 12 * 2 ** first * r < 3 * cache:
            first += 1
        big_exps = list(range(first, first + (2 if args.quick else 3)))
        big = [bw_point(e) for e in big_exps]
        # The cache's size as the kernels see it: sysfs names the
        # last-level cache, but a stream whose buffers fill it does not hit
        # on all of it (its replacement, other cores' and guests' lines: on
        # this VM's 32 MiB L3 the kernel ran at the cache's bandwidth up to
        # 16 MiB of buffers, at half of it at 24 and near the memory's at
        # 32). Buffers of a half, 3/4, 1 and 1.5x the named size; the size
        # whose share fits those times and the large ones best (log
        # error), a line of MiB from 1/8 of the named size to 1.5x; the
        # memory's line again with it, twice.
        named = cache
        middle = []
        for f in ((0.5, 1.5) if args.quick else (0.5, 0.75, 1.0, 1.5)):
            n = int(f * named / (8 * r)) // 1024 * 1024
            sizes = {"N": n}
            middle.append((total(b.report(bw, sizes, r, program="bw"),
                                 "memory"),
                           b.time(bw, sizes, r, program="bw")))

        def memory_line():
            xs = [x * (1 - hits(x)) for x, _ in big]
            ys = [y - launch - x * hits(x) / cache_bandwidth for x, y in big]
            return sum(x * x for x in xs) / sum(x * y for x, y in zip(xs, ys))

        def fit_error(size, bandwidth):
            err = 0.0
            for x, y in middle + big:
                h = hits(x, size)
                model = launch + x * (h / cache_bandwidth +
                                      (1 - h) / bandwidth)
                err += math.log(model / y) ** 2
            return err

        for _ in range(2):
            bandwidth = memory_line()
            cache = min((m * 2 ** 20 for m in range(
                max(named // 2 ** 23, 1), named * 3 // 2 ** 21 + 1)),
                key=lambda size: fit_error(size, bandwidth))
        bandwidth = memory_line()
        print("memory points (bytes a rank / time, the cache's share): " +
              ", ".join(f"2^{e} {x / y / 1e9:.1f} GB/s ({hits(x):.2f})"
                        for e, (x, y) in zip(big_exps, big)) +
              "; middle: " +
              ", ".join(f"{x / y / 1e9:.1f} GB/s ({hits(x):.2f})"
                        for x, y in middle), file=sys.stderr)
        # Write-allocate: the same kernel writing a new buffer (its lines
        # not read first) at the large sizes; the model with allocating
        # stores predicts 16/12 of the update's time, without 1.
        fresh = [bw_point(e, "nw") for e in big_exps]
        ratio = statistics.median(
            yn / yb for (_, yn), (_, yb) in zip(fresh, big))
        allocate = ratio > (1 + 16 / 12) / 2
        print(f"memory: {bandwidth / 1e9:.2f} GB/s per rank, launch "
              f"{launch * 1e6:.2f} us; cache {cache / 2 ** 20:g} MiB at "
              f"{cache_bandwidth / 1e9:.1f} GB/s per rank; a new result's "
              f"kernel {ratio:.2f}x the update's (write-allocate "
              f"{'yes' if allocate else 'no'})", file=sys.stderr)
        notes.append(f"memory-bandwidth: z = update(y, y * 0.5 + x) over N "
                     f"f32 (12*N bytes, 8*N of buffers) at N = "
                     f"2^{big_exps[0]}..2^{big_exps[-1]} (the buffers of all "
                     f"{r} ranks at least 3x the cache): the line through "
                     f"the bytes the cache misses (the model's share) "
                     f"against the time less the hits' at the cache's "
                     f"bandwidth")
        notes.append(f"cache: its size fitted to the same kernel's times "
                     f"with buffers of 1/2..1.5x the last-level cache "
                     f"(sysfs: {named // 2 ** 20} MiB) and the large "
                     f"sizes' (the model's share against the measured "
                     f"times, log error)")
        notes.append(f"cache bandwidth, kernel-launch: the same kernel at N = "
                     f"2^{max(last - 2, 10)}..2^{last} (an eighth to a half "
                     f"of it on all ranks), bytes over time less the "
                     f"launch, the median; the launch: the median of N = "
                     f"2^10, 2^12, 2^14's time beyond their bytes at the "
                     f"cache's bandwidth")
        notes.append(f"write-allocate: z = y * 0.5 + x into a new buffer at "
                     f"the large sizes took {ratio:.2f}x the update "
                     f"(allocating stores: 16/12)")

        # Matmul rate per element type, and the packing of B: t = FLOPs /
        # rate + blocks * K * N * pack (the CPU target widens B and packs
        # it into panels once per block of rows it hands a thread,
        # row_blocks); calls of the same K and N and rows M of 512 down to
        # 32 (the same blocks of rows at each: M = 1024 has two on one
        # thread) give both, a least-squares fit with each residual
        # relative to its time (fit_two), so that the small calls, where
        # the packing shows, weigh as much as the large ones (an unweighted
        # line's intercept moved the packing 2x between runs).
        rates, packs = {}, {}
        shape_k, shape_n = (512, 256) if args.quick else (2048, 512)
        rows_m = (256, 64) if args.quick else (512, 256, 128, 64, 32)
        for dtype in ("f16", "bf16", "f32", "f64"):
            mm = b.source(f"mm_{dtype}", f"""
program mm(a: {dtype}[M, K] replicated, c: {dtype}[K, N] replicated) {{
    y = matmul(a, c);
    return y;
}}
""")
            points = []
            for m in rows_m:
                sizes = {"M": m, "K": shape_k, "N": shape_n}
                rep = b.report(mm, sizes, r, program="mm")
                packed = row_blocks(1, m, shape_n, args.threads) * \
                    shape_k * shape_n
                points.append((packed, total(rep, "flops"),
                               b.time(mm, sizes, r, program="mm",
                                      iterations=3)))
            packs[dtype], rates[dtype] = fit_two(points)
            print(f"matmul {dtype}: {rates[dtype] / 1e9:.3f} GFLOP/s, "
                  f"packing {packs[dtype] * 1e9:.3f} ns an element of B",
                  file=sys.stderr)
        pack = packs["f16"]
        notes.append(f"matmul, matmul-pack: [M, {shape_k}] x [{shape_k}, "
                     f"{shape_n}] at M = " + ", ".join(map(str, rows_m)) +
                     f", least squares of their times (relative "
                     f"residuals) against the report's FLOPs (1 / rate) "
                     f"and the elements of B packed (once per block of "
                     f"rows a call hands a thread: "
                     f"{row_blocks(1, rows_m[0], shape_n, args.threads)} "
                     f"on {args.threads} threads); "
                     f"f16's packing, the samples' type, for all: " +
                     ", ".join(f"{d} {v * 1e9:.3f} ns"
                               for d, v in packs.items()) + ")")

        # The in-order f64 sum and the Philox draw, per element.
        n = 2 ** (20 if args.quick else 22)
        norm = b.source("norm", """
program norm(x: f32[N] replicated) {
    n = norm(x);
    return n;
}
""")
        # The model takes the larger of a kernel's memory and compute time:
        # both are the whole time less the launch (compute-bound: a norm's
        # 4 bytes an element take a fifth of its adds' time here).
        spent = b.time(norm, {"N": n}, r, program="norm") - launch
        ordered_sum = max(spent, 0.0) / n
        drop = b.source("drop", """
program drop(x: f32[N] replicated, p: f32, seed: u64) {
    z = dropout(x, p, seed);
    return z;
}
""")
        spent = b.time(drop, {"N": n}, r, program="drop") - launch
        random_draw = max(spent, 0.0) * t / n
        # A math library call: gelu (erf, the samples' activation). Its cost
        # depends on the argument: libm's erf takes a polynomial below
        # about 0.84, an exp-based path (two exp calls) up to 6 and a
        # constant beyond. The driver's inputs are uniform on [-1, 1), which
        # only reach the cheapest path (4.4 ns against 17.6 ns an element
        # on this VM); scaled by 8 they cross every path, as a matmul's
        # outputs do (the Megatron MLP's gelu reads sums of 512 products).
        # On f16, the activations' type in mixed precision: each element's
        # rounding around the call is scalar too (29 ns an element against
        # 18 for f32 here).
        libm = b.source("libm", """
program libm(x: f16[N] replicated) {
    z = gelu(x * 8.0);
    return z;
}
""")
        # A rounding to f16: the exact target's bit operations. The same
        # chain of 9 operations on f16 and on f32, the difference over the
        # f16 form's roundings (the report's count; the f16 loads' and
        # store's conversions fall in it too).
        chain = "((((x + y) * x + y) * x + y) * x + y) * x + y"
        rounded = {}
        for ty in ("f16", "f32"):
            src = b.source(f"round_{ty}", f"""
program round(x: {ty}[N] replicated, y: {ty}[N] replicated) {{
    z = {chain};
    return z;
}}
""")
            rounded[ty] = (src, b.time(src, {"N": n}, r, program="round"))
        roundings = launches_row(b.report(rounded["f16"][0], {"N": n}, r,
                                          program="round"), "rounds")
        rounding = max(rounded["f16"][1] - rounded["f32"][1], 0.0) * t / roundings
        # gelu(x * 8) on f16 rounds twice an element: those are priced by
        # rounding, the rest is the call's.
        spent = b.time(libm, {"N": n}, r, program="libm") - launch
        libm_roundings = launches_row(b.report(libm, {"N": n}, r,
                                               program="libm"), "rounds")
        libm_call = max(spent * t - libm_roundings * rounding, 0.0) / n
        print(f"ordered sum: {ordered_sum * 1e9:.3f} ns an element; random "
              f"draw: {random_draw * 1e9:.3f} ns; libm call: "
              f"{libm_call * 1e9:.3f} ns; rounding: {rounding * 1e9:.3f} ns",
              file=sys.stderr)
        notes.append(f"ordered-sum: n = norm(x) over N = 2^{n.bit_length() - 1} "
                     f"f32, less the launch, over N (one thread's chain of "
                     f"f64 adds; compute-bound)")
        notes.append(f"random-draw: z = dropout(x, p, seed) over N = "
                     f"2^{n.bit_length() - 1} f32, less the launch, over "
                     f"N / threads (compute-bound)")
        notes.append(f"libm-call: z = gelu(x * 8) over N = 2^{n.bit_length() - 1} "
                     f"f16 (x uniform on [-1, 1): every path of erf), less "
                     f"the launch and its 2 roundings an element at "
                     f"`rounding`, over N / threads (one erf an element; "
                     f"exp, tanh and the others priced alike)")
        notes.append(f"rounding: z = {chain} over N = 2^{n.bit_length() - 1} "
                     f"f16 less the same over f32, over the f16 form's 9 "
                     f"roundings an element / threads (its loads' and "
                     f"store's conversions counted in them)")

        collectives = {}
        checks = []
        table = []  # (collective, algorithm, rows) measured
        if r > 1:
            def reducing(tag, ty):
                """The reducing collectives' programs (names ending in tag)
                and their schedules, on elements of type ty."""
                g = "gs" if ty == "f32" else "f32(gs)"
                return f"""
program ar{tag}(x: {ty}[N] local) {{
    y = allreduce(sum, x);
    return y;
}}
program rs{tag}(x: {ty}[N] local) {{
    y = reducescatter(sum, x);
    return y;
}}
program fz{tag}(g: {ty}[N] local, w: f32[N] replicated) {{
    gs = allreduce(sum, g);
    w1 = update(w, w + {g});
}}
schedule ar{tag}_oneshot for ar{tag} {{
    algorithm(y, oneshot);
}}
schedule ar{tag}_twoshot for ar{tag} {{
    algorithm(y, twoshot);
}}
schedule rs{tag}_oneshot for rs{tag} {{
    algorithm(y, oneshot);
}}
schedule fz{tag}_ar for fz{tag} {{
    fuse(gs, w1);
}}
schedule fz{tag}_rs_ag for fz{tag} {{
    (rs, ag) = split(gs);
    reorder(ag, w1);
    fuse(rs, w1, ag);
}}
"""
            coll = b.source("coll", reducing("", "f32") +
                            reducing("16", "f16") + """
program ag(x: f32[N] sliced) {
    y = allgather(x);
    return y;
}
program sr(x: f32[N] replicated) {
    y = sendrecv(x, 1);
    return y;
}
program aa(x: f32[R, N] sliced(1)) {
    y = alltoall(x, dim=0);
    return y;
}
schedule ag_oneshot for ag {
    algorithm(y, oneshot);
}
schedule aa_oneshot for aa {
    algorithm(y, oneshot);
}
""")
            # The collectives' sizes reach beyond the cache (its share of
            # their buffers a quarter or less at 2^24).
            coll_exps = range(8, 25, step)

            # (collective, algorithm, element type, program, schedule): the
            # library's collectives and the team's one- and two-shot ones
            # (the schedule's `algorithm`), on f32 (the untyped lines) and
            # the reducing ones on f16 too: the exact reductions widen,
            # add in f64 and round each element, so an f16 one costs more
            # per byte (the machine file's typed lines).
            runs = [("allreduce", "library", None, "ar", None),
                    ("reducescatter", "library", None, "rs", None),
                    ("allgather", "library", None, "ag", None),
                    ("sendrecv", "library", None, "sr", None),
                    ("alltoall", "library", None, "aa", None),
                    ("allreduce", "oneshot", None, "ar", "ar_oneshot"),
                    ("allreduce", "twoshot", None, "ar", "ar_twoshot"),
                    ("reducescatter", "oneshot", None, "rs", "rs_oneshot"),
                    ("allgather", "oneshot", None, "ag", "ag_oneshot"),
                    ("alltoall", "oneshot", None, "aa", "aa_oneshot"),
                    ("allreduce", "library", "f16", "ar16", None),
                    ("reducescatter", "library", "f16", "rs16", None),
                    ("allreduce", "oneshot", "f16", "ar16", "ar16_oneshot"),
                    ("allreduce", "twoshot", "f16", "ar16", "ar16_twoshot"),
                    ("reducescatter", "oneshot", "f16", "rs16",
                     "rs16_oneshot")]
            size_of = {None: 4, "f16": 2}

            sharing_of = lambda ranks: min(ranks, max(r, os.cpu_count() or 1))

            def measure(ranks, which):
                rows = {}
                for e in coll_exps:
                    n = 2 ** e * ranks  # divisible by the ranks
                    for c, a, ty, prog, sched in runs:
                        if (c, a, ty) not in which:
                            continue
                        # aa: [R, N] with R = the ranks, a rank's block
                        # n elements as the others'.
                        sizes = {"N": n, "R": ranks} if prog == "aa" \
                            else {"N": n}
                        sec = b.time(coll, sizes, ranks, program=prog,
                                     schedule=sched)
                        # The share of its buffers the cache holds, as the
                        # model's step footprint: what it reads and writes.
                        rep = b.report(coll, sizes, ranks, program=prog,
                                       schedule=sched)
                        buffers = total(rep, "read") + total(rep, "write")
                        h = min(1.0, cache / (buffers * sharing_of(ranks)))
                        # n: a rank's input bytes (its output for allgather).
                        nb = size_of[ty] * n
                        rows.setdefault((c, a, ty), []).append(
                            (*shape(c, a, ranks, nb), sec, nb, h))
                return rows

            everything = [(c, a, ty) for c, a, ty, _, _ in runs]
            measured = measure(r, everything)
            for (c, a, ty), rows in measured.items():
                three = fit_three([(s, v * h, v * (1 - h), sec)
                                   for s, v, sec, _, h in rows])
                if three:
                    collectives[(c, a, ty)] = three
                else:
                    collectives[(c, a, ty)] = (
                        *fit_two([(s, v, sec) for s, v, sec, _, _ in rows]),
                        0.0)
                lat, bwc, beyond = collectives[(c, a, ty)]
                print(f"{c} {a} {ty or 'f32'}: latency {lat * 1e6:.2f} "
                      f"us/step, {bwc / 1e9:.2f} GB/s"
                      + (f", beyond the cache {beyond / 1e9:.2f} GB/s"
                         if beyond else ", one bandwidth (no positive "
                         "fit beyond the cache)"), file=sys.stderr)
                table.append((c, a, ty, rows))
            # Direct: fused kernels, less launch and memory; on f32 and f16
            # gradients (f32: the allgather of an rs + ag kernel shares the
            # reducescatter's fit; f16: the reducescatter's alone, less the
            # allgather of the f32 weights at the f32 line). At the
            # collectives' sizes, beyond the cache, fitted as they are.
            for ty, fz in ((None, "fz"), ("f16", "fz16")):
                direct_rows = {"allreduce": [], "rs+ag": []}
                for e in coll_exps:
                    n = 2 ** e * r
                    for sched, key in ((f"{fz}_ar", "allreduce"),
                                       (f"{fz}_rs_ag", "rs+ag")):
                        rep = b.report(coll, {"N": n}, r, schedule=sched)
                        memory = total(rep, "memory")
                        sec = b.time(coll, {"N": n}, r, schedule=sched)
                        # What the transfers add to the launch and the
                        # memory traffic (negative where caches beat the
                        # bandwidth).
                        # As the model prices it: the share of the
                        # step's buffers the cache holds at its bandwidth,
                        # the rest at the memory's, and the transfers' too.
                        h = min(1.0, cache / (fused_footprint(
                            size_of[ty], n) * sharing_of(r)))
                        rest = sec - launch - memory * (
                            h / cache_bandwidth + (1 - h) / bandwidth)
                        nb = size_of[ty] * n
                        if key == "allreduce":
                            s, v = shape("allreduce", "direct", r, nb)
                        else:
                            s1, v1 = shape("reducescatter", "direct", r, nb)
                            # The allgather moves the f32 weights.
                            s2, v2 = shape("allgather", "direct", r, 4 * n)
                            if ty is None:
                                s, v = s1 + s2, v1 + v2
                            else:
                                # f16 gradients: the reducescatter's part,
                                # the allgather's at the f32 line (a copy
                                # costs its bytes, whatever their type).
                                s, v = s1, v1
                                rest = less_line(
                                    rest, collectives[("allgather", "direct",
                                                       None)], s2, v2, h)
                        direct_rows[key].append((s, v, rest, sec, h))
                for key, c in (("allreduce", "allreduce"),
                               ("rs+ag", "reducescatter")):
                    collectives[(c, "direct", ty)] = fit_direct(
                        direct_rows[key])
                if ty is None:
                    collectives[("allgather", "direct", ty)] = collectives[
                        ("reducescatter", "direct", ty)]
                for k in (("allreduce", "direct", ty),
                          ("reducescatter", "direct", ty)):
                    lat, bwd, beyond = collectives[k]
                    print(f"{k[0]} direct {ty or 'f32'}: latency "
                          f"{lat * 1e6:.2f} us/step, {bwd / 1e9:.2f} GB/s"
                          + (f", beyond the cache {beyond / 1e9:.2f} GB/s"
                             if beyond else ", one bandwidth"),
                          file=sys.stderr)
            notes.append(f"collective ... library, oneshot, twoshot: one "
                         f"allreduce, reducescatter, allgather (and sendrecv, "
                         f"alltoall) "
                         f"of 2^8..2^{coll_exps[-1]} "
                         f"f32 per rank (the one- and two-shot ones by a "
                         f"schedule's algorithm(y, NAME)), least squares of "
                         f"time = latency * steps + volume * (h / bandwidth "
                         f"+ (1 - h) / beyond-cache), h the share of its "
                         f"buffers the cache holds (the model's), "
                         f"relative residuals, with the model's steps and "
                         f"volume of each algorithm (one bandwidth where "
                         f"that fit has no positive solution); the lines "
                         f"naming f16: the reducing ones on f16 elements, "
                         f"fitted alike")
            notes.append("collective ... direct: fused allreduce + update "
                         "and reducescatter + update + allgather kernels at "
                         "the same sizes (f32 gradients; f16 for the f16 "
                         "lines), less the launch and their memory "
                         "traffic priced as the model does, fitted the "
                         "same way, h the share of the kernel's footprint "
                         "(gradients and whole weights) the cache holds "
                         "(f32: reducescatter and allgather share one "
                         "fit; f16: the reducescatter's, less the allgather "
                         "of the f32 weights at the f32 line: an allgather "
                         "copies bytes, whatever their type, so no f16 "
                         "allgather line)")
            if args.check_ranks:
                other = measure(args.check_ranks,
                                [k for k in everything if k[2] is None])
                for (c, a, ty), rows in other.items():
                    errs = []
                    for s, v, sec, nb, h in rows:
                        pred = line_seconds(collectives[(c, a, ty)], s, v, h)
                        errs.append(abs(pred - sec) / sec)
                    checks.append(f"{c} {a} on {args.check_ranks} ranks: the "
                                  f"{r}-rank fit is off by a median "
                                  f"{100 * statistics.median(errs):.0f}% "
                                  f"(max {100 * max(errs):.0f}%)")
                    print(checks[-1], file=sys.stderr)

            # Overlap: concurrent or alternating.
            ov = b.source("ov", """
program ov(x: f32[B, H] sliced(1), w: f32[H, H] sliced(0)) {
    y  = matmul(x, w);
    ys = allreduce(sum, y);
    return ys;
}
schedule parts for ov {
    overlap(y, ys) chunks 4;
}
""")
            mmonly = b.source("mmonly", """
program mmonly(x: f32[B, H] sliced(1), w: f32[H, H] sliced(0)) {
    y = matmul(x, w);
    return y;
}
""")
            sizes = {"B": 256, "H": 256}
            plain = b.time(ov, sizes, r, program="ov", iterations=3)
            parts = b.time(ov, sizes, r, schedule="parts", iterations=3)
            mm_alone = b.time(mmonly, sizes, r, program="mmonly",
                              iterations=3)
            comm = plain - mm_alone
            saved = plain - parts
            concurrent = comm > 0 and saved >= min(mm_alone, comm) / 3
            notes.append(f"overlap: a [256, 256] matmul and its allreduce: "
                         f"{plain * 1e3:.2f} ms in sequence, "
                         f"{parts * 1e3:.2f} ms overlapped in 4 parts "
                         f"(saves {saved * 1e3:.2f} ms of the "
                         f"{max(comm, 0) * 1e3:.2f} ms the collective "
                         f"takes): "
                         f"{'concurrent' if concurrent else 'alternating'}")
            print(notes[-1], file=sys.stderr)
        else:
            concurrent = False
            notes.append("one rank: no collective moves data (the model "
                         "prices a collective of one member at 0), so none "
                         "is stated; overlap alternating")

    if args.csv and table:
        with open(args.csv, "w") as f:
            f.write("collective,algorithm,type,ranks,bytes,measured_s,"
                    "model_s\n")
            for c, a, ty, rows in table:
                for st, v, sec, nb, h in rows:
                    model = line_seconds(collectives[(c, a, ty)], st, v, h)
                    f.write(f"{c},{a},{ty or 'f32'},{r},{nb},{sec:.9g},"
                            f"{model:.9g}\n")
    out = pathlib.Path(args.output)
    with out.open("w") as f:
        f.write(f"# Measured by tools/calibrate.py --ranks {r} --threads {t} "
                f"on {datetime.date.today()}:\n")
        f.write(f"# {cpu_name()}, {os.cpu_count()} cores, "
                f"{platform.machine()}; {r} ranks x {t} threads.\n")
        for n in notes:
            f.write("# " + n + ".\n")
        for c in checks:
            f.write("# check: " + c + ".\n")
        f.write(f"machine {name}\ntarget cpu\n")
        f.write(f"ranks-per-node {max(r, os.cpu_count() or 1)}\n")
        f.write(f"threads-per-rank {t}\n")
        f.write(f"kernel-launch {launch * 1e6:.3g} us\n")
        f.write(f"memory-bandwidth {bandwidth / 1e9:.4g} GB/s\n")
        f.write(f"write-allocate {'yes' if allocate else 'no'}\n")
        f.write(f"cache {cache // 2 ** 20} MiB bandwidth "
                f"{cache_bandwidth / 1e9:.4g} GB/s\n")
        for dtype, rate in rates.items():
            f.write(f"matmul {dtype} {rate / 1e9:.4g} GFLOP/s\n")
        f.write(f"matmul-pack {pack * 1e9:.4g} ns\n")
        f.write(f"ordered-sum {ordered_sum * 1e9:.4g} ns\n")
        f.write(f"random-draw {random_draw * 1e9:.4g} ns\n")
        f.write(f"libm-call {libm_call * 1e9:.4g} ns\n")
        f.write(f"rounding {rounding * 1e9:.4g} ns\n")
        f.write("fused-collective shared\n")
        f.write(f"overlap {'concurrent' if concurrent else 'alternating'}\n")
        for (c, a, ty), (lat, bwc, beyond) in sorted(
                collectives.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                     kv[0][2] or "")):
            typed = f" {ty}" if ty else ""
            tail = (f" beyond-cache {beyond / 1e9:.4g} GB/s" if beyond
                    else "")
            f.write(f"collective {c} {a} node{typed} latency "
                    f"{lat * 1e6:.4g} us bandwidth {bwc / 1e9:.4g} GB/s"
                    f"{tail}\n")
    print(f"calibrate: wrote {out}", file=sys.stderr)
    # The file must read back.
    sh([str(args.coconetc), "tune", "--machine", str(out), "--size", "N=1024",
        "--ranks", str(r), str(ROOT / "samples" / "sgd.coco"), "-o",
        os.devnull])


if __name__ == "__main__":
    main()
