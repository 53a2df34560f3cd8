#!/usr/bin/env bash
# CTest cmake-rule: configures and builds test/cmake-rule with
# tools/cmake/Coconet.cmake against this build, then runs the application
# on 2 MPI ranks. Skips (77) without mpirun.
set -euo pipefail
src=${1:?source dir}; build=${2:?coconetc build dir}; work=${3:?work dir}
command -v mpirun >/dev/null || { echo "SKIPPED: mpirun is not installed"; exit 77; }
rm -rf "$work"
cmake -S "$src/test/cmake-rule" -B "$work" -G Ninja \
  -DCOCONET_SOURCE_DIR="$src" -DCOCONET_BUILD_DIR="$build" >/dev/null
cmake --build "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --oversubscribe -np 2 "$work/use_sgd"
