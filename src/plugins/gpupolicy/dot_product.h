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

int64_t DotProductScoreOf(const gpushare::NodeShape& node, const PodShape& pod);

class DotProductScore final : public framework::PreScorePlugin,
                              public framework::ScorePlugin,
                              public framework::ScoreExtensions {
 public:
  static constexpr std::string_view kName = "DotProductScore";
  static constexpr std::string_view kStateKey = "PreScoreDotProductScore";
  DotProductScore(PolicyArgs args, framework::Handle& h)
      : handle_(h), args_(args), ctx_(GpuContext::For(h)) {}
  std::string_view Name() const override { return kName; }
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  framework::ScoreExtensions* GetScoreExtensions() override {
    return args_.tie_break == TieBreak::kNodeOrder ? this : nullptr;
  }
  // NodeOrder tie-break (see common.h).
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   const std::vector<const framework::NodeInfo*>& nodes,
                                   std::vector<int64_t>& scores) override;
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  framework::Handle& handle_;
  PolicyArgs args_;
  NodeOrderTieBreak tie_;
  std::shared_ptr<GpuContext> ctx_;
};

}  // namespace phalanx::plugins::gpupolicy
