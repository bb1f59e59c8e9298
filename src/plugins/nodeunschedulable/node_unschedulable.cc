#include "plugins/nodeunschedulable/node_unschedulable.h"

#include "plugins/helper/taints.h"

namespace phalanx::plugins::nodeunschedulable {

namespace {

// Tolerating node.kubernetes.io/unschedulable:NoSchedule also tolerates spec.unschedulable.
bool ToleratesUnschedulable(const std::vector<api::Toleration>& tolerations) {
  return helper::TolerationsTolerateTaint(tolerations, helper::kTaintNodeUnschedulable, "",
                                          helper::kTaintEffectNoSchedule);
}

}  // namespace

framework::Status NodeUnschedulable::Filter(const framework::CycleState& /*state*/,
                                            const framework::PodInfo& pod,
                                            const framework::NodeInfo& node) {
  if (node.node() == nullptr) return framework::Status::Error("node not found");
  if (!node.unschedulable()) return framework::Status();
  if (ToleratesUnschedulable(pod.Pod().spec.tolerations)) {
    return framework::Status();
  }
  return framework::Status::UnschedulableAndUnresolvable(std::string(kErrReasonUnschedulable));
}

std::vector<framework::ClusterEventWithHint> NodeUnschedulable::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events(2);
  events[0].event = {framework::EventResource::kNode, framework::kAdd | framework::kUpdateNodeTaint,
                     "NodeAdd|NodeTaintChange"};
  // isSchedulableAfterNodeChange: a node added schedulable, or updated from
  // unschedulable to schedulable.
  events[0].hint = [](const api::Pod& /*pod*/, const framework::EventObjects& objs) {
    if (objs.new_node == nullptr) return framework::QueueingHint::kQueue;
    const bool now_schedulable = !objs.new_node->spec.unschedulable;
    if ((objs.old_node != nullptr && objs.old_node->spec.unschedulable && now_schedulable) ||
        (objs.old_node == nullptr && now_schedulable)) {
      return framework::QueueingHint::kQueue;
    }
    return framework::QueueingHint::kQueueSkip;
  };
  events[1].event = {framework::EventResource::kPod, framework::kUpdatePodTolerations,
                     "PodTolerationChange"};
  // isSchedulableAfterPodTolerationChange.
  events[1].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.new_pod == nullptr) return framework::QueueingHint::kQueue;
    if (objs.new_pod->metadata.uid == pod.metadata.uid &&
        ToleratesUnschedulable(objs.new_pod->spec.tolerations)) {
      return framework::QueueingHint::kQueue;
    }
    return framework::QueueingHint::kQueueSkip;
  };
  return events;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> NodeUnschedulable::New(
    framework::PluginArgs /*args*/, framework::Handle& /*h*/) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<NodeUnschedulable>());
}

bool NodeUnschedulable::SameSignature(const framework::PodInfo& canonical,
                                      const framework::PodInfo& pod) const {
  return canonical.pod->spec.tolerations == pod.pod->spec.tolerations;
}

}  // namespace phalanx::plugins::nodeunschedulable
