// BestFitScore: prefer the node whose free CPU and GPU, after placing the pod, are
// smallest relative to the largest node spec (upstream hkust-adsl/kubernetes-scheduler-
// simulator pkg/simulator/plugin/best_fit_score.go):
//   raw = (1 - sum_i 0.5 * (free_i - request_i) / maxSpec_i) * 100, i in {cpu, gpu milli},
// truncated, then min-max normalized over the feasible nodes (upstream NormalizeScore),
// then the NodeOrder tie-break when configured (common.h).
#pragma once

#include <memory>
#include <string_view>

#include "plugins/gpupolicy/common.h"

namespace phalanx::plugins::gpupolicy {

// The raw score; -1 if the node lacks the CPU or total GPU milli (upstream returns an
// error then; Filter has excluded such nodes).
int64_t BestFitRaw(const gpu::NodeShape& node, const gpu::PodShape& pod);

// upstream plugin_utils.go NormalizeScore: (s - lowest) * 100 / (highest - lowest); all 0
// when every score is equal.
void MinMaxNormalize(std::vector<int64_t>& scores);

class BestFitScore final : public PolicyScorePlugin {
 public:
  static constexpr std::string_view kName = "BestFitScore";
  static constexpr std::string_view kStateKey = "PreScoreBestFitScore";
  BestFitScore(PolicyArgs args, framework::Handle& h) : PolicyScorePlugin(args, h) {}
  std::string_view Name() const override { return kName; }
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  // Always normalizes (min-max), then applies the NodeOrder tie-break when asked.
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   const std::vector<const framework::NodeInfo*>& nodes,
                                   std::vector<int64_t>& scores) override;
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::gpupolicy
