#!/usr/bin/env bash
# DRA scheduling throughput: 1,000 nodes with 8 GPUs each, 5,000 pods of one GPU,
# scheduled once with the GPUs as DRA devices (one ResourceSlice per node, one claim per pod
# from a ResourceClaimTemplate, a CEL class selector) and once with the same GPUs as the
# nvidia.com/gpu extended resource, in one run of this script. Prints pods/s of each
# (scheduled pods / the simulator's wall time, which includes creating the pods and, for
# DRA, the claims).
#   bench/dra/run.sh [build/phalanx] [nodes] [pods]
set -euo pipefail
PHALANX=${1:-build/phalanx}
NODES=${2:-1000}
PODS=${3:-5000}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$DIR" "$NODES" "$PODS" <<'PY'
import sys
d, nodes, pods = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
node = ('apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\nstatus: {{capacity: '
        '{{cpu: "64", memory: 512Gi, pods: "110"{gpu}}}}}\n---\n')
with open(f"{d}/dra.yaml", "w") as f:
    f.write("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
            "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n---\n")
    f.write("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
            "metadata: {name: one-gpu, namespace: default}\n"
            "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}\n---\n")
    for i in range(nodes):
        f.write(node.format(i=i, gpu=""))
        devs = ", ".join(f"{{name: gpu-{g}, attributes: {{index: {{int: {g}}}}}, capacity: {{memory: {{value: 80Gi}}}}}}"
                         for g in range(8))
        f.write(f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: n{i}-gpus}}\n"
                f"spec: {{driver: gpu.example.com, nodeName: n{i}, pool: {{name: n{i}}}, devices: [{devs}]}}\n---\n")
    for p in range(pods):
        f.write(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{p}, namespace: default}}\nspec:\n"
                "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
                "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: [{name: gpu}]}}]\n---\n")
with open(f"{d}/ext.yaml", "w") as f:
    for i in range(nodes):
        f.write(node.format(i=i, gpu=', nvidia.com/gpu: "8"'))
    for p in range(pods):
        f.write(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{p}, namespace: default}}\nspec:\n"
                "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, "
                "limits: {nvidia.com/gpu: \"1\"}}}]\n---\n")
PY
run() {
  local out
  # CPU seconds of the whole process too (user + system, from /usr/bin/time when present):
  # on a shared machine the wall time depends on the load, the CPU time much less.
  if [ -x /usr/bin/time ]; then
    out=$(/usr/bin/time -f 'cpu: %U %S' -o "$DIR/time.txt" "$PHALANX" simulate "$DIR/$1.yaml")
  else
    out=$("$PHALANX" simulate "$DIR/$1.yaml")
    echo "cpu: 0 0" >"$DIR/time.txt"
  fi
  local wall sched cpu
  wall=$(sed -n 's/.*wall time: \([0-9.e+-]*\) s.*/\1/p' <<<"$out")
  sched=$(sed -n 's/^scheduled: \([0-9]*\).*/\1/p' <<<"$out")
  cpu=$(awk '/^cpu:/ {print $2 + $3}' "$DIR/time.txt")
  python3 -c "print(f'$2: {${NODES}} nodes x 8 GPUs, {$sched} of {${PODS}} pods scheduled in {$wall:.2f} s wall: {$sched/$wall:.0f} pods/s (process CPU {$cpu:.1f} s)')"
}
run dra "DRA (ResourceSlices, one claim per pod)"
run ext "extended resource nvidia.com/gpu      "
