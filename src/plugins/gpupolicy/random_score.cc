#include "plugins/gpupolicy/random_score.h"

namespace phalanx::plugins::gpupolicy {

namespace {
struct Chosen final : framework::StateData {
  const framework::NodeInfo* node = nullptr;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<Chosen>(*this);
  }
};
}  // namespace

RandomScore::RandomScore(PolicyArgs, framework::Handle& h) : handle_(h), ctx_(GpuContext::For(h)) {
  ctx_->RegisterDevicePolicy(std::string(kName), this);
}

RandomScore::~RandomScore() { ctx_->UnregisterDevicePolicy(this); }

framework::Status RandomScore::PreScore(framework::CycleState& state, const framework::PodInfo&,
                                        const std::vector<const framework::NodeInfo*>& nodes) {
  auto c = std::make_unique<Chosen>();
  if (!nodes.empty()) c->node = nodes[handle_.Random(nodes.size())];
  state.Write(kStateKey, std::move(c));
  return framework::Status();
}

framework::Status RandomScore::Score(const framework::CycleState& state, const framework::PodInfo&,
                                     const framework::NodeInfo& node, int64_t* score) {
  const auto* c = state.ReadAs<Chosen>(kStateKey);
  if (c == nullptr) {
    return framework::Status::Error(
        "error reading \"PreScoreRandomScore\" from cycleState: not found");
  }
  *score = c->node == &node ? framework::kMaxNodeScore : framework::kMinNodeScore;
  return framework::Status();
}

std::vector<int32_t> RandomScore::ChooseDevices(const NodeGpuState& node, const framework::PodInfo&,
                                                const gpu::GpuAsk& ask, int32_t milli) {
  if (!ask.is_share()) return {};  // whole devices: lowest free ones (GpuShare default)
  int32_t chosen = -1, seen = 0;
  const auto& free = node.shape.free_milli;
  for (int32_t i = 0; i < static_cast<int32_t>(free.size()); ++i) {
    if (free[i] < milli) continue;
    ++seen;
    if (handle_.Random(static_cast<uint64_t>(seen)) == 0) chosen = i;
  }
  if (chosen < 0) return {};
  return {chosen};
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> RandomScore::New(framework::PluginArgs args,
                                                                         framework::Handle& h) {
  auto a = ParsePolicyArgs(args, "RandomScoreArgs");
  if (!a.ok()) return a.status();
  return std::unique_ptr<framework::Plugin>(std::make_unique<RandomScore>(a.value(), h));
}

}  // namespace phalanx::plugins::gpupolicy
