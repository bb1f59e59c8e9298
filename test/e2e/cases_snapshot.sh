# Importing a live cluster into the simulator: `phalanx simulate --from-cluster`
# and `phalanx snapshot` against a real API server whose pods `phalanx run` bound.
# e2e-cases: snapshot_from_cluster
# Sourced by cases.sh (lib.sh helpers; $E2E_DIR, $STATE).

# per_node_counts RESULTS-JSONL: "NODE COUNT" lines of a simulation's --results (bound pods).
per_node_counts() {
  jq -r 'select(.node != null) | .node' "$1" | sort | uniq -c | awk '{print $2, $1}'
}

# The cluster's bound state (pods per node), as the API server holds it, equals what
# `simulate --from-cluster` ends with; a pod nothing can hold stays pending there too;
# `snapshot` -> `simulate FILE` gives the same placements as --from-cluster; the snapshot
# holds the PodGroup and no Secret. Read with the scheduler's own least-privileged user.
case_snapshot_from_cluster() {
  api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
    "@$E2E_DIR/testdata/podgroup-crd.yaml" application/yaml >/dev/null || fail "create PodGroup CRD"
  crd_ready() { api GET /apis/scheduling.x-k8s.io/v1alpha1/podgroups; }
  wait_until 60 "PodGroup CRD served" crd_ready
  create_namespace e2e
  api POST /api/v1/namespaces/e2e/secrets \
    '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db-password"},"stringData":{"p":"hunter2"}}' \
    >/dev/null || fail "create Secret"
  create_node node-a 4 8Gi
  create_node node-b 4 8Gi
  create_node node-c 2 8Gi
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz
  api POST /apis/scheduling.x-k8s.io/v1alpha1/namespaces/e2e/podgroups \
    '{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"train","namespace":"e2e"},"spec":{"minMember":2}}' \
    >/dev/null || fail "create PodGroup"
  local i
  for i in 0 1; do create_pod e2e train-$i 2 default-scheduler '{"scheduling.x-k8s.io/pod-group":"train"}'; done
  for i in 0 1 2 3 4; do create_pod e2e web-$i 1; done
  create_pod e2e small-0 500m
  create_pod e2e huge 16
  for p in train-0 train-1 web-0 web-1 web-2 web-3 web-4 small-0; do
    wait_until 60 "pod e2e/$p bound" pod_bound e2e "$p"
  done
  wait_until 30 "FailedScheduling for e2e/huge" has_event e2e huge FailedScheduling
  pod_unbound e2e huge || fail "the 16-CPU pod was bound"
  local live
  live="$(api GET /api/v1/pods | jq -r '.items[] | select(.spec.nodeName != null) | .spec.nodeName' |
          sort | uniq -c | awk '{print $2, $1}')"
  log "live pods per node: $(tr '\n' ' ' <<<"$live")"
  stop_phalanx main

  local kc="$STATE/cp/phalanx.kubeconfig"
  "$PHALANX" simulate --from-cluster --kubeconfig "$kc" --no-progress \
    --results "$STATE/from-cluster.jsonl" >"$STATE/sim1.out" 2>&1 ||
    { cat "$STATE/sim1.out"; fail "simulate --from-cluster failed"; }
  cat "$STATE/sim1.out"
  grep -q "podgroups.scheduling.x-k8s.io: 1" "$STATE/sim1.out" ||
    fail "--from-cluster did not import the PodGroup"
  local sim1
  sim1="$(per_node_counts "$STATE/from-cluster.jsonl")"
  [[ "$sim1" == "$live" ]] ||
    fail "--from-cluster pods per node '$(tr '\n' ' ' <<<"$sim1")' != live '$(tr '\n' ' ' <<<"$live")'"
  [[ "$(jq -r 'select(.pod == "e2e/huge") | .node' "$STATE/from-cluster.jsonl")" == null ]] ||
    fail "the 16-CPU pod was placed by the simulation"

  "$PHALANX" snapshot --kubeconfig "$kc" -o "$STATE/snap.yaml" 2>"$STATE/snap.err" ||
    { cat "$STATE/snap.err"; fail "phalanx snapshot failed"; }
  cat "$STATE/snap.err"
  grep -q '"kind": "PodGroup"' "$STATE/snap.yaml" || fail "the snapshot has no PodGroup"
  grep -q 'Secret\|hunter2' "$STATE/snap.yaml" && fail "the snapshot contains a Secret"
  "$PHALANX" simulate "$STATE/snap.yaml" --no-progress --results "$STATE/snap.jsonl" \
    >"$STATE/sim2.out" 2>&1 || { cat "$STATE/sim2.out"; fail "simulate of the snapshot failed"; }
  local a b
  a="$(jq -c '{pod, node}' "$STATE/from-cluster.jsonl" | sort)"
  b="$(jq -c '{pod, node}' "$STATE/snap.jsonl" | sort)"
  [[ "$a" == "$b" ]] || fail "snapshot -> simulate placements differ from --from-cluster:
$(diff <(echo "$a") <(echo "$b"))"
  log "snapshot -> simulate: the same $(wc -l <<<"$a") placements as --from-cluster"
  # `explain` on the live state: the pending pod's blocking plugin and reason on every node.
  "$PHALANX" explain e2e/huge --from-cluster --kubeconfig "$kc" >"$STATE/explain.out" 2>&1 ||
    { cat "$STATE/explain.out"; fail "phalanx explain --from-cluster failed"; }
  cat "$STATE/explain.out"
  local n
  for n in node-a node-b node-c; do
    grep "NodeResourcesFit" "$STATE/explain.out" | grep "Insufficient cpu" | grep -q "$n" ||
      fail "explain does not name NodeResourcesFit / Insufficient cpu on $n"
  done
}
