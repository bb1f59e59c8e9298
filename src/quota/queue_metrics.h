// Per-queue Prometheus gauges, computed at scrape time from QueueManager::Status():
//   phalanx_queue_allocated{queue,resource}  assumed + bound requests (subtree)
//   phalanx_queue_deserved{queue,resource}   fair share (quota/fair_share.h)
//   phalanx_queue_pending{queue,resource}    requests of pods not yet placed (subtree)
//   phalanx_queue_pods{queue,state}          running | pending pods (subtree)
// Units as QueueManager (cpu in milli-CPU, memory in bytes, devices as counts).
#pragma once

#include "metrics/metrics.h"
#include "quota/queue_manager.h"

namespace phalanx::quota {

// Registers the gauges on `reg`; `qm` must outlive every Render() of `reg`.
void RegisterQueueMetrics(metrics::Registry& reg, const QueueManager& qm);

}  // namespace phalanx::quota
