# Queues and quotas in `phalanx run`: KAI / Volcano Queues and ElasticQuotas
# watched live, the Queues plugin enforcing them, their status written back in each
# dialect's fields, and invalid queue objects reported as Events on them. Sourced by
# cases.sh (lib.sh helpers); phalanx runs as the least-privileged user of deploy/rbac.yaml.
# e2e-cases: queues_fair_share queues_reclaim queues_elasticquota queues_bad_input

# The PodGroup and queue CRDs (minimal schemas, status subresources as upstream's).
queues_install_crds() {
  local f
  for f in volcano-podgroup-crd kai-queue-crd volcano-queue-crd elasticquota-crd; do
    api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
      "@$E2E_DIR/testdata/$f.yaml" application/yaml >/dev/null || fail "create CRD $f"
  done
  local p
  for p in /apis/scheduling.volcano.sh/v1beta1/podgroups /apis/scheduling.run.ai/v2/queues \
           /apis/scheduling.volcano.sh/v1beta1/queues /apis/scheduling.x-k8s.io/v1alpha1/elasticquotas; do
    wait_until 60 "$p served" api GET "$p"
  done
}

# A profile with the Queues plugin (docs/queues.md "Turning it on").
queues_config() {
  write_config "$STATE/sched.yaml" false "  plugins:
    multiPoint:
      enabled: [{name: Queues}]
      disabled: [{name: PrioritySort}]"
}

queues_start() {
  queues_config
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz
  local r
  for r in queues.scheduling.run.ai queues.scheduling.volcano.sh elasticquotas.scheduling.x-k8s.io; do
    grep -q "$r" "$STATE/phalanx-main.log" || fail "phalanx does not watch $r"
  done
}

# vpg NAMESPACE NAME MIN: a Volcano PodGroup.
vpg() {
  api POST "/apis/scheduling.volcano.sh/v1beta1/namespaces/$1/podgroups" \
    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"$2\",\"namespace\":\"$1\"},\"spec\":{\"minMember\":$3}}" \
    >/dev/null || fail "create PodGroup $1/$2"
}

# qpod NAMESPACE NAME CPU LABELS-JSON ANNOTATIONS-JSON
qpod() {
  api POST "/api/v1/namespaces/$1/pods" "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$2\",\"namespace\":\"$1\",\"labels\":$4,\"annotations\":$5},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"$3\",\"memory\":\"64Mi\"}}}]}}" \
    >/dev/null || fail "create pod $1/$2"
}

# bound_count NAMESPACE PREFIX / unbound_count NAMESPACE PREFIX: pods whose name starts
# with PREFIX that are (not) bound.
bound_count() {
  api GET "/api/v1/namespaces/$1/pods" |
    jq --arg p "$2" '[.items[] | select(.metadata.name | startswith($p)) | select((.spec.nodeName // "") != "" and .metadata.deletionTimestamp == null)] | length'
}
unbound_count() {
  api GET "/api/v1/namespaces/$1/pods" |
    jq --arg p "$2" '[.items[] | select(.metadata.name | startswith($p)) | select((.spec.nodeName // "") == "")] | length'
}

# kubelet_reaper NAMESPACE: plays the kubelet's part for evicted pods (there is no kubelet
# on the e2e control plane): a pod with a deletionTimestamp is deleted with grace 0, so
# that reclaim victims go. Runs in the background until the case's shell exits;
# REAPER_PID is its pid.
kubelet_reaper() {
  local ns=$1 parent=$$
  (
    while kill -0 "$parent" 2>/dev/null; do
      local p
      for p in $(api GET "/api/v1/namespaces/$ns/pods" 2>/dev/null |
                 jq -r '.items[] | select(.metadata.deletionTimestamp != null) | .metadata.name'); do
        api DELETE "/api/v1/namespaces/$ns/pods/$p" \
          '{"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0}' >/dev/null 2>&1 || true
      done
      sleep 0.5
    done
  ) &
  REAPER_PID=$!
}

# object_events NAMESPACE KIND NAME REASON: messages of the events on an object.
object_events() {
  api GET "/api/v1/namespaces/$1/events?fieldSelector=involvedObject.kind%3D$2,involvedObject.name%3D$3" |
    jq -r --arg r "$4" '.items[] | select(.reason == $r) | .message'
}

# Two Volcano queues with weights 1:3 and a saturating backlog of gangs (8 gangs of 2 x 1 CPU
# each, on 16 CPUs): the allocation converges to 4:12 CPUs (1:3) within one gang's size
# (2 CPUs), by placement order and reclaim; each Queue's status (state, running / pending /
# inqueue PodGroups, allocated) matches what the API says about its pods.
case_queues_fair_share() {
  queues_install_crds
  create_namespace e2e
  local n
  for n in a b c d; do create_node "node-$n" 4 8Gi; done
  local vq=/apis/scheduling.volcano.sh/v1beta1/queues
  api POST "$vq" '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"qa"},"spec":{"weight":1}}' >/dev/null || fail "create Queue qa"
  api POST "$vq" '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"qb"},"spec":{"weight":3}}' >/dev/null || fail "create Queue qb"
  queues_start
  kubelet_reaper e2e
  local i q
  for i in 0 1 2 3 4 5 6 7; do
    for q in a b; do
      vpg e2e "$q-$i" 2
      qpod e2e "$q-$i-0" 1 '{}' "{\"scheduling.k8s.io/group-name\":\"$q-$i\",\"scheduling.volcano.sh/queue-name\":\"q$q\"}"
      qpod e2e "$q-$i-1" 1 '{}' "{\"scheduling.k8s.io/group-name\":\"$q-$i\",\"scheduling.volcano.sh/queue-name\":\"q$q\"}"
    done
  done
  # Settled: no eviction in flight (no pod terminating), whole gangs bound, the cluster full,
  # qa:qb within one gang (2 CPUs) of 4:12; and the same two seconds later (reclaim moves
  # through states such as 6:10 on its way).
  snapshot() {
    api GET /api/v1/namespaces/e2e/pods |
      jq -r '([.items[] | select(.metadata.deletionTimestamp != null)] | length) as $t |
             [.items[] | select((.spec.nodeName // "") != "")] as $b |
             "\($t) \([$b[] | select(.metadata.name | startswith("a-"))] | length) \([$b[] | select(.metadata.name | startswith("b-"))] | length)"'
  }
  converged() {
    local s1 s2 t a b
    s1="$(snapshot)"
    read -r t a b <<<"$s1"
    ((t == 0 && a + b == 16 && a % 2 == 0 && a >= 2 && a <= 6 && b >= 10 && b <= 14)) || return 1
    sleep 2
    s2="$(snapshot)"
    [[ "$s1" == "$s2" ]]
  }
  local deadline=$((SECONDS + 180))
  until converged; do
    if ((SECONDS >= deadline)); then
      log "pods (terminating, qa bound, qb bound): $(snapshot)"
      log "$(api GET /api/v1/namespaces/e2e/pods | jq -r '.items[] | "\(.metadata.name) node=\(.spec.nodeName // "-") nominated=\(.status.nominatedNodeName // "-") deleting=\(.metadata.deletionTimestamp // "-")"' | tr '\n' ' ')"
      log "last events: $(api GET /api/v1/namespaces/e2e/events | jq -r '[.items[] | select(.reason != "Scheduled")] | sort_by(.lastTimestamp) | .[-12:][] | "\(.involvedObject.name) \(.reason) \(.message)"')"
      log "queue metrics: $(http_get "$METRICS_PORT_main" /metrics | grep -E '^phalanx_(queue_(allocated|deserved|pending)\{[^}]*cpu|preemption)' | tr '\n' ' ')"
      fail "timed out after 180s waiting for qa:qb to converge to 4:12 CPUs within 2"
    fi
    sleep 0.3
  done
  log "converged: qa $(bound_count e2e a-) CPUs, qb $(bound_count e2e b-) CPUs bound"
  # Whole gangs only: every bound pod's gang partner is bound too (check_invariants checks
  # it as well); a gang evicted by reclaim is gone whole.
  # Status read back: equal to the figures derived from the pods.
  status_matches() {
    local q=$1 p=$2 st bound unbound
    st="$(api GET "$vq/$q" | jq -c '.status // {}')"
    bound=$(bound_count e2e "$p-") unbound=$(unbound_count e2e "$p-")
    jq -e --argjson b "$bound" --argjson u "$unbound" \
      '.state == "Open" and .running == ($b / 2) and .pending == ($u / 2) and .inqueue == 0 and
       .allocated.cpu == ($b | tostring) and .allocated.memory == (($b * 67108864) | tostring)' \
      <<<"$st"
  }
  wait_until 30 "Queue qa status matches its pods: $(api GET "$vq/qa" | jq -c .status)" status_matches qa a
  wait_until 30 "Queue qb status matches its pods: $(api GET "$vq/qb" | jq -c .status)" status_matches qb b
  log "Queue qa status: $(api GET "$vq/qa" | jq -c .status)"
  log "Queue qb status: $(api GET "$vq/qb" | jq -c .status)"
  converged || fail "the allocation moved away from 1:3: qa $(bound_count e2e a-), qb $(bound_count e2e b-)"
  kill "$REAPER_PID" 2>/dev/null || true
  stop_phalanx main
  log "$(grep -m1 'stopped:' "$STATE/phalanx-main.log" || true)"
}

# A KAI queue with guaranteed quota reclaims from a borrower: the borrower holds all 16
# CPUs; the guaranteed queue's 3 gangs (6 CPUs, within its quota of 8) evict 3 of the
# borrower's gangs whole and are bound; the borrower keeps 10. KAI status: childQueues of
# the parent, allocated and requested of each queue, read back.
case_queues_reclaim() {
  queues_install_crds
  create_namespace e2e
  local n
  for n in a b c d; do create_node "node-$n" 4 8Gi; done
  local kq=/apis/scheduling.run.ai/v2/queues
  api POST "$kq" '{"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"dept"},"spec":{"resources":{"cpu":{"quota":0,"limit":-1,"overQuotaWeight":1}}}}' >/dev/null || fail "create Queue dept"
  api POST "$kq" '{"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"guaranteed"},"spec":{"parentQueue":"dept","resources":{"cpu":{"quota":8000,"limit":-1,"overQuotaWeight":1}}}}' >/dev/null || fail "create Queue guaranteed"
  api POST "$kq" '{"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"borrower"},"spec":{"parentQueue":"dept","resources":{"cpu":{"quota":0,"limit":-1,"overQuotaWeight":1}}}}' >/dev/null || fail "create Queue borrower"
  queues_start
  kubelet_reaper e2e
  local i j
  for i in 0 1 2 3 4 5 6 7; do
    vpg e2e "b-$i" 2
    for j in 0 1; do qpod e2e "b-$i-$j" 1 '{"kai.scheduler/queue":"borrower"}' "{\"scheduling.k8s.io/group-name\":\"b-$i\"}"; done
  done
  all_borrowed() { [[ "$(bound_count e2e b-)" == 16 ]]; }
  wait_until 60 "the borrower's 16 pods bound" all_borrowed
  for i in 0 1 2; do
    vpg e2e "g-$i" 2
    for j in 0 1; do qpod e2e "g-$i-$j" 1 '{"kai.scheduler/queue":"guaranteed"}' "{\"scheduling.k8s.io/group-name\":\"g-$i\"}"; done
  done
  reclaimed() { [[ "$(bound_count e2e g-)" == 6 && "$(bound_count e2e b-)" == 10 ]]; }
  wait_until 180 "guaranteed 6 bound, borrower 10 (now $(bound_count e2e g-), $(bound_count e2e b-))" reclaimed
  b_left() { api GET /api/v1/namespaces/e2e/pods | jq '[.items[] | select(.metadata.name | startswith("b-"))] | length'; }
  ten_left() { [[ "$(b_left)" == 10 ]]; }
  wait_until 30 "the borrower has 10 pods left (3 gangs evicted whole; now $(b_left))" ten_left
  local g
  for g in 0 1 2 3 4 5 6 7; do  # whole gangs evicted: both members gone or both there
    [[ "$(api GET /api/v1/namespaces/e2e/pods | jq --arg p "b-$g-" '[.items[] | select(.metadata.name | startswith($p))] | length')" != 1 ]] ||
      fail "gang b-$g lost one member only"
  done
  log "reclaimed: guaranteed $(bound_count e2e g-) CPUs, borrower $(bound_count e2e b-) CPUs"
  log "Preempted event: $(api GET /api/v1/namespaces/e2e/events | jq -r '[.items[] | select(.reason == "Preempted") | .message][0]')"
  kai_status() {
    local q=$1 want=$2
    api GET "$kq/$q" | jq -e --argjson w "$want" '.status as $s | $w | to_entries | all(. as $e | ($s | getpath($e.key | split("."))) == $e.value)'
  }
  wait_until 30 "KAI Queue dept status: $(api GET "$kq/dept" | jq -c .status)" \
    kai_status dept '{"childQueues":["borrower","guaranteed"],"allocated.cpu":"16","requested.cpu":"16"}'
  wait_until 30 "KAI Queue guaranteed status: $(api GET "$kq/guaranteed" | jq -c .status)" \
    kai_status guaranteed '{"childQueues":[],"allocated.cpu":"6","requested.cpu":"6","allocated.memory":"402653184"}'
  wait_until 30 "KAI Queue borrower status: $(api GET "$kq/borrower" | jq -c .status)" \
    kai_status borrower '{"allocated.cpu":"10","requested.cpu":"10"}'
  log "KAI Queue statuses: dept $(api GET "$kq/dept" | jq -c .status) guaranteed $(api GET "$kq/guaranteed" | jq -c .status)"
  kill "$REAPER_PID" 2>/dev/null || true
  stop_phalanx main
}

# ElasticQuota (scheduling.x-k8s.io) max blocks a gang whole: min 2 / max 3 CPUs, with 8
# CPUs of idle min to borrow from another quota; a gang of 4 x 1 CPU gets no pod bound and
# says max leaves 3, a gang of 2 x 1 CPU is bound; status.used is written and read back.
case_queues_elasticquota() {
  queues_install_crds
  create_namespace eq
  create_node node-a 4 8Gi
  create_node node-b 4 8Gi
  local eq=/apis/scheduling.x-k8s.io/v1alpha1/namespaces/eq/elasticquotas
  api POST "$eq" '{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":"eq-quota","namespace":"eq"},"spec":{"min":{"cpu":"2"},"max":{"cpu":"3"}}}' \
    >/dev/null || fail "create ElasticQuota eq/eq-quota"
  # Idle min to borrow (8 CPUs of another namespace's quota): only max stops the big gang.
  create_namespace other
  api POST /apis/scheduling.x-k8s.io/v1alpha1/namespaces/other/elasticquotas \
    '{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":"lender","namespace":"other"},"spec":{"min":{"cpu":"8"},"max":{"cpu":"8"}}}' \
    >/dev/null || fail "create ElasticQuota other/lender"
  # Coscheduling PodGroups (scheduling.x-k8s.io, CapacityScheduling's companion): a Volcano
  # PodGroup would put its pods in Volcano's queue "default" (its spec.queue default).
  api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
    "@$E2E_DIR/testdata/podgroup-crd.yaml" application/yaml >/dev/null || fail "create PodGroup CRD"
  wait_until 60 "PodGroup CRD served" api GET /apis/scheduling.x-k8s.io/v1alpha1/podgroups
  cpg() {
    api POST /apis/scheduling.x-k8s.io/v1alpha1/namespaces/eq/podgroups \
      "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"eq\"},\"spec\":{\"minMember\":$2}}" \
      >/dev/null || fail "create PodGroup eq/$1"
  }
  queues_start
  local j
  cpg big 4
  for j in 0 1 2 3; do qpod eq "big-$j" 1 '{"scheduling.x-k8s.io/pod-group":"big"}' '{}'; done
  for j in 0 1 2 3; do wait_until 60 "FailedScheduling for eq/big-$j" has_event eq "big-$j" FailedScheduling; done
  local msg
  msg="$(events_for eq big-0 FailedScheduling | head -1)"
  log "big: $msg"
  [[ "$msg" == *"waiting for queue eq-quota quota: needs 4 cpu, 3 free"* && "$msg" != *"(min"* ]] ||
    fail "the gang's reason does not say that max (3 cpu) stops it: $msg"
  cpg small 2
  for j in 0 1; do qpod eq "small-$j" 1 '{"scheduling.x-k8s.io/pod-group":"small"}' '{}'; done
  for j in 0 1; do wait_until 60 "eq/small-$j bound" pod_bound eq "small-$j"; done
  [[ "$(bound_count eq big-)" == 0 ]] || fail "a member of the gang above max was bound: $(bound_count eq big-) of 4"
  used() {
    api GET "$eq/eq-quota" | jq -e '.status.used.cpu == "2" and .status.used.memory == "134217728"'
  }
  wait_until 30 "ElasticQuota eq/eq-quota status.used = 2 cpu, 128Mi: $(api GET "$eq/eq-quota" | jq -c .status)" used
  log "ElasticQuota status: $(api GET "$eq/eq-quota" | jq -c .status)"
  stop_phalanx main
}

# Bad input live: a Volcano Queue cycle, a KAI Queue with a negative quota, an ElasticQuota
# with min > max. Each gets a Warning InvalidQueue event naming the field, its pods stay
# pending saying why, the rest of the tree works (a valid queue's pod is bound and its
# status written), phalanx keeps running; fixing the cycle lets its pod run.
case_queues_bad_input() {
  queues_install_crds
  create_namespace e2e
  create_namespace bad
  create_node node-a 4 8Gi
  local vq=/apis/scheduling.volcano.sh/v1beta1/queues kq=/apis/scheduling.run.ai/v2/queues
  api POST "$vq" '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"ok"},"spec":{"weight":1}}' >/dev/null || fail "create Queue ok"
  api POST "$vq" '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"cyc-a"},"spec":{"weight":1,"parent":"cyc-b"}}' >/dev/null || fail "create Queue cyc-a"
  api POST "$vq" '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"cyc-b"},"spec":{"weight":1,"parent":"cyc-a"}}' >/dev/null || fail "create Queue cyc-b"
  api POST "$kq" '{"apiVersion":"scheduling.run.ai/v2","kind":"Queue","metadata":{"name":"negative"},"spec":{"resources":{"cpu":{"quota":-5,"limit":-1}}}}' >/dev/null || fail "create Queue negative"
  api POST /apis/scheduling.x-k8s.io/v1alpha1/namespaces/bad/elasticquotas \
    '{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":"inverted","namespace":"bad"},"spec":{"min":{"cpu":"8"},"max":{"cpu":"4"}}}' \
    >/dev/null || fail "create ElasticQuota bad/inverted"
  queues_start
  qpod e2e cyc-0 100m '{}' '{"scheduling.volcano.sh/queue-name":"cyc-a"}'
  qpod e2e neg-0 100m '{"kai.scheduler/queue":"negative"}' '{}'
  qpod bad inv-0 100m '{}' '{}'
  qpod e2e ok-0 100m '{}' '{"scheduling.volcano.sh/queue-name":"ok"}'
  wait_until 60 "e2e/ok-0 bound (the rest of the tree works)" pod_bound e2e ok-0
  # Events on the objects (cluster-scoped Queues: in namespace default).
  local spec
  for spec in "default Queue cyc-a cycle in the queue tree" "default Queue cyc-b cycle in the queue tree" \
              "default Queue negative spec.resources.cpu.quota" "bad ElasticQuota inverted spec.max.cpu"; do
    read -r ns kind name want <<<"$spec"
    has_obj_event() { [[ -n "$(object_events "$1" "$2" "$3" InvalidQueue)" ]]; }
    wait_until 30 "Warning InvalidQueue event on $kind $name" has_obj_event "$ns" "$kind" "$name"
    local m
    m="$(object_events "$ns" "$kind" "$name" InvalidQueue | head -1)"
    log "$kind $name: $m"
    [[ "$m" == *"$want"* ]] || fail "the event on $kind $name does not say '$want': $m"
  done
  grep -q "invalid queue object: .*cyc-a" "$STATE/phalanx-main.log" || fail "no log line for the invalid Queue cyc-a"
  # Their pods wait, saying why.
  local pod
  for pod in "e2e cyc-0 queue cyc-a is invalid" "e2e neg-0 queue negative is invalid" "bad inv-0 queue inverted is invalid"; do
    read -r ns name want <<<"$pod"
    wait_until 60 "FailedScheduling for $ns/$name" has_event "$ns" "$name" FailedScheduling
    local m
    m="$(events_for "$ns" "$name" FailedScheduling | head -1)"
    [[ "$m" == *"$want"* ]] || fail "$ns/$name: the reason does not say '$want': $m"
    pod_unbound "$ns" "$name" || fail "$ns/$name was bound despite its invalid queue"
  done
  log "inv-0: $(events_for bad inv-0 FailedScheduling | head -1)"
  ok_status() { api GET "$vq/ok" | jq -e '.status.state == "Open" and .status.running == 1 and .status.allocated.cpu == "100m"'; }
  wait_until 30 "Queue ok status: $(api GET "$vq/ok" | jq -c .status)" ok_status
  # No status for the invalid ones.
  [[ "$(api GET "$vq/cyc-a" | jq -c '.status // {}')" == "{}" ]] || fail "invalid Queue cyc-a got a status"
  phalanx_running main || fail "phalanx exited on bad input"
  # Fixing the cycle (cyc-b becomes top level): cyc-0 is retried and bound.
  api PATCH "$vq/cyc-b" '{"spec":{"parent":null}}' application/merge-patch+json >/dev/null || fail "patch Queue cyc-b"
  wait_until 60 "e2e/cyc-0 bound after the cycle was fixed" pod_bound e2e cyc-0
  stop_phalanx main
}
