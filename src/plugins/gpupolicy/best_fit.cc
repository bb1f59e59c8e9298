#include "plugins/gpupolicy/best_fit.h"

#include <climits>

namespace phalanx::plugins::gpupolicy {

int64_t BestFitRaw(const gpu::NodeShape& node, const gpu::PodShape& pod) {
  const double free[2] = {static_cast<double>(node.milli_cpu_left),
                          static_cast<double>(node.total_free_milli())};
  const double req[2] = {static_cast<double>(pod.milli_cpu),
                         static_cast<double>(pod.total_milli_gpu())};
  const double spec[2] = {static_cast<double>(kMaxSpecCpu), static_cast<double>(kMaxSpecGpu)};
  double score = 0;
  for (int i = 0; i < 2; ++i) {
    if (free[i] < req[i]) return -1;
    score += (free[i] - req[i]) / spec[i] * 0.5;
  }
  return static_cast<int64_t>((1.0 - score) * static_cast<double>(framework::kMaxNodeScore));
}

void MinMaxNormalize(std::vector<int64_t>& scores) {
  if (scores.empty()) return;
  int64_t hi = LLONG_MIN, lo = LLONG_MAX;
  for (int64_t s : scores) {
    hi = std::max(hi, s);
    lo = std::min(lo, s);
  }
  const int64_t range = hi - lo;
  for (auto& s : scores) {
    s = range == 0 ? framework::kMinNodeScore
                   : (s - lo) * (framework::kMaxNodeScore - framework::kMinNodeScore) / range +
                         framework::kMinNodeScore;
  }
}

framework::Status BestFitScore::PreScore(framework::CycleState& state,
                                         const framework::PodInfo& pod,
                                         const std::vector<const framework::NodeInfo*>&) {
  WriteAsk(state, kStateKey, pod);
  return framework::Status();
}

framework::Status BestFitScore::Score(const framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const framework::NodeInfo& node, int64_t* score) {
  gpu::GpuAsk scratch;
  const gpu::GpuAsk& ask = AskOf(state, kStateKey, pod, &scratch);
  auto st = ctx_->State(node);
  const int64_t s = BestFitRaw(st->shape, gpushare::PodShapeOf(pod, ask, &st->gpus));
  // upstream: -1 (the pod does not fit) is an error; Filter has excluded such nodes.
  *score = s < 0 ? 0 : s;
  return framework::Status();
}

framework::Status BestFitScore::NormalizeScore(const framework::CycleState&,
                                               const framework::PodInfo&,
                                               const std::vector<const framework::NodeInfo*>& nodes,
                                               std::vector<int64_t>& scores) {
  MinMaxNormalize(scores);
  if (args_.tie_break == TieBreak::kNodeOrder) tie_.Apply(handle_, nodes, scores);
  return framework::Status();
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> BestFitScore::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto a = ParsePolicyArgs(args, "BestFitScoreArgs");
  if (!a.ok()) return a.status();
  return std::unique_ptr<framework::Plugin>(std::make_unique<BestFitScore>(a.value(), h));
}

}  // namespace phalanx::plugins::gpupolicy
