// What a simulation replays: nodes present at the start and timed arrivals / departures
// of pods (and nodes), built from manifests or from a trace.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"

namespace phalanx::api {
struct Manifests;  // api/decode.h
}

namespace phalanx::sim {

// Annotations a manifest may carry to drive the simulation (seconds, decimal):
//   simulation.phalanx.dev/arrival-seconds: when the pod is created (default: its
//     creationTimestamp relative to the earliest one, else 0); on a Node, when the node
//     joins the cluster (default 0: present from the start)
//   simulation.phalanx.dev/duration-seconds: how long it runs once bound, then it is
//     deleted (default: runs until the end)
inline constexpr const char* kArrivalAnnotation = "simulation.phalanx.dev/arrival-seconds";
inline constexpr const char* kDurationAnnotation = "simulation.phalanx.dev/duration-seconds";

// A node group that the simulated cluster-autoscaler (sim/autoscaler.h) grows and shrinks,
// declared as a template Node the way cluster-autoscaler's kwok provider declares them
// (cloudprovider/kwok: template nodes with these annotations):
//   cluster-autoscaler.kwok.nodegroup/name: the group (a Node with it is a template, not a
//     node of the cluster)
//   cluster-autoscaler.kwok.nodegroup/min-count (default 0), max-count (default 200),
//     desired-count (default 0: nodes of the group present from the start)
//   simulation.phalanx.dev/provisioning-delay-seconds: from the scale-up to the nodes
//     joining (default 60)
//   simulation.phalanx.dev/provisioning-failure-rate: the probability, 0 to 1, that a
//     scale-up of the group fails (default 0; drawn from the run's seed)
inline constexpr const char* kNodeGroupAnnotation = "cluster-autoscaler.kwok.nodegroup/name";
inline constexpr const char* kNodeGroupMinAnnotation =
    "cluster-autoscaler.kwok.nodegroup/min-count";
inline constexpr const char* kNodeGroupMaxAnnotation =
    "cluster-autoscaler.kwok.nodegroup/max-count";
inline constexpr const char* kNodeGroupDesiredAnnotation =
    "cluster-autoscaler.kwok.nodegroup/desired-count";
inline constexpr const char* kProvisioningDelayAnnotation =
    "simulation.phalanx.dev/provisioning-delay-seconds";
inline constexpr const char* kProvisioningFailureRateAnnotation =
    "simulation.phalanx.dev/provisioning-failure-rate";

struct NodeGroup {
  std::string name;
  api::Node node_template;  // its nodes are copies named "<group>-<n>" (n from 1)
  int32_t min_size = 0;
  int32_t max_size = 200;
  int32_t desired = 0;  // created at the start as nodes of the scenario
  int64_t provisioning_delay_ns = 60 * api::kNanosPerSecond;
  double failure_rate = 0;
};

// Node `n` (from 1) of group g: the template named "<group>-<n>", its hostname label set,
// the template-only annotations removed except the group's name.
api::Node NodeGroupNode(const NodeGroup& g, int32_t n);

struct TimedPod {
  api::Pod pod;
  api::Timestamp arrival = 0;              // virtual ns
  std::optional<api::Timestamp> deletion;  // absolute virtual ns (trace deletion_time)
  std::optional<int64_t> run_duration_ns;  // deleted this long after it is bound
  // Owned by a controller that recreates it when the scheduler evicts it (preemption,
  // reclaim, starvation eviction) while it runs: the simulator creates the pod again under
  // its name (a new object, new UID; as the Kubeflow training operator and StatefulSets
  // recreate their pods by name) at once, and it runs its full run_duration_ns again once
  // bound. The work it lost counts in SimulationResult::restarts / lost_gpu_seconds. Set
  // by the Philly replay for its jobs and by manifest scenarios for pods with a controller
  // ownerReference of a kind other than DaemonSet (the recreated pod has no spec.nodeName).
  bool restart_on_eviction = false;
};

// A node that joins the cluster during the run (a later event of the simulation).
struct TimedNode {
  api::Node node;
  api::Timestamp arrival = 0;  // virtual ns, > 0
};

struct Scenario {
  std::string name;
  std::vector<api::Node> nodes;        // present from the start
  std::vector<TimedNode> later_nodes;  // join later, sorted by arrival, stable
  // Node groups of the simulated autoscaler (their desired nodes are in `nodes`); empty:
  // no autoscaler runs.
  std::vector<NodeGroup> node_groups;
  std::vector<api::Namespace> namespaces;
  std::vector<api::PriorityClass> priority_classes;
  // Objects of other kinds (gang PodGroups / Workloads, Jobs, JobSets, PyTorchJobs, ...),
  // created before any pod so that gangs and PodGrouper owners resolve.
  std::vector<api::Unstructured> objects;
  // policy/v1 PodDisruptionBudgets; the simulator writes their status (sim/disruption.h).
  std::vector<api::PodDisruptionBudget> pod_disruption_budgets;
  // spec.replicas of the manifests' controllers (Deployment, ReplicaSet, StatefulSet; a Job
  // has no scale) by uid, the uid their expanded pods' controller references carry: the
  // disruption controller's expected scale.
  std::map<std::string, int32_t> controller_replicas;
  std::vector<TimedPod> pods;  // sorted by arrival, stable
  // Kinds of the manifests that nothing in the simulation read (sim/kinds.h), by
  // "Kind (apiVersion)": e.g. {"ConfigMap (v1)": 2}.
  std::map<std::string, size_t> unused_kinds;
  // What the manifests ask for that affects placement and is not modelled, each naming the
  // file, the object and the field or kind (sim/workloads.h, sim/kinds.h): e.g. "2 DaemonSet
  // (apps/v1) not modelled: a DaemonSet creates a pod on every matching node; none are
  // simulated (kube-system/fluentd, ...)". `phalanx simulate` prints them and exits 2.
  std::vector<std::string> warnings;
  // What was done that a user may not expect (a suspended Job creates no pods).
  std::vector<std::string> notes;
};

// Builds a scenario from a manifest file or directory: controllers (Deployment, ReplicaSet,
// StatefulSet, Job) and the ecosystem's workloads (sim/workloads.h: JobSet,
// LeaderWorkerSet, Kubeflow jobs, TrainJob, Volcano Job) expanded into pods and the objects
// their controllers create; every other object classified as used or not (sim/kinds.h).
// Errors name the file, object and field (see api::DecodeManifests), or the simulation
// annotation: "PATH: Pod NS/NAME: metadata.annotations[...]: Invalid value: ...".
// (Trace scenarios: src/replay.)
api::Status LoadManifestScenario(const std::string& path, Scenario* out);
// The same for several files or directories read as one set (api::LoadManifests), e.g. a
// cluster and a project's published example; named after them joined by " + ".
api::Status LoadManifestScenario(const std::vector<std::string>& paths, Scenario* out);

// The same from manifests already decoded (e.g. api::DecodeManifests of a cluster
// snapshot's text); `source` names the scenario and prefixes the errors as `path` does.
api::Status ScenarioFromManifests(api::Manifests m, const std::string& source, Scenario* out);

}  // namespace phalanx::sim
