// The scheduling queue (upstream pkg/scheduler/backend/queue/scheduling_queue.go).
//
//            Add (PreEnqueue ok)                 Pop
//   pending ───────────────────────► activeQ ─────────► scheduling cycle
//      │ PreEnqueue gated               ▲  ▲                 │ failed
//      ▼                                │  │ backoff expired │
//   unschedulablePods ◄─────────────────┼──┴── backoffQ ◄────┤ (Error, or an event
//      │  (Unschedulable: waits for an  │                    │  arrived while the pod
//      │   event that a rejecting       │                    │  was being scheduled)
//      │   plugin's queueing hint says  │                    │
//      └── may help, or the 5 min flush)┘◄───────────────────┘ Unschedulable
//
// activeQ is a heap ordered by the profile's QueueSort (all profiles share one), or one heap
// per partition when the QueueSort plugin has partitions (queues whose order moves); backoffQ
// is a heap by backoff expiry; per-pod backoff = initial * 2^(attempts-1), capped at max.
// Thread-safe (one mutex); Pop blocks on a condition variable until Close().
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "framework/handle.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::queue {

struct QueueOptions {
  int64_t initial_backoff_ns = 1 * api::kNanosPerSecond;
  int64_t max_backoff_ns = 10 * api::kNanosPerSecond;
  int64_t max_in_unschedulable_ns = 300 * api::kNanosPerSecond;
};

// What the queue needs of a profile (framework): PreEnqueue and the queueing hints of its
// plugins. `pre_enqueue` returns Success, or the gating status with plugin() set.
struct ProfileHooks {
  std::function<framework::Status(const framework::PodInfo&)> pre_enqueue;
  std::vector<std::pair<std::string, framework::ClusterEventWithHint>> hints;  // plugin, hint
};

struct PendingCounts {
  size_t active = 0, backoff = 0, unschedulable = 0, gated = 0;
};

// Bookkeeping of nominated pods (upstream nominator): pods that preemption made room for.
// Read once per node by every Filter pass while any pod is nominated (from the Filter
// workers at once), written once per preemption or binding: the per-node lists are
// immutable shared vectors (a lookup copies no list) in shards with their own locks (the
// workers do not contend on one mutex).
class Nominator {
 public:
  using PodList = std::vector<framework::PodInfoPtr>;

  void Add(framework::PodInfoPtr pod, const std::string& node);
  void Delete(const api::Pod& pod);
  // The pods nominated to `node`, in nomination order (a copy).
  PodList ForNode(const std::string& node) const;
  // The same list without copying it; nullptr when none. The list never changes.
  std::shared_ptr<const PodList> ViewForNode(const std::string& node) const;
  bool Empty() const { return count_.load(std::memory_order_acquire) == 0; }
  // The nodes whose list changed since the last call (possibly repeated), appended to
  // *nodes; false when more changed than were recorded (every node must be treated as
  // changed). For caches of ViewForNode results (Scheduler's NominatedLookup).
  bool DrainChanged(std::vector<std::string>* nodes);

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable absl::Mutex mu;
    std::unordered_map<std::string, std::shared_ptr<const PodList>> by_node ABSL_GUARDED_BY(mu);
  };
  Shard& ShardOf(const std::string& node) const;
  // Records that node's list changed, for DrainChanged.
  void NoteChanged(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the pod `key` from node's list (takes the node's shard lock).
  void RemoveFromNode(const std::string& node, const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // node_of_ and changed_; taken before a shard lock, never after.
  mutable absl::Mutex mu_;
  std::unordered_map<std::string, std::string> node_of_ ABSL_GUARDED_BY(mu_);  // pod key -> node
  std::atomic<size_t> count_{0};  // node_of_.size(), read without the lock (Empty)
  static constexpr size_t kMaxChanged = 1 << 16;
  // nodes changed since DrainChanged
  std::vector<std::string> changed_ ABSL_GUARDED_BY(mu_);
  bool changed_overflow_ ABSL_GUARDED_BY(mu_) = false;
  mutable std::array<Shard, kShards> shards_;
};

class SchedulingQueue {
 public:
  using LessFn =
      std::function<bool(const framework::QueuedPodInfo&, const framework::QueuedPodInfo&)>;

  // The QueueSort plugin's key (framework::QueueSortPlugin::SortKey), when it has one.
  using KeyFn = std::function<framework::QueueSortKey(const framework::QueuedPodInfo&)>;

  // The QueueSort plugin's partitions (framework::QueueSortPlugin::HasPartitions): `of`
  // names a pod's partition, `less` orders partitions by the current state.
  struct PartitionFns {
    std::function<std::string(const framework::QueuedPodInfo&)> of;
    std::function<bool(const std::string&, const std::string&)> less;
  };

  // activeQ pops in `less` order; with `key` set, the heap compares keys kept next to its
  // entries instead (`key` must reproduce `less`). With `partitions` set, activeQ keeps one
  // heap per partition and each Pop takes the head of the first partition by
  // partitions.less at that moment (ties: `less` between the heads).
  SchedulingQueue(LessFn less, const framework::Clock& clock, QueueOptions opts,
                  KeyFn key = nullptr, PartitionFns partitions = {});
  ~SchedulingQueue();

  void SetProfileHooks(const std::string& scheduler_name, ProfileHooks hooks);

  // Called (under the queue's lock: must not call back into the queue) each time a pod
  // enters a sub-queue: queue "active" | "backoff" | "unschedulable" (PreEnqueue-gated
  // pods wait in unschedulablePods), event the cluster event's label or one of upstream's
  // queue events "PodAdd", "ScheduleAttemptFailure", "BackoffComplete", "ForceActivate",
  // "UnschedulableTimeout" (upstream scheduler_queue_incoming_pods_total{queue,event},
  // pkg/scheduler/backend/queue/scheduling_queue.go).
  using IncomingFn = std::function<void(std::string_view queue, std::string_view event)>;
  void SetIncomingObserver(IncomingFn fn);
  // Called (under the queue's lock) after each queueing hint function ran: plugin, event
  // label, hint "Queue" | "QueueSkip", seconds (upstream
  // scheduler_queueing_hint_execution_duration_seconds). Unset: hints are not timed.
  using HintFn = std::function<void(std::string_view plugin, std::string_view event,
                                    std::string_view hint, double seconds)>;
  void SetHintObserver(HintFn fn);

  // A new pending pod: PreEnqueue, then activeQ or (gated) unschedulablePods.
  void Add(framework::PodInfoPtr pod);
  // Add, then Activate(pod_keys), in one critical section: no Pop runs in between, so a
  // new gang member that completes its quorum moves the gated members into activeQ before
  // any of them can be in flight (an Activate of in-flight pods is a move request, which
  // would send the gang's failed attempt to backoffQ for a second try).
  void AddAndActivate(framework::PodInfoPtr pod, const std::vector<std::string>& pod_keys);
  // A pending pod changed; it may leave unschedulablePods if the change can help.
  void Update(const api::Pod& old_pod, framework::PodInfoPtr new_pod);
  void Delete(const api::Pod& pod);

  // Blocks until a pod is in activeQ or Close(); nullptr when closed.
  framework::QueuedPodInfoPtr Pop();
  // Non-blocking; nullptr when activeQ is empty.
  framework::QueuedPodInfoPtr TryPop();
  // Takes a pod out of whichever sub-queue holds it, as if popped (attempts counted), so
  // that a gang's members leave the queue together; nullptr if it is not queued.
  framework::QueuedPodInfoPtr Extract(const std::string& pod_key);
  // The cycle number of the most recent Pop (upstream SchedulingCycle()).
  int64_t SchedulingCycle() const;

  // Requeues a pod whose attempt failed in cycle `cycle`. Pods rejected by plugins go to
  // unschedulablePods, unless a cluster event arrived after `cycle` started (then
  // backoffQ); Errors go to backoffQ. No-op if the pod is already queued.
  void AddUnschedulableIfNotPresent(framework::QueuedPodInfoPtr pinfo, int64_t cycle);

  // A cluster event: moves pods from unschedulablePods whose rejecting plugins' hints say
  // the event may help, to activeQ or (still backing off) backoffQ.
  void MoveAllToActiveOrBackoffQueue(const framework::ClusterEvent& event,
                                     const framework::EventObjects& objs);
  // Moves specific pods (by key) to activeQ now, wherever they wait (upstream Activate).
  // A key that is not queued may be in flight: then the request counts as a move request
  // (that pod's failed attempt goes to backoffQ, not unschedulablePods; upstream records
  // EventForceActivate for in-flight pods). Activating queued pods is not.
  void Activate(const std::vector<std::string>& pod_keys);
  // Runs PreEnqueue again for those of the pods (by key) that PreEnqueue gated, moving the
  // ones it now lets through to activeQ (backoffQ while backing off); other pods stay where
  // they are. For a gate that lifts without a cluster event (asynchronous preemption
  // finished, framework/preemption_executor.h).
  void ReleaseGated(const std::vector<std::string>& pod_keys);

  // Moves pods whose backoff expired to activeQ (upstream runs this every second).
  void FlushBackoffQCompleted();
  // Moves pods that sat in unschedulablePods longer than max_in_unschedulable (upstream
  // checks every 30 s).
  void FlushUnschedulablePodsLeftover();

  // The unschedulable flush's period (ns): a pod whose timestamp is t is moved by the flush
  // at t + max_in_unschedulable + 1 (it must have waited longer than max_in_unschedulable)
  // and, failing again there, gets that time as its timestamp.
  api::Timestamp UnschedulableFlushPeriod() const { return opts_.max_in_unschedulable_ns + 1; }
  // Every pod waiting in unschedulablePods (PreEnqueue-gated ones included), by key.
  std::vector<framework::QueuedPodInfoPtr> UnschedulablePods() const;
  // The queue's part of `flushes` rounds of the unschedulable flush in which each of `pods`
  // was moved to activeQ, taken (popped or extracted), rejected by plugins and put back
  // (Scheduler::SkipRepeatedFlushes): per round and pod, attempts and the unschedulable
  // count +1, the timestamp one flush period later, and the incoming-pods observer told of
  // both moves; `pops` Pops in all. False, changing nothing, when a pod is not (or no longer)
  // waiting in unschedulablePods, is gated, or was not rejected by a plugin (such a pod would
  // go to backoffQ, not back to unschedulablePods).
  bool RecordRepeatedFlushes(const std::vector<framework::QueuedPodInfoPtr>& pods, int32_t flushes,
                             int64_t pops);
  // Earliest backoff expiry in backoffQ, or INT64_MAX.
  api::Timestamp NextBackoffExpiry() const;
  // Earliest time a pod in unschedulablePods reaches max_in_unschedulable, or INT64_MAX.
  api::Timestamp NextUnschedulableTimeout() const;

  void Close();
  PendingCounts Counts() const;
  // Pods in unschedulablePods (not gated) per (rejecting plugin, schedulerName), counting a
  // pod once for each plugin of its last rejection (unschedulable and pending plugins;
  // upstream scheduler_unschedulable_pods{plugin,profile}).
  std::map<std::pair<std::string, std::string>, int64_t> UnschedulableByPlugin() const;
  // Snapshot of every pending pod (active, backoff, unschedulable).
  std::vector<framework::QueuedPodInfoPtr> PendingPods() const;
  // The queued entry of a pod, or nullptr.
  framework::QueuedPodInfoPtr Get(const std::string& pod_key) const;

  // A PreEnqueue rejection to show on the pod (KEP-5501 "Reflect PreEnqueue rejections in
  // Pod status"): the pod as it was gated, the gating plugin and its message.
  struct GateReport {
    framework::PodInfoPtr pod;
    std::string plugin;
    std::string message;
  };
  // The pods gated since the last call with a message other than the one last reported
  // for them (each pod once, with its latest message), for the scheduler to write as the
  // PodScheduled condition; a pod that passed PreEnqueue or left the queue since is
  // dropped. Upstream delays the write by 5 s so that a transient gate is never shown;
  // the caller writes at its next step, when the pod may still be gated or not.
  std::vector<GateReport> TakeGateReports();

  Nominator& nominator() { return nominator_; }

 private:
  class Heap;
  class ActiveQueue;
  bool IsBackingOff(const framework::QueuedPodInfo& p) const;
  api::Timestamp BackoffExpiry(const framework::QueuedPodInfo& p) const;
  // Runs PreEnqueue; true if the pod may enter activeQ.
  bool RunPreEnqueue(framework::QueuedPodInfo& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MoveToActiveOrBackoff(framework::QueuedPodInfoPtr p, std::string_view event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Incoming(std::string_view queue, std::string_view event) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (incoming_) incoming_(queue, event);
  }
  void AddLocked(framework::PodInfoPtr pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ActivateLocked(const std::vector<std::string>& keys) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WorthRequeuing(const framework::QueuedPodInfo& p, const framework::ClusterEvent& e,
                      const framework::EventObjects& objs) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MoveUnschedulable(const std::vector<framework::QueuedPodInfoPtr>& pods,
                         const framework::ClusterEvent& e, const framework::EventObjects& objs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // signalled when activeQ gains a pod, and on Close()
  const framework::Clock& clock_;
  const QueueOptions opts_;
  // The heaps are created by the constructor; their contents are guarded.
  std::unique_ptr<ActiveQueue> active_q_ ABSL_PT_GUARDED_BY(mu_);
  std::unique_ptr<Heap> backoff_q_ ABSL_PT_GUARDED_BY(mu_);
  std::unordered_map<std::string, framework::QueuedPodInfoPtr> unschedulable_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, ProfileHooks> hooks_ ABSL_GUARDED_BY(mu_);
  // MoveAllToActiveOrBackoffQueue's fast path, per event (resource << 32 | action): whether
  // any registered hint matches it (a wildcard kAll event always does). Cleared when the
  // hooks change; an event kind is matched against every hint once, not per event.
  absl::flat_hash_map<uint64_t, bool> event_interest_ ABSL_GUARDED_BY(mu_);
  IncomingFn incoming_ ABSL_GUARDED_BY(mu_);
  HintFn hint_observer_ ABSL_GUARDED_BY(mu_);
  // TakeGateReports: the message last handed out per gated pod key, and the reports due.
  std::unordered_map<std::string, std::string> reported_gates_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, GateReport> gate_reports_ ABSL_GUARDED_BY(mu_);
  int64_t scheduling_cycle_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t move_request_cycle_ ABSL_GUARDED_BY(mu_) = -1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  Nominator nominator_;  // locks of its own
};

}  // namespace phalanx::queue
