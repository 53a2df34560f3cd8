#!/usr/bin/env bash
# The GPU check's CTests (test/CMakeLists.txt, test/gpu/README.md):
#
#   ctest.sh gpu   BUILD_DIR OUT_DIR   on a machine with a GPU: prepare.sh,
#                                      then run.sh (the whole check); without
#                                      one: "SKIPPED: no GPU", exit 77
#   ctest.sh build BUILD_DIR OUT_DIR   anywhere nvcc and NCCL are: prepare.sh,
#                                      the comparator against `coconetc sim
#                                      --check-outputs` on perturbed copies
#                                      of the expected results, then
#                                      run.sh --build-only of a few cases
#                                      ($COCONET_GPU_BUILD_ONLY, a regular
#                                      expression, where set; exit 77
#                                      without nvcc or NCCL)
set -u
set -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
if [[ $# != 3 || ($1 != gpu && $1 != build) ]]; then
  echo "usage: ctest.sh gpu|build BUILD_DIR OUT_DIR" >&2
  exit 2
fi
mode=$1
build=$2
out=$3

if [[ $mode == gpu ]]; then
  if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "SKIPPED: no GPU: the CTest 'gpu' prepares and runs the GPU check"
    echo "(test/gpu/README.md) only on a machine with an NVIDIA GPU; 'gpu-build'"
    echo "builds everything here without running it."
    exit 77
  fi
  "$here/prepare.sh" "$build" "$out" || exit 1
  exec "$here/run.sh" "$out"
fi

"$here/prepare.sh" "$build" "$out" || exit 1

# The comparator's units are those of `coconetc sim --check-ulps`: on copies
# of the expected results moved 3 places (every element), both must report
# the same largest difference per result and the same verdict at 2 ulp.
coconetc=$build/bin/coconetc
compare=$out/build/compare-check
mkdir -p "$out/build"
if ! c++ -std=c++17 -O2 -Wall -Wextra -Werror -I"$root/runtime/include" \
     "$here/compare.cpp" "$root"/runtime/src/npy.cpp "$root"/runtime/src/npy_header.cpp \
     "$root"/runtime/src/files.cpp "$root"/runtime/src/status.cpp "$root"/runtime/src/types.cpp -o "$compare"; then
  echo "FAILED: compare.cpp does not build"
  exit 1
fi
checked=0
bad=0
# One case for each set of result types (f16, bf16, f32, f64, integers,
# bool, as the manifest's `why` lines give them): the comparator's units
# and verdict depend on a result's type, not on the program (all 107 cases
# took half a minute, the same few sets over again).
declare -A done_case done_types
while IFS=$'\t' read -r kind c variant args; do
  [[ $kind == run && -z ${done_case[$c]:-} ]] || continue
  done_case[$c]=1
  types=$(awk -F'\t' -v c="$c" '$1=="why" && $2==c {print $4}' "$out/manifest.tsv" | sort -u | tr '\n' ' ')
  [[ -z ${done_types[$types]:-} ]] || continue
  done_types[$types]=1
  read -r _ _ _ _ file program schedule < <(awk -F'\t' -v c="$c" \
    '$1=="case" && $2==c {print $1, $2, $3, $4, $5, $6, $7}' "$out/manifest.tsv")
  sel=(--program "$program")
  [[ $schedule != - ]] && sel=(--schedule "$schedule")
  exp=$out/$c/expected/$variant
  pert=$out/build/cross/$c
  rm -rf "$pert"
  mkdir -p "$(dirname "$pert")"
  dt=$(awk -F'\t' -v c="$c" '$1=="why" && $2==c {printf "%s%s=%s", (n++ ? "," : ""), $3, $4}' "$out/manifest.tsv")
  tol=$(awk -F'\t' -v c="$c" '$1=="why" && $2==c {printf "%s%s=2", (n++ ? "," : ""), $3}' "$out/manifest.tsv")
  "$compare" --perturb 3 --dtypes "$dt" "$exp" "$pert" > /dev/null || { bad=$((bad + 1)); continue; }
  # shellcheck disable=SC2086 # the manifest's word list
  sim_out=$("$coconetc" --color=never sim "$root/$file" "${sel[@]}" $args \
              --check-outputs "$pert" --check-ulps 2)
  sim_rc=$?
  cmp_out=$("$compare" --tol "$tol" --dtypes "$dt" "$exp" "$pert")
  cmp_rc=$?
  # "  NAME: ... X ulp" (sim) and "  NAME: TYPE[...]: ... max X ulp" (compare)
  sim_ulps=$(echo "$sim_out" | sed -n 's/^  \([A-Za-z_0-9.]*\): [0-9]* of [0-9]* elements differ, max |diff| [^,]*, \([0-9.inf]*\) ulp.*$/\1 \2/p' | sort)
  # Integer and bool results are exact: sim gives them no ulps.
  floats=$(awk -F'\t' -v c="$c" '$1=="why" && $2==c && $4 ~ /^(f16|bf16|f32|f64)$/ {print $3}' "$out/manifest.tsv")
  cmp_ulps=$(echo "$cmp_out" | sed -n 's/^  \([A-Za-z_0-9.]*\): .* max \([0-9.inf]*\) ulp.*$/\1 \2/p' |
               awk -v keep="$(echo $floats)" 'BEGIN {n = split(keep, k, " "); for (i = 1; i <= n; i++) f[k[i]] = 1} f[$1]' | sort)
  checked=$((checked + 1))
  if [[ (-n $floats && -z $sim_ulps) || $sim_ulps != "$cmp_ulps" || $sim_rc != "$cmp_rc" ]]; then
    bad=$((bad + 1))
    echo "FAILED: comparator against coconetc sim on $c [$variant] moved 3 places:"
    echo "  sim (exit $sim_rc): $(echo "$sim_ulps" | tr '\n' ' ')"
    echo "  compare (exit $cmp_rc): $(echo "$cmp_ulps" | tr '\n' ' ')"
  else
    echo "ok: comparator agrees with coconetc sim on $c [$variant]: $(echo "$cmp_ulps" | tr '\n' ' ')(exit $cmp_rc at 2 ulp)"
  fi
done < "$out/manifest.tsv"
rm -rf "$out/build/cross"
echo "comparator against coconetc sim --check-outputs: $checked cases (one for each set of result types), $bad failed"
[[ $bad == 0 ]] || exit 1

# Built here: the comparator, runtime_test and a few cases (every case's
# .cu and _main.cu are compiled by nvcc with warnings as errors in the
# codegen-cuda tests already; these check the link line and run.sh's own
# build of a program): a fused collective, an overlap and an integer
# program. The runtime is CMake's (built with the same warnings as errors,
# for the same architecture): its nvcc compile was two thirds of this
# test's time. run.sh's list of the runtime's sources must be the one
# CMake built, so that a GPU machine's run.sh builds the same runtime.
rt_dir=$build/runtime
libs=()
if [[ -f $rt_dir/libcoconet_rt.a && -f $rt_dir/libcoconet_rt_cuda.a ]]; then
  want=$("$here/run.sh" --list-runtime-sources "$out" |
           awk '{n = split($2, p, "/"); print $1, p[n] ".o"}' | sort)
  have=$( { ar t "$rt_dir/libcoconet_rt.a" | grep -vx 'shim.cpp.o' | sed 's/^/rt /'
            ar t "$rt_dir/libcoconet_rt_cuda.a" | sed 's/^/rt_cuda /'; } | sort)
  if [[ $want != "$have" ]]; then
    echo "FAILED: run.sh's runtime sources differ from what CMake built into $rt_dir:"
    diff <(echo "$want") <(echo "$have") | sed 's/^/  /'
    exit 1
  fi
  echo "ok: run.sh's runtime sources are CMake's ($(echo "$want" | wc -l) files)"
  libs=(--runtime-libs "$rt_dir")
fi
# COCONET_GPU_BUILD_ONLY (the CTest's default tier: the fused collective
# alone) narrows the cases.
exec "$here/run.sh" --build-only "${libs[@]}" \
  --only "${COCONET_GPU_BUILD_ONLY:-^(adam_fused_rs_c_ag|megatron_mlp_overlapped|integers)\$}" \
  "$out"
