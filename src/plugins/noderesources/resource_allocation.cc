#include "plugins/noderesources/resource_allocation.h"

#include <cmath>

#include "plugins/helper/validation.h"

namespace phalanx::plugins::noderesources {

ResourceAllocation::ResourceAllocation(const std::vector<ResourceSpec>& resources,
                                       bool use_requested)
    : use_requested_(use_requested) {
  resolved_.reserve(resources.size());
  for (const auto& r : resources) {
    ResolvedResource rr;
    rr.weight = r.weight;
    if (r.name == api::kResourceCPU) {
      rr.kind = ResolvedResource::Kind::kCPU;
    } else if (r.name == api::kResourceMemory) {
      rr.kind = ResolvedResource::Kind::kMemory;
    } else if (r.name == api::kResourceEphemeralStorage) {
      rr.kind = ResolvedResource::Kind::kEphemeralStorage;
    } else if (helper::IsScalarResourceName(r.name)) {
      rr.kind = ResolvedResource::Kind::kScalar;
      rr.scalar_id = api::InternScalarResource(r.name);
    } else {
      // e.g. "pods", "storage": never in upstream's scalar resources, so scored (0, 0).
      rr.kind = ResolvedResource::Kind::kOther;
    }
    resolved_.push_back(rr);
  }
}

void ResourceAllocation::PodRequests(const framework::PodInfo& pod, int64_t* out) const {
  const api::Resource& req = use_requested_ ? pod.requests : pod.scoring_non_zero_requests;
  for (size_t i = 0; i < resolved_.size(); ++i) {
    const auto& r = resolved_[i];
    switch (r.kind) {
      case ResolvedResource::Kind::kCPU:
        out[i] = req.milli_cpu;
        break;
      case ResolvedResource::Kind::kMemory:
        out[i] = req.memory;
        break;
      case ResolvedResource::Kind::kEphemeralStorage:
        out[i] = pod.requests.ephemeral_storage;
        break;
      case ResolvedResource::Kind::kScalar:
        out[i] = pod.requests.Scalar(r.scalar_id);
        break;
      case ResolvedResource::Kind::kOther:
        out[i] = 0;
        break;
    }
  }
}

void ResourceAllocation::NodeVectors(const framework::NodeInfo& node, const int64_t* pod_requests,
                                     int64_t* requested, int64_t* allocatable) const {
  const api::Resource& alloc = node.allocatable();
  const api::Resource& used = use_requested_ ? node.requested() : node.non_zero_requested();
  for (size_t i = 0; i < resolved_.size(); ++i) {
    const auto& r = resolved_[i];
    int64_t a = 0, q = 0;
    switch (r.kind) {
      case ResolvedResource::Kind::kCPU:
        a = alloc.milli_cpu;
        q = used.milli_cpu + pod_requests[i];
        break;
      case ResolvedResource::Kind::kMemory:
        a = alloc.memory;
        q = used.memory + pod_requests[i];
        break;
      case ResolvedResource::Kind::kEphemeralStorage:
        a = alloc.ephemeral_storage;
        q = node.requested().ephemeral_storage + pod_requests[i];
        break;
      case ResolvedResource::Kind::kScalar:
        // An extended resource the pod does not request is left out of the score.
        if (pod_requests[i] != 0) {
          a = alloc.Scalar(r.scalar_id);
          q = node.requested().Scalar(r.scalar_id) + pod_requests[i];
        }
        break;
      case ResolvedResource::Kind::kOther:
        break;
    }
    // Only resources the node has take part in the score.
    if (a == 0) q = 0;
    allocatable[i] = a;
    requested[i] = q;
  }
}

int64_t LeastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) return 0;
  return ((capacity - requested) * framework::kMaxNodeScore) / capacity;
}

int64_t MostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Requested may exceed capacity because pods without requests count default values.
  if (requested > capacity) requested = capacity;
  return (requested * framework::kMaxNodeScore) / capacity;
}

int64_t LeastAllocatedScore(const std::vector<ResolvedResource>& res, const int64_t* requested,
                            const int64_t* allocatable) {
  int64_t node_score = 0, weight_sum = 0;
  for (size_t i = 0; i < res.size(); ++i) {
    if (allocatable[i] == 0) continue;
    node_score += LeastRequestedScore(requested[i], allocatable[i]) * res[i].weight;
    weight_sum += res[i].weight;
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

int64_t MostAllocatedScore(const std::vector<ResolvedResource>& res, const int64_t* requested,
                           const int64_t* allocatable) {
  int64_t node_score = 0, weight_sum = 0;
  for (size_t i = 0; i < res.size(); ++i) {
    if (allocatable[i] == 0) continue;
    node_score += MostRequestedScore(requested[i], allocatable[i]) * res[i].weight;
    weight_sum += res[i].weight;
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

int64_t BrokenLinearFunction::operator()(int64_t p) const {
  for (size_t i = 0; i < points_.size(); ++i) {
    if (p <= points_[i].utilization) {
      if (i == 0) return points_[0].score;
      const auto& a = points_[i - 1];
      const auto& b = points_[i];
      return a.score + (b.score - a.score) * (p - a.utilization) / (b.utilization - a.utilization);
    }
  }
  return points_.empty() ? 0 : points_.back().score;
}

int64_t ScaledUtilization(int64_t requested, int64_t capacity, int64_t max) {
  if (capacity <= 0 || requested <= 0) return 0;
  if (requested >= capacity) return max;
  const unsigned __int128 prod =
      static_cast<unsigned __int128>(requested) * static_cast<unsigned __int128>(max);
  return static_cast<int64_t>(prod / static_cast<unsigned __int128>(capacity));
}

int64_t RequestedToCapacityRatioScore(const BrokenLinearFunction& f,
                                      const std::vector<ResolvedResource>& res,
                                      const int64_t* requested, const int64_t* allocatable) {
  constexpr int64_t kMaxUtilization = 100;
  int64_t node_score = 0, weight_sum = 0;
  for (size_t i = 0; i < res.size(); ++i) {
    if (allocatable[i] == 0) continue;
    const int64_t resource_score =
        requested[i] > allocatable[i]
            ? f(kMaxUtilization)
            : f(ScaledUtilization(requested[i], allocatable[i], kMaxUtilization));
    if (resource_score > 0) {
      node_score += resource_score * res[i].weight;
      weight_sum += res[i].weight;
    }
  }
  if (weight_sum == 0) return 0;
  return static_cast<int64_t>(
      std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
}

int64_t BalancedResourceScore(size_t n, const int64_t* requested, const int64_t* allocatable) {
  std::array<double, kInlineResources> inline_fr;  // filled before read
  std::vector<double> heap_fr;
  double* fractions = inline_fr.data();
  if (n > kInlineResources) {
    heap_fr.resize(n);
    fractions = heap_fr.data();
  }
  size_t count = 0;
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (allocatable[i] == 0) continue;
    double fraction = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
    if (fraction > 1) fraction = 1;
    total += fraction;
    fractions[count++] = fraction;
  }
  double std_dev = 0.0;
  if (count == 2) {
    std_dev = std::fabs((fractions[0] - fractions[1]) / 2);
  } else if (count > 2) {
    const double mean = total / static_cast<double>(count);
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum = sum + (fractions[i] - mean) * (fractions[i] - mean);
    std_dev = std::sqrt(sum / static_cast<double>(count));
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(framework::kMaxNodeScore));
}

}  // namespace phalanx::plugins::noderesources
