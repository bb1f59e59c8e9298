// Asynchronous preemption: evicting the victims off the scheduling thread (upstream
// pkg/scheduler/framework/preemption/preemption.go prepareCandidateAsync and
// IsPodRunningPreemption, KEP-4832 "Asynchronous preemption", on by default since 1.33).
//
// A preemption plugin decides on the scheduling thread (victims chosen, the placement
// verified) and hands the eviction to Execute(), which returns at once. The work runs on the
// scheduler's binding pool (live mode), or inline on the caller's thread when the scheduler
// binds inline (simulate and the deterministic tests: binding_workers = 0), so a virtual
// clock sees the same order of events as before.
//
// The work, as upstream:
//  - Every victim but the last is evicted (in order; upstream runs them in parallel), then,
//    unless one of them failed, the last one. Eviction: a victim waiting at Permit is
//    rejected; any other gets the DisruptionTarget condition (reason PreemptionByScheduler)
//    and is deleted; a victim already gone (NotFound) counts as evicted. Each evicted victim
//    gets its "Preempted" event.
//  - Lower-priority pods nominated to the freed nodes lose their nomination (failures are
//    logged, not fatal, as upstream).
//  - While the work runs, IsPodRunningPreemption(uid) is true for the preemptor (every
//    member of a preempting gang): DefaultPreemption's PreEnqueue keeps it out of activeQ
//    ("waiting for the preemption for this pod to be finished"), so it is not retried
//    against victims that are still being deleted, nor does it preempt twice.
//  - When the work ends, the preemptor is released: if PreEnqueue gated it meanwhile, it is
//    activated (Handle activation hook), since the victims' delete events may have arrived
//    while it was still gated. (Upstream closes the same race by checking the last victim
//    in the pod lister.)
//  - A failed API call stops the eviction (the remaining victims are spared), is logged, is
//    reported as a Warning event "FailedPreemption" on the preemptor naming the victim and the
//    error (Phalanx's addition: the failure is never silent), counts as result "error", and
//    the preemptor is activated so that it is retried (upstream Activate on error).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "framework/handle.h"
#include "framework/types.h"

namespace phalanx::framework {

// What one preemption evicts and on whose behalf.
struct PreemptionRequest {
  // The plugin that preempted ("DefaultPreemption", "GangPreemption", "Queues"), for
  // metrics and logs.
  std::string plugin;
  // The preemptor: one pod, or the pending members of a gang. Their UIDs are "running
  // preemption" until the work ends; their keys (namespace/name) are activated after it.
  std::vector<PodInfoPtr> preemptors;
  // The DisruptionTarget condition's message on each victim (DisruptionTargetMessage).
  std::string disruption_message;
  struct Victim {
    PodInfoPtr pod;
    std::string event_message;  // the event's message
    std::string event_reason = "Preempted";
  };
  std::vector<Victim> victims;     // in eviction order
  int64_t num_pdb_violations = 0;  // victims whose eviction violates a budget (for metrics)
  // Pods whose nomination is cleared after the victims are gone (lower-priority pods
  // nominated to the freed nodes).
  std::vector<PodInfoPtr> clear_nominations;
  // Rejects the pod if it waits at Permit (returns true), else false; nullptr: no pod waits.
  std::function<bool(const api::Pod&)> reject_if_waiting;
};

// Where preemption is counted, for metrics (metrics::SchedulerMetrics in live mode).
// Called from the scheduling thread (attempts) and the executor's threads (work done).
class PreemptionObserver {
 public:
  virtual ~PreemptionObserver() = default;
  // One preemption attempt of `plugin` ended with `result`, the framework::Status code's
  // name ("Success", "Unschedulable", "UnschedulableAndUnresolvable", "Error") as upstream
  // labels scheduler_workload_preemption_attempts_total.
  virtual void PreemptionAttempt(std::string_view plugin, std::string_view result) = 0;
  // One Execute(): how many victims it evicts and how many of them violate a
  // PodDisruptionBudget.
  virtual void PreemptionVictims(std::string_view plugin, size_t victims,
                                 int64_t pdb_violations) = 0;
  // One Execute() finished: `ok` false when an API call failed; `seconds` of wall time.
  virtual void PreemptionWorkDone(std::string_view plugin, bool ok, double seconds) = 0;
};

class PreemptionExecutor {
 public:
  // Runs fn now or later on another thread.
  using Runner = std::function<void(std::function<void()>)>;
  // Moves the pods (namespace/name keys) to activeQ; `only_gated`: only those that
  // PreEnqueue gated (the plugin named), others stay where they are.
  using Activator = std::function<void(const std::vector<std::string>& keys, bool only_gated)>;

  // `client` must outlive this object. `runner` nullptr: inline. `activate` nullptr: no
  // activation (unit tests).
  PreemptionExecutor(ClusterClient& client, Runner runner, Activator activate)
      : client_(client), runner_(std::move(runner)), activate_(std::move(activate)) {}

  // Starts the eviction (see the header comment); returns before it is done unless inline.
  void Execute(PreemptionRequest req) ABSL_LOCKS_EXCLUDED(mu_);
  // Counts one attempt of `plugin` (see PreemptionObserver::PreemptionAttempt).
  void RecordAttempt(std::string_view plugin, std::string_view result) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether a preemption for the pod (by UID) is still evicting.
  bool IsPodRunningPreemption(std::string_view uid) const ABSL_LOCKS_EXCLUDED(mu_);
  // Number of Execute() calls still running.
  int64_t InFlight() const ABSL_LOCKS_EXCLUDED(mu_);
  // Where finished work is reported (not owned; nullptr: nowhere).
  void SetObserver(PreemptionObserver* o) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The eviction itself; returns OK or the first failed API call's status, its message
  // naming the victim ("preempt default/low: ...").
  api::Status Evict(const PreemptionRequest& req);
  // Reports the work done; `error` is Evict's result.
  void Finish(const PreemptionRequest& req, const api::Status& error, double seconds)
      ABSL_LOCKS_EXCLUDED(mu_);

  ClusterClient& client_;
  Runner runner_;
  Activator activate_;
  mutable absl::Mutex mu_;
  std::multiset<std::string, std::less<>> preempting_ ABSL_GUARDED_BY(mu_);  // preemptor UIDs
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  PreemptionObserver* observer_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// PreemptionRequest::reject_if_waiting for the pods waiting at Permit in `h`'s profile:
// such a victim is rejected rather than deleted (upstream preemption.go). `h` must outlive
// the request's work.
std::function<bool(const api::Pod&)> RejectIfWaitingIn(Handle& h);

// The scheduler's executor (the PreemptionExecutor service of `h`), or, when the handle
// provides none (plugin unit tests), an inline one on h.Client() created in *own.
PreemptionExecutor* PreemptionExecutorOf(Handle& h, std::unique_ptr<PreemptionExecutor>* own);

// The DisruptionTarget condition's message for a victim of `what` ("pod", "gang"):
// "<schedulerName>: preempting to accommodate a higher priority pod" (upstream
// preemption.go).
std::string DisruptionTargetMessage(std::string_view scheduler_name, std::string_view what);

}  // namespace phalanx::framework
