// TaintToleration: filters nodes with untolerated NoSchedule/NoExecute taints and prefers
// nodes with fewer untolerated PreferNoSchedule taints
// (upstream pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::tainttoleration {

class TaintToleration final : public framework::FilterPlugin,
                              public framework::PreScorePlugin,
                              public framework::RangeScorePlugin,
                              public framework::ScoreExtensions,
                              public framework::EnqueueExtensions,
                              public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "TaintToleration";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreTaintToleration";

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same its tolerations.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;

  // UnschedulableAndUnresolvable "node(s) had untolerated taint {<key>: <value>}" for the
  // first NoSchedule/NoExecute taint no toleration matches. Thread-safe, no allocation on
  // success.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  // Stores the pod's tolerations with effect PreferNoSchedule or empty.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  // Reversed default normalization: fewer untolerated taints -> higher score (0..100).
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   const std::vector<const framework::NodeInfo*>& nodes,
                                   std::vector<int64_t>& scores) override;

  // Node/Add|UpdateNodeTaint (queue when the node goes from untolerated to tolerated) and
  // Pod/UpdatePodTolerations (queue on the pod's own update).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // Takes no args.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  // Raw score: number of PreferNoSchedule taints on the node the pod does not tolerate.
  // Error if PreScore did not run.
  // (Score and ScoreNodes, RangeScorePlugin.) The CycleState is read once per range.
  framework::Status ScoreRange(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo* const* nodes, size_t count,
                               int64_t* scores) override;
};

}  // namespace phalanx::plugins::tainttoleration
