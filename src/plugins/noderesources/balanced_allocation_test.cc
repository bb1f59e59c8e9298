// Ported from upstream noderesources/balanced_allocation_test.go
// (TestNodeResourcesBalancedAllocation with the current std-dev scores, best-effort Skip)
// and validation_pluginargs_test.go for NodeResourcesBalancedAllocationArgs.
#include "plugins/noderesources/balanced_allocation.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <optional>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

// Test tables leave trailing optional fields out.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::noderesources {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

// makeNode(name, milliCPU, memory).
api::Node MakeNode(const std::string& name, int64_t milli_cpu, int64_t memory,
                   std::map<std::string, std::string> extra = {}) {
  extra["cpu"] = std::to_string(milli_cpu) + "m";
  extra["memory"] = std::to_string(memory);
  extra["pods"] = "110";
  return NodeBuilder(name).Capacity(extra).Obj();
}

// cpuOnly: 1000m + 2000m cpu, no memory; cpuAndMemory: 1000m/2000 + 2000m/3000.
api::Pod CpuOnly(const std::string& name, const std::string& node = "") {
  return PodBuilder(name)
      .NodeName(node)
      .Container({{"cpu", "1000m"}, {"memory", "0"}})
      .Container({{"cpu", "2000m"}, {"memory", "0"}})
      .Obj();
}
api::Pod CpuAndMemory(const std::string& name, const std::string& node = "") {
  return PodBuilder(name)
      .NodeName(node)
      .Container({{"cpu", "1000m"}, {"memory", "2000"}})
      .Container({{"cpu", "2000m"}, {"memory", "3000"}})
      .Obj();
}

std::unique_ptr<framework::Plugin> NewPlugin(const std::string& yaml, fake::FakeHandle& h) {
  std::optional<YAML::Node> args;
  if (!yaml.empty()) args = YAML::Load(yaml);
  auto pl = BalancedAllocation::New(args ? &*args : nullptr, h);
  EXPECT_TRUE(pl.ok()) << pl.status().ToString();
  return pl.ok() ? std::move(pl.value()) : nullptr;
}

TEST(BalancedAllocationTest, Score) {
  struct Case {
    const char* name;
    api::Pod pod;
    std::vector<api::Node> nodes;
    std::vector<api::Pod> existing;
    std::vector<int64_t> want;
    std::string args;
    framework::Code want_prescore = framework::Code::kSuccess;
  };
  const char* kWithGPU =
      "{resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, "
      "weight: 1}]}";
  const Case cases[] = {
      // CPU 3000/4000 = 0.75, memory 5000/10000 = 0.5: std 0.125 -> 87; node2 0.5/0.5 -> 100.
      {"nothing scheduled, resources requested, differently sized nodes",
       CpuAndMemory("p"),
       {MakeNode("node1", 4000, 10000), MakeNode("node2", 6000, 10000)},
       {},
       {87, 100}},
      // node1: cpu 6000/10000 = 0.6, memory 5000/20000 = 0.25 -> 82;
      // node2: 0.6 and 10000/20000 = 0.5 -> 95.
      {"resources requested, pods scheduled with resources",
       CpuAndMemory("p"),
       {MakeNode("node1", 10000, 20000), MakeNode("node2", 10000, 20000)},
       {CpuOnly("e1", "node1"), CpuAndMemory("e2", "node2")},
       {82, 95}},
      // node2: 0.6 and 10000/50000 = 0.2 -> 80.
      {"resources requested, pods scheduled with resources, differently sized nodes",
       CpuAndMemory("p"),
       {MakeNode("node1", 10000, 20000), MakeNode("node2", 10000, 50000)},
       {CpuOnly("e1", "node1"), CpuAndMemory("e2", "node2")},
       {82, 80}},
      // Fractions are capped at 1: node1 1 and 0 -> 50; node2 1 and 0.5 -> 75.
      {"requested resources at node capacity",
       CpuOnly("p"),
       {MakeNode("node1", 4000, 10000), MakeNode("node2", 4000, 10000)},
       {CpuOnly("e1", "node1"), CpuAndMemory("e2", "node2")},
       {50, 75}},
      {"zero node resources, pods scheduled with resources",
       CpuAndMemory("p"),
       {MakeNode("node1", 0, 0), MakeNode("node2", 0, 0)},
       {CpuOnly("e1", "node1"), CpuAndMemory("e2", "node2")},
       {100, 100}},
      {"best-effort pods are skipped",
       PodBuilder("p").Container({}).Obj(),
       {MakeNode("node1", 4000, 10000)},
       {},
       {},
       "",
       framework::Code::kSkip},
      // cpu 0.3, memory 0.25, gpu 3/4 = 0.75: std over three fractions -> 77.
      {"include scalar resource on a node for balanced resource allocation",
       PodBuilder("p").Req("cpu", "3000m").Req("memory", "5000").Req("nvidia.com/gpu", "3").Obj(),
       {MakeNode("node1", 10000, 20000, {{"nvidia.com/gpu", "4"}})},
       {},
       {77},
       kWithGPU},
      // gpu not requested: left out, cpu 0.3 and memory 0.25 -> 97.
      {"an extended resource the pod does not request is left out",
       PodBuilder("p").Req("cpu", "3000m").Req("memory", "5000").Obj(),
       {MakeNode("node1", 10000, 20000, {{"nvidia.com/gpu", "4"}})},
       {},
       {97},
       kWithGPU},
      // cpu 0.3, memory 0.25, ephemeral-storage 8/10: -> 75.
      {"ephemeral storage counts when configured",
       PodBuilder("p")
           .Req("cpu", "3000m")
           .Req("memory", "5000")
           .Req("ephemeral-storage", "8")
           .Obj(),
       {MakeNode("node1", 10000, 20000, {{"ephemeral-storage", "10"}})},
       {},
       {75},
       "{resources: [{name: cpu}, {name: memory}, {name: ephemeral-storage}]}"},
  };
  for (const auto& c : cases) {
    for (bool run_prescore : {true, false}) {
      fake::FakeHandle h;
      std::vector<framework::NodeInfo> infos;
      for (const auto& n : c.nodes) {
        std::vector<api::Pod> on_node;
        for (const auto& p : c.existing) {
          if (p.spec.node_name == n.metadata.name) on_node.push_back(p);
        }
        infos.push_back(MakeNodeInfo(n, on_node));
      }
      std::vector<const framework::NodeInfo*> ptrs;
      for (const auto& n : infos) ptrs.push_back(&n);
      auto pl = NewPlugin(c.args, h);
      ASSERT_NE(pl, nullptr) << c.name;
      auto* ps = dynamic_cast<framework::PreScorePlugin*>(pl.get());
      auto* sp = dynamic_cast<framework::ScorePlugin*>(pl.get());
      EXPECT_EQ(sp->GetScoreExtensions(), nullptr);
      framework::CycleState state;
      auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
      std::vector<int64_t> want = c.want;
      if (run_prescore) {
        auto s = ps->PreScore(state, *pi, ptrs);
        EXPECT_EQ(s.code(), c.want_prescore) << c.name;
        if (!s.IsSuccess()) continue;
      } else if (c.want_prescore == framework::Code::kSkip) {
        want.assign(infos.size(), 0);  // Score itself returns 0 for best-effort pods
      }
      std::vector<int64_t> got;
      for (const auto& n : infos) {
        int64_t s = -1;
        ASSERT_TRUE(sp->Score(state, *pi, n, &s).IsSuccess()) << c.name;
        got.push_back(s);
      }
      EXPECT_EQ(got, want) << c.name << (run_prescore ? "" : " if PreScore is not called");
    }
  }
}

TEST(BalancedAllocationTest, Args) {
  struct Case {
    const char* name;
    std::string yaml;
    std::string want_error;
  };
  const Case cases[] = {
      {"empty", "{}", ""},
      {"valid", "{resources: [{name: cpu, weight: 1}, {name: nvidia.com/gpu}]}", ""},
      {"duplicate resource", "{resources: [{name: cpu}, {name: cpu}]}",
       "NodeResourcesBalancedAllocationArgs: resources[1].name: Duplicate value: \"cpu\""},
      {"weight other than 1", "{resources: [{name: cpu, weight: 2}]}",
       "NodeResourcesBalancedAllocationArgs: resources[0].weight: Invalid value: 2: must be 1"},
      {"unknown field", "{resource: []}",
       "NodeResourcesBalancedAllocationArgs: unknown field \"resource\""},
  };
  for (const auto& c : cases) {
    YAML::Node n = YAML::Load(c.yaml);
    auto parsed = ParseNodeResourcesBalancedAllocationArgs(&n);
    if (c.want_error.empty()) {
      EXPECT_TRUE(parsed.ok()) << c.name << ": " << parsed.status().ToString();
    } else {
      ASSERT_FALSE(parsed.ok()) << c.name;
      EXPECT_EQ(parsed.status().Message(), c.want_error) << c.name;
    }
  }
  auto defaults = ParseNodeResourcesBalancedAllocationArgs(nullptr);
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults.value().resources, (std::vector<ResourceSpec>{{"cpu", 1}, {"memory", 1}}));
}

}  // namespace
}  // namespace phalanx::plugins::noderesources
