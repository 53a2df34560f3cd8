#!/usr/bin/env bash
# CTest cmake-rule: configures and builds test/cmake-rule with
# tools/cmake/Coconet.cmake against this build (its package,
# build/coconetConfig.cmake), then runs the application on 2 MPI ranks.
# First, the build tree's coconetc finds the standard library by itself
# (build/share/coconet/stdlib links to the sources' stdlib/). Skips (77)
# without mpirun.
set -euo pipefail
src=${1:?source dir}; build=${2:?coconetc build dir}; work=${3:?work dir}
command -v mpirun >/dev/null || { echo "SKIPPED: mpirun is not installed"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
printf 'import optim.momentum;\n' >"$work/probe.coco"
env -u COCONET_STDLIB "$build/bin/coconetc" --emit=none "$work/probe.coco"
cmake -S "$src/test/cmake-rule" -B "$work" -G Ninja \
  -DCOCONET_SOURCE_DIR="$src" -DCOCONET_BUILD_DIR="$build" >/dev/null
cmake --build "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --oversubscribe -np 2 "$work/use_sgd"
