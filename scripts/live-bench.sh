#!/usr/bin/env bash
# Live benchmark: pods bound per second through a real kube-apiserver
# v1.20.2, side by side in one run, for
#   phalanx    `phalanx run` (default profile, leaderElect false)
#   upstream   kube-scheduler v1.20.2 built from the same source package (v1beta1 config,
#              default profile, leaderElect false)
#   bind-only  `phalanx load bind`: POSTs pods/binding round-robin onto the nodes without
#              scheduling anything: what the API server can absorb (the ceiling)
# all at the same clientConnection qps/burst. Each client gets a fresh control plane
# (scripts/control-plane.sh start) holding identical objects, created through the API by
# `phalanx load create`: NODES nodes shaped like scheduler_perf's node-default.yaml (4 cpu,
# 32Gi, 110 pods) and PODS pending pods like pod-default.yaml (100m cpu, 500Mi). Binds are
# timed by `phalanx load watch` (a watch on the pods, started before the client), as
#   pods/s (first->last)  = (bound - 1) / (last bind - first bind)
#   pods/s (from start)   = bound / (last bind - client start)
# The target for phalanx: at least min(3 x upstream, 0.8 x bind-only) pods/s.
# With --rounds R the three clients run in turn R times (interleaved, so that other load on
# the machine hits all of them alike); the table shows every round and the median.
#
# Usage: scripts/live-bench.sh [--nodes 5000] [--pods 10000] [--qps 5000] [--burst 5000]
#          [--phalanx build/phalanx] [--clients phalanx,upstream,bind-only]
#          [--workers 64] [--binding-workers 64] [--timeout 900] [--rounds 1] [--keep DIR]
#   Smoke size: scripts/live-bench.sh --nodes 50 --pods 200
# Needs the control-plane binaries (scripts/control-plane.sh build). Not part of CI at full
# size (minutes); e2e.live_bench_smoke runs it at 50 nodes / 200 pods.
# Exit status: 0 when every client bound every pod (targets are reported, not enforced).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CP="$ROOT/scripts/control-plane.sh"
NODES=5000
PODS=10000
QPS=5000
BURST=5000
PHALANX="$ROOT/build/phalanx"
CLIENTS="phalanx,upstream,bind-only"
WORKERS=64
BINDING_WORKERS=64
TIMEOUT=900
ROUNDS=1
KEEP=""
while (($#)); do
  case "$1" in
    --nodes) NODES=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --qps) QPS=$2; shift 2 ;;
    --burst) BURST=$2; shift 2 ;;
    --phalanx) PHALANX=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --binding-workers) BINDING_WORKERS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "live-bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$PHALANX" ]] || { echo "live-bench: no phalanx binary at $PHALANX (--phalanx)" >&2; exit 2; }
PHALANX="$(cd "$(dirname "$PHALANX")" && pwd)/$(basename "$PHALANX")"
"$CP" build >/dev/null || { echo "live-bench: control-plane binaries missing (scripts/control-plane.sh build)" >&2; exit 2; }
CACHE="$("$CP" cache-dir)"

WORK="${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/phalanx-live-bench.XXXXXX")}"
mkdir -p "$WORK"
CP_DIR=""
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [[ -n "$CP_DIR" ]]; then "$CP" stop "$CP_DIR" >/dev/null 2>&1 || true; fi
  if [[ -z "$KEEP" ]]; then rm -rf "$WORK"; fi
  return 0  # an EXIT trap's status would replace the script's
}
trap cleanup EXIT

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
now_ms() { date +%s%3N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run_client NAME ROUND: fresh control plane, objects, watch, client; appends a result line
# "NAME ROUND bound first_ms last_ms start_ms" to $WORK/results.
run_client() {
  local name=$1 round=$2 dir="$WORK/$1-$2"
  mkdir -p "$dir"
  CP_DIR="$dir/cp"
  "$CP" start "$CP_DIR" >"$dir/cp-start.log" 2>&1 || { cat "$dir/cp-start.log" >&2; exit 1; }
  local kc="$CP_DIR/admin.kubeconfig"
  log "$name: control plane up; creating $NODES nodes and $PODS pods"
  "$PHALANX" load create --kubeconfig "$kc" --namespace bench --nodes "$NODES" --pods "$PODS" \
    --workers "$WORKERS" | tee -a "$dir/create.log" >&2
  rm -f "$dir/ready"
  "$PHALANX" load watch --kubeconfig "$kc" --namespace bench --expect "$PODS" \
    --timeout "$TIMEOUT" --ready-file "$dir/ready" >"$dir/watch.json" 2>"$dir/watch.log" &
  local watch_pid=$!
  PIDS+=("$watch_pid")
  local deadline=$((SECONDS + 120))
  until [[ -f "$dir/ready" ]]; do
    kill -0 "$watch_pid" 2>/dev/null || { cat "$dir/watch.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "live-bench: watch not established" >&2; exit 1; }
    sleep 0.1
  done
  local start pid="" port
  port=$(free_port)
  start=$(now_ms)
  case "$name" in
    phalanx)
      cat >"$dir/sched.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: $QPS
  burst: $BURST
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
EOF
      "$PHALANX" run --config "$dir/sched.yaml" --kubeconfig "$kc" --bind-address "127.0.0.1:$port" \
        --binding-workers "$BINDING_WORKERS" >"$dir/client.log" 2>&1 &
      pid=$!
      ;;
    upstream)
      cat >"$dir/sched.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $kc
  qps: $QPS
  burst: $BURST
leaderElection:
  leaderElect: false
healthzBindAddress: 127.0.0.1:$port
metricsBindAddress: 127.0.0.1:$port
profiles:
- schedulerName: default-scheduler
EOF
      "$CACHE/kube-scheduler" --config "$dir/sched.yaml" --secure-port=0 --v=1 \
        --logtostderr=true >"$dir/client.log" 2>&1 &
      pid=$!
      ;;
    bind-only)
      "$PHALANX" load bind --kubeconfig "$kc" --namespace bench --workers "$WORKERS" \
        --qps "$QPS" --burst "$BURST" >"$dir/client.log" 2>&1 &
      pid=$!
      ;;
  esac
  PIDS+=("$pid")
  log "$name: started (pid $pid); waiting for $PODS binds"
  local wcode=0
  wait "$watch_pid" || wcode=$?
  if [[ "$name" != bind-only ]]; then kill -TERM "$pid" 2>/dev/null || true; fi
  wait "$pid" 2>/dev/null || true
  PIDS=()
  local line bound first last
  line="$(tail -1 "$dir/watch.json")"
  bound=$(sed -E 's/.*"bound":([0-9]+).*/\1/' <<<"$line")
  first=$(sed -E 's/.*"first_ms":([0-9]+).*/\1/' <<<"$line")
  last=$(sed -E 's/.*"last_ms":([0-9]+).*/\1/' <<<"$line")
  echo "$name $round $bound $first $last $start" >>"$WORK/results"
  log "$name: $line (client started at $start)"
  [[ $wcode -eq 0 ]] || { log "$name: only $bound of $PODS pods bound within ${TIMEOUT}s"; tail -5 "$dir/client.log" >&2; }
  "$CP" stop "$CP_DIR" >/dev/null 2>&1 || true
  CP_DIR=""
}

: >"$WORK/results"
IFS=, read -r -a clients <<<"$CLIENTS"
for ((r = 1; r <= ROUNDS; r++)); do
  for c in "${clients[@]}"; do
    case "$c" in phalanx|upstream|bind-only) run_client "$c" "$r" ;; *) echo "unknown client $c" >&2; exit 2 ;; esac
  done
done

echo
echo "Live benchmark: $NODES nodes, $PODS pods, qps/burst $QPS/$BURST, kube-apiserver v1.20.2" \
     "($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
awk -v pods="$PODS" '
  function median(list,   a, k, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { name = $1; round = $2; bound = $3; span = ($5 - $4) / 1000.0; total = ($5 - $6) / 1000.0
    fl = (span > 0 && bound > 1) ? (bound - 1) / span : 0
    fs = (total > 0) ? bound / total : 0
    if (!(name in seen)) { seen[name] = 1; order[++n] = name }
    RFL[name] = RFL[name] " " fl; RFS[name] = RFS[name] " " fs
    rows = rows sprintf("| %s | %d | %d/%d | %.2f | %.0f | %.2f | %.0f |\n", name, round, bound, pods, span, fl, total, fs)
    if (bound < pods) incomplete = 1 }
  END {
    printf "| client | round | pods bound | first->last (s) | pods/s first->last | start->last (s) | pods/s from start |\n"
    printf "|---|---|---|---|---|---|---|\n%s", rows
    for (i = 1; i <= n; i++) { mfl[order[i]] = median(RFL[order[i]]); mfs[order[i]] = median(RFS[order[i]]) }
    printf "\n| client | median pods/s first->last | median pods/s from start |\n|---|---|---|\n"
    for (i = 1; i <= n; i++) printf "| %s | %.0f | %.0f |\n", order[i], mfl[order[i]], mfs[order[i]]
    if (("phalanx" in mfl) && ("upstream" in mfl) && mfl["upstream"] > 0 && mfs["upstream"] > 0)
      printf "phalanx / upstream: %.2fx (first->last), %.2fx (from start)\n",
             mfl["phalanx"] / mfl["upstream"], mfs["phalanx"] / mfs["upstream"]
    if (("phalanx" in mfl) && ("bind-only" in mfl) && mfl["bind-only"] > 0 && mfs["bind-only"] > 0)
      printf "phalanx / bind-only: %.2f (first->last), %.2f (from start)\n",
             mfl["phalanx"] / mfl["bind-only"], mfs["phalanx"] / mfs["bind-only"]
    if (("phalanx" in mfl) && ("upstream" in mfl) && ("bind-only" in mfl)) {
      t1 = 3 * mfl["upstream"]; t2 = 0.8 * mfl["bind-only"]; t = (t1 < t2) ? t1 : t2
      met = (mfl["phalanx"] >= t) ? "met" : "NOT met"
      printf "target (medians, first->last): min(3 x upstream = %.0f, 0.8 x bind-only = %.0f) = %.0f pods/s: phalanx %.0f -> %s\n",
             t1, t2, t, mfl["phalanx"], met
    }
  }' "$WORK/results"
all=0
while read -r _ _ bound _; do [[ $bound -eq $PODS ]] || all=1; done <"$WORK/results"
exit $all
