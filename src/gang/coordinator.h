// The gang side of the scheduler (gang::Coordinator, the scheduler owns one): the one owner
// of what happens to a gang outside the plugins — which members to activate when a gang reaches its
// quorum, the Events on the gang's own object, and its PodGroup status (computed by
// podgroup_status.h, written through the ClusterClient). The event handlers, the PodGroup cycle and
// the binding cycle report to it; none of them writes gang status or events themselves.
//
// Status writes are coalesced as the scheduler-plugins PodGroup controller would see
// them: while a PodGroup commit is in progress (BeginCommit .. EndCommit, inline
// bindings), members observed bound only record themselves, and the commit writes each
// gang's status once; with the binding pool, the binding that completes last writes it
// (a gang with members still assumed leaves the write to them).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/types.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/podgroup.h"
#include "framework/preemption_executor.h"
#include "gang/default_podgroup_manager.h"
#include "gang/podgroup_manager.h"
#include "gang/podgroup_status.h"
#include "gang/staleness.h"

namespace phalanx::gang {

class Coordinator final : public PodGroupEventRecorder {
 public:
  // `gangs` and `client` must outlive the coordinator.
  Coordinator(DefaultPodGroupManager& gangs, framework::ClusterClient& client)
      : gangs_(gangs), client_(client) {}

  // Quorum activation: when `pod` (just added, pending) is the member that brings its gang
  // to minMember pods, the keys of every member of its GangGroup (gated at PreEnqueue
  // waiting for it) — to be activated together with it; otherwise empty.
  std::vector<std::string> MembersToActivate(const api::Pod& pod) const;

  // A member of a gang was observed bound (`pod` has spec.nodeName).
  void OnMemberBound(const api::PodPtr& pod) ABSL_LOCKS_EXCLUDED(mu_);
  // A member's pod phase changed (the kubelet started it: Running; it ended: Succeeded /
  // Failed, already counted by gang::DefaultPodGroupManager::OnPodFinished): the gang's status
  // counts and lifecycle phase (Running, Finished, Failed) follow. `gang_key` "" = the gang of
  // `pod` as a current member.
  void OnMemberPhase(const api::Pod& pod, const std::string& gang_key);
  // A member's binding cycle failed and it was forgotten: the members that bound before it
  // left the status write to the last binding, which this was.
  void OnBindingFailed(const api::Pod& pod);

  // A PodGroup commit of `plan` with inline bindings starts: member bindings of its gangs
  // are coalesced until EndCommit, which returns the last bound member of each (by key).
  void BeginCommit(const framework::QueuedPodGroupInfo& plan) ABSL_LOCKS_EXCLUDED(mu_);
  std::map<std::string, api::PodPtr> EndCommit(const framework::QueuedPodGroupInfo& plan)
      ABSL_LOCKS_EXCLUDED(mu_);

  // A PodGroup cycle committed `plan`: one Normal/Scheduled Event per unit ("gang K: N
  // members placed", N from `placed_per_unit`; with nested quorums followed by the members
  // per subgroup, " (subgroups prefill: 4, decode: 2)"; with a topology, then
  // "; " + `topology_summary`, PodGroupPlacement::TopologySummary: the chosen domain and
  // every candidate's score).
  void RecordCommitted(const framework::QueuedPodGroupInfo& plan,
                       const std::vector<int32_t>& placed_per_unit,
                       const std::string& topology_summary = "");
  // After RecordCommitted and the plugins' PodGroupCycleDone: each unit's status
  // (kPlaced), unless members are still assumed; `last_bound` from EndCommit supplies
  // status.occupiedBy.
  void WriteCommittedStatus(const framework::QueuedPodGroupInfo& plan,
                            const std::map<std::string, api::PodPtr>& last_bound);
  // A PodGroup cycle rejected `plan` with `message`: a Warning/FailedScheduling Event
  // ("gang " + message) per unit.
  void RecordRejected(const framework::QueuedPodGroupInfo& plan, const std::string& message);
  // After RecordRejected and PodGroupCycleDone: each unit's status (kUnschedulable).
  void WriteRejectedStatus(const framework::QueuedPodGroupInfo& plan, const std::string& message);

  // gang::PodGroupEventRecorder (GangReservation's "Reserved" and "StarvationEviction").
  void RecordPodGroupEvent(const std::string& gang_key, bool normal, const char* reason,
                           const std::string& message) override {
    framework::PodGroupInfo unit;
    unit.key = gang_key;
    RecordEvent(unit, normal, message, reason);
  }

  // Stale gangs (staleness.h; KAI pkg/scheduler/actions/stalegangeviction), on the
  // scheduler's Tick: running gangs that fell below their minimum are reported ("StaleGang"),
  // those stale for their grace have their members still running evicted through
  // `executor` ("StaleGangEvicted"; each member found by key with `cached_pod`, a member
  // waiting in Permit released by `reject_if_waiting`), recovered ones get "GangWhole".
  void SweepStale(api::Timestamp now, StaleGangTracker& tracker,
                  const std::function<framework::PodInfoPtr(const std::string&)>& cached_pod,
                  framework::PreemptionExecutor& executor,
                  const std::function<bool(const api::Pod&)>& reject_if_waiting);

  // A stale-gang finding (gang/staleness.h) for `gang_key`: an Event with `reason`
  // ("StaleGang" Warning, "StaleGangEvicted" Warning, "GangWhole" Normal) on the gang's own
  // object (dialects that have one).
  void RecordStaleness(const std::string& gang_key, bool ok, const std::string& message,
                       const char* reason) {
    framework::PodGroupInfo unit;
    unit.key = gang_key;
    RecordEvent(unit, ok, message, reason);
  }

  // True while members of the gang are assumed (binding, held for the pool, or waiting in
  // Permit): their completion will write the gang's status.
  bool BindingsInFlight(const std::string& gang_key) const;

 private:
  // `reason` "": Scheduled when ok, else FailedScheduling.
  void RecordEvent(const framework::PodGroupInfo& unit, bool ok, const std::string& message,
                   const char* reason = "");
  std::string SubGroupTally(const framework::PodGroupInfo& unit) const;
  void WriteStatus(const std::string& gang_key, GangOutcome outcome, std::string_view message,
                   const api::Pod* member) {
    WritePodGroupStatus(gangs_, client_, gang_key, outcome, message, member);
  }

  DefaultPodGroupManager& gangs_;
  framework::ClusterClient& client_;
  mutable absl::Mutex mu_;
  std::set<std::string> committing_ ABSL_GUARDED_BY(mu_);  // gang keys
  std::map<std::string, api::PodPtr> last_bound_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::gang
