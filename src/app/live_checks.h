// Checks of a configuration that only `phalanx run` needs (the simulator has no node side).
#pragma once

#include <string>

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

}  // namespace phalanx::app
