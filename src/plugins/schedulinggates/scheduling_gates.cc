#include "plugins/schedulinggates/scheduling_gates.h"

namespace phalanx::plugins::schedulinggates {

framework::Status SchedulingGates::PreEnqueue(const framework::PodInfo& pod) {
  const auto& gates = pod.Pod().spec.scheduling_gates;
  if (gates.empty()) return framework::Status();
  std::string msg = "waiting for scheduling gates: [";
  for (size_t i = 0; i < gates.size(); ++i) {
    if (i) msg += ' ';
    msg += gates[i].name;
  }
  msg += ']';
  return framework::Status::UnschedulableAndUnresolvable(std::move(msg));
}

std::vector<framework::ClusterEventWithHint> SchedulingGates::EventsToRegister() const {
  framework::ClusterEventWithHint e;
  e.event = {framework::EventResource::kPod, framework::kUpdatePodSchedulingGatesEliminated,
             "PodSchedulingGatesEliminated"};
  e.hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    // isSchedulableAfterUpdatePodSchedulingGatesEliminated: only the target pod's own
    // update can ungate it.
    if (objs.new_pod == nullptr) return framework::QueueingHint::kQueue;
    return objs.new_pod->metadata.uid == pod.metadata.uid ? framework::QueueingHint::kQueue
                                                          : framework::QueueingHint::kQueueSkip;
  };
  return {std::move(e)};
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> SchedulingGates::New(
    framework::PluginArgs /*args*/, framework::Handle& /*h*/) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<SchedulingGates>());
}

}  // namespace phalanx::plugins::schedulinggates
