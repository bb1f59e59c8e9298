#include "gang/default_podgroup_manager.h"

#include <algorithm>
#include <cstring>

#include "gang/topology_hypernode.h"

namespace phalanx::gang {

namespace {
bool Terminal(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}
std::string ObjKey(const std::string& ns, const std::string& kind, const std::string& name) {
  return ns + "/" + kind + "/" + name;
}
// topologies_' key: "<group>/<name>" (a ClusterNetworkTopology's Topology::name too).
std::string TopologyKey(const api::Unstructured& obj) {
  return obj.Group() + "/" + obj.metadata.name;
}
}  // namespace

DefaultPodGroupManager::DefaultPodGroupManager(DialectOptions opts) : opts_(std::move(opts)) {}

void DefaultPodGroupManager::OnObjectAdd(const api::UnstructuredPtr& obj) {
  absl::MutexLock l(&mu_);
  objects_[ObjKey(obj->metadata.namespace_, obj->kind, obj->metadata.name)] = obj;
  if (IsTopologyObject(*obj)) {
    topologies_[TopologyKey(*obj)] = std::make_shared<const Topology>(TopologyFromObject(*obj));
    return;
  }
  if (IsHyperNodeObject(*obj)) {
    hyper_nodes_[obj->metadata.name] = std::make_shared<const HyperNode>(HyperNodeFromObject(*obj));
    return;
  }
  if (!IsGangObject(*obj)) return;
  const std::string okey = obj->Key();
  for (const auto& k : specs_by_object_[okey]) object_specs_.erase(k);
  specs_by_object_[okey].clear();
  for (auto& spec : SpecsFromObject(*obj)) {
    if (!spec.priority_class_name.empty()) has_gang_priorities_.store(true);
    std::string key = spec.key;  // the right-hand side below is evaluated first
    specs_by_object_[okey].push_back(key);
    object_specs_[key] = std::make_shared<const PodGroupSpec>(std::move(spec));
  }
}

void DefaultPodGroupManager::OnObjectStatusUpdate(const api::UnstructuredPtr& obj) {
  {
    absl::MutexLock l(&mu_);
    auto it = objects_.find(ObjKey(obj->metadata.namespace_, obj->kind, obj->metadata.name));
    if (it != objects_.end() && (!IsGangObject(*obj) || specs_by_object_.count(obj->Key()))) {
      it->second = obj;
      return;
    }
  }
  OnObjectAdd(obj);
}

void DefaultPodGroupManager::OnObjectDelete(const api::UnstructuredPtr& obj) {
  absl::MutexLock l(&mu_);
  objects_.erase(ObjKey(obj->metadata.namespace_, obj->kind, obj->metadata.name));
  if (IsTopologyObject(*obj)) topologies_.erase(TopologyKey(*obj));
  if (IsHyperNodeObject(*obj)) hyper_nodes_.erase(obj->metadata.name);
  auto it = specs_by_object_.find(obj->Key());
  if (it == specs_by_object_.end()) return;
  for (const auto& k : it->second) object_specs_.erase(k);
  specs_by_object_.erase(it);
}

std::shared_ptr<const Topology> DefaultPodGroupManager::TopologyOf(const std::string& name) const {
  absl::MutexLock l(&mu_);
  if (name.find('/') != std::string::npos) {  // "<group>/<name>" (ClusterNetworkTopology)
    auto it = topologies_.find(name);
    return it == topologies_.end() ? nullptr : it->second;
  }
  for (const char* group : {"kai.scheduler/", "kueue.x-k8s.io/"}) {
    auto it = topologies_.find(group + name);
    if (it != topologies_.end()) return it->second;
  }
  return nullptr;
}

std::vector<std::shared_ptr<const HyperNode>> DefaultPodGroupManager::HyperNodes() const {
  absl::MutexLock l(&mu_);
  std::vector<std::shared_ptr<const HyperNode>> out;
  out.reserve(hyper_nodes_.size());
  for (const auto& [name, h] : hyper_nodes_) out.push_back(h);
  return out;
}

const api::Unstructured* DefaultPodGroupManager::OwnerLocked(const std::string& ns,
                                                             const std::string& kind,
                                                             const std::string& name) const {
  auto it = objects_.find(ObjKey(ns, kind, name));
  return it == objects_.end() ? nullptr : it->second.get();
}

std::optional<GangRef> DefaultPodGroupManager::ResolveLocked(const api::Pod& pod) const {
  return ResolvePodGang(
      pod, opts_,
      [this](const std::string& ns, const std::string& kind, const std::string& name)
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return OwnerLocked(ns, kind, name); });
}

std::string DefaultPodGroupManager::GangPriorityClassOf(const api::Pod& pod) const {
  if (!has_gang_priorities_.load(std::memory_order_relaxed)) return "";
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || it->second.gang_state == nullptr) return "";
  const auto spec = SpecLocked(*it->second.gang_state, it->second.gang);
  return spec ? spec->priority_class_name : std::string();
}

void DefaultPodGroupManager::EnablePodGrouper(bool enabled) {
  absl::MutexLock l(&mu_);
  opts_.pod_grouper = enabled;
}

void DefaultPodGroupManager::AddPodLocked(const api::PodPtr& pod, api::Timestamp now) {
  if (Terminal(*pod)) {
    FinishPodLocked(pod);
    return;
  }
  auto ref = ResolveLocked(*pod);
  if (!ref) return;
  const std::string pkey = pod->Key();
  Gang& g = gangs_[ref->key];
  if (g.members.empty() && !g.ref) g.ref = std::make_shared<const GangRef>(*ref);
  if (ref->inline_spec && !g.inline_spec) {
    g.inline_spec = std::make_shared<const PodGroupSpec>(*ref->inline_spec);
    if (!g.inline_spec->priority_class_name.empty()) has_gang_priorities_.store(true);
  }
  if (g.members.insert(pkey).second) {
    // A new pod of a finished member's name (a recreated pod) takes its place.
    if (auto f = g.finished.find(pkey); f != g.finished.end()) {
      --(f->second ? g.counts.succeeded : g.counts.failed);
      g.finished.erase(f);
    }
    ++g.counts.pods;
    PodEntry e;
    e.gang = ref->key;
    e.gang_state = &g;
    e.sub_group = SubGroupNameOf(ref->dialect, *pod);
    e.state = pod->spec.node_name.empty() ? PodEntry::kPending : PodEntry::kBound;
    e.running = pod->status.phase == "Running";
    if (e.running) ++g.counts.running;
    if (e.state == PodEntry::kBound) {
      ++g.counts.bound;
    } else {
      ++g.counts.pending;
    }
    CountSubGroup(g, e, 1);
    pods_[pkey] = std::move(e);
  }
  auto spec = SpecLocked(g, ref->key);
  if (spec && !g.has_quorum && g.counts.pods >= spec->min_member) {
    g.has_quorum = true;
    g.quorum_time = now;
  }
  UpdateSatisfiedLocked(g, ref->key, now);
}

std::string DefaultPodGroupManager::FinishPodLocked(const api::PodPtr& pod) {
  if (!Terminal(*pod)) return "";
  const std::string pkey = pod->Key();
  std::string key;
  if (auto it = pods_.find(pkey); it != pods_.end()) {
    key = it->second.gang;
    RemovePodLocked(pkey);
  } else {
    auto ref = ResolveLocked(*pod);
    if (!ref) return "";
    key = ref->key;
    // Only gangs that are known (members seen) or have an object: the terminal-pod list
    // at startup holds every finished pod of the cluster, and old derived gangs (finished
    // Jobs) must not come back as gang state and metrics.
    auto known = gangs_.find(key);
    if (known == gangs_.end() &&
        !object_specs_.count(ref->spec_key.empty() ? key : ref->spec_key)) {
      return "";
    }
    Gang& g = gangs_[key];
    if (!g.ref) g.ref = std::make_shared<const GangRef>(*ref);
  }
  Gang& g = gangs_[key];
  const bool ok = pod->status.phase == "Succeeded";
  auto [f, inserted] = g.finished.emplace(pkey, ok);
  if (!inserted) {
    if (f->second == ok) return key;
    --(f->second ? g.counts.succeeded : g.counts.failed);
    f->second = ok;
  }
  ++(ok ? g.counts.succeeded : g.counts.failed);
  return key;
}

std::string DefaultPodGroupManager::OnPodFinished(const api::PodPtr& pod) {
  absl::MutexLock l(&mu_);
  return FinishPodLocked(pod);
}

void DefaultPodGroupManager::RemovePodLocked(const std::string& pkey) {
  auto it = pods_.find(pkey);
  if (it == pods_.end()) return;
  auto git = gangs_.find(it->second.gang);
  if (git != gangs_.end()) {
    Gang& g = git->second;
    g.members.erase(pkey);
    --g.counts.pods;
    if (it->second.running) --g.counts.running;
    CountSubGroup(g, it->second, -1);
    switch (it->second.state) {
      case PodEntry::kPending:
        --g.counts.pending;
        break;
      case PodEntry::kAssumed:
        --g.counts.assumed;
        break;
      case PodEntry::kBound:
        --g.counts.bound;
        break;
    }
    if (it->second.state != PodEntry::kPending && g.counts.satisfied_once) {
      running_losses_.insert(it->second.gang);
    }
    // Finished gangs stay (their counts are zero) so that reports can still show them.
  }
  pods_.erase(it);
}

void DefaultPodGroupManager::OnPodAdd(const api::PodPtr& pod, api::Timestamp now) {
  absl::MutexLock l(&mu_);
  AddPodLocked(pod, now);
}

void DefaultPodGroupManager::OnPodUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod,
                                         api::Timestamp now) {
  absl::MutexLock l(&mu_);
  const std::string pkey = new_pod->Key();
  if (Terminal(*new_pod)) {
    FinishPodLocked(new_pod);
    return;
  }
  auto it = pods_.find(pkey);
  if (it == pods_.end()) {
    AddPodLocked(new_pod, now);
    return;
  }
  if (const bool running = new_pod->status.phase == "Running"; running != it->second.running) {
    gangs_[it->second.gang].counts.running += running ? 1 : -1;
    it->second.running = running;
  }
  if (!new_pod->spec.node_name.empty() && it->second.state != PodEntry::kBound) {
    Gang& g = gangs_[it->second.gang];
    if (it->second.state == PodEntry::kPending) {
      --g.counts.pending;
    } else {
      --g.counts.assumed;
    }
    ++g.counts.bound;
    CountSubGroup(g, it->second, -1);
    it->second.state = PodEntry::kBound;
    CountSubGroup(g, it->second, 1);
    UpdateSatisfiedLocked(g, it->second.gang, now);
    if (!g.running) {
      auto spec = SpecLocked(g, it->second.gang);
      if (spec && g.counts.bound >= spec->min_member) {
        g.running = true;
        g.running_time = now;
      }
    }
  }
}

void DefaultPodGroupManager::OnPodDelete(const api::PodPtr& pod) {
  absl::MutexLock l(&mu_);
  RemovePodLocked(pod->Key());
}

std::optional<GangRef> DefaultPodGroupManager::RefOf(const api::Pod& pod) const {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end()) return std::nullopt;
  auto git = gangs_.find(it->second.gang);
  if (git == gangs_.end()) return std::nullopt;
  if (!git->second.ref) return GangRef{};
  GangRef r = *git->second.ref;
  return r;
}

std::shared_ptr<const GangRef> DefaultPodGroupManager::RefPtrOf(const api::Pod& pod) const {
  // "namespace/name" on the stack (heap only for keys longer than the buffer).
  const std::string& ns = pod.metadata.namespace_;
  const std::string& name = pod.metadata.name;
  char buf[256];
  std::string heap;
  std::string_view key;
  if (ns.size() + name.size() + 1 <= sizeof buf) {
    std::memcpy(buf, ns.data(), ns.size());
    buf[ns.size()] = '/';
    std::memcpy(buf + ns.size() + 1, name.data(), name.size());
    key = std::string_view(buf, ns.size() + 1 + name.size());
  } else {
    heap = pod.Key();
    key = heap;
  }
  absl::MutexLock l(&mu_);
  auto it = pods_.find(key);
  if (it == pods_.end()) return nullptr;
  const Gang* g = it->second.gang_state;
  if (!g) {
    auto git = gangs_.find(it->second.gang);
    if (git == gangs_.end()) return nullptr;
    g = &git->second;
  }
  if (!g->ref) return std::make_shared<const GangRef>();
  return g->ref;
}

std::shared_ptr<const PodGroupSpec> DefaultPodGroupManager::SpecLocked(
    const Gang& g, const std::string& key) const {
  auto it = object_specs_.find(!g.ref || g.ref->spec_key.empty() ? key : g.ref->spec_key);
  if (it != object_specs_.end()) {
    if (it->second->key == key) return it->second;
    auto copy = std::make_shared<PodGroupSpec>(*it->second);
    copy->key = key;  // a replica of a Workload pod group
    return copy;
  }
  return g.inline_spec;
}

void DefaultPodGroupManager::CountSubGroup(Gang& g, const PodEntry& e, int32_t delta) {
  g.sub_group_pods[e.sub_group] += delta;
  if (e.state != PodEntry::kPending) g.sub_group_active[e.sub_group] += delta;
}

void DefaultPodGroupManager::UpdateSatisfiedLocked(Gang& g, const std::string& key,
                                                   api::Timestamp now) {
  auto spec = SpecLocked(g, key);
  if (!spec || !spec->invalid.empty()) return;
  if (!g.counts.satisfied_once && g.counts.assumed + g.counts.bound >= spec->min_member &&
      ShortSubGroup(*spec, g.sub_group_active, "assumed or bound").ok()) {
    g.counts.satisfied_once = true;
    g.satisfied_time = now;
  }
}

std::optional<GangInfo> DefaultPodGroupManager::Info(const std::string& key,
                                                     bool with_members) const {
  absl::MutexLock l(&mu_);
  auto it = gangs_.find(key);
  if (it == gangs_.end()) {
    auto sit = object_specs_.find(key);
    if (sit == object_specs_.end()) return std::nullopt;
    GangInfo info;
    info.key = key;
    info.spec = sit->second;
    return info;
  }
  return InfoLocked(it->second, key, with_members, /*planning_only=*/false);
}

std::optional<GangInfo> DefaultPodGroupManager::PlanningInfo(const std::string& key) const {
  absl::MutexLock l(&mu_);
  auto it = gangs_.find(key);
  if (it == gangs_.end()) {
    auto sit = object_specs_.find(key);
    if (sit == object_specs_.end()) return std::nullopt;
    GangInfo info;
    info.key = key;
    info.spec = sit->second;
    return info;
  }
  return InfoLocked(it->second, key, /*with_members=*/true, /*planning_only=*/true);
}

GangInfo DefaultPodGroupManager::InfoLocked(const Gang& g, const std::string& key,
                                            bool with_members, bool planning_only) const {
  GangInfo info;
  info.key = key;
  info.spec = SpecLocked(g, key);
  info.counts = g.counts;
  // Planning reads the per-member subgroups and the subgroup counts only for a spec with
  // subgroups (GangScheduling's PlanSubGroups).
  const bool sub_groups = !planning_only || (info.spec && !info.spec->sub_groups.empty());
  if (with_members) {
    info.member_pods.assign(g.members.begin(), g.members.end());
    if (sub_groups) {
      info.member_sub_groups.reserve(info.member_pods.size());
      info.member_active.reserve(info.member_pods.size());
      for (const auto& m : info.member_pods) {
        auto pit = pods_.find(m);
        const bool known = pit != pods_.end();
        info.member_sub_groups.push_back(known ? pit->second.sub_group : std::string());
        info.member_active.push_back(known && pit->second.state != PodEntry::kPending);
      }
    }
  }
  if (sub_groups) {
    info.sub_group_pods = g.sub_group_pods;
    info.sub_group_active = g.sub_group_active;
  }
  if (planning_only) return info;
  if (g.ref) info.ref = *g.ref;
  info.attempts = g.attempts;
  info.last_reason = g.last_reason;
  info.quorum_time = g.quorum_time;
  info.satisfied_time = g.satisfied_time;
  info.running_time = g.running_time;
  info.has_quorum = g.has_quorum;
  info.running = g.running;
  return info;
}

std::optional<DefaultPodGroupManager::Summary> DefaultPodGroupManager::SummaryOf(
    const std::string& key) const {
  absl::MutexLock l(&mu_);
  auto it = gangs_.find(key);
  if (it == gangs_.end()) {
    auto sit = object_specs_.find(key);
    if (sit == object_specs_.end()) return std::nullopt;
    return Summary{sit->second, GangCounts{}};
  }
  return Summary{SpecLocked(it->second, key), it->second.counts};
}

std::vector<std::string> DefaultPodGroupManager::GroupOf(const std::string& key) const {
  absl::MutexLock l(&mu_);
  std::vector<std::string> out{key};
  auto it = gangs_.find(key);
  std::shared_ptr<const PodGroupSpec> spec;
  if (it != gangs_.end()) {
    spec = SpecLocked(it->second, key);
  } else if (auto sit = object_specs_.find(key); sit != object_specs_.end()) {
    spec = sit->second;
  }
  if (spec) {
    for (const auto& k : spec->gang_group) {
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void DefaultPodGroupManager::MarkAssumed(const api::Pod& pod, api::Timestamp now) {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || it->second.state != PodEntry::kPending) return;
  Gang& g = gangs_[it->second.gang];
  --g.counts.pending;
  ++g.counts.assumed;
  CountSubGroup(g, it->second, -1);
  it->second.state = PodEntry::kAssumed;
  CountSubGroup(g, it->second, 1);
  UpdateSatisfiedLocked(g, it->second.gang, now);
}

void DefaultPodGroupManager::MarkForgotten(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || it->second.state != PodEntry::kAssumed) return;
  Gang& g = gangs_[it->second.gang];
  --g.counts.assumed;
  ++g.counts.pending;
  CountSubGroup(g, it->second, -1);
  it->second.state = PodEntry::kPending;
  CountSubGroup(g, it->second, 1);
  if (g.counts.satisfied_once) running_losses_.insert(it->second.gang);
  // A gang that was satisfied only by assumed members that are now forgotten is not
  // satisfied any more (rollback).
  auto spec = SpecLocked(g, it->second.gang);
  if (spec && g.counts.bound < spec->min_member &&
      g.counts.assumed + g.counts.bound < spec->min_member && g.counts.bound == 0) {
    g.counts.satisfied_once = false;
  }
}

void DefaultPodGroupManager::RecordAttempt(const std::string& key, const std::string& reason) {
  absl::MutexLock l(&mu_);
  auto it = gangs_.find(key);
  if (it == gangs_.end()) return;
  ++it->second.attempts;
  it->second.last_reason = reason;
}

bool DefaultPodGroupManager::Satisfied(const std::string& key) const {
  absl::MutexLock l(&mu_);
  auto it = gangs_.find(key);
  if (it == gangs_.end()) return false;
  const Gang& g = it->second;
  auto spec = SpecLocked(g, key);
  if (!spec || !spec->invalid.empty()) return false;
  // Every subgroup quorum too: a gang whose summed count is reached by one subgroup alone
  // is not satisfied (subgroups.h).
  auto sub_groups_met = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ShortSubGroup(*spec, g.sub_group_active, "assumed or bound").ok();
  };
  switch (spec->match_policy) {
    case MatchPolicy::kOnceSatisfied:
      return g.counts.satisfied_once ||
             (g.counts.assumed + g.counts.bound >= spec->min_member && sub_groups_met());
    case MatchPolicy::kWaitingAndRunning:
      return g.counts.assumed + g.counts.bound >= spec->min_member && sub_groups_met();
    case MatchPolicy::kOnlyWaiting:
      return g.counts.assumed >= spec->min_member;
  }
  return false;
}

std::vector<std::string> DefaultPodGroupManager::TakeRunningLosses() {
  absl::MutexLock l(&mu_);
  std::vector<std::string> out(running_losses_.begin(), running_losses_.end());
  running_losses_.clear();
  return out;
}

std::vector<std::string> DefaultPodGroupManager::GangKeys() const {
  absl::MutexLock l(&mu_);
  std::vector<std::string> out;
  out.reserve(gangs_.size());
  for (const auto& [k, g] : gangs_) out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace phalanx::gang
