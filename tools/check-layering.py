#!/usr/bin/env python3
"""Checks the include layering of compiler/ (docs/architecture.md).

    tools/check-layering.py [--root DIR]

Every `#include "LIB/..."` of a file in compiler/LIB2/ must name a library
LIB2 may depend on (the table below, which is docs/architecture.md's), and
a few files are held to narrower rules: code generators read the plan
(lower/Plan.h) and no other part of the lowering, and from the IR only the
table of scalar operations the plan's bodies use; the plan itself includes
no IR but value types and scalar bodies. Prints each violation as
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
    "sema": {"ast", "parse", "ir", "diag"},
    "sim": {"ir", "support", "diag"},
    "passes": {"ir", "diag"},
    "verify": {"sim", "ir", "support", "diag"},
    "emit": {"ir", "diag"},
    "analysis": {"ir", "diag"},
    "lower": {"ir", "diag"},
    "codegen": {"lower", "ir", "support"},
    "driver": {"diag", "ast", "parse", "ir", "sema", "sim", "passes",
               "verify", "emit", "analysis", "lower", "codegen", "support"},
}

# (files the rule applies to, what they may include from a library, why).
NARROW = [
    (r"codegen/", "lower/", {"lower/Plan.h"},
     "code generators read the plan, not the lowering"),
    (r"codegen/", "ir/", {"ir/ScalarOps.def"},
     "code generators read no IR but what the plan carries"),
    (r"lower/Plan\.h$", "ir/", {"ir/Types.h", "ir/ScalarExpr.h",
                                "ir/StageKinds.def"},
     "the plan stands alone: value types and scalar bodies only"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z]+)/([^"]+)"')


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
    for p in problems:
        print(p)
    print(f"check-layering: {files} files, {includes} includes of compiler "
          f"libraries, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
