#!/usr/bin/env bash
# The Python samples (samples/python/) as a test: builds the three Adam
# modules of samples/python/adam.coco with `python3 -m coconet build`, then
# on 2 MPI ranks trains the MLP against torch.optim.Adam (train_mlp.py:
# the schedules equal bit for bit, within the stated bound of torch) and
# runs the NumPy example.
#   samples.sh PYTHON WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
python=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
for schedule in "" rs_c_ag fused_rs_c_ag; do
  "$python" -m coconet build "$root/samples/python/adam.coco" --program adam \
    ${schedule:+--schedule "$schedule"} -o "$work"
done
mpirun --oversubscribe -np 2 "$python" "$root/samples/python/train_mlp.py" \
  --modules "$work" --steps 200
mpirun --oversubscribe -np 2 "$python" "$root/samples/python/numpy_adam.py" \
  --modules "$work"
