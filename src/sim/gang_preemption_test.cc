// A gang as preemptor in the PodGroup cycle (src/plugins/defaultpreemption/podgroup_preemption.h),
// in `phalanx simulate`: the whole gang or no eviction at all; running victim gangs whole or
// not at all; never equal-priority victims; preemptionPolicy Never respected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

SimulationOptions Options(uint64_t seed) {
  SimulationOptions o;
  o.seed = seed;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  return o;
}

api::Status Load(const std::string& name, const std::string& yaml, Scenario* sc) {
  const auto path =
      std::filesystem::path(::testing::TempDir()) / ("gang_preemption_test_" + name + ".yaml");
  {
    std::ofstream out(path);
    out << yaml;
  }
  return LoadManifestScenario(path.string(), sc);
}

const std::string kPriorities =
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\n"
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    "---\n"
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: top}\nvalue: 5000\n"
    "---\n";

// `n` nodes of 8 GPUs, node-0 ... node-<n-1>.
std::string Nodes(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += "apiVersion: v1\nkind: Node\nmetadata: {name: node-" + std::to_string(i) +
         "}\nstatus: {capacity: {cpu: \"64\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: "
         "\"8\"}}\n---\n";
  }
  return s;
}

// A pod of `gpus` GPUs and priority class `prio`, arriving at `arrival` seconds; in the
// Coscheduling PodGroup `group` when not empty.
std::string Pod(const std::string& name, const std::string& prio, int gpus, int arrival,
                const std::string& group = "", const std::string& policy = "") {
  std::string s =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
      "\n  namespace: default\n  annotations: {simulation.phalanx.dev/arrival-seconds: \"" +
      std::to_string(arrival) + "\"}\n";
  if (!group.empty()) s += "  labels: {scheduling.x-k8s.io/pod-group: " + group + "}\n";
  s += "spec:\n  priorityClassName: " + prio + "\n";
  if (!policy.empty()) s += "  preemptionPolicy: " + policy + "\n";
  s += "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"" +
       std::to_string(gpus) + "\"}}}]\n---\n";
  return s;
}

std::string PodGroup(const std::string& name, int min_member) {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: default}\nspec: {minMember: " + std::to_string(min_member) + "}\n---\n";
}

// A gang of `size` pods of 8 GPUs.
std::string Gang(const std::string& name, const std::string& prio, int size, int arrival,
                 const std::string& policy = "") {
  std::string s = PodGroup(name, size);
  for (int i = 0; i < size; ++i) {
    s += Pod(name + "-" + std::to_string(i), prio, 8, arrival, name, policy);
  }
  return s;
}

// Single pods of one GPU, `prefix`-0 ...
std::string Singles(const std::string& prefix, const std::string& prio, int count, int gpus,
                    int arrival) {
  std::string s;
  for (int i = 0; i < count; ++i) s += Pod(prefix + "-" + std::to_string(i), prio, gpus, arrival);
  return s;
}

struct Counts {
  int bound = 0;      // bound at the end (neither deleted nor evicted)
  int preempted = 0;  // evicted by preemption
};

Counts CountPrefix(const SimulationResult& r, const std::string& prefix) {
  Counts c;
  for (const auto& o : r.outcomes) {
    if (!o.pod.starts_with("default/" + prefix + "-")) continue;
    if (!o.node.empty() && !o.deleted_s && !o.preempted) ++c.bound;
    if (o.preempted) ++c.preempted;
  }
  return c;
}

// Must-show: 6 nodes x 8 GPUs, full: a low-priority gang of 2 x 8 GPUs on two
// nodes and 32 one-GPU low-priority pods on the other four. A high-priority gang of 4 x 8
// GPUs arrives. It binds whole after evicting the fewest pods: the low gang (2 pods, whole)
// and two nodes of single pods (16), 18 rather than the 32 single pods of four nodes; the
// low gang is bound whole or not at all, never partially.
TEST(GangPreemptionSimTest, HighPriorityGangPreemptsFewestAndVictimGangsWhole) {
  Scenario sc;
  ASSERT_EQ(Load("fewest",
                 kPriorities + Nodes(6) + Gang("lowgang", "low", 2, 0) +
                     Singles("single", "low", 32, 1, 1) + Gang("train", "high", 4, 10),
                 &sc),
            absl::OkStatus());
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SimulationResult r;
    ASSERT_EQ(RunSimulation(sc, Options(seed), &r), absl::OkStatus());
    EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
    const Counts train = CountPrefix(r, "train");
    const Counts low = CountPrefix(r, "lowgang");
    const Counts single = CountPrefix(r, "single");
    EXPECT_EQ(train.bound, 4) << FormatSummary(r);
    EXPECT_EQ(train.preempted, 0);
    EXPECT_TRUE(low.bound == 0 || low.bound == 2) << "low gang partially bound: " << low.bound;
    EXPECT_TRUE(low.preempted == 0 || low.preempted == 2) << "low gang split: " << low.preempted;
    EXPECT_EQ(low.preempted, 2);
    EXPECT_EQ(single.preempted, 16);
    EXPECT_EQ(single.bound, 16);
    EXPECT_EQ(r.preemption_victims, 18);
    EXPECT_EQ(r.pdb_violations, 0);
    EXPECT_NE(FormatSummary(r).find(
                  "preemptions: 1  preemption victims: 18  PodDisruptionBudget violations: 0\n"),
              std::string::npos)
        << FormatSummary(r);
  }
}

// Even every eligible victim gone would not make room: two of four nodes are held by pods
// of a higher priority than the gang. Nothing is evicted, and the gang's reason says why.
TEST(GangPreemptionSimTest, NoEvictionWhenVictimsWouldNotMakeRoom) {
  Scenario sc;
  ASSERT_EQ(Load("noroom",
                 kPriorities + Nodes(4) + Singles("vip", "top", 2, 8, 0) +
                     Singles("single", "low", 16, 1, 1) + Gang("train", "high", 4, 10),
                 &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
  EXPECT_EQ(r.preemption_victims, 0);
  EXPECT_EQ(CountPrefix(r, "single").bound, 16);
  EXPECT_EQ(CountPrefix(r, "vip").bound, 2);
  EXPECT_EQ(CountPrefix(r, "train").bound, 0);
  bool reason_given = false;
  for (const auto& [reason, n] : r.pending_reasons) {
    if (reason.find("preemption would not make room for the whole gang") != std::string::npos) {
      reason_given = true;
      EXPECT_EQ(n, 4u);
    }
  }
  EXPECT_TRUE(reason_given) << FormatSummary(r);
}

// Pods of the gang's own priority are never victims.
TEST(GangPreemptionSimTest, EqualPriorityPodsAreNeverVictims) {
  Scenario sc;
  ASSERT_EQ(Load("equal",
                 kPriorities + Nodes(4) + Singles("peer", "high", 32, 1, 0) +
                     Gang("train", "high", 4, 10),
                 &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  EXPECT_EQ(r.preemption_victims, 0);
  EXPECT_EQ(CountPrefix(r, "peer").bound, 32);
  EXPECT_EQ(CountPrefix(r, "train").bound, 0);
}

// preemptionPolicy: Never on the gang's pods: no eviction, though victims would make room.
TEST(GangPreemptionSimTest, PreemptionPolicyNeverMeansNoEviction) {
  Scenario sc;
  ASSERT_EQ(Load("never",
                 kPriorities + Nodes(4) + Singles("single", "low", 32, 1, 0) +
                     Gang("train", "high", 4, 10, "Never"),
                 &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  EXPECT_EQ(r.preemption_victims, 0);
  EXPECT_EQ(CountPrefix(r, "single").bound, 32);
  EXPECT_EQ(CountPrefix(r, "train").bound, 0);
  bool reason_given = false;
  for (const auto& [reason, n] : r.pending_reasons) {
    reason_given = reason_given || reason.find("preemptionPolicy=Never") != std::string::npos;
  }
  EXPECT_TRUE(reason_given) << FormatSummary(r);
}

// The same cluster with the default policy: the gang preempts (the control for the test
// above), all 32 single pods of the four nodes.
TEST(GangPreemptionSimTest, DefaultPolicyPreempts) {
  Scenario sc;
  ASSERT_EQ(Load("default",
                 kPriorities + Nodes(4) + Singles("single", "low", 32, 1, 0) +
                     Gang("train", "high", 4, 10),
                 &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
  EXPECT_EQ(r.preemption_victims, 32);
  EXPECT_EQ(CountPrefix(r, "train").bound, 4);
}

}  // namespace
}  // namespace phalanx::sim
