// `--gpu-model dra`: a trace scenario's GPUs as Dynamic Resource Allocation
// devices instead of the nvidia.com/gpu extended resource, so that the placement policies
// can be compared on DRA.
//
// What the conversion does (ToDraGpus):
//   - one DeviceClass `gpu` (selector device.driver == 'gpu.nvidia.com', the driver name of
//     NVIDIA's DRA driver, github.com/NVIDIA/k8s-dra-driver-gpu);
//   - per GPU node one ResourceSlice "<node>-gpus" (driver gpu.nvidia.com, nodeName and pool
//     the node, generation 1) with devices gpu-0 .. gpu-N-1, each with attributes
//     productName (the node's GPU model label), index and memoryMiB (the model's memory from
//     gpu::ModelMemoryMiB, when known), `allowMultipleAllocations: true` and one capacity,
//     compute: 1000 (milli-GPU: a whole GPU is 1000, a share takes its gpu-milli of it;
//     consumable capacity, KEP-5075). The node's nvidia.com/gpu capacity and allocatable go;
//     the label alibabacloud.com/gpu-count: N stays as the GPU count the GpuShare plugin
//     and the fragmentation policies read (gpu::ParseNodeGpus);
//   - per namespace and ask a ResourceClaimTemplate: "gpu-<N>" (one request "gpu", exactly
//     N devices of class gpu, no capacity request, so each device is taken whole: an
//     allocation without a request for a capacity consumes all of it) or, for shares
//     (alibabacloud.com/gpu-milli M < 1000 on each of N devices), "gpu-<N>-<M>m" with
//     capacity.requests {compute: M}. Every GPU pod gets spec.resourceClaims
//     [{name: gpu, resourceClaimTemplateName: ...}], its first container
//     resources.claims [{name: gpu}], and loses its nvidia.com/gpu request and limit. The
//     simulator's resourceclaim controller creates the claims (sim/dra_claims.h).
// Device memory is an attribute, not a capacity: a capacity a share does not request is
// consumed whole, and the memory a share needs depends on the node's model, which the
// claim template cannot know.
// The pods keep their alibabacloud.com/gpu-* annotations: GpuShare filters and the policies
// (fgd, bestfit, ...) score on them as with extended resources. GpuShare reserves before
// DynamicResources in the replay's profile (ExperimentOptions), and DynamicResources
// allocates the devices GpuShare chose (framework/device_choice.h), so that the policies'
// per-device view and the claims' allocations are the same devices and shares.
#pragma once

#include <cstddef>

#include "api/status.h"
#include "sim/scenario.h"

namespace phalanx::replay {

inline constexpr const char* kDraGpuClass = "gpu";

struct DraGpuStats {
  size_t nodes = 0;    // nodes that got a ResourceSlice
  size_t devices = 0;  // devices published
  size_t pods = 0;     // pods that got a claim
  size_t shares = 0;   // of them, GPU shares (a compute request below 1000)
};

// Rewrites *sc in place as described above. Errors: a node whose nvidia.com/gpu is not a
// whole number ("Node N: status.capacity[nvidia.com/gpu]: Invalid value ..."), a pod
// asking for more GPUs than kAllocationResultsMaxSize devices (32, the API's limit on a
// claim's results).
api::Status ToDraGpus(sim::Scenario* sc, DraGpuStats* stats = nullptr);

}  // namespace phalanx::replay
