// PodGroupPodsCount: a PlacementScore plugin (upstream 1.36
// pkg/scheduler/framework/plugins/podgrouppodscount; KEP-5732): scores a feasible
// placement by how many of the cycle's pending members it placed, so that among placements
// where the gang reaches its minimum the one that takes more of its pods wins; normalized
// to [0, 100] relative to the best (helper::DefaultNormalizeScore). Not in Phalanx's default
// profile (upstream pairs it with NodeResourcesFit's placement score at weight 1 each):
// enable it with a multiPoint entry, its weight against PlacementBinPacking's.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/handle.h"
#include "framework/podgroup.h"
#include "framework/registry.h"

namespace phalanx::plugins::podgrouppodscount {

class PodGroupPodsCount final : public framework::PlacementScorePlugin,
                                public framework::PlacementScoreExtensions {
 public:
  static constexpr std::string_view kName = "PodGroupPodsCount";
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }

  // out->score: members with a node in `assignments`.
  framework::Status ScorePlacement(framework::CycleState& state,
                                   const framework::QueuedPodGroupInfo& group,
                                   const std::vector<framework::PodInfoPtr>& pods,
                                   const framework::Placement& placement,
                                   const framework::PodGroupAssignments& assignments,
                                   framework::PlacementScore* out) override;
  framework::PlacementScoreExtensions* GetPlacementScoreExtensions() override { return this; }
  framework::Status NormalizePlacementScore(
      framework::CycleState& state, const framework::QueuedPodGroupInfo& group,
      std::vector<framework::PlacementScore>& scores) override;
};

}  // namespace phalanx::plugins::podgrouppodscount
