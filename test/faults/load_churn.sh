# Case load_churn of test/faults/cases.sh (sourced by it; uses its helpers and test/e2e/lib.sh):
# the "Load" fault case. Two equal rounds of pods and Coscheduling gangs arrive in 10
# waves while nodes are added and removed (scheduler_perf churn op, mode recreate), with the
# pod GC's deletion of the pods bound to a removed node (test/faults/load_churn.py does the
# load, the churn, the per-round invariant check and the VmRSS sampling of `phalanx run`).
# Scale (env LOAD_CHURN_SCALE):
#   small (default, CTest e2e.fault_load_churn): per round 2,000 pods = 200 gangs x 4 + 1,200
#         plain, 20 base nodes, churn 4 slots every 500 ms
#   full  (scripts/reliability.sh): per round 10,000 pods = 1,000 gangs x 4 + 6,000 plain,
#         100 base nodes, churn 10 slots every 500 ms
# Passes when both rounds bind every pod that is not lost to node removal, check_invariants.py
# (with --disrupted: gangs that lost members with their node) reports 0 violations after each
# round, and the RSS is bounded: RSS at the end of round 2 <= RSS at the end of round 1 x 1.25
# + 16 MiB (both rounds end with the same objects in the cache: round 1's were deleted; a
# leak of per-pod or per-node state grows round 2 by a round's worth of objects, slack left
# for allocator fragmentation and the second round's churn nodes).
# LOAD_CHURN_PLANT=1 breaks the gang invariant twice after round 1 (load_churn.py --plant):
# the case must then fail with 2 violations. LOAD_CHURN_QPS sets the scheduler's client QPS.
# FAULT-REPORT load_churn injected=<node adds + node removes> pods_bound=<both rounds,
# including pods later lost to node removal> violations=<sum of both rounds>.
# shellcheck shell=bash

case_load_churn() {
  local scale=${LOAD_CHURN_SCALE:-small}
  local -a args
  case "$scale" in
    small) args=(--pods 2000 --gangs 200 --churn-slots 4 --timeout 240) ;;
    full) args=(--pods 10000 --gangs 1000 --churn-slots 10 --timeout 900) ;;
    *) fail "LOAD_CHURN_SCALE=$scale: expected small or full" ;;
  esac
  install_podgroup_crd
  create_namespace e2e
  write_config "$STATE/sched.yaml" false
  # LOAD_CHURN_QPS: the scheduler's client QPS = burst (default: write_config's 200 / 400).
  [[ -n "${LOAD_CHURN_QPS:-}" ]] &&
    sed -i -e "s/qps: 200/qps: $LOAD_CHURN_QPS/" -e "s/burst: 400/burst: $LOAD_CHURN_QPS/" "$STATE/sched.yaml"
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  local pid=${PHALANX_PIDS[main]}
  # shellcheck disable=SC2154  # METRICS_PORT_main is set by start_phalanx (printf -v)
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz
  log "load_churn scale $scale: ${args[*]}"
  local t0=$SECONDS code=0
  [[ -n "${LOAD_CHURN_PLANT:-}" ]] && args+=(--plant)
  python3 "$FAULTS_DIR/load_churn.py" --pid "$pid" --namespace e2e --seed "$SEED" \
    --disrupted-out "$STATE/disrupted.json" "${args[@]}" | tee "$STATE/load_churn.out" || code=$?
  ((code == 0)) || fail "load_churn.py failed (exit $code)"
  phalanx_running main || fail "phalanx exited under load"
  local summary
  summary="$(grep '^LOAD-CHURN ' "$STATE/load_churn.out")" || fail "no LOAD-CHURN line"
  field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$summary"; }
  local bound added removed viol r1 r2 peak limit
  bound=$(field pods_bound); added=$(field nodes_added); removed=$(field nodes_removed)
  viol=$(field violations); r1=$(field rss_round1_kib); r2=$(field rss_last_kib); peak=$(field rss_peak_kib)
  limit=$((r1 * 5 / 4 + 16 * 1024))
  log "load_churn: $bound pods bound, $added nodes added, $removed removed, $viol violations," \
      "RSS end of round 1 $((r1 / 1024)) MiB, end of round 2 $((r2 / 1024)) MiB (limit $((limit / 1024)) MiB)," \
      "peak $((peak / 1024)) MiB, $((SECONDS - t0)) s"
  echo "MEMORY load_churn rss_round1_kib=$r1 rss_round2_kib=$r2 rss_peak_kib=$peak limit_kib=$limit"
  stop_phalanx main
  echo "FAULT-REPORT load_churn injected=$((added + removed)) pods_bound=$bound violations=$viol"
  ((viol == 0)) || fail "$viol invariant violation(s) (above)"
  ((r2 <= limit)) || fail "RSS grew from $r1 KiB (end of round 1) to $r2 KiB (end of round 2) > $limit KiB"
}
