#!/usr/bin/env bash
# Configures and builds coconetc into build/ (or $COCONET_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
fuzz=OFF
if command -v clang++-19 >/dev/null 2>&1; then fuzz=ON; fi
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOCONET_FUZZ="$fuzz" >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
