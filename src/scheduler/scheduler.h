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
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "backend/cache/cache.h"
#include "backend/queue/scheduling_queue.h"
#include "cluster/informer.h"
#include "config/types.h"
#include "dra/dra_manager.h"
#include "framework/extender.h"
#include "framework/object_events.h"
#include "framework/parallelize.h"
#include "framework/preemption_executor.h"
#include "framework/registry.h"
#include "framework/runtime.h"
#include "gang/reservation.h"
#include "gang/staleness.h"
#include "scheduler/podgroup_memo.h"

namespace phalanx::gang {
class Coordinator;
class DefaultPodGroupManager;
}  // namespace phalanx::gang
namespace phalanx::quota {
class QueueManager;
}
namespace phalanx::volume {
class Catalog;
}

namespace phalanx::scheduler {

class BindingBatch;        // binding_pool.h
class BindingPool;         // binding_pool.h
struct PodGroupMember;     // podgroup_algorithm.h
struct PodGroupPlacement;  // podgroup_algorithm.h

struct SchedulerOptions {
  config::KubeSchedulerConfiguration config;
  framework::Registry registry;  // in-tree plus out-of-tree plugins
  const framework::Clock* clock = nullptr;
  framework::ClusterClient* client = nullptr;
  uint64_t seed = 1;
  // 0: run binding cycles inline on the scheduling thread (deterministic).
  int binding_workers = 0;
  int64_t assumed_pod_ttl_ns = 0;  // 0: never expire (current upstream)
  // Gang state and queues / quotas, shared with whoever reads them too (reports, metrics);
  // nullptr: the scheduler makes its own. The scheduler feeds both from its event handlers
  // and hands them to plugins as gang::PodGroupManager and quota::SharedQueueManager.
  std::shared_ptr<gang::DefaultPodGroupManager> gangs;
  std::shared_ptr<quota::QueueManager> queues;
  // The storage objects and assumed volume bindings (src/volume/catalog.h), fed from the
  // object events and provided to plugins as the service volume::Catalog; nullptr: the
  // scheduler makes its own.
  std::shared_ptr<volume::Catalog> volumes;
  // Further services for out-of-tree plugins (framework::ServiceRegistry); the scheduler
  // adds its PodGroupManager and SharedQueueManager.
  framework::ServiceRegistry services;
  // Replay a gang's remembered PodGroup rejection while nothing the cycle reads has
  // changed (podgroup_memo.h); false runs every cycle in full (differential tests).
  bool replay_podgroup_rejections = true;
  // Scheduler extenders in call order (tests inject fakes); empty: the HTTP extenders of
  // config.extenders (src/extender), non-ignorable first. With any extender, PodGroup
  // rejections are never replayed and placements are never batched (an extender's answer
  // is its own state).
  std::vector<std::shared_ptr<framework::Extender>> extenders;
  // Opportunistic batching of plain pods (KEP-5598, upstream feature gate
  // OpportunisticBatching, beta and on by default in v1.35): a pod of the previous cycle's
  // signature is placed from that cycle's filtered and scored nodes (PlacementBatch) while
  // nothing but the scheduler's own assume changed the cluster in between. false
  // schedules every plain pod in full (differential tests, comparisons). The PodGroup
  // cycle's batches do not depend on it.
  bool opportunistic_batching = true;
  // After a binder extender bound a pod, also bind it through `client`: the simulator's
  // in-process store is out of the extender's reach (it still gets the bind call).
  bool bind_after_extender_binding = false;
};

// Why a pod could not be scheduled (upstream framework.Diagnosis + FitError).
struct Diagnosis {
  int num_all_nodes = 0;
  std::vector<std::pair<std::string, framework::Status>> node_statuses;  // failed nodes
  // The snapshot's NodeInfo of each entry of node_statuses, when every path that added
  // one (the Filter walks, a PreFilter rejection) also added it here; a different size
  // means unknown (look the names up). Saves PostFilter a lookup per failed node.
  std::vector<const framework::NodeInfo*> node_infos;
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
//
// Plain pods (ScheduleOne, opportunistic batching) use NodeResultCache instead.
struct PlacementBatch {
  // The pod the nodes were filtered and scored for; nullptr: no batch. Must outlive the
  // batch's use (the PodGroup cycle holds its members; a plain-pod batch holds it in
  // `canonical_ref`).
  const framework::PodInfo* canonical = nullptr;
  framework::PodInfoPtr canonical_ref;            // plain-pod batches only
  std::vector<const framework::NodeInfo*> nodes;  // feasible nodes, in filter order
  framework::ScoreTable table;
  std::vector<int64_t> totals;  // aligned with nodes
  bool scored = false;          // false: one feasible node, no scores
  size_t chosen = 0;            // index in nodes of the last pod's node
  int64_t batched_pods = 0;     // pods placed from the batch without a full cycle
  void Reset() {
    canonical = nullptr;
    canonical_ref.reset();
    nodes.clear();
    totals.clear();
    scored = false;
  }
};

// Opportunistic batching of plain pods (KEP-5598), exact under node sampling: the Filter
// verdict and raw Score values each node got for a pod of one signature, kept across
// consecutive plain-pod cycles of that signature. Each pod's cycle still runs its own
// PreFilter, walks its own window of nodes from the rotating start index until
// numFeasibleNodesToFind nodes fit (as one-by-one scheduling does), runs its own PreScore,
// normalizes the raw scores over its own feasible nodes and selects the host with the
// same random draw; only nodes whose results are cached (same NodeInfo object at the same
// generation) are not filtered or scored again. So the placement is the one-by-one
// placement. Valid because the signature (framework::BatchablePlugin) guarantees that a
// pod of the signature placed on a node changes the results of the next pod of the
// signature on that node only (its NodeInfo generation moves, so it is evaluated again),
// and the scheduler drops the cache on any other cluster change (PlainBatchFor).
struct NodeResultCache {
  // The pod that started the cache; nullptr: none. `canonical_ref` keeps it alive.
  const framework::PodInfo* canonical = nullptr;
  framework::PodInfoPtr canonical_ref;
  // Per slot (position in the snapshot's node list): the NodeInfo filtered (nullptr:
  // none), its generation then, whether it fit, and its Filter status when it did not.
  std::vector<const framework::NodeInfo*> node;
  std::vector<int64_t> generation;
  std::vector<uint8_t> fits;
  std::vector<framework::Status> status;
  // Per slot, with `node_local`: the node's list of nominated pods when it was filtered
  // (Handle::NominatedPodsViewForNode; the nominator makes a new list object when the
  // node's nominations change), part of the slot's validity.
  std::vector<std::shared_ptr<const std::vector<framework::PodInfoPtr>>> nominated;
  // Kept after a failed cycle of the canonical's signature (preemptors that fit nowhere,
  // one after another): while no pod in the cluster has (anti-)affinity terms, no gang
  // reservation exists and the scheduler's object epoch stays `epoch`, a signable pod's
  // Filter verdict on a node depends only on that node's NodeInfo and nominated pods
  // (framework::BatchablePlugin, Handle::ClusterObjectEpoch), so each slot stays valid
  // while its NodeInfo, generation and nominated list are unchanged, whatever else
  // changed; raw scores are dropped. Pods of other signatures bypass such a cache.
  bool keep_failed = false;
  bool node_local = false;  // slots are checked against `nominated` too
  uint64_t epoch = 0;
  framework::RawScoreCache scores;
  int64_t filtered = 0;  // Filter evaluations the cache ran (statistics, tests)
  // Set by the cycle's Filter walk when it used the cache: the feasible nodes' slots and
  // the number of nodes it looked at.
  bool walked = false;
  std::vector<uint32_t> feasible_slots;
  int evaluated = 0;
  std::vector<uint32_t> stale;  // FilterNodesCached's scratch
  void ClearNodes() {
    node.clear();
    generation.clear();
    fits.clear();
    status.clear();
    nominated.clear();
    scores.Clear();
  }
  void Reset() {
    canonical = nullptr;
    canonical_ref.reset();
    keep_failed = false;
    node_local = false;
    ClearNodes();
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
  // Plain pods scheduled with an earlier cycle's cached node results (NodeResultCache,
  // opportunistic batching).
  int64_t batched_plain_pods = 0;
  // PodGroup attempts that replayed the gang's remembered rejection (podgroup_memo.h).
  int64_t replayed_podgroup_rejections = 0;
};

class Scheduler {
 public:
  // Errors: invalid profile (unknown plugin, no queue sort, bad args), profiles with
  // different QueueSort plugins.
  [[nodiscard]] static framework::StatusOr<std::unique_ptr<Scheduler>> New(SchedulerOptions opts);
  ~Scheduler();

  // Registers event handlers on `informers` (replaying existing objects).
  void AddEventHandlers(cluster::InformerFactory& informers);

  // Event handlers (public for tests; normally called via AddEventHandlers).
  void OnPodAdd(const api::PodPtr& pod);
  void OnPodUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod);
  void OnPodDelete(const api::PodPtr& pod);
  // A pod reached Succeeded / Failed: its gang counts it
  // (gang::DefaultPodGroupManager::OnPodFinished) and writes its status. Cache and queue are left
  // to the pod events (a terminal pod is a delete there, as upstream).
  void OnPodFinished(const api::PodPtr& pod);
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
  // Permit timeouts, binding cycles waiting in PreBind, expired assumed pods,
  // ReportGatedPods.
  void Tick();
  // KEP-5501: every pod that a PreEnqueue plugin holds back before its first attempt (a
  // gang short of members, a missing ResourceClaim, a scheduling gate, a preemption in
  // flight) shows why: its PodScheduled condition False with reason NotReadyForScheduling
  // (SchedulingGated for the SchedulingGates plugin, the API server's reason) and the
  // plugin's message, and an Event of that reason; written again only when the message
  // changes (queue::SchedulingQueue::TakeGateReports).
  void ReportGatedPods();
  // The earliest clock time at which Tick() would change something, or INT64_MAX.
  api::Timestamp NextWakeTime() const;
  // The simulator's fast-forward over an idle stretch (podgroup_memo.h): when nothing but
  // the 5-minute unschedulable flush would run before `until` (no pod in activeQ or
  // backoffQ, none gated, nominated, binding or waiting in Permit, no stale-gang or
  // reservation deadline before it) and every waiting pod belongs to a PodGroup whose next
  // attempt replays its remembered rejection (PodGroupRejectionMemo::Find on the current
  // snapshot generation and object epoch, the pod showing that rejection already), each
  // flush round before `until` would give every gang the same rejection again and change
  // nothing else. All but the last round of each gang are then accounted here without
  // running them — the queue's attempts, counts and timestamps
  // (SchedulingQueue::RecordRepeatedFlushes), the scheduler's statistics, on_failure and
  // the PodGroup plugins' PodGroupCycleDone once per skipped round — and the last round
  // runs as usual when the clock reaches it, writing the Event, condition and status the
  // skipped ones would have overwritten. Returns the clock times of the skipped flush steps,
  // ascending and distinct (all before every round left to run); empty when anything
  // above does not hold (nothing is changed then). Virtual-clock runs only: the rounds
  // are skipped at the time of the call, not as the clock passes them.
  std::vector<api::Timestamp> SkipRepeatedFlushes(api::Timestamp until);

  // Scheduling algorithm alone on the current snapshot (upstream schedulePod); used by
  // ScheduleOne and benchmarks. On failure returns the FitError status and fills *diag.
  // With `batch`: a pod whose signature matches batch->canonical is placed from the batch
  // (see PlacementBatch); any other pod is scheduled in full and, when it is signable,
  // becomes the batch's canonical pod. The caller adds the chosen node's pod to the
  // snapshot view before the next call with the same batch (the PodGroup cycle through
  // Snapshot::AddPodToView; ScheduleOne by assuming it and updating the snapshot, with
  // PlainBatchFor dropping the batch when anything else changed).
  // With `restriction`, only those nodes are considered (as a PreFilterResult would keep
  // them): the PodGroup cycle places a gang inside one topology domain so. It must stay the
  // same for a batch's whole life.
  // With `cache` (plain pods, not with `batch`): a pod of cache->canonical's signature
  // reuses its cached per-node results, a signable pod of another signature restarts the
  // cache, an unsignable one clears it (NodeResultCache); the placement is the one
  // without.
  framework::Status SchedulePod(framework::Framework& fwk, framework::CycleState& state,
                                const framework::PodInfo& pod, ScheduleResult* result,
                                Diagnosis* diag, PlacementBatch* batch = nullptr,
                                const std::set<std::string>* restriction = nullptr,
                                NodeResultCache* cache = nullptr);

  queue::SchedulingQueue& scheduling_queue() { return *queue_; }
  gang::DefaultPodGroupManager& gangs() { return *gangs_; }
  dra::DefaultDRAManager& dra() { return *dra_; }
  quota::QueueManager& queue_manager() { return *queues_; }
  volume::Catalog& volumes() { return *volumes_; }
  // Node reservations of gangs that waited too long (gang/reservation.h; enabled by the
  // GangReservation plugin's args); plugins reach it as the service gang::ReservationManager.
  gang::ReservationManager& reservations() { return *reservations_; }
  // Evicts preemption victims off the scheduling thread (on the binding pool; inline when
  // binding_workers == 0); plugins reach it as the service framework::PreemptionExecutor.
  framework::PreemptionExecutor& preemption() { return *preemption_; }
  cache::Cache& cache() { return cache_; }
  cache::Snapshot& snapshot() { return snapshot_; }
  framework::Framework* ProfileFor(const api::Pod& pod);
  framework::Framework* Profile(const std::string& scheduler_name);
  SchedulerStats stats() const;
  // Binding cycles queued or running on the binding pool (0 with inline bindings); for
  // scheduler_goroutines{operation="binding"}.
  int BindingCyclesInFlight() const;
  // Binding cycles parked in PreBind (a PreBind plugin returned Wait, PreBindPlugin::
  // PreBindWait: DRA binding conditions); they hold no thread. Tick retries them, and
  // NextWakeTime includes their deadlines.
  size_t WaitingInPreBind() const ABSL_LOCKS_EXCLUDED(prebind_mu_);
  const config::KubeSchedulerConfiguration& config() const { return opts_.config; }

  // Where a failure happened: in the scheduling cycle (on the scheduling thread: the
  // algorithm, PostFilter, assume, Reserve, Permit) or in the binding cycle (WaitOnPermit,
  // PreBind, Bind; on a binding worker, or inline).
  enum class FailurePhase { kScheduling, kBinding };
  // Observers (called on the thread that made the decision).
  std::function<void(const api::Pod& pod, const std::string& node)> on_bound;
  // After on_bound, with the pod's queue record (attempts, initial_attempt_timestamp: the
  // scheduling SLI, upstream handleBindingCycleError's success path in schedule_one.go).
  std::function<void(const framework::QueuedPodInfo& pod, const std::string& node)> on_scheduled;
  std::function<void(const framework::QueuedPodInfo& pod, const framework::Status& status,
                     FailurePhase phase)>
      on_failure;

 private:
  explicit Scheduler(SchedulerOptions opts);
  // profile.cc: one Framework per profile (upstream profile.NewMap), then the queue that
  // all profiles share (their QueueSort must agree).
  framework::Status BuildProfiles();
  framework::Status BuildQueue();
  // The options every profile's Framework shares: clock, client, snapshot, nominator,
  // priorities, randomness, namespaces and the domain services.
  framework::FrameworkOptions BaseFrameworkOptions();
  bool ResponsibleFor(const api::Pod& pod) const;

  // ---- schedule_one.cc ----
  // Resets the NominatedLookup cached on the snapshot's NodeInfos whose nominations
  // changed since the last call (every NodeInfo when the nominator lost count). Called on
  // the scheduling thread before each Filter pass, never during one. Returns whether any
  // nomination changed (a placement batch is then not followed).
  bool SyncNominatedLookups();
  // ---- opportunistic batching of plain pods (schedule_one.cc) ----
  // What the cluster looked like when a plain-pod cycle took its snapshot.
  struct ClusterMark {
    int64_t snapshot_generation = 0;  // snapshot_.generation() after UpdateSnapshot
    int64_t confirmations = 0;        // confirmed_assumed_touches_ read with it
    uint64_t object_epoch = 0;        // object_epoch_
  };
  // Cache::UpdateSnapshot, and the mark of the cluster it synced (under batch_mu_, so
  // that confirmations counted by OnPodBound are exactly those in the snapshot).
  ClusterMark UpdateSnapshotAndMark() ABSL_LOCKS_EXCLUDED(batch_mu_);
  // The plain-pod batch `pod` may follow in `cycle` (nullptr: batching off, or an
  // extender), after dropping a batch that no longer describes the cluster: it was made
  // by another profile or not in the previous cycle, that cycle's pod was not assumed, or
  // the cluster changed since beyond that assume (a cache generation other than the
  // assume's single touch plus the confirmations of our own assumed pods, an object
  // event). Upstream's rules: pkg/scheduler/framework/runtime/batch.go
  // batchStateCompatible (consecutive cycle, last pod succeeded, same signature).
  NodeResultCache* PlainBatchFor(framework::Framework* fwk, int64_t cycle, const ClusterMark& mark);
  // Whether Filter verdicts of signable pods are node-local now (NodeResultCache
  // keep_failed): no pod with (anti-)affinity terms in the snapshot, no gang reservation.
  bool FilterVerdictsNodeLocal() const;
  // After a plain-pod cycle: keeps the batch for the next cycle when the pod was assumed
  // on `host` (assumed == true), drops it otherwise.
  void AfterPlainCycle(framework::Framework* fwk, const framework::PodInfoPtr& pod, int64_t cycle,
                       const ClusterMark& mark, bool assumed);
  // One Filter pass of one pod (upstream findNodesThatFitPod), its inputs and results.
  struct FilterPass {
    framework::Framework& fwk;
    framework::CycleState& state;
    const framework::PodInfo& pod;
    Diagnosis* diag;
    std::vector<const framework::NodeInfo*>* feasible;
    framework::Status* err;
    const std::set<std::string>* restriction;  // nullptr: every node
    NodeResultCache* cache = nullptr;          // plain-pod batching (FilterNodesCached)
  };
  // ---- extenders.cc ----
  // Builds the extenders (opts_.extenders, else from config.extenders) and gives every
  // profile's NodeResourcesFit the ignoredByScheduler resources (upstream buildExtenders).
  // Before BuildProfiles. Errors name the extender.
  framework::Status BuildExtenders();
  // upstream findNodesThatPassExtenders: each interested extender filters *feasible in
  // turn; its failed nodes get its message in the Diagnosis (FailedAndUnresolvableNodes as
  // UnschedulableAndUnresolvable), and kExtenderName joins the unschedulable plugins when
  // nodes were dropped. An error of a non-ignorable extender sets *pass.err (Error, the
  // extender's message) and returns false; an ignorable one is skipped.
  bool ExtendersPass(const FilterPass& pass, std::vector<const framework::NodeInfo*>* feasible);
  // upstream prioritizeNodes, extender part: adds sum(score x weight) x (MaxNodeScore /
  // MaxExtenderPriority) of the interested extenders to `totals` (aligned with feasible);
  // prioritize errors are logged and ignored.
  void AddExtenderScores(const framework::PodInfo& pod,
                         const std::vector<const framework::NodeInfo*>& feasible,
                         std::vector<int64_t>* totals);
  // upstream extendersBinding: the first binder extender interested in the pod binds it
  // (true, with the outcome in *out); false when none does (the Bind plugins then bind).
  bool ExtendersBinding(const api::Pod& pod, const std::string& node, framework::Status* out);
  // PreFilter, then the nodes that pass Filter. With `follow`, a PreFilter that keeps every
  // node lets ScheduleFromBatch place the pod first; *placed then says whether it did
  // (result->suggested_host set, nothing else filled).
  void FindNodesThatFitPod(const FilterPass& pass, PlacementBatch* follow = nullptr,
                           ScheduleResult* result = nullptr, bool* placed = nullptr);
  // The nominated node of the pod (from an earlier preemption) if it passes Filter
  // (upstream evaluateNominatedNode); nullptr otherwise.
  const framework::NodeInfo* EvaluateNominatedNode(const FilterPass& pass,
                                                   const framework::PreFilterResult& pfr);
  // Filter over `nodes` from the rotating start index, in parallel blocks, until
  // numFeasibleNodesToFind nodes fit; failures go to the Diagnosis.
  void FilterNodes(const FilterPass& pass, const std::vector<const framework::NodeInfo*>& nodes);
  // FilterNodes over every node of the snapshot for a pod of pass.cache's signature: the
  // same window, stop and start-index update, but nodes with a valid cached verdict are
  // not filtered again (the others are, and are cached). Sets cache->walked,
  // feasible_slots and evaluated when it walked the nodes without an error; when no node
  // fits it fills the Diagnosis as FilterNodes would (every node's status in walk order)
  // and leaves the start index.
  void FilterNodesCached(const FilterPass& pass);
  // Places `pod` (PreFilter already run on `state`) from `batch`; false when the batch has
  // no node left for it (or cannot be kept up to date), with *err set on a plugin error.
  bool ScheduleFromBatch(framework::Framework& fwk, framework::CycleState& state,
                         const framework::PodInfo& pod, PlacementBatch* batch,
                         ScheduleResult* result, framework::Status* err);
  // PreScore, Score and selectHost over `feasible` (two or more nodes); starts `batch`
  // when given.
  framework::Status PrioritizeNodes(framework::Framework& fwk, framework::CycleState& state,
                                    const framework::PodInfo& pod,
                                    std::vector<const framework::NodeInfo*>& feasible,
                                    ScheduleResult* result, PlacementBatch* batch,
                                    NodeResultCache* cache = nullptr);
  // upstream selectHost: the index of the highest total; ties uniformly at random (one
  // draw of Random(ties) per call, where upstream draws once per tie). `totals` is not
  // empty.
  size_t SelectHost(const std::vector<int64_t>& totals);
  int NumFeasibleNodesToFind(int32_t percentage, int num_all_nodes) const;
  // A failed scheduling attempt of a single pod: PostFilter (preemption) when it was
  // rejected, then HandleSchedulingFailure.
  void HandleFailedAttempt(framework::Framework& fwk, const framework::QueuedPodInfoPtr& qp,
                           framework::CycleState& state, framework::Status s, Diagnosis& diag,
                           int64_t cycle);
  void HandleSchedulingFailure(framework::Framework& fwk, const framework::QueuedPodInfoPtr& qp,
                               const framework::Status& status, const Diagnosis* diag,
                               const std::string& nominated_node, int64_t cycle,
                               const std::vector<std::string>* reasons = nullptr,
                               FailurePhase phase = FailurePhase::kScheduling);
  // Assume, Reserve, Permit and hand the pod to its binding cycle. `assumed`, when given,
  // is the pod already copied with spec.nodeName = host. With `hold`, the binding waits
  // in that batch (a PodGroup commit) instead of starting now. Returns whether the pod
  // stayed assumed (false: assume, Reserve or Permit failed and the failure was handled).
  bool CommitPod(framework::Framework* fwk, const framework::QueuedPodInfoPtr& qp,
                 std::shared_ptr<framework::CycleState> state, const std::string& host,
                 int64_t cycle, framework::PodInfoPtr assumed = nullptr,
                 std::shared_ptr<BindingBatch> hold = nullptr);
  void RunBindingCycle(framework::Framework* fwk, std::shared_ptr<framework::CycleState> state,
                       framework::QueuedPodInfoPtr qp, framework::PodInfoPtr assumed, int64_t cycle,
                       framework::Status permit_status);
  // Runs `fn` inline (no binding pool), holds it in `hold` while that batch is open, or
  // submits it to the pool.
  void SubmitBinding(std::function<void()> fn, BindingBatch* hold = nullptr);
  // The PreBind plugins from the `from`-th: Success, a failure, or Wait when a plugin's
  // PreBindWait still waits (the cycle is then parked in prebind_waiting_).
  framework::Status ContinuePreBind(framework::Framework* fwk,
                                    const std::shared_ptr<framework::CycleState>& state,
                                    const framework::QueuedPodInfoPtr& qp,
                                    const framework::PodInfoPtr& assumed, int64_t cycle,
                                    size_t from) ABSL_LOCKS_EXCLUDED(prebind_mu_);
  // After PreBind (status `s`): Bind and PostBind, or the failure's undo and requeue.
  void FinishBindingCycle(framework::Framework* fwk, std::shared_ptr<framework::CycleState> state,
                          framework::QueuedPodInfoPtr qp, framework::PodInfoPtr assumed,
                          int64_t cycle, framework::Status s);
  // Tick's part: every parked PreBind asked again (in the order they were parked); those
  // that no longer wait go on with their binding cycle.
  void RetryWaitingPreBinds(api::Timestamp now) ABSL_LOCKS_EXCLUDED(prebind_mu_);

  // ---- schedule_one_podgroup.cc: the PodGroup cycle's driver ----
  void RunPodGroupCycle(framework::Framework* fwk, const framework::QueuedPodInfoPtr& popped,
                        const framework::QueuedPodGroupInfo& plan, int64_t cycle);
  // The placement fit: assume, Reserve, Permit and bind every placed member (bindings held
  // until all are reserved); events and status through the gang::Coordinator.
  void CommitPodGroup(framework::Framework* fwk, const framework::QueuedPodGroupInfo& plan,
                      std::vector<PodGroupMember>& members, const PodGroupPlacement& placement,
                      int64_t cycle);
  // The placement did not fit: one gang-level reason for every member, nothing held;
  // members[i] is nominated to nominated[i] when not empty (gang preemption,
  // src/plugins/defaultpreemption/podgroup_preemption.h).
  // `out` (may be null) receives the status, plugins and reasons every member got.
  void RejectPodGroup(framework::Framework& fwk, const framework::QueuedPodGroupInfo& plan,
                      std::vector<PodGroupMember>& members, const PodGroupPlacement& placement,
                      int64_t cycle, const std::vector<std::string>& nominated,
                      PodGroupRejection* out = nullptr);
  // Gives every member the rejection `r` again, as RejectPodGroup did when `r` was recorded
  // (podgroup_memo.h), with GangPreemption's attempt counted again when it was.
  void ReplayPodGroupRejection(framework::Framework& fwk, const framework::QueuedPodGroupInfo& plan,
                               std::vector<PodGroupMember>& members, const PodGroupRejection& r,
                               int64_t cycle);
  // Gives every member of a uniform gang the rejection of another gang of its shape on the
  // same state (PodGroupRejectionMemo::Shape), under its own names, and remembers it.
  void ReplayShapeRejection(framework::Framework& fwk, const framework::QueuedPodGroupInfo& plan,
                            std::vector<PodGroupMember>& members,
                            const PodGroupRejectionMemo::Shape& shape, int64_t generation,
                            uint64_t epoch, int64_t cycle);
  // SkipRepeatedFlushes' gangs: every PodGroup waiting in unschedulablePods with the rounds
  // of the flush it gets before `limit` and the rejection each replays (*out); false when a
  // waiting pod is not such a gang's member or its attempt would not be a replay.
  struct RepeatedFlush;
  bool CollectRepeatedFlushes(api::Timestamp limit, std::vector<RepeatedFlush>* out);
  // Everything but the placement of RejectPodGroup / ReplayPodGroupRejection.
  void ApplyPodGroupRejection(framework::Framework& fwk, const framework::QueuedPodGroupInfo& plan,
                              std::vector<PodGroupMember>& members, const framework::Status& s,
                              const std::set<std::string>& plugins,
                              const std::vector<std::string>& reasons, int64_t cycle,
                              const std::vector<std::string>& nominated);

  // Releases expired reservations and those whose gang is gone or gated (fewer than
  // minMember pods); the ReservationManager's release hook requeues the pods GangReservation
  // rejected.
  void SweepReservations(api::Timestamp now);
  // Reports running gangs that fell below their minimum and evicts the remaining members of
  // those stale for their grace (gang/staleness.h), through the PreemptionExecutor.
  void SweepStaleGangs(api::Timestamp now);

  // ---- eventhandlers.cc ----
  void OnObjectAdd(const api::UnstructuredPtr& obj);
  bool OnStorageObject(const api::UnstructuredPtr& obj, uint32_t action);
  void OnObjectUpdate(const api::UnstructuredPtr& old_obj, const api::UnstructuredPtr& obj);
  void OnObjectDelete(const api::UnstructuredPtr& obj);
  // resource.k8s.io objects go to dra_ and requeue as ResourceClaim / ResourceSlice /
  // DeviceClass events; false for other kinds.
  bool OnDraObject(const api::UnstructuredPtr& old_obj, const api::UnstructuredPtr& obj,
                   uint32_t action);
  void OnNamespaceSet(const api::Namespace& ns) ABSL_LOCKS_EXCLUDED(ns_mu_);
  void OnNamespaceDelete(const api::Namespace& ns) ABSL_LOCKS_EXCLUDED(ns_mu_);
  void OnPodDisruptionBudgetSet(const api::PodDisruptionBudgetPtr& pdb)
      ABSL_LOCKS_EXCLUDED(pdb_mu_);
  void OnPodDisruptionBudgetDelete(const api::PodDisruptionBudgetPtr& pdb)
      ABSL_LOCKS_EXCLUDED(pdb_mu_);
  // Every PodDisruptionBudget the informer holds, in namespace/name order (upstream
  // pdbLister.List(labels.Everything()), read by DefaultPreemption).
  std::vector<api::PodDisruptionBudgetPtr> ListPodDisruptionBudgets() const
      ABSL_LOCKS_EXCLUDED(pdb_mu_);
  // A pod became bound (OnPodUpdate): leaves the queue, reports to the gang side, enters
  // the cache.
  // `bound`: PodInfo::Make(new_pod) (OnPodUpdate's).
  void OnPodBound(const api::PodPtr& old_pod, const api::PodPtr& new_pod,
                  framework::PodInfoPtr bound);
  // Moves unschedulable pods whose queueing hints accept the event.
  void Requeue(framework::EventResource resource, uint32_t action, const char* label,
               const framework::EventObjects& objs);

  // Cache errors are the cache's state machine refusing an event (a pod added twice, a
  // pod removed that it never saw, a forget of a pod not assumed): the informer stream and
  // the cache disagree. Nothing can be undone there, so they are logged, never dropped.
  static void LogCacheError(const char* op, const api::Pod& pod, const framework::Status& s);

  // spec.priority, else the named PriorityClass's value, else the globalDefault class's
  // value (0 without one): upstream's priority admission resolves the same at creation.
  // Thread-safe; pods without a class name take no lock.
  int32_t PriorityOf(const api::Pod& pod) const ABSL_LOCKS_EXCLUDED(pc_mu_);
  // Recomputes default_priority_ from priority_classes_ (after each change).
  void UpdateDefaultPriorityLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pc_mu_);
  uint64_t Random(uint64_t n) ABSL_LOCKS_EXCLUDED(rng_mu_);
  void CountAttempts(int64_t n) ABSL_LOCKS_EXCLUDED(stats_mu_);

  SchedulerOptions opts_;
  std::shared_ptr<gang::DefaultPodGroupManager> gangs_;
  std::shared_ptr<quota::QueueManager> queues_;  // fed like gangs_ (src/quota/queue_manager.h)
  std::shared_ptr<volume::Catalog> volumes_;     // fed from the object events too
  // DRA objects and allocations in flight (src/dra/dra_manager.h), fed like gangs_; the
  // DynamicResources plugin reads it as the dra::DefaultDRAManager service.
  std::unique_ptr<dra::DefaultDRAManager> dra_ = std::make_unique<dra::DefaultDRAManager>();
  std::unique_ptr<gang::Coordinator> gang_coordinator_;
  // Rejected PodGroup cycles that a later attempt may replay (podgroup_memo.h); scheduling
  // thread only.
  PodGroupRejectionMemo rejection_memo_;
  // Moves on every event that may change what a PodGroup cycle reads besides the cache,
  // the plan and the nominator: cluster objects (namespaces, PriorityClasses, PDBs,
  // PodGroups and other objects) and pending pods' scheduling-relevant updates. Atomic:
  // bumped by the event handlers, read by the scheduling thread.
  std::atomic<uint64_t> object_epoch_{0};
  // Running gangs below their minimum (gang/staleness.h), checked by Tick; provided to
  // plugins (GangSchedulingArgs sets its default grace) before the profiles are built.
  std::unique_ptr<gang::StaleGangTracker> stale_gangs_ = std::make_unique<gang::StaleGangTracker>();
  // Provided to plugins before the profiles are built; never null.
  std::unique_ptr<gang::ReservationManager> reservations_ =
      std::make_unique<gang::ReservationManager>();
  cache::Cache cache_;
  cache::Snapshot snapshot_;
  std::unique_ptr<framework::Parallelizer> parallelizer_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  std::map<std::string, std::unique_ptr<framework::Framework>> profiles_;
  // opts_.extenders as plain pointers; provided to plugins as a service. Fixed after New.
  framework::ExtenderList extender_list_;
  size_t next_start_node_index_ = 0;   // scheduling thread only
  int64_t plugin_sample_counter_ = 0;  // cycles seen by a sampling observer; scheduling thread

  absl::Mutex rng_mu_;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(rng_mu_);

  mutable absl::Mutex ns_mu_;
  std::map<std::string, std::map<std::string, std::string>> namespace_labels_
      ABSL_GUARDED_BY(ns_mu_);

  mutable absl::Mutex pdb_mu_;
  std::map<std::string, api::PodDisruptionBudgetPtr> pdbs_ ABSL_GUARDED_BY(pdb_mu_);  // ns/name

  mutable absl::Mutex pc_mu_;
  std::map<std::string, std::shared_ptr<const api::PriorityClass>> priority_classes_
      ABSL_GUARDED_BY(pc_mu_);
  // The globalDefault class's value (0 without one), written under pc_mu_ with every
  // change of priority_classes_, read without it by PriorityOf.
  std::atomic<int32_t> default_priority_{0};

  // framework::ObjectEventSource and framework::PodActivator for plugins (object_events.h):
  // the handlers of watched kinds, called by OnObjectAdd / Update / Delete before anything
  // else sees the object, and activation through queue_.
  class ObjectWatch final : public framework::ObjectEventSource, public framework::PodActivator {
   public:
    explicit ObjectWatch(Scheduler* s) : s_(s) {}
    void Watch(const std::string& group, const std::string& kind, Handler handler) override
        ABSL_LOCKS_EXCLUDED(mu_);
    void Activate(const std::vector<std::string>& pod_keys) override;
    // Calls the handlers of obj's kind; false when its kind is not watched.
    bool Deliver(const api::Unstructured* old, const api::Unstructured& obj, bool deleted)
        ABSL_LOCKS_EXCLUDED(mu_);

   private:
    Scheduler* s_;
    std::atomic<bool> any_{false};  // a handler exists: the common case takes no lock
    mutable absl::Mutex mu_;
    std::map<std::string, std::vector<Handler>> handlers_ ABSL_GUARDED_BY(mu_);  // kind.group
  };
  std::unique_ptr<ObjectWatch> object_watch_ = std::make_unique<ObjectWatch>(this);

  // Declared before binding_pool_: work still queued on the pool at destruction uses it.
  std::unique_ptr<framework::PreemptionExecutor> preemption_;
  std::unique_ptr<BindingPool> binding_pool_;  // nullptr: inline bindings
  std::atomic<bool> stopped_{false};

  mutable absl::Mutex stats_mu_;
  SchedulerStats stats_ ABSL_GUARDED_BY(stats_mu_);

  // A binding cycle parked in PreBind (see WaitingInPreBind).
  struct PreBindWaiter {
    framework::Framework* fwk = nullptr;
    std::shared_ptr<framework::CycleState> state;
    framework::QueuedPodInfoPtr qp;
    framework::PodInfoPtr assumed;
    int64_t cycle = 0;
    size_t plugin = 0;                   // index of the waiting PreBind plugin
    api::Timestamp wake_at = INT64_MAX;  // its PreBindWait's deadline
  };
  mutable absl::Mutex prebind_mu_;
  std::vector<PreBindWaiter> prebind_waiting_ ABSL_GUARDED_BY(prebind_mu_);

  // Reused per cycle to avoid allocation on the hot path (scheduling thread only).
  std::vector<std::string> changed_nominations_;  // SyncNominatedLookups' scratch
  // Opportunistic batching of plain pods (scheduling thread only, but for the counter).
  NodeResultCache plain_batch_;
  framework::Framework* plain_batch_fwk_ = nullptr;
  int64_t plain_batch_cycle_ = -1;  // the cycle that last used or started plain_batch_
  ClusterMark plain_batch_mark_;    // the cluster as that cycle saw it
  // Held around Cache::UpdateSnapshot on the scheduling thread and around the cache's
  // confirmation of one of our assumed pods (OnPodBound) with its count.
  mutable absl::Mutex batch_mu_;
  // Cache generations taken by confirming our own assumed pods unchanged (2 each: the
  // cache removes and adds the pod again); not a change for a placement batch.
  int64_t confirmed_assumed_touches_ ABSL_GUARDED_BY(batch_mu_) = 0;
  std::vector<framework::Status> statuses_;
  std::vector<uint8_t> fits_;
};

}  // namespace phalanx::scheduler
