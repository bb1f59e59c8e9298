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
                                 "errors)")) {
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

}  // namespace phalanx::metrics
