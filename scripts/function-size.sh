#!/usr/bin/env bash
# Lists every non-test function of src/ longer than N lines (default 119), with clang-tidy's
# readability-function-size check over build/compile_commands.json (scripts/build.sh makes
# it). Exits 1 when any is found. Not part of CI (a clang-tidy pass over src/ takes several
# minutes on 2 cores); the architecture rule it checks is "no function over 120 lines".
#
# Usage: scripts/function-size.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-119}
[[ -f build/compile_commands.json ]] || { echo "function-size: run scripts/build.sh first" >&2; exit 2; }
found=0
while IFS= read -r f; do
  out=$(clang-tidy -p build --quiet -checks='-*,readability-function-size' \
        -config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $limit}]}" \
        "$f" 2>/dev/null | grep -A1 'readability-function-size' || true)
  if [[ -n "$out" ]]; then echo "$out"; found=1; fi
done < <(find src -name '*.cc' ! -name '*_test.cc' ! -path 'src/testing/*' | sort)
if ((found)); then echo "function-size: functions over $limit lines (above)"; exit 1; fi
echo "function-size: no non-test function of src/ over $limit lines"
