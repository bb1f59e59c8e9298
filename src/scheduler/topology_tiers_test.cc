// Multi-level topology tiers, end to end on the in-process Store with a virtual clock:
//   - Volcano HyperNode tiers (topology.volcano.sh/v1alpha1) and a Volcano PodGroup's
//     spec.networkTopology (hard / soft, highestTierAllowed / highestTierName): the gang
//     inside one HyperNode, candidates scored like KAI Topology levels;
//   - KAI spec.subGroups[].topologyConstraint: each subgroup inside one domain of its own
//     level, within the gang's domain.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <map>
#include <set>
#include <string>

#include "scheduler/scheduler_test_env.h"

namespace phalanx::scheduler {
namespace {

using Env = SchedulerTestEnv;

// A node with 32 cpu and 8 GPUs; `labels` inside the braces (e.g. "rack: r1").
std::string GpuNode(const std::string& name, const std::string& labels = "") {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name + (labels.empty() ? "" : ", " + labels) +
         "}}\nstatus:\n  capacity: {cpu: \"32\", memory: 64Gi, pods: \"110\", nvidia.com/gpu: "
         "\"8\"}\n---\n";
}

// A running pod already bound to `node`, holding `gpus` GPUs and 1 cpu.
std::string Running(const std::string& node, int gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: busy-" + node +
         ", namespace: default}\nspec:\n  nodeName: " + node +
         "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\", "
         "nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}}}]\n---\n";
}

std::string HyperNode(const std::string& name, int tier, const std::string& tier_name,
                      const std::string& members) {
  return "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: " + name +
         "}\nspec:\n  tier: " + std::to_string(tier) +
         (tier_name.empty() ? "" : "\n  tierName: " + tier_name) + "\n  members:\n" + members +
         "---\n";
}
std::string NodeMember(const std::string& n) {
  return "  - {type: Node, selector: {exactMatch: {name: " + n + "}}}\n";
}
std::string ChildMember(const std::string& h) {
  return "  - {type: HyperNode, selector: {exactMatch: {name: " + h + "}}}\n";
}

// Tier 1: s0 {n1, n2, n9}, s1 {n3, n4}, s2 {n5, n6}, s3 {n7, n8 (by regex)};
// tier 2: s4 {s0, s1}, s5 {s2, s3}.
std::string HyperNodeCluster() {
  std::string y;
  for (const char* n : {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"}) y += GpuNode(n);
  y += HyperNode("s0", 1, "leaf", NodeMember("n1") + NodeMember("n2") + NodeMember("n9"));
  y += HyperNode("s1", 1, "leaf", NodeMember("n3") + NodeMember("n4"));
  y += HyperNode("s2", 1, "leaf", NodeMember("n5") + NodeMember("n6"));
  y += HyperNode("s3", 1, "leaf",
                 "  - {type: Node, selector: {regexMatch: {pattern: \"^n[78]$\"}}}\n");
  y += HyperNode("s4", 2, "spine", ChildMember("s0") + ChildMember("s1"));
  y += HyperNode("s5", 2, "spine", ChildMember("s2") + ChildMember("s3"));
  return y;
}

std::string VolcanoPodGroup(const std::string& name, int min, const std::string& nt) {
  return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: ml}\nspec: {minMember: " + std::to_string(min) + ", networkTopology: " + nt +
         "}\n---\n";
}

// A member of Volcano pod group `group` asking 1 cpu and `gpus` GPUs.
std::string VolcanoMember(const std::string& name, const std::string& group, int gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  labels: {gang: " + group +
         "}\n  annotations: {scheduling.k8s.io/group-name: " + group +
         "}\nspec:\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: "
         "\"1\", nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}}}]\n---\n";
}

// Bound members of `group`: pod name -> node.
std::map<std::string, std::string> Nodes(Env& env, const std::string& group) {
  std::map<std::string, std::string> out;
  for (const auto& p : env.store.ListPods()) {
    auto it = p->metadata.labels.find("gang");
    if (it == p->metadata.labels.end() || it->second != group || p->spec.node_name.empty()) {
      continue;
    }
    out[p->metadata.name] = p->spec.node_name;
  }
  return out;
}

std::string Condition(Env& env, const std::string& name) {
  for (const auto& c : env.store.GetPod("ml", name)->status.conditions) {
    if (c.type == "PodScheduled") return c.message;
  }
  return "";
}

// Free GPUs: s0 {n1 8, n2 8, n9 4} = 20, s1 {n3 8, n4 8} = 16, s2 {n5 8, n6 8} = 16,
// s3 {n7 8, n8 0} = 8. A hard tier-1 gang of 2 x 8 GPUs fits s0, s1 and s2; s1 and s2
// leave 0 GPUs and s0 leaves 4: the tightest (s1, before s2 by name) wins, not the first
// (s0).
TEST(HyperNodeTopologyTest, HardTierOneGangLandsInTheTightestTierOneHyperNode) {
  Env env;
  std::string y = HyperNodeCluster() + Running("n9", 4) + Running("n8", 8);
  y += VolcanoPodGroup("ring", 2, "{mode: hard, highestTierAllowed: 1}");
  for (int i = 0; i < 2; ++i) y += VolcanoMember("ring-" + std::to_string(i), "ring", 8);
  env.Apply(y);
  env.RunUntilIdle();
  auto ev = env.store.LastObjectEvent("PodGroup", "ml", "ring");
  ASSERT_TRUE(ev.has_value());
  std::cout << ev->message << "\n";
  EXPECT_EQ(ev->reason, "Scheduled");
  for (const char* row :
       {"topology: tier 1=s1;", "tier 1=s0: fits, free GPUs 4", "tier 1=s1: fits, free GPUs 0",
        "tier 1=s2: fits, free GPUs 0", "tier 1=s3: does not fit"}) {
    EXPECT_NE(ev->message.find(row), std::string::npos) << row << "\nin: " << ev->message;
  }
  EXPECT_EQ(ev->message.find("tier 2="), std::string::npos) << "tier 2 not tried";
  auto nodes = Nodes(env, "ring");
  ASSERT_EQ(nodes.size(), 2u);
  for (const auto& [pod, node] : nodes) EXPECT_TRUE(node == "n3" || node == "n4") << pod << node;
}

// 3 x 8 GPUs: no tier-1 HyperNode has three free 8-GPU nodes (s0 has n1, n2 and n9 with
// 4). Soft: the next tier up, where s5 {n5..n8} (32 free, 8 left) is tighter than s4
// (36 free, 12 left). Hard with highest tier 1 (by number or by tierName "leaf"): pending, naming
// the tier; highest tier "spine": s5.
TEST(HyperNodeTopologyTest, SoftFallsBackToTheNextTierHardStaysPending) {
  for (const std::string nt : {"{mode: soft}", "{mode: hard, highestTierAllowed: 1}",
                               "{highestTierName: leaf}", "{highestTierName: spine}"}) {
    Env env;
    std::string y = HyperNodeCluster() + Running("n9", 4);
    y += VolcanoPodGroup("wide", 3, nt);
    for (int i = 0; i < 3; ++i) y += VolcanoMember("wide-" + std::to_string(i), "wide", 8);
    env.Apply(y);
    env.RunUntilIdle();
    auto nodes = Nodes(env, "wide");
    const bool tier1_only =
        nt.find("1}") != std::string::npos || nt.find("leaf") != std::string::npos;
    if (tier1_only) {
      EXPECT_TRUE(nodes.empty()) << nt;
      const std::string c = Condition(env, "wide-0");
      EXPECT_NE(c.find("required topology level \"tier 1\" (topology HyperNode tiers): no tier 1 "
                       "domain fits the gang"),
                std::string::npos)
          << nt << ": " << c;
      EXPECT_EQ(env.sched->cache().AssumedPodCount(), 0u);
      continue;
    }
    ASSERT_EQ(nodes.size(), 3u) << nt;
    for (const auto& [pod, node] : nodes) {
      EXPECT_TRUE(node >= "n5" && node <= "n8") << nt << " " << pod << " " << node;
    }
    auto ev = env.store.LastObjectEvent("PodGroup", "ml", "wide");
    ASSERT_TRUE(ev.has_value());
    EXPECT_NE(ev->message.find("topology: tier 2=s5;"), std::string::npos) << ev->message;
  }
}

// Bad input never crashes and is never ignored: no HyperNode, then an invalid one, keep the
// members pending with the reason; a valid HyperNode set lets them run.
TEST(HyperNodeTopologyTest, MissingOrInvalidHyperNodesKeepTheGangPendingWithTheReason) {
  Env env;
  std::string y = GpuNode("n1") + GpuNode("n2");
  y += VolcanoPodGroup("g", 2, "{mode: hard, highestTierAllowed: 1}");
  for (int i = 0; i < 2; ++i) y += VolcanoMember("g-" + std::to_string(i), "g", 4);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(Nodes(env, "g").empty());
  EXPECT_NE(Condition(env, "g-0").find("spec.networkTopology: no HyperNode exists"),
            std::string::npos)
      << Condition(env, "g-0");
  env.Apply(HyperNode("bad", 1, "", "  - {type: Node, selector: {}}\n"));
  env.clock.Advance(60 * api::kNanosPerSecond);
  env.RunUntilIdle();
  EXPECT_TRUE(Nodes(env, "g").empty());
  EXPECT_NE(Condition(env, "g-0")
                .find("invalid HyperNode bad: spec.members[0].selector: exactly one of exactMatch, "
                      "regexMatch, labelMatch must be set, got 0"),
            std::string::npos)
      << Condition(env, "g-0");
  api::Manifests fixed;  // the same HyperNode, corrected (an update of the object)
  ASSERT_TRUE(api::DecodeManifests(HyperNode("bad", 1, "", NodeMember("n1") + NodeMember("n2")),
                                   "fix.yaml", &fixed)
                  .ok());
  ASSERT_TRUE(env.store.UpdateObject(fixed.objects.at(0)).ok());
  env.clock.Advance(60 * api::kNanosPerSecond);
  env.RunUntilIdle();
  EXPECT_EQ(Nodes(env, "g").size(), 2u) << Condition(env, "g-0");
}

// ---- KAI per-subgroup topology ----

// 2 racks x 2 blocks x 2 nodes (n11..n24), as in topology_test.cc.
std::string RackCluster() {
  std::string y;
  for (const std::string r : {"1", "2"}) {
    for (const std::string i : {"1", "2", "3", "4"}) {
      const std::string block = "r" + r + (i < "3" ? "-b1" : "-b2");
      y += GpuNode("n" + r + i, "rack: r" + r + ", block: " + block);
    }
  }
  return y +
         "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: dc}\n"
         "spec:\n  levels:\n  - nodeLabel: rack\n  - nodeLabel: block\n---\n";
}

// A KAI PodGroup ml/<name> with subgroups a and b (minMember 2 each), each with
// `sub_tc` as its topologyConstraint, and `gang_tc` on the PodGroup ("" = none).
std::string KaiSubGroups(const std::string& name, const std::string& gang_tc,
                         const std::string& sub_tc) {
  return "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: ml}\nspec:\n  minMember: 4\n" +
         (gang_tc.empty() ? "" : "  topologyConstraint: " + gang_tc + "\n") +
         "  subGroups:\n  - {name: a, minMember: 2, topologyConstraint: " + sub_tc +
         "}\n  - {name: b, minMember: 2, topologyConstraint: " + sub_tc + "}\n---\n";
}

std::string KaiMember(const std::string& name, const std::string& group, const std::string& sub,
                      int gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  labels: {gang: " + group + ", kai.scheduler/subgroup-name: " + sub +
         "}\n  annotations: {pod-group-name: " + group +
         "}\nspec:\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: "
         "\"1\", nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}}}]\n---\n";
}

std::string LabelOf(Env& env, const std::string& node, const std::string& label) {
  return env.store.GetNode(node)->metadata.labels.at(label);
}

// Free GPUs: r1 {n11 8, n12 8, n13 4, n14 4}, r2 {n21 8, n22 8, n23 4, n24 4}. Two
// subgroups of 2 x 8 GPUs, each required on a rack: each subgroup gets both 8-GPU nodes
// of one rack (the spreading default scores alone would mix racks), a and b in different
// racks, and the event names each subgroup's rack.
TEST(SubGroupTopologyTest, EachSubgroupRequiredOnARackLandsInOneRack) {
  Env env;
  std::string y =
      RackCluster() + KaiSubGroups("pd", "", "{topology: dc, requiredTopologyLevel: rack}");
  for (const std::string r : {"1", "2"}) y += Running("n" + r + "3", 4) + Running("n" + r + "4", 4);
  for (const std::string sub : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) y += KaiMember("pd-" + sub + std::to_string(i), "pd", sub, 8);
  }
  env.Apply(y);
  env.RunUntilIdle();
  auto nodes = Nodes(env, "pd");
  ASSERT_EQ(nodes.size(), 4u) << Condition(env, "pd-a0");
  std::map<std::string, std::set<std::string>> racks;  // subgroup -> racks
  for (const auto& [pod, node] : nodes) racks[pod.substr(3, 1)].insert(LabelOf(env, node, "rack"));
  ASSERT_EQ(racks["a"].size(), 1u);
  ASSERT_EQ(racks["b"].size(), 1u);
  EXPECT_NE(*racks["a"].begin(), *racks["b"].begin());
  auto ev = env.store.LastObjectEvent("PodGroup", "ml", "pd");
  ASSERT_TRUE(ev.has_value());
  std::cout << ev->message << "\n";
  EXPECT_NE(ev->message.find("subgroups: subgroup \"a\": rack=" + *racks["a"].begin()),
            std::string::npos)
      << ev->message;
  EXPECT_NE(ev->message.find("subgroup \"b\": rack=" + *racks["b"].begin()), std::string::npos)
      << ev->message;
}

// Free: r1 {n11 8, n12 8, n13 8, n14 4}, r2 {n21 8, n22 0, n23 4, n24 4}. Only r1 has two
// free 8-GPU nodes for a; then no rack has two for b: nothing is bound, and the reason
// names subgroup b's required level. Across racks (n11, n12, n13, n21) the gang would fit.
TEST(SubGroupTopologyTest, UnsatisfiableSubgroupLevelBindsNothingAndNamesTheSubgroup) {
  Env env;
  std::string y =
      RackCluster() + KaiSubGroups("pd", "", "{topology: dc, requiredTopologyLevel: rack}");
  y += Running("n14", 4) + Running("n22", 8) + Running("n23", 4) + Running("n24", 4);
  for (const std::string sub : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) y += KaiMember("pd-" + sub + std::to_string(i), "pd", sub, 8);
  }
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(Nodes(env, "pd").empty());
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 0u);
  const std::string c = Condition(env, "pd-b0");
  std::cout << c << "\n";
  EXPECT_NE(c.find("subgroup \"b\": required topology level \"rack\" (topology dc): no rack "
                   "domain fits subgroup \"b\""),
            std::string::npos)
      << c;
}

// Nested in the gang's domain: the gang required on a rack, each subgroup on a block.
// Free: r1 {b1: n11 8, n12 8; b2: n13 8, n14 0}, r2 {b1: n21 8, n22 8; b2: n23 8, n24 8}.
// r1 cannot give each subgroup a block with two free 8-GPU nodes; r2 can: a and b each
// take one block of r2.
TEST(SubGroupTopologyTest, SubgroupBlocksInsideTheGangsRack) {
  Env env;
  std::string y =
      RackCluster() + KaiSubGroups("nest", "{topology: dc, requiredTopologyLevel: rack}",
                                   "{requiredTopologyLevel: block}");
  y += Running("n14", 8);
  for (const std::string sub : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) y += KaiMember("nest-" + sub + std::to_string(i), "nest", sub, 8);
  }
  env.Apply(y);
  env.RunUntilIdle();
  auto nodes = Nodes(env, "nest");
  ASSERT_EQ(nodes.size(), 4u) << Condition(env, "nest-a0");
  std::map<std::string, std::set<std::string>> blocks;
  for (const auto& [pod, node] : nodes) {
    EXPECT_EQ(LabelOf(env, node, "rack"), "r2") << pod;
    blocks[pod.substr(5, 1)].insert(LabelOf(env, node, "block"));
  }
  EXPECT_EQ(blocks["a"].size(), 1u);
  EXPECT_EQ(blocks["b"].size(), 1u);
  EXPECT_NE(*blocks["a"].begin(), *blocks["b"].begin());
  auto ev = env.store.LastObjectEvent("PodGroup", "ml", "nest");
  ASSERT_TRUE(ev.has_value());
  std::cout << ev->message << "\n";
  EXPECT_NE(ev->message.find("topology: rack=r2;"), std::string::npos) << ev->message;
  EXPECT_NE(ev->message.find("rack=r1: does not fit"), std::string::npos) << ev->message;
}

// A subgroup member already bound in r2 (n23) keeps the subgroup's required rack there: its
// second member joins it in r2, although r1 comes first by name and fits as well.
TEST(SubGroupTopologyTest, RequiredSubgroupStaysWithItsRunningMembers) {
  Env env;
  std::string y =
      RackCluster() + KaiSubGroups("pd", "", "{topology: dc, requiredTopologyLevel: rack}");
  std::string bound = KaiMember("pd-a9", "pd", "a", 8);
  bound.insert(bound.find("spec:\n") + 6, "  nodeName: n23\n");
  y += bound;
  y += KaiMember("pd-a0", "pd", "a", 8);
  for (int i = 0; i < 2; ++i) y += KaiMember("pd-b" + std::to_string(i), "pd", "b", 8);
  env.Apply(y);
  env.RunUntilIdle();
  auto nodes = Nodes(env, "pd");
  ASSERT_EQ(nodes.size(), 4u) << Condition(env, "pd-a0");
  EXPECT_EQ(nodes["pd-a9"], "n23");
  EXPECT_EQ(LabelOf(env, nodes["pd-a0"], "rack"), "r2") << nodes["pd-a0"];
  EXPECT_EQ(LabelOf(env, nodes["pd-b0"], "rack"), LabelOf(env, nodes["pd-b1"], "rack"));
}

// GangScheduling's Permit mode cannot keep a subgroup in a domain: reported, not dropped.
TEST(SubGroupTopologyTest, PermitModeReportsASubgroupConstraint) {
  auto cfg = config::DefaultConfiguration();
  config::PluginConfig pc;
  pc.name = "GangScheduling";
  pc.args = std::make_shared<YAML::Node>(YAML::Load("{mode: Permit}"));
  cfg.profiles[0].plugin_config.push_back(pc);
  Env env(SchedulerTestOptions{cfg});
  std::string y =
      RackCluster() + KaiSubGroups("pm", "", "{topology: dc, requiredTopologyLevel: rack}");
  for (const std::string sub : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) y += KaiMember("pm-" + sub + std::to_string(i), "pm", sub, 1);
  }
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(Nodes(env, "pm").empty());
  EXPECT_NE(
      Condition(env, "pm-a0").find("topology constraints need GangScheduling mode Transactional"),
      std::string::npos)
      << Condition(env, "pm-a0");
}

// A subgroup level that the Topology lacks is reported on the members, naming the field.
TEST(SubGroupTopologyTest, BadSubgroupLevelIsReportedNotIgnored) {
  Env env;
  std::string y =
      RackCluster() + KaiSubGroups("odd", "", "{topology: dc, requiredTopologyLevel: row}");
  for (const std::string sub : {"a", "b"}) {
    for (int i = 0; i < 2; ++i) y += KaiMember("odd-" + sub + std::to_string(i), "odd", sub, 1);
  }
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(Nodes(env, "odd").empty());
  EXPECT_NE(Condition(env, "odd-a0")
                .find("spec.subGroups[0].topologyConstraint: topology constraint: required level "
                      "\"row\" is not a level of topology \"dc\" (rack, block)"),
            std::string::npos)
      << Condition(env, "odd-a0");
}

}  // namespace
}  // namespace phalanx::scheduler
