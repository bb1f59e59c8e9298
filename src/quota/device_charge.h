// What a pod charges its queue beyond its container requests: the devices of its DRA
// ResourceClaims (resource.k8s.io/v1), and the GPU share of its GPU-share annotations.
// docs/queues.md "Devices: DRA claims" and "GPU shares" say what each upstream project does.
//
// DRA devices, per claim of the pod (its own, a shared claim it names, a PodGroup's claim,
// KEP-5729):
//   - before allocation, each request charges its count of devices of its class:
//     `exactly` with allocationMode ExactCount charges `count` (default 1; Kueue
//     pkg/dra/claims.go countDevicesPerClass, Volcano 1.15 pkg/scheduler/cache/cache.go
//     buildTaskDRAInfo, KAI pkg/common/resources/dra.go countGPUDevicesFromClaim);
//     allocationMode All charges 1 (KAI's "conservative estimate for queue resource
//     tracking"; Kueue refuses such a workload, Volcano leaves it uncounted), with a warning;
//     firstAvailable charges its first subrequest (the one the allocator tries first;
//     neither Kueue nor Volcano count it); adminAccess requests charge nothing (Kueue).
//   - once allocated (status.allocation), the devices allocated: one per result that is
//     not adminAccess, of the class of the (sub)request it satisfies.
//   A device of class C charges one `deviceclass/C` (Volcano 1.15's queue key,
//   docs/design/capacity-dra-support.md) and one of C's quota resource name: the
//   DeviceClassMapping that lists C (Kueue Configuration resources.deviceClassMappings),
//   else `nvidia.com/gpu` when C's name contains "gpu" in any case (KAI
//   IsGPUDeviceClass: such claims count as GPUs of the queue's `gpu` resource), else none:
//   the class is reported (DeviceCharge::unmapped) so that a queue limiting devices warns.
//   A claim the pod shares (named by resourceClaimName, or a PodGroup's) is charged once
//   per queue however many pods use it (Volcano 1.15 counts a shared claim once); a claim
//   generated for the pod from a template is the pod's own. A generated claim not created
//   yet is charged from its ResourceClaimTemplate (Kueue charges templates).
//
// GPU shares (gpu::ParseGpuAsk, the dialects of gpu/device.h): a pod whose GPUs are asked
// for by annotation rather than by the nvidia.com/gpu request charges count × milli
// milli-GPU (KAI gpu-fraction × gpu-fraction-num-devices, as KAI's GetGpusQuota charges a
// fraction of its queue's `gpu`; Alibaba open-gpu-share alibabacloud.com/gpu-milli ×
// gpu-count, whole devices for gpu-count alone). The quota keeps it under kGpuShareMilli
// next to whole nvidia.com/gpu devices: admission checks nvidia.com/gpu in milli-GPU with
// both (GpuMilli), status and metrics show them together (1500m = 1.5 GPUs), fair share
// rounds the shares up to whole devices (FoldGpuShares). A pod whose claims take devices
// that count as nvidia.com/gpu is charged those only (QueueManager): its share annotations
// describe the same GPUs.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/status.h"
#include "api/types.h"
#include "dra/model.h"
#include "quota/queue_tree.h"

namespace phalanx::dra {
class DefaultDRAManager;
}

namespace phalanx::quota {

// Volcano 1.15's per-DeviceClass count key in a Queue's capability / deserved / guarantee.
inline constexpr const char* kDeviceClassCountPrefix = "deviceclass/";
// The quota resource a GPU device class maps to by default, KAI's queue `gpu` resource.
inline constexpr const char* kGpuQuotaResource = "nvidia.com/gpu";

// One QueuesArgs.deviceClassMappings entry (Kueue apis/config/v1beta2 DeviceClassMapping):
// devices of any of `device_class_names` charge the quota resource `name`.
struct DeviceClassMapping {
  std::string name;
  std::vector<std::string> device_class_names;
  bool operator==(const DeviceClassMapping&) const = default;
};

// DeviceClass name -> quota resource name (see the file comment).
class DeviceClassMapper {
 public:
  DeviceClassMapper() = default;
  // `mappings` must be valid (ValidateDeviceClassMappings).
  explicit DeviceClassMapper(const std::vector<DeviceClassMapping>& mappings);
  // The quota resource one device of `device_class` charges besides deviceclass/<class>:
  // the mapping's name, else nvidia.com/gpu for a class whose name contains "gpu" (any
  // case), else "" (none).
  std::string MappedName(const std::string& device_class) const;
  const std::vector<DeviceClassMapping>& mappings() const { return mappings_; }

 private:
  std::vector<DeviceClassMapping> mappings_;
  std::map<std::string, std::string> by_class_;
};

// Kueue's validation of deviceClassMappings (pkg/config/validation.go
// validateDeviceClassMappings), field paths under `path`: at most 16 mappings, names
// non-empty and unique, 1..8 deviceClassNames each, and a class in one mapping only
// ("device class already mapped to resource R"). Returns the messages ("" entries never).
std::vector<std::string> ValidateDeviceClassMappings(const std::vector<DeviceClassMapping>& m,
                                                     const std::string& path);

// Devices one claim charges (see the file comment): quota resource -> devices. Classes
// that map to no quota resource are added to `unmapped`, requests with allocationMode All
// not yet allocated to `all_mode` (as "request <name> (class C)"). Either may be null.
ResourceList ClaimCharge(const dra::ClaimSpec& spec, const dra::AllocationResult* allocation,
                         const DeviceClassMapper& mapper, std::set<std::string>* unmapped,
                         std::vector<std::string>* all_mode);

// What a pod's claims charge.
struct DeviceCharge {
  ResourceList own;                            // claims generated for this pod alone
  std::map<std::string, ResourceList> shared;  // claim id -> charge, claims pods share
  // device class -> the first claim ("ns/name", or "template ns/t") taking devices of it
  // that maps to no quota resource.
  std::map<std::string, std::string> unmapped;
  std::vector<std::string> notes;  // "claim ns/c request r (class C): allocationMode All ..."
};

// The pod's claims resolved as DynamicResources::PodClaims resolves them (the pod's
// status.resourceClaimStatuses or its PodGroup's for generated claims, KEP-5729 for
// PodGroup claims), charged by ClaimCharge. A claim that does not exist yet is charged from
// its template; one that cannot be resolved at all charges nothing (DynamicResources keeps
// the pod pending with the reason). Shared claim ids: "ns/name" for a claim named by
// resourceClaimName, "PodGroup ns/pg resourceClaims[entry]" for a PodGroup's generated one.
DeviceCharge PodDeviceCharge(const dra::DefaultDRAManager& m, const api::Pod& pod,
                             const DeviceClassMapper& mapper);

// Devices the cluster's ResourceSlices offer, per quota resource a device charges
// (deviceclass/<C> for every class C whose selectors match it, and each distinct mapped
// name once per device): the DRA part of the capacity fair share divides.
ResourceList DeviceCapacity(const dra::DefaultDRAManager& m, const DeviceClassMapper& mapper);

// The milli-GPU of GPU shares in a ResourceList (internal: never a queue's own key).
inline constexpr const char* kGpuShareMilli = "phalanx.dev/gpu-share-milli";

// Milli-GPU the pod's GPU-share annotations charge (see the file comment); 0 for none, for
// an nvidia.com/gpu request (counted as the request), for an invalid ask (the pod is
// unschedulable), and for a share by device memory: KAI gpu-memory (its fraction depends
// on the node's GPUs), for which *note (may be null) says that it is not charged.
// aliyun.com/gpu-mem is a container request and counts as that resource.
int64_t GpuShareMilli(const api::Pod& pod, std::string* note);

// `l` with kGpuShareMilli added to nvidia.com/gpu rounded up to whole devices (and removed),
// for fair share, which divides whole resources.
ResourceList FoldGpuShares(const ResourceList& l);
// nvidia.com/gpu of `l` in milli-GPU: whole devices × 1000 + kGpuShareMilli.
int64_t GpuMilli(const ResourceList& l);
// "1.5 nvidia.com/gpu", "4 nvidia.com/gpu" for milli-GPU, for messages.
std::string FormatGpuMilli(int64_t milli);

}  // namespace phalanx::quota
