// VolumeBinding against a volume::Catalog fed with manifests: upstream's cases of
// volume_binding_test.go / scheduler_binder_test.go (bound claims and PV node affinity,
// unbound Immediate claims, WaitForFirstConsumer static matching and provisioning with
// allowedTopologies and CSIStorageCapacity), the assume / revert cycle, the in-flight
// exclusion that keeps two gang members off one PV, PreBind's writes, ephemeral claims, and
// bad input (malformed node affinity, missing class, negative request); capacity scoring
// (upstream TestVolumeBinding's "... with close capacity are preferred" cases and the
// StorageCapacityScoring provisioning case) and VolumeBindingArgs.shape validation.
#include "plugins/volumebinding/volume_binding.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "config/config.h"
#include "framework/runtime.h"
#include "plugins/registry.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::volumebinding {
namespace {

using framework::Code;

class VolumeBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_.services().Provide<volume::Catalog>(&catalog_);
    std::vector<framework::NodeInfo> nodes;
    for (const auto& [name, zone] : std::vector<std::pair<std::string, std::string>>{
             {"node-a", "z1"}, {"node-b", "z1"}, {"node-c", "z2"}}) {
      nodes.emplace_back(std::make_shared<api::Node>(testing::NodeBuilder(name)
                                                         .Label("kubernetes.io/hostname", name)
                                                         .Label("zone", zone)
                                                         .Capacity({{"cpu", "8"}})
                                                         .Obj()));
    }
    handle_.SetNodes(std::move(nodes));
    auto p = VolumeBinding::New(nullptr, handle_);
    ASSERT_TRUE(p.ok());
    plugin_.reset(dynamic_cast<VolumeBinding*>(p.value().release()));
  }

  // Adds every object of `yaml` to the catalog; returns the decode errors.
  std::string Add(const std::string& yaml) {
    api::Manifests m;
    EXPECT_EQ(api::DecodeManifests(yaml, "test", &m), absl::OkStatus());
    std::string errs;
    for (auto& o : m.objects) {
      if (o.metadata.namespace_.empty() && o.kind == "PersistentVolumeClaim") {
        o.metadata.namespace_ = "default";
      }
      errs +=
          std::string(catalog_.OnObjectAdd(std::make_shared<const api::Unstructured>(o)).message());
    }
    return errs;
  }

  static std::string LocalPV(const std::string& name, const std::string& node,
                             const std::string& size, const std::string& cls = "local") {
    return "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
           "}\nspec:\n  capacity: {storage: " + size +
           "}\n  accessModes: [ReadWriteOnce]\n  storageClassName: " + cls +
           "\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
           "        - {key: kubernetes.io/hostname, operator: In, values: [" +
           node + "]}\n";
  }
  static std::string Claim(const std::string& name, const std::string& cls, const std::string& size,
                           const std::string& extra = "") {
    return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
           ", namespace: default}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: " +
           cls + "\n  resources: {requests: {storage: " + size + "}}\n" + extra;
  }
  // A claim the PV controller has bound to pv (spec.volumeName and bind-completed).
  static std::string BoundClaim(const std::string& name, const std::string& cls,
                                const std::string& size, const std::string& pv) {
    return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
           ", namespace: default, annotations: {pv.kubernetes.io/bind-completed: \"yes\"}}\n"
           "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: " +
           cls + "\n  resources: {requests: {storage: " + size + "}}\n  volumeName: " + pv + "\n";
  }
  static constexpr const char* kLocalClass = R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
)";

  static framework::PodInfoPtr Pod(const std::string& name, std::vector<std::string> claims) {
    api::Pod p = testing::PodBuilder(name).UID("uid-" + name).Req("cpu", "1").Obj();
    for (size_t i = 0; i < claims.size(); ++i) {
      p.spec.volumes.push_back({"v" + std::to_string(i), claims[i], nullptr, {}});
    }
    return framework::PodInfo::Make(std::make_shared<api::Pod>(p));
  }

  const framework::NodeInfo& Node(const std::string& name) {
    return *handle_.SnapshotSharedLister().Get(name);
  }

  // PreFilter then Filter on every node: "" for a fit, else the status message.
  std::map<std::string, std::string> Run(framework::CycleState& st, const framework::PodInfo& pod,
                                         framework::Status* pre = nullptr) {
    framework::PreFilterResult r;
    framework::Status s = plugin_->PreFilter(st, pod, &r);
    if (pre) *pre = s;
    std::map<std::string, std::string> out;
    if (!s.IsSuccess()) return out;
    for (const char* n : {"node-a", "node-b", "node-c"}) {
      framework::Status f = plugin_->Filter(st, pod, Node(n));
      if (!f.IsSuccess()) {
        EXPECT_EQ(f.code(), Code::kUnschedulableAndUnresolvable) << n;
      }
      out[n] = f.IsSuccess() ? "" : f.Message();
    }
    return out;
  }

  volume::Catalog catalog_;
  fake::FakeHandle handle_;
  std::unique_ptr<VolumeBinding> plugin_;
};

TEST_F(VolumeBindingTest, PodsWithoutClaimsSkip) {
  framework::CycleState st;
  framework::PreFilterResult r;
  EXPECT_EQ(plugin_->PreFilter(st, *Pod("p", {}), &r).code(), Code::kSkip);
}

TEST_F(VolumeBindingTest, BoundClaimFiltersByThePVsNodeAffinity) {
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "10Gi") +
                BoundClaim("data", "local", "5Gi", "pv-a")),
            "");
  framework::CycleState st;
  auto got = Run(st, *Pod("p", {"data"}));
  EXPECT_EQ(got["node-a"], "");
  EXPECT_EQ(got["node-b"], kReasonNodeConflict);
  EXPECT_EQ(got["node-c"], kReasonNodeConflict);
}

TEST_F(VolumeBindingTest, ClaimBoundToAMissingPV) {
  ASSERT_EQ(Add(BoundClaim("data", "local", "5Gi", "gone")), "");
  framework::CycleState st;
  EXPECT_EQ(Run(st, *Pod("p", {"data"}))["node-a"], kReasonPVNotExist);
}

// A claim with spec.volumeName that the PV controller has not bound (no
// pv.kubernetes.io/bind-completed: its PV is missing, held by another claim, or the
// controller has not got to it) is an unbound Immediate claim for the scheduler, as
// upstream's binder ("Prebound PVCs are treated as unbound immediate binding"): the pod
// is UnschedulableAndUnresolvable at PreFilter, even when the PV would admit a node. Found
// by the differential test (test/diff, --volumes): kube-scheduler v1.20.2 left such pods
// pending, Phalanx bound them.
TEST_F(VolumeBindingTest, PreBoundClaimNotBindCompletedIsUnboundImmediate) {
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "10Gi") +
                Claim("held", "local", "5Gi", "  volumeName: pv-a\n") +
                Claim("missing", "local", "5Gi", "  volumeName: gone\n")),
            "");
  for (const char* claim : {"held", "missing"}) {
    framework::CycleState st;
    framework::Status pre;
    Run(st, *Pod("p", {claim}), &pre);
    EXPECT_EQ(pre.code(), Code::kUnschedulableAndUnresolvable) << claim;
    EXPECT_EQ(pre.Message(), kReasonUnboundImmediate) << claim;
  }
  // A claim that does not exist is reported before any claim is classified, wherever it
  // is in the pod (upstream PreFilter: podHasPVCs first; kube-scheduler v1.20.2 in the
  // differential test reported the missing second claim, Phalanx the first one's
  // "unbound immediate").
  framework::CycleState st;
  framework::Status pre;
  Run(st, *Pod("p", {"held", "nonexistent"}), &pre);
  EXPECT_EQ(pre.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(pre.Message(), "persistentvolumeclaim \"nonexistent\" not found");
}

TEST_F(VolumeBindingTest, UnboundImmediateClaimIsUnresolvable) {
  ASSERT_EQ(Add(R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard}
provisioner: example.com/csi
)" + Claim("data", "standard", "5Gi") +
                Claim("noclass", "\"\"", "5Gi")),
            "");
  for (const char* claim : {"data", "noclass"}) {
    framework::CycleState st;
    framework::Status s;
    Run(st, *Pod("p", {claim}), &s);
    EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable) << claim;
    EXPECT_EQ(s.Message(), kReasonUnboundImmediate) << claim;
  }
}

TEST_F(VolumeBindingTest, WaitForFirstConsumerPicksTheSmallestFittingPV) {
  ASSERT_EQ(
      Add(std::string(kLocalClass) + LocalPV("pv-a-big", "node-a", "100Gi") +
          LocalPV("pv-a-small", "node-a", "10Gi") + LocalPV("pv-a-tiny", "node-a", "1Gi") +
          LocalPV("pv-b-other-class", "node-b", "100Gi", "other") + Claim("data", "local", "5Gi")),
      "");
  auto pod = Pod("p", {"data"});
  framework::CycleState st;
  auto got = Run(st, *pod);
  EXPECT_EQ(got["node-a"], "");
  EXPECT_EQ(got["node-b"], kReasonBindConflict);
  EXPECT_EQ(got["node-c"], kReasonBindConflict);
  ASSERT_TRUE(plugin_->Reserve(st, *pod, "node-a").IsSuccess());
  // The assumed PV is pv-a-small: bound to the claim in the view.
  volume::ViewPtr v = catalog_.Snapshot();
  ASSERT_TRUE(v->PV("pv-a-small")->claim_ref.has_value());
  EXPECT_EQ(v->PV("pv-a-small")->claim_ref->Key(), "default/data");
  EXPECT_FALSE(v->PV("pv-a-big")->claim_ref.has_value());
  plugin_->Unreserve(st, *pod, "node-a");
  EXPECT_FALSE(catalog_.Snapshot()->PV("pv-a-small")->claim_ref.has_value());
}

TEST_F(VolumeBindingTest, AccessModesSelectorAndCapacityMustMatch) {
  std::string rwx = Claim("rwx", "local", "5Gi");  // ReadWriteMany: not offered by the PV
  rwx.replace(rwx.find("ReadWriteOnce"), 13, "ReadWriteMany");
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "10Gi") + rwx +
                Claim("big", "local", "50Gi") +
                Claim("sel", "local", "5Gi", "  selector: {matchLabels: {tier: gold}}\n")),
            "");
  for (const char* claim : {"rwx", "big", "sel"}) {
    framework::CycleState st;
    EXPECT_EQ(Run(st, *Pod("p", {claim}))["node-a"], kReasonBindConflict) << claim;
  }
}

TEST_F(VolumeBindingTest, ProvisioningHonoursAllowedTopologiesAndStorageCapacity) {
  ASSERT_EQ(Add(R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: csi}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - {key: zone, values: [z1]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-a, namespace: kube-system}
storageClassName: csi
nodeTopology: {matchLabels: {kubernetes.io/hostname: node-a}}
capacity: 100Gi
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-b, namespace: kube-system}
storageClassName: csi
nodeTopology: {matchLabels: {kubernetes.io/hostname: node-b}}
capacity: 1Gi
)" + Claim("data", "csi", "5Gi")),
            "");
  auto pod = Pod("p", {"data"});
  framework::CycleState st;
  auto got = Run(st, *pod);
  EXPECT_EQ(got["node-a"], "");
  EXPECT_EQ(got["node-b"], kReasonNotEnoughSpace);
  EXPECT_EQ(got["node-c"], kReasonBindConflict);  // z2: outside allowedTopologies
  ASSERT_TRUE(plugin_->Reserve(st, *pod, "node-a").IsSuccess());
  EXPECT_EQ(catalog_.Snapshot()->PVC("default/data")->annotations.at(volume::kAnnSelectedNode),
            "node-a");
  // PreBind writes the claim's selected-node annotation and waits for the provisioner.
  handle_.fake_client().on_put = [&](const api::Unstructured& o) {
    catalog_
        .OnObjectAdd(std::make_shared<const api::Unstructured>(
            volume::WithAnnotation(volume::WithField(o, {"spec", "volumeName"}, "pvc-new"),
                                   volume::kAnnBindCompleted, "yes")))
        .IgnoreError();
  };
  EXPECT_TRUE(plugin_->PreBind(st, *pod, "node-a").IsSuccess());
  ASSERT_EQ(handle_.fake_client().puts.size(), 1u);
  EXPECT_EQ(handle_.fake_client().puts[0].kind, "PersistentVolumeClaim");
  EXPECT_EQ(handle_.fake_client().puts[0].metadata.annotations.at(volume::kAnnSelectedNode),
            "node-a");
}

TEST_F(VolumeBindingTest, PreBindWritesClaimRefAndFailsWhenTheControllerNeverBinds) {
  auto make = [&](const std::string& bind_timeout) {
    YAML::Node args = YAML::Load("{bindTimeoutSeconds: " + bind_timeout + "}");
    auto p = VolumeBinding::New(&args, handle_);
    EXPECT_TRUE(p.ok());
    return std::unique_ptr<VolumeBinding>(dynamic_cast<VolumeBinding*>(p.value().release()));
  };
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "10Gi") +
                Claim("data", "local", "5Gi")),
            "");
  auto pod = Pod("p", {"data"});
  {
    plugin_ = make("0");
    framework::CycleState st;
    Run(st, *pod);
    ASSERT_TRUE(plugin_->Reserve(st, *pod, "node-a").IsSuccess());
    framework::Status s = plugin_->PreBind(st, *pod, "node-a");  // nobody binds the claim
    EXPECT_EQ(s.code(), Code::kError);
    EXPECT_NE(s.Message().find("timed out"), std::string::npos) << s.Message();
    ASSERT_EQ(handle_.fake_client().puts.size(), 1u);
    const api::Unstructured& pv = handle_.fake_client().puts[0];
    EXPECT_EQ(pv.kind, "PersistentVolume");
    EXPECT_EQ((*pv.object)["spec"]["claimRef"]["name"].Scalar(), "data");
    plugin_->Unreserve(st, *pod, "node-a");
  }
  {
    plugin_ = make("5");
    handle_.fake_client().on_put = [&](const api::Unstructured& pv) {  // the PV controller
      catalog_.OnObjectAdd(std::make_shared<const api::Unstructured>(pv)).IgnoreError();
      auto claim = catalog_.Snapshot()->PVC("default/data");
      catalog_
          .OnObjectAdd(std::make_shared<const api::Unstructured>(volume::WithAnnotation(
              volume::WithField(*claim->object, {"spec", "volumeName"}, pv.metadata.name),
              volume::kAnnBindCompleted, "yes")))
          .IgnoreError();
    };
    framework::CycleState st;
    Run(st, *pod);
    ASSERT_TRUE(plugin_->Reserve(st, *pod, "node-a").IsSuccess());
    EXPECT_TRUE(plugin_->PreBind(st, *pod, "node-a").IsSuccess());
    EXPECT_EQ(catalog_.Snapshot()->PVC("default/data")->volume_name, "pv-a");
  }
}

TEST_F(VolumeBindingTest, TwoPodsNeverGetTheSamePV) {
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "10Gi") +
                Claim("c1", "local", "5Gi") + Claim("c2", "local", "5Gi")),
            "");
  auto p1 = Pod("p1", {"c1"});
  auto p2 = Pod("p2", {"c2"});
  // Reserved: the PV is assumed for c1.
  framework::CycleState s1;
  Run(s1, *p1);
  ASSERT_TRUE(plugin_->Reserve(s1, *p1, "node-a").IsSuccess());
  framework::CycleState s2;
  EXPECT_EQ(Run(s2, *p2)["node-a"], kReasonBindConflict);
  // Reserve of p2 with a stale choice (made before p1's assumption) fails.
  framework::CycleState stale;
  plugin_->Unreserve(s1, *p1, "node-a");
  Run(stale, *p2);
  ASSERT_TRUE(plugin_->Reserve(s1, *p1, "node-a").IsSuccess());
  framework::Status r = plugin_->Reserve(stale, *p2, "node-a");
  EXPECT_EQ(r.code(), Code::kUnschedulable);
  EXPECT_NE(r.Message().find("pv-a"), std::string::npos) << r.Message();
  plugin_->Unreserve(s1, *p1, "node-a");
  framework::CycleState s3;
  EXPECT_EQ(Run(s3, *p2)["node-a"], "");
}

TEST_F(VolumeBindingTest, InFlightPodOnTheViewHoldsItsPV) {
  // A gang member placed on the snapshot view (no Reserve yet) keeps its PV from the next.
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "10Gi") +
                Claim("c1", "local", "5Gi") + Claim("c2", "local", "5Gi")),
            "");
  auto p1 = Pod("p1", {"c1"});
  auto p2 = Pod("p2", {"c2"});
  framework::CycleState s1;
  EXPECT_EQ(Run(s1, *p1)["node-a"], "");
  // p1 on node-a in the view.
  std::vector<framework::NodeInfo> nodes;
  for (const auto* n : handle_.SnapshotSharedLister().List()) nodes.push_back(*n);
  auto on_a = std::make_shared<api::Pod>(*p1->pod);
  on_a->spec.node_name = "node-a";
  nodes[0].AddPod(framework::PodInfo::Make(on_a));
  handle_.SetNodes(nodes);
  framework::CycleState s2;
  EXPECT_EQ(Run(s2, *p2)["node-a"], kReasonBindConflict);
  // The trial is reverted (p1 leaves the view): its choice stops counting.
  nodes[0].RemovePod(*on_a);
  handle_.SetNodes(nodes);
  framework::CycleState s3;
  EXPECT_EQ(Run(s3, *p2)["node-a"], "");
}

TEST_F(VolumeBindingTest, EphemeralClaims) {
  api::Pod p = testing::PodBuilder("web").UID("uid-web").Obj();
  api::Volume v;
  v.name = "scratch";
  v.ephemeral_claim_template = std::make_shared<const YAML::Node>(YAML::Load("{spec: {}}"));
  p.spec.volumes.push_back(v);
  auto pod = framework::PodInfo::Make(std::make_shared<api::Pod>(p));
  framework::Status s;
  framework::CycleState st;
  Run(st, *pod, &s);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(),
            "waiting for ephemeral volume controller to create the "
            "persistentvolumeclaim \"web-scratch\"");
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "10Gi") +
                Claim("web-scratch", "local", "1Gi")),
            "");
  framework::CycleState st2;
  Run(st2, *pod, &s);
  EXPECT_EQ(s.Message(),
            "PVC default/web-scratch was not created for pod default/web (pod is "
            "not owner)");
  ASSERT_EQ(Add(R"(---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: web-scratch
  namespace: default
  ownerReferences: [{apiVersion: v1, kind: Pod, name: web, uid: uid-web, controller: true}]
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local
  resources: {requests: {storage: 1Gi}}
)"),
            "");
  framework::CycleState st3;
  auto got = Run(st3, *pod, &s);
  EXPECT_TRUE(s.IsSuccess()) << s.Message();
  EXPECT_EQ(got["node-a"], "");
  EXPECT_EQ(got["node-b"], kReasonBindConflict);
}

TEST_F(VolumeBindingTest, BadInputGivesReasonsNamingObjectAndField) {
  const std::string errs =
      Add(R"(---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-bad}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: Near, values: [node-a]}
)" + Claim("on-bad", "local", "5Gi", "  volumeName: pv-bad\n") +
          Claim("negative", "local", "-5Gi") + Claim("noclass", "missing", "5Gi"));
  EXPECT_NE(
      errs.find("PersistentVolume \"pv-bad\": spec.nodeAffinity.required.nodeSelectorTerms[0]"),
      std::string::npos)
      << errs;
  struct Case {
    std::string claim;
    std::string want;
  } cases[] = {
      {"on-bad", "PersistentVolume \"pv-bad\": spec.nodeAffinity.required.nodeSelectorTerms[0]"},
      {"negative",
       "PersistentVolumeClaim \"default/negative\": spec.resources.requests[storage]: "
       "Invalid value: \"-5Gi\": must be greater than zero"},
      {"noclass",
       "persistentvolumeclaim \"default/noclass\": storageclass.storage.k8s.io "
       "\"missing\" not found"},
      {"absent", "persistentvolumeclaim \"absent\" not found"},
  };
  for (const auto& c : cases) {
    framework::CycleState st;
    framework::Status s;
    Run(st, *Pod("p", {c.claim}), &s);
    EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable) << c.claim;
    EXPECT_NE(s.Message().find(c.want), std::string::npos) << c.claim << ": " << s.Message();
  }
}

TEST_F(VolumeBindingTest, ArgsAreStrict) {
  YAML::Node bad = YAML::Load("{bindTimeoutSecs: 3}");
  EXPECT_FALSE(VolumeBinding::New(&bad, handle_).ok());
  YAML::Node neg = YAML::Load("{bindTimeoutSeconds: -1}");
  EXPECT_FALSE(VolumeBinding::New(&neg, handle_).ok());
}

// --- Capacity scoring (upstream volume_binding.go Score, scorer.go) ---------------------

class VolumeBindingScoreTest : public VolumeBindingTest {
 protected:
  // Replaces the plugin with one built from `args` (YAML); fails the test on an error.
  void UseArgs(const std::string& args) {
    YAML::Node a = YAML::Load(args);
    auto p = VolumeBinding::New(&a, handle_);
    ASSERT_TRUE(p.ok()) << p.status().Message();
    plugin_.reset(dynamic_cast<VolumeBinding*>(p.value().release()));
  }
  // Nodes with region/zone labels (upstream's "zonal volumes" cases).
  void UseZonalNodes() {
    std::vector<framework::NodeInfo> nodes;
    for (const char* zone : {"a", "b", "c"}) {
      for (const char* n : {"node-a", "node-b"}) {
        const std::string name = std::string("zone-") + zone + "-" + n;
        nodes.emplace_back(std::make_shared<api::Node>(
            testing::NodeBuilder(name)
                .Label("kubernetes.io/hostname", name)
                .Label("topology.kubernetes.io/region", std::string("region-") + zone)
                .Label("topology.kubernetes.io/zone", std::string("zone-") + zone)
                .Obj()));
        zonal_.push_back(name);
      }
    }
    handle_.SetNodes(std::move(nodes));
  }
  static std::string ZonalPV(const std::string& name, const std::string& zone,
                             const std::string& size) {
    return "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
           "}\nspec:\n  capacity: {storage: " + size +
           "}\n  accessModes: [ReadWriteOnce]\n  storageClassName: local\n  nodeAffinity:\n"
           "    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
           "        - {key: topology.kubernetes.io/region, operator: In, values: [region-" +
           zone + "]}\n        - {key: topology.kubernetes.io/zone, operator: In, values: [zone-" +
           zone + "]}\n";
  }
  // PreFilter, Filter on `nodes`, PreScore and Score: the scores in node order (a node
  // that fails Filter scores 0, as in upstream's table). *prescore gets PreScore's code.
  std::vector<int64_t> Scores(const framework::PodInfo& pod, const std::vector<std::string>& nodes,
                              framework::Code* prescore = nullptr) {
    framework::CycleState st;
    framework::PreFilterResult r;
    framework::Status pre = plugin_->PreFilter(st, pod, &r);
    std::vector<const framework::NodeInfo*> infos;
    for (const auto& n : nodes) {
      infos.push_back(&Node(n));
      if (pre.IsSuccess()) {
        // Filter records the node's binding decisions that PreScore reads.
        framework::Status f = plugin_->Filter(st, pod, Node(n));
        EXPECT_NE(f.code(), Code::kError) << n << ": " << f.Message();
      }
    }
    framework::Status ps = plugin_->PreScore(st, pod, infos);
    if (prescore) *prescore = ps.code();
    std::vector<int64_t> out;
    for (const auto* ni : infos) {
      int64_t score = -1;
      EXPECT_TRUE(plugin_->Score(st, pod, *ni, &score).IsSuccess());
      out.push_back(score);
    }
    return out;
  }
  static constexpr const char* kUpstreamTestShape =  // volume_binding_test.go defaultShapePoint
      "{shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}";
  static constexpr const char* kHDDClass = R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-hdd}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
)";
  std::vector<std::string> zonal_;
};

TEST_F(VolumeBindingScoreTest, LocalVolumesWithCloseCapacityArePreferred) {
  UseArgs(kUpstreamTestShape);
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a-0", "node-a", "200Gi") +
                LocalPV("pv-a-1", "node-a", "200Gi") + LocalPV("pv-b-0", "node-b", "100Gi") +
                LocalPV("pv-b-1", "node-b", "100Gi") + Claim("pvc-a", "local", "50Gi")),
            "");
  framework::Code pre;
  EXPECT_EQ(Scores(*Pod("p", {"pvc-a"}), {"node-a", "node-b", "node-c"}, &pre),
            (std::vector<int64_t>{25, 50, 0}));
  EXPECT_EQ(pre, Code::kSuccess);
}

TEST_F(VolumeBindingScoreTest, LocalVolumesWithCloseCapacityArePreferredMultiplePVCs) {
  UseArgs(kUpstreamTestShape);
  std::string objs = std::string(kLocalClass) + kHDDClass;
  for (const char* n : {"0", "1"}) objs += LocalPV(std::string("pv-a-") + n, "node-a", "200Gi");
  for (const char* n : {"2", "3"}) {
    objs += LocalPV(std::string("pv-a-") + n, "node-a", "200Gi", "local-hdd");
  }
  for (const char* n : {"0", "1"}) objs += LocalPV(std::string("pv-b-") + n, "node-b", "100Gi");
  for (const char* n : {"2", "3"}) {
    objs += LocalPV(std::string("pv-b-") + n, "node-b", "100Gi", "local-hdd");
  }
  ASSERT_EQ(Add(objs + Claim("pvc-0", "local", "50Gi") + Claim("pvc-1", "local-hdd", "100Gi")), "");
  // node-a: (25 + 50) / 2 = 37.5 -> 38; node-b: (50 + 100) / 2 = 75.
  EXPECT_EQ(Scores(*Pod("p", {"pvc-0", "pvc-1"}), {"node-a", "node-b", "node-c"}),
            (std::vector<int64_t>{38, 75, 0}));
}

TEST_F(VolumeBindingScoreTest, ZonalVolumesWithCloseCapacityArePreferred) {
  UseZonalNodes();
  ASSERT_EQ(Add(std::string(kLocalClass) + ZonalPV("pv-a-0", "a", "200Gi") +
                ZonalPV("pv-a-1", "a", "200Gi") + ZonalPV("pv-b-0", "b", "100Gi") +
                ZonalPV("pv-b-1", "b", "100Gi") + Claim("pvc-a", "local", "50Gi")),
            "");
  UseArgs(kUpstreamTestShape);
  EXPECT_EQ(Scores(*Pod("p", {"pvc-a"}), zonal_), (std::vector<int64_t>{25, 25, 50, 50, 0, 0}));
  // "(custom shape)": {0: 0, 50: 3, 100: 5} -> 15 at 25%, 30 at 50%.
  UseArgs(
      "{bindTimeoutSeconds: 300, shape: [{utilization: 0, score: 0}, "
      "{utilization: 50, score: 3}, {utilization: 100, score: 5}]}");
  EXPECT_EQ(Scores(*Pod("p", {"pvc-a"}), zonal_), (std::vector<int64_t>{15, 15, 30, 30, 0, 0}));
}

constexpr const char* kCSIWithCapacity = R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: csi}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-a, namespace: kube-system}
storageClassName: csi
nodeTopology: {matchLabels: {kubernetes.io/hostname: node-a}}
capacity: 100Gi
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-b, namespace: kube-system}
storageClassName: csi
nodeTopology: {matchLabels: {kubernetes.io/hostname: node-b}}
capacity: 200Gi
)";

TEST_F(VolumeBindingScoreTest, DynamicProvisioningScoresTheChosenStorageCapacity) {
  ASSERT_EQ(Add(std::string(kCSIWithCapacity) + Claim("data", "csi", "50Gi")), "");
  auto pod = Pod("p", {"data"});
  // shape: [] takes upstream's StorageCapacityScoring default {0: 10, 100: 0}: the node
  // with the most free capacity wins (node-a 50% used -> 50, node-b 25% -> 75).
  UseArgs("{shape: []}");
  EXPECT_EQ(Scores(*pod, {"node-a", "node-b", "node-c"}), (std::vector<int64_t>{50, 75, 0}));
  // The opposite shape packs: the least free capacity wins.
  UseArgs(kUpstreamTestShape);
  EXPECT_EQ(Scores(*pod, {"node-a", "node-b", "node-c"}), (std::vector<int64_t>{50, 25, 0}));
}

TEST_F(VolumeBindingScoreTest, StaticBindingsTakePrecedenceOverProvisioning) {
  // node-a: a static 100Gi PV for "local" (80% used -> 80) and a provisioned "csi" claim
  // (10% of cap-a); only the static binding counts, as upstream scores DynamicProvisions
  // only without StaticBindings (counting both would give (80 + 10) / 2 = 45). node-b has
  // no PV for "local" (not provisionable) and fails Filter.
  ASSERT_EQ(Add(std::string(kLocalClass) + kCSIWithCapacity + LocalPV("pv-a", "node-a", "100Gi") +
                Claim("loc", "local", "80Gi") + Claim("data", "csi", "10Gi")),
            "");
  UseArgs(kUpstreamTestShape);
  EXPECT_EQ(Scores(*Pod("p", {"loc", "data"}), {"node-a", "node-b"}),
            (std::vector<int64_t>{80, 0}));
}

TEST_F(VolumeBindingScoreTest, PreScoreSkipsWithoutShapeOrClaims) {
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "200Gi") +
                Claim("pvc-a", "local", "50Gi")),
            "");
  framework::Code pre;
  // Default args: no capacity scoring (upstream's VolumeCapacityPriority gate is off).
  EXPECT_EQ(Scores(*Pod("p", {"pvc-a"}), {"node-a"}, &pre), (std::vector<int64_t>{0}));
  EXPECT_EQ(pre, Code::kSkip);
  UseArgs(kUpstreamTestShape);
  EXPECT_EQ(Scores(*Pod("p", {"pvc-a"}), {"node-a"}, &pre), (std::vector<int64_t>{25}));
  EXPECT_EQ(pre, Code::kSuccess);
  EXPECT_EQ(Scores(*Pod("q", {}), {"node-a"}, &pre), (std::vector<int64_t>{0}));
  EXPECT_EQ(pre, Code::kSkip);
}

TEST(CapacityScorerTest, UtilizationAndRounding) {
  const CapacityScorer f({{0, 0}, {100, 10}});
  EXPECT_EQ(f({}), 0);
  EXPECT_EQ(f({{"a", {50, 200}}}), 25);
  EXPECT_EQ(f({{"a", {0, 0}}}), 100);                // capacity 0: f(100)
  EXPECT_EQ(f({{"a", {300, 200}}}), 100);            // over capacity: f(100)
  EXPECT_EQ(f({{"a", {1, 3}}, {"b", {0, 1}}}), 17);  // (33 + 0) / 2 = 16.5 -> 17
  // Petabyte-scale bytes do not overflow requested * 100.
  const int64_t big = int64_t{1} << 60;
  EXPECT_EQ(f({{"a", {big / 2, big}}}), 50);
  const CapacityScorer g({{0, 10}, {100, 0}});
  EXPECT_EQ(g({{"a", {50, 100}}}), 50);
  EXPECT_EQ(g({{"a", {25, 100}}}), 75);
}

TEST(VolumeBindingArgsTest, Shape) {
  auto parse = [](const std::string& text) {
    YAML::Node n = YAML::Load(text);
    return ParseVolumeBindingArgs(&n);
  };
  {
    auto a = parse("{}");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a.value().bind_timeout_seconds, 600);
    EXPECT_FALSE(a.value().shape.has_value());
  }
  {
    auto a = parse("{shape: null}");
    ASSERT_TRUE(a.ok());
    EXPECT_FALSE(a.value().shape.has_value());
  }
  {
    auto a = parse(
        "{kind: VolumeBindingArgs, bindTimeoutSeconds: 30, shape: "
        "[{utilization: 0, score: 0}, {utilization: 80, score: 7}, "
        "{utilization: 100, score: 10}]}");
    ASSERT_TRUE(a.ok()) << a.status().Message();
    EXPECT_EQ(a.value().bind_timeout_seconds, 30);
    EXPECT_EQ(*a.value().shape,
              (std::vector<noderesources::UtilizationShapePoint>{{0, 0}, {80, 7}, {100, 10}}));
  }
  {
    auto a = parse("{shape: []}");  // SetDefaults_VolumeBindingArgs (StorageCapacityScoring)
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(*a.value().shape,
              (std::vector<noderesources::UtilizationShapePoint>{{0, 10}, {100, 0}}));
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{shape: [{utilization: 50, score: 1}, {utilization: 50, score: 2}]}",
       "VolumeBindingArgs: shape[1].utilization: Invalid value: 50: utilization values must be "
       "sorted in increasing order"},
      {"{shape: [{utilization: 60, score: 1}, {utilization: 10, score: 2}]}",
       "VolumeBindingArgs: shape[1].utilization: Invalid value: 10: utilization values must be "
       "sorted in increasing order"},
      {"{shape: [{utilization: 0, score: 11}]}",
       "VolumeBindingArgs: shape[0].score: Invalid value: 11: not in valid range [0, 10]"},
      {"{shape: [{utilization: 0, score: -1}]}",
       "VolumeBindingArgs: shape[0].score: Invalid value: -1: not in valid range [0, 10]"},
      {"{shape: [{utilization: -1, score: 1}, {utilization: 101, score: 2}]}",
       "VolumeBindingArgs: [shape[0].utilization: Invalid value: -1: not in valid range [0, 100], "
       "shape[1].utilization: Invalid value: 101: not in valid range [0, 100]]"},
      {"{shape: 5}", "shape"},
      {"{shape: [{utilization: 1, score: x}]}", "shape[0].score"},
      {"{shape: [{utilization: 1, weight: 2}]}", "shape[0].weight"},
      {"{shape: [7]}", "shape[0]"},
  };
  for (const auto& [text, want] : bad) {
    auto a = parse(text);
    ASSERT_FALSE(a.ok()) << text;
    EXPECT_NE(a.status().Message().find(want), std::string::npos)
        << text << ": " << a.status().Message();
  }
  YAML::Node n = YAML::Load("{shape: [{utilization: 0, score: 11}]}");
  fake::FakeHandle h;
  EXPECT_FALSE(VolumeBinding::New(&n, h).ok());  // the plugin refuses what the parser refuses
}

// A KubeSchedulerConfiguration file's VolumeBindingArgs through the framework's plugin
// construction: a bad shape fails the profile with an error naming the profile, the plugin
// and the field; a good one puts VolumeBinding at PreScore and Score.
TEST(VolumeBindingArgsTest, FromKubeSchedulerConfiguration) {
  auto build = [](const std::string& shape) {
    const std::string text =
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: vol\n  pluginConfig:\n  - name: VolumeBinding\n"
        "    args:\n      kind: VolumeBindingArgs\n      shape: " +
        shape + "\n";
    config::KubeSchedulerConfiguration cfg;
    std::string error;
    EXPECT_TRUE(api::MoveOrMessage(config::DecodeConfiguration(text, "sched.yaml"), &cfg, &error))
        << error;
    config::Profile prof;
    prof.scheduler_name = cfg.profiles.at(0).scheduler_name;
    prof.plugin_config = cfg.profiles.at(0).plugin_config;
    prof.plugins.multi_point.enabled = {
        {"PrioritySort", 0}, {"DefaultBinder", 0}, {"VolumeBinding", 0}};
    volume::Catalog catalog;
    framework::FrameworkOptions o;
    o.services.Provide<volume::Catalog>(&catalog);
    return framework::Framework::New(NewInTreeRegistry(), prof, std::move(o));
  };
  auto bad = build("[{utilization: 0, score: 0}, {utilization: 120, score: 10}]");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().Message(),
            "profile \"vol\": initializing plugin \"VolumeBinding\": VolumeBindingArgs: "
            "shape[1].utilization: Invalid value: 120: not in valid range [0, 100]");
  auto good = build("[{utilization: 0, score: 0}, {utilization: 100, score: 10}]");
  ASSERT_TRUE(good.ok()) << good.status().Message();
  EXPECT_EQ(good.value()->ListPlugins("Score"), std::vector<std::string>{"VolumeBinding"});
  EXPECT_EQ(good.value()->ListPlugins("PreScore"), std::vector<std::string>{"VolumeBinding"});
}

}  // namespace
}  // namespace phalanx::plugins::volumebinding
