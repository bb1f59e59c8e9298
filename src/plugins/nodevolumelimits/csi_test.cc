// NodeVolumeLimits: upstream's table of nodevolumelimits/csi_test.go (TestCSILimits, the
// VolumeAttachment cases left out), TestCSILimitsQHint, the in-tree translation, the limit
// keys, and the v1.20 in-tree allocatable counting (attachable-volumes-aws-ebs) on nodes
// without a CSINode.
#include "plugins/nodevolumelimits/csi.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "plugins/nodevolumelimits/translation.h"
#include "testing/builders.h"

namespace phalanx::plugins::nodevolumelimits {
namespace {

using framework::Code;
using Type = api::VolumeSource::Type;

constexpr const char* kEBSCSI = "ebs.csi.aws.com";
constexpr const char* kGCECSI = "pd.csi.storage.gke.io";
constexpr const char* kHostPath = "kubernetes.io/hostpath";

// Object names: upstream's "csi-<driver>-<j>" with "/" replaced by "." (a name may not
// contain "/").
std::string Obj(const std::string& driver, int j) {
  std::string n = "csi-" + driver + "-" + std::to_string(j);
  for (char& c : n) c = c == '/' ? '.' : c;
  return n;
}

// upstream getFakeCSIPVLister / getFakeCSIPVCLister / getFakeCSIStorageClassLister.
std::string Objects(const std::vector<std::string>& drivers) {
  std::string out =
      "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: "
      "csi-sc}\nprovisioner: " +
      drivers[0] + "\n";
  for (const auto& d : drivers) {
    for (int j = 0; j < 4; ++j) {
      const std::string n = Obj(d, j);
      std::string source = "  csi: {driver: " + d + ", volumeHandle: " + n + "}\n";
      if (d == kAWSEBSInTree) source = "  awsElasticBlockStore: {volumeID: " + n + "}\n";
      if (d == kHostPath) source = "  hostPath: {path: /tmp}\n";
      out += "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + n +
             "}\nspec:\n  capacity: {storage: 1Gi}\n" + source;
      out += "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + n +
             ", namespace: test}\nspec: {resources: {requests: {storage: 1Gi}}, volumeName: " + n +
             "}\n";
    }
  }
  out +=
      "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-4, namespace: "
      "test}\nspec: {resources: {requests: {storage: 1Gi}}, storageClassName: csi-sc}\n";
  out +=
      "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-5, namespace: "
      "test}\nspec: {resources: {requests: {storage: 1Gi}}, storageClassName: \"\"}\n";
  out +=
      "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: csi-6, namespace: "
      "test}\nspec: {resources: {requests: {storage: 1Gi}}, storageClassName: csi-sc, volumeName: "
      "missing-in-action}\n";
  return out;
}

std::string EphemeralClaim(const std::string& name, const std::string& owner_uid) {
  std::string owner;
  if (!owner_uid.empty()) {
    owner = ", ownerReferences: [{apiVersion: v1, kind: Pod, name: abc, uid: " + owner_uid +
            ", controller: true}]";
  }
  return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
         ", namespace: test" + owner +
         "}\nspec: {resources: {requests: {storage: 1Gi}}, storageClassName: csi-sc}\n";
}

api::Volume Claim(const std::string& name) { return {"v-" + name, name, nullptr, {}}; }
api::Volume Ephemeral(const std::string& name) {
  api::Volume v{name, "", std::make_shared<const YAML::Node>(YAML::Load("{spec: {}}")), {}};
  return v;
}
api::Volume Inline(Type t, const std::string& id) {
  api::Volume v{"inline-" + id, "", nullptr, {}};
  v.source.type = t;
  v.source.id = id;
  return v;
}
api::Volume Other() { return {"cm", "", nullptr, {}}; }  // configMap / secret

api::PodPtr MakePod(std::vector<api::Volume> vols, const std::string& name = "p",
                    const std::string& uid = "") {
  static int n = 0;
  const std::string pod_name = name == "p" ? "p" + std::to_string(n++) : name;
  const std::string pod_uid = uid.empty() ? "uid-" + std::to_string(n++) : uid;
  api::Pod p = testing::PodBuilder(pod_name).Namespace("test").UID(pod_uid).Obj();
  p.spec.volumes = std::move(vols);
  return std::make_shared<api::Pod>(p);
}

struct Case {
  std::string name;
  api::PodPtr new_pod;
  std::vector<api::PodPtr> existing;
  int32_t max_vols = 0;
  std::vector<std::string> drivers;
  std::string limit_source;  // node | csinode | both | csinode-with-no-limit | no-csi-driver | ""
  Code want = Code::kSuccess;
  std::string reason;
  std::string extra;  // more objects
  bool want_skip = false;
};

// upstream getNodeWithPodAndVolumeLimits, as a Node and a CSINode manifest.
void AddNode(const Case& c, volume::Catalog* catalog, api::Node* node) {
  *node = testing::NodeBuilder("node-for-max-pd-test-1").Obj();
  if (c.limit_source == "node" || c.limit_source == "both") {
    for (const auto& d : c.drivers) {
      node->status.allocatable[CSIAttachLimitKey(d)] =
          *api::Quantity::Parse(std::to_string(c.max_vols));
    }
  }
  if (c.limit_source == "csinode" || c.limit_source == "both" ||
      c.limit_source == "csinode-with-no-limit" || c.limit_source == "no-csi-driver") {
    std::string drivers;
    if (c.limit_source != "no-csi-driver") {
      for (const auto& d : c.drivers) {
        drivers += "  - {name: " + d + ", nodeID: node-for-max-pd-test-1";
        if (c.limit_source != "csinode-with-no-limit") {
          drivers += ", allocatable: {count: " + std::to_string(c.max_vols) + "}";
        }
        drivers += "}\n";
      }
    }
    api::Manifests m;
    ASSERT_EQ(api::DecodeManifests("apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: "
                                   "{name: node-for-max-pd-test-1}\nspec:\n  drivers:" +
                                       (drivers.empty() ? std::string(" []\n") : "\n" + drivers),
                                   "csinode", &m),
              absl::OkStatus());
    EXPECT_TRUE(catalog->OnObjectAdd(std::make_shared<const api::Unstructured>(m.objects[0])).ok());
  }
}

framework::Status RunCase(const Case& c, bool* skipped) {
  volume::Catalog catalog;
  api::Manifests m;
  EXPECT_EQ(api::DecodeManifests(Objects(c.drivers) + c.extra, "objects", &m), absl::OkStatus());
  for (auto& o : m.objects) {
    EXPECT_TRUE(catalog.OnObjectAdd(std::make_shared<const api::Unstructured>(o)).ok()) << c.name;
  }
  api::Node node;
  AddNode(c, &catalog, &node);
  framework::NodeInfo ni(std::make_shared<api::Node>(node));
  for (const auto& p : c.existing) ni.AddPod(framework::PodInfo::Make(p));
  CSILimits plugin(&catalog);
  framework::CycleState st;
  framework::PreFilterResult r;
  auto pod = framework::PodInfo::Make(c.new_pod);
  framework::Status s = plugin.PreFilter(st, *pod, &r);
  *skipped = s.code() == Code::kSkip;
  if (*skipped) return framework::Status::Success();
  EXPECT_TRUE(s.IsSuccess()) << c.name << ": " << s.Message();
  return plugin.Filter(st, *pod, ni);
}

TEST(CSILimitsTest, UpstreamTable) {
  const std::string kEBSInTree = kAWSEBSInTree;
  auto running = MakePod({Claim(Obj(kEBSCSI, 3))});
  auto pending = MakePod({Claim("csi-4")});
  auto unbound2 = MakePod({Claim("csi-4")});
  auto missing_pv = MakePod({Claim("csi-6")});
  auto no_sc = MakePod({Claim("csi-5")});
  auto gce_two = MakePod({Claim(Obj(kGCECSI, 1)), Claim(Obj(kGCECSI, 2))});
  auto in_tree_one = MakePod({Claim(Obj(kEBSInTree, 0))});
  auto in_tree_two = MakePod({Claim(Obj(kEBSInTree, 1)), Claim(Obj(kEBSInTree, 2))});
  auto ebs_one = MakePod({Claim(Obj(kEBSCSI, 0))});
  auto ebs_two = MakePod({Claim(Obj(kEBSCSI, 1)), Claim(Obj(kEBSCSI, 2))});
  auto non_migratable = MakePod({Claim(Obj(kHostPath, 0))});
  auto eph = MakePod({Ephemeral("xyz")}, "abc", "12345");
  auto eph_two = MakePod({Ephemeral("x"), Ephemeral("y")}, "abc", "12345II");
  auto inline_one = MakePod({Inline(Type::kAWSElasticBlockStore, "aws-inline1")});
  auto inline_same_id = MakePod({Inline(Type::kAWSElasticBlockStore, Obj(kEBSCSI, 1))});
  auto only_cm = MakePod({Other(), Other()});
  auto pvc_with_cm = MakePod({Other(), Other(), Claim(Obj(kEBSCSI, 0))});
  auto eph_with_cm = MakePod({Other(), Other(), Ephemeral("xyz")}, "abc", "12345");
  auto inline_with_cm =
      MakePod({Other(), Other(), Inline(Type::kAWSElasticBlockStore, "aws-inline1")});
  const std::string eph_claim = EphemeralClaim("abc-xyz", "12345");
  const std::string conflicting = EphemeralClaim("abc-xyz", "");
  const std::string eph_xy =
      EphemeralClaim("abc-x", "12345II") + EphemeralClaim("abc-y", "12345II");
  const Code kUnsched = Code::kUnschedulable;
  const std::string kMax = kReasonMaxVolumeCountExceeded;
  const std::vector<std::string> ebs = {kEBSCSI};
  const std::vector<std::string> migr = {kEBSInTree, kEBSCSI};
  const std::vector<Case> cases = {
      {"fits when node volume limit >= new pods CSI volume",
       ebs_one,
       {running, ebs_two},
       4,
       ebs,
       "csinode"},
      {"doesn't when node volume limit <= pods CSI volume",
       ebs_one,
       {running, ebs_two},
       2,
       ebs,
       "csinode",
       kUnsched,
       kMax},
      {"should when driver does not support volume limits",
       ebs_one,
       {running, ebs_two},
       2,
       ebs,
       "csinode-with-no-limit"},
      {"count pending PVCs towards volume limit <= pods CSI volume",
       ebs_one,
       {pending, ebs_two},
       2,
       ebs,
       "csinode",
       kUnsched,
       kMax},
      {"count multiple pending pvcs towards volume limit >= pods CSI volume",
       ebs_one,
       {pending, unbound2, ebs_two},
       4,
       ebs,
       "csinode"},
      {"should count PVCs with invalid PV name but valid SC",
       ebs_one,
       {missing_pv, ebs_two},
       2,
       ebs,
       "csinode",
       kUnsched,
       kMax},
      {"don't count pvcs with missing SC towards volume limit",
       ebs_one,
       {running, no_sc},
       2,
       ebs,
       "csinode"},
      {"count pvcs with the same type towards volume limit",
       ebs_one,
       {gce_two, ebs_two},
       2,
       {kEBSCSI, kGCECSI},
       "csinode",
       kUnsched,
       kMax},
      {"don't count pvcs with different type towards volume limit",
       gce_two,
       {ebs_two, running},
       2,
       {kEBSCSI, kGCECSI},
       "csinode"},
      {"should count in-tree volumes if migration is enabled",
       in_tree_one,
       {in_tree_two},
       2,
       migr,
       "csinode",
       kUnsched,
       kMax},
      {"nil csi node", inline_one, {in_tree_two}, 0, migr, ""},
      {"should count unbound in-tree volumes if migration is enabled",
       pending,
       {in_tree_two},
       2,
       migr,
       "csinode",
       kUnsched,
       kMax},
      {"should not limit pod if volume used does not report limits",
       in_tree_one,
       {in_tree_two},
       2,
       migr,
       "csinode-with-no-limit"},
      {"should not count non-migratable in-tree volumes",
       non_migratable,
       {ebs_two},
       2,
       {kHostPath, kEBSCSI},
       "csinode"},
      {"should count in-tree inline volumes if migration is enabled",
       inline_one,
       {in_tree_two},
       2,
       migr,
       "csinode",
       kUnsched,
       kMax},
      {"should count in-tree and csi volumes if migration is enabled (when scheduling in-tree "
       "volumes)",
       in_tree_one,
       {ebs_two},
       2,
       migr,
       "csinode",
       kUnsched,
       kMax},
      {"should count in-tree, inline and csi volumes if migration is enabled (when scheduling "
       "in-tree volumes)",
       inline_one,
       {ebs_two, in_tree_one},
       3,
       migr,
       "csinode",
       kUnsched,
       kMax},
      {"should not count in-tree, inline and csi volumes if migration is enabled (when scheduling "
       "in-tree volumes)",
       inline_same_id,
       {ebs_two, in_tree_one},
       3,
       migr,
       "csinode"},
      {"should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
       ebs_one,
       {in_tree_two},
       2,
       migr,
       "csinode",
       kUnsched,
       kMax},
      {"ephemeral volume missing",
       eph,
       {},
       0,
       ebs,
       "csinode-with-no-limit",
       Code::kUnschedulableAndUnresolvable,
       "looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found"},
      {"ephemeral volume not owned",
       eph,
       {},
       0,
       ebs,
       "csinode-with-no-limit",
       Code::kError,
       "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",
       conflicting},
      {"ephemeral volume unbound",
       eph,
       {},
       0,
       ebs,
       "csinode-with-no-limit",
       Code::kSuccess,
       "",
       eph_claim},
      {"ephemeral doesn't when node volume limit <= pods CSI volume",
       eph,
       {running, ebs_two},
       2,
       ebs,
       "csinode",
       kUnsched,
       kMax,
       eph_claim},
      {"ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
       ebs_one,
       {running, eph_two},
       2,
       ebs,
       "csinode",
       kUnsched,
       kMax,
       eph_xy},
      {"persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
       ebs_one,
       {running, eph, ebs_two},
       3,
       ebs,
       "csinode",
       kUnsched,
       kMax,
       eph_claim},
      {"persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
       ebs_one,
       {running, eph, ebs_two},
       5,
       ebs,
       "csinode",
       Code::kSuccess,
       "",
       eph_claim},
      {"skip Filter when the pod only uses secrets and configmaps",
       only_cm,
       {},
       2,
       ebs,
       "csinode",
       Code::kSuccess,
       "",
       "",
       true},
      {"don't skip Filter when the pod has pvcs", pvc_with_cm, {}, 2, ebs, "csinode"},
      {"don't skip Filter when the pod has ephemeral volumes",
       eph_with_cm,
       {},
       0,
       ebs,
       "csinode-with-no-limit",
       Code::kUnschedulableAndUnresolvable,
       "looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found"},
      {"don't skip Filter when the pod has inline migratable volumes",
       inline_with_cm,
       {in_tree_two},
       2,
       migr,
       "csinode",
       kUnsched,
       kMax},
      // upstream's node-allocatable cases (limitSource "node" / "both").
      {"limit from node allocatable", ebs_one, {running, ebs_two}, 2, ebs, "node", kUnsched, kMax},
      {"limit from node allocatable, fits", ebs_one, {running, ebs_two}, 4, ebs, "node"},
      {"CSINode count overrides node allocatable",
       ebs_one,
       {running, ebs_two},
       2,
       ebs,
       "both",
       kUnsched,
       kMax},
      {"no csi driver on the CSINode", ebs_one, {running, ebs_two}, 2, ebs, "no-csi-driver"},
  };
  for (const auto& c : cases) {
    bool skipped = false;
    framework::Status s = RunCase(c, &skipped);
    EXPECT_EQ(s.code(), c.want) << c.name << ": " << s.Message();
    if (c.want != Code::kSuccess) {
      EXPECT_EQ(s.Message(), c.reason) << c.name;
    }
    EXPECT_EQ(skipped, c.want_skip) << c.name;
  }
}

TEST(CSILimitsTest, InTreeAllocatableWithoutCSINode) {
  // v1.20's EBSLimits with the node allocatable override: no CSINode (migration off), the
  // node reports attachable-volumes-aws-ebs = 2; two EBS volumes on the node already.
  const std::string kEBSInTree = kAWSEBSInTree;
  const std::vector<std::string> drivers = {kEBSInTree};
  auto existing =
      MakePod({Claim(Obj(kEBSInTree, 1)), Inline(Type::kAWSElasticBlockStore, "vol-x")});
  for (const auto& [vols, want] : std::vector<std::pair<std::vector<api::Volume>, Code>>{
           {{Claim(Obj(kEBSInTree, 0))}, Code::kUnschedulable},
           {{Inline(Type::kAWSElasticBlockStore, "vol-y")}, Code::kUnschedulable},
           {{Inline(Type::kAWSElasticBlockStore, "vol-x")}, Code::kSuccess},  // already there
           {{Claim(Obj(kEBSInTree, 1))}, Code::kSuccess},
           {{Claim("csi-4")}, Code::kUnschedulable},  // unbound, class provisioner aws-ebs
       }) {
    volume::Catalog catalog;
    api::Manifests m;
    ASSERT_EQ(api::DecodeManifests(Objects(drivers), "o", &m), absl::OkStatus());
    for (auto& o : m.objects) {
      catalog.OnObjectAdd(std::make_shared<const api::Unstructured>(o)).IgnoreError();
    }
    api::Node node = testing::NodeBuilder("n").Obj();
    node.status.allocatable["attachable-volumes-aws-ebs"] = *api::Quantity::Parse("2");
    framework::NodeInfo ni(std::make_shared<api::Node>(node));
    ni.AddPod(framework::PodInfo::Make(existing));
    CSILimits plugin(&catalog);
    framework::CycleState st;
    framework::PreFilterResult r;
    auto pod = framework::PodInfo::Make(MakePod(vols));
    ASSERT_TRUE(plugin.PreFilter(st, *pod, &r).IsSuccess());
    framework::Status s = plugin.Filter(st, *pod, ni);
    EXPECT_EQ(s.code(), want) << vols[0].name << ": " << s.Message();
    // Without the allocatable key nothing limits in-tree volumes (current upstream).
    framework::NodeInfo bare(std::make_shared<api::Node>(testing::NodeBuilder("n").Obj()));
    bare.AddPod(framework::PodInfo::Make(existing));
    EXPECT_TRUE(plugin.Filter(st, *pod, bare).IsSuccess());
  }
}

TEST(CSILimitsTest, QueueingHintOnPodDelete) {
  CSILimits plugin(nullptr);
  auto events = plugin.EventsToRegister();
  const framework::ClusterEventWithHint* del = nullptr;
  for (const auto& e : events) {
    if (e.event.resource == framework::EventResource::kPod) del = &e;
  }
  ASSERT_NE(del, nullptr);
  auto pod = MakePod({Claim(Obj(kEBSCSI, 2))});
  auto hint = [&](api::PodPtr deleted, bool scheduled) {
    api::Pod d = *deleted;
    d.spec.node_name = scheduled ? "node-for-max-pd-test-1" : "";
    framework::EventObjects o;
    o.old_pod = &d;
    return del->hint(*pod, o);
  };
  EXPECT_EQ(hint(MakePod({Claim("placeholder")}), true), framework::QueueingHint::kQueue);
  EXPECT_EQ(hint(MakePod({Inline(Type::kAWSElasticBlockStore, "")}), true),
            framework::QueueingHint::kQueue);
  EXPECT_EQ(hint(MakePod({}), true), framework::QueueingHint::kQueueSkip);
  EXPECT_EQ(hint(MakePod({Claim(Obj(kEBSCSI, 0))}), false), framework::QueueingHint::kQueueSkip);
}

TEST(CSILimitsTest, TranslationAndKeys) {
  std::string err;
  api::VolumeSource ebs;
  ebs.type = Type::kAWSElasticBlockStore;
  ebs.id = "aws://us-east-1a/vol-0123";
  EXPECT_EQ(TranslatedVolumeHandle(ebs, nullptr, &err).value_or("?"), "vol-0123");
  ebs.id = "aws://us-east-1a/disk-1";
  EXPECT_FALSE(TranslatedVolumeHandle(ebs, nullptr, &err).has_value());
  EXPECT_EQ(err, "Invalid format for AWS volume (aws://us-east-1a/disk-1)");
  api::VolumeSource pd;
  pd.type = Type::kGCEPersistentDisk;
  pd.id = "disk-1";
  EXPECT_EQ(*TranslatedVolumeHandle(pd, nullptr, &err),
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/disk-1");
  api::Labels zonal = {{"topology.kubernetes.io/zone", "us-central1-a"}};
  EXPECT_EQ(*TranslatedVolumeHandle(pd, &zonal, &err),
            "projects/UNSPECIFIED/zones/us-central1-a/disks/disk-1");
  api::Labels regional = {
      {"failure-domain.beta.kubernetes.io/zone", "us-central1-a__us-central1-b"}};
  EXPECT_EQ(*TranslatedVolumeHandle(pd, &regional, &err),
            "projects/UNSPECIFIED/regions/us-central1/disks/disk-1");
  EXPECT_EQ(CSIDriverForInTree(kAzureDiskInTree).value_or(""), "disk.csi.azure.com");
  EXPECT_EQ(CSIDriverForInTree(kCinderInTree).value_or(""), "cinder.csi.openstack.org");
  EXPECT_EQ(CSIAttachLimitKey("ebs.csi.aws.com"), "attachable-volumes-csi-ebs.csi.aws.com");
  // FIPS 180-4 test vector, then upstream's hashed key for a long driver name.
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  const std::string long_driver = "a-very-long-csi-driver-name.storage.example.com";
  const std::string key = CSIAttachLimitKey(long_driver);
  EXPECT_EQ(key,
            "attachable-volumes-csi-a-very-long-csi-driver-" + Sha1Hex(long_driver).substr(0, 16));
  EXPECT_LT(key.size(), 63u);
}

}  // namespace
}  // namespace phalanx::plugins::nodevolumelimits
