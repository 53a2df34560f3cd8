#!/usr/bin/env bash
# CTest make-rule (and part of CTest install): builds test/make-rule/Makefile
# with make in WORK, runs its application on 1 and 2 MPI ranks and the
# generated driver on 2 ranks (results checked against the simulator, bit
# for bit), checks that a second make does nothing and that a newer .coco
# regenerates; where nvcc and NCCL are (unless MAKE_RULE_CUDA=0), compiles
# and links the CUDA code.
#   run.sh SRC WORK COCONETC [MAKE VARIABLE=VALUE...]
# e.g. COCONET_BUILD_DIR=build (sources + build tree) or
# COCONET_MK=PREFIX/share/coconet/make/coconet.mk (installed). Skips (77)
# without mpirun.
set -euo pipefail
src=${1:?source dir}; work=${2:?work dir}; coconetc=${3:?coconetc}
shift 3
command -v mpirun >/dev/null || { echo "SKIPPED: mpirun is not installed"; exit 77; }
rm -rf "$work" && mkdir -p "$work/samples"
cp "$src/samples/adam.coco" "$work/samples/"
cd "$work"
mk=(make -f "$src/test/make-rule/Makefile" SAMPLES="$work/samples" "$@")

"${mk[@]}" | tee make.log
# The generating rule ran the coconetc this test names.
grep -q "^$coconetc --emit=driver --target=cpu --program adam --schedule rs_c_ag" make.log \
  || { echo "FAILED: make did not run $coconetc"; exit 1; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for np in 1 2; do
  out=$(mpirun --oversubscribe -np "$np" ./adam_step)
  echo "$out"
  grep -qx "adam_step on $np ranks: w\[0\] = [0-9.]* (expected [0-9.]*)" <<<"$out" \
    || { echo "FAILED: adam_step on $np ranks"; exit 1; }
done

# Every function of the generated code and of the runtime starts a 64-byte
# line (cpu-flags.txt's and the runtime's -falign-functions=64): else a hot
# loop's place in the cache lines moves with unrelated code, and schedules
# that run the same kernels measured up to 20% apart (SGD on one rank,
# 2026-11-28). GCC's split-off cold parts ([clone .cold]) are not entered.
unaligned=0 functions=0
while read -r addr _ name; do
  functions=$((functions + 1))
  if (( 16#$addr % 64 != 0 )); then
    echo "unaligned: $addr $name"
    unaligned=$((unaligned + 1))
  fi
done < <(nm -C adam_rs_c_ag | awk '$2 ~ /^[tTW]$/' |
         grep -E ' coconet::(generated|rt)::' | grep -vF '[clone .cold]')
(( functions > 100 && unaligned == 0 )) \
  || { echo "FAILED: $unaligned of $functions functions not on 64-byte lines"; exit 1; }
echo "$functions functions of the generated code and the runtime on 64-byte lines"

run=(--size N=512 --seed 3 --set v=0.001)
mpirun --oversubscribe -np 2 ./adam_rs_c_ag "${run[@]}" --output-dir results --quiet
"$coconetc" sim --schedule rs_c_ag --ranks=2 "${run[@]}" --check-outputs results \
  samples/adam.coco | tail -1

# Up to date: nothing to do; a newer source: the rule runs again.
"${mk[@]}" -q || { echo "FAILED: a second make would rebuild"; exit 1; }
# (Every file as old as coconetc, which the rule depends on too; then the
# source touched.)
find . -type f -exec touch -r "$coconetc" {} +
touch samples/adam.coco
if "${mk[@]}" -q; then echo "FAILED: a newer adam.coco does not regenerate"; exit 1; fi

cuda=${CUDA_HOME:-/usr/local/cuda}
if [[ ${MAKE_RULE_CUDA:-1} == 0 ]]; then
  echo "MAKE_RULE_CUDA=0: the CUDA rules not built"
elif [[ -x $cuda/bin/nvcc ]] && compgen -G "$cuda/lib*/libnccl.so*" >/dev/null; then
  "${mk[@]}" cuda
  echo "the CUDA code built with nvcc: adam_rs_c_ag_cuda"
else
  echo "no nvcc or NCCL in $cuda: the CUDA rules not built"
fi
