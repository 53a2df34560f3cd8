#!/usr/bin/env bash
# Installs the Debian packages coconetc needs to build and run the demo
# (tools/demo.sh); with --tests (tools/test.sh) also those only the tests
# and the Python frameworks need (torch, clang 19 for the libFuzzer build
# and clang-format, JAX and optax from PyPI). Idempotent: it only calls
# apt-get or pip when something is missing. Runs as root or via sudo.
#
# It prints one line per step ("setup: installing ... ok"); apt-get's own
# output is kept and printed only when a step fails, and then setup.sh exits
# with that step's status. For its test (test/setup/): COCONET_SETUP_APT_GET
# and COCONET_SETUP_DPKG_QUERY replace the apt-get and dpkg-query commands
# (then no sudo is added).
#
# Then it makes the Python environment the coconet Python package is built
# with (runtime/python/): a virtual environment ${COCONET_VENV:-.venv} of
# /usr/bin/python3 that sees Debian's site packages (numpy, mpi4py; torch
# with --tests) and has nanobind from PyPI, made or completed only where
# `$venv/bin/python3 -c 'import nanobind'` fails; with --tests also JAX and
# optax (pinned, and held to Debian's numpy, which Debian's torch is built
# against), installed only where their versions are not these. COCONET_SETUP_PYTHON
# replaces /usr/bin/python3 (its test); with COCONET_SETUP_APT_GET set and
# COCONET_SETUP_PYTHON not, this step is skipped (nothing real is touched).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

PACKAGES=(
  cmake ninja-build g++ python3
  antlr4 libantlr4-runtime-dev          # the 4.7.2 tool and the 4.9 C++ runtime
  llvm-19-dev llvm-19-tools libzstd-dev # ADT/Support; FileCheck, not, lit
  catch2                                # Catch2 v2 unit tests
  clang-19 libclang-rt-19-dev           # the libFuzzer target
  clang-format-19                       # the code style (CTest format)
  graphviz                              # dot: renders --emit=dot (docs, lit)
  coinor-libcbc-dev                     # COIN-OR CBC: coconetc synth's MILP
  libopenmpi-dev openmpi-bin            # the CPU target's runtime and its MPI tests
  libboost-context-dev                  # fibers: CUDA threads in the emulation (test/emu)
  python3-dev python3-venv python3-pip  # the coconet Python package (runtime/python/)
  python3-numpy python3-mpi4py          # ... and the arrays and MPI it is used with
)
# Only the tests need these (--tests).
TEST_PACKAGES=(
  clang-19 libclang-rt-19-dev           # the libFuzzer build (the extended tier)
  clang-format-19                       # the code style (CTest format)
  python3-torch                         # coconet.torch and the modules' torch tests
)
NANOBIND=nanobind==3.1.0
# JAX's last release that runs on Debian bookworm's numpy 1.24 (jax.ffi is
# jax.extend.ffi there), and the optax of its time.
JAX=(jax==0.4.38 jaxlib==0.4.38 optax==0.2.5)

tests=0
case ${1:-} in
  --tests) tests=1 ;;
  "") ;;
  *) echo "usage: setup.sh [--tests]" >&2; exit 2 ;;
esac
if ((tests)); then
  PACKAGES+=("${TEST_PACKAGES[@]}")
fi

dpkg_query=${COCONET_SETUP_DPKG_QUERY:-dpkg-query}
missing=()
for p in "${PACKAGES[@]}"; do
  if ! $dpkg_query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

log=$(mktemp "${TMPDIR:-/tmp}/coconet-setup.XXXXXX")
trap 'rm -f "$log"' EXIT

# step TITLE COMMAND...: runs COMMAND with its output kept in $log; prints
# "setup: TITLE ... ok", or on failure the title, the status and the output.
step() {
  local title=$1 rc=0
  shift
  printf 'setup: %s ... ' "$title"
  "$@" >"$log" 2>&1 </dev/null || rc=$?
  if ((rc == 0)); then
    echo ok
    return
  fi
  echo "failed (exit status $rc)"
  {
    echo "setup: the output of '$*':"
    cat "$log"
  } >&2
  exit "$rc"
}

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages are installed"
else
  apt=(apt-get)
  if [[ -n ${COCONET_SETUP_APT_GET:-} ]]; then
    apt=("$COCONET_SETUP_APT_GET")
  elif [[ $(id -u) -ne 0 ]]; then
    apt=(sudo DEBIAN_FRONTEND=noninteractive apt-get) # sudo resets the environment
  fi
  export DEBIAN_FRONTEND=noninteractive
  step "apt-get update" "${apt[@]}" update -q
  step "installing ${missing[*]}" \
    "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}"
fi

# --- The Python environment ---------------------------------------------------
if [[ -n ${COCONET_SETUP_APT_GET:-} && -z ${COCONET_SETUP_PYTHON:-} ]]; then
  exit 0 # apt-get is faked: so is Python, or it is left alone
fi
python=${COCONET_SETUP_PYTHON:-/usr/bin/python3}
venv=${COCONET_VENV:-$root/.venv}

# make_venv: the environment, made anew where it is missing or broken (its
# python gone, e.g. after a Python upgrade), then nanobind in it.
make_venv() {
  if ! "$venv/bin/python3" -c '' 2>/dev/null; then
    "$python" -m venv --clear --system-site-packages "$venv" || return
  fi
  "$venv/bin/python3" -m pip install -q "$NANOBIND"
}

if "$venv/bin/python3" -c 'import nanobind' >/dev/null 2>&1; then
  echo "setup: $venv has nanobind"
else
  step "installing $NANOBIND into $venv" make_venv
fi

# install_jax: JAX and optax, numpy held at the version the venv sees
# (Debian's: pip would otherwise bring numpy 2, which Debian's torch was not
# built for).
install_jax() {
  local numpy constraints
  numpy=$("$venv/bin/python3" -c 'import numpy; print(numpy.__version__)') || return
  constraints=$(mktemp "${TMPDIR:-/tmp}/coconet-constraints.XXXXXX")
  echo "numpy==$numpy" >"$constraints"
  "$venv/bin/python3" -m pip install -q -c "$constraints" "${JAX[@]}"
  local rc=$?
  rm -f "$constraints"
  return $rc
}

if ((tests)); then
  want="${JAX[*]}"
  if "$venv/bin/python3" -c "import jax, jaxlib, optax, sys; sys.exit(f'jax=={jax.__version__} jaxlib=={jaxlib.__version__} optax=={optax.__version__}' != '$want')" >/dev/null 2>&1; then
    echo "setup: $venv has ${JAX[*]}"
  else
    step "installing ${JAX[*]} into $venv" install_jax
  fi
fi
