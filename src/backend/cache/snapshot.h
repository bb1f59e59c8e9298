// Snapshot: the scheduling cycle's immutable view of the cluster
// (upstream pkg/scheduler/backend/cache/snapshot.go). Updated incrementally by
// Cache::UpdateSnapshot: only NodeInfos whose generation moved are copied.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/handle.h"
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
  int64_t generation() const { return generation_; }
  size_t NumNodes() const { return list_.size(); }

  // Mutable access for the PodGroup cycle's copy-on-write placement and for the cache.
  framework::NodeInfo* GetMutable(std::string_view node_name);

  // The PodGroup cycle's view: places `pod` (spec.nodeName set) on its node in this
  // snapshot only. The cache is untouched; the next Cache::UpdateSnapshot restores every
  // node changed this way from the cache (whether the cycle committed or not).
  // Returns false if the node is not in the snapshot.
  bool AddPodToView(const framework::PodInfoPtr& pod);
  // The reverse, for the PodGroup cycle's preemption dry run (podgroup_preemption.h):
  // takes `pod` (bound or assumed on spec.nodeName) off its node in this snapshot only;
  // restored like AddPodToView. Returns false if the node or the pod is not there.
  bool RemovePodFromView(const api::Pod& pod);
  bool HasViewChanges() const { return !stale_.empty(); }

 private:
  friend class Cache;
  void RebuildLists(const std::vector<std::string>& order);
  void RebuildAffinityLists();
  void RefreshImageCounts();
  void ApplyImageCounts(framework::NodeInfo* ni);

  std::unordered_map<std::string, std::unique_ptr<framework::NodeInfo>> map_;
  std::vector<const framework::NodeInfo*> list_;
  std::vector<const framework::NodeInfo*> have_affinity_;
  std::vector<const framework::NodeInfo*> have_required_anti_affinity_;
  std::unordered_map<std::string, int32_t> image_counts_;  // image -> nodes having it
  std::vector<std::string> stale_;  // nodes changed by AddPodToView
  int64_t generation_ = 0;
};

}  // namespace phalanx::cache
