// `phalanx simulate`: a discrete-event driver that replays a Scenario through the real
// Scheduler against the in-process Store on a virtual clock.
//
// Loop: advance the clock to the earliest of (next arrival/departure, the scheduler's
// next wake time: backoff expiry, unschedulable flush, Permit timeout); apply every event
// due; run the scheduler's periodic work; run scheduling cycles until activeQ is empty.
// Binding runs inline, so the result is a function of (scenario, config, seed).
// The run ends when no arrivals or departures remain and nothing but the unschedulable
// flush is left to do (retrying then could not change the outcome).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/resource.h"
#include "api/status.h"
#include "config/types.h"
#include "framework/registry.h"
#include "gang/reservation.h"
#include "sim/gang_report.h"
#include "sim/scale_up_report.h"
#include "sim/scenario.h"

namespace phalanx::scheduler {
class Scheduler;
}
namespace phalanx::store {
class Store;
}

namespace phalanx::sim {

// Observers of a run (trace replay modes build their metrics with these). Times are
// virtual seconds; `pod` indexes Scenario::pods.
struct SimulationHooks {
  // After the scheduler and the nodes exist, before the first pod (e.g. to reach a
  // profile's plugins through scheduler.Profile(name)).
  std::function<void(scheduler::Scheduler&)> on_start;
  std::function<void(size_t pod, double t)> on_arrival;
  std::function<void(size_t pod, const api::Pod& pod_obj, const std::string& node, double t)>
      on_bound;
  // The pod was deleted (bound or not) by the scenario (its departure or deletion time).
  std::function<void(size_t pod, double t)> on_deleted;
  // The scheduler deleted the pod (preemption, reclaim, starvation eviction); `restarts`:
  // its controller creates it again at once (TimedPod::restart_on_eviction, it was running).
  std::function<void(size_t pod, double t, bool restarts)> on_evicted;
  // After the events due at `t` were applied and the scheduler has nothing left to do.
  std::function<void(double t)> on_step;
  // The same with the store, for a test that plays a controller outside the scheduler (a
  // DRA driver setting a claim's device conditions): its writes reach the scheduler as
  // events, seen at the next step (a scheduler wake-up or a scenario event).
  std::function<void(double t, store::Store&)> on_step_store;
  // Once the loop stopped (the run ended, or SimulationOptions::stop_at_s was reached),
  // before the result is summarized: the scheduler and the store as they are then
  // (`phalanx explain` diagnoses pending pods there).
  std::function<void(scheduler::Scheduler&, store::Store&)> on_end;
};

struct SimulationOptions {
  uint64_t seed = 1;
  config::KubeSchedulerConfiguration config;
  std::string config_source;     // file the config came from, for error messages
  framework::Registry registry;  // plugins available to the profiles
  // Called now and then with (pods arrived, pods total, virtual seconds).
  std::function<void(size_t, size_t, double)> progress;
  SimulationHooks hooks;
  // Delete a pod as soon as an attempt to schedule it fails (the FGD paper's methodology:
  // a pod that does not fit on arrival is dropped, never retried).
  bool delete_unschedulable = false;
  // Stop the run before the first event or wake-up later than this many virtual seconds
  // (`phalanx explain --at`); unset = run to the end. Pods still pending then count as
  // pending at end.
  std::optional<double> stop_at_s;
  // Skip the unschedulable flush rounds of an idle stretch that can only replay every
  // waiting gang's rejection (scheduler::Scheduler::SkipRepeatedFlushes), accounting them
  // instead: the results, summary and statistics are those of the rounds run one by one
  // (the last round of each gang before the next event still runs). Off: every round runs.
  bool skip_repeated_flushes = true;
};

// Cluster allocation after a step (recorded when it changed).
struct UsageSample {
  double t = 0;          // virtual seconds
  double gpu_milli = 0;  // GPU milli held by bound pods (shares included)
  double gpus = 0;       // nvidia.com/gpu requested by bound pods
  double milli_cpu = 0;
  size_t running = 0;  // bound pods
  size_t pending = 0;  // arrived, not bound, not deleted
};

struct PodOutcome {
  std::string pod;   // namespace/name
  std::string node;  // empty if never bound
  double arrival_s = 0;
  std::optional<double> scheduled_s;
  std::optional<double> deleted_s;
  int attempts = 0;
  std::string reason;  // last FailedScheduling message if never bound
  // No profile serves the pod's spec.schedulerName: never ours, never attempted (as
  // kube-scheduler ignores it); `reason` names the scheduler name and the profiles.
  bool unserved = false;
  // spec.nodeName was set in the manifest: bound at arrival (scheduled_s = arrival_s,
  // node = that node), never attempted.
  bool prebound = false;
  // Evicted by preemption (DefaultPreemption's "Preempted" event).
  bool preempted = false;
  // TimedPod::restart_on_eviction: times the pod was evicted while running and recreated
  // (scheduled_s / node are then those of its last incarnation).
  int restarts = 0;
};

struct ResourceUsage {
  std::string resource;  // cpu (cores), memory (GiB), nvidia.com/gpu, pods
  double capacity = 0;
  double peak = 0;      // max allocated over the run
  double time_avg = 0;  // time-weighted mean allocated while pods were present
};

// Queues and quotas (src/quota): one sample per queue whenever some queue's figures
// changed. Amounts are of SimulationResult::queue_resource.
struct QueueSample {
  double t = 0;  // virtual seconds
  std::string queue;
  // The resource of this queue's figures: SimulationResult::queue_resource, except that a
  // queue that has never guaranteed, limited, held or asked for a GPU is measured in CPU
  // cores even when the cluster has GPUs (QueueSummary::resource).
  std::string resource;
  double allocated = 0;  // subtree: assumed + bound pods
  double deserved = 0;   // fair share (quota/fair_share.h)
  double demand = 0;     // allocated + requests of pending pods
  int64_t running_pods = 0;
  int64_t pending_pods = 0;
};

// Per-queue figures over the whole run.
struct QueueSummary {
  std::string name, parent, dialect;
  std::string resource;      // "nvidia.com/gpu" or "cpu" (cores), as its QueueSamples
  double allocated_avg = 0;  // time-weighted mean from the first to the last sample
  double deserved_avg = 0;
  double allocated_peak = 0;
  double allocated_end = 0;
  int64_t pending_pods_end = 0;
  std::string error;  // invalid queue (cycle, missing parent, negative quota)
};

struct SimulationResult {
  std::string scenario;
  uint64_t seed = 0;
  size_t nodes = 0;
  size_t pods = 0;
  size_t scheduled = 0;       // pods the scheduler bound at some point
  size_t prebound = 0;        // pods bound in the manifest (spec.nodeName), not in scheduled
  size_t pending_at_end = 0;  // never bound, still present at the end
  size_t deleted_while_pending = 0;
  // Pods whose spec.schedulerName no profile serves (counted in pending_at_end or
  // deleted_while_pending too), by scheduler name.
  std::map<std::string, size_t> unserved_scheduler_names;
  int64_t attempts = 0;
  // Steps of the unschedulable flush accounted without running them
  // (SimulationOptions::skip_repeated_flushes); not in the summary, which is the same
  // either way.
  size_t flush_steps_skipped = 0;
  double virtual_seconds = 0;
  double wall_seconds = 0;
  // Distinct reasons of a never-bound pod's last failure, joined with "; " (e.g.
  // "Insufficient nvidia.com/gpu; node(s) had untolerated taint {a: b}") -> pods.
  std::map<std::string, size_t> pending_reasons;
  std::vector<ResourceUsage> usage;
  std::vector<PodOutcome> outcomes;  // in arrival order
  std::vector<std::string> invariant_violations;
  // Preemption (DefaultPreemption's "Preempted" events): pods evicted as victims, and how
  // many of them violated a PodDisruptionBudget (the event notes the budget).
  int64_t preemption_victims = 0;
  int64_t pdb_violations = 0;
  // Preemptions that evicted (a pod's, a gang's, a queue reclaim's), each with its victims.
  int64_t preemptions = 0;
  // Pods the Defragmentation plugin moved (evicted for their controller to recreate; not
  // preemptions, not in preemption_victims).
  int64_t moved_pods = 0;
  size_t pod_disruption_budgets = 0;  // in the scenario
  // Pods evicted while running and recreated by their controller
  // (TimedPod::restart_on_eviction), and the GPU time they had run and lost (GPUs x
  // seconds from their bind to their eviction; counted in the GPU allocation figures too).
  int64_t restarts = 0;
  double lost_gpu_seconds = 0;
  // Gang reservations (GangReservation plugin, gang/reservation.h): made, released when the
  // gang started / was gone, expired, and failed cycles over the threshold that got none.
  gang::ReservationCounters reservations;
  std::vector<gang::Reservation> reservation_log;  // every reservation made, in order
  GangSummary gangs;  // per-gang outcomes and waits (empty when no pod named a gang)
  // The simulated cluster-autoscaler's nodes and ProvisioningRequests (sim/autoscaler.h),
  // when the scenario declares node groups.
  std::optional<AutoscalerSummary> scale_up;
  // Allocation over time; GPU capacity in milli (devices of every node * 1000).
  std::vector<UsageSample> timeline;
  double gpu_milli_capacity = 0;
  // Queues (empty when the scenario has no queue objects). queue_resource is
  // "nvidia.com/gpu" when the cluster has GPUs, else "cpu" (in cores); a CPU-only queue of a
  // GPU cluster is measured in cores all the same (QueueSample::resource).
  std::string queue_resource;
  std::vector<QueueSample> queue_timeline;
  std::vector<QueueSummary> queues;
  // DRA ResourceClaims at the end of the run, in namespace/name order (empty when none), e.g.
  // "default/trainer-gpus-x7k2q: gpu.example.com/node-b/gpu-1, gpu.example.com/node-b/gpu-2
  // (reserved for trainer)" or "default/c: not allocated"; and the DRA objects that failed
  // to parse (their error, naming the object and field).
  std::vector<std::string> dra_claims;
  std::vector<std::string> dra_errors;
  // From the scenario (Scenario::unused_kinds, warnings, notes): the kinds nothing used,
  // what affects placement and is not modelled, and what was done that a user may not
  // expect. Warnings (these, and pods no profile serves) make `phalanx simulate` exit 2.
  std::map<std::string, size_t> unused_kinds;
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  bool HasWarnings() const { return !warnings.empty() || !unserved_scheduler_names.empty(); }
};

// Runs the scenario. Errors: scheduler construction (bad profile/plugin), objects the
// store rejects (e.g. a pod naming an unknown PriorityClass) — the message names the object.
// *result is filled as far as the run got.
api::Status RunSimulation(const Scenario& scenario, const SimulationOptions& opts,
                          SimulationResult* result);

// Human summary (several lines) and machine-readable outputs.
std::string FormatSummary(const SimulationResult& r);
// One JSON object per pod: {"pod","node","arrival","scheduled","deleted","attempts","reason"},
// plus "prebound": true for a pod bound in the manifest and "preempted": true for a
// preemption victim.
// Errors: "PATH: cannot open for writing", "PATH: write failed".
api::Status WriteOutcomesJsonl(const SimulationResult& r, const std::string& path);
// Whole result (summary figures, usage, reasons) as one JSON document.
std::string ResultJson(const SimulationResult& r);

}  // namespace phalanx::sim
