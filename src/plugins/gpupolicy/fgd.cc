#include "plugins/gpupolicy/fgd.h"

#include <yaml-cpp/yaml.h>

#include <unordered_map>

#include "plugins/helper/args.h"
#include "plugins/helper/validation.h"

namespace phalanx::plugins::gpupolicy {

namespace {

constexpr std::string_view kArgsKind = "FGDScoreArgs";

struct FgdState final : framework::StateData {
  gpu::GpuAsk ask;
  std::unordered_map<const framework::NodeInfo*, int64_t> scores;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<FgdState>(*this);
  }
};

}  // namespace

framework::StatusOr<FGDScoreArgs> ParseFGDScoreArgs(framework::PluginArgs args) {
  FGDScoreArgs out;
  auto pa = ParsePolicyArgs(args, kArgsKind, /*with_target_workload=*/true);
  if (!pa.ok()) return pa.status();
  out.policy = pa.value();
  helper::FieldErrors errs;
  const bool has_content = args != nullptr && args->IsMap() && args->size() > 0;
  if (has_content) {
    const YAML::Node list = (*args)["targetWorkload"];
    if (!list.IsDefined() || list.IsNull()) {
      // no targetWorkload
    } else if (!list.IsSequence()) {
      errs.TypeInvalid("targetWorkload", "must be a list");
    } else {
      double sum = 0;
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string p = "targetWorkload[" + std::to_string(i) + "]";
        if (!helper::CheckMap(
                list[i], p, {"cpuMilli", "gpuMilli", "gpuCount", "gpuModel", "frequency"}, &errs)) {
          continue;
        }
        int64_t cpu = 0, milli = 0, count = 0;
        std::string model, freq_text;
        helper::ReadInt(list[i]["cpuMilli"], p + ".cpuMilli", &cpu, &errs);
        helper::ReadInt(list[i]["gpuMilli"], p + ".gpuMilli", &milli, &errs);
        helper::ReadInt(list[i]["gpuCount"], p + ".gpuCount", &count, &errs);
        helper::ReadString(list[i]["gpuModel"], p + ".gpuModel", &model, &errs);
        helper::ReadString(list[i]["frequency"], p + ".frequency", &freq_text, &errs);
        char* end = nullptr;
        const double f = std::strtod(freq_text.c_str(), &end);
        if (freq_text.empty() || end != freq_text.c_str() + freq_text.size() || !(f > 0)) {
          errs.Invalid(p + ".frequency", freq_text, "must be a positive number");
        }
        if (cpu < 0) errs.Invalid(p + ".cpuMilli", cpu, "must be >= 0");
        if (milli < 0 || milli > 1000) errs.Invalid(p + ".gpuMilli", milli, "must be in 0..1000");
        if (count < 0) errs.Invalid(p + ".gpuCount", count, "must be >= 0");
        if (milli > 0 && count == 0) count = 1;
        gpu::TargetPod t;
        t.shape.milli_cpu = cpu;
        t.shape.milli_gpu = static_cast<int32_t>(count > 0 ? milli : 0);
        t.shape.gpu_count = static_cast<int32_t>(milli > 0 ? count : 0);
        t.shape.models = model;
        t.freq = f > 0 ? f : 0;
        sum += t.freq;
        out.target_workload.push_back(std::move(t));
      }
      if (errs.empty() && sum > 0) {
        for (auto& t : out.target_workload) t.freq /= sum;
      }
    }
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  return out;
}

FGDScore::FGDScore(FGDScoreArgs args, framework::Handle& h) : PolicyScorePlugin(args.policy, h) {
  if (!args.target_workload.empty()) {
    fixed_ = std::make_shared<const gpu::TargetWorkload>(std::move(args.target_workload));
  }
  ctx_->RegisterDevicePolicy(std::string(kName), this);
}

FGDScore::~FGDScore() { ctx_->UnregisterDevicePolicy(this); }

framework::StatusOr<std::unique_ptr<framework::Plugin>> FGDScore::New(framework::PluginArgs args,
                                                                      framework::Handle& h) {
  auto a = ParseFGDScoreArgs(args);
  if (!a.ok()) return a.status();
  return std::unique_ptr<framework::Plugin>(std::make_unique<FGDScore>(std::move(a).value(), h));
}

std::shared_ptr<gpu::FragMemo> FGDScore::Memo(const gpu::PodShape* observe) {
  absl::MutexLock l(&mu_);
  std::shared_ptr<const gpu::TargetWorkload> w = fixed_;
  if (!w) w = ctx_->target_workload();
  if (!w) {
    // Learn the workload from the pods scored so far.
    if (observe) learned_.Observe(*observe);
    w = learned_.Current();
  }
  if (!memo_ || memo_->workload() != w) memo_ = std::make_shared<gpu::FragMemo>(w);
  return memo_;
}

int64_t FGDScore::ScoreNode(const NodeGpuState& st, const framework::PodInfo& pod,
                            const gpu::GpuAsk& ask, gpu::FragMemo& memo, int32_t* device) {
  *device = -1;
  if (NoRequests(pod, ask)) return framework::kMaxNodeScore;
  const gpu::PodShape shape = gpushare::PodShapeOf(pod, ask, &st.gpus);
  return ClampScore(gpu::FgdScore(
      st.shape, shape, [&](const gpu::NodeShape& n) { return memo.Get(n); }, device));
}

framework::Status FGDScore::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                     const std::vector<const framework::NodeInfo*>& nodes) {
  auto s = std::make_unique<FgdState>();
  s->ask = gpu::ParseGpuAsk(pod.Pod());
  const gpu::PodShape observed = gpushare::PodShapeOf(pod, s->ask, nullptr);
  auto memo = Memo(&observed);
  s->scores.reserve(nodes.size());
  int32_t device;
  for (const auto* ni : nodes) {
    s->scores[ni] = ScoreNode(*ctx_->State(*ni), pod, s->ask, *memo, &device);
  }
  state.Write(kStateKey, std::move(s));
  return framework::Status();
}

framework::Status FGDScore::Score(const framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::NodeInfo& node, int64_t* score) {
  if (const auto* s = state.ReadAs<FgdState>(kStateKey)) {
    auto it = s->scores.find(&node);
    if (it != s->scores.end()) {
      *score = it->second;
      return framework::Status();
    }
  }
  const gpu::GpuAsk ask = gpu::ParseGpuAsk(pod.Pod());
  int32_t device;
  *score = ScoreNode(*ctx_->State(node), pod, ask, *Memo(nullptr), &device);
  return framework::Status();
}

std::vector<int32_t> FGDScore::ChooseDevices(const NodeGpuState& node,
                                             const framework::PodInfo& pod, const gpu::GpuAsk& ask,
                                             int32_t milli) {
  if (!ask.is_share()) return {};
  auto memo = Memo(nullptr);
  gpu::PodShape shape = gpushare::PodShapeOf(pod, ask, &node.gpus);
  shape.milli_gpu = milli;
  int32_t device = -1;
  gpu::FgdScore(
      node.shape, shape, [&](const gpu::NodeShape& n) { return memo->Get(n); }, &device);
  if (device < 0) return {};
  return {device};
}

}  // namespace phalanx::plugins::gpupolicy
