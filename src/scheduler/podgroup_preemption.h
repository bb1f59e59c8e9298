// A gang as preemptor in the PodGroup cycle: when the PodGroup transaction fails
// to place the whole gang (every unit of a GangGroup), find lower-priority victims across
// nodes whose eviction lets the WHOLE gang fit, evict them, and nominate each member to the
// node the dry run found, so that the gang's retry (after the victims are gone) finds the
// room and nobody of a lower priority takes it meanwhile.
//
// Queue reclaim takes the same path: every PodGroupPlugin of the profile may offer
// a victim policy (framework::PodGroupPlugin::VictimCandidates / CheckVictims / EvictVictims;
// the Queues plugin offers pods of queues above their deserved share, src/plugins/queues).
// Its units join the lower-priority ones in the one search below, ordered after priority,
// crowding and start time by the policy's own victim order; the final set must pass every
// policy's CheckVictims (e.g. never below a queue's guarantee) or nothing is evicted; the
// policy's chosen units are evicted by its EvictVictims (its own event and bookkeeping), the
// others by Evict. A unit offered by a policy is never also a lower-priority unit.
//
// Rules and their sources:
//  - Only a profile with DefaultPreemption enabled (a PostFilter plugin) preempts by
//    priority; a victim policy's units are searched without it too, and with
//    preemptionPolicy Never (reclaim is a queue's right, not a priority's).
//  - Only a placement failure preempts: not minResources, not admission (quota), and not a
//    gang still gathering (fewer pending members than a unit needs).
//  - No preemption when a member has preemptionPolicy Never, nor while a lower-priority
//    pod on a member's nominated node is still terminating by preemption (upstream
//    preemption.go PodEligibleToPreemptOthers).
//  - The gang's priority is the lowest of its pending members' priorities; victims have a
//    strictly lower priority (never equal or higher, upstream preemption.go).
//  - A victim in a running gang (gang::GangLedger::Satisfied) is a unit with every member of
//    that gang on a node: evicted whole or not at all, and eligible only when every such
//    member has a lower priority (as DefaultPreemption does for a single preemptor).
//  - Every eligible unit is taken off the snapshot view and the gang is placed: if it does
//    not fit, nothing is evicted ("preemption would not make room for the whole gang",
//    "reclaim would not ..." when only policy units were candidates, "preemption or
//    reclaim would not ..." for both) (KEP-4671: "avoid preemptions if these will not allow to
//    schedule the higher priority gang anyway"; KEP-5710 PodGroup-level preemption).
//  - Otherwise units are reprieved greedily, each reprieve kept only if the whole gang
//    still fits: PodDisruptionBudget-violating units first (defaultpreemption
//    PodDisruptionBudgetViolations), then most important first (higher priority, then, to
//    prefer fewer victims, units on nodes with more victims, then earlier start time), as
//    upstream SelectVictimsOnNode reprieves, across nodes.
//  - The gang is placed once more with the final victims gone BEFORE anything is evicted;
//    the victims are then deleted as DefaultPreemption::PrepareCandidate deletes, off the
//    scheduling thread (framework/preemption_executor.h: waiting pods rejected;
//    DisruptionTarget condition, then delete; the members wait at PreEnqueue meanwhile),
//    each with a "Preempted" Event
//    "Preempted by gang NS/NAME (priority P) on node N" (plus the PDB note when violating),
//    and lower-priority pods nominated to the chosen nodes lose their nomination.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/interface.h"
#include "framework/runtime.h"
#include "gang/reservation.h"
#include "scheduler/podgroup_algorithm.h"
#include "scheduler/scheduler.h"

namespace phalanx::scheduler {

// Pods evicted together: one pod, or every placed member of a running gang (priority
// preemption), or a unit a PodGroupPlugin's victim policy offers (queue reclaim).
struct PreemptionVictimUnit {
  std::vector<framework::PodInfoPtr> pods;
  const api::Pod* head = nullptr;  // the most important pod, for ordering
  int64_t crowding = 0;            // most victims on one of the unit's nodes
  // Offered by a victim policy: the plugin (index in Framework::PodGroupPlugins()) and the
  // unit (index in that plugin's VictimCandidates); -1: a lower-priority unit.
  int policy = -1;
  size_t policy_unit = 0;
  // Reprieve order after priority, crowding and start time: higher is reprieved first (a
  // policy's candidates in reverse of its victim order); 0 for lower-priority units.
  int64_t keep_rank = 0;
};

// What gang preemption did.
struct PodGroupPreemptionResult {
  // Whether the search ran (false: not eligible; `message` may say why).
  bool attempted = false;
  int64_t reclaimed = 0;  // of `victims`, the pods a victim policy evicted (queue reclaim)
  // For the gang's reason, e.g. "preemption: 18 victims evicted for the gang", "preemption:
  // 4 victims evicted for the gang (4 reclaimed)" or "preemption: preemption would not make
  // room for the whole gang (12 lower-priority pods considered)"; "preemption: " + a
  // policy's refusal (CheckVictims). Empty when preemption does not apply, or when no pod has a
  // lower priority than the gang (the gang's own reason stands, as before preemption).
  std::string message;
  std::vector<framework::PodInfoPtr> victims;  // evicted
  int64_t num_pdb_violations = 0;
  // Each member's nominated node ("" for a member that was not placed); filled only when
  // victims were evicted.
  std::vector<std::string> nominated;
};

class PodGroupPreemption {
 public:
  // The references must outlive this object; `algorithm` places `members` of `plan`.
  PodGroupPreemption(Scheduler& sched, framework::Framework& fwk,
                     const framework::QueuedPodGroupInfo& plan,
                     std::vector<PodGroupMember>& members, PodGroupAlgorithm& algorithm)
      : sched_(sched), fwk_(fwk), plan_(plan), members_(members), algorithm_(algorithm) {}

  // Runs after `placement` failed (its view already reverted). Hands the eviction to the
  // scheduler's PreemptionExecutor (asynchronous in live mode; a failed API call stops it
  // and is reported there as a "FailedPreemption" event on the members).
  // Leaves the snapshot view refreshed from the cache (no view edit installed).
  PodGroupPreemptionResult Run(const PodGroupPlacement& placement);

  // Starvation eviction (GangReservation preemptAfterSeconds; reservation_eviction.cc): the
  // gang holds reservation `r` and has starved long enough. Victims are the pods on r.nodes
  // (on every node when evicting on r.nodes cannot make room: they hold members of other
  // large gangs), each with its whole job (every placed pod of its gang), that are not in a
  // gang of >= `min_members` (never another reserving-class gang), not of a higher priority than
  // the gang, not in `r`'s own gangs and not shielded by a queue's preemptMinRuntime. As in
  // Search: every candidate off the view, the gang must fit (else nothing is evicted), then
  // units are reprieved greedily in MoreImportant order (priority, crowded nodes, earlier
  // start: the most recently started are evicted first, the least work lost), and the rest
  // are evicted through the same PreemptionExecutor, each with a "Preempted" Event
  // "Preempted by gang NS/NAME (<note>) on node N". Nominates the members like Search.
  // Evicts nothing while victims of an earlier eviction still terminate on a member's
  // nominated node. `placement` is the failed attempt (unused: the search places again).
  PodGroupPreemptionResult RunForReservation(const PodGroupPlacement& placement,
                                             const gang::Reservation& r, int32_t min_members,
                                             const std::string& note);
  // The candidate units of RunForReservation (see there) on r.nodes (every node when
  // r.nodes is empty), for `priority` (GangPriority()).
  std::vector<PreemptionVictimUnit> CollectReservationUnits(const gang::Reservation& r,
                                                            int32_t min_members,
                                                            int32_t priority) const;

  // Tests only: reprieve one unit per placement (the plain greedy loop that Reprieve's
  // batches must reproduce).
  static inline std::atomic<bool> reprieve_one_by_one_for_tests{false};

  // ---- the steps, exposed for tests ----

  // "" when the gang may preempt; else why not (e.g. "not eligible due to
  // preemptionPolicy=Never."); `*silent` set when the failure is not one preemption
  // addresses at all (nothing to report).
  std::string PodGroupEligibleToPreemptOthers(const PodGroupPlacement& placement,
                                              bool* silent) const;
  // The lowest priority among the pending members.
  int32_t GangPriority() const;
  // Every eligible victim unit on the snapshot (pods of a priority below `priority`).
  std::vector<PreemptionVictimUnit> CollectVictimUnits(int32_t priority) const;
  // Every unit the profile's PodGroupPlugins offer (PodGroupPlugin::VictimCandidates, kept
  // in candidates_), mapped to the snapshot's pods (pods not on a node are left out);
  // *why: the first plugin's reason when none offers any.
  std::vector<PreemptionVictimUnit> CollectPolicyUnits(std::string* why);

 private:
  PodGroupPreemptionResult Search(const PodGroupPlacement& placement);
  PodGroupPreemptionResult SearchReservation(const gang::Reservation& r, int32_t min_members);
  // The candidates of one search: the policies' units, then the lower-priority units that
  // share no pod with them (when `by_priority`); *considered: lower-priority pods and
  // policy pods.
  std::vector<PreemptionVictimUnit> CollectAll(bool by_priority, int32_t priority,
                                               size_t considered[2], std::string* why);
  // "" when every victim policy allows evicting the units removed; else the first refusal.
  std::string CheckPolicies(const std::vector<PreemptionVictimUnit>& units,
                            const std::vector<bool>& removed);
  // Evicts the units removed: lower-priority ones through Evict, the policies' through
  // their plugins (PodGroupPlugin::EvictVictims). "" or the first error.
  std::string EvictAll(const std::vector<PreemptionVictimUnit>& units,
                       const std::vector<bool>& removed,
                       const std::vector<std::vector<std::string>>& violations, int32_t priority,
                       PodGroupPreemptionResult* out);
  // Whether every unit of the plan fits on the view with `units[i]` removed where
  // removed[i]; the members' placement fields hold the result.
  bool FitsWithout(const std::vector<PreemptionVictimUnit>& units,
                   const std::vector<bool>& removed);
  // Indices of `units` in reprieve order; *violations[i]: budgets unit i violates.
  std::vector<size_t> ReprieveOrder(const std::vector<PreemptionVictimUnit>& units,
                                    std::vector<std::vector<std::string>>* violations) const;
  bool MoreImportant(const PreemptionVictimUnit& a, const PreemptionVictimUnit& b) const;
  // The greedy reprieve: for each unit in `order`, it stays on the view (not a victim) if the
  // whole gang still fits with it and every unit reprieved before it. Batches of
  // consecutive units are tried at once (doubling while they fit, bisected when one does
  // not), which gives the one-by-one result whenever reprieving fewer units never makes the
  // gang stop fitting, in about victims x log(units) placements instead of one per unit.
  void Reprieve(const std::vector<PreemptionVictimUnit>& units, const std::vector<size_t>& order,
                std::vector<bool>* removed);
  // Starts the eviction of the removed units (their events and the nominations to clear).
  void Evict(const std::vector<PreemptionVictimUnit>& units, const std::vector<bool>& removed,
             const std::vector<std::vector<std::string>>& violations, int32_t priority,
             PodGroupPreemptionResult* out);
  std::string GangName() const;

  Scheduler& sched_;
  framework::Framework& fwk_;
  const framework::QueuedPodGroupInfo& plan_;
  std::vector<PodGroupMember>& members_;
  PodGroupAlgorithm& algorithm_;
  // Evict's request plugin and, when set, the Event's note in place of "(priority P)".
  std::string plugin_ = "GangPreemption";
  std::string victim_note_;
  // Per PodGroupPlugin, the units its VictimCandidates returned in this search.
  std::vector<std::vector<framework::PodGroupVictimUnit>> candidates_;
};

// The members' own nominations (from an earlier gang preemption) are taken out of the
// nominator while the gang is placed, so that a member placed on the view is not counted
// twice (once placed, once nominated). Returns each member's nominated node, "" for none;
// RejectPodGroup nominates them again for a gang that is rejected without a new preemption.
std::vector<std::string> SuspendNominations(queue::SchedulingQueue& queue,
                                            const std::vector<PodGroupMember>& members);

}  // namespace phalanx::scheduler
