#!/usr/bin/env python3
"""The plan coverage check (CTest plan-coverage, docs/testing.md): every
feature of the plan vocabulary (test/codegen/plan_features.py) appears in a
plan whose generated code ran and matched the simulator, on each target;
the features of fused collectives and overlaps on each path.

    plan_coverage.py --records DIR --printer PlanPrinter.cpp
                     [--targets cpu,cuda-emu] [--table FILE]

DIR holds the records that test/codegen/run_codegen.py --features-out
writes: one tab-separated line per run that matched the simulator,

    TARGET  PATH  FILE  CASE  FEATURE FEATURE ...

PATH is team, staging, fallback or sequential (--fused runs), team (a plain
run of a program with a fused collective or overlap: the driver's
default), or any (a program without them: every path is the same). A
"target" feature is covered on a target by any run there; a "path"
feature by a run on each of the four paths (a run on `any` covers all).

Fails (exit 1) when a feature lacks a run somewhere, when no records are
found, or when the plan printer has a string literal no feature claims
(a new word the printer can print, e.g. a decision, with no feature and so
no test). Prints the matrix and the figure: covered cells of all cells.
"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan_features  # noqa: E402

PATHS = ["team", "staging", "fallback", "sequential"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True,
                    help="the directory of run_codegen.py --features-out files")
    ap.add_argument("--printer", required=True,
                    help="compiler/lower/PlanPrinter.cpp")
    ap.add_argument("--targets", default="cpu,cuda-emu")
    ap.add_argument("--table", default="",
                    help="also write the matrix here (tab-separated)")
    args = ap.parse_args()
    targets = [t for t in args.targets.split(",") if t]

    problems = []
    with open(args.printer) as f:
        unclaimed = plan_features.unclaimed_literals(f.read())
    for lit in unclaimed:
        problems.append(f"the plan printer prints \"{lit}\", which no feature "
                        "of test/codegen/plan_features.py claims: add the "
                        "feature (and a test that runs it) or list it as "
                        "STRUCTURE")

    # (target, path) -> feature -> first (file, case) seen
    seen = {}
    files = sorted(glob.glob(os.path.join(args.records, "*.tsv")))
    runs = 0
    for name in files:
        with open(name) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) < 4:
                    continue
                target, path, src, case = parts[:4]
                runs += 1
                cell = seen.setdefault((target, path), {})
                for feature in parts[4:]:
                    if feature not in plan_features.KIND:
                        problems.append(f"{os.path.basename(name)}: "
                                        f"'{feature}' is not in the vocabulary")
                        continue
                    cell.setdefault(feature, f"{os.path.basename(src)}: {case}")
    if runs == 0:
        problems.append(f"no records in {args.records}: run the codegen "
                        "tests first (ctest -R plan-coverage runs them)")

    def where(target, path, feature):
        """The run covering (target, path, feature), or None."""
        for p in ([path, "any"] if path else PATHS + ["any"]):
            hit = seen.get((target, p), {}).get(feature)
            if hit:
                return hit
        return None

    rows, cells, covered, gaps = [], 0, 0, []
    for name, kind, what in plan_features.VOCABULARY:
        row = [name, kind]
        for target in targets:
            for path in (PATHS if kind == "path" else [None]):
                cells += 1
                hit = where(target, path, name)
                if hit:
                    covered += 1
                    row.append("x")
                else:
                    row.append("-")
                    gaps.append(f"{name} ({what}) on {target}"
                                + (f", path {path}" if path else "")
                                + ": no run that matched the simulator")
        rows.append(row)

    header = ["feature", "kind"]
    for target in targets:
        header += [f"{target}:{p}" for p in PATHS] if True else []
    print(f"plan coverage: {runs} runs in {len(files)} record files")
    print("columns: for each target the paths " + ", ".join(PATHS) +
          " (a 'target' feature has one column per target, any path)")
    for row in rows:
        name, kind, marks = row[0], row[1], row[2:]
        print(f"  {name:28} {kind:6} {' '.join(marks)}")
    print(f"covered: {covered} of {cells} cells "
          f"({100.0 * covered / max(cells, 1):.1f}%), "
          f"{len(plan_features.VOCABULARY)} features, "
          f"targets {', '.join(targets)}")
    if args.table:
        with open(args.table, "w") as f:
            for row in rows:
                f.write("\t".join(row) + "\n")
    for g in gaps:
        problems.append("not covered: " + g)
    if problems:
        print(f"\nFAILED: {len(problems)} problems:")
        for p in problems:
            print("  " + p)
        return 1
    print("ok: every feature is covered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
