// Cache of nodes and pods (upstream pkg/scheduler/backend/cache/cache.go).
//
// Pod state machine (same as upstream):
//
//   +-------------------------------------------+  +----+
//   |                            Add            |  |    |
//   |                                           |  |    | Update
//   +      Assume                Add            v  v    |
//  Initial +--------> Assumed +------------+---> Added <--+
//   ^                +   +               |       +
//   |                |   |               |       |
//   |                |   |           Add |       | Remove
//   |                |   |               |       |
//   |                |   |               +       |
//   +----------------+   +-----------> Expired   +----> Deleted
//         Forget             Expire
//
// Assumed: the scheduler decided a node and counts the pod there before the binding is
// confirmed. Added: the informer reported the pod bound. Forget: binding failed. Expire:
// an assumed pod whose binding finished (FinishBinding) but whose Add never arrived
// within the TTL (0 = never expire, as current upstream: kubernetes/kubernetes#106361).
//
// Thread-safe: one mutex (mu_) guards everything; the members say so (ABSL_GUARDED_BY).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "backend/cache/snapshot.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::cache {

class Cache {
 public:
  // ttl_ns: expiry of assumed pods after FinishBinding; 0 disables expiry.
  explicit Cache(int64_t ttl_ns = 0) : ttl_ns_(ttl_ns) {}

  // Assume `pod` (spec.node_name set) on its node. Error if the pod is already in the cache.
  framework::Status AssumePod(framework::PodInfoPtr pod);
  // Starts the expiry clock of an assumed pod (now in ns).
  framework::Status FinishBinding(const api::Pod& pod, api::Timestamp now);
  // Drops an assumed pod (binding failed). Error if the pod is not assumed.
  framework::Status ForgetPod(const api::Pod& pod);
  // An assigned pod reported by the informer. Confirms an assumed pod (moving it to the
  // node the API says, if different) or adds a new one (e.g. after expiry). When it
  // confirms an assumed pod and `confirmed` is not null, *confirmed is set to the assumed
  // PodInfo it replaced (else to nullptr): one lookup instead of IsAssumedPod + GetPod.
  // Either way the pod's node is touched twice (removed, added: its generation grows by 2).
  framework::Status AddPod(framework::PodInfoPtr pod, framework::PodInfoPtr* confirmed = nullptr);
  framework::Status UpdatePod(const api::Pod& old_pod, framework::PodInfoPtr new_pod);
  framework::Status RemovePod(const api::Pod& pod);
  bool IsAssumedPod(const api::Pod& pod) const;
  // The pod as the cache knows it, or nullptr.
  framework::PodInfoPtr GetPod(const api::Pod& pod) const;

  void AddNode(api::NodePtr node);
  void UpdateNode(api::NodePtr node);
  void RemoveNode(const api::Node& node);

  // Removes assumed pods whose binding finished more than ttl ago; returns their keys.
  std::vector<std::string> CleanupExpiredAssumedPods(api::Timestamp now);

  // Brings `snapshot` up to date, copying only NodeInfos changed since its generation.
  void UpdateSnapshot(Snapshot* snapshot);

  size_t NodeCount() const;
  // True while a Node object named `name` is in the cache (added and not removed); a
  // NodeInfo kept only for the pods still on a deleted node does not count.
  bool HasNode(const std::string& name) const;
  size_t PodCount() const;
  size_t AssumedPodCount() const;

 private:
  struct PodState {
    framework::PodInfoPtr pod;
    bool assumed = false;
    bool binding_finished = false;
    api::Timestamp deadline = 0;
  };
  // The NodeInfo of `name`; creates a placeholder when there is none.
  framework::NodeInfo& NodeFor(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddPodToNode(const framework::PodInfoPtr& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemovePodFromNode(const api::Pod& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Touch(framework::NodeInfo& ni, const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeRemoveNodeEntry(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  const int64_t ttl_ns_;
  int64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  // generation of the snapshot the last UpdateSnapshot synced
  int64_t synced_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // SwissTable (one probe, no chained nodes): looked up by name on every assume, bind
  // confirmation and snapshot update. Never iterated where the order matters.
  absl::flat_hash_map<std::string, std::unique_ptr<framework::NodeInfo>> nodes_
      ABSL_GUARDED_BY(mu_);
  // nodes with a Node object, insertion order
  std::vector<std::string> node_order_ ABSL_GUARDED_BY(mu_);
  bool order_changed_ ABSL_GUARDED_BY(mu_) = false;
  bool images_changed_ ABSL_GUARDED_BY(mu_) = false;
  std::unordered_set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  // key: namespace/name. Never iterated (order-free), so a SwissTable: a lookup masks the
  // hash instead of dividing by the bucket count (several lookups per scheduled pod).
  absl::flat_hash_map<std::string, PodState> pods_ ABSL_GUARDED_BY(mu_);
  std::unordered_set<std::string> assumed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::cache
