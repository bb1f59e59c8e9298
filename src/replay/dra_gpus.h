// `--gpu-model dra`: a trace scenario's GPUs as Dynamic Resource Allocation
// devices instead of the nvidia.com/gpu extended resource, so that the placement policies
// can be compared on DRA.
//
// What the conversion does (ToDraGpus):
//   - one DeviceClass `gpu` (selector device.driver == 'gpu.nvidia.com', the driver name of
//     NVIDIA's DRA driver, github.com/NVIDIA/k8s-dra-driver-gpu);
//   - per GPU node one ResourceSlice "<node>-gpus" (driver gpu.nvidia.com, nodeName and pool
//     the node, generation 1) with devices gpu-0 .. gpu-N-1, each with attributes
//     productName (the node's GPU model label) and index, and capacity memory (the model's
//     memory from gpu::ModelMemoryMiB, when known). The node's nvidia.com/gpu capacity and
//     allocatable go; the label alibabacloud.com/gpu-count: N stays as the GPU count the
//     GpuShare plugin and the fragmentation policies read (gpu::ParseNodeGpus);
//   - per namespace and GPU count a ResourceClaimTemplate "gpu-<N>" (one request "gpu",
//     exactly N devices of class gpu); every GPU pod gets spec.resourceClaims
//     [{name: gpu, resourceClaimTemplateName: gpu-<N>}], its first container
//     resources.claims [{name: gpu}], and loses its nvidia.com/gpu request and limit. The
//     simulator's resourceclaim controller creates the claims (sim/dra_claims.h).
//   - GPU shares (alibabacloud.com/gpu-milli < 1000, of one or more devices): the DRA allocator of
//   this project
//     has whole devices and partitionable devices (KEP-4815, shared counters) but not
//     consumable capacity (KEP-5075, `allowMultipleAllocations` devices with capacity
//     requests; alpha in Kubernetes 1.34), the upstream way to hand one GPU to several
//     claims by memory. A share therefore asks for one whole device, and its gpu-milli
//     annotation becomes 1000 so that GpuShare and the policies account what DRA
//     allocates. ToDraGpus counts these pods (DraGpuStats::shares_as_whole).
// The pods keep their alibabacloud.com/gpu-* annotations: GpuShare filters and the policies
// (fgd, bestfit, ...) score on them as with extended resources, while DynamicResources
// picks the devices. With whole devices only, a node's fragmentation depends on how many
// of its GPUs are free, not on which (gpu/frag.h), so the policies' scores are those of the
// DRA allocation.
#pragma once

#include <cstddef>

#include "api/status.h"
#include "sim/scenario.h"

namespace phalanx::replay {

inline constexpr const char* kDraGpuDriver = "gpu.nvidia.com";
inline constexpr const char* kDraGpuClass = "gpu";

struct DraGpuStats {
  size_t nodes = 0;            // nodes that got a ResourceSlice
  size_t devices = 0;          // devices published
  size_t pods = 0;             // pods that got a claim
  size_t shares_as_whole = 0;  // of them, GPU shares that ask for a whole device
};

// Rewrites *sc in place as described above. Errors: a node whose nvidia.com/gpu is not a
// whole number ("Node N: status.capacity[nvidia.com/gpu]: Invalid value ..."), a pod
// asking for more GPUs than kAllocationResultsMaxSize devices (32, the API's limit on a
// claim's results).
api::Status ToDraGpus(sim::Scenario* sc, DraGpuStats* stats = nullptr);

}  // namespace phalanx::replay
