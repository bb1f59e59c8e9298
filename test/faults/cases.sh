#!/usr/bin/env bash
# Fault-injection end-to-end cases (reliability) of `phalanx run` against a real
# kube-apiserver v1.20.2 + etcd on loopback (test/e2e/lib.sh starts one per case).
# Usage: test/faults/cases.sh PHALANX-BINARY CASE
# Cases:
#   phalanx_kill9     kill -9 of `phalanx run` at seeded random points, some right after the
#                     first binding of a Coscheduling gang; restart; every gang completes
#   watch_cuts        a loopback TCP proxy (TLS passes through) cuts every connection,
#                     watch streams included, every 3 s and delays new ones
#   apiserver_kill_gangs  kube-apiserver SIGKILLed right after the first binding of a gang,
#                     restarted 5 s later, 3 times; the same phalanx completes every gang
#   etcd_restart      etcd stopped and started again (same data dir) twice mid-run
#   http_faults       a TLS-terminating proxy answers 409 on bindings, 429 / 503 with
#                     Retry-After, 410 Gone on watches, and slows requests
#   checker_selftest  check_invariants.py reports each of its 6 invariants broken on purpose
#   gpushare_kill9    kill -9 of `phalanx run` while GPU-share pods are being bound; each
#                     restart rebuilds per-device accounting from the pods' annotations
#   leader_kills      two replicas with leader election; the leader is kill -9'd 4 times in a row
#   load_churn        10 waves of pods and gangs while nodes are added and removed (load_churn.sh)
# Each fault case ends with test/faults/check_invariants.py (0 violations required) and prints
#   FAULT-REPORT <case> injected=<n> pods_bound=<n> violations=<n>
# (collected by scripts/reliability.sh). FAULT_SEED (default 8) seeds the random points.
# Exit 77 = skipped (binaries cannot be built and CI is not set).
set -euo pipefail
PHALANX="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
CASE=$2
FAULTS_DIR="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../e2e/lib.sh
source "$FAULTS_DIR/../e2e/lib.sh"
# shellcheck source=../e2e/cases_gpushare.sh
source "$FAULTS_DIR/../e2e/cases_gpushare.sh"  # gpu_node, share_pod, GPUSHARE_PROFILE
SEED=${FAULT_SEED:-8}
RANDOM=$SEED
PROXY_PID=""

cleanup_faults() {
  [[ -n "$PROXY_PID" ]] && kill -TERM "$PROXY_PID" 2>/dev/null
  cleanup
}

# Runs the invariant checker on namespace e2e; sets VIOLATIONS and BOUND; prints its output.
check() {
  local out code=0
  out="$(python3 "$FAULTS_DIR/check_invariants.py" --namespace e2e)" || code=$?
  echo "$out"
  ((code <= 1)) || fail "check_invariants.py could not read the API"
  VIOLATIONS=$(sed -n 's/.*violations=\([0-9]*\).*/\1/p' <<<"$out" | tail -1)
  BOUND=$(sed -n 's/.* bound=\([0-9]*\).*/\1/p' <<<"$out" | tail -1)
}

report() {  # NAME INJECTED
  check
  echo "FAULT-REPORT $1 injected=$2 pods_bound=$BOUND violations=$VIOLATIONS"
  ((VIOLATIONS == 0)) || fail "$VIOLATIONS invariant violation(s) (above)"
}

install_podgroup_crd() {
  api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions \
    "@$E2E_DIR/testdata/podgroup-crd.yaml" application/yaml >/dev/null || fail "create PodGroup CRD"
  crd_ready() { api GET /apis/scheduling.x-k8s.io/v1alpha1/podgroups; }
  wait_until 60 "PodGroup CRD served" crd_ready
}

# gang NAME MIN-MEMBER SIZE CPU: a PodGroup and SIZE member pods NAME-0.. in namespace e2e.
gang() {
  api POST /apis/scheduling.x-k8s.io/v1alpha1/namespaces/e2e/podgroups \
    "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"e2e\"},\"spec\":{\"minMember\":$2}}" >/dev/null ||
    fail "create PodGroup $1"
  local i
  for ((i = 0; i < $3; i++)); do
    create_pod e2e "$1-$i" "$4" default-scheduler "{\"scheduling.x-k8s.io/pod-group\":\"$1\"}"
  done
}

bound_count() { api GET /api/v1/namespaces/e2e/pods | jq '[.items[] | select(.spec.nodeName)] | length'; }
bound_at_least() { (($(bound_count) >= $1)); }

# Certificate for the TLS-terminating proxy (valid for 127.0.0.1) and a kubeconfig for
# the phalanx user pointing at PORT with that certificate as CA: proxy.crt, proxy.kubeconfig.
proxy_kubeconfig() {  # PORT CA-FILE OUT
  sed -e "s#server: .*#server: https://127.0.0.1:$1#" -e "s#certificate-authority: .*#certificate-authority: $2#" \
    "$STATE/cp/phalanx.kubeconfig" >"$3"
}
make_proxy_cert() {
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$STATE/proxy.key" -out "$STATE/proxy.crt" \
    -days 1 -subj "/CN=phalanx-fault-proxy" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1 ||
    fail "openssl could not make the proxy certificate"
}
start_proxy() {  # PORT MODE ARGS...: waits until the port accepts connections
  local port=$1 mode=$2; shift 2
  python3 "$FAULTS_DIR/proxy.py" "$mode" --listen "$port" --upstream "127.0.0.1:$API_PORT" \
    --seed "$SEED" --log "$STATE/proxy-faults.log" "$@" >"$STATE/proxy.log" 2>&1 &
  PROXY_PID=$!
  port_open() { python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)"; }
  wait_until 20 "fault proxy on port $port" port_open
  log "fault proxy ($mode $*) on 127.0.0.1:$port, pid $PROXY_PID"
}
proxy_faults() { grep -c '^FAULT' "$STATE/proxy-faults.log" 2>/dev/null || true; }

# kill -9 of `phalanx run` at seeded random points of 5 runs over 5 rounds of Coscheduling
# gangs (PodGroups of 3 and 4 members) and plain pods: odd rounds kill right after a watch
# sees the first member of a gang bound (bindings are spread out by the proxy holding each
# binding POST 150 ms, one at a time, so the kill falls between the bindings of one gang);
# even rounds kill after a random 0-2 s. Each round's pods are created while phalanx is
# down, so every restart rebuilds its state from the API, with partially bound gangs in it.
# At the end one more phalanx binds everything that fits: every gang complete (its already
# bound members count), nothing bound twice, a gang that can never fit bound not at all.
case_phalanx_kill9() {
  install_podgroup_crd
  create_namespace e2e
  local i r
  for i in 0 1 2 3; do create_node "node-$i" 4 16Gi; done
  make_proxy_cert
  local pport
  pport=$(free_port)
  start_proxy "$pport" http --cert "$STATE/proxy.crt" --key "$STATE/proxy.key" \
    --upstream-ca "$CA" --bind-delay-ms 150
  proxy_kubeconfig "$pport" "$STATE/proxy.crt" "$STATE/proxy.kubeconfig"
  write_config "$STATE/sched.yaml" false
  gang never 2 2 6  # 2 x 6 CPU on 4-CPU nodes: never fits
  local rounds=5 kills=0 partial=0 expected=0 between=0
  for ((r = 1; r <= rounds; r++)); do
    gang "g$r-a" 3 3 300m
    gang "g$r-b" 4 4 200m
    create_pod e2e "plain-$r-0" 100m
    create_pod e2e "plain-$r-1" 100m
    expected=$((expected + 9))
    local wpid=""
    if ((r % 2 == 1)); then
      # The watcher lists and watches before phalanx starts: it sees the round's first binding.
      python3 "$FAULTS_DIR/kill_on_bind.py" "@$STATE/phalanx.pid" e2e 60 >"$STATE/kill-$r.out" 2>&1 &
      wpid=$!
      sleep 1  # the watcher's LIST and WATCH are in place (one round trip each on loopback)
    fi
    start_phalanx "run$r" "$STATE/proxy.kubeconfig" "$STATE/sched.yaml"
    local pid=${PHALANX_PIDS[run$r]} how
    echo "$pid" >"$STATE/phalanx.pid"
    if ((r % 2 == 1)); then
      wait "$wpid" || fail "round $r: no gang member was bound within 60 s: $(cat "$STATE/kill-$r.out")"
      how="after the first gang binding seen ($(cat "$STATE/kill-$r.out"))"
    else
      local ms=$((RANDOM % 2000))
      sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
      kill -9 "$pid" || fail "round $r: phalanx exited before the kill"
      how="after ${ms} ms"
    fi
    wait "$pid" 2>/dev/null || true
    unset "PHALANX_PIDS[run$r]"
    kills=$((kills + 1))
    sleep 0.5  # a binding POST the proxy was holding lands now (a request in flight at the crash)
    local out
    out="$(python3 "$FAULTS_DIR/check_invariants.py" --namespace e2e || true)"
    local p
    p=$(grep -c '^VIOLATION gang:' <<<"$out" || true)
    partial=$((partial + p))
    ((r % 2 == 1 && p > 0)) && between=$((between + 1))
    log "round $r: kill -9 $how; $(tail -1 <<<"$out"); gangs partially bound now: $p"
    grep '^VIOLATION gang:' <<<"$out" || true
    pod_bindings e2e | awk '$2 != "-"' >>"$STATE/bound-at-kills"
  done
  ((between > 0)) || fail "no kill fell between the bindings of one gang (the case did not test what it says)"
  start_phalanx final "$STATE/proxy.kubeconfig" "$STATE/sched.yaml"
  wait_until 120 "all $expected feasible pods bound after the restart" bound_at_least "$expected"
  wait_until 60 "FailedScheduling for the gang that never fits" has_event e2e never-0 FailedScheduling
  local n
  n=$(bound_count)
  ((n == expected)) || fail "$n pods bound, expected $expected (never-* must stay unbound)"
  # Members bound before a kill stay where they are: the restart counts them, it does not
  # move (delete and re-create) or re-bind them.
  local moved
  moved="$(comm -23 <(sort -u "$STATE/bound-at-kills") <(pod_bindings e2e))"
  [[ -z "$moved" ]] || fail "pods bound before a kill changed their binding: $moved"
  log "$kills kills ($between between the bindings of one gang; $partial partially bound gangs" \
      "seen after kills); after the restart $n pods bound"
  grep -E 'partially|already bound|rebuil|gang' "$STATE/phalanx-final.log" | head -5 || true
  stop_phalanx final
  report phalanx_kill9 "$kills"
}

# kill -9 of `phalanx run` with shared GPUs allocated: 4 GPU nodes of 2 devices,
# 4 rounds of 4 GPU-share pods (0.5, 0.5, 0.25, 0.25 of one device; 6 of the 8 devices'
# worth in all, so every pod fits however the shares were spread: a 0.5 is stuck only if
# every device had more than 0.5 taken). Each round's pods are created while phalanx is
# down; odd rounds kill it right after a watch sees the round's first GPU pod bound (the
# proxy holds each binding POST and each pod PATCH 150 ms, one at a time, so the kill falls
# between the annotation PATCH and the binding of some pod, or between bindings: such a
# pod carries a device of a node it never got and must be placed afresh), even rounds after a
# random 0-2 s. Every restart knows no assignment of its own: it must count the bound pods
# on the devices their annotations name. A final phalanx binds the rest, then a 0.75 share
# that fits no device must stay pending. check_invariants.py's gpu invariant recomputes the
# devices from the objects (node GPU count, pod shares, gpu-index): none over 1000 milli.
case_gpushare_kill9() {
  create_namespace e2e
  local i r
  for i in 0 1 2 3; do gpu_node "gpu-$i" 2; done
  make_proxy_cert
  local pport
  pport=$(free_port)
  start_proxy "$pport" http --cert "$STATE/proxy.crt" --key "$STATE/proxy.key" \
    --upstream-ca "$CA" --bind-delay-ms 150 --patch-delay-ms 150
  proxy_kubeconfig "$pport" "$STATE/proxy.crt" "$STATE/proxy.kubeconfig"
  write_config "$STATE/sched.yaml" false "$GPUSHARE_PROFILE"
  local rounds=4 kills=0 expected=0 bound_at_kill=0 stale=0
  for ((r = 1; r <= rounds; r++)); do
    share_pod e2e "r$r-half-0" 500 '{"app":"gpu"}'
    share_pod e2e "r$r-half-1" 500 '{"app":"gpu"}'
    share_pod e2e "r$r-quarter-0" 250 '{"app":"gpu"}'
    share_pod e2e "r$r-quarter-1" 250 '{"app":"gpu"}'
    expected=$((expected + 4))
    local wpid=""
    if ((r % 2 == 1)); then
      python3 "$FAULTS_DIR/kill_on_bind.py" "@$STATE/phalanx.pid" e2e 60 app=gpu >"$STATE/kill-$r.out" 2>&1 &
      wpid=$!
      sleep 1  # the watcher's LIST and WATCH are in place (one round trip each on loopback)
    fi
    start_phalanx "run$r" "$STATE/proxy.kubeconfig" "$STATE/sched.yaml"
    local pid=${PHALANX_PIDS[run$r]} how
    echo "$pid" >"$STATE/phalanx.pid"
    if ((r % 2 == 1)); then
      wait "$wpid" || fail "round $r: no GPU pod was bound within 60 s: $(cat "$STATE/kill-$r.out")"
      how="after the first GPU pod binding seen ($(cat "$STATE/kill-$r.out"))"
    else
      local ms=$((RANDOM % 2000))
      sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
      kill -9 "$pid" || fail "round $r: phalanx exited before the kill"
      how="after ${ms} ms"
    fi
    wait "$pid" 2>/dev/null || true
    unset "PHALANX_PIDS[run$r]"
    kills=$((kills + 1))
    sleep 0.5  # a binding POST the proxy was holding lands now (a request in flight at the crash)
    local out
    out="$(python3 "$FAULTS_DIR/check_invariants.py" --namespace e2e || true)"
    grep '^VIOLATION gpu:' <<<"$out" && fail "round $r: GPU devices over-committed after the kill (above)"
    local n s
    n=$(bound_count)
    # Annotated for a node but not bound: the kill fell between the PATCH and the binding.
    s=$(api GET /api/v1/namespaces/e2e/pods | jq '[.items[] | select((.spec.nodeName // "") == "" and
      .metadata.annotations["scheduling.phalanx.dev/gpu-node"] != null)] | length')
    bound_at_kill=$((bound_at_kill + n))
    stale=$((stale + s))
    log "round $r: kill -9 $how; $n GPU pods bound, $s annotated but unbound; $(tail -1 <<<"$out")"
    pod_bindings e2e | awk '$2 != "-"' >>"$STATE/bound-at-kills"
  done
  ((bound_at_kill > 0)) || fail "no GPU pod was ever bound before a kill (the case did not test restarts)"
  ((stale > 0)) || fail "no kill fell between a pod's annotation PATCH and its binding (the case did not test what it says)"
  start_phalanx final "$STATE/proxy.kubeconfig" "$STATE/sched.yaml"
  wait_until 120 "all $expected GPU-share pods bound after the restarts" bound_at_least "$expected"
  # A 0.75 share: bound exactly when some device has 750 milli free by the annotations
  # (recomputed here from the objects), else it must stay pending.
  local free
  free=$(api GET /api/v1/namespaces/e2e/pods | jq '[.items[] | select(.spec.nodeName) |
    {k: (.spec.nodeName + "/" + .metadata.annotations["alibabacloud.com/gpu-index"]),
     m: (.metadata.annotations["alibabacloud.com/gpu-milli"] | tonumber)}] |
    group_by(.k) | map(1000 - (map(.m) | add)) | (. + [range(8 - length) | 1000]) | max')
  share_pod e2e extra 750 '{"app":"gpu"}'
  if ((free >= 750)); then
    wait_until 60 "e2e/extra bound (a device has $free milli free)" pod_bound e2e extra
    expected=$((expected + 1))
  else
    wait_until 60 "FailedScheduling for e2e/extra" has_event e2e extra FailedScheduling
    pod_unbound e2e extra || fail "e2e/extra (0.75) was bound although the most free device has $free milli"
  fi
  local n
  n=$(bound_count)
  ((n == expected)) || fail "$n pods bound, expected $expected"
  local moved
  moved="$(comm -23 <(sort -u "$STATE/bound-at-kills") <(pod_bindings e2e))"
  [[ -z "$moved" ]] || fail "pods bound before a kill changed their binding: $moved"
  log "$kills kills ($stale pods left annotated but unbound by a kill), $n GPU-share pods bound; per device (node/index milli):" \
      "$(api GET /api/v1/namespaces/e2e/pods | jq -r '[.items[] | select(.spec.nodeName) |
        .spec.nodeName + "/" + .metadata.annotations["alibabacloud.com/gpu-index"] + "=" +
        .metadata.annotations["alibabacloud.com/gpu-milli"]] | sort | join(" ")')"
  stop_phalanx final
  report gpushare_kill9 "$kills"
}

# kube-apiserver SIGKILLed while gangs are being bound (right after a watch sees the first
# gang member bound; phalanx is SIGSTOPped while the gangs are created; the proxy holds each binding POST 150 ms, one at a time, so bindings of
# one gang are in flight), down 5 s, restarted; 3 rounds. The same phalanx process completes
# every gang; nothing is bound twice; invariants hold.
case_apiserver_kill_gangs() {
  install_podgroup_crd
  create_namespace e2e
  local i r
  for i in 0 1 2; do create_node "node-$i" 4 16Gi; done
  make_proxy_cert
  local pport
  pport=$(free_port)
  start_proxy "$pport" http --cert "$STATE/proxy.crt" --key "$STATE/proxy.key" \
    --upstream-ca "$CA" --bind-delay-ms 150
  proxy_kubeconfig "$pport" "$STATE/proxy.crt" "$STATE/proxy.kubeconfig"
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/proxy.kubeconfig" "$STATE/sched.yaml"
  local pid=${PHALANX_PIDS[main]} expected=0 restarts=0 partial=0
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz
  for ((r = 1; r <= 3; r++)); do
    # phalanx is paused (SIGSTOP) while the gangs are created, so that the kill cannot hit
    # the test's own requests; the watcher lists and watches, then phalanx continues.
    kill -STOP "$pid"
    gang "g$r-a" 3 3 300m
    gang "g$r-b" 4 4 200m
    expected=$((expected + 7))
    local -a cmd=()
    mapfile -d '' -t cmd <"/proc/$(cat "$STATE/cp/apiserver.pid")/cmdline" ||
      fail "cannot read kube-apiserver's command line"
    python3 "$FAULTS_DIR/kill_on_bind.py" "$(cat "$STATE/cp/apiserver.pid")" e2e 90 \
      >"$STATE/kill-$r.out" 2>&1 &
    local wpid=$!
    sleep 1  # the watcher's LIST and WATCH are in place (one round trip each on loopback)
    kill -CONT "$pid"
    wait "$wpid" || fail "round $r: no gang binding seen: $(cat "$STATE/kill-$r.out")"
    log "round $r: kube-apiserver SIGKILLed $(cat "$STATE/kill-$r.out"); down for 5 s"
    sleep 5  # a deliberate outage
    echo "---- restarted $(date +%H:%M:%S) ----" >>"$STATE/cp/apiserver.log"
    "${cmd[@]}" >>"$STATE/cp/apiserver.log" 2>&1 &
    echo $! >"$STATE/cp/apiserver.pid"
    restarts=$((restarts + 1))
    ready() { curl -sf --cacert "$CA" -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVER/readyz"; }
    wait_until 120 "kube-apiserver ready again" ready
    local out p
    out="$(python3 "$FAULTS_DIR/check_invariants.py" --namespace e2e || true)"
    p=$(grep -c '^VIOLATION gang:' <<<"$out" || true)
    partial=$((partial + p))
    log "round $r: after the restart $(tail -1 <<<"$out"); gangs partially bound: $p"
    kill -0 "$pid" 2>/dev/null || fail "phalanx exited during the kube-apiserver outage"
    wait_until 90 "$expected pods bound after restart $r" bound_at_least "$expected"
  done
  log "$restarts kube-apiserver kills mid-gang ($partial partially bound gangs seen right after them)"
  kill -0 "$pid" 2>/dev/null || fail "phalanx exited"
  stop_phalanx main
  report apiserver_kill_gangs "$restarts"
}

# The invariant checker itself can fail: with no scheduler running, an admin breaks each
# invariant once through the API (binds over a node's allocatable cpu, binds to a node that
# does not exist, binds 1 of a gang of 2, records a second Scheduled event for a pod, leaves
# a pod pending without a reason) and check_invariants.py must report exactly those 5 kinds.
case_checker_selftest() {
  install_podgroup_crd
  create_namespace e2e
  create_node small 1 4Gi
  bind() {  # POD NODE
    api POST "/api/v1/namespaces/e2e/pods/$1/binding" \
      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$1\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"$2\"}}" >/dev/null ||
      fail "admin binding of $1 to $2"
  }
  create_pod e2e over-0 800m; bind over-0 small
  create_pod e2e over-1 800m; bind over-1 small      # 1.6 CPU on a 1-CPU node
  create_pod e2e ghost 100m; bind ghost no-such-node  # a node that does not exist
  gang half 2 2 100m; bind half-0 small                 # 1 of minMember 2 bound
  gpu_node gpu 1
  share_pod e2e gpu-a 600; share_pod e2e gpu-b 600
  for p in gpu-a gpu-b; do                                # 1.2 of device 0
    api PATCH "/api/v1/namespaces/e2e/pods/$p" '{"metadata":{"annotations":{"alibabacloud.com/gpu-index":"0"}}}' \
      application/strategic-merge-patch+json >/dev/null || fail "annotate $p"
    bind "$p" gpu
  done
  local uid
  uid="$(api GET /api/v1/namespaces/e2e/pods/over-0 | jq -r .metadata.uid)"
  for i in 0 1; do
    api POST /api/v1/namespaces/e2e/events "{\"apiVersion\":\"v1\",\"kind\":\"Event\",
      \"metadata\":{\"name\":\"over-0.$i\",\"namespace\":\"e2e\"},\"reason\":\"Scheduled\",\"type\":\"Normal\",
      \"message\":\"Successfully assigned e2e/over-0 to small\",
      \"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"e2e\",\"name\":\"over-0\",\"uid\":\"$uid\"}}" >/dev/null ||
      fail "create event over-0.$i"
  done
  local out code=0
  out="$(python3 "$FAULTS_DIR/check_invariants.py" --namespace e2e)" || code=$?
  echo "$out"
  ((code == 1)) || fail "check_invariants.py exited $code on a broken cluster, expected 1"
  local kinds
  kinds="$(sed -n 's/^VIOLATION \([a-z]*\):.*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')"
  [[ "$kinds" == "capacity gang gpu node reason twice " ]] || fail "violation kinds '$kinds', expected all 6"
  grep -q '^VIOLATION reason: pending pod e2e/half-1 ' <<<"$out" || fail "the pending pod half-1 was not reported"
  grep -q '^VIOLATION gpu: node gpu device 0 holds 1200 milli-GPU > 1000' <<<"$out" ||
    fail "the over-committed GPU device was not reported"
  echo "CHECKER-SELFTEST broken=6 reported=$(grep -c "^VIOLATION" <<<"$out") kinds: $kinds"
}

# Watch streams cut: a TCP proxy (TLS passes through) between phalanx and kube-apiserver
# cuts every established connection every 3 s and delays 30% of new connections by 700 ms,
# while 8 waves of pods and gangs arrive 2 s apart. Everything is bound; invariants hold.
case_watch_cuts() {
  install_podgroup_crd
  create_namespace e2e
  local i w
  for i in 0 1 2 3 4 5; do create_node "node-$i" 4 16Gi; done
  local pport
  pport=$(free_port)
  start_proxy "$pport" tcp --cut-every 3 --delay-prob 0.3 --delay-ms 700
  proxy_kubeconfig "$pport" "$CA" "$STATE/proxy.kubeconfig"
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/proxy.kubeconfig" "$STATE/sched.yaml"
  local expected=0
  for ((w = 0; w < 8; w++)); do
    for i in 0 1 2 3 4; do create_pod e2e "w$w-$i" 100m; done
    gang "gw$w" 3 3 200m
    expected=$((expected + 8))
    sleep 2  # arrivals spread over the cut period (load shape, not a wait for a condition)
  done
  wait_until 120 "all $expected pods bound through the cutting proxy" bound_at_least "$expected"
  phalanx_running main || fail "phalanx exited while its connections were cut"
  local cuts
  cuts=$(grep -c '^FAULT cut' "$STATE/proxy-faults.log" || true)
  ((cuts >= 5)) || fail "only $cuts connection cuts happened (expected >= 5)"
  log "$(proxy_faults) faults ($cuts cuts, $(grep -c '^FAULT delay' "$STATE/proxy-faults.log" || true) delays);" \
      "$(grep -cE 'informer .*(re-watching|relisting|retrying)' "$STATE/phalanx-main.log" || true) informer warnings (a cut watch that ended cleanly is re-watched silently)"
  kill -TERM "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true; PROXY_PID=""
  local injected
  injected=$(proxy_faults)
  stop_phalanx main
  report watch_cuts "$injected"
}

# etcd stopped (SIGTERM), down 5 s, started again with the same command line and data dir,
# twice, with pods and a gang created between the restarts. The same phalanx process binds
# everything; nothing bound before a restart moves; invariants hold.
case_etcd_restart() {
  install_podgroup_crd
  create_namespace e2e
  local i k
  for i in 0 1 2; do create_node "node-$i" 4 16Gi; done
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  local pid=${PHALANX_PIDS[main]} expected=0 restarts=0
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz
  for k in 0 1 2; do
    for i in 0 1 2 3; do create_pod e2e "p$k-$i" 100m; done
    gang "g$k" 3 3 200m
    expected=$((expected + 7))
    wait_until 90 "$expected pods bound (round $k)" bound_at_least "$expected"
    local before
    before="$(pod_bindings e2e)"
    ((k == 2)) && break
    local epid cmd=()
    epid=$(cat "$STATE/cp/etcd.pid")
    mapfile -d '' -t cmd <"/proc/$epid/cmdline" || fail "cannot read etcd's command line"
    kill -TERM "$epid"
    local deadline=$((SECONDS + 30))
    while kill -0 "$epid" 2>/dev/null; do
      ((SECONDS < deadline)) || fail "etcd still running 30 s after SIGTERM"
      sleep 0.1
    done
    log "etcd ($epid) stopped; down for 5 s"
    sleep 5  # a deliberate outage
    "${cmd[@]}" >>"$STATE/cp/etcd.log" 2>&1 &
    echo $! >"$STATE/cp/etcd.pid"
    restarts=$((restarts + 1))
    ready() { curl -sf --cacert "$CA" -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVER/readyz"; }
    wait_until 120 "kube-apiserver ready after the etcd restart" ready
    log "etcd restarted (pid $(cat "$STATE/cp/etcd.pid"))"
    kill -0 "$pid" 2>/dev/null || fail "phalanx exited during the etcd outage"
    local after moved
    after="$(pod_bindings e2e)"
    moved="$(comm -23 <(echo "$before") <(echo "$after"))"
    [[ -z "$moved" ]] || fail "bindings changed across the etcd restart: $moved"
  done
  kill -0 "$pid" 2>/dev/null || fail "phalanx exited"
  stop_phalanx main
  report etcd_restart "$restarts"
}

# HTTP-level faults from a TLS-terminating proxy (own certificate; the kubeconfig trusts it):
# 30% of binding POSTs get 409 (half before the apiserver sees them, half after the bind
# succeeded there), 5% of other requests 429 and 5% 503 with Retry-After: 1, 30% of watch
# requests a 410 Gone ERROR event, 10% of requests are held 800 ms. 30 pods and 3 gangs are
# bound, nothing twice, invariants hold, phalanx keeps running.
case_http_faults() {
  install_podgroup_crd
  create_namespace e2e
  local i g
  for i in 0 1 2 3; do create_node "node-$i" 4 16Gi; done
  make_proxy_cert
  local pport
  pport=$(free_port)
  start_proxy "$pport" http --cert "$STATE/proxy.crt" --key "$STATE/proxy.key" --upstream-ca "$CA" \
    --p409 0.3 --p429 0.05 --p503 0.05 --p410 0.3 --pslow 0.1 --slow-ms 800
  proxy_kubeconfig "$pport" "$STATE/proxy.crt" "$STATE/proxy.kubeconfig"
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/proxy.kubeconfig" "$STATE/sched.yaml"
  for i in $(seq 0 29); do create_pod e2e "p-$i" 100m; done
  for g in 0 1 2; do gang "g$g" 3 3 200m; done
  local expected=39
  wait_until 150 "all $expected pods bound through the faulty proxy" bound_at_least "$expected"
  phalanx_running main || fail "phalanx exited under HTTP faults"
  local kinds
  kinds="$(awk '$1 == "FAULT" {print $2}' "$STATE/proxy-faults.log" | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')"
  log "faults injected: $kinds"
  log "phalanx log on them: $(grep -ciE '409|conflict' "$STATE/phalanx-main.log" || true) conflict lines," \
      "$(grep -ciE '429|503|retry' "$STATE/phalanx-main.log" || true) 429/503/retry lines," \
      "$(grep -ciE '410|expired|relist' "$STATE/phalanx-main.log" || true) 410/relist lines"
  # Retry-After: 1 is honoured: every 429 / 503 older than 3 s was sent again (same
  # method, path and body) and not before 0.9 s had passed (client-go checkWait).
  sleep 3  # lets the retries of the last injected 429 / 503 happen (Retry-After is 1 s)
  local ra
  ra="$(python3 - "$STATE/proxy-faults.log" <<'PY'
import sys, time
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(("REQ", "FAULT"))]
now, bad, ok = time.time(), [], 0
for i, r in enumerate(rows):
    if r[0] != "FAULT" or r[1] not in ("429", "503") or float(r[5]) > now - 3:
        continue
    nxt = next((x for x in rows[i + 1:] if x[0] == "REQ" and x[2:5] == r[2:5]), None)
    if nxt is None:
        bad.append(f"{r[1]} {r[2]} {r[3]}: never sent again")
    elif float(nxt[5]) - float(r[5]) < 0.9:
        bad.append(f"{r[1]} {r[2]} {r[3]}: sent again after {float(nxt[5]) - float(r[5]):.3f} s (< Retry-After 1 s)")
    else:
        ok += 1
print(f"RETRY-AFTER honoured={ok} violated={len(bad)}")
for b in bad:
    print("  " + b)
PY
)"
  echo "$ra"
  grep -q 'violated=0$' <<<"$(head -1 <<<"$ra")" || fail "Retry-After not honoured (above)"
  # A 409 on a binding is not retried forever: binding POSTs per pod stay few, and a pod
  # whose bind went through (409-after) is sent at most once more (before its update with
  # nodeName arrives; the apiserver then answers 409 itself). Only the POSTs after the
  # 409-after count: a Retry-After retry or a 409-before may precede it (log order).
  local bs
  bs="$(awk '$1 == "REQ" && $3 == "POST" && $4 ~ /\/binding$/ {n[$4]++; if ($4 in after) later[$4]++}
             $1 == "FAULT" && $2 == "409-after" {after[$4] = 1}
             END {max = 0; for (p in n) if (n[p] > max) max = n[p];
                  again = 0; for (p in after) if (later[p] > 1) again++;
                  printf "BIND-POSTS pods=%d max_per_pod=%d resent_after_409_after=%d\n", length(n), max, again}' \
        "$STATE/proxy-faults.log")"
  echo "$bs"
  local maxp again
  maxp=$(sed -n 's/.*max_per_pod=\([0-9]*\).*/\1/p' <<<"$bs")
  again=$(sed -n 's/.*resent_after_409_after=\([0-9]*\).*/\1/p' <<<"$bs")
  ((maxp <= 6)) || fail "a pod's binding was POSTed $maxp times (409 retried without end?)"
  ((again == 0)) || fail "$again pods bound behind a 409 were sent more than once again"
  stop_phalanx main
  report http_faults "$(grep -c '^FAULT' "$STATE/proxy-faults.log")"
}

# Two replicas with leader election (leaseDuration 6 s, renewDeadline 4 s, retryPeriod 1 s);
# the leader is killed with SIGKILL 4 times in a row, the killed replica restarted as the new
# standby each time, pods and a gang of 3 created after each kill. The survivor takes over every time, all
# pods are bound once, invariants hold.
case_leader_kills() {
  install_podgroup_crd
  create_namespace e2e
  create_node node-a 8 16Gi
  create_node node-b 8 16Gi
  cat >"$STATE/sched.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  leaseDuration: 6s
  renewDeadline: 4s
  retryPeriod: 1s
  resourceNamespace: kube-system
  resourceName: phalanx-e2e
profiles:
- schedulerName: default-scheduler
EOF
  start_phalanx r0 "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  start_phalanx r1 "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  has_holder() { [[ -n "$(lease_holder)" ]]; }
  wait_until 60 "a replica holds the lease" has_holder
  local k i expected=0 kills=0 gen=2
  for i in 0 1 2; do create_pod e2e "pre-$i" 100m; done
  expected=3
  wait_until 60 "3 pods bound" bound_at_least 3
  for ((k = 1; k <= 4; k++)); do
    local holder leader standby
    holder="$(lease_holder)"
    leader=${holder#e2e-}
    [[ -n "${PHALANX_PIDS[$leader]:-}" ]] || fail "lease holder '$holder' is not a running replica"
    standby=""
    for i in "${!PHALANX_PIDS[@]}"; do [[ $i != "$leader" ]] && standby=$i; done
    [[ -n "$standby" ]] || fail "no standby replica"
    local t0
    kill -9 "${PHALANX_PIDS[$leader]}"
    t0=$(now_ms)
    wait "${PHALANX_PIDS[$leader]}" 2>/dev/null || true
    unset "PHALANX_PIDS[$leader]"
    kills=$((kills + 1))
    for i in 0 1 2 3 4; do create_pod e2e "k$k-$i" 100m; done
    gang "gk$k" 3 3 200m
    expected=$((expected + 8))
    lease_is() { [[ "$(lease_holder)" == "$1" ]]; }
    wait_until 30 "replica $standby takes over the lease after kill $k" lease_is "e2e-$standby"
    wait_until 30 "$expected pods bound after kill $k" bound_at_least "$expected"
    log "kill $k: leader $leader SIGKILLed; $standby holds the lease and all $expected pods are bound" \
        "$(( ($(now_ms) - t0) / 1000 )) s later"
    start_phalanx "r$gen" "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
    gen=$((gen + 1))
  done
  local n
  n=$(bound_count)
  ((n == expected)) || fail "$n pods bound, expected $expected"
  # The newest standby may still be starting (slow under ASan): a SIGTERM before its signal
  # thread exists would be fatal, so wait until every replica serves /healthz.
  local mp_var
  for i in "${!PHALANX_PIDS[@]}"; do
    mp_var="METRICS_PORT_$i"
    wait_until 60 "replica $i serves /healthz" http_get "${!mp_var}" /healthz
  done
  for i in "${!PHALANX_PIDS[@]}"; do stop_phalanx "$i"; done
  report leader_kills "$kills"
}

# shellcheck source=load_churn.sh
source "$FAULTS_DIR/load_churn.sh"
declare -F "case_$CASE" >/dev/null || { echo "unknown case $CASE" >&2; exit 2; }
e2e_setup
trap cleanup_faults EXIT
export SERVER CA ADMIN_TOKEN
start=$SECONDS
"case_$CASE"
log "PASS e2e.fault_$CASE ($((SECONDS - start)) s after the control plane was up)"
