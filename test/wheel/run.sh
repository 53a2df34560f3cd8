#!/usr/bin/env bash
# CTest wheel (extended tier): `pip wheel` of the source tree, installed into
# a clean virtual environment (no system site packages, no index), then used
# from outside the tree with nothing but the standard library: coconetc on the
# PATH, `python3 -m coconet build`, coconet.cache building the standard
# library's SGD, each step called with array.array buffers on one rank
# (check.py). docs/python.md, "Installing with pip".
#   run.sh SOURCE_DIR WORK_DIR PYTHON
set -euo pipefail
src=$1
work=$2
python=$3
rm -rf "$work"
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$python" -m pip wheel "$src" -w "$work/dist" --no-deps -q
/usr/bin/python3 -m venv "$work/env"
"$work/env/bin/pip" install -q --no-deps --no-index "$work"/dist/coconet-*.whl
cd "$work"
"$work/env/bin/coconetc" --help | head -1
"$work/env/bin/python3" -m coconet build "$src/samples/python/adam.coco" --program adam -o mods
"$work/env/bin/python3" "$src/test/wheel/check.py" mods
