// Pod resource requests, following k8s.io/component-helpers/resource/helpers.go
// (PodRequests / AggregateContainerRequests with the KEP-753 sidecar formula) and the
// scheduler's non-zero defaults (pkg/scheduler/util/pod_resources.go,
// NonMissingContainerRequests).
#include "api/pod_resources.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
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
  const Int128* Find(std::string_view name) const {
    for (const auto& [n, v] : entries_) {
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
  void Set(std::string_view name, Int128 v) {
    if (Int128* cur = Find(name)) {
      *cur = v;
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
  const auto& entries() const { return entries_; }

 private:
  // Inline room for cpu, memory, ephemeral-storage and one more: no allocation per
  // container for the common pod (PodRequests runs on every pod event).
  absl::InlinedVector<std::pair<std::string_view, Int128>, 4> entries_;
};

ExactList FromResourceList(const ResourceList& list) {
  ExactList out;
  for (const auto& [name, q] : list) out.Add(name, QuantityInternal::Nano(q));
  return out;
}

// NonMissingContainerRequests: which of cpu / memory get the scheduler's default when a
// container does not request them.
struct NonMissing {
  bool cpu = false;
  bool memory = false;
};

// applyNonMissing: the defaults replace only requests that are absent; an explicit zero
// stays zero (GetNonzeroRequestForResource: "Override if un-set, but not if explicitly set
// to zero"). A null list (an infeasible resize with no status) gets the defaults alone.
ExactList ContainerRequests(const ResourceList* list, NonMissing nm) {
  ExactList out = list != nullptr ? FromResourceList(*list) : ExactList();
  if (nm.cpu && out.Find(kResourceCPU) == nullptr) {
    out.Add(kResourceCPU, static_cast<Int128>(kDefaultMilliCPURequest) * 1'000'000);
  }
  if (nm.memory && out.Find(kResourceMemory) == nullptr) {
    out.Add(kResourceMemory, static_cast<Int128>(kDefaultMemoryRequest) * 1'000'000'000);
  }
  return out;
}

// The three views upstream aggregates when UseStatusResources is set
// (containerSpecRequests / containerAllocatedRequests / containerActuatedRequests).
enum class View { kSpec, kAllocated, kActuated, kSpecLimits };

// findContainerStatus: app container statuses first, then init container statuses.
const ContainerStatus* FindContainerStatus(const Pod& pod, const std::string& name) {
  for (const auto& cs : pod.status.container_statuses) {
    if (cs.name == name) return &cs;
  }
  for (const auto& cs : pod.status.init_container_statuses) {
    if (cs.name == name) return &cs;
  }
  return nullptr;
}

const ResourceList* ContainerView(const Pod& pod, const Container& c, View view, bool infeasible) {
  if (view == View::kSpec) return &c.resources.requests;
  if (view == View::kSpecLimits) return &c.resources.limits;
  const ContainerStatus* cs = FindContainerStatus(pod, c.name);
  if (view == View::kActuated && cs != nullptr && cs->resources_requests) {
    return &*cs->resources_requests;
  }
  if (cs != nullptr && cs->allocated_resources) return &*cs->allocated_resources;
  return infeasible ? nullptr : &c.resources.requests;
}

// aggregateContainerResourcesByFn. KEP-753: while init container i runs, the pod uses its
// request plus every restartable (sidecar) init container started before it; sidecars also
// keep running next to the app containers, so they are added to the app sum.
ExactList Aggregate(const Pod& pod, View view, bool infeasible, NonMissing nm) {
  ExactList result;
  for (const Container& c : pod.spec.containers) {
    result.Add(ContainerRequests(ContainerView(pod, c, view, infeasible), nm));
  }
  ExactList sidecars;
  ExactList init_max;
  for (const Container& c : pod.spec.init_containers) {
    ExactList req = ContainerRequests(ContainerView(pod, c, view, infeasible), nm);
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
  return result;
}

// AggregateContainerRequests with UseStatusResources (InPlacePodVerticalScaling, GA in
// 1.35): max(spec, actuated, allocated) per resource, or max(actuated, allocated) while
// the resize is Infeasible. Without any container status both status views equal the spec.
ExactList AggregateWithStatus(const Pod& pod, NonMissing nm) {
  const bool infeasible = IsPodResizeInfeasible(pod);
  const bool no_status =
      pod.status.container_statuses.empty() && pod.status.init_container_statuses.empty();
  if (no_status && !infeasible) return Aggregate(pod, View::kSpec, false, nm);
  ExactList result = Aggregate(pod, View::kActuated, infeasible, nm);
  result.Max(Aggregate(pod, View::kAllocated, infeasible, nm));
  if (!infeasible) result.Max(Aggregate(pod, View::kSpec, infeasible, nm));
  return result;
}

// PodRequests: container aggregate, pod-level requests of supported resources override it
// (applyPodLevelResources), then overhead. InPlacePodLevelResourcesVerticalScaling is alpha
// and off in the scheduler's calculateResource, so pod-level status is not read.
ExactList ExactPodRequests(const Pod& pod, NonMissing nm) {
  ExactList result = AggregateWithStatus(pod, nm);
  if (IsPodLevelRequestsSet(pod)) {
    for (const auto& [name, q] : pod.spec.resources->requests) {
      if (IsSupportedPodLevelResource(name)) result.Set(name, QuantityInternal::Nano(q));
    }
  }
  result.Add(FromResourceList(pod.spec.overhead));
  return result;
}

Resource ToResource(const ExactList& result) {
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

// k8s.io/component-helpers/resource/helpers.go PodRequests with the options of
// pkg/scheduler/framework/types.go calculateResource: UseStatusResources (in-place resize)
// and pod-level resources on. Requests are summed exactly (nano units) and rounded once,
// as upstream sums resource.Quantity values: cpu by MilliValue(), the rest by Value().
Resource PodRequests(const Pod& pod) { return ToResource(ExactPodRequests(pod, NonMissing{})); }

// pkg/scheduler/framework/types.go calculateResource / getNonMissingContainerRequests:
// without pod-level requests every container missing cpu / memory gets the default; with
// them, only a resource absent from the pod's requests altogether does.
Resource PodNonZeroRequests(const Pod& pod) {
  NonMissing nm{true, true};
  if (IsPodLevelRequestsSet(pod)) {
    const ExactList requests = ExactPodRequests(pod, NonMissing{});
    nm.cpu = requests.Find(kResourceCPU) == nullptr;
    nm.memory = requests.Find(kResourceMemory) == nullptr;
    if (!nm.cpu && !nm.memory) return ToResource(requests);
  }
  return ToResource(ExactPodRequests(pod, nm));
}

// pkg/scheduler/framework/plugins/noderesources/resource_allocation.go
// calculatePodResourceRequest (useRequested false): NonMissingContainerRequests of cpu and
// memory for every container, whatever the pod-level requests.
Resource PodScoringNonZeroRequests(const Pod& pod) {
  return ToResource(ExactPodRequests(pod, NonMissing{true, true}));
}

// helpers.go AggregateContainerRequests / AggregateContainerLimits with no options (spec
// only, no overhead), as pkg/apis/core/v1/defaults.go calls them.
ResourceList AggregateContainerResources(const Pod& pod, bool limits) {
  ResourceList out;
  const View view = limits ? View::kSpecLimits : View::kSpec;
  const ExactList aggregate = Aggregate(pod, view, false, NonMissing{});
  for (const auto& [name, nano] : aggregate.entries()) {
    out.emplace(std::string(name), QuantityInternal::FromNano(nano));
  }
  return out;
}

// helpers.go IsSupportedPodLevelResource: cpu, memory and hugepages-<size>.
bool IsSupportedPodLevelResource(std::string_view name) {
  return name == kResourceCPU || name == kResourceMemory || name.starts_with("hugepages-");
}

// helpers.go IsPodLevelRequestsSet: spec.resources.requests names a supported resource.
bool IsPodLevelRequestsSet(const Pod& pod) {
  if (!pod.spec.resources) return false;
  for (const auto& [name, q] : pod.spec.resources->requests) {
    if (IsSupportedPodLevelResource(name)) return true;
  }
  return false;
}

// helpers.go IsPodResizeInfeasible: the PodResizePending condition's reason is Infeasible.
bool IsPodResizeInfeasible(const Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == "PodResizePending") return c.reason == "Infeasible";
  }
  return false;
}

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
