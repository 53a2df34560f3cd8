#!/usr/bin/env bash
# CTest cpu-arch: a packager's build names the instruction set
# (-DCOCONET_CPU_ARCH=...), so the package does not run only on CPUs like
# the builder's:
#   1. configured with COCONET_CPU_ARCH=x86-64-v2 (tests off), the build's
#      cpu-flags.txt (what is installed) and the runtime's exact combines
#      say -march=x86-64-v2, nowhere -march=native; the combine compiles;
#   2. the default is native;
#   3. a value that is not an architecture name is refused at configure
#      time, with a message that names the option.
set -euo pipefail
src=${1:?source dir}; work=${2:?work dir}
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
# (The CUDA runtime is not what this checks: without it each configure
# skips nvcc's identification, several seconds of the three.)
gen=(-G Ninja -DCOCONET_BUILD_TESTS=OFF -DCOCONET_RUNTIME_CUDA=OFF)

b=$work/v2
cmake -S "$src" -B "$b" "${gen[@]}" -DCOCONET_CPU_ARCH=x86-64-v2 >"$work/v2.log" 2>&1 \
  || { cat "$work/v2.log"; fail "configuring with COCONET_CPU_ARCH=x86-64-v2"; }
grep -q -- '-march=x86-64-v2' "$b/cpu-flags.txt" || fail "cpu-flags.txt: $(cat "$b/cpu-flags.txt")"
grep -q -- 'native' "$b/cpu-flags.txt" && fail "cpu-flags.txt still says native"
grep -qF "$b/cpu-flags.txt" "$b/cmake_install.cmake" || fail "the configured cpu-flags.txt is not the installed one"
if ! grep -q 'coconet_rt_cpu' "$b/build.ninja"; then
  echo "SKIPPED: no CPU runtime in this configuration (MPI or OpenMP missing)"; exit 77
fi
python3 - "$b/compile_commands.json" <<'PY' || fail "the runtime's compile commands"
import json, sys
cmds = json.load(open(sys.argv[1]))
combine = [c["command"] for c in cmds if c["file"].endswith("runtime/src/cpu/combine.cpp")]
assert combine, "no compile command for combine.cpp"
assert "-march=x86-64-v2" in combine[0], combine[0]
bad = [c["file"] for c in cmds if "-march=native" in c["command"]]
assert not bad, f"-march=native in {bad}"
print("combine.cpp: -march=x86-64-v2; no file with -march=native")
PY
obj=$(ninja -C "$b" -t targets all | sed -n 's|^\(runtime/[^:]*/combine\.cpp\.o\):.*|\1|p' | head -1)
[[ -n $obj ]] || fail "no object for combine.cpp"
ninja -C "$b" "$obj" >"$work/v2-build.log" 2>&1 || { cat "$work/v2-build.log"; fail "compiling combine.cpp for x86-64-v2"; }

d=$work/default
cmake -S "$src" -B "$d" "${gen[@]}" >"$work/default.log" 2>&1 || { cat "$work/default.log"; fail "default configure"; }
grep -q -- '-march=native' "$d/cpu-flags.txt" || fail "the default is not native: $(cat "$d/cpu-flags.txt")"

bad=$work/bad
if cmake -S "$src" -B "$bad" "${gen[@]}" '-DCOCONET_CPU_ARCH=native -O0' >"$work/bad.log" 2>&1; then
  fail "COCONET_CPU_ARCH='native -O0' was accepted"
fi
grep -q "COCONET_CPU_ARCH='native -O0' is not an architecture name" "$work/bad.log" \
  || { cat "$work/bad.log"; fail "the refusal does not name the option"; }
echo "cpu-arch: ok"
