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

 private:
  Family<CounterValue>& attempts_;
  Family<HistogramValue>& duration_;
  Family<GaugeValue>& leader_;
  Family<CounterValue>& bind_failures_;
};

}  // namespace phalanx::metrics
