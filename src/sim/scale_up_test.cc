// Atomic scale-up for a gang (the ProvisioningRequest plugin, docs/scale-up.md) against the
// simulated cluster-autoscaler (sim/autoscaler.h): a gang that does not fit gets one
// ProvisioningRequest for all its members, the node group grows by exactly the nodes it
// needs and the gang starts on them whole; a failing provisioner leaves no member bound
// and no node of the group behind, and the gang's reason says what failed. The checks read
// the store (requests, nodes, pods) through the run's hooks, not the plugin's state.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

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

std::string Config(int max_requests_per_gang) {
  return "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
         "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
         "    multiPoint: {enabled: [{name: ProvisioningRequest}]}\n  pluginConfig:\n"
         "  - name: ProvisioningRequest\n    args: {maxRequestsPerGang: " +
         std::to_string(max_requests_per_gang) + "}\n";
}

// Two 8-GPU nodes, each full with a pod that never ends; a node group "big" of 8-GPU nodes
// (max 6) with `failure_rate`; a Coscheduling gang of 4 x 8 GPUs arriving at 30 s.
std::string ScenarioYaml(const std::string& failure_rate) {
  std::string s;
  for (int i = 1; i <= 2; ++i) {
    const std::string n = std::to_string(i);
    s += "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-" + n +
         "}\nstatus: {capacity: {cpu: \"64\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: "
         "\"8\"}}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: busy-" +
         n +
         ", namespace: default}\nspec:\n  containers: [{name: c, image: x, resources: "
         "{requests: {cpu: \"1\", nvidia.com/gpu: \"8\"}}}]\n---\n";
  }
  s += "apiVersion: v1\nkind: Node\nmetadata:\n  name: big-template\n  labels: {pool: big}\n"
       "  annotations:\n    cluster-autoscaler.kwok.nodegroup/name: big\n"
       "    cluster-autoscaler.kwok.nodegroup/max-count: \"6\"\n"
       "    simulation.phalanx.dev/provisioning-delay-seconds: \"90\"\n"
       "    simulation.phalanx.dev/provisioning-failure-rate: \"" +
       failure_rate +
       "\"\n"
       "status: {capacity: {cpu: \"96\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"8\"}}\n"
       "---\n";
  s += "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: train, "
       "namespace: default}\nspec: {minMember: 4}\n---\n";
  for (int i = 0; i < 4; ++i) {
    s += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train-" + std::to_string(i) +
         "\n  namespace: default\n  labels: {scheduling.x-k8s.io/pod-group: train}\n"
         "  annotations: {simulation.phalanx.dev/arrival-seconds: \"30\"}\nspec:\n"
         "  containers: [{name: c, image: x, resources: {requests: {cpu: \"8\", "
         "nvidia.com/gpu: \"8\"}}}]\n---\n";
  }
  return s;
}

// What the hooks saw in the store.
struct Observed {
  std::set<std::string> requests;               // ProvisioningRequests ever present
  std::map<std::string, int64_t> request_pods;  // their podSets' counts, summed
  size_t max_nodes = 0;
  std::set<std::string> big_nodes;  // nodes of the group ever present
  std::vector<std::string> big_at_end;
  int members_bound_at_end = 0;
};

struct ScaleUpRun {
  SimulationResult res;
  Observed seen;
};

void RunScenario(const std::string& name, const std::string& failure_rate,
                 int max_requests_per_gang, std::optional<double> stop_at, ScaleUpRun* run) {
  const auto path =
      std::filesystem::path(::testing::TempDir()) / ("scale_up_test_" + name + ".yaml");
  {
    std::ofstream out(path);
    out << ScenarioYaml(failure_rate);
  }
  Scenario sc;
  ASSERT_TRUE(LoadManifestScenario(path.string(), &sc).ok());
  ASSERT_EQ(sc.node_groups.size(), 1u);
  ASSERT_EQ(sc.nodes.size(), 2u);  // the template is not a node
  SimulationOptions o;
  o.seed = 7;
  auto cfg = config::DecodeConfiguration(Config(max_requests_per_gang), "test-config");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  o.config = *cfg;
  o.registry = plugins::NewInTreeRegistry();
  o.stop_at_s = stop_at;
  Observed& seen = run->seen;
  o.hooks.on_step_store = [&seen](double, store::Store& st) {
    seen.max_nodes = std::max(seen.max_nodes, st.ListNodes().size());
    for (const auto& n : st.ListNodes()) {
      if (n->metadata.name.rfind("big-", 0) == 0) seen.big_nodes.insert(n->metadata.name);
    }
    for (const auto& obj : st.ListObjects()) {
      if (obj->kind != "ProvisioningRequest") continue;
      const std::string key = obj->metadata.namespace_ + "/" + obj->metadata.name;
      seen.requests.insert(key);
      int64_t pods = 0;
      for (const auto& set : (*obj->object)["spec"]["podSets"]) pods += set["count"].as<int64_t>();
      seen.request_pods[key] = pods;
    }
  };
  o.hooks.on_end = [&seen](scheduler::Scheduler&, store::Store& st) {
    for (const auto& n : st.ListNodes()) {
      if (n->metadata.name.rfind("big-", 0) == 0) seen.big_at_end.push_back(n->metadata.name);
    }
    for (const auto& p : st.ListPods()) {
      if (p->metadata.name.rfind("train-", 0) == 0 && !p->spec.node_name.empty()) {
        ++seen.members_bound_at_end;
      }
    }
  };
  ASSERT_TRUE(RunSimulation(sc, o, &run->res).ok());
}

TEST(ScaleUp, OneRequestForTheWholeGangAndItStartsOnTheNewNodes) {
  ScaleUpRun run;
  RunScenario("atomic", "0", 3, std::nullopt, &run);
  const SimulationResult& r = run.res;
  ASSERT_EQ(run.seen.requests.size(), 1u) << FormatSummary(r);
  EXPECT_EQ(run.seen.request_pods.begin()->second, 4);
  // Four nodes added, no other: 2 + 4 at most at any step.
  EXPECT_EQ(run.seen.big_nodes.size(), 4u) << FormatSummary(r);
  EXPECT_EQ(run.seen.max_nodes, 6u);
  // Every member bound, each on its own new node, all at the same time.
  std::set<std::string> nodes;
  std::optional<double> at;
  for (const auto& out : r.outcomes) {
    if (out.pod.rfind("default/train-", 0) != 0) continue;
    ASSERT_TRUE(out.scheduled_s) << out.pod << ": " << out.reason << "\n" << FormatSummary(r);
    EXPECT_TRUE(run.seen.big_nodes.count(out.node)) << out.pod << " on " << out.node;
    nodes.insert(out.node);
    if (!at) at = out.scheduled_s;
    EXPECT_EQ(*at, *out.scheduled_s) << out.pod;
  }
  EXPECT_EQ(nodes.size(), 4u);
  // After the 90 s provisioning delay past the request (created at the gang's first cycle).
  EXPECT_GE(*at, 30 + 90);
  ASSERT_TRUE(r.scale_up);
  EXPECT_EQ(r.scale_up->nodes_added, 4);
  ASSERT_EQ(r.scale_up->requests.size(), 1u);
  EXPECT_EQ(r.scale_up->requests[0].nodes, 4);
  EXPECT_EQ(r.scale_up->requests[0].node_group, "big");
  ASSERT_TRUE(r.scale_up->requests[0].started_s);
  EXPECT_EQ(*r.scale_up->requests[0].started_s, *at);
  // The request and its templates are gone once the gang runs.
  EXPECT_NE(FormatSummary(r).find("scale-up: 4 nodes added"), std::string::npos)
      << FormatSummary(r);
  EXPECT_EQ(r.invariant_violations.size(), 0u);
}

TEST(ScaleUp, FailingProvisionerLeavesNoPartialGangAndSaysWhy) {
  ScaleUpRun run;
  // One request; stopped after the first failed scale-up was rolled back (requested at
  // 30-40 s, maxNodeProvisionTime 15 min) and before the group's 5 min backoff ends.
  RunScenario("failing", "1", 1, 1100.0, &run);
  const SimulationResult& r = run.res;
  EXPECT_EQ(run.seen.requests.size(), 1u) << FormatSummary(r);
  EXPECT_EQ(run.seen.members_bound_at_end, 0) << FormatSummary(r);
  // Half the nodes joined, were never used and were removed with the rollback.
  EXPECT_EQ(run.seen.big_nodes.size(), 2u) << FormatSummary(r);
  EXPECT_TRUE(run.seen.big_at_end.empty()) << FormatSummary(r);
  for (const auto& out : r.outcomes) {
    if (out.pod.rfind("default/train-", 0) != 0) continue;
    EXPECT_FALSE(out.scheduled_s) << out.pod;
    EXPECT_NE(out.reason.find("scale-up of node group big failed: 2 of 4 nodes did not join"),
              std::string::npos)
        << out.reason;
  }
  ASSERT_TRUE(r.scale_up);
  EXPECT_EQ(r.scale_up->nodes_added, 2);
  EXPECT_EQ(r.scale_up->nodes_removed, 2);
  ASSERT_EQ(r.scale_up->requests.size(), 1u);
  EXPECT_EQ(r.scale_up->requests[0].failed_scale_ups, 1);
  EXPECT_EQ(r.invariant_violations.size(), 0u);
}

TEST(ScaleUp, RequestBeyondTheGroupsMaxIsNotProvisioned) {
  // max-count 6 with 4 needed fits; a second group-less variant: the gang needs 4 nodes
  // and the group may add 3.
  const auto path = std::filesystem::path(::testing::TempDir()) / "scale_up_test_max.yaml";
  {
    std::string s = ScenarioYaml("0");
    const std::string from = "max-count: \"6\"";
    s.replace(s.find(from), from.size(), "max-count: \"3\"");
    std::ofstream out(path);
    out << s;
  }
  Scenario sc;
  ASSERT_TRUE(LoadManifestScenario(path.string(), &sc).ok());
  SimulationOptions o;
  auto cfg = config::DecodeConfiguration(Config(1), "test-config");
  ASSERT_TRUE(cfg.ok());
  o.config = *cfg;
  o.registry = plugins::NewInTreeRegistry();
  o.stop_at_s = 600;
  SimulationResult r;
  ASSERT_TRUE(RunSimulation(sc, o, &r).ok());
  ASSERT_TRUE(r.scale_up);
  EXPECT_EQ(r.scale_up->nodes_added, 0) << FormatSummary(r);
  for (const auto& out : r.outcomes) {
    if (out.pod.rfind("default/train-", 0) != 0) continue;
    EXPECT_FALSE(out.scheduled_s);
    EXPECT_NE(out.reason.find("Provisioned=False (CapacityIsNotFound)"), std::string::npos)
        << out.reason;
    EXPECT_NE(out.reason.find("big: needs 4 nodes, 3 left to max-count 3"), std::string::npos)
        << out.reason;
  }
}

TEST(ScaleUp, BadNodeGroupAnnotationNamesFileNodeAndField) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "scale_up_test_bad.yaml";
  {
    std::string s = ScenarioYaml("1.5");
    std::ofstream out(path);
    out << s;
  }
  Scenario sc;
  const api::Status st = LoadManifestScenario(path.string(), &sc);
  ASSERT_FALSE(st.ok());
  const std::string msg(st.message());
  EXPECT_NE(msg.find("scale_up_test_bad.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Node big-template"), std::string::npos) << msg;
  EXPECT_NE(msg.find("metadata.annotations[simulation.phalanx.dev/provisioning-failure-rate]"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace phalanx::sim
