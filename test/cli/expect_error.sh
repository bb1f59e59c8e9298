#!/usr/bin/env bash
# expect_error.sh PATTERN -- COMMAND...
# Passes when COMMAND exits non-zero and its stderr matches the extended regex PATTERN.
pattern="$1"; shift; [[ "$1" == "--" ]] && shift
err=$("$@" 2>&1 >/dev/null); code=$?
if [[ $code -eq 0 ]]; then echo "FAIL: exit code 0, expected non-zero"; echo "$err"; exit 1; fi
if ! grep -Eq -- "$pattern" <<<"$err"; then
  echo "FAIL: stderr does not match /$pattern/:"; echo "$err"; exit 1
fi
echo "ok (exit $code): $err"
