#!/usr/bin/env python3
"""%expect-exit STATUS COMMAND...: runs COMMAND (its output passes
through) and succeeds only when it exits with STATUS, e.g. 2 for a usage
error (docs/cli.md). Prints the status it got otherwise."""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.call(sys.argv[2:])
if got != want:
    sys.stderr.write(f"expect-exit: expected exit status {want}, got {got}: "
                     f"{' '.join(sys.argv[2:])}\n")
    sys.exit(1)
