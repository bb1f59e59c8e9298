// DeviceChoice: which devices of one DRA driver a pod gets on a node, passed through the
// CycleState between two plugins that each account the same devices: GpuShare (per-device
// milli-GPU bookkeeping, the GPU score policies' view) and DynamicResources (the
// ResourceClaim allocation). Upstream has no such hand-over (its allocator takes the first
// devices that fit, allocator_incubating.go); Phalanx adds it so that the two views of one
// GPU never name different devices. Whichever of the two plugins reserves first decides:
//   - GpuShare reserving first writes kPreferredDevicesKey; DynamicResources' Reserve then
//     allocates with those devices tried first (dra::AllocatorInput::preferred);
//   - DynamicResources reserving first writes kAllocatedDevicesKey; GpuShare's Reserve then
//     takes the devices the allocation names instead of choosing.
// The replay's `--gpu-model dra` profile reserves GpuShare first, so that the score
// policy's device choice (FGD, BestFit, ...) is the one allocated.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/cycle_state.h"

namespace phalanx::framework {

struct DeviceChoice final : StateData {
  std::string node;  // the node the choice is for
  // DRA driver ("gpu.nvidia.com") -> device names in its pools on `node`, in order of
  // preference ("gpu-2"). GPU index i is the device "gpu-<i>" (the names NVIDIA's DRA driver
  // publishes, github.com/NVIDIA/k8s-dra-driver-gpu).
  std::map<std::string, std::vector<std::string>> devices;

  std::unique_ptr<StateData> Clone() const override {
    return std::make_unique<DeviceChoice>(*this);
  }
};

inline constexpr std::string_view kPreferredDevicesKey = "PreferredDevices";
inline constexpr std::string_view kAllocatedDevicesKey = "AllocatedDevices";

}  // namespace phalanx::framework
