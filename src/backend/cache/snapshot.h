// Snapshot: the scheduling cycle's immutable view of the cluster
// (upstream pkg/scheduler/backend/cache/snapshot.go). Updated incrementally by
// Cache::UpdateSnapshot: only NodeInfos whose generation moved are copied.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "framework/handle.h"
#include "framework/pod_affinity_index.h"
#include "framework/types.h"

namespace phalanx::cache {

class Snapshot : public framework::NodeInfoLister {
 public:
  Snapshot() = default;
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  // Builds a standalone snapshot (tests, benchmarks) from nodes and assigned pods.
  static std::unique_ptr<Snapshot> FromObjects(const std::vector<api::NodePtr>& nodes,
                                               const std::vector<api::PodPtr>& pods);

  const std::vector<const framework::NodeInfo*>& List() const override { return list_; }
  const std::vector<const framework::NodeInfo*>& HavePodsWithAffinityList() const override {
    return have_affinity_;
  }
  const std::vector<const framework::NodeInfo*>& HavePodsWithRequiredAntiAffinityList()
      const override {
    return have_required_anti_affinity_;
  }
  const framework::NodeInfo* Get(std::string_view node_name) const override;
  int32_t NumNodesWithImage(const std::string& image) const override {
    auto it = image_counts_.find(image);
    return it == image_counts_.end() ? 0 : it->second;
  }
  // Enabled on the first call (a walk of every pod), then maintained by Cache::UpdateSnapshot
  // and the view edits below.
  framework::PodAffinityIndex* AffinityIndex() const override {
    if (!affinity_index_.enabled()) affinity_index_.Enable(list_);
    return &affinity_index_;
  }
  int64_t generation() const { return generation_; }
  size_t NumNodes() const { return list_.size(); }
  // NodeInfo::generation() of each node of List(), at the same positions: a contiguous
  // array, so that a pass over thousands of nodes can tell which changed without loading
  // their NodeInfos (plain-pod batching, Scheduler::FilterNodesCached).
  const std::vector<int64_t>& NodeGenerations() const { return generations_; }

  // Mutable access for the PodGroup cycle's copy-on-write placement and for the cache.
  framework::NodeInfo* GetMutable(std::string_view node_name);

  // The PodGroup cycle's view: places `pod` (spec.nodeName set) on its node in this
  // snapshot only. The cache is untouched; the next Cache::UpdateSnapshot restores every
  // node changed this way from the cache (whether the cycle committed or not).
  // Returns false if the node is not in the snapshot.
  bool AddPodToView(const framework::PodInfoPtr& pod);
  // The reverse, for the PodGroup cycle's preemption dry run
  // (src/plugins/defaultpreemption/podgroup_preemption.h): takes `pod` (bound or assumed on
  // spec.nodeName) off its node in this snapshot only; restored like AddPodToView. Returns false if
  // the node or the pod is not there.
  bool RemovePodFromView(const api::Pod& pod);
  bool HasViewChanges() const { return !stale_.empty(); }

 private:
  friend class Cache;
  void RebuildLists(const std::vector<std::string>& order);
  // Rebuilds have_affinity_ / have_required_anti_affinity_ from flags_ (no NodeInfo read).
  void RebuildAffinityLists();
  // Refreshes `ni`'s flags (bit 0: pods with affinity, bit 1: with required anti-affinity)
  // and its generations_ entry, and marks the affinity lists stale when the flags changed;
  // false when `ni` is not in list_.
  bool UpdateAffinityFlags(const framework::NodeInfo& ni);
  static uint8_t AffinityFlags(const framework::NodeInfo& ni) {
    return static_cast<uint8_t>((ni.pods_with_affinity().empty() ? 0 : 1) |
                                (ni.pods_with_required_anti_affinity().empty() ? 0 : 2));
  }
  void RefreshImageCounts();
  void ApplyImageCounts(framework::NodeInfo* ni);

  // By name; SwissTable with heterogeneous lookup (Get takes a string_view without a copy).
  // Never iterated where the order matters (list_ keeps the cache's node order).
  absl::flat_hash_map<std::string, std::unique_ptr<framework::NodeInfo>> map_;
  std::vector<const framework::NodeInfo*> list_;
  std::vector<const framework::NodeInfo*> have_affinity_;
  std::vector<const framework::NodeInfo*> have_required_anti_affinity_;
  // Parallel to list_: AffinityFlags of each node, and each NodeInfo's position in list_,
  // so that a node gaining or losing its first pod with affinity costs a walk of bytes,
  // not a rebuild of every list by name.
  std::vector<uint8_t> flags_;
  std::vector<int64_t> generations_;                                    // NodeGenerations()
  absl::flat_hash_map<const framework::NodeInfo*, uint32_t> position_;  // never iterated
  bool affinity_lists_stale_ = false;
  std::unordered_map<std::string, int32_t> image_counts_;  // image -> nodes having it
  std::vector<std::string> stale_;                         // nodes changed by AddPodToView
  // Lazily enabled by AffinityIndex() (a const lister call on the scheduling thread).
  mutable framework::PodAffinityIndex affinity_index_;
  int64_t generation_ = 0;
};

}  // namespace phalanx::cache
