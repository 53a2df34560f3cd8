#!/usr/bin/env bash
# Prepares the GPU check where the compiler is built (test/gpu/README.md):
#
#   test/gpu/prepare.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR holds bin/coconetc (default: build-dev, else build, in the
# repository); OUT_DIR receives the generated CUDA drivers, the simulator's
# expected results, manifest.tsv and a copy of the runtime and of test/gpu
# (default: build-gpu in the repository, which git ignores; carry it to the
# GPU machine). Needs python3. Exit status 0 when everything was prepared.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-}
if [[ -z $build ]]; then
  if [[ -x $root/build-dev/bin/coconetc ]]; then build=$root/build-dev
  else build=$root/build; fi
fi
out=${2:-$root/build-gpu}
if [[ ! -x $build/bin/coconetc ]]; then
  echo "prepare.sh: no $build/bin/coconetc: build the compiler first" >&2
  exit 2
fi
python=$(command -v python3 || true)
if [[ -z $python ]]; then
  echo "prepare.sh: python3 is needed" >&2
  exit 2
fi
exec "$python" "$here/prepare.py" --coconetc "$build/bin/coconetc" \
  --root "$root" --out "$out"
