#!/usr/bin/env bash
# The main job, from a fresh machine: install, build, then compile the Adam
# sample, print its checked IR, apply the ZeRO-style schedule rs_c_ag, run
# it on 4 simulated ranks and compare it with the unscheduled program; then
# generate its code for the CPU target, build it, run it on 4 MPI ranks and
# print its largest difference from the simulator; the same for the CUDA
# target on a GPU where one is present, else under the CPU emulation of
# CUDA (test/emu/), said to be emulated.
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
echo

# Code generation: the CPU target, run with real MPI processes, checked
# against the simulator (bit for bit); the CUDA target too where a GPU is.
out=${COCONET_BUILD_DIR:-$root/build}/demo
rm -rf "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "== coconetc --emit=driver --target=cpu --schedule rs_c_ag -o $out/cpu $(basename "$sample")"
"$coconetc" --emit=driver --target=cpu --schedule rs_c_ag -o "$out/cpu" "$sample"
ls "$out/cpu"
"$root/tools/build-generated.sh" cpu "$out/cpu" adam_rs_c_ag
echo "== mpirun -np 4 adam_rs_c_ag --size N=1024 --seed 1 --set v=0.001"
mpirun --oversubscribe -np 4 "$out/cpu/adam_rs_c_ag" --size N=1024 --seed 1 \
  --set v=0.001 --output-dir "$out/cpu/results"
echo "== coconetc sim --schedule rs_c_ag --ranks=4 --check-outputs $out/cpu/results"
"$coconetc" sim --schedule rs_c_ag --ranks=4 --size N=1024 --seed=1 \
  --set v=0.001 --check-outputs "$out/cpu/results" "$sample" | tail -4

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo
  echo "== the CUDA target on one GPU: $(nvidia-smi -L | head -1)"
  "$coconetc" --emit=driver --target=cuda --schedule rs_c_ag -o "$out/cuda" "$sample"
  "$root/tools/build-generated.sh" cuda "$out/cuda" adam_rs_c_ag
  "$out/cuda/adam_rs_c_ag" --size N=1048576 --seed 1 --set v=0.001 \
    --output-dir "$out/cuda/results"
  # Transcendentals (pow) differ from the host's libm by a few ulp.
  "$coconetc" sim --schedule rs_c_ag --ranks=1 --size N=1048576 --seed=1 \
    --set v=0.001 --check-outputs "$out/cuda/results" --check-ulps 64 \
    "$sample" | tail -4
else
  echo
  echo "== no GPU here: the CUDA target's code under the CPU EMULATION of CUDA"
  echo "   (test/emu/: the same .cu compiled with g++, NCCL on MPI; emulated,"
  echo "   not a GPU) on 4 MPI ranks"
  "$coconetc" --emit=driver --target=cuda --schedule rs_c_ag -o "$out/cuda-emu" "$sample"
  "$root/tools/build-generated.sh" cuda-emu "$out/cuda-emu" adam_rs_c_ag
  mpirun --oversubscribe -np 4 "$out/cuda-emu/adam_rs_c_ag" --size N=1024 \
    --seed 1 --set v=0.001 --output-dir "$out/cuda-emu/results" --quiet
  "$coconetc" sim --schedule rs_c_ag --ranks=4 --size N=1024 --seed=1 \
    --set v=0.001 --check-outputs "$out/cuda-emu/results" "$sample" | tail -4
fi
