#!/usr/bin/env bash
# Fast self-check of scripts/scheduler-perf.sh (no Kubernetes build, no benchmark run):
# --help, workload selection from a performance-config.yaml excerpt, the table rendered from
# a results dir of sample upstream dataItems and `phalanx bench --json` files, clear errors
# on bad JSON, and splicing the section into docs/performance.md without touching the rest.
# Usage: test/perf/scheduler_perf_test.sh   (exit 0 when every check passes)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
SCRIPT="$HERE/../../scripts/scheduler-perf.sh"
DATA="$HERE/testdata"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0

check() {  # DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what" >&2; failed=$((failed + 1)); fi
}
contains() { grep -qF -- "$2" <<<"$1" || { echo "  missing: $2" >&2; echo "$1" | sed 's/^/  | /' >&2; return 1; }; }
lacks() { ! grep -qF -- "$2" <<<"$1" || { echo "  unexpected: $2" >&2; return 1; }; }

# --help prints the usage header and exits 0.
help="$("$SCRIPT" --help)"
check "--help shows usage" contains "$help" "scripts/scheduler-perf.sh build"
check "--help lists --workloads" contains "$help" "--workloads REGEX"

# Workload selection: every case (PersistentVolume ones included), node filter, regex filter.
list() { "$SCRIPT" list --config "$DATA/performance-config.yaml" "$@"; }
check "5000-node workloads" \
  [ "$(list | tr '\n' ' ')" == "SchedulingBasic/5000Nodes SchedulingInTreePVs/5000Nodes Preemption/5000Nodes Unschedulable/5000Nodes/200InitPods Unschedulable/5000Nodes/2000InitPods " ]
check "500-node workloads" \
  [ "$(list --nodes 500 | tr '\n' ' ')" == "SchedulingBasic/500Nodes SchedulingInTreePVs/500Nodes Preemption/500Nodes Unschedulable/500Nodes/200InitPods " ]
check "--workloads regex" [ "$(list --nodes all --workloads 'Basic|Preemption/500N' | tr '\n' ' ')" == \
  "SchedulingBasic/500Nodes SchedulingBasic/5000Nodes Preemption/500Nodes " ]
check "PV case listed" contains "$(list --nodes all --workloads PVs)" "SchedulingInTreePVs/500Nodes"
if out="$("$SCRIPT" list --config "$TMP/none.yaml" 2>&1)"; then
  check "missing config fails" false
else
  check "missing config names the file" contains "$out" "$TMP/none.yaml: no such file"
fi

# Table from sample results: figures, ratio (Phalanx avg / upstream avg), notes for missing.
table="$("$SCRIPT" table "$DATA/results")"
check "SchedulingBasic row, retry noted" contains "$table" \
  "| SchedulingBasic/5000Nodes | 125 [1] | 127 | 150 | 2508 | 2600 | 2750 | 20.0× |"
check "retry note" contains "$table" "[1] SchedulingBasic/5000Nodes, upstream: passed on try 2;"
check "failed upstream row" contains "$table" \
  "| SchedulingPodAffinity/5000Nodes | see [2] | — | — | 800 | 810 | 900 | — |"
check "failure reason from the benchmark log" contains "$table" \
  "[2] SchedulingPodAffinity/5000Nodes, upstream: failed (exit 1): op 1: Error creating pod: the server has received too many requests"
# Preemption's upstream run timed out mid-op: figures from the 1 s samples logged so far
# (counts 0, 2, 3 -> samples 0, 2, 1).
check "partial run: figures from the log" contains "$table" "| Preemption/5000Nodes | 1.0 [3] | 1.0 | 2.0 | see [4] | — | — | — (partial) |"
check "timeout note" contains "$table" \
  "[3] Preemption/5000Nodes, upstream: timed out after 45m with 3 of 5000 measured pods scheduled: the figures are its own 1 s samples up to then"
check "phalanx failure note" contains "$table" "[4] Preemption/5000Nodes, Phalanx: failed (exit 1): phalanx: error: fixture: only 3 of 5000 pods scheduled"
check "workload name with '/', figures from the log" contains "$table" \
  "| Unschedulable/5000Nodes/200InitPods | 25.0 [5] | 10.0 | 60.0 | 2456 | 2000 | 2200 | 98.2× |"
check "from-log note" contains "$table" "[5] Unschedulable/5000Nodes/200InitPods, upstream: v1.20.2's benchmark measures this workload but never finishes it"
check "histogram items are not throughput" lacks "$table" "6.2"

# Upstream's SchedulingThroughput from the 1 s samples its collector logs (counts 0, 10, 40,
# 100 -> samples 0, 10, 30, 60: mean 25; util.go percentiles sorted[ceil(n*p/100)-1]).
"$SCRIPT" throughput-from-log Unschedulable/5000Nodes/200InitPods "$TMP/fromlog.json" \
  <"$DATA/upstream-unschedulable.log"
check "throughput from log" [ "$(jq -c '.dataItems[0].data' "$TMP/fromlog.json")" == \
  '{"Average":25,"Perc50":10,"Perc90":60,"Perc99":60}' ]
check "from-log item named for the workload" [ "$(jq -r '.dataItems[0].labels.Name' "$TMP/fromlog.json")" == \
  "BenchmarkPerfScheduling/Unschedulable/5000Nodes/200InitPods/from-log" ]
if out="$(echo "no samples" | "$SCRIPT" throughput-from-log X "$TMP/none.json" 2>&1)"; then
  check "log without samples fails" false
else
  check "log without samples is an error" contains "$out" "no throughput samples"
fi

# Bad JSON: a clear error naming the file, non-zero exit.
cp -r "$DATA/results" "$TMP/bad"
echo '{"results": [' >"$TMP/bad/SchedulingBasic--5000Nodes/phalanx/result.json"
if out="$("$SCRIPT" table "$TMP/bad" 2>&1)"; then
  check "malformed phalanx JSON fails" false
else
  check "malformed phalanx JSON names the file" contains "$out" "SchedulingBasic--5000Nodes/phalanx/result.json: not a phalanx bench JSON file"
fi
if out="$("$SCRIPT" table "$TMP/nowhere" 2>&1)"; then
  check "missing results dir fails" false
else
  check "missing results dir is named" contains "$out" "$TMP/nowhere/workloads.txt: missing"
fi

# Splicing the section: created when absent, other sections kept, replaced not duplicated.
doc="$TMP/performance.md"
printf 'v1\n' | "$SCRIPT" splice "$doc"
check "file created with the section" contains "$(cat "$doc")" $'<!-- scheduler-perf:begin -->\nv1\n<!-- scheduler-perf:end -->'
printf '# Performance\n\n## How to run\n\nkeep me\n\n<!-- scheduler-perf:begin -->\nold\nlines\n<!-- scheduler-perf:end -->\n\n## Memory and growth\n\nkeep me too\n' >"$doc"
printf 'new 1\nnew 2\n' | "$SCRIPT" splice "$doc"
printf 'new 1\nnew 2\n' | "$SCRIPT" splice "$doc"
expected=$'# Performance\n\n## How to run\n\nkeep me\n\n<!-- scheduler-perf:begin -->\nnew 1\nnew 2\n<!-- scheduler-perf:end -->\n\n## Memory and growth\n\nkeep me too'
check "splice replaces only the marked section" [ "$(cat "$doc")" == "$expected" ]
printf '# Performance\n\n## How to run\n\nkeep me\n' >"$doc"
printf 'appended\n' | "$SCRIPT" splice "$doc"
check "section appended when markers are absent" [ "$(cat "$doc")" == \
  $'# Performance\n\n## How to run\n\nkeep me\n\n<!-- scheduler-perf:begin -->\nappended\n<!-- scheduler-perf:end -->' ]

# The 1.36 table (v136-table) from made-up `phalanx bench --json` results (nothing is timed):
# each workload's figure against its threshold, pass or below, and one that cannot run.
mkdir -p "$TMP/v136"
cat >"$TMP/v136/misc.json" <<'EOF'
{"results": [
 {"name": "SchedulingBasic/5000Nodes_10000Pods", "measured_pods": 10000, "seconds": 40,
  "throughput": {"average": 250, "p50": 240, "p90": 260, "p95": 262, "p99": 270},
  "topic": "misc", "threshold": 270, "threshold_metric": "SchedulingThroughput Average",
  "threshold_compared": true, "threshold_figure": 250,
  "threshold_verdict": "BELOW: Average 250.0 <= threshold 270.0", "threshold_passed": false,
  "error": "", "notes": []},
 {"name": "SchedulingBasic/500Nodes", "measured_pods": 1000, "seconds": 1,
  "throughput": {"average": 1000, "p50": 990, "p90": 1010, "p95": 1011, "p99": 1020},
  "topic": "misc", "threshold": 270, "threshold_metric": "SchedulingThroughput Perc50",
  "threshold_compared": true, "threshold_figure": 990,
  "threshold_verdict": "pass: Perc50 990.0 > threshold 270.0", "threshold_passed": true,
  "error": "", "notes": []},
 {"name": "SchedulingWithX/5000Nodes", "measured_pods": 0, "seconds": 0,
  "throughput": {"average": 0, "p50": 0, "p90": 0, "p95": 0, "p99": 0},
  "topic": "misc", "threshold": 100, "threshold_metric": "SchedulingThroughput Average",
  "threshold_compared": false, "threshold_figure": 0, "threshold_verdict": "",
  "threshold_passed": false, "error": "op 1 (createAny): no such template", "notes": []}]}
EOF
v136="$("$SCRIPT" v136-table "$TMP/v136")"
check "v136: a figure below its threshold is a row saying below" contains "$v136" \
  "| misc | SchedulingBasic/5000Nodes_10000Pods | 10000 | 40 | 250 | 250 (Average) | 270 | below |"
check "v136: a figure above its threshold passes, with its data bucket" contains "$v136" \
  "| misc | SchedulingBasic/500Nodes | 1000 | 1 | 1000 | 990 (Perc50) | 270 | pass |"
check "v136: a workload that cannot run says why" contains "$v136" \
  "| misc | SchedulingWithX/5000Nodes | - | - | - | - | 100 | cannot run: op 1 (createAny): no such template |"
check "v136: the summary counts the miss" contains "$v136" \
  "3 workloads: 2 ran, 1 cannot run; thresholds: 2 compared, 1 met, 1 missed, 1 not run"

# Options are checked before anything runs.
if out="$("$SCRIPT" --nodes lots 2>&1)"; then check "bad --nodes fails" false
else check "bad --nodes is named" contains "$out" "--nodes lots: expected"; fi

echo "$passed passed, $failed failed"
((failed == 0))
