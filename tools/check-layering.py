#!/usr/bin/env python3
"""Checks the include layering of compiler/, runtime/ and test/emu/
(docs/architecture.md).

    tools/check-layering.py [--root DIR]

Every `#include "LIB/..."` of a file in compiler/LIB2/ must name a library
LIB2 may depend on (the table below, which is docs/architecture.md's), and
a few files are held to narrower rules: code generators read the plan
(lower/Plan.h, and lower/KernelBody.h: a kernel's body as data) and no
other part of the lowering, and from the IR only the table of scalar
operations the plan's bodies use; the plan itself includes
no IR but value types and scalar bodies. Then the includes of the
runtime's headers (`coconet/...`) and of MPI, OpenMP, CUDA, NCCL and
cuBLAS in all three trees (EXTERNAL below): the compiler includes none of
them but the runtime's target-neutral numeric and value headers, in the
libraries that wrap them; the runtime's target-neutral part includes no
target's header; each target's part includes no other target's; the CUDA
emulation does not build on the runtime it runs. Prints each violation as
FILE:LINE: ... and exits 1 if there is any, else prints a summary and
exits 0.
"""
import argparse
import pathlib
import re
import sys

# library -> the libraries its files may include (besides its own).
ALLOWED = {
    "diag": set(),
    "support": set(),
    "ast": {"diag"},
    "parse": {"ast", "diag"},
    "ir": {"diag"},
    "sema": {"ast", "parse", "ir", "diag", "support", "synth"},
    "sim": {"ir", "support", "diag"},
    "passes": {"ir", "diag"},
    "verify": {"sim", "ir", "support", "diag"},
    "emit": {"ir", "diag"},
    "analysis": {"ir", "diag"},
    "lower": {"ir", "diag"},
    "synth": {"diag"},
    "codegen": {"lower", "ir", "support"},
    "tune": {"passes", "analysis", "lower", "synth", "ir", "diag"},
    "driver": {"diag", "ast", "parse", "ir", "sema", "sim", "passes",
               "verify", "emit", "analysis", "lower", "codegen", "tune",
               "synth", "support"},
}

# (files the rule applies to, what they may include from a library, why).
NARROW = [
    (r"codegen/", "lower/", {"lower/Plan.h", "lower/KernelBody.h"},
     "code generators read the plan, not the lowering"),
    (r"codegen/", "ir/", {"ir/ScalarOps.def", "ir/AlgorithmTable.h"},
     "code generators read no IR but what the plan carries"),
    (r"lower/Plan\.h$", "ir/", {"ir/Types.h", "ir/ScalarExpr.h",
                                "ir/StageKinds.def"},
     "the plan stands alone: value types and scalar bodies only"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z]+)/([^"]+)"')
# Any include: "coconet/..." or <...> of an outside library.
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]')

# Families of headers the rules below name.
FAMILY = [
    ("mpi", re.compile(r"^mpi\.h$")),
    ("openmp", re.compile(r"^omp\.h$")),
    ("cuda", re.compile(r"^(cuda[a-z_0-9]*|cublas[a-z_0-9]*|nccl[a-z_]*)\.h$")),
    ("rt-cpu", re.compile(r"^coconet/cpu/")),
    ("rt-cuda", re.compile(r"^coconet/cuda/")),
    ("emu", re.compile(r"^coconet/emu/")),
    ("rt", re.compile(r"^coconet/[a-z_]+\.(h|def)$")),
]

# (files, the families they may include, files allowed more: {file: why},
# why). Files are paths from the repository root; the first rule whose
# pattern matches a file holds it.
EXTERNAL = [
    (r"compiler/(ir|support|sim)/", {"rt"}, {},
     "the compiler includes of the runtime only its target-neutral numeric "
     "and value headers, where the IR's facts, the simulator and the "
     "support wrappers share them with generated code"),
    (r"compiler/codegen/", set(),
     {"compiler/codegen/CpuTarget.cpp": {"rt"},
      "compiler/codegen/ScalarCode.cpp": {"rt"}},
     "code generators include no runtime header but the constants they "
     "print (coconet/tile.h; the runtime's DType and ReduceOp names from "
     "their tables), and never MPI, OpenMP, CUDA or NCCL"),
    (r"compiler/", set(), {},
     "the compiler never includes MPI, OpenMP, CUDA, NCCL or the runtime "
     "(codegen prints their names as text)"),
    (r"runtime/(include/coconet/[a-z_]+\.h|src/[a-z_]+\.(h|cpp)|src/driver/)",
     {"rt"},
     {"runtime/include/coconet/driver.h": {"mpi"},
      "runtime/src/mpi_error.h": {"mpi"},
      "runtime/src/driver/mpi_transport.cpp": {"mpi"}},
     "the runtime's target-neutral part (coconet_rt) includes no target's "
     "headers; MPI only where the driver's transport uses it"),
    (r"runtime/(include/coconet|src)/cpu/", {"rt", "rt-cpu", "mpi", "openmp"},
     {}, "the CPU runtime includes no CUDA and no emulation"),
    (r"runtime/(include/coconet|src)/cuda/", {"rt", "rt-cuda", "mpi", "cuda"},
     {}, "the CUDA runtime includes no CPU runtime, no OpenMP and no "
     "emulation (the emulation's prelude provides its device side)"),
    (r"test/emu/(include|src)/", {"rt", "rt-cpu", "emu", "mpi", "cuda"}, {},
     "the emulation runs the CUDA runtime's code and does not build on it"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=str(
        pathlib.Path(__file__).resolve().parent.parent))
    args = parser.parse_args()
    compiler = pathlib.Path(args.root) / "compiler"
    problems, files, includes = [], 0, 0
    for path in sorted(compiler.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".def") or not path.is_file():
            continue
        rel = path.relative_to(compiler).as_posix()
        lib = rel.split("/")[0]
        if lib not in ALLOWED:
            continue
        files += 1
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target, rest = m.group(1), m.group(1) + "/" + m.group(2)
            if target not in ALLOWED:  # not a compiler library (coconet/, ...)
                continue
            includes += 1
            where = f"compiler/{rel}:{n}"
            if target != lib and target not in ALLOWED[lib]:
                problems.append(f"{where}: {lib}/ includes {rest}; {lib} may "
                                f"include only {sorted(ALLOWED[lib]) or 'itself'}")
                continue
            for files_re, prefix, allowed, why in NARROW:
                if (re.match(files_re, rel) and rest.startswith(prefix)
                        and rest not in allowed):
                    problems.append(f"{where}: includes {rest}: {why} "
                                    f"(allowed: {', '.join(sorted(allowed))})")
    external = check_external(pathlib.Path(args.root), problems)
    for p in problems:
        print(p)
    print(f"check-layering: {files} files, {includes} includes of compiler "
          f"libraries, {external} of the runtime, MPI, OpenMP, CUDA, NCCL "
          f"and cuBLAS; {len(problems)} violations")
    return 1 if problems else 0


def family_of(header):
    for name, pattern in FAMILY:
        if pattern.match(header):
            return name
    return None


def check_external(root, problems):
    """EXTERNAL's rules over compiler/, runtime/ and test/emu/; returns the
    count of includes checked."""
    count = 0
    for tree in ("compiler", "runtime", "test/emu"):
        for path in sorted((root / tree).rglob("*")):
            if path.suffix not in (".h", ".cpp", ".cu", ".def") or \
                    not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            rule = next((r for r in EXTERNAL if re.match(r[0], rel)), None)
            if rule is None:
                continue
            _, allowed, extra, why = rule
            allowed = allowed | extra.get(rel, set())
            for n, line in enumerate(path.read_text().splitlines(), 1):
                m = ANY_INCLUDE.match(line)
                family = family_of(m.group(1)) if m else None
                if family is None:
                    continue
                count += 1
                if family not in allowed:
                    problems.append(f"{rel}:{n}: includes {m.group(1)} "
                                    f"({family}): {why}")
    return count


if __name__ == "__main__":
    sys.exit(main())
