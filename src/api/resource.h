// Flat resource vectors used on the scheduling hot path.
//
// Kubernetes names resources by string (v1.ResourceName). The four first-class ones
// (cpu, memory, ephemeral-storage, pods) are fields; every other name (extended
// resources such as nvidia.com/gpu, hugepages-*) is interned once into a small integer
// ResourceId so that a fit check is a loop over a few int64 pairs, never a string compare.
// Mirrors framework.Resource in upstream pkg/scheduler/framework/types.go.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::api {

inline constexpr std::string_view kResourceCPU = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";
inline constexpr std::string_view kResourceNvidiaGPU = "nvidia.com/gpu";

using ResourceId = int32_t;

// Process-wide intern table of scalar (non first-class) resource names. Thread-safe.
// Ids are dense, start at 0 and are never reused.
ResourceId InternScalarResource(std::string_view name);
// Name for an id returned by InternScalarResource. Precondition: id is valid.
const std::string& ScalarResourceName(ResourceId id);
// True for names Kubernetes treats as scalar resources (extended, hugepages-, attachable-volumes-).
bool IsScalarResourceName(std::string_view name);

// A resource vector. Units: MilliCPU in milli-cores; Memory and EphemeralStorage in
// bytes; AllowedPodNumber in pods; scalar resources in their integer Value() units.
struct Resource {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pod_number = 0;
  // Sorted by id, no duplicates, zero values allowed.
  std::vector<std::pair<ResourceId, int64_t>> scalar;

  int64_t Scalar(ResourceId id) const {
    for (const auto& [rid, v] : scalar) {
      if (rid == id) return v;
    }
    return 0;
  }
  void SetScalar(ResourceId id, int64_t value);
  void AddScalar(ResourceId id, int64_t value);
  void Add(const Resource& other);       // element-wise sum (allowed_pod_number too)
  void Subtract(const Resource& other);  // element-wise difference
  // Element-wise max, as upstream's SetMaxResource (used for init containers).
  void SetMax(const Resource& other);
  bool IsZero() const;
  // Value for a resource name ("cpu" in milli, "memory" in bytes, ...); 0 if absent.
  int64_t Get(std::string_view name) const;
  bool operator==(const Resource& o) const = default;
};

}  // namespace phalanx::api
