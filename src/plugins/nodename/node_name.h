// NodeName: pods with spec.nodeName only fit that node
// (upstream pkg/scheduler/framework/plugins/nodename/node_name.go).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::nodename {

inline constexpr std::string_view kErrReason = "node(s) didn't match the requested node name";

// True when the pod names no node or names `node` (upstream Fits).
bool Fits(const api::Pod& pod, const api::Node& node);

class NodeName final : public framework::PreFilterPlugin,
                       public framework::FilterPlugin,
                       public framework::EnqueueExtensions,
                       public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "NodeName";

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same spec.nodeName.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  // With spec.nodeName set, narrows *result to that single node; otherwise Success
  // with *result untouched (all nodes).
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  // UnschedulableAndUnresolvable kErrReason when spec.nodeName is set and differs.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Node/Add; the hint queues only when the added node is the requested one.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // Takes no args.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::nodename
