#!/usr/bin/env bash
# Runs an MPI test program on N processes: run-mpi.sh N PROGRAM [ARGS...].
# Exits 77 (CTest: skipped) when mpirun is missing. As root, OpenMPI needs
# --allow-run-as-root; --oversubscribe allows more ranks than cores.
set -euo pipefail
np=$1
shift
if ! command -v mpirun >/dev/null 2>&1; then
  echo "skipped: mpirun not found (tools/setup.sh installs openmpi-bin)"
  exit 77
fi
exec mpirun --allow-run-as-root --oversubscribe -np "$np" "$@"
