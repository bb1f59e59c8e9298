#include "plugins/nodedeclaredfeatures/node_declared_features.h"

#include <algorithm>
#include <string>

namespace phalanx::plugins::nodedeclaredfeatures {

namespace {

// Both lists sorted (the decoder sorts them): every required feature declared.
bool Declares(const std::vector<std::string>& declared, const std::vector<std::string>& required) {
  return std::includes(declared.begin(), declared.end(), required.begin(), required.end());
}

}  // namespace

framework::Status NodeDeclaredFeatures::PreFilter(framework::CycleState& /*state*/,
                                                  const framework::PodInfo& pod,
                                                  framework::PreFilterResult* /*result*/) {
  if (pod.Pod().spec.required_node_features.empty()) {
    return framework::Status(framework::Code::kSkip);
  }
  return framework::Status();
}

framework::Status NodeDeclaredFeatures::Filter(const framework::CycleState& /*state*/,
                                               const framework::PodInfo& pod,
                                               const framework::NodeInfo& node) {
  if (node.node() == nullptr) return framework::Status::Error("node not found");
  const auto& required = pod.Pod().spec.required_node_features;
  if (required.empty() || Declares(node.node()->status.declared_features, required)) {
    return framework::Status();
  }
  return framework::Status::UnschedulableAndUnresolvable(
      std::string(kErrReasonUnsatisfiedRequirements));
}

bool NodeDeclaredFeatures::SameSignature(const framework::PodInfo& canonical,
                                         const framework::PodInfo& pod) const {
  return canonical.pod->spec.required_node_features == pod.pod->spec.required_node_features;
}

std::vector<framework::ClusterEventWithHint> NodeDeclaredFeatures::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events(2);
  events[0].event = {framework::EventResource::kNode,
                     framework::kAdd | framework::kUpdateNodeDeclaredFeature,
                     "NodeAdd|NodeDeclaredFeatureChange"};
  // isSchedulableAfterNodeChange: skip when the declared features did not change.
  events[0].hint = [](const api::Pod& /*pod*/, const framework::EventObjects& objs) {
    if (objs.old_node != nullptr && objs.new_node != nullptr &&
        objs.old_node->status.declared_features == objs.new_node->status.declared_features) {
      return framework::QueueingHint::kQueueSkip;
    }
    return framework::QueueingHint::kQueue;
  };
  events[1].event = {framework::EventResource::kPod, framework::kUpdate, "PodUpdate"};
  // isSchedulableAfterTargetPodUpdate: only the pod itself, only when its requirements
  // changed.
  events[1].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.old_pod == nullptr || objs.new_pod == nullptr ||
        objs.new_pod->metadata.uid != pod.metadata.uid) {
      return framework::QueueingHint::kQueueSkip;
    }
    return objs.old_pod->spec.required_node_features == objs.new_pod->spec.required_node_features
               ? framework::QueueingHint::kQueueSkip
               : framework::QueueingHint::kQueue;
  };
  return events;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> NodeDeclaredFeatures::New(
    framework::PluginArgs /*args*/, framework::Handle& /*h*/) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<NodeDeclaredFeatures>());
}

}  // namespace phalanx::plugins::nodedeclaredfeatures
