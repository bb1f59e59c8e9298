#include "plugins/gpupolicy/dot_product.h"

namespace phalanx::plugins::gpupolicy {

int64_t DotProductScoreOf(const gpu::NodeShape& node, const gpu::PodShape& pod) {
  if (node.milli_cpu_left < pod.milli_cpu) return framework::kMinNodeScore;
  const double cpu = static_cast<double>(kMaxSpecCpu), gpu = static_cast<double>(kMaxSpecGpu);
  const double n[2] = {static_cast<double>(node.milli_cpu_left) / cpu,
                       static_cast<double>(node.total_free_milli()) / gpu};
  const double p[2] = {static_cast<double>(pod.milli_cpu) / cpu,
                       static_cast<double>(pod.total_milli_gpu()) / gpu};
  double dot = n[0] * p[0] + n[1] * p[1];
  dot /= 2;  // normalize to [0, 1]
  return ClampScore(
      static_cast<int64_t>(static_cast<double>(framework::kMaxNodeScore) * (1 - dot)));
}

framework::Status DotProductScore::PreScore(framework::CycleState& state,
                                            const framework::PodInfo& pod,
                                            const std::vector<const framework::NodeInfo*>&) {
  WriteAsk(state, kStateKey, pod);
  return framework::Status();
}

framework::Status DotProductScore::Score(const framework::CycleState& state,
                                         const framework::PodInfo& pod,
                                         const framework::NodeInfo& node, int64_t* score) {
  gpu::GpuAsk scratch;
  const gpu::GpuAsk& ask = AskOf(state, kStateKey, pod, &scratch);
  auto st = ctx_->State(node);
  *score = DotProductScoreOf(st->shape, gpushare::PodShapeOf(pod, ask, &st->gpus));
  return framework::Status();
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> DotProductScore::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto a = ParsePolicyArgs(args, "DotProductScoreArgs");
  if (!a.ok()) return a.status();
  return std::unique_ptr<framework::Plugin>(std::make_unique<DotProductScore>(a.value(), h));
}

}  // namespace phalanx::plugins::gpupolicy
