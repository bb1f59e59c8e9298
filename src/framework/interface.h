// The Scheduling Framework's plugin API (upstream pkg/scheduler/framework/interface.go).
//
// A plugin is a class deriving from Plugin and from one interface per extension point
// it implements. Extension points run in this order for one pod:
//   PreEnqueue (queue) -> QueueSort (queue) ->
//   PreFilter -> Filter (parallel over nodes) -> [PostFilter when no node fits] ->
//   PreScore -> Score (parallel) -> NormalizeScore -> Reserve -> Permit ->
//   (binding cycle) WaitOnPermit -> PreBind -> Bind -> PostBind; Unreserve on failure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::framework {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;
inline constexpr int64_t kMaxTotalScore = INT64_MAX;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
};

class PreEnqueuePlugin : public virtual Plugin {
 public:
  // Called before a pod enters activeQ; a non-Success status gates the pod in
  // unschedulablePods until an event in EventsToRegister moves it.
  virtual Status PreEnqueue(const PodInfo& pod) = 0;
};

class QueueSortPlugin : public virtual Plugin {
 public:
  // Strict weak order: true if `a` should be popped before `b`.
  virtual bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
  // Optional: true if SortKey reproduces Less, i.e. Less(a, b) == (SortKey(a) <
  // SortKey(b)) for all pods. The queue then keeps each pod's key next to it in the heap
  // (read when the pod enters or is updated in activeQ) and compares keys instead of
  // calling Less through the pods' objects: the same pop order, without chasing pointers.
  virtual bool HasSortKey() const { return false; }
  virtual QueueSortKey SortKey(const QueuedPodInfo& /*p*/) const { return {}; }
  // Optional: pods fall into partitions whose order changes while they wait (KAI's queue
  // order: a queue's share moves with every allocation, and KAI re-sorts its queues every
  // session, pkg/scheduler/actions/utils/jobs_order_by_queues.go). With HasPartitions()
  // the queue keeps one heap per Partition(p) (read when p enters or is updated in
  // activeQ); Less (or SortKey) must then be fixed between pods of one partition. Each Pop
  // takes the head of the first non-empty partition by PartitionLess, evaluated at that
  // moment; between partitions that tie, the heads' Less decides.
  virtual bool HasPartitions() const { return false; }
  virtual std::string Partition(const QueuedPodInfo& /*p*/) const { return {}; }
  // Strict weak order of partitions by the current state: true if `a` goes first.
  virtual bool PartitionLess(const std::string& /*a*/, const std::string& /*b*/) const {
    return false;
  }
};

// Events a plugin's rejection can be resolved by (upstream EnqueueExtensions).
class EnqueueExtensions : public virtual Plugin {
 public:
  virtual std::vector<ClusterEventWithHint> EventsToRegister() const = 0;
};

// PreFilter may narrow the nodes to evaluate (upstream PreFilterResult). An unset
// `node_names` means all nodes.
struct PreFilterResult {
  bool all_nodes = true;
  std::set<std::string> node_names;
  // Sorted names of the PreFilter plugins whose results narrowed the node set, filled by
  // Framework::RunPreFilterPlugins (upstream's unscheduledPlugins return value); the
  // nodes left out are reported as "node(s) didn't satisfy plugin(s) [A B]".
  std::vector<std::string> narrowed_by;
  // Intersection of two results (upstream Merge).
  PreFilterResult Merge(const PreFilterResult& other) const;
};

class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  // Incrementally update the plugin's CycleState as if `pod_to_add` ran on `node`.
  virtual Status AddPod(CycleState& state, const PodInfo& pod_to_schedule,
                        const PodInfoPtr& pod_to_add, const NodeInfo& node) = 0;
  virtual Status RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                           const PodInfoPtr& pod_to_remove, const NodeInfo& node) = 0;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // May return Skip (Filter of this plugin then does not run for this pod).
  virtual Status PreFilter(CycleState& state, const PodInfo& pod, PreFilterResult* result) = 0;
  // nullptr when the plugin keeps no state that pods on a node influence.
  virtual PreFilterExtensions* GetPreFilterExtensions() { return nullptr; }
};

class FilterPlugin : public virtual Plugin {
 public:
  // Called concurrently for different nodes; must not write to `state`.
  virtual Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) = 0;
};

// Filter outcome for a node, handed to PostFilter.
struct NodeToStatus {
  std::vector<std::pair<const NodeInfo*, Status>> statuses;  // nodes that failed
  // Code for nodes absent from `statuses` (e.g. excluded by PreFilterResult).
  Code absent_nodes_code = Code::kUnschedulableAndUnresolvable;
};

struct PostFilterResult {
  std::string nominated_node_name;
};

class PostFilterPlugin : public virtual Plugin {
 public:
  // Runs when no node passed Filter (typically preemption).
  virtual Status PostFilter(CycleState& state, const PodInfo& pod, const NodeToStatus& filtered,
                            PostFilterResult* result) = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  virtual Status PreScore(CycleState& state, const PodInfo& pod,
                          const std::vector<const NodeInfo*>& nodes) = 0;
};

class ScoreExtensions {
 public:
  virtual ~ScoreExtensions() = default;
  // Maps `scores` (aligned with `nodes`) into [kMinNodeScore, kMaxNodeScore] in place.
  virtual Status NormalizeScore(const CycleState& state, const PodInfo& pod,
                                const std::vector<const NodeInfo*>& nodes,
                                std::vector<int64_t>& scores) = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  // Called concurrently for different nodes. Returns a score in the plugin's own range
  // if ScoreExtensions normalizes it, else in [0, 100].
  virtual Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                       int64_t* score) = 0;
  // Scores nodes[i] into scores[i] for every i in [begin, end): the same results as Score
  // per node, for plugins that read their CycleState and set up once per run of nodes
  // rather than per node (the framework's Score workers call it, each on its own range).
  // Returns the first failure; scores of the range are then unspecified. Default: Score
  // per node, each score zeroed first (a plugin may leave *score unset).
  virtual Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                            const std::vector<const NodeInfo*>& nodes, size_t begin, size_t end,
                            int64_t* scores) {
    for (size_t i = begin; i < end; ++i) {
      scores[i] = 0;
      Status s = Score(state, pod, *nodes[i], &scores[i]);
      if (!s.IsSuccess()) return s;
    }
    return Status();
  }
  virtual ScoreExtensions* GetScoreExtensions() { return nullptr; }
};

// A ScorePlugin that scores a run of nodes natively: Score and ScoreNodes both forward to
// ScoreRange (nodes[0, count) into scores[0, count)).
class RangeScorePlugin : public ScorePlugin {
 public:
  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) final {
    const NodeInfo* one = &node;
    return ScoreRange(state, pod, &one, 1, score);
  }
  Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                    const std::vector<const NodeInfo*>& nodes, size_t begin, size_t end,
                    int64_t* scores) final {
    return ScoreRange(state, pod, nodes.data() + begin, end - begin, scores + begin);
  }

 protected:
  virtual Status ScoreRange(const CycleState& state, const PodInfo& pod,
                            const NodeInfo* const* nodes, size_t count, int64_t* scores) = 0;
};

// Pod scheduling signature (KEP-5598 "Opportunistic batching"; upstream's SignPod and
// fwk.PodSignature): pods of one signature are interchangeable for scheduling, so the
// nodes filtered and scored for one of them serve the next (a gang's members, see
// Scheduler::SchedulePod's PlacementBatch). Every PreFilter, Filter, PreScore and Score
// plugin of a profile must implement this for batching to apply; a profile with one that
// does not never batches.
class BatchablePlugin : public virtual Plugin {
 public:
  // True if this plugin gives `pod` the same PreFilter, Filter, PreScore and Score results
  // as `canonical` on every node, and placing either of them on a node changes those
  // results for the other on no other node (upstream: the plugin's signature elements
  // are equal; false where upstream marks a pod unsignable). Called with the same pod
  // twice, it says whether the pod is signable at all. Must not depend on node state
  // other than what stays fixed while a PodGroup cycle places its members. For a signable
  // pod, a node's Filter verdict and raw (pre-NormalizeScore) Score must depend only on
  // the pod, that node and the cluster, not on which other nodes PreScore got: plain-pod
  // batching caches them per node across cycles (Scheduler's NodeResultCache); a plugin
  // whose per-node score reads window-wide PreScore state must mark such pods unsignable.
  // Also relied on: while no pod in the snapshot has (anti-)affinity terms and no gang
  // reservation exists, a signable pod's Filter verdict on a node (and DefaultPreemption's
  // dry run there) depends only on that node's NodeInfo, the pods nominated to it and the
  // objects counted by Handle::ClusterObjectEpoch, not on other nodes (NodeResultCache
  // keep_failed, DefaultPreemption's dry-run memo); a plugin whose Filter reads other
  // nodes' pods must mark such pods unsignable.
  virtual bool SameSignature(const PodInfo& canonical, const PodInfo& pod) const = 0;
};

class ReservePlugin : public virtual Plugin {
 public:
  virtual Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
  // Must be idempotent; called on any later failure, in reverse order.
  virtual void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

class PermitPlugin : public virtual Plugin {
 public:
  // Success, Unschedulable*, or Wait with *timeout_ns set (nanoseconds, > 0).
  virtual Status Permit(CycleState& state, const PodInfo& pod, const std::string& node,
                        int64_t* timeout_ns) = 0;
  // Upstream caps every Permit wait at 15 minutes; a plugin whose users set their own
  // waiting time (gang scheduleTimeoutSeconds / waiting-time) may opt out.
  virtual bool PermitTimeoutUncapped() const { return false; }
};

class PreBindPlugin : public virtual Plugin {
 public:
  virtual Status PreBind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

class BindPlugin : public virtual Plugin {
 public:
  // Skip means "not mine, try the next Bind plugin".
  virtual Status Bind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

class PostBindPlugin : public virtual Plugin {
 public:
  virtual void PostBind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

}  // namespace phalanx::framework
