# Scale-up for a gang in `phalanx run` (the ProvisioningRequest plugin, docs/scale-up.md),
# against cluster-autoscaler's own ProvisioningRequest CRD
# (../shared/upstream/crds/autoscaler/) and a small stand-in for cluster-autoscaler's
# best-effort-atomic-scale-up class (provisioning_stand_in below): a gang of 4 that does not
# fit gets one ProvisioningRequest with a PodTemplate of its members, the stand-in accepts
# it, adds the 4 Nodes and sets Provisioned=True, and the gang binds whole on the new nodes;
# its request and template are deleted then; started before the CRD is installed, phalanx
# warns that the plugin cannot work. Sourced by cases.sh (lib.sh helpers;
# install_project_crd from cases_crds.sh).
# e2e-cases: scale_up_provisioning_request

# provisioning_stand_in NODE-CPU NODE-MEMORY: answers every ProvisioningRequest of class
# best-effort-atomic-scale-up as cluster-autoscaler's orchestrator does
# (provisioningrequest/besteffortatomic, conditions/conditions.go): Accepted=True, then, for
# all its podSets at once, one Node of the given shape per pod whose template's requests fit
# one (Provisioned=True, CapacityIsProvisioned), or none (Provisioned=False,
# CapacityIsNotFound). Nodes are named "<request>-node-<i>". Runs until killed; logs to
# $STATE/stand-in.log.
provisioning_stand_in() {
  local node_cpu=$1 node_mem=$2
  local -A done_requests=()
  set +e
  while true; do
    local list
    list="$(api GET /apis/autoscaling.x-k8s.io/v1/provisioningrequests)" || {
      # The control plane is gone (the case ended): so is the stand-in.
      api GET /readyz >/dev/null 2>&1 || exit 0
      sleep 0.5
      continue
    }
    local item
    while read -r item; do
      [[ -n "$item" ]] || continue
      local ns name class key
      ns="$(jq -r '.metadata.namespace' <<<"$item")"
      name="$(jq -r '.metadata.name' <<<"$item")"
      class="$(jq -r '.spec.provisioningClassName' <<<"$item")"
      key="$ns/$name"
      [[ -n "${done_requests[$key]:-}" ]] && continue
      [[ "$class" == "best-effort-atomic-scale-up.autoscaling.x-k8s.io" ]] || continue
      local path="/apis/autoscaling.x-k8s.io/v1/namespaces/$ns/provisioningrequests/$name/status"
      local now
      now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
      local accepted="{\"type\":\"Accepted\",\"status\":\"True\",\"reason\":\"Accepted\",\"message\":\"ProvisioningRequest is accepted\",\"lastTransitionTime\":\"$now\"}"
      api PATCH "$path" "{\"status\":{\"conditions\":[$accepted]}}" application/merge-patch+json \
        >/dev/null || { echo "cannot accept $key" >>"$STATE/stand-in.log"; continue; }
      # The pods of every podSet, from their templates; each must fit one node.
      local pods=0 fits=true set
      while read -r set; do
        local count tmpl cpu
        count="$(jq -r '.count' <<<"$set")"
        tmpl="$(jq -r '.podTemplateRef.name' <<<"$set")"
        cpu="$(api GET "/api/v1/namespaces/$ns/podtemplates/$tmpl" |
          jq -r '[.template.spec.containers[].resources.requests.cpu // "0" | tonumber] | add')" ||
          { fits=false; break; }
        ((cpu <= node_cpu)) || fits=false
        pods=$((pods + count))
      done < <(jq -c '.spec.podSets[]' <<<"$item")
      local provisioned
      if $fits && ((pods > 0)); then
        local i
        for i in $(seq 0 $((pods - 1))); do
          create_node "$name-node-$i" "$node_cpu" "$node_mem"
        done
        provisioned="{\"type\":\"Provisioned\",\"status\":\"True\",\"reason\":\"CapacityIsProvisioned\",\"message\":\"Capacity is found in the cluster\",\"lastTransitionTime\":\"$now\"}"
        echo "$key: $pods nodes added" >>"$STATE/stand-in.log"
      else
        provisioned="{\"type\":\"Provisioned\",\"status\":\"False\",\"reason\":\"CapacityIsNotFound\",\"message\":\"pods do not fit a node of the group\",\"lastTransitionTime\":\"$now\"}"
        echo "$key: does not fit" >>"$STATE/stand-in.log"
      fi
      api PATCH "$path" "{\"status\":{\"conditions\":[$accepted,$provisioned]}}" \
        application/merge-patch+json >/dev/null || echo "cannot provision $key" >>"$STATE/stand-in.log"
      done_requests[$key]=1
    done < <(jq -c '.items[]' <<<"$list")
    sleep 0.5
  done
}

case_scale_up_provisioning_request() {
  write_config "$STATE/sched.yaml" false "  plugins:
    multiPoint: {enabled: [{name: ProvisioningRequest}]}
  pluginConfig:
  - name: ProvisioningRequest
    args: {maxRequestsPerGang: 1, retryBackoffSeconds: 5}"
  # Before the CRD is installed the plugin cannot work, and phalanx says so at start.
  start_phalanx early "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  wait_until 60 "/readyz of phalanx (before the CRD)" http_get "$METRICS_PORT_early" /readyz
  grep -q "ProvisioningRequest is enabled but the API server does not serve autoscaling.x-k8s.io/v1 provisioningrequests" \
    "$STATE/phalanx-early.log" || fail "no warning about the missing ProvisioningRequest CRD"
  log "warning: $(grep -o 'profile default-scheduler: ProvisioningRequest is enabled.*' "$STATE/phalanx-early.log" | head -1)"
  stop_phalanx early
  install_project_crd autoscaler/autoscaling.x-k8s.io_provisioningrequests.yaml ||
    fail "cluster-autoscaler's ProvisioningRequest CRD is missing"
  api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
    "@$E2E_DIR/testdata/podgroup-crd.yaml" application/yaml >/dev/null || fail "create PodGroup CRD"
  pr_served() { api GET /apis/autoscaling.x-k8s.io/v1/provisioningrequests; }
  pg_served() { api GET /apis/scheduling.x-k8s.io/v1alpha1/podgroups; }
  wait_until 60 "ProvisioningRequest CRD served" pr_served
  wait_until 60 "PodGroup CRD served" pg_served
  create_namespace e2e
  # One node, full: the gang cannot fit and preemption has nothing to take.
  create_node node-0 2 8Gi
  create_pod e2e busy 2
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  wait_until 60 "/readyz of phalanx" http_get "$METRICS_PORT_main" /readyz
  wait_until 60 "pod e2e/busy bound" pod_bound e2e busy
  provisioning_stand_in 2 8Gi &
  # Stopped by lib.sh's cleanup too when the case fails.
  PHALANX_PIDS[stand_in]=$!

  api POST /apis/scheduling.x-k8s.io/v1alpha1/namespaces/e2e/podgroups \
    '{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"llm","namespace":"e2e"},"spec":{"minMember":4}}' \
    >/dev/null || fail "create PodGroup e2e/llm"
  local i
  for i in 0 1 2 3; do create_pod e2e "llm-$i" 2 default-scheduler '{"scheduling.x-k8s.io/pod-group":"llm"}'; done

  # One request for the whole gang, its template, the members annotated to consume it.
  requests() { api GET /apis/autoscaling.x-k8s.io/v1/namespaces/e2e/provisioningrequests; }
  one_request() { [[ "$(requests | jq '.items | length')" == 1 ]]; }
  wait_until 60 "a ProvisioningRequest for the gang" one_request
  local req
  req="$(requests | jq -c '.items[0]')"
  log "request: $(jq -c '{name: .metadata.name, spec: .spec}' <<<"$req")"
  [[ "$(jq -r '.metadata.name' <<<"$req")" == "llm-phalanx-1" ]] || fail "request name: $req"
  [[ "$(jq -r '.spec.provisioningClassName' <<<"$req")" == "best-effort-atomic-scale-up.autoscaling.x-k8s.io" ]] ||
    fail "request class: $req"
  [[ "$(jq '[.spec.podSets[].count] | add' <<<"$req")" == 4 ]] || fail "the request is not for 4 pods: $req"
  annotated() {
    [[ "$(api GET "/api/v1/namespaces/e2e/pods/llm-$1" |
      jq -r '.metadata.annotations["autoscaling.x-k8s.io/consume-provisioning-request"] // ""')" == "llm-phalanx-1" ]]
  }
  for i in 0 1 2 3; do wait_until 30 "pod e2e/llm-$i annotated to consume the request" annotated "$i"; done
  has_pg_event() { has_event e2e llm ProvisioningRequestCreated; }
  wait_until 30 "ProvisioningRequestCreated Event on PodGroup e2e/llm" has_pg_event
  log "Event: $(events_for e2e llm ProvisioningRequestCreated | head -1)"

  # The stand-in adds 4 nodes; the gang binds whole on them.
  for i in 0 1 2 3; do wait_until 90 "gang member e2e/llm-$i bound" pod_bound e2e "llm-$i"; done
  local -A seen=()
  for i in 0 1 2 3; do
    local n
    n="$(pod_node e2e "llm-$i")"
    [[ "$n" == llm-phalanx-1-node-* ]] || fail "e2e/llm-$i is on $n, not on a node of the scale-up"
    seen[$n]=1
  done
  ((${#seen[@]} == 4)) || fail "the gang's members share nodes: ${!seen[*]}"
  log "gang bound: $(pod_bindings e2e | tr '\n' ' ')"
  log "stand-in: $(tr '\n' ';' <"$STATE/stand-in.log")"
  local nodes
  nodes="$(api GET /api/v1/nodes | jq '.items | length')"
  ((nodes == 5)) || fail "$nodes nodes: expected node-0 and the 4 of the one scale-up"

  # The capacity is in use: the request and its template are deleted.
  no_request() { [[ "$(requests | jq '.items | length')" == 0 ]]; }
  no_template() { [[ "$(api GET /api/v1/namespaces/e2e/podtemplates | jq '.items | length')" == 0 ]]; }
  wait_until 30 "the request deleted after the gang started" no_request
  wait_until 30 "its PodTemplate deleted" no_template
  kill "${PHALANX_PIDS[stand_in]}" 2>/dev/null || true
  wait "${PHALANX_PIDS[stand_in]}" 2>/dev/null || true
  unset "PHALANX_PIDS[stand_in]"
  if grep -qiE 'forbidden|cannot (create|delete)' "$STATE/phalanx-main.log"; then
    fail "phalanx logged a refused write: $(grep -iE 'forbidden|cannot (create|delete)' "$STATE/phalanx-main.log" | head -3)"
  fi
  stop_phalanx main
}
