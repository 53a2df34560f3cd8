#!/usr/bin/env bash
# Configures and builds coconetc into build/ (or $COCONET_BUILD_DIR) the way
# the test suite checks it: CMAKE_BUILD_TYPE=Release (what a packager
# builds: -O3, and GCC's flow-based warnings depend on what it inlines) with
# COCONET_WERROR=ON (warnings are errors here, not in a user's build).
# COCONET_BUILD_TYPE=RelWithDebInfo (or Debug) gives a build with debug
# information instead. A build directory configured otherwise (an older
# RelWithDebInfo build/, warnings not errors) is reconfigured, so that no
# machine keeps testing another configuration unawares.
#
# The Python package (runtime/python/) is built with the Python of
# tools/setup.sh's virtual environment (${COCONET_VENV:-.venv}, which has
# nanobind) where it exists: a build directory configured with another
# Python_EXECUTABLE is reconfigured with it.
#
# COCONET_TEST_EXTENDED=1 configures the test suite's extended tier
# (docs/testing.md, "Tiers"; tools/test.sh --extended sets it): a build
# directory configured for the other tier is reconfigured.
#
# With COCONET_FUZZ_BUILD=1 (the default in the extended tier) and
# clang++-19 present it also builds the libFuzzer targets (tools/fuzz/),
# with AddressSanitizer and UBSan, into build-fuzz/; not with -Werror: clang 19 warns inside
# GCC 12's libstdc++ in C++20. (vptr checks need RTTI, which LLVM's
# libraries are built without.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
type=${COCONET_BUILD_TYPE:-Release}
venv=${COCONET_VENV:-$root/.venv}
extended=$([[ ${COCONET_TEST_EXTENDED:-0} == 1 ]] && echo ON || echo OFF)
python=()
if [[ -x $venv/bin/python3 ]]; then
  python=("-DPython_EXECUTABLE=$venv/bin/python3")
fi

# The value of cache entry $2 in build directory $1 (empty if none).
cached() {
  sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt" 2>/dev/null || true
}

# configure DIR TYPE [CMAKE ARGS...]: configures DIR with Ninja, build type
# TYPE, warnings as errors, the venv's Python and the given arguments; a DIR
# already configured gets only the type, warnings and Python changed, where
# they differ.
configure() {
  local dir=$1 want=$2
  shift 2
  if [[ ! -f $dir/build.ninja ]]; then
    cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$want" \
      -DCOCONET_WERROR=ON -DCOCONET_TEST_EXTENDED="$extended" \
      "${python[@]}" "$@" >/dev/null
    return
  fi
  local have werror py tier jax jax_now
  have=$(cached "$dir" CMAKE_BUILD_TYPE)
  # jaxlib's FFI headers in the venv (tools/setup.sh --tests installs
  # JAX): coconet.jax's handler is built where they are, so that a build
  # configured before JAX came (or after it went) is configured again.
  jax=$(cached "$dir" COCONET_JAX_FFI_INCLUDE)
  jax_now=
  if [[ ${#python[@]} -gt 0 ]]; then
    local h
    for h in "$venv"/lib/python3*/site-packages/jaxlib/include/xla/ffi/api/ffi.h; do
      [[ -f $h ]] && jax_now=${h%/xla/ffi/api/ffi.h}
    done
  fi
  werror=$(cached "$dir" COCONET_WERROR)
  py=$(cached "$dir" Python_EXECUTABLE)
  tier=$(cached "$dir" COCONET_TEST_EXTENDED)
  if [[ $have != "$want" || $werror != ON ]]; then
    echo "build.sh: $dir was configured CMAKE_BUILD_TYPE=${have:-none}," \
      "COCONET_WERROR=${werror:-unset}; reconfiguring it $want with COCONET_WERROR=ON"
  elif [[ ${tier:-OFF} != "$extended" ]]; then
    echo "build.sh: $dir was configured with COCONET_TEST_EXTENDED=${tier:-OFF};" \
      "reconfiguring it with $extended"
  elif [[ ${#python[@]} -gt 0 && $py != "$venv/bin/python3" ]]; then
    echo "build.sh: $dir was configured with Python_EXECUTABLE=${py:-none};" \
      "reconfiguring it with $venv/bin/python3"
  elif [[ ${#python[@]} -gt 0 && $jax != "$jax_now" ]]; then
    echo "build.sh: $dir was configured with JAX's FFI headers at ${jax:-none};" \
      "now ${jax_now:-none}: reconfiguring it"
  else
    return 0
  fi
  # COCONET_BUILD_NO_RECONFIGURE (the README's test runs tools/demo.sh
  # while CTest runs from this tree): a build that would be reconfigured is
  # an error instead.
  if [[ -n ${COCONET_BUILD_NO_RECONFIGURE:-} ]]; then
    echo "build.sh: COCONET_BUILD_NO_RECONFIGURE is set: not reconfiguring $dir" >&2
    exit 1
  fi
  # The rest of its cache (compilers, options) stays as it is.
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE="$want" -DCOCONET_WERROR=ON \
    -DCOCONET_TEST_EXTENDED="$extended" "${python[@]}" >/dev/null
}

configure "$build" "$type"
cmake --build "$build" -j "$(nproc)"

fuzz_default=$([[ $extended == ON ]] && echo 1 || echo 0)
if [[ ${COCONET_FUZZ_BUILD:-$fuzz_default} != 0 ]] && command -v clang++-19 >/dev/null 2>&1; then
  fuzz=${COCONET_FUZZ_DIR:-$root/build-fuzz}
  # Configured every time, so that a tree made by an older build.sh gets
  # today's options.
  # -O1 and line tables only: a fifth less build time than -O2 -g, and
  # still symbolised reports. The compiler's libraries in batches of 8
  # files (COCONET_UNITY_BUILD): a third less build time again.
  cmake -S "$root" -B "$fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined" \
    -DCOCONET_FUZZ=ON -DCOCONET_BUILD_TESTS=OFF -DCOCONET_WERROR=OFF \
    -DCOCONET_UNITY_BUILD=ON -DCOCONET_UNITY_BATCH=8 >/dev/null
  cmake --build "$fuzz" -j "$(nproc)" --target coconet-fuzz
fi
