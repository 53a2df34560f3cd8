#!/usr/bin/env bash
# CTest python-jax-train: test/python/jax_train.py on 2 ranks, and on 1 and
# 2 in the extended tier (a small transformer trained with coconet.jax's
# adamw and lamb against optax's; the modules built once into
# WORK_DIR/cache; one rank is the default tier's python-jax-optim, against
# optax on one rank). Exit status 77 (skipped) where JAX or coconet.jax's
# FFI handler is missing.
#   jax_train.sh PYTHON WORK_DIR [EXTENDED: 0 or 1]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=$1
work=$2
extended=${3:-0}
rm -rf "$work"
mkdir -p "$work"
"$python" "$here/jax_skip.py" || exit $?
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
counts="2"
if [[ $extended == 1 ]]; then
  counts="1 2"
fi
for ranks in $counts; do
  mpirun --oversubscribe -np "$ranks" "$python" "$here/jax_train.py" --cache "$work/cache"
done
