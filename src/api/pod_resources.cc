// Pod resource requests, following k8s.io/component-helpers/resource/helpers.go
// (PodRequests / AggregateContainerRequests with the KEP-753 sidecar formula) and the
// scheduler's non-zero defaults (pkg/scheduler/util/pod_resources.go,
// NonMissingContainerRequests).
#include "api/pod_resources.h"

#include <string_view>
#include <utility>
#include <vector>

#include "api/quantity_internal.h"

namespace phalanx::api {
namespace {

// An exact v1.ResourceList: name -> value in nano units. Upstream sums resource.Quantity
// values exactly and rounds once (MilliValue/Value) at the end; nano units reproduce that.
// Names view strings owned by the pod, which outlives the computation.
class ExactList {
 public:
  Int128* Find(std::string_view name) {
    for (auto& [n, v] : entries_) {
      if (n == name) return &v;
    }
    return nullptr;
  }
  void Add(std::string_view name, Int128 v) {
    if (Int128* cur = Find(name)) {
      *cur += v;
    } else {
      entries_.emplace_back(name, v);
    }
  }
  void Add(const ExactList& other) {
    for (const auto& [n, v] : other.entries_) Add(n, v);
  }
  // maxResourceList: a name missing here, or with a smaller value, takes other's value.
  void Max(const ExactList& other) {
    for (const auto& [n, v] : other.entries_) {
      Int128* cur = Find(n);
      if (cur == nullptr) {
        entries_.emplace_back(n, v);
      } else if (v > *cur) {
        *cur = v;
      }
    }
  }
  const std::vector<std::pair<std::string_view, Int128>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string_view, Int128>> entries_;
};

ExactList FromResourceList(const ResourceList& list) {
  ExactList out;
  for (const auto& [name, q] : list) out.Add(name, QuantityInternal::Nano(q));
  return out;
}

// applyNonMissing: the defaults replace only requests that are absent; an explicit zero
// stays zero (GetNonzeroRequestForResource: "Override if un-set, but not if explicitly set
// to zero").
ExactList ContainerRequests(const Container& c, bool non_zero) {
  ExactList out = FromResourceList(c.resources.requests);
  if (non_zero) {
    if (out.Find(kResourceCPU) == nullptr) {
      out.Add(kResourceCPU, static_cast<Int128>(kDefaultMilliCPURequest) * 1'000'000);
    }
    if (out.Find(kResourceMemory) == nullptr) {
      out.Add(kResourceMemory, static_cast<Int128>(kDefaultMemoryRequest) * 1'000'000'000);
    }
  }
  return out;
}

Resource ComputeRequests(const Pod& pod, bool non_zero) {
  ExactList result;
  for (const Container& c : pod.spec.containers) result.Add(ContainerRequests(c, non_zero));

  // KEP-753: while init container i runs, the pod uses its request plus every restartable
  // (sidecar) init container started before it; sidecars also keep running next to the
  // app containers, so they are added to the app sum.
  ExactList sidecars;
  ExactList init_max;
  for (const Container& c : pod.spec.init_containers) {
    ExactList req = ContainerRequests(c, non_zero);
    if (c.restart_policy == "Always") {
      result.Add(req);
      sidecars.Add(req);
      init_max.Max(sidecars);
    } else {
      req.Add(sidecars);
      init_max.Max(req);
    }
  }
  result.Max(init_max);
  result.Add(FromResourceList(pod.spec.overhead));

  Resource out;
  for (const auto& [name, nano] : result.entries()) {
    if (name == kResourceCPU) {
      out.milli_cpu = NanoToScaledCeil(nano, 3);
    } else if (name == kResourceMemory) {
      out.memory = NanoToScaledCeil(nano, 0);
    } else if (name == kResourceEphemeralStorage) {
      out.ephemeral_storage = NanoToScaledCeil(nano, 0);
    } else if (name == kResourcePods) {
      // Not a per-pod request: allowed_pod_number stays 0 (see pod_resources.h).
    } else if (IsScalarResourceName(name)) {
      out.SetScalar(InternScalarResource(name), NanoToScaledCeil(nano, 0));
    }
  }
  return out;
}

}  // namespace

// Requests are summed exactly (nano units) and rounded once, as upstream sums
// resource.Quantity values: cpu by MilliValue(), everything else by Value().
Resource PodRequests(const Pod& pod) { return ComputeRequests(pod, /*non_zero=*/false); }

Resource PodNonZeroRequests(const Pod& pod) { return ComputeRequests(pod, /*non_zero=*/true); }

// Each quantity is rounded up on its own (framework.Resource.Add semantics).
Resource ResourceListToResource(const ResourceList& list) {
  Resource out;
  for (const auto& [name, q] : list) {
    if (name == kResourceCPU) {
      out.milli_cpu = q.MilliValue();
    } else if (name == kResourceMemory) {
      out.memory = q.Value();
    } else if (name == kResourceEphemeralStorage) {
      out.ephemeral_storage = q.Value();
    } else if (name == kResourcePods) {
      out.allowed_pod_number = q.Value();
    } else if (IsScalarResourceName(name)) {
      out.SetScalar(InternScalarResource(name), q.Value());
    }
  }
  return out;
}

}  // namespace phalanx::api
