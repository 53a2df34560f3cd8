#!/usr/bin/env python3
"""Runs the commands of README.md (CTest readme): the page's promise that
every command on it runs as written.

    run_readme.py --root SRC --build BUILD --work DIR [README.md]

Every fenced sh or cmake block of the README is preceded by a marker line:
`<!-- run -->` (each command of the block is run) or `<!-- not run: why -->`
(said, not run). A block without either fails the test, so a new command
cannot escape it. The commands run one by one, as a user types them, with
bash, from a copy of the source tree made of links (DIR/tree: each entry
of SRC linked, `build` linked to BUILD) so that what they write (out/, the
cache) stays under DIR. tools/demo.sh's build must find BUILD up to date
and configured as it is (COCONET_BUILD_NO_RECONFIGURE: else it fails
rather than reconfigure the build under the running suite). `bash tools/test.sh` is not run: it is this test
suite (CI runs it); the benchmark command only in the extended tier
(--extended 1: EXTENDED_ONLY). Prints ok/FAILED per command with its time; exits 1 on a
failure or a block without a marker.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

NOT_RUN_HERE = {
    "bash tools/test.sh": "the test suite itself, which CI runs",
}
# Commands the default tier does not run (by their first word): timings,
# which check nothing but that they run; the extended tier runs them.
EXTENDED_ONLY = {
    "tools/bench-cpu.sh": "a timing (the extended tier runs it)",
}


def blocks(path):
    """(line number, marker or None, language, [commands]) per fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang, start = m.group(1), i + 1
        marker = None
        if i > 0:
            prev = lines[i - 1].strip()
            if prev == "<!-- run -->":
                marker = "run"
            elif re.match(r"^<!-- not run: .+ -->$", prev):
                marker = "not run"
        j = i + 1
        body = []
        while j < len(lines) and not lines[j].startswith("```"):
            body.append(lines[j])
            j += 1
        commands, current = [], ""
        for line in body:
            current += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
            if not line.endswith("\\"):
                if current.strip() and not current.strip().startswith("#"):
                    commands.append(current.strip())
                current = ""
        out.append((start, marker, lang, commands))
        i = j + 1
    return out


def tree(root, build, work):
    """DIR/tree: links to each entry of the source tree, build -> BUILD."""
    t = os.path.join(work, "tree")
    os.makedirs(t)
    for name in os.listdir(root):
        if name in (".git", "build", "out"):
            continue
        os.symlink(os.path.join(root, name), os.path.join(t, name))
    os.symlink(build, os.path.join(t, "build"))
    return t


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--extended", default="0",
                        help="the build's tier, as tools/build.sh reads it: 0 or 1")
    parser.add_argument("readme", nargs="?")
    args = parser.parse_args()
    root, build, work = (os.path.abspath(p) for p in (args.root, args.build, args.work))
    readme = args.readme or os.path.join(root, "README.md")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cwd = tree(root, build, work)
    # tools/demo.sh builds before it runs: the build it finds must be this
    # one as it is (its tree, its Python, its tier), never reconfigured
    # under the running test suite, and no fuzzing build.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               COCONET_CACHE_DIR=os.path.join(work, "cache"), COCONET_BUILD_DIR=build,
               COCONET_VENV=os.path.join(root, ".venv"), COCONET_BUILD_NO_RECONFIGURE="1",
               COCONET_FUZZ_BUILD="0", COCONET_TEST_EXTENDED=args.extended)
    failed = 0
    for line, marker, lang, commands in blocks(readme):
        if lang not in ("sh", "bash", "cmake"):
            continue
        if marker is None:
            print("FAILED: README.md:%d: a %s block without <!-- run --> or "
                  "<!-- not run: why --> before it" % (line, lang))
            failed += 1
            continue
        if marker == "not run":
            print("not run: README.md:%d (%d commands): as its marker says" % (line, len(commands)))
            continue
        for cmd in commands:
            key = cmd.split("#")[0].strip()
            if key in NOT_RUN_HERE:
                print("not run: %s: %s" % (key, NOT_RUN_HERE[key]))
                continue
            first = key.split()[0] if key.split() else ""
            if args.extended != "1" and first in EXTENDED_ONLY:
                print("not run: %s: %s" % (key, EXTENDED_ONLY[first]))
                continue
            t0 = time.time()
            proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True)
            took = time.time() - t0
            if proc.returncode == 0:
                print("ok (%.1f s): %s" % (took, key))
            else:
                failed += 1
                print("FAILED (exit status %d, %.1f s): README.md:%d: %s" % (
                    proc.returncode, took, line, key))
                print("\n".join("    " + l for l in proc.stdout.rstrip().split("\n")[-30:]))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
