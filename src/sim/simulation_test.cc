// Simulation tests: invariants and determinism on the bundled examples (the openb trace
// runs are in src/replay/replay_test.cc).
#include "sim/simulation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

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
  ASSERT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/gpu-cluster", &sc),
            absl::OkStatus());
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
  ASSERT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/gangs", &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  ExpectInvariants(r);
  std::map<std::string, std::pair<int, int>> gangs;  // prefix -> (bound, total)
  for (const auto& o : r.outcomes) {
    std::string gang = o.pod.substr(0, o.pod.find('-'));
    ++gangs[gang].second;
    if (o.scheduled_s) ++gangs[gang].first;
  }
  for (const char* g :
       {"nlp/bert", "vision/vit", "ads/rec", "physics/sim", "genai/llama", "vision/resnet"}) {
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

// Writes `yaml` to a fresh file and loads it as a scenario.
Scenario LoadYaml(const std::string& name, const std::string& yaml) {
  Scenario sc;
  const auto path =
      std::filesystem::path(::testing::TempDir()) / ("simulation_test_" + name + ".yaml");
  {
    std::ofstream out(path);
    out << yaml;
  }
  const api::Status s = LoadManifestScenario(path.string(), &sc);
  EXPECT_TRUE(s.ok()) << s;
  return sc;
}

const std::string kOneNode =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {capacity: {cpu: \"4\", memory: 8Gi, pods: \"10\"}}\n---\n";

// A pod of 1 CPU; `spec_extra` goes under spec (e.g. "  schedulerName: phalanx\n").
std::string PodYaml(const std::string& name, const std::string& spec_extra = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default}\nspec:\n" +
         spec_extra +
         "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\n---\n";
}

const PodOutcome* FindOutcome(const SimulationResult& r, const std::string& pod) {
  for (const auto& o : r.outcomes) {
    if (o.pod == pod) return &o;
  }
  return nullptr;
}

// Pods for a scheduler no profile serves are not ours (kube-scheduler ignores
// them): pending with a reason naming the scheduler name, no invariant violation.
// examples/topology: a KAI Topology object in the manifests (kind Topology) and a PodGroup
// whose rack level is required and block level preferred; no block fits, and the rack that
// leaves no GPU stranded (r2: nodes n21..n24) gets every worker.
TEST(SimulationTest, KaiTopologyExamplePlacesTheGangInTheBestRack) {
  Scenario sc;
  ASSERT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/topology", &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  ExpectInvariants(r);
  int workers = 0;
  for (const auto& o : r.outcomes) {
    if (o.pod.rfind("ml/train-", 0) != 0) continue;
    ++workers;
    ASSERT_TRUE(o.scheduled_s.has_value()) << o.pod << ": " << o.reason;
    EXPECT_EQ(o.node.substr(0, 2), "n2") << o.pod << " on " << o.node;
  }
  EXPECT_EQ(workers, 4);
}

TEST(SimulationTest, PodsForAnotherSchedulerArePendingNotOurs) {
  Scenario sc = LoadYaml(
      "unserved", kOneNode + PodYaml("ours") + PodYaml("theirs", "  schedulerName: phalanx\n"));
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
  EXPECT_EQ(r.scheduled, 1u);
  EXPECT_EQ(r.pending_at_end, 1u);
  const PodOutcome* o = FindOutcome(r, "default/theirs");
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(o->unserved);
  EXPECT_EQ(o->attempts, 0);
  const std::string want =
      "no profile serves schedulerName \"phalanx\" (profiles: default-scheduler)";
  EXPECT_EQ(o->reason, want);
  EXPECT_EQ(r.pending_reasons.count("not attempted before deletion"), 0u);
  EXPECT_EQ(r.pending_reasons[want], 1u);
  EXPECT_EQ(r.unserved_scheduler_names["phalanx"], 1u);
  const std::string summary = FormatSummary(r);
  EXPECT_NE(summary.find("1  " + want), std::string::npos) << summary;
  EXPECT_NE(summary.find("warning: 1 pod(s) with schedulerName \"phalanx\""), std::string::npos)
      << summary;
}

// A pod bound in the manifest (spec.nodeName) is listed with its node, bound at
// arrival with no attempt, and counted apart from the pods the scheduler bound.
TEST(SimulationTest, PodsBoundInTheManifestAreListedWithTheirNode) {
  Scenario sc =
      LoadYaml("prebound", kOneNode + PodYaml("pre", "  nodeName: n1\n") + PodYaml("ours"));
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
  EXPECT_EQ(r.prebound, 1u);
  EXPECT_EQ(r.scheduled, 1u);
  EXPECT_EQ(r.pending_at_end, 0u);
  EXPECT_TRUE(r.pending_reasons.empty());
  const PodOutcome* o = FindOutcome(r, "default/pre");
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(o->prebound);
  EXPECT_EQ(o->node, "n1");
  ASSERT_TRUE(o->scheduled_s.has_value());
  EXPECT_EQ(*o->scheduled_s, o->arrival_s);
  EXPECT_EQ(o->attempts, 0);
  EXPECT_NE(FormatSummary(r).find("scheduled: 1  pending at end: 0  deleted while pending: 0  "
                                  "bound in the manifest: 1\n"),
            std::string::npos)
      << FormatSummary(r);
  const std::string path = ::testing::TempDir() + "/simulation_test_prebound.jsonl";
  ASSERT_EQ(WriteOutcomesJsonl(r, path), absl::OkStatus());
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(
      line,
      "{\"arrival\":0.0,\"attempts\":0,\"deleted\":null,\"node\":\"n1\",\"pod\":\"default/pre\","
      "\"prebound\":true,\"reason\":null,\"scheduled\":0.0}");
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
