#include "plugins/nodename/node_name.h"

namespace phalanx::plugins::nodename {

bool Fits(const api::Pod& pod, const api::Node& node) {
  return pod.spec.node_name.empty() || pod.spec.node_name == node.metadata.name;
}

framework::Status NodeName::PreFilter(framework::CycleState& /*state*/,
                                      const framework::PodInfo& pod,
                                      framework::PreFilterResult* result) {
  const std::string& name = pod.Pod().spec.node_name;
  if (!name.empty() && result != nullptr) {
    result->all_nodes = false;
    result->node_names = {name};
  }
  return framework::Status();
}

framework::Status NodeName::Filter(const framework::CycleState& /*state*/,
                                   const framework::PodInfo& pod, const framework::NodeInfo& node) {
  if (node.node() == nullptr) return framework::Status::Error("node not found");
  if (Fits(pod.Pod(), *node.node())) return framework::Status();
  return framework::Status::UnschedulableAndUnresolvable(std::string(kErrReason));
}

std::vector<framework::ClusterEventWithHint> NodeName::EventsToRegister() const {
  framework::ClusterEventWithHint e;
  e.event = {framework::EventResource::kNode, framework::kAdd, "NodeAdd"};
  // isSchedulableAfterNodeAdd.
  e.hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.new_node == nullptr) return framework::QueueingHint::kQueue;
    return Fits(pod, *objs.new_node) ? framework::QueueingHint::kQueue
                                     : framework::QueueingHint::kQueueSkip;
  };
  return {std::move(e)};
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> NodeName::New(
    framework::PluginArgs /*args*/, framework::Handle& /*h*/) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<NodeName>());
}

bool NodeName::SameSignature(const framework::PodInfo& canonical,
                             const framework::PodInfo& pod) const {
  return canonical.pod->spec.node_name == pod.pod->spec.node_name;
}

}  // namespace phalanx::plugins::nodename
