#!/usr/bin/env bash
# Times LAMB and AdamW over a parameter list (stdlib/optim/lamb_layers.coco,
# adamw_layers.coco) on the CPU target, N = 2^24, with three segment
# tables: GPT-2 small's 148 tensors scaled to N (tools/scale-segments.py),
# one segment (T = 1) and 10,000 random segments; beside the memory floor
# of the optimizer's bytes and a hand-written per-tensor loop
# (tools/bench/layers_hand.cpp), in the same runs (tools/bench/bench_cpu.py
# describes the method). docs/bench/layers.md has the results.
#
#   tools/bench-layers.sh [--rounds 5] [--iterations 5] [--ranks 1,2]
#
# Needs tools/build.sh to have built the compiler and the runtime.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 iterations=5 ranks=1,2
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2;;
    --iterations) iterations=$2; shift 2;;
    --ranks) ranks=$2; shift 2;;
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
for opt in adamw lamb; do
  for table in gpt2 one t10000; do
    count=$(grep -c . "$work/$table.segments")
    python3 "$root/tools/bench/bench_cpu.py" --ranks "$ranks" \
      --rounds "$rounds" --iterations "$iterations" \
      --size N=$n,T=$count \
      --hand "$root/tools/bench/layers_hand.cpp" \
      --hand-args "$opt $work/$table.segments" \
      --driver-args "--segments layers=$work/$table.segments --set v=0.001" \
      --label " [$table, T=$count]" \
      "$root/stdlib/optim/${opt}_layers.coco"
    echo
  done
done
