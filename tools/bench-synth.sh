#!/usr/bin/env bash
# docs/bench/synth.md: each case of TACCL's commands.sh (test/synth/taccl/)
# synthesised by `coconetc synth`, beside the ring NCCL runs on a cycle of
# the same links (`--baseline=ring`), both timed by coconetc on the
# topology file's alpha-beta costs (microseconds for the profile's chunk
# size); synthesis time as measured. Prints a Markdown table.
#
#   tools/bench-synth.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${COCONET_BUILD_DIR:-$root/build}}
cc=$build/bin/coconetc
t=$root/test/synth/taccl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| case | synthesised | steps | ring | ring / synthesised | synthesis |"
echo "|---|---|---|---|---|---|"
while read -r kind coll size sketch; do
  k=$(tr 'A-Z' 'a-z' <<<"$kind")
  files=(--topology-file "$t/topo/topo-$k-$size.json" --sketch-file "$t/sketch/$sketch.json")
  start=$(date +%s.%N)
  line=$("$cc" synth "$kind" "$coll" "${files[@]}" -o "$tmp/a.json" 2>&1 | tail -1)
  end=$(date +%s.%N)
  us=$(sed -n 's/.* steps\{0,1\}, \([0-9.e+]*\) us on.*/\1/p' <<<"$line")
  steps=$(sed -n 's/.*: \([0-9]*\) steps\{0,1\}, .*/\1/p' <<<"$line")
  ring=$({ "$cc" synth "$kind" "$coll" "${files[@]}" --baseline=ring -o /dev/null 2>&1 || true; } |
    tail -1 | sed -n 's/.* steps\{0,1\}, \([0-9.e+]*\) us on.*/\1/p')
  ratio=$( [[ -n $ring ]] && python3 -c "print(f'{$ring/$us:.2f}x')" || echo "-")
  secs=$(python3 -c "print(f'{$end-$start:.2f} s')")
  echo "| $kind $coll $size $sketch | $us us | $steps | ${ring:-no ring} ${ring:+us} | $ratio | $secs |"
done <<'CASES'
DGX2 Allgather 1MB sk1-dgx2-n2
DGX2 Allgather 1KB sk2-dgx2-n2
NDv2 Allgather 1MB sk1-ndv2-n2
DGX2 Alltoall 1KB sk2-dgx2-n2
NDv2 Alltoall 1MB sk1-ndv2-n2
NDv2 Alltoall 1KB sk2-ndv2-n2
DGX2 Allreduce 1MB sk1-dgx2-n2
DGX2 Allreduce 1KB sk2-dgx2-n2
NDv2 Allreduce 1MB sk1-ndv2-n2
NDv2 Allgather 1MB sk1-ndv2-n4
NDv2 Allgather 1MB sk1-ndv2-n1
DGX2 Allgather 1MB sk-dgx2-n1
CASES
