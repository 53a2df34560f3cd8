#!/usr/bin/env python3
"""Proves that the hot loops of the generated CPU code vectorise.

    check_vectorized.py --coconetc BIN --runtime-include DIR
        --runtime-lib DIR --work DIR [--build-cache DIR] [--jobs J]
        FILE.coco|DIR...

Every (program, schedule) of the given files -- the unscheduled program
included -- is emitted with --target=cpu --emit=driver and built as
run_codegen.py's CPU tests build it (mpicxx, g++ with OpenMP and the flags
of tools/cpu-flags.txt, the build rule's; the runtime's and the standard
headers precompiled), which writes GCC's -fopt-info-vec-optimized-missed
remarks on the program's file to NAME.cpp.vec. With --build-cache, the
cache the codegen-cpu tests fill (CTest runs this test after them), an
identical build is not redone: its binary and remarks are copied. Every
loop the
generator marks `#pragma omp simd` (the element loop of an elementwise
kernel's tile) must be reported as vectorised within its lines; a kernel
whose loop is not fails the check with GCC's reasons (its "missed"
remarks for those lines).

The element loop is the only loop the generator marks: a reduction and a
norm accumulate in the simulator's order, one element after another (their
bits depend on it), so they are not expected to vectorise and are not
checked here.

Exit status 0 when every marked loop is vectorised, 1 otherwise, 77
(skipped) when mpicxx is missing.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_codegen import (VEC_REPORT, build_cached,  # noqa: E402
                         cases, cpu_command, expand, run, selector)

SIMD = re.compile(r"^\s*#pragma omp simd\b")
# The C library's functions (and the formulas that call them): exp, log,
# tanh, erf and pow are the platform's, the simulator's too, so that the
# results agree bit for bit; they have no vector form with the same bits
# (libmvec's differ), so a loop that calls one stays scalar.
LIBM = re.compile(r"std::(exp|log|tanh|erf|pow)\(|"
                  r"coconet::rt::ops::(gelu|silu|sigmoid)\(")
LIBM_OF = {"gelu": "erf", "silu": "exp", "sigmoid": "exp"}
ITEM_LOOP = re.compile(r"^\s*for \(int64_t cc_i = 0; cc_i < cc_g\.n; ")
KERNEL = re.compile(r"^void (cc_\w+)\(")


def element_loops(source):
    """Kernels whose elementwise loop runs element by element (not in
    tiles): an input read at a computed index (a broadcast)."""
    out, kernel = [], "?"
    for text in source.splitlines():
        m = KERNEL.match(text)
        if m:
            kernel = m.group(1)
        if ITEM_LOOP.match(text):
            out.append(kernel)
    return out


def marked_loops(source):
    """(first line, last line, kernel name) of every loop marked omp simd:
    from its `for` to the brace that closes it (GCC places its remark for
    an omp simd loop on a line of the body)."""
    loops, kernel = [], "?"
    lines = source.splitlines()
    for i, text in enumerate(lines, start=1):
        m = KERNEL.match(text)
        if m:
            kernel = m.group(1)
        if not SIMD.match(text):
            continue
        indent = len(text) - len(text.lstrip())
        last = i + 1
        while last < len(lines) and not (
                lines[last].startswith(" " * indent + "}") and
                len(lines[last]) - len(lines[last].lstrip()) == indent):
            last += 1
        loops.append((i + 1, last + 1, kernel))
    return loops


def check(args, path, program, schedule):
    """Returns (report lines, failures, loops checked) of one case."""
    name = program + ("_" + schedule if schedule else "")
    title = f"{os.path.basename(path)}: {name}"
    out_dir = os.path.join(args.work, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    ok, out = run([args.coconetc, "--color=never", "--emit=driver",
                   "--target=cpu", "-o", out_dir, path] +
                  selector(program, schedule))
    if not ok:
        return [f"FAILED: {title}: coconetc:\n{out}"], 1, 0
    source_path = os.path.join(out_dir, name + ".cpp")
    with open(source_path) as f:
        source = f.read()
    source_lines = source.splitlines()
    loops = marked_loops(source)
    untiled = element_loops(source)
    note = (f"; not tiled (element by element): {', '.join(untiled)}"
            if untiled else "")
    if not loops:
        return [f"ok: {title}: no tiled loops{note}"], 0, 0
    ok, out = build_cached(args, cpu_command(args, name), out_dir, name,
                           [name + VEC_REPORT])
    if not ok:
        return [f"FAILED: {title}: mpicxx:\n{out}"], 1, 0
    with open(os.path.join(out_dir, name + VEC_REPORT)) as f:
        out = f.read()
    vectorised = set()
    copies = set()
    missed = {}
    for text in out.splitlines():
        m = re.match(re.escape(name) + r"\.cpp:(\d+):\d+: (\w+): (.*)", text)
        if not m:
            continue
        line = int(m.group(1))
        if m.group(2) == "optimized" and "loop vectorized" in m.group(3):
            vectorised.add(line)
        elif m.group(2) == "missed":
            missed.setdefault(line, []).append(m.group(3))
            # A loop that only copies becomes a call of memcpy, one that
            # only stores a constant (`c: i32[N] = -1;`) one of memset
            # (GCC's loop distribution): as fast as a vector loop.
            if re.search(r"__builtin_mem(cpy|move|set) \(", m.group(3)):
                copies.add(line)
    report, failures = [], 0
    scalar = 0
    for first, last, kernel in loops:
        lines = range(first, last + 1)
        remarks = [r for ln in lines for r in missed.get(ln, [])]
        if any(ln in vectorised for ln in lines):
            continue
        if any(ln in copies for ln in lines) and not any(
                "couldn't vectorize" in r for r in remarks):
            continue
        libm = LIBM.search("\n".join(source_lines[first - 1:last]))
        if libm:
            scalar += 1
            fn = libm.group(1) or LIBM_OF[libm.group(2)]
            via = f" (through {libm.group(2)})" if libm.group(2) else ""
            report.append(f"scalar: {title}: the element loop of {kernel} "
                          f"calls the C library's {fn}{via}, which has no "
                          f"vector form with the same bits")
            continue
        failures += 1
        why = "; ".join(dict.fromkeys(remarks)) or "no remark"
        report.append(f"FAILED: {title}: the element loop of {kernel} "
                      f"({name}.cpp:{first}) is not vectorised: {why}")
    if not failures:
        report.append(f"ok: {title}: {len(loops) - scalar} of {len(loops)} "
                      f"tiled loop(s) vectorised{note}")
    return report, failures, len(loops)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--coconetc", required=True)
    p.add_argument("--runtime-include", required=True)
    p.add_argument("--runtime-lib", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--build-cache", default="",
                   help="run_codegen.py's cache of built programs "
                        "(default: WORK/build-cache)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("files", nargs="+")
    args = p.parse_args()
    args.runtime_include = os.path.abspath(args.runtime_include)
    args.runtime_lib = os.path.abspath(args.runtime_lib)
    args.work = os.path.abspath(args.work)
    args.build_cache = os.path.abspath(
        args.build_cache or os.path.join(args.work, "build-cache"))
    args.precompiled_prelude = True
    if shutil.which("mpicxx") is None:
        print("skipped: mpicxx is missing")
        return 77
    todo = []
    for path in expand(args.files):
        stem = os.path.splitext(os.path.basename(path))[0]
        for program, schedule in cases(args.coconetc, path):
            todo.append((path, program, schedule, stem))

    def one(item):
        path, program, schedule, stem = item
        local = argparse.Namespace(**vars(args))
        local.work = os.path.join(args.work, stem)
        return check(local, path, program, schedule)

    failures = loops = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for report, failed, checked in pool.map(one, todo):
            for line in report:
                print(line)
            failures += failed
            loops += checked
    print(f"{loops} tiled loops in {len(todo)} (program, schedule) "
          f"cases; {failures} not vectorised")
    return 1 if failures or loops == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
