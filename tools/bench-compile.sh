#!/usr/bin/env bash
# Times the compiler on large generated programs (tools/gen-large-program.py)
# and prints a table: stages, seconds for --emit=ir (parse, sema, the
# cleanup passes, the IR printed) and for --emit=code --target=cpu (also
# lowering and code generation), the median of --runs runs, and the time
# per 10,000 stages (flat when the compiler is linear).
#
#   tools/bench-compile.sh [--runs 3] [10000 20000 40000]
#
# Needs tools/build.sh to have built the compiler.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COCONET_BUILD_DIR:-$root/build}
coconetc=$build/bin/coconetc
runs=3
if [[ ${1:-} == --runs ]]; then runs=$2; shift 2; fi
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10000 20000 40000)
work=$build/bench-compile
mkdir -p "$work"

# The median of `runs` wall-clock times of a command, in seconds.
median() {
  local times=() i start end
  for ((i = 0; i < runs; ++i)); do
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.3f", b - a}')")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

echo "coconetc on generated programs, $(uname -m), $(nproc) cores,"
echo "$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1); median of $runs runs"
printf '%8s %10s %14s %10s %16s\n' stages "ir (s)" "ir per 10k (s)" \
  "code (s)" "code per 10k (s)"
for n in "${sizes[@]}"; do
  python3 "$root/tools/gen-large-program.py" "$n" >"$work/large-$n.coco"
  ir=$(median "$coconetc" --emit=ir "$work/large-$n.coco")
  code=$(median "$coconetc" --emit=code --target=cpu -o "$work/out-$n" \
    "$work/large-$n.coco")
  per() { awk -v t="$1" -v n="$n" 'BEGIN{printf "%.3f", t * 10000 / n}'; }
  printf '%8s %10s %14s %10s %16s\n' "$n" "$ir" "$(per "$ir")" "$code" \
    "$(per "$code")"
done
