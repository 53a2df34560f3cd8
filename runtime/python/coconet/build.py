"""Compile a .coco program into a Python module, in one command:

    python3 -m coconet build FILE.coco [--program P] [--schedule S]
                             [--target cpu] [-o DIR] [-I DIR ...]

runs coconetc --emit=python (NAME.h, NAME.cpp, NAME_python.cpp, NAME.py,
NAME.pyi into DIR; NAME is P, or P_S under schedule S), then compiles
NAME.cpp and NAME_python.cpp, as one translation unit (NAME_module.cpp,
which includes both), into DIR/_NAME.so with the flags generated code
is tested with, linked with this coconet's static runtime. `import NAME`
with DIR on sys.path then gives the step (NAME.Step).
"""

import glob
import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile

from . import _config

__all__ = ["BuildError", "build"]


class BuildError(Exception):
    """A step of the build failed: the message says which, what ran and
    what it printed."""


def _shown(text):
    """What a user typed, as a message shows it: Python's ascii() (a
    control or format character escaped), cut to 64 characters."""
    s = ascii(text)
    return s if len(s) <= 64 else s[:61] + "..."


# --cuda-arch: a compute capability as nvcc's sm_N spells it (90, 100a).
_CUDA_ARCH = re.compile(r"[0-9]{2,3}[af]?")


def _quoted(arg):
    """One word of a command as a message shows it: quoted for a shell, or
    escaped and cut (_shown) where it holds what a terminal would act on."""
    return shlex.quote(arg) if arg.isprintable() else _shown(arg)


def _run(what, cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        raise BuildError("%s failed (exit status %d):\n  %s\n%s" % (
            what, proc.returncode, " ".join(_quoted(c) for c in cmd),
            proc.stdout.rstrip()))
    return proc.stdout


def _stamps(out_dir):
    return {p: os.stat(p).st_mtime_ns
            for p in glob.glob(os.path.join(out_dir, "*_python.c*"))}


def _cpu_flags():
    with open(_config.CPU_FLAGS_FILE) as f:
        return shlex.split(f.read())


def _unity_source(out_dir, name):
    """DIR/NAME_module.cpp: NAME.cpp and NAME_python.cpp as one translation
    unit, so that the runtime's headers are compiled once (a third off a
    module's build)."""
    path = os.path.join(out_dir, name + "_module.cpp")
    text = ("// The module's one translation unit, written by python3 -m "
            "coconet build.\n#include \"%s.cpp\"\n#include \"%s_python.cpp\"\n"
            % (name, name))
    try:
        with open(path) as f:
            if f.read() == text:
                return path
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)
    return path


# The headers a CPU module includes (runtime/include/coconet/cpu/
# module_prelude.h), force-included first and precompiled (_prelude).
_PRELUDE = "coconet/cpu/module_prelude.h"


def _headers_digest():
    """sha256 over the runtime's installed headers (names and bytes): a
    precompiled header does not notice that a header it read changed."""
    h = hashlib.sha256()
    root = os.path.join(_config.INCLUDE_DIR, "coconet")
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(d, f)
            h.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def _prelude(flags, cache_dir, verbose):
    """The options that force-include the module prelude: -I DIR first,
    DIR holding it precompiled by _config.CXX with `flags` (the module
    compile's own: GCC takes a precompiled header only where they match,
    and reads the header's text otherwise) under the cache's pch/,
    named by the compiler, the flags and the runtime's headers. Built on
    the first module's build (a second or two, once); where it cannot be
    built or kept, the prelude is read as text and the module is the
    same."""
    force = ["-include", _PRELUDE]
    from . import cache  # (cache imports this module)
    try:
        h = hashlib.sha256()
        for f in [_config.CXX] + flags:
            h.update(f.encode() + b"\0")
        h.update(_headers_digest().encode())
        root = os.path.join(cache.directory(cache_dir), "pch", h.hexdigest())
        gch = os.path.join(root, _PRELUDE + ".gch")
        if not os.path.isfile(gch):
            os.makedirs(os.path.dirname(gch), exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".module_prelude.",
                                       suffix=".gch",
                                       dir=os.path.dirname(gch))
            os.close(fd)
            cmd = ([_config.CXX] + flags +
                   ["-I" + _config.INCLUDE_DIR, "-x", "c++-header",
                    os.path.join(_config.INCLUDE_DIR, _PRELUDE), "-o", tmp])
            if verbose:
                print(" ".join(_quoted(c) for c in cmd), file=sys.stderr)
            try:
                proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT)
                if proc.returncode != 0:
                    return force
                os.chmod(tmp, 0o644)
                os.replace(tmp, gch)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        return ["-I" + root] + force
    except OSError:
        return force


def _compile_flags():
    """A CPU module's compile options (not its include directories)."""
    return (["-std=c++17", "-O2"] + _cpu_flags()
            + ["-fPIC", "-fvisibility=hidden"]
            + _config.OPENMP_FLAGS + _config.MPI_COMPILE_FLAGS)


def _compile_cpu(out_dir, name, cache_dir=None, verbose=False):
    sources = [_unity_source(out_dir, name)]
    libs = [os.path.join(_config.LIB_DIR, lib) for lib in _config.CPU_LIBS]
    flags = _compile_flags()
    return ([_config.CXX] + flags + ["-shared"]
            + _prelude(flags, cache_dir, verbose)
            + ["-I" + _config.INCLUDE_DIR, "-I" + out_dir] + sources
            + libs + _config.OPENMP_FLAGS + _config.MPI_LINK_FLAGS
            + ["-Wl,--no-undefined", "-Wl,--exclude-libs,ALL"])


def _compile_cuda(out_dir, name, arch):
    sources = [os.path.join(out_dir, name + ".cu"),
               os.path.join(out_dir, name + "_python.cu")]
    libs = [os.path.join(_config.LIB_DIR, lib) for lib in _config.CUDA_LIBS]
    return ([_config.NVCC or "nvcc", "-std=c++17", "-O2", "-arch=sm_" + arch,
             "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden",
             "-I" + _config.INCLUDE_DIR, "-I" + out_dir] + _config.CUDA_COMPILE_FLAGS
            + sources + libs + _config.CUDA_LINK_FLAGS)


def _size_text(size):
    """--size's text from "N=1024,P=2" or {"N": 1024}; BuildError if it is
    neither."""
    if isinstance(size, str):
        return size
    if isinstance(size, dict) and all(
            isinstance(k, str) and isinstance(v, int) and
            not isinstance(v, bool) for k, v in size.items()):
        return ",".join("%s=%d" % (k, v) for k, v in size.items())
    raise BuildError("size is NAME=VALUE,... or a dict of size names to "
                     "integers, not %s" % _shown(size))


def build(source, program=None, schedule=None, target="cpu", out_dir=".",
          include=(), verbose=False, cuda_arch="90", size=None, ranks=None,
          machine=None, cache_dir=None):
    """Builds program `program` (under `schedule`) of `source` into a module
    in `out_dir`; returns the paths of the NAME.py written (one per program
    coconetc wrote: without `program`, every program of the file). Raises
    BuildError naming the step that failed and what it printed.

    `size` ("N=1024" or {"N": 1024}), `ranks` and `machine` (a machine
    file's name or path) are coconetc's --size, --ranks and --machine: what
    `schedule="auto"` (the tuner's fastest schedule) needs. coconetc checks
    their values. `cache_dir` is where the cpu target's precompiled module
    prelude is kept (default: coconet.cache.directory())."""
    if target == "cpu" and not _config.HAS_CPU:
        raise BuildError("this coconet was built without its CPU runtime "
                         "(MPI and OpenMP): it cannot build for the cpu target")
    if target == "cuda" and not _config.HAS_CUDA:
        raise BuildError("this coconet was built without its CUDA runtime "
                         "(nvcc, the CUDA toolkit and NCCL): it cannot build "
                         "for the cuda target")
    if target not in ("cpu", "cuda"):
        raise BuildError("unknown target %s (cpu or cuda)" % _shown(target))
    if not _CUDA_ARCH.fullmatch(str(cuda_arch)):
        raise BuildError("--cuda-arch is a compute capability as sm_N spells "
                         "it (90, 100a), not %s" % _shown(cuda_arch))
    if ranks is not None and (isinstance(ranks, bool) or
                              not isinstance(ranks, (int, str))):
        raise BuildError("ranks is a number of ranks, not %s" % _shown(ranks))
    if machine is not None and not isinstance(machine, str):
        raise BuildError("machine is a machine file's name or path, not %s"
                         % _shown(machine))
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise BuildError("cache_dir is a directory's path, not %s"
                         % _shown(cache_dir))
    if not os.path.exists(source):
        raise BuildError("no such file: %s" % _shown(source))
    if not os.path.isfile(source):
        raise BuildError("%s is not a regular file" % _shown(source))
    # coconetc makes the directory when it writes: a refused build writes
    # nothing.
    out_dir = os.path.abspath(out_dir)

    cmd = [_config.COCONETC, "--emit=python", "--target=" + target]
    if program:
        cmd.append("--program=" + program)
    if schedule:
        cmd.append("--schedule=" + schedule)
    if size is not None:
        cmd.append("--size=" + _size_text(size))
    if ranks is not None:
        cmd.append("--ranks=" + str(ranks))
    if machine is not None:
        cmd.append("--machine=" + machine)
    for d in include:
        cmd += ["-I", d]
    cmd += ["-o", out_dir, source]
    before = _stamps(out_dir)
    if verbose:
        print(" ".join(_quoted(c) for c in cmd), file=sys.stderr)
    _run("coconetc", cmd)
    after = _stamps(out_dir)
    ext = "_python.cpp" if target == "cpu" else "_python.cu"
    written = sorted(p for p, t in after.items()
                     if p.endswith(ext) and before.get(p) != t)
    names = [os.path.basename(p)[:-len(ext)] for p in written]
    if not names and program:
        names = [program + ("_" + schedule if schedule else "")]
    if not names:
        raise BuildError("coconetc wrote no *%s into %s" % (ext, out_dir))

    modules = []
    for name in names:
        lib = os.path.join(out_dir, "_" + name + ".so")
        if target == "cpu":
            cmd = _compile_cpu(out_dir, name, cache_dir, verbose)
        else:
            cmd = _compile_cuda(out_dir, name, cuda_arch)
        # Written beside and renamed: a process that loaded the old library
        # keeps it intact.
        fd, tmp = tempfile.mkstemp(prefix="._" + name + ".", suffix=".so",
                                   dir=out_dir)
        os.close(fd)
        try:
            cmd += ["-o", tmp]
            if verbose:
                print(" ".join(_quoted(c) for c in cmd), file=sys.stderr)
            _run("compiling " + name, cmd)
            os.chmod(tmp, 0o755)
            os.replace(tmp, lib)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        modules.append(os.path.join(out_dir, name + ".py"))
    return modules


USAGE = """\
usage: python3 -m coconet build FILE.coco [--program P] [--schedule S]
                                [--target cpu|cuda] [--cuda-arch N] [-o DIR]
                                [--size N=V,...] [--ranks R] [--machine M]
                                [-I DIR ...] [-v]

Compiles program P of FILE.coco (every program of it without --program),
under schedule S, into a Python module in DIR (default: the current
directory): coconetc --emit=python writes NAME.py, NAME.pyi and the C++ (NAME
is P, or P_S), which is compiled into DIR/_NAME.so. Then, with DIR on
sys.path:

    import NAME
    step = NAME.Step()      # collective over MPI_COMM_WORLD's ranks
    step(...)               # the program's parameters, in order

  --program P      the program to build (default: all of FILE's)
  --schedule S     the schedule to apply (default: none, unscheduled);
                   auto: the tuner's fastest on --machine at --size/--ranks
  --size N=V,...   the sizes --schedule auto tunes for
  --ranks R        the number of ranks (the world axis's size P)
  --machine M      a machine file, by name (cpu-2x1, h100-sxm-8) or path
  --target T       cpu (default: C++, OpenMP and MPI) or cuda (CUDA, NCCL)
  --cuda-arch N    the cuda target's GPU architecture, sm_N (default 90)
  -o DIR           where to write the module (created if missing)
  -I DIR           a directory coconetc searches for imports (repeatable)
  -v               print the commands run
"""


def main(argv):
    """`python3 -m coconet build ...` (argv: what follows `build`, or with
    it): returns the exit status."""
    argv = list(argv)
    if argv[:1] == ["build"]:
        argv = argv[1:]
    opts = {"program": None, "schedule": None, "target": "cpu", "out": ".",
            "cuda_arch": "90", "size": None, "ranks": None, "machine": None}
    include, files, verbose = [], [], False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(USAGE, end="")
            return 0
        if a == "-v":
            verbose = True
            i += 1
            continue
        key = None
        for flag, k in (("--program", "program"), ("--schedule", "schedule"),
                        ("--target", "target"), ("-o", "out"),
                        ("--cuda-arch", "cuda_arch"), ("-I", "include"),
                        ("--size", "size"), ("--ranks", "ranks"),
                        ("--machine", "machine")):
            if a == flag:
                if i + 1 >= len(argv):
                    print("coconet build: %s needs a value\n\n%s" % (a, USAGE),
                          end="", file=sys.stderr)
                    return 2
                key, value, i = k, argv[i + 1], i + 2
                break
            if a.startswith(flag + "=") or (flag in ("-o", "-I") and a.startswith(flag)
                                            and len(a) > len(flag)):
                value = a[len(flag) + 1:] if a.startswith(flag + "=") else a[len(flag):]
                key, i = k, i + 1
                break
        if key == "include":
            include.append(value)
        elif key:
            opts[key] = value
        elif a.startswith("-") and a != "-":
            print("coconet build: unknown option %s\n\n%s" % (_shown(a), USAGE),
                  end="", file=sys.stderr)
            return 2
        else:
            files.append(a)
            i += 1
    if len(files) != 1:
        print("coconet build: expected one FILE.coco, got %d\n\n%s"
              % (len(files), USAGE), end="", file=sys.stderr)
        return 2
    if opts["target"] not in ("cpu", "cuda"):
        print("coconet build: --target is cpu or cuda, not %s"
              % _shown(opts["target"]), file=sys.stderr)
        return 2
    if not _CUDA_ARCH.fullmatch(opts["cuda_arch"]):
        print("coconet build: --cuda-arch is a compute capability as sm_N "
              "spells it (90, 100a), not %s" % _shown(opts["cuda_arch"]),
              file=sys.stderr)
        return 2
    try:
        modules = build(files[0], program=opts["program"], schedule=opts["schedule"],
                        target=opts["target"], out_dir=opts["out"], include=include,
                        verbose=verbose, cuda_arch=opts["cuda_arch"],
                        size=opts["size"], ranks=opts["ranks"],
                        machine=opts["machine"])
    except BuildError as e:
        print("coconet build: %s" % e, file=sys.stderr)
        return 1
    for m in modules:
        name = os.path.splitext(os.path.basename(m))[0]
        where = os.path.dirname(m)
        if not os.path.relpath(where).startswith(".."):
            where = os.path.relpath(where)
        print("built %s (import %s with %s on sys.path)"
              % (os.path.join(where, name + ".py"), name, where))
    return 0
