// The scheduler's Prometheus metrics (names, labels and buckets as upstream
// pkg/scheduler/metrics), registered on a metrics::Registry.
#pragma once

#include <functional>
#include <string>

#include "metrics/metrics.h"

namespace phalanx::metrics {

struct PendingPods {
  double active = 0, backoff = 0, unschedulable = 0, gated = 0;
};

class SchedulerMetrics {
 public:
  // `pending` is called at scrape time (scheduler_pending_pods{queue}).
  SchedulerMetrics(Registry& reg, std::function<PendingPods()> pending);

  // result: "scheduled" | "unschedulable" | "error".
  void Attempt(const std::string& result, const std::string& profile);
  // One scheduling attempt's duration in seconds (scheduling cycle, from pop to the
  // scheduling decision).
  void AttemptDuration(const std::string& result, const std::string& profile, double seconds);
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

 private:
  Family<CounterValue>& attempts_;
  Family<HistogramValue>& duration_;
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
};

}  // namespace phalanx::metrics
