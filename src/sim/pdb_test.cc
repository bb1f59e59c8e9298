// PodDisruptionBudgets in `phalanx simulate`: the simulator's disruption controller
// (sim/disruption.h) and preemption choosing victims with them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/disruption.h"
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
  const auto path = std::filesystem::path(::testing::TempDir()) / ("pdb_test_" + name + ".yaml");
  {
    std::ofstream out(path);
    out << yaml;
  }
  return LoadManifestScenario(path.string(), sc);
}

const PodOutcome* FindOutcome(const SimulationResult& r, const std::string& pod) {
  for (const auto& o : r.outcomes) {
    if (o.pod == pod) return &o;
  }
  return nullptr;
}

// The Deployment's pod is named web-<hash>-0; the hash part of its outcome.
std::string WebSuffix(const SimulationResult& r) {
  for (const auto& o : r.outcomes) {
    if (o.pod.starts_with("default/web-")) return o.pod.substr(std::string("default/web-").size());
  }
  return "";
}

std::string NodeYaml(const std::string& name) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus: {capacity: {cpu: \"2\", memory: 4Gi, pods: \"10\"}}\n---\n";
}

// A one-replica controller of `kind` whose pod (app=<name>, priority "low") takes a whole
// node, pinned to `node`.
std::string WorkloadYaml(const std::string& kind, const std::string& name,
                         const std::string& node) {
  return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata: {name: " + name +
         ", namespace: default}\nspec:\n  replicas: 1\n  template:\n    metadata: {labels: {app: " +
         name +
         "}}\n    spec:\n      priorityClassName: low\n      nodeSelector: "
         "{kubernetes.io/hostname: " +
         node +
         "}\n      containers: [{name: c, image: x, resources: {requests: {cpu: \"2\"}}}]\n"
         "---\n";
}

const std::string kPriorities =
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\n"
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    "---\n";

// Arrives at 10 s, takes a whole node, may go anywhere.
const std::string kUrgent =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: urgent\n  namespace: default\n  annotations: "
    "{simulation.phalanx.dev/arrival-seconds: \"10\"}\nspec:\n  priorityClassName: high\n"
    "  containers: [{name: c, image: x, resources: {requests: {cpu: \"2\"}}}]\n---\n";

const std::string kDbBudget =
    "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, namespace: default}\n"
    "spec: {maxUnavailable: 0, selector: {matchLabels: {app: db}}}\n---\n";

std::string Labelled(std::string node_yaml, const std::string& name) {
  // kubernetes.io/hostname for the workloads' nodeSelector.
  const std::string at = "metadata: {name: " + name;
  node_yaml.replace(node_yaml.find(at), at.size(),
                    at + ", labels: {kubernetes.io/hostname: " + name + "}");
  return node_yaml;
}

// Must-show scenario: two equally good victim sets on two nodes, one of them
// protected by a PDB with maxUnavailable 0. The unprotected one is preempted, whatever the
// seed (without PDBs the choice between them follows the seeded candidate offset).
TEST(SimulationPDBTest, UnprotectedVictimIsChosen) {
  Scenario sc;
  ASSERT_EQ(Load("choice",
                 kPriorities + Labelled(NodeYaml("a"), "a") + Labelled(NodeYaml("b"), "b") +
                     WorkloadYaml("StatefulSet", "db", "a") +
                     WorkloadYaml("Deployment", "web", "b") + kDbBudget + kUrgent,
                 &sc),
            absl::OkStatus());
  ASSERT_EQ(sc.pod_disruption_budgets.size(), 1u);
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SimulationResult r;
    ASSERT_EQ(RunSimulation(sc, Options(seed), &r), absl::OkStatus());
    EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
    const PodOutcome* db = FindOutcome(r, "default/db-0");
    const PodOutcome* urgent = FindOutcome(r, "default/urgent");
    ASSERT_NE(db, nullptr);
    ASSERT_NE(urgent, nullptr);
    EXPECT_FALSE(db->preempted) << "the PDB-protected pod was preempted";
    EXPECT_TRUE(FindOutcome(r, "default/web-" + WebSuffix(r))->preempted);
    EXPECT_EQ(urgent->node, "b");
    EXPECT_EQ(r.preemption_victims, 1);
    EXPECT_EQ(r.pdb_violations, 0);
    EXPECT_NE(FormatSummary(r).find("preemption victims: 1  PodDisruptionBudget violations: 0\n"),
              std::string::npos)
        << FormatSummary(r);
  }
}

// With no alternative the budget is violated: preemption goes ahead (upstream's PDB
// handling is best effort), and the violation is counted and reported.
TEST(SimulationPDBTest, ViolationWithoutAlternativeIsCountedAndReported) {
  Scenario sc;
  ASSERT_EQ(Load("forced",
                 kPriorities + Labelled(NodeYaml("a"), "a") +
                     WorkloadYaml("StatefulSet", "db", "a") + kDbBudget + kUrgent,
                 &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
  const PodOutcome* db = FindOutcome(r, "default/db-0");
  ASSERT_NE(db, nullptr);
  EXPECT_TRUE(db->preempted);
  EXPECT_EQ(FindOutcome(r, "default/urgent")->node, "a");
  EXPECT_EQ(r.preemption_victims, 1);
  EXPECT_EQ(r.pdb_violations, 1);
  const std::string summary = FormatSummary(r);
  EXPECT_NE(summary.find("preemption victims: 1  PodDisruptionBudget violations: 1\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(ResultJson(r).find("\"pdb_violations\": 1"), std::string::npos) << ResultJson(r);
}

// The budget's status comes from the simulator: with maxUnavailable 1 the same eviction
// is allowed, so it is no violation.
TEST(SimulationPDBTest, BudgetWithRoomIsNoViolation) {
  Scenario sc;
  std::string budget = kDbBudget;
  budget.replace(budget.find("maxUnavailable: 0"), 17, "maxUnavailable: 1");
  ASSERT_EQ(Load("room",
                 kPriorities + Labelled(NodeYaml("a"), "a") +
                     WorkloadYaml("StatefulSet", "db", "a") + budget + kUrgent,
                 &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(1), &r), absl::OkStatus());
  EXPECT_EQ(r.preemption_victims, 1);
  EXPECT_EQ(r.pdb_violations, 0);
}

TEST(SimulationPDBTest, BadBudgetIsAnErrorNamingFileObjectAndField) {
  Scenario sc;
  const api::Status s =
      Load("bad",
           "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db}\n"
           "spec: {minAvailable: 150%}\n",
           &sc);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("pdb_test_bad.yaml: PodDisruptionBudget default/db: "
                             "spec.minAvailable: Invalid value: \"150%\""),
            std::string::npos)
      << s;
}

// ---- ComputePodDisruptionBudgetStatus (disruption.go trySync) ----

api::PodPtr MakePod(const std::string& name, const std::string& app, bool bound,
                    const std::string& owner_uid = "") {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "default";
  p->metadata.labels["app"] = app;
  if (bound) p->spec.node_name = "n";
  if (!owner_uid.empty()) {
    p->metadata.owner_references.push_back({"apps/v1", "StatefulSet", "s", owner_uid, true});
  }
  return p;
}

api::PodDisruptionBudget Budget(std::optional<api::IntOrString> min,
                                std::optional<api::IntOrString> max) {
  api::PodDisruptionBudget b;
  b.metadata.name = "b";
  b.metadata.namespace_ = "default";
  b.spec.selector = api::LabelSelector{{{"app", "db"}}, {}};
  b.spec.min_available = std::move(min);
  b.spec.max_unavailable = std::move(max);
  return b;
}

api::IntOrString Int(int32_t v) { return api::IntOrString{false, v, ""}; }
api::IntOrString Pct(const std::string& v) { return api::IntOrString{true, 0, v}; }

TEST(DisruptionStatusTest, AsTheDisruptionController) {
  const ControllerScaleFn scale = [](const api::OwnerReference& ref,
                                     const std::string&) -> std::optional<int32_t> {
    if (ref.uid == "sts") return 4;
    return std::nullopt;
  };
  // Three of four replicas exist, two are running; one pod of another app.
  const std::vector<api::PodPtr> pods = {
      MakePod("db-0", "db", true, "sts"), MakePod("db-1", "db", true, "sts"),
      MakePod("db-2", "db", false, "sts"), MakePod("web-0", "web", true, "dep")};
  // minAvailable int: expected = matching pods.
  auto st = ComputePodDisruptionBudgetStatus(Budget(Int(1), std::nullopt), pods, scale, 0);
  EXPECT_EQ(st.expected_pods, 3);
  EXPECT_EQ(st.desired_healthy, 1);
  EXPECT_EQ(st.current_healthy, 2);
  EXPECT_EQ(st.disruptions_allowed, 1);
  // maxUnavailable 25% of the controller's 4 replicas (rounded up): desired 3 > healthy 2.
  st = ComputePodDisruptionBudgetStatus(Budget(std::nullopt, Pct("25%")), pods, scale, 0);
  EXPECT_EQ(st.expected_pods, 4);
  EXPECT_EQ(st.desired_healthy, 3);
  EXPECT_EQ(st.disruptions_allowed, 0);
  // minAvailable 50% of 4: desired 2, healthy 2.
  st = ComputePodDisruptionBudgetStatus(Budget(Pct("50%"), std::nullopt), pods, scale, 0);
  EXPECT_EQ(st.desired_healthy, 2);
  EXPECT_EQ(st.disruptions_allowed, 0);
  // A not-ready pod and a recently disrupted one are not healthy; an old entry is dropped.
  auto not_ready = std::make_shared<api::Pod>(*pods[1]);
  not_ready->status.conditions.push_back({"Ready", "False", "", ""});
  auto b = Budget(Int(0), std::nullopt);
  b.status.disrupted_pods = {{"db-0", 100}, {"gone", 100}};
  st = ComputePodDisruptionBudgetStatus(b, {pods[0], not_ready}, scale,
                                        100 + kDisruptedPodTimeout - 1);
  EXPECT_EQ(st.current_healthy, 0);
  EXPECT_EQ(st.disrupted_pods.size(), 1u);
  // At exactly disruption time + DeletionTimeout, buildDisruptedPodMap still keeps the entry
  // (expectedDeletion.Before(now) is false) while countHealthyPods already counts the pod
  // (expectedDeletion.After(now) is false either).
  st = ComputePodDisruptionBudgetStatus(b, {pods[0], not_ready}, scale, 100 + kDisruptedPodTimeout);
  EXPECT_EQ(st.current_healthy, 1);
  EXPECT_EQ(st.disrupted_pods.size(), 1u);
  EXPECT_EQ(st.disruptions_allowed, 1);
  // One nanosecond later the entry is gone.
  st = ComputePodDisruptionBudgetStatus(b, {pods[0], not_ready}, scale,
                                        100 + kDisruptedPodTimeout + 1);
  EXPECT_EQ(st.current_healthy, 1);
  EXPECT_TRUE(st.disrupted_pods.empty());
  EXPECT_EQ(st.disruptions_allowed, 1);
  // A controller the simulator does not know: failSafe, nothing allowed.
  auto foreign = MakePod("db-9", "db", true, "job");
  b = Budget(std::nullopt, Int(1));
  b.status.disruptions_allowed = 5;
  st = ComputePodDisruptionBudgetStatus(b, {foreign}, scale, 0);
  EXPECT_EQ(st.disruptions_allowed, 0);
  // No pod expected: nothing allowed (updatePdbStatus' expectedCount <= 0).
  st = ComputePodDisruptionBudgetStatus(Budget(std::nullopt, Int(1)), {pods[3]}, scale, 0);
  EXPECT_EQ(st.expected_pods, 0);
  EXPECT_EQ(st.disruptions_allowed, 0);
  // A nil selector matches nothing; an empty one every pod of the namespace (policy/v1
  // getPodsForPdb), but none for a policy/v1beta1 object (whose conversion turns an empty
  // selector into one that matches nothing).
  auto all = Budget(Int(0), std::nullopt);
  all.spec.selector = api::LabelSelector{};
  EXPECT_EQ(ComputePodDisruptionBudgetStatus(all, pods, scale, 0).expected_pods, 4);
  all.api_version = "policy/v1beta1";
  EXPECT_EQ(ComputePodDisruptionBudgetStatus(all, pods, scale, 0).expected_pods, 0);
  all.api_version = "policy/v1";
  all.spec.selector.reset();
  EXPECT_EQ(ComputePodDisruptionBudgetStatus(all, pods, scale, 0).expected_pods, 0);
}

// getExpectedPodCount scales both percentages with GetScaledValueFromIntOrPercent(...,
// roundUp=true): maxUnavailable rounds up (fewer pods must stay healthy), minAvailable
// rounds up (more must).
TEST(DisruptionStatusTest, PercentagesRoundUp) {
  const ControllerScaleFn scale = [](const api::OwnerReference&,
                                     const std::string&) -> std::optional<int32_t> { return 4; };
  const std::vector<api::PodPtr> pods = {
      MakePod("db-0", "db", true, "sts"), MakePod("db-1", "db", true, "sts"),
      MakePod("db-2", "db", true, "sts"), MakePod("db-3", "db", true, "sts")};
  // maxUnavailable 10% of 4 = 0.4 -> 1: desired 3, one disruption allowed.
  auto st = ComputePodDisruptionBudgetStatus(Budget(std::nullopt, Pct("10%")), pods, scale, 0);
  EXPECT_EQ(st.expected_pods, 4);
  EXPECT_EQ(st.desired_healthy, 3);
  EXPECT_EQ(st.disruptions_allowed, 1);
  // maxUnavailable 60% of 4 = 2.4 -> 3: desired 1.
  st = ComputePodDisruptionBudgetStatus(Budget(std::nullopt, Pct("60%")), pods, scale, 0);
  EXPECT_EQ(st.desired_healthy, 1);
  EXPECT_EQ(st.disruptions_allowed, 3);
  // minAvailable 10% of 4 = 0.4 -> 1; 60% -> 3; 100% -> 4.
  st = ComputePodDisruptionBudgetStatus(Budget(Pct("10%"), std::nullopt), pods, scale, 0);
  EXPECT_EQ(st.desired_healthy, 1);
  EXPECT_EQ(st.disruptions_allowed, 3);
  st = ComputePodDisruptionBudgetStatus(Budget(Pct("60%"), std::nullopt), pods, scale, 0);
  EXPECT_EQ(st.desired_healthy, 3);
  st = ComputePodDisruptionBudgetStatus(Budget(Pct("100%"), std::nullopt), pods, scale, 0);
  EXPECT_EQ(st.desired_healthy, 4);
  EXPECT_EQ(st.disruptions_allowed, 0);
  // A leading zero is still a valid percent (regex [0-9]+%, strconv.Atoi).
  st = ComputePodDisruptionBudgetStatus(Budget(Pct("050%"), std::nullopt), pods, scale, 0);
  EXPECT_EQ(st.desired_healthy, 2);
}

}  // namespace
}  // namespace phalanx::sim
