// Scheduler-side views of pods and nodes (upstream pkg/scheduler/framework/types.go):
// PodInfo (a pod plus what the hot path needs precomputed), NodeInfo (a node plus the
// pods on it and their summed requests), QueuedPodInfo, and cluster events.
#pragma once

#include <atomic>
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
  api::Resource non_zero_requests;  // api::PodNonZeroRequests (NodeInfo's NonZeroRequested)
  // api::PodScoringNonZeroRequests: what the resource scorers add for the pod; differs
  // from non_zero_requests only with pod-level requests set.
  api::Resource scoring_non_zero_requests;
  std::vector<HostPort> host_ports;
  bool has_affinity = false;  // pod (anti-)affinity of any kind
  bool has_required_anti_affinity = false;
  int32_t priority = 0;  // resolved spec.priority (0 when unset)

  // Builds a PodInfo from a pod (computes requests, ports, flags).
  static std::shared_ptr<const PodInfo> Make(api::PodPtr pod);
  // A PodInfo for `pod`, which must equal `from.pod` in every field Make reads (it may
  // differ in others, e.g. the scheduler's assumed copy sets only spec.nodeName): the
  // derived fields are copied from `from` instead of computed again. Equals Make(pod).
  static std::shared_ptr<const PodInfo> WithPod(const PodInfo& from, api::PodPtr pod);
  const api::Pod& Pod() const { return *pod; }
};
using PodInfoPtr = std::shared_ptr<const PodInfo>;

struct ImageStateSummary {
  int64_t size = 0;
  int32_t num_nodes = 0;  // nodes in the snapshot that have this image
};

class NodeInfo;

// The node as Filter sees it with the nominated pods of higher or equal priority added
// (upstream addNominatedPods builds this copy on every call), kept on the NodeInfo so that
// the next cycles that add the same pods reuse it: see
// Framework::RunFilterPluginsWithNominatedPods. `pods` are the nominated pods it was built
// from, in the order added.
struct NominatedOverlay {
  std::vector<PodInfoPtr> pods;
  std::shared_ptr<const NodeInfo> with;
};

// The nominated pods of a node as last looked up (nullptr pods: none), cached on the
// NodeInfo by the scheduler between changes of the nominator (see
// Scheduler::FindNodesThatFitPod), so that a Filter pass does not look every node up by
// name.
struct NominatedLookup {
  std::shared_ptr<const std::vector<PodInfoPtr>> pods;
};

// Holds a NodeInfo's cached derived value of type T (NominatedOverlay, NominatedLookup).
// Never copied with the NodeInfo (a copy or an assignment starts empty), dropped by every
// mutation of the NodeInfo, and read and written atomically, so that Filter workers on
// other nodes and a copy being modified (preemption's dry run) never see a value of
// different contents.
template <typename T>
class NodeInfoCacheSlot {
 public:
  NodeInfoCacheSlot() = default;
  NodeInfoCacheSlot(const NodeInfoCacheSlot&) {}
  NodeInfoCacheSlot& operator=(const NodeInfoCacheSlot&) {
    Reset();
    return *this;
  }
  std::shared_ptr<const T> Load() const {
    return has_.load(std::memory_order_acquire) ? p_.load() : nullptr;
  }
  void Store(std::shared_ptr<const T> o) const {
    p_.store(std::move(o));
    has_.store(true, std::memory_order_release);
  }
  // Callers own the NodeInfo exclusively (a mutation), or no Filter pass is running.
  void Reset() const {
    if (has_.load(std::memory_order_relaxed)) {
      p_.store(nullptr);
      has_.store(false, std::memory_order_relaxed);
    }
  }

 private:
  mutable std::atomic<std::shared_ptr<const T>> p_;
  mutable std::atomic<bool> has_{false};  // fast path: empty, no shared_ptr load
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
  // The Node's spec.unschedulable, and whether it has any taint: kept here so that the
  // Filter and Score of a pod that the node's spec cannot reject read only the NodeInfo
  // (NodeUnschedulable, TaintToleration), not the Node object too (a second cache miss per
  // node). False without a node.
  bool unschedulable() const { return unschedulable_; }
  bool has_taints() const { return has_taints_; }
  void RemoveNode() {
    node_.reset();
    unschedulable_ = false;
    has_taints_ = false;
    nominated_overlay_.Reset();
  }

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
  std::unordered_map<std::string, ImageStateSummary>& image_states() {
    nominated_overlay_.Reset();
    return image_states_;
  }
  const std::unordered_map<std::string, ImageStateSummary>& image_states() const {
    return image_states_;
  }

  // Asks the CPU to start loading the lines of this NodeInfo that the default Filter
  // plugins read for every node (node, flags, pods, requested, allocatable: the first
  // fields), a few nodes ahead of the one being filtered or scored: a pass over thousands
  // of nodes otherwise waits on memory at each node's first field (NodeInfos are scattered
  // on the heap). Prefetching every line of the object instead (seven) overflows the
  // core's outstanding-miss buffers: SchedulingBasic ran ~13% slower that way.
  void Prefetch() const;

  int64_t generation() const { return generation_; }
  void set_generation(int64_t g) {
    generation_ = g;
    nominated_overlay_.Reset();
  }

  // The cached node-with-nominated-pods (NominatedOverlay), nullptr when none; the
  // framework's RunFilterPluginsWithNominatedPods reads and (re)builds it. Const: a cache.
  std::shared_ptr<const NominatedOverlay> nominated_overlay() const {
    return nominated_overlay_.Load();
  }
  void set_nominated_overlay(std::shared_ptr<const NominatedOverlay> o) const {
    nominated_overlay_.Store(std::move(o));
  }
  // The scheduler's cached nominator lookup for this node (NominatedLookup), nullptr when
  // not cached; reset by the scheduler when the node's nominations change.
  std::shared_ptr<const NominatedLookup> nominated_lookup() const {
    return nominated_lookup_.Load();
  }
  void set_nominated_lookup(std::shared_ptr<const NominatedLookup> l) const {
    nominated_lookup_.Store(std::move(l));
  }
  void reset_nominated_lookup() const { nominated_lookup_.Reset(); }

 private:
  // What the default Filter plugins read for every node comes first (through
  // allocatable_: the lines that Prefetch loads), then what Score adds.
  api::NodePtr node_;
  bool unschedulable_ = false;
  bool has_taints_ = false;
  std::vector<PodInfoPtr> pods_;
  api::Resource requested_;
  api::Resource allocatable_;
  api::Resource non_zero_requested_;
  std::vector<PodInfoPtr> pods_with_affinity_;
  std::vector<PodInfoPtr> pods_with_required_anti_affinity_;
  std::vector<HostPort> used_ports_;
  std::unordered_map<std::string, ImageStateSummary> image_states_;
  int64_t generation_ = 0;
  NodeInfoCacheSlot<NominatedOverlay> nominated_overlay_;
  NodeInfoCacheSlot<NominatedLookup> nominated_lookup_;
};

inline void NodeInfo::Prefetch() const {
  const char* p = reinterpret_cast<const char*>(this);
  const char* end = reinterpret_cast<const char*>(&non_zero_requested_);
  for (; p < end; p += 64) __builtin_prefetch(p);
}

// A pod in the scheduling queue (upstream QueuedPodInfo).
struct QueuedPodInfo {
  PodInfoPtr pod_info;
  api::Timestamp timestamp = 0;                  // last time added to the queue
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

// A QueueSort order reduced to two integers per pod (QueueSortPlugin::SortKey): the pod
// with the lexicographically smaller (major, minor) pops first.
struct QueueSortKey {
  int64_t major = 0;
  int64_t minor = 0;
  bool operator<(const QueueSortKey& o) const {
    return major < o.major || (major == o.major && minor < o.minor);
  }
};

// ---- Cluster events and queueing hints (upstream framework/types.go, KEP-4247) ----

enum class EventResource : uint8_t {
  kPod,             // any pod
  kAssignedPod,     // a pod bound to a node
  kUnscheduledPod,  // a pending pod
  kNode,
  kPodGroup,  // gang objects of any dialect
  kWorkload,
  kPersistentVolumeClaim,
  kResourceClaim,  // resource.k8s.io (DynamicResources)
  kResourceSlice,
  kDeviceClass,
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
  kUpdateOther = 1 << 12,                // an update not covered by a finer flag
  kUpdateNodeDeclaredFeature = 1 << 13,  // status.declaredFeatures changed (KEP-5328)
  kUpdate = kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint | kUpdateNodeCondition |
            kUpdateNodeAnnotation | kUpdateNodeDeclaredFeature | kUpdatePodLabel |
            kUpdatePodScaleDown | kUpdatePodTolerations | kUpdatePodSchedulingGatesEliminated |
            kUpdatePodGeneratedResourceClaim | kUpdateOther,
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
// The same for two PodInfos, reading their precomputed requests (PodInfo::requests).
uint32_t PodUpdateActions(const PodInfo& old_pod, const PodInfo& new_pod);

}  // namespace phalanx::framework
