#!/usr/bin/env bash
# The `phalanx` that e2e.live_bench_smoke hands to scripts/live-bench.sh (--phalanx), so that
# the benchmark's own Phalanx run gets the invariant check every e2e case ends with:
# live-bench.sh runs each client on a fresh control plane and removes it right after the
# client exits, so the check cannot wait for the end of the case.
# Usage: PHALANX_REAL=BINARY INVARIANTS_DIR=DIR phalanx_checked.sh ARGS...
# Anything but `run` (load create / watch / bind) is the real binary, exec'd unchanged.
# `phalanx run ... --kubeconfig DIR/admin.kubeconfig`: runs the real binary as a child
# (SIGTERM / SIGINT are passed on to it), and once it has exited, before live-bench.sh can
# stop the control plane, runs test/faults/check_invariants.py against it (DIR/env, written
# by scripts/control-plane.sh start) with lib.sh's run_invariants_checker: output in
# INVARIANTS_DIR/<client>-<round> (from DIR's parent, e.g. phalanx-1), exit code in
# INVARIANTS_DIR/<client>-<round>.code. Exits with the child's exit code.
set -uo pipefail
real=${PHALANX_REAL:?PHALANX_REAL: the phalanx binary}
[[ "${1:-}" == run ]] || exec "$real" "$@"
: "${INVARIANTS_DIR:?INVARIANTS_DIR: where to write the checker output}"
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
kc=""
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
  [[ "${args[i]}" == --kubeconfig ]] && kc=${args[i + 1]}
done
"$real" "$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM
trap 'kill -INT "$child" 2>/dev/null' INT
# `wait` returns early (> 128) when a trapped signal arrives: wait again until the child
# is gone, keeping the status of the wait that reaped it.
while :; do
  code=0
  wait "$child" || code=$?
  kill -0 "$child" 2>/dev/null || break
done
trap - TERM INT
if [[ -n "$kc" && -f "$(dirname "$kc")/env" ]]; then
  run_invariants_checker "$(dirname "$kc")/env" \
    "$INVARIANTS_DIR/$(basename "$(dirname "$(dirname "$kc")")")"
else
  echo "phalanx_checked.sh: no control-plane env file next to --kubeconfig '$kc'" >&2
fi
exit "$code"
