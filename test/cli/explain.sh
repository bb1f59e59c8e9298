#!/bin/sh
# `phalanx explain` on a pending gang: it names the blocking plugin per member
# and the smallest fix, and `phalanx simulate --add-nodes` with that fix binds the gang at
# its arrival (t=10 s) instead of when the filler job ends (t=600 s).
# Usage: explain.sh PHALANX SCENARIO WORKDIR
set -eu
P=$1 S=$2 W=$3
mkdir -p "$W"
out=$("$P" explain --gang ml/train --scenario "$S" --at 10 --json "$W/explain.json")
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
echo "$out" | grep -q '^gang ml/train at t=10s: minMember 2, 0 bound, 2 pending' || fail "header"
echo "$out" | grep -q 'ml/train-0: 1/4 node(s) feasible, would go to gpu-b' || fail "member 0"
echo "$out" | grep -q 'ml/train-1: 0/4 node(s) feasible' || fail "member 1"
echo "$out" | grep -q 'rejected by NodeResourcesFit on 3 node(s): Insufficient nvidia.com/gpu (cpu-1, gpu-a, gpu-b)' || fail "member 1 resources"
[ "$(echo "$out" | grep -c 'rejected by TaintToleration on 1 node(s): .*(gpu-c)')" = 2 ] || fail "taint per member"
echo "$out" | grep -q 'short by 1 member' || fail "shortfall"
# The feasible node's total and its Score plugins' weighted scores, which add up to it.
score=$(echo "$out" | sed -n 's/^ *score gpu-b: \([0-9]*\) (\(.*\))$/\1 \2/p')
[ -n "$score" ] || fail "no scores for gpu-b"
total=${score%% *}
sum=$(echo "${score#* }" | tr ',' '\n' | awk '{s += $NF} END {print s}')
echo "$score" | grep -q 'NodeResourcesFit' || fail "NodeResourcesFit score missing"
[ "$total" = "$sum" ] || fail "score total $total != sum of plugin scores $sum"
echo "$out" | grep -q 'forecast start: t=600s' || fail "forecast"
fix=$(echo "$out" | sed -n 's/^smallest fix: add \([0-9]*\) node(s) like \([a-z0-9-]*\) .*/\1x\2/p')
[ "$fix" = "1xgpu-a" ] || fail "smallest fix is '$fix'"
echo "$out" | grep -q '^also fixes it: drop node taints' || fail "constraint fix"
# --json carries the same: the fix, the forecast, the member that does not fit.
python3 - "$W/explain.json" <<'PY' || fail "json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gang"] and d["fit"] == 1 and d["min_member"] == 2, d
assert d["fixes"][0]["what_if"] == "--add-nodes 1xgpu-a", d["fixes"]
assert d["forecast"]["ok"] and d["forecast"]["start_s"] == 600.0, d["forecast"]
m1 = [m for m in d["members"] if m["pod"] == "ml/train-1"][0]
assert not any(n["feasible"] for n in m1["nodes"]), m1
assert {n["node"]: n["plugin"] for n in m1["nodes"]}["gpu-c"] == "TaintToleration", m1
PY
start_of() {  # scheduled time of ml/train-1 in a --results file
  grep '"pod":"ml/train-1"' "$1" | sed 's/.*"scheduled":\([0-9.]*\).*/\1/'
}
"$P" simulate "$S" --results "$W/base.jsonl" --no-progress >/dev/null
"$P" simulate "$S" --add-nodes "$fix" --results "$W/fix.jsonl" --no-progress >/dev/null
base=$(start_of "$W/base.jsonl") fixed=$(start_of "$W/fix.jsonl")
echo "ml/train-1 scheduled at: $base s as is, $fixed s with --add-nodes $fix"
[ "$base" = 600.0 ] || fail "without the fix the gang starts at $base, not 600"
[ "$fixed" = 10.0 ] || fail "with the fix the gang starts at $fixed, not 10"
echo PASS
