# PodGroup status that follows its members' pod phases, against a real API server.
# e2e-cases: podgroup_lifecycle
# Sourced by cases.sh (lib.sh helpers; $E2E_DIR, $STATE).

# A Coscheduling PodGroup goes Scheduled -> Running -> Finished as its pods run and end (the
# test sets the pod phases through pods/status, as a kubelet would), with status.running /
# succeeded following; scheduler-plugins' PodGroup controller calls "all minMember
# succeeded" Finished (apis/scheduling/v1alpha1 PodGroupFinished). Pods that end leave
# phalanx's pod watch (field selector status.phase!=Succeeded,status.phase!=Failed, as
# upstream's) and enter its terminal-pod watch: the gang counts them, and the scheduler
# cache treats them as deleted (a 2-CPU pod fits on the 2-CPU node once both have ended).
# A second gang with a Failed member is Failed.
case_podgroup_lifecycle() {
  api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
    "@$E2E_DIR/testdata/podgroup-crd.yaml" application/yaml >/dev/null || fail "create PodGroup CRD"
  crd_ready() { api GET /apis/scheduling.x-k8s.io/v1alpha1/podgroups; }
  wait_until 60 "PodGroup CRD served" crd_ready
  create_namespace e2e
  create_node node-a 2 8Gi
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  local port=$METRICS_PORT_main
  wait_until 60 "/readyz" http_get "$port" /readyz
  grep -q 'pods(terminal)/v1' "$STATE/phalanx-main.log" ||
    fail "phalanx does not watch terminal pods: $(grep -m1 'watching' "$STATE/phalanx-main.log")"
  local pgpath=/apis/scheduling.x-k8s.io/v1alpha1/namespaces/e2e/podgroups
  pg() {
    api POST "$pgpath" \
      "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"e2e\"},\"spec\":{\"minMember\":$2}}" >/dev/null ||
      fail "create PodGroup $1"
  }
  pg_status() { api GET "$pgpath/$1" | jq -c '.status // {}'; }
  # pg_is NAME JQ-CONDITION (on .status)
  pg_is() { api GET "$pgpath/$1" | jq -e ".status | $2" >/dev/null; }
  set_phase() {  # POD PHASE: what a kubelet reports
    api PATCH "/api/v1/namespaces/e2e/pods/$1/status" "{\"status\":{\"phase\":\"$2\"}}" \
      application/merge-patch+json >/dev/null || fail "set phase $2 on pod e2e/$1"
  }

  pg train 2
  local i
  for i in 0 1; do create_pod e2e train-$i 1 default-scheduler '{"scheduling.x-k8s.io/pod-group":"train"}'; done
  for i in 0 1; do wait_until 60 "gang member e2e/train-$i bound" pod_bound e2e train-$i; done
  # scheduler-plugins' scheduling.x-k8s.io PodGroup status has no `scheduled` (its CRD dropped
  # it; only the legacy scheduling.sigs.k8s.io group keeps it): Phalanx writes none.
  wait_until 30 "PodGroup train Scheduled (running 0, no status.scheduled)" \
    pg_is train '.phase == "Scheduled" and .scheduled == null and .running == 0'
  log "PodGroup train: $(pg_status train)"

  set_phase train-0 Running
  wait_until 30 "PodGroup train running 1, still Scheduled (1 of minMember 2 running)" \
    pg_is train '.phase == "Scheduled" and .running == 1'
  set_phase train-1 Running
  wait_until 30 "PodGroup train Running (running 2)" pg_is train '.phase == "Running" and .running == 2'
  log "PodGroup train: $(pg_status train)"

  set_phase train-0 Succeeded
  wait_until 30 "PodGroup train Running with running 1, succeeded 1" \
    pg_is train '.phase == "Running" and .running == 1 and .succeeded == 1'
  set_phase train-1 Succeeded
  wait_until 30 "PodGroup train Finished (succeeded 2, running 0)" \
    pg_is train '.phase == "Finished" and .succeeded == 2 and .running == 0 and .failed == 0'
  log "PodGroup train: $(pg_status train)"

  # The ended pods no longer hold the node: a pod of its whole 2 CPUs is bound.
  create_pod e2e after 2
  wait_until 60 "pod e2e/after (2 CPU) bound once the gang's pods ended" pod_bound e2e after
  set_phase after Succeeded

  # A gang with a failed member: Failed (failed 1 + running 1 reach minMember 2).
  pg flaky 2
  for i in 0 1; do create_pod e2e flaky-$i 1 default-scheduler '{"scheduling.x-k8s.io/pod-group":"flaky"}'; done
  for i in 0 1; do wait_until 60 "gang member e2e/flaky-$i bound" pod_bound e2e flaky-$i; done
  set_phase flaky-0 Running
  set_phase flaky-1 Running
  set_phase flaky-1 Failed
  wait_until 30 "PodGroup flaky Failed (failed 1, running 1)" \
    pg_is flaky '.phase == "Failed" and .failed == 1 and .running == 1'
  log "PodGroup flaky: $(pg_status flaky)"
  pg_is train '.phase == "Finished"' || fail "PodGroup train left Finished: $(pg_status train)"
  stop_phalanx main
}
