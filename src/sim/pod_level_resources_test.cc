// Pod-level resources (KEP-2837) end to end through the simulator, and the invariant
// checker's independent request oracle (sim/invariant_requests.h) on pods whose request is
// not the plain sum of their containers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/invariant_requests.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

constexpr char kNode[] = R"(apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
)";

SimulationResult Simulate(const std::string& name, const std::string& manifests) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / (name + ".yaml");
  std::ofstream(path) << kNode << manifests;
  Scenario sc;
  EXPECT_EQ(LoadManifestScenario(path.string(), &sc), absl::OkStatus());
  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  SimulationResult r;
  EXPECT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  return r;
}

// A pod with only pod-level resources asking for 64 cpus on a single 4-cpu node
// used to be bound; it is unschedulable with upstream's reason.
TEST(PodLevelResourcesSimTest, SixtyFourCpusDoNotFitFourCpuNode) {
  SimulationResult r = Simulate("pod-level-64", R"(---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  resources: {requests: {cpu: "64"}}
  containers: [{name: app, image: busybox}]
)");
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_FALSE(r.outcomes[0].scheduled_s.has_value());
  EXPECT_NE(r.outcomes[0].reason.find("Insufficient cpu"), std::string::npos)
      << r.outcomes[0].reason;
  EXPECT_TRUE(r.invariant_violations.empty());
}

// Two pods whose real requests (3 cpus by pod-level resources, 2 cpus by an init
// container) cannot share the 4-cpu node, though their app containers alone (100m, 500m)
// could. The scheduler must keep one pending; an accounting that ignored pod-level cpu or
// init containers would bind both, and the oracle would then report the node over-committed.
TEST(PodLevelResourcesSimTest, OracleAgreesOnPodLevelAndInitContainers) {
  SimulationResult r = Simulate("oracle", R"(---
apiVersion: v1
kind: Pod
metadata: {name: pod-level, namespace: default}
spec:
  resources: {requests: {cpu: "3"}}
  containers:
  - {name: app, image: busybox, resources: {requests: {cpu: 100m}}}
---
apiVersion: v1
kind: Pod
metadata: {name: with-init, namespace: default}
spec:
  initContainers:
  - {name: migrate, image: busybox, resources: {requests: {cpu: "2"}}}
  containers:
  - {name: app, image: busybox, resources: {requests: {cpu: 500m}}}
)");
  for (const auto& v : r.invariant_violations) ADD_FAILURE() << "invariant violation: " << v;
  ASSERT_EQ(r.outcomes.size(), 2u);
  int bound = 0;
  for (const auto& o : r.outcomes) {
    if (o.scheduled_s) {
      ++bound;
    } else {
      EXPECT_NE(o.reason.find("Insufficient cpu"), std::string::npos) << o.pod << ": " << o.reason;
    }
  }
  EXPECT_EQ(bound, 1);
}

api::Quantity Q(const char* s) { return *api::Quantity::Parse(s); }

// The oracle on its own: lifecycle peak, resize views, pod-level override, overhead.
TEST(InvariantOracleTest, RequestsByTheKubernetesRules) {
  api::Pod p;
  api::Container app;
  app.name = "app";
  app.resources.requests = {{"cpu", Q("1")}, {"memory", Q("1Gi")}};
  api::Container sidecar;
  sidecar.name = "proxy";
  sidecar.restart_policy = "Always";
  sidecar.resources.requests = {{"cpu", Q("500m")}};
  api::Container init;
  init.name = "init";
  init.resources.requests = {{"cpu", Q("4")}};
  p.spec.containers = {app};
  p.spec.init_containers = {sidecar, init};
  p.spec.overhead = {{"cpu", Q("100m")}};
  OracleAmounts req = OracleRequests(p);
  EXPECT_EQ(req["cpu"], 4600);  // init 4 next to the 500m sidecar, + overhead
  EXPECT_EQ(req["memory"], (int64_t{1} << 30) * 1000);
  EXPECT_EQ(req["pods"], 1000);
  p.spec.resources = api::ResourceRequirements{};
  p.spec.resources->requests = {{"cpu", Q("8")}};
  EXPECT_EQ(OracleRequests(p)["cpu"], 8100);  // pod-level cpu replaces the peak
  // Resize in progress: allocated 6 > spec 1; Infeasible keeps only the status views.
  api::Pod r;
  r.spec.containers = {app};
  api::ContainerStatus cs;
  cs.name = "app";
  cs.allocated_resources = api::ResourceList{{"cpu", Q("6")}};
  r.status.container_statuses = {cs};
  EXPECT_EQ(OracleRequests(r)["cpu"], 6000);
  r.spec.containers[0].resources.requests["cpu"] = Q("7");
  EXPECT_EQ(OracleRequests(r)["cpu"], 7000);
  r.status.conditions.push_back({"PodResizePending", "True", "Infeasible", ""});
  EXPECT_EQ(OracleRequests(r)["cpu"], 6000);
  EXPECT_EQ(FirstExceeded({{"cpu", 4001}}, {{"cpu", 4000}}), "cpu");
  EXPECT_EQ(FirstExceeded({{"example.com/x", 1}}, {}), "example.com/x");
  EXPECT_EQ(FirstExceeded({{"cpu", 4000}, {"pods", 1000}}, {{"cpu", 4000}, {"pods", 110000}}), "");
}

}  // namespace
}  // namespace phalanx::sim
