#!/usr/bin/env bash
# Times synthesised collective algorithms run by the CPU runtime over MPI
# point-to-point (coconet::rt::cpu::runAlgorithm, docs/synth.md "Running an
# algorithm") against MPI's own collectives, f32 sums, on 2, 4 and 8 ranks
# of this machine: hub-and-spoke nodes of 2 and 4 GPUs (synthesised and
# ring) and TACCL's NDv2 node (8 ranks, its sk1-ndv2-n1 sketch, and the
# ring). Prints one table per rank count (tools/bench/algorithms.cpp).
#
#   tools/bench-algorithms.sh [--ranks 2,4,8] [--min BYTES] [--max BYTES] \
#       [--iterations N]
#
# Builds coconetc and the CPU runtime in the build directory
# ($COCONET_BUILD_DIR, else build/; tools/build.sh configures it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
ranks=2,4,8 args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2;;
    --min|--max|--iterations) args+=("$1" "$2"); shift 2;;
    *) echo "bench-algorithms: unknown option $1" >&2; exit 2;;
  esac
done
[[ -f $build/CMakeCache.txt ]] ||
  { echo "bench-algorithms: $build is not configured (tools/build.sh)" >&2; exit 2; }
cmake --build "$build" --target coconetc coconet_rt_cpu >/dev/null
work=$build/bench-algorithms
rm -rf "$work" && mkdir -p "$work"
coconetc=$build/bin/coconetc
taccl=$root/test/synth/taccl
hubs=$root/test/runtime/algorithms
headers=()
synth() { # NAME KIND COLLECTIVE TOPOLOGY SKETCH [ARGS...]
  local name=$1 kind=$2 coll=$3 topo=$4 sketch=$5
  shift 5
  "$coconetc" synth "$kind" "$coll" --topology-file "$topo" --sketch-file "$sketch" \
    "$@" --emit=cpp -o "$work/$name.h" 2>/dev/null
  headers+=("$work/$name.h")
}
for n in 2 4; do
  for c in Allgather ReduceScatter Allreduce; do
    synth "hub$n-$c" HubAndSpoke "$c" "$hubs/hub$n.json" "$hubs/sketch-n1.json"
    synth "hub$n-$c-ring" HubAndSpoke "$c" "$hubs/hub$n.json" "$hubs/sketch-n1.json" --baseline=ring
  done
  synth "hub$n-Alltoall" HubAndSpoke Alltoall "$hubs/hub$n.json" "$hubs/sketch-n1.json"
done
for c in Allgather ReduceScatter Allreduce Alltoall; do
  synth "ndv2-$c" NDv2 "$c" "$taccl/topo/topo-ndv2-1MB.json" "$taccl/sketch/sk1-ndv2-n1.json"
  [[ $c == Alltoall ]] ||
    synth "ndv2-$c-ring" NDv2 "$c" "$taccl/topo/topo-ndv2-1MB.json" "$taccl/sketch/sk1-ndv2-n1.json" --baseline=ring
done
list=$(IFS=';'; echo "${headers[*]}")
cmake -DOUT="$work/bench_algorithms.h" "-DHEADERS=$list" -DNAMESPACE=coconet_bench \
  -P "$hubs/list.cmake"
mpicxx -std=c++17 -fopenmp $(cat "$root/tools/cpu-flags.txt") -I"$root/runtime/include" \
  -I"$work" "$root/tools/bench/algorithms.cpp" -o "$work/algorithms" \
  "$build/runtime/libcoconet_rt_cpu.a" "$build/runtime/libcoconet_rt.a"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
echo "synthesised algorithms (coconet::rt::cpu::runAlgorithm) against MPI's own collectives: $(getconf _NPROCESSORS_ONLN) cores, $(mpirun --version | head -1)"
for r in ${ranks//,/ }; do
  echo
  OMP_NUM_THREADS=1 mpirun --bind-to none --oversubscribe -np "$r" \
    "$work/algorithms" ${args[@]+"${args[@]}"}
done
