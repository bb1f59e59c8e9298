#include "scheduler/podgroup_memo.h"

#include <utility>

#include "scheduler/podgroup_algorithm.h"

namespace phalanx::scheduler {

bool PodGroupRejectionMemo::Replayable(const framework::Framework& fwk,
                                       const framework::PodGroupPlan& plan,
                                       const PodGroupPlacement& placement,
                                       const std::vector<std::string>& nominated_before,
                                       const std::vector<std::string>& nominated_after,
                                       bool preempted) {
  if (!placement.placement_failed || preempted || plan.units.empty()) return false;
  for (int32_t n : placement.placed) {
    if (n != 0) return false;
  }
  for (const auto& u : plan.units) {
    if (!u.topology_levels.empty() || u.check_sub_groups || u.has_min_resources) return false;
  }
  for (const auto& n : nominated_before) {
    if (!n.empty()) return false;
  }
  for (const auto& n : nominated_after) {
    if (!n.empty()) return false;
  }
  for (const auto* p : fwk.PodGroupPlugins()) {
    if (p->Name() != "GangScheduling") return false;
  }
  return true;
}

void PodGroupRejectionMemo::Remember(std::shared_ptr<const PodGroupRejection> r) {
  for (const auto& k : r->unit_keys) by_gang_[k] = r;
}

void PodGroupRejectionMemo::Forget(const framework::PodGroupPlan& plan) {
  for (const auto& u : plan.units) by_gang_.erase(u.key);
}

const PodGroupRejection* PodGroupRejectionMemo::Find(const framework::PodGroupPlan& plan,
                                                     const std::vector<PodGroupMember>& members,
                                                     int64_t generation, uint64_t epoch) const {
  if (plan.units.empty() || by_gang_.empty()) return nullptr;
  auto it = by_gang_.find(plan.units[0].key);
  if (it == by_gang_.end()) return nullptr;
  const PodGroupRejection& r = *it->second;
  if (r.generation != generation || r.epoch != epoch) return nullptr;
  if (r.unit_keys.size() != plan.units.size() || r.member_keys.size() != members.size()) {
    return nullptr;
  }
  for (size_t u = 0; u < plan.units.size(); ++u) {
    const auto& unit = plan.units[u];
    if (unit.key != r.unit_keys[u] || unit.need != r.needs[u] || unit.pending_pods != r.pending[u] ||
        !unit.topology_levels.empty() || unit.check_sub_groups || unit.has_min_resources) {
      return nullptr;
    }
  }
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].unit != r.member_units[i] || members[i].qp->Pod().Key() != r.member_keys[i]) {
      return nullptr;
    }
  }
  return &r;
}

std::shared_ptr<PodGroupRejection> PodGroupRejectionMemo::Describe(
    const framework::PodGroupPlan& plan, const std::vector<PodGroupMember>& members,
    int64_t generation, uint64_t epoch) {
  auto r = std::make_shared<PodGroupRejection>();
  r->generation = generation;
  r->epoch = epoch;
  for (const auto& u : plan.units) {
    r->unit_keys.push_back(u.key);
    r->needs.push_back(u.need);
    r->pending.push_back(u.pending_pods);
  }
  for (const auto& m : members) {
    r->member_keys.push_back(m.qp->Pod().Key());
    r->member_units.push_back(m.unit);
  }
  return r;
}

bool PodGroupRejectionMemo::UniformGang(const framework::Framework& fwk,
                                        const framework::PodGroupPlan& plan,
                                        const std::vector<PodGroupMember>& members) {
  if (plan.units.size() != 1 || members.empty()) return false;
  const auto& u = plan.units[0];
  if (!u.topology_levels.empty() || u.check_sub_groups || u.has_min_resources) return false;
  if (members.size() != u.pending_pods.size()) return false;
  const framework::PodInfo& first = *members[0].qp->pod_info;
  if (!fwk.SameSignature(first, first)) return false;
  for (const auto& m : members) {
    if (m.unit != 0 || m.qp->Pod().spec.preemption_policy != first.pod->spec.preemption_policy ||
        !fwk.SameSignature(first, *m.qp->pod_info)) {
      return false;
    }
  }
  return true;
}

void PodGroupRejectionMemo::RememberShape(Shape s) {
  if (!shapes_.empty() &&
      (shapes_[0].generation != s.generation || shapes_[0].epoch != s.epoch)) {
    shapes_.clear();
  }
  if (shapes_.size() < 64) shapes_.push_back(std::move(s));
}

const PodGroupRejectionMemo::Shape* PodGroupRejectionMemo::FindShape(
    const framework::Framework& fwk, const framework::PodGroupPlan& plan,
    const std::vector<PodGroupMember>& members, int64_t generation, uint64_t epoch) const {
  for (const auto& s : shapes_) {
    if (s.generation != generation || s.epoch != epoch) return nullptr;
    if (s.need != plan.units[0].need || s.pending != members.size()) continue;
    if (s.canonical->pod->spec.preemption_policy != members[0].qp->Pod().spec.preemption_policy) {
      continue;
    }
    if (fwk.SameSignature(*s.canonical, *members[0].qp->pod_info)) return &s;
  }
  return nullptr;
}

}  // namespace phalanx::scheduler
