#include "app/live_checks.h"

#include <algorithm>
#include <vector>

namespace phalanx::app {

api::Status LiveProfileError(scheduler::Scheduler& sched,
                             const config::KubeSchedulerConfiguration& cfg) {
  for (const auto& p : cfg.profiles) {
    const framework::Framework* fw = sched.Profile(p.scheduler_name);
    if (fw == nullptr) continue;
    auto has = [fw](const char* point) {
      const std::vector<std::string> l = fw->ListPlugins(point);
      return std::find(l.begin(), l.end(), "GpuShare") != l.end();
    };
    if (has("Reserve") && !has("PreBind")) {
      return absl::FailedPreconditionError(
          "profile " + p.scheduler_name +
          ": GpuShare is enabled at reserve but not at preBind; in phalanx run the chosen "
          "GPU devices must be written to the pod (enable GpuShare at preBind, or in "
          "multiPoint)");
    }
  }
  return absl::OkStatus();
}

}  // namespace phalanx::app
