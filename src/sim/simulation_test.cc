// Simulation tests: invariants and determinism on the bundled examples (the openb trace
// runs are in src/replay/replay_test.cc).
#include "sim/simulation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"

namespace phalanx::sim {
namespace {

const std::string kData = PHALANX_SHARED_DATA_DIR;

SimulationOptions Options(uint64_t seed) {
  SimulationOptions o;
  o.seed = seed;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  return o;
}

std::vector<std::string> Placements(const SimulationResult& r) {
  std::vector<std::string> v;
  for (const auto& o : r.outcomes) v.push_back(o.pod + "=" + o.node);
  return v;
}

// Checks the result-level invariants; the node-level ones come from the run's checker.
void ExpectInvariants(const SimulationResult& r) {
  EXPECT_TRUE(r.invariant_violations.empty())
      << r.invariant_violations.size() << " violations, first: " << r.invariant_violations[0];
  for (const auto& o : r.outcomes) {
    if (o.scheduled_s) {
      EXPECT_FALSE(o.node.empty()) << o.pod;
    } else {
      EXPECT_FALSE(o.reason.empty() && !o.deleted_s) << "pending pod without reason: " << o.pod;
    }
  }
  for (const auto& u : r.usage) EXPECT_LE(u.peak, u.capacity + 1e-9) << u.resource;
}

TEST(SimulationTest, ExampleScenarioRunsDeterministically) {
  Scenario sc;
  ASSERT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/gpu-cluster", &sc), absl::OkStatus());
  SimulationResult a, b;
  ASSERT_EQ(RunSimulation(sc, Options(3), &a), absl::OkStatus());
  ASSERT_EQ(RunSimulation(sc, Options(3), &b), absl::OkStatus());
  ExpectInvariants(a);
  EXPECT_EQ(Placements(a), Placements(b));
  EXPECT_EQ(a.pods, 20u);
  EXPECT_EQ(a.scheduled, 16u);
  // One of three pods asking for host port 6379, and the whole llm-pretrain gang (3 pods
  // of 8 H100s each; two H100 nodes): no partial gang holds GPUs.
  EXPECT_EQ(a.pending_at_end, 4u);
  int llm_bound = 0;
  for (const auto& o : a.outcomes) {
    if (o.pod.find("llm-pretrain") != std::string::npos && o.scheduled_s) ++llm_bound;
  }
  EXPECT_EQ(llm_bound, 0);
  // Training pods never land on CPU nodes, services never on (tainted) GPU nodes.
  for (const auto& o : a.outcomes) {
    if (o.node.empty()) continue;
    bool gpu_node = o.node.rfind("gpu-", 0) == 0;
    EXPECT_EQ(gpu_node, o.pod.rfind("research/", 0) == 0) << o.pod << " on " << o.node;
  }
}

// Every gang dialect in one cluster (examples/gangs): the six gangs that fit start whole,
// the one that cannot fit holds nothing, and every pod of it has the gang-level reason.
TEST(SimulationTest, MixedGangDialectsExample) {
  Scenario sc;
  ASSERT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/gangs", &sc), absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  ExpectInvariants(r);
  std::map<std::string, std::pair<int, int>> gangs;  // prefix -> (bound, total)
  for (const auto& o : r.outcomes) {
    std::string gang = o.pod.substr(0, o.pod.find('-'));
    ++gangs[gang].second;
    if (o.scheduled_s) ++gangs[gang].first;
  }
  for (const char* g : {"nlp/bert", "vision/vit", "ads/rec", "physics/sim", "genai/llama",
                        "vision/resnet"}) {
    EXPECT_EQ(gangs[g].first, gangs[g].second) << g << " did not start whole";
    EXPECT_GT(gangs[g].second, 0) << g;
  }
  EXPECT_EQ(gangs["nlp/giant"].first, 0);
  EXPECT_EQ(gangs["nlp/giant"].second, 5);
  for (const auto& o : r.outcomes) {
    if (o.pod.rfind("nlp/giant", 0) == 0) {
      EXPECT_NE(o.reason.find("pod group nlp/giant"), std::string::npos) << o.reason;
    }
  }
}

TEST(SimulationTest, UnknownPriorityClassIsAnErrorNamingThePod) {
  Scenario sc;
  api::Pod p;
  p.metadata.name = "p";
  p.metadata.namespace_ = "default";
  p.spec.priority_class_name = "gold";
  sc.pods.push_back({p, 0, std::nullopt, std::nullopt});
  SimulationResult r;
  const api::Status s = RunSimulation(sc, Options(1), &r);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("default/p"), std::string::npos) << s;
  EXPECT_NE(s.message().find("no PriorityClass with name gold"), std::string::npos) << s;
}

}  // namespace
}  // namespace phalanx::sim
