#!/usr/bin/env bash
# Proves that the thread-safety check can fail: scripts/thread-safety.sh --file must reject
# scratch.cc built with -DPHALANX_TSA_UNGUARDED (an ABSL_GUARDED_BY member written without
# its mutex) with a thread-safety diagnostic, and accept it without (the write under the
# lock).
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
out=$("$src/scripts/thread-safety.sh" --build "$build" --file "$here/scratch.cc" \
  -DPHALANX_TSA_UNGUARDED 2>&1)
rc=$?
echo "$out"
if [[ $rc -eq 0 ]]; then
  echo "FAIL: the unguarded scratch.cc compiled; the analysis did not catch the write"
  exit 1
fi
if ! grep -q "requires holding mutex 'mu_'.*-Wthread-safety" <<<"$out"; then
  echo "FAIL: the unguarded scratch.cc failed (rc $rc) without the expected thread-safety error"
  exit 1
fi
if ! "$src/scripts/thread-safety.sh" --build "$build" --file "$here/scratch.cc"; then
  echo "FAIL: the control (scratch.cc with the lock) does not compile"
  exit 1
fi
echo "PASS: the unguarded write is rejected by -Werror=thread-safety, the locked one accepted"
