#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
"$root/tools/setup.sh"
"$root/tools/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
