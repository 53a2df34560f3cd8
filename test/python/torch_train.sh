#!/usr/bin/env bash
# CTest python-torch-train: test/python/torch_train.py on 2 ranks for 40
# steps (restored at 20), and in the extended tier on 1, 2 and 4 for 100
# (restored at 50) (a small transformer trained with each coconet.torch
# optimizer against torch's own, every step checked against torch's from
# the same state; the modules built once into WORK_DIR/cache). One rank is the default tier's python-torch-optim
# (every optimizer against torch.optim step by step, on one rank).
#   torch_train.sh PYTHON WORK_DIR [EXTENDED: 0 or 1]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=$1
work=$2
extended=${3:-0}
rm -rf "$work"
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# Every optimizer on 1 and 2 ranks; in the extended tier, on 4 (two cores
# oversubscribed) the two whose schedules shard and fuse, AdamW and LAMB.
counts="2"
steps=(--steps 40 --restore-at 20)
if [[ $extended == 1 ]]; then
  counts="1 2"
  steps=()
fi
for ranks in $counts; do
  mpirun --oversubscribe -np "$ranks" "$python" "$here/torch_train.py" --cache "$work/cache" \
    "${steps[@]}"
done
if [[ $extended == 1 ]]; then
  mpirun --oversubscribe -np 4 "$python" "$here/torch_train.py" --cache "$work/cache" \
    --optimizers adamw,lamb
fi
