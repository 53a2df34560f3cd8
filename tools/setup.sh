#!/usr/bin/env bash
# Installs every Debian package coconetc needs to build and test. Idempotent:
# it only calls apt-get when something is missing. Runs as root or via sudo.
#
# It prints one line per step ("setup: installing ... ok"); apt-get's own
# output is kept and printed only when a step fails, and then setup.sh exits
# with that step's status. For its test (test/setup/): COCONET_SETUP_APT_GET
# and COCONET_SETUP_DPKG_QUERY replace the apt-get and dpkg-query commands
# (then no sudo is added).
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ python3
  antlr4 libantlr4-runtime-dev          # the 4.7.2 tool and the 4.9 C++ runtime
  llvm-19-dev llvm-19-tools libzstd-dev # ADT/Support; FileCheck, not, lit
  catch2                                # Catch2 v2 unit tests
  clang-19 libclang-rt-19-dev           # the libFuzzer target
  clang-format-19                       # the code style (CTest format)
  graphviz                              # dot: renders --emit=dot (docs, lit)
  libopenmpi-dev openmpi-bin            # the CPU target's runtime and its MPI tests
  libboost-context-dev                  # fibers: CUDA threads in the emulation (test/emu)
)

dpkg_query=${COCONET_SETUP_DPKG_QUERY:-dpkg-query}
missing=()
for p in "${PACKAGES[@]}"; do
  if ! $dpkg_query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi

apt=(apt-get)
if [[ -n ${COCONET_SETUP_APT_GET:-} ]]; then
  apt=("$COCONET_SETUP_APT_GET")
elif [[ $(id -u) -ne 0 ]]; then
  apt=(sudo DEBIAN_FRONTEND=noninteractive apt-get) # sudo resets the environment
fi

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

export DEBIAN_FRONTEND=noninteractive
step "apt-get update" "${apt[@]}" update -q
step "installing ${missing[*]}" \
  "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}"
