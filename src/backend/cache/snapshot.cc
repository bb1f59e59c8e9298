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
  auto it = map_.find(absl::string_view(node_name.data(), node_name.size()));
  return it == map_.end() ? nullptr : it->second.get();
}

framework::NodeInfo* Snapshot::GetMutable(std::string_view node_name) {
  auto it = map_.find(absl::string_view(node_name.data(), node_name.size()));
  return it == map_.end() ? nullptr : it->second.get();
}

void Snapshot::RebuildLists(const std::vector<std::string>& order) {
  list_.clear();
  flags_.clear();
  generations_.clear();
  position_.clear();
  list_.reserve(order.size());
  flags_.reserve(order.size());
  generations_.reserve(order.size());
  position_.reserve(order.size());
  for (const auto& name : order) {
    auto it = map_.find(name);
    if (it == map_.end()) continue;
    const framework::NodeInfo* ni = it->second.get();
    position_.emplace(ni, static_cast<uint32_t>(list_.size()));
    list_.push_back(ni);
    flags_.push_back(AffinityFlags(*ni));
    generations_.push_back(ni->generation());
  }
  RebuildAffinityLists();
}

bool Snapshot::UpdateAffinityFlags(const framework::NodeInfo& ni) {
  auto it = position_.find(&ni);
  if (it == position_.end()) return false;
  generations_[it->second] = ni.generation();
  const uint8_t f = AffinityFlags(ni);
  if (flags_[it->second] != f) {
    flags_[it->second] = f;
    affinity_lists_stale_ = true;
  }
  return true;
}

bool Snapshot::AddPodToView(const framework::PodInfoPtr& pod) {
  framework::NodeInfo* ni = GetMutable(pod->pod->spec.node_name);
  if (ni == nullptr) return false;
  ni->AddPod(pod);
  if (affinity_index_.enabled() && ni->node() != nullptr) affinity_index_.AddPod(pod, *ni->node());
  stale_.push_back(pod->pod->spec.node_name);
  if (UpdateAffinityFlags(*ni) && affinity_lists_stale_) RebuildAffinityLists();
  return true;
}

bool Snapshot::RemovePodFromView(const api::Pod& pod) {
  framework::NodeInfo* ni = GetMutable(pod.spec.node_name);
  if (ni == nullptr) return false;
  framework::PodInfoPtr held;  // the PodInfo leaving, kept alive for the index
  if (affinity_index_.enabled()) {
    for (const auto& p : ni->pods()) {  // NodeInfo::RemovePod's match: namespace and name
      if (p->pod->metadata.name == pod.metadata.name &&
          p->pod->metadata.namespace_ == pod.metadata.namespace_) {
        held = p;
        break;
      }
    }
  }
  if (!ni->RemovePod(pod)) return false;
  if (held != nullptr && ni->node() != nullptr) affinity_index_.RemovePod(*held, *ni->node());
  stale_.push_back(pod.spec.node_name);
  if (UpdateAffinityFlags(*ni) && affinity_lists_stale_) RebuildAffinityLists();
  return true;
}

void Snapshot::RebuildAffinityLists() {
  have_affinity_.clear();
  have_required_anti_affinity_.clear();
  for (size_t i = 0; i < list_.size(); ++i) {
    if (flags_[i] & 1) have_affinity_.push_back(list_[i]);
    if (flags_[i] & 2) have_required_anti_affinity_.push_back(list_[i]);
  }
  affinity_lists_stale_ = false;
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
