#!/usr/bin/env bash
# Times one step of every schedule of a sample on the CPU target and prints
# a table (milliseconds per step, the slowest rank's time, the mean over
# --iterations steps after one untimed warm-up step).
#
#   tools/bench-cpu.sh [--ranks 1,2] [--size N=16777216] [--iterations 5] \
#       [--threads T] samples/adam.coco
#
# Every rank gets T OpenMP threads (default: cores / ranks, at least 1);
# ranks are not bound to cores (mpirun --bind-to none), so that a rank's
# threads can use the cores it was given.
# Needs tools/build.sh to have built the compiler and the runtime.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
coconetc=$build/bin/coconetc
ranks=1,2
size=N=16777216
iterations=5
threads=
while [[ $# -gt 1 ]]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "bench-cpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
sample=${1:?usage: bench-cpu.sh [options] FILE.coco}
work=$build/bench-cpu
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)

# The program's schedules, the unscheduled program first.
mapfile -t cases < <("$coconetc" --color=never "$sample" |
  sed -n -e 's/^program \([A-Za-z0-9_]*\).*/\1 -/p' \
         -e 's/^schedule \([A-Za-z0-9_]*\) for \([A-Za-z0-9_]*\).*/\2 \1/p')

echo "$(basename "$sample") on the CPU target, $size, $(uname -m), $cores cores,"
echo "$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
printf '%-28s %6s %8s %14s\n' "program / schedule" ranks threads "ms per step"
for c in "${cases[@]}"; do
  read -r program schedule <<<"$c"
  if [[ $schedule == - ]]; then
    name=$program; select=(--program "$program"); label="$program (unscheduled)"
  else
    name=${program}_$schedule; select=(--schedule "$schedule"); label="$program / $schedule"
  fi
  "$coconetc" --emit=driver --target=cpu "${select[@]}" -o "$work/$name" "$sample"
  "$root/tools/build-generated.sh" cpu "$work/$name" "$name"
  for r in ${ranks//,/ }; do
    t=${threads:-$(( cores / r > 0 ? cores / r : 1 ))}
    line=$(OMP_NUM_THREADS=$t mpirun --oversubscribe --bind-to none -np "$r" \
      "$work/$name/$name" --size "$size" --quiet --warmup 1 \
      --iterations "$iterations" | grep 'ms per step')
    ms=$(sed -n 's/.*, \([0-9.]*\) ms per step/\1/p' <<<"$line")
    printf '%-28s %6s %8s %14s\n' "$label" "$r" "$t" "$ms"
  done
done
