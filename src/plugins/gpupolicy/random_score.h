// RandomScore: one feasible node, drawn uniformly in PreScore, gets 100 and the others 0
// (upstream hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/
// random_score.go). As its device policy it also takes a random device among those that
// fit (upstream allocateGpuIdBasedOnRandomFit). Randomness is the scheduler's seeded RNG.
#pragma once

#include <memory>
#include <string_view>

#include "plugins/gpupolicy/common.h"

namespace phalanx::plugins::gpupolicy {

class RandomScore final : public framework::PreScorePlugin,
                          public framework::ScorePlugin,
                          public gpushare::DevicePolicy {
  // (One node gets 100 and the others 0: no ties to break; tieBreak is accepted and ignored.)
 public:
  static constexpr std::string_view kName = "RandomScore";
  static constexpr std::string_view kStateKey = "PreScoreRandomScore";
  RandomScore(PolicyArgs args, framework::Handle& h);
  ~RandomScore() override;
  std::string_view Name() const override { return kName; }
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  std::vector<int32_t> ChooseDevices(const NodeGpuState& node, const framework::PodInfo& pod,
                                     const gpu::GpuAsk& ask, int32_t milli) override;
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  framework::Handle& handle_;
  std::shared_ptr<GpuContext> ctx_;
};

}  // namespace phalanx::plugins::gpupolicy
