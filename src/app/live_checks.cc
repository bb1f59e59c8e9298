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

std::vector<std::string> LiveProfileWarnings(scheduler::Scheduler& sched,
                                             const config::KubeSchedulerConfiguration& cfg,
                                             const std::vector<std::string>& watched) {
  std::vector<std::string> out;
  bool served = false;
  for (const auto& r : watched) {
    served |= r.rfind("provisioningrequests.autoscaling.x-k8s.io/", 0) == 0;
  }
  if (served) return out;
  for (const auto& p : cfg.profiles) {
    framework::Framework* fw = sched.Profile(p.scheduler_name);
    if (fw == nullptr) continue;
    for (const auto* pl : fw->PodGroupPostFilterPlugins()) {
      if (pl->Name() != "ProvisioningRequest") continue;
      out.push_back("profile " + p.scheduler_name +
                    ": ProvisioningRequest is enabled but the API server does not serve "
                    "autoscaling.x-k8s.io/v1 provisioningrequests (cluster-autoscaler's CRD is "
                    "not installed): gangs get no ProvisioningRequest; restart phalanx after "
                    "installing the CRD");
    }
  }
  return out;
}

}  // namespace phalanx::app
