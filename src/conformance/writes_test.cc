// Conformance of what Phalanx writes: the real scheduler runs on the in-process Store, and
// every write it makes also goes through the real client code (client::LiveClusterClient,
// app::LiveQueueStatusSink, client::LeaderElector) to a recording HTTP server. Each request
// body is then validated against the schema the API server would decode it with (schema/
// schema.h: the 1.36 OpenAPI documents and the projects' CRDs): field names, types,
// required fields, enums; an unknown field fails, since a real server prunes or refuses it.
// Merge patches of an object's status are also applied to the object and the result
// checked whole. An Event must name an object of a served kind and version.
//
// Scenarios: a pod that binds and one that cannot (PodScheduled condition, events); a
// preemption (victim deleted with a DisruptionTarget condition, nominatedNodeName); gangs of
// every dialect with a PodGroup object (Coscheduling, the scheduling.sigs.k8s.io PodGroup
// Koordinator installs, Volcano, KAI, scheduling.k8s.io v1alpha2), each placed and
// rejected; a DRA claim allocated (claim status); a local PV bound at PreBind (PV / PVC
// updates); KAI and Volcano Queues and an ElasticQuota (queue status); GPU-share annotations;
// the leader election Lease.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/queue_status_sink.h"
#include "client/cluster_client.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "conformance/recording_server.h"
#include "conformance/routes.h"
#include "conformance/tee_client.h"
#include "dra/model.h"
#include "quota/queue_status.h"
#include "scheduler/scheduler_test_env.h"
#include "schema/schema.h"
#include "schema/schema_testing.h"
#include "volume/objects.h"

namespace phalanx::conformance {
namespace {

using json = nlohmann::json;
using schema::GroupVersionKind;
using schema::WriteKind;

client::RestConfig Config(const std::string& url) {
  client::RestConfig c;
  c.server = url;
  c.qps = 0;
  return c;
}

// The objects of a manifest text as JSON, by "apiVersion/kind/ns/name": the base a status
// merge patch applies to.
std::map<std::string, json> Bases(const std::string& yaml) {
  std::map<std::string, json> out;
  for (const auto& d : YAML::LoadAll(yaml)) {
    if (!d.IsMap()) continue;
    json j = schema::YamlToJson(d);
    const std::string ns = j["metadata"].value("namespace", "");
    out[j.value("apiVersion", "") + "/" + j.value("kind", "") + "/" + ns + "/" +
        j["metadata"].value("name", "")] = j;
  }
  return out;
}

// One scenario run: the env's scheduler with a tee to a LiveClusterClient on `server`.
struct ScenarioRun {
  explicit ScenarioRun(RecordingServer& server)
      : api(Config(server.url())), events(Config(server.url())), live(api, events, live_clock) {
    scheduler::SchedulerTestOptions o;
    o.client = [this](store::Store& st) -> framework::ClusterClient* {
      tee = std::make_unique<TeeClusterClient>(st, live);
      return tee.get();
    };
    env = std::make_unique<scheduler::SchedulerTestEnv>(std::move(o));
  }
  // Applies the manifests, tells the live client the objects' uids (as its object informer
  // would), runs until idle and flushes the asynchronous writers.
  void Apply(const std::string& yaml) {
    env->Apply(yaml);
    for (const auto& o : env->store.ListObjects()) live.ObserveObject(*o, false);
    bases = Bases(yaml);
  }
  void Finish() {
    env->RunUntilIdle();
    env->AdvanceAndRun(30 * api::kNanosPerSecond);
    live.Flush(std::chrono::seconds(20));
  }

  framework::VirtualClock live_clock{1'700'000'000LL * api::kNanosPerSecond};
  client::RestClient api, events;
  client::LiveClusterClient live;
  std::unique_ptr<TeeClusterClient> tee;
  std::unique_ptr<scheduler::SchedulerTestEnv> env;
  std::map<std::string, json> bases;
};

// Validation of every recorded write.
struct Tally {
  std::map<std::string, int> by_route;  // "v1 Pod strategic merge patch" -> count
  int writes = 0, values = 0;
  std::vector<std::string> failures;
  // Writes of a kind whose CRD the reference data lacks (MissingFromReferenceData).
  std::vector<std::string> unvalidated;
};

const char* KindWord(WriteKind k) {
  switch (k) {
    case WriteKind::kObject:
      return "object";
    case WriteKind::kMergePatch:
      return "merge patch";
    case WriteKind::kStrategicMergePatch:
      return "strategic merge patch";
  }
  return "?";
}

// When the schema of `gvk` is missing because the reference data lacks its CRD (a git
// symbolic link checked out as text whose target is not in this copy of ../shared/upstream,
// as scheduler-plugins' manifests/crds are), the loader's message; "" otherwise. Writes of
// such a kind are listed as not validated, with that message, instead of failing: the
// data, not Phalanx, is short.
std::string MissingFromReferenceData(const schema::SchemaSet& schemas,
                                     const GroupVersionKind& gvk) {
  if (schemas.Has(gvk)) return "";
  for (const auto& v : schemas.Validate(json::object(), gvk).violations) {
    const std::string m = v.ToString();
    if (m.find("the CRD is missing from this copy") != std::string::npos) return m;
  }
  return "";
}

void Check(const schema::SchemaSet& schemas, const std::vector<RecordedRequest>& reqs,
           const std::map<std::string, json>& bases, Tally* t) {
  for (const auto& r : reqs) {
    if (r.method == "GET") continue;
    const auto route = RouteOf(r);
    const std::string what = r.method + " " + r.path + " (" + r.content_type + ")";
    if (!route) {
      t->failures.push_back(what + ": a write the route table does not know");
      continue;
    }
    json body;
    try {
      body = json::parse(r.body);
    } catch (const json::exception& e) {
      t->failures.push_back(what + ": body is not JSON: " + e.what() + ": " + r.body);
      continue;
    }
    if (const std::string m = MissingFromReferenceData(schemas, route->gvk); !m.empty()) {
      t->unvalidated.push_back(what + ": " + m);
      continue;
    }
    ++t->writes;
    ++t->by_route[route->gvk.String() + (route->subresource_status ? " /status " : " ") +
                  KindWord(route->kind)];
    schema::Result res = schemas.Validate(body, route->gvk, route->kind);
    t->values += res.values_checked;
    for (const auto& v : res.violations) {
      t->failures.push_back(what + ": " + v.ToString() + "\n  body: " + r.body);
    }
    // A merge patch of an object we know: the patched object must be valid whole too.
    if (route->kind == WriteKind::kMergePatch && route->gvk.kind != "Event") {
      auto b = bases.find(route->gvk.ApiVersion() + "/" + route->gvk.kind + "/" + route->ns + "/" +
                          route->name);
      if (b != bases.end()) {
        for (const auto& v : schemas.ValidateMergePatched(b->second, body, route->gvk).violations) {
          t->failures.push_back(what + ": " + v.ToString());
        }
      }
    }
    if (route->gvk.kind == "Event" && r.method == "POST") {
      // The involved object must be of a kind and version the server serves (else kubectl
      // describe never shows the event), in the event's namespace.
      const json& io = body["involvedObject"];
      const GroupVersionKind ref = GroupVersionKind::FromObject(io);
      if (const std::string m = MissingFromReferenceData(schemas, ref); !m.empty()) {
        t->unvalidated.push_back(what + ": involvedObject " + ref.String() + ": " + m);
      } else if (!schemas.Has(ref)) {
        t->failures.push_back(what + ": involvedObject " + ref.String() + " is not a served kind");
      }
      const std::string ns = io.value("namespace", "");
      if (body["metadata"].value("namespace", "") != (ns.empty() ? "default" : ns)) {
        t->failures.push_back(what + ": event namespace differs from the involved object's");
      }
    }
  }
}

const std::string kNodes = R"(apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a}}
status: {capacity: {cpu: "16", memory: 64Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2, topology.kubernetes.io/zone: b}}
status: {capacity: {cpu: "16", memory: 64Gi, pods: "110"}}
)";

std::string Pod(const std::string& name, const std::string& cpu, const std::string& meta = "",
                const std::string& spec = "") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: ml" +
         (meta.empty() ? "" : ", " + meta) + "}\nspec:\n" + spec +
         "  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu +
         "\"}}}]\n";
}

// Two gangs of a dialect: `<prefix>-ok` (2 pods of 1 cpu) and `<prefix>-big` (2 of 20 cpu,
// which no node holds).
std::string Gangs(const std::string& api_version, const std::string& prefix,
                  const std::string& spec_ok, const std::string& spec_big,
                  const std::function<std::string(const std::string&)>& member) {
  std::string out;
  for (const auto& [suffix, spec, cpu] :
       {std::tuple<std::string, std::string, std::string>{"ok", spec_ok, "1"},
        {"big", spec_big, "20"}}) {
    const std::string g = prefix + "-" + suffix;
    out += "---\napiVersion: " + api_version + "\nkind: PodGroup\nmetadata: {name: " + g +
           ", namespace: ml}\nspec: " + spec + "\n";
    for (int i = 0; i < 2; ++i) out += Pod(g + "-" + std::to_string(i), cpu, member(g));
  }
  return out;
}

class WritesTest : public ::testing::Test {
 protected:
  void Validate(const RecordingServer& server, const std::map<std::string, json>& bases,
                int min_writes) {
    PHALANX_UPSTREAM_SCHEMAS(schemas);
    Tally t;
    Check(*schemas, server.requests(), bases, &t);
    std::string table;
    for (const auto& [k, n] : t.by_route) table += "  " + std::to_string(n) + "  " + k + "\n";
    std::cout << t.writes << " writes validated (" << t.values << " values):\n" << table;
    if (!t.unvalidated.empty()) {
      std::cout << t.unvalidated.size()
                << " writes NOT validated (their CRD is missing from the reference data):\n";
      for (const auto& u : t.unvalidated) std::cout << "  " << u << "\n";
    }
    for (const auto& f : t.failures) ADD_FAILURE() << f;
    EXPECT_GE(t.writes, min_writes) << table;
    total_writes += t.writes;
  }
  static int total_writes;
};
int WritesTest::total_writes = 0;

TEST_F(WritesTest, PodsBindingsConditionsAndEvents) {
  RecordingServer server;
  ScenarioRun run(server);
  const std::string y = kNodes + Pod("fits", "1") + Pod("too-big", "100");
  run.Apply(y);
  run.Finish();
  EXPECT_EQ(run.env->NodeOf("fits", "ml"), "n1");
  Validate(server, run.bases, 4);  // binding, 2 events, PodScheduled condition
}

TEST_F(WritesTest, Preemption) {
  RecordingServer server;
  ScenarioRun run(server);
  api::PriorityClass high;
  high.metadata.name = "high";
  high.value = 1000;
  ASSERT_TRUE(run.env->store.CreatePriorityClass(high).ok());
  std::string y = kNodes;
  y += Pod("low-1", "15", "", "  nodeName: n1\n");
  y += Pod("low-2", "15", "", "  nodeName: n2\n");
  y += Pod("urgent", "10", "", "  priorityClassName: high\n");
  run.Apply(y);
  run.Finish();
  int deletes = 0;
  for (const auto& r : server.requests()) deletes += r.method == "DELETE";
  EXPECT_EQ(deletes, 1);
  Validate(server, run.bases, 5);
}

TEST_F(WritesTest, GangStatusOfEveryDialect) {
  RecordingServer server;
  ScenarioRun run(server);
  auto label = [](const std::string& key) {
    return [key](const std::string& g) { return "labels: {" + key + ": " + g + "}"; };
  };
  auto annotation = [](const std::string& key) {
    return [key](const std::string& g) { return "annotations: {" + key + ": " + g + "}"; };
  };
  std::string y = kNodes;
  y += Gangs("scheduling.x-k8s.io/v1alpha1", "cosched", "{minMember: 2}", "{minMember: 2}",
             label("scheduling.x-k8s.io/pod-group"));
  y += Gangs("scheduling.sigs.k8s.io/v1alpha1", "koord", "{minMember: 2}", "{minMember: 2}",
             label("pod-group.scheduling.sigs.k8s.io"));
  y += Gangs("scheduling.volcano.sh/v1beta1", "volcano", "{minMember: 2}", "{minMember: 2}",
             annotation("scheduling.k8s.io/group-name"));
  y += Gangs("scheduling.run.ai/v2alpha2", "kai", "{minMember: 2, queue: default}",
             "{minMember: 2, queue: default}", annotation("pod-group-name"));
  // The 1.36 Workload API: pods name the PodGroup in spec.schedulingGroup.
  for (const auto& [g, cpu] :
       {std::pair<std::string, std::string>{"upstream-ok", "1"}, {"upstream-big", "20"}}) {
    y += "---\napiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: " + g +
         ", namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: 2}}, "
         "schedulingConstraints: {topology: [{key: topology.kubernetes.io/zone}]}}\n";
    for (int i = 0; i < 2; ++i) {
      y += Pod(g + "-" + std::to_string(i), cpu, "",
               "  schedulingGroup: {podGroupName: " + g + "}\n");
    }
  }
  run.Apply(y);
  run.Finish();
  EXPECT_NE(run.env->NodeOf("upstream-ok-0", "ml"), "");
  EXPECT_EQ(run.env->NodeOf("upstream-big-0", "ml"), "");
  // Every dialect's status was written, placed and rejected.
  std::set<std::string> written;
  for (const auto& r : server.requests()) {
    if (r.method == "PATCH" && r.path.find("/podgroups/") != std::string::npos)
      written.insert(r.path);
  }
  for (const char* g : {"cosched", "koord", "volcano", "kai", "upstream"}) {
    for (const char* s : {"-ok", "-big"}) {
      bool found = false;
      for (const auto& p : written)
        found = found || p.find(std::string("/") + g + s) != std::string::npos;
      EXPECT_TRUE(found) << "no status write for " << g << s;
    }
  }
  Validate(server, run.bases, 20);
}

TEST_F(WritesTest, ClaimStatusVolumesAndAnnotations) {
  RecordingServer server;
  ScenarioRun run(server);
  std::string y = kNodes + R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-as-extended-resource}
spec:
  extendedResourceName: example.com/gpu
  selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, generation: 0, resourceSliceCount: 1}, devices: [{name: g0}, {name: g1}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one-gpu, namespace: ml}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fabric}
spec: {selectors: [{cel: {expression: "device.driver == 'fabric.example.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric}
spec:
  driver: fabric.example.com
  allNodes: true
  pool: {name: fabric, generation: 0, resourceSliceCount: 1}
  devices:
  - {name: f0, bindsToNode: true, bindingConditions: [FabricDeviceReady], bindingFailureConditions: [FabricDeviceFailed]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: fabric-gpu, namespace: ml}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: fabric}}]}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: shared}
spec: {selectors: [{cel: {expression: "device.driver == 'shared.example.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-shared}
spec:
  driver: shared.example.com
  nodeName: n1
  pool: {name: n1-shared, generation: 0, resourceSliceCount: 1}
  devices:
  - name: s0
    allowMultipleAllocations: true
    capacity:
      compute: {value: "1000", requestPolicy: {default: "1000", validRange: {min: "1", step: "1"}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: half-gpu, namespace: ml}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: shared, capacity: {requests: {compute: "500"}}}}]}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-n2}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n2]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ml}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}
)";
  y += Pod("claims-gpu", "1", "", "  resourceClaims: [{name: gpu, resourceClaimName: one-gpu}]\n");
  // Consumable capacity (KEP-5075): the result carries consumedCapacity and a shareID.
  y += Pod("half-gpu", "1", "", "  resourceClaims: [{name: gpu, resourceClaimName: half-gpu}]\n");
  // An extended resource backed by DRA: PreBind creates the pod's claim (POST), writes its
  // status and patches the pod's status.extendedResourceClaimStatus.
  y += R"(---
apiVersion: v1
kind: Pod
metadata: {name: ext-gpu, namespace: ml}
spec:
  containers:
  - {name: c, image: busybox, resources: {requests: {example.com/gpu: "1"}, limits: {example.com/gpu: "1"}}}
)";
  // KEP-5007: its claim's status carries allocationTimestamp, the result's binding
  // conditions and the node selector bindsToNode pins; the pod then waits in PreBind.
  y += Pod("waits-for-fabric", "1", "",
           "  resourceClaims: [{name: gpu, resourceClaimName: fabric-gpu}]\n");
  run.Apply(y);
  run.Finish();
  {
    auto obj = run.env->store.GetObject("ResourceClaim.resource.k8s.io/ml/half-gpu");
    ASSERT_NE(obj, nullptr);
    const YAML::Node result = (*obj->object)["status"]["allocation"]["devices"]["results"][0];
    ASSERT_TRUE(result.IsDefined());
    EXPECT_EQ(result["device"].Scalar(), "s0");
    EXPECT_EQ(result["consumedCapacity"]["compute"].Scalar(), "500");
    EXPECT_EQ(result["shareID"].Scalar().size(), 36u);
  }
  // The scheduler's next write of that claim after the driver reported device status (here
  // a reservation of the allocated claim, through the real client): status.devices is kept.
  {
    auto obj = run.env->store.GetObject("ResourceClaim.resource.k8s.io/ml/fabric-gpu");
    ASSERT_NE(obj, nullptr);
    ASSERT_TRUE((*obj->object)["status"]["allocation"]["allocationTimestamp"].IsDefined());
    api::Unstructured with_devices = *obj;
    YAML::Node doc = YAML::Clone(*obj->object);
    // shareID: one of the list-map keys of status.devices in the 1.36 schema, which the
    // validator requires of every entry.
    doc["status"]["devices"] = YAML::Load(
        "[{driver: fabric.example.com, pool: fabric, device: f0, shareID: "
        "1f4d9a4c-8c1e-4a5e-9d67-2f2b6f0c9a11, conditions: [{type: "
        "FabricDeviceReady, status: \"True\", reason: Attached, message: attached, "
        "lastTransitionTime: \"2023-11-14T22:13:30Z\", observedGeneration: 1}]}]");
    with_devices.object = std::make_shared<const YAML::Node>(doc);
    auto claim = dra::ParseResourceClaim(with_devices);
    ASSERT_TRUE(claim.ok()) << claim.status();
    ASSERT_EQ(claim->devices.size(), 1u);
    const api::Unstructured written = dra::WithClaimStatus(with_devices, *claim);
    EXPECT_TRUE((*written.object)["status"]["devices"].IsDefined());
    EXPECT_TRUE(run.live.UpdateResourceClaimStatus(written).ok());
  }
  // VolumeBinding's PreBind writes (a PV's claimRef, a claim's selected-node annotation):
  // the objects as its code changes them, through the real client (a run would wait for a
  // PV controller this env does not have).
  auto pv = run.env->store.GetObject("PersistentVolume.//pv-n2");
  auto pvc = run.env->store.GetObject("PersistentVolumeClaim./ml/data");
  ASSERT_TRUE(pv && pvc);
  const volume::PersistentVolumeClaim claim = volume::DecodePersistentVolumeClaim(pvc);
  EXPECT_TRUE(run.live.PutObject(volume::WithClaimRef(*pv, claim)).ok());
  EXPECT_TRUE(
      run.live.PutObject(volume::WithAnnotation(*pvc, volume::kAnnSelectedNode, "n2")).ok());
  EXPECT_EQ(run.env->NodeOf("claims-gpu", "ml"), "n1");
  // GpuShare's PreBind annotation patch (not in the default profile): the real client call.
  api::Pod p;
  p.metadata.name = "claims-gpu";
  p.metadata.namespace_ = "ml";
  p.metadata.uid = "u-1";
  EXPECT_TRUE(run.live.PatchPodAnnotations(p, {{"gpushare.phalanx.dev/devices", "0"}}).ok());
  int claim_puts = 0, pv_puts = 0, fabric_puts = 0;
  std::string fabric_body;
  for (const auto& r : server.requests()) {
    claim_puts +=
        r.method == "PUT" && r.path.find("/resourceclaims/one-gpu/status") != std::string::npos;
    if (r.method == "PUT" &&
        r.path.find("/resourceclaims/fabric-gpu/status") != std::string::npos) {
      if (++fabric_puts == 1) fabric_body = r.body;
    }
    pv_puts += r.method == "PUT" && r.path.find("/persistentvolume") != std::string::npos;
  }
  EXPECT_EQ(claim_puts, 1);
  EXPECT_EQ(fabric_puts, 2);  // PreBind's write and the one above
  for (const char* field : {"\"allocationTimestamp\"", "\"bindingConditions\"",
                            "\"bindingFailureConditions\"", "\"metadata.name\""}) {
    EXPECT_NE(fabric_body.find(field), std::string::npos) << field << " in " << fabric_body;
  }
  EXPECT_GE(pv_puts, 1);
  EXPECT_EQ(run.env->NodeOf("ext-gpu", "ml"), "n1");
  int claim_posts = 0, ext_status_patches = 0;
  for (const auto& r : server.requests()) {
    claim_posts += r.method == "POST" && r.path.ends_with("/namespaces/ml/resourceclaims");
    ext_status_patches += r.method == "PATCH" && r.path.ends_with("/pods/ext-gpu/status") &&
                          r.body.find("extendedResourceClaimStatus") != std::string::npos;
  }
  EXPECT_EQ(claim_posts, 1);
  EXPECT_EQ(ext_status_patches, 1);
  Validate(server, run.bases, 8);
}

TEST_F(WritesTest, QueueStatusOfEveryDialect) {
  RecordingServer server;
  ScenarioRun run(server);
  const std::string y = kNodes + R"(---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 1, capability: {cpu: "8"}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: training}
spec: {resources: {cpu: {quota: 8, limit: -1, overQuotaWeight: 1}, gpu: {quota: 0, limit: -1, overQuotaWeight: 1}, memory: {quota: -1, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: ml-quota, namespace: ml}
spec: {min: {cpu: "4"}, max: {cpu: "8"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: vq, namespace: ml}
spec: {minMember: 1, queue: research}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: kq, namespace: ml}
spec: {minMember: 1, queue: training}
)" + Pod("vq-0", "1", "annotations: {scheduling.k8s.io/group-name: vq}") +
                        Pod("kq-0", "1", "annotations: {pod-group-name: kq}") + Pod("eq-0", "1");
  run.Apply(y);
  run.Finish();
  app::LiveQueueStatusSink sink(run.api, run.live);
  quota::QueueStatusWriter writer(run.env->sched->queue_manager(), sink, 0);
  const auto c = writer.Sync(run.env->clock.Now());
  EXPECT_GE(c.writes, 3);
  run.live.Flush(std::chrono::seconds(10));
  Validate(server, run.bases, 3);
}

TEST_F(WritesTest, LeaderElectionLease) {
  RecordingServer server;  // GET 404: no Lease yet; POST creates it
  client::RestClient api(Config(server.url()));
  framework::VirtualClock clock(1'700'000'000LL * api::kNanosPerSecond);
  client::LeaderElectionConfig cfg;
  cfg.identity = "phalanx-0";
  client::LeaderElector elector(api, cfg, clock);
  std::atomic<bool> stop{false};
  EXPECT_TRUE(elector.Acquire(stop));
  Validate(server, {}, 1);
}

}  // namespace
}  // namespace phalanx::conformance
