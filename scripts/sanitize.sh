#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan
# (gcc, -DPHALANX_SANITIZE=ON) and runs them with ctest, stopping at the first report.
# The end-to-end tests (label e2e) and the out-of-tree package test (label out_of_tree,
# a second full build) are left out; everything else (unit, CLI, simulation) runs.
#
# Usage: scripts/sanitize.sh [--build-only] [-- extra ctest args, e.g. -R Quantity]
# Env:   PHALANX_ASAN_DIR (default build-asan), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
extra=()
while (($#)); do
  case "$1" in
    --build-only) build_only=1 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

dir=${PHALANX_ASAN_DIR:-build-asan}
jobs=${JOBS:-2}
t0=$SECONDS
# Bench binaries are not tests; leave them out of this build.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPHALANX_SANITIZE=ON \
  -DPHALANX_BUILD_BENCH=OFF >/dev/null
# Every target except the e2e-only ones: unit test binaries, the phalanx CLI (cli.* tests).
ninja -C "$dir" -j"$jobs"
echo "sanitize: build took $((SECONDS - t0)) s"
((build_only)) && exit 0

# halt_on_error: the first report fails the test. detect_leaks stays on (ASan default).
# abort_on_error=0 keeps the exit code non-zero without a core dump.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# libstdc++'s std::regex recurses once per character matched; with ASan's larger frames a
# test's regex over a rendered HTML report needs more than the default 8 MiB of stack.
ulimit -s 262144 2>/dev/null || true
t1=$SECONDS
(cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 -LE 'e2e|out_of_tree' \
  "${extra[@]}")
echo "sanitize: tests took $((SECONDS - t1)) s"
