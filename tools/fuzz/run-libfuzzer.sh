#!/usr/bin/env bash
# A short libFuzzer run of one target over its seed corpus (CI; the CTests
# fuzz-libfuzzer-<target>): every input of test/fuzz/corpus/TARGET and of
# test/fuzz/regressions/TARGET (inputs that found bugs, kept by name), then
# mutated ones (seeded, so repeatable) up to $RUNS executions in all
# (default: about 10 s of each target here), at most $MAX_SECONDS (25).
#
#   tools/fuzz/run-libfuzzer.sh TARGET [ARTIFACT_DIR]
#
# TARGET: parse, schedule, npy, segments or machine
# (build-fuzz/tools/coconet-fuzz-TARGET,
# $COCONET_FUZZ_DIR instead of build-fuzz). New inputs go to a temporary
# directory, never into the repository; a crashing input is kept in
# ARTIFACT_DIR (default: the current directory). Exits 77 (CTest: skipped)
# when the target was not built (tools/build.sh builds it with clang++-19).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:?usage: run-libfuzzer.sh parse|schedule|npy|segments|machine [ARTIFACT_DIR]}
artifacts=${2:-.}
case $target in
  parse) dict=coco.dict max_len=4096 runs=5000 ;;
  schedule) dict=schedule.dict max_len=2048 runs=2500 ;;
  npy) dict=npy.dict max_len=4096 runs=200000 ;;
  segments) dict=segments.dict max_len=4096 runs=40000 ;;
  machine) dict=machine.dict max_len=4096 runs=4000 ;;
  *) echo "run-libfuzzer.sh: unknown target '$target'" >&2; exit 2 ;;
esac
runs=${RUNS:-$runs}
bin=${COCONET_FUZZ_DIR:-$root/build-fuzz}/tools/coconet-fuzz-$target
if [[ ! -x $bin ]]; then
  echo "libFuzzer target not built ($bin missing; needs clang++-19): skipped"
  exit 77
fi
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
log=$scratch/log
corpora=("$root/test/fuzz/corpus/$target")
[[ -d $root/test/fuzz/regressions/$target ]] &&
  corpora+=("$root/test/fuzz/regressions/$target")
# libFuzzer adds new inputs to the first directory only.
if ! "$bin" -runs="$runs" -seed=1 -max_len=$max_len -timeout=10 \
    -max_total_time=${MAX_SECONDS:-25} -dict="$root/tools/fuzz/$dict" \
    -artifact_prefix="$artifacts/$target-" -print_final_stats=1 \
    "$scratch" "${corpora[@]}" >"$log" 2>&1; then
  tail -n 60 "$log"
  echo "FAIL: coconet-fuzz-$target found a bug; the input is in $artifacts/"
  exit 1
fi
grep -E '^(INFO: seed corpus|#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec)' "$log" || tail -n 5 "$log"
