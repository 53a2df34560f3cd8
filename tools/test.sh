#!/usr/bin/env bash
# Installs what is missing, builds (tools/build.sh: Release, warnings as
# errors), and runs the whole test suite with CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
"$root/tools/build.sh"
cd "$build"
rc=0
ctest --output-on-failure -j "$(nproc)" "$@" || rc=$?
# Why each skipped test skipped (its own message, e.g. no GPU here).
awk '/^SKIPPED/ {on = 1} /^<end of output>/ {on = 0} on' \
  Testing/Temporary/LastTest.log 2>/dev/null || true
exit "$rc"
