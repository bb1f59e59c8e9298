#include "quota/queue_metrics.h"

namespace phalanx::quota {

void RegisterQueueMetrics(metrics::Registry& reg, const QueueManager& qm) {
  using Samples = std::vector<std::pair<metrics::Labels, double>>;
  auto per_resource = [&qm](auto pick) {
    return [&qm, pick] {
      Samples v;
      for (const auto& s : qm.Status()) {
        for (const auto& [r, amount] : pick(s))
          v.push_back({{s.name, r}, static_cast<double>(amount)});
      }
      return v;
    };
  };
  reg.GaugeFunc("phalanx_queue_allocated",
                "Requests of assumed and bound pods of the queue and its descendants",
                {"queue", "resource"},
                per_resource([](const QueueStatus& s) { return s.allocated; }));
  reg.GaugeFunc("phalanx_queue_deserved", "Fair share of the queue (KAI Proportion semantics)",
                {"queue", "resource"},
                per_resource([](const QueueStatus& s) { return s.deserved; }));
  reg.GaugeFunc("phalanx_queue_pending",
                "Requests of pending pods of the queue and its descendants", {"queue", "resource"},
                per_resource([](const QueueStatus& s) { return s.pending; }));
  reg.GaugeFunc("phalanx_queue_pods", "Pods of the queue and its descendants, by state",
                {"queue", "state"}, [&qm] {
                  Samples v;
                  for (const auto& s : qm.Status()) {
                    v.push_back({{s.name, "running"}, static_cast<double>(s.running_pods)});
                    v.push_back({{s.name, "pending"}, static_cast<double>(s.pending_pods)});
                  }
                  return v;
                });
}

}  // namespace phalanx::quota
