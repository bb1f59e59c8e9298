// Checks of a configuration that only `phalanx run` needs (the simulator has no node side).
#pragma once

#include <string>
#include <vector>

#include "api/status.h"
#include "config/types.h"
#include "scheduler/scheduler.h"

namespace phalanx::app {

// OK when every profile of `cfg` (built into `sched`) can run against a real cluster; else
// FailedPrecondition with the first problem as its message, naming the profile and what to
// change:
//  - GpuShare enabled at reserve but not at preBind: the devices it chooses would never be
//    written to the pod, so the node's device plugin could put two pods on one "free" GPU
//    (src/plugins/gpushare/gpu_share.h).
api::Status LiveProfileError(scheduler::Scheduler& sched,
                             const config::KubeSchedulerConfiguration& cfg);

// What a profile asks for that the API server cannot give, for `phalanx run` to log as
// warnings at start; `watched` are the resources the informers watch (LiveInformerFactory::
// Resources(): "provisioningrequests.autoscaling.x-k8s.io/v1", ...):
//  - the ProvisioningRequest plugin (a PodGroup PostFilter) without cluster-autoscaler's
//    provisioningrequests served: no gang's request can be created (each attempt's reason
//    says so), and a CRD installed later is watched only after a restart.
std::vector<std::string> LiveProfileWarnings(scheduler::Scheduler& sched,
                                             const config::KubeSchedulerConfiguration& cfg,
                                             const std::vector<std::string>& watched);

}  // namespace phalanx::app
