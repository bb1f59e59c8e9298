#include "plugins/gpupolicy/gpu_clustering.h"

namespace phalanx::plugins::gpupolicy {

int64_t GpuClusteringScoreOf(const std::map<std::string, int32_t>& node_kinds,
                             int64_t total_free_milli, const std::string& pod_kind) {
  if (pod_kind.empty()) return framework::kMinNodeScore;
  constexpr int64_t kMax = framework::kMaxNodeScore;
  const int64_t fill = kMax / 4 * (kMaxSpecGpu - total_free_milli) / kMaxSpecGpu;
  auto it = node_kinds.find(pod_kind);
  if (it != node_kinds.end() && it->second > 0) {
    return node_kinds.size() == 1 ? fill + kMax * 3 / 4 : fill + kMax * 2 / 4;
  }
  return node_kinds.empty() ? fill + kMax / 4 : fill;
}

framework::Status GpuClusteringScore::PreScore(framework::CycleState& state,
                                               const framework::PodInfo& pod,
                                               const std::vector<const framework::NodeInfo*>&) {
  WriteAsk(state, kStateKey, pod);
  return framework::Status();
}

framework::Status GpuClusteringScore::Score(const framework::CycleState& state,
                                            const framework::PodInfo& pod,
                                            const framework::NodeInfo& node, int64_t* score) {
  gpu::GpuAsk scratch;
  const gpu::GpuAsk& ask = AskOf(state, kStateKey, pod, &scratch);
  auto st = ctx_->State(node);
  *score = ClampScore(
      GpuClusteringScoreOf(st->affinity, st->shape.total_free_milli(), gpushare::AffinityTag(ask)));
  return framework::Status();
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> GpuClusteringScore::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto a = ParsePolicyArgs(args, "GpuClusteringScoreArgs");
  if (!a.ok()) return a.status();
  return std::unique_ptr<framework::Plugin>(std::make_unique<GpuClusteringScore>(a.value(), h));
}

}  // namespace phalanx::plugins::gpupolicy
