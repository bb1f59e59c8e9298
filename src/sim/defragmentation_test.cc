// Defragmentation (plugins/defragmentation) in the simulator: eight 8-GPU nodes whose 8 free
// GPUs are scattered (2, 2, 1, 1, 1, 1, 0, 0), every pod owned by a ReplicaSet that
// recreates it, and an 8-GPU pod that waits. The plan with the fewest moves whose pods all
// fit again elsewhere is taken: node-1 (3 x 2-GPU pods) and node-7 (4 x 2-GPU) would need
// three and four 2-GPU holes where there are two, so node-0's six 1-GPU pods move. The
// checks read the run's outcomes and the store, not the plugin's state: the pod starts on
// the node that was emptied, every moved pod runs again, no other pod moved, capacity never
// exceeded (the invariant checker); with a PodDisruptionBudget on node-0's pods, those stay
// and seven pods of node-2 move instead. And the plain case: one free GPU on each of eight
// nodes, where the seven pods of one node move.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "store/store.h"

namespace phalanx::sim {
namespace {

std::string Config(const std::string& args) {
  return "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
         "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
         "    multiPoint: {enabled: [{name: Defragmentation}]}\n  pluginConfig:\n"
         "  - name: Defragmentation\n    args: " +
         args + "\n";
}

// The GPUs of each pod, per node: free GPUs 2, 2, 1, 1, 1, 1, 0, 0.
const std::vector<std::vector<int>> kScattered = {{1, 1, 1, 1, 1, 1},       {2, 2, 2},
                                                  {1, 1, 1, 1, 1, 1, 1},    {1, 1, 1, 1, 1, 1, 1},
                                                  {1, 1, 1, 1, 1, 1, 1},    {1, 1, 1, 1, 1, 1, 1},
                                                  {1, 1, 1, 1, 1, 1, 1, 1}, {2, 2, 2, 2}};

// Pods of `layout` (GPUs per pod, per node) bound to 8-GPU nodes, owned by ReplicaSets; the
// pods of node-0 carry label app=db, which the PodDisruptionBudget (when `pdb`) protects.
std::string ScenarioYaml(bool pdb, const std::vector<std::vector<int>>& layout) {
  std::string s;
  for (size_t n = 0; n < layout.size(); ++n) {
    const std::string node = "node-" + std::to_string(n);
    s += "apiVersion: v1\nkind: Node\nmetadata: {name: " + node +
         ", labels: {kubernetes.io/hostname: " + node +
         "}}\nstatus: {capacity: {cpu: \"64\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: "
         "\"8\"}}\n---\n";
    for (size_t i = 0; i < layout[n].size(); ++i) {
      s += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w-" + std::to_string(n) + "-" +
           std::to_string(i) +
           "\n  namespace: default\n  labels: {app: " + (n == 0 ? "db" : "web") +
           "}\n  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs-" +
           std::to_string(n) + ", uid: rs-uid-" + std::to_string(n) +
           ", controller: true}]\nspec:\n  nodeName: " + node +
           "\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\", "
           "nvidia.com/gpu: \"" +
           std::to_string(layout[n][i]) + "\"}}}]\n---\n";
    }
  }
  if (pdb) {
    s += "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, namespace: "
         "default}\nspec: {maxUnavailable: 0, selector: {matchLabels: {app: db}}}\n---\n";
  }
  s += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  namespace: default\n"
       "  annotations: {simulation.phalanx.dev/arrival-seconds: \"600\"}\nspec:\n"
       "  containers: [{name: c, image: x, resources: {requests: {cpu: \"8\", "
       "nvidia.com/gpu: \"8\"}}}]\n";
  return s;
}

struct DefragRun {
  SimulationResult res;
  std::map<std::string, int> evicted;  // pod -> evictions (the run's hook)
  std::map<std::string, std::string> node_at_end;
};

void RunScenario(const std::string& name, bool pdb, const std::string& args, DefragRun* run,
                 const std::vector<std::vector<int>>& layout = kScattered) {
  const auto path = std::filesystem::path(::testing::TempDir()) / ("defrag_test_" + name + ".yaml");
  {
    std::ofstream out(path);
    out << ScenarioYaml(pdb, layout);
  }
  Scenario sc;
  ASSERT_TRUE(LoadManifestScenario(path.string(), &sc).ok());
  // The ReplicaSet recreates its pods when they are evicted (their controller reference).
  for (const auto& tp : sc.pods) {
    ASSERT_EQ(tp.restart_on_eviction, tp.pod.metadata.name != "big") << tp.pod.Key();
  }
  SimulationOptions o;
  o.seed = 3;
  auto cfg = config::DecodeConfiguration(Config(args), "test-config");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  o.config = *cfg;
  o.registry = plugins::NewInTreeRegistry();
  o.hooks.on_evicted = [&, run](size_t i, double, bool) {
    ++run->evicted[sc.pods[i].pod.metadata.name];
  };
  o.hooks.on_end = [run](scheduler::Scheduler&, store::Store& st) {
    for (const auto& p : st.ListPods()) run->node_at_end[p->metadata.name] = p->spec.node_name;
  };
  ASSERT_TRUE(RunSimulation(sc, o, &run->res).ok());
}

// Pods of `node` in the layout (by name).
std::set<std::string> PodsOf(const DefragRun& run, int node) {
  std::set<std::string> out;
  for (const auto& [pod, n] : run.node_at_end) {
    if (pod.rfind("w-" + std::to_string(node) + "-", 0) == 0) out.insert(pod);
  }
  return out;
}

TEST(Defragmentation, ScatteredGpusAreGatheredWithTheFewestMovesThatPlaceAgain) {
  DefragRun run;
  RunScenario("fewest", false, "{maxMovesPerPod: 8}", &run);
  const SimulationResult& r = run.res;
  ASSERT_EQ(run.node_at_end["big"], "node-0") << FormatSummary(r);
  // Exactly node-0's six pods moved, each once, and each runs again on another node.
  std::set<std::string> moved;
  for (const auto& [pod, n] : run.evicted) {
    EXPECT_EQ(n, 1) << pod;
    moved.insert(pod);
  }
  EXPECT_EQ(moved, PodsOf(run, 0));
  EXPECT_EQ(moved.size(), 6u);
  for (const auto& pod : moved) {
    EXPECT_NE(run.node_at_end[pod], "") << pod << " does not run again";
    EXPECT_NE(run.node_at_end[pod], "node-0") << pod;
  }
  EXPECT_TRUE(r.invariant_violations.empty()) << FormatSummary(r);
  EXPECT_EQ(r.preemption_victims, 0);  // moves, not preemption
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.moved_pods, 6);
  EXPECT_NE(FormatSummary(r).find("pods moved by defragmentation: 6\n"), std::string::npos)
      << FormatSummary(r);
}

TEST(Defragmentation, PodDisruptionBudgetKeepsItsPodsAndTheNextPlanMoves) {
  DefragRun run;
  RunScenario("pdb", true, "{maxMovesPerPod: 8}", &run);
  const SimulationResult& r = run.res;
  ASSERT_EQ(run.node_at_end["big"], "node-2") << FormatSummary(r);
  for (const auto& pod : PodsOf(run, 0)) EXPECT_EQ(run.evicted.count(pod), 0u) << pod;
  std::set<std::string> moved;
  for (const auto& [pod, n] : run.evicted) moved.insert(pod);
  EXPECT_EQ(moved, PodsOf(run, 2));
  for (const auto& pod : moved) EXPECT_NE(run.node_at_end[pod], "") << pod;
  EXPECT_TRUE(r.invariant_violations.empty());
}

// One free GPU on each of eight nodes, seven 1-GPU pods on each: any node is freed by moving
// its seven pods, one onto each other node; node-0's are protected by a budget.
TEST(Defragmentation, OneFreeGpuOnEachOfEightNodes) {
  DefragRun run;
  const std::vector<std::vector<int>> layout(8, std::vector<int>(7, 1));
  RunScenario("eight", true, "{maxMovesPerPod: 8}", &run, layout);
  const SimulationResult& r = run.res;
  const std::string node = run.node_at_end["big"];
  ASSERT_NE(node, "") << FormatSummary(r);
  EXPECT_NE(node, "node-0");  // its pods may not move
  const int freed = node.back() - '0';
  std::set<std::string> moved;
  for (const auto& [pod, n] : run.evicted) moved.insert(pod);
  EXPECT_EQ(moved, PodsOf(run, freed));  // the fewest: the seven pods of one node, no other
  // Every moved pod runs again, one on each of the seven other nodes, none on the freed one.
  std::set<std::string> to;
  for (const auto& pod : moved) {
    ASSERT_NE(run.node_at_end[pod], "") << pod;
    EXPECT_NE(run.node_at_end[pod], node) << pod;
    to.insert(run.node_at_end[pod]);
  }
  EXPECT_EQ(to.size(), 7u);
  EXPECT_EQ(r.pdb_violations, 0);
  EXPECT_TRUE(r.invariant_violations.empty()) << FormatSummary(r);
}

TEST(Defragmentation, LimitsAreTheReason) {
  // Six moves needed, four allowed: nothing moves and the reason says why.
  DefragRun run;
  RunScenario("limit", false, "{}", &run);
  EXPECT_TRUE(run.evicted.empty());
  EXPECT_EQ(run.node_at_end["big"], "");
  std::string reason;
  for (const auto& o : run.res.outcomes) {
    if (o.pod == "default/big") reason = o.reason;
  }
  EXPECT_NE(reason.find("defragmentation: the next plan needs 6 moves (maxMovesPerPod 4)"),
            std::string::npos)
      << reason;
}

TEST(Defragmentation, ArgsAreValidated) {
  auto cfg = config::DecodeConfiguration(Config("{maxMovesPerPod: 0}"), "test-config");
  ASSERT_TRUE(cfg.ok());
  SimulationOptions o;
  o.config = *cfg;
  o.registry = plugins::NewInTreeRegistry();
  Scenario sc;
  SimulationResult res;
  const auto s = RunSimulation(sc, o, &res);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("DefragmentationArgs: maxMovesPerPod: Invalid value: 0"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace phalanx::sim
