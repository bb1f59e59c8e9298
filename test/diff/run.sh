#!/usr/bin/env bash
# CTest entry of the differential tests (e2e.differential, with --preemption
# e2e.differential_preemption, with --volumes e2e.differential_volumes): Phalanx vs upstream kube-scheduler v1.20.2 on identical
# generated clusters through the real API.
# Usage: test/diff/run.sh PHALANX-BINARY [differential.py options...]
# Exit 77 (skipped) when kube-apiserver / kube-scheduler v1.20.2 cannot be built and CI
# is not "true" (the same rule as test/e2e); with CI=true that is a failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
phalanx=${1:?usage: run.sh PHALANX-BINARY [options]}
shift
log="$(mktemp "${TMPDIR:-/tmp}/phalanx-diff-build.XXXXXX")"
trap 'rm -f "$log"' EXIT
if ! "$root/scripts/control-plane.sh" build >"$log" 2>&1; then
  if [[ "${CI:-}" == "true" ]]; then
    tail -20 "$log" >&2
    echo "FAIL: cannot build kube-apiserver / kube-scheduler v1.20.2 (CI=true: the differential test must run)" >&2
    exit 1
  fi
  echo "SKIP: kube-apiserver / kube-scheduler v1.20.2 could not be built from Debian's kubernetes" \
       "source package (see scripts/control-plane.sh build); last lines:"
  tail -5 "$log"
  exit 77
fi
command -v python3 >/dev/null || { echo "FAIL: python3 not found (scripts/install-deps.sh)" >&2; exit 1; }
exec python3 "$here/differential.py" --phalanx "$phalanx" "$@"
