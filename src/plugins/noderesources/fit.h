// NodeResourcesFit: a pod's requests must fit the node's free allocatable resources;
// scores nodes with a configurable strategy (LeastAllocated, MostAllocated,
// RequestedToCapacityRatio)
// (upstream pkg/scheduler/framework/plugins/noderesources/fit.go).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "plugins/noderesources/resource_allocation.h"

namespace phalanx::dra {
class DefaultDRAManager;
}

namespace phalanx::plugins::noderesources {

enum class ScoringStrategyType { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };

// NodeResourcesFitArgs (kubescheduler.config.k8s.io/v1) after defaulting.
struct NodeResourcesFitArgs {
  // Extended resources the filter ignores, by full name / by group (the part before '/').
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  ScoringStrategyType type = ScoringStrategyType::kLeastAllocated;
  // Default {cpu: 1, memory: 1}; a weight of 0 defaults to 1; valid weights are 1..100.
  std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
  // RequestedToCapacityRatio only: utilization strictly increasing in [0, 100], score in
  // [0, 10] (scaled by 10 to node scores).
  std::vector<UtilizationShapePoint> shape;
};

// Decodes, defaults and validates (upstream SetDefaults_NodeResourcesFitArgs +
// ValidateNodeResourcesFitArgs). Errors: "NodeResourcesFitArgs: <field>: <detail>", e.g.
// `NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: "Foo": supported
// values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"`.
framework::StatusOr<NodeResourcesFitArgs> ParseNodeResourcesFitArgs(framework::PluginArgs args);

// One resource a node lacks for a pod (upstream InsufficientResource). Units as in
// api::Resource.
struct InsufficientResource {
  std::string resource_name;
  std::string reason;  // "Too many pods", "Insufficient cpu", "Insufficient <name>"
  int64_t requested = 0;
  int64_t used = 0;
  int64_t capacity = 0;
  // The request exceeds the node's whole allocatable: preemption cannot help.
  bool unresolvable = false;
  bool operator==(const InsufficientResource&) const = default;
};

// Everything `pod` lacks on `node` without ignored resources (upstream Fits), in upstream
// order: pods, cpu, memory, ephemeral-storage, then scalar resources by interned id.
std::vector<InsufficientResource> Fits(const api::Pod& pod, const framework::NodeInfo& node);

class Fit final : public framework::PreFilterPlugin,
                  public framework::FilterPlugin,
                  public framework::PreScorePlugin,
                  public framework::RangeScorePlugin,
                  public framework::EnqueueExtensions,
                  public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";
  static constexpr std::string_view kPreFilterStateKey = "PreFilterNodeResourcesFit";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesFit";

  explicit Fit(NodeResourcesFitArgs args);

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same its requests.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;

  // Stores the pod's requests (PodInfo::requests) minus ignored extended resources. Filter
  // leaves out an extended resource that a DeviceClass's extendedResourceName (or implicit
  // name) maps when the node's allocatable has none of it: DynamicResources allocates it
  // from ResourceSlices then (upstream fit.go fitsRequest, KEP-5004).
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  // All insufficiencies as reasons, upstream order and wording. Unschedulable, or
  // UnschedulableAndUnresolvable when some request exceeds the node's allocatable.
  // Error if PreFilter did not run. Thread-safe, no allocation on success.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  // Stores the pod's non-zero requests per scoring resource.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;

  // Pod/Delete|UpdatePodScaleDown (isSchedulableAfterPodEvent) and
  // Node/Add|UpdateNodeAllocatable (isSchedulableAfterNodeChange).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  const NodeResourcesFitArgs& args() const { return args_; }

  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  // Strategy score in [0, 100] (not normalized). Falls back to computing the requests
  // when PreScore did not run. No allocation for <= 16 scoring resources.
  // (Score and ScoreNodes, RangeScorePlugin.) The pod's requests are read once per range.
  framework::Status ScoreRange(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo* const* nodes, size_t count,
                               int64_t* scores) override;
  bool IgnoredScalar(const std::string& name) const;
  int64_t ScoreVectors(const int64_t* requested, const int64_t* allocatable) const;

  NodeResourcesFitArgs args_;
  // The DRA state (extended resources backed by DeviceClasses, KEP-5004); null without it.
  dra::DefaultDRAManager* dra_ = nullptr;
  std::set<std::string, std::less<>> ignored_resources_;
  std::set<std::string, std::less<>> ignored_groups_;
  ResourceAllocation allocation_;
  BrokenLinearFunction shape_fn_;
};

}  // namespace phalanx::plugins::noderesources
