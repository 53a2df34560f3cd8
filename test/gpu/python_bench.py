#!/usr/bin/env python3
"""The generated fused Adam step called from Python on one GPU, against
PyTorch's fused optimizers (test/gpu/python_bench.md).

Two commands, as the GPU check splits its work (test/gpu/README.md):

  python_bench.py prepare [--coconetc BIN] [--out DIR]
      where coconetc is built (no GPU): the CUDA modules of
      samples/python/adam.coco (coconetc --emit=python --target=cuda:
      NAME.cu, NAME_python.cu, NAME.py...), and for a small N the inputs
      and the simulator's results, into DIR (default build-gpu-python,
      which git ignores; carry it to the GPU machine).

  python_bench.py run [--prepared DIR] [--n N] [--steps 20] [--warmup 5]
                      [--modules adam,adam_fused_rs_c_ag] [--cuda-arch 90]
                      [--build-only]
      on the GPU machine (its python3 with torch, nanobind and a C++
      compiler; nvcc, NCCL and cuBLAS as test/gpu/run.sh finds them; no
      CMake, no MPI): builds the runtime's static libraries, coconet._core
      for this Python (from runtime/python/*.cpp with pip's nanobind)
      and each module's _NAME.so (as `python3 -m coconet build --target
      cuda` links it) into DIR/build; then, on one GPU and one rank (an
      NCCL communicator of one made with coconet.NcclCommunicator from a
      unique id: no MPI),
        1. checks each module's step on the small N against the simulator
           (w within 64 ulp of the largest |w|: pow; m and v bit for bit;
           the tolerances of test/gpu/README.md) and, for information, one
           step against torch.optim.Adam's from the same state;
        2. times, with CUDA events over --steps steps after --warmup, on N
           f32 parameters (default 2^28: 1 GiB per tensor): each module's
           step, torch.optim.AdamW(fused=True, weight_decay=0) and
           torch.optim.Adam(fused=True); and a large torch copy, whose
           bandwidth gives the memory floor of an Adam step (it reads g,
           w, m, v and writes w, m, v: 28 N bytes);
      and prints a table: ms per step, GB/s at 28 N bytes, the ratio to
      the floor and to torch's fused Adam.

Exit status: 0 when everything ran and every check passed; 1 on a failure;
77 when there is no GPU (or no torch with CUDA, nvcc, NCCL, nanobind or
Python's headers to build with).
"""

import argparse
import concurrent.futures
import datetime
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SOURCE = os.path.join(ROOT, "samples", "python", "adam.coco")
MODULES = {"adam": None, "adam_rs_c_ag": "rs_c_ag",
           "adam_fused_rs_c_ag": "fused_rs_c_ag"}
DEFAULT_MODULES = "adam,adam_fused_rs_c_ag"
SCALARS = {"lr": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "step": 3}
# Ulps of the largest |expected| (compiler/verify/Differential.h's rule, as
# test/gpu/compare.cpp applies it): w passes through pow (CUDA's powf
# against glibc's), m and v only + - * with the _rn intrinsics.
TOLERANCE = {"w": 64, "m": 0, "v": 0}
SKIP = 77
# Where the tensors are (a test of this script under the CPU emulation of
# CUDA sets "cpu").
DEVICE = "cuda"


def say(*parts):
    print(*parts, flush=True)


def run(cmd, cwd=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    except OSError as e:  # no such program
        return 127, str(e)
    return p.returncode, p.stdout


# --- prepare (where coconetc is built) ------------------------------------------


def draw(rng, shape):
    """f32 values that are 24-bit fractions in [-1, 1)."""
    import numpy as np

    x = rng.integers(-(1 << 23), 1 << 23, size=shape) / float(1 << 23)
    return x.astype(np.float32)


def prepare(args):
    import numpy as np

    coconetc = args.coconetc
    if not coconetc:
        for b in ("build-dev", "build"):
            c = os.path.join(ROOT, b, "bin", "coconetc")
            if os.access(c, os.X_OK):
                coconetc = c
                break
    if not coconetc or not os.access(coconetc, os.X_OK):
        say("python_bench.py prepare: no coconetc (--coconetc BIN)")
        return 2
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    n = args.check_n
    rng = np.random.default_rng(7)
    inputs = os.path.join(out, "check", "inputs")
    os.makedirs(inputs)
    # One rank: g is local (one block per rank, stacked), the rest whole.
    values = {"g": draw(rng, (1, n)), "w": draw(rng, (n,)),
              "m": draw(rng, (n,)) * np.float32(0.1),
              "v": np.abs(draw(rng, (n,))) * np.float32(0.01) + np.float32(0.001)}
    for name, x in values.items():
        np.save(os.path.join(inputs, name + ".npy"), x)
    manifest = {"created": datetime.datetime.now().astimezone().isoformat(
        timespec="seconds"), "commit": "", "check_n": n, "scalars": SCALARS,
        "tolerance": TOLERANCE, "modules": {}}
    code, text = run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"])
    if code == 0:
        manifest["commit"] = text.strip()
    failed = 0
    for name, schedule in MODULES.items():
        select = ["--program", "adam"] + (["--schedule", schedule]
                                          if schedule else [])
        mod_dir = os.path.join(out, "modules", name)
        code, text = run([coconetc, "--color=never", "--emit=python",
                          "--target=cuda", "-o", mod_dir] + select + [SOURCE])
        if code != 0:
            say(f"FAILED: coconetc --emit=python {name}:\n{text}")
            failed += 1
            continue
        expected = os.path.join(out, "check", "expected", name)
        sim = ([coconetc, "--color=never", "sim", SOURCE, "--output-dir",
                expected] + select + ["--size", f"P=1,N={n}"])
        for v in values:
            sim += ["--input", f"{v}={os.path.join(inputs, v + '.npy')}"]
        for k, v in SCALARS.items():
            sim += ["--set", f"{k}={v}"]
        code, text = run(sim)
        if code != 0:
            say(f"FAILED: the simulator on {name}:\n{' '.join(sim)}\n{text}")
            failed += 1
            continue
        manifest["modules"][name] = {"schedule": schedule or ""}
        say(f"prepared {name}: {mod_dir}, the simulator's results for N={n}")
    abi3, why = build_abi3(args, out)
    manifest["abi3"] = abi3 or ""
    say(f"coconet._core for any CPython >= 3.12 (the stable ABI): "
        f"{abi3 or 'not built: ' + why}")
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(out) for f in fs)
    say(f"{out}: {size / 1024:.0f} KiB")
    return 1 if failed else 0


def python312():
    """A Python >= 3.12 with its headers here (for the stable ABI), or None."""
    cands = [sys.executable, shutil.which("python3.13"), shutil.which("python3.12")]
    cands += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3")))
    for c in cands:
        if not c:
            continue
        code, text = run([c, "-c", "import sys, sysconfig, os; print(sys.version_info "
                          ">= (3, 12) and os.path.exists(os.path.join(sysconfig."
                          "get_paths()['include'], 'Python.h')) and sysconfig.get_paths()"
                          "['include'] or '')"])
        if code == 0 and text.strip():
            return c, text.strip()
    return None, None


def build_abi3(args, out):
    """coconet._core under Python's limited API (Py_LIMITED_API 3.12: one
    _core.abi3.so for every CPython from 3.12), with a Python >= 3.12's
    headers found here and this Python's nanobind (its sources do not
    depend on the Python): what `run` uses on a GPU machine whose Python
    has no headers or no nanobind. Returns (path, None) or (None, why)."""
    try:
        import nanobind
    except ImportError:
        return None, f"{sys.executable} has no nanobind"
    exe, inc = python312()
    if not exe:
        return None, "no Python >= 3.12 with its headers here"
    d = os.path.join(out, "abi3")
    os.makedirs(d, exist_ok=True)
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    flags = [cxx, "-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden",
             "-fno-strict-aliasing", "-DPy_LIMITED_API=0x030C0000", "-I" + inc,
             "-I" + nanobind.include_dir(), "-I" + os.path.join(
                 os.path.dirname(nanobind.include_dir()), "ext", "robin_map",
                 "include")]
    nb_o = os.path.join(d, "nb_combined.o")
    sources, core_os = core_sources(d)
    failures = run_all(2, [
        ("nanobind", flags + ["-DNB_BUILD", "-c", os.path.join(
            nanobind.source_dir(), "nb_combined.cpp"), "-o", nb_o])] + [
        (os.path.basename(src), flags + [
            "-I" + os.path.join(ROOT, "runtime", "include"), "-c", src,
            "-o", o]) for src, o in zip(sources, core_os)])
    lib = os.path.join(d, "_core.abi3.so")
    if not failures:
        code, text = run([cxx, "-shared"] + core_os + [nb_o, "-ldl", "-o", lib])
        if code:
            failures.append(text)
    for o in [nb_o] + core_os:
        if os.path.exists(o):
            os.unlink(o)
    if failures:
        return None, "the build failed: " + "\n".join(failures)
    return os.path.relpath(lib, out), None


# --- run (on the GPU machine): the build ----------------------------------------


def wheel_dirs():
    """The nvidia-* wheels' package directories (cuBLAS, NCCL)."""
    try:
        import nvidia  # noqa: F401  (a namespace package)

        return list(nvidia.__path__)
    except ImportError:
        return []


def find_first(paths):
    for p in paths:
        if p and os.path.exists(p):
            return p
    return None


class Toolchain:
    """nvcc, the C++ compiler, NCCL's and cuBLAS's headers and libraries,
    found as test/gpu/run.sh finds them (the toolkit, /usr, the nvidia-*
    wheels)."""

    def __init__(self, arch):
        nvcc = shutil.which("nvcc")
        homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"))
        for h in homes:
            if not nvcc and h and os.access(os.path.join(h, "bin", "nvcc"),
                                            os.X_OK):
                nvcc = os.path.join(h, "bin", "nvcc")
        self.nvcc = nvcc
        self.cuda_home = (os.path.dirname(os.path.dirname(nvcc)) if nvcc
                          else "/usr/local/cuda")
        self.cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
        nccl_home = os.environ.get("NCCL_HOME")
        inc_dirs = [nccl_home and os.path.join(nccl_home, "include"),
                    os.path.join(self.cuda_home, "include"),
                    os.path.join(self.cuda_home, "targets/x86_64-linux/include"),
                    "/usr/include", "/usr/local/include"]
        lib_dirs = [nccl_home and os.path.join(nccl_home, "lib"),
                    os.path.join(self.cuda_home, "lib64"),
                    os.path.join(self.cuda_home, "lib"),
                    os.path.join(self.cuda_home, "targets/x86_64-linux/lib"),
                    "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/lib"]

        def header(name, wheel):
            found = find_first([d and os.path.join(d, name) for d in inc_dirs])
            found = found or find_first([os.path.join(d, wheel, "include", name)
                                         for d in wheel_dirs()])
            return os.path.dirname(found) if found else None

        def library(name, wheel):
            cands = [d and os.path.join(d, f"lib{name}.so") for d in lib_dirs]
            found = find_first(cands)
            if not found:
                for d in lib_dirs:
                    vs = sorted(glob.glob(os.path.join(d or "/nonexistent",
                                                       f"lib{name}.so.[0-9]*")))
                    if vs:
                        found = vs[0]
                        break
            if not found:
                for d in wheel_dirs():
                    vs = sorted(glob.glob(os.path.join(d, wheel, "lib",
                                                       f"lib{name}.so*")))
                    if vs:
                        found = vs[0]
                        break
            return found

        self.nccl_inc = header("nccl.h", "nccl")
        self.nccl_lib = library("nccl", "nccl")
        self.cublas_inc = header("cublas_v2.h", "cublas")
        self.cublas_lib = library("cublas", "cublas")
        self.cudart_lib = library("cudart", "cuda_runtime")
        self.arch = arch

    def missing(self):
        for what, v in (("nvcc", self.nvcc), ("a C++ compiler", self.cxx),
                        ("nccl.h", self.nccl_inc), ("libnccl", self.nccl_lib),
                        ("cublas_v2.h", self.cublas_inc),
                        ("libcublas", self.cublas_lib)):
            if not v:
                return what
        return None

    def link_libs(self):
        """The shared libraries a module links, by file, with rpaths."""
        libs, dirs = [], []
        for f in (self.nccl_lib, self.cublas_lib):
            libs.append(f)
            if os.path.dirname(f) not in dirs:
                dirs.append(os.path.dirname(f))
        libs.append("-lcudart")
        for d in dirs:
            libs += ["-Xlinker", "-rpath", "-Xlinker", d]
        return libs

    def describe(self):
        return (f"nvcc {self.nvcc}, C++ {self.cxx}, NCCL {self.nccl_lib} "
                f"(header {self.nccl_inc}), cuBLAS {self.cublas_lib}, "
                f"sm_{self.arch}")


def run_all(jobs, commands):
    """Runs (name, cmd) pairs, `jobs` at a time; returns the failures."""
    failures = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {pool.submit(run, cmd): (name, cmd) for name, cmd in commands}
        for f in concurrent.futures.as_completed(futures):
            code, text = f.result()
            name, cmd = futures[f]
            if code != 0:
                failures.append(f"{name}:\n  {' '.join(shlex.quote(c) for c in cmd)}"
                                f"\n{text}")
    return failures


def build_runtime(tc, build, jobs):
    """libcoconet_rt.a and libcoconet_rt_cuda.a, position-independent (the
    modules are shared libraries). As run.sh builds them, plus the Python
    shim (runtime/src/python)."""
    rt = os.path.join(ROOT, "runtime")
    obj = os.path.join(build, "obj")
    os.makedirs(obj, exist_ok=True)
    inc = ["-I" + os.path.join(rt, "include"), "-I" + tc.nccl_inc,
           "-I" + tc.cublas_inc]
    cxx = [tc.cxx, "-std=c++17", "-O2", "-fPIC", "-ffp-contract=off"]
    nv = [tc.nvcc, "-std=c++17", "-O2", f"-arch=sm_{tc.arch}", "-Xcompiler",
          "-fPIC"]
    commands, rt_objs, cuda_objs = [], [], []
    for src in sorted(glob.glob(os.path.join(rt, "src", "*.cpp"))
                      + glob.glob(os.path.join(rt, "src", "driver", "*.cpp"))
                      + glob.glob(os.path.join(rt, "src", "python", "*.cpp"))):
        if "mpi" in os.path.basename(src):
            continue
        o = os.path.join(obj, "rt-" + os.path.basename(src)[:-4] + ".o")
        rt_objs.append(o)
        commands.append((os.path.basename(src), cxx + inc + ["-c", src, "-o", o]))
    for src in sorted(glob.glob(os.path.join(rt, "src", "cuda", "*"))):
        base = os.path.basename(src)
        if "mpi" in base or not base.endswith((".cpp", ".cu")):
            continue
        o = os.path.join(obj, "cuda-" + base.rsplit(".", 1)[0] + ".o")
        cuda_objs.append(o)
        if base.endswith(".cu"):
            commands.append((base, nv + inc + ["-c", src, "-o", o]))
        else:
            commands.append((base, cxx + inc + ["-I" + os.path.join(
                tc.cuda_home, "include"), "-c", src, "-o", o]))
    failures = run_all(jobs, commands)
    if failures:
        return failures
    for lib, objs in (("libcoconet_rt.a", rt_objs),
                      ("libcoconet_rt_cuda.a", cuda_objs)):
        path = os.path.join(build, lib)
        if os.path.exists(path):
            os.unlink(path)
        code, text = run(["ar", "rcs", path] + objs)
        if code:
            return [f"ar {lib}:\n{text}"]
    return []


def core_sources(obj):
    """coconet._core's sources (every runtime/python/*.cpp: _core.cpp has the
    bindings, the others the program and its checks) and an object file in
    `obj` for each."""
    sources = sorted(glob.glob(os.path.join(ROOT, "runtime", "python", "*.cpp")))
    return sources, [os.path.join(obj, os.path.basename(s)[:-4] + ".o")
                     for s in sources]


def core_commands(tc, build):
    """coconet._core for this Python, from runtime/python/*.cpp and pip's
    nanobind, without CMake (what nanobind_add_module(NB_STATIC) compiles):
    (commands, the extension's path) or (None, why)."""
    try:
        import nanobind
    except ImportError:
        return None, f"{sys.executable} has no nanobind"
    py_inc = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(py_inc, "Python.h")):
        return None, f"no Python.h in {py_inc} (Python's headers: python3-dev)"
    nb = os.path.dirname(nanobind.include_dir())
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    obj = os.path.join(build, "obj")
    os.makedirs(obj, exist_ok=True)
    flags = [tc.cxx, "-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden",
             "-fno-strict-aliasing", "-I" + py_inc,
             "-I" + nanobind.include_dir(),
             "-I" + os.path.join(nb, "ext", "robin_map", "include")]
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        flags.append("-DNB_FREE_THREADED")
    nb_o = os.path.join(obj, "nb_combined.o")
    sources, core_os = core_sources(obj)
    return [("nanobind", flags + ["-DNB_BUILD", "-c", os.path.join(
                nanobind.source_dir(), "nb_combined.cpp"), "-o", nb_o])] + [
            (os.path.basename(src), flags + [
                "-I" + os.path.join(ROOT, "runtime", "include"), "-c", src,
                "-o", o]) for src, o in zip(sources, core_os)
            ], (nb_o, core_os, suffix)


def package(tc, build, core):
    """The coconet package in build/python: the sources of runtime/python,
    the extension (objects to link, or a built one), and a _config.py for
    this machine."""
    pkg = os.path.join(build, "python", "coconet")
    shutil.rmtree(pkg, ignore_errors=True)
    os.makedirs(pkg)
    for f in glob.glob(os.path.join(ROOT, "runtime", "python", "coconet", "*.py")):
        shutil.copy(f, pkg)
    if isinstance(core, str):
        shutil.copy(core, pkg)
    else:
        nb_o, core_os, suffix = core
        code, text = run([tc.cxx, "-shared"] + core_os + [nb_o, "-ldl", "-o",
                          os.path.join(pkg, "_core" + suffix)])
        if code:
            return [f"linking coconet._core:\n{text}"]
    config = {"COCONETC": "", "INCLUDE_DIR": os.path.join(ROOT, "runtime", "include"),
              "LIB_DIR": build, "CPU_FLAGS_FILE": "", "STDLIB_DIR":
              os.path.join(ROOT, "stdlib"), "CPU_LIBS": [],
              "CUDA_LIBS": ["libcoconet_rt_cuda.a", "libcoconet_rt.a"],
              "HAS_CPU": False, "HAS_CUDA": True, "CXX": tc.cxx,
              "MPI_COMPILE_FLAGS": [], "MPI_LINK_FLAGS": [], "OPENMP_FLAGS": [],
              "NVCC": tc.nvcc, "CUDA_COMPILE_FLAGS": ["-I" + tc.nccl_inc],
              "CUDA_LINK_FLAGS": tc.link_libs(), "VERSION": "python_bench"}
    with open(os.path.join(pkg, "_config.py"), "w") as f:
        f.write("# Written by test/gpu/python_bench.py for this machine.\n")
        for k, v in config.items():
            f.write(f"{k} = {v!r}\n")
    return []


def module_command(tc, build, mod_dir, name):
    """nvcc on NAME.cu and NAME_python.cu into _NAME.so, as
    `python3 -m coconet build --target cuda` compiles a module."""
    return [tc.nvcc, "-std=c++17", "-O2", f"-arch=sm_{tc.arch}", "-shared",
            "-Xcompiler", "-fPIC,-fvisibility=hidden",
            "-I" + os.path.join(ROOT, "runtime", "include"), "-I" + tc.nccl_inc,
            "-I" + mod_dir, os.path.join(mod_dir, name + ".cu"),
            os.path.join(mod_dir, name + "_python.cu"),
            os.path.join(build, "libcoconet_rt_cuda.a"),
            os.path.join(build, "libcoconet_rt.a")] + tc.link_libs() + [
            "-o", os.path.join(mod_dir, "_" + name + ".so")]


def gpu_arch():
    code, text = run(["nvidia-smi", "--query-gpu=compute_cap",
                      "--format=csv,noheader"])
    if code == 0:
        m = re.match(r"\s*(\d+)\.(\d+)", text)
        if m:
            return m.group(1) + m.group(2)
    return None


def build_all(args, prepared, names):
    """Everything the run needs, into prepared/build; returns a failure
    text, SKIP with a reason, or None."""
    build = os.path.join(prepared, "build")
    os.makedirs(build, exist_ok=True)
    tc = Toolchain(args.cuda_arch or gpu_arch() or "90")
    what = tc.missing()
    if what:
        return SKIP, f"no {what} to build with", None
    say(f"toolchain: {tc.describe()}")
    t0 = time.time()
    core, detail = core_commands(tc, build)
    if core is None:
        abi3 = os.path.join(prepared, "abi3", "_core.abi3.so")
        if sys.version_info < (3, 12) or not os.path.exists(abi3):
            return SKIP, f"cannot build coconet._core: {detail}", None
        say(f"coconet._core: {detail}: the stable-ABI one prepare built")
        core, detail = [], abi3
    failures = run_all(args.jobs, core)
    failures += build_runtime(tc, build, args.jobs)
    if failures:
        return 1, "the build failed:\n" + "\n".join(failures), None
    failures = package(tc, build, detail)
    commands = []
    for name in names:
        mod_dir = os.path.join(prepared, "modules", name)
        for stale in glob.glob(os.path.join(mod_dir, "_*.so")):
            os.unlink(stale)
        commands.append((name, module_command(tc, build, mod_dir, name)))
    failures += run_all(args.jobs, commands)
    if failures:
        return 1, "the build failed:\n" + "\n".join(failures), None
    say(f"built the runtime, coconet._core and {len(names)} modules in "
        f"{time.time() - t0:.0f} s")
    return 0, "", tc


# --- run (on the GPU machine): the check and the benchmark --------------------------


def load(prepared, name):
    import importlib.util

    path = os.path.join(prepared, "modules", name, name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_npy(torch, path):
    """A little-endian f32 .npy (the simulator's, prepare's) as a CPU
    tensor: no NumPy needed on the GPU machine."""
    import ast
    import struct

    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    if data[6] == 1:
        (length,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (length,), start = struct.unpack("<I", data[8:12]), 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        raise ValueError(f"{path}: {header['descr']}, expected <f4 in C order")
    body = bytearray(data[start + length:])
    return torch.frombuffer(body, dtype=torch.float32).reshape(header["shape"])


def within(torch, got, want, ulps):
    """(passes, largest difference in ulps of max(|a|, |b|, scale), scale the
    largest finite |expected|): test/gpu/compare.cpp's rule; NaNs equal."""
    got, want = got.double().cpu(), want.double().cpu()
    if got.shape != want.shape:
        return False, float("inf")
    finite = torch.isfinite(want)
    scale = float(want[finite].abs().max()) if bool(finite.any()) else 0.0
    eps = float(torch.finfo(torch.float32).eps)
    nan_same = torch.isnan(got) == torch.isnan(want)
    diff = (got - want).abs().nan_to_num(nan=0.0)
    unit = eps * torch.maximum(torch.maximum(got.abs(), want.abs()).nan_to_num(
        nan=0.0), torch.tensor(scale, dtype=torch.float64))
    unit = torch.where(unit > 0, unit, torch.tensor(eps, dtype=torch.float64))
    measured = float((diff / unit).max()) if diff.numel() else 0.0
    if ulps == 0:
        same = bool(torch.equal(got.nan_to_num(nan=0.0), want.nan_to_num(nan=0.0)))
        return same and bool(nan_same.all()), measured
    return bool((diff <= ulps * unit).all()) and bool(nan_same.all()), measured


def check(prepared, manifest, modules, comm, torch):
    """Each module's step on the small N against the simulator; returns the
    failures."""
    n = manifest["check_n"]
    sc = manifest["scalars"]
    inputs = os.path.join(prepared, "check", "inputs")

    def given(v):
        return read_npy(torch, os.path.join(inputs, v + ".npy")).to(DEVICE)

    failures = []
    say(f"\n== the step against the simulator (N={n}, one rank; tolerances "
        f"in ulps of the largest |result|: {manifest['tolerance']})")
    for name, module in modules.items():
        failed = len(failures)
        step = module.Step(comm, stream=torch.cuda.current_stream())
        g = given("g")[0].contiguous()  # local: one block per rank, stacked
        w, m, v = given("w"), given("m"), given("v")
        step(g, w, m, v, sc["lr"], sc["beta1"], sc["beta2"], sc["eps"], sc["step"])
        step.synchronize()
        line = []
        for r, t in (("w", w), ("m", m), ("v", v)):
            want = read_npy(torch, os.path.join(prepared, "check", "expected",
                                                name, r + ".npy"))
            ok, ulps = within(torch, t, want, manifest["tolerance"][r])
            line.append(f"{r} {ulps:.2f} ulp{'' if ok else ' FAILED'}")
            if not ok:
                failures.append(f"{name}: '{r}' differs from the simulator by "
                                f"{ulps:.2f} ulp (tolerance "
                                f"{manifest['tolerance'][r]})")
        # For information: torch.optim.Adam's step from the same state. Its
        # bias corrections are f64 (samples/python/train_mlp.py): the two
        # differ by a few 2^-16 of the update, which is about lr.
        p = torch.nn.Parameter(given("w"))
        p.grad = g.clone()
        opt = torch.optim.Adam([p], lr=sc["lr"], betas=(sc["beta1"], sc["beta2"]),
                               eps=sc["eps"], fused=True)
        opt.state[p] = {"step": torch.tensor(float(sc["step"] - 1), device=p.device),
                        "exp_avg": given("m"), "exp_avg_sq": given("v")}
        opt.step()
        torch_diff = float((p.detach() - w).abs().max()) / (sc["lr"] * 2.0 ** -16)
        say(f"{'ok' if len(failures) == failed else 'FAILED'}: {name}: "
            f"{', '.join(line)}; max |w - torch Adam's w| = {torch_diff:.2f} "
            f"lr 2^-16; path: {step.path}")
    return failures


def time_steps(torch, fn, steps, warmup):
    """ms per call of fn, with CUDA events on the current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / steps


def bench(args, modules, comm, torch):
    n, steps, warmup = args.n, args.steps, args.warmup
    gib = 4 * n / 2 ** 30
    floor_bytes = 28 * n  # reads g, w, m, v; writes w, m, v (f32)
    say(f"\n== one step on N = {n} f32 parameters ({gib:.2f} GiB per "
        f"tensor), {steps} steps after {warmup}, one rank, "
        f"{torch.cuda.get_device_name()}")
    rows = []
    dev = torch.device(DEVICE)

    def state():
        gen = torch.Generator(device=dev).manual_seed(1)
        g = torch.randn(n, device=dev, generator=gen).mul_(1e-3)
        w = torch.randn(n, device=dev, generator=gen)
        m = torch.zeros(n, device=dev)
        v = torch.full((n,), 1e-3, device=dev)
        return g, w, m, v

    # The memory floor: a large copy's bandwidth (read + write).
    a = torch.empty(n, device=dev).fill_(1.0)
    b = torch.empty_like(a)
    copy_ms = time_steps(torch, lambda: b.copy_(a), steps, warmup)
    bandwidth = 2 * 4 * n / (copy_ms / 1e3)
    del a, b
    floor_ms = floor_bytes / bandwidth * 1e3
    say(f"copy of {gib:.2f} GiB: {copy_ms:.3f} ms, {bandwidth / 1e9:.0f} GB/s "
        f"(read + write); Adam's floor: {floor_bytes / 2 ** 30:.2f} GiB moved, "
        f"{floor_ms:.3f} ms")
    sc = SCALARS
    for name, module in modules.items():
        g, w, m, v = state()
        step = module.Step(comm, stream=torch.cuda.current_stream(),
                           sizes={"N": n})
        ms = time_steps(torch, lambda: step(g, w, m, v, sc["lr"], sc["beta1"],
                                            sc["beta2"], sc["eps"], sc["step"]),
                        steps, warmup)
        rows.append((f"coconet {name}", ms, step.path or ""))
        del step, g, w, m, v
        torch.cuda.empty_cache()
    for label, make in (
            ("torch AdamW(fused, wd=0)", lambda p: torch.optim.AdamW(
                [p], lr=sc["lr"], betas=(sc["beta1"], sc["beta2"]), eps=sc["eps"],
                weight_decay=0.0, fused=True)),
            ("torch Adam(fused)", lambda p: torch.optim.Adam(
                [p], lr=sc["lr"], betas=(sc["beta1"], sc["beta2"]), eps=sc["eps"],
                fused=True))):
        g, w, _, _ = state()
        p = torch.nn.Parameter(w)
        p.grad = g
        opt = make(p)
        ms = time_steps(torch, opt.step, steps, warmup)
        rows.append((label, ms, ""))
        del opt, p, g, w
        torch.cuda.empty_cache()
    torch_ms = dict((r[0], r[1]) for r in rows)["torch Adam(fused)"]
    say(f"\n{'':32} {'ms/step':>9} {'GB/s@28N':>9} {'x floor':>8} "
        f"{'x torch Adam':>13}")
    say(f"{'memory floor (copy bandwidth)':32} {floor_ms:9.3f} "
        f"{bandwidth / 1e9:9.0f} {1.0:8.2f} {floor_ms / torch_ms:13.2f}")
    for label, ms, path in rows:
        say(f"{label:32} {ms:9.3f} {floor_bytes / (ms / 1e3) / 1e9:9.0f} "
            f"{ms / floor_ms:8.2f} {ms / torch_ms:13.2f}")
    for label, _, path in rows:
        if path:
            say(f"  {label}: {path}")
    return rows


def run_bench(args):
    prepared = os.path.abspath(args.prepared)
    manifest_path = os.path.join(prepared, "bench.json")
    if not os.path.exists(manifest_path):
        say(f"python_bench.py run: no {manifest_path}: run "
            f"`python_bench.py prepare` where coconetc is built, and carry it")
        return 2
    with open(manifest_path) as f:
        manifest = json.load(f)
    names = [m for m in args.modules.split(",") if m]
    for name in names:
        if name not in manifest["modules"]:
            say(f"python_bench.py run: {name} was not prepared "
                f"({', '.join(manifest['modules'])})")
            return 2
    say(f"python_bench.py: prepared {manifest['created']} at commit "
        f"{manifest['commit'] or '?'}; Python {sys.version.split()[0]}")
    if args.no_build:
        missing = [p for p in [os.path.join(prepared, "modules", n, f"_{n}.so")
                               for n in names] + [os.path.join(
                                   prepared, "build", "python", "coconet", "_config.py")]
                   if not os.path.exists(p)]
        if missing:
            say("FAILED: --no-build, but not built: " + ", ".join(missing))
            return 1
    else:
        code, why, _ = build_all(args, prepared, names)
        if code:
            say(("SKIPPED: " if code == SKIP else "FAILED: ") + why)
            return code
    if args.build_only:
        say("SUMMARY: built (--build-only: nothing run)")
        return 0
    sys.path.insert(0, os.path.join(prepared, "build", "python"))
    import coconet  # noqa: E402  (the one just built)

    # The modules' libraries first: their NCCL, cuBLAS and CUDA runtime
    # are then the process's (torch's own libnccl.so.2, when its wheel's,
    # would otherwise be the one they get, of another version than the
    # header they were compiled with).
    for name in names:
        coconet.describe(os.path.join(prepared, "modules", name, f"_{name}.so"))
    try:
        import torch
    except ImportError:
        say("SKIPPED: no torch")
        return SKIP
    if not torch.cuda.is_available():
        say("SKIPPED: no GPU (torch.cuda.is_available() is False)")
        return SKIP
    torch.cuda.set_device(0)
    modules = {name: load(prepared, name) for name in names}
    first = modules[names[0]]
    comm = coconet.NcclCommunicator(first, unique_id=coconet.nccl_unique_id(first),
                                    rank=0, size=1, device=0)
    say(f"torch {torch.__version__} (CUDA {torch.version.cuda}, NCCL "
        f"{'.'.join(map(str, torch.cuda.nccl.version()))}), {comm!r}")
    failures = check(prepared, manifest, modules, comm, torch)
    bench(args, modules, comm, torch)
    if failures:
        say("\nSUMMARY: FAILED:\n  " + "\n  ".join(failures))
        return 1
    say("\nSUMMARY: PASSED: every step equals the simulator within its "
        "tolerance; the table above")
    return 0


def count(text):
    """An int: 268435456, 2**28 or 2^28."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:(?:\*\*|\^)\s*(\d+))?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a count: {text!r}")
    value = int(m.group(1)) ** int(m.group(2) or 1)
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive count: {text!r}")
    return value


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="where coconetc is built")
    p.add_argument("--coconetc", default="")
    p.add_argument("--out", default=os.path.join(ROOT, "build-gpu-python"))
    p.add_argument("--check-n", type=int, default=10007)
    r = sub.add_parser("run", help="on the GPU machine")
    r.add_argument("--prepared", default=os.path.join(ROOT, "build-gpu-python"))
    r.add_argument("--n", type=count, default=1 << 28,
                   help="parameters: 268435456, 2**28 or 2^28 (default)")
    r.add_argument("--steps", type=int, default=20)
    r.add_argument("--warmup", type=int, default=5)
    r.add_argument("--modules", default=DEFAULT_MODULES,
                   help="of " + ", ".join(MODULES))
    r.add_argument("--cuda-arch", default="")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    r.add_argument("--build-only", action="store_true",
                   help="build everything and stop (no GPU needed)")
    r.add_argument("--no-build", action="store_true",
                   help="use what an earlier run built in PREPARED/build")
    args = ap.parse_args()
    if args.command == "prepare":
        return prepare(args)
    return run_bench(args)


if __name__ == "__main__":
    sys.exit(main())
