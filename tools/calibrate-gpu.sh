#!/usr/bin/env bash
# The GPU side of tools/calibrate-gpu.py: builds what `calibrate-gpu.py
# prepare DIR` wrote (with test/gpu/run.sh --build-only: the runtime and
# every case, nvcc for sm_90 unless CUDA_ARCH says otherwise) and times the
# runs of DIR/runs.tsv, one at a time, on the one GPU:
#
#   tools/calibrate-gpu.sh DIR [--phase calibrate|proof|all] [--no-build]
#                              [--deadline SECONDS]
#
# Writes DIR/times.tsv (CASE, SIZES, ROUND, MS per step: the driver's
# "--warmup W --iterations I" mean), DIR/gpu.txt (nvidia-smi) and
# DIR/calibrate.log. --deadline: start no run after that many seconds
# (those left are listed as not run), so that the times come back within a
# device call's limit.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
dir=""
phase=all
build=1
deadline=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --phase) phase=$2; shift ;;
    --no-build) build=0 ;;
    --deadline) deadline=$2; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "calibrate-gpu.sh: unknown option $1" >&2; exit 2 ;;
    *) dir=$1 ;;
  esac
  shift
done
case $phase in calibrate|proof|all) ;; *)
  echo "calibrate-gpu.sh: --phase is calibrate, proof or all, not '$phase'" >&2; exit 2 ;;
esac
if [[ -z $dir || ! -f $dir/runs.tsv ]]; then
  echo "calibrate-gpu.sh: DIR/runs.tsv not found: run tools/calibrate-gpu.py prepare DIR first" >&2
  exit 2
fi
dir=$(cd "$dir" && pwd)
log=$dir/calibrate.log
say() { printf '%s\n' "$*" | tee -a "$log"; }
start=$SECONDS
say "coconetc GPU calibration, $(date '+%Y-%m-%d %H:%M:%S %z'), phase $phase"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv > "$dir/gpu.txt" 2>&1
  sed 's/^/  /' "$dir/gpu.txt" | tee -a "$log"
else
  say "no nvidia-smi: no GPU to time on"
  exit 77
fi
if [[ $build == 1 ]]; then
  t0=$SECONDS
  if ! "$root/test/gpu/run.sh" --build-only --log "$dir/build.log" "$dir" > /dev/null 2>&1; then
    say "the build failed:"
    tail -40 "$dir/build.log" | tee -a "$log"
    exit 1
  fi
  say "built in $((SECONDS - t0)) s"
fi
bin=$dir/build/bin
# The libraries the programs were linked with (rpath) suffice; NCCL says why
# it fails.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
times=$dir/times.tsv
[[ -f $times ]] || printf '# CASE\tSIZES\tROUND\tMS\n' > "$times"
ran=0
skipped=0
failed=0
while IFS=$'\t' read -r kind c ph rounds warmup iterations sizes; do
  [[ $kind == time ]] || continue
  [[ $phase == all || $phase == "$ph" ]] || continue
  if [[ -n $deadline && $((SECONDS - start)) -ge $deadline ]]; then
    skipped=$((skipped + 1))
    say "not run (deadline): $c $sizes"
    continue
  fi
  for ((r = 1; r <= rounds; r++)); do
    text=$(timeout 120 "$bin/$c" --quiet --warmup "$warmup" --iterations "$iterations" \
           --size "$sizes" 2>&1 < /dev/null)
    rc=$?
    ms=$(printf '%s\n' "$text" | sed -n 's/.* \([0-9.]*\) ms per step$/\1/p' | tail -1)
    if [[ $rc != 0 || -z $ms ]]; then
      failed=$((failed + 1))
      say "FAILED: $c $sizes (exit $rc):"
      printf '%s\n' "$text" | tail -20 | sed 's/^/    /' | tee -a "$log"
      break
    fi
    printf '%s\t%s\t%s\t%s\n' "$c" "$sizes" "$r" "$ms" >> "$times"
    say "$c $sizes round $r: $ms ms per step"
  done
  ran=$((ran + 1))
done < "$dir/runs.tsv"
say "SUMMARY: $ran runs, $failed failed, $skipped not run, in $((SECONDS - start)) s"
[[ $failed == 0 ]]
