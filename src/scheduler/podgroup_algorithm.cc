#include "scheduler/podgroup_algorithm.h"

#include <algorithm>
#include <map>
#include <utility>

namespace phalanx::scheduler {

using framework::CycleState;
using framework::PodInfo;
using framework::Status;

namespace {

// Sum over nodes of max(0, allocatable - requested), per resource (units of api::Resource).
api::Resource FreeCapacity(const framework::NodeInfoLister& snap) {
  api::Resource free;
  for (const auto* ni : snap.List()) {
    const auto& a = ni->allocatable();
    const auto& r = ni->requested();
    free.milli_cpu += std::max<int64_t>(0, a.milli_cpu - r.milli_cpu);
    free.memory += std::max<int64_t>(0, a.memory - r.memory);
    free.ephemeral_storage += std::max<int64_t>(0, a.ephemeral_storage - r.ephemeral_storage);
    free.allowed_pod_number +=
        std::max<int64_t>(0, a.allowed_pod_number - static_cast<int64_t>(ni->pods().size()));
    for (const auto& [id, v] : a.scalar) free.AddScalar(id, std::max<int64_t>(0, v - r.Scalar(id)));
  }
  return free;
}

// "" if `want` fits in `free`, else e.g. "cpu: 64000m requested, 12000m free".
std::string MinResourcesShortfall(const api::Resource& want, const api::Resource& free) {
  auto fmt = [](const std::string& name, int64_t w, int64_t f, const char* unit) {
    return name + ": " + std::to_string(w) + unit + " requested, " + std::to_string(f) + unit +
           " free";
  };
  if (want.milli_cpu > free.milli_cpu) return fmt("cpu", want.milli_cpu, free.milli_cpu, "m");
  if (want.memory > free.memory) return fmt("memory", want.memory, free.memory, "");
  if (want.ephemeral_storage > free.ephemeral_storage) {
    return fmt("ephemeral-storage", want.ephemeral_storage, free.ephemeral_storage, "");
  }
  if (want.allowed_pod_number > 0 && want.allowed_pod_number > free.allowed_pod_number) {
    return fmt("pods", want.allowed_pod_number, free.allowed_pod_number, "");
  }
  for (const auto& [id, v] : want.scalar) {
    if (v > free.Scalar(id)) return fmt(api::ScalarResourceName(id), v, free.Scalar(id), "");
  }
  return "";
}

}  // namespace

PodGroupPlacement PodGroupAlgorithm::Run() {
  PodGroupPlacement out;
  out.placed.assign(plan_.units.size(), 0);
  out.reject_reason = CheckMinResources();
  if (out.reject_reason.empty()) out.reject_reason = Admit(&out.admit_plugin);
  if (out.reject_reason.empty()) {
    out.reject_reason = Place(&out.placed);
    out.placement_failed = !out.reject_reason.empty();
  }
  out.batched = batched_;
  return out;
}

std::string PodGroupAlgorithm::Place(std::vector<int32_t>* placed) {
  placed->assign(plan_.units.size(), 0);
  std::string topology_key;
  bool required = false;
  for (const auto& u : plan_.units) {
    if (!u.topology_key.empty()) {
      topology_key = u.topology_key;
      required = required || u.topology_required;
    }
  }
  return topology_key.empty() ? PlaceMembers(nullptr, placed)
                              : PlaceInTopology(topology_key, required, placed);
}

void PodGroupAlgorithm::Revert() {
  sched_.cache().UpdateSnapshot(&sched_.snapshot());
  if (view_edit_) view_edit_(sched_.snapshot());
}

std::string PodGroupAlgorithm::CheckMinResources() const {
  // A gang whose minimum exceeds the cluster's free capacity is rejected before any
  // per-pod work.
  bool have_free = false;
  api::Resource free;
  for (const auto& u : plan_.units) {
    if (!u.has_min_resources) continue;
    if (!have_free) {
      free = FreeCapacity(sched_.snapshot());
      have_free = true;
    }
    std::string shortfall = MinResourcesShortfall(u.min_resources, free);
    if (!shortfall.empty()) {
      return u.display + ": minResources exceed the cluster's free capacity (" + shortfall + ")";
    }
  }
  return "";
}

std::string PodGroupAlgorithm::Admit(std::string* plugin) {
  // The whole gang's request against its queue, inside the transaction, so that quota is
  // never half-consumed by a gang.
  std::vector<const PodInfo*> pods;
  std::vector<size_t> unit_of;
  for (const auto& m : members_) {
    pods.push_back(m.qp->pod_info.get());
    unit_of.push_back(m.unit);
  }
  Status a = fwk_.RunAdmitPodGroup(plan_, pods, unit_of);
  if (!a.IsSuccess()) {
    *plugin = a.plugin();
    return a.Message();
  }
  sched_.cache().UpdateSnapshot(&sched_.snapshot());  // admission may have freed capacity (reclaim)
  return "";
}

std::string PodGroupAlgorithm::PlaceMembers(const std::set<std::string>* restriction,
                                            std::vector<int32_t>* placed) {
  std::vector<int32_t> pending(plan_.units.size(), 0);
  for (const auto& m : members_) ++pending[m.unit];
  std::vector<int32_t> remaining = pending;
  std::fill(placed->begin(), placed->end(), 0);
  for (auto& m : members_) {
    m.placed = false;
    m.host.clear();
    m.diag = Diagnosis{};
  }
  std::string reason;
  PlacementBatch batch;  // members of one signature share the first one's nodes and scores
  for (auto& m : members_) {
    --remaining[m.unit];
    m.state = std::make_shared<CycleState>();
    ScheduleResult r;
    m.status = sched_.SchedulePod(fwk_, *m.state, *m.qp->pod_info, &r, &m.diag, &batch, restriction);
    if (m.status.IsSuccess()) {
      auto ap = std::make_shared<api::Pod>(*m.qp->pod_info->pod);
      ap->spec.node_name = r.suggested_host;
      m.assumed = PodInfo::Make(std::move(ap));
      sched_.snapshot().AddPodToView(m.assumed);
      m.host = r.suggested_host;
      m.placed = true;
      ++(*placed)[m.unit];
    } else if (!m.status.IsRejected()) {
      reason = "error placing " + m.qp->Pod().Key() + ": " + m.status.Message();
      break;
    }
    // Give up early once a unit can no longer reach its need.
    if ((*placed)[m.unit] + remaining[m.unit] < plan_.units[m.unit].need) break;
  }
  batched_ += batch.batched_pods;
  for (size_t u = 0; reason.empty() && u < plan_.units.size(); ++u) {
    reason = UnitShortfall(u, pending[u], (*placed)[u]);
  }
  return reason;
}

std::string PodGroupAlgorithm::UnitShortfall(size_t u, int32_t pending, int32_t placed) const {
  const framework::PodGroupUnit& unit = plan_.units[u];
  // Every subgroup's own minimum (KAI subGroups, Volcano minTaskMember), not only the
  // summed need: the short subgroup is named first.
  std::string sub_short;
  if (unit.check_sub_groups) {
    std::vector<std::string> keys;
    for (const auto& m : members_) {
      if (m.unit == u && m.placed) keys.push_back(m.qp->Pod().Key());
    }
    sub_short = unit.check_sub_groups(keys);
  }
  std::string count;
  if (placed < unit.need) {
    count = std::to_string(placed) + " of " + std::to_string(pending) + " pending members fit, " +
            std::to_string(unit.need) + " needed";
  }
  if (sub_short.empty() && count.empty()) return "";
  return unit.display + ": " + sub_short + (sub_short.empty() || count.empty() ? "" : "; ") + count;
}

std::string PodGroupAlgorithm::PlaceInTopology(const std::string& key, bool required,
                                               std::vector<int32_t>* placed) {
  std::map<std::string, std::set<std::string>> domains;
  for (const auto* ni : sched_.snapshot().List()) {
    auto it = ni->node()->metadata.labels.find(key);
    if (it != ni->node()->metadata.labels.end()) domains[it->second].insert(ni->name());
  }
  std::vector<const std::pair<const std::string, std::set<std::string>>*> order;
  for (const auto& d : domains) order.push_back(&d);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->second.size() > b->second.size();
  });
  std::string first_reason;
  for (const auto* d : order) {
    std::string r = PlaceMembers(&d->second, placed);
    if (r.empty()) return "";
    if (first_reason.empty()) first_reason = r + " in " + key + "=" + d->first;
    Revert();  // drop this attempt's view
  }
  if (!required) {
    std::string r = PlaceMembers(nullptr, placed);
    return r;  // "" when it fit; else the whole cluster's reason
  }
  return first_reason.empty() ? "no node has the topology label " + key
                              : first_reason + " (required topology " + key +
                                    ": no single domain fits the gang)";
}

}  // namespace phalanx::scheduler
