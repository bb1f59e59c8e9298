// The invariant checker's own request arithmetic (see invariant_requests.h). Nothing here
// may call src/api/pod_resources.* or the framework's NodeInfo accounting.
#include "sim/invariant_requests.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace phalanx::sim {
namespace {

constexpr int64_t kMilli = 1000;

OracleAmounts Milli(const api::ResourceList& list) {
  OracleAmounts out;
  for (const auto& [name, q] : list) out[name] += q.MilliValue();
  return out;
}

void MaxInto(OracleAmounts* peak, const OracleAmounts& phase) {
  for (const auto& [name, v] : phase) {
    int64_t& p = (*peak)[name];
    p = std::max(p, v);
  }
}

// Where a container's request is read from (in-place resize, KEP-1287).
enum class Source { kSpec, kAllocated, kActuated };

const api::ContainerStatus* StatusOf(const api::Pod& pod, const std::string& name) {
  for (const auto* list : {&pod.status.container_statuses, &pod.status.init_container_statuses}) {
    for (const auto& cs : *list) {
      if (cs.name == name) return &cs;
    }
  }
  return nullptr;
}

// The container's request from `source`. Allocated falls back to the spec, actuated to
// allocated and then the spec; an Infeasible resize drops the spec fallback (nothing).
OracleAmounts ContainerAmounts(const api::Pod& pod, const api::Container& c, Source source,
                               bool infeasible) {
  if (source == Source::kSpec) return Milli(c.resources.requests);
  const api::ContainerStatus* cs = StatusOf(pod, c.name);
  if (cs != nullptr && source == Source::kActuated && cs->resources_requests) {
    return Milli(*cs->resources_requests);
  }
  if (cs != nullptr && cs->allocated_resources) return Milli(*cs->allocated_resources);
  return infeasible ? OracleAmounts{} : Milli(c.resources.requests);
}

// The per-resource peak over the pod's lifecycle: each init container in order (a regular
// one next to the sidecars already started; a sidecar joining them), then all sidecars
// with all app containers.
OracleAmounts PeakOverPhases(const api::Pod& pod, Source source, bool infeasible) {
  OracleAmounts sidecars;
  OracleAmounts peak;
  for (const api::Container& c : pod.spec.init_containers) {
    const OracleAmounts mine = ContainerAmounts(pod, c, source, infeasible);
    if (c.restart_policy == "Always") {
      AddAmounts(&sidecars, mine, 1);
      MaxInto(&peak, sidecars);
    } else {
      OracleAmounts phase = sidecars;
      AddAmounts(&phase, mine, 1);
      MaxInto(&peak, phase);
    }
  }
  OracleAmounts steady = sidecars;
  for (const api::Container& c : pod.spec.containers) {
    AddAmounts(&steady, ContainerAmounts(pod, c, source, infeasible), 1);
  }
  MaxInto(&peak, steady);
  return peak;
}

bool ResizeInfeasible(const api::Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == "PodResizePending") return c.reason == "Infeasible";
  }
  return false;
}

bool PodLevelName(std::string_view name) {
  return name == "cpu" || name == "memory" || name.substr(0, 10) == "hugepages-";
}

int64_t CeilWhole(int64_t milli) { return milli / kMilli + (milli % kMilli > 0 ? 1 : 0); }

}  // namespace

// Rules of k8s.io/component-helpers/resource/helpers.go PodRequests (KEP-753 sidecars,
// KEP-1287 resize, KEP-2837 pod-level resources), re-derived; see invariant_requests.h.
OracleAmounts OracleRequests(const api::Pod& pod) {
  const bool infeasible = ResizeInfeasible(pod);
  OracleAmounts req = PeakOverPhases(pod, Source::kAllocated, infeasible);
  MaxInto(&req, PeakOverPhases(pod, Source::kActuated, infeasible));
  if (!infeasible) MaxInto(&req, PeakOverPhases(pod, Source::kSpec, infeasible));
  if (pod.spec.resources) {
    for (const auto& [name, q] : pod.spec.resources->requests) {
      if (PodLevelName(name)) req[name] = q.MilliValue();
    }
  }
  AddAmounts(&req, Milli(pod.spec.overhead), 1);
  req["pods"] += kMilli;
  // Extended resources the pod's status says a ResourceClaim's devices serve (KEP-5004
  // status.extendedResourceClaimStatus) take nothing of the node's allocatable.
  if (const auto& ext = pod.status.extended_resource_claim_status; ext) {
    for (const auto& m : ext->request_mappings) req.erase(m.resource_name);
  }
  return req;
}

// v1.Node status.allocatable, each quantity in milli units.
OracleAmounts OracleAllocatable(const api::Node& node) { return Milli(node.status.allocatable); }

void AddAmounts(OracleAmounts* into, const OracleAmounts& amounts, int sign) {
  for (const auto& [name, v] : amounts) (*into)[name] += sign * v;
}

// As the checker always reported: the first-class resources first, then the rest by name.
std::string FirstExceeded(const OracleAmounts& used, const OracleAmounts& alloc) {
  auto get = [](const OracleAmounts& m, const std::string& name) {
    auto it = m.find(name);
    return it == m.end() ? int64_t{0} : it->second;
  };
  static const std::array<std::string, 4> kFirst = {"cpu", "memory", "ephemeral-storage", "pods"};
  for (const std::string& name : kFirst) {
    const int64_t u = get(used, name);
    if (u > get(alloc, name) && u > 0) return name;
  }
  for (const auto& [name, u] : used) {
    if (std::find(kFirst.begin(), kFirst.end(), name) != kFirst.end()) continue;
    if (u > get(alloc, name)) return name;
  }
  return "";
}

// Reporting only: whole units rounded up (cpu stays in millicores).
api::Resource OracleToResource(const OracleAmounts& amounts) {
  api::Resource out;
  for (const auto& [name, v] : amounts) {
    if (name == "cpu") {
      out.milli_cpu = v;
    } else if (name == "memory") {
      out.memory = CeilWhole(v);
    } else if (name == "ephemeral-storage") {
      out.ephemeral_storage = CeilWhole(v);
    } else if (name == "pods") {
      out.allowed_pod_number = CeilWhole(v);
    } else if (!name.empty()) {
      out.SetScalar(api::InternScalarResource(name), CeilWhole(v));
    }
  }
  return out;
}

}  // namespace phalanx::sim
