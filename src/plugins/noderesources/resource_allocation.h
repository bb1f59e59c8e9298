// Resource-allocation scoring shared by NodeResourcesFit and
// NodeResourcesBalancedAllocation (upstream pkg/scheduler/framework/plugins/noderesources/
// resource_allocation.go, least_allocated.go, most_allocated.go,
// requested_to_capacity_ratio.go, and plugins/helper/shape_score.go).
//
// Resource names are resolved once at construction into a flat list (first-class field or
// interned scalar id), so scoring a node is a loop over int64 pairs with no string work
// and no allocation for up to kInlineResources resources.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "api/resource.h"
#include "framework/interface.h"
#include "framework/types.h"

namespace phalanx::plugins::noderesources {

// config.ResourceSpec: a resource name and its weight in the score.
struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
  bool operator==(const ResourceSpec&) const = default;
};

// config.UtilizationShapePoint: utilization in [0, 100], score in [0, 10].
struct UtilizationShapePoint {
  int64_t utilization = 0;
  int64_t score = 0;
  bool operator==(const UtilizationShapePoint&) const = default;
};

// A resource resolved for the hot path.
struct ResolvedResource {
  enum class Kind : uint8_t { kCPU, kMemory, kEphemeralStorage, kScalar, kOther };
  Kind kind = Kind::kOther;
  api::ResourceId scalar_id = -1;  // kScalar only
  int64_t weight = 1;
};

// Small fixed-capacity scratch array that only touches the heap beyond
// kInlineResources entries.
inline constexpr size_t kInlineResources = 16;

// How many nodes ahead ResourceAllocation::ScoreNodes prefetches a NodeInfo's hot lines
// (NodeInfo::Prefetch): a range's nodes were filtered on either core, so about half of
// them come from the other core's cache.
inline constexpr size_t kScorePrefetchDistance = 4;

class ScratchBuffer {
 public:
  explicit ScratchBuffer(size_t n) : n_(n) {
    if (n > kInlineResources) heap_.resize(n);
  }
  int64_t* data() { return n_ > kInlineResources ? heap_.data() : inline_.data(); }
  int64_t& operator[](size_t i) { return data()[i]; }

 private:
  size_t n_;
  std::array<int64_t, kInlineResources> inline_;  // not zeroed: callers fill before reading
  std::vector<int64_t> heap_;
};

// upstream resourceAllocationScorer minus the scorer function.
class ResourceAllocation {
 public:
  // `use_requested`: true uses NodeInfo::requested()/PodInfo::requests for cpu and memory
  // (BalancedAllocation), false the non-zero variants (NodeResourcesFit scoring).
  ResourceAllocation(const std::vector<ResourceSpec>& resources, bool use_requested);

  size_t size() const { return resolved_.size(); }
  const std::vector<ResolvedResource>& resolved() const { return resolved_; }

  // calculatePodResourceRequestList: the pod's request per resource, in order.
  // Units: cpu millicores, memory/ephemeral-storage bytes, scalars their Value().
  void PodRequests(const framework::PodInfo& pod, int64_t* out) const;
  // calculateResourceAllocatableRequest for every resource: allocatable and
  // (requested on node + pod request); (0, 0) for resources the node does not have and for
  // scalar resources the pod does not request.
  void NodeVectors(const framework::NodeInfo& node, const int64_t* pod_requests, int64_t* requested,
                   int64_t* allocatable) const;
  // scores[i] = score(requested, allocatable) with NodeVectors of nodes[i], for i in
  // [0, count) (the ScoreRange loop of NodeResourcesFit and BalancedAllocation), loading
  // each NodeInfo kScorePrefetchDistance nodes ahead.
  template <typename ScoreFn>
  void ScoreNodes(const framework::NodeInfo* const* nodes, size_t count,
                  const int64_t* pod_requests, ScoreFn&& score, int64_t* scores) const {
    ScratchBuffer requested(size()), allocatable(size());
    for (size_t i = 0; i < count; ++i) {
      if (i + kScorePrefetchDistance < count) nodes[i + kScorePrefetchDistance]->Prefetch();
      NodeVectors(*nodes[i], pod_requests, requested.data(), allocatable.data());
      scores[i] = score(requested.data(), allocatable.data());
    }
  }

 private:
  std::vector<ResolvedResource> resolved_;
  bool use_requested_;
};

// ((capacity - requested) * 100) / capacity; 0 when capacity is 0 or requested > capacity.
int64_t LeastRequestedScore(int64_t requested, int64_t capacity);
// (min(requested, capacity) * 100) / capacity; 0 when capacity is 0.
int64_t MostRequestedScore(int64_t requested, int64_t capacity);
// Weighted integer mean of the per-resource scores over resources with allocatable != 0.
int64_t LeastAllocatedScore(const std::vector<ResolvedResource>& res, const int64_t* requested,
                            const int64_t* allocatable);
int64_t MostAllocatedScore(const std::vector<ResolvedResource>& res, const int64_t* requested,
                           const int64_t* allocatable);

// helper.BuildBrokenLinearFunction over points already scaled to 0..100 scores.
class BrokenLinearFunction {
 public:
  explicit BrokenLinearFunction(std::vector<UtilizationShapePoint> points)
      : points_(std::move(points)) {}
  int64_t operator()(int64_t p) const;

 private:
  std::vector<UtilizationShapePoint> points_;
};

// requested * max / capacity exact in 128-bit arithmetic, requested clamped to
// [0, capacity] (upstream scaledUtilization).
int64_t ScaledUtilization(int64_t requested, int64_t capacity, int64_t max);

// RequestedToCapacityRatio: per resource f(utilization) (f(100) when capacity is 0 or
// exceeded); resources scoring 0 are left out of the weighted mean, which is rounded
// half away from zero.
int64_t RequestedToCapacityRatioScore(const BrokenLinearFunction& f,
                                      const std::vector<ResolvedResource>& res,
                                      const int64_t* requested, const int64_t* allocatable);

// BalancedAllocation: (1 - std) * 100 truncated, std over the requested/allocatable
// fractions (capped at 1) of resources with allocatable != 0; |f0 - f1| / 2 for two.
int64_t BalancedResourceScore(size_t n, const int64_t* requested, const int64_t* allocatable);

}  // namespace phalanx::plugins::noderesources
