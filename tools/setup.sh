#!/usr/bin/env bash
# Installs every Debian package coconetc needs to build and test. Idempotent:
# it only calls apt-get when something is missing. Runs as root or via sudo.
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

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
