"""Checks of tools/calibrate.py's fits (calibrate-fit.test)."""
import importlib.util
import pathlib
import random
import sys

tools = pathlib.Path(sys.argv[1])
spec = importlib.util.spec_from_file_location("calibrate",
                                              tools / "calibrate.py")
c = importlib.util.module_from_spec(spec)
spec.loader.exec_module(c)

LAT, BW, BEYOND = 2e-6, 10e9, 2.5e9


def points(hs, noise=0.0):
    rng = random.Random(7)
    rows = []
    for e in range(8, 25):
        v = 4.0 * 2 ** e
        for h in hs(e):
            t = LAT * 1 + v * (h / BW + (1 - h) / BEYOND)
            rows.append((1, v * h, v * (1 - h),
                         t * (1 + rng.uniform(-noise, noise))))
    return rows


def show(fit):
    if fit is None:
        return "None"
    lat, bw, beyond = fit
    return (f"latency {lat * 1e6:.2f} us, {bw / 1e9:.2f} GB/s, "
            f"beyond {beyond / 1e9:.2f} GB/s")


# h falls from 1 to a quarter above 2^20 elements, as a cache's share.
share = lambda e: [min(1.0, 2 ** 20 / 2 ** e * 2)]
print("fit_three:", show(c.fit_three(points(share))))
print("fit_three in the cache only:",
      show(c.fit_three(points(lambda e: [1.0]))))
print("fit_three, noise of +-1%:", show(c.fit_three(points(share, 0.01))))

line = (1e-6, 1e9, 0.5e9)
print("line_seconds: " + ", ".join(
    f"{c.line_seconds(line, 2, 5e3, h) * 1e6:.4f} us at h={h:g}"
    for h in (1, 0.5, 0)) +
    f", {c.line_seconds((1e-6, 1e9, 0.0), 2, 3e3, 0) * 1e6:.4f} us one "
    "bandwidth")

rows = [(s, v, 3e-6 * s + v / 4e9) for s, v in ((1, 1e3), (2, 1e5), (1, 1e7))]
lat, bw = c.fit_two(rows)
print(f"fit_two: latency {lat * 1e6:.2f} us, {bw / 1e9:.2f} GB/s")

# (batch, rows, cols, threads): one block; halved while fewer than two
# tasks a thread (2, 4, 8 blocks); 768-row blocks; a single micro-tile.
cases = [(1, 512, 2048, 1), (1, 512, 480, 1), (1, 512, 480, 2),
         (1, 512, 480, 4), (1, 2304, 4096, 1), (1, 8, 480, 8)]
print("row_blocks:", " ".join(str(c.row_blocks(*k)) for k in cases))

# A fused kernel's f16 reducescatter: its time less the allgather's part
# at the f32 line (1 us a step + 4000 B at 1 GB/s): 10 - 1 - 4 = 5 us;
# with a line beyond the cache at 0.5 GB/s and h = 1/4: 1000 B at 1 GB/s
# and 3000 at 0.5: 10 - 1 - 1 - 6 = 2 us.
print(f"less_line: {c.less_line(10e-6, (1e-6, 1e9, 0.0), 1, 4000, 0.25) * 1e6:.2f} us, "
      f"{c.less_line(10e-6, (1e-6, 1e9, 0.5e9), 1, 4000, 0.25) * 1e6:.2f} us")

# fit_direct: a fused kernel's transfers (the rest of its time) with the
# kernel's whole time as the residuals' scale; the line of the points
# above comes back. Points only in the cache: one bandwidth (beyond 0).
rows = [(s, hit + miss, t, 3 * t, hit / (hit + miss))
        for s, hit, miss, t in points(share)]
print("fit_direct:", show(c.fit_direct(rows)))
lat, bw, beyond = c.fit_direct([(s, hit + miss, t, 3 * t, 1.0)
                                for s, hit, miss, t in points(lambda e: [1.0])])
print(f"fit_direct in the cache: latency {lat * 1e6:.2f} us, "
      f"{bw / 1e9:.2f} GB/s, beyond {beyond:g}")
# The model's footprint of the fused kernels: f16 gradients and f32
# weights, 2^20 and 2^22 elements: 6 and 24 MiB (the report's, in
# calibrate-fit.test).
print(f"fused_footprint: {c.fused_footprint(2, 2 ** 20) / 2 ** 20:g} MiB, "
      f"{c.fused_footprint(2, 2 ** 22) / 2 ** 20:g} MiB")
