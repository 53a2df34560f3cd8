#!/usr/bin/env bash
# Times one step of every schedule of a sample on the CPU target beside
# hand-written references and the memory floor, in one run, and prints a
# table with the ratios (tools/bench/bench_cpu.py: options and method).
#
#   tools/bench-cpu.sh [--ranks 1,2] [--size N=16777216] [--iterations 10] \
#       [--rounds 7] [--threads T] samples/adam.coco
#
# Needs tools/build.sh to have built the compiler and the runtime.
set -euo pipefail
exec python3 "$(dirname "$0")/bench/bench_cpu.py" "$@"
