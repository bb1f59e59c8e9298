// What a simulation replays: nodes present at the start and timed arrivals / departures
// of pods (and nodes), built from manifests or from a trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "api/unstructured.h"

namespace phalanx::sim {

// Annotations a manifest may carry to drive the simulation (seconds, decimal):
//   simulation.phalanx.dev/arrival-seconds: when the pod is created (default: its
//     creationTimestamp relative to the earliest one, else 0)
//   simulation.phalanx.dev/duration-seconds: how long it runs once bound, then it is
//     deleted (default: runs until the end)
inline constexpr const char* kArrivalAnnotation = "simulation.phalanx.dev/arrival-seconds";
inline constexpr const char* kDurationAnnotation = "simulation.phalanx.dev/duration-seconds";

struct TimedPod {
  api::Pod pod;
  api::Timestamp arrival = 0;                // virtual ns
  std::optional<api::Timestamp> deletion;    // absolute virtual ns (trace deletion_time)
  std::optional<int64_t> run_duration_ns;    // deleted this long after it is bound
};

struct Scenario {
  std::string name;
  std::vector<api::Node> nodes;
  std::vector<api::Namespace> namespaces;
  std::vector<api::PriorityClass> priority_classes;
  // Objects of other kinds (gang PodGroups / Workloads, Jobs, JobSets, PyTorchJobs, ...),
  // created before any pod so that gangs and PodGrouper owners resolve.
  std::vector<api::Unstructured> objects;
  std::vector<TimedPod> pods;  // sorted by arrival, stable
};

// Builds a scenario from a manifest file or directory (controllers expanded into pods).
// Errors name the file, object and field (see api::DecodeManifests).
[[nodiscard]] bool LoadManifestScenario(const std::string& path, Scenario* out, std::string* error);

// Alibaba openb trace (github.com/alibaba/clusterdata cluster-trace-gpu-v2023): a node
// list CSV (sn,cpu_milli,memory_mib,gpu,model) and a pod list CSV (name,cpu_milli,
// memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,
// scheduled_time; the multigpu files have only the first five columns). GPUs become the
// whole-GPU extended resource nvidia.com/gpu (a shared GPU, gpu_milli < 1000, asks for
// one whole GPU for now); the node's GPU model is the label
// `alibabacloud.com/gpu-card-model` and a pod's gpu_spec becomes required node affinity
// on it. Errors: "FILE:LINE: column X: ...".
struct OpenbOptions {
  bool timed = true;  // arrivals and departures from the trace; false: all at t=0, no departures
  size_t max_pods = 0;  // 0 = all
  // GPU sharing (the GpuShare plugin does the per-device accounting): a pod asking for a
  // share of one GPU (gpu_milli < 1000) carries only the alibabacloud.com/gpu-* annotations
  // and no nvidia.com/gpu request, so NodeResourcesFit does not count it as a whole GPU;
  // whole-GPU pods keep nvidia.com/gpu: N (what a device plugin hands out). Off: a share
  // asks for one whole nvidia.com/gpu, as before.
  bool gpu_sharing = false;
};
[[nodiscard]] bool LoadOpenbNodes(const std::string& path, std::vector<api::Node>* out,
                                  std::string* error);
[[nodiscard]] bool LoadOpenbPods(const std::string& path, const OpenbOptions& opts,
                                 std::vector<TimedPod>* out, std::string* error);

inline constexpr const char* kGpuModelLabel = "alibabacloud.com/gpu-card-model";

// Fields of one CSV line split at every ',' (no quoting: the openb and Philly traces have
// none); a trailing '\r' is dropped. Shared by the openb and Philly loaders.
std::vector<std::string> SplitCsv(const std::string& line);

}  // namespace phalanx::sim
