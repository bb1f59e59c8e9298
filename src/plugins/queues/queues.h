// Queues: queue and quota semantics of KAI (Queue + Proportion), Volcano (Queue) and
// scheduler-plugins CapacityScheduling / Koordinator ElasticQuota, in one plugin for all
// dialects (the queue tree, fair share and accounting live in src/quota).
//
// Extension points:
//   QueueSort  the queue furthest below its fair share first (lowest dominant share,
//              quota/fair_share.h, as of each Pop: one activeQ heap per queue); within a queue, or
//              at equal shares, GangPrioritySort's order (priority, then the gang's creation time,
//              then the gang key), so gang members stay together.
//   PreFilter  a pod naming a missing or invalid queue is UnschedulableAndUnresolvable with
//              the reason ("queue team-x does not exist (named by label
//              kai.scheduler/queue)"); a pod whose request exceeds its queue's free quota
//              (limit / max of the queue and every ancestor; ElasticQuota also min plus
//              borrowable idle min) is Unschedulable: "waiting for queue team-a quota:
//              needs 16 nvidia.com/gpu, 8 free". Inside a PodGroup cycle the members
//              placed so far count against the quota too.
//   PodGroup   AdmitPodGroup: the whole gang's request (its minMember members, summed per
//              queue) against quota, inside the gang transaction — a gang never takes
//              half of a quota. Nothing is evicted here. When the admitted gang's
//              placement fails, PodGroup preemption
//              (src/plugins/defaultpreemption/podgroup_preemption.h) asks this plugin's victim
//              policy (VictimCandidates, CheckVictims, EvictVictims) for reclaim (below).
//   Reserve    the pod's request counts as its queue's allocation from Reserve on;
//              Unreserve returns it.
//   PostFilter reclaim for single pods (below).
// Reclaim (KAI reclaim action, Volcano reclaim, CapacityScheduling preemption of borrowed
// quota): a queue that stays within its deserved share with the request may evict
// units of other reclaimable queues above their deserved share — whole gangs or single
// pods (quota::SharedQueueManager::ReclaimCandidates) — and evicts only a set with which the
// reclaimer is verified to fit:
//  - a gang: the candidates go into the same search as priority preemption's victims
//    (PodGroupPreemption: all removed from the snapshot view, the WHOLE gang placed, units
//    reprieved greedily while it still fits — the newest, lowest-priority units stay
//    victims longest — and the final set placed once more before anything is evicted);
//  - a single pod: DefaultPreemption's per-node dry run (DefaultPreemption::FindCandidate)
//    with the candidates as victims: the pod must pass Filter on the node with that node's
//    victims gone; the node is nominated for it.
// The final set never takes a queue below its guarantee nor below its deserved share by
// more than its last unit, counting lower-priority victims of the same set too
// (SharedQueueManager::CheckReclaimVictims), and never holds a pod of the reclaiming queue. If no
// set fits, nothing is evicted and the reason says so ("reclaim would not make room for the
// whole gang (2 reclaimable pods considered)"). Victims are evicted as preemption evicts
// (framework::PreemptionExecutor: waiting pods rejected, DisruptionTarget condition, delete;
// off the scheduling thread in live mode) with a "Preempted" event
// "Reclaimed by queue Q for WHO (queue V is above its deserved share)". The freed capacity
// is held for the reclaiming queue for kReclaimHoldNs (or until one of its pods is placed):
// other queues cannot go above their deserved share meanwhile, and the queue does not
// reclaim again while its victims are still terminating.
//
// The plugin is inert for pods outside queues. `phalanx simulate` enables it when the
// scenario has queue objects (EnableQueuesInProfile); otherwise enable it in the profile:
//   plugins: {multiPoint: {enabled: [{name: Queues}], disabled: [{name: PrioritySort}]}}
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/types.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/podgroup.h"
#include "framework/preemption_executor.h"
#include "framework/registry.h"
#include "plugins/gangscheduling/gang_scheduling.h"
#include "quota/queue_manager.h"
#include "quota/queue_tree.h"

namespace phalanx::plugins::queues {

inline constexpr int64_t kReclaimHoldNs = 30LL * 1000 * 1000 * 1000;  // 30 s

// QueuesArgs (pluginConfig args, kind QueuesArgs):
//   timeBasedFairShare:        # absent or null: off (KAI without a usage database)
//     windowSeconds: 604800    # KAI usageParams.windowSize (default 1 week)
//     windowType: sliding      # or tumbling (KAI windowType)
//     halfLifeSeconds: 0       # KAI halfLifePeriod; 0 = no decay
//     kValue: 1.0              # KAI proportion kValue: weight of the usage
//   deviceClassMappings:       # Kueue Configuration resources.deviceClassMappings
//   - name: nvidia.com/gpu     # the quota resource devices of these classes charge
//     deviceClassNames: [gpu.nvidia.com, mig.nvidia.com]
// Usage is the allocation Phalanx accounts itself, integrated on the scheduler's clock
// (quota/usage.h). DRA devices charge deviceclass/<class> and the mapped name; a class in
// no mapping whose name contains "gpu" maps to nvidia.com/gpu (quota/device_charge.h). The
// SharedQueueManager is shared by every profile: the last profile that sets it wins.
// Errors: "QueuesArgs: timeBasedFairShare.kValue: Invalid value: ...",
// "deviceClassMappings[1].deviceClassNames[0]: Invalid value: \"gpu.nvidia.com\": device
// class already mapped to resource nvidia.com/gpu" (Kueue's validation).
struct QueuesArgs {
  std::optional<quota::UsageParams> time_based_fair_share;
  std::vector<quota::DeviceClassMapping> device_class_mappings;
};
framework::StatusOr<QueuesArgs> ParseQueuesArgs(framework::PluginArgs args);

class Queues final : public framework::QueueSortPlugin,
                     public framework::PreFilterPlugin,
                     public framework::PostFilterPlugin,
                     public framework::ReservePlugin,
                     public framework::EnqueueExtensions,
                     public framework::PodGroupPlugin,
                     public framework::PodGroupCycleListener,
                     public framework::PodGroupVictimPolicy,
                     public framework::PodGroupPostFilterPlugin,
                     public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "Queues";

  // Evicts through the scheduler's framework::PreemptionExecutor service, or an inline one
  // of its own on h.Client() when the handle has none (unit tests).
  explicit Queues(framework::Handle& h);
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: always equal. Only PreFilter filters (the queue's quota, for
  // the pod alone, on no node), and it runs for every pod of a batch.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;

  bool Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override;
  // activeQ keeps one heap per queue (its pods in GangPrioritySort's order) and each Pop
  // serves the queue with the lowest dominant share at that moment, as KAI re-sorts its
  // queues every session — not the share a pod saw when it was queued.
  // Partition: the pod's queue ("" for none). PartitionLess: lower dominant share first.
  bool HasPartitions() const override { return true; }
  std::string Partition(const framework::QueuedPodInfo& p) const override;
  bool PartitionLess(const std::string& a, const std::string& b) const override;
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::Status PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeToStatus& filtered,
                               framework::PostFilterResult* result) override;
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 const std::string& node) override;
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  framework::Status PlanPodGroup(const framework::PodInfo& pod,
                                 framework::QueuedPodGroupInfo* plan) override;
  framework::Status AdmitPodGroup(const framework::QueuedPodGroupInfo& plan,
                                  const std::vector<const framework::PodInfo*>& pods,
                                  const std::vector<size_t>& pod_group_of) override;
  void PodGroupCycleDone(const framework::QueuedPodGroupInfo& plan, bool committed,
                         const std::string& reason) override;
  // The reclaim victim policy of the admitted group (framework::PodGroupVictimPolicy; see
  // the header comment). VictimCandidates: for each queue of the admitted gang without a
  // reclaim hold, SharedQueueManager::ReclaimCandidates for its admitted request, in victim order,
  // never a unit of one of the gang's own queues; owner = the victim queue. CheckVictims:
  // SharedQueueManager::CheckReclaimVictims over the chosen units and the lower-priority pods that
  // are in queues. EvictVictims: deletes the units with the reclaim event and sets the hold.
  std::vector<framework::PodGroupVictimUnit> VictimCandidates(
      const framework::QueuedPodGroupInfo& group) override;
  framework::Status CheckVictims(const framework::QueuedPodGroupInfo& group,
                                 const std::vector<const framework::PodGroupVictimUnit*>& chosen,
                                 const std::vector<const api::Pod*>& lower_priority) override;
  framework::Status EvictVictims(const framework::QueuedPodGroupInfo& group,
                                 const std::vector<const framework::PodGroupVictimUnit*>& chosen,
                                 int64_t* evicted) override;
  // Reclaim for a gang in a profile without DefaultPreemption: the victim search of
  // defaultpreemption::PodGroupPreemption over the victim policies' units only. Skip when
  // a PodGroupPostFilter before it already searched them (DefaultPreemption does).
  framework::Status PodGroupPostFilter(framework::CycleState& state,
                                       const framework::QueuedPodGroupInfo& group,
                                       const framework::PodGroupAttempt& attempt,
                                       framework::PodGroupFeasibility& feasibility,
                                       framework::PodGroupPostFilterResult* result) override;

  // Evicted pods so far (for reports and tests).
  int64_t reclaimed_pods() const { return reclaimed_pods_; }

 private:
  // Pushes the snapshot's total allocatable to the QueueManager.
  void RefreshCapacity();
  // Evicts `victims` (verified by the caller) for `queue` on behalf of `who` (the
  // preemptor `pod`, or nullptr for a gang) through the PreemptionExecutor, as
  // DefaultPreemption evicts (waiting pods rejected; DisruptionTarget condition, then
  // delete; off the scheduling thread in live mode), and sets the reclaim hold; returns how
  // many pods it set out to evict.
  int64_t Reclaim(const std::string& queue, const std::vector<quota::ReclaimUnit>& victims,
                  const std::string& who, const framework::PodInfo* pod);

  framework::Handle& handle_;
  quota::SharedQueueManager* queues_;  // nullptr: the scheduler runs without queues
  std::unique_ptr<framework::PreemptionExecutor> own_executor_;  // when the handle has none
  framework::PreemptionExecutor* executor_;
  gangscheduling::GangPrioritySort gang_sort_;
  // PodGroup cycle in progress (single scheduling thread): queue -> pod key -> the
  // members PreFilter let through so far, and the admitted gang's queues, their requests
  // and the unit naming each (for events).
  bool in_cycle_ = false;
  bool admitted_ = false;
  std::map<std::string, std::map<std::string, api::PodPtr>> in_cycle_used_;
  std::map<std::string, quota::ResourceList> admitted_request_;
  std::map<std::string, std::string> admitted_display_;
  // VictimCandidates of this cycle: first pod key of a unit -> the reclaiming queue.
  std::map<std::string, std::string> candidate_reclaimer_;
  int64_t reclaimed_pods_ = 0;
};

// Makes `profile` use Queues: adds it to multiPoint (after the plugins already there, so
// its PostFilter runs after DefaultPreemption) and removes the other QueueSort plugins
// (PrioritySort, GangPrioritySort), which Queues' order subsumes. No-op when the profile
// already has it. Returns true if the profile changed.
bool EnableQueuesInProfile(config::Profile* profile);

}  // namespace phalanx::plugins::queues
