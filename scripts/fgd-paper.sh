#!/usr/bin/env bash
# Reproduces the headline figures of the FGD paper (Weng et al., "Beware of Fragmentation:
# Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023,
# Fig. 9 and its per-workload figures) with Phalanx, and compares Phalanx's own policies
# with them: each openb pod list is replayed with the paper's methodology (GPU nodes only,
# pods shuffled by seed, no departures, arrivals resampled up to 130 % of GPU capacity)
# under the six published placement policies and FragLookahead (Phalanx's FGD with a
# one-pod lookahead, src/plugins/gpupolicy/frag_lookahead.h), seeds 42-51. It prints the
# unallocated-GPU share at 100 % requested load per policy (median over seeds) next to
# the paper's figure for that pod list (the artifact's expected_results hold all 17
# openb workloads; "-" for a pod list outside them), and each policy's margin over FGD
# per seed (median [best, worst]).
#
# Usage: scripts/fgd-paper.sh [OUT_DIR] [POD_LIST...]
#   OUT_DIR   default ${TMPDIR:-/tmp}/phalanx-fgd-paper
#   POD_LIST  a pod-list CSV path, or an openb workload name (default, cpu050, gpushare40,
#             multigpu20, gpuspec10, ... = $DATA/alibaba-openb/openb_pod_list_<name>.csv);
#             default: default. With several lists each gets OUT_DIR/<name>/ and a table
#             over all of them is printed at the end (OUT_DIR/lists.txt).
# Environment: PHALANX (binary, default build/phalanx), DATA (default ../shared/data),
#              NODES (node list, default $DATA/alibaba-openb/openb_node_list_gpu_node.csv),
#              SEEDS (default 42-51), POLICIES (default: the six and lookahead).
# Writes OUT_DIR[/<name>]/results.json, report.html and summary.txt. A benchmark, not a
# unit test: 70 replays of ~10,800 pods each per list (several minutes per list on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${TMPDIR:-/tmp}/phalanx-fgd-paper}
shift || true
LISTS=("$@")
[[ ${#LISTS[@]} -eq 0 ]] && LISTS=(default)
PHALANX=${PHALANX:-build/phalanx}
DATA=${DATA:-../shared/data}
NODES=${NODES:-$DATA/alibaba-openb/openb_node_list_gpu_node.csv}
SEEDS=${SEEDS:-42-51}
POLICIES=${POLICIES:-random,dotproduct,clustering,packing,bestfit,fgd,lookahead}
if [[ ! -x "$PHALANX" ]]; then
  echo "fgd-paper: $PHALANX not found; build it first (scripts/build.sh) or set PHALANX" >&2
  exit 1
fi
pods_of() {
  if [[ "$1" == *.csv ]]; then echo "$1"; else echo "$DATA/alibaba-openb/openb_pod_list_$1.csv"; fi
}
for l in "${LISTS[@]}"; do
  for f in "$NODES" "$(pods_of "$l")"; do
    if [[ ! -f "$f" ]]; then
      echo "fgd-paper: $f not found (set DATA to the shared data directory, or give a pod-list path)" >&2
      exit 1
    fi
  done
done
mkdir -p "$OUT"
start=$(date +%s)
dirs=()
for l in "${LISTS[@]}"; do
  pods=$(pods_of "$l")
  dir=$OUT
  if [[ ${#LISTS[@]} -gt 1 ]]; then
    dir=$OUT/$(basename "$pods" .csv)
    mkdir -p "$dir"
    echo "== $pods"
  fi
  dirs+=("$dir")
  "$PHALANX" simulate --trace openb-paper --nodes "$NODES" --pods "$pods" \
    --policies "$POLICIES" --seeds "$SEEDS" --no-progress \
    --json "$dir/results.json" --report "$dir/report.html" | tee "$dir/summary.txt"
done
if [[ ${#dirs[@]} -gt 1 ]]; then
  # One line per list: FGD and every other policy's median and margin over FGD.
  python3 - "${dirs[@]}" <<'EOF' | tee "$OUT/lists.txt"
import json, sys
print("unallocated GPU at 100% load (%), median over seeds; margin = policy - FGD per seed: "
      "median [best, worst]")
for d in sys.argv[1:]:
    r = json.load(open(d + "/results.json"))
    rows = {row["policy"]: row["metrics"] for row in r["comparison"]["rows"]}
    name = r["trace"].split()[-1].rsplit("/", 1)[-1]
    fgd = rows.get("FGD", {})
    line = f"{name:32s} FGD {fgd.get('unallocated_at_100_pct', float('nan')):5.2f}"
    if fgd.get("paper_unallocated_at_100_pct") is not None:
        line += f" (paper {fgd['paper_unallocated_at_100_pct']:.2f})"
    for p, m in rows.items():
        if p == "FGD" or m.get("vs_fgd_median_pts") is None:
            continue
        line += (f"  {p} {m['unallocated_at_100_pct']:5.2f} {m['vs_fgd_median_pts']:+.2f}"
                 f" [{m['vs_fgd_best_pts']:+.2f}, {m['vs_fgd_worst_pts']:+.2f}]")
    print(line)
EOF
fi
echo "wall time: $(( $(date +%s) - start )) s"
