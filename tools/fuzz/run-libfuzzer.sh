#!/usr/bin/env bash
# Runs the libFuzzer target for a short, fixed number of runs over the
# samples as seed corpus. Exits 77 (CTest: skipped) when the target was not
# built (no clang++-19).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/build-fuzz/tools/coconet-fuzz}
runs=${2:-20000}
if [[ ! -x $bin ]]; then
  echo "libFuzzer target not built ($bin missing; needs clang++-19): skipped"
  exit 77
fi
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$root"/samples/*.coco "$root"/stdlib/*/*.coco "$corpus"/ 2>/dev/null || true
"$bin" -runs="$runs" -seed=1 -max_len=4096 -timeout=10 "$corpus" 2>&1 | tail -n 5
