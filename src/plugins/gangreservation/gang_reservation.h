// GangReservation: node reservations with backfill for gangs that wait too long
// (Slurm EASY backfill, KAI-Scheduler#1969, Volcano#947, kube-batch#821).
//
// Phalanx's transactional gangs hold nothing while they wait, so small pods can take every
// node that frees while a large gang waits forever. With this plugin enabled, a gang whose
// PodGroup cycle fails after it has waited `reservationThresholdSeconds` (since its quorum
// of members existed) gets a reservation: the nodes that free soonest for it, from the
// running pods' expected end times (gang/reservation.h), and a forecast start. This plugin
// configures the scheduler's gang::ReservationManager from its args, plans reservations
// behind the PodGroup PostFilter (planner.cc), releases them at the gang's commit, and
// enforces them at Filter: a reserved node is UnschedulableAndUnresolvable for a pod outside
// the reserving gang (and its GangGroup) unless the pod's expected end — now + its
// expected runtime (annotation scheduling.phalanx.dev/expected-runtime-seconds, else
// activeDeadlineSeconds) — is no later than the forecast start (backfill). Pods of unknown
// runtime never backfill. Unresolvable: evicting pods from a reserved node would not let a
// non-backfill pod in, so preemption skips those nodes and cannot fight the reservation.
//
// Not in the default profile: enabling the plugin (with a threshold > 0) enables
// reservations; without it, or with threshold 0, Phalanx behaves as before. The scheduler
// keeps one ReservationManager for all profiles: with several profiles enabling the plugin, the
// args of the last such profile of the configuration apply.
//
// Args (GangReservationArgs):
//   reservationThresholdSeconds: int >= 0  (default 300; 0 = no reservations)
//   reservationGraceSeconds: int >= 0      (default 600: a reservation whose gang has not
//                                           started by forecast start + grace expires and
//                                           is planned again at the gang's next failure)
//   maxReservations: int >= 1              (default 1: EASY backfill, one at a time)
//   minMembers: int >= 1                   (default 2: smaller gangs never reserve, and are
//                                           the only possible victims of preemptAfterSeconds)
//   preemptAfterSeconds: int >= 0          (default 0 = off: a gang holding a reservation
//                                           that has waited this long, its forecast start
//                                           still ahead, evicts the pods on its reserved
//                                           nodes that keep it from starting now — whole
//                                           jobs, never a member of a gang of >= minMembers,
//                                           never a higher priority, the fewest and most
//                                           recently started first; planner.cc)
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/podgroup.h"
#include "framework/preemption_executor.h"
#include "framework/registry.h"
#include "gang/podgroup_manager.h"
#include "gang/reservation.h"

namespace phalanx::plugins::gangreservation {

class GangReservation final : public framework::PreFilterPlugin,
                              public framework::FilterPlugin,
                              public framework::BatchablePlugin,
                              public framework::EnqueueExtensions,
                              public framework::PodGroupPostFilterPlugin,
                              public framework::PodGroupCycleListener {
 public:
  static constexpr std::string_view kName = "GangReservation";

  GangReservation(framework::Handle& h, gang::ReservationManager* ledger)
      : handle_(h),
        gangs_(h.Service<gang::PodGroupManager>()),
        ledger_(ledger),
        events_(h.Service<gang::PodGroupEventRecorder>()),
        executor_(framework::PreemptionExecutorOf(h, &own_executor_)) {}
  // Parses the args (errors name the field, as upstream's validation does) and configures
  // the scheduler's ReservationManager with them.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }

  // Skip when no reservation bars this pod (the common case: one pointer load); otherwise
  // records the barred nodes and their reasons for Filter.
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Equal gang and equal expected runtime give equal verdicts on every node.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  // Pods barred from reserved nodes retry when a pod is bound (the reserving gang started,
  // its reservation is gone) or deleted (room freed).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  // After a failed PodGroup cycle (planner.cc): sweeps, then, for a gang that has waited
  // reservationThresholdSeconds since its quorum and is the longest waiter, plans and
  // records a reservation for the members still needed (a Normal "Reserved" Event on the
  // gang's object), or reports the one it holds or why none could be made; with
  // preemptAfterSeconds, a gang holding a reservation whose forecast start is ahead and
  // that has waited that long evicts the pods keeping it off its reserved nodes
  // (defaultpreemption::PodGroupPreemption::RunForReservation; a Warning
  // "StarvationEviction" Event naming the victims, ReservationCounters::evictions). Skip
  // when reservations are off or there is nothing to say; Success when it evicted (the
  // members nominated); Unschedulable otherwise, the message the line for the gang's reason.
  framework::Status PodGroupPostFilter(framework::CycleState& state,
                                       const framework::QueuedPodGroupInfo& group,
                                       const framework::PodGroupAttempt& attempt,
                                       framework::PodGroupFeasibility& feasibility,
                                       framework::PodGroupPostFilterResult* result) override;
  // A committed group's reservation, if any, is released (kBound).
  void PodGroupCycleDone(const framework::QueuedPodGroupInfo& group, bool committed,
                         const std::string& reason) override;

 private:
  // The reservation line for the gang's reason ("" when nothing to say).
  std::string PlanFor(const framework::QueuedPodGroupInfo& group,
                      const framework::PodGroupAttempt& attempt,
                      framework::PodGroupFeasibility& feasibility);
  // Starvation eviction; appends its outcome to *reason; each member's nominated node, or
  // empty when nothing was evicted.
  std::vector<std::string> EvictFor(const framework::QueuedPodGroupInfo& group,
                                    const framework::PodGroupAttempt& attempt,
                                    framework::PodGroupFeasibility& feasibility,
                                    std::string* reason);
  // gang::ReservationGangGone on the gang state (true without one).
  bool GangGone(const std::string& key) const;
  // Releases expired reservations and those of gone gangs (the ReservationManager's release hook
  // requeues).
  void Sweep(api::Timestamp now);

  framework::Handle& handle_;
  gang::PodGroupManager* gangs_;         // nullptr: no gang state (then no pod is a gang member)
  gang::ReservationManager* ledger_;     // nullptr: the scheduler keeps no reservations
  gang::PodGroupEventRecorder* events_;  // nullptr: no events on gang objects
  std::unique_ptr<framework::PreemptionExecutor> own_executor_;  // when the handle has none
  framework::PreemptionExecutor* executor_;
};

}  // namespace phalanx::plugins::gangreservation
