# GPU sharing against a real API server (live parity): GpuShare's PreBind writes
# the chosen device into the pod's annotations before the binding, as the user's
# least-privileged `phalanx` (deploy/rbac.yaml: patch pods).
# e2e-cases: gpushare_annotations
# Sourced by cases.sh (lib.sh helpers; the helpers below are shared with
# test/faults/cases.sh's gpushare_kill9 case, which sources this file too).

# gpu_node NAME GPUS [MODEL]: a node with GPUS nvidia.com/gpu devices of MODEL (V100M16).
gpu_node() {
  api POST /api/v1/nodes "$(cat <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"$1","labels":{"kubernetes.io/hostname":"$1",
  "alibabacloud.com/gpu-card-model":"${3:-V100M16}"}},
 "status":{"capacity":{"cpu":"32","memory":"64Gi","pods":"110","nvidia.com/gpu":"$2"},
           "allocatable":{"cpu":"32","memory":"64Gi","pods":"110","nvidia.com/gpu":"$2"},
           "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}
EOF
)" >/dev/null || fail "create GPU node $1"
}

# gpushare_node NAME GPUS MEM: an Alibaba gpushare node: capacity aliyun.com/gpu-count GPUS
# and aliyun.com/gpu-mem MEM (all devices), as gpushare-device-plugin reports them.
gpushare_node() {
  api POST /api/v1/nodes "$(cat <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"$1","labels":{"kubernetes.io/hostname":"$1"}},
 "status":{"capacity":{"cpu":"32","memory":"64Gi","pods":"110","aliyun.com/gpu-count":"$2","aliyun.com/gpu-mem":"$3"},
           "allocatable":{"cpu":"32","memory":"64Gi","pods":"110","aliyun.com/gpu-count":"$2","aliyun.com/gpu-mem":"$3"},
           "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}
EOF
)" >/dev/null || fail "create gpushare node $1"
}

# share_pod NS NAME MILLI [LABELS-JSON]: a pod asking for MILLI of one V100M16 GPU
# (open-gpu-share annotations alibabacloud.com/gpu-milli, gpu-count, gpu-card-model).
share_pod() {
  local labels=${4:-'{}'}
  api POST "/api/v1/namespaces/$1/pods" "$(cat <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2","namespace":"$1","labels":$labels,
  "annotations":{"alibabacloud.com/gpu-milli":"$3","alibabacloud.com/gpu-count":"1",
                 "alibabacloud.com/gpu-card-model":"V100M16"}},
 "spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.9",
   "resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}
EOF
)" >/dev/null || fail "create share pod $1/$2"
}

# gpumem_pod NS NAME MEM: a pod with limit aliyun.com/gpu-mem MEM (Alibaba gpushare).
gpumem_pod() {
  api POST "/api/v1/namespaces/$1/pods" "$(cat <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2","namespace":"$1"},
 "spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.9",
   "resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"aliyun.com/gpu-mem":"$3"}}}]}}
EOF
)" >/dev/null || fail "create gpu-mem pod $1/$2"
}

# A profile with GpuShare at every extension point it implements.
GPUSHARE_PROFILE='  plugins:
    preFilter: {enabled: [{name: GpuShare}]}
    filter: {enabled: [{name: GpuShare}]}
    reserve: {enabled: [{name: GpuShare}]}
    preBind: {enabled: [{name: GpuShare}]}'

pod_annotation() {  # NS NAME KEY
  api GET "/api/v1/namespaces/$1/pods/$2" | jq -r --arg k "$3" '.metadata.annotations[$k] // ""'
}

# Shared-GPU pods bound by Phalanx carry the device they were given: open-gpu-share pods
# alibabacloud.com/gpu-index (+ assume-time, + scheduling.phalanx.dev/gpu-node naming the
# node they are bound to); aliyun.com/gpu-mem pods also the ALIYUN_COM_GPU_MEM_* set
# gpushare-device-plugin reads. Per device the shares add up to at most 1000 milli, and a
# share that fits no device is not bound.
case_gpushare_annotations() {
  create_namespace e2e
  gpu_node gpu-a 2
  gpushare_node mem-a 2 32
  write_config "$STATE/sched.yaml" false "$GPUSHARE_PROFILE"
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  local i
  # 0.6 + 0.6 + 0.3 + 0.3 of two GPUs: one 0.6 and one 0.3 on each device.
  for i in 0 1; do share_pod e2e big-$i 600 '{"app":"gpu"}'; done
  for i in 0 1; do wait_until 60 "pod e2e/big-$i bound" pod_bound e2e big-$i; done
  for i in 0 1; do share_pod e2e small-$i 300 '{"app":"gpu"}'; done
  for i in 0 1; do wait_until 60 "pod e2e/small-$i bound" pod_bound e2e small-$i; done
  # A fifth share of 0.6 fits no device (0.1 free on each): it stays pending.
  share_pod e2e late 600 '{"app":"gpu"}'
  wait_until 60 "FailedScheduling for e2e/late" has_event e2e late FailedScheduling
  pod_unbound e2e late || fail "e2e/late was bound although no device has 0.6 free"
  local p node idx
  declare -A milli_on=()
  for p in big-0 big-1 small-0 small-1; do
    node=$(pod_node e2e "$p")
    [[ "$node" == gpu-a ]] || fail "e2e/$p bound to '$node', the only node with nvidia.com/gpu is gpu-a"
    idx=$(pod_annotation e2e "$p" alibabacloud.com/gpu-index)
    [[ "$idx" =~ ^[01]$ ]] || fail "e2e/$p: alibabacloud.com/gpu-index is '$idx', expected device 0 or 1"
    [[ "$(pod_annotation e2e "$p" scheduling.phalanx.dev/gpu-node)" == "$node" ]] ||
      fail "e2e/$p: scheduling.phalanx.dev/gpu-node does not name its node $node"
    [[ "$(pod_annotation e2e "$p" alibabacloud.com/assume-time)" =~ ^[0-9]{18,}$ ]] ||
      fail "e2e/$p: alibabacloud.com/assume-time is not UnixNano"
    local m=600
    [[ $p == small-* ]] && m=300
    milli_on[$idx]=$(( ${milli_on[$idx]:-0} + m ))
    log "e2e/$p on $node device $idx"
  done
  for idx in "${!milli_on[@]}"; do
    ((milli_on[$idx] <= 1000)) || fail "device $idx of gpu-a holds ${milli_on[$idx]} milli > 1000"
  done
  [[ "${milli_on[0]:-0}" == 900 && "${milli_on[1]:-0}" == 900 ]] ||
    fail "expected 900 milli on each device, got 0:${milli_on[0]:-0} 1:${milli_on[1]:-0}"
  # Alibaba gpushare: 8 of a 16-unit device.
  gpumem_pod e2e mem-0 8
  wait_until 60 "pod e2e/mem-0 bound" pod_bound e2e mem-0
  [[ "$(pod_node e2e mem-0)" == mem-a ]] || fail "e2e/mem-0 bound to $(pod_node e2e mem-0), expected mem-a"
  local k want
  for k in ALIYUN_COM_GPU_MEM_IDX:0 ALIYUN_COM_GPU_MEM_POD:8 ALIYUN_COM_GPU_MEM_DEV:16 \
           ALIYUN_COM_GPU_MEM_ASSIGNED:false alibabacloud.com/gpu-index:0; do
    want=${k##*:}
    [[ "$(pod_annotation e2e mem-0 "${k%:*}")" == "$want" ]] ||
      fail "e2e/mem-0: ${k%:*} is '$(pod_annotation e2e mem-0 "${k%:*}")', expected '$want'"
  done
  [[ -n "$(pod_annotation e2e mem-0 ALIYUN_COM_GPU_MEM_ASSUME_TIME)" ]] ||
    fail "e2e/mem-0: no ALIYUN_COM_GPU_MEM_ASSUME_TIME"
  log "e2e/mem-0: $(api GET /api/v1/namespaces/e2e/pods/mem-0 | jq -c '.metadata.annotations')"
  stop_phalanx main
}
