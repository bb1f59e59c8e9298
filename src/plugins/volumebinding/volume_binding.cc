#include "plugins/volumebinding/volume_binding.h"

namespace phalanx::plugins::volumebinding {

framework::StatusOr<std::unique_ptr<framework::Plugin>> VolumeBinding::New(
    framework::PluginArgs, framework::Handle&) {
  return std::unique_ptr<framework::Plugin>(new VolumeBinding());
}

framework::Status VolumeBinding::PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                                           framework::PreFilterResult*) {
  for (const auto& v : pod.Pod().spec.volumes) {
    if (v.persistent_volume_claim.empty()) continue;
    return framework::Status::UnschedulableAndUnresolvable(
        "pod uses PersistentVolumeClaim \"" + v.persistent_volume_claim +
        "\" (volume \"" + v.name +
        "\"): volumes are not supported by this scheduler yet; disable the VolumeBinding "
        "plugin in the profile to schedule such pods without volume checks");
  }
  return framework::Status(framework::Code::kSkip);
}

framework::Status VolumeBinding::Filter(const framework::CycleState&, const framework::PodInfo&,
                                        const framework::NodeInfo&) {
  return framework::Status::Success();
}

std::vector<framework::ClusterEventWithHint> VolumeBinding::EventsToRegister() const {
  // A pod's volumes are immutable; only a change of the pod itself (recreated) helps.
  return {{{framework::EventResource::kUnscheduledPod, framework::kUpdate, "UnscheduledPodUpdate"},
           nullptr}};
}

bool VolumeBinding::SameSignature(const framework::PodInfo& canonical,
                             const framework::PodInfo& pod) const {
  auto claims = [](const api::Pod& p) {
    for (const auto& v : p.spec.volumes) {
      if (!v.persistent_volume_claim.empty()) return true;
    }
    return false;
  };
  return !claims(*canonical.pod) && !claims(*pod.pod);
}

}  // namespace phalanx::plugins::volumebinding
