// VolumeBinding against a volume::Catalog fed with manifests: upstream's cases of
// volume_binding_test.go / scheduler_binder_test.go (bound claims and PV node affinity,
// unbound Immediate claims, WaitForFirstConsumer static matching and provisioning with
// allowedTopologies and CSIStorageCapacity), the assume / revert cycle, the in-flight
// exclusion that keeps two gang members off one PV, PreBind's writes, ephemeral claims, and
// bad input (malformed node affinity, missing class, negative request).
#include "plugins/volumebinding/volume_binding.h"

#include <gtest/gtest.h>

#include "api/decode.h"
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
      errs += catalog_.OnObjectAdd(std::make_shared<const api::Unstructured>(o));
    }
    return errs;
  }

  static std::string LocalPV(const std::string& name, const std::string& node,
                             const std::string& size, const std::string& cls = "local") {
    return "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
           "}\nspec:\n  capacity: {storage: " + size +
           "}\n  accessModes: [ReadWriteOnce]\n  storageClassName: " + cls +
           "\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
           "        - {key: kubernetes.io/hostname, operator: In, values: [" + node + "]}\n";
  }
  static std::string Claim(const std::string& name, const std::string& cls,
                           const std::string& size, const std::string& extra = "") {
    return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
           ", namespace: default}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: " +
           cls + "\n  resources: {requests: {storage: " + size + "}}\n" + extra;
  }
  // A claim the PV controller has bound to pv (spec.volumeName and bind-completed).
  static std::string BoundClaim(const std::string& name, const std::string& cls,
                                const std::string& size, const std::string& pv) {
    return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
           ", namespace: default, annotations: {pv.kubernetes.io/bind-completed: \"yes\"}}\n"
           "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: " + cls +
           "\n  resources: {requests: {storage: " + size + "}}\n  volumeName: " + pv + "\n";
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
      p.spec.volumes.push_back({"v" + std::to_string(i), claims[i], nullptr});
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
      if (!f.IsSuccess()) EXPECT_EQ(f.code(), Code::kUnschedulableAndUnresolvable) << n;
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
)" + Claim("data", "standard", "5Gi") + Claim("noclass", "\"\"", "5Gi")),
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
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a-big", "node-a", "100Gi") +
                LocalPV("pv-a-small", "node-a", "10Gi") + LocalPV("pv-a-tiny", "node-a", "1Gi") +
                LocalPV("pv-b-other-class", "node-b", "100Gi", "other") +
                Claim("data", "local", "5Gi")),
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
    catalog_.OnObjectAdd(std::make_shared<const api::Unstructured>(volume::WithAnnotation(
        volume::WithField(o, {"spec", "volumeName"}, "pvc-new"), volume::kAnnBindCompleted,
        "yes")));
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
      catalog_.OnObjectAdd(std::make_shared<const api::Unstructured>(pv));
      auto claim = catalog_.Snapshot()->PVC("default/data");
      catalog_.OnObjectAdd(std::make_shared<const api::Unstructured>(volume::WithAnnotation(
          volume::WithField(*claim->object, {"spec", "volumeName"}, pv.metadata.name),
          volume::kAnnBindCompleted, "yes")));
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
  EXPECT_EQ(s.Message(), "waiting for ephemeral volume controller to create the "
                         "persistentvolumeclaim \"web-scratch\"");
  ASSERT_EQ(Add(std::string(kLocalClass) + LocalPV("pv-a", "node-a", "10Gi") +
                Claim("web-scratch", "local", "1Gi")),
            "");
  framework::CycleState st2;
  Run(st2, *pod, &s);
  EXPECT_EQ(s.Message(), "PVC default/web-scratch was not created for pod default/web (pod is "
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
  const std::string errs = Add(R"(---
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
                               Claim("negative", "local", "-5Gi") +
                               Claim("noclass", "missing", "5Gi"));
  EXPECT_NE(errs.find("PersistentVolume \"pv-bad\": spec.nodeAffinity.required.nodeSelectorTerms[0]"),
            std::string::npos)
      << errs;
  struct Case {
    std::string claim;
    std::string want;
  } cases[] = {
      {"on-bad", "PersistentVolume \"pv-bad\": spec.nodeAffinity.required.nodeSelectorTerms[0]"},
      {"negative", "PersistentVolumeClaim \"default/negative\": spec.resources.requests[storage]: "
                   "Invalid value: \"-5Gi\": must be greater than zero"},
      {"noclass", "persistentvolumeclaim \"default/noclass\": storageclass.storage.k8s.io "
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

}  // namespace
}  // namespace phalanx::plugins::volumebinding
