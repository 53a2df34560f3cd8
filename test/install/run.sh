#!/usr/bin/env bash
# CTest install: installs this build into a temporary prefix
# (cmake --install BUILD --prefix WORK/prefix) and uses it as an application
# outside the tree would:
#   1. the installed files name no path of the sources or the build;
#   2. the installed coconetc finds the installed standard library;
#   3. test/install/app: find_package(coconet) and coconet_add_program() with
#      a program imported from the standard library, built with CMake and
#      run on 1 and 2 MPI ranks; its driver run on 2 ranks and checked
#      against the simulator bit for bit;
#   4. the same step as a Python module (coconet_add_python_module) run
#      with the installed coconet package on 1 and 2 ranks;
#   5. test/make-rule/ built with the installed make rule (coconet.mk).
# Skips (77) without mpirun.
set -euo pipefail
src=${1:?source dir}; build=${2:?coconetc build dir}; work=${3:?work dir}
command -v mpirun >/dev/null || { echo "SKIPPED: mpirun is not installed"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
coconetc=$prefix/bin/coconetc
for f in bin/coconetc include/coconet/cpu/runtime.h "$libdir/cmake/coconet/coconetConfig.cmake" \
         share/coconet/stdlib/optim/momentum.coco share/coconet/make/coconet.mk; do
  [[ -f $prefix/$f ]] || fail "$f is not installed"
done
for lib in "$build"/runtime/libcoconet_rt*.a; do
  [[ -f $prefix/$libdir/${lib##*/} ]] || fail "${lib##*/} is not installed"
done
echo "installed into $prefix: $(find "$prefix" -type f | wc -l) files"

# 1. Relocatable: no text file refers to the sources or the build.
if grep -rIl -e "$src/" -e "$build/" "$prefix"; then
  fail "the installed files above name the source or build directory"
fi

# 2. The standard library next to the installed coconetc.
printf 'import optim.missing_module;\n' >"$work/probe.coco"
if "$coconetc" "$work/probe.coco" 2>"$work/probe.err"; then fail "probe compiled"; fi
grep -qF "looked in $work, $prefix/share/coconet/stdlib)" "$work/probe.err" \
  || { cat "$work/probe.err"; fail "the installed coconetc looks elsewhere for its stdlib"; }

# 3. An application built against the installation with CMake.
app=$work/app
cmake -S "$src/test/install/app" -B "$app" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/configure.log" || { cat "$work/configure.log"; fail "configuring the app"; }
grep -F -- "-- coconet package: $prefix/$libdir/cmake/coconet" "$work/configure.log" \
  || fail "find_package did not find the installed package"
cmake --build "$app" -- -v >"$work/app-build.log" \
  || { cat "$work/app-build.log"; fail "building the app"; }
grep -qF "&& $coconetc --emit=code --target=cpu --schedule momentum_rs_c_ag" "$work/app-build.log" \
  || fail "the app's build did not run the installed coconetc"
if grep -e "$src/runtime/include" -e "$build/runtime/" -e "$build/bin/" "$work/app-build.log"; then
  fail "the app's build used the sources or the build tree"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$app/rt_check"
for np in 1 2; do
  out=$(mpirun --oversubscribe -np "$np" "$app/train")
  echo "$out"
  grep -qx "train on $np ranks: w\[0\] = [0-9.]* (expected [0-9.]*)" <<<"$out" \
    || fail "train on $np ranks"
done
run=(--size N=256 --seed 5 --set vel=0.25)
mpirun --oversubscribe -np 2 "$app/momentum_driver" "${run[@]}" --output-dir "$work/results" --quiet
"$coconetc" sim --program sgd_momentum --schedule momentum_rs_c_ag --ranks=2 "${run[@]}" \
  --check-outputs "$work/results" "$src/test/install/app/train.coco" | tail -1

# 4. The Python module of the same step (coconet_add_python_module), with
#    the installed coconet package, where it was built.
if [[ -d $prefix/$libdir/coconet/python/coconet ]]; then
  python=$(sed -n 's/^COCONET_PYTHON_EXECUTABLE:INTERNAL=//p' "$build/CMakeCache.txt")
  [[ -f $app/momentum_py/sgd_momentum_momentum_rs_c_ag.py ]] \
    || fail "coconet_add_python_module did not write the module"
  for np in 1 2; do
    out=$(PYTHONPATH=$prefix/$libdir/coconet/python:$app/momentum_py \
          mpirun --oversubscribe -np "$np" "$python" "$src/test/install/app/train.py")
    echo "$out"
    grep -qx "train.py on $np ranks: w\[0\] = [0-9.]* (expected [0-9.]*)" <<<"$out" \
      || fail "train.py on $np ranks"
  done
fi

# 5. The Makefile rule, installed.
# (The make-rule test builds its CUDA rules; the CPU ones check the paths.)
MAKE_RULE_CUDA=0 "$src/test/make-rule/run.sh" "$src" "$work/make" "$coconetc" \
  COCONET_MK="$prefix/share/coconet/make/coconet.mk"
echo "install: ok"
