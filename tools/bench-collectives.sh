#!/usr/bin/env bash
# Times allreduce, reducescatter and allgather of f32 sums on the CPU: MPI's
# own (not exact), the runtime's exact Mesh collectives (the cost model's
# "library" algorithm) and the team's one-shot and two-shot collectives on
# shared memory (cpu/team_collectives.h), for message sizes from 1 KiB to
# 64 MiB (powers of 4), on each rank count (tools/bench/team_collectives.cpp
# describes the method).
#
#   tools/bench-collectives.sh [--ranks 2,4] [--min 1024] [--max 67108864] \
#       [--iterations 200] [--csv FILE]
#
# Prints a table per rank count; --csv FILE also writes the lines
# `collective,algorithm,ranks,bytes,seconds` of every rank count to FILE
# (for fitting latency and bandwidth). Each rank runs OMP_NUM_THREADS
# threads: the cores over the ranks (at least 1) unless it is set. Builds
# the runtime libraries in the build directory ($COCONET_BUILD_DIR, else
# build/; tools/build.sh configures it) and the program with mpicxx and
# tools/cpu-flags.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
ranks=2,4 args=() csv=
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2;;
    --min|--max|--iterations) args+=("$1" "$2"); shift 2;;
    --csv) csv=$2; shift 2;;
    *) echo "bench-collectives: unknown option $1" >&2; exit 2;;
  esac
done
[[ -f $build/CMakeCache.txt ]] ||
  { echo "bench-collectives: $build is not configured (tools/build.sh)" >&2; exit 2; }
cmake --build "$build" --target coconet_rt_cpu >/dev/null
work=$build/bench-collectives
mkdir -p "$work"
mpicxx -std=c++17 -fopenmp $(cat "$root/tools/cpu-flags.txt") -I"$root/runtime/include" \
  "$root/tools/bench/team_collectives.cpp" -o "$work/team_collectives" \
  "$build/runtime/libcoconet_rt_cpu.a" "$build/runtime/libcoconet_rt.a"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(getconf _NPROCESSORS_ONLN)
if [[ -n $csv ]]; then
  echo "collective,algorithm,ranks,bytes,seconds" > "$csv"
fi
echo "team collectives against MPI: $cores cores"
for r in ${ranks//,/ }; do
  threads=${OMP_NUM_THREADS:-$(( cores / r > 0 ? cores / r : 1 ))}
  echo
  OMP_NUM_THREADS=$threads mpirun --bind-to none --oversubscribe -np "$r" \
    "$work/team_collectives" ${args[@]+"${args[@]}"} ${csv:+--csv-file "$csv"}
done
