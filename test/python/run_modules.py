#!/usr/bin/env python3
"""Every program and schedule of the given .coco files as a Python module
(coconetc --emit=python, built as `python3 -m coconet build` builds it),
called from Python with NumPy arrays and with PyTorch tensors on each rank
count, against the simulator bit for bit (docs/python.md, docs/testing.md).

For each module and rank count this script draws the global inputs
(seeded: values whose sums of a few terms are exact, f16 ones rounded
first, segment tables with empty segments), writes them as .npy, runs
`coconetc sim --input ... --output-dir` for the expected results, and
then runs modules_rank.py under `mpirun -np R` once per rank count: every
rank imports every module, passes its own block of every input, and
compares its block of every result with the simulator's.

  run_modules.py --coconetc BIN --python-dir BUILD/python --work DIR
                 [--ranks 1,2,4] [--frameworks numpy,torch] [--jobs 2]
                 FILE.coco...

--target cuda-emu: the CUDA target's modules instead, built for the CPU
emulation of CUDA (test/emu/README.md; a testing aid, so built here and
not by `python3 -m coconet build`): coconetc --emit=python --target=cuda,
then the generated NAME.cu and NAME_python.cu compiled by g++ with the
emulation's prelude into _NAME.so, whose description says "cuda-emulated"
(host arrays stand in for device memory). The emulated CUDA runtime, NCCL
and cuBLAS are one shared library for the process (WORK/emu/
libcoconet_emu.so, as libcudart and libnccl are), the CUDA runtime library
linked into each module as `coconet build` links it. Every rank makes its
NCCL communicators with coconet.NcclCommunicator (over MPI, and from a
unique id it shares itself), runs each step and waits for its stream
(Step.synchronize) before comparing. Options: --emu-lib (the build's
test/emu, with libcoconet_emu.a and libcoconet_rt_cuda_emu.a, built
position-independent), --runtime-lib and --runtime-include (default: the
coconet package's), --emu-include, --cuda-include, as run_codegen.py
takes them.

Exit status 0 when every module matched; 1 otherwise, with the failures.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# The code generators' test driver: its way of running a command, listing a
# file's programs and schedules, and factoring a rank count over a mesh.
sys.path.insert(0, os.path.join(HERE, "..", "codegen"))
from run_codegen import (PRELUDE, cases, factorisations,  # noqa: E402
                         prelude_pch, run)


def mpi_flags():
    """mpicxx's compile and link flags."""
    def show(what):
        return subprocess.run(["mpicxx", "--showme:" + what], text=True,
                              stdout=subprocess.PIPE, check=True).stdout.split()
    return show("compile"), show("link")


def emu_runtime(args):
    """The emulated CUDA runtime, NCCL and cuBLAS as one shared library
    (WORK/emu/libcoconet_emu.so), built once: every module of a process
    then shares one emulated device, its streams and its communicators, as
    a process shares libcudart and libnccl. Returns (ok, output)."""
    out_dir = os.path.join(args.work, "emu")
    os.makedirs(out_dir, exist_ok=True)
    lib = os.path.join(out_dir, "libcoconet_emu.so")
    cmd = (["g++", "-shared", "-fPIC", "-o", lib, "-Wl,--whole-archive",
            os.path.join(args.emu_lib, "libcoconet_emu.a"),
            "-Wl,--no-whole-archive",
            os.path.join(args.runtime_lib, "libcoconet_rt_cpu.a"),
            os.path.join(args.runtime_lib, "libcoconet_rt.a"),
            "-lboost_context", "-fopenmp", "-pthread"] + args.mpi[1]
           + ["-Wl,--no-undefined"])
    args.emu_so = lib
    ok, out = run(cmd)
    return ok, " ".join(cmd) + "\n" + out


def emu_compile(args, out_dir, name):
    """g++ on NAME.cu and NAME_python.cu with the emulation's prelude, as
    run_codegen.py's emu_command compiles a program, into a module library
    as `coconet build` links one: hidden symbols, the CUDA runtime library
    (built for the emulation) static, the emulation shared. The prelude
    comes precompiled (run_codegen.prelude_pch, under WORK/pch), as it
    does for run_codegen.py's builds (this test 30 -> 25 s)."""
    flags = (["-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden",
              "-ffp-contract=off", "-Wno-attributes", "-Wno-unknown-pragmas",
              "-DCOCONET_WITH_MPI", "-I" + args.emu_include,
              "-I" + args.runtime_include, "-I" + args.cuda_include]
             + args.mpi[0] + ["-fopenmp", "-pthread"])
    return (["g++"] + prelude_pch(args, flags) + flags
            + ["-shared", "-x", "c++", "-include", PRELUDE, "-I" + out_dir]
            + [os.path.join(out_dir, name + ".cu"),
               os.path.join(out_dir, name + "_python.cu"), "-x", "none",
               os.path.join(args.emu_lib, "libcoconet_rt_cuda_emu.a"),
               os.path.join(args.runtime_lib, "libcoconet_rt.a"),
               args.emu_so, "-Wl,-rpath," + os.path.dirname(args.emu_so),
               "-fopenmp", "-pthread"] + args.mpi[1]
            + ["-Wl,--no-undefined", "-Wl,--exclude-libs,ALL",
               "-o", os.path.join(out_dir, "_" + name + ".so")])


def build(args, path, program, schedule, out_dir):
    """coconetc --emit=python and `python3 -m coconet build`'s compile (or,
    for cuda-emu, the emulation's); returns (ok, output, module name)."""
    os.makedirs(out_dir, exist_ok=True)
    select = ["--program", program] + (["--schedule", schedule]
                                       if schedule else [])
    name = program + (f"_{schedule}" if schedule else "")
    if args.target == "cuda-emu":
        ok, out = run([args.coconetc, "--emit=python", "--target=cuda",
                       "-o", out_dir] + select + [path])
        if ok:
            cmd = emu_compile(args, out_dir, name)
            ok, out = run(cmd)
            out = " ".join(cmd) + "\n" + out
        return ok, out, name
    cmd = [args.python, "-m", "coconet", "build", path, "--target", "cpu",
           "-o", out_dir] + select
    env = dict(os.environ, PYTHONPATH=args.python_dir)
    ok, out = run(cmd, env=env)
    return ok, out, name


def eval_dim(text, sizes):
    value = 1
    for factor in text.split("*"):
        factor = factor.strip()
        value *= int(factor) if factor.isdigit() else sizes[factor]
    return value


def global_shape(type_text, sizes):
    m = re.match(r"\w+\[([^\]]*)\]", type_text)
    if not m or not m.group(1).strip():
        return ()
    return tuple(eval_dim(d, sizes) for d in m.group(1).split(","))


def draw(rng, dtype, shape):
    """Values whose sums of a few terms are exact in any order: 24-bit
    fractions in [-1, 1) (f16: rounded to it), small integers, bools."""
    if dtype in ("float16", "float32", "float64"):
        x = rng.integers(-(1 << 23), 1 << 23, size=shape) / float(1 << 23)
        return x.astype(dtype)
    if dtype == "bfloat16":  # no NumPy type: f32 values exact in bf16
        x = rng.integers(-(1 << 7), 1 << 7, size=shape) / float(1 << 7)
        return x.astype(np.float32)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype == "uint64":
        return rng.integers(0, 1000, size=shape).astype(np.uint64)
    return rng.integers(-1000, 1000, size=shape).astype(dtype)


SCALARS = {"float16": "0.5", "bfloat16": "0.5", "float32": "0.001", "float64": "0.25",
           "int32": "3", "int64": "7", "uint64": "12345", "bool": "true"}
# Names whose value must keep a program's math finite (Adam's betas, eps).
NAMED = {"beta1": "0.9", "beta2": "0.999", "eps": "1e-08", "lr": "0.001",
         "step": "3", "p": "0.125", "wd": "0.01"}


def axis_sizes(ranks, axes):
    """One factorisation of `ranks` over `axes` axes, the most even."""
    best = None
    for combo in factorisations(ranks, axes):
        if best is None or min(combo) >= min(best):
            best = combo
    return best


def local_group(layout, axis_sizes, rank):
    """The row-major index of `rank`'s coordinates on the axes where the
    layout is local (ranks are row-major over the axes)."""
    coords = []
    for size in reversed(axis_sizes):
        coords.append(rank % size)
        rank //= size
    coords.reverse()
    group = 0
    for a, state in enumerate(layout):
        if state == "local":
            group = group * axis_sizes[a] + coords[a]
    return group


def prepare(args, module, ranks, info, seed):
    """Draws the inputs of one module for `ranks` ranks, runs the
    simulator; returns the manifest entry, or a failure text."""
    rng = np.random.default_rng(seed)
    work = os.path.join(args.work, f"ranks{ranks}", module["key"])
    shutil.rmtree(work, ignore_errors=True)
    inputs, expected = os.path.join(work, "inputs"), os.path.join(work,
                                                                  "expected")
    os.makedirs(inputs)
    axes = info["num_axes"]
    sizes = dict(zip(info["sizes"][:axes], axis_sizes(ranks, axes)))
    counts = {t["count"] for t in info["tables"]}
    for s in info["sizes"][axes:]:
        sizes[s] = 5 if s in counts else 4 * ranks
    # A size the plan needs at least so large (a topk's k), in steps of
    # 4 * ranks so that slices still divide.
    plan = subprocess.run([args.coconetc, "--color=never", "--emit=plan",
                           module["path"]] + module["select"],
                          capture_output=True, text=True).stdout
    for name, least in re.findall(r"check: (\w+) at least (\d+) \(", plan):
        step = 4 * ranks
        sizes[name] = max(sizes[name], -(-int(least) // step) * step)
    sim = [args.coconetc, "--color=never", "sim", module["path"],
           "--output-dir", expected] + module["select"]
    sim += ["--size", ",".join(f"{k}={v}" for k, v in sizes.items())]
    tables = {}
    for t in info["tables"]:
        total = eval_dim(t["length"], sizes)
        cuts = sorted(rng.integers(0, total + 1, size=sizes[t["count"]] - 1))
        lengths = np.diff([0] + list(cuts) + [total]).astype(int).tolist()
        tables[t["name"]] = lengths
        file = os.path.join(inputs, f"{t['name']}.table")
        with open(file, "w") as f:
            f.write(" ".join(map(str, lengths)) + "\n")
        sim += ["--segments", f"{t['name']}={file}"]
    scalars = {}
    for p in info["params"]:
        if p["kind"] == "scalar" and "local" in p["layout"]:
            # A per-rank scalar: each local group its own value (exact in
            # every dtype), stacked by rank as for a local tensor; each
            # rank passes its entry (modules_rank.py).
            axis = [sizes[a] for a in info["sizes"][:axes]]
            groups = [local_group(p["layout"], axis, r) for r in range(ranks)]
            kind = np.dtype(p["numpy_dtype"]).kind
            values = [(g % 2 == 0) if kind == "b" else
                      0.5 + 0.25 * g if kind == "f" else 3 + g
                      for g in groups]
            file = os.path.join(inputs, p["name"] + ".npy")
            np.save(file, np.array(values, dtype=p["numpy_dtype"]))
            scalars[p["name"]] = None
            sim += ["--input", f"{p['name']}={file}"]
        elif p["kind"] == "scalar":
            value = NAMED.get(p["name"], SCALARS[p["numpy_dtype"]])
            scalars[p["name"]] = value
            sim += ["--set", f"{p['name']}={value}"]
        elif p["kind"] == "tensor":
            shape = global_shape(p["type"], sizes)
            layout = p["layout"]
            # Local on some axis: one block per rank, stacked (as the
            # simulator reads and the drivers write them); ranks whose
            # coordinates differ only on the other axes hold the same.
            if any(state == "local" for state in layout):
                axis = [sizes[a] for a in info["sizes"][:axes]]
                groups = [local_group(layout, axis, r) for r in range(ranks)]
                blocks = draw(rng, p["numpy_dtype"],
                              (max(groups) + 1,) + shape)
                x = np.stack([blocks[g] for g in groups])
            else:
                x = draw(rng, p["numpy_dtype"], shape)
            file = os.path.join(inputs, p["name"] + ".npy")
            np.save(file, x)
            sim += ["--input", f"{p['name']}={file}"]
    ok, out = run(sim)
    if not ok:
        return None, f"{module['name']} on {ranks} ranks: the simulator " \
                     f"failed:\n{' '.join(sim)}\n{out}"
    return {"name": module["name"], "dir": module["dir"], "sizes": sizes,
            "tables": tables, "scalars": scalars, "inputs": inputs,
            "expected": expected}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--coconetc", required=True)
    ap.add_argument("--python-dir", required=True,
                    help="the directory holding the coconet package")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--frameworks", default="numpy,torch")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", choices=["cpu", "cuda-emu"], default="cpu")
    ap.add_argument("--emu-lib", default="",
                    help="cuda-emu: the directory of libcoconet_emu.a and "
                         "libcoconet_rt_cuda_emu.a (BUILD/test/emu)")
    ap.add_argument("--emu-include",
                    default=os.path.join(HERE, "..", "emu", "include"))
    ap.add_argument("--runtime-lib", default="",
                    help="cuda-emu: the runtime's libraries (default: the "
                         "coconet package's)")
    ap.add_argument("--runtime-include", default="",
                    help="cuda-emu: the runtime's headers (default: the "
                         "coconet package's)")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    args.coconetc = os.path.abspath(args.coconetc)
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    sys.path.insert(0, args.python_dir)
    import coconet  # noqa: E402  (the package under test)

    failures = []
    modules = []
    jobs = []
    if args.target == "cuda-emu":
        from coconet import _config

        if not args.emu_lib:
            ap.error("--target cuda-emu needs --emu-lib")
        args.runtime_lib = args.runtime_lib or _config.LIB_DIR
        args.runtime_include = args.runtime_include or _config.INCLUDE_DIR
        args.mpi = mpi_flags()
        ok, out = emu_runtime(args)
        if not ok:
            print(f"FAILED: the emulation's shared library:\n{out}")
            return 1
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for index, path in enumerate(args.files):
            path = os.path.abspath(path)
            # Files of one name (samples/adam.coco, samples/python/
            # adam.coco) get directories of their own.
            stem = f"{index}-{os.path.splitext(os.path.basename(path))[0]}"
            for program, schedule in cases(args.coconetc, path):
                name = program + (f"_{schedule}" if schedule else "")
                out_dir = os.path.join(args.work, "modules", stem, name)
                select = ["--program", program] + (
                    ["--schedule", schedule] if schedule else [])
                jobs.append((pool.submit(build, args, path, program,
                                         schedule, out_dir),
                             {"name": name, "dir": out_dir, "path": path,
                              "select": select,
                              "key": os.path.join(stem, name)}))
        for future, module in jobs:
            ok, out, _ = future.result()
            if not ok:
                failures.append(f"{module['name']}: build failed:\n{out}")
                print(f"FAILED: {module['name']}: build")
                continue
            module["info"] = coconet.describe(
                os.path.join(module["dir"], f"_{module['name']}.so"))
            modules.append(module)
    print(f"built {len(modules)} modules")

    for ranks in [int(r) for r in args.ranks.split(",")]:
        manifest = []
        # Each module's inputs and simulator run on its own (its own
        # generator, seeded by its index), --jobs at once, kept in order.
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            prepared = list(pool.map(
                lambda im: prepare(args, im[1], ranks, im[1]["info"],
                                   args.seed + im[0]),
                enumerate(modules)))
        for module, (entry, failure) in zip(modules, prepared):
            if failure:
                failures.append(failure)
                print(f"FAILED: {module['name']} on {ranks} ranks: simulator")
            else:
                manifest.append(entry)
        file = os.path.join(args.work, f"manifest-{ranks}.json")
        with open(file, "w") as f:
            json.dump({"modules": manifest, "target": args.target,
                       "frameworks": args.frameworks.split(",")}, f)
        env = dict(os.environ, PYTHONPATH=args.python_dir,
                   OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
        cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), args.python,
               os.path.join(HERE, "modules_rank.py"), file]
        ok, out = run(cmd, env=env)
        print(out, end="")
        if not ok:
            failures.append(f"on {ranks} ranks:\n{out}")
    if failures:
        print(f"\n{len(failures)} failure(s):")
        for f in failures:
            print(f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
