#!/usr/bin/env bash
# Proves that scripts/format-check.sh can fail: a copy of a clean source with its
# indentation broken must be rejected, naming the file, and the clean copy accepted.
#   check.sh SOURCE_DIR SCRATCH_DIR
set -uo pipefail
src=$1
dir=$2
mkdir -p "$dir"
# The scratch copies live inside the tree (format-check.sh runs at the repository root and
# .clang-format applies by path), under a directory git ignores.
# Same file name as the original: clang-format's include regrouping finds the main header by
# the file's stem.
mkdir -p "$dir/clean" "$dir/bad"
clean="$dir/clean/duration.cc"
bad="$dir/bad/duration.cc"
cp "$src/src/api/duration.cc" "$clean"
# Break one line's indentation: the file stays valid C++, only its format changes.
sed '0,/^  [a-z]/s/^  \([a-z]\)/      \1/' "$clean" >"$bad"
if cmp -s "$clean" "$bad"; then echo "FAIL: the scratch edit changed nothing"; exit 1; fi
out=$("$src/scripts/format-check.sh" "$bad" 2>&1); rc=$?
echo "$out"
[[ $rc -ne 0 ]] || { echo "FAIL: the misformatted copy passed the check"; exit 1; }
grep -q "bad/duration.cc is not clang-format clean" <<<"$out" ||
  { echo "FAIL: the check failed without naming the file"; exit 1; }
out=$("$src/scripts/format-check.sh" "$clean" 2>&1); rc=$?
echo "$out"
[[ $rc -eq 0 ]] || { echo "FAIL: the clean copy was rejected"; exit 1; }
echo "PASS"
