#include "backend/cache/cache.h"

#include <algorithm>

namespace phalanx::cache {

using framework::PodInfoPtr;
using framework::Status;

framework::NodeInfo& Cache::NodeFor(const std::string& name) {
  auto& slot = nodes_[name];
  if (!slot) slot = std::make_unique<framework::NodeInfo>();
  return *slot;
}

void Cache::Touch(framework::NodeInfo& ni, const std::string& name) {
  ni.set_generation(++generation_);
  dirty_.insert(name);
}

void Cache::AddPodToNode(const PodInfoPtr& pod) {
  const std::string& node = pod->pod->spec.node_name;
  auto& ni = NodeFor(node);
  ni.AddPod(pod);
  Touch(ni, node);
}

void Cache::RemovePodFromNode(const api::Pod& pod) {
  auto it = nodes_.find(pod.spec.node_name);
  if (it == nodes_.end()) return;
  it->second->RemovePod(pod);
  Touch(*it->second, pod.spec.node_name);
  MaybeRemoveNodeEntry(pod.spec.node_name);
}

void Cache::MaybeRemoveNodeEntry(const std::string& name) {
  auto it = nodes_.find(name);
  if (it != nodes_.end() && it->second->node() == nullptr && it->second->pods().empty()) {
    nodes_.erase(it);
    dirty_.insert(name);
  }
}

Status Cache::AssumePod(PodInfoPtr pod) {
  absl::MutexLock l(&mu_);
  std::string key = pod->pod->Key();
  auto [it, inserted] = pods_.try_emplace(key);
  if (!inserted) return Status::Error("pod " + key + " is in the cache, so can't be assumed");
  AddPodToNode(pod);
  it->second = PodState{std::move(pod), true, false, 0};
  assumed_.insert(std::move(key));
  return Status::Success();
}

Status Cache::FinishBinding(const api::Pod& pod, api::Timestamp now) {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || !it->second.assumed) return Status::Success();
  it->second.binding_finished = true;
  it->second.deadline = now + ttl_ns_;
  return Status::Success();
}

Status Cache::ForgetPod(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  std::string key = pod.Key();
  auto it = pods_.find(key);
  if (it == pods_.end() || !it->second.assumed) {
    return Status::Error("pod " + key + " wasn't assumed so cannot be forgotten");
  }
  if (it->second.pod->pod->spec.node_name != pod.spec.node_name) {
    return Status::Error("pod " + key + " was assumed on " + it->second.pod->pod->spec.node_name +
                         " but assigned to " + pod.spec.node_name);
  }
  RemovePodFromNode(*it->second.pod->pod);
  pods_.erase(it);
  assumed_.erase(key);
  return Status::Success();
}

Status Cache::AddPod(PodInfoPtr pod, PodInfoPtr* confirmed) {
  if (confirmed) confirmed->reset();
  absl::MutexLock l(&mu_);
  std::string key = pod->pod->Key();
  auto it = pods_.find(key);
  if (it != pods_.end()) {
    if (!it->second.assumed) return Status::Error("pod " + key + " was already in added state");
    // Confirm the assumed pod; the API's node wins if it differs.
    const api::Pod& was = *it->second.pod->pod;
    auto nit = nodes_.find(was.spec.node_name);
    if (nit != nodes_.end() && was.spec.node_name == pod->pod->spec.node_name) {
      // Same node (the usual confirmation): one node lookup; removed and added as below
      // (two touches), and the entry stays (it holds the pod).
      framework::NodeInfo& ni = *nit->second;
      ni.RemovePod(was);
      Touch(ni, nit->first);
      ni.AddPod(pod);
      Touch(ni, nit->first);
    } else {
      RemovePodFromNode(was);
      AddPodToNode(pod);
    }
    if (confirmed) *confirmed = std::move(it->second.pod);
    it->second = PodState{std::move(pod), false, false, 0};
    assumed_.erase(key);
    return Status::Success();
  }
  AddPodToNode(pod);
  pods_[key] = PodState{std::move(pod), false, false, 0};
  return Status::Success();
}

Status Cache::UpdatePod(const api::Pod& old_pod, PodInfoPtr new_pod) {
  absl::MutexLock l(&mu_);
  std::string key = old_pod.Key();
  auto it = pods_.find(key);
  if (it == pods_.end() || it->second.assumed) {
    return Status::Error("pod " + key + " is not added to scheduler cache, so cannot be updated");
  }
  RemovePodFromNode(*it->second.pod->pod);
  AddPodToNode(new_pod);
  it->second.pod = std::move(new_pod);
  return Status::Success();
}

Status Cache::RemovePod(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  std::string key = pod.Key();
  auto it = pods_.find(key);
  if (it == pods_.end()) return Status::Error("pod " + key + " not found in the cache");
  RemovePodFromNode(*it->second.pod->pod);
  assumed_.erase(key);
  pods_.erase(it);
  return Status::Success();
}

bool Cache::IsAssumedPod(const api::Pod& pod) const {
  absl::MutexLock l(&mu_);
  return assumed_.count(pod.Key()) > 0;
}

PodInfoPtr Cache::GetPod(const api::Pod& pod) const {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  return it == pods_.end() ? nullptr : it->second.pod;
}

void Cache::AddNode(api::NodePtr node) {
  absl::MutexLock l(&mu_);
  const std::string name = node->metadata.name;
  auto& ni = NodeFor(name);
  bool had_node = ni.node() != nullptr;
  ni.SetNode(std::move(node));
  if (!had_node) {
    node_order_.push_back(name);
    order_changed_ = true;
  }
  images_changed_ = true;
  Touch(ni, name);
}

void Cache::UpdateNode(api::NodePtr node) { AddNode(std::move(node)); }

void Cache::RemoveNode(const api::Node& node) {
  absl::MutexLock l(&mu_);
  const std::string& name = node.metadata.name;
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  // Pods keep their place until they are deleted, as upstream: the NodeInfo stays
  // without a Node object and leaves the snapshot list.
  it->second->RemoveNode();
  Touch(*it->second, name);
  std::erase(node_order_, name);
  order_changed_ = true;
  images_changed_ = true;
  MaybeRemoveNodeEntry(name);
}

std::vector<std::string> Cache::CleanupExpiredAssumedPods(api::Timestamp now) {
  absl::MutexLock l(&mu_);
  std::vector<std::string> expired;
  if (ttl_ns_ <= 0) return expired;
  for (auto it = assumed_.begin(); it != assumed_.end();) {
    auto pit = pods_.find(*it);
    if (pit != pods_.end() && pit->second.binding_finished && now > pit->second.deadline) {
      RemovePodFromNode(*pit->second.pod->pod);
      expired.push_back(*it);
      pods_.erase(pit);
      it = assumed_.erase(it);
    } else {
      ++it;
    }
  }
  return expired;
}

void Cache::UpdateSnapshot(Snapshot* s) {
  absl::MutexLock l(&mu_);
  bool rebuild = order_changed_;
  // Nodes a PodGroup cycle changed in the snapshot's view are restored from the cache.
  // Their NodeInfos keep their addresses, so the lists stay valid unless the affinity
  // lists changed (checked per node below).
  for (auto& name : s->stale_) dirty_.insert(std::move(name));
  s->stale_.clear();
  // dirty_ holds the nodes changed since the last UpdateSnapshot, so it is complete only for
  // the snapshot that call updated (then at synced_generation_). Any other snapshot (a
  // fresh one, or one left behind while another was updated) is resynchronized from every
  // node, as upstream does by comparing NodeInfo generations with the snapshot's.
  const bool full = s->generation_ != synced_generation_;
  if (full) {
    // Both maps iterate in a per-process order (SwissTables): the names go in sorted, so
    // that the affinity index sees the nodes in the same order on every run.
    std::vector<std::string> names;
    names.reserve(nodes_.size() + s->map_.size());
    for (const auto& [name, ni] : nodes_) names.push_back(name);
    for (const auto& [name, ni] : s->map_) names.push_back(name);
    std::sort(names.begin(), names.end());
    for (auto& name : names) dirty_.insert(std::move(name));
    rebuild = true;
  }
  for (const auto& name : dirty_) {
    auto it = nodes_.find(name);
    auto sit = s->map_.find(name);
    framework::PodAffinityIndex& index = s->affinity_index_;
    if (it == nodes_.end() || it->second->node() == nullptr) {
      if (sit != s->map_.end()) {
        index.RemoveNodePods(*sit->second);
        s->map_.erase(sit);
        rebuild = true;
      }
      continue;
    }
    const framework::NodeInfo& src = *it->second;
    framework::NodeInfo* copy;
    if (sit == s->map_.end()) {
      copy = s->map_.emplace(name, std::make_unique<framework::NodeInfo>(src)).first->second.get();
      index.AddNodePods(*copy);
      rebuild = true;
    } else {
      copy = sit->second.get();
      if (!index.enabled()) {
        *copy = src;
      } else if (copy->node() != src.node()) {
        // A new Node object (labels may differ): recount the node's pods under it.
        index.RemoveNodePods(*copy);
        *copy = src;
        index.AddNodePods(*copy);
      } else {
        std::vector<const framework::PodInfo*> before;
        before.reserve(copy->pods().size());
        for (const auto& p : copy->pods()) before.push_back(p.get());
        *copy = src;
        index.SyncPods(std::move(before), *copy);
      }
    }
    if (!copy->image_states().empty()) s->ApplyImageCounts(copy);
    // The NodeInfo kept its address: the lists stay valid, only its membership in the
    // affinity lists may have changed (unknown position: a new node, rebuilt below).
    if (!rebuild && !s->UpdateAffinityFlags(*copy)) rebuild = true;
  }
  // clear() walks the whole bucket array: after a full resync (thousands of buckets) that
  // was a 40 KB memset on every later cycle. Drop the big table instead.
  if (dirty_.bucket_count() > 64) {
    std::unordered_set<std::string>().swap(dirty_);
  } else {
    dirty_.clear();
  }
  if (rebuild) {
    s->RebuildLists(node_order_);
  } else if (s->affinity_lists_stale_) {
    s->RebuildAffinityLists();
  }
  if (images_changed_ || order_changed_ || full) s->RefreshImageCounts();
  order_changed_ = false;
  images_changed_ = false;
  s->generation_ = generation_;
  synced_generation_ = generation_;
}

bool Cache::HasNode(const std::string& name) const {
  absl::MutexLock l(&mu_);
  auto it = nodes_.find(name);
  return it != nodes_.end() && it->second->node() != nullptr;
}

size_t Cache::NodeCount() const {
  absl::MutexLock l(&mu_);
  return node_order_.size();
}
size_t Cache::PodCount() const {
  absl::MutexLock l(&mu_);
  return pods_.size();
}
size_t Cache::AssumedPodCount() const {
  absl::MutexLock l(&mu_);
  return assumed_.size();
}

}  // namespace phalanx::cache
