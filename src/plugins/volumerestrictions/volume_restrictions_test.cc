// VolumeRestrictions: upstream's tables of volume_restrictions_test.go (TestGCEDiskConflicts,
// TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts,
// TestAccessModeConflicts), the PreFilterExtensions what-if, the pod-delete queueing hint,
// and the decoding of the sources from a manifest.
#include "plugins/volumerestrictions/volume_restrictions.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::volumerestrictions {
namespace {

using framework::Code;
using Type = api::VolumeSource::Type;

api::Volume Disk(Type t, const std::string& id, bool read_only = false) {
  api::Volume v{"disk", "", nullptr, {}};
  v.source.type = t;
  v.source.id = id;
  v.source.read_only = read_only;
  return v;
}
api::Volume RBD(std::vector<std::string> monitors, const std::string& pool,
                const std::string& image) {
  api::Volume v = Disk(Type::kRBD, image);
  v.source.monitors = std::move(monitors);
  v.source.pool = pool;
  return v;
}
api::Volume Claim(const std::string& claim) { return {"v-" + claim, claim, nullptr, {}}; }

api::PodPtr MakePod(const std::string& name, std::vector<api::Volume> vols) {
  api::Pod p = testing::PodBuilder(name).UID("uid-" + name).Obj();
  p.spec.volumes = std::move(vols);
  return std::make_shared<api::Pod>(p);
}

class VolumeRestrictionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_.services().Provide<volume::Catalog>(&catalog_);
    auto p = VolumeRestrictions::New(nullptr, handle_);
    ASSERT_TRUE(p.ok());
    plugin_.reset(dynamic_cast<VolumeRestrictions*>(p.value().release()));
  }
  // Places `existing` on node "n1" of the snapshot; returns that NodeInfo.
  const framework::NodeInfo& Node(const std::vector<api::PodPtr>& existing) {
    framework::NodeInfo ni(std::make_shared<api::Node>(testing::NodeBuilder("n1").Obj()));
    for (const auto& p : existing) ni.AddPod(framework::PodInfo::Make(p));
    std::vector<framework::NodeInfo> nodes;
    nodes.push_back(std::move(ni));
    handle_.SetNodes(std::move(nodes));
    return *handle_.SnapshotSharedLister().Get("n1");
  }
  void AddClaims() {
    api::Manifests m;
    std::string yaml;
    for (const auto& [name, mode] :
         std::vector<std::pair<std::string, std::string>>{{"claim-with-rwop-1", "ReadWriteOncePod"},
                                                          {"claim-with-rwop-2", "ReadWriteOncePod"},
                                                          {"claim-with-rwx", "ReadWriteMany"}}) {
      yaml += "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
              ", namespace: default}\nspec: {accessModes: [" + mode +
              "], resources: {requests: {storage: 1Gi}}}\n";
    }
    ASSERT_EQ(api::DecodeManifests(yaml, "claims", &m), absl::OkStatus());
    for (auto& o : m.objects) {
      EXPECT_TRUE(catalog_.OnObjectAdd(std::make_shared<const api::Unstructured>(o)).ok());
    }
  }
  // PreFilter then Filter. *pre gets PreFilter's status.
  framework::Status Run(const api::PodPtr& pod, const std::vector<api::PodPtr>& existing,
                        framework::Status* pre, framework::CycleState* st = nullptr) {
    const framework::NodeInfo& ni = Node(existing);
    framework::CycleState local;
    if (!st) st = &local;
    framework::PreFilterResult r;
    auto pi = framework::PodInfo::Make(pod);
    *pre = plugin_->PreFilter(*st, *pi, &r);
    if (pre->code() == Code::kSkip) return framework::Status::Success();  // Filter not run
    if (!pre->IsSuccess()) return *pre;
    return plugin_->Filter(*st, *pi, ni);
  }
  // upstream's disk-conflict table for one pair of volumes: nothing, one state, same
  // state (conflict), different state.
  void DiskTable(const api::Volume& state, const api::Volume& state2) {
    framework::Status pre;
    EXPECT_TRUE(Run(MakePod("p", {}), {}, &pre).IsSuccess());
    EXPECT_EQ(pre.code(), Code::kSkip) << "nothing";
    EXPECT_TRUE(Run(MakePod("p", {}), {MakePod("e", {})}, &pre).IsSuccess());
    EXPECT_EQ(pre.code(), Code::kSkip) << "one state";
    framework::Status s = Run(MakePod("p", {state}), {MakePod("e", {state})}, &pre);
    EXPECT_TRUE(pre.IsSuccess()) << "same state";
    EXPECT_EQ(s.code(), Code::kUnschedulable) << "same state";
    EXPECT_EQ(s.Message(), kReasonDiskConflict);
    EXPECT_TRUE(Run(MakePod("p", {state2}), {MakePod("e", {state})}, &pre).IsSuccess())
        << "different state";
  }

  volume::Catalog catalog_;
  fake::FakeHandle handle_;
  std::unique_ptr<VolumeRestrictions> plugin_;
};

TEST_F(VolumeRestrictionsTest, GCEDiskConflicts) {
  DiskTable(Disk(Type::kGCEPersistentDisk, "foo"), Disk(Type::kGCEPersistentDisk, "bar"));
  // Read-only on both sides: no conflict; one side writable: conflict.
  framework::Status pre;
  EXPECT_TRUE(Run(MakePod("p", {Disk(Type::kGCEPersistentDisk, "foo", true)}),
                  {MakePod("e", {Disk(Type::kGCEPersistentDisk, "foo", true)})}, &pre)
                  .IsSuccess());
  EXPECT_EQ(Run(MakePod("p", {Disk(Type::kGCEPersistentDisk, "foo", true)}),
                {MakePod("e", {Disk(Type::kGCEPersistentDisk, "foo")})}, &pre)
                .code(),
            Code::kUnschedulable);
}

TEST_F(VolumeRestrictionsTest, AWSDiskConflicts) {
  DiskTable(Disk(Type::kAWSElasticBlockStore, "foo"), Disk(Type::kAWSElasticBlockStore, "bar"));
  // EBS conflicts even when both are read-only.
  framework::Status pre;
  EXPECT_EQ(Run(MakePod("p", {Disk(Type::kAWSElasticBlockStore, "foo", true)}),
                {MakePod("e", {Disk(Type::kAWSElasticBlockStore, "foo", true)})}, &pre)
                .code(),
            Code::kUnschedulable);
}

TEST_F(VolumeRestrictionsTest, RBDDiskConflicts) {
  DiskTable(RBD({"a", "b"}, "foo", "bar"), RBD({"c", "d"}, "foo", "bar"));
  framework::Status pre;
  // A shared monitor with another pool or image is another image.
  EXPECT_TRUE(Run(MakePod("p", {RBD({"b", "x"}, "other", "bar")}),
                  {MakePod("e", {RBD({"a", "b"}, "foo", "bar")})}, &pre)
                  .IsSuccess());
  EXPECT_EQ(Run(MakePod("p", {RBD({"b", "x"}, "foo", "bar")}),
                {MakePod("e", {RBD({"a", "b"}, "foo", "bar")})}, &pre)
                .code(),
            Code::kUnschedulable);
}

TEST_F(VolumeRestrictionsTest, ISCSIDiskConflicts) {
  api::Volume a = Disk(Type::kISCSI, "iqn.2016-12.server:storage.target01");
  api::Volume b = Disk(Type::kISCSI, "iqn.2017-12.server:storage.target01");
  a.source.target_portal = b.source.target_portal = "127.0.0.1:3260";
  DiskTable(a, b);
}

TEST_F(VolumeRestrictionsTest, AccessModeConflicts) {
  auto one_pvc = MakePod("one", {Claim("claim-with-rwop-1")});
  auto two_pvcs = MakePod("two", {Claim("claim-with-rwop-1"), Claim("claim-with-rwop-2")});
  auto one_conflict = MakePod("c1", {Claim("claim-with-rwop-1")});
  auto two_conflicts = MakePod("c2", {Claim("claim-with-rwop-1"), Claim("claim-with-rwop-2")});
  auto rwx = MakePod("rwx", {Claim("claim-with-rwx")});
  framework::Status pre;

  // "failed to get PVC"
  framework::Status s = Run(one_pvc, {}, &pre);
  EXPECT_EQ(pre.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(pre.Message(), "persistentvolumeclaim \"claim-with-rwop-1\" not found");

  AddClaims();
  // "nothing"
  (void)Run(rwx, {}, &pre);
  EXPECT_EQ(pre.code(), Code::kSkip);
  // "no access mode conflict"
  (void)Run(one_pvc, {rwx}, &pre);
  EXPECT_EQ(pre.code(), Code::kSkip);
  // "access mode conflict, unschedulable"
  s = Run(one_conflict, {one_pvc, rwx}, &pre);
  EXPECT_TRUE(pre.IsSuccess());
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), kReasonReadWriteOncePodConflict);
  // "two conflicts, unschedulable"
  s = Run(two_conflicts, {two_pvcs, rwx}, &pre);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), kReasonReadWriteOncePodConflict);
}

TEST_F(VolumeRestrictionsTest, RemovingTheUserOfTheClaimResolvesTheConflict) {
  // Preemption's what-if: RemovePod of the pod that holds the ReadWriteOncePod claim lets
  // the pod fit; AddPod brings the conflict back.
  AddClaims();
  auto holder = MakePod("holder", {Claim("claim-with-rwop-1")});
  auto pod = MakePod("p", {Claim("claim-with-rwop-1")});
  framework::CycleState st;
  framework::Status pre;
  EXPECT_EQ(Run(pod, {holder}, &pre, &st).code(), Code::kUnschedulable);
  const framework::NodeInfo& ni = *handle_.SnapshotSharedLister().Get("n1");
  auto pi = framework::PodInfo::Make(pod);
  auto hi = framework::PodInfo::Make(holder);
  ASSERT_TRUE(plugin_->RemovePod(st, *pi, hi, ni).IsSuccess());
  EXPECT_TRUE(plugin_->Filter(st, *pi, ni).IsSuccess());
  ASSERT_TRUE(plugin_->AddPod(st, *pi, hi, ni).IsSuccess());
  EXPECT_EQ(plugin_->Filter(st, *pi, ni).code(), Code::kUnschedulable);
}

TEST_F(VolumeRestrictionsTest, PodDeletedHint) {
  auto events = plugin_->EventsToRegister();
  ASSERT_EQ(events[0].event.resource, framework::EventResource::kPod);
  auto pod = MakePod("p", {Disk(Type::kAWSElasticBlockStore, "foo"), Claim("claim-with-rwop-1")});
  auto hint = [&](const api::PodPtr& deleted) {
    framework::EventObjects o;
    o.old_pod = deleted.get();
    return events[0].hint(*pod, o);
  };
  EXPECT_EQ(hint(MakePod("e", {Disk(Type::kAWSElasticBlockStore, "foo")})),
            framework::QueueingHint::kQueue);
  EXPECT_EQ(hint(MakePod("e", {Claim("claim-with-rwop-1")})), framework::QueueingHint::kQueue);
  EXPECT_EQ(hint(MakePod("e", {Disk(Type::kAWSElasticBlockStore, "bar")})),
            framework::QueueingHint::kQueueSkip);
  api::Pod other_ns = *MakePod("e", {Disk(Type::kAWSElasticBlockStore, "foo")});
  other_ns.metadata.namespace_ = "other";
  framework::EventObjects o;
  o.old_pod = &other_ns;
  EXPECT_EQ(events[0].hint(*pod, o), framework::QueueingHint::kQueueSkip);
}

TEST(VolumeSourceDecodeTest, SourcesFromAManifestAndErrors) {
  api::Manifests m;
  ASSERT_EQ(api::DecodeManifests(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  volumes:
  - {name: a, awsElasticBlockStore: {volumeID: vol-1, readOnly: true}}
  - {name: g, gcePersistentDisk: {pdName: pd-1}}
  - {name: r, rbd: {monitors: [m1, m2], image: img}}
  - {name: i, iscsi: {targetPortal: "10.0.0.1:3260", iqn: iqn.x, lun: 3}}
  - {name: z, azureDisk: {diskName: d, diskURI: /sub/d}}
  - {name: k, cinder: {volumeID: c-1}}
  - {name: s, csi: {driver: inline.example.com}}
  - {name: cm, configMap: {name: x}}
)",
                                 "pod", &m),
            absl::OkStatus());
  ASSERT_EQ(m.pods.size(), 1u);
  const auto& v = m.pods[0].spec.volumes;
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0].source.type, Type::kAWSElasticBlockStore);
  EXPECT_EQ(v[0].source.id, "vol-1");
  EXPECT_TRUE(v[0].source.read_only);
  EXPECT_EQ(v[1].source.type, Type::kGCEPersistentDisk);
  EXPECT_EQ(v[2].source.pool, "rbd");  // defaulted
  EXPECT_EQ(v[2].source.monitors, (std::vector<std::string>{"m1", "m2"}));
  EXPECT_EQ(v[3].source.lun, 3);
  EXPECT_EQ(v[4].source.id, "/sub/d");
  EXPECT_EQ(v[5].source.type, Type::kCinder);
  EXPECT_EQ(v[6].source.driver, "inline.example.com");
  EXPECT_EQ(v[7].source.type, Type::kOther);

  for (const auto& [volume, want] : std::vector<std::pair<std::string, std::string>>{
           {"{name: a, awsElasticBlockStore: {readOnly: true}}",
            "spec.volumes[0].awsElasticBlockStore.volumeID: Required value"},
           {"{name: g, gcePersistentDisk: {pdName: pd, readOnly: maybe}}",
            "spec.volumes[0].gcePersistentDisk.readOnly: Invalid value: \"maybe\": must be true or "
            "false"},
           {"{name: i, iscsi: {targetPortal: x, iqn: y, lun: 300}}",
            "spec.volumes[0].iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive"},
           {"{name: r, rbd: {monitors: m1, image: img}}",
            "spec.volumes[0].rbd.monitors: Invalid value: must be a list of strings"},
           {"{name: two, gcePersistentDisk: {pdName: a}, awsElasticBlockStore: {volumeID: b}}",
            "more than 1 volume type"},
       }) {
    api::Manifests bad;
    absl::Status s = api::DecodeManifests(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
        "  containers: [{name: c, image: busybox}]\n  volumes: [" +
            volume + "]\n",
        "pod", &bad);
    EXPECT_FALSE(s.ok()) << volume;
    EXPECT_NE(std::string(s.message()).find(want), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace phalanx::plugins::volumerestrictions
