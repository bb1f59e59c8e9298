// Table tests for the GPU placement policies; expected numbers are worked by hand from
// the formulas of the FGD paper artifact (hkust-adsl/kubernetes-scheduler-simulator
// pkg/simulator/plugin/*_score.go).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "plugins/gpupolicy/best_fit.h"
#include "plugins/gpupolicy/dot_product.h"
#include "plugins/gpupolicy/fgd.h"
#include "plugins/gpupolicy/frag_lookahead.h"
#include "plugins/gpupolicy/gpu_clustering.h"
#include "plugins/gpupolicy/gpu_packing.h"
#include "plugins/gpupolicy/random_score.h"
#include "plugins/gpushare/gpu_share.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::gpupolicy {
namespace {

using gpu::NodeShape;
using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

gpu::NodeShape Shape(std::vector<int32_t> free, int64_t cpu_left = 64000) {
  gpu::NodeShape n;
  n.milli_cpu_left = cpu_left;
  n.milli_cpu_capacity = 96000;
  n.model = "V100M16";
  n.free_milli = std::move(free);
  return n;
}

TEST(BestFitTest, Table) {
  struct Case {
    std::string name;
    gpu::NodeShape node;
    gpu::PodShape pod;
    int64_t want;
  };
  const std::vector<Case> cases = {
      // 0.5 * 56000/128000 + 0.5 * 1500/8000 = 0.3125 -> 68.75
      {"share on idle 2-GPU node", Shape({1000, 1000}), {8000, 500, 1}, 68},
      // 0.5 * 0 + 0.5 * 0 = 0 -> 100: the pod fills the node exactly
      {"exact fit", Shape({500}, 8000), {8000, 500, 1}, 100},
      // 0.5 * 120000/128000 + 0.5 * 8000/8000 = 0.96875 -> 3.125
      {"cpu-only pod on a large idle node",
       Shape(std::vector<int32_t>(8, 1000), 128000),
       {8000, 0, 0},
       3},
      {"does not fit", Shape({400}), {8000, 500, 1}, -1},
  };
  for (const auto& c : cases) EXPECT_EQ(BestFitRaw(c.node, c.pod), c.want) << c.name;
  std::vector<int64_t> s = {68, 100, 3};
  MinMaxNormalize(s);
  EXPECT_EQ(s, (std::vector<int64_t>{67, 100, 0}));  // (68-3)*100/97 = 67
  s = {5, 5};
  MinMaxNormalize(s);
  EXPECT_EQ(s, (std::vector<int64_t>{0, 0}));
}

TEST(DotProductTest, Table) {
  struct Case {
    std::string name;
    gpu::NodeShape node;
    gpu::PodShape pod;
    int64_t want;
  };
  const std::vector<Case> cases = {
      // node [0.5, 0.25] . pod [0.0625, 0.0625] = 0.046875; /2 -> 97.66
      {"share", Shape({1000, 1000}), {8000, 500, 1}, 97},
      // node [1, 1] . pod [1, 1] / 2 = 1 -> 0
      {"pod as large as the max spec",
       Shape(std::vector<int32_t>(8, 1000), 128000),
       {128000, 1000, 8},
       0},
      {"node lacks cpu", Shape({1000}, 100), {8000, 500, 1}, 0},
  };
  for (const auto& c : cases) EXPECT_EQ(DotProductScoreOf(c.node, c.pod), c.want) << c.name;
}

TEST(GpuPackingTest, Table) {
  struct Case {
    std::string name;
    gpu::NodeShape node;
    gpu::PodShape pod;
    int64_t want;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"idle 2-GPU node: 33 - 2", Shape({1000, 1000}), {1000, 500, 1}, 31, true},
      {"idle 8-GPU node: 33 - 8", Shape(std::vector<int32_t>(8, 1000)), {1000, 500, 1}, 25, true},
      {"share on a used GPU: 100 - 50/10", Shape({500, 1000}), {1000, 500, 1}, 95, true},
      {"share on the tightest used GPU: 100 - 80/10",
       Shape({900, 800, 1000}),
       {1000, 100, 1},
       92,
       true},
      {"whole GPU on a used node: 50 - 1", Shape({500, 1000}), {1000, 1000, 1}, 49, true},
      {"share needing a free GPU on a used node", Shape({200, 1000}), {1000, 300, 1}, 49, true},
      {"four free GPUs on a used node: max(50 - 4, 33)",
       Shape({0, 1000, 1000, 1000, 1000}),
       {1000, 1000, 4},
       46,
       true},
      {"does not fit", Shape({200, 1000}), {1000, 1000, 2}, 0, false},
  };
  for (const auto& c : cases) {
    bool ok = false;
    EXPECT_EQ(GpuPackingScoreOf(c.node, c.pod, &ok), c.want) << c.name;
    EXPECT_EQ(ok, c.ok) << c.name;
  }
}

TEST(GpuClusteringTest, Table) {
  struct Case {
    std::string name;
    std::map<std::string, int32_t> kinds;
    int64_t free;
    std::string pod_kind;
    int64_t want;
  };
  const std::vector<Case> cases = {
      // fill = 25 * (8000 - 1500) / 8000 = 20
      {"only the pod's kind", {{"share-gpu", 2}}, 1500, "share-gpu", 95},
      {"the pod's kind and others", {{"share-gpu", 1}, {"1-gpu", 1}}, 1500, "share-gpu", 70},
      // fill = 25 * 6000 / 8000 = 18
      {"no GPU pods", {}, 2000, "share-gpu", 43},
      // fill = 25 * 7000 / 8000 = 21
      {"only other kinds", {{"1-gpu", 1}}, 1000, "share-gpu", 21},
      {"pod without GPU", {{"1-gpu", 1}}, 1000, "", 0},
      {"whole-GPU kinds are per count", {{"2-gpu", 1}}, 6000, "2-gpu", 81},  // 6 + 75
  };
  for (const auto& c : cases) {
    EXPECT_EQ(GpuClusteringScoreOf(c.kinds, c.free, c.pod_kind), c.want) << c.name;
  }
}

// ---- the plugins through a profile-like setup (GpuShare + one policy) ----

api::Pod Share(const std::string& name, int milli, int count = 1, const std::string& index = "") {
  PodBuilder b(name);
  b.UID("uid-" + name).Req("cpu", "1");
  b.Annotation(gpu::kGpuMilliAnnotation, std::to_string(milli));
  b.Annotation(gpu::kGpuCountAnnotation, std::to_string(count));
  if (!index.empty()) b.Annotation(gpu::kGpuIndexAnnotation, index);
  return b.Obj();
}

api::Node GpuNode(const std::string& name, int gpus) {
  return NodeBuilder(name)
      .Label(gpu::kGpuModelLabel, "V100M16")
      .Capacity({{"cpu", "32"},
                 {"memory", "256Gi"},
                 {"pods", "110"},
                 {"nvidia.com/gpu", std::to_string(gpus)}})
      .Obj();
}

template <typename P>
std::unique_ptr<P> Make(fake::FakeHandle& h, const std::string& yaml = "") {
  std::optional<YAML::Node> args;
  if (!yaml.empty()) args = YAML::Load(yaml);
  auto r = P::New(args ? &*args : nullptr, h);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::unique_ptr<P>(dynamic_cast<P*>(r.value().release()));
}

// Scores `pod` on every node of the handle with PreScore + Score (+ NormalizeScore).
std::vector<int64_t> ScoreAll(framework::PreScorePlugin* pre, framework::ScorePlugin* sc,
                              fake::FakeHandle& h, const api::Pod& pod) {
  framework::CycleState state;
  auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(pod));
  const auto& nodes = h.SnapshotSharedLister().List();
  EXPECT_TRUE(pre->PreScore(state, *pi, nodes).IsSuccess());
  std::vector<int64_t> out;
  for (const auto* n : nodes) {
    int64_t s = -1;
    EXPECT_TRUE(sc->Score(state, *pi, *n, &s).IsSuccess());
    out.push_back(s);
  }
  if (auto* ext = sc->GetScoreExtensions()) {
    EXPECT_TRUE(ext->NormalizeScore(state, *pi, nodes, out).IsSuccess());
  }
  return out;
}

class PolicyPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // n0: idle; n1: device 0 half used; n2: both devices half used.
    h_.SetNodes(
        {MakeNodeInfo(GpuNode("n0", 2)), MakeNodeInfo(GpuNode("n1", 2), {Share("a", 500, 1, "0")}),
         MakeNodeInfo(GpuNode("n2", 2), {Share("b", 500, 1, "0"), Share("c", 500, 1, "1")})});
  }
  fake::FakeHandle h_;
};

TEST_F(PolicyPluginTest, EveryPolicyRanksNodesForAShare) {
  const api::Pod pod = Share("p", 500);
  {
    auto p = Make<BestFitScore>(h_);
    // raw 78 (0.5*31000/128000 + 0.5*1500/8000), 82, 85; normalized over [78, 85]
    EXPECT_EQ(ScoreAll(p.get(), p.get(), h_, pod), (std::vector<int64_t>{0, 57, 100}));
  }
  {
    auto p = Make<GpuPackingScore>(h_);
    EXPECT_EQ(ScoreAll(p.get(), p.get(), h_, pod), (std::vector<int64_t>{31, 95, 95}));
  }
  {
    auto p = Make<GpuClusteringScore>(h_);
    // fill: 25*(8000-2000)/8000=18, 25*6500/8000=20, 25*7000/8000=21
    EXPECT_EQ(ScoreAll(p.get(), p.get(), h_, pod), (std::vector<int64_t>{43, 95, 96}));
  }
  {
    auto p = Make<DotProductScore>(h_);
    // n0: [32000/128000, 2000/8000] . [1000/128000, 500/8000] / 2 = 0.0087890625 -> 99
    EXPECT_EQ(ScoreAll(p.get(), p.get(), h_, pod), (std::vector<int64_t>{99, 99, 99}));
  }
  {
    auto p = Make<RandomScore>(h_);
    auto s = ScoreAll(p.get(), p.get(), h_, pod);
    EXPECT_EQ(std::count(s.begin(), s.end(), 100), 1);
    EXPECT_EQ(std::count(s.begin(), s.end(), 0), 2);
  }
}

TEST_F(PolicyPluginTest, FgdUsesTheTargetWorkloadAndChoosesTheDevice) {
  auto share = Make<gpushare::GpuShare>(h_);
  auto fgd = Make<FGDScore>(h_);
  // Workload: half 500m shares, half whole GPUs (both with 1 CPU).
  share->context().SetTargetWorkload(std::make_shared<const gpu::TargetWorkload>(
      std::vector<gpu::TargetPod>{{{1000, 500, 1, ""}, 0.5}, {{1000, 1000, 1, ""}, 0.5}}));
  // n0 [1000,1000]: 0 -> 250: 43; n1 [500,1000]: 250 -> 0: 56; n2 [500,500]: 500 -> 250: 56.
  EXPECT_EQ(ScoreAll(fgd.get(), fgd.get(), h_, Share("p", 500)),
            (std::vector<int64_t>{43, 56, 56}));
  // Reserve on n1 with Auto selection asks FGD: device 0 (leaves a whole GPU free).
  framework::CycleState state;
  auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(Share("p", 500)));
  ASSERT_TRUE(share->PreFilter(state, *pi, nullptr).IsSuccess());
  ASSERT_TRUE(share->Reserve(state, *pi, "n1").IsSuccess());
  EXPECT_EQ(share->context().Assignment("uid-p"), (std::vector<int32_t>{0}));
}

TEST_F(PolicyPluginTest, FgdArgsWorkloadAndObservedFallback) {
  auto fgd = Make<FGDScore>(h_,
                            "targetWorkload:\n"
                            "- {cpuMilli: 1000, gpuMilli: 500, gpuCount: 1, frequency: 1}\n"
                            "- {cpuMilli: 1000, gpuMilli: 1000, gpuCount: 1, frequency: 1}\n");
  EXPECT_EQ(ScoreAll(fgd.get(), fgd.get(), h_, Share("p", 500)),
            (std::vector<int64_t>{43, 56, 56}));
  YAML::Node bad = YAML::Load("targetWorkload: [{gpuMilli: 1500, frequency: 1}]");
  auto r = FGDScore::New(&bad, h_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().Message().find("targetWorkload[0].gpuMilli"), std::string::npos);
  // No workload anywhere: FGD learns from the pods it scores (here only 600m shares): on
  // n0 the pod strands 400m (40), on n1 it fills device 0 exactly (50).
  fake::FakeHandle h2;
  h2.SetNodes(
      {MakeNodeInfo(GpuNode("n0", 2)), MakeNodeInfo(GpuNode("n1", 2), {Share("a", 400, 1, "0")})});
  auto learned = Make<FGDScore>(h2);
  EXPECT_EQ(ScoreAll(learned.get(), learned.get(), h2, Share("p", 600)),
            (std::vector<int64_t>{40, 50}));
}

api::Node SmallGpuNode(const std::string& name, int gpus) {
  return NodeBuilder(name)
      .Label(gpu::kGpuModelLabel, "V100M16")
      .Capacity({{"cpu", "4"},
                 {"memory", "256Gi"},
                 {"pods", "110"},
                 {"nvidia.com/gpu", std::to_string(gpus)}})
      .Obj();
}

// Where FragLookahead and FGD choose differently, and why.
// Workload (learned from 8 pods: 4 shares of 500m, 2 whole GPUs, 2 pods of 2 whole GPUs,
// 1 CPU each): 0.5 / 0.25 / 0.25. Nodes (4 CPUs): n0 [0, 1000] (device 0 taken by a
// whole GPU), n1 [1000, 700] (a 300m share on device 1). The pod: a 500m share.
//   FGD, worked by hand (gpu/frag.h): F(n0) = 250, F(n0 + pod on device 1) = 250, delta 0
//   -> score 50; F(n1) = 600, F(n1 + pod on the 700m device) = 450, delta -150 -> 53. FGD
//   takes n1 and leaves 200m that no shape of the workload can use.
//   FragLookahead adds lookaheadWeight (default 4) x the expected best delta of the next
//   pod (the 2-GPU shape has no host either way: 2000m x 0.25 = 500):
//     on n0 ([0, 500]): next 500m share fits the 500m left exactly (-250 x 0.5), next whole
//     GPU goes to n1 (-250 x 0.25): 0 + 4 x (-125 - 62.5 + 500) = 1250
//     on n1 ([1000, 200]): next share's best delta is 0 (either free GPU), next whole GPU
//     -250: -150 + 4 x (0 - 62.5 + 500) = 1600
//   so it takes n0: two 500m shares pair up on one GPU instead of stranding 200m.
TEST(FragLookaheadTest, PairsSharesWhereFgdStrandsAFragment) {
  fake::FakeHandle h;
  api::Pod whole_a = Share("a", 1000, 1, "0");
  h.SetNodes({MakeNodeInfo(SmallGpuNode("n0", 2), {whole_a}),
              MakeNodeInfo(SmallGpuNode("n1", 2), {Share("b", 300, 1, "1")})});
  auto la = Make<FragLookaheadScore>(h);
  // The workload is what the plugin has seen: 8 pods, rebuilt at the 8th.
  for (int i = 0; i < 4; ++i) ScoreAll(la.get(), la.get(), h, Share("s" + std::to_string(i), 500));
  for (int i = 0; i < 2; ++i) ScoreAll(la.get(), la.get(), h, Share("w" + std::to_string(i), 1000));
  for (int i = 0; i < 2; ++i) {
    ScoreAll(la.get(), la.get(), h, Share("d" + std::to_string(i), 1000, 2));
  }
  EXPECT_EQ(ScoreAll(la.get(), la.get(), h, Share("p", 500))[0], 100) << "FragLookahead takes n0";
  // FGD on the same workload takes n1.
  auto fgd = Make<FGDScore>(h,
                            "targetWorkload:\n"
                            "- {cpuMilli: 1000, gpuMilli: 500, gpuCount: 1, frequency: 0.5}\n"
                            "- {cpuMilli: 1000, gpuMilli: 1000, gpuCount: 1, frequency: 0.25}\n"
                            "- {cpuMilli: 1000, gpuMilli: 1000, gpuCount: 2, frequency: 0.25}\n");
  EXPECT_EQ(ScoreAll(fgd.get(), fgd.get(), h, Share("p", 500)), (std::vector<int64_t>{50, 53}));
  // Without the lookahead the policy is FGD's ranking on the learned workload: n1.
  fake::FakeHandle h2;
  h2.SetNodes({MakeNodeInfo(SmallGpuNode("n0", 2), {whole_a}),
               MakeNodeInfo(SmallGpuNode("n1", 2), {Share("b", 300, 1, "1")})});
  auto flat = Make<FragLookaheadScore>(h2, "lookaheadWeight: 0");
  for (int i = 0; i < 4; ++i)
    ScoreAll(flat.get(), flat.get(), h2, Share("s" + std::to_string(i), 500));
  for (int i = 0; i < 2; ++i)
    ScoreAll(flat.get(), flat.get(), h2, Share("w" + std::to_string(i), 1000));
  for (int i = 0; i < 2; ++i) {
    ScoreAll(flat.get(), flat.get(), h2, Share("d" + std::to_string(i), 1000, 2));
  }
  EXPECT_EQ(ScoreAll(flat.get(), flat.get(), h2, Share("p", 500))[1], 100);
  // The device for the share: as FGD, the one whose use grows F least.
  auto st = gpushare::GpuContext::For(h)->State(*h.SnapshotSharedLister().List()[1]);
  auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(Share("p", 500)));
  EXPECT_EQ(la->ChooseDevices(*st, *pi, gpu::ParseGpuAsk(pi->Pod()), 500),
            (std::vector<int32_t>{1}));
}

TEST(FragLookaheadTest, Args) {
  fake::FakeHandle h;
  for (const char* bad : {"lookaheadWeight: -1", "lookaheadWeight: x", "candidates: 0",
                          "tieBreak: First", "lookahead: 2"}) {
    YAML::Node n = YAML::Load(bad);
    auto r = FragLookaheadScore::New(&n, h);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().Message().find("FragLookaheadScoreArgs"), std::string::npos)
        << r.status().Message();
  }
  YAML::Node ok = YAML::Load("{lookaheadWeight: \"1.5\", candidates: 8, tieBreak: Random}");
  auto a = ParseFragLookaheadScoreArgs(&ok);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->lookahead_weight, 1.5);
  EXPECT_EQ(a->candidates, 8);
  EXPECT_EQ(a->policy.tie_break, TieBreak::kRandom);
  auto d = ParseFragLookaheadScoreArgs(nullptr);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->lookahead_weight, 4.0);
  EXPECT_EQ(d->policy.tie_break, TieBreak::kNodeOrder);
}

TEST_F(PolicyPluginTest, RandomDeviceSelectionComesFromRandomScore) {
  auto share = Make<gpushare::GpuShare>(h_);
  auto rnd = Make<RandomScore>(h_);
  std::string name;
  EXPECT_EQ(share->context().PreferredDevicePolicy(&name), rnd.get());
  EXPECT_EQ(name, "RandomScore");
  rnd.reset();
  EXPECT_EQ(share->context().PreferredDevicePolicy(), nullptr);
}

}  // namespace
}  // namespace phalanx::plugins::gpupolicy
