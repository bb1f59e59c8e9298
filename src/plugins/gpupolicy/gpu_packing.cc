#include "plugins/gpupolicy/gpu_packing.h"

#include <numeric>

namespace phalanx::plugins::gpupolicy {

int64_t GpuPackingScoreOf(const gpu::NodeShape& node, const gpu::PodShape& pod, bool* ok) {
  *ok = true;
  constexpr int64_t kMax = framework::kMaxNodeScore;
  const int64_t fully_free = node.fully_free_devices();
  const auto count = static_cast<int64_t>(node.free_milli.size());
  if (fully_free == count) {  // case 3: an idle node
    return std::max(kMax / 3 - fully_free, fully_free);
  }
  std::vector<size_t> idx(node.free_milli.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return node.free_milli[a] < node.free_milli[b]; });
  int32_t need = pod.gpu_count;
  int64_t fully_free_used = 0;
  std::vector<size_t> use;
  for (size_t i : idx) {
    if (need == 0) break;
    if (pod.milli_gpu <= node.free_milli[i]) {
      --need;
      use.push_back(i);
      if (node.free_milli[i] == 1000) ++fully_free_used;
    }
  }
  if (need != 0) {
    *ok = false;
    return framework::kMinNodeScore;
  }
  if (fully_free_used > 0) return std::max(kMax / 2 - fully_free_used, kMax / 3);  // case 2
  int64_t free_pct = 0;                                                            // case 1
  for (size_t i : use) free_pct += static_cast<int64_t>(node.free_milli[i]) * 100 / 1000;
  return std::max(kMax - free_pct / 10, kMax / 2);
}

framework::Status GpuPackingScore::PreScore(framework::CycleState& state,
                                            const framework::PodInfo& pod,
                                            const std::vector<const framework::NodeInfo*>&) {
  WriteAsk(state, kStateKey, pod);
  return framework::Status();
}

framework::Status GpuPackingScore::Score(const framework::CycleState& state,
                                         const framework::PodInfo& pod,
                                         const framework::NodeInfo& node, int64_t* score) {
  gpu::GpuAsk scratch;
  const gpu::GpuAsk& ask = AskOf(state, kStateKey, pod, &scratch);
  if (!ask.has_gpu()) {
    *score = framework::kMinNodeScore;
    return framework::Status();
  }
  auto st = ctx_->State(node);
  bool ok = true;
  *score = ClampScore(GpuPackingScoreOf(st->shape, gpushare::PodShapeOf(pod, ask, &st->gpus), &ok));
  return framework::Status();
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> GpuPackingScore::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto a = ParsePolicyArgs(args, "GpuPackingScoreArgs");
  if (!a.ok()) return a.status();
  return std::unique_ptr<framework::Plugin>(std::make_unique<GpuPackingScore>(a.value(), h));
}

}  // namespace phalanx::plugins::gpupolicy
