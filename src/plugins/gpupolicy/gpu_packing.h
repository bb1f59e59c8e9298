// GpuPackingScore: fill partly used GPUs first, then partly used nodes, then empty nodes
// (upstream hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/
// gpu_packing_score.go), from high to low:
//   1. the pod fits on GPUs already in use: 100 - (sum of their free %)/10, at least 50;
//   2. it needs fully free GPUs on a node in use: 50 - (fully free GPUs used), at least 33;
//   3. every GPU of the node is free: max(33 - free GPUs, free GPUs).
// Pods without GPU score 0 everywhere. Devices are taken least-free first, as upstream.
#pragma once

#include <memory>
#include <string_view>

#include "plugins/gpupolicy/common.h"

namespace phalanx::plugins::gpupolicy {

// Score in [0, 100]; *ok false (score 0) when the pod's devices do not fit.
int64_t GpuPackingScoreOf(const gpu::NodeShape& node, const gpu::PodShape& pod, bool* ok);

class GpuPackingScore final : public PolicyScorePlugin {
 public:
  static constexpr std::string_view kName = "GpuPackingScore";
  static constexpr std::string_view kStateKey = "PreScoreGpuPackingScore";
  GpuPackingScore(PolicyArgs args, framework::Handle& h) : PolicyScorePlugin(args, h) {}
  std::string_view Name() const override { return kName; }
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::gpupolicy
