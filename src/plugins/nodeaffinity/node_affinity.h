// NodeAffinity: spec.nodeSelector + required node affinity as a filter, preferred node
// affinity as a score, plus the scheduler-enforced NodeAffinityArgs.addedAffinity
// (upstream pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go).
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::nodeaffinity {

inline constexpr std::string_view kErrReasonPod =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kErrReasonEnforced =
    "node(s) didn't match scheduler-enforced node affinity";
inline constexpr std::string_view kErrReasonConflict = "pod affinity terms conflict";

// NodeAffinityArgs (kubescheduler.config.k8s.io/v1): addedAffinity is ANDed with every
// pod's required affinity and its preferred terms are added to every pod's.
struct NodeAffinityArgs {
  std::optional<api::NodeSelector> added_required;
  std::vector<api::PreferredSchedulingTerm> added_preferred;
};

// Decodes and validates args (nullptr = defaults). Errors name the field, e.g.
// "NodeAffinityArgs: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.
// nodeSelectorTerms[0].matchExpressions[0].operator: ...".
framework::StatusOr<NodeAffinityArgs> ParseNodeAffinityArgs(framework::PluginArgs args);

// True when `node` satisfies the pod's spec.nodeSelector and required node affinity
// (upstream nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)).
bool MatchesRequiredNodeAffinity(const api::Pod& pod, const api::Node& node);

class NodeAffinity final : public framework::PreFilterPlugin,
                           public framework::FilterPlugin,
                           public framework::PreScorePlugin,
                           public framework::ScorePlugin,
                           public framework::ScoreExtensions,
                           public framework::EnqueueExtensions,
                           public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "NodeAffinity";

  explicit NodeAffinity(NodeAffinityArgs args) : args_(std::move(args)) {}

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same nodeSelector and node affinity (the args'
  // addedAffinity is the profile's).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;

  // Skip when the pod has neither nodeSelector nor required affinity and no
  // addedAffinity.required is configured. Narrows *result to the union over terms of the
  // intersection of their `metadata.name In` matchFields (when every term has one);
  // UnschedulableAndUnresolvable kErrReasonConflict when that union is empty.
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  // UnschedulableAndUnresolvable kErrReasonEnforced / kErrReasonPod. Thread-safe, no
  // allocation.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  // Skip when there are no preferred terms (pod's nor added); Error when a pod preferred
  // term is invalid.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  // Raw score: sum of the weights of matching preferred terms (added + pod's).
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  // Default normalization to 0..100.
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   const std::vector<const framework::NodeInfo*>& nodes,
                                   std::vector<int64_t>& scores) override;

  // Node/Add|UpdateNodeLabel; the hint queues when the node newly matches.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  bool MatchesAdded(const api::Node& node) const;
  NodeAffinityArgs args_;
};

}  // namespace phalanx::plugins::nodeaffinity
