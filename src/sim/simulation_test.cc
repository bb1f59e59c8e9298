// Simulation tests: invariants and determinism on the bundled example and, when the
// shared data set is present (a developer checkout with ../shared), on the full openb trace.
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
  std::string err;
  ASSERT_TRUE(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/gpu-cluster", &sc, &err)) << err;
  SimulationResult a, b;
  ASSERT_TRUE(RunSimulation(sc, Options(3), &a, &err)) << err;
  ASSERT_TRUE(RunSimulation(sc, Options(3), &b, &err)) << err;
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
  std::string err;
  ASSERT_TRUE(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/gangs", &sc, &err)) << err;
  SimulationResult r;
  ASSERT_TRUE(RunSimulation(sc, Options(1), &r, &err)) << err;
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
  std::string err;
  EXPECT_FALSE(RunSimulation(sc, Options(1), &r, &err));
  EXPECT_NE(err.find("default/p"), std::string::npos) << err;
  EXPECT_NE(err.find("no PriorityClass with name gold"), std::string::npos) << err;
}

class OpenbTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kData + "/alibaba-openb/openb_pod_list_default.csv")) {
      if (std::getenv("CI")) FAIL() << "shared data missing in CI: " << kData;
      GTEST_SKIP() << "needs ../shared/data (Alibaba openb trace); not in a user's clone";
    }
  }
};

TEST_F(OpenbTraceTest, DefaultTraceRunsToCompletionWithInvariantsAndDeterminism) {
  Scenario sc;
  std::string err;
  ASSERT_TRUE(LoadOpenbNodes(kData + "/alibaba-openb/openb_node_list_all_node.csv", &sc.nodes, &err)) << err;
  ASSERT_TRUE(LoadOpenbPods(kData + "/alibaba-openb/openb_pod_list_default.csv", {}, &sc.pods, &err)) << err;
  ASSERT_EQ(sc.nodes.size(), 1523u);
  ASSERT_EQ(sc.pods.size(), 8152u);
  SimulationResult a, b, c;
  ASSERT_TRUE(RunSimulation(sc, Options(42), &a, &err)) << err;
  ExpectInvariants(a);
  EXPECT_EQ(a.pods, 8152u);
  EXPECT_EQ(a.scheduled + a.pending_at_end + a.deleted_while_pending, 8152u);
  EXPECT_GT(a.scheduled, 8000u);
  ASSERT_TRUE(RunSimulation(sc, Options(42), &b, &err)) << err;
  EXPECT_EQ(Placements(a), Placements(b));
  ASSERT_TRUE(RunSimulation(sc, Options(43), &c, &err)) << err;
  EXPECT_NE(Placements(a), Placements(c));
}

TEST_F(OpenbTraceTest, UntimedTraceOverloadsTheClusterAndEveryPendingPodHasAReason) {
  Scenario sc;
  std::string err;
  ASSERT_TRUE(LoadOpenbNodes(kData + "/alibaba-openb/openb_node_list_gpu_node.csv", &sc.nodes, &err)) << err;
  OpenbOptions oo;
  oo.timed = false;
  ASSERT_TRUE(LoadOpenbPods(kData + "/alibaba-openb/openb_pod_list_multigpu20.csv", oo, &sc.pods, &err)) << err;
  SimulationResult r;
  ASSERT_TRUE(RunSimulation(sc, Options(1), &r, &err)) << err;
  ExpectInvariants(r);
  EXPECT_GT(r.pending_at_end, 0u);
  EXPECT_FALSE(r.pending_reasons.empty());
  size_t with_reason = 0;
  for (const auto& [reason, n] : r.pending_reasons) with_reason += n;
  EXPECT_EQ(with_reason, r.pending_at_end);
}

TEST(ScenarioTest, OpenbCsvErrorsNameFileLineAndColumn) {
  auto dir = std::filesystem::temp_directory_path() / "phalanx_openb_test";
  std::filesystem::create_directories(dir);
  auto path = (dir / "pods.csv").string();
  {
    std::ofstream f(path);
    f << "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
    f << "p0,1000,1024,1,1000\n";
    f << "p1,lots,1024,1,1000\n";
  }
  std::vector<TimedPod> pods;
  std::string err;
  EXPECT_FALSE(LoadOpenbPods(path, {}, &pods, &err));
  EXPECT_EQ(err, path + ":3: column cpu_milli: invalid value \"lots\"");
}

}  // namespace
}  // namespace phalanx::sim
