#!/usr/bin/env bash
# Regenerates the drawings in docs/img/ (embedded in docs/report.md) from the
# built compiler: coconetc --emit=dot for each sample schedule below, laid
# out by Graphviz's dot (tools/setup.sh installs it).
#
#   tools/render-schedules.sh            # needs build/bin/coconetc
#   COCONET_BUILD_DIR=out tools/render-schedules.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
coconetc=${COCONET_BUILD_DIR:-$root/build}/bin/coconetc
out=$root/docs/img

if ! command -v dot >/dev/null; then
  echo "render-schedules: Graphviz 'dot' is missing (run tools/setup.sh)" >&2
  exit 1
fi
if [[ ! -x $coconetc ]]; then
  echo "render-schedules: no $coconetc (run tools/build.sh)" >&2
  exit 1
fi

# sample schedule
drawings=(
  "adam ar_c"
  "adam rs_c_ag"
  "adam fused_rs_c_ag"
  "megatron_mlp overlapped"
)

mkdir -p "$out"
for d in "${drawings[@]}"; do
  read -r sample schedule <<<"$d"
  svg=$out/$sample-$schedule.svg
  "$coconetc" --emit=dot --schedule "$schedule" "$root/samples/$sample.coco" |
    dot -Tsvg -o "$svg"
  echo "render-schedules: wrote ${svg#"$root"/}"
done
