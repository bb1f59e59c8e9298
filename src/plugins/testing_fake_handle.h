// A header-only fake framework::Handle for plugin unit tests: a settable node list (as a
// Snapshot would expose it, with ImageStateSummary::num_nodes filled), a settable clock
// and a recording cluster client. Not for production use.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/types.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::plugins::fake {

class FakeNodeLister final : public framework::NodeInfoLister {
 public:
  // Replaces the node list; fills image_states()[*].num_nodes with the number of nodes
  // holding each image name, like the Snapshot does.
  void Set(std::vector<framework::NodeInfo> nodes) {
    storage_.clear();
    list_.clear();
    affinity_.clear();
    anti_affinity_.clear();
    image_counts_.clear();
    for (auto& n : nodes) {
      for (const auto& [name, st] : n.image_states()) ++image_counts_[name];
      storage_.push_back(std::make_unique<framework::NodeInfo>(std::move(n)));
    }
    for (auto& n : storage_) {
      for (auto& [name, st] : n->image_states()) st.num_nodes = image_counts_[name];
      list_.push_back(n.get());
      if (!n->pods_with_affinity().empty()) affinity_.push_back(n.get());
      if (!n->pods_with_required_anti_affinity().empty()) anti_affinity_.push_back(n.get());
    }
  }
  // Like Set, but keeps the NodeInfo object of each node whose name and (nonzero)
  // generation are those of a node already listed, as the scheduler's snapshot keeps the
  // NodeInfos of unchanged nodes (caches keyed by NodeInfo and generation see them again).
  void Update(std::vector<framework::NodeInfo> nodes) {
    std::map<std::string, std::unique_ptr<framework::NodeInfo>> old;
    for (auto& n : storage_) {
      std::string name = n->name();
      old[name] = std::move(n);
    }
    std::vector<std::unique_ptr<framework::NodeInfo>> kept;
    for (auto& n : nodes) {
      auto it = old.find(n.name());
      if (n.generation() != 0 && it != old.end() && it->second->generation() == n.generation()) {
        kept.push_back(std::move(it->second));
        old.erase(it);
      } else {
        kept.push_back(std::make_unique<framework::NodeInfo>(std::move(n)));
      }
    }
    storage_.clear();
    list_.clear();
    affinity_.clear();
    anti_affinity_.clear();
    image_counts_.clear();
    storage_ = std::move(kept);
    for (auto& n : storage_) {
      for (const auto& [name, st] : n->image_states()) ++image_counts_[name];
    }
    for (auto& n : storage_) {
      for (auto& [name, st] : n->image_states()) st.num_nodes = image_counts_[name];
      list_.push_back(n.get());
      if (!n->pods_with_affinity().empty()) affinity_.push_back(n.get());
      if (!n->pods_with_required_anti_affinity().empty()) anti_affinity_.push_back(n.get());
    }
  }
  const std::vector<const framework::NodeInfo*>& List() const override { return list_; }
  const std::vector<const framework::NodeInfo*>& HavePodsWithAffinityList() const override {
    return affinity_;
  }
  const std::vector<const framework::NodeInfo*>& HavePodsWithRequiredAntiAffinityList()
      const override {
    return anti_affinity_;
  }
  const framework::NodeInfo* Get(std::string_view node_name) const override {
    for (const auto* n : list_) {
      if (n->name() == node_name) return n;
    }
    return nullptr;
  }
  int32_t NumNodesWithImage(const std::string& image) const override {
    auto it = image_counts_.find(image);
    return it == image_counts_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, int32_t> image_counts_;
  std::vector<std::unique_ptr<framework::NodeInfo>> storage_;
  std::vector<const framework::NodeInfo*> list_, affinity_, anti_affinity_;
};

class FakeClock final : public framework::Clock {
 public:
  api::Timestamp Now() const override { return now; }
  api::Timestamp now = 0;
};

// Records every call; Bind returns `bind_status`.
class FakeClient final : public framework::ClusterClient {
 public:
  api::Status Bind(const api::Pod& pod, const std::string& node) override {
    binds.emplace_back(pod.Key(), node);
    return bind_status;
  }
  api::Status DeletePod(const api::Pod& pod) override {
    deleted.push_back(pod.Key());
    return absl::OkStatus();
  }
  api::Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                              const std::string* nominated_node_name) override {
    status_updates.push_back(pod.Key());
    return absl::OkStatus();
  }
  void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                   std::string_view message) override {
    events.push_back(std::string(reason) + ": " + std::string(message));
  }
  api::Status PatchPodAnnotations(const api::Pod& pod,
                                  const std::map<std::string, std::string>& a) override {
    annotation_patches.emplace_back(pod.Key(), a);
    return patch_status;
  }

  // Records the object and calls on_put (e.g. a test's PV controller), then returns
  // put_status.
  api::Status PutObject(const api::Unstructured& obj) override {
    puts.push_back(obj);
    if (on_put) on_put(obj);
    return put_status;
  }

  // Records the object and returns it, or the error of post_check when it has one.
  api::StatusOr<api::Unstructured> PostObject(const api::Unstructured& obj) override {
    posts.push_back(obj);
    if (post_check) {
      if (api::Status s = post_check(obj); !s.ok()) return s;
    }
    return obj;
  }
  // Records "Kind namespace/name" and returns delete_status.
  api::Status DeleteObject(const api::Unstructured& obj) override {
    object_deletes.push_back(obj.kind + " " + obj.metadata.namespace_ + "/" + obj.metadata.name);
    return delete_status;
  }

  // Records the claim whose status is written (DynamicResources' PreBind / Unreserve).
  // Thread-safe (binding cycles run in parallel); on_claim_status runs first, outside the
  // lock.
  api::Status UpdateResourceClaimStatus(const api::Unstructured& claim) override {
    if (on_claim_status) on_claim_status(claim);
    absl::MutexLock l(&claim_mu_);
    claim_status_writes.push_back(claim);
    return absl::OkStatus();
  }
  std::function<void(const api::Unstructured&)> on_claim_status;
  absl::Mutex claim_mu_;

  std::vector<api::Unstructured> claim_status_writes;
  api::Status bind_status;
  api::Status patch_status;
  api::Status put_status;
  std::function<void(const api::Unstructured&)> on_put;
  std::vector<api::Unstructured> puts;
  std::function<api::Status(const api::Unstructured&)> post_check;
  api::Status delete_status;
  std::vector<api::Unstructured> posts;
  std::vector<std::string> object_deletes;
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> annotation_patches;
  std::vector<std::pair<std::string, std::string>> binds;  // (pod key, node)
  std::vector<std::string> deleted;
  std::vector<std::string> status_updates;
  std::vector<std::string> events;
};

class FakeHandle final : public framework::Handle {
 public:
  void SetNodes(std::vector<framework::NodeInfo> nodes) { lister_.Set(std::move(nodes)); }
  FakeClient& fake_client() { return client_; }
  FakeClock& fake_clock() { return clock_; }
  // The pool plugins get from GetParallelizer() (default none: chunks run inline).
  void SetParallelizer(framework::Parallelizer* p) { parallelizer_ = p; }

  // Serves `lister` (not owned; e.g. a cache::Snapshot) instead of the SetNodes list;
  // nullptr restores the latter.
  void SetLister(const framework::NodeInfoLister* lister) { external_lister_ = lister; }

  const framework::NodeInfoLister& SnapshotSharedLister() const override {
    return external_lister_ != nullptr ? *external_lister_ : lister_;
  }
  const framework::Clock& GetClock() const override { return clock_; }
  framework::ClusterClient& Client() override { return client_; }
  // Pods waiting at Permit, served by IterateOverWaitingPods / GetWaitingPod (not owned;
  // default none).
  void SetWaitingPods(std::vector<framework::WaitingPod*> pods) { waiting_ = std::move(pods); }
  void IterateOverWaitingPods(const std::function<void(framework::WaitingPod&)>& fn) override {
    for (framework::WaitingPod* w : waiting_) fn(*w);
  }
  framework::WaitingPod* GetWaitingPod(std::string_view uid) override {
    for (framework::WaitingPod* w : waiting_) {
      if (w->GetPod().metadata.uid == uid) return w;
    }
    return nullptr;
  }
  void RejectWaitingPod(std::string_view) override {}
  framework::Status RunFilterPlugins(const framework::CycleState&, const framework::PodInfo&,
                                     const framework::NodeInfo&) override {
    return framework::Status();
  }
  framework::Status RunPreFilterExtensionAddPod(framework::CycleState&, const framework::PodInfo&,
                                                const framework::PodInfoPtr&,
                                                const framework::NodeInfo&) override {
    return framework::Status();
  }
  framework::Status RunPreFilterExtensionRemovePod(framework::CycleState&,
                                                   const framework::PodInfo&,
                                                   const framework::PodInfoPtr&,
                                                   const framework::NodeInfo&) override {
    return framework::Status();
  }
  std::vector<framework::PodInfoPtr> NominatedPodsForNode(const std::string&) const override {
    return {};
  }
  int32_t PriorityOf(const api::Pod& pod) const override { return pod.spec.priority.value_or(0); }
  uint64_t Random(uint64_t n) override { return n == 0 ? 0 : (rng_++) % n; }
  framework::Parallelizer* GetParallelizer() override { return parallelizer_; }
  // Domain services for plugins that look them up (empty unless a test provides some).
  framework::ServiceRegistry& services() { return services_; }
  const framework::ServiceRegistry& Services() const override { return services_; }

 private:
  framework::ServiceRegistry services_;
  std::vector<framework::WaitingPod*> waiting_;
  framework::Parallelizer* parallelizer_ = nullptr;
  FakeNodeLister lister_;
  const framework::NodeInfoLister* external_lister_ = nullptr;
  FakeClock clock_;
  FakeClient client_;
  uint64_t rng_ = 0;
};

}  // namespace phalanx::plugins::fake
