// The Scheduler (upstream pkg/scheduler/scheduler.go, schedule_one.go, eventhandlers.go).
//
// One scheduling thread calls ScheduleOne(): pop from the queue, refresh the Snapshot,
// run PreFilter / Filter (parallel over nodes, stopping once enough feasible nodes are
// found, upstream numFeasibleNodesToFind) / PostFilter / PreScore / Score /
// NormalizeScore, pick the best node (ties broken by the seeded RNG), assume the pod in
// the cache, Reserve and Permit. The binding cycle (WaitOnPermit, PreBind, Bind,
// PostBind) runs on the binding pool, or inline when binding_workers == 0 (simulate,
// where a virtual clock and deterministic results matter more than overlap).
//
// Event handlers (informer callbacks) feed the cache (assigned pods, nodes) and the
// queue (pending pods of our profiles) and turn changes into cluster events that move
// unschedulable pods back according to queueing hints.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backend/cache/cache.h"
#include "backend/queue/scheduling_queue.h"
#include "config/types.h"
#include "framework/parallelize.h"
#include "framework/registry.h"
#include "framework/runtime.h"
#include "cluster/informer.h"

namespace phalanx::gang {
class Manager;
}
namespace phalanx::quota {
class QueueManager;
}

namespace phalanx::scheduler {

enum class GangOutcome;  // podgroup_status.h

struct SchedulerOptions {
  config::KubeSchedulerConfiguration config;
  framework::Registry registry;  // in-tree plus out-of-tree plugins
  const framework::Clock* clock = nullptr;
  framework::ClusterClient* client = nullptr;
  uint64_t seed = 1;
  // 0: run binding cycles inline on the scheduling thread (deterministic).
  int binding_workers = 0;
  int64_t assumed_pod_ttl_ns = 0;  // 0: never expire (current upstream)
};

// Why a pod could not be scheduled (upstream framework.Diagnosis + FitError).
struct Diagnosis {
  int num_all_nodes = 0;
  std::vector<std::pair<std::string, framework::Status>> node_statuses;  // failed nodes
  std::set<std::string> unschedulable_plugins;
  std::set<std::string> pending_plugins;
  std::string pre_filter_msg;
  std::string post_filter_msg;
  // Reason for the nodes a PreFilterResult left out (they have no entry in node_statuses):
  // "node(s) didn't satisfy plugin(s) [NodeAffinity]" (upstream SetAbsentNodesStatus in
  // schedule_one.go findNodesThatFitPod). Empty when PreFilter kept every node.
  std::string absent_nodes_reason;
  // "0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint {a: b}."
  std::string Message() const;
};

struct ScheduleResult {
  std::string suggested_host;
  int evaluated_nodes = 0;
  int feasible_nodes = 0;
};

// The nodes filtered and scored for one pod, reused for the next pods of the same
// signature (KEP-5598 "Opportunistic batching"; framework::BatchablePlugin) while a
// PodGroup cycle places a gang's members one after another on one view of the snapshot.
// A pod of the canonical pod's signature runs its own PreFilter, then Filter only on the
// node the previous pod took: if that node no longer fits it is dropped, otherwise it is
// scored again (PreScore, Score, NormalizeScore over the batch's nodes); every other node
// keeps its Filter result and score, which the signature guarantees. The pod then takes
// the best node as SchedulePod would (ties at random). When no node is left, the pod is
// scheduled the normal way and starts a new batch. So a gang of one signature is placed
// on the first member's feasible nodes (percentageOfNodesToScore of the cluster), each
// member seeing the members placed before it.
struct PlacementBatch {
  // The pod the nodes were filtered and scored for; nullptr: no batch. Must outlive the
  // batch's use (the PodGroup cycle holds its members).
  const framework::PodInfo* canonical = nullptr;
  std::vector<const framework::NodeInfo*> nodes;  // feasible nodes, in filter order
  framework::ScoreTable table;
  std::vector<int64_t> totals;  // aligned with nodes
  bool scored = false;          // false: one feasible node, no scores
  size_t chosen = 0;            // index in nodes of the last pod's node
  int64_t batched_pods = 0;     // pods placed from the batch without a full cycle
  void Reset() {
    canonical = nullptr;
    nodes.clear();
    totals.clear();
    scored = false;
  }
};

// Counters for reports and metrics.
struct SchedulerStats {
  int64_t attempts = 0;
  int64_t scheduled = 0;
  int64_t unschedulable = 0;
  int64_t errors = 0;
  int64_t bind_failures = 0;
  // PodGroup cycle placements taken from a PlacementBatch (no Filter and Score pass over
  // the nodes of their own), whether or not the gang then committed.
  int64_t batched_placements = 0;
};

class Scheduler {
 public:
  // Errors: invalid profile (unknown plugin, no queue sort, bad args), profiles with
  // different QueueSort plugins.
  [[nodiscard]] static framework::StatusOr<std::unique_ptr<Scheduler>> New(SchedulerOptions opts);
  ~Scheduler();

  // Registers event handlers on `informers` (replaying existing objects).
  void AddEventHandlers(store::InformerFactory& informers);

  // Event handlers (public for tests; normally called via AddEventHandlers).
  void OnPodAdd(const api::PodPtr& pod);
  void OnPodUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod);
  void OnPodDelete(const api::PodPtr& pod);
  void OnNodeAdd(const api::NodePtr& node);
  void OnNodeUpdate(const api::NodePtr& old_node, const api::NodePtr& new_node);
  void OnNodeDelete(const api::NodePtr& node);
  void OnPriorityClassAdd(const std::shared_ptr<const api::PriorityClass>& pc);
  void OnPriorityClassDelete(const std::shared_ptr<const api::PriorityClass>& pc);

  // Runs one scheduling cycle. Non-blocking: returns false when activeQ is empty;
  // blocking: waits for a pod and returns false once the queue is closed.
  bool ScheduleOne(bool blocking = false);
  // Runs scheduling cycles until Stop(); also drives periodic work with the real clock.
  void Run();
  void Stop();
  // Blocks until no binding cycle is running (pods waiting in Permit do not count).
  void WaitForBindings();

  // Periodic work at the clock's current time: backoff flush, unschedulable flush,
  // Permit timeouts, expired assumed pods.
  void Tick();
  // The earliest clock time at which Tick() would change something, or INT64_MAX.
  api::Timestamp NextWakeTime() const;

  // Scheduling algorithm alone on the current snapshot (upstream schedulePod); used by
  // ScheduleOne and benchmarks. On failure returns the FitError status and fills *diag.
  // With `batch`: a pod whose signature matches batch->canonical is placed from the batch
  // (see PlacementBatch); any other pod is scheduled in full and, when it is signable,
  // becomes the batch's canonical pod. The caller adds the chosen node's pod to the
  // snapshot view before the next call with the same batch.
  framework::Status SchedulePod(framework::Framework& fwk, framework::CycleState& state,
                                const framework::PodInfo& pod, ScheduleResult* result,
                                Diagnosis* diag, PlacementBatch* batch = nullptr);

  queue::SchedulingQueue& queue() { return *queue_; }
  gang::Manager& gangs() { return *gangs_; }
  quota::QueueManager& queues() { return *queues_; }
  cache::Cache& cache() { return cache_; }
  cache::Snapshot& snapshot() { return snapshot_; }
  framework::Framework* ProfileFor(const api::Pod& pod);
  framework::Framework* Profile(const std::string& scheduler_name);
  SchedulerStats stats() const;
  const config::KubeSchedulerConfiguration& config() const { return opts_.config; }

  // Observers (called on the thread that made the decision).
  std::function<void(const api::Pod& pod, const std::string& node)> on_bound;
  std::function<void(const framework::QueuedPodInfo& pod, const framework::Status& status)>
      on_failure;

 private:
  explicit Scheduler(SchedulerOptions opts);
  bool ResponsibleFor(const api::Pod& pod) const;
  // Resets the NominatedLookup cached on the snapshot's NodeInfos whose nominations
  // changed since the last call (every NodeInfo when the nominator lost count). Called on
  // the scheduling thread before each Filter pass, never during one.
  void SyncNominatedLookups();
  // PreFilter, then the nodes that pass Filter (upstream findNodesThatFitPod). With
  // `follow`, a PreFilter that keeps every node lets ScheduleFromBatch place the pod first;
  // *placed then says whether it did (result->suggested_host set, nothing else filled).
  void FindNodesThatFitPod(framework::Framework& fwk, framework::CycleState& state,
                           const framework::PodInfo& pod, Diagnosis* diag,
                           std::vector<const framework::NodeInfo*>* feasible, framework::Status* err,
                           PlacementBatch* follow = nullptr, ScheduleResult* result = nullptr,
                           bool* placed = nullptr);
  // Places `pod` (PreFilter already run on `state`) from `batch`; false when the batch has
  // no node left for it (or cannot be kept up to date), with *err set on a plugin error.
  bool ScheduleFromBatch(framework::Framework& fwk, framework::CycleState& state,
                         const framework::PodInfo& pod, PlacementBatch* batch,
                         ScheduleResult* result, framework::Status* err);
  // upstream selectHost: the index of the highest total; ties uniformly at random (one
  // draw of Random(ties) per call, where upstream draws once per tie). `totals` is not
  // empty.
  size_t SelectHost(const std::vector<int64_t>& totals);
  int NumFeasibleNodesToFind(int32_t percentage, int num_all_nodes) const;
  void HandleSchedulingFailure(framework::Framework& fwk, const framework::QueuedPodInfoPtr& qp,
                               const framework::Status& status, const Diagnosis* diag,
                               const std::string& nominated_node, int64_t cycle,
                               const std::vector<std::string>* reasons = nullptr);
  // Assume, Reserve, Permit and hand the pod to its binding cycle.
  // `assumed`, when given, is the pod already copied with spec.nodeName = host.
  void CommitPod(framework::Framework* fwk, const framework::QueuedPodInfoPtr& qp,
                 std::shared_ptr<framework::CycleState> state, const std::string& host,
                 int64_t cycle, framework::PodInfoPtr assumed = nullptr);
  // The PodGroup cycle (podgroup_cycle.cc).
  void RunPodGroupCycle(framework::Framework* fwk, const framework::QueuedPodInfoPtr& popped,
                        const framework::PodGroupPlan& plan, int64_t cycle);
  void OnObjectAdd(const api::UnstructuredPtr& obj);
  void OnObjectUpdate(const api::UnstructuredPtr& old_obj, const api::UnstructuredPtr& obj);
  void OnObjectDelete(const api::UnstructuredPtr& obj);
  void RunBindingCycle(framework::Framework* fwk, std::shared_ptr<framework::CycleState> state,
                       framework::QueuedPodInfoPtr qp, framework::PodInfoPtr assumed,
                       int64_t cycle, framework::Status permit_status);
  void SubmitBinding(std::function<void()> fn);
  int32_t PriorityOf(const api::Pod& pod) const;
  uint64_t Random(uint64_t n);

  SchedulerOptions opts_;
  std::unique_ptr<gang::Manager> gangs_;
  std::unique_ptr<quota::QueueManager> queues_;  // fed like gangs_ (src/quota/manager.h)
  cache::Cache cache_;
  cache::Snapshot snapshot_;
  std::unique_ptr<framework::Parallelizer> parallelizer_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  std::map<std::string, std::unique_ptr<framework::Framework>> profiles_;
  size_t next_start_node_index_ = 0;
  std::mt19937_64 rng_;
  std::mutex rng_mu_;

  mutable std::mutex ns_mu_;
  std::map<std::string, std::map<std::string, std::string>> namespace_labels_;

  mutable std::mutex pc_mu_;
  std::map<std::string, std::shared_ptr<const api::PriorityClass>> priority_classes_;

  struct BindingPool;
  std::unique_ptr<BindingPool> binding_pool_;
  std::mutex inflight_mu_;
  std::condition_variable inflight_cv_;
  int inflight_bindings_ = 0;
  // While the PodGroup cycle commits a gang (on this thread), SubmitBinding holds the
  // bindings here; they go to the pool together once every member is reserved, so that
  // no member is bound while others are still being assumed.
  std::thread::id hold_bindings_thread_;
  std::vector<std::function<void()>> held_bindings_;
  std::atomic<bool> stopped_{false};

  mutable std::mutex stats_mu_;
  SchedulerStats stats_;

  // Set by the PodGroup cycle while it places a gang inside one topology domain: only
  // these nodes are considered (like a PreFilterResult).
  const std::set<std::string>* node_restriction_ = nullptr;

  // Reused per cycle to avoid allocation on the hot path.
  std::vector<std::string> changed_nominations_;  // SyncNominatedLookups' scratch
  std::vector<framework::Status> statuses_;
  std::vector<uint8_t> fits_;

  // While a PodGroup cycle commits with inline binding, the member bindings observed on
  // that thread (OnPodUpdate) only record their gang here, with the last bound member; the
  // cycle then writes each gang's status once (FlushGangStatusWrites), with the same
  // content the last per-member write would have had. Bindings on other threads (the
  // binding pool, live informers) write as before.
  std::thread::id gang_status_batch_thread_;
  std::vector<std::pair<std::string, api::PodPtr>> gang_status_batch_;
  // WritePodGroupStatus with this scheduler's gang manager and client. Writes do not race
  // on the counts: the PodGroup cycle writes (if at all) before it releases its bindings,
  // and a binding writes only once none of its gang's are in flight.
  void WriteGangStatus(const std::string& gang_key, GangOutcome outcome,
                       std::string_view message, const api::Pod* member);
  // True while members of the gang are assumed (binding, held for the pool, or waiting in
  // Permit): their completion will write the gang's status, so no one else need now.
  bool GangBindingsInFlight(const std::string& gang_key) const;
  void FlushGangStatusWrites();
};

}  // namespace phalanx::scheduler
