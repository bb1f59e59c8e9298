# HTTP scheduler extenders in `phalanx run`, with test/extender/fake_extender.py
# on loopback as the extender. Sourced by cases.sh.
# e2e-cases: extender_filter extender_unreachable

# start_extender KEEP-NODE: runs the fake extender on a free loopback port (killed at exit
# with the phalanx processes); sets EXTENDER_URL.
start_extender() {
  python3 "$E2E_DIR/../extender/fake_extender.py" --port 0 --port-file "$STATE/ext.port" \
    --keep "$1" --log "$STATE/ext.calls" >"$STATE/ext.log" 2>&1 &
  PHALANX_PIDS[extender]=$!
  ext_ready() { [[ -s "$STATE/ext.port" ]]; }
  wait_until 30 "fake extender listening" ext_ready
  EXTENDER_URL="http://127.0.0.1:$(cat "$STATE/ext.port")/scheduler"
  log "fake extender at $EXTENDER_URL keeps only $1"
}

# An extender that filters out all but node-b decides every placement: 4 pods (room for all
# on any node) all bound to node-b, and the extender saw each pod's filter call (with one
# feasible node left there is nothing to prioritize).
case_extender_filter() {
  create_namespace e2e
  create_node node-a 8 16Gi
  create_node node-b 8 16Gi
  create_node node-c 8 16Gi
  start_extender node-b
  write_config "$STATE/sched.yaml" false "extenders:
- urlPrefix: $EXTENDER_URL
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
  httpTimeout: 10s"
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  local i
  for i in 0 1 2 3; do create_pod e2e web-$i 500m; done
  for i in 0 1 2 3; do wait_until 60 "pod e2e/web-$i bound" pod_bound e2e web-$i; done
  for i in 0 1 2 3; do
    [[ "$(pod_node e2e web-$i)" == node-b ]] ||
      fail "e2e/web-$i bound to $(pod_node e2e web-$i), but the extender keeps only node-b"
  done
  for i in 0 1 2 3; do
    grep -q "\"verb\": \"filter\", \"pod\": \"e2e/web-$i\"" "$STATE/ext.calls" ||
      fail "the extender never filtered e2e/web-$i: $(cat "$STATE/ext.calls")"
  done
  log "4 pods bound to node-b; extender calls: $(wc -l <"$STATE/ext.calls")"
  stop_phalanx main
}

# A non-ignorable extender nobody listens on: the pod is not bound and gets upstream's error
# (net/http's message for the refused POST) in a FailedScheduling event and in
# PodScheduled=False reason SchedulerError.
case_extender_unreachable() {
  create_namespace e2e
  create_node node-a 8 16Gi
  local port
  port=$(free_port)
  write_config "$STATE/sched.yaml" false "extenders:
- urlPrefix: http://127.0.0.1:$port
  filterVerb: filter"
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  create_pod e2e web-0 500m
  wait_until 60 "FailedScheduling event for e2e/web-0" has_event e2e web-0 FailedScheduling
  local msg want
  msg="$(events_for e2e web-0 FailedScheduling | head -1)"
  want="Post \"http://127.0.0.1:$port/filter\": dial tcp 127.0.0.1:$port: connect: connection refused"
  log "FailedScheduling: $msg"
  [[ "$msg" == "$want" ]] || fail "FailedScheduling message '$msg', want '$want'"
  cond_error() {
    api GET /api/v1/namespaces/e2e/pods/web-0 |
      jq -e '.status.conditions[]? | select(.type=="PodScheduled" and .status=="False" and .reason=="SchedulerError")'
  }
  wait_until 30 "PodScheduled=False reason SchedulerError on e2e/web-0" cond_error
  pod_unbound e2e web-0 || fail "e2e/web-0 was bound although the extender is unreachable"
  stop_phalanx main
}
