#!/usr/bin/env bash
# The GPU check (test/gpu/README.md): builds the CUDA runtime, the
# comparator, the runtime's own tests and every generated program that
# test/gpu/prepare.sh wrote into OUT_DIR, runs each program on one GPU and
# compares its results with the simulator's.
#
#   test/gpu/run.sh [--build-only | --no-build] [--jobs N] [--log FILE]
#                   [--werror | --no-werror] [--runtime-libs DIR] [OUT_DIR]
#
# OUT_DIR defaults to build-gpu in the repository. Needs bash, nvcc, a C++
# compiler, cuBLAS and NCCL; no python, no CMake, no MPI. Builds into
# OUT_DIR/build. Writes the log to test/gpu/results/<date>-<gpu>.log (and
# OUT_DIR/build/run.log) unless --log says otherwise.
#
#   --build-only  build everything and check the comparator on the expected
#                 results; run nothing on a GPU (none needed). Warnings are
#                 errors here unless --no-werror.
#   --no-build    run what an earlier --build-only left in OUT_DIR/build
#                 (built elsewhere for the same GPU architecture, sm_90 by
#                 default; then carry OUT_DIR with its build/ folder)
#   --werror      warnings are errors in a full run too (default: reported,
#                 not fatal, so that a newer compiler's warning does not
#                 cost a GPU run)
#   --run-jobs N  programs running at once on the GPU (default 4)
#   --run-timeout S  a program still running after S seconds is killed and
#                 fails (default 60)
#   --runtime-libs DIR  link with DIR's libcoconet_rt.a and
#                 libcoconet_rt_cuda.a (a CMake build's runtime/, built for
#                 the same GPU architecture) instead of building the runtime
#                 (the CTest gpu-build: CMake has built it with the same
#                 warnings as errors; its nvcc compile is 2 of its 3 minutes)
#   --list-runtime-sources  print the runtime sources it builds (library,
#                 then file, per line) and exit (the CTest gpu-build checks
#                 them against what CMake built when it passes --runtime-libs)
#   --only REGEX  build, check and run only the cases whose names match
#                 (an extended regular expression)
#   --deadline S  start no program after S seconds since run.sh started
#                 (those left are reported as not run, and fail): keeps the
#                 log within a lent machine's time limit
#
# Exit status: 0 when everything passed; 1 when something failed; 77 when
# there is no GPU (SKIPPED: no GPU), or no nvcc or NCCL to build with.
set -u
set -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build_only=0
no_build=0
jobs=""
log=""
werror=""
out=""
run_jobs=4
run_timeout=60
deadline=""
only=""
runtime_libs=""
list_sources=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-only) build_only=1 ;;
    --no-build) no_build=1 ;;
    --jobs) jobs=$2; shift ;;
    --jobs=*) jobs=${1#--jobs=} ;;
    --log) log=$2; shift ;;
    --log=*) log=${1#--log=} ;;
    --werror) werror=1 ;;
    --no-werror) werror=0 ;;
    --run-jobs) run_jobs=$2; shift ;;
    --run-jobs=*) run_jobs=${1#--run-jobs=} ;;
    --run-timeout) run_timeout=$2; shift ;;
    --run-timeout=*) run_timeout=${1#--run-timeout=} ;;
    --deadline) deadline=$2; shift ;;
    --deadline=*) deadline=${1#--deadline=} ;;
    --list-runtime-sources) list_sources=1 ;;
    --runtime-libs) runtime_libs=$2; shift ;;
    --runtime-libs=*) runtime_libs=${1#--runtime-libs=} ;;
    --only) only=$2; shift ;;
    --only=*) only=${1#--only=} ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1 ;;
  esac
  shift
done
for v in "$run_jobs" "$run_timeout" ${deadline:+"$deadline"}; do
  if ! [[ $v =~ ^[1-9][0-9]{0,5}$ ]]; then
    echo "run.sh: '$v' is not a positive whole number (--run-jobs, --run-timeout, --deadline)" >&2
    exit 2
  fi
done
# selected CASE: does the case take part (--only)?
selected() { [[ -z $only || $1 =~ $only ]]; }
if [[ -n $runtime_libs ]]; then
  for f in libcoconet_rt.a libcoconet_rt_cuda.a; do
    if [[ ! -f $runtime_libs/$f ]]; then
      echo "run.sh: --runtime-libs: $runtime_libs/$f not found" >&2
      exit 2
    fi
  done
  runtime_libs=$(cd "$runtime_libs" && pwd)
fi
if [[ $build_only == 1 && $no_build == 1 ]]; then
  echo "run.sh: --build-only and --no-build exclude each other" >&2
  exit 2
fi

# Where things are: run from test/gpu of a repository, or from the copy in
# OUT_DIR/gpu that prepare.sh makes.
if [[ -z $out ]]; then
  if [[ -f $here/../manifest.tsv ]]; then out=$here/..
  else out=$here/../../build-gpu; fi
fi
if [[ ! -f $out/manifest.tsv ]]; then
  echo "run.sh: $out/manifest.tsv not found: run test/gpu/prepare.sh first" >&2
  exit 2
fi
out=$(cd "$out" && pwd)
if [[ -f $here/../../runtime/include/coconet/driver.h ]]; then
  rt=$(cd "$here/../../runtime" && pwd)
else
  rt=$out/runtime
fi
# runtime_sources: "rt FILE" and "rt_cuda FILE" lines, the runtime's
# sources (its MPI parts and the Python shim left out: no MPI here, no
# Python module).
runtime_sources() {
  local src
  for src in "$rt"/src/*.cpp "$rt"/src/driver/*.cpp; do
    [[ $src == *mpi* ]] || echo "rt $src"
  done
  for src in "$rt"/src/cuda/*.cpp "$rt"/src/cuda/*.cu; do
    [[ $src == *mpi* ]] || echo "rt_cuda $src"
  done
}
if [[ $list_sources == 1 ]]; then
  runtime_sources
  exit 0
fi
results_dir=$here/results
build=$out/build
[[ -z $werror ]] && werror=$build_only
if [[ -z $jobs ]]; then
  jobs=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 4)
fi

# --- The GPU -----------------------------------------------------------------

gpu_name=""
gpu_info=""
if [[ $build_only == 0 ]]; then
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "SKIPPED: no GPU (nvidia-smi not found)"
    exit 77
  fi
  if ! gpu_info=$(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total \
                   --format=csv,noheader 2>/dev/null); then
    gpu_info=""
  fi
  gpu_info=$(printf '%s\n' "$gpu_info" | grep ',' | head -1)
  if [[ -z $gpu_info ]]; then
    echo "SKIPPED: no GPU (nvidia-smi lists no device)"
    exit 77
  fi
  gpu_name=${gpu_info%%,*}
fi

# --- The log --------------------------------------------------------------------

mkdir -p "$build/logs"
stamp=$(date +%Y-%m-%d)
if [[ -z $log ]]; then
  if [[ $build_only == 1 ]]; then
    log=$build/run.log
  else
    slug=$(echo "$gpu_name" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
    mkdir -p "$results_dir"
    log=$results_dir/$stamp-${slug:-gpu}.log
    n=2
    while [[ -e $log ]]; do log=$results_dir/$stamp-${slug:-gpu}-$n.log; n=$((n + 1)); done
  fi
fi
mkdir -p "$(dirname "$log")"
: > "$log"
say() { printf '%s\n' "$*" | tee -a "$log"; }
# A file into the log (and, unless quiet, onto the terminal).
show() { if [[ -s $1 ]]; then sed 's/^/    /' "$1" | tee -a "$log"; fi; }

failures=()
fail() { failures+=("$1"); say "FAILED: $1"; }

say "coconetc GPU check, $(date '+%Y-%m-%d %H:%M:%S %z')"
say "mode: $([[ $build_only == 1 ]] && echo 'build only (no GPU run)' || { [[ $no_build == 1 ]] && echo 'run what was built before (--no-build)'; } || echo 'build and run')"
say "prepared: $out ($(awk -F'\t' '$1=="meta" && $2 ~ /^(created|commit|seed)$/ {printf "%s%s %s", (n++ ? ", " : ""), $2, $3}' "$out/manifest.tsv"))"
say "runtime: $rt"
say "host: $(uname -srm), $jobs jobs"
if [[ -n $gpu_info ]]; then
  say "GPU: $gpu_info (name, driver, compute capability, memory)"
  nvidia-smi 2>&1 | sed -n '1,12p' | sed 's/^/    /' | tee -a "$log"
fi

# --- Tools ------------------------------------------------------------------------

nvcc=$(command -v nvcc || true)
for c in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr/local/cuda-*; do
  [[ -z $nvcc && -n $c && -x $c/bin/nvcc ]] && nvcc=$c/bin/nvcc
done
# (--no-build needs only the libraries.)
if [[ -z $nvcc && $no_build == 0 ]]; then
  say "SKIPPED: nvcc not found (set CUDA_HOME or PATH)"
  exit 77
fi
cuda_home=/usr/local/cuda
[[ -n $nvcc ]] && cuda_home=$(cd "$(dirname "$nvcc")/.." && pwd)
cxx=${CXX:-}
[[ -z $cxx ]] && cxx=$(command -v g++ || command -v c++ || true)
if [[ -z $cxx && $no_build == 0 ]]; then
  say "SKIPPED: no C++ compiler (g++ or c++; or set CXX)"
  exit 77
fi

# Python's nvidia-* wheels (cuBLAS, NCCL) where the toolkit lacks them.
wheel_dirs=()
if command -v python3 >/dev/null 2>&1; then
  while IFS= read -r d; do [[ -n $d ]] && wheel_dirs+=("$d"); done < <(
    python3 -c 'import nvidia; print("\n".join(nvidia.__path__))' 2>/dev/null)
fi
for d in /usr/local/lib/python3*/dist-packages/nvidia /usr/lib/python3/dist-packages/nvidia \
         /opt/*/.venv/lib/python3*/site-packages/nvidia /opt/*/lib/python3*/site-packages/nvidia; do
  [[ -d $d ]] && wheel_dirs+=("$d")
done

# find_header HEADER [WHEEL_PACKAGE] -> the directory holding it
find_header() {
  local d
  for d in "${NCCL_HOME:+$NCCL_HOME/include}" "$cuda_home/include" \
           "$cuda_home/targets/x86_64-linux/include" /usr/include /usr/local/include; do
    [[ -n $d && -f $d/$1 ]] && { echo "$d"; return 0; }
  done
  for d in "${wheel_dirs[@]}"; do
    [[ -n ${2:-} && -f $d/$2/include/$1 ]] && { echo "$d/$2/include"; return 0; }
  done
  return 1
}
# find_lib NAME [WHEEL_PACKAGE] -> the library file (libNAME.so, else a
# versioned libNAME.so.N)
find_lib() {
  local d f
  for d in "${NCCL_HOME:+$NCCL_HOME/lib}" "$cuda_home/lib64" "$cuda_home/lib" \
           "$cuda_home/targets/x86_64-linux/lib" /usr/lib/x86_64-linux-gnu \
           /usr/lib64 /usr/local/lib; do
    [[ -n $d && -e $d/lib$1.so ]] && { echo "$d/lib$1.so"; return 0; }
  done
  for d in "${NCCL_HOME:+$NCCL_HOME/lib}" "$cuda_home/lib64" "$cuda_home/lib" \
           "$cuda_home/targets/x86_64-linux/lib" /usr/lib/x86_64-linux-gnu \
           /usr/lib64 /usr/local/lib; do
    for f in "$d"/lib"$1".so.[0-9]*; do
      [[ -n $d && -e $f ]] && { echo "$f"; return 0; }
    done
  done
  for d in "${wheel_dirs[@]}"; do
    for f in "$d/${2:-none}/lib/lib$1.so" "$d/${2:-none}/lib/lib$1".so.[0-9]*; do
      [[ -e $f ]] && { echo "$f"; return 0; }
    done
  done
  return 1
}

nccl_inc=$(find_header nccl.h nccl) || [[ $no_build == 1 ]] || { say "SKIPPED: nccl.h not found (set NCCL_HOME)"; exit 77; }
nccl_lib=$(find_lib nccl nccl) || { say "SKIPPED: libnccl not found (set NCCL_HOME)"; exit 77; }
blas_inc=$(find_header cublas_v2.h cublas) || [[ $no_build == 1 ]] || { say "SKIPPED: cublas_v2.h not found"; exit 77; }
blas_lib=$(find_lib cublas cublas) || { say "SKIPPED: libcublas not found"; exit 77; }
blaslt_lib=$(find_lib cublasLt cublas || true)

arch=${CUDA_ARCH:-}
if [[ -z $arch && -n $gpu_info ]]; then
  cc=$(echo "$gpu_info" | awk -F', *' '{print $3}' | tr -d '.')
  [[ $cc =~ ^[0-9]+$ ]] && arch=$cc
fi
arch=${arch:-90}

if [[ -n $nccl_inc ]]; then
  nccl_version=$(awk '/^#define NCCL_MAJOR/{a=$3} /^#define NCCL_MINOR/{b=$3} /^#define NCCL_PATCH/{c=$3} END{print a"."b"."c}' "$nccl_inc/nccl.h")
  say "NCCL: $nccl_lib (header $nccl_inc/nccl.h: $nccl_version)"
else
  say "NCCL: $nccl_lib"
fi
[[ -n $nvcc ]] && say "nvcc: $nvcc ($("$nvcc" --version | grep -i release | sed 's/.*release //'))"
[[ -n $cxx ]] && say "C++: $cxx ($("$cxx" --version | head -1))"
say "cuBLAS: $blas_lib"
say "target: sm_$arch; warnings are $([[ $werror == 1 ]] && echo errors || echo reported)"

inc=(-I"$rt/include" -I"$nccl_inc")
[[ $blas_inc != "$cuda_home/include" ]] && inc+=(-I"$blas_inc")
cxxflags=(-std=c++17 -O2 -ffp-contract=off -Wall -Wextra)
nvflags=(-std=c++17 -O2 -arch=sm_"$arch" -Xcompiler "-Wall,-Wextra")
if [[ $werror == 1 ]]; then
  cxxflags+=(-Werror)
  nvflags+=(-Werror all-warnings -Xcompiler -Werror)
fi
# Link: by directory when an unversioned .so is there, else by file; rpath
# so that the programs find the libraries at run time.
libs=()
lib_dirs=()
for f in "$blas_lib" "$blaslt_lib" "$nccl_lib"; do
  [[ -z $f ]] && continue
  d=$(dirname "$f")
  base=$(basename "$f")
  if [[ $base =~ ^lib(.*)\.so$ ]]; then libs+=(-L"$d" -l"${BASH_REMATCH[1]}")
  else libs+=("$f"); fi
  [[ " ${lib_dirs[*]} " == *" $d "* ]] || lib_dirs+=("$d")
done
for d in "${lib_dirs[@]}"; do libs+=(-Xlinker -rpath -Xlinker "$d"); done
ld_path=$(IFS=:; echo "${lib_dirs[*]}")
export LD_LIBRARY_PATH=$ld_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# NCCL says why when it fails (a communicator that cannot be made, say).
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

# --- Parallel jobs ------------------------------------------------------------------

# job NAME COMMAND...: runs in the background, at most $jobs at a time;
# output in logs/NAME.log, status in logs/NAME.rc.
job() {
  local name=$1
  shift
  ( "$@" < /dev/null > "$build/logs/$name.log" 2>&1; echo $? > "$build/logs/$name.rc" ) &
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n 2>/dev/null || sleep 0.2; done
}
# finish NAME...: after `wait`, reports each job; returns 1 if one failed.
finish() {
  local name bad=0
  for name in "$@"; do
    if [[ $(cat "$build/logs/$name.rc" 2>/dev/null) != 0 ]]; then
      fail "build $name"
      show "$build/logs/$name.log"
      bad=1
    elif [[ -s $build/logs/$name.log ]]; then
      say "built $name (with output:)"
      show "$build/logs/$name.log"
    fi
  done
  return $bad
}

# --- Build: the runtime ---------------------------------------------------------------

t0=$SECONDS
cases=()
while IFS=$'\t' read -r kind c _; do
  [[ $kind == case ]] && selected "$c" && cases+=("$c")
done < "$out/manifest.tsv"
rm -rf "${build:?}/actual"
mkdir -p "$build/actual"
if [[ $no_build == 1 ]]; then
  say ""
  say "== no build (--no-build): the programs in $build/bin, built before"
  missing=0
  for b in compare runtime_test "${cases[@]}"; do
    [[ -x $build/bin/$b ]] || { fail "--no-build: $build/bin/$b is missing"; missing=1; }
  done
  if [[ $missing == 1 ]]; then
    say "SUMMARY: FAILED: build first (run.sh --build-only), then carry OUT_DIR/build too"
    exit 1
  fi
else
  rm -rf "${build:?}/obj" "${build:?}/bin"
  mkdir -p "$build/obj/rt" "$build/obj/rt_cuda" "$build/bin"
  say ""
  say "== build"
  rt_objs=()
  cuda_objs=()
  names=()
  if [[ -n $runtime_libs ]]; then
    say "the runtime: $runtime_libs (--runtime-libs; not built here)"
    rt_libs=("$runtime_libs/libcoconet_rt_cuda.a" "$runtime_libs/libcoconet_rt.a")
  else
    while read -r lib src; do
      stem=$(basename "$src"); stem=${stem%.*}
      o=$build/obj/$lib/$stem.o
      names+=("$lib-$stem")
      if [[ $lib == rt ]]; then
        rt_objs+=("$o")
        job "rt-$stem" "$cxx" "${cxxflags[@]}" "${inc[@]}" -c "$src" -o "$o"
      elif [[ $src == *.cu ]]; then
        cuda_objs+=("$o")
        job "rt_cuda-$stem" "$nvcc" "${nvflags[@]}" "${inc[@]}" -c "$src" -o "$o"
      else
        cuda_objs+=("$o")
        job "rt_cuda-$stem" "$cxx" "${cxxflags[@]}" "${inc[@]}" -I"$cuda_home/include" -c "$src" -o "$o"
      fi
    done < <(runtime_sources)
    wait
    rt_ok=1
    finish "${names[@]}" || rt_ok=0
    if [[ $rt_ok == 1 ]]; then
      rm -f "$build/libcoconet_rt.a" "$build/libcoconet_rt_cuda.a"
      ar rcs "$build/libcoconet_rt.a" "${rt_objs[@]}" &&
        ar rcs "$build/libcoconet_rt_cuda.a" "${cuda_objs[@]}" || { fail "ar"; rt_ok=0; }
    fi
    if [[ $rt_ok == 1 ]]; then
      say "built the runtime: libcoconet_rt.a (${#rt_objs[@]} objects), libcoconet_rt_cuda.a (${#cuda_objs[@]})"
    else
      say ""
      say "SUMMARY: the runtime did not build; nothing else can"
      exit 1
    fi
    rt_libs=("$build/libcoconet_rt_cuda.a" "$build/libcoconet_rt.a")
  fi

  # --- Build: the comparator, the runtime's tests, the generated programs -----------------

  names=(compare runtime_test)
  job compare "$cxx" "${cxxflags[@]}" -I"$rt/include" "$here/compare.cpp" \
    "${rt_libs[1]}" -o "$build/bin/compare"
  job runtime_test "$nvcc" "${nvflags[@]}" "${inc[@]}" "$here/runtime_test.cu" \
    "${rt_libs[@]}" "${libs[@]}" -o "$build/bin/runtime_test"

  # case lines: case NAME DRIVER TOLSPEC FILE PROGRAM SCHEDULE
  build_case() { # CASE NAME
    local dir=$out/$1 obj=$build/obj/$1
    mkdir -p "$obj" &&
      "$nvcc" "${nvflags[@]}" "${inc[@]}" -c "$dir/$2.cu" -o "$obj/$2.o" &&
      "$nvcc" "${nvflags[@]}" "${inc[@]}" -c "$dir/$2_main.cu" -o "$obj/$2_main.o" &&
      "$nvcc" -arch=sm_"$arch" "$obj/$2.o" "$obj/$2_main.o" "${rt_libs[@]}" "${libs[@]}" \
        -o "$build/bin/$1"
  }
  while IFS=$'\t' read -r kind c name _; do
    [[ $kind == case ]] && selected "$c" || continue
    names+=("case-$c")
    job "case-$c" build_case "$c" "$name"
  done < "$out/manifest.tsv"
  wait
  finish compare runtime_test
  for c in "${cases[@]}"; do finish "case-$c"; done
  built=0
  for c in "${cases[@]}"; do [[ -x $build/bin/$c ]] && built=$((built + 1)); done
  say "built ${#cases[@]} cases ($built linked), the comparator and runtime_test in $((SECONDS - t0)) s"
fi

# --- The comparator on the expected results (no GPU needed) -------------------------------

say ""
say "== the comparator on the simulator's own results"
dtypes_of() { # CASE -> name=dtype,...
  awk -F'\t' -v c="$1" '$1=="why" && $2==c {printf "%s%s=%s", (n++ ? "," : ""), $3, $4}' \
    "$out/manifest.tsv"
}
if [[ -x $build/bin/compare ]]; then
  st_ok=0
  st_bad=0
  while IFS=$'\t' read -r kind c variant _; do
    [[ $kind == run ]] && selected "$c" || continue
    exp=$out/$c/expected/$variant
    dt=$(dtypes_of "$c")
    if ! "$build/bin/compare" --self-test --dtypes "${dt:--}" "$exp" > "$build/logs/self-$c-$variant.log" 2>&1; then
      fail "comparator self-test on $c/$variant"
      show "$build/logs/self-$c-$variant.log"
      st_bad=$((st_bad + 1))
      continue
    fi
    # On disk: itself passes bitwise; a copy one place off fails bitwise
    # and passes at 1 ulp.
    pert=$build/perturbed/$c/$variant
    rm -rf "$pert"; mkdir -p "$(dirname "$pert")"
    ok=1
    "$build/bin/compare" --dtypes "${dt:--}" "$exp" "$exp" > /dev/null 2>&1 || ok=0
    "$build/bin/compare" --perturb 1 --dtypes "${dt:--}" "$exp" "$pert" > /dev/null 2>&1 || ok=0
    "$build/bin/compare" --dtypes "${dt:--}" "$exp" "$pert" > "$build/logs/pert-$c-$variant.log" 2>&1
    [[ $? == 1 ]] || ok=0
    if [[ $ok == 1 ]]; then
      st_ok=$((st_ok + 1))
    else
      fail "comparator on disk ($c/$variant: itself, a copy one place off)"
      show "$build/logs/pert-$c-$variant.log"
      st_bad=$((st_bad + 1))
    fi
  done < "$out/manifest.tsv"
  rm -rf "$build/perturbed"
  say "comparator checked on $st_ok expected result sets, $st_bad failed"
fi

if [[ $build_only == 1 ]]; then
  say ""
  if [[ ${#failures[@]} == 0 ]]; then
    say "SUMMARY: build only: everything built and the comparator checks passed ($((SECONDS - t0)) s)"
    exit 0
  fi
  say "SUMMARY: build only: ${#failures[@]} failures:"
  for f in "${failures[@]}"; do say "  $f"; done
  exit 1
fi

# --- On the GPU: the runtime's tests -------------------------------------------------------

say ""
say "== runtime_test (the CUDA runtime on one GPU)"
if [[ -x $build/bin/runtime_test ]]; then
  t1=$SECONDS
  timeout_cmd=()
  command -v timeout >/dev/null 2>&1 && timeout_cmd=(timeout 120)
  "${timeout_cmd[@]}" "$build/bin/runtime_test" > "$build/logs/runtime_test.out" 2>&1
  rc=$?
  show "$build/logs/runtime_test.out"
  if [[ $rc != 0 ]]; then
    fail "runtime_test (exit status $rc)"
  fi
  say "runtime_test: $((SECONDS - t1)) s"
fi

# --- On the GPU: the generated programs --------------------------------------------------------

say ""
say "== generated programs on one GPU against the simulator"
tsv=$build/compare.tsv
: > "$tsv"
runs=0
run_fail=0
not_run=0
fused_kernel=0
fused_steps=0
timeout_cmd=()
command -v timeout >/dev/null 2>&1 && timeout_cmd=(timeout "$run_timeout")
# Phase 1: every run, $run_jobs at a time (processes share the GPU; each
# is a one-rank communicator of its own); none starts after the deadline.
t2=$SECONDS
n=0
started=0
while IFS=$'\t' read -r kind c variant args; do
  [[ $kind == run ]] && selected "$c" || continue
  n=$((n + 1))
  act=$build/actual/$c/$variant
  rm -rf "$act"; mkdir -p "$act"
  rm -f "$build/logs/run-$c-$variant.rc"
  [[ -x $build/bin/$c ]] || continue
  if [[ -n $deadline && $SECONDS -ge $deadline ]]; then
    continue
  fi
  started=$((started + 1))
  # shellcheck disable=SC2086 # args are the manifest's word list
  # Not --quiet: the driver's path() line says how each fused collective
  # and overlap ran (into the log below).
  ( "${timeout_cmd[@]}" "$build/bin/$c" $args --output-dir "$act" \
      > "$build/logs/run-$c-$variant.log" 2>&1 < /dev/null
    echo $? > "$build/logs/run-$c-$variant.rc" ) &
  while [[ $(jobs -rp | wc -l) -ge $run_jobs ]]; do wait -n 2>/dev/null || sleep 0.1; done
done < "$out/manifest.tsv"
wait
say "started $started of $n runs, $run_jobs at a time; all ended after $((SECONDS - t2)) s"
# Phase 2: each run's outcome and comparison, in the manifest's order.
while IFS=$'\t' read -r kind c variant args; do
  [[ $kind == run ]] && selected "$c" || continue
  runs=$((runs + 1))
  tol=$(awk -F'\t' -v c="$c" '$1=="case" && $2==c {print $4}' "$out/manifest.tsv")
  dt=$(dtypes_of "$c")
  act=$build/actual/$c/$variant
  say "-- $c [$variant]: ./$c $args"
  if [[ ! -x $build/bin/$c ]]; then
    fail "$c [$variant]: not built"
    run_fail=$((run_fail + 1))
    continue
  fi
  if [[ ! -f $build/logs/run-$c-$variant.rc ]]; then
    fail "$c [$variant]: not run (the deadline of $deadline s had passed)"
    not_run=$((not_run + 1))
    continue
  fi
  rc=$(cat "$build/logs/run-$c-$variant.rc")
  # How each fused collective ran: one kernel, or steps in sequence (why).
  # (path() joins its parts with "; ".)
  while IFS= read -r part; do
    say "    path: $part"
    case $part in
      "fused collectives"*"one kernel on"*) fused_kernel=$((fused_kernel + 1)) ;;
      "fused collectives"*"steps in sequence"*) fused_steps=$((fused_steps + 1)) ;;
    esac
  done < <(grep -E '^[A-Za-z0-9_]+: (fused collectives|overlap)' "$build/logs/run-$c-$variant.log" |
             sed -e 's/^[A-Za-z0-9_]*: //' -e 's/; \(fused collectives\|overlap of\)/\n\1/g')
  if [[ $rc != 0 ]]; then
    show "$build/logs/run-$c-$variant.log"
    if [[ $rc == 124 ]]; then
      fail "$c [$variant]: still running after $run_timeout s (killed)"
    else
      fail "$c [$variant]: the program exited with $rc"
    fi
    run_fail=$((run_fail + 1))
    continue
  fi
  "$build/bin/compare" --tol "$tol" --dtypes "${dt:--}" --tsv "$tsv" \
    --label "$c"$'\t'"$variant" "$out/$c/expected/$variant" "$act" \
    > "$build/logs/cmp-$c-$variant.log" 2>&1
  rc=$?
  show "$build/logs/cmp-$c-$variant.log"
  if [[ $rc != 0 ]]; then
    fail "$c [$variant]: results differ from the simulator's"
    run_fail=$((run_fail + 1))
  fi
done < "$out/manifest.tsv"
[[ $not_run -gt 0 ]] && say "$not_run runs not started: the deadline ($deadline s) had passed"
say "$runs runs, $run_fail failed; fused collectives: $fused_kernel ran as one kernel, $fused_steps as steps in sequence"

# --- Summary ---------------------------------------------------------------------------------

say ""
say "== largest differences per result (tolerances in ulps as coconetc sim --check-ulps)"
say "$(printf '%-36s %-8s %-6s %-5s %9s %10s %11s %9s %9s %9s  %s' case variant result type elements differing 'max|diff|' 'max ulp' 'repr ulp' tolerance verdict)"
while IFS=$'\t' read -r c variant result type elements differing maxabs maxulp repr tol verdict; do
  say "$(printf '%-36s %-8s %-6s %-5s %9s %10s %11s %9s %9s %9s  %s' "$c" "$variant" "$result" "$type" "$elements" "$differing" "$maxabs" "$maxulp" "$repr" "$tol" "$verdict")"
done < "$tsv"
say ""
say "== why each tolerance"
awk -F'\t' '$1=="why" {printf "%-36s %-6s %-5s %5s  %s\n", $2, $3, $4, $5, $6}' "$out/manifest.tsv" | tee -a "$log"
say ""
if [[ ${#failures[@]} == 0 ]]; then
  say "SUMMARY: PASSED: runtime_test and $runs runs of ${#cases[@]} generated programs on ${gpu_name} ($((SECONDS - t0)) s)"
  cp "$log" "$build/run.log" 2>/dev/null
  say "log: $log"
  exit 0
fi
say "SUMMARY: FAILED: ${#failures[@]} failures on ${gpu_name}:"
for f in "${failures[@]}"; do say "  $f"; done
cp "$log" "$build/run.log" 2>/dev/null
say "log: $log"
exit 1
