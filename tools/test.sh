#!/usr/bin/env bash
# Installs what is missing, builds (tools/build.sh: Release, warnings as
# errors), and runs the test suite with CTest: the default tier (what CI
# runs), or with --extended the extended tier as well (docs/testing.md,
# "Tiers": the libFuzzer build and runs, more rank counts). Further
# arguments go to ctest (-R REGEX, ...).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
export COCONET_TEST_EXTENDED=0
if [[ ${1:-} == --extended ]]; then
  COCONET_TEST_EXTENDED=1
  shift
fi
"$root/tools/setup.sh" --tests
"$root/tools/build.sh"
cd "$build"
rc=0
# As many tests at once as cores: more (3 on 2 cores) gained nothing
# measurable, as the MPI ranks of one test then poll while another's run
# (docs/testing.md).
ctest --output-on-failure -j "$(nproc)" "$@" || rc=$?
# Why each skipped test skipped (its own message, e.g. no GPU here).
awk '/^SKIPPED/ {on = 1} /^<end of output>/ {on = 0} on' \
  Testing/Temporary/LastTest.log 2>/dev/null || true
exit "$rc"
