#!/usr/bin/env bash
# Builds what `coconetc --emit=driver --target=cpu` wrote into DIR and times
# one step, as `coconetc tune --measure` and tools/calibrate.py do:
#
#   measure-cpu.sh DIR NAME RANKS THREADS ITERATIONS [DRIVER OPTIONS...]
#
# compiles DIR/NAME.cpp and DIR/NAME_main.cpp into DIR/NAME (once; again
# when a source is newer) with the compiler, flags and runtime libraries of
# coconet.mk (an installation's, beside this script, or the sources'
# tools/make/coconet.mk with the build tree COCONET_BUILD_DIR, default
# build/), then runs it on RANKS MPI ranks of THREADS OpenMP threads each
# (mpirun --bind-to none) with --quiet --warmup 1 --iterations ITERATIONS
# and the driver options given (--size N=..., --staging). The driver prints
# "X ms per step" (the slowest rank's mean).
set -euo pipefail
usage="usage: measure-cpu.sh DIR NAME RANKS THREADS ITERATIONS [DRIVER OPTIONS...]"
dir=${1:?$usage}
name=${2:?$usage}
ranks=${3:?$usage}
threads=${4:?$usage}
iterations=${5:?$usage}
shift 5
# Installed: share/coconet/{measure-cpu.sh,make/coconet.mk}; in the
# sources (a build tree links to them): tools/{measure-cpu.sh,make/}.
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
mk=$here/make/coconet.mk
exe=$dir/$name
if [[ ! -x $exe || $dir/$name.cpp -nt $exe || $dir/${name}_main.cpp -nt $exe ]]; then
  # The compile line of coconet.mk's CPU rules, printed by make itself.
  mapfile -t vars < <(make -s --no-print-directory -f "$mk" -f - \
    coconet-measure-vars <<'MAKE'
coconet-measure-vars:
	@echo '$(COCONET_CPU_CXX)'
	@echo '$(COCONET_CPU_CXXFLAGS)'
	@echo '$(COCONET_CPU_LIBS)'
MAKE
  )
  # shellcheck disable=SC2086
  ${vars[0]} ${vars[1]} -I"$dir" "$dir/$name.cpp" "$dir/${name}_main.cpp" \
    -o "$exe" ${vars[2]}
fi
if [[ $(id -u) == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Open MPI's shared-memory messaging (ob1) unless the caller chose: its
# default probes UCX first, whose progress thread then competes with the
# OpenMP threads for the cores (on the 2-core development VM a step of
# 1 rank x 2 threads measured 0.8 us or 0.4-1.2 ms by chance; with ob1,
# 0.8 us every time). On one node ob1 is what moves the data either way.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
exec mpirun -np "$ranks" --oversubscribe --bind-to none \
  -x OMP_NUM_THREADS="$threads" \
  "$exe" --quiet --warmup 1 --iterations "$iterations" "$@"
