// A PreBind plugin that waits without blocking (Phalanx's counterpart of a PreBind that
// polls inside upstream's binding goroutine, e.g. DynamicResources' wait for device binding
// conditions: wait.PollUntilContextTimeout in pkg/scheduler/framework/plugins/
// dynamicresources/dynamicresources.go).
#pragma once

#include <cstdint>
#include <string>

#include "framework/cycle_state.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::framework {

// Implemented besides PreBindPlugin. Its PreBind returns Wait instead of blocking; the
// scheduler then parks the binding cycle — it holds no thread and the scheduling loop goes
// on — and calls PreBindWait right away and again at every Tick until it returns anything
// but Wait: Success goes on with the next PreBind plugin, a failure fails the binding cycle
// as PreBind's own would (Unreserve, the pod requeued). `now` is the scheduler's clock
// (nanoseconds since the epoch; the simulator's virtual clock). *wake_at (set with Wait)
// is the clock time by which it must be called again at the latest (its poll or its
// timeout); the simulator advances its clock to it (Scheduler::NextWakeTime). A PreBind
// plugin that returns Wait without implementing this interface fails the binding cycle.
class WaitingPreBindPlugin {
 public:
  virtual ~WaitingPreBindPlugin() = default;
  virtual Status PreBindWait(CycleState& state, const PodInfo& pod, const std::string& node,
                             int64_t now, int64_t* wake_at) = 0;
};

}  // namespace phalanx::framework
