#!/usr/bin/env bash
# Configures and builds coconetc into build/ (or $COCONET_BUILD_DIR). When
# clang++-19 is present it also builds the libFuzzer targets (tools/fuzz/),
# with AddressSanitizer and UBSan, into build-fuzz/ (set COCONET_FUZZ_BUILD=0
# to skip); not with -Werror: clang 19 warns inside GCC 12's libstdc++ in
# C++20. (vptr checks need RTTI, which LLVM's libraries are built without.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$(nproc)"

if [[ ${COCONET_FUZZ_BUILD:-1} != 0 ]] && command -v clang++-19 >/dev/null 2>&1; then
  fuzz=${COCONET_FUZZ_DIR:-$root/build-fuzz}
  # Configured every time, so that a tree made by an older build.sh gets
  # today's options.
  cmake -S "$root" -B "$fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined" \
    -DCOCONET_FUZZ=ON -DCOCONET_BUILD_TESTS=OFF -DCOCONET_WERROR=OFF >/dev/null
  cmake --build "$fuzz" -j "$(nproc)" --target coconet-fuzz
fi
