#!/usr/bin/env bash
# A scheduling.k8s.io/v1alpha2 PodGroup of 4 pods with
# schedulingConstraints.topology: [{key: topology.kubernetes.io/zone}] on two zones
# (examples/workload-api): where one zone fits, all four land in it; where none does,
# none is bound and each pod's reason names the constraint.
set -euo pipefail
phalanx=$1
examples=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$phalanx" simulate "$examples/workload-api/one-zone-fits" --no-progress --results "$tmp/fits.jsonl" >"$tmp/fits.out"
grep -q "scheduled: 4  pending at end: 0" "$tmp/fits.out" || fail "one zone fits: $(cat "$tmp/fits.out")"
[[ $(grep -c '"node":"a-' "$tmp/fits.jsonl") == 4 ]] || fail "not all in zone a: $(cat "$tmp/fits.jsonl")"

"$phalanx" simulate "$examples/workload-api/no-zone-fits" --no-progress --results "$tmp/none.jsonl" >"$tmp/none.out"
grep -q "scheduled: 0  pending at end: 4" "$tmp/none.out" || fail "no zone fits: $(cat "$tmp/none.out")"
[[ $(grep -c '"node":null' "$tmp/none.jsonl") == 4 ]] || fail "some bound: $(cat "$tmp/none.jsonl")"
[[ $(grep -c 'required topology level \\"topology.kubernetes.io/zone\\": no topology.kubernetes.io/zone domain fits the gang' "$tmp/none.jsonl") == 4 ]] ||
  fail "reason does not name the constraint: $(cat "$tmp/none.jsonl")"
echo "one zone fits: 4/4 in zone a; no zone fits: 0 bound, the reason names the zone constraint"
