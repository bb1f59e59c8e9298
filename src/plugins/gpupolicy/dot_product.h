// DotProductScore: Tetris-style alignment of the pod's demand with the node's free
// resources (upstream hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/
// dot_product_score.go with the paper's settings dimExtMethod=merge, normMethod=max):
//   node = [cpu left, total GPU milli left] / [MaxSpecCpu, MaxSpecGpu]
//   pod  = [cpu request, total GPU milli]    / [MaxSpecCpu, MaxSpecGpu]
//   score = (1 - node . pod / 2) * 100, truncated; 0 if the node lacks the CPU.
// A larger dot product (the node has more of what the pod needs) scores lower, so pods
// go where their demand fills the node. The paper runs it with best-fit device choice
// (GpuShare's default).
#pragma once

#include <memory>
#include <string_view>

#include "plugins/gpupolicy/common.h"

namespace phalanx::plugins::gpupolicy {

int64_t DotProductScoreOf(const gpu::NodeShape& node, const gpu::PodShape& pod);

class DotProductScore final : public PolicyScorePlugin {
 public:
  static constexpr std::string_view kName = "DotProductScore";
  static constexpr std::string_view kStateKey = "PreScoreDotProductScore";
  DotProductScore(PolicyArgs args, framework::Handle& h) : PolicyScorePlugin(args, h) {}
  std::string_view Name() const override { return kName; }
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::gpupolicy
