#!/usr/bin/env bash
# Runs the differential test (Phalanx vs upstream kube-scheduler v1.20.2 through the real
# API, test/diff/) by hand, e.g. with another seed or more pods than CI uses.
#
# Usage: scripts/differential.sh [--phalanx BIN] [--preemption | --volumes] [--seed N]
#                                [--worlds N] [--pods-per-world N] [--out DIR] [--keep]
#   --phalanx BIN   the phalanx binary (default: build/phalanx, else the newest build-*/phalanx)
#   --volumes       volume worlds instead (test/diff/gen_volumes.py; e2e.differential_volumes):
#                   StorageClasses, static PVs, claims, CSINodes, kube-controller-manager in
#                   both control planes; one world per incoming pod, placement and the PV
#                   per claim compared; --worlds = templates (default 40), --pods-per-world
#                   = pods per template (default 8); --volume-kinds affinity,zones,limits
#   --preemption    preemption cases instead (DefaultPreemption enabled; victims and node
#                   per preemptor compared; e2e.differential_preemption); with
#                   --excluded only the cases left out as a v1.20 / current difference
#   --seed N        generator seed (default 20210113, the one CI uses)
#   --worlds N      independent sub-clusters judged in parallel (default 40)
#   --pods-per-world N  incoming pods per world (default 60; with --preemption: cases, 14)
#   --out DIR       keep logs, outcomes.json and disagreements.txt in DIR
#   --keep          leave both control planes running (in DIR) for inspection
#   --max-reduced N, --reduce-budget SECONDS   ddmin reduction of disagreements (3, 300;
#                   placements only)
# Builds kube-apiserver / kube-scheduler v1.20.2 first if they are not cached
# (scripts/control-plane.sh build, ~7 min once). Exit 0 when there is no disagreement.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
phalanx=""
args=()
while (($#)); do
  case "$1" in
    --phalanx) phalanx=${2:?--phalanx needs a path}; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [[ -z "$phalanx" ]]; then
  if [[ -x "$ROOT/build/phalanx" ]]; then
    phalanx="$ROOT/build/phalanx"
  else
    phalanx="$(ls -t "$ROOT"/build-*/phalanx 2>/dev/null | head -1 || true)"
  fi
fi
[[ -n "$phalanx" && -x "$phalanx" ]] ||
  { echo "differential: no phalanx binary (build it, or pass --phalanx BIN)" >&2; exit 1; }
"$ROOT/scripts/control-plane.sh" build >/dev/null
exec python3 "$ROOT/test/diff/differential.py" --phalanx "$phalanx" "${args[@]}"
