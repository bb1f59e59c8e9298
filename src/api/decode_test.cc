// Manifest decoding: kinds, multi-document YAML, JSON, Lists, defaulting, controller
// expansion, and one test per error kind checking file, object and field in the message.
#include "api/decode.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "api/labels.h"
#include "api/pod_resources.h"

namespace phalanx::api {
namespace {

Manifests MustDecode(const std::string& text, const std::string& source = "test.yaml") {
  Manifests m;
  std::string err;
  EXPECT_TRUE(OkOrMessage(DecodeManifests(text, source, &m), &err)) << err;
  return m;
}

// The error of decoding `text` as test.yaml ("" when it decodes).
std::string DecodeError(const std::string& text) {
  Manifests m;
  std::string err;
  OkOrMessage(DecodeManifests(text, "test.yaml", &m), &err);
  return err;
}

constexpr char kCluster[] = R"(
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
globalDefault: true
preemptionPolicy: Never
description: ignored
---
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels:
    kubernetes.io/hostname: n1
    topology.kubernetes.io/zone: zone-a
  creationTimestamp: "2024-01-02T03:04:05Z"
spec:
  unschedulable: true
  taints:
  - key: dedicated
    value: gpu
    effect: NoSchedule
  - key: node.kubernetes.io/unreachable
    effect: NoExecute
    timeAdded: "2024-01-02T03:04:05Z"
status:
  capacity:
    cpu: "8"
    memory: 32Gi
    pods: "110"
    nvidia.com/gpu: 4
  allocatable:
    cpu: 7500m
    memory: 30Gi
    pods: 110
  conditions:
  - type: Ready
    status: "True"
    reason: KubeletReady
  images:
  - names: [registry.example/app:v1, registry.example/app@sha256:abc]
    sizeBytes: 123456789
  somethingNew: {a: 1}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: team-a
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: team-a
  uid: 1234-abcd
  resourceVersion: "42"
  labels: {app: web, tier: frontend}
  annotations: {note: "any text: allowed here"}
  creationTimestamp: "2024-01-02T03:04:05.5+01:00"
  ownerReferences:
  - apiVersion: apps/v1
    kind: ReplicaSet
    name: web-rs
    uid: rs-uid
    controller: true
spec:
  nodeName: n1
  schedulerName: my-scheduler
  nodeSelector: {disktype: ssd}
  priority: 1000
  priorityClassName: high
  preemptionPolicy: Never
  restartPolicy: OnFailure
  activeDeadlineSeconds: 600
  schedulingGates: [{name: example.com/gate}]
  overhead: {cpu: 250m, memory: 120Mi}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: gpu-count, operator: Gt, values: ["2"]}
          matchFields:
          - {key: metadata.name, operator: In, values: [n1]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}]
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: cache}}
        topologyKey: kubernetes.io/hostname
        namespaces: [team-b]
        matchLabelKeys: [pod-template-hash]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          labelSelector:
            matchExpressions: [{key: app, operator: In, values: [web]}]
          namespaceSelector: {}
          topologyKey: topology.kubernetes.io/zone
          mismatchLabelKeys: [tenant]
  tolerations:
  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  - {operator: Exists}
  - {key: k}
  initContainers:
  - name: init
    image: busybox
    resources: {requests: {cpu: "2"}}
  - name: sidecar
    image: proxy
    restartPolicy: Always
    resources: {requests: {cpu: 100m, memory: 64Mi}}
  containers:
  - name: app
    image: registry.example/app:v1
    ports:
    - {name: http, containerPort: 8080, hostPort: 80, protocol: TCP, hostIP: 10.0.0.1}
    - {containerPort: 53, protocol: UDP}
    resources:
      requests: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: 1}
      limits: {cpu: "1", memory: 2Gi, nvidia.com/gpu: 1, ephemeral-storage: 1Gi}
    livenessProbe: {httpGet: {path: /, port: 8080}}
  topologySpreadConstraints:
  - maxSkew: 2
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    minDomains: 3
    nodeAffinityPolicy: Honor
    nodeTaintsPolicy: Ignore
    matchLabelKeys: [pod-template-hash]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data-web-0}
  - name: cfg
    configMap: {name: cfg}
status:
  phase: Running
  nominatedNodeName: n2
  startTime: "2024-01-02T03:05:00Z"
  conditions:
  - {type: PodScheduled, status: "True", reason: Scheduled, message: ok}
---
# a trailing empty document is fine
---
)";

TEST(DecodeTest, MultiDocumentCluster) {
  const Manifests m = MustDecode(kCluster);
  ASSERT_EQ(m.namespaces.size(), 1u);
  EXPECT_EQ(m.namespaces[0].metadata.name, "team-a");
  EXPECT_EQ(m.namespaces[0].metadata.namespace_, "");

  ASSERT_EQ(m.priority_classes.size(), 1u);
  EXPECT_EQ(m.priority_classes[0].metadata.name, "high");
  EXPECT_EQ(m.priority_classes[0].value, 1000);
  EXPECT_TRUE(m.priority_classes[0].global_default);
  EXPECT_EQ(m.priority_classes[0].preemption_policy, "Never");

  ASSERT_EQ(m.ignored.size(), 1u);
  EXPECT_EQ(m.ignored[0], "Service team-a/web");

  ASSERT_EQ(m.nodes.size(), 1u);
  const Node& n = m.nodes[0];
  EXPECT_EQ(n.metadata.name, "n1");
  EXPECT_EQ(n.metadata.labels.at("topology.kubernetes.io/zone"), "zone-a");
  EXPECT_EQ(n.metadata.creation_timestamp, 1704164645LL * kNanosPerSecond);
  EXPECT_TRUE(n.spec.unschedulable);
  ASSERT_EQ(n.spec.taints.size(), 2u);
  EXPECT_EQ(n.spec.taints[0].key, "dedicated");
  EXPECT_EQ(n.spec.taints[0].value, "gpu");
  EXPECT_EQ(n.spec.taints[0].effect, "NoSchedule");
  EXPECT_EQ(n.spec.taints[1].effect, "NoExecute");
  EXPECT_EQ(n.status.capacity.at("nvidia.com/gpu").Value(), 4);
  EXPECT_EQ(n.status.allocatable.at("cpu").MilliValue(), 7500);
  EXPECT_EQ(n.status.allocatable.count("nvidia.com/gpu"), 0u) << "allocatable given: kept as is";
  const Resource alloc = ResourceListToResource(n.status.allocatable);
  EXPECT_EQ(alloc.memory, 30LL << 30);
  EXPECT_EQ(alloc.allowed_pod_number, 110);
  ASSERT_EQ(n.status.conditions.size(), 1u);
  EXPECT_EQ(n.status.conditions[0].type, "Ready");
  EXPECT_EQ(n.status.conditions[0].status, "True");
  ASSERT_EQ(n.status.images.size(), 1u);
  EXPECT_EQ(n.status.images[0].names.size(), 2u);
  EXPECT_EQ(n.status.images[0].size_bytes, 123456789);

  ASSERT_EQ(m.pods.size(), 1u);
  const Pod& p = m.pods[0];
  EXPECT_EQ(p.Key(), "team-a/web-0");
  EXPECT_EQ(p.metadata.uid, "1234-abcd");
  EXPECT_EQ(p.metadata.resource_version, "42");
  EXPECT_EQ(p.metadata.labels.size(), 2u);
  EXPECT_EQ(p.metadata.annotations.at("note"), "any text: allowed here");
  // 03:04:05.5+01:00 is 02:04:05.5Z
  EXPECT_EQ(p.metadata.creation_timestamp, (1704164645LL - 3600) * kNanosPerSecond + 500'000'000);
  ASSERT_EQ(p.metadata.owner_references.size(), 1u);
  EXPECT_EQ(p.metadata.owner_references[0].kind, "ReplicaSet");
  EXPECT_EQ(p.metadata.owner_references[0].uid, "rs-uid");
  EXPECT_TRUE(p.metadata.owner_references[0].controller);

  const PodSpec& s = p.spec;
  EXPECT_EQ(s.node_name, "n1");
  EXPECT_EQ(s.scheduler_name, "my-scheduler");
  EXPECT_EQ(s.node_selector.at("disktype"), "ssd");
  EXPECT_EQ(s.priority, 1000);
  EXPECT_EQ(s.priority_class_name, "high");
  EXPECT_EQ(s.preemption_policy, "Never");
  EXPECT_EQ(s.restart_policy, "OnFailure");
  EXPECT_EQ(s.active_deadline_seconds, 600);
  ASSERT_EQ(s.scheduling_gates.size(), 1u);
  EXPECT_EQ(s.scheduling_gates[0].name, "example.com/gate");
  EXPECT_EQ(s.overhead.at("memory").Value(), 120LL << 20);

  ASSERT_TRUE(s.affinity.has_value());
  const NodeAffinity& na = s.affinity->node_affinity.value();
  const NodeSelector& req = na.required_during_scheduling_ignored_during_execution.value();
  ASSERT_EQ(req.node_selector_terms.size(), 1u);
  EXPECT_EQ(req.node_selector_terms[0].match_expressions[0].op, "Gt");
  EXPECT_EQ(req.node_selector_terms[0].match_fields[0].values[0], "n1");
  EXPECT_TRUE(NodeSelectorMatches(req, {{"gpu-count", "3"}}, "n1"));
  EXPECT_FALSE(NodeSelectorMatches(req, {{"gpu-count", "3"}}, "n2"));
  ASSERT_EQ(na.preferred_during_scheduling_ignored_during_execution.size(), 1u);
  EXPECT_EQ(na.preferred_during_scheduling_ignored_during_execution[0].weight, 10);
  const PodAffinity& pa = s.affinity->pod_affinity.value();
  ASSERT_EQ(pa.required.size(), 1u);
  EXPECT_EQ(pa.required[0].label_selector->match_labels.at("app"), "cache");
  EXPECT_EQ(pa.required[0].topology_key, "kubernetes.io/hostname");
  EXPECT_EQ(pa.required[0].namespaces, std::vector<std::string>{"team-b"});
  EXPECT_EQ(pa.required[0].match_label_keys, std::vector<std::string>{"pod-template-hash"});
  EXPECT_FALSE(pa.required[0].namespace_selector.has_value());
  const PodAffinity& anti = s.affinity->pod_anti_affinity.value();
  ASSERT_EQ(anti.preferred.size(), 1u);
  EXPECT_EQ(anti.preferred[0].weight, 100);
  const PodAffinityTerm& at = anti.preferred[0].pod_affinity_term;
  EXPECT_EQ(at.label_selector->match_expressions[0].values, std::vector<std::string>{"web"});
  ASSERT_TRUE(at.namespace_selector.has_value()) << "{} is an empty selector, not absent";
  EXPECT_TRUE(LabelSelectorMatches(*at.namespace_selector, {{"any", "ns"}}));
  EXPECT_EQ(at.mismatch_label_keys, std::vector<std::string>{"tenant"});

  ASSERT_EQ(s.tolerations.size(), 4u);
  EXPECT_EQ(s.tolerations[0].value, "gpu");
  EXPECT_EQ(s.tolerations[1].toleration_seconds, 300);
  EXPECT_EQ(s.tolerations[2].op, "Exists");
  EXPECT_EQ(s.tolerations[2].key, "");
  EXPECT_EQ(s.tolerations[3].op, "Equal") << "empty operator defaults to Equal";

  ASSERT_EQ(s.init_containers.size(), 2u);
  EXPECT_EQ(s.init_containers[0].restart_policy, "");
  EXPECT_EQ(s.init_containers[1].restart_policy, "Always");
  ASSERT_EQ(s.containers.size(), 1u);
  const Container& c = s.containers[0];
  EXPECT_EQ(c.name, "app");
  EXPECT_EQ(c.image, "registry.example/app:v1");
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[0].container_port, 8080);
  EXPECT_EQ(c.ports[0].host_port, 80);
  EXPECT_EQ(c.ports[0].host_ip, "10.0.0.1");
  EXPECT_EQ(c.ports[1].protocol, "UDP");
  EXPECT_EQ(c.ports[1].host_port, 0);
  EXPECT_EQ(c.resources.requests.at("cpu").MilliValue(), 500);
  EXPECT_EQ(c.resources.limits.at("memory").Value(), 2LL << 30);
  // SetDefaults_Pod: ephemeral-storage has a limit and no request, so it requests the limit.
  EXPECT_EQ(c.resources.requests.at("ephemeral-storage").Value(), 1LL << 30);
  EXPECT_EQ(c.resources.requests.at("memory").Value(), 1LL << 30) << "explicit request kept";

  ASSERT_EQ(s.topology_spread_constraints.size(), 1u);
  const TopologySpreadConstraint& t = s.topology_spread_constraints[0];
  EXPECT_EQ(t.max_skew, 2);
  EXPECT_EQ(t.min_domains, 3);
  EXPECT_EQ(t.node_affinity_policy, "Honor");
  EXPECT_EQ(t.node_taints_policy, "Ignore");
  EXPECT_EQ(t.match_label_keys, std::vector<std::string>{"pod-template-hash"});
  ASSERT_EQ(s.volumes.size(), 2u);
  EXPECT_EQ(s.volumes[0].persistent_volume_claim, "data-web-0");
  EXPECT_EQ(s.volumes[1].persistent_volume_claim, "");

  EXPECT_EQ(p.status.phase, "Running");
  EXPECT_EQ(p.status.nominated_node_name, "n2");
  ASSERT_TRUE(p.status.start_time.has_value());
  ASSERT_EQ(p.status.conditions.size(), 1u);
  EXPECT_EQ(p.status.conditions[0].reason, "Scheduled");

  // The decoded pod feeds PodRequests: max(2 cpu init, 500m + 100m sidecar) + 250m overhead.
  const Resource r = PodRequests(p);
  EXPECT_EQ(r.milli_cpu, 2250);
  EXPECT_EQ(r.memory, (1LL << 30) + (64LL << 20) + (120LL << 20));
}

TEST(DecodeTest, DefaultsForMinimalObjects) {
  const Manifests m = MustDecode(R"(
kind: Pod
apiVersion: v1
metadata: {name: p}
spec:
  containers:
  - name: c
    resources:
      limits: {cpu: "2", memory: 1Gi}
---
kind: Node
apiVersion: v1
metadata: {name: n}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
)");
  ASSERT_EQ(m.pods.size(), 1u);
  const Pod& p = m.pods[0];
  EXPECT_EQ(p.metadata.namespace_, "default");
  EXPECT_EQ(p.metadata.uid, "default/p") << "deterministic uid when none is given";
  EXPECT_EQ(p.spec.scheduler_name, "default-scheduler");
  EXPECT_EQ(p.spec.restart_policy, "Always");
  EXPECT_EQ(p.status.phase, "Pending");
  EXPECT_FALSE(p.spec.priority.has_value());
  EXPECT_EQ(p.metadata.creation_timestamp, 0);
  EXPECT_EQ(PodRequests(p).milli_cpu, 2000) << "requests defaulted from limits";
  EXPECT_EQ(PodRequests(p).memory, 1LL << 30);

  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.nodes[0].status.allocatable.size(), 3u) << "allocatable defaults to capacity";
  EXPECT_EQ(ResourceListToResource(m.nodes[0].status.allocatable).milli_cpu, 4000);
}

TEST(DecodeTest, JsonAndLists) {
  const std::string json = R"({
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
     "status": {"capacity": {"cpu": 4, "memory": "8Gi"}}},
    {"apiVersion": "v1", "kind": "PodList", "items": [
      {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "x"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 0.5}}}]}},
      {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}}
    ]},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
  ]
})";
  const Manifests m = MustDecode(json, "list.json");
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(ResourceListToResource(m.nodes[0].status.allocatable).milli_cpu, 4000);
  ASSERT_EQ(m.pods.size(), 2u);
  EXPECT_EQ(m.pods[0].Key(), "x/a");
  EXPECT_EQ(m.pods[0].spec.containers[0].resources.requests.at("cpu").MilliValue(), 500);
  EXPECT_EQ(m.pods[1].Key(), "default/b");
  EXPECT_EQ(m.ignored, std::vector<std::string>{"ConfigMap default/cm"});

  // A single JSON object (tabs for indentation, as json.dumps(indent="\t") writes).
  const Manifests one = MustDecode(
      "{\n\t\"kind\": \"Namespace\",\n\t\"apiVersion\": \"v1\",\n"
      "\t\"metadata\": {\"name\": \"ns1\"}\n}\n",
      "ns.json");
  ASSERT_EQ(one.namespaces.size(), 1u);
  EXPECT_EQ(one.namespaces[0].metadata.name, "ns1");
}

TEST(DecodeTest, UnknownKindsFieldsAndGroupsAreIgnored) {
  const Manifests m = MustDecode(R"(
apiVersion: example.com/v1
kind: Pod
metadata: {name: not-a-core-pod}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {a: b}
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  managedFields: [{manager: kubectl}]
  futureField: {x: [1, 2]}
spec:
  futureSpecField: true
  containers: [{name: c, futureContainerField: {y: 1}}]
status:
  futureStatus: 1
)");
  ASSERT_EQ(m.pods.size(), 1u);
  EXPECT_EQ(m.pods[0].metadata.name, "p");
  EXPECT_EQ(m.ignored,
            (std::vector<std::string>{"Pod default/not-a-core-pod", "ConfigMap default/cfg"}));
}

// kind and apiVersion are required, as kubectl and the API server require them: a document
// without them (a kustomization.yaml, a Helm values file, a typo) is an error naming the
// document and the field, never typed by guesswork nor skipped.
TEST(DecodeTest, KindAndApiVersionAreRequired) {
  EXPECT_EQ(DecodeError("resources: [a.yaml]\n"),
            "test.yaml: document 1: kind: Required value (line 1, column 1)");
  EXPECT_EQ(DecodeError("kind: Pod\nmetadata: {name: p}\n"),
            "test.yaml: Pod default/p: apiVersion: Required value (line 1, column 1)");
  EXPECT_EQ(
      DecodeError("apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n"),
      "test.yaml: Node n: items[0].apiVersion: Required value (line 4, column 3)");
  EXPECT_EQ(DecodeError("apiVersion: example.com/v1\nmetadata: {name: x}\n"),
            "test.yaml: document 1: kind: Required value (line 1, column 1)");
}

// Untyped objects (CRDs) get the typed objects' metadata decoding: a list where an
// annotation's string belongs is an error naming the object and field (it used to drop
// the object, and with it a PodGroup, silently); generateName gets a stable name.
TEST(DecodeTest, UntypedMetadataIsStrict) {
  EXPECT_EQ(DecodeError(R"(apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: pg
  annotations:
    gang.scheduling.koordinator.sh/groups: [a/b, a/c]
spec: {minMember: 2}
)"),
            "test.yaml: PodGroup default/pg: metadata.annotations.gang.scheduling.koordinator.sh/"
            "groups: expected string, got array (line 6, column 44)");
  EXPECT_EQ(DecodeError("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {}\n"),
            "test.yaml: document 1: metadata.name: Required value: name or generateName is "
            "required (line 3, column 11)");
  const Manifests m = MustDecode(
      "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {generateName: sleep-job-}\n");
  ASSERT_EQ(m.objects.size(), 1u);
  EXPECT_EQ(m.objects[0].metadata.name.rfind("sleep-job-", 0), 0u) << m.objects[0].metadata.name;
  EXPECT_EQ(m.objects[0].metadata.name.size(), std::string("sleep-job-").size() + 5);
  EXPECT_EQ(m.objects[0].metadata.namespace_, "default");
}

TEST(DecodeTest, GenerateName) {
  const std::string text = R"(
apiVersion: v1
kind: Pod
metadata: {generateName: job-}
---
apiVersion: v1
kind: Pod
metadata: {generateName: job-}
)";
  const Manifests a = MustDecode(text);
  const Manifests b = MustDecode(text);
  ASSERT_EQ(a.pods.size(), 2u);
  EXPECT_EQ(a.pods[0].metadata.name.rfind("job-", 0), 0u);
  EXPECT_EQ(a.pods[0].metadata.name.size(), 9u);
  EXPECT_NE(a.pods[0].metadata.name, a.pods[1].metadata.name);
  EXPECT_EQ(a.pods[0].metadata.name, b.pods[0].metadata.name) << "deterministic";
}

constexpr char kControllers[] = R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod, uid: dep-uid, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {a: b}
      namespace: ignored
    spec:
      priorityClassName: high
      containers: [{name: c, resources: {requests: {cpu: 100m}}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 0
  template: {spec: {containers: [{name: c}]}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: 5
  completions: 2
  template: {spec: {containers: [{name: c}], restartPolicy: Never}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: wide}
spec:
  parallelism: 4
  template: {spec: {containers: [{name: c}]}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: plain}
spec:
  template: {spec: {containers: [{name: c}]}}
)";

TEST(DecodeTest, ControllersAndExpansion) {
  const Manifests m = MustDecode(kControllers);
  ASSERT_EQ(m.controllers.size(), 6u);
  struct Want {
    std::string kind;
    std::string name;
    int32_t replicas;
  };
  const std::vector<Want> want = {{"Deployment", "web", 3}, {"StatefulSet", "db", 1},
                                  {"ReplicaSet", "rs", 0},  {"Job", "batch", 2},
                                  {"Job", "wide", 4},       {"Job", "plain", 1}};
  for (size_t i = 0; i < want.size(); ++i) {
    const WorkloadController& c = m.controllers[i];
    EXPECT_EQ(c.kind, want[i].kind);
    EXPECT_EQ(c.metadata.name, want[i].name);
    EXPECT_EQ(c.replicas, want[i].replicas) << c.metadata.name;
    EXPECT_EQ(ExpandController(c).size(), static_cast<size_t>(want[i].replicas)) << c.metadata.name;
    EXPECT_FALSE(c.metadata.uid.empty());
  }

  const WorkloadController& dep = m.controllers[0];
  EXPECT_EQ(dep.api_version, "apps/v1");
  EXPECT_EQ(dep.template_spec.priority_class_name, "high");
  const std::vector<Pod> pods = ExpandController(dep);
  std::set<std::string> names, uids;
  for (const Pod& p : pods) {
    EXPECT_EQ(p.metadata.namespace_, "prod");
    EXPECT_EQ(p.metadata.labels.at("app"), "web");
    EXPECT_EQ(p.metadata.annotations.at("a"), "b");
    EXPECT_EQ(p.metadata.creation_timestamp, dep.metadata.creation_timestamp);
    ASSERT_EQ(p.metadata.owner_references.size(), 1u);
    const OwnerReference& o = p.metadata.owner_references[0];
    EXPECT_EQ(o.kind, "Deployment");
    EXPECT_EQ(o.name, "web");
    EXPECT_EQ(o.uid, "dep-uid");
    EXPECT_EQ(o.api_version, "apps/v1");
    EXPECT_TRUE(o.controller);
    EXPECT_EQ(p.metadata.name.rfind("web-", 0), 0u);
    EXPECT_EQ(p.metadata.uid, "prod/" + p.metadata.name);
    EXPECT_EQ(PodRequests(p).milli_cpu, 100);
    EXPECT_EQ(p.status.phase, "Pending");
    names.insert(p.metadata.name);
    uids.insert(p.metadata.uid);
  }
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(uids.size(), 3u);
  // Deterministic across calls.
  EXPECT_EQ(ExpandController(dep)[2].metadata.name, pods[2].metadata.name);

  const std::vector<Pod> db = ExpandController(m.controllers[1]);
  ASSERT_EQ(db.size(), 1u);
  EXPECT_EQ(db[0].metadata.name, "db-0");
  EXPECT_EQ(db[0].metadata.namespace_, "default");
  EXPECT_EQ(db[0].metadata.labels.at("statefulset.kubernetes.io/pod-name"), "db-0");

  const std::vector<Pod> job = ExpandController(m.controllers[3]);
  EXPECT_EQ(job[0].spec.restart_policy, "Never");
  EXPECT_EQ(job[1].metadata.labels.at("job-name"), "batch");
}

TEST(DecodeTest, QuantityWhitespaceIsTrimmedLikeUnmarshalJSON) {
  const Manifests m = MustDecode(R"(
apiVersion: v1
kind: Node
metadata: {name: n}
status: {capacity: {cpu: " 2 ", memory: null}}
)");
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.nodes[0].status.capacity.at("cpu").MilliValue(), 2000);
  EXPECT_TRUE(m.nodes[0].status.capacity.at("memory").IsZero());
}

struct ErrorCase {
  std::string name;
  std::string text;
  std::vector<std::string> want;  // substrings of the message, in order
};

class DecodeErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(DecodeErrorTest, NamesFileObjectFieldAndCause) {
  const ErrorCase& c = GetParam();
  Manifests m;
  m.namespaces.push_back(Namespace{});  // pre-existing content must survive a failure
  std::string err;
  ASSERT_FALSE(OkOrMessage(DecodeManifests(c.text, "cluster.yaml", &m), &err)) << c.name;
  size_t pos = 0;
  for (const std::string& part : c.want) {
    const size_t found = err.find(part, pos);
    EXPECT_NE(found, std::string::npos) << c.name << ": missing '" << part << "' in: " << err;
    if (found != std::string::npos) pos = found + part.size();
  }
  EXPECT_EQ(m.namespaces.size(), 1u);
  EXPECT_TRUE(m.pods.empty() && m.nodes.empty() && m.controllers.empty()) << "all-or-nothing";
}

constexpr char kPodHead[] = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-0}\n";

INSTANTIATE_TEST_SUITE_P(
    Table, DecodeErrorTest,
    ::testing::Values(
        ErrorCase{"bad quantity",
                  std::string(kPodHead) + "spec:\n  containers:\n  - name: c\n    resources:\n"
                                          "      requests: {cpu: 1.2.3}\n",
                  {"cluster.yaml: Pod default/web-0: spec.containers[0].resources.requests.cpu: ",
                   "quantities must match the regular expression", "(line 8, column 23)"}},
        ErrorCase{"bad quantity suffix in an init container",
                  std::string(kPodHead) +
                      "spec:\n  initContainers:\n  - resources: {limits: {memory: 1Gb}}\n",
                  {"Pod default/web-0: spec.initContainers[0].resources.limits.memory: quantities "
                   "must match"}},
        ErrorCase{"negative request",
                  "apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, namespace: ns}\nspec:\n"
                  "  containers:\n  - {name: a}\n  - name: b\n    resources: {requests: {memory: "
                  "-1Gi}}\n",
                  {"cluster.yaml: Pod ns/web-0: spec.containers[1].resources.requests.memory: "
                   "Invalid value: \"-1Gi\": must be greater than or equal to 0"}},
        ErrorCase{"negative overhead",
                  std::string(kPodHead) + "spec: {overhead: {cpu: -1}}\n",
                  {"Pod default/web-0: spec.overhead.cpu: Invalid value: \"-1\""}},
        ErrorCase{"out of range quantity",
                  "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {memory: "
                  "1e308}}\n",
                  {"Node n1: status.capacity.memory: quantity out of range"}},
        ErrorCase{"map where a string is expected",
                  std::string(kPodHead) + "spec:\n  nodeName: {a: b}\n",
                  {"Pod default/web-0: spec.nodeName: expected string, got object"}},
        ErrorCase{"list where a map is expected",
                  std::string(kPodHead) + "spec: [1, 2]\n",
                  {"Pod default/web-0: spec: expected object, got array"}},
        ErrorCase{"labels as a list",
                  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-0\n  labels: [a]\n",
                  {"Pod default/web-0: metadata.labels: expected object, got array"}},
        ErrorCase{"invalid label key",
                  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-0\n  labels: {-a: b}\n",
                  {"Pod default/web-0: metadata.labels.-a: Invalid value: \"-a\""}},
        ErrorCase{"integer expected",
                  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: "
                  "three}\n",
                  {"Deployment default/web: spec.replicas: expected integer, got \"three\""}},
        ErrorCase{"int32 overflow",
                  std::string(kPodHead) + "spec: {priority: 3000000000}\n",
                  {"spec.priority: Invalid value: \"3000000000\": value out of range"}},
        ErrorCase{
            "negative replicas",
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {replicas: -1}\n",
            {"StatefulSet default/db: spec.replicas: Invalid value: \"-1\""}},
        ErrorCase{
            "boolean expected",
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {unschedulable: maybe}\n",
            {"Node n1: spec.unschedulable: expected boolean, got \"maybe\""}},
        ErrorCase{
            "bad timestamp",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, creationTimestamp: yesterday}\n",
            {"Pod default/web-0: metadata.creationTimestamp: Invalid value: \"yesterday\""}},
        ErrorCase{
            "Gt in a label selector",
            std::string(kPodHead) +
                "spec:\n  affinity:\n    podAffinity:\n      "
                "requiredDuringSchedulingIgnoredDuringExecution:\n"
                "      - topologyKey: zone\n        labelSelector:\n          matchExpressions:\n"
                "          - {key: a, operator: Gt, values: ['1']}\n",
            {"Pod default/web-0: "
             "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
             ".labelSelector.matchExpressions[0].operator: Unsupported value: \"Gt\""}},
        ErrorCase{"In without values in a spread constraint selector",
                  std::string(kPodHead) +
                      "spec:\n  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n"
                      "    whenUnsatisfiable: DoNotSchedule\n    labelSelector:\n"
                      "      matchExpressions: [{key: a, operator: In}]\n",
                  {"spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values: "
                   "Required value"}},
        ErrorCase{"bad whenUnsatisfiable",
                  std::string(kPodHead) +
                      "spec:\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: z, "
                      "whenUnsatisfiable: Sometimes}\n",
                  {"spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "
                   "\"Sometimes\""}},
        ErrorCase{"invalid node selector operator",
                  std::string(kPodHead) + "spec:\n  affinity:\n    nodeAffinity:\n      "
                                          "requiredDuringSchedulingIgnoredDuringExecution:\n"
                                          "        nodeSelectorTerms:\n        - matchExpressions: "
                                          "[{key: a, operator: Foo, values: [x]}]\n",
                  {"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                   "nodeSelectorTerms[0]"
                   ".matchExpressions[0].operator: Invalid value: \"Foo\": not a valid selector "
                   "operator"}},
        ErrorCase{"Gt with a non-integer in a node selector",
                  std::string(kPodHead) +
                      "spec:\n  affinity:\n    nodeAffinity:\n      "
                      "preferredDuringSchedulingIgnoredDuringExecution:\n"
                      "      - weight: 1\n        preference: {matchExpressions: [{key: a, "
                      "operator: Gt, values: [x]}]}\n",
                  {"preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions["
                   "0].values[0]: "
                   "Invalid value: \"x\""}},
        ErrorCase{"preferred weight out of range",
                  std::string(kPodHead) + "spec:\n  affinity:\n    nodeAffinity:\n      "
                                          "preferredDuringSchedulingIgnoredDuringExecution:\n"
                                          "      - weight: 0\n        preference: {}\n",
                  {"preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: "
                   "\"0\": must be in the "
                   "range 1-100"}},
        ErrorCase{
            "empty nodeSelectorTerms",
            std::string(kPodHead) + "spec:\n  affinity:\n    nodeAffinity:\n      "
                                    "requiredDuringSchedulingIgnoredDuringExecution:\n"
                                    "        nodeSelectorTerms: []\n",
            {"requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value"}},
        ErrorCase{"invalid taint effect",
                  "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints:\n"
                  "  - {key: a, effect: NoSchedule}\n  - {key: b, effect: NoWay}\n",
                  {"cluster.yaml: Node n1: spec.taints[1].effect: Unsupported value: \"NoWay\": "
                   "supported values: "
                   "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""}},
        ErrorCase{"missing taint effect",
                  "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints: [{key: a}]\n",
                  {"Node n1: spec.taints[0].effect: Required value"}},
        ErrorCase{
            "toleration operator",
            std::string(kPodHead) + "spec:\n  tolerations: [{key: a, operator: Gt, value: '1'}]\n",
            {"Pod default/web-0: spec.tolerations[0].operator: Unsupported value: \"Gt\": "
             "supported values: "
             "\"Equal\", \"Exists\""}},
        ErrorCase{"toleration effect",
                  std::string(kPodHead) + "spec:\n  tolerations: [{key: a, effect: Never}]\n",
                  {"spec.tolerations[0].effect: Unsupported value: \"Never\""}},
        ErrorCase{
            "tolerationSeconds needs NoExecute",
            std::string(kPodHead) +
                "spec:\n  tolerations: [{key: a, effect: NoSchedule, tolerationSeconds: 5}]\n",
            {"spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be "
             "'NoExecute'"}},
        ErrorCase{"Exists with a value",
                  std::string(kPodHead) +
                      "spec:\n  tolerations: [{key: a, operator: Exists, value: b}]\n",
                  {"spec.tolerations[0].operator: Invalid value: \"Exists\": value must be empty"}},
        ErrorCase{"bad container port",
                  std::string(kPodHead) +
                      "spec:\n  containers: [{name: c, ports: [{containerPort: 70000}]}]\n",
                  {"spec.containers[0].ports[0].containerPort: Invalid value: \"70000\""}},
        ErrorCase{
            "bad init restartPolicy",
            std::string(kPodHead) + "spec:\n  initContainers: [{name: c, restartPolicy: Never}]\n",
            {"spec.initContainers[0].restartPolicy: Unsupported value: \"Never\""}},
        ErrorCase{"bad preemptionPolicy",
                  std::string(kPodHead) + "spec: {preemptionPolicy: Sometimes}\n",
                  {"spec.preemptionPolicy: Unsupported value: \"Sometimes\""}},
        ErrorCase{"PriorityClass preemptionPolicy",
                  "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "
                  "pc}\nvalue: 1\n"
                  "preemptionPolicy: Maybe\n",
                  {"PriorityClass pc: preemptionPolicy: Unsupported value: \"Maybe\""}},
        ErrorCase{"pod without a name",
                  "apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\napiVersion: "
                  "v1\nkind: Pod\n"
                  "metadata: {namespace: x}\n",
                  {"cluster.yaml: document 2: metadata.name: Required value: name or generateName "
                   "is required"}},
        ErrorCase{"node without metadata",
                  "apiVersion: v1\nkind: Node\nstatus: {}\n",
                  {"cluster.yaml: document 1: metadata.name: Required value"}},
        ErrorCase{
            "unnamed object with a bad field",
            "apiVersion: v1\nkind: Pod\nmetadata: {generateName: x-}\nspec: {containers: 3}\n",
            {"cluster.yaml: document 1: spec.containers: expected array, got string"}},
        ErrorCase{"error inside an unnamed List item",
                  "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, "
                  "metadata: {name: a}}\n"
                  "- {apiVersion: v1, kind: Node, metadata: {generateName: n-}, spec: {taints: "
                  "[{key: a, effect: X}]}}\n",
                  {"cluster.yaml: document 1: items[1].spec.taints[0].effect: Unsupported value"}},
        ErrorCase{"error inside a named List item",
                  "---\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n"
                  "  metadata: {name: p}\n  spec: {nodeName: [x]}\n",
                  {"cluster.yaml: Pod default/p: spec.nodeName: expected string, got array"}},
        ErrorCase{"items not a list",
                  "apiVersion: v1\nkind: List\nitems: {a: b}\n",
                  {"document 1: items: expected array, got object"}},
        ErrorCase{"document not an object",
                  "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n- 1\n- 2\n",
                  {"cluster.yaml: document 2: <root>: expected object, got array"}},
        ErrorCase{"kind not a string",
                  "kind: {a: b}\n",
                  {"document 1: kind: expected string, got object"}},
        ErrorCase{"malformed YAML",
                  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a\n  b: c\n",
                  {"cluster.yaml: malformed YAML at line ", ", column "}},
        ErrorCase{"malformed JSON",
                  "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}",
                  {"cluster.yaml: malformed YAML at line 1"}},
        ErrorCase{"bad YAML indentation",
                  "kind: Pod\n metadata: x\n  - a\n",
                  {"cluster.yaml: malformed YAML at line"}}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) {
      std::string s;
      for (char ch : info.param.name) s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return s;
    });

TEST(DecodeTest, NeverThrowsOnHostileInput) {
  const std::vector<std::string> inputs = {
      "",
      "---\n---\n",
      "~",
      "42",
      "\"just a string\"",
      "kind: Pod\nmetadata: 7\n",
      "kind: Pod\nmetadata: {name: a}\nspec: {containers: [[1]]}\n",
      "kind: Pod\nmetadata: {name: a}\nspec: {containers: [null, {name: b}]}\n",
      "kind: Pod\nmetadata: {name: {x: 1}}\n",
      "kind: Node\nmetadata: {name: a}\nstatus: {capacity: {? [a] : 1}}\n",
      "kind: List\nitems: [1, [2], {kind: List, items: [{kind: Pod}]}]\n",
      std::string(2000, '[') + std::string(2000, ']'),
      std::string("kind: Pod\0metadata: x\n", 22),
      "a: &x [*x]\n",
      "a: *undefined\n",
      "\xff\xfe\x00\x01",
  };
  for (const std::string& in : inputs) {
    Manifests m;
    std::string err;
    bool ok = false;
    EXPECT_NO_THROW(ok = OkOrMessage(DecodeManifests(in, "fuzz.yaml", &m), &err))
        << in.substr(0, 40);
    if (!ok) {
      EXPECT_EQ(err.rfind("fuzz.yaml", 0), 0u) << err;
    }
  }
}

class LoadManifestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "phalanx-api-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(LoadManifestsTest, DirectoryInNameOrder) {
  Write("b.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: from-b}\n");
  Write("a.json", R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "from-a"}})");
  Write("c.yml", "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n");
  Write("notes.txt", "this is not YAML: [");
  std::filesystem::create_directory(dir_ / "sub.yaml");  // directories are skipped

  Manifests m;
  std::string err;
  ASSERT_TRUE(OkOrMessage(LoadManifests(dir_.string(), &m), &err)) << err;
  ASSERT_EQ(m.pods.size(), 2u);
  EXPECT_EQ(m.pods[0].metadata.name, "from-a");
  EXPECT_EQ(m.pods[1].metadata.name, "from-b");
  EXPECT_EQ(m.nodes.size(), 1u);

  Manifests single;
  ASSERT_TRUE(OkOrMessage(LoadManifests((dir_ / "c.yml").string(), &single), &err)) << err;
  EXPECT_EQ(single.nodes.size(), 1u);
  EXPECT_TRUE(single.pods.empty());
}

TEST_F(LoadManifestsTest, ErrorsNameTheFile) {
  Write("a.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\n");
  Write("b.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {overhead: {cpu: lots}}\n");
  Manifests m;
  std::string err;
  ASSERT_FALSE(OkOrMessage(LoadManifests(dir_.string(), &m), &err));
  EXPECT_NE(err.find((dir_ / "b.yaml").string() + ": Pod default/bad: spec.overhead.cpu: "),
            std::string::npos)
      << err;
  EXPECT_TRUE(m.pods.empty()) << "nothing is appended on failure";

  ASSERT_FALSE(OkOrMessage(LoadManifests((dir_ / "missing.yaml").string(), &m), &err));
  EXPECT_EQ(err.rfind((dir_ / "missing.yaml").string() + ": cannot read: ", 0), 0u) << err;
}

// spec.resources (KEP-2837) with SetDefaults_Pod's pod-level defaulting
// (pkg/apis/core/v1/defaults.go defaultPodRequests), and the container statuses in-place
// resize reads.
TEST(DecodeTest, PodLevelResourcesAndResizeStatus) {
  Manifests m = MustDecode(R"(
apiVersion: v1
kind: Pod
metadata: {name: limits-only}
spec:
  resources:
    limits: {cpu: "64", memory: 2Gi}
  containers:
  - name: app
    resources: {requests: {memory: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: requests-only}
spec:
  resources: {requests: {cpu: "64"}}
  containers: [{name: app}]
---
apiVersion: v1
kind: Pod
metadata: {name: resized}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: "1"}}
status:
  conditions: [{type: PodResizePending, status: "True", reason: Infeasible}]
  containerStatuses:
  - name: app
    allocatedResources: {cpu: "3"}
    resources: {requests: {cpu: "2"}}
  - name: other
)");
  ASSERT_EQ(m.pods.size(), 3u);
  // cpu: no container requests it, so the pod-level limit; memory: the containers' 1Gi.
  ASSERT_TRUE(m.pods[0].spec.resources.has_value());
  EXPECT_EQ(m.pods[0].spec.resources->requests.at("cpu").Value(), 64);
  EXPECT_EQ(m.pods[0].spec.resources->requests.at("memory").Value(), int64_t{1} << 30);
  EXPECT_EQ(PodRequests(m.pods[0]).milli_cpu, 64000);
  EXPECT_EQ(PodRequests(m.pods[1]).milli_cpu, 64000);
  EXPECT_FALSE(m.pods[1].spec.resources->limits.count("cpu"));
  const PodStatus& st = m.pods[2].status;
  ASSERT_EQ(st.container_statuses.size(), 2u);
  EXPECT_EQ(st.container_statuses[0].allocated_resources->at("cpu").Value(), 3);
  EXPECT_EQ(st.container_statuses[0].resources_requests->at("cpu").Value(), 2);
  EXPECT_FALSE(st.container_statuses[1].allocated_resources.has_value());
  EXPECT_EQ(PodRequests(m.pods[2]).milli_cpu, 3000);  // max(actuated 2, allocated 3)
  // Only cpu, memory and hugepages-* may be set at pod level (validatePodResourceName).
  Manifests bad;
  std::string err;
  EXPECT_FALSE(OkOrMessage(DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources: {requests: {ephemeral-storage: 1Gi}}
  containers: [{name: app}]
)",
                                           "x.yaml", &bad),
                           &err));
  EXPECT_NE(err.find("spec.resources.requests.ephemeral-storage"), std::string::npos) << err;
}

}  // namespace
}  // namespace phalanx::api

namespace phalanx::api {
namespace {

constexpr const char* kPdbHead =
    "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, namespace: prod}\n";

TEST(DecodePodDisruptionBudgetTest, SpecAndStatus) {
  Manifests m;
  const std::string text = std::string(kPdbHead) +
                           "spec:\n  selector: {matchLabels: {app: db}}\n  maxUnavailable: 25%\n"
                           "  unhealthyPodEvictionPolicy: AlwaysAllow\n"
                           "status:\n  disruptionsAllowed: 1\n  currentHealthy: 3\n"
                           "  desiredHealthy: 2\n  expectedPods: 3\n  observedGeneration: 4\n"
                           "  disruptedPods: {db-0: \"2024-01-02T03:04:05Z\"}\n"
                           "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                           "metadata: {name: web}\nspec: {minAvailable: 2}\n";
  ASSERT_TRUE(DecodeManifests(text, "pdb.yaml", &m).ok());
  ASSERT_EQ(m.pod_disruption_budgets.size(), 2u);
  const PodDisruptionBudget& db = m.pod_disruption_budgets[0];
  EXPECT_EQ(db.Key(), "prod/db");
  ASSERT_TRUE(db.spec.selector);
  EXPECT_EQ(db.spec.selector->match_labels.at("app"), "db");
  ASSERT_TRUE(db.spec.max_unavailable);
  EXPECT_TRUE(db.spec.max_unavailable->is_string);
  EXPECT_EQ(db.spec.max_unavailable->str_value, "25%");
  EXPECT_FALSE(db.spec.min_available);
  EXPECT_EQ(db.spec.unhealthy_pod_eviction_policy, "AlwaysAllow");
  EXPECT_EQ(db.status.disruptions_allowed, 1);
  EXPECT_EQ(db.status.current_healthy, 3);
  EXPECT_EQ(db.status.desired_healthy, 2);
  EXPECT_EQ(db.status.expected_pods, 3);
  EXPECT_EQ(db.status.observed_generation, 4);
  ASSERT_EQ(db.status.disrupted_pods.count("db-0"), 1u);
  EXPECT_GT(db.status.disrupted_pods.at("db-0"), 0);
  const PodDisruptionBudget& web = m.pod_disruption_budgets[1];
  EXPECT_EQ(web.Key(), "default/web");
  EXPECT_FALSE(web.spec.selector);  // nil: selects nothing
  ASSERT_TRUE(web.spec.min_available);
  EXPECT_FALSE(web.spec.min_available->is_string);
  EXPECT_EQ(web.spec.min_available->int_value, 2);
  EXPECT_TRUE(m.ignored.empty());
}

// IsNotMoreThan100Percent reads the digits with strconv.Atoi: leading zeros are allowed.
TEST(DecodePodDisruptionBudgetTest, PercentWithLeadingZeros) {
  Manifests m;
  ASSERT_TRUE(
      DecodeManifests(std::string(kPdbHead) + "spec: {minAvailable: 0100%}\n", "p.yaml", &m).ok());
  ASSERT_EQ(m.pod_disruption_budgets.size(), 1u);
  ASSERT_TRUE(m.pod_disruption_budgets[0].spec.min_available);
  EXPECT_EQ(m.pod_disruption_budgets[0].spec.min_available->str_value, "0100%");
  Manifests m2;
  EXPECT_TRUE(
      DecodeManifests(std::string(kPdbHead) + "spec: {maxUnavailable: 00%}\n", "p.yaml", &m2).ok());
}

TEST(DecodePodDisruptionBudgetTest, QuotedIntegerIsAStringAndBetaIsTyped) {
  Manifests m;
  ASSERT_FALSE(
      DecodeManifests(std::string(kPdbHead) + "spec: {minAvailable: \"2\"}\n", "p.yaml", &m)
          .ok());  // "2" is a string, not a percent
  const std::string beta =
      "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: old}\n";
  ASSERT_TRUE(DecodeManifests(beta, "p.yaml", &m).ok());
  ASSERT_EQ(m.pod_disruption_budgets.size(), 1u);
  EXPECT_EQ(m.pod_disruption_budgets[0].api_version, "policy/v1beta1");
  EXPECT_TRUE(m.ignored.empty());
}

TEST(DecodePodDisruptionBudgetTest, ErrorsNameFileObjectAndField) {
  struct Case {
    std::string spec;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"spec: {maxUnavailable: -1}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec.maxUnavailable: Invalid value: \"-1\": must be "
       "greater than or equal to 0"},
      {"spec: {minAvailable: 120%}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec.minAvailable: Invalid value: \"120%\": must "
       "not be greater than 100%"},
      {"spec: {minAvailable: half}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec.minAvailable: Invalid value: \"half\": a valid "
       "percent string"},
      {"spec: {minAvailable: 1, maxUnavailable: 1}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec: Invalid value: "
       "minAvailable and maxUnavailable cannot be both set"},
      {"spec: {unhealthyPodEvictionPolicy: \"\"}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec.unhealthyPodEvictionPolicy: Unsupported value: "
       "\"\""},
      {"spec: {maxUnavailable: 0101%}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec.maxUnavailable: Invalid value: \"0101%\": must "
       "not be greater than 100%"},
      {"spec: {unhealthyPodEvictionPolicy: Sometimes}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec.unhealthyPodEvictionPolicy: Unsupported value: "
       "\"Sometimes\""},
      {"spec: {selector: {matchExpressions: [{key: app, operator: Near}]}}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec.selector"},
      {"spec: {minAvailable: [1]}",
       "pdb.yaml: PodDisruptionBudget prod/db: spec.minAvailable: expected integer or string"},
      {"status: {disruptionsAllowed: many}",
       "pdb.yaml: PodDisruptionBudget prod/db: status.disruptionsAllowed: expected integer"},
      {"status: {disruptedPods: {db-0: yesterday}}",
       "pdb.yaml: PodDisruptionBudget prod/db: status.disruptedPods.db-0: Invalid value"},
  };
  for (const auto& c : cases) {
    Manifests m;
    Status s = DecodeManifests(std::string(kPdbHead) + c.spec + "\n", "pdb.yaml", &m);
    ASSERT_FALSE(s.ok()) << c.spec;
    EXPECT_NE(std::string(s.message()).find(c.want), std::string::npos)
        << c.spec << "\n got: " << s.message();
  }
}

}  // namespace
}  // namespace phalanx::api
