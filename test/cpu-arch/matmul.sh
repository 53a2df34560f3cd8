#!/usr/bin/env bash
# CTest matmul-arch: the exact matmul (runtime/src/cpu/matmul.cpp) has one
# register blocking per instruction set (AVX-512: 8 x 3 vectors of 8
# doubles; AVX: 4 x 3 of 4; otherwise 4 x 3 of 2, without FMA). The unit
# tests check the build's own; this builds tools/bench/matmul_cpu.cpp with
# matmul.cpp for x86-64-v2 (SSE only) and x86-64-v3 (AVX2 + FMA) and checks
# each against the loop every element was computed with before (one
# element at a time, k in order) on shapes that hit every edge: sizes of 1,
# sizes that are not multiples of the blocks, K over two panels, N over a
# column block, M over a task's rows. f64 inputs use all 53 bits, so a fused
# f64 multiply-add or a k panel out of order shows.
set -euo pipefail
src=${1:?source dir}; work=${2:?work dir}
fail() { echo "FAILED: $*"; exit 1; }
[[ $(uname -m) == x86_64 ]] || { echo "SKIPPED: not an x86-64 machine"; exit 77; }
command -v mpicxx >/dev/null || { echo "SKIPPED: no mpicxx (tools/setup.sh installs Open MPI)"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
shapes=(--naive 1,1,1 --naive 1,1,300 --naive 5,4,7 --naive 13,49,257
        --naive 17,31,600 --naive 9,500,3 --naive 800,2,3 --naive 8,24,256)
flags=$(cat "$src/tools/cpu-flags.txt")
for arch in x86-64-v2 x86-64-v3; do
  if [[ $arch == x86-64-v3 ]] && ! grep -qw avx2 /proc/cpuinfo; then
    echo "$arch: skipped (this CPU has no AVX2)"; continue
  fi
  exe=$work/matmul-$arch
  # shellcheck disable=SC2086
  mpicxx -std=c++17 -fopenmp ${flags//-march=native/-march=$arch} \
    -I"$src/runtime/include" -I"$src/runtime/src" \
    "$src/runtime/src/cpu/matmul.cpp" "$src/runtime/src/cpu/convert.cpp" \
    "$src/tools/bench/matmul_cpu.cpp" -o "$exe" >"$work/$arch.log" 2>&1 \
    || { cat "$work/$arch.log"; fail "compiling for $arch"; }
  for threads in 1 2; do
    OMP_NUM_THREADS=$threads "$exe" --no-peak --repeats 1 "${shapes[@]}" \
      >"$work/$arch-$threads.csv" 2>"$work/$arch-$threads.err" \
      || { cat "$work/$arch-$threads.err"; fail "$arch, $threads threads: matmul differs from the element-wise loop"; }
  done
  echo "$arch: $(grep -c '^naive' "$work/$arch-1.csv") products equal the element-wise loop on 1 and 2 threads"
done
echo "matmul-arch: ok"
