# Real kube-controller-manager v1.20.2 next to phalanx ("the test control plane
# gains kube-controller-manager ... so live tests see real claim binding and namespace
# deletion"). scripts/control-plane.sh `controllers DIR` starts it.
# e2e-cases: statefulset_controllers
# Sourced by cases.sh (lib.sh helpers; $E2E_DIR, $STATE).

# start_controllers [LIST]: kube-controller-manager on this case's control plane.
start_controllers() {
  "$CP" controllers "$STATE/cp" ${1:+"$1"} >"$STATE/controllers-start.log" 2>&1 || {
    cat "$STATE/controllers-start.log" >&2
    fail "kube-controller-manager did not start"
  }
}

# What a kubelet does for a bound pod marked for deletion once its containers stopped:
# delete it for good (gracePeriodSeconds 0). There is no kubelet here, so without this the
# garbage collector's and the namespace controller's graceful deletions never finish.
kubelet_finish_deletions() {  # NAMESPACE
  local p
  for p in $(api GET "/api/v1/namespaces/$1/pods" |
             jq -r '.items[] | select(.metadata.deletionTimestamp != null) | .metadata.name'); do
    api DELETE "/api/v1/namespaces/$1/pods/$p?gracePeriodSeconds=0" >/dev/null || true
  done
}

# A StatefulSet (podManagementPolicy Parallel: there is no kubelet, so OrderedReady would
# stop at a pod that never becomes Ready) gets its pods from the real StatefulSet
# controller and phalanx binds them; deleting the StatefulSet lets the garbage collector
# delete its pods (ownerReferences), and deleting the namespace lets the namespace
# controller empty and remove it. Nothing here is faked: these are upstream's controllers.
case_statefulset_controllers() {
  start_controllers
  create_namespace e2e
  create_node node-a 2 8Gi
  create_node node-b 2 8Gi
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz
  api POST /apis/apps/v1/namespaces/e2e/statefulsets "$(cat <<'JSON'
{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web","namespace":"e2e"},
 "spec":{"replicas":3,"serviceName":"web","podManagementPolicy":"Parallel",
  "selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},
   "spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.9",
     "resources":{"requests":{"cpu":"1","memory":"64Mi"}}}]}}}}
JSON
)" >/dev/null || fail "create StatefulSet e2e/web"
  local i
  for i in 0 1 2; do wait_until 60 "StatefulSet pod e2e/web-$i bound" pod_bound e2e web-$i; done
  log "StatefulSet pods bound: $(for i in 0 1 2; do printf '%s=%s ' web-$i "$(pod_node e2e web-$i)"; done)"
  check_invariants
  # 3 pods of 1 CPU on two 2-CPU nodes: one node holds two, the other one.
  local counts
  counts="$(for i in 0 1 2; do pod_node e2e web-$i; done | sort | uniq -c | awk '{print $1}' | sort | tr '\n' ' ')"
  [[ "$counts" == "1 2 " ]] || fail "pods per node: '$counts', expected '1 2 '"

  api DELETE /apis/apps/v1/namespaces/e2e/statefulsets/web >/dev/null || fail "delete StatefulSet"
  # The garbage collector deletes the dependents (background propagation): bound pods get a
  # deletionTimestamp, which a kubelet would then finish.
  web_pods_deleted() {
    [[ "$(api GET '/api/v1/namespaces/e2e/pods?labelSelector=app%3Dweb' |
          jq '[.items[] | select(.metadata.deletionTimestamp == null)] | length')" == 0 ]]
  }
  wait_until 90 "garbage collector deletes the StatefulSet's pods" web_pods_deleted
  kubelet_finish_deletions e2e
  no_web_pods() {
    [[ "$(api GET '/api/v1/namespaces/e2e/pods?labelSelector=app%3Dweb' | jq '.items | length')" == 0 ]]
  }
  wait_until 30 "StatefulSet pods gone" no_web_pods
  log "garbage collector removed the StatefulSet's pods"

  create_pod e2e lone 500m
  wait_until 60 "pod e2e/lone bound" pod_bound e2e lone
  api DELETE /api/v1/namespaces/e2e >/dev/null || fail "delete namespace e2e"
  ns_gone() {
    kubelet_finish_deletions e2e
    ! api GET /api/v1/namespaces/e2e >/dev/null 2>&1
  }
  wait_until 120 "namespace controller removes namespace e2e" ns_gone
  log "namespace e2e deleted by the namespace controller"
  phalanx_running main || fail "phalanx exited while the controllers deleted its pods"
}
