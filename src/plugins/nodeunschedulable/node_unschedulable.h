// NodeUnschedulable: filters out nodes with spec.unschedulable unless the pod tolerates
// node.kubernetes.io/unschedulable:NoSchedule
// (upstream pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::nodeunschedulable {

inline constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";

class NodeUnschedulable final : public framework::FilterPlugin,
                                public framework::EnqueueExtensions,
                                public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same its tolerations.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  // UnschedulableAndUnresolvable kErrReasonUnschedulable for an unschedulable node the
  // pod does not tolerate. Thread-safe, no allocation on success.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Node/Add|UpdateNodeTaint (queue when a node becomes schedulable) and
  // Pod/UpdatePodTolerations (queue when the pod itself now tolerates the taint).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // Takes no args.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::nodeunschedulable
