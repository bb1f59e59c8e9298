#include "backend/cache/snapshot.h"

#include "backend/cache/cache.h"

namespace phalanx::cache {

std::unique_ptr<Snapshot> Snapshot::FromObjects(const std::vector<api::NodePtr>& nodes,
                                                const std::vector<api::PodPtr>& pods) {
  Cache c;
  for (const auto& n : nodes) c.AddNode(n);
  for (const auto& p : pods) {
    if (!p->spec.node_name.empty()) (void)c.AddPod(framework::PodInfo::Make(p));
  }
  auto s = std::make_unique<Snapshot>();
  c.UpdateSnapshot(s.get());
  return s;
}

const framework::NodeInfo* Snapshot::Get(std::string_view node_name) const {
  auto it = map_.find(std::string(node_name));
  return it == map_.end() ? nullptr : it->second.get();
}

framework::NodeInfo* Snapshot::GetMutable(std::string_view node_name) {
  auto it = map_.find(std::string(node_name));
  return it == map_.end() ? nullptr : it->second.get();
}

void Snapshot::RebuildLists(const std::vector<std::string>& order) {
  list_.clear();
  have_affinity_.clear();
  have_required_anti_affinity_.clear();
  list_.reserve(order.size());
  for (const auto& name : order) {
    auto it = map_.find(name);
    if (it == map_.end()) continue;
    const framework::NodeInfo* ni = it->second.get();
    list_.push_back(ni);
    if (!ni->pods_with_affinity().empty()) have_affinity_.push_back(ni);
    if (!ni->pods_with_required_anti_affinity().empty()) {
      have_required_anti_affinity_.push_back(ni);
    }
  }
}

bool Snapshot::AddPodToView(const framework::PodInfoPtr& pod) {
  framework::NodeInfo* ni = GetMutable(pod->pod->spec.node_name);
  if (ni == nullptr) return false;
  const bool had = !ni->pods_with_affinity().empty() || !ni->pods_with_required_anti_affinity().empty();
  ni->AddPod(pod);
  stale_.push_back(pod->pod->spec.node_name);
  if (!had && (pod->has_affinity || pod->has_required_anti_affinity)) RebuildAffinityLists();
  return true;
}

bool Snapshot::RemovePodFromView(const api::Pod& pod) {
  framework::NodeInfo* ni = GetMutable(pod.spec.node_name);
  if (ni == nullptr) return false;
  const bool had =
      !ni->pods_with_affinity().empty() || !ni->pods_with_required_anti_affinity().empty();
  if (!ni->RemovePod(pod)) return false;
  stale_.push_back(pod.spec.node_name);
  if (had) RebuildAffinityLists();
  return true;
}

void Snapshot::RebuildAffinityLists() {
  have_affinity_.clear();
  have_required_anti_affinity_.clear();
  for (const auto* ni : list_) {
    if (!ni->pods_with_affinity().empty()) have_affinity_.push_back(ni);
    if (!ni->pods_with_required_anti_affinity().empty()) have_required_anti_affinity_.push_back(ni);
  }
}

void Snapshot::RefreshImageCounts() {
  image_counts_.clear();
  for (const auto* ni : list_) {
    for (const auto& [name, st] : ni->image_states()) ++image_counts_[name];
  }
  for (auto& [_, ni] : map_) ApplyImageCounts(ni.get());
}

void Snapshot::ApplyImageCounts(framework::NodeInfo* ni) {
  for (auto& [name, st] : ni->image_states()) {
    auto it = image_counts_.find(name);
    st.num_nodes = it == image_counts_.end() ? 0 : it->second;
  }
}

}  // namespace phalanx::cache
