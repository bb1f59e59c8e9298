#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan + libFuzzer) in the
# sanitizer build, build-asan (configured by scripts/sanitize.sh --configure, whose unit test
# binaries share its objects), and runs each for a bounded time, starting from the seeds in
# fuzz/corpus/<target>/ and replaying the saved crash inputs in fuzz/regressions/<target>/.
# Prints one line per target: executions, crashes, corpus size. Exits 1 if any target
# crashed (the input is saved under build-asan/artifacts/<target>/ and the fuzzer's report
# is in build-asan/logs/<target>.log).
#
# Usage: scripts/fuzz.sh [--seconds N] [--build-only] [TARGET...]
#   --seconds N   time per target (default 30; CI uses a short bound)
#   TARGET        run only these (default: every fuzz_* target)
# Env: PHALANX_ASAN_DIR (default build-asan), JOBS (default: the number of CPUs),
#      FUZZ_RSS_MB (default 2048),
#      FUZZ_SEED (default 1 when CI=true, else random).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=30
build_only=0
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift ;;
    --seconds=*) seconds=${1#*=} ;;
    --build-only) build_only=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option: $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
all=(fuzz_manifest fuzz_quantity fuzz_label_selector fuzz_kubeconfig fuzz_scheduler_config
     fuzz_objects fuzz_cel_selector)
((${#targets[@]})) || targets=("${all[@]}")

dir=${PHALANX_ASAN_DIR:-build-asan}
jobs=${JOBS:-$(nproc)}
t0=$SECONDS
PHALANX_ASAN_DIR=$dir scripts/sanitize.sh --configure
ninja -C "$dir" -j"$jobs" "${targets[@]}"
echo "fuzz: build took $((SECONDS - t0)) s"
((build_only)) && exit 0

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
failed=0
total_execs=0
total_crashes=0
mkdir -p "$dir/logs"
for t in "${targets[@]}"; do
  work="$dir/corpus/$t"        # grows across runs; the repo's seeds stay untouched
  art="$dir/artifacts/$t"
  mkdir -p "$work" "$art"
  log="$dir/logs/$t.log"
  # Saved crash inputs first: each must now pass (a plain run over files, no mutation).
  regress=0
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    regress=$(find "fuzz/regressions/$t" -type f | wc -l)
    if ! "$dir/fuzz/$t" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -timeout=20 \
        "fuzz/regressions/$t"/* >"$dir/logs/$t.regressions.log" 2>&1; then
      echo "$t: a saved regression input crashes again, see $dir/logs/$t.regressions.log"
      failed=1
    fi
  fi
  rc=0
  dict=()
  [[ -f fuzz/$t.dict ]] && dict=(-dict="fuzz/$t.dict")
  # CI: a fixed seed, so a run explores the same inputs in the same order (a crash found
  # there reproduces); elsewhere libFuzzer picks a new seed each run. FUZZ_SEED overrides.
  seed=${FUZZ_SEED:-$([[ ${CI:-} == true ]] && echo 1 || echo 0)}
  "$dir/fuzz/$t" "$work" "fuzz/corpus/$t" "${dict[@]}" -seed="$seed" -max_total_time="$seconds" \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -malloc_limit_mb="${FUZZ_RSS_MB:-2048}" -timeout=20 \
    -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$art/" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ -z "$execs" ]]; then  # a crash ends the run before the final stats
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  fi
  execs=${execs:-0}
  crashes=0
  ((rc == 0)) || crashes=1
  corpus=$(find "$work" -type f | wc -l)
  printf '%s: %s executions, %s crashes, corpus %s, regressions replayed %s\n' \
    "$t" "$execs" "$crashes" "$corpus" "$regress"
  if ((crashes)); then
    grep -E 'ERROR: |SUMMARY: |Test unit written' "$log" | head -5 | sed 's/^/  /'
    failed=1
  fi
  total_execs=$((total_execs + execs))
  total_crashes=$((total_crashes + crashes))
done
echo "fuzz: ${#targets[@]} targets, $total_execs executions, $total_crashes crashes, ${seconds} s each"
exit "$failed"
