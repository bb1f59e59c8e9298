// PlacementBinPacking: the PlacementScore plugin of the PodGroup cycle's topology
// placement (KEP-5732 placement scoring; the packing of KAI's topology plugin,
// pkg/scheduler/plugins/topology/job_filtering.go sortTree: domains ordered by the job's
// share of their free resources, ties by ID). A feasible placement is measured on the
// snapshot view with the gang's trial in it, and the tightest wins, compared in this order:
//   1. free nvidia.com/gpu left in the placement's nodes (the tightest domain that fits);
//   2. free milli-CPU left there;
//   3. stranded GPUs: free GPUs on nodes of the placement where fewer are free than the
//      gang's smallest whole-GPU member asks (they cannot host such a member);
// and equal measures tie (the first placement, by domain, wins). The normalized score is
// the placement's rank among the level's distinct measures (0 for the loosest, higher is
// tighter), so that alone it selects exactly this order; weighted with other
// PlacementScore plugins (PodGroupPodsCount) it counts one point per rank.
// Upstream scores placements with NodeResourcesFit's MostAllocated ratio instead; this
// plugin keeps Phalanx's GPU-first order. In the default profile (multiPoint).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/handle.h"
#include "framework/podgroup.h"
#include "framework/registry.h"

namespace phalanx::plugins::placementbinpacking {

class PlacementBinPacking final : public framework::PlacementScorePlugin,
                                  public framework::PlacementScoreExtensions {
 public:
  static constexpr std::string_view kName = "PlacementBinPacking";
  explicit PlacementBinPacking(framework::Handle& h) : handle_(h) {}
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }

  // Measures the placement (free GPUs, free CPU, stranded GPUs) into the cycle state;
  // out->detail "free GPUs 4, free cpu 116000m, stranded GPUs 0"; out->score 0 until
  // NormalizePlacementScore ranks the measures.
  framework::Status ScorePlacement(framework::CycleState& state,
                                   const framework::QueuedPodGroupInfo& group,
                                   const std::vector<framework::PodInfoPtr>& pods,
                                   const framework::Placement& placement,
                                   const framework::PodGroupAssignments& assignments,
                                   framework::PlacementScore* out) override;
  framework::PlacementScoreExtensions* GetPlacementScoreExtensions() override { return this; }
  // scores[i] = the number of distinct measures looser than placement i's.
  framework::Status NormalizePlacementScore(
      framework::CycleState& state, const framework::QueuedPodGroupInfo& group,
      std::vector<framework::PlacementScore>& scores) override;

 private:
  framework::Handle& handle_;
};

}  // namespace phalanx::plugins::placementbinpacking
