#!/usr/bin/env bash
# docs/bench/synth.md, "By size": each TACCL case with a 1 MB profile
# (test/synth/taccl/) synthesised once at its profile, then it and the
# ring and tree NCCL runs (`--baseline=ring|tree`) re-timed by
# coconetc on the profile's alpha-beta costs scaled to each size: every
# beta (node and remote, and the beta part of each invbw) times S / 1 MB,
# every alpha kept. Both are timed by the same model (docs/synth.md,
# "Synthesis"); neither is a measurement. Prints a Markdown table.
#
#   tools/bench-synth-sizes.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${COCONET_BUILD_DIR:-$root/build}}
cc=$build/bin/coconetc
t=$root/test/synth/taccl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sizes=(1024 32768 1048576 33554432 1073741824)
names=("1 KB" "32 KB" "1 MB" "32 MB" "1 GB")

# scale FILE FACTOR OUT: the topology file with every beta times FACTOR.
scale() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
src, f, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
t = json.load(open(src))
if "node_betas_list" in t:
    b = t["node_betas_list"]
    t["node_invbws_list"] = [i - x + x * f for i, x in zip(t["node_invbws_list"], b)]
    t["node_betas_list"] = [x * f for x in b]
if "remote_beta" in t:
    t["remote_invbw"] = t["remote_invbw"] - t["remote_beta"] + t["remote_beta"] * f
    t["remote_beta"] = t["remote_beta"] * f
json.dump(t, open(out, "w"))
PY
}
# time_of FILE: the time_us an algorithm file records.
time_of() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['time_us'])" "$1"; }
# fmt US: 3 significant digits in us, ms or s.
fmt() {
  python3 -c "
v = float('$1')
for unit, d in (('s', 1e6), ('ms', 1e3), ('us', 1)):
    if v >= d or unit == 'us':
        print(f'{v / d:.3g} {unit}')
        break"
}

header="| case | algorithm |"
rule="|---|---|"
for n in "${names[@]}"; do header+=" $n |"; rule+="---|"; done
echo "$header"
echo "$rule"
while read -r kind coll sketch; do
  k=$(tr 'A-Z' 'a-z' <<<"$kind")
  topo=$t/topo/topo-$k-1MB.json
  sk=$t/sketch/$sketch.json
  "$cc" synth "$kind" "$coll" --topology-file "$topo" --sketch-file "$sk" -o "$tmp/s.json" 2>/dev/null
  # NCCL's algorithms for this collective: the ring (not for AllToAll) and
  # the tree (AllReduce only).
  bases=()
  [[ $coll != Alltoall ]] && bases+=(ring)
  [[ $coll == Allreduce ]] && bases+=(tree)
  srow="| $kind $coll $sketch | synthesised |"
  declare -A brow=()
  for b in "${bases[@]}"; do brow[$b]="| | $b |"; done
  qrow="| | NCCL's best / synthesised |"
  for s in "${sizes[@]}"; do
    scale "$topo" "$(python3 -c "print($s / 1048576)")" "$tmp/topo.json"
    "$cc" synth "$kind" "$coll" --topology-file "$tmp/topo.json" --sketch-file "$sk" \
      --algorithm-file "$tmp/s.json" -o "$tmp/st.json" 2>/dev/null
    a=$(time_of "$tmp/st.json")
    srow+=" $(fmt "$a") |"
    best=
    for b in "${bases[@]}"; do
      # A baseline's shape does not depend on the costs: built again on
      # the scaled ones (the tree's links are not the sketch's).
      if "$cc" synth "$kind" "$coll" --topology-file "$tmp/topo.json" --sketch-file "$sk" \
        --baseline="$b" -o "$tmp/b.json" 2>/dev/null; then
        v=$(time_of "$tmp/b.json")
        brow[$b]+=" $(fmt "$v") |"
        best=$(python3 -c "print(min(x for x in [$v, ${best:-$v}]))")
      else
        brow[$b]+=" - |"
      fi
    done
    if [[ -n $best ]]; then
      qrow+=" $(python3 -c "print(f'{$best/$a:.2f}x')") |"
    else
      qrow+=" - |"
    fi
  done
  echo "$srow"
  for b in "${bases[@]}"; do echo "${brow[$b]}"; done
  echo "$qrow"
  unset brow
done <<'CASES'
NDv2 Allgather sk1-ndv2-n1
NDv2 Allgather sk1-ndv2-n2
NDv2 Allgather sk1-ndv2-n4
NDv2 Alltoall sk1-ndv2-n2
NDv2 Allreduce sk1-ndv2-n1
NDv2 Allreduce sk1-ndv2-n2
DGX2 Allgather sk-dgx2-n1
DGX2 Allgather sk1-dgx2-n2
DGX2 Allreduce sk-dgx2-n1
DGX2 Allreduce sk1-dgx2-n2
CASES
