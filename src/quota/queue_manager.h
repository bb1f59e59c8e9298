// QueueManager: queue tree, per-queue allocation and demand, fair share, admission and
// reclaim victim selection (thread-safe; one mutex).
//
// Fed like gang::DefaultPodGroupManager from the scheduler's informer events: queue objects (KAI /
// Volcano Queue, ElasticQuota) build the tree (queue_tree.h); every pod is assigned to a queue
// (QueueOf) and counted as pending (not on a node) or allocated (bound, or assumed by the
// scheduler through MarkAssumed at Reserve). Per-queue sums are kept incrementally, for the
// queue and each of its ancestors, so admission checks are O(depth * resources).
//
// Pod state per queue:
//
//   add (no node) ──► Pending ── MarkAssumed (Reserve) / bound ──► Allocated
//                        ▲                                            │
//                        └──────────── MarkForgotten (Unreserve) ─────┘
//   delete / terminal phase: removed from either state.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/resource.h"
#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"
#include "quota/device_charge.h"
#include "quota/fair_share.h"
#include "quota/queue_tree.h"
#include "quota/usage.h"

namespace phalanx::gang {
class PodGroupManager;
}
namespace phalanx::dra {
class DefaultDRAManager;
}

namespace phalanx::quota {

// Where a pod names its queue, in this order of precedence:
inline constexpr const char* kKAIQueueLabel = "kai.scheduler/queue";
inline constexpr const char* kVolcanoQueueAnnotation = "scheduling.volcano.sh/queue-name";
inline constexpr const char* kKoordinatorQuotaLabel = "quota.scheduling.koordinator.sh/name";
//   then the gang's PodGroup spec.queue (KAI / Volcano), then an ElasticQuota in the pod's
//   namespace (CapacityScheduling); when the namespace's only ElasticQuotas are invalid, the
//   pod is assigned to one of them with its error (it waits, the quota is never dropped).

// How a pod maps to a queue.
struct Assignment {
  std::string queue;  // empty: the pod is in no queue (quota does not apply)
  std::string via;    // e.g. "label kai.scheduler/queue"
  std::string error;  // non-empty: the named queue is missing or invalid (pod stays pending)
};

// Per-queue figures for reports, metrics and events.
struct QueueStatus {
  std::string name;
  std::string parent;
  std::string dialect;
  ResourceList allocated;  // subtree: assumed + bound pods
  ResourceList pending;    // subtree: requests of pods not yet placed
  ResourceList guarantee;
  ResourceList limit;         // absent = unlimited
  Share deserved;             // fair share (fair_share.h)
  double dominant_share = 0;  // allocated / deserved, dominant resource
  int64_t running_pods = 0;   // subtree
  int64_t pending_pods = 0;   // subtree
  std::string error;          // invalid queue
};

// Volcano-style counts of the units (PodGroups) whose pods name a queue directly (not its
// children's): a gang counts once, a pod without a gang counts as a unit of minMember 1.
// Classified from the members the QueueManager sees (pods allocated: bound or assumed):
//   running  allocated members >= minMember (Volcano: a PodGroup with minAvailable
//            allocated tasks is Running)
//   inqueue  some but fewer than minMember allocated (being placed: binds in flight)
//   pending  none allocated
struct QueueUnitCounts {
  int32_t pending = 0;
  int32_t running = 0;
  int32_t inqueue = 0;
  bool operator==(const QueueUnitCounts& o) const {
    return pending == o.pending && running == o.running && inqueue == o.inqueue;
  }
};

// One queue object (KAI / Volcano Queue, ElasticQuota) with what its status reports; see
// QueueManager::ObjectReports and quota/queue_status.h.
struct QueueObjectReport {
  api::UnstructuredPtr object;
  QueueStatus status;                 // of the queue this object defines (status.error too)
  std::vector<std::string> children;  // usable child queues, by name (KAI childQueues)
  QueueUnitCounts units;              // own units (Volcano pending / running / inqueue)
  // Non-empty when this object takes no part in scheduling: its spec is invalid, its parent
  // is missing, it sits on a cycle or below an invalid ancestor, or another object defines
  // the same queue name. Names the object and the field (queue_tree.h).
  std::string error;
};

// A victim unit for reclaim: a whole gang (every allocated member) or a single pod.
struct ReclaimUnit {
  std::string key;  // gang key or pod key
  std::string queue;
  std::vector<api::PodPtr> pods;
  ResourceList request;
  int32_t priority = 0;  // highest member priority
};

// One unit of a victim set that reclaim checks (CheckReclaimVictims): its queue, its
// request (summed over its pods, QueueManager::RequestOf), and whether it is a reclaim
// victim (from ReclaimCandidates) or another kind of victim in that queue (a lower-priority
// pod that priority preemption evicts in the same set).
struct ReclaimVictim {
  std::string queue;
  ResourceList request;
  bool reclaim = true;
};

// What plugins see of queues and quotas (the Queues plugin), named as upstream names the
// managers its Handle shares with plugins (SharedDRAManager, SharedCSIManager; kube-scheduler
// itself has no queues or quotas): the narrow interface that
// QueueManager implements and the scheduler hands to plugins through the framework Handle
// (framework::ServiceRegistry). Each method is QueueManager's, documented there.
class SharedQueueManager {
 public:
  virtual ~SharedQueueManager() = default;
  virtual bool HasQueues() const = 0;
  virtual Assignment QueueOf(const api::Pod& pod) const = 0;
  virtual double DominantShareOf(const std::string& queue) const = 0;
  virtual void SetCapacity(const ResourceList& capacity) = 0;
  virtual api::Status CheckAdmission(const std::string& queue, const ResourceList& request,
                                     api::Timestamp now = 0) const = 0;
  virtual std::vector<ReclaimUnit> SelectReclaimVictims(const std::string& queue,
                                                        const ResourceList& request,
                                                        const ResourceList& free,
                                                        std::string* why) const = 0;
  virtual std::vector<ReclaimUnit> ReclaimCandidates(const std::string& queue,
                                                     const ResourceList& request,
                                                     std::string* why) const = 0;
  virtual api::Status CheckReclaimVictims(const std::vector<std::string>& queues,
                                          const ResourceList& request,
                                          const std::vector<ReclaimVictim>& victims) const = 0;
  virtual ResourceList FreeCapacity() const = 0;
  virtual void SetReclaimHold(const std::string& queue, api::Timestamp until) = 0;
  virtual bool HasReclaimHold(const std::string& queue, api::Timestamp now) const = 0;
  virtual void MarkAssumed(const api::Pod& pod) = 0;
  virtual void MarkForgotten(const api::Pod& pod) = 0;
  virtual void EnableTimeBasedFairShare(const UsageParams& params,
                                        std::function<api::Timestamp()> now) = 0;
  virtual void UseClock(std::function<api::Timestamp()> now) = 0;
  virtual bool PreemptProtected(const api::Pod& victim) const = 0;
  virtual ResourceList ChargeOf(const std::vector<const api::Pod*>& pods) const = 0;
  virtual void SetDeviceClassMappings(const std::vector<DeviceClassMapping>& mappings) = 0;
  virtual std::vector<std::string> Warnings() const = 0;
};

class QueueManager final : public SharedQueueManager {
 public:
  // `gangs` (may be null) resolves a pod's gang for PodGroup spec.queue.
  explicit QueueManager(const gang::PodGroupManager* gangs = nullptr);

  void OnObjectAdd(const api::UnstructuredPtr& obj);
  void OnObjectUpdate(const api::UnstructuredPtr& obj) { OnObjectAdd(obj); }
  // An update that changed only the status (our own status writes come back this way, see
  // scheduler::OnlyStatusChanged): the stored object is replaced, the tree is not rebuilt.
  void OnObjectStatusUpdate(const api::UnstructuredPtr& obj);
  void OnObjectDelete(const api::UnstructuredPtr& obj);
  // All pods (bound or not); terminal pods count as deleted. `requests`, when not null,
  // is api::PodRequests of the added / new pod as the caller already has it
  // (framework::PodInfo::requests), so that it is not computed again.
  void OnPodAdd(const api::PodPtr& pod, const api::Resource* requests = nullptr);
  void OnPodUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod,
                   const api::Resource* requests = nullptr);
  void OnPodDelete(const api::PodPtr& pod);
  // Scheduler bookkeeping (Reserve / Unreserve of the Queues plugin): the pod's request
  // counts as allocated from Reserve on, so that quota is taken inside the scheduling (or
  // PodGroup) transaction and not only when the binding is observed.
  void MarkAssumed(const api::Pod& pod) override;
  void MarkForgotten(const api::Pod& pod) override;

  // Cluster allocatable per resource (fair share divides it). Set by the plugin from the
  // snapshot before decisions.
  void SetCapacity(const ResourceList& capacity) override;

  // Time-based fair share (QueuesArgs.timeBasedFairShare, quota/usage.h): from now on the
  // allocation is integrated over time on `now` (ns; the scheduler's clock) and fair share's
  // over-quota weights follow KAI's calcShareWeights with the queues' normalized usage.
  // Calling it again replaces the parameters and forgets the usage so far.
  void EnableTimeBasedFairShare(const UsageParams& params,
                                std::function<api::Timestamp()> now) override;
  // Normalized usage per queue and resource at the clock's now ({} when not enabled).
  NormalizedUsage UsageNow() const;
  // The scheduler's clock (ns), for KAI's min runtimes (below) and time-based fair share.
  // Without one no job is protected by a min runtime.
  void UseClock(std::function<api::Timestamp()> now) override;
  // KAI minruntime plugin, preemption (resolver.go resolvePreemptMinRuntime): true when
  // `victim` belongs to a queue whose preemptMinRuntime (its own, else the nearest
  // ancestor's) has not passed since the pod started (status.startTime; a gang is protected
  // while any member is, i.e. from its last start, KAI's LastStartTimestamp).
  bool PreemptProtected(const api::Pod& victim) const override;

  // DRA state (the scheduler's dra::DefaultDRAManager, may be null): a pod's claims are
  // charged to its queue (quota/device_charge.h) and the devices of the ResourceSlices are
  // added to the capacity SetCapacity is given (per quota resource a device charges). Set
  // before pods arrive; `dra` must outlive this manager.
  void UseDRA(const dra::DefaultDRAManager* dra);
  // QueuesArgs.deviceClassMappings (Kueue's resources.deviceClassMappings, valid as
  // ValidateDeviceClassMappings says): device classes -> quota resource; every pod's charge
  // is computed again.
  void SetDeviceClassMappings(const std::vector<DeviceClassMapping>& mappings) override;
  // What `pods` (of one queue) charge together, for admission: each pod's RequestOf and
  // its own claims' devices, and once each the shared claims (named by resourceClaimName,
  // or a PodGroup's) that no allocated pod of the pod's queue already holds (those are in
  // its allocation already). Computed from the DRA state now, not from the counted entries.
  ResourceList ChargeOf(const std::vector<const api::Pod*>& pods) const override;
  // Distinct warnings, in order: "queue Q limits nvidia.com/gpu but device class C (claim
  // ns/c) maps to no quota resource: its devices count only as deviceclass/C; map it in
  // QueuesArgs deviceClassMappings" and the allocationMode All notes. Never cleared.
  std::vector<std::string> Warnings() const override;

  bool HasQueues() const override;
  // Changes with every queue object, pod or capacity event (for callers that cache).
  uint64_t Generation() const;

  Assignment QueueOf(const api::Pod& pod) const override;

  // OK when `request` (summed over a pod or a whole gang) fits the quota of `queue` and of
  // each ancestor (or `queue` is not a usable queue): allocated + request <= limit, and for
  // ElasticQuota (CapacityScheduling) also allocated + request <= min, or the sum over all
  // quotas of allocated + request <= the sum of min (borrowing idle min). Else
  // ResourceExhausted with the reason as its message, e.g.
  // "waiting for queue team-a quota: needs 16 nvidia.com/gpu, 8 free".
  // While another queue holds capacity it reclaimed (SetReclaimHold, not expired at `now`),
  // a queue that would go above its deserved share with `request` is refused too:
  // "waiting for queue team-b: capacity reclaimed by queue team-a is held for it".
  // Idle quota that other queues do not lend (lendingLimit) is not free either:
  // "waiting for queue b: needs 10 nvidia.com/gpu, 5 free outside the idle quota other
  // queues do not lend (lendingLimit: 15 nvidia.com/gpu kept)".
  api::Status CheckAdmission(const std::string& queue, const ResourceList& request,
                             api::Timestamp now = 0) const override;

  // After evicting victims for `queue`: the freed capacity is kept for it (see
  // CheckAdmission) until one of its pods is allocated or `until` passes (virtual or wall
  // clock ns) — the victims may take a while to go, and other queues' pods are requeued by
  // the same deletions.
  void SetReclaimHold(const std::string& queue, api::Timestamp until) override;
  bool HasReclaimHold(const std::string& queue, api::Timestamp now) const override;

  // Dominant share of `queue` (allocated / deserved); 0 for "" or unknown queues.
  double DominantShareOf(const std::string& queue) const override;

  // Reclaim (KAI reclaim action, Volcano reclaim): victim units that let `queue` get
  // `request` when the cluster has `free` left. Returns {} with *why set when reclaim does
  // not apply: the queue would exceed its deserved share with the request, the cluster
  // already has room, or victims cannot free enough. Victims come from other reclaimable
  // queues that are above their deserved share in a resource the request needs; whole
  // gangs (every allocated member) or single pods; lowest priority first, then the most
  // recently created; a victim queue never drops below its guarantee. All or nothing.
  // Selection by cluster-wide totals only, unverified against placement: the Queues plugin
  // uses ReclaimCandidates and CheckReclaimVictims instead; kept for its tests and
  // for callers that want the accounting view.
  std::vector<ReclaimUnit> SelectReclaimVictims(const std::string& queue,
                                                const ResourceList& request,
                                                const ResourceList& free,
                                                std::string* why) const override;

  // The verified reclaim (the caller places the reclaimer with victims removed
  // and evicts only a set that lets it fit, src/plugins/defaultpreemption/podgroup_preemption.h and
  // the Queues plugin's PostFilter): every unit that `queue` may reclaim for `request` (summed over
  // a pod or a whole gang; ResourceList units, "pods" ignored), whatever the cluster's free
  // capacity — the room may be there in total but scattered. A unit is a whole gang (every
  // allocated member) or a single pod of another reclaimable queue (Volcano `reclaimable`) that is
  // above its deserved share in a resource the request needs; pods being deleted are left out.
  // Ordered as victims: lowest priority first, then the most recently created, then by key. Returns
  // {} with *why set when reclaim does not apply: the queue is not usable, it would exceed its
  // deserved share with the request (KAI: a queue below its fair share takes back what it deserves,
  // never more), or no other queue is above its deserved share. Which candidates may go together:
  // CheckReclaimVictims.
  std::vector<ReclaimUnit> ReclaimCandidates(const std::string& queue, const ResourceList& request,
                                             std::string* why) const override;

  // OK when evicting `victims` together is allowed on behalf of the reclaiming `queues`
  // (the queues of the pod or gang) wanting `request`; else FailedPrecondition saying why,
  // e.g. "queue team-b would
  // drop below its guarantee (nvidia.com/gpu: 8 left, 16 guaranteed)". Rules, for victims of
  // queues not in `queues` (the reclaimer's own pods are in-queue preemption):
  //  1. no queue on a victim's path to the root drops below its guarantee in any resource
  //     the victims free (KAI / Volcano / CapacityScheduling: guaranteed quota is never
  //     reclaimed), for every kind of victim;
  //  2. a queue that loses reclaim victims stays above its deserved share, in some resource
  //     the request needs, until its last victim: allocated - all its victims + its largest
  //     victim unit > deserved (the selection rule of SelectReclaimVictims: a unit is taken
  //     only from a queue still above its deserved share).
  // Both rules hold for every subset of a set that satisfies them (fewer victims leave more
  // allocated), so a reprieve never breaks them.
  api::Status CheckReclaimVictims(const std::vector<std::string>& queues,
                                  const ResourceList& request,
                                  const std::vector<ReclaimVictim>& victims) const override;

  // Cluster allocatable minus everything allocated (every pod, in a queue or not).
  ResourceList FreeCapacity() const override;

  std::vector<QueueStatus> Status() const;

  // Every queue object, in key order, with its queue's figures, usable children, own unit
  // counts and, for an object that takes no part in scheduling, why (QueueObjectReport).
  // O(queue objects + pods); for the status writer (queue_status.h), about once a second.
  std::vector<QueueObjectReport> ObjectReports() const;

  // The pod's request as a ResourceList: cpu (milli), memory, ephemeral-storage, extended
  // resources, and "pods": 1. Zero amounts are omitted.
  static ResourceList RequestOf(const api::Pod& pod);
  // The same from the pod's api::PodRequests.
  static ResourceList RequestOf(const api::Resource& requests);

 private:
  // A pod the manager has seen. While there is no queue object (objects_ empty) an entry is
  // `stale`: only pod and allocated are kept, nothing is counted (no queue to count for,
  // and no reader of the sums without one), so that a cluster without queues pays one map
  // entry per pod. RebuildTreeLocked computes and counts every stale entry when the first
  // queue object arrives, and makes every entry stale again when the last one goes.
  struct Entry {
    api::PodPtr pod;
    Assignment assignment;
    std::string gang;       // gang key ("" = none)
    std::string gang_spec;  // spec key of the gang
    ResourceList request;   // RequestOf and the devices of the pod's own claims
    // Claims the pod shares (DeviceCharge::shared): id -> charge, counted once per queue
    // through shared_claims_.
    std::map<std::string, ResourceList> shared;
    bool allocated = false;
    bool counted = false;  // contributes to the sums under `counted_queue`
    std::string counted_queue;
    bool counted_allocated = false;
    bool stale = false;  // request, assignment and gang not computed; never counted
  };
  void RebuildTreeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // e.request and e.shared from the pod (`requests`: its api::PodRequests when the caller
  // has it) and, with DRA, its claims; records warnings for unmapped classes.
  void ChargeLocked(Entry& e, const api::Resource* requests) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The warnings of a pod's DeviceCharge in queue `queue` (see Warnings).
  void WarnLocked(const std::string& queue, const DeviceCharge& c) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One pod more (delta +1) or less (-1) using shared claim `id` in `queue`; the claim's
  // charge is in the sums once while some pod uses it, as allocated while one of them is.
  void ShareLocked(const std::string& queue, const std::string& id, const ResourceList& charge,
                   bool allocated, int delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyLocked(const std::string& queue, const ResourceList& charge, bool allocated, int sign)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Assignment ResolveLocked(const api::Pod& pod, std::string* gang, std::string* gang_spec) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UncountLocked(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CountLocked(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefreshLocked(Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);  // re-resolve and re-count
  void EnsureShareLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Status() of one queue (needs EnsureShareLocked).
  QueueStatus StatusOfLocked(const std::string& name, const QueueSpec& spec) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Own unit counts per queue (QueueUnitCounts).
  std::map<std::string, QueueUnitCounts> UnitCountsLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Subtree allocation of `q` ({} for none) and its deserved share of `r` (0 for none).
  const ResourceList& AllocatedLocked(const std::string& q) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  double DeservedLocked(const std::string& q, const std::string& r) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // lendingLimit (Kueue KEP-1224 semantics, on any dialect that sets it): OK when `request`
  // fits the cluster's free capacity minus the idle quota that queues off `queue`'s path
  // keep for themselves — per queue max(0, quota - lendingLimit - allocated), a parent
  // keeping the larger of its own and its children's sum; else ResourceExhausted saying why.
  api::Status LendingCheckLocked(const std::string& queue, const ResourceList& request) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t KeptIdleLocked(const std::string& q, const std::string& r,
                         const std::set<std::string>& path) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK when `queue` may reclaim for `request` (usable, and within its deserved share with
  // it); else FailedPrecondition saying why. Needs EnsureShareLocked.
  api::Status ReclaimerCheckLocked(const std::string& queue, const ResourceList& request) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // KAI reclaimMinRuntime of a victim in `victim_queue` reclaimed by `reclaimer` (resolver.go
  // resolveReclaimMinRuntimeLCA: different top-level queues -> the victim's top-level
  // queue's value; else from the child of their lowest common ancestor towards the victim,
  // walking up); 0 when none is set.
  int64_t ReclaimMinRuntimeLocked(const std::string& reclaimer,
                                  const std::string& victim_queue) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every allocated unit (a gang's allocated members, or a pod) of a reclaimable queue other
  // than `queue`, not being deleted, in victim order (lowest priority, newest, key). Units
  // still inside their reclaimMinRuntime (from their last start) are left out.
  std::vector<ReclaimUnit> VictimUnitsLocked(const std::string& queue) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const gang::PodGroupManager* const gangs_;  // thread-safe itself; set at construction
  mutable absl::Mutex mu_;
  // queue objects by Key()
  std::map<std::string, api::UnstructuredPtr> objects_ ABSL_GUARDED_BY(mu_);
  QueueTree tree_ ABSL_GUARDED_BY(mu_);
  // Namespace -> an invalid ElasticQuota of it, for namespaces that have no valid one (their
  // pods stay pending with its error instead of running outside any quota).
  std::map<std::string, std::string> invalid_quota_by_namespace_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, Entry> pods_ ABSL_GUARDED_BY(mu_);  // pod key -> entry
  // Subtree sums per queue.
  std::map<std::string, ResourceList> allocated_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ResourceList> pending_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> running_pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> pending_pods_ ABSL_GUARDED_BY(mu_);
  // Own (not subtree) demand per queue, for fair share.
  std::map<std::string, ResourceList> own_demand_ ABSL_GUARDED_BY(mu_);
  ResourceList total_allocated_ ABSL_GUARDED_BY(mu_);  // every allocated pod
  ResourceList capacity_ ABSL_GUARDED_BY(mu_);
  // DRA (UseDRA): the state, the class mapping, the device capacity cached by the DRA
  // generation, the shared claims counted (queue, claim id), and the warnings so far.
  const dra::DefaultDRAManager* dra_ ABSL_GUARDED_BY(mu_) = nullptr;
  DeviceClassMapper mapper_ ABSL_GUARDED_BY(mu_);
  // The classes and slices (by identity) device_capacity_ was computed from.
  mutable std::vector<const void*> device_capacity_key_ ABSL_GUARDED_BY(mu_);
  mutable ResourceList device_capacity_ ABSL_GUARDED_BY(mu_);
  struct SharedClaim {
    ResourceList charge;
    int32_t pods = 0;
    int32_t allocated = 0;
  };
  std::map<std::pair<std::string, std::string>, SharedClaim> shared_claims_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<std::string> warnings_ ABSL_GUARDED_BY(mu_);
  mutable std::set<std::string> warned_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, api::Timestamp> holds_ ABSL_GUARDED_BY(mu_);  // queue -> hold expiry
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 1;
  // Time-based fair share: usage integrated over time (mutable: const readers accrue it up
  // to now before they read shares), and the clock.
  mutable std::unique_ptr<UsageTracker> usage_ ABSL_GUARDED_BY(mu_);
  std::function<api::Timestamp()> now_ ABSL_GUARDED_BY(mu_);
  mutable int64_t share_epoch_ ABSL_GUARDED_BY(mu_) = -1;
  // Some queue of the tree sets preemptMinRuntime (PreemptProtected's lock-free early out).
  std::atomic<bool> any_preempt_min_runtime_{false};
  // Adds the allocation held since the last accrual (no-op when not enabled).
  void AccrueLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The fair-share cache, refreshed by EnsureShareLocked (const readers, hence mutable).
  mutable uint64_t share_generation_ ABSL_GUARDED_BY(mu_) = 0;
  mutable std::map<std::string, Share> share_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::quota
