#!/usr/bin/env bash
# Phalanx vs upstream kube-scheduler v1.20.2 on the same scheduler_perf workloads, side by
# side in one run on this machine. Upstream's numbers come from its own benchmark,
# BenchmarkPerfScheduling in test/integration/scheduler_perf (kube-scheduler + a real
# kube-apiserver + etcd in one process, SchedulingThroughput = pods bound per 1 s sample);
# Phalanx's from `phalanx bench` on the same performance-config.yaml and templates.
#
# Usage:
#   scripts/scheduler-perf.sh [OPTIONS]      Build (once) and run both on every workload,
#                                            print the table (Markdown) on stdout.
#     --workloads REGEX   only Case/Workload names matching REGEX (grep -E), e.g.
#                         'SchedulingBasic|Preemption'
#     --nodes N           workloads whose name starts with N "Nodes": 5000 (default),
#                         500, or all
#     --out FILE          also write the report section (machine, date, commit, table) to FILE
#     --docs              also put that section into docs/performance.md between the markers
#                         <!-- scheduler-perf:begin --> and <!-- scheduler-perf:end -->
#     --results-dir DIR   keep logs and raw JSON there (default: a new dir under /tmp)
#     --phalanx PATH      phalanx binary (default: build/phalanx)
#     --only upstream|phalanx   run one side only (the other column says "not run")
#     --nice N            niceness of both benchmark runs (default 10)
#     --timeout DURATION  per workload and side, timeout(1) syntax (default 45m)
#     --upstream-timeout REGEX=DURATION
#                         a shorter limit for upstream on workloads matching REGEX (repeatable),
#                         e.g. 'Preemption=10m': v1.20.2 preempts ~1 pod/s at 5000 nodes, so
#                         its 5,000 measured pods would take hours; the row then compares its
#                         1 s samples up to the limit with Phalanx's whole op ("partial")
#   scripts/scheduler-perf.sh build          Build upstream's scheduler_perf test binary from
#                                            Debian's kubernetes source package (once; cached
#                                            with its config/ in ~/.cache/phalanx-k8s/1.20.2/
#                                            scheduler_perf/) and print that directory.
#   scripts/scheduler-perf.sh list [--nodes N] [--workloads REGEX] [--config FILE]
#                                            The selected workloads, one per line.
#   scripts/scheduler-perf.sh table DIR      Re-render the table from a results dir.
#   scripts/scheduler-perf.sh section DIR    The whole docs section from a results dir.
#   scripts/scheduler-perf.sh splice FILE    Put stdin between the markers of FILE.
#   scripts/scheduler-perf.sh throughput-from-log NAME FILE < LOG
#                                            Upstream's SchedulingThroughput from the 1 s
#                                            samples in a benchmark log, as a dataItems FILE.
#   scripts/scheduler-perf.sh v136 [--label L] [--files REGEX] [--out FILE] [--docs]
#                               [--results-dir DIR] [--phalanx PATH] [--nice N]
#                                            `phalanx bench --keep-going` on every 1.36
#                                            performance-config.yaml of
#                                            ../shared/upstream/scheduler_perf-v1.36 (or
#                                            $PHALANX_SCHEDULER_PERF_136), unchanged: one row
#                                            per workload with its measured throughput
#                                            against the file's threshold, and the workloads
#                                            that cannot run with the reason. --label as
#                                            bench's (default: all workloads); --docs puts
#                                            the section into docs/performance.md between
#                                            <!-- scheduler-perf-136:begin --> and -end -->.
#   scripts/scheduler-perf.sh v136-table DIR  Re-render that table from its results dir.
#   scripts/scheduler-perf.sh --help
#
# Default workloads: every case of upstream's performance-config.yaml (the PersistentVolume
# cases SchedulingInTreePVs, SchedulingMigratedInTreePVs and SchedulingCSIPVs included: Phalanx
# creates their PVs, claims and CSINodes as upstream's harness does), at 5000 nodes. Running
# upstream at 5000 nodes takes minutes per workload.
# v1.20.2's benchmark never finishes the Unschedulable workloads (see upstream_stuck_namespace):
# the script stops it at its final barrier and reads the measured samples from its log.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
K8S_VERSION="1.20.2"
CACHE_ROOT="${PHALANX_K8S_CACHE:-$HOME/.cache/phalanx-k8s}"
SP_CACHE="$CACHE_ROOT/$K8S_VERSION/scheduler_perf"
BEGIN_MARK="<!-- scheduler-perf:begin -->"
END_MARK="<!-- scheduler-perf:end -->"
SECTION_TITLE="Side by side with kube-scheduler v$K8S_VERSION (scheduler_perf)"
TIMEOUT=45m
UPSTREAM_TIMEOUTS=()  # REGEX=DURATION, from --upstream-timeout

log() { echo "scheduler-perf: $*" >&2; }
die() { echo "scheduler-perf: error: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

# BUILD-INFO keys the cached test binary: a different recipe or Go toolchain rebuilds it.
build_info() {
  echo "scheduler_perf.test v$K8S_VERSION; reflect2 1.0.2 (Debian); GOPATH mode, CGO_ENABLED=0;" \
       "test/utils create and PV/PVC status retries on 429/timeouts;" \
       "$(go version 2>/dev/null || echo 'no go')"
}
have_test_binary() {
  [[ -x "$SP_CACHE/scheduler_perf.test" && -f "$SP_CACHE/config/performance-config.yaml" ]] &&
    [[ "$(cat "$SP_CACHE/BUILD-INFO" 2>/dev/null)" == "$(build_info)" ]]
}

# The benchmark harness of v1.20 (test/utils/create_resources.go, *WithRetries) gives up on
# the first error of any kind, HTTP 429 included, which the test's kube-apiserver returns when
# it is busy; upstream versions before and after v1.20 retry such errors (IsRetryableAPIError:
# internal error, timeouts, 429, or a Retry-After) with the same exponential backoff. Restore
# that: only the pod/node creation of the harness changes, not the scheduler it measures.
patch_harness() {  # SRC
  local f="$1/test/utils/create_resources.go"
  [[ -f "$f" ]] || die "$f: missing"
  grep -q "phalanxRetryable" "$f" && return 0
  local n
  n=$(grep -c 'return false, fmt.Errorf("Failed to create object with non-retriable error: %v", err)' "$f" || true)
  ((n > 0)) || die "$f: no non-retriable error return to patch (unexpected source)"
  sed -i 's|^\(\t*\)return false, fmt.Errorf("Failed to create object with non-retriable error: %v", err)|\1if phalanxRetryable(err) {\n\1\treturn false, nil\n\1}\n&|' "$f"
  cat >>"$f" <<'EOF'

// phalanxRetryable: IsRetryableAPIError of the upstream versions around v1.20 (added by
// Phalanx's scripts/scheduler-perf.sh).
func phalanxRetryable(err error) bool {
	if apierrors.IsInternalError(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) {
		return true
	}
	_, retry := apierrors.SuggestsClientDelay(err)
	return retry
}
EOF
  log "patched $f ($n create functions retry 429/timeouts)"
  # The PV workloads' object factory (runners.go CreatePodWithPersistentVolume) sets the PV's
  # and the claim's status with one UpdateStatus each, outside the *WithRetries helpers:
  # SchedulingCSIPVs/5000Nodes failed there on a 429. Retry those the same way.
  local r="$1/test/utils/runners.go"
  [[ -f "$r" ]] || die "$r: missing"
  grep -q "phalanxUpdateStatus" "$r" && return 0
  sed -i -e 's|if _, err := client.CoreV1().PersistentVolumes().UpdateStatus(context.TODO(), pv, metav1.UpdateOptions{}); err != nil {|if err := phalanxUpdateStatus(func() error { _, e := client.CoreV1().PersistentVolumes().UpdateStatus(context.TODO(), pv, metav1.UpdateOptions{}); return e }); err != nil {|' \
         -e 's|if _, err := client.CoreV1().PersistentVolumeClaims(namespace).UpdateStatus(context.TODO(), pvc, metav1.UpdateOptions{}); err != nil {|if err := phalanxUpdateStatus(func() error { _, e := client.CoreV1().PersistentVolumeClaims(namespace).UpdateStatus(context.TODO(), pvc, metav1.UpdateOptions{}); return e }); err != nil {|' "$r"
  n=$(grep -c "phalanxUpdateStatus(func" "$r" || true)
  ((n == 2)) || die "$r: expected 2 PV/PVC UpdateStatus calls to patch, found $n"
  cat >>"$r" <<'EOF'

// phalanxUpdateStatus retries a status update on the errors phalanxRetryable accepts, with
// the exponential backoff of the *WithRetries helpers (RetryWithExponentialBackOff; added by Phalanx's
// scripts/scheduler-perf.sh).
func phalanxUpdateStatus(update func() error) error {
	var last error
	err := RetryWithExponentialBackOff(func() (bool, error) {
		last = update()
		if last == nil {
			return true, nil
		}
		if phalanxRetryable(last) {
			return false, nil
		}
		return false, last
	})
	if err == wait.ErrWaitTimeout && last != nil {
		return last
	}
	return err
}
EOF
  log "patched $r (PV/PVC status updates retry 429/timeouts)"
}

cmd_build() {
  if have_test_binary; then echo "$SP_CACHE"; return 0; fi
  mkdir -p "$CACHE_ROOT"
  # Same lock as scripts/control-plane.sh build: one Go build of Kubernetes at a time.
  exec 9>"$CACHE_ROOT/.build.lock"
  flock 9
  if have_test_binary; then echo "$SP_CACHE"; return 0; fi
  BUILD_WORK="$(mktemp -d "$CACHE_ROOT/build.XXXXXX")"
  trap 'rm -rf "${BUILD_WORK:-}"' EXIT
  local work="$BUILD_WORK" src
  src="$("$ROOT/scripts/control-plane.sh" fetch-source "$work")"
  [[ -d "$src/test/integration/scheduler_perf/config" ]] || die "no scheduler_perf in $src"
  patch_harness "$src"
  log "building scheduler_perf.test v$K8S_VERSION (GOPATH mode, ~10 min on 2 cores)"
  local start=$SECONDS
  (
    cd "$src"
    export GOPATH="$src/.go" CGO_ENABLED=0 GO111MODULE=off GOFLAGS="" GOCACHE="$work/gocache"
    mkdir -p .go/src/k8s.io
    ln -sfn ../../.. .go/src/k8s.io/kubernetes
    cd .go/src/k8s.io/kubernetes
    # The OpenAPI definitions kube-apiserver compiles in are generated, not in the source.
    make generated_files GOFLAGS="" KUBE_VERBOSE=0 >&2
    go test -c -o "$work/scheduler_perf.test" ./test/integration/scheduler_perf >&2
  ) || die "scheduler_perf build failed (see the output above)"
  rm -rf "$SP_CACHE.tmp"
  mkdir -p "$SP_CACHE.tmp"
  cp "$work/scheduler_perf.test" "$SP_CACHE.tmp/"
  cp -r "$src/test/integration/scheduler_perf/config" "$SP_CACHE.tmp/config"
  build_info >"$SP_CACHE.tmp/BUILD-INFO"
  rm -rf "$SP_CACHE" && mv "$SP_CACHE.tmp" "$SP_CACHE"
  log "built in $((SECONDS - start)) s; cached in $SP_CACHE"
  echo "$SP_CACHE"
}

# Prints "Case/Workload" for every workload of CONFIG (upstream's performance-config.yaml
# layout: a list of cases, each with `name`, `workloadTemplate` and `workloads[].name`) whose
# workload name starts with "<NODES>Nodes" (NODES=all: any) and whose full name matches REGEX.
list_workloads() {  # CONFIG NODES REGEX
  local config=$1 nodes=$2 regex=$3
  [[ -f "$config" ]] || die "$config: no such file"
  local all
  all="$(awk -v f="$config" '
    function flush() { if (c != "") for (i = 1; i <= n; i++) print c "/" w[i]; n = 0 }
    /^- name:/ { flush(); c = $3; inw = 0; next }
    /^[^ #-]/ && !/^- / { next }
    /^  workloads:/ { inw = 1; next }
    /^  [a-zA-Z]/ { inw = 0 }
    inw && /^  - name:/ { w[++n] = $3 }
    END { flush() }' "$config")"
  [[ -n "$all" ]] || die "$config: no cases with workloads found (expected upstream's performance-config.yaml layout)"
  local name
  while IFS= read -r name; do
    local w=${name#*/}
    if [[ "$nodes" != all && "$w" != "${nodes}Nodes" && "$w" != "${nodes}Nodes/"* ]]; then continue; fi
    if [[ -n "$regex" ]] && ! grep -Eq -- "$regex" <<<"$name"; then continue; fi
    echo "$name"
  done <<<"$all"
}

free_port() {
  python3 - <<'EOF' 2>/dev/null || shuf -i 20000-60000 -n 1
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
EOF
}

# Directory of one workload's logs and JSON inside the results dir.
workload_dir() { echo "$1/${2//\//--}"; }  # RESULTS NAME

# -test.bench pattern selecting exactly Case/Workload: Go splits the pattern at '/' and
# matches each level's regexp against that level of the sub-benchmark name.
bench_pattern() {
  local p="^BenchmarkPerfScheduling\$" part
  local IFS=/
  for part in $1; do p+="/^${part}\$"; done
  echo "$p"
}

# Workloads that v1.20.2's BenchmarkPerfScheduling measures but cannot finish: prints the
# namespace its final barrier waits for in vain, or nothing. Unschedulable: runWorkload's last
# waitUntilPodsScheduled also waits for the skipWaitToCompletion namespace (op 1), whose
# large-CPU pods fit no node, gives up after 10 minutes with b.Fatal and writes no dataItems.
# The measured op has finished by then, and its throughput collector has logged every 1 s
# sample ("N pods scheduled", util.go), so those samples are read from the log instead.
upstream_stuck_namespace() {  # NAME
  case "$1" in
    Unschedulable/*) echo namespace-1 ;;
  esac
}

# SchedulingThroughput as upstream's throughputCollector.collect() computes it (util.go):
# samples = pods scheduled in the measured namespace per 1 s tick (differences of the
# cumulative counts it logs, from 0); Average = mean; PercN = sorted[ceil(len*N/100) - 1].
# Reads the benchmark log on stdin, writes a dataItems file (the format of
# dataItems2JSONFile) with one SchedulingThroughput item named "BenchmarkPerfScheduling/NAME/
# from-log" to FILE. Fails when the log has no sample.
throughput_from_log() {  # NAME FILE
  local samples
  samples="$(sed -n 's/^I[0-9. :]* *[0-9]* util\.go:[0-9]*\] \([0-9][0-9]*\) pods scheduled$/\1/p' |
    awk '{ print $1 - prev; prev = $1 }')"
  [[ -n "$samples" ]] || return 1
  sort -n <<<"$samples" | jq -s --arg n "BenchmarkPerfScheduling/$1/from-log" '
    def perc(p): .[((length * p / 100) | ceil) - 1];
    {version: "v1", dataItems: [{data: {Average: (add / length), Perc50: perc(50),
      Perc90: perc(90), Perc99: perc(99)}, unit: "pods/s",
      labels: {Metric: "SchedulingThroughput", Name: $n}}]}' >"$2"
}

# The upstream time limit for workload NAME: the first --upstream-timeout whose REGEX matches
# it, else --timeout.
upstream_limit() {  # NAME
  local spec
  for spec in "${UPSTREAM_TIMEOUTS[@]}"; do
    if grep -qE -- "${spec%%=*}" <<<"$1"; then echo "${spec#*=}"; return; fi
  done
  echo "$TIMEOUT"
}

run_upstream() {  # NAME DIR
  local name=$1 dir=$2 port rc=0 try stuck pid limit
  limit="$(upstream_limit "$name")"
  rm -rf "$dir/upstream" && mkdir -p "$dir/upstream"
  stuck="$(upstream_stuck_namespace "$name")"
  for try in 1 2 3; do
    rc=0
    mkdir -p "$dir/upstream/tmp"
    port=$(free_port)
    log "$name: upstream kube-scheduler v$K8S_VERSION (log: $dir/upstream/log)"
    # The integration framework starts its own etcd (etcd from PATH, data in TMPDIR) when
    # nothing answers at KUBE_INTEGRATION_ETCD_URL; a free port makes sure it does.
    # -test.benchtime 1x: one run (the benchmark ignores b.N); -test.run '^$': no tests.
    # setsid: the benchmark and its etcd form one process group, ended together below.
    (cd "$SP_CACHE" &&
     KUBE_INTEGRATION_ETCD_URL="http://127.0.0.1:$port" TMPDIR="$dir/upstream/tmp" \
     exec setsid timeout "$limit" nice -n "$NICE" ./scheduler_perf.test -test.run '^$' \
       -test.bench "$(bench_pattern "$name")" -test.benchtime 1x -test.timeout 0 \
       -data-items-dir "$dir/upstream" >"$dir/upstream/log" 2>&1) &
    pid=$!
    if [[ -n "$stuck" ]]; then
      # Stop it once its final barrier starts waiting for the namespace it never gets.
      while kill -0 "$pid" 2>/dev/null; do
        if grep -qs "BenchmarkPerfScheduling/$name: namespace $stuck: got" "$dir/upstream/log"; then
          kill -TERM -- "-$pid" 2>/dev/null || true
          break
        fi
        sleep 2
      done
    fi
    wait "$pid" || rc=$?
    kill -KILL -- "-$pid" 2>/dev/null || true  # an etcd left behind by a killed benchmark
    rm -rf "$dir/upstream/tmp"
    if [[ -n "$stuck" ]] && grep -q "namespace $stuck: got" "$dir/upstream/log"; then
      if throughput_from_log "$name" "$dir/upstream/BenchmarkPerfScheduling_from-log.json" \
          <"$dir/upstream/log"; then
        echo "$stuck" >"$dir/upstream/from-log"
        rc=0
      fi
    fi
    echo "$rc" >"$dir/upstream/rc"
    echo "$limit" >"$dir/upstream/limit"
    ((rc == 0)) && return
    log "$name: upstream exited $rc (see $dir/upstream/log)"
    # The test's pod creator gives up on the API server's 429 (max requests in flight),
    # which a loaded machine can hit while it creates thousands of pods: try again.
    grep -q "too many requests" "$dir/upstream/log" && ((rc != 124 && try < 3)) || return 0
    mv "$dir/upstream/log" "$dir/upstream/log.$try"
    rm -f "$dir/upstream"/BenchmarkPerfScheduling_*.json
    echo "$try" >"$dir/upstream/retries"
    log "$name: upstream failed on HTTP 429 (too many requests); retrying"
  done
}

run_phalanx() {  # NAME DIR
  local name=$1 dir=$2 rc=0
  rm -rf "$dir/phalanx" && mkdir -p "$dir/phalanx"
  log "$name: phalanx bench (log: $dir/phalanx/log)"
  (cd "$SP_CACHE" &&
   timeout "$TIMEOUT" nice -n "$NICE" "$PHALANX" bench "$SP_CACHE/config/performance-config.yaml" \
     --workload "$name" --json "$dir/phalanx/result.json" >"$dir/phalanx/log" 2>&1) || rc=$?
  echo "$rc" >"$dir/phalanx/rc"
  echo "$TIMEOUT" >"$dir/phalanx/limit"
  ((rc == 0)) || log "$name: phalanx exited $rc (see $dir/phalanx/log)"
}

# Upstream's SchedulingThroughput for NAME from the dataItems file in DIR/upstream
# (util.go dataItems2JSONFile: {"version":"v1","dataItems":[{"data":{"Average":..,"Perc50":..,
# "Perc90":..,"Perc99":..},"unit":"pods/s","labels":{"Metric":"SchedulingThroughput",
# "Name":"BenchmarkPerfScheduling/<Case>/<Workload>/<namespace>"}}, ...]}).
# Prints "avg p50 p90 p99", or "! reason" when there is none.
upstream_figures() {  # DIR NAME
  local d="$1/upstream" name=$2
  [[ -d "$d" ]] || { echo "! not run"; return; }
  local files=("$d"/BenchmarkPerfScheduling_*.json) rc why
  rc=$(cat "$d/rc" 2>/dev/null || echo "?")
  # The benchmark's own failure message (b.Fatalf in runWorkload), e.g. "op 1: Error creating
  # pod: ... too many requests ...".
  why="$(sed -n 's/^ *scheduler_perf_test\.go:[0-9]*: //p' "$d/log" 2>/dev/null | head -1 | cut -c1-200)"
  if [[ ! -f "${files[0]}" ]]; then
    local stop
    if [[ "$rc" == 124 ]]; then stop="timed out after $(cat "$d/limit" 2>/dev/null)"; else stop="failed (exit $rc): ${why:-no dataItems file}"; fi
    # DIR/upstream/stopped: why a person stopped the run (kill), in place of the exit code.
    if [[ -f "$d/stopped" ]]; then stop="$(cat "$d/stopped")"; fi
    # A run stopped during its measured op: its throughput collector's 1 s samples so far.
    local tmp; tmp="$(mktemp)"
    if [[ -f "$d/log" ]] && throughput_from_log "$name" "$tmp" <"$d/log" 2>/dev/null; then
      local got want
      got="$(sed -n 's/.* util\.go:[0-9]*\] \([0-9]*\) pods scheduled$/\1/p' "$d/log" | tail -1)"
      want="$(sed -n 's/.*: got [0-9]* pods, want \([0-9]*\)$/\1/p' "$d/log" | tail -1)"
      jq -r --arg note "$stop with ${got:-?} of ${want:-?} measured pods scheduled: the figures are its own 1 s samples up to then" \
        '.dataItems[0].data | "\(.Average) \(.Perc50) \(.Perc90) \(.Perc99) # \($note)"' "$tmp"
      rm -f "$tmp"
      return
    fi
    rm -f "$tmp"
    echo "! $stop"
    return
  fi
  local out
  out="$(jq -r --arg n "BenchmarkPerfScheduling/$name/" --arg why "failed (exit $rc): ${why:-no SchedulingThroughput}" '
    [(.dataItems // [])[] | select(.labels.Metric == "SchedulingThroughput"
                           and (.labels.Name | startswith($n)))] |
    if length == 0 then "! \($why)"
    else .[0].data | "\(.Average) \(.Perc50) \(.Perc90) \(.Perc99)" end' "${files[0]}" 2>&1)" ||
    die "${files[0]}: not a scheduler_perf dataItems JSON file: $out"
  echo "$out"
}

# Phalanx's figures for NAME from DIR/phalanx/result.json (`phalanx bench --json`:
# {"results":[{"name":..,"measured_pods":N,"seconds":S,
# "throughput":{"average":..,"p50":..,"p90":..,"p99":..},"peak_rss_kib":K}]}).
# Prints "avg p50 p90 p99", or "! reason".
phalanx_figures() {  # DIR NAME
  local d="$1/phalanx" name=$2 f="$1/phalanx/result.json"
  [[ -d "$d" ]] || { echo "! not run"; return; }
  if [[ ! -f "$f" ]]; then
    local rc; rc=$(cat "$d/rc" 2>/dev/null || echo "?")
    if [[ "$rc" == 124 ]]; then echo "! timed out after $(cat "$d/limit" 2>/dev/null)"; else echo "! failed (exit $rc): $(tail -1 "$d/log" 2>/dev/null | cut -c1-200)"; fi
    return
  fi
  local out
  local why rc
  rc=$(cat "$d/rc" 2>/dev/null || echo "?")
  why="$(sed -n 's/^phalanx: error: //p' "$d/log" 2>/dev/null | head -1 | cut -c1-300)"
  why="failed (exit $rc): ${why:-no result named $name}"
  out="$(jq -r --arg n "$name" --arg why "$why" '
    [.results[] | select(.name == $n)] |
    if length == 0 then "! \($why)"
    else .[0].throughput | "\(.average) \(.p50) \(.p90) \(.p99)" end' "$f" 2>&1)" ||
    die "$f: not a phalanx bench JSON file: $out"
  echo "$out"
}

fmt_num() { awk -v x="$1" 'BEGIN { if (x == "null" || x == "") print "—"; else if (x >= 100) printf "%.0f", x; else if (x >= 1 || x == 0) printf "%.1f", x; else printf "%.2f", x }'; }

# The Markdown table for the workloads listed in RESULTS/workloads.txt; reasons for missing
# figures go into numbered notes under it.
render_table() {  # RESULTS
  local results=$1
  [[ -f "$results/workloads.txt" ]] || die "$results/workloads.txt: missing (not a results dir)"
  local notes=() name dir up ph
  echo "| Workload | kube-scheduler v$K8S_VERSION pods/s: avg | p50 | p99 | Phalanx pods/s: avg | p50 | p99 | Phalanx / upstream (avg) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  while IFS= read -r name; do
    [[ -n "$name" ]] || continue
    dir="$(workload_dir "$results" "$name")"
    up="$(upstream_figures "$dir" "$name")"
    ph="$(phalanx_figures "$dir" "$name")"
    local row="| $name |" ua="" pa="" partial=0
    local side fig label
    for side in up ph; do
      fig=${!side}
      if [[ $side == up ]]; then label=upstream; else label=Phalanx; fi
      if [[ "$fig" == "!"* ]]; then
        notes+=("$name, $label: ${fig#! }")
        row+=" see [${#notes[@]}] | — | — |"
      else
        local a p50 p99 mark=""
        if [[ "$fig" == *" # "* ]]; then
          partial=1  # a run stopped mid-op: its rate over the part it measured
          notes+=("$name, $label: ${fig#* # }")
          mark+=" [${#notes[@]}]"
          fig=${fig%% # *}
        fi
        read -r a p50 _ p99 <<<"$fig"
        if [[ $side == up && -f "$dir/upstream/from-log" ]]; then
          notes+=("$name, upstream: v$K8S_VERSION's benchmark measures this workload but never finishes it (its final barrier waits for the unschedulable pods in $(cat "$dir/upstream/from-log"), then fails after 10 min without writing results): the figures are its own 1 s throughput samples from its log, and the run was stopped at that barrier")
          mark+=" [${#notes[@]}]"
        fi
        if [[ $side == up && -f "$dir/upstream/retries" ]]; then
          notes+=("$name, upstream: passed on try $(($(cat "$dir/upstream/retries") + 1)); the earlier tries failed on the API server's HTTP 429 while creating pods")
          mark+=" [${#notes[@]}]"
        fi
        row+=" $(fmt_num "$a")$mark | $(fmt_num "$p50") | $(fmt_num "$p99") |"
        if [[ $side == up ]]; then ua=$a; else pa=$a; fi
      fi
    done
    if ((partial)) && [[ -n "$ua" && -n "$pa" ]]; then
      # Rates, not totals: pods/s over the samples each side has.
      row+=" $(awk -v u="$ua" -v p="$pa" 'BEGIN { if (u > 0) printf "%.0f× (partial)", p / u; else print "— (partial)" }') |"
    elif ((partial)); then
      row+=" — (partial) |"
    elif [[ -n "$ua" && -n "$pa" ]]; then
      row+=" $(awk -v u="$ua" -v p="$pa" 'BEGIN { if (u > 0) printf "%.1f×", p / u; else print "—" }') |"
    else
      row+=" — |"
    fi
    echo "$row"
  done <"$results/workloads.txt"
  if ((${#notes[@]})); then
    echo
    local i
    for i in "${!notes[@]}"; do echo "[$((i + 1))] ${notes[$i]}"; echo; done | sed '$d'
  fi
}

# Machine, date and commit, recorded when the run starts.
machine_info() {
  local cpu mem
  cpu="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
  mem="$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "- Machine: $(nproc) CPUs ($cpu), $mem RAM, $(uname -sr)"
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- Commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
       "(phalanx binary: ${PHALANX#"$ROOT"/}); upstream: Debian's kubernetes" \
       "$(dpkg-query -W -f='${Version}' kubernetes-client 2>/dev/null || echo "$K8S_VERSION") source," \
       "$(go version | awk '{ print $3 }')"
}

render_section() {  # RESULTS
  local results=$1
  echo "## $SECTION_TITLE"
  echo
  cat <<'EOF'
Upstream's own benchmark, `BenchmarkPerfScheduling` from
`test/integration/scheduler_perf` (built from Debian's `kubernetes` source package), and
`phalanx bench` run on the same `performance-config.yaml` workloads and pod/node templates,
back to back for each workload on the same machine by `scripts/scheduler-perf.sh`.
Throughput is pods scheduled per second during the measured `createPods` op, sampled every
second (upstream's `SchedulingThroughput`: average and percentiles of those samples).
Upstream schedules through a real kube-apiserver and etcd in the test process (pods are
created, watched and bound through the API); Phalanx's figures are in-process (its store
stands in for the API server), so the ratio is the speed-up of the scheduling loop plus the
API round trips that the in-process run does not make.
EOF
  echo
  cat <<EOF
Upstream's binary is its v$K8S_VERSION test code as Debian ships it, with one change to the
harness (not the scheduler): pod and node creation retry HTTP 429 and timeouts, as upstream
before and after v1.20 does (\`IsRetryableAPIError\`); without it most 5000-node workloads
fail here while creating their init pods, because the test's kube-apiserver sheds load.
EOF
  if grep -q "^MixedSchedulingBasePod/" "$results/workloads.txt"; then
    echo
    cat <<'EOF'
MixedSchedulingBasePod is not the same measurement on both sides: upstream's v1.20 runner
waits for each `createPods` op by counting the scheduled pods of its namespace, and all of
its setup ops share `sched-setup`, so every wait after the first is already satisfied; its
required-affinity pods (topology key `failure-domain.beta.kubernetes.io/zone`, which these
nodes lack) stay pending and the other 6,000 setup pods are still being scheduled while the
1,000 measured pods are timed.
EOF
  fi
  echo
  cat "$results/machine.md"
  echo
  render_table "$results"
  # Phalanx's windows (phalanx bench: run time / 50, clamped to [1 ms, 1 s]).
  local windows
  windows="$(cat "$results"/*/phalanx/result.json 2>/dev/null |
    jq -rs '[.[].results[] | select(.skipped | not) | .throughput_window_ms // empty] |
            if length == 0 then "" else "\(min * 10 | round / 10)–\(max * 10 | round / 10)" end' 2>/dev/null || true)"
  if [[ -n "$windows" ]]; then
    echo
    echo "Percentiles are over sampling windows: upstream counts pods bound in each 1 s;" \
         "Phalanx's measured op is far shorter (milliseconds to seconds), so it samples every $windows ms" \
         "(its run time / 50). Such short windows make its p50/p99 spread much wider (a window" \
         "without a bind counts 0): compare the averages, which are pods / time on both sides."
  fi
  echo
  echo "Reproduce: \`scripts/scheduler-perf.sh --docs\` (options: \`--workloads REGEX\`," \
       "\`--nodes 500|5000|all\`; \`--help\`). Raw logs and JSON of this run: \`$results\`" \
       "(not kept)."
}

# Replaces the marked section of FILE with stdin (appends it when the markers are absent;
# creates FILE when missing). Other sections are left byte for byte.
splice_section() {  # FILE
  local file=$1 body tmp
  body="$(cat)"
  if [[ ! -f "$file" ]]; then
    printf '# Performance\n\n' >"$file"
  fi
  tmp="$(mktemp "$file.XXXXXX")"
  if grep -qF "$BEGIN_MARK" "$file"; then
    grep -qF "$END_MARK" "$file" || die "$file: $BEGIN_MARK without $END_MARK"
    BODY="$body" awk -v b="$BEGIN_MARK" -v e="$END_MARK" '
      $0 == b { print; print ENVIRON["BODY"]; skip = 1; next }
      $0 == e { skip = 0 }
      !skip { print }' "$file" >"$tmp"
  else
    { cat "$file"; [[ -z "$(tail -c1 "$file")" ]] || echo; echo
      echo "$BEGIN_MARK"; echo "$body"; echo "$END_MARK"; } >"$tmp"
  fi
  mv "$tmp" "$file"
}

# ---- the 1.36 scheduler_perf files (Phalanx only: no 1.36 upstream build here) ----

V136_BEGIN="<!-- scheduler-perf-136:begin -->"
V136_END="<!-- scheduler-perf-136:end -->"

v136_dir() { echo "${PHALANX_SCHEDULER_PERF_136:-$ROOT/../shared/upstream/scheduler_perf-v1.36}"; }

# v136_table DIR: the Markdown table of every results JSON in DIR (one per file): per
# workload the figure its threshold is compared with (the thresholdMetricSelector's data
# bucket of SchedulingThroughput, pods/s), the file's threshold, and pass / below (above for
# an expectLower threshold), as upstream's scheduler_perf applyThreshold decides.
v136_table() {
  local dir=$1 f
  echo "| file | workload | measured pods | seconds | avg pods/s | figure (pods/s) | threshold (pods/s) | verdict |"
  echo "|---|---|---|---|---|---|---|---|"
  for f in "$dir"/*.json; do
    [[ -e "$f" ]] || continue
    local area
    area="$(basename "$f" .json)"
    jq -r --arg area "$area" '.results[] |
      [$area, .name,
       (if .error != "" then "-" else (.measured_pods | tostring) end),
       (if .error != "" then "-" else (.seconds * 1000 | round / 1000 | tostring) end),
       (if .error != "" then "-" else (.throughput.average | round | tostring) end),
       (if .threshold_compared == true
        then (.threshold_figure * 10 | round / 10 | tostring) + " (" +
             (.threshold_metric | split(" ") | .[1] // "Average") + ")"
        else "-" end),
       (if .threshold > 0 then (.threshold | tostring) else "-" end),
       (if .error != "" then "cannot run: " + (.error | gsub("\\|"; "/") | gsub("\n"; " "))
        elif .threshold > 0 and .threshold_compared == true
        then (if .threshold_passed then "pass"
              elif (.threshold_verdict | startswith("ABOVE")) then "above"
              else "below" end)
        elif .threshold > 0 then .threshold_verdict else "" end)]
      | "| " + join(" | ") + " |"' "$f"
  done
}

# v136_summary DIR: counts of workloads run, thresholds met, workloads that cannot run.
v136_summary() {
  local dir=$1
  cat "$dir"/*.json | jq -s -r '[.[].results[]] as $r |
    "\($r | length) workloads: \([$r[] | select(.error == "")] | length) ran, " +
    "\([$r[] | select(.error != "")] | length) cannot run; thresholds: " +
    "\([$r[] | select(.threshold > 0 and .threshold_compared == true)] | length) compared, " +
    "\([$r[] | select(.threshold > 0 and .threshold_compared == true and .threshold_passed)] | length) met, " +
    "\([$r[] | select(.threshold > 0 and .threshold_compared == true and (.threshold_passed | not))] | length) missed, " +
    "\([$r[] | select(.threshold > 0 and .error != "")] | length) not run"'
}

cmd_v136() {
  local label="" files="" out="" docs=false results="" nice_n=10
  PHALANX="${PHALANX:-$ROOT/build/phalanx}"
  while (($#)); do
    case "$1" in
      --label) label=${2:?}; shift 2 ;;
      --files) files=${2:?}; shift 2 ;;
      --out) out=${2:?}; shift 2 ;;
      --docs) docs=true; shift ;;
      --results-dir) results=${2:?}; shift 2 ;;
      --phalanx) PHALANX=${2:?}; shift 2 ;;
      --nice) nice_n=${2:?}; shift 2 ;;
      *) die "v136: unknown option $1 (see --help)" ;;
    esac
  done
  local src
  src="$(v136_dir)"
  [[ -d "$src" ]] || die "v136: $src not found (the 1.36 scheduler_perf files, ../shared/upstream)"
  [[ -x "$PHALANX" ]] || die "v136: $PHALANX not found (scripts/build.sh)"
  results="${results:-$(mktemp -d /tmp/phalanx-perf-136.XXXXXX)}"
  mkdir -p "$results"
  local f
  while IFS= read -r f; do
    local rel area
    rel="${f#"$src"/}"
    area="$(dirname "$rel" | tr / _)"
    [[ -z "$files" ]] || grep -qE "$files" <<<"$rel" || continue
    log "v136: $rel"
    local args=(bench "$f" --keep-going --json "$results/$area.json")
    [[ -z "$label" ]] || args+=(--label "$label")
    nice -n "$nice_n" "$PHALANX" "${args[@]}" >"$results/$area.txt" 2>"$results/$area.log" ||
      log "v136: $rel: phalanx bench failed or a figure missed its threshold (see $results/$area.log)"
  done < <(find "$src" -name performance-config.yaml | sort)
  local section
  section="$(v136_section "$results")"
  echo "$section"
  [[ -z "$out" ]] || echo "$section" >"$out"
  if $docs; then
    BEGIN_MARK="$V136_BEGIN" END_MARK="$V136_END" splice_section "$ROOT/docs/performance.md" <<<"$section"
  fi
  log "v136: results in $results"
}

v136_section() {  # DIR
  local dir=$1
  echo "### Upstream's 1.36 scheduler_perf files, unchanged"
  echo
  echo "\`scripts/scheduler-perf.sh v136\` on $(lscpu | sed -n 's/^Model name: *//p' | head -1)," \
       "$(nproc) cores, $(date -u +%Y-%m-%d), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')." \
       "Thresholds are the files' own (the least SchedulingThroughput average upstream's CI" \
       "accepts, pods/s); the machine is shared, so figures vary between runs."
  echo
  echo "$(v136_summary "$dir")."
  echo
  v136_table "$dir"
}

cmd_run() {
  local regex="" nodes=5000 out="" docs=0 results="" only=""
  PHALANX="$ROOT/build/phalanx" NICE=10
  while (($#)); do
    case "$1" in
      --workloads) regex=${2:?--workloads needs a REGEX}; shift 2 ;;
      --nodes) nodes=${2:?--nodes needs 500, 5000 or all}; shift 2 ;;
      --out) out=${2:?--out needs a FILE}; shift 2 ;;
      --docs) docs=1; shift ;;
      --results-dir) results=${2:?--results-dir needs a DIR}; shift 2 ;;
      --phalanx) PHALANX=${2:?--phalanx needs a PATH}; shift 2 ;;
      --only) only=${2:?--only needs upstream or phalanx}; shift 2 ;;
      --nice) NICE=${2:?--nice needs N}; shift 2 ;;
      --timeout) TIMEOUT=${2:?--timeout needs a duration}; shift 2 ;;
      --upstream-timeout)
        [[ "${2:-}" == ?*=?* ]] || die "--upstream-timeout needs REGEX=DURATION, e.g. 'Preemption=10m'"
        UPSTREAM_TIMEOUTS+=("$2"); shift 2 ;;
      *) die "unknown option $1 (see --help)" ;;
    esac
  done
  [[ "$nodes" =~ ^([0-9]+|all)$ ]] || die "--nodes $nodes: expected a node count (500, 5000) or all"
  [[ -z "$only" || "$only" == upstream || "$only" == phalanx ]] || die "--only $only: expected upstream or phalanx"
  command -v jq >/dev/null || die "jq not found: run scripts/install-deps.sh --control-plane"
  if [[ "$only" != upstream ]]; then
    [[ -x "$PHALANX" ]] || die "$PHALANX: no phalanx binary (build it, or pass --phalanx PATH)"
    PHALANX="$(cd "$(dirname "$PHALANX")" && pwd)/$(basename "$PHALANX")"
  fi
  if [[ "$only" != phalanx ]]; then
    cmd_build >/dev/null
    command -v etcd >/dev/null || die "etcd not found: run scripts/install-deps.sh --control-plane"
  elif ! have_test_binary; then
    cmd_build >/dev/null  # Phalanx reads the same config/ from the cache
  fi
  local names
  names="$(list_workloads "$SP_CACHE/config/performance-config.yaml" "$nodes" "$regex")"
  [[ -n "$names" ]] || die "no workload matches --nodes $nodes --workloads '$regex'"
  if [[ -z "$results" ]]; then results="$(mktemp -d /tmp/scheduler-perf.XXXXXX)"; fi
  mkdir -p "$results"
  results="$(cd "$results" && pwd)"
  echo "$names" >"$results/workloads.txt"
  machine_info >"$results/machine.md"
  log "$(wc -l <<<"$names") workloads; results in $results"
  local name dir
  while IFS= read -r name; do
    dir="$(workload_dir "$results" "$name")"
    mkdir -p "$dir"
    [[ "$only" == phalanx ]] || run_upstream "$name" "$dir"
    [[ "$only" == upstream ]] || run_phalanx "$name" "$dir"
  done <<<"$names"
  echo "- Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared; both sides of a row ran back to back)" >>"$results/machine.md"
  render_section "$results" >"$results/section.md"
  render_table "$results"
  if [[ -n "$out" ]]; then cp "$results/section.md" "$out"; log "wrote $out"; fi
  if ((docs)); then
    splice_section "$ROOT/docs/performance.md" <"$results/section.md"
    log "updated docs/performance.md ($SECTION_TITLE)"
  fi
}

main() {
case "${1:-}" in
  -h|--help|help) usage ;;
  build) cmd_build ;;
  list)
    shift
    config="$SP_CACHE/config/performance-config.yaml" nodes=5000 regex=""
    while (($#)); do
      case "$1" in
        --nodes) nodes=${2:?}; shift 2 ;;
        --workloads) regex=${2:?}; shift 2 ;;
        --config) config=${2:?}; shift 2 ;;
        *) die "unknown option $1 (see --help)" ;;
      esac
    done
    list_workloads "$config" "$nodes" "$regex" ;;
  table) render_table "${2:?table needs a results dir}" ;;
  v136) shift; cmd_v136 "$@" ;;
  v136-table) v136_section "${2:?v136-table needs a results dir}" ;;
  section) PHALANX="${PHALANX:-$ROOT/build/phalanx}"; render_section "${2:?section needs a results dir}" ;;
  splice) splice_section "${2:?splice needs a FILE}" ;;
  patch-harness) patch_harness "${2:?patch-harness needs the source dir}" ;;
  throughput-from-log) throughput_from_log "${2:?NAME}" "${3:?FILE}" || die "no throughput samples in the log" ;;
  *) cmd_run "$@" ;;
esac
}
# One line, parsed whole before it runs: editing this file during a long run cannot break it.
main "$@"; exit $?
