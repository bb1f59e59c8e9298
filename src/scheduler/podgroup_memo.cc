#include "scheduler/podgroup_memo.h"

#include <utility>

#include "scheduler/podgroup_algorithm.h"

namespace phalanx::scheduler {

bool PodGroupRejectionMemo::Replayable(const framework::Framework& fwk,
                                       const framework::QueuedPodGroupInfo& plan,
                                       const PodGroupPlacement& placement,
                                       const std::vector<std::string>& nominated_before,
                                       const std::vector<std::string>& nominated_after,
                                       bool preempted) {
  if (!placement.placement_failed || preempted || plan.pod_groups.empty()) return false;
  for (int32_t n : placement.placed) {
    if (n != 0) return false;
  }
  for (const auto& u : plan.pod_groups) {
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

namespace {

// key == pod.Key() ("namespace/name") without building the pod's key.
bool IsKeyOf(const std::string& key, const api::Pod& pod) {
  const std::string& ns = pod.metadata.namespace_;
  const std::string& name = pod.metadata.name;
  return key.size() == ns.size() + 1 + name.size() && key.compare(0, ns.size(), ns) == 0 &&
         key[ns.size()] == '/' && key.compare(ns.size() + 1, name.size(), name) == 0;
}

// *out = pod.Key(), reusing out's storage.
void AssignKey(const api::Pod& pod, std::string* out) {
  out->assign(pod.metadata.namespace_).append(1, '/').append(pod.metadata.name);
}

}  // namespace

void PodGroupRejectionMemo::Remember(std::shared_ptr<PodGroupRejection> r) {
  for (const auto& k : r->unit_keys) by_gang_[k] = r;
}

std::shared_ptr<PodGroupRejection> PodGroupRejectionMemo::Reusable(
    const framework::QueuedPodGroupInfo& plan) {
  if (plan.pod_groups.size() != 1) return nullptr;
  auto it = by_gang_.find(plan.pod_groups[0].key);
  if (it == by_gang_.end() || it->second.use_count() != 1 || it->second->unit_keys.size() != 1) {
    return nullptr;
  }
  return it->second;
}

void PodGroupRejectionMemo::Forget(const framework::QueuedPodGroupInfo& plan) {
  for (const auto& u : plan.pod_groups) by_gang_.erase(u.key);
}

const PodGroupRejection* PodGroupRejectionMemo::Find(const framework::QueuedPodGroupInfo& plan,
                                                     const std::vector<PodGroupMember>& members,
                                                     int64_t generation, uint64_t epoch) const {
  if (plan.pod_groups.empty() || by_gang_.empty()) return nullptr;
  auto it = by_gang_.find(plan.pod_groups[0].key);
  if (it == by_gang_.end()) return nullptr;
  const PodGroupRejection& r = *it->second;
  if (r.generation != generation || r.epoch != epoch) return nullptr;
  if (r.unit_keys.size() != plan.pod_groups.size() || r.member_keys.size() != members.size()) {
    return nullptr;
  }
  for (size_t u = 0; u < plan.pod_groups.size(); ++u) {
    const auto& unit = plan.pod_groups[u];
    if (unit.key != r.unit_keys[u] || unit.Need() != r.needs[u] ||
        unit.pending_pods != r.pending[u] || !unit.topology_levels.empty() ||
        unit.check_sub_groups || unit.has_min_resources) {
      return nullptr;
    }
  }
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].pod_group != r.member_units[i] ||
        !IsKeyOf(r.member_keys[i], members[i].qp->Pod())) {
      return nullptr;
    }
  }
  return &r;
}

std::shared_ptr<PodGroupRejection> PodGroupRejectionMemo::Describe(
    const framework::QueuedPodGroupInfo& plan, const std::vector<PodGroupMember>& members,
    int64_t generation, uint64_t epoch) {
  auto r = std::make_shared<PodGroupRejection>();
  Describe(plan, members, generation, epoch, r.get());
  return r;
}

void PodGroupRejectionMemo::Describe(const framework::QueuedPodGroupInfo& plan,
                                     const std::vector<PodGroupMember>& members, int64_t generation,
                                     uint64_t epoch, PodGroupRejection* r) {
  r->generation = generation;
  r->epoch = epoch;
  const size_t n = plan.pod_groups.size();
  r->unit_keys.resize(n);
  r->needs.resize(n);
  r->pending.resize(n);
  for (size_t u = 0; u < n; ++u) {
    r->unit_keys[u] = plan.pod_groups[u].key;
    r->needs[u] = plan.pod_groups[u].Need();
    r->pending[u] = plan.pod_groups[u].pending_pods;
  }
  r->member_keys.resize(members.size());
  r->member_units.resize(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    AssignKey(members[i].qp->Pod(), &r->member_keys[i]);
    r->member_units[i] = members[i].pod_group;
  }
}

void PodGroupRejectionMemo::Shape::Complete() {
  rejection_plugins = plugins;
  rejection_plugins.insert("GangScheduling");
  has_member_message = member_status.IsRejected() && !member_status.reasons().empty();
  member_message.clear();
  member_reasons.clear();
  if (!has_member_message) return;
  member_message = member_status.Message();
  std::set<std::string> distinct;
  for (const auto& [node, st] : node_statuses) {
    for (const auto& r : st.reasons()) distinct.insert(r);
  }
  member_reasons.assign(distinct.begin(), distinct.end());
}

bool PodGroupRejectionMemo::UniformGang(const framework::Framework& fwk,
                                        const framework::QueuedPodGroupInfo& plan,
                                        const std::vector<PodGroupMember>& members) {
  if (plan.pod_groups.size() != 1 || members.empty()) return false;
  const auto& u = plan.pod_groups[0];
  if (!u.topology_levels.empty() || u.check_sub_groups || u.has_min_resources) return false;
  if (members.size() != u.pending_pods.size()) return false;
  const framework::PodInfo& first = *members[0].qp->pod_info;
  if (!fwk.SameSignature(first, first)) return false;
  for (const auto& m : members) {
    if (m.pod_group != 0 ||
        m.qp->Pod().spec.preemption_policy != first.pod->spec.preemption_policy ||
        !fwk.SameSignature(first, *m.qp->pod_info)) {
      return false;
    }
  }
  return true;
}

void PodGroupRejectionMemo::RememberShape(Shape s) {
  if (!shapes_.empty() && (shapes_[0].generation != s.generation || shapes_[0].epoch != s.epoch)) {
    shapes_.clear();
  }
  if (shapes_.size() < 64) {
    s.Complete();
    shapes_.push_back(std::move(s));
  }
}

const PodGroupRejectionMemo::Shape* PodGroupRejectionMemo::FindShape(
    const framework::Framework& fwk, const framework::QueuedPodGroupInfo& plan,
    const std::vector<PodGroupMember>& members, int64_t generation, uint64_t epoch) const {
  for (const auto& s : shapes_) {
    if (s.generation != generation || s.epoch != epoch) return nullptr;
    if (s.need != plan.pod_groups[0].Need() || s.pending != members.size()) continue;
    if (s.canonical->pod->spec.preemption_policy != members[0].qp->Pod().spec.preemption_policy) {
      continue;
    }
    if (fwk.SameSignature(*s.canonical, *members[0].qp->pod_info)) return &s;
  }
  return nullptr;
}

}  // namespace phalanx::scheduler
