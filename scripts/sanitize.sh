#!/usr/bin/env bash
# The sanitizer build: clang with AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's
# coverage instrumentation (-DPHALANX_FUZZ=ON), into build-asan. One build serves the unit
# tests under ASan/UBSan (this script) and the fuzz targets (scripts/fuzz.sh: same directory,
# same configuration, shared objects). Test sources compile at -O0, libraries at the build
# type's -O2 (CMakeLists.txt).
#
# Usage: scripts/sanitize.sh [--configure] [--build-only] [--unit | --decoders | --only "api ..."]
#                            [-- extra ctest args]
#   --configure     only configure build-asan (scripts/fuzz.sh calls this)
#   --build-only    build, do not run
#   --unit          build every unit test binary (each phalanx_<module>_test target of the
#                   build, found in build.ninja) and every fuzz target, then run the unit
#                   tests (ctest -L unit, in parallel): the whole unit suite under ASan/UBSan
#   --decoders      the unit test binaries of the modules that decode untrusted input, the
#                   ones the fuzz targets cover (api, cel, config, client, gang), and the fuzz
#                   targets: what CI runs (scripts/test.sh), whose g++ build runs every unit
#                   test unsanitized
#   --only MODULES  build and run only these unit test binaries (phalanx_<module>_test)
#   (neither)       build everything and run ctest without the end-to-end tests (label e2e),
#                   the out-of-tree package test (label out_of_tree: a second full build) and
#                   the image check (label deploy: the sanitized binary loads libasan)
# Env:   PHALANX_ASAN_DIR (default build-asan), JOBS (default: the number of CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."

configure_only=0
build_only=0
fuzz=0
unit=0
only=()
extra=()
while (($#)); do
  case "$1" in
    --configure) configure_only=1 ;;
    --build-only) build_only=1 ;;
    --only) read -r -a only <<<"$2"; shift ;;
    --) shift; extra=("$@"); break ;;
    --unit) unit=1 ;;
    --decoders) only=(api cel config client gang); fuzz=1 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

dir=${PHALANX_ASAN_DIR:-build-asan}
jobs=${JOBS:-$(nproc)}
t0=$SECONDS
# Bench binaries are not tests; leave them out of this build.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DPHALANX_FUZZ=ON -DPHALANX_BUILD_BENCH=OFF >/dev/null
((configure_only)) && exit 0
targets=()
for m in "${only[@]}"; do targets+=("phalanx_${m}_test"); done
if ((unit)); then
  # Every module with *_test.cc files has a phalanx_<module>_test executable target.
  mapfile -t targets < <(ninja -C "$dir" -t targets all |
    sed -n 's#^src/\(phalanx_[a-z0-9_]*_test\): CXX_EXECUTABLE_LINKER.*#\1#p' | sort -u)
  ((${#targets[@]})) || { echo "sanitize.sh: no phalanx_*_test targets in $dir" >&2; exit 1; }
  echo "sanitize: ${#targets[@]} unit test binaries: ${targets[*]}"
  fuzz=1
fi
((fuzz)) && targets+=(fuzz_all)  # the fuzz targets of scripts/fuzz.sh, built with the same objects
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
if ((unit)); then
  # Every test of the unit test binaries (label unit), in parallel, one process per test.
  log="$dir/unit.sanitize.log"
  rc=0
  (cd "$dir" && ctest -L unit -j"$jobs" --timeout 900 --output-on-failure "${extra[@]}") \
    >"$log" 2>&1 || rc=$?
  # ctest prints the failing tests' output (sanitizer reports included) and a summary.
  if ((rc != 0)); then
    grep -E 'ERROR: |SUMMARY: |runtime error|Failed|\*\*\*' "$log" | head -40 | sed 's/^/  /'
  fi
  summary=$(grep -E 'tests passed, [0-9]+ tests failed out of' "$log" | tail -1)
  echo "sanitize: ${summary:-ctest printed no summary, see $log}"
  echo "sanitize: tests took $((SECONDS - t1)) s"
  exit "$rc"
fi
if ((${#only[@]})); then
  passed=0 failed=0
  for m in "${only[@]}"; do
    t=phalanx_${m}_test
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
