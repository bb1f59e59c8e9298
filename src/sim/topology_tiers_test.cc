// Multi-level topology tiers in the simulator, from the manifests of examples/ (objects decoded
// from YAML, `phalanx simulate` semantics): Volcano HyperNode tiers and KAI per-subgroup topology.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

SimulationResult SimulateExample(const std::string& dir) {
  Scenario sc;
  EXPECT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/" + dir, &sc),
            absl::OkStatus());
  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  SimulationResult r;
  EXPECT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
  return r;
}

// pod name prefix ("ml/ring-") -> nodes of its bound pods; pending pods' reasons apart.
std::map<std::string, std::set<std::string>> NodesBy(const SimulationResult& r,
                                                     std::map<std::string, std::string>* pending) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& o : r.outcomes) {
    if (o.pod.rfind("ml/", 0) != 0) continue;
    const std::string group = o.pod.substr(0, o.pod.rfind('-') + 1);
    if (o.scheduled_s) {
      out[group].insert(o.node);
    } else {
      (*pending)[o.pod] = o.reason;
    }
  }
  return out;
}

// examples/hypernode-tiers: tier 1 s0 {n1, n2, n9 (4 free)}, s1 {n3, n4}, s2 {n5, n6},
// s3 {n7, n8 (full)}; tier 2 s4 {s0, s1}, s5 {s2, s3}.
//   ring   (hard, tier <= 1, 2 x 8): the tightest tier-1 HyperNode, s1 = {n3, n4};
//   wide   (soft, 3 x 8): no tier-1 HyperNode fits, so tier 2: s5 (n5, n6, n7);
//   strict (hard, tierName leaf = tier 1, 3 x 8): pending, naming the tier.
TEST(TopologyTiersSimTest, HyperNodeTiersExample) {
  SimulationResult r = SimulateExample("hypernode-tiers");
  std::map<std::string, std::string> pending;
  auto nodes = NodesBy(r, &pending);
  EXPECT_EQ(nodes["ml/ring-"], (std::set<std::string>{"n3", "n4"}));
  EXPECT_EQ(nodes["ml/wide-"], (std::set<std::string>{"n5", "n6", "n7"}));
  EXPECT_EQ(nodes.count("ml/strict-"), 0u);
  ASSERT_EQ(pending.size(), 3u);
  for (const auto& [pod, reason] : pending) {
    EXPECT_EQ(pod.rfind("ml/strict-", 0), 0u) << pod;
    EXPECT_NE(reason.find("required topology level \"tier 1\" (topology HyperNode tiers): no "
                          "tier 1 domain fits the gang"),
              std::string::npos)
        << pod << ": " << reason;
  }
}

// examples/subgroup-topology: prefill and decode (2 x 8 GPUs each), each required inside
// one rack; each rack has two free 8-GPU nodes and two with 4. Each subgroup gets one
// rack's pair.
TEST(TopologyTiersSimTest, SubgroupTopologyExample) {
  SimulationResult r = SimulateExample("subgroup-topology");
  std::map<std::string, std::string> pending;
  auto nodes = NodesBy(r, &pending);
  EXPECT_TRUE(pending.empty());
  auto rack = [](const std::string& node) { return node.substr(0, 2); };  // n1x / n2x
  for (const char* sub : {"ml/prefill-", "ml/decode-"}) {
    ASSERT_EQ(nodes[sub].size(), 2u) << sub;
    EXPECT_EQ(rack(*nodes[sub].begin()), rack(*nodes[sub].rbegin())) << sub;
  }
  EXPECT_NE(rack(*nodes["ml/prefill-"].begin()), rack(*nodes["ml/decode-"].begin()));
}

}  // namespace
}  // namespace phalanx::sim
