#!/usr/bin/env bash
# Times samples/moe_layer.coco's two layers on the CPU target beside the same
# layers written by hand in PyTorch (one process per rank over gloo) and
# the experts' matmuls alone at sgemm speed, in one run, and prints a table
# with the ratios; --tables overlap: the overlapped schedules against
# sequential; --tables fusion: the fused gathers against unfused, torch and
# the memory floor (tools/bench/bench_moe.py: options and method).
#
#   tools/bench-moe.sh [--ranks 1,2] [--tokens 4096] [--hidden 1024] \
#       [--iterations 3] [--tables layers,overlap,fusion]
#
# Needs tools/build.sh to have built the compiler and the runtime, and
# tools/setup.sh --tests (torch in .venv).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD:-$root/build}
python=$root/.venv/bin/python3
[[ -x $python ]] || python=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The floor's matmuls: $FLOOR_PYTHON's numpy (a pip numpy brings OpenBLAS;
# Debian's links the reference BLAS, as Debian's torch does).
exec "$python" "$root/tools/bench/bench_moe.py" --coconetc "$build/bin/coconetc" \
  --python "$python" --floor-python "${FLOOR_PYTHON:-$python}" --work "$work" "$@"
