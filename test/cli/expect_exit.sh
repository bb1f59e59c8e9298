#!/usr/bin/env bash
# expect_exit.sh CODE PATTERN... -- COMMAND...
# Passes when COMMAND exits with CODE and its stdout matches every extended regex PATTERN.
want="$1"; shift
patterns=()
while [[ $# -gt 0 && "$1" != "--" ]]; do patterns+=("$1"); shift; done
[[ "$1" == "--" ]] && shift
out=$("$@" 2>&1); code=$?
if [[ $code -ne $want ]]; then echo "FAIL: exit code $code, expected $want"; echo "$out"; exit 1; fi
for p in "${patterns[@]}"; do
  if ! grep -Eq -- "$p" <<<"$out"; then
    echo "FAIL: output does not match /$p/:"; echo "$out"; exit 1
  fi
done
echo "ok (exit $code)"
