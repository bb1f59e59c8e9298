# Starvation eviction in `phalanx run` (GangReservation preemptAfterSeconds): a
# gang that holds a reservation and has waited past preemptAfterSeconds evicts a small job
# on its reserved node through the preemption path (Preempted Event on the victim,
# StarvationEviction Event on the PodGroup, the evictions counter in /metrics), and starts.
# Sourced by cases.sh (lib.sh helpers; kubelet_reaper from cases_queues.sh).
# e2e-cases: reservation_starvation_eviction

# spod NAMESPACE NAME CPU RUNTIME-SECONDS [GROUP]: a pod with an expected runtime, in Volcano
# PodGroup GROUP when given.
spod() {
  local ann="{\"scheduling.phalanx.dev/expected-runtime-seconds\":\"$4\""
  [[ -n "${5:-}" ]] && ann+=",\"scheduling.k8s.io/group-name\":\"$5\""
  ann+="}"
  api POST "/api/v1/namespaces/$1/pods" "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$2\",\"namespace\":\"$1\",\"annotations\":$ann},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"$3\",\"memory\":\"64Mi\"}}}]}}" \
    >/dev/null || fail "create pod $1/$2"
}

case_reservation_starvation_eviction() {
  api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
    "@$E2E_DIR/testdata/volcano-podgroup-crd.yaml" application/yaml >/dev/null || fail "create PodGroup CRD"
  wait_until 60 "PodGroups served" api GET /apis/scheduling.volcano.sh/v1beta1/podgroups
  create_namespace e2e
  create_node node-a 4 8Gi
  create_node node-b 4 8Gi
  create_node node-c 1 8Gi  # room for the pod whose deletion makes the gang retry, never for the gang
  write_config "$STATE/sched.yaml" false "  plugins:
    multiPoint:
      enabled: [{name: GangReservation}]
  pluginConfig:
  - name: GangReservation
    args: {reservationThresholdSeconds: 1, preemptAfterSeconds: 1}"
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz
  kubelet_reaper e2e
  # Two small jobs fill node-a and node-b for an hour.
  spod e2e small-1 4 3600
  spod e2e small-2 4 3600
  spod e2e poke 0.5 3600
  both() { pod_bound e2e small-1 && pod_bound e2e small-2 && pod_bound e2e poke; }
  wait_until 60 "the small jobs bound" both
  # The gang (2 x 2 CPUs) fits on neither; it waits.
  api POST /apis/scheduling.volcano.sh/v1beta1/namespaces/e2e/podgroups \
    '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"big","namespace":"e2e"},"spec":{"minMember":2}}' \
    >/dev/null || fail "create PodGroup e2e/big"
  spod e2e big-0 2 60 big
  spod e2e big-1 2 60 big
  failed() { has_event e2e big-0 FailedScheduling; }
  wait_until 60 "the gang's first failed cycle" failed
  sleep 2  # past threshold and preemptAfterSeconds (1 s each): a deliberate wait of the clock
  # A pod deleted from node-c frees room (an assigned-pod delete): the gang retries, has
  # waited past the threshold, reserves and evicts.
  api DELETE /api/v1/namespaces/e2e/pods/poke \
    '{"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0}' >/dev/null || fail "delete poke"
  evicted() { has_event e2e big StarvationEviction; }
  wait_until 60 "a StarvationEviction Event on PodGroup e2e/big" evicted
  local msg victim
  msg="$(events_for e2e big StarvationEviction | head -1)"
  log "StarvationEviction: $msg"
  [[ "$msg" == *"gang e2e/big"* ]] || fail "the event does not name the gang: $msg"
  if [[ "$msg" == *"e2e/small-1"* ]]; then victim=small-1; else victim=small-2; fi
  [[ "$msg" == *"e2e/$victim"* ]] || fail "the event names no victim: $msg"
  local other=small-1
  [[ $victim == small-1 ]] && other=small-2
  [[ "$msg" != *"e2e/$other"* ]] || fail "both small jobs evicted, one is enough: $msg"
  preempted() { events_for e2e "$victim" Preempted | grep -q "Preempted by gang e2e/big (starving: waited "; }
  wait_until 30 "Preempted event on $victim naming the gang" preempted
  gone() { [[ "$(api GET "/api/v1/namespaces/e2e/pods/$victim" | jq -r '.metadata.name // ""')" != "$victim" ]]; }
  wait_until 60 "$victim deleted" gone
  gang_bound() { pod_bound e2e big-0 && pod_bound e2e big-1; }
  wait_until 60 "the gang bound" gang_bound
  pod_bound e2e "$other" || fail "$other lost its node"
  wait_until 30 "evictions counter" metrics_match "$METRICS_PORT_main" \
    'phalanx_gang_reservations{outcome="evictions"} 1$'
  log "gang on $(pod_node e2e big-0) / $(pod_node e2e big-1), $other stays on $(pod_node e2e "$other")"
  kill "$REAPER_PID" 2>/dev/null || true
  stop_phalanx main
}
