#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan
# (gcc, -DPHALANX_SANITIZE=ON) and runs them with ctest, stopping at the first report.
# The end-to-end tests (label e2e) and the out-of-tree package test (label out_of_tree,
# a second full build) are left out, and so is the image check (label deploy: the
# sanitized binary loads libasan); everything else (unit, CLI, simulation) runs.
#
# Usage: scripts/sanitize.sh [--build-only] [--unit | --only "api client ..."] [-- extra ctest args]
#   --unit          build and run every unit test binary (each phalanx_<module>_test target
#                   of the build, found in build.ninja), directly rather than through ctest;
#                   what CI runs (scripts/test.sh)
#   --only MODULES  build and run only these unit test binaries (phalanx_<module>_test)
# Env:   PHALANX_ASAN_DIR (default build-asan), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
unit=0
only=()
extra=()
while (($#)); do
  case "$1" in
    --build-only) build_only=1 ;;
    --only) read -r -a only <<<"$2"; shift ;;
    --) shift; extra=("$@"); break ;;
    --unit) unit=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
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
targets=()
for m in "${only[@]}"; do targets+=("phalanx_${m}_test"); done
if ((unit)); then
  # Every module with *_test.cc files has a phalanx_<module>_test executable target.
  mapfile -t targets < <(ninja -C "$dir" -t targets all |
    sed -n 's#^src/\(phalanx_[a-z0-9_]*_test\): CXX_EXECUTABLE_LINKER.*#\1#p' | sort -u)
  ((${#targets[@]})) || { echo "sanitize.sh: no phalanx_*_test targets in $dir" >&2; exit 1; }
  echo "sanitize: ${#targets[@]} unit test binaries: ${targets[*]}"
fi
# Every target (unit test binaries, the phalanx CLI for the cli.* tests), or the --only ones.
ninja -C "$dir" -j"$jobs" "${targets[@]}"
echo "sanitize: build took $((SECONDS - t0)) s"
((build_only)) && exit 0

# halt_on_error: the first report fails the test. detect_leaks stays on (ASan default).
# abort_on_error=0 keeps the exit code non-zero without a core dump.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# libstdc++'s std::regex recurses once per character matched; with ASan's larger frames a
# test's regex over a rendered HTML report needs more than the default 8 MiB of stack.
ulimit -s 262144 2>/dev/null || true
t1=$SECONDS
if ((${#targets[@]})); then
  passed=0 failed=0
  for t in "${targets[@]}"; do
    log="$dir/$t.sanitize.log"
    rc=0 t2=$SECONDS
    (cd "$dir" && "./src/$t" --gtest_brief=1) >"$log" 2>&1 || rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\./\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?, listed below:/\1/p' "$log" | tail -1)
    p=${p:-0} f=${f:-0}
    if ((rc != 0)); then
      ((f > 0)) || f=1  # a sanitizer report aborts the binary before gtest's summary
      grep -E 'ERROR: |SUMMARY: |runtime error|FAILED' "$log" | head -10 | sed "s/^/  $t: /"
    fi
    echo "sanitize: $t: $p passed, $f failed ($((SECONDS - t2)) s)"
    passed=$((passed + p)) failed=$((failed + f))
  done
  echo "sanitize: tests took $((SECONDS - t1)) s"
  echo "sanitize: $passed passed, $failed failed"
  exit $((failed > 0))
fi
(cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 -LE 'e2e|out_of_tree|deploy' \
  "${extra[@]}")
echo "sanitize: tests took $((SECONDS - t1)) s"
