#!/usr/bin/env bash
# Times LAMB, AdamW and AdamW with global-norm clipping over a parameter
# list (stdlib/optim/lamb_layers.coco, adamw_layers.coco, clip.coco) and a
# global norm alone (tools/bench/norm.coco) on the CPU target, N = 2^24,
# with three segment tables: GPT-2 small's 148 tensors scaled to N (tools/scale-segments.py),
# one segment (T = 1) and 10,000 random segments; beside the memory floor
# of the optimizer's bytes and a hand-written per-tensor loop
# (tools/bench/layers_hand.cpp), in the same runs (tools/bench/bench_cpu.py
# describes the method). docs/bench/layers.md has the results.
#
#   tools/bench-layers.sh [--rounds 5] [--iterations 5] [--ranks 1,2]
#                         [--programs adamw,lamb,clip,norm]
#
# Needs tools/build.sh to have built the compiler and the runtime.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 iterations=5 ranks=1,2 programs=adamw,lamb,clip,norm
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2;;
    --iterations) iterations=$2; shift 2;;
    --ranks) ranks=$2; shift 2;;
    --programs) programs=$2; shift 2;;
    *) echo "bench-layers: unknown option $1" >&2; exit 2;;
  esac
done
n=16777216
work=${COCONET_BUILD_DIR:-$root/build}/bench-layers
mkdir -p "$work"
python3 "$root/tools/scale-segments.py" "$root/samples/gpt2_small.segments" \
  --total $n --out "$work/gpt2.segments"
echo $n > "$work/one.segments"
python3 - "$work/t10000.segments" $n <<'PY'
import random, sys
n = int(sys.argv[2]); rng = random.Random(10000)
cuts = sorted(rng.randrange(n + 1) for _ in range(9999))
lengths = [b - a for a, b in zip([0] + cuts, cuts + [n])]
open(sys.argv[1], "w").write("\n".join(map(str, lengths)) + "\n")
PY
for opt in ${programs//,/ }; do
  case $opt in
    adamw|lamb) file=$root/stdlib/optim/${opt}_layers.coco; tables="gpt2 one t10000";;
    clip) file=$root/stdlib/optim/clip.coco; tables="gpt2 one t10000";;
    norm) file=$root/tools/bench/norm.coco; tables=one;;
    *) echo "bench-layers: unknown program $opt" >&2; exit 2;;
  esac
  for table in $tables; do
    count=$(grep -c . "$work/$table.segments")
    driver="--segments layers=$work/$table.segments --set v=0.001"
    size=N=$n,T=$count
    [[ $opt == norm ]] && driver="" && size=N=$n
    python3 "$root/tools/bench/bench_cpu.py" --ranks "$ranks" \
      --rounds "$rounds" --iterations "$iterations" \
      --size "$size" \
      --hand "$root/tools/bench/layers_hand.cpp" \
      --hand-args "$opt $work/$table.segments" \
      --driver-args "$driver" \
      --label " [$table, T=$count]" \
      "$file"
    echo
  done
done
