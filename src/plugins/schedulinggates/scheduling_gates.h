// SchedulingGates: keeps pods with spec.schedulingGates out of activeQ
// (upstream pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::schedulinggates {

class SchedulingGates final : public framework::PreEnqueuePlugin,
                              public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "SchedulingGates";

  std::string_view Name() const override { return kName; }
  // UnschedulableAndUnresolvable "waiting for scheduling gates: [a b]" (Go %v of the gate
  // names) while the pod has gates; Success otherwise.
  framework::Status PreEnqueue(const framework::PodInfo& pod) override;
  // Pod/UpdatePodSchedulingGatesEliminated; the hint queues only the gated pod itself.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // Takes no args.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::schedulinggates
