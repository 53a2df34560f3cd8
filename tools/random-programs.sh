#!/usr/bin/env bash
# The random-program suite at scale (not CI; the CTest random-programs runs
# --count 3000 --seed 1): COUNT random programs (default 10000) with their
# legal and illegal random schedules, seeded by SEED (default 2, so that
# the run does not repeat CI's programs), checked against the simulator as
# test/random/README.md describes. Runs at low priority; the whole output
# goes to build/random-programs-COUNT-SEED.log ($COCONET_BUILD_DIR instead
# of build), and the summary, the time and the case seed of every failure
# (rerun one with --case-seed X --print) are printed.
#
#   tools/random-programs.sh [COUNT] [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
count=${1:-10000}
seed=${2:-2}
bin=$build/test/coconet-random-programs
if [[ ! -x $bin ]]; then
  echo "random-programs.sh: $bin is not built" \
    "(cmake --build $build --target coconet-random-programs)" >&2
  exit 2
fi
log=$build/random-programs-$count-$seed.log
echo "random-programs.sh: $count programs, seed $seed; log $log"
start=$(date +%s)
status=0
nice -n 10 "$bin" --count "$count" --seed "$seed" >"$log" 2>&1 || status=$?
echo "wall time: $(($(date +%s) - start)) s on $(nproc) cores" \
  "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
grep -E '^[0-9]+ files|^applied:|^differential runs:|^[0-9]+ failures' "$log" || true
if ((status != 0)); then
  echo "failures (case seed: what):"
  sed -n 's/^FAIL: \(.*\) (case seed \([0-9]*\);.*/  \2: \1/p' "$log" | awk '!seen[$0]++'
  grep -E '^FAIL: fewer' "$log" || true
  exit "$status"
fi
