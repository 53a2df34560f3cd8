#!/usr/bin/env python3
"""Shows whether a change to the compiler changed the code it generates.

    tools/compare-generated.py dump --coconetc BIN DIR
        writes, for every sample, stdlib program and codegen case (cases/
        and paths/), every (program, schedule) -- the unscheduled program
        included -- and both targets: --emit=plan and --emit=driver (the
        program's header and source and its driver), and the same compiled
        with --sequential (`<target>-sequential`), into DIR.
    tools/compare-generated.py compare [--coconetc BIN] [--keep DIR] REV
        builds coconetc as it was at git revision REV (in a temporary
        worktree, compiler only), dumps both its output and that of BIN
        (default build/bin/coconetc) and compares them file by file.
    tools/compare-generated.py diff OLD_DIR NEW_DIR
        compares two dumps.

compare and diff print one line per file that differs, appeared or
disappeared (and a unified diff of the first few), then a summary; exit
status 0 when every file is byte-identical, 1 otherwise. A refactoring of
the code generators shows its claim with `compare REV`; a deliberate change
to the output shows exactly which files it touched.
"""
import argparse
import concurrent.futures
import difflib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test" / "codegen"))
from run_codegen import cases, selector  # noqa: E402

SOURCES = ["samples", "stdlib", "test/codegen/cases", "test/codegen/paths"]
TARGETS = ["cpu", "cuda"]


def coco_files():
    """Every .coco file of SOURCES, relative to ROOT, sorted."""
    files = []
    for s in SOURCES:
        files += sorted((ROOT / s).rglob("*.coco"))
    return [f.relative_to(ROOT) for f in files]


def dump_case(coconetc, out, path, program, schedule):
    """Dumps one (program, schedule) of `path` for every target and form."""
    name = program + ("_" + schedule if schedule else "")
    base = out / path.with_suffix("") / name
    count = 0
    for target in TARGETS:
        for form, extra in (("", []), ("-sequential", ["--sequential"])):
            d = base / (target + form)
            d.mkdir(parents=True, exist_ok=True)
            common = [coconetc, "--color=never", "--target=" + target,
                      str(path)] + selector(program, schedule) + extra
            p = subprocess.run(common + ["--emit=plan"], cwd=ROOT,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            (d / "plan.txt").write_text(p.stdout)
            p = subprocess.run(common + ["--emit=driver", "-o", str(d)],
                               cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0:
                (d / "error.txt").write_text(p.stdout)
            count += 1
    return count


def dump(coconetc, out):
    out = pathlib.Path(out)
    if out.exists():
        shutil.rmtree(out)
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for path in coco_files():
            # A file this coconetc refuses (one written for a newer
            # language) is left out: its files show as new in the diff.
            try:
                found = cases(coconetc, str(ROOT / path))
            except RuntimeError as e:
                print(f"skipped: {path}: {str(e).splitlines()[0]}")
                continue
            for program, schedule in found:
                jobs.append(pool.submit(dump_case, coconetc, out, path,
                                        program, schedule))
        count = sum(j.result() for j in jobs)
    print(f"dumped {count} (program, schedule, target, form) cases into {out}")


def diff(old, new, show=3):
    old, new = pathlib.Path(old), pathlib.Path(new)
    a = {p.relative_to(old) for p in old.rglob("*") if p.is_file()}
    b = {p.relative_to(new) for p in new.rglob("*") if p.is_file()}
    changed = 0
    for rel in sorted(a | b):
        if rel not in b:
            print(f"gone:    {rel}")
            changed += 1
        elif rel not in a:
            print(f"new:     {rel}")
            changed += 1
        elif (old / rel).read_bytes() != (new / rel).read_bytes():
            print(f"differs: {rel}")
            if changed < show:
                sys.stdout.writelines(difflib.unified_diff(
                    (old / rel).read_text().splitlines(True),
                    (new / rel).read_text().splitlines(True),
                    str(rel), str(rel), n=2))
            changed += 1
    print(f"{len(a | b)} files, {changed} differ")
    return 0 if changed == 0 else 1


def build_at(rev, work):
    """Builds coconetc at `rev` in `work`; returns the binary's path."""
    tree = work / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach",
                    str(tree), rev], check=True, stdout=subprocess.DEVNULL)
    build = work / "build"
    subprocess.run(["cmake", "-S", str(tree), "-B", str(build), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                    "-DCOCONET_BUILD_TESTS=OFF"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build), "--target", "coconetc",
                    "-j", str(os.cpu_count() or 2)], check=True,
                   stdout=subprocess.DEVNULL)
    return build / "bin" / "coconetc"


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--coconetc", required=True)
    d.add_argument("dir")
    c = sub.add_parser("compare")
    c.add_argument("--coconetc", default=str(ROOT / "build/bin/coconetc"))
    c.add_argument("--keep", help="keep the two dumps in this directory")
    c.add_argument("rev")
    f = sub.add_parser("diff")
    f.add_argument("old")
    f.add_argument("new")
    args = parser.parse_args()

    if args.command == "dump":
        dump(os.path.abspath(args.coconetc), args.dir)
        return 0
    if args.command == "diff":
        return diff(args.old, args.new)
    work = pathlib.Path(tempfile.mkdtemp(prefix="coconet-compare-"))
    try:
        old_bin = build_at(args.rev, work)
        out = pathlib.Path(args.keep) if args.keep else work
        dump(str(old_bin), out / "old")
        dump(os.path.abspath(args.coconetc), out / "new")
        return diff(out / "old", out / "new")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove",
                        "--force", str(work / "tree")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
