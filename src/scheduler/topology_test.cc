// Multi-level topology with scored placements, end to end: KAI Topology objects
// (kai.scheduler/v1alpha1, levels rack > block) referenced by a KAI PodGroup's
// topologyConstraint, on the in-process Store with a virtual clock.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <map>
#include <set>
#include <string>

#include "scheduler/podgroup_algorithm.h"
#include "scheduler/scheduler_test_env.h"

namespace phalanx::scheduler {
namespace {

using Env = SchedulerTestEnv;

// A node of the 2 racks x 2 blocks x 2 nodes cluster: 32 cpu, 8 GPUs.
std::string RackNode(const std::string& name, const std::string& rack, const std::string& block) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name + ", rack: " + rack + ", block: " + block +
         "}}\nstatus:\n  capacity: {cpu: \"32\", memory: 64Gi, pods: \"110\", nvidia.com/gpu: "
         "\"8\"}\n---\n";
}

// r1: blocks r1-b1 (n11, n12) and r1-b2 (n13, n14); r2: r2-b1 (n21, n22), r2-b2 (n23, n24).
std::string Cluster() {
  std::string y;
  for (const std::string r : {"1", "2"}) {
    y += RackNode("n" + r + "1", "r" + r, "r" + r + "-b1");
    y += RackNode("n" + r + "2", "r" + r, "r" + r + "-b1");
    y += RackNode("n" + r + "3", "r" + r, "r" + r + "-b2");
    y += RackNode("n" + r + "4", "r" + r, "r" + r + "-b2");
  }
  return y;
}

constexpr char kTopology[] =
    "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: dc}\n"
    "spec:\n  levels:\n  - nodeLabel: rack\n  - nodeLabel: block\n---\n";

// A KAI PodGroup ml/<name> with spec.topologyConstraint (empty levels are left out).
std::string KaiPodGroup(const std::string& name, int min, const std::string& topology,
                        const std::string& required, const std::string& preferred) {
  std::string tc = "{topology: " + topology;
  if (!required.empty()) tc += ", requiredTopologyLevel: " + required;
  if (!preferred.empty()) tc += ", preferredTopologyLevel: " + preferred;
  return "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: ml}\nspec: {minMember: " + std::to_string(min) +
         ", topologyConstraint: " + tc + "}}\n---\n";
}

// A member of KAI pod group `group` asking 1 cpu and `gpus` GPUs.
std::string Member(const std::string& name, const std::string& group, int gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  labels: {gang: " + group +
         "}\n  annotations: {pod-group-name: " + group +
         "}\nspec:\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: "
         "\"1\", nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}}}]\n---\n";
}

// A running pod already bound to `node`, holding `gpus` GPUs and 1 cpu.
std::string Running(const std::string& node, int gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: busy-" + node +
         ", namespace: default}\nspec:\n  nodeName: " + node +
         "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\", "
         "nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}}}]\n---\n";
}

// Node -> rack / block of every bound member of `group`.
std::map<std::string, std::string> Placement(Env& env, const std::string& group,
                                             const std::string& label) {
  std::map<std::string, std::string> out;
  for (const auto& p : env.store.ListPods()) {
    auto it = p->metadata.labels.find("gang");
    if (it == p->metadata.labels.end() || it->second != group || p->spec.node_name.empty()) {
      continue;
    }
    out[p->metadata.name] = env.store.GetNode(p->spec.node_name)->metadata.labels.at(label);
  }
  return out;
}

std::string Condition(Env& env, const std::string& name) {
  for (const auto& c : env.store.GetPod("ml", name)->status.conditions) {
    if (c.type == "PodScheduled") return c.message;
  }
  return "";
}

// The must-show case. Free GPUs per node (8 each, minus the running pods):
//   r1: r1-b1 {n11 8, n12 6}  r1-b2 {n13 4, n14 2}   20 free
//   r2: r2-b1 {n21 8, n22 4}  r2-b2 {n23 4, n24 4}   20 free
// A 4 x 4-GPU gang (16 GPUs), rack required, block preferred. No block can hold four
// 4-GPU members, so the preferred level is unsatisfiable and the next level up (rack) is
// tried — not the whole cluster. Both racks fit and leave 4 GPUs and the same CPU free;
// r1 must use n12 and leave 2 + 2 GPUs stranded (n12, n14: too few for a 4-GPU member),
// r2 leaves its 4 GPUs on one node, none stranded. r2 wins although r1 comes first by
// name and is as large: taking the first domain that fits would choose r1.
TEST(TopologyPlacementTest, PreferredBlockUnsatisfiableRackWithFewestStrandedGpusWins) {
  Env env;
  std::string y = Cluster() + kTopology + KaiPodGroup("train", 4, "dc", "rack", "block");
  y += Running("n12", 2) + Running("n13", 4) + Running("n14", 6);
  y += Running("n22", 4) + Running("n23", 4) + Running("n24", 4);
  for (int i = 0; i < 4; ++i) y += Member("train-" + std::to_string(i), "train", 4);
  env.Apply(y);
  env.RunUntilIdle();

  auto ev = env.store.LastObjectEvent("PodGroup", "ml", "train");
  ASSERT_TRUE(ev.has_value());
  std::cout << "candidates (" << ev->reason << "):\n";
  std::string msg = ev->message;
  const size_t table = msg.find("candidates: ");
  ASSERT_NE(table, std::string::npos) << msg;
  for (size_t at = table + 12; at != std::string::npos;) {
    size_t end = msg.find("; ", at);
    std::cout << "  " << msg.substr(at, end == std::string::npos ? end : end - at) << "\n";
    at = end == std::string::npos ? end : end + 2;
  }
  EXPECT_EQ(ev->reason, "Scheduled");
  // The table: every block does not fit (too little free), both racks fit, r2 is chosen.
  for (const char* row : {
           "topology: rack=r2;",
           "block=r1-b1: does not fit (free capacity below the gang's minimum: nvidia.com/gpu: "
           "16 requested, 14 free)",
           "block=r1-b2: does not fit (free capacity below the gang's minimum: nvidia.com/gpu: "
           "16 requested, 6 free)",
           "block=r2-b1: does not fit",
           "block=r2-b2: does not fit",
           "rack=r1: fits, free GPUs 4, free cpu 121000m, stranded GPUs 4",
           "rack=r2: fits, free GPUs 4, free cpu 121000m, stranded GPUs 0",
       }) {
    EXPECT_NE(msg.find(row), std::string::npos) << row << "\nin: " << msg;
  }
  auto racks = Placement(env, "train", "rack");
  ASSERT_EQ(racks.size(), 4u);
  for (const auto& [pod, rack] : racks) EXPECT_EQ(rack, "r2") << pod;
}

// Preferred level only (no required one): when no block fits, the next level up (rack) is
// tried before the whole cluster — the gang is not spread over both racks.
TEST(TopologyPlacementTest, PreferredBlockOnlyFallsBackToOneRackNotTheCluster) {
  Env env;
  std::string y = Cluster() + kTopology + KaiPodGroup("spill", 4, "dc", "", "block");
  y += Running("n12", 2) + Running("n13", 4) + Running("n14", 6);
  y += Running("n22", 4) + Running("n23", 4) + Running("n24", 4);
  for (int i = 0; i < 4; ++i) y += Member("spill-" + std::to_string(i), "spill", 4);
  env.Apply(y);
  env.RunUntilIdle();
  auto racks = Placement(env, "spill", "rack");
  ASSERT_EQ(racks.size(), 4u);
  for (const auto& [pod, rack] : racks) EXPECT_EQ(rack, "r2") << pod;
}

// Bin-packing on the first criterion: a 2 x 8-GPU gang, rack required, block preferred.
//   r1: {n11 8, n12 7} {n13 8, n14 5}: 28 free, fits, 12 left
//   r2: {n21 8, n22 0} {n23 8, n24 0}: 16 free, fits, 0 left  -> the tightest
// No block has two free 8-GPU nodes. Without the pod on n14, block r1-b2 {n13 8, n14 8}
// does: the preferred level wins over the tighter rack, and no rack is tried.
TEST(TopologyPlacementTest, TightestRackWinsAndAFittingBlockIsPreferred) {
  for (bool block_fits : {false, true}) {
    Env env;
    std::string y = Cluster() + kTopology + KaiPodGroup("ring", 2, "dc", "rack", "block");
    y += Running("n12", 1) + Running("n22", 8) + Running("n24", 8);
    if (!block_fits) y += Running("n14", 3);
    for (int i = 0; i < 2; ++i) y += Member("ring-" + std::to_string(i), "ring", 8);
    env.Apply(y);
    env.RunUntilIdle();
    auto ev = env.store.LastObjectEvent("PodGroup", "ml", "ring");
    ASSERT_TRUE(ev.has_value());
    std::cout << (block_fits ? "block fits: " : "no block fits: ") << ev->message << "\n";
    if (!block_fits) {
      auto racks = Placement(env, "ring", "rack");
      ASSERT_EQ(racks.size(), 2u);
      for (const auto& [pod, rack] : racks) EXPECT_EQ(rack, "r2") << pod;
      EXPECT_NE(ev->message.find("rack=r1: fits, free GPUs 12"), std::string::npos) << ev->message;
      EXPECT_NE(ev->message.find("rack=r2: fits, free GPUs 0"), std::string::npos) << ev->message;
    } else {
      // r1-b2 {n13 8, n14 8} is the only block with two free 8-GPU nodes.
      auto blocks = Placement(env, "ring", "block");
      ASSERT_EQ(blocks.size(), 2u);
      for (const auto& [pod, block] : blocks) EXPECT_EQ(block, "r1-b2") << pod;
      EXPECT_NE(ev->message.find("topology: block=r1-b2;"), std::string::npos) << ev->message;
      EXPECT_EQ(ev->message.find("rack=r"), std::string::npos) << "no rack tried: " << ev->message;
    }
  }
}

// Required level unsatisfiable: each rack has 20 free GPUs (8, 8, 4, 0), enough for a
// 3 x 6-GPU gang (18) by count, so the trial placement runs — and only two of its nodes can
// host a 6-GPU member. Across racks the four free 8-GPU nodes would do. Nothing is bound or
// held, and every member's reason names the required level and each rack's shortfall.
TEST(TopologyPlacementTest, RequiredRackUnsatisfiableBindsNothingAndNamesTheLevel) {
  Env env;
  std::string y = Cluster() + kTopology + KaiPodGroup("big", 3, "dc", "rack", "block");
  y += Running("n13", 4) + Running("n14", 8) + Running("n23", 4) + Running("n24", 8);
  for (int i = 0; i < 3; ++i) y += Member("big-" + std::to_string(i), "big", 6);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(Placement(env, "big", "rack").empty());
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 0u);
  for (int i = 0; i < 3; ++i) {
    const std::string c = Condition(env, "big-" + std::to_string(i));
    EXPECT_NE(
        c.find("required topology level \"rack\" (topology dc): no rack domain fits the gang"),
        std::string::npos)
        << c;
    EXPECT_NE(c.find("rack=r2: pod group ml/big"), std::string::npos) << c;
    EXPECT_NE(c.find("2 of 3 pending members fit, 3 needed"), std::string::npos) << c;
  }
  std::cout << Condition(env, "big-0") << "\n";
}

// A PodGroup that names a Topology that does not exist is never placed without it: its
// members stay pending with a reason naming the Topology, and run once it is created.
TEST(TopologyPlacementTest, MissingTopologyKeepsMembersPendingUntilItExists) {
  Env env;
  std::string y = Cluster() + KaiPodGroup("wait", 2, "dc", "rack", "");
  for (int i = 0; i < 2; ++i) y += Member("wait-" + std::to_string(i), "wait", 8);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(Placement(env, "wait", "rack").empty());
  EXPECT_NE(
      Condition(env, "wait-0").find("topology \"dc\" not found (kai.scheduler/v1alpha1 Topology)"),
      std::string::npos)
      << Condition(env, "wait-0");
  env.Apply(kTopology);
  env.clock.Advance(60 * api::kNanosPerSecond);
  env.RunUntilIdle();
  auto racks = Placement(env, "wait", "rack");
  ASSERT_EQ(racks.size(), 2u);
  EXPECT_EQ(racks.begin()->second, racks.rbegin()->second);
}

// A level that the Topology does not have is a configuration error on every member (KAI's
// newTopologyConstraintConfigError), not a silent fallback.
TEST(TopologyPlacementTest, LevelNotInTopologyIsReported) {
  Env env;
  std::string y = Cluster() + kTopology + KaiPodGroup("odd", 1, "dc", "zone", "");
  y += Member("odd-0", "odd", 1);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(Placement(env, "odd", "rack").empty());
  EXPECT_NE(Condition(env, "odd-0")
                .find("required level \"zone\" is not a level of topology \"dc\" (rack, block)"),
            std::string::npos)
      << Condition(env, "odd-0");
}

// GangScheduling's Permit mode places members pod by pod and cannot keep a gang inside a
// domain: the constraint is reported on the members, never dropped.
TEST(TopologyPlacementTest, PermitModeReportsTheConstraintInsteadOfIgnoringIt) {
  auto cfg = config::DefaultConfiguration();
  config::PluginConfig pc;
  pc.name = "GangScheduling";
  pc.args = std::make_shared<YAML::Node>(YAML::Load("{mode: Permit}"));
  cfg.profiles[0].plugin_config.push_back(pc);
  Env env(SchedulerTestOptions{cfg});
  std::string y = Cluster() + kTopology + KaiPodGroup("permit", 2, "dc", "rack", "");
  for (int i = 0; i < 2; ++i) y += Member("permit-" + std::to_string(i), "permit", 8);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(Placement(env, "permit", "rack").empty());
  EXPECT_NE(Condition(env, "permit-0")
                .find("topology constraints need GangScheduling mode Transactional"),
            std::string::npos)
      << Condition(env, "permit-0");
}

// The candidate order itself is PlacementBinPacking's (placement_bin_packing_test.cc); the
// Event's line carries the PlacementScore plugins' accounts after "fits".
TEST(TopologyCandidateTest, FormatNamesDomainAndScoresOrReason) {
  TopologyCandidate t;
  t.level = "rack";
  t.domain = "r2";
  t.fits = true;
  t.detail = "free GPUs 4, free cpu 121000m, stranded GPUs 0";
  EXPECT_EQ(FormatTopologyCandidate(t),
            "rack=r2: fits, free GPUs 4, free cpu 121000m, stranded GPUs 0");
  t.detail.clear();
  EXPECT_EQ(FormatTopologyCandidate(t), "rack=r2: fits");
  t.fits = false;
  t.reason = "pod group ml/train: 3 of 4 pending members fit, 4 needed";
  EXPECT_EQ(FormatTopologyCandidate(t),
            "rack=r2: does not fit (pod group ml/train: 3 of 4 pending members fit, 4 needed)");
}

}  // namespace
}  // namespace phalanx::scheduler
