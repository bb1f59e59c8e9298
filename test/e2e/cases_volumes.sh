# VolumeBinding against a real API server and the real PV controller: local
# PersistentVolumes with WaitForFirstConsumer, kube-controller-manager v1.20.2 completing
# the bindings that phalanx's PreBind starts (control-plane.sh controllers).
# e2e-cases: statefulset_local_pvs
# Sourced by cases.sh (lib.sh helpers, start_controllers of cases_controllers.sh).

# local_pv NAME CLASS NODE: a 10Gi local PV usable only on NODE.
local_pv() {
  api POST /api/v1/persistentvolumes "$(cat <<JSON
{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"$1"},
 "spec":{"capacity":{"storage":"10Gi"},"accessModes":["ReadWriteOnce"],
  "persistentVolumeReclaimPolicy":"Retain","storageClassName":"$2",
  "local":{"path":"/mnt/disks/$1"},
  "nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[
   {"key":"kubernetes.io/hostname","operator":"In","values":["$3"]}]}]}}}}
JSON
)" >/dev/null || fail "create PV $1"
}

local_class() {  # NAME
  api POST /apis/storage.k8s.io/v1/storageclasses "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"$1\"},\"provisioner\":\"kubernetes.io/no-provisioner\",\"volumeBindingMode\":\"WaitForFirstConsumer\"}" \
    >/dev/null || fail "create StorageClass $1"
}

pvc_phase() { api GET "/api/v1/namespaces/$1/persistentvolumeclaims/$2" | jq -r '.status.phase // ""'; }
pvc_bound() { [[ "$(pvc_phase "$1" "$2")" == Bound ]]; }
pv_host() {  # PV -> the hostname of its node affinity
  api GET "/api/v1/persistentvolumes/$1" |
    jq -r '.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]'
}

# A StatefulSet of 3 with volumeClaimTemplates on 4 nodes where only 3 have a local PV:
# the StatefulSet controller creates the pods and claims, phalanx picks nodes whose PV fits
# and writes the PV's claimRef (PreBind), the PV controller binds the claims, phalanx binds
# the pods; every pod runs where its PV is. Then a Coscheduling gang of 4, each member with
# its own WaitForFirstConsumer claim, with only 3 PVs of its class: nothing is bound, no PV
# gets a claimRef and no claim a node (the PodGroup cycle holds nothing).
case_statefulset_local_pvs() {
  start_controllers
  api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
    "@$E2E_DIR/testdata/podgroup-crd.yaml" application/yaml >/dev/null || fail "create PodGroup CRD"
  crd_ready() { api GET /apis/scheduling.x-k8s.io/v1alpha1/podgroups; }
  wait_until 60 "PodGroup CRD served" crd_ready
  create_namespace e2e
  local n
  for n in node-a node-b node-c node-d; do create_node "$n" 4 8Gi; done
  local_class local
  local_pv pv-a local node-a
  local_pv pv-b local node-b
  local_pv pv-c local node-c
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz
  grep -q 'persistentvolumeclaims/v1' "$STATE/phalanx-main.log" ||
    fail "phalanx does not watch PVCs: $(grep -m1 'watching' "$STATE/phalanx-main.log")"
  api POST /apis/apps/v1/namespaces/e2e/statefulsets "$(cat <<'JSON'
{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"e2e"},
 "spec":{"replicas":3,"serviceName":"db","podManagementPolicy":"Parallel",
  "selector":{"matchLabels":{"app":"db"}},
  "template":{"metadata":{"labels":{"app":"db"}},
   "spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.9",
     "resources":{"requests":{"cpu":"500m","memory":"64Mi"}},
     "volumeMounts":[{"name":"data","mountPath":"/data"}]}]}},
  "volumeClaimTemplates":[{"metadata":{"name":"data"},
   "spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"local",
    "resources":{"requests":{"storage":"1Gi"}}}}]}}
JSON
)" >/dev/null || fail "create StatefulSet e2e/db"
  local i pv node
  for i in 0 1 2; do
    wait_until 90 "StatefulSet pod e2e/db-$i bound" pod_bound e2e db-$i
    wait_until 60 "claim e2e/data-db-$i Bound" pvc_bound e2e data-db-$i
  done
  for i in 0 1 2; do
    pv="$(api GET /api/v1/namespaces/e2e/persistentvolumeclaims/data-db-$i | jq -r .spec.volumeName)"
    node="$(pod_node e2e db-$i)"
    [[ "$(pv_host "$pv")" == "$node" ]] || fail "db-$i on $node but its PV $pv is on $(pv_host "$pv")"
    log "db-$i on $node with PV $pv (Bound)"
  done

  # The gang: 4 members, 3 PVs of class local-gang.
  local_class local-gang
  local_pv gpv-a local-gang node-a
  local_pv gpv-b local-gang node-b
  local_pv gpv-c local-gang node-c
  api POST /apis/scheduling.x-k8s.io/v1alpha1/namespaces/e2e/podgroups \
    '{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"train","namespace":"e2e"},"spec":{"minMember":4}}' \
    >/dev/null || fail "create PodGroup"
  for i in 0 1 2 3; do
    api POST /api/v1/namespaces/e2e/persistentvolumeclaims "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"ckpt-$i\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"storageClassName\":\"local-gang\",\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}" \
      >/dev/null || fail "create claim ckpt-$i"
    api POST /api/v1/namespaces/e2e/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"train-$i\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"train\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}],\"volumes\":[{\"name\":\"ckpt\",\"persistentVolumeClaim\":{\"claimName\":\"ckpt-$i\"}}]}}" \
      >/dev/null || fail "create pod train-$i"
  done
  wait_until 60 "FailedScheduling for the gang" has_event e2e train-0 FailedScheduling
  log "gang: $(events_for e2e train-0 FailedScheduling | tail -1)"
  for i in 0 1 2 3; do pod_unbound e2e train-$i || fail "gang member train-$i was bound"; done
  for pv in gpv-a gpv-b gpv-c; do
    [[ "$(api GET /api/v1/persistentvolumes/$pv | jq -r '.spec.claimRef.name // ""')" == "" ]] ||
      fail "PV $pv was given to a member of the gang that could not start"
  done
  for i in 0 1 2 3; do
    local c
    c="$(api GET /api/v1/namespaces/e2e/persistentvolumeclaims/ckpt-$i)"
    [[ "$(jq -r '.status.phase' <<<"$c")" == Pending ]] || fail "claim ckpt-$i is not Pending"
    [[ "$(jq -r '.metadata.annotations["volume.kubernetes.io/selected-node"] // ""' <<<"$c")" == "" ]] ||
      fail "claim ckpt-$i got a selected node"
  done
  log "the gang of 4 with 3 PVs holds nothing: no member bound, no PV claimed"
  phalanx_running main || fail "phalanx exited"
}
