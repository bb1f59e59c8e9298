#!/usr/bin/env bash
# Reproduces the headline figure of the FGD paper (Weng et al., "Beware of Fragmentation:
# Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023,
# Fig. 9) with Phalanx: the openb default trace replayed with the paper's methodology
# (GPU nodes only, pods shuffled by seed, no departures, arrivals resampled up to 130 % of
# GPU capacity) under six placement policies, seeds 42-51, and prints the unallocated-GPU
# share at 100 % requested load per policy (median over seeds) next to the paper's
# published figures (the artifact's expected_results):
#   Random 13.75 %, DotProduct 9.44 %, GpuClustering 8.42 %, GpuPacking 8.19 %,
#   BestFit 7.09 %, FGD 4.77 %.
#
# Usage: scripts/fgd-paper.sh [OUT_DIR]   (default OUT_DIR: ${TMPDIR:-/tmp}/phalanx-fgd-paper)
# Environment: PHALANX (binary, default build/phalanx), DATA (default ../shared/data),
#              SEEDS (default 42-51), POLICIES (default: the six).
# Writes OUT_DIR/results.json and OUT_DIR/report.html. A benchmark, not a unit test:
# about 60 replays of ~10,800 pods each (a few minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${TMPDIR:-/tmp}/phalanx-fgd-paper}
PHALANX=${PHALANX:-build/phalanx}
DATA=${DATA:-../shared/data}
SEEDS=${SEEDS:-42-51}
POLICIES=${POLICIES:-random,dotproduct,clustering,packing,bestfit,fgd}
if [[ ! -x "$PHALANX" ]]; then
  echo "fgd-paper: $PHALANX not found; build it first (scripts/build.sh) or set PHALANX" >&2
  exit 1
fi
for f in "$DATA/alibaba-openb/openb_node_list_gpu_node.csv" "$DATA/alibaba-openb/openb_pod_list_default.csv"; do
  if [[ ! -f "$f" ]]; then
    echo "fgd-paper: $f not found (set DATA to the shared data directory)" >&2
    exit 1
  fi
done
mkdir -p "$OUT"
start=$(date +%s)
"$PHALANX" simulate --trace openb-paper \
  --nodes "$DATA/alibaba-openb/openb_node_list_gpu_node.csv" \
  --pods "$DATA/alibaba-openb/openb_pod_list_default.csv" \
  --policies "$POLICIES" --seeds "$SEEDS" --no-progress \
  --json "$OUT/results.json" --report "$OUT/report.html" | tee "$OUT/summary.txt"
echo "wall time: $(( $(date +%s) - start )) s"
