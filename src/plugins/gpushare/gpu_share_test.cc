// Table tests for the GpuShare plugin (the GPU device model and the fragmentation
// measure it uses: src/gpu/gpu_test.cc).
#include "plugins/gpushare/gpu_share.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <optional>

#include "gpu/device.h"
#include "gpu/gpu_builders_test.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::gpushare {
namespace {

using phalanx::gpu::testing::GpuNode;
using phalanx::gpu::testing::Share;
using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;
using C = framework::Code;

class GpuShareTest : public ::testing::Test {
 protected:
  std::unique_ptr<GpuShare> New(const std::string& args_yaml = "") {
    std::optional<YAML::Node> args;
    if (!args_yaml.empty()) args = YAML::Load(args_yaml);
    auto p = GpuShare::New(args ? &*args : nullptr, h_);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return std::unique_ptr<GpuShare>(dynamic_cast<GpuShare*>(p.value().release()));
  }
  fake::FakeHandle h_;
};

TEST_F(GpuShareTest, FilterAccountsPerDevice) {
  struct Case {
    std::string name;
    api::Node node;
    std::vector<api::Pod> existing;
    api::Pod pod;
    C want;
    std::string reason;
  };
  const api::Node n2 = GpuNode("n", 2);
  const std::vector<Case> cases = {
      {"share on an idle node", n2, {}, Share("p", 500), C::kSuccess, ""},
      {"two half-used GPUs cannot take a whole GPU",
       n2,
       {Share("a", 500, 1, "0"), Share("b", 500, 1, "1")},
       Share("p", 1000),
       C::kUnschedulable,
       GpuShare::kReasonInsufficient},
      {"two half-used GPUs take another half",
       n2,
       {Share("a", 500, 1, "0"), Share("b", 500, 1, "1")},
       Share("p", 500),
       C::kSuccess,
       ""},
      {"a share does not fit in 400 free",
       n2,
       {Share("a", 600, 1, "0"), Share("b", 600, 1, "1")},
       Share("p", 500),
       C::kUnschedulable,
       GpuShare::kReasonInsufficient},
      {"whole GPU next to a share",
       n2,
       {Share("a", 500, 1, "0")},
       Share("p", 1000),
       C::kSuccess,
       ""},
      {"nvidia.com/gpu pod counts as whole devices",
       n2,
       {PodBuilder("w").UID("uid-w").Req("nvidia.com/gpu", "1").Obj()},
       Share("p", 1000, 2),
       C::kUnschedulable,
       GpuShare::kReasonInsufficient},
      {"more GPUs than the node has",
       n2,
       {},
       Share("p", 1000, 4),
       C::kUnschedulableAndUnresolvable,
       GpuShare::kReasonTooFew},
      {"wrong model",
       n2,
       {},
       Share("p", 500, 1, "", "T4|A10"),
       C::kUnschedulableAndUnresolvable,
       GpuShare::kReasonModel},
      {"allowed model", n2, {}, Share("p", 500, 1, "", "T4|V100M16"), C::kSuccess, ""},
      {"node without GPUs",
       NodeBuilder("c").Capacity({{"cpu", "8"}}).Obj(),
       {},
       Share("p", 100),
       C::kUnschedulableAndUnresolvable,
       GpuShare::kReasonNoGpus},
      {"KAI fraction",
       n2,
       {Share("a", 700, 1, "0"), Share("b", 700, 1, "1")},
       PodBuilder("p").Annotation("gpu-fraction", "0.3").Obj(),
       C::kSuccess,
       ""},
      {"KAI memory on a model of unknown size",
       GpuNode("n", 2, "Z9"),
       {},
       PodBuilder("p").Annotation("gpu-memory", "1000").Obj(),
       C::kUnschedulableAndUnresolvable,
       GpuShare::kReasonMemory},
      {"unassigned pods are packed best fit",
       n2,
       {Share("a", 600), Share("b", 600)},
       Share("p", 500),
       C::kUnschedulable,
       GpuShare::kReasonInsufficient},
  };
  for (const auto& c : cases) {
    auto pl = New();
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess()) << c.name;
    auto ni = MakeNodeInfo(c.node, c.existing);
    auto s = pl->Filter(state, *pi, ni);
    EXPECT_EQ(s.code(), c.want) << c.name << ": " << s.ToString();
    if (!c.reason.empty()) {
      ASSERT_EQ(s.reasons().size(), 1u) << c.name;
      EXPECT_EQ(s.reasons()[0], c.reason) << c.name;
    }
  }
}

TEST_F(GpuShareTest, PreFilterSkipsPodsWithoutGpuAndRejectsBadAnnotations) {
  auto pl = New();
  framework::CycleState state;
  auto cpu = PodBuilder("cpu").Req("cpu", "1").Info();
  EXPECT_TRUE(pl->PreFilter(state, *cpu, nullptr).IsSkip());
  auto bad = PodBuilder("bad").Annotation(gpu::kGpuMilliAnnotation, "x").Info();
  auto s = pl->PreFilter(state, *bad, nullptr);
  EXPECT_EQ(s.code(), C::kUnschedulableAndUnresolvable);
  EXPECT_NE(s.Message().find("alibabacloud.com/gpu-milli"), std::string::npos) << s.Message();
}

TEST_F(GpuShareTest, ReserveRecordsDevicesAndUnreserveReleasesThem) {
  const api::Node n = GpuNode("n", 4);
  // Device 0: 300 free, 1: 700 free, 2 and 3 idle.
  h_.SetNodes({MakeNodeInfo(n, {Share("a", 700, 1, "0"), Share("b", 300, 1, "1")})});
  auto pl = New();
  struct Step {
    api::Pod pod;
    std::vector<int32_t> want;
  };
  for (const auto& [pod, want] : std::vector<Step>{{Share("p1", 300), {0}},         // tightest
                                                   {Share("p2", 1000, 2), {2, 3}},  // lowest idle
                                                   {Share("p3", 600), {1}}}) {
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(pod));
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
    ASSERT_TRUE(pl->Reserve(state, *pi, "n").IsSuccess()) << pod.metadata.name;
    EXPECT_EQ(pl->context().Assignment("uid-" + pod.metadata.name), want) << pod.metadata.name;
  }
  framework::CycleState state;
  auto p1 = framework::PodInfo::Make(std::make_shared<api::Pod>(Share("p1", 300)));
  pl->Unreserve(state, *p1, "n");
  EXPECT_FALSE(pl->context().Assignment("uid-p1").has_value());
  // The state of a node follows the assignments of the pods on it.
  auto ni = MakeNodeInfo(n, {Share("a", 700, 1, "0"), Share("p3", 600)});
  EXPECT_EQ(pl->context().ComputeState(ni, "").shape.free_milli,
            (std::vector<int32_t>{300, 400, 1000, 1000}));
}

TEST_F(GpuShareTest, ReserveFailsWhenDevicesNoLongerFit) {
  h_.SetNodes({MakeNodeInfo(GpuNode("n", 1), {Share("a", 800, 1, "0")})});
  auto pl = New();
  framework::CycleState state;
  auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(Share("p", 500)));
  ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
  EXPECT_EQ(pl->Reserve(state, *pi, "n").code(), C::kUnschedulable);
  EXPECT_FALSE(pl->context().Assignment("uid-p").has_value());
}

TEST_F(GpuShareTest, GangMembersPlacedTogetherGetTheDevicesFilterAssumed) {
  // The PodGroup cycle's view holds members a (share) and b (whole) on the node, neither
  // reserved yet. Filter for b assumed a takes device 1 (best fit: 600 free); a must get
  // device 1 at Reserve even with WorstFit selection, so b still fits.
  const api::Node n = GpuNode("n", 2);
  api::Pod used = Share("x", 400, 1, "1");
  h_.SetNodes({MakeNodeInfo(n, {used, Share("a", 500), Share("b", 1000)})});
  auto pl = New("deviceSelection: WorstFit");
  for (const char* name : {"a", "b"}) {
    framework::CycleState state;
    api::Pod p = std::string(name) == "a" ? Share("a", 500) : Share("b", 1000);
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(p));
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
    ASSERT_TRUE(pl->Reserve(state, *pi, "n").IsSuccess()) << name;
  }
  EXPECT_EQ(pl->context().Assignment("uid-a"), (std::vector<int32_t>{1}));
  EXPECT_EQ(pl->context().Assignment("uid-b"), (std::vector<int32_t>{0}));
}

TEST_F(GpuShareTest, ArgsAreValidated) {
  EXPECT_TRUE(GpuShare::New(nullptr, h_).ok());
  YAML::Node bad = YAML::Load("deviceSelection: Tightest");
  auto r = GpuShare::New(&bad, h_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().Message().find("GpuShareArgs: deviceSelection: Unsupported value"),
            std::string::npos)
      << r.status().Message();
  YAML::Node unknown = YAML::Load("gpuSel: best");
  EXPECT_FALSE(GpuShare::New(&unknown, h_).ok());
}

}  // namespace
}  // namespace phalanx::plugins::gpushare
