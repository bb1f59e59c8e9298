// PlacementBinPacking's placement order (the tightest placement first: free GPUs, then free
// CPU, then stranded GPUs; equal measures tie to the first scored) and PodGroupPodsCount's
// member count, through the PlacementScore interface as the PodGroup cycle calls it.
#include "plugins/placementbinpacking/placement_bin_packing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugins/podgrouppodscount/podgroup_pods_count.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::placementbinpacking {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

// A node with `cpu` milli-CPU and `gpus` nvidia.com/gpu allocatable, and one pod on it
// asking `used_cpu` / `used_gpus` of them.
struct NodeSpec {
  std::string name;
  int64_t cpu = 0;
  int64_t gpus = 0;
  int64_t used_cpu = 0;
  int64_t used_gpus = 0;
};

framework::NodeInfo Make(const NodeSpec& n) {
  api::Node node = NodeBuilder(n.name)
                       .Capacity({{"cpu", std::to_string(n.cpu) + "m"},
                                  {"memory", "64Gi"},
                                  {"pods", "110"},
                                  {"nvidia.com/gpu", std::to_string(n.gpus)}})
                       .Obj();
  std::vector<api::Pod> pods;
  if (n.used_cpu > 0 || n.used_gpus > 0) {
    pods.push_back(PodBuilder("used-" + n.name)
                       .Container({{"cpu", std::to_string(n.used_cpu) + "m"},
                                   {"nvidia.com/gpu", std::to_string(n.used_gpus)}})
                       .Obj());
  }
  return MakeNodeInfo(node, pods);
}

framework::PodInfoPtr Member(const std::string& name, int64_t gpus) {
  return framework::PodInfo::Make(std::make_shared<api::Pod>(
      PodBuilder(name).Container({{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}).Obj()));
}

TEST(PlacementBinPackingTest, TightestPlacementRanksHighest) {
  struct Case {
    const char* name;
    std::vector<NodeSpec> nodes;
    std::vector<std::vector<std::string>> placements;  // node names of each placement
    int64_t member_gpus;                               // the gang's members' GPU ask
    std::vector<int64_t> want;                         // normalized scores, in order
    std::vector<std::string> want_detail;
  };
  const std::vector<Case> cases = {
      {"fewer free GPUs wins over less free CPU",
       {{"a", 8000, 8, 0, 7}, {"b", 1000, 8, 0, 6}},
       {{"a"}, {"b"}},
       1,
       {1, 0},
       {"free GPUs 1, free cpu 8000m, stranded GPUs 0",
        "free GPUs 2, free cpu 1000m, stranded GPUs 0"}},
      {"equal free GPUs: less free CPU wins",
       {{"a", 4000, 4, 0, 2}, {"b", 2000, 4, 0, 2}},
       {{"a"}, {"b"}},
       1,
       {0, 1},
       {"free GPUs 2, free cpu 4000m, stranded GPUs 0",
        "free GPUs 2, free cpu 2000m, stranded GPUs 0"}},
      {"equal GPUs and CPU: fewer stranded GPUs wins",
       // r1: 2 + 2 free GPUs on two nodes, each too few for a 4-GPU member; r2: 4 on one.
       {{"n1", 1000, 8, 0, 6}, {"n2", 1000, 8, 0, 6}, {"n3", 1000, 8, 0, 8}, {"n4", 1000, 8, 0, 4}},
       {{"n1", "n2"}, {"n3", "n4"}},
       4,
       {0, 1},
       {"free GPUs 4, free cpu 2000m, stranded GPUs 4",
        "free GPUs 4, free cpu 2000m, stranded GPUs 0"}},
      {"equal measures tie",
       {{"a", 1000, 4, 0, 2}, {"b", 1000, 4, 0, 2}, {"c", 1000, 4, 0, 0}},
       {{"a"}, {"b"}, {"c"}},
       1,
       {1, 1, 0},
       {"free GPUs 2, free cpu 1000m, stranded GPUs 0",
        "free GPUs 2, free cpu 1000m, stranded GPUs 0",
        "free GPUs 4, free cpu 1000m, stranded GPUs 0"}},
      {"no GPU anywhere: free CPU alone",
       {{"a", 4000, 0, 1000, 0}, {"b", 4000, 0, 3000, 0}},
       {{"a"}, {"b"}},
       0,
       {0, 1},
       {"free GPUs 0, free cpu 3000m, stranded GPUs 0",
        "free GPUs 0, free cpu 1000m, stranded GPUs 0"}},
  };
  for (const auto& c : cases) {
    fake::FakeHandle h;
    std::vector<framework::NodeInfo> infos;
    for (const auto& n : c.nodes) infos.push_back(Make(n));
    h.SetNodes(std::move(infos));
    auto pl = PlacementBinPacking::New(nullptr, h);
    ASSERT_TRUE(pl.ok()) << c.name;
    auto* sp = dynamic_cast<framework::PlacementScorePlugin*>(pl.value().get());
    ASSERT_NE(sp, nullptr) << c.name;
    ASSERT_NE(sp->GetPlacementScoreExtensions(), nullptr) << c.name;
    framework::CycleState state;
    framework::QueuedPodGroupInfo group;
    const std::vector<framework::PodInfoPtr> pods = {Member("m0", c.member_gpus),
                                                     Member("m1", c.member_gpus)};
    std::vector<framework::PlacementScore> scores;
    for (size_t i = 0; i < c.placements.size(); ++i) {
      framework::Placement p;
      p.level = "rack";
      p.domain = "r" + std::to_string(i);
      p.nodes.insert(c.placements[i].begin(), c.placements[i].end());
      framework::PlacementScore s;
      ASSERT_TRUE(sp->ScorePlacement(state, group, pods, p, {}, &s).IsSuccess()) << c.name;
      EXPECT_EQ(s.detail, c.want_detail[i]) << c.name << " placement " << i;
      scores.push_back(s);
    }
    ASSERT_TRUE(sp->GetPlacementScoreExtensions()
                    ->NormalizePlacementScore(state, group, scores)
                    .IsSuccess())
        << c.name;
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(PlacementBinPackingTest, NormalizeWithoutMeasuresIsAnError) {
  fake::FakeHandle h;
  auto pl = PlacementBinPacking::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* sp = dynamic_cast<framework::PlacementScorePlugin*>(pl.value().get());
  framework::CycleState state;
  std::vector<framework::PlacementScore> scores(2);
  const auto s = sp->GetPlacementScoreExtensions()->NormalizePlacementScore(state, {}, scores);
  EXPECT_TRUE(s.IsError());
  EXPECT_NE(s.Message().find("2 placement scores to normalize, 0 measured"), std::string::npos)
      << s.Message();
}

TEST(PodGroupPodsCountTest, CountsPlacedMembersNormalizedToTheBest) {
  fake::FakeHandle h;
  auto pl = podgrouppodscount::PodGroupPodsCount::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* sp = dynamic_cast<framework::PlacementScorePlugin*>(pl.value().get());
  ASSERT_NE(sp, nullptr);
  framework::CycleState state;
  std::vector<framework::PlacementScore> scores;
  for (const std::vector<std::string>& nodes :
       {std::vector<std::string>{"a", "", "b", ""}, {"a", "b", "c", "d"}, {"", "", "", ""}}) {
    framework::PodGroupAssignments a;
    a.nodes = nodes;
    framework::PlacementScore s;
    ASSERT_TRUE(sp->ScorePlacement(state, {}, {}, {}, a, &s).IsSuccess());
    scores.push_back(s);
  }
  EXPECT_EQ(scores[0].detail, "2 pods placed");
  EXPECT_EQ(scores[1].detail, "4 pods placed");
  ASSERT_TRUE(
      sp->GetPlacementScoreExtensions()->NormalizePlacementScore(state, {}, scores).IsSuccess());
  EXPECT_EQ(scores[0].score, 50);
  EXPECT_EQ(scores[1].score, 100);
  EXPECT_EQ(scores[2].score, 0);
}

}  // namespace
}  // namespace phalanx::plugins::placementbinpacking
