// phalanx explain and the what-if edits: a pod's per-node rejections and scores,
// the constraint whose removal lets it bind, the fewest nodes to add, and the edits alone.
#include "sim/explain.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/whatif.h"

namespace phalanx::sim {
namespace {

SimulationOptions Options() {
  SimulationOptions o;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  return o;
}

Scenario LoadYaml(const std::string& name, const std::string& yaml) {
  Scenario sc;
  const auto path =
      std::filesystem::path(::testing::TempDir()) / ("explain_test_" + name + ".yaml");
  {
    std::ofstream out(path);
    out << yaml;
  }
  const api::Status s = LoadManifestScenario(path.string(), &sc);
  EXPECT_TRUE(s.ok()) << s;
  return sc;
}

// Two 4-CPU nodes labelled zone a / b; "web" (3 CPU) selects zone c, which no node has;
// "db" (3 CPU) fills node b... and "big" (6 CPU) fits no node.
const char* kScenario =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n-a, labels: {zone: a}}\n"
    "status: {capacity: {cpu: \"4\", memory: 8Gi, pods: \"10\"}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: n-b, labels: {zone: b}}\n"
    "status: {capacity: {cpu: \"4\", memory: 8Gi, pods: \"10\"}}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\n"
    "spec:\n  nodeSelector: {zone: c}\n"
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"3\"}}}]\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: shop}\n"
    "spec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"6\"}}}]\n";

TEST(ExplainTest, NodeSelectorPodNamesThePluginPerNodeAndTheConstraintToDrop) {
  const Scenario sc = LoadYaml("selector", kScenario);
  ExplainRequest req;
  req.pod = "shop/web";
  Explanation e;
  ASSERT_EQ(Explain(sc, Options(), req, &e), absl::OkStatus());
  EXPECT_FALSE(e.satisfied());
  ASSERT_EQ(e.members.size(), 1u);
  const MemberExplanation& m = e.members[0];
  EXPECT_EQ(m.feasible_nodes(), 0);
  ASSERT_EQ(m.nodes.size(), 2u);
  for (const auto& v : m.nodes) {
    EXPECT_EQ(v.plugin, "NodeAffinity") << v.node;
    EXPECT_EQ(v.reason, "node(s) didn't match Pod's node affinity/selector") << v.node;
  }
  // More nodes of either existing shape (zone a or b) never help; dropping the selector does.
  ASSERT_EQ(e.fixes.size(), 1u) << FormatExplanation(e);
  EXPECT_EQ(e.fixes[0].kind, "drop-constraint");
  EXPECT_EQ(e.fixes[0].constraint, "spec.nodeSelector");
  EXPECT_NE(e.search_note.find("no fix with up to 8 added node(s)"), std::string::npos);
  // No forecast: no node is short of room only.
  ASSERT_TRUE(e.forecast.has_value());
  EXPECT_FALSE(e.forecast->ok);
  EXPECT_EQ(e.forecast->why_not,
            "no node rejects it only for want of room (the other rejections do not end when "
            "running pods do)");
}

TEST(ExplainTest, BoundPodNeedsNoFixAndTooBigPodHasNone) {
  Scenario sc = LoadYaml("scores", kScenario);
  ExplainRequest req;
  req.pod = "shop/web";
  req.at_s = 0;
  ASSERT_TRUE(DropConstraint("spec.nodeSelector", {"shop/web"}, &sc));
  // Bound now: nothing blocks it.
  Explanation e;
  ASSERT_EQ(Explain(sc, Options(), req, &e), absl::OkStatus());
  EXPECT_TRUE(e.satisfied());
  EXPECT_TRUE(e.members[0].bound);
  EXPECT_TRUE(e.fixes.empty());
  // The 6-CPU pod: rejected by NodeResourcesFit everywhere, fixed by no copy of a 4-CPU node.
  req.pod = "shop/big";
  ASSERT_EQ(Explain(sc, Options(), req, &e), absl::OkStatus());
  for (const auto& v : e.members[0].nodes) EXPECT_EQ(v.plugin, "NodeResourcesFit");
  EXPECT_TRUE(e.fixes.empty());
  EXPECT_EQ(e.forecast->why_not, "the pod does not fit even on the empty cluster");
}

TEST(ExplainTest, FewestNodesOfTheShapeThatHelps) {
  // Pods of 2 CPU arriving at t=0, 1, 2, 3 on one 2-CPU node: p3 is last in the queue, so
  // only 3 more nodes let it bind (one more is taken by p1, two by p1 and p2).
  std::string y =
      "apiVersion: v1\nkind: Node\nmetadata: {name: small, labels: {kubernetes.io/hostname: "
      "small}}\n"
      "status: {capacity: {cpu: \"2\", memory: 8Gi, pods: \"10\"}}\n---\n";
  for (int i = 0; i < 4; ++i) {
    y += "apiVersion: v1\nkind: Pod\nmetadata: {name: p" + std::to_string(i) +
         ", namespace: d, annotations: {simulation.phalanx.dev/arrival-seconds: \"" +
         std::to_string(i) +
         "\"}}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: "
         "\"2\"}}}]\n---\n";
  }
  const Scenario sc = LoadYaml("fewest", y);
  ExplainRequest req;
  req.pod = "d/p3";
  Explanation e;
  ASSERT_EQ(Explain(sc, Options(), req, &e), absl::OkStatus());
  ASSERT_FALSE(e.fixes.empty()) << FormatExplanation(e);
  EXPECT_EQ(e.fixes[0].kind, "add-nodes");
  EXPECT_EQ(e.fixes[0].count, 3);  // p1, p2 are ahead of p3 in the queue
  EXPECT_EQ(e.fixes[0].what_if, "--add-nodes 3xsmall");
  EXPECT_EQ(e.fixes[0].others_pending, 0u);
  EXPECT_EQ(e.others_pending, 2u);
  req.max_add_nodes = 2;  // the bound is honoured
  ASSERT_EQ(Explain(sc, Options(), req, &e), absl::OkStatus());
  EXPECT_TRUE(e.fixes.empty());
  EXPECT_EQ(e.search_note, "no fix with up to 2 added node(s) of one existing shape (small)");
}

TEST(ExplainTest, BadRequestsAreErrors) {
  const Scenario sc = LoadYaml("bad", kScenario);
  Explanation e;
  ExplainRequest req;
  EXPECT_EQ(Explain(sc, Options(), req, &e).message(),
            "explain: give either a pod NAMESPACE/NAME or --gang NAMESPACE/NAME");
  req.pod = "web";
  EXPECT_EQ(Explain(sc, Options(), req, &e).message(), "explain: \"web\": want NAMESPACE/NAME");
  req.pod = "shop/nope";
  EXPECT_EQ(Explain(sc, Options(), req, &e).message(), "pod shop/nope is not in the scenario");
  req.pod.clear();
  req.gang = "shop/g";
  EXPECT_EQ(Explain(sc, Options(), req, &e).message(), "no gang shop/g at t=0s (gangs: none)");
}

TEST(WhatIfTest, AddNodesParsesAndCopies) {
  AddNodes a;
  ASSERT_EQ(ParseAddNodes("4x{gpu-1}", &a), absl::OkStatus());
  EXPECT_EQ(a.count, 4);
  EXPECT_EQ(a.node_template, "gpu-1");
  ASSERT_EQ(ParseAddNodes(" 2 x n-a ", &a), absl::OkStatus());
  EXPECT_EQ(a.count, 2);
  EXPECT_EQ(a.node_template, "n-a");
  for (const char* bad : {"x n-a", "0xn-a", "2x", "twoxn-a", "100000xn-a"}) {
    EXPECT_FALSE(ParseAddNodes(bad, &a).ok()) << bad;
  }
  Scenario sc = LoadYaml("copies", kScenario);
  ASSERT_EQ(AddNodeCopies({2, "n-a"}, &sc), absl::OkStatus());
  ASSERT_EQ(sc.nodes.size(), 4u);
  EXPECT_EQ(sc.nodes[2].metadata.name, "n-a-whatif-1");
  EXPECT_EQ(sc.nodes[3].metadata.name, "n-a-whatif-2");
  EXPECT_EQ(sc.nodes[3].metadata.labels.at("zone"), "a");
  ASSERT_EQ(AddNodeCopies({1, "n-a"}, &sc), absl::OkStatus());
  EXPECT_EQ(sc.nodes[4].metadata.name, "n-a-whatif-3");  // names taken are skipped
  EXPECT_EQ(NodeShapeTemplates(sc), (std::vector<std::string>{"n-a", "n-b"}));
  EXPECT_EQ(AddNodeCopies({1, "n-z"}, &sc).message(),
            "--add-nodes: no node named \"n-z\" in the scenario (nodes: n-a, n-b, n-a-whatif-1, "
            "n-a-whatif-2, n-a-whatif-3)");
  EXPECT_FALSE(DropConstraint("spec.nodeSelector", {"shop/big"}, &sc));  // it has none
  EXPECT_FALSE(DropConstraint("node taints", {"shop/web"}, &sc));        // no node is tainted
}

}  // namespace
}  // namespace phalanx::sim
