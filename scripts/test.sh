#!/usr/bin/env bash
# Builds Phalanx and runs every test; CI (.ci/run) calls this.
#   1. build/ with g++, warning-free (-Werror): the whole CTest suite runs there (unit, CLI,
#      simulation, trace and end-to-end tests; the e2e tests build kube-apiserver once, see
#      scripts/control-plane.sh).
#   2. clang's thread-safety analysis of the locking annotations (scripts/thread-safety.sh).
#   3. build-asan/ with clang (scripts/sanitize.sh --decoders): ASan + UBSan + libFuzzer
#      coverage; the unit tests of the modules that decode untrusted input run under the
#      sanitizers, and every fuzz target for a short bound (PHALANX_FUZZ_SECONDS, default 20;
#      scripts/fuzz.sh). `scripts/sanitize.sh --unit` runs the whole unit suite that way.
# Steps 2 and 3 compile at the lowest priority while the CTest suite of step 1 runs (its
# end-to-end tests mostly wait on kube-apiserver and etcd), which keeps a cold run within
# CI's time on 2 cores. scripts/format-check.sh checks that every C++ source is clang-format
# clean.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
stamp() { echo "test.sh: $* ($((SECONDS - t0)) s)"; }

scripts/build.sh -DPHALANX_WERROR=ON  # any warning fails the build
stamp "build/ built"
scripts/format-check.sh
stamp "format checked"

mkdir -p build-asan
bg_log=build-asan/background.log
# Its own process group (setsid), so that a failure of the suite stops the whole background
# job; compile jobs there run at nice 19 and take only what the suite leaves idle.
setsid nice -n 19 bash -c 'scripts/thread-safety.sh && scripts/sanitize.sh --decoders --build-only' \
  >"$bg_log" 2>&1 &
bg_pid=$!
trap 'kill -- -"$bg_pid" 2>/dev/null || true' EXIT

(cd build && ctest --output-on-failure -j2 --timeout 900)
stamp "CTest suite of build/ passed"

if ! wait "$bg_pid"; then
  tail -n 60 "$bg_log"
  echo "test.sh: the thread-safety check or the sanitizer build failed (whole log: $bg_log)" >&2
  exit 1
fi
trap - EXIT
grep -E '^(thread-safety|sanitize): ' "$bg_log" || true
stamp "thread-safety checked, build-asan/ built"
scripts/sanitize.sh --decoders  # the build is up to date: this runs the tests
stamp "decoders' unit tests passed under ASan/UBSan"
scripts/fuzz.sh --seconds "${PHALANX_FUZZ_SECONDS:-20}"
stamp "fuzz targets ran"
