#!/usr/bin/env bash
# Regenerates fuzz/corpus/<target>/ seeds from real files of this repository (examples,
# test data, deploy manifests) plus a few hand-written edge cases. Only small files (< 8 KB).
# Usage: fuzz/seed_corpus.sh     (needs python3 with PyYAML for the JSON seeds)
set -euo pipefail
cd "$(dirname "$0")/.."
c=fuzz/corpus
rm -rf "$c"
mkdir -p "$c"/{fuzz_manifest,fuzz_quantity,fuzz_label_selector,fuzz_kubeconfig,fuzz_scheduler_config,fuzz_objects,fuzz_cel_selector}

small() { [[ $(stat -c %s "$1") -lt 8192 ]]; }
name() { echo "$1" | tr '/' '_'; }

# Manifests: every example and test manifest, and the deploy manifests.
for f in examples/*/*.yaml test/cli/testdata/*.yaml test/e2e/testdata/*.yaml deploy/*.yaml; do
  case "$f" in *scheduler-config.yaml|*unknown-plugin.yaml|*bad-args.yaml|*bad-version.yaml|*missing-plugin-config.yaml) continue ;; esac
  small "$f" && cp "$f" "$c/fuzz_manifest/$(name "$f")"
done

# Scheduler configurations.
for f in src/config/testdata/*.yaml examples/*/scheduler-config.yaml test/cli/testdata/{unknown-plugin,bad-args,bad-version,missing-plugin-config}.yaml; do
  small "$f" && cp "$f" "$c/fuzz_scheduler_config/$(name "$f")"
done
python3 - "$c/fuzz_scheduler_config" <<'PY'
import sys, yaml
# The configuration embedded in deploy/configmap.yaml.
for doc in yaml.safe_load_all(open("deploy/configmap.yaml")):
    if doc and doc.get("kind") == "ConfigMap":
        for k, v in (doc.get("data") or {}).items():
            open(f"{sys.argv[1]}/deploy_configmap_{k}", "w").write(v)
PY

# Kubeconfigs: the e2e test data and hand-written variants of every supported field.
cp test/e2e/testdata/unreachable.kubeconfig "$c/fuzz_kubeconfig/"
kc() {  # kc NAME CLUSTER-FIELDS USER-FIELDS
  cat > "$c/fuzz_kubeconfig/$1" <<KC
apiVersion: v1
kind: Config
current-context: ctx
contexts:
- name: ctx
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
$2
users:
- name: u
  user:
$3
KC
}
kc token "    insecure-skip-tls-verify: true" "    token: abc.def"
kc ca-data "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    tls-server-name: kubernetes" "    client-certificate-data: Zm9v
    client-key-data: YmFy"
kc exec "    certificate-authority: ca.crt" "    exec: {command: aws}"
kc token-file "    insecure-skip-tls-verify: false" "    tokenFile: token"

# Quantities: valid, boundary and malformed spellings (quantity.go's grammar).
i=0
for q in 100m 1.5 2Gi 1e3 500M -1 0 1e308 -1e308 9223372036854775807 8Ei 1n 0.000000001 \
         .5 +1 1E-3 1e-9 1Ki 12e6 1.0e+3 "" m Gi 1.2.3 1e 0x10 ' 1' '1 ' 1000000000000000000000000000000000000000; do
  printf '%s' "$q" > "$c/fuzz_quantity/q$((i++))"
done

# Label and node selectors in the target's line format (see fuzz_label_selector.cc).
printf 'l app=web\nl tier=front\nm app=web\ne tier In front back\ne gpu DoesNotExist\nn zone In a b\nN node-1\n' > "$c/fuzz_label_selector/in"
printf 'l cpu=8\nn cpu Gt 4\nt\nn cpu Lt 2\nf In node-1 node-2\nN node-2\n' > "$c/fuzz_label_selector/gt"
printf 'l a=b\ne a NotIn b\ne c Exists\ne d Gt 1\nn x Exists y\nf Exists\n' > "$c/fuzz_label_selector/invalid"
printf 'l example.com/key=v\nm example.com/key=v\nm bad key=v\ne x In\n' > "$c/fuzz_label_selector/keys"

# Live objects: JSON of the manifests' pods, nodes, namespaces, priority classes and
# PodGroups; as a single object (mode 0), a LIST page (1) and WATCH lines (2). The first
# byte selects resource type (low nibble) and mode (high nibble), see fuzz_objects.cc.
python3 - "$c/fuzz_objects" examples/*/*.yaml test/e2e/testdata/podgroup-crd.yaml <<'PY'
import json, sys, yaml
out, files = sys.argv[1], sys.argv[2:]
types = {"Pod": 0, "Node": 1, "Namespace": 2, "PriorityClass": 3, "PodGroup": 4}
seen = {}
for f in files:
    for doc in yaml.safe_load_all(open(f)):
        if not isinstance(doc, dict) or doc.get("kind") not in types:
            continue
        t = types[doc["kind"]]
        if seen.get(t, 0) >= 3:
            continue
        seen[t] = seen.get(t, 0) + 1
        doc.setdefault("metadata", {})["resourceVersion"] = "42"
        n = f"{doc['kind'].lower()}{seen[t]}"
        obj = json.dumps(doc, separators=(",", ":"))
        lst = json.dumps({"kind": doc["kind"] + "List", "metadata": {"resourceVersion": "43", "continue": ""},
                          "items": [doc, {"metadata": {"name": "bad"}, "spec": 3}]})
        watch = json.dumps({"type": "MODIFIED", "object": doc})
        for mode, name, body in ((0, "obj", obj), (1, "list", lst), (2, "watch", watch)):
            open(f"{out}/{n}-{name}", "wb").write(bytes([mode << 4 | t]) + body.encode())
gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}
open(f"{out}/watch-gone", "wb").write(bytes([2 << 4]) + json.dumps(gone).encode())
open(f"{out}/watch-bookmark", "wb").write(bytes([2 << 4]) + b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}')
PY
# DRA CEL device selectors: upstream's and the drivers' examples plus edge cases, one
# expression per file (see fuzz_cel_selector.cc for the devices they run against).
i=0
while IFS= read -r e; do
  printf '%s' "$e" > "$c/fuzz_cel_selector/e$((i++))"
done <<'CEL'
device.driver == "gpu.example.com"
device.attributes["gpu.example.com"].model == "A100" && device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0
device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver("v1.0", true)) || isSemver("1.0.0")
cel.bind(g, device.attributes["gpu.example.com"], g.index > 2 && g.mig)
device.attributes.exists_one(x, x == "other.example.com") && device.attributes["other.example.com"].numa < 0
has(device.attributes["gpu.example.com"].model) ? device.attributes["gpu.example.com"].model.matches("^A1[0-9]{2}$") : false
"model" in device.attributes["gpu.example.com"] && !("x" in device.attributes["no.such"])
device.attributes["gpu.example.com"].big + 1 > 0
[1, 2, 3].all(x, x > 0) && [1u, 2u].exists(y, y == 2u) && 1.5 * 2.0 == 3.0
device.capacity["gpu.example.com"].cores.add(1).sub(quantity("500m")).asApproximateFloat() == 2.0
'\x41\u00e9\n'.size() == 3 && r'\d'.lowerAscii().upperAscii() == '\\D' && """a""".split('').size() == 1
int('42') + 1 == 43 && string(1.5) == '1.5' && double(uint(3)) == 3.0 && -9223372036854775808 < 0
device.attributes["gpu.example.com"].model.matches("(a*)*b|[^x-z]+\\.\\d\\s\\w(?:A|100)$")
device.allowMultipleAllocations || device.attributes["gpu.example.com"].broken.major() == 1
((((device.driver == '' || false) && true) ? 1 : 2) == 1) != (7 / 2 % 2 == 1)
?!
{'a': 1}
device.attributes[?'x']
CEL

echo "seeds: $(find "$c" -type f | wc -l) files in $c"
