#include "metrics/scheduler_metrics.h"

namespace phalanx::metrics {

SchedulerMetrics::SchedulerMetrics(Registry& reg, std::function<PendingPods()> pending)
    : attempts_(reg.Counter("scheduler_schedule_attempts_total",
                            "Number of attempts to schedule pods, by the result. 'unschedulable' "
                            "means a pod could not be scheduled, while 'error' means an internal "
                            "scheduler problem.",
                            {"result", "profile"})),
      duration_(reg.Histogram("scheduler_scheduling_attempt_duration_seconds",
                              "Scheduling attempt latency in seconds (scheduling algorithm + "
                              "binding)",
                              {"result", "profile"}, ExponentialBuckets(0.001, 2, 15))),
      leader_(reg.Gauge("leader_election_master_status",
                        "Gauge of if the reporting system is master of the relevant lease, 0 "
                        "indicates backup, 1 indicates master.",
                        {"name"})),
      bind_failures_(reg.Counter("phalanx_binding_failures_total",
                                 "Binding cycles that failed (pod deleted, already bound, API "
                                 "errors)")),
      preemption_attempts_(reg.Counter("scheduler_preemption_attempts_total",
                                       "Total preemption attempts in the cluster till now")),
      preemption_victims_(reg.Histogram(
          "scheduler_preemption_victims",
          "Number of selected preemption victims for preemption initiated by a single pod", {},
          ExponentialBuckets(1, 2, 7))),
      workload_attempts_(reg.Counter("scheduler_workload_preemption_attempts_total",
                                     "Total preemption attempts initiated by workload (including "
                                     "pod groups) in the cluster till now.",
                                     {"result"})),
      workload_victims_(reg.Histogram("scheduler_workload_preemption_victims",
                                      "Number of pod preemption victims caused by workload "
                                      "preemption.",
                                      {}, ExponentialBuckets(1, 2, 11))),
      plugin_attempts_(reg.Counter("phalanx_preemption_attempts_total",
                                   "Preemption attempts by plugin (DefaultPreemption, "
                                   "GangPreemption, Queues reclaim) and result.",
                                   {"plugin", "result"})),
      plugin_victims_(reg.Counter("phalanx_preemption_victims_total",
                                  "Pods evicted by preemption, by plugin.", {"plugin"})),
      plugin_pdb_violations_(reg.Counter("phalanx_preemption_pdb_violations_total",
                                         "Preemption victims whose eviction violated a "
                                         "PodDisruptionBudget, by plugin.",
                                         {"plugin"})),
      goroutines_total_(reg.Counter("scheduler_preemption_goroutines_execution_total",
                                    "Number of preemption goroutines executed.", {"result"})),
      goroutines_duration_(reg.Histogram("scheduler_preemption_goroutines_duration_seconds",
                                         "Duration in seconds for running goroutines for the "
                                         "preemption.",
                                         {"result"}, ExponentialBuckets(0.01, 2, 20))) {
  reg.GaugeFunc("scheduler_pending_pods",
                "Number of pending pods, by the queue type. 'active' means number of pods in "
                "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
                "number of pods in unschedulablePods; 'gated' means pods gated by PreEnqueue.",
                {"queue"}, [pending = std::move(pending)] {
                  PendingPods p = pending ? pending() : PendingPods{};
                  return std::vector<std::pair<Labels, double>>{{{"active"}, p.active},
                                                                {{"backoff"}, p.backoff},
                                                                {{"unschedulable"}, p.unschedulable},
                                                                {{"gated"}, p.gated}};
                });
}

void SchedulerMetrics::Attempt(const std::string& result, const std::string& profile) {
  attempts_.With({result, profile}).Inc();
}

void SchedulerMetrics::AttemptDuration(const std::string& result, const std::string& profile,
                                       double seconds) {
  duration_.With({result, profile}).Observe(seconds);
}

void SchedulerMetrics::SetLeader(const std::string& lease_name, bool leader) {
  leader_.With({lease_name}).Set(leader ? 1 : 0);
}

void SchedulerMetrics::BindingFailure() { bind_failures_.With({}).Inc(); }

void SchedulerMetrics::PreemptionAttempt(const std::string& plugin, const std::string& result) {
  if (plugin == "DefaultPreemption") preemption_attempts_.With({}).Inc();
  if (plugin == "GangPreemption") workload_attempts_.With({result}).Inc();
  plugin_attempts_.With({plugin, result}).Inc();
}

void SchedulerMetrics::PreemptionVictims(const std::string& plugin, double victims,
                                         double pdb_violations) {
  if (plugin == "DefaultPreemption") preemption_victims_.With({}).Observe(victims);
  if (plugin == "GangPreemption") workload_victims_.With({}).Observe(victims);
  plugin_victims_.With({plugin}).Inc(victims);
  if (pdb_violations > 0) plugin_pdb_violations_.With({plugin}).Inc(pdb_violations);
}

void SchedulerMetrics::PreemptionWorkDone(const std::string& result, double seconds) {
  goroutines_total_.With({result}).Inc();
  goroutines_duration_.With({result}).Observe(seconds);
}

}  // namespace phalanx::metrics
