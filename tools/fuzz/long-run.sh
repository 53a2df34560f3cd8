#!/usr/bin/env bash
# A long libFuzzer run of one target (not CI): RUNS executions, one process,
# at low priority (the machine is shared), with the target's dictionary,
# starting from the repository's seed corpus.
#
#   tools/fuzz/long-run.sh TARGET RUNS [libFuzzer options...]
#   tools/fuzz/long-run.sh parse 1000000
#
# TARGET: parse, schedule, npy, segments or machine. The growing corpus, crash/timeout inputs
# and the log go under build-fuzz/long-run/TARGET/ ($COCONET_FUZZ_DIR
# instead of build-fuzz); the corpus is kept between runs, so a second run
# goes on from the first. At the end it prints what docs/testing.md
# records: executions, seconds, executions per second, corpus size,
# coverage (libFuzzer's cov: edges and ft: features) and the inputs it
# kept. Exit status: 0 when nothing was found, 1 when an input crashed,
# timed out or ran out of memory. tools/fuzz/update-corpus.sh TARGET then
# minimises the corpus into test/fuzz/corpus/TARGET/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:?usage: long-run.sh parse|schedule|npy|segments|machine RUNS [libFuzzer options...]}
runs=${2:?usage: long-run.sh TARGET RUNS [libFuzzer options...]}
shift 2
case $target in
  parse) dict=coco.dict max_len=4096 ;;
  schedule) dict=schedule.dict max_len=2048 ;;
  npy) dict=npy.dict max_len=4096 ;;
  segments) dict=segments.dict max_len=4096 ;;
  machine) dict=machine.dict max_len=4096 ;;
  *) echo "long-run.sh: unknown target '$target'" >&2; exit 2 ;;
esac
fuzz=${COCONET_FUZZ_DIR:-$root/build-fuzz}
bin=$fuzz/tools/coconet-fuzz-$target
if [[ ! -x $bin ]]; then
  echo "long-run.sh: $bin is not built (tools/build.sh, needs clang++-19)" >&2
  exit 2
fi
work=$fuzz/long-run/$target
mkdir -p "$work/corpus" "$work/artifacts"
log=$work/log-$(date +%Y%m%d-%H%M%S).txt
echo "long-run.sh: $target, $runs runs; log $log"
start=$(date +%s)
status=0
nice -n 10 "$bin" -runs="$runs" -max_len=$max_len -timeout=10 \
  -dict="$root/tools/fuzz/$dict" -artifact_prefix="$work/artifacts/" \
  -print_final_stats=1 -reload=0 "$@" \
  "$work/corpus" "$root/test/fuzz/corpus/$target" >"$log" 2>&1 || status=$?
end=$(date +%s)
seconds=$((end - start))
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
echo "machine:    $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "executions: ${execs:-?} in ${seconds} s ($(( ${execs:-0} / (seconds > 0 ? seconds : 1) )) exec/s)"
echo "last:       $last"
echo "corpus:     $(ls "$work/corpus" | wc -l) inputs in $work/corpus"
if ((status != 0)) || [[ -n $(ls "$work/artifacts") ]]; then
  echo "FOUND: see $log and $work/artifacts/:"
  ls "$work/artifacts"
  grep -E '^(==[0-9]+==ERROR|SUMMARY|==== coconet)' "$log" | head -n 5 || true
  exit 1
fi
echo "nothing found"
