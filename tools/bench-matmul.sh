#!/usr/bin/env bash
# Times the CPU target's exact matmul (runtime/src/cpu/matmul.cpp) against
# the cores' f64 FMA peak and OpenBLAS dgemm and sgemm (through numpy) on
# the same shapes, in one run, on 1 and 2 threads (tools/bench/matmul.py
# describes the method and the table).
#
#   tools/bench-matmul.sh [--threads 1,2] [--repeats 5] \
#       [--shape M,N,K[,BATCH]]... [--markdown FILE]
#
# Builds the runtime libraries in the build directory ($COCONET_BUILD_DIR,
# else build/; tools/build.sh configures it) and the harness with mpicxx and
# tools/cpu-flags.txt. OpenBLAS comes from the numpy of $PYTHON (else
# python3); `pip install numpy threadpoolctl` gives a current one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
[[ -f $build/CMakeCache.txt ]] ||
  { echo "bench-matmul: $build is not configured (tools/build.sh)" >&2; exit 2; }
python=${PYTHON:-python3}
"$python" -c 'import numpy' 2>/dev/null ||
  { echo "bench-matmul: $python has no numpy (pip install numpy threadpoolctl)" >&2; exit 2; }
cmake --build "$build" --target coconet_rt_cpu >/dev/null
work=$build/bench-matmul
mkdir -p "$work"
# shellcheck disable=SC2046
mpicxx -std=c++17 -fopenmp $(cat "$build/cpu-flags.txt") -I"$root/runtime/include" \
  "$root/tools/bench/matmul_cpu.cpp" -o "$work/matmul_cpu" \
  "$build/runtime/libcoconet_rt_cpu.a" "$build/runtime/libcoconet_rt.a"
exec "$python" "$root/tools/bench/matmul.py" "$work/matmul_cpu" --python "$python" "$@"
