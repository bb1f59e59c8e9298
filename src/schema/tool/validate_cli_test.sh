#!/usr/bin/env bash
# build/phalanx-validate against the 1.36 fixtures: an upstream object passes (exit 0), the
# same object with a renamed field fails (exit 1) naming the field, and a merge patch of a
# CRD's status with a field the CRD lacks fails. Needs ../shared/upstream: skipped
# (exit 77) in a user's clone, failed under CI=true.
set -uo pipefail
validate=$1
upstream=$2
fixture=$upstream/k8s-api-fixtures/v1.36.0/scheduling.k8s.io.v1alpha2.Workload.json
if [[ ! -f $fixture ]]; then
  if [[ ${CI:-} == true ]]; then echo "upstream data missing in CI: $upstream" >&2; exit 1; fi
  echo "needs ../shared/upstream ($upstream); not in a user's clone"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$validate" --upstream "$upstream" "$fixture" >"$tmp/ok.out" || fail "fixture refused: $(cat "$tmp/ok.out")"
grep -q "1 bodies checked, .* 0 invalid" "$tmp/ok.out" || fail "no summary: $(cat "$tmp/ok.out")"

sed 's/"podGroupTemplates"/"podGroups"/' "$fixture" >"$tmp/renamed.json"
"$validate" --upstream "$upstream" "$tmp/renamed.json" >"$tmp/bad.out"
rc=$?
[[ $rc == 1 ]] || fail "renamed field: exit $rc, want 1: $(cat "$tmp/bad.out")"
grep -q 'spec.podGroups: unknown field "podGroups"' "$tmp/bad.out" || fail "no unknown-field line: $(cat "$tmp/bad.out")"

echo '{"status": {"phase": "Running", "scheduled": 1}}' >"$tmp/patch.json"
"$validate" --upstream "$upstream" --gvk scheduling.volcano.sh/v1beta1/PodGroup --as merge-patch \
  "$tmp/patch.json" >"$tmp/patch.out"
rc=$?
[[ $rc == 1 ]] || fail "CRD status patch: exit $rc, want 1: $(cat "$tmp/patch.out")"
grep -q 'status.scheduled: unknown field' "$tmp/patch.out" || fail "no pruned-field line: $(cat "$tmp/patch.out")"

"$validate" --upstream "$upstream" --gvk nope "$tmp/patch.json" >/dev/null 2>&1
[[ $? == 2 ]] || fail "a bad --gvk must exit 2"
echo "phalanx-validate: fixture ok, renamed field and pruned status field refused"
