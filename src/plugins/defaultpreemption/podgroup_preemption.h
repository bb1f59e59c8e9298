// A gang as preemptor: the victim search behind the PodGroup PostFilter
// (framework::PodGroupPostFilterPlugin; upstream KEP-4671 and KEP-5710 workload-aware
// preemption). When a PodGroup cycle fails to place the whole gang (every pod group of a
// GangGroup), find victims across nodes whose eviction lets the WHOLE gang fit, evict
// them, and nominate each member to the node the feasibility check found, so that the
// gang's retry (after the victims are gone) finds the room and nobody of a lower priority
// takes it meanwhile. DefaultPreemption (priority), Queues (reclaim without
// DefaultPreemption) and GangReservation (starvation eviction) run it from their
// PodGroupPostFilter; each trial placement goes through the framework's
// PodGroupFeasibility callback, so the search never places pods itself.
//
// Queue reclaim takes the same path: every framework::PodGroupVictimPolicy of the profile
// (the Queues plugin offers pods of queues above their deserved share, src/plugins/queues)
// offers units that join the lower-priority ones in the one search below, ordered after
// priority, crowding and start time by the policy's own victim order; the final set must
// pass every policy's CheckVictims (e.g. never below a queue's guarantee) or nothing is
// evicted; the policy's chosen units are evicted by its EvictVictims (its own event and
// bookkeeping), the others by Evict. A unit offered by a policy is never also a
// lower-priority unit.
//
// Rules and their sources:
//  - Only DefaultPreemption's PodGroupPostFilter preempts by priority; a victim policy's
//    units are searched without it too (Queues' PodGroupPostFilter), and with
//    preemptionPolicy Never (reclaim is a queue's right, not a priority's).
//  - Only a placement failure preempts: not minResources, not admission (quota), and not a
//    gang still gathering (fewer pending members than a pod group needs).
//  - No preemption when a member has preemptionPolicy Never, nor while a lower-priority
//    pod on a member's nominated node is still terminating by preemption (upstream
//    preemption.go PodEligibleToPreemptOthers).
//  - The gang's priority is the lowest of its pending members' priorities; victims have a
//    strictly lower priority (never equal or higher, upstream preemption.go).
//  - A victim in a running gang (gang::PodGroupManager::Satisfied) is a unit with every member of
//    that gang on a node: evicted whole or not at all, and eligible only when every such
//    member has a lower priority (as DefaultPreemption does for a single preemptor).
//    An elastic gang (more members on nodes than its minMember, no subgroups) is split:
//    its oldest minMember members (by start time, then name) are that unit, and each newer
//    member is a surplus unit of its own, eligible on its own priority. Surplus units are
//    reprieved last, so they go before any unit that takes a gang below its minimum (KAI and
//    Volcano preempt an elastic job's pods beyond minAvailable first).
//  - Every eligible unit is taken off the snapshot view and the gang is placed: if it does
//    not fit, nothing is evicted ("preemption would not make room for the whole gang",
//    "reclaim would not ..." when only policy units were candidates, "preemption or
//    reclaim would not ..." for both) (KEP-4671: "avoid preemptions if these will not allow to
//    schedule the higher priority gang anyway"; KEP-5710 PodGroup-level preemption).
//  - Otherwise units are reprieved greedily, each reprieve kept only if the whole gang
//    still fits: PodDisruptionBudget-violating units first (PodDisruptionBudgetViolations),
//    then most important first (higher priority, then, to prefer fewer victims, units on
//    nodes with more victims, then earlier start time), as upstream SelectVictimsOnNode
//    reprieves, across nodes.
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
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/podgroup.h"
#include "framework/preemption_executor.h"
#include "framework/status.h"
#include "gang/podgroup_manager.h"
#include "gang/reservation.h"

namespace phalanx::plugins::defaultpreemption {

// Pods evicted together: one pod, or every placed member of a running gang (priority
// preemption), or a unit a victim policy offers (queue reclaim).
struct PodGroupVictimCandidate {
  std::vector<framework::PodInfoPtr> pods;
  const api::Pod* head = nullptr;  // the most important pod, for ordering
  int64_t crowding = 0;            // most victims on one of the unit's nodes
  // Offered by a victim policy: the policy (index in PodGroupAttempt::victim_policies) and
  // the unit (index in that policy's VictimCandidates); -1: a lower-priority unit.
  int policy = -1;
  size_t policy_unit = 0;
  // Reprieve order after priority, crowding and start time: higher is reprieved first (a
  // policy's candidates in reverse of its victim order); 0 for lower-priority units.
  int64_t keep_rank = 0;
  // A member of a running elastic gang beyond its minMember: evicted before any unit that
  // would take a gang below its minimum.
  bool surplus = false;
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
  // The references must outlive this object. `attempt` is the failed cycle (its members and
  // victim policies), `feasibility` places it again with victims gone.
  PodGroupPreemption(framework::Handle& handle, framework::PreemptionExecutor& executor,
                     const framework::QueuedPodGroupInfo& group,
                     const framework::PodGroupAttempt& attempt,
                     framework::PodGroupFeasibility& feasibility)
      : handle_(handle),
        executor_(executor),
        group_(group),
        attempt_(attempt),
        feasibility_(feasibility) {}

  // The search after the failed attempt. `by_default_preemption`: DefaultPreemption's
  // PodGroupPostFilter (lower-priority victims and every victim policy); false: a victim
  // policy's own PodGroupPostFilter without DefaultPreemption (policy units only). Hands
  // the eviction to the PreemptionExecutor (asynchronous in live mode; a failed API call
  // stops it and is reported there as a "FailedPreemption" event on the members) and counts
  // the attempt ("GangPreemption"). Leaves the view reset.
  PodGroupPreemptionResult Run(bool by_default_preemption);

  // Starvation eviction (GangReservation preemptAfterSeconds): the gang holds reservation
  // `r` and has starved long enough. Victims are the pods on r.nodes (on every node when
  // evicting on r.nodes cannot make room: they hold members of other large gangs), each
  // with its whole job (every placed pod of its gang), that are not in a gang of >=
  // `min_members` (never another reserving-class gang), not of a higher priority than the
  // gang, not in `r`'s own gangs and not shielded by a queue's preemptMinRuntime. As in
  // Run: every candidate off the view, the gang must fit (else nothing is evicted), then
  // units are reprieved greedily in MoreImportant order (priority, crowded nodes, earlier
  // start: the most recently started are evicted first, the least work lost), and the rest
  // are evicted through the same PreemptionExecutor, each with a "Preempted" Event
  // "Preempted by gang NS/NAME (<note>) on node N". Nominates the members like Run.
  // Evicts nothing while victims of an earlier eviction still terminate on a member's
  // nominated node. Counts the attempt ("GangReservation").
  PodGroupPreemptionResult RunForReservation(const gang::Reservation& r, int32_t min_members,
                                             const std::string& note);
  // The candidate units of RunForReservation (see there) on r.nodes (every node when
  // r.nodes is empty), for `priority` (GangPriority()).
  std::vector<PodGroupVictimCandidate> CollectReservationUnits(const gang::Reservation& r,
                                                               int32_t min_members,
                                                               int32_t priority) const;

  // Tests only: reprieve one unit per placement (the plain greedy loop that Reprieve's
  // batches must reproduce).
  static inline std::atomic<bool> reprieve_one_by_one_for_tests{false};

  // ---- the steps, exposed for tests ----

  // Whether the gang may preempt (upstream PodEligibleToPreemptOthers, for a gang).
  enum class Eligibility {
    kEligible,
    kNotPlacementFailure,  // minResources or admission failed: nothing to report
    kQuorumNotPresent,     // fewer pending members than a pod group needs: nothing to report
    kNoDefaultPreemption,  // a victim policy's own search: policy units only, silently
    kNever,                // a member has preemptionPolicy Never: policy units only
    kTerminating,          // earlier victims still terminating on a nominated node: wait
  };
  Eligibility PodGroupEligibleToPreemptOthers(bool by_default_preemption) const;
  // The lowest priority among the pending members.
  int32_t GangPriority() const;
  // Every eligible victim unit on the snapshot (pods of a priority below `priority`).
  std::vector<PodGroupVictimCandidate> CollectVictimUnits(int32_t priority) const;
  // Appends `u` with its head (most important pod) and crowding (most victims on one of
  // its nodes, from `per_node`).
  void AddUnit(PodGroupVictimCandidate u, const std::map<std::string, int64_t>& per_node,
               std::vector<PodGroupVictimCandidate>* units) const;
  // The units of a running gang whose members on nodes are `placed`: its oldest minMember
  // (all of them for a gang at its minimum or with subgroups) as one unit, eligible when
  // each is a victim (priority below `priority`, not shielded); each newer member beyond
  // minMember, a surplus member of an elastic gang, as a unit of its own.
  void AddRunningGangUnits(const gang::GangInfo& info, std::vector<framework::PodInfoPtr> placed,
                           int32_t priority, const std::map<std::string, int64_t>& per_node,
                           const std::function<bool(const api::Pod&)>& shielded,
                           std::vector<PodGroupVictimCandidate>* units) const;
  // Every unit the victim policies offer (PodGroupVictimPolicy::VictimCandidates, kept in
  // candidates_), mapped to the snapshot's pods (pods not on a node are left out).
  std::vector<PodGroupVictimCandidate> CollectPolicyUnits();

 private:
  PodGroupPreemptionResult Search(bool by_default_preemption);
  PodGroupPreemptionResult SearchReservation(const gang::Reservation& r, int32_t min_members);
  // The candidates of one search: the policies' units, then the lower-priority units that
  // share no pod with them (when `by_priority`); *considered: lower-priority pods and
  // policy pods.
  std::vector<PodGroupVictimCandidate> CollectAll(bool by_priority, int32_t priority,
                                                  size_t considered[2]);
  // OK when every victim policy allows evicting the units removed; else the first refusal.
  framework::Status CheckPolicies(const std::vector<PodGroupVictimCandidate>& units,
                                  const std::vector<bool>& removed);
  // Evicts the units removed: lower-priority ones through Evict, the policies' through
  // their plugins (PodGroupVictimPolicy::EvictVictims). OK or the first error.
  framework::Status EvictAll(const std::vector<PodGroupVictimCandidate>& units,
                             const std::vector<bool>& removed,
                             const std::vector<std::vector<std::string>>& violations,
                             int32_t priority, PodGroupPreemptionResult* out);
  // Whether every pod group fits on the view with `units[i]` removed where removed[i]
  // (PodGroupFeasibility::Place); assignments_ holds the members' nodes.
  bool FitsWithout(const std::vector<PodGroupVictimCandidate>& units,
                   const std::vector<bool>& removed);
  // Indices of `units` in reprieve order; *violations[i]: budgets unit i violates.
  std::vector<size_t> ReprieveOrder(const std::vector<PodGroupVictimCandidate>& units,
                                    std::vector<std::vector<std::string>>* violations) const;
  bool MoreImportant(const PodGroupVictimCandidate& a, const PodGroupVictimCandidate& b) const;
  // The greedy reprieve: for each unit in `order`, it stays on the view (not a victim) if the
  // whole gang still fits with it and every unit reprieved before it. Batches of
  // consecutive units are tried at once (doubling while they fit, bisected when one does
  // not), which gives the one-by-one result whenever reprieving fewer units never makes the
  // gang stop fitting, in about victims x log(units) placements instead of one per unit.
  void Reprieve(const std::vector<PodGroupVictimCandidate>& units, const std::vector<size_t>& order,
                std::vector<bool>* removed);
  // Starts the eviction of the removed units (their events and the nominations to clear).
  void Evict(const std::vector<PodGroupVictimCandidate>& units, const std::vector<bool>& removed,
             const std::vector<std::vector<std::string>>& violations, int32_t priority,
             PodGroupPreemptionResult* out);
  // Each member's node in the last feasible trial ("" for none).
  std::vector<std::string> Nominations() const;
  std::string GangName() const;

  framework::Handle& handle_;
  framework::PreemptionExecutor& executor_;
  const framework::QueuedPodGroupInfo& group_;
  const framework::PodGroupAttempt& attempt_;
  framework::PodGroupFeasibility& feasibility_;
  framework::PodGroupAssignments assignments_;  // the last FitsWithout's
  // Evict's request plugin and, when set, the Event's note in place of "(priority P)".
  std::string plugin_ = "GangPreemption";
  std::string victim_note_;
  // Per victim policy, the units its VictimCandidates returned in this search.
  std::vector<std::vector<framework::PodGroupVictimUnit>> candidates_;
};

// The CycleState key under which a PodGroupPostFilter that ran the victim policies' search
// (DefaultPreemption's gang preemption, whether or not the gang was eligible) records it,
// so that a policy's own PodGroupPostFilter (Queues' reclaim without DefaultPreemption)
// does not search again in the same cycle.
inline constexpr std::string_view kVictimPoliciesSearchedKey = "PodGroupPostFilterVictimPolicies";
void MarkVictimPoliciesSearched(framework::CycleState& state);
bool VictimPoliciesSearched(const framework::CycleState& state);

// A search's outcome as a PodGroupPostFilter status: Success with the message when victims
// are being evicted (result->nominated_node_names set), Unschedulable with the message
// when there is one, else Skip.
framework::Status PodGroupPostFilterStatus(PodGroupPreemptionResult pre,
                                           framework::PodGroupPostFilterResult* result);

}  // namespace phalanx::plugins::defaultpreemption
