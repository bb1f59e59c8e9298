#!/usr/bin/env bash
# Proves that the thread-safety check can fail: scripts/thread-safety.sh --file must reject
# unguarded.cc (an ABSL_GUARDED_BY member written without its mutex) with a thread-safety
# diagnostic, and accept guarded.cc (the same code under the lock).
#   check.sh SOURCE_DIR BUILD_DIR
# Without clang++ the test is skipped (exit 77), unless CI=true, where it fails.
set -uo pipefail
src=$1
build=$2
here=$src/test/thread_safety
if ! command -v "${CLANGXX:-clang++}" >/dev/null; then
  if [[ "${CI:-}" == "true" ]]; then
    echo "FAIL: clang++ not found (CI=true: the thread-safety check must run)"
    exit 1
  fi
  echo "SKIP: clang++ not found (scripts/install-deps.sh installs it)"
  exit 77
fi
out=$("$src/scripts/thread-safety.sh" --build "$build" --file "$here/unguarded.cc" 2>&1)
rc=$?
echo "$out"
if [[ $rc -eq 0 ]]; then
  echo "FAIL: unguarded.cc compiled; the analysis did not catch the unguarded write"
  exit 1
fi
if ! grep -q "requires holding mutex 'mu_'.*-Wthread-safety" <<<"$out"; then
  echo "FAIL: unguarded.cc failed (rc $rc) without the expected thread-safety error"
  exit 1
fi
if ! "$src/scripts/thread-safety.sh" --build "$build" --file "$here/guarded.cc"; then
  echo "FAIL: the control guarded.cc does not compile"
  exit 1
fi
echo "PASS: unguarded.cc rejected by -Werror=thread-safety, guarded.cc accepted"
