// VolumeZone: upstream's tables of volume_zone_test.go (TestSingleZone, TestMultiZone,
// TestWithBinding) on a volume::Catalog fed with manifests, plus malformed zone labels.
#include "plugins/volumezone/volume_zone.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::volumezone {
namespace {

using framework::Code;

constexpr const char* kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr const char* kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kRegion = "topology.kubernetes.io/region";

std::string PV(const std::string& name, const std::map<std::string, std::string>& labels) {
  std::string l;
  for (const auto& [k, v] : labels) l += (l.empty() ? "" : ", ") + k + ": \"" + v + "\"";
  return "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name + ", labels: {" +
         l +
         "}}\nspec:\n  capacity: {storage: 1Gi}\n"
         "  accessModes: [ReadWriteOnce]\n";
}
std::string Claim(const std::string& name, const std::string& volume, const std::string& cls) {
  std::string spec = "  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n";
  if (!volume.empty()) spec += "  volumeName: " + volume + "\n";
  if (!cls.empty()) spec += "  storageClassName: " + cls + "\n";
  return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
         ", namespace: default}\nspec:\n" + spec;
}

struct Case {
  std::string name;
  std::vector<std::string> claims;  // the pod's persistentVolumeClaim volumes
  std::map<std::string, std::string> node_labels;
  Code want = Code::kSuccess;
  std::string reason;  // the wanted message when not Success
  bool want_skip = false;
};

class VolumeZoneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_.services().Provide<volume::Catalog>(&catalog_);
    auto p = VolumeZone::New(nullptr, handle_);
    ASSERT_TRUE(p.ok());
    plugin_.reset(dynamic_cast<VolumeZone*>(p.value().release()));
  }
  void Add(const std::string& yaml) {
    api::Manifests m;
    ASSERT_EQ(api::DecodeManifests(yaml, "test", &m), absl::OkStatus());
    for (auto& o : m.objects) {
      EXPECT_TRUE(catalog_.OnObjectAdd(std::make_shared<const api::Unstructured>(o)).ok());
    }
  }
  // PreFilter then Filter, as the framework runs them; the first non-success status.
  framework::Status Run(const Case& c, bool* skipped) {
    api::Pod p = testing::PodBuilder("pod").UID("uid-pod").Obj();
    for (size_t i = 0; i < c.claims.size(); ++i) {
      p.spec.volumes.push_back({"v" + std::to_string(i), c.claims[i], nullptr, {}});
    }
    auto pod = framework::PodInfo::Make(std::make_shared<api::Pod>(p));
    testing::NodeBuilder nb("host1");
    for (const auto& [k, v] : c.node_labels) nb.Label(k, v);
    framework::NodeInfo ni(std::make_shared<api::Node>(nb.Obj()));
    framework::CycleState st;
    framework::PreFilterResult r;
    framework::Status s = plugin_->PreFilter(st, *pod, &r);
    *skipped = s.code() == Code::kSkip;
    if (*skipped) return framework::Status::Success();
    if (!s.IsSuccess()) return s;
    return plugin_->Filter(st, *pod, ni);
  }
  void Check(const std::vector<Case>& cases) {
    for (const auto& c : cases) {
      bool skipped = false;
      framework::Status s = Run(c, &skipped);
      EXPECT_EQ(s.code(), c.want) << c.name << ": " << s.Message();
      if (c.want != Code::kSuccess) {
        EXPECT_EQ(s.Message(), c.reason) << c.name;
      }
      if (c.want_skip) {
        EXPECT_TRUE(skipped) << c.name;
      }
    }
  }

  volume::Catalog catalog_;
  fake::FakeHandle handle_;
  std::unique_ptr<VolumeZone> plugin_;
};

TEST_F(VolumeZoneTest, SingleZone) {
  Add(PV("vol-1", {{kBetaZone, "us-west1-a"}}) +
      PV("vol-2", {{kBetaRegion, "us-west1"}, {"uselessLabel", "none"}}) +
      PV("vol-3", {{kBetaRegion, "us-west1"}}) + PV("vol-stable-1", {{kZone, "us-west1-a"}}) +
      PV("vol-stable-2", {{kRegion, "us-west1"}, {"uselessLabel", "none"}}) +
      PV("vol-stable-3", {{kRegion, "us-west1"}}) + Claim("pvc-1", "vol-1", "") +
      Claim("pvc-2", "vol-2", "") + Claim("pvc-3", "vol-3", "") +
      Claim("pvc-4", "vol-not-exist", "") + Claim("pvc-stable-1", "vol-stable-1", "") +
      Claim("pvc-stable-2", "vol-stable-2", "") + Claim("pvc-stable-3", "vol-stable-3", ""));
  const Code kConflict = Code::kUnschedulableAndUnresolvable;
  Check({
      {"pod without volume", {}, {{kBetaZone, "us-west1-a"}}, Code::kSuccess, "", true},
      {"node without labels", {"pvc-1"}, {}, Code::kSuccess, ""},
      {"beta zone label matched", {"pvc-1"}, {{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}}},
      {"beta region label matched",
       {"pvc-2"},
       {{kBetaRegion, "us-west1"}, {"uselessLabel", "none"}}},
      {"beta region label doesn't match",
       {"pvc-2"},
       {{kBetaRegion, "no_us-west1"}, {"uselessLabel", "none"}},
       kConflict,
       kReasonConflict},
      {"beta zone label doesn't match",
       {"pvc-1"},
       {{kBetaZone, "no_us-west1-a"}, {"uselessLabel", "none"}},
       kConflict,
       kReasonConflict},
      {"zone label matched", {"pvc-stable-1"}, {{kZone, "us-west1-a"}, {"uselessLabel", "none"}}},
      {"region label matched", {"pvc-stable-2"}, {{kRegion, "us-west1"}, {"uselessLabel", "none"}}},
      {"region label doesn't match",
       {"pvc-stable-2"},
       {{kRegion, "no_us-west1"}, {"uselessLabel", "none"}},
       kConflict,
       kReasonConflict},
      {"zone label doesn't match",
       {"pvc-stable-1"},
       {{kZone, "no_us-west1-a"}, {"uselessLabel", "none"}},
       kConflict,
       kReasonConflict},
      {"pv with zone and region, node with only zone",
       {"pvc-1", "pvc-3"},
       {{kZone, "us-west1-a"}},
       kConflict,
       kReasonConflict},
      {"pv with zone,node with beta zone and region",
       {"pvc-1"},
       {{kBetaZone, "us-west1-a"}, {kBetaRegion, "us-west1"}}},
      {"pv with beta label,node with ga label, matched", {"pvc-1"}, {{kZone, "us-west1-a"}}},
      {"pv with beta label,node with ga label, don't match",
       {"pvc-1"},
       {{kZone, "us-west1-b"}},
       kConflict,
       kReasonConflict},
      {"PV not found",
       {"pvc-4"},
       {{kZone, "us-west1-a"}},
       kConflict,
       "persistentvolume \"vol-not-exist\" not found"},
  });
}

TEST_F(VolumeZoneTest, MultiZone) {
  Add(PV("vol-1", {{kBetaZone, "us-west1-a"}}) +
      PV("vol-2", {{kBetaZone, "us-west1-b"}, {"uselessLabel", "none"}}) +
      PV("vol-3", {{kBetaZone, "us-west1-c__us-west1-a"}}) +
      PV("vol-stable-1", {{kZone, "us-west1-a"}}) +
      PV("vol-stable-2", {{kZone, "us-west1-c__us-west1-a"}}) + Claim("pvc-1", "vol-1", "") +
      Claim("pvc-2", "vol-2", "") + Claim("pvc-3", "vol-3", "") +
      Claim("pvc-stable-1", "vol-stable-1", "") + Claim("pvc-stable-2", "vol-stable-2", ""));
  const Code kConflict = Code::kUnschedulableAndUnresolvable;
  Check({
      {"node without labels", {"pvc-3"}, {}},
      {"beta zone label matched", {"pvc-3"}, {{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}}},
      {"beta zone label doesn't match",
       {"pvc-1"},
       {{kBetaZone, "us-west1-b"}, {"uselessLabel", "none"}},
       kConflict,
       kReasonConflict},
      {"zone label matched", {"pvc-stable-2"}, {{kZone, "us-west1-a"}, {"uselessLabel", "none"}}},
      {"zone label doesn't match",
       {"pvc-stable-1"},
       {{kZone, "us-west1-b"}, {"uselessLabel", "none"}},
       kConflict,
       kReasonConflict},
      {"one of many zones doesn't match",
       {"pvc-3"},
       {{kBetaZone, "us-west1-b"}},
       kConflict,
       kReasonConflict},
  });
}

TEST_F(VolumeZoneTest, WithBinding) {
  Add(R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: class-wait}
provisioner: example.com/csi
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: class-immediate}
provisioner: example.com/csi
volumeBindingMode: Immediate
)" + PV("vol-1", {{kBetaZone, "us-west1-a"}}) +
      Claim("pvc-1", "vol-1", "") + Claim("pvc-empty-sc", "", "\"\"") +
      Claim("pvc-no-sc", "", "class-0") + Claim("pvc-immediate-sc", "", "class-immediate") +
      Claim("pvc-wait-sc", "", "class-wait"));
  const std::map<std::string, std::string> node = {{kBetaZone, "us-west1-a"},
                                                   {"uselessLabel", "none"}};
  const Code kUnresolvable = Code::kUnschedulableAndUnresolvable;
  Check({
      {"label zone failure domain matched", {"pvc-1"}, node},
      {"unbound volume empty storage class",
       {"pvc-empty-sc"},
       node,
       kUnresolvable,
       "PersistentVolumeClaim had no pv name and storageClass name"},
      {"unbound volume no storage class",
       {"pvc-no-sc"},
       node,
       kUnresolvable,
       "storageclass.storage.k8s.io \"class-0\" not found"},
      {"unbound volume immediate binding mode",
       {"pvc-immediate-sc"},
       node,
       kUnresolvable,
       "PersistentVolume had no name"},
      {"unbound volume wait binding mode", {"pvc-wait-sc"}, node, Code::kSuccess, "", true},
      {"PVC not found",
       {"pvc-missing"},
       node,
       kUnresolvable,
       "persistentvolumeclaim \"pvc-missing\" not found"},
  });
}

TEST_F(VolumeZoneTest, MalformedZoneLabelIsIgnoredAsUpstream) {
  // "us-west1-a____us-west1-b" has an empty element: upstream LabelZonesToSet fails and
  // the label is skipped, so the PV constrains nothing.
  Add(PV("vol-bad", {{kZone, "us-west1-a____us-west1-b"}}) + Claim("pvc-bad", "vol-bad", ""));
  Check({{"empty zone element", {"pvc-bad"}, {{kZone, "us-west1-c"}}, Code::kSuccess, "", true}});
  volume::PersistentVolume pv;
  pv.name = "x";
  pv.labels = {{kZone, " a __b"}, {kRegion, "r"}};
  auto t = PVTopologies(pv);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].key, kZone);
  EXPECT_EQ(t[0].values, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(t[1].key, kRegion);
}

TEST_F(VolumeZoneTest, Signature) {
  auto plain = framework::PodInfo::Make(std::make_shared<api::Pod>(testing::PodBuilder("a").Obj()));
  api::Pod with = testing::PodBuilder("b").Obj();
  with.spec.volumes.push_back({"v", "pvc-1", nullptr, {}});
  auto claimed = framework::PodInfo::Make(std::make_shared<api::Pod>(with));
  EXPECT_TRUE(plugin_->SameSignature(*plain, *plain));
  EXPECT_FALSE(plugin_->SameSignature(*plain, *claimed));
  EXPECT_FALSE(plugin_->SameSignature(*claimed, *claimed));
}

}  // namespace
}  // namespace phalanx::plugins::volumezone
