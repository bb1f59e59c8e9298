# Helpers for the end-to-end tests (sourced by cases.sh): a control plane per test case
# (scripts/control-plane.sh), API calls with curl + jq, phalanx processes, and waiting on
# conditions with deadlines (never fixed sleeps for correctness).
# shellcheck shell=bash

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$E2E_DIR/../.." && pwd)"
CP="$ROOT/scripts/control-plane.sh"
STATE=""
declare -A PHALANX_PIDS=()

log() { echo "[$(date +%H:%M:%S)] $*"; }

fail() {
  echo "FAIL: $*" >&2
  local f
  for f in "$STATE"/phalanx-*.log; do
    [[ -f "$f" ]] || continue
    echo "---- last lines of $(basename "$f") ----" >&2
    tail -25 "$f" >&2
  done
  exit 1
}

cleanup() {
  local name pid
  for name in "${!PHALANX_PIDS[@]}"; do
    pid=${PHALANX_PIDS[$name]}
    kill -TERM "$pid" 2>/dev/null || true
  done
  for name in "${!PHALANX_PIDS[@]}"; do
    wait "${PHALANX_PIDS[$name]}" 2>/dev/null || true
  done
  [[ -n "$STATE" ]] && "$CP" stop "$STATE/cp" >/dev/null 2>&1
  [[ -n "$STATE" ]] && rm -rf "$STATE"
}

# Builds (or finds cached) binaries and starts etcd + kube-apiserver. Skips (exit 77) when
# the binaries cannot be built and CI is not set; in CI that is a failure.
e2e_setup() {
  STATE="$(mktemp -d "${TMPDIR:-/tmp}/phalanx-e2e.XXXXXX")"
  trap cleanup EXIT
  if ! "$CP" build >"$STATE/build.log" 2>&1; then
    if [[ "${CI:-}" == "true" ]]; then
      tail -20 "$STATE/build.log" >&2
      fail "cannot build kube-apiserver v1.20.2 (CI=true: the e2e tests must run)"
    fi
    echo "SKIP: kube-apiserver v1.20.2 could not be built from Debian's kubernetes source" \
         "package (see scripts/control-plane.sh build); last lines:"
    tail -5 "$STATE/build.log"
    exit 77
  fi
  "$CP" start "$STATE/cp" >"$STATE/cp-start.log" 2>&1 || {
    cat "$STATE/cp-start.log" >&2
    fail "control plane did not start"
  }
  # shellcheck disable=SC1091
  source "$STATE/cp/env"
  log "kube-apiserver at $SERVER"
}

# api METHOD PATH [JSON|@FILE] [CONTENT-TYPE]: as admin. Prints the body; non-zero on non-2xx.
api() { api_as "$ADMIN_TOKEN" "$@"; }
api_as() {
  local token=$1 method=$2 path=$3 body=${4:-} ct=${5:-application/json}
  local args=(-sS --cacert "$CA" -H "Authorization: Bearer $token" -X "$method" -w '\n%{http_code}')
  if [[ -n "$body" ]]; then
    args+=(-H "Content-Type: $ct")
    if [[ "$body" == @* ]]; then args+=(--data-binary "$body"); else args+=(--data-binary "$body"); fi
  fi
  local out code
  out="$(curl "${args[@]}" "$SERVER$path")" || return 1
  code="${out##*$'\n'}"
  printf '%s\n' "${out%$'\n'*}"
  [[ "$code" =~ ^2 ]]
}

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.3 s until it succeeds.
wait_until() {
  local timeout=$1 desc=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after ${timeout}s waiting for: $desc"
    sleep 0.3
  done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' \
    2>/dev/null || shuf -i 20000-60000 -n 1
}

create_namespace() {
  api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$1\"}}" >/dev/null ||
    fail "create namespace $1"
}

# create_node NAME CPU MEMORY
create_node() {
  api POST /api/v1/nodes "$(cat <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"$1","labels":{"kubernetes.io/hostname":"$1"}},
 "status":{"capacity":{"cpu":"$2","memory":"$3","pods":"110"},
           "allocatable":{"cpu":"$2","memory":"$3","pods":"110"},
           "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}
EOF
)" >/dev/null || fail "create node $1"
}

# create_pod NAMESPACE NAME CPU [SCHEDULER-NAME] [LABELS-JSON]
create_pod() {
  local sched=${4:-default-scheduler} labels=${5:-'{}'}
  api POST "/api/v1/namespaces/$1/pods" "$(cat <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2","namespace":"$1","labels":$labels},
 "spec":{"schedulerName":"$sched","containers":[{"name":"c","image":"registry.k8s.io/pause:3.9",
   "resources":{"requests":{"cpu":"$3","memory":"64Mi"}}}]}}
EOF
)" >/dev/null || fail "create pod $1/$2"
}

pod_node() { api GET "/api/v1/namespaces/$1/pods/$2" | jq -r '.spec.nodeName // ""'; }
pod_bound() { [[ -n "$(pod_node "$1" "$2")" ]]; }
pod_unbound() { [[ -z "$(pod_node "$1" "$2")" ]]; }

# events_for NAMESPACE POD REASON: prints matching event messages.
events_for() {
  api GET "/api/v1/namespaces/$1/events?fieldSelector=involvedObject.name%3D$2" |
    jq -r --arg r "$3" '.items[] | select(.reason == $r) | .message'
}
has_event() { [[ -n "$(events_for "$1" "$2" "$3")" ]]; }

# write_config FILE [LEADER-ELECT true|false] [EXTRA-YAML]: a KubeSchedulerConfiguration.
write_config() {
  cat >"$1" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 200
  burst: 400
leaderElection:
  leaderElect: ${2:-true}
  leaseDuration: 15s
  renewDeadline: 10s
  retryPeriod: 2s
  resourceNamespace: kube-system
  resourceName: phalanx-e2e
profiles:
- schedulerName: default-scheduler
${3:-}
EOF
}

# start_phalanx NAME KUBECONFIG CONFIG [ARGS...]: runs `phalanx run` in the background;
# logs in $STATE/phalanx-NAME.log; sets METRICS_PORT_<NAME>.
start_phalanx() {
  local name=$1 kc=$2 cfg=$3; shift 3
  local port
  port=$(free_port)
  "$PHALANX" run --config "$cfg" --kubeconfig "$kc" --bind-address "127.0.0.1:$port" \
    --identity "e2e-$name" "$@" >"$STATE/phalanx-$name.log" 2>&1 &
  PHALANX_PIDS[$name]=$!
  printf -v "METRICS_PORT_$name" '%s' "$port"
  log "phalanx $name started (pid $!, metrics on 127.0.0.1:$port)"
}

# stop_phalanx NAME: SIGTERM, then expects exit code 0 within 30 s.
stop_phalanx() {
  local name=$1 pid=${PHALANX_PIDS[$1]}
  kill -TERM "$pid" 2>/dev/null || fail "phalanx $name is not running"
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS < deadline)) || fail "phalanx $name did not exit within 30 s of SIGTERM"
    sleep 0.2
  done
  local code=0
  wait "$pid" || code=$?
  unset "PHALANX_PIDS[$name]"
  [[ $code -eq 0 ]] || fail "phalanx $name exited with $code after SIGTERM (expected 0)"
  log "phalanx $name stopped cleanly"
}

phalanx_running() { kill -0 "${PHALANX_PIDS[$1]}" 2>/dev/null; }

http_get() { curl -sf "http://127.0.0.1:$1$2"; }

# metrics_match PORT REGEX: true if a line of PORT's /metrics matches REGEX (grep). The page
# is read whole first: `http_get | grep -q` fails under pipefail when grep exits at the
# match before curl has written the rest (curl: write error 23), a false "no match".
metrics_match() {
  local m
  m="$(http_get "$1" /metrics)" || return 1
  grep -q -- "$2" <<<"$m"
}

lease_holder() {
  api GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/phalanx-e2e |
    jq -r '.spec.holderIdentity // ""'
}

# restart_apiserver DOWN-SECONDS [SIGNAL]: stops kube-apiserver (SIGNAL, default KILL), keeps
# it down DOWN-SECONDS (a deliberate outage, not a wait for a condition), then starts it
# again with exactly the same command line (read from /proc before the kill: same port,
# same etcd, same certificates in --cert-dir, same tokens) and waits for /readyz.
restart_apiserver() {
  local down=$1 sig=${2:-KILL} dir="$STATE/cp"
  local pid
  pid=$(cat "$dir/apiserver.pid")
  local -a cmd=()
  mapfile -d '' -t cmd <"/proc/$pid/cmdline" || fail "cannot read the command line of kube-apiserver ($pid)"
  ((${#cmd[@]} > 0)) || fail "empty command line for kube-apiserver ($pid)"
  kill "-$sig" "$pid" || fail "kube-apiserver ($pid) is not running"
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS < deadline)) || fail "kube-apiserver ($pid) still running 30 s after SIG$sig"
    sleep 0.1
  done
  api GET /readyz >/dev/null 2>&1 && fail "something still answers at $SERVER after the kill"
  log "kube-apiserver ($pid) stopped with SIG$sig; down for ${down} s"
  sleep "$down"
  echo "---- restarted $(date +%H:%M:%S) ----" >>"$dir/apiserver.log"
  "${cmd[@]}" >>"$dir/apiserver.log" 2>&1 &
  echo $! >"$dir/apiserver.pid"
  deadline=$((SECONDS + 120))
  until curl -sf --cacert "$CA" -H "Authorization: Bearer $ADMIN_TOKEN" "$SERVER/readyz" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$dir/apiserver.pid")" 2>/dev/null; then
      tail -20 "$dir/apiserver.log" >&2
      fail "restarted kube-apiserver exited (log above)"
    fi
    ((SECONDS < deadline)) || fail "restarted kube-apiserver not ready after 120 s"
    sleep 0.3
  done
  log "kube-apiserver restarted (pid $(cat "$dir/apiserver.pid")) at $SERVER"
}

# The scheduling invariants (capacity, node, twice, gang, reason), checked by the
# one checker the fault tests use too: test/faults/check_invariants.py (its docstring says
# what each one means). cases.sh runs check_invariants after every case.
INVARIANTS_CHECKER="$ROOT/test/faults/check_invariants.py"

# run_invariants_checker ENV-FILE OUT-FILE: runs the checker against the control plane whose
# scripts/control-plane.sh env file (SERVER, CA, ADMIN_TOKEN) is ENV-FILE, over all
# namespaces (nothing a case creates can escape it), for pending pods of default-scheduler
# (the only profile write_config and live-bench.sh give Phalanx; pods of other schedulers
# are not Phalanx's to explain, though their bindings still count toward capacity). Writes
# its output to OUT-FILE and its exit code to OUT-FILE.code. A subshell: the env file's
# variables are exported to the checker only.
run_invariants_checker() {
  (
    set -a
    # shellcheck disable=SC1090
    source "$1"
    set +a
    code=0
    python3 "$INVARIANTS_CHECKER" --scheduler default-scheduler >"$2" 2>&1 || code=$?
    echo "$code" >"$2.code"
  )
}

# expect_no_violations WHAT OUT-FILE: prints the checker's output (one VIOLATION line per
# violation, then the INVARIANTS summary) and fails unless it exited 0 with violations=0.
expect_no_violations() {
  local what=$1 out=$2 code
  [[ -f "$out.code" ]] || fail "the invariant checker did not run on $what"
  code=$(cat "$out.code")
  log "invariants of $what (test/faults/check_invariants.py --scheduler default-scheduler, all namespaces):"
  cat "$out"
  case "$code" in
    0) ;;
    1) fail "invariant violations on $what (VIOLATION lines above)" ;;
    *) fail "check_invariants.py exited $code on $what: it could not read the API" ;;
  esac
  grep -Eq '^INVARIANTS pods=[0-9]+ bound=[0-9]+ pending=[0-9]+ gangs=[0-9]+ violations=0$' "$out" ||
    fail "no 'INVARIANTS ... violations=0' summary from the checker on $what"
}

# check_invariants: the invariants of this case's control plane, 0 violations required.
check_invariants() {
  run_invariants_checker "$STATE/cp/env" "$STATE/invariants.out"
  expect_no_violations "the cluster after e2e.$CASE" "$STATE/invariants.out"
}

# pod_bindings NAMESPACE: "NAME NODE" for every pod (NODE "-" when unbound), sorted.
pod_bindings() {
  api GET "/api/v1/namespaces/$1/pods" | jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName // "-")"' | sort
}

# now_ms: wall clock in milliseconds.
now_ms() { date +%s%3N; }
