#!/usr/bin/env bash
# Minimises inputs into the seed corpus of one target: libFuzzer's
# -set_cover_merge=1 keeps a small set of inputs (a greedy set cover) with
# the coverage of the current corpus and DIRS together, and that set
# replaces test/fuzz/corpus/TARGET/ (files named by their SHA-1, as
# libFuzzer names them). Nothing is replaced when the merge fails.
#
#   tools/fuzz/update-corpus.sh TARGET [DIRS...]
#
# DIRS default to build-fuzz/long-run/TARGET/corpus (tools/fuzz/long-run.sh).
# Inputs longer than the target's max_len are left out, as is anything
# that crashes (fix it first: a crashing input makes a merge stop).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:?usage: update-corpus.sh parse|schedule|npy|segments|machine [DIRS...]}
shift
case $target in
  parse | npy | segments | machine) max_len=4096 ;;
  schedule) max_len=2048 ;;
  *) echo "update-corpus.sh: unknown target '$target'" >&2; exit 2 ;;
esac
fuzz=${COCONET_FUZZ_DIR:-$root/build-fuzz}
bin=$fuzz/tools/coconet-fuzz-$target
[[ -x $bin ]] || { echo "update-corpus.sh: $bin is not built" >&2; exit 2; }
(($# > 0)) || set -- "$fuzz/long-run/$target/corpus"
for dir in "$@"; do
  [[ -d $dir ]] || { echo "update-corpus.sh: no directory $dir" >&2; exit 2; }
done
dest=$root/test/fuzz/corpus/$target
merged=$(mktemp -d)
trap 'rm -rf "$merged" "$merged.log"' EXIT
mkdir -p "$dest"
if ! nice -n 10 "$bin" -set_cover_merge=1 -max_len=$max_len -timeout=10 \
    "$merged" "$dest" "$@" >"$merged.log" 2>&1; then
  tail -n 20 "$merged.log"
  echo "update-corpus.sh: the merge failed; test/fuzz/corpus/$target is unchanged" >&2
  exit 1
fi
grep -E '^MERGE-OUTER: [0-9]+ new files' "$merged.log" || true
if [[ -z $(ls "$merged") ]]; then
  echo "update-corpus.sh: the merge kept nothing; test/fuzz/corpus/$target is unchanged" >&2
  exit 1
fi
rm -f "$dest"/*
cp "$merged"/* "$dest"/
echo "test/fuzz/corpus/$target: $(ls "$dest" | wc -l) inputs, $(du -sk "$dest" | cut -f1) KiB"
