// TopologyPlacement: the PlacementGenerate plugin of the PodGroup cycle (upstream 1.36
// pkg/scheduler/framework/plugins/topologyplacement; KEP-5732 topology-aware workload
// scheduling). It offers one placement per domain of a pod group's topology level: the
// nodes sharing one value of the level's node label (upstream: the distinct values of the
// PodGroup's schedulingConstraints.topology[].key; KAI Topology levels, src/gang/topology.h),
// or, for a Volcano networkTopology, the leaf nodes of each HyperNode of the tier
// (PodGroupInfo::topology_domains, src/gang/topology_hypernode.h). A subgroup scope's level
// (KAI subGroups[].topologyConstraint) gets the label's domains inside its parent's domain.
// The PodGroup algorithm (src/scheduler/podgroup_algorithm.h) tries the gang inside each
// placement, scores the feasible ones (PlacementScorePlugin) and keeps the best, level by
// level, narrowest first.
//
// In the default profile (multiPoint, after GangScheduling; upstream enables it with the
// TopologyAwareWorkloadScheduling feature gate). A gang with a topology constraint in a
// profile without any PlacementGenerate plugin fails with a reason naming it (not silently
// placed anywhere).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/handle.h"
#include "framework/podgroup.h"
#include "framework/registry.h"

namespace phalanx::plugins::topologyplacement {

class TopologyPlacement final : public framework::PlacementGeneratePlugin {
 public:
  static constexpr std::string_view kName = "TopologyPlacement";
  explicit TopologyPlacement(framework::Handle& h) : handle_(h) {}
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }

  // The domains of `level` by value (std::map order), each a placement with its nodes;
  // Unschedulable "no node has the label <key>" (inside a parent: "no node of the parent
  // domain has the label <key>"), or for HyperNode tiers "no HyperNode of <tier> has a
  // node", when there is none.
  framework::Status GeneratePlacements(framework::CycleState& state,
                                       const framework::QueuedPodGroupInfo& group,
                                       const framework::PlacementLevel& level,
                                       std::vector<framework::Placement>* out) override;

 private:
  framework::Handle& handle_;
};

}  // namespace phalanx::plugins::topologyplacement
