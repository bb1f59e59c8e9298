// Table tests of NodeNumber, in the style of upstream plugin tests: build the plugin with
// its factory, run PreScore then Score on every node, compare the scores.
#include "node_number.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "plugins/testing_fake_handle.h"

namespace nodenumber {
namespace {

namespace api = phalanx::api;

fw::PodInfoPtr MakePod(const std::string& name) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "default";
  return fw::PodInfo::Make(std::move(p));
}

std::vector<fw::NodeInfo> MakeNodes(const std::vector<std::string>& names) {
  std::vector<fw::NodeInfo> out;
  for (const auto& n : names) {
    auto node = std::make_shared<api::Node>();
    node->metadata.name = n;
    out.emplace_back(std::move(node));
  }
  return out;
}

TEST(NodeNumberTest, Score) {
  struct Case {
    const char* name;
    std::string pod;
    std::vector<std::string> nodes;
    const char* args;  // YAML, nullptr for none
    bool run_prescore;
    std::vector<int64_t> want;
  };
  const std::vector<std::string> three = {"node-1", "node-2", "node-3"};
  const Case cases[] = {
      {"pod-1 prefers node-1", "pod-1", three, nullptr, true, {10, 0, 0}},
      {"pod-2 prefers node-2", "pod-2", three, nullptr, true, {0, 10, 0}},
      {"pod-3 prefers node-3", "pod-3", three, nullptr, true, {0, 0, 10}},
      {"no node matches", "pod-7", three, nullptr, true, {0, 0, 0}},
      {"only the last digit counts",
       "pod-12",
       {"node-2", "node-12", "node-21"},
       nullptr,
       true,
       {10, 10, 0}},
      {"a pod name without a digit scores 0 everywhere", "web", three, nullptr, true, {0, 0, 0}},
      {"a node name without a digit scores 0",
       "pod-1",
       {"node-a", "node-1"},
       nullptr,
       true,
       {0, 10}},
      {"reverse favors the other nodes", "pod-1", three, "reverse: true", true, {0, 10, 10}},
      {"reverse: false is the default",
       "pod-1",
       three,
       "{kind: NodeNumberArgs, reverse: false}",
       true,
       {10, 0, 0}},
      {"without PreScore every node scores 0", "pod-1", three, nullptr, false, {0, 0, 0}},
  };
  for (const auto& c : cases) {
    phalanx::plugins::fake::FakeHandle h;
    h.SetNodes(MakeNodes(c.nodes));
    YAML::Node args;
    if (c.args != nullptr) args = YAML::Load(c.args);
    auto pl = NodeNumber::New(c.args != nullptr ? &args : nullptr, h);
    ASSERT_TRUE(pl.ok()) << c.name << ": " << pl.status().Message();
    auto* ps = dynamic_cast<fw::PreScorePlugin*>(pl.value().get());
    auto* sp = dynamic_cast<fw::ScorePlugin*>(pl.value().get());
    ASSERT_NE(ps, nullptr);
    ASSERT_NE(sp, nullptr);
    EXPECT_EQ(sp->GetScoreExtensions(), nullptr) << "scores are already in [0, 100]";

    fw::CycleState state;
    const auto pod = MakePod(c.pod);
    const auto& nodes = h.SnapshotSharedLister().List();
    if (c.run_prescore) {
      ASSERT_TRUE(ps->PreScore(state, *pod, nodes).IsSuccess()) << c.name;
    }
    std::vector<int64_t> got;
    for (const auto* n : nodes) {
      int64_t s = -1;
      ASSERT_TRUE(sp->Score(state, *pod, *n, &s).IsSuccess()) << c.name;
      got.push_back(s);
    }
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(NodeNumberTest, Args) {
  struct Case {
    const char* name;
    const char* args;
    std::string want_error;  // empty: valid
  };
  const Case cases[] = {
      {"empty map", "{}", ""},
      {"null", "~", ""},
      {"kind and apiVersion are accepted",
       "{apiVersion: kubescheduler.config.k8s.io/v1, kind: NodeNumberArgs, reverse: true}", ""},
      {"not a boolean", "reverse: maybe",
       "NodeNumberArgs: reverse: Invalid value: \"maybe\": must be a boolean"},
      {"unknown field", "reverse: true\nfoo: 1", "foo"},
      {"wrong kind", "kind: NodeResourcesFitArgs", "want args of kind NodeNumberArgs"},
  };
  for (const auto& c : cases) {
    phalanx::plugins::fake::FakeHandle h;
    YAML::Node args = YAML::Load(c.args);
    auto pl = NodeNumber::New(&args, h);
    if (c.want_error.empty()) {
      EXPECT_TRUE(pl.ok()) << c.name << ": " << pl.status().Message();
    } else {
      ASSERT_FALSE(pl.ok()) << c.name;
      EXPECT_TRUE(pl.status().IsError()) << c.name;
      EXPECT_NE(pl.status().Message().find(c.want_error), std::string::npos)
          << c.name << ": " << pl.status().Message();
    }
  }
}

TEST(NodeNumberTest, SuffixNumber) {
  EXPECT_EQ(SuffixNumber("pod-1"), 1);
  EXPECT_EQ(SuffixNumber("node-10"), 0);
  EXPECT_EQ(SuffixNumber("9"), 9);
  EXPECT_EQ(SuffixNumber("pod-x"), std::nullopt);
  EXPECT_EQ(SuffixNumber(""), std::nullopt);
}

TEST(NodeNumberTest, EventsToRegister) {
  NodeNumber pl;
  const auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, fw::EventResource::kNode);
  EXPECT_EQ(events[0].event.action, fw::kAdd);
}

TEST(NodeNumberTest, RegistersNextToInTreePlugins) {
  auto r = phalanx::app::NewRegistry({phalanx::app::WithPlugin("NodeNumber", NodeNumber::New)});
  ASSERT_TRUE(r.ok()) << r.status().Message();
  EXPECT_TRUE(r->Has("NodeNumber"));
  EXPECT_TRUE(r->Has("NodeResourcesFit"));
}

}  // namespace
}  // namespace nodenumber
