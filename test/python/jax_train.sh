#!/usr/bin/env bash
# CTest python-jax-train: test/python/jax_train.py on 1 and 2 ranks (a small
# transformer trained with coconet.jax's adamw and lamb against optax's;
# the modules built once into WORK_DIR/cache). Exit status 77 (skipped)
# where JAX or coconet.jax's FFI handler is missing.
#   jax_train.sh PYTHON WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
"$python" "$here/jax_skip.py" || exit $?
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
for ranks in 1 2; do
  mpirun --oversubscribe -np "$ranks" "$python" "$here/jax_train.py" --cache "$work/cache"
done
