// The Alibaba openb trace (github.com/alibaba/clusterdata cluster-trace-gpu-v2023) as
// simulation nodes and pods.
//
// A node list CSV (sn,cpu_milli,memory_mib,gpu,model) and a pod list CSV (name,cpu_milli,
// memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,
// scheduled_time; the multigpu files have only the first five columns). GPUs become the
// whole-GPU extended resource nvidia.com/gpu (a shared GPU, gpu_milli < 1000, asks for
// one whole GPU unless OpenbOptions::gpu_sharing); the node's GPU model is the label
// `alibabacloud.com/gpu-card-model` and a pod's gpu_spec becomes required node affinity
// on it.
#pragma once

#include <string>
#include <vector>

#include "api/status.h"
#include "api/types.h"
#include "sim/scenario.h"

namespace phalanx::replay {

struct OpenbOptions {
  bool timed = true;    // arrivals and departures from the trace; false: all at t=0, no departures
  size_t max_pods = 0;  // 0 = all
  // GPU sharing (the GpuShare plugin does the per-device accounting): a pod asking for a
  // share of one GPU (gpu_milli < 1000) carries only the alibabacloud.com/gpu-* annotations
  // and no nvidia.com/gpu request, so NodeResourcesFit does not count it as a whole GPU;
  // whole-GPU pods keep nvidia.com/gpu: N (what a device plugin hands out). Off: a share
  // asks for one whole nvidia.com/gpu, as before.
  bool gpu_sharing = false;
};

// Appends the nodes of the node list CSV to *out (4 cpu ... as the trace says, 110 pods,
// Ready). Errors: "FILE: cannot read file", "FILE:LINE: column X: invalid value ...".
api::Status LoadOpenbNodes(const std::string& path, std::vector<api::Node>* out);
// Appends the pods of the pod list CSV to *out, sorted by arrival (stable). Errors as
// LoadOpenbNodes, plus "FILE:LINE: column deletion_time: deletion before creation".
api::Status LoadOpenbPods(const std::string& path, const OpenbOptions& opts,
                          std::vector<sim::TimedPod>* out);

// Node label with the GPU model, as the openb trace names it (gpu::kGpuModelLabel).
inline constexpr const char* kGpuModelLabel = "alibabacloud.com/gpu-card-model";

}  // namespace phalanx::replay
