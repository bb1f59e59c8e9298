// NodeResourcesBalancedAllocation: favors nodes whose resource utilization fractions
// (including the pod) are close to each other
// (upstream pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "plugins/noderesources/resource_allocation.h"

namespace phalanx::plugins::noderesources {

// NodeResourcesBalancedAllocationArgs after defaulting: resources default to
// {cpu: 1, memory: 1}; every weight must be 1 and names unique.
struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
};

// Decodes, defaults and validates; errors like
// "NodeResourcesBalancedAllocationArgs: resources[1].name: Duplicate value: \"cpu\"".
framework::StatusOr<NodeResourcesBalancedAllocationArgs> ParseNodeResourcesBalancedAllocationArgs(
    framework::PluginArgs args);

class BalancedAllocation final : public framework::PreScorePlugin,
                                 public framework::RangeScorePlugin,
                                 public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesBalancedAllocation";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesBalancedAllocation";

  explicit BalancedAllocation(NodeResourcesBalancedAllocationArgs args);

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same its requests.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  // Skip for best-effort pods (no request on any configured resource); otherwise stores
  // the pod's requests (PodInfo::requests) per resource.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;

  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  // (1 - std) * 100 over the fractions (node requested + pod) / allocatable, each capped
  // at 1, of the resources the node has. 0 for best-effort pods when PreScore did not run.
  // (Score and ScoreNodes, RangeScorePlugin.) The pod's requests are read once per range.
  framework::Status ScoreRange(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo* const* nodes, size_t count,
                               int64_t* scores) override;
  NodeResourcesBalancedAllocationArgs args_;
  ResourceAllocation allocation_;
};

}  // namespace phalanx::plugins::noderesources
