#!/usr/bin/env bash
# Compiles what `coconetc --emit=driver` wrote into DIR into the executable
# DIR/NAME, against the runtime built by tools/build.sh:
#
#   tools/build-generated.sh cpu  DIR NAME   # mpicxx + OpenMP, the CPU target
#   tools/build-generated.sh cuda DIR NAME   # nvcc -arch=sm_90, one rank
#                                            # (COCONET_WITH_MPI=1: under MPI)
#   tools/build-generated.sh cuda-emu DIR NAME
#       the same .cu files with g++ against the CPU emulation of CUDA
#       (test/emu/: a testing aid), one MPI process per rank
#
# The flags are the ones the generated code is tested with: C++17, warnings
# as errors, and on the CPU tools/cpu-flags.txt (vectorised for this
# machine, no floating-point contraction: a fused multiply-add would round
# differently from the simulator).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
usage="usage: build-generated.sh cpu|cuda|cuda-emu DIR NAME"
target=${1:?$usage}
dir=${2:?$usage}
name=${3:?$usage}
rt=$build/runtime
inc=$root/runtime/include
case "$target" in
  cpu)
    # shellcheck disable=SC2046
    mpicxx -std=c++17 -fopenmp $(cat "$root/tools/cpu-flags.txt") -Wall -Wextra -Werror \
      -I"$inc" "$dir/$name.cpp" "$dir/${name}_main.cpp" -o "$dir/$name" \
      "$rt/libcoconet_rt_mpi.a" "$rt/libcoconet_rt_cpu.a" "$rt/libcoconet_rt.a"
    ;;
  cuda)
    cuda=${CUDA_HOME:-/usr/local/cuda}
    mpi=()
    libs=("$rt/libcoconet_rt_cuda.a" "$rt/libcoconet_rt.a")
    if [[ ${COCONET_WITH_MPI:-0} == 1 ]]; then
      mpi=(-DCOCONET_WITH_MPI $(mpicxx --showme:compile) -Xlinker
           "$(mpicxx --showme:link | tr ' ' ',')")
      libs=("$rt/libcoconet_rt_cuda_mpi.a" "$rt/libcoconet_rt_mpi.a" "${libs[@]}")
    fi
    "$cuda/bin/nvcc" -std=c++17 -O2 -arch=sm_90 -Werror all-warnings \
      -Xcompiler -Wall,-Wextra "${mpi[@]}" -I"$inc" \
      "$dir/$name.cu" "$dir/${name}_main.cu" -o "$dir/$name" \
      "${libs[@]}" -L"$cuda/lib64" -lnccl -lcublas -lcudart
    ;;
  cuda-emu)
    cuda=${CUDA_HOME:-/usr/local/cuda}
    emu=$build/test/emu
    # shellcheck disable=SC2046
    g++ -std=c++17 -O1 -x c++ -include coconet/emu/prelude.h -ffp-contract=off \
      -Wno-attributes -DCOCONET_WITH_MPI -I"$root/test/emu/include" -I"$inc" \
      -I"$cuda/include" $(mpicxx --showme:compile) \
      "$dir/$name.cu" "$dir/${name}_main.cu" -x none -o "$dir/$name" \
      "$emu/libcoconet_rt_cuda_emu.a" "$rt/libcoconet_rt_mpi.a" \
      "$emu/libcoconet_emu.a" "$rt/libcoconet_rt_cpu.a" "$rt/libcoconet_rt.a" \
      -lboost_context -fopenmp -pthread $(mpicxx --showme:link)
    ;;
  *)
    echo "build-generated.sh: unknown target '$target' (cpu, cuda or cuda-emu)" >&2
    exit 2
    ;;
esac
