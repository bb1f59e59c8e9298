// The scheduler's Prometheus metrics, registered on a metrics::Registry with upstream's
// names, label names, buckets and help texts: kube-scheduler's
// pkg/scheduler/metrics/metrics.go (kubernetes/kubernetes at
// 1b6390e5207c69913a2cb13a4d8a2268a9391f47; the preemption goroutine and workload
// preemption families from later releases), plus leader_election_master_status
// (k8s.io/client-go/tools/leaderelection/metrics.go) and Phalanx's own phalanx_* families.
// UpstreamFamilies() lists the upstream families and their labels (the test and
// docs/compatibility.md rely on it). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/metrics.h"

namespace phalanx::metrics {

struct PendingPods {
  double active = 0, backoff = 0, unschedulable = 0, gated = 0;
};

struct CacheSize {
  double nodes = 0, pods = 0, assumed_pods = 0;
};

// Values read at scrape time; a null function serves zeros (or no series).
struct SchedulerSources {
  std::function<PendingPods()> pending;        // scheduler_pending_pods{queue}
  std::function<CacheSize()> cache_size;       // scheduler_scheduler_cache_size{type}
  std::function<double()> binding_goroutines;  // scheduler_goroutines{operation="binding"}
  // (plugin, profile) -> pods waiting after a rejection by that plugin
  // (scheduler_unschedulable_pods{plugin,profile}).
  std::function<std::vector<std::pair<Labels, double>>()> unschedulable_by_plugin;
};

// One upstream family: name, type ("counter" | "gauge" | "histogram"), label names.
struct FamilySpec {
  std::string name;
  std::string type;
  std::vector<std::string> labels;
};
// kube-scheduler's families that SchedulerMetrics serves, with upstream's label names in
// upstream's order.
const std::vector<FamilySpec>& UpstreamFamilies();

// upstream getAttemptsLabel (pkg/scheduler/schedule_one.go): "1".."14", then "15+".
std::string AttemptsLabel(int64_t attempts);

class SchedulerMetrics {
 public:
  explicit SchedulerMetrics(Registry& reg, SchedulerSources sources = {});
  // Compatibility: only scheduler_pending_pods has a source.
  SchedulerMetrics(Registry& reg, std::function<PendingPods()> pending);

  // result: "scheduled" | "unschedulable" | "error".
  void Attempt(const std::string& result, const std::string& profile);
  // One scheduling attempt's duration in seconds (scheduling cycle, from pop to the
  // scheduling decision).
  void AttemptDuration(const std::string& result, const std::string& profile, double seconds);
  // scheduler_scheduling_algorithm_duration_seconds: one schedulePod run.
  void AlgorithmDuration(double seconds);
  void SetLeader(const std::string& lease_name, bool leader);
  void BindingFailure();
  // Preemption (upstream pkg/scheduler/metrics names; plugin-labelled ones are Phalanx's):
  // one attempt of `plugin` ("DefaultPreemption": scheduler_preemption_attempts_total;
  // "GangPreemption": scheduler_workload_preemption_attempts_total{result}; every plugin:
  // phalanx_preemption_attempts_total{plugin,result}). `result` is the status code's name.
  void PreemptionAttempt(const std::string& plugin, const std::string& result);
  // The victims of one preemption (scheduler_preemption_victims for DefaultPreemption,
  // scheduler_workload_preemption_victims for GangPreemption,
  // phalanx_preemption_victims_total{plugin} and phalanx_preemption_pdb_violations_total{plugin}
  // for all).
  void PreemptionVictims(const std::string& plugin, double victims, double pdb_violations);
  // One asynchronous eviction finished: result "success" | "error"
  // (scheduler_preemption_goroutines_execution_total / _duration_seconds).
  void PreemptionWorkDone(const std::string& result, double seconds);

  // scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}.
  void ExtensionPointDuration(std::string_view point, std::string_view status,
                              const std::string& profile, double seconds);
  // Its series (callers may cache the reference: a series lives as long as the registry).
  HistogramValue& ExtensionPointSeries(std::string_view point, std::string_view status,
                                       const std::string& profile);
  // The series of scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}
  // (callers cache the reference: a series lives as long as the registry).
  HistogramValue& PluginDuration(std::string_view plugin, std::string_view point,
                                 std::string_view status);
  // scheduler_plugin_evaluation_total{plugin,extension_point,profile} += n.
  void PluginEvaluations(std::string_view plugin, std::string_view point,
                         const std::string& profile, double n);
  // scheduler_permit_wait_duration_seconds{result}; result is the status code's name.
  void PermitWait(std::string_view result, double seconds);
  // scheduler_queue_incoming_pods_total{queue,event}.
  void QueueIncoming(std::string_view queue, std::string_view event);
  // scheduler_event_handling_duration_seconds{event}.
  void EventHandling(std::string_view event, double seconds);
  // scheduler_queueing_hint_execution_duration_seconds{plugin,event,hint}.
  void QueueingHint(std::string_view plugin, std::string_view event, std::string_view hint,
                    double seconds);
  // A pod bound after `attempts` attempts, `seconds` after its first attempt:
  // scheduler_pod_scheduling_sli_duration_seconds{attempts},
  // scheduler_pod_scheduling_duration_seconds{attempts} (deprecated upstream, same value)
  // and scheduler_pod_scheduling_attempts.
  void PodScheduled(int64_t attempts, double seconds);

 private:
  Family<CounterValue>& attempts_;
  Family<HistogramValue>& duration_;
  Family<HistogramValue>& algorithm_;
  Family<HistogramValue>& event_handling_;
  Family<GaugeValue>& leader_;
  Family<CounterValue>& bind_failures_;
  Family<CounterValue>& preemption_attempts_;
  Family<HistogramValue>& preemption_victims_;
  Family<CounterValue>& workload_attempts_;
  Family<HistogramValue>& workload_victims_;
  Family<CounterValue>& plugin_attempts_;
  Family<CounterValue>& plugin_victims_;
  Family<CounterValue>& plugin_pdb_violations_;
  Family<CounterValue>& goroutines_total_;
  Family<HistogramValue>& goroutines_duration_;
  Family<HistogramValue>& pod_duration_;
  Family<HistogramValue>& pod_sli_;
  Family<HistogramValue>& pod_attempts_;
  Family<HistogramValue>& extension_point_;
  Family<HistogramValue>& plugin_duration_;
  Family<HistogramValue>& queueing_hint_;
  Family<CounterValue>& queue_incoming_;
  Family<HistogramValue>& permit_wait_;
  Family<CounterValue>& plugin_evaluation_;
};

}  // namespace phalanx::metrics
