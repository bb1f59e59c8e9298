#!/usr/bin/env bash
# run.sh PHALANX_BUILD_DIR [EXTRA_CMAKE_ARGS...]
#
# End-to-end test of out-of-tree plugins through the installed CMake package:
#   1. cmake --install PHALANX_BUILD_DIR into a temporary prefix;
#   2. configure and build examples/out-of-tree-plugin against it (find_package(Phalanx),
#      Ninja, ccache when available; EXTRA_CMAKE_ARGS go to this configure step);
#   3. run the example's unit test;
#   4. run `my-scheduler simulate` on the example scenario with its config and check in the
#      --results JSONL that pod-N is bound to node-N for N = 1..3;
#   5. control: the same with `reverse: true` must bind no pod-N to node-N (the placement
#      comes from the plugin, not from a lucky tie-break).
# Any failure exits non-zero. KEEP=1 keeps the temporary directory. JOBS sets ninja -j (2).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 PHALANX_BUILD_DIR [EXTRA_CMAKE_ARGS...]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
example=$(cd "$here/../../examples/out-of-tree-plugin" && pwd)
jobs=${JOBS:-2}

work=$(mktemp -d "${TMPDIR:-/tmp}/phalanx-oot.XXXXXX")
cleanup() {
  if [[ "${KEEP:-0}" == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

t0=$SECONDS
step() { echo "== [$((SECONDS - t0))s] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Quiet on success, the whole log on failure.
run_logged() {
  local log="$work/$1.log"
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "$(basename "$1") exited non-zero (log above)"
  fi
}

step "install $build_dir -> $work/prefix"
run_logged install cmake --install "$build_dir" --prefix "$work/prefix"
config_file=$(find "$work/prefix" -name PhalanxConfig.cmake -print -quit)
[[ -n "$config_file" ]] || fail "no PhalanxConfig.cmake installed under $work/prefix"
[[ -x "$work/prefix/bin/phalanx" ]] || fail "bin/phalanx not installed"
[[ -f "$work/prefix/include/phalanx/app/app.h" ]] || fail "include/phalanx/app/app.h not installed"
"$work/prefix/bin/phalanx" version | grep -q '^phalanx ' || fail "installed phalanx version"

step "configure and build $example"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths under $work (prefix, build dir) differ per run; keep them out of ccache's hash.
  export CCACHE_BASEDIR="$work"
fi
run_logged configure cmake -S "$example" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DPhalanx_DIR="$(dirname "$config_file")" "${launcher[@]}" "$@"
grep -q "^Phalanx_DIR:[A-Z]*=$work/prefix/" "$work/build/CMakeCache.txt" ||
  fail "the example did not find the Phalanx just installed: $(grep '^Phalanx_DIR' "$work/build/CMakeCache.txt")"
run_logged build ninja -C "$work/build" -j "$jobs"

step "unit test"
run_logged unit_test ctest --test-dir "$work/build" --output-on-failure
grep -E "tests passed" "$work/unit_test.log"

# simulate CONFIG RESULTS: runs the example scheduler on its scenario.
simulate() {
  run_logged "simulate-$(basename "$2" .jsonl)" "$work/build/my-scheduler" simulate \
    "$example/scenario.yaml" --config "$1" --results "$2" --seed 1 --no-progress
  cat "$work/simulate-$(basename "$2" .jsonl).log"
  [[ $(grep -c . "$2") -eq 3 ]] || fail "$2: want 3 pods, got: $(cat "$2")"
}
# node_of RESULTS POD: the node POD was bound to ("null" if none).
node_of() {
  local line
  line=$(grep "\"pod\":\"default/$2\"" "$1") || fail "$1: no line for $2"
  grep -o '"node":[^,}]*' <<<"$line" | sed 's/"node"://; s/"//g'
}

step "simulate with NodeNumber"
simulate "$example/scheduler-config.yaml" "$work/results.jsonl"
for n in 1 2 3; do
  got=$(node_of "$work/results.jsonl" "pod-$n")
  [[ "$got" == "node-$n" ]] || fail "pod-$n was bound to $got, want node-$n"
  echo "pod-$n -> $got"
done

step "control: NodeNumber with reverse: true"
sed 's/reverse: false/reverse: true/' "$example/scheduler-config.yaml" >"$work/reverse.yaml"
grep -q 'reverse: true' "$work/reverse.yaml" || fail "could not derive the reverse config"
simulate "$work/reverse.yaml" "$work/reverse.jsonl"
for n in 1 2 3; do
  got=$(node_of "$work/reverse.jsonl" "pod-$n")
  [[ "$got" == node-[123] && "$got" != "node-$n" ]] ||
    fail "reverse: pod-$n was bound to $got, want another node of node-1..3"
  echo "pod-$n -> $got"
done

step "ok"
