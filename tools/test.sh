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
"$root/tools/setup.sh"
"$root/tools/build.sh"
cd "$build"
rc=0
# Half again as many tests as cores: the tests' processes wait on one
# another (MPI start-up, a harness's serial steps) about a fifth of the
# time; on 2 cores 3 at once took 725 s where 2 took 777 (docs/testing.md).
jobs=$(( $(nproc) + ($(nproc) + 1) / 2 ))
ctest --output-on-failure -j "$jobs" "$@" || rc=$?
# Why each skipped test skipped (its own message, e.g. no GPU here).
awk '/^SKIPPED/ {on = 1} /^<end of output>/ {on = 0} on' \
  Testing/Temporary/LastTest.log 2>/dev/null || true
exit "$rc"
