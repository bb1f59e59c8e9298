// Table tests for the GPU device model (device.h), the fragmentation measure (frag.h,
// numbers worked by hand from the FGD artifact's definitions) and the GpuShare plugin.
#include "plugins/gpushare/gpu_share.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <optional>

#include "gpu/device.h"
#include "gpu/frag.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::gpushare {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;
using C = framework::Code;

// A pod with Alibaba annotations (milli per device, count) and optional devices.
api::Pod Share(const std::string& name, int milli, int count = 1, const std::string& index = "",
               const std::string& model = "") {
  PodBuilder b(name);
  b.UID("uid-" + name).Req("cpu", "1");
  b.Annotation(gpu::kGpuMilliAnnotation, std::to_string(milli));
  b.Annotation(gpu::kGpuCountAnnotation, std::to_string(count));
  if (!index.empty()) b.Annotation(gpu::kGpuIndexAnnotation, index);
  if (!model.empty()) b.Annotation(gpu::kGpuModelAnnotation, model);
  return b.Obj();
}

api::Node GpuNode(const std::string& name, int gpus, const std::string& model = "V100M16") {
  auto b = NodeBuilder(name).Capacity({{"cpu", "32"},
                                       {"memory", "256Gi"},
                                       {"pods", "110"},
                                       {"nvidia.com/gpu", std::to_string(gpus)}});
  if (!model.empty()) b.Label(gpu::kGpuModelLabel, model);
  return b.Obj();
}

TEST(GpuAskTest, ParsesEveryDialect) {
  struct Case {
    std::string name;
    api::Pod pod;
    gpu::AskSource source;
    int32_t count, milli;
    int64_t memory_mib;
    std::vector<std::string> models;
    bool error;
  };
  const std::vector<Case> cases = {
      {"no GPU", PodBuilder("p").Req("cpu", "1").Obj(), gpu::AskSource::kNone, 0, 0, 0, {}, false},
      {"alibaba share", Share("p", 300), gpu::AskSource::kAlibaba, 1, 300, 0, {}, false},
      {"alibaba whole x4", Share("p", 1000, 4), gpu::AskSource::kAlibaba, 4, 1000, 0, {}, false},
      {"alibaba milli only",
       PodBuilder("p").Annotation(gpu::kGpuMilliAnnotation, "250").Obj(),
       gpu::AskSource::kAlibaba,
       1,
       250,
       0,
       {},
       false},
      {"alibaba count only",
       PodBuilder("p").Annotation(gpu::kGpuCountAnnotation, "2").Obj(),
       gpu::AskSource::kAlibaba,
       2,
       1000,
       0,
       {},
       false},
      {"alibaba zero milli is no GPU", Share("p", 0), gpu::AskSource::kNone, 0, 0, 0, {}, false},
      {"alibaba models",
       Share("p", 500, 1, "", "T4|P100"),
       gpu::AskSource::kAlibaba,
       1,
       500,
       0,
       {"T4", "P100"},
       false},
      {"alibaba bad milli",
       PodBuilder("p").Annotation(gpu::kGpuMilliAnnotation, "lots").Obj(),
       gpu::AskSource::kAlibaba,
       0,
       0,
       0,
       {},
       true},
      {"alibaba milli > 1000",
       PodBuilder("p").Annotation(gpu::kGpuMilliAnnotation, "1500").Obj(),
       gpu::AskSource::kAlibaba,
       0,
       0,
       0,
       {},
       true},
      {"kai fraction",
       PodBuilder("p").Annotation("gpu-fraction", "0.5").Obj(),
       gpu::AskSource::kKaiFraction,
       1,
       500,
       0,
       {},
       false},
      {"kai fraction on 2 devices",
       PodBuilder("p")
           .Annotation("gpu-fraction", "0.25")
           .Annotation("gpu-fraction-num-devices", "2")
           .Obj(),
       gpu::AskSource::kKaiFraction,
       2,
       250,
       0,
       {},
       false},
      {"kai fraction 1 is whole",
       PodBuilder("p").Annotation("gpu-fraction", "1").Obj(),
       gpu::AskSource::kKaiFraction,
       1,
       1000,
       0,
       {},
       false},
      {"kai bad fraction",
       PodBuilder("p").Annotation("gpu-fraction", "1.5").Obj(),
       gpu::AskSource::kKaiFraction,
       0,
       0,
       0,
       {},
       true},
      {"kai memory MiB",
       PodBuilder("p").Annotation("gpu-memory", "8000").Obj(),
       gpu::AskSource::kKaiMemory,
       1,
       0,
       8000,
       {},
       false},
      {"kai memory quantity",
       PodBuilder("p").Annotation("gpu-memory", "4Gi").Obj(),
       gpu::AskSource::kKaiMemory,
       1,
       0,
       4096,
       {},
       false},
      {"nvidia.com/gpu request",
       PodBuilder("p").Req("nvidia.com/gpu", "2").Obj(),
       gpu::AskSource::kExtendedResource,
       2,
       1000,
       0,
       {},
       false},
      {"nvidia.com/gpu init container max",
       PodBuilder("p").Req("nvidia.com/gpu", "1").InitContainer({{"nvidia.com/gpu", "3"}}).Obj(),
       gpu::AskSource::kExtendedResource,
       3,
       1000,
       0,
       {},
       false},
      {"annotations win over nvidia.com/gpu",
       PodBuilder("p").Req("nvidia.com/gpu", "1").Annotation(gpu::kGpuMilliAnnotation, "400").Obj(),
       gpu::AskSource::kAlibaba,
       1,
       400,
       0,
       {},
       false},
  };
  for (const auto& c : cases) {
    gpu::GpuAsk a = gpu::ParseGpuAsk(c.pod);
    EXPECT_EQ(a.source, c.source) << c.name;
    EXPECT_EQ(a.count, c.count) << c.name;
    EXPECT_EQ(a.milli, c.milli) << c.name;
    EXPECT_EQ(a.memory_mib, c.memory_mib) << c.name;
    EXPECT_EQ(a.models, c.models) << c.name;
    EXPECT_EQ(!a.error.empty(), c.error) << c.name << ": " << a.error;
  }
}

TEST(GpuAskTest, NodesAndMemoryAsks) {
  gpu::NodeGpus g = gpu::ParseNodeGpus(GpuNode("n", 8, "T4"));
  EXPECT_EQ(g.count, 8);
  EXPECT_EQ(g.model, "T4");
  EXPECT_EQ(g.memory_mib, 15109);
  gpu::NodeGpus l = gpu::ParseNodeGpus(NodeBuilder("n")
                                 .Label(gpu::kGpuCountAnnotation, "4")
                                 .Label(gpu::kGfdProductLabel, "NVIDIA-A100")
                                 .Label(gpu::kGfdMemoryLabel, "40960")
                                 .Obj());
  EXPECT_EQ(l.count, 4);
  EXPECT_EQ(l.model, "NVIDIA-A100");
  EXPECT_EQ(l.memory_mib, 40960);
  gpu::GpuAsk mem = gpu::ParseGpuAsk(PodBuilder("p").Annotation("gpu-memory", "7555").Obj());
  EXPECT_EQ(gpu::MilliOnNode(mem, g), 501);                   // ceil(7555 * 1000 / 15109)
  EXPECT_EQ(gpu::MilliOnNode(mem, gpu::NodeGpus{2, "Z9", 0}), 0);  // unknown memory
  std::vector<int32_t> idx;
  EXPECT_TRUE(gpu::ParseGpuIndex("2-3-4", &idx));
  EXPECT_EQ(idx, (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(gpu::FormatGpuIndex(idx), "2-3-4");
  EXPECT_FALSE(gpu::ParseGpuIndex("2--3", &idx));
  EXPECT_FALSE(gpu::ParseGpuIndex("", &idx));
}

TEST(DeviceChoiceTest, Table) {
  struct Case {
    std::string name;
    std::vector<int32_t> free;
    int32_t count, milli;
    std::vector<int32_t> best, worst, first;
  };
  const std::vector<Case> cases = {
      {"share picks tightest", {1000, 300, 600, 500}, 1, 500, {3}, {0}, {0}},
      {"share ties lowest index", {600, 600}, 1, 500, {0}, {0}, {0}},
      {"whole takes lowest free devices", {500, 1000, 1000, 1000}, 2, 1000, {1, 2}, {1, 2}, {1, 2}},
      {"whole needs fully free", {500, 500}, 1, 1000, {}, {}, {}},
      {"two shares on distinct devices", {200, 900, 400}, 2, 300, {1, 2}, {1, 2}, {1, 2}},
      {"not enough devices", {1000}, 2, 100, {}, {}, {}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gpu::ChooseBestFit(c.free, c.count, c.milli), c.best) << c.name;
    EXPECT_EQ(gpu::ChooseWorstFit(c.free, c.count, c.milli), c.worst) << c.name;
    EXPECT_EQ(gpu::ChooseFirstFit(c.free, c.count, c.milli), c.first) << c.name;
    EXPECT_EQ(gpu::Fits(c.free, c.count, c.milli), !c.best.empty()) << c.name;
  }
}

// ---- fragmentation (frag.h) ----

gpu::TargetWorkload HalfShareHalfWhole() {
  return gpu::TargetWorkload({{{1000, 500, 1, ""}, 0.5}, {{1000, 1000, 1, ""}, 0.5}});
}

gpu::NodeShape Shape(std::vector<int32_t> free, int64_t cpu_left = 10000,
                std::string model = "V100M16") {
  gpu::NodeShape n;
  n.milli_cpu_left = cpu_left;
  n.milli_cpu_capacity = 32000;
  n.model = std::move(model);
  n.free_milli = std::move(free);
  return n;
}

TEST(FragTest, ClassifyQuadrants) {
  struct Case {
    std::string name;
    gpu::NodeShape node;
    gpu::PodShape pod;
    gpu::FragClass want;
  };
  const std::vector<Case> cases = {
      {"fits", Shape({1000, 1000}), {1000, 500, 1, ""}, gpu::FragClass::kQ3Satisfied},
      {"lacks cpu", Shape({1000}, 500), {1000, 500, 1, ""}, gpu::FragClass::kQ4LackCpu},
      {"lacks gpu", Shape({400, 400}), {1000, 500, 1, ""}, gpu::FragClass::kQ2LackGpu},
      {"lacks both", Shape({400}, 10), {1000, 500, 1, ""}, gpu::FragClass::kQ1LackBoth},
      {"multi-gpu lacks devices", Shape({1000, 600}), {1000, 1000, 2, ""}, gpu::FragClass::kQ2LackGpu},
      {"cpu-only pod fits", Shape({0}), {1000, 0, 0, ""}, gpu::FragClass::kXLSatisfied},
      {"cpu-only pod lacks cpu", Shape({0}, 10), {1000, 0, 0, ""}, gpu::FragClass::kXRLackCpu},
      {"model not allowed",
       Shape({1000}, 10000, "T4"),
       {1000, 500, 1, "V100M16|P100"},
       gpu::FragClass::kNoAccess},
      {"model allowed",
       Shape({1000}, 10000, "P100"),
       {1000, 500, 1, "V100M16|P100"},
       gpu::FragClass::kQ3Satisfied},
      {"cpu node never accessible to a model ask",
       Shape({}, 10000, ""),
       {1000, 500, 1, "T4"},
       gpu::FragClass::kNoAccess},
  };
  for (const auto& c : cases) EXPECT_EQ(gpu::Classify(c.node, c.pod), c.want) << c.name;
}

TEST(FragTest, NodeFragmentationAndFgdScores) {
  const gpu::TargetWorkload w = HalfShareHalfWhole();
  auto frag = [&](const gpu::NodeShape& n) { return gpu::NodeFragMilli(n, w); };
  struct Case {
    std::string name;
    gpu::NodeShape node;
    double frag;
    gpu::PodShape pod;
    int64_t score;
    int32_t device;
  };
  // frag([500, 1000]) = 0.5 * (free < 1000 under the whole shape: 500) = 250;
  // frag([500, 500]) = 0.5 * 0 (share: Q3, nothing < 500) + 0.5 * 1000 (whole: Q2) = 500.
  const std::vector<Case> cases = {
      {"idle node, share", Shape({1000, 1000}), 0, {1000, 500, 1, ""}, 43, 0},  // sig(-0.25)
      {"half-used node, share fills it", Shape({500, 1000}), 250, {1000, 500, 1, ""}, 56, 0},
      {"half-used node, whole", Shape({500, 1000}), 250, {1000, 1000, 1, ""}, 50, -1},
      {"two halves, share", Shape({500, 500}), 500, {1000, 500, 1, ""}, 56, 0},  // -> [0,500]: 250
  };
  for (const auto& c : cases) {
    EXPECT_DOUBLE_EQ(frag(c.node), c.frag) << c.name;
    int32_t device = -2;
    EXPECT_EQ(gpu::FgdScore(c.node, c.pod, frag, &device), c.score) << c.name;
    EXPECT_EQ(device, c.device) << c.name;
  }
  // A CPU-only pod taking the node's last CPU turns all 2000 idle milli into fragment:
  // sigmoid((0 - 2000) / 1000) * 100 = 11.92 -> 11.
  int32_t device;
  EXPECT_EQ(gpu::FgdScore(Shape({1000, 1000}, 1000), gpu::PodShape{1000, 0, 0, ""}, frag, &device), 11);
}

TEST(FragTest, TargetWorkloadKeepsTheMostPopularShapes) {
  // 10 pods: A x6, B x3, C x1. 95% of 10 = 9.5: A (6) + B (9) < 9.5, so C is kept too.
  const gpu::PodShape a{1000, 500, 1, ""}, b{2000, 1000, 1, ""}, c{4000, 0, 0, ""};
  std::vector<gpu::PodShape> shapes(6, a);
  shapes.insert(shapes.end(), 3, b);
  shapes.push_back(c);
  gpu::TargetWorkload w = gpu::TargetWorkload::FromShapes(shapes);
  ASSERT_EQ(w.pods().size(), 3u);
  EXPECT_EQ(w.pods()[0].shape, a);
  EXPECT_DOUBLE_EQ(w.pods()[0].freq, 0.6);
  // 20 pods: A x12, B x7, C x1 -> A + B = 19 >= 19: C is dropped, renormalized over 19.
  shapes.assign(12, a);
  shapes.insert(shapes.end(), 7, b);
  shapes.push_back(c);
  w = gpu::TargetWorkload::FromShapes(shapes);
  ASSERT_EQ(w.pods().size(), 2u);
  EXPECT_DOUBLE_EQ(w.pods()[0].freq, 12.0 / 19.0);
  EXPECT_DOUBLE_EQ(w.pods()[1].freq, 7.0 / 19.0);
  // Equal counts: the larger shape first (upstream sort.Reverse of PodResource.Less).
  w = gpu::TargetWorkload::FromShapes({a, b});
  EXPECT_EQ(w.pods()[0].shape, b);
}

TEST(FragTest, SubtractPacksOntoTheLeastFreeDevices) {
  gpu::NodeShape out;
  EXPECT_TRUE(gpu::SubtractPod(Shape({1000, 300, 700}), gpu::PodShape{500, 300, 1, ""}, &out));
  EXPECT_EQ(out.free_milli, (std::vector<int32_t>{1000, 0, 700}));
  EXPECT_EQ(out.milli_cpu_left, 9500);
  EXPECT_TRUE(gpu::SubtractPod(Shape({1000, 300, 1000}), gpu::PodShape{0, 1000, 2, ""}, &out));
  EXPECT_EQ(out.free_milli, (std::vector<int32_t>{0, 300, 0}));
  EXPECT_FALSE(gpu::SubtractPod(Shape({1000}), gpu::PodShape{0, 1000, 2, ""}, &out));
  gpu::FragMemo memo(std::make_shared<const gpu::TargetWorkload>(HalfShareHalfWhole()));
  EXPECT_DOUBLE_EQ(memo.Get(Shape({1000, 500})), 250);  // same multiset as [500, 1000]
  EXPECT_DOUBLE_EQ(memo.Get(Shape({500, 1000})), 250);
}

// ---- the plugin ----

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
