#!/usr/bin/env bash
# The main job, from a fresh machine: install, build, then compile the Adam
# sample, print its checked IR, apply the ZeRO-style schedule rs_c_ag, run
# it on 4 simulated ranks and compare it with the unscheduled program.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/setup.sh"
"$root/tools/build.sh" >/dev/null
coconetc=${COCONET_BUILD_DIR:-$root/build}/bin/coconetc
sample=$root/samples/adam.coco

echo "== coconetc --emit=ir $(basename "$sample")"
"$coconetc" --emit=ir "$sample"
echo
echo "== coconetc sim --ranks=4 $(basename "$sample")"
# v, the second moment, must not be negative: start it at 0.001.
"$coconetc" sim --ranks=4 --size N=1024 --seed=1 --set v=0.001 "$sample"
echo
echo "== coconetc --schedule rs_c_ag $(basename "$sample")"
"$coconetc" --verify-each --schedule rs_c_ag "$sample"
echo
echo "== coconetc sim --schedule rs_c_ag --compare-unscheduled --ranks=4 $(basename "$sample")"
"$coconetc" sim --schedule rs_c_ag --compare-unscheduled --ranks=4 --size N=1024 \
  --seed=1 --set v=0.001 "$sample"
