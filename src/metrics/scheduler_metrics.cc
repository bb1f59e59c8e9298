#include "metrics/scheduler_metrics.h"

namespace phalanx::metrics {

const std::vector<FamilySpec>& UpstreamFamilies() {
  // pkg/scheduler/metrics/metrics.go (metricsList, queueingHintExecutionDuration) and
  // pkg/scheduler/metrics/metrics.go of later releases for the preemption goroutines and
  // workload preemption families.
  static const std::vector<FamilySpec> kFamilies = {
      {"scheduler_schedule_attempts_total", "counter", {"result", "profile"}},
      {"scheduler_scheduling_attempt_duration_seconds", "histogram", {"result", "profile"}},
      {"scheduler_scheduling_algorithm_duration_seconds", "histogram", {}},
      {"scheduler_event_handling_duration_seconds", "histogram", {"event"}},
      {"scheduler_preemption_victims", "histogram", {}},
      {"scheduler_preemption_attempts_total", "counter", {}},
      {"scheduler_pending_pods", "gauge", {"queue"}},
      {"scheduler_pod_scheduling_duration_seconds", "histogram", {"attempts"}},
      {"scheduler_pod_scheduling_sli_duration_seconds", "histogram", {"attempts"}},
      {"scheduler_pod_scheduling_attempts", "histogram", {}},
      {"scheduler_framework_extension_point_duration_seconds",
       "histogram",
       {"extension_point", "status", "profile"}},
      {"scheduler_plugin_execution_duration_seconds",
       "histogram",
       {"plugin", "extension_point", "status"}},
      {"scheduler_queueing_hint_execution_duration_seconds",
       "histogram",
       {"plugin", "event", "hint"}},
      {"scheduler_queue_incoming_pods_total", "counter", {"queue", "event"}},
      {"scheduler_goroutines", "gauge", {"operation"}},
      {"scheduler_permit_wait_duration_seconds", "histogram", {"result"}},
      {"scheduler_scheduler_cache_size", "gauge", {"type"}},
      {"scheduler_unschedulable_pods", "gauge", {"plugin", "profile"}},
      {"scheduler_plugin_evaluation_total", "counter", {"plugin", "extension_point", "profile"}},
      {"scheduler_preemption_goroutines_duration_seconds", "histogram", {"result"}},
      {"scheduler_preemption_goroutines_execution_total", "counter", {"result"}},
  };
  return kFamilies;
}

std::string AttemptsLabel(int64_t attempts) {
  return attempts >= 15 ? "15+" : std::to_string(attempts);
}

SchedulerMetrics::SchedulerMetrics(Registry& reg, std::function<PendingPods()> pending)
    : SchedulerMetrics(reg, SchedulerSources{std::move(pending), nullptr, nullptr, nullptr}) {}

SchedulerMetrics::SchedulerMetrics(Registry& reg, SchedulerSources sources)
    : attempts_(reg.Counter("scheduler_schedule_attempts_total",
                            "Number of attempts to schedule pods, by the result. 'unschedulable' "
                            "means a pod could not be scheduled, while 'error' means an internal "
                            "scheduler problem.",
                            {"result", "profile"})),
      duration_(reg.Histogram("scheduler_scheduling_attempt_duration_seconds",
                              "Scheduling attempt latency in seconds (scheduling algorithm + "
                              "binding)",
                              {"result", "profile"}, ExponentialBuckets(0.001, 2, 15))),
      algorithm_(reg.Histogram("scheduler_scheduling_algorithm_duration_seconds",
                               "Scheduling algorithm latency in seconds", {},
                               ExponentialBuckets(0.001, 2, 15))),
      event_handling_(reg.Histogram("scheduler_event_handling_duration_seconds",
                                    "Event handling latency in seconds.", {"event"},
                                    ExponentialBuckets(0.0001, 2, 12))),
      leader_(reg.Gauge("leader_election_master_status",
                        "Gauge of if the reporting system is master of the relevant lease, 0 "
                        "indicates backup, 1 indicates master.",
                        {"name"})),
      bind_failures_(reg.Counter("phalanx_binding_failures_total",
                                 "Binding cycles that failed (pod deleted, already bound, API "
                                 "errors)")),
      preemption_attempts_(reg.Counter("scheduler_preemption_attempts_total",
                                       "Total preemption attempts in the cluster till now")),
      preemption_victims_(reg.Histogram("scheduler_preemption_victims",
                                        "Number of selected preemption victims", {},
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
                                         {"result"}, ExponentialBuckets(0.01, 2, 20))),
      pod_duration_(reg.Histogram("scheduler_pod_scheduling_duration_seconds",
                                  "E2e latency for a pod being scheduled which may include "
                                  "multiple scheduling attempts.",
                                  {"attempts"}, ExponentialBuckets(0.01, 2, 20))),
      pod_sli_(reg.Histogram("scheduler_pod_scheduling_sli_duration_seconds",
                             "E2e latency for a pod being scheduled, from the time the pod "
                             "enters the scheduling queue and might involve multiple scheduling "
                             "attempts.",
                             {"attempts"}, ExponentialBuckets(0.01, 2, 20))),
      pod_attempts_(reg.Histogram("scheduler_pod_scheduling_attempts",
                                  "Number of attempts to successfully schedule a pod.", {},
                                  ExponentialBuckets(1, 2, 5))),
      extension_point_(reg.Histogram("scheduler_framework_extension_point_duration_seconds",
                                     "Latency for running all plugins of a specific extension "
                                     "point.",
                                     {"extension_point", "status", "profile"},
                                     ExponentialBuckets(0.0001, 2, 12))),
      plugin_duration_(reg.Histogram("scheduler_plugin_execution_duration_seconds",
                                     "Duration for running a plugin at a specific extension "
                                     "point.",
                                     {"plugin", "extension_point", "status"},
                                     ExponentialBuckets(0.00001, 1.5, 20))),
      queueing_hint_(reg.Histogram("scheduler_queueing_hint_execution_duration_seconds",
                                   "Duration for running a queueing hint function of a plugin.",
                                   {"plugin", "event", "hint"},
                                   ExponentialBuckets(0.00001, 1.5, 20))),
      queue_incoming_(reg.Counter("scheduler_queue_incoming_pods_total",
                                  "Number of pods added to scheduling queues by event and queue "
                                  "type.",
                                  {"queue", "event"})),
      permit_wait_(reg.Histogram("scheduler_permit_wait_duration_seconds",
                                 "Duration of waiting on permit.", {"result"},
                                 ExponentialBuckets(0.001, 2, 15))),
      plugin_evaluation_(reg.Counter("scheduler_plugin_evaluation_total",
                                     "Number of attempts to schedule pods by each plugin and the "
                                     "extension point (available only in PreFilter, Filter, "
                                     "PreScore, and Score).",
                                     {"plugin", "extension_point", "profile"})) {
  using Rows = std::vector<std::pair<Labels, double>>;
  reg.GaugeFunc("scheduler_pending_pods",
                "Number of pending pods, by the queue type. 'active' means number of pods in "
                "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
                "number of pods in unschedulablePods that the scheduler attempted to schedule "
                "and failed; 'gated' is the number of unschedulable pods that the scheduler "
                "never attempted to schedule because they are gated.",
                {"queue"}, [pending = std::move(sources.pending)] {
                  PendingPods p = pending ? pending() : PendingPods{};
                  return Rows{{{"active"}, p.active},
                              {{"backoff"}, p.backoff},
                              {{"unschedulable"}, p.unschedulable},
                              {{"gated"}, p.gated}};
                });
  reg.GaugeFunc("scheduler_goroutines",
                "Number of running goroutines split by the work they do such as binding.",
                {"operation"}, [fn = std::move(sources.binding_goroutines)] {
                  return Rows{{{"binding"}, fn ? fn() : 0.0}};
                });
  reg.GaugeFunc(
      "scheduler_scheduler_cache_size",
      "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", {"type"},
      [fn = std::move(sources.cache_size)] {
        CacheSize c = fn ? fn() : CacheSize{};
        return Rows{{{"assumed_pods"}, c.assumed_pods}, {{"pods"}, c.pods}, {{"nodes"}, c.nodes}};
      });
  reg.GaugeFunc("scheduler_unschedulable_pods",
                "The number of unschedulable pods broken down by plugin name. A pod will "
                "increment the gauge for all plugins that caused it to not schedule and so this "
                "metric have meaning only when broken down by plugin.",
                {"plugin", "profile"},
                [fn = std::move(sources.unschedulable_by_plugin)] { return fn ? fn() : Rows{}; });
}

void SchedulerMetrics::Attempt(const std::string& result, const std::string& profile) {
  attempts_.With({result, profile}).Inc();
}

void SchedulerMetrics::AttemptDuration(const std::string& result, const std::string& profile,
                                       double seconds) {
  duration_.With({result, profile}).Observe(seconds);
}

void SchedulerMetrics::AlgorithmDuration(double seconds) { algorithm_.With({}).Observe(seconds); }

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

void SchedulerMetrics::ExtensionPointDuration(std::string_view point, std::string_view status,
                                              const std::string& profile, double seconds) {
  ExtensionPointSeries(point, status, profile).Observe(seconds);
}

HistogramValue& SchedulerMetrics::ExtensionPointSeries(std::string_view point,
                                                       std::string_view status,
                                                       const std::string& profile) {
  return extension_point_.With({std::string(point), std::string(status), profile});
}

HistogramValue& SchedulerMetrics::PluginDuration(std::string_view plugin, std::string_view point,
                                                 std::string_view status) {
  return plugin_duration_.With({std::string(plugin), std::string(point), std::string(status)});
}

void SchedulerMetrics::PluginEvaluations(std::string_view plugin, std::string_view point,
                                         const std::string& profile, double n) {
  plugin_evaluation_.With({std::string(plugin), std::string(point), profile}).Inc(n);
}

void SchedulerMetrics::PermitWait(std::string_view result, double seconds) {
  permit_wait_.With({std::string(result)}).Observe(seconds);
}

void SchedulerMetrics::QueueIncoming(std::string_view queue, std::string_view event) {
  queue_incoming_.With({std::string(queue), std::string(event)}).Inc();
}

void SchedulerMetrics::EventHandling(std::string_view event, double seconds) {
  event_handling_.With({std::string(event)}).Observe(seconds);
}

void SchedulerMetrics::QueueingHint(std::string_view plugin, std::string_view event,
                                    std::string_view hint, double seconds) {
  queueing_hint_.With({std::string(plugin), std::string(event), std::string(hint)})
      .Observe(seconds);
}

void SchedulerMetrics::PodScheduled(int64_t attempts, double seconds) {
  const std::string label = AttemptsLabel(attempts);
  pod_sli_.With({label}).Observe(seconds);
  pod_duration_.With({label}).Observe(seconds);
  pod_attempts_.With({}).Observe(static_cast<double>(attempts));
}

}  // namespace phalanx::metrics
