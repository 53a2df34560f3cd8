#!/usr/bin/env bash
# The cost of calling a generated step from Python: samples/python/adam.coco
# (unscheduled) on the CPU target, per step, called from Python with NumPy
# arrays and with torch tensors (tools/bench/python_overhead.py), and from
# C++ directly (the generated driver's --iterations loop, which calls
# operator() on its own blocks), in the same run, on 1 and 2 MPI ranks, at
# sizes per rank where the step itself is nothing (N = 1) and small.
#
#   tools/bench-python.sh [--sizes 1,4096,65536] [--ranks 1,2]
#
# Prints a table: microseconds per step and the difference Python - C++
# (the overhead of the module: the checks, DLPack, the call). Needs
# tools/build.sh (the coconet package in build/python).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
sizes=1,4096,65536 ranks=1,2
while [[ $# -gt 0 ]]; do
  case $1 in
    --sizes) sizes=$2; shift 2;;
    --ranks) ranks=$2; shift 2;;
    *) echo "bench-python: unknown option $1" >&2; exit 2;;
  esac
done
python=$(sed -n 's/^COCONET_PYTHON_EXECUTABLE:INTERNAL=//p' "$build/CMakeCache.txt")
[[ -n $python ]] || { echo "bench-python: the coconet package is not built" >&2; exit 2; }
work=$build/bench-python
rm -rf "$work" && mkdir -p "$work"
export PYTHONPATH=$build/python OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
src=$root/samples/python/adam.coco
"$python" -m coconet build "$src" --program adam -o "$work" >/dev/null
# The C++ reference: the driver, built with the flags of the module.
"$build/bin/coconetc" --emit=driver --target=cpu --program adam -o "$work/driver" "$src"
mpicxx -std=c++17 -fopenmp $(cat "$build/cpu-flags.txt") -I"$root/runtime/include" \
  "$work/driver/adam.cpp" "$work/driver/adam_main.cpp" -o "$work/driver/adam" \
  "$build/runtime/libcoconet_rt_mpi.a" "$build/runtime/libcoconet_rt_cpu.a" "$build/runtime/libcoconet_rt.a"
echo "coconet module call overhead: samples/python/adam.coco (unscheduled), CPU target, $(getconf _NPROCESSORS_ONLN) cores"
printf '%-6s %-10s %12s %12s %12s %12s\n' ranks "N/rank" "C++ us" "NumPy us" "torch us" "overhead us"
for r in ${ranks//,/ }; do
  py=$(mpirun --oversubscribe -np "$r" "$python" "$root/tools/bench/python_overhead.py" \
         --modules "$work" --module adam --sizes "$sizes")
  for n in ${sizes//,/ }; do
    iters=20000
    ((n >= 65536)) && iters=2000
    cpp=$(mpirun --oversubscribe -np "$r" "$work/driver/adam" --size N=$((n * r)) \
            --quiet --warmup 200 --iterations $iters --set v=0.001 |
          sed -n 's/.*, \([0-9.]*\) ms per step/\1/p')
    cpp_us=$(awk -v x="$cpp" 'BEGIN {printf "%.2f", 1000 * x}')
    np_us=$(awk -v n="$n" '$1 == n && $2 == "numpy" {print $3}' <<<"$py")
    torch_us=$(awk -v n="$n" '$1 == n && $2 == "torch" {print $3}' <<<"$py")
    over=$(awk -v a="$np_us" -v b="$cpp_us" 'BEGIN {printf "%.2f", a - b}')
    printf '%-6s %-10s %12s %12s %12s %12s\n' "$r" "$n" "$cpp_us" "$np_us" "${torch_us:--}" "$over"
  done
done
