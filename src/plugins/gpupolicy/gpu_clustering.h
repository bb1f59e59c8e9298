// GpuClustering: keep pods of the same GPU kind together (upstream hkust-adsl/kubernetes-
// scheduler-simulator pkg/simulator/plugin/gpu_clustering_score.go). A pod's kind is
// "share-gpu" (one device, less than all of it) or "<n>-gpu" (n whole devices). With
// fill = 25 * (8000 - free GPU milli of the node) / 8000 (integer arithmetic):
//   the node holds only pods of the pod's kind:          75 + fill
//   it holds the pod's kind and others:                  50 + fill
//   it holds no GPU pods:                                25 + fill
//   it holds only other kinds:                                fill
// Pods without GPU score 0 everywhere.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "plugins/gpupolicy/common.h"

namespace phalanx::plugins::gpupolicy {

// `node_kinds`: kind -> pods on the node; `total_free_milli` of the node's devices.
int64_t GpuClusteringScoreOf(const std::map<std::string, int32_t>& node_kinds,
                             int64_t total_free_milli, const std::string& pod_kind);

class GpuClusteringScore final : public PolicyScorePlugin {
 public:
  static constexpr std::string_view kName = "GpuClusteringScore";
  static constexpr std::string_view kStateKey = "PreScoreGpuClusteringScore";
  GpuClusteringScore(PolicyArgs args, framework::Handle& h) : PolicyScorePlugin(args, h) {}
  std::string_view Name() const override { return kName; }
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::gpupolicy
