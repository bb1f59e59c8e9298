// NodeDeclaredFeatures (KEP-5328, GA in 1.37): a pod that needs node features (inferred from
// its spec on decode, api::InferNodeFeatures) fits only nodes whose status.declaredFeatures
// hold them all (upstream pkg/scheduler/framework/plugins/nodedeclaredfeatures/
// nodedeclaredfeatures.go).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::nodedeclaredfeatures {

inline constexpr std::string_view kErrReasonUnsatisfiedRequirements =
    "node(s) didn't match Pod's required features";

class NodeDeclaredFeatures final : public framework::PreFilterPlugin,
                                   public framework::FilterPlugin,
                                   public framework::EnqueueExtensions,
                                   public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "NodeDeclaredFeatures";
  std::string_view Name() const override { return kName; }

  // Skip for a pod that needs no feature (upstream: reqs.IsEmpty()).
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  // UnschedulableAndUnresolvable kErrReasonUnsatisfiedRequirements unless every required
  // feature is among the node's declared features. Thread-safe, no allocation on success.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // KEP-5598 signature (upstream SignPod: the feature set).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  // Node/Add|UpdateNodeDeclaredFeature (queue unless the declared features are unchanged)
  // and Pod/Update of the pod itself (queue when its required features changed).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // Takes no args.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::nodedeclaredfeatures
