#!/usr/bin/env bash
# Formats the project's C++ sources with clang-format-19 and .clang-format
# (LLVM style): every .cpp, .h and .cu file git tracks or would add (the
# .def tables keep their hand-aligned columns).
#
#   tools/format.sh           # format in place
#   tools/format.sh --check   # list unformatted files; exit 1 if any
#                             # (exit 77, skipped, without clang-format-19)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
format=${CLANG_FORMAT:-clang-format-19}
if ! command -v "$format" >/dev/null 2>&1; then
  echo "skipped: $format is not installed (tools/setup.sh installs it)"
  exit 77
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' '*.cu')
if [[ ${1:-} == --check ]]; then
  bad=()
  # One clang-format for every file (one process a file took 29 s of
  # the suite); file by file only to name the unformatted ones.
  if ! "$format" --dry-run --Werror "${files[@]}" >/dev/null 2>&1; then
    for f in "${files[@]}"; do
      if ! "$format" --dry-run --Werror "$f" >/dev/null 2>&1; then
        bad+=("$f")
      fi
    done
  fi
  if ((${#bad[@]} > 0)); then
    printf 'not formatted (run tools/format.sh): %s\n' "${bad[@]}"
    exit 1
  fi
  echo "format: ${#files[@]} files formatted as .clang-format says"
  exit 0
fi
"$format" -i "${files[@]}"
