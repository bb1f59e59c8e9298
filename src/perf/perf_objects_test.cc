#include "perf/perf_objects.h"

#include <gtest/gtest.h>

#include "volume/objects.h"

namespace phalanx::perf {
namespace {

const std::string kConfigDir = std::string(PHALANX_SOURCE_DIR) + "/src/perf/testdata/config";

VolumeTemplates Load(const std::string& pv) {
  VolumeTemplates t;
  EXPECT_EQ(LoadVolumeTemplates(kConfigDir + "/" + pv, kConfigDir + "/pvc.yaml", &t),
            absl::OkStatus());
  return t;
}

std::string Str(const api::Unstructured& u, std::initializer_list<const char*> path) {
  YAML::Node n = YAML::Clone(*u.object);
  for (const char* p : path) {
    if (!n.IsDefined() || !n.IsMap()) return "<absent>";
    const YAML::Node child = static_cast<const YAML::Node&>(n)[p];
    if (!child.IsDefined()) return "<absent>";
    n.reset(child);
  }
  return n.IsScalar() ? n.Scalar() : "<absent>";
}

// Upstream CreatePodWithPersistentVolume + getCustomVolumeFactory: PV "<ns>-vol-<i>" pre-bound
// to claim "pvc-<i>" (no uid), the CSI volume handle "vol-<i>", both phases Bound after the
// status writes, the claim without spec.volumeName.
TEST(PerfObjects, CSIPodVolumesAsUpstream) {
  const VolumeTemplates t = Load("pv-csi.yaml");
  const PodVolumeObjects o = MakePodVolumeObjects(t, "namespace-2", 7);
  EXPECT_EQ(o.claim_name, "pvc-7");
  EXPECT_EQ(o.pv.metadata.name, "namespace-2-vol-7");
  EXPECT_EQ(o.pv.metadata.namespace_, "");
  EXPECT_EQ(Str(o.pv, {"spec", "csi", "volumeHandle"}), "vol-7");
  EXPECT_EQ(Str(o.pv, {"spec", "csi", "driver"}), "ebs.csi.aws.com");
  EXPECT_EQ(Str(o.pv_created, {"status", "phase"}), "Pending");
  EXPECT_EQ(Str(o.pv, {"status", "phase"}), "Bound");
  EXPECT_EQ(Str(o.pv, {"spec", "claimRef", "kind"}), "PersistentVolumeClaim");
  EXPECT_EQ(Str(o.pv, {"spec", "claimRef", "apiVersion"}), "v1");
  EXPECT_EQ(Str(o.pv, {"spec", "claimRef", "uid"}), "<absent>");
  EXPECT_EQ(Str(o.pv, {"spec", "persistentVolumeReclaimPolicy"}), "Retain");

  const volume::PersistentVolume pv =
      volume::DecodePersistentVolume(std::make_shared<const api::Unstructured>(o.pv));
  EXPECT_EQ(pv.error, "");
  ASSERT_TRUE(pv.claim_ref.has_value());
  EXPECT_EQ(pv.claim_ref->Key(), "namespace-2/pvc-7");
  EXPECT_EQ(pv.phase, "Bound");
  EXPECT_EQ(pv.csi_driver, "ebs.csi.aws.com");
  EXPECT_EQ(pv.capacity, 1LL << 30);

  EXPECT_EQ(o.pvc.metadata.name, "pvc-7");
  EXPECT_EQ(o.pvc.metadata.namespace_, "namespace-2");
  EXPECT_EQ(o.pvc.metadata.annotations.at(volume::kAnnBindCompleted), "true");
  EXPECT_EQ(Str(o.pvc_created, {"status", "phase"}), "Pending");
  const volume::PersistentVolumeClaim pvc =
      volume::DecodePersistentVolumeClaim(std::make_shared<const api::Unstructured>(o.pvc));
  EXPECT_EQ(pvc.error, "");
  EXPECT_EQ(pvc.phase, "Bound");
  EXPECT_EQ(pvc.volume_name, "");  // upstream leaves it to the (fake) PV controller
  EXPECT_EQ(pvc.access_modes, (std::vector<std::string>{"ReadOnlyMany"}));

  // The fake PV controller binds the claim once; a bound claim is left alone.
  api::Unstructured bound;
  ASSERT_TRUE(FakePVControllerSync(o.pv, o.pvc, &bound));
  const volume::PersistentVolumeClaim b =
      volume::DecodePersistentVolumeClaim(std::make_shared<const api::Unstructured>(bound));
  EXPECT_EQ(b.volume_name, "namespace-2-vol-7");
  EXPECT_EQ(b.annotations.at(volume::kAnnBindCompleted), "yes");
  api::Unstructured again;
  EXPECT_FALSE(FakePVControllerSync(o.pv, bound, &again));
  EXPECT_FALSE(FakePVControllerSync(o.pvc, o.pvc, &again));  // no claimRef: nothing to do
}

TEST(PerfObjects, InTreeAWSVolumeID) {
  const PodVolumeObjects o = MakePodVolumeObjects(Load("pv-aws.yaml"), "namespace-1", 0);
  EXPECT_EQ(o.pv.metadata.name, "namespace-1-vol-0");
  EXPECT_EQ(Str(o.pv, {"spec", "awsElasticBlockStore", "volumeID"}), "vol-0");
  EXPECT_EQ(Str(o.pv, {"spec", "csi", "volumeHandle"}), "<absent>");
  const volume::PersistentVolume pv =
      volume::DecodePersistentVolume(std::make_shared<const api::Unstructured>(o.pv));
  EXPECT_EQ(pv.error, "");
  EXPECT_EQ(pv.csi_driver, "");
}

// Upstream NodeAllocatableStrategy.createCSINode.
TEST(PerfObjects, CSINodeAsUpstream) {
  NodeStrategy st;
  st.kind = NodeStrategy::Kind::kNodeAllocatable;
  st.csi_node_allocatable["ebs.csi.aws.com"] = 39;
  st.csi_node_allocatable["other.csi"] = std::nullopt;
  st.migrated_plugins = {"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"};
  const api::Unstructured u = MakeCSINode("scheduler-perf-3", st);
  EXPECT_EQ(u.Key(), "CSINode.storage.k8s.io//scheduler-perf-3");
  EXPECT_EQ(u.metadata.annotations.at(kAnnMigratedPlugins),
            "kubernetes.io/aws-ebs,kubernetes.io/gce-pd");
  EXPECT_EQ(Str(u, {"metadata", "annotations", kAnnMigratedPlugins}),
            "kubernetes.io/aws-ebs,kubernetes.io/gce-pd");
  const volume::CSINode n = volume::DecodeCSINode(u);
  EXPECT_EQ(n.error, "");
  EXPECT_EQ(n.name, "scheduler-perf-3");
  ASSERT_EQ(n.drivers.size(), 2u);
  EXPECT_EQ(n.drivers[0].name, "ebs.csi.aws.com");
  EXPECT_EQ(n.drivers[0].allocatable_count, 39);
  EXPECT_EQ(n.drivers[1].name, "other.csi");
  EXPECT_FALSE(n.drivers[1].allocatable_count.has_value());
  EXPECT_EQ((*u.object)["spec"]["drivers"][0]["nodeID"].Scalar(), "scheduler-perf-3");

  // No migrated plugins: the annotation is still there, empty (upstream sets it always).
  NodeStrategy csi_only;
  csi_only.csi_node_allocatable["ebs.csi.aws.com"] = 39;
  EXPECT_EQ(MakeCSINode("n", csi_only).metadata.annotations.at(kAnnMigratedPlugins), "");
}

}  // namespace
}  // namespace phalanx::perf
