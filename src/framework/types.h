// Scheduler-side views of pods and nodes (upstream pkg/scheduler/framework/types.go):
// PodInfo (a pod plus what the hot path needs precomputed), NodeInfo (a node plus the
// pods on it and their summed requests), QueuedPodInfo, and cluster events.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/resource.h"
#include "api/types.h"

namespace phalanx::framework {

struct HostPort {
  std::string ip;  // "0.0.0.0" when unset
  std::string protocol;
  int32_t port = 0;
  bool operator==(const HostPort&) const = default;
};

// A pod with precomputed scheduling data. Immutable once built; shared by the queue,
// the cache and every NodeInfo that holds the pod.
struct PodInfo {
  api::PodPtr pod;
  api::Resource requests;           // api::PodRequests
  api::Resource non_zero_requests;  // api::PodNonZeroRequests
  std::vector<HostPort> host_ports;
  bool has_affinity = false;               // pod (anti-)affinity of any kind
  bool has_required_anti_affinity = false;
  int32_t priority = 0;  // resolved spec.priority (0 when unset)

  // Builds a PodInfo from a pod (computes requests, ports, flags).
  static std::shared_ptr<const PodInfo> Make(api::PodPtr pod);
  const api::Pod& Pod() const { return *pod; }
};
using PodInfoPtr = std::shared_ptr<const PodInfo>;

struct ImageStateSummary {
  int64_t size = 0;
  int32_t num_nodes = 0;  // nodes in the snapshot that have this image
};

// A node and the pods assigned (or assumed) to it. Copied into the Snapshot when its
// generation changes. Units as in api::Resource.
class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(api::NodePtr node) { SetNode(std::move(node)); }

  const api::Node* node() const { return node_.get(); }
  const api::NodePtr& node_ptr() const { return node_; }
  const std::string& name() const;  // empty when node() is null
  void SetNode(api::NodePtr node);
  void RemoveNode() { node_.reset(); }

  // Adds a pod's requests, ports and affinity bookkeeping.
  void AddPod(PodInfoPtr pod);
  // Removes by key (namespace/name); false if absent.
  bool RemovePod(const api::Pod& pod);

  const std::vector<PodInfoPtr>& pods() const { return pods_; }
  const std::vector<PodInfoPtr>& pods_with_affinity() const { return pods_with_affinity_; }
  const std::vector<PodInfoPtr>& pods_with_required_anti_affinity() const {
    return pods_with_required_anti_affinity_;
  }
  const api::Resource& requested() const { return requested_; }
  const api::Resource& non_zero_requested() const { return non_zero_requested_; }
  const api::Resource& allocatable() const { return allocatable_; }
  const std::vector<HostPort>& used_ports() const { return used_ports_; }
  // Image name -> summary; num_nodes is filled by the Snapshot.
  std::unordered_map<std::string, ImageStateSummary>& image_states() { return image_states_; }
  const std::unordered_map<std::string, ImageStateSummary>& image_states() const {
    return image_states_;
  }

  int64_t generation() const { return generation_; }
  void set_generation(int64_t g) { generation_ = g; }

 private:
  api::NodePtr node_;
  std::vector<PodInfoPtr> pods_;
  std::vector<PodInfoPtr> pods_with_affinity_;
  std::vector<PodInfoPtr> pods_with_required_anti_affinity_;
  api::Resource requested_;
  api::Resource non_zero_requested_;
  api::Resource allocatable_;
  std::vector<HostPort> used_ports_;
  std::unordered_map<std::string, ImageStateSummary> image_states_;
  int64_t generation_ = 0;
};

// A pod in the scheduling queue (upstream QueuedPodInfo).
struct QueuedPodInfo {
  PodInfoPtr pod_info;
  api::Timestamp timestamp = 0;  // last time added to the queue
  api::Timestamp initial_attempt_timestamp = 0;  // 0 until the first attempt
  int32_t attempts = 0;
  int32_t unschedulable_count = 0;  // consecutive unschedulable attempts (for backoff)
  // Plugins that rejected the pod in its last attempt (Unschedulable*, Pending).
  std::set<std::string> unschedulable_plugins;
  std::set<std::string> pending_plugins;
  // Plugin that gated the pod at PreEnqueue (empty when not gated).
  std::string gating_plugin;
  // Last failure message shown to the user (FailedScheduling event text).
  std::string last_failure_message;
  // Distinct reasons of the last failure (e.g. "Insufficient cpu"), for aggregation.
  std::vector<std::string> last_failure_reasons;

  const api::Pod& Pod() const { return *pod_info->pod; }
};
using QueuedPodInfoPtr = std::shared_ptr<QueuedPodInfo>;

// ---- Cluster events and queueing hints (upstream framework/types.go, KEP-4247) ----

enum class EventResource : uint8_t {
  kPod,            // any pod
  kAssignedPod,    // a pod bound to a node
  kUnscheduledPod, // a pending pod
  kNode,
  kPodGroup,       // gang objects of any dialect
  kWorkload,
  kPersistentVolumeClaim,
  kWildCard,
};

// Bit flags, as upstream ActionType.
enum ActionType : uint32_t {
  kAdd = 1 << 0,
  kDelete = 1 << 1,
  kUpdateNodeAllocatable = 1 << 2,
  kUpdateNodeLabel = 1 << 3,
  kUpdateNodeTaint = 1 << 4,
  kUpdateNodeCondition = 1 << 5,
  kUpdateNodeAnnotation = 1 << 6,
  kUpdatePodLabel = 1 << 7,
  kUpdatePodScaleDown = 1 << 8,
  kUpdatePodTolerations = 1 << 9,
  kUpdatePodSchedulingGatesEliminated = 1 << 10,
  kUpdatePodGeneratedResourceClaim = 1 << 11,
  kUpdateOther = 1 << 12,  // an update not covered by a finer flag
  kUpdate = kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint |
            kUpdateNodeCondition | kUpdateNodeAnnotation | kUpdatePodLabel |
            kUpdatePodScaleDown | kUpdatePodTolerations |
            kUpdatePodSchedulingGatesEliminated | kUpdatePodGeneratedResourceClaim |
            kUpdateOther,
  kAll = kAdd | kDelete | kUpdate,
};

struct ClusterEvent {
  EventResource resource = EventResource::kWildCard;
  uint32_t action = kAll;
  std::string label;  // for metrics/logs, e.g. "NodeAdd"

  // True if `this` (a registered interest) covers the concrete event `e`.
  bool Match(const ClusterEvent& e) const;
};

// The objects an event carries; unset pointers are null.
struct EventObjects {
  const api::Pod* old_pod = nullptr;
  const api::Pod* new_pod = nullptr;
  const api::Node* old_node = nullptr;
  const api::Node* new_node = nullptr;
  const void* other_old = nullptr;  // dialect objects (PodGroup, Workload, ...)
  const void* other_new = nullptr;
};

enum class QueueingHint : uint8_t { kQueueSkip, kQueue };

// Decides whether `event` may make the rejected `pod` schedulable. An empty function
// means "always Queue".
using QueueingHintFn = std::function<QueueingHint(const api::Pod& pod, const EventObjects& objs)>;

struct ClusterEventWithHint {
  ClusterEvent event;
  QueueingHintFn hint;
};

// Builds the ActionType bits of a node update (upstream nodeSchedulingPropertiesChange).
uint32_t NodeUpdateActions(const api::Node& old_node, const api::Node& new_node);
// Builds the ActionType bits of a pod update (upstream podSchedulingPropertiesChange);
// 0 when nothing a scheduler looks at changed (e.g. a status-only update, upstream
// isPodUpdated).
uint32_t PodUpdateActions(const api::Pod& old_pod, const api::Pod& new_pod);

}  // namespace phalanx::framework
