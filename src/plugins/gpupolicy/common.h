// Shared pieces of the GPU placement policies (score plugins): the pod's GPU ask parsed
// once per cycle, and the constants of the FGD paper artifact
// (hkust-adsl/kubernetes-scheduler-simulator pkg/type/open-gpu-share/utils/const.go).
//
// Policies, one small class each (FGDScore, BestFitScore, DotProductScore,
// GpuPackingScore, GpuClusteringScore, RandomScore), read the device state of a node from
// the profile's GpuContext (plugins/gpushare/context.h), so they must run in a profile that
// also enables GpuShare. Select one with the profile's score plugin list; disable the
// default scorers to reproduce the paper (examples/gpu-sharing/).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>

#include "framework/cycle_state.h"
#include "framework/interface.h"
#include "plugins/gpushare/context.h"
#include "plugins/gpushare/device.h"

namespace phalanx::plugins::gpupolicy {

using gpushare::GpuAsk;
using gpushare::GpuContext;
using gpushare::NodeGpuState;
using gpushare::PodShape;

inline constexpr int64_t kMaxSpecCpu = 128000;  // milli CPU (MaxSpecCpu)
inline constexpr int64_t kMaxSpecGpu = 8000;    // milli GPU (MaxSpecGpu)

// The pod's GPU ask, parsed in PreScore.
struct AskState final : framework::StateData {
  GpuAsk ask;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<AskState>(*this);
  }
};

// The ask stored under `key` by PreScore, else parsed into *scratch.
inline const GpuAsk& AskOf(const framework::CycleState& state, std::string_view key,
                           const framework::PodInfo& pod, GpuAsk* scratch) {
  if (const auto* s = state.ReadAs<AskState>(key)) return s->ask;
  *scratch = gpushare::ParseGpuAsk(pod.Pod());
  return *scratch;
}

inline void WriteAsk(framework::CycleState& state, std::string_view key,
                     const framework::PodInfo& pod) {
  auto s = std::make_unique<AskState>();
  s->ask = gpushare::ParseGpuAsk(pod.Pod());
  state.Write(key, std::move(s));
}

inline int64_t ClampScore(int64_t s) {
  return std::clamp<int64_t>(s, framework::kMinNodeScore, framework::kMaxNodeScore);
}

}  // namespace phalanx::plugins::gpupolicy
