#include "quota/queue_metrics.h"

#include <type_traits>

#include "quota/device_charge.h"

namespace phalanx::quota {

void RegisterQueueMetrics(metrics::Registry& reg, const QueueManager& qm) {
  using Samples = std::vector<std::pair<metrics::Labels, double>>;
  auto per_resource = [&qm](auto pick) {
    return [&qm, pick] {
      Samples v;
      for (const auto& s : qm.Status()) {
        const auto& list = pick(s);
        if constexpr (std::is_same_v<std::decay_t<decltype(list)>, ResourceList>) {
          // GPU shares (kGpuShareMilli) are part of nvidia.com/gpu, in devices.
          for (const auto& [r, amount] : list) {
            if (r == kGpuShareMilli) continue;
            double x = static_cast<double>(amount);
            if (r == kGpuQuotaResource) x = static_cast<double>(GpuMilli(list)) / 1000.0;
            v.push_back({{s.name, r}, x});
          }
          if (list.count(kGpuShareMilli) && !list.count(kGpuQuotaResource)) {
            v.push_back(
                {{s.name, kGpuQuotaResource}, static_cast<double>(GpuMilli(list)) / 1000.0});
          }
        } else {
          for (const auto& [r, amount] : list)
            v.push_back({{s.name, r}, static_cast<double>(amount)});
        }
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
