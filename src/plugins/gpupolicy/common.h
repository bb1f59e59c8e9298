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
#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "gpu/device.h"
#include "plugins/gpushare/context.h"

namespace phalanx::plugins::gpupolicy {

using gpu::GpuAsk;
using gpu::PodShape;
using gpushare::GpuContext;
using gpushare::NodeGpuState;

inline constexpr int64_t kMaxSpecCpu = 128000;  // milli CPU (MaxSpecCpu)
inline constexpr int64_t kMaxSpecGpu = 8000;    // milli GPU (MaxSpecGpu)

// The pod's GPU ask, parsed in PreScore.
struct AskState final : framework::StateData {
  gpu::GpuAsk ask;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<AskState>(*this);
  }
};

// The ask stored under `key` by PreScore, else parsed into *scratch.
inline const gpu::GpuAsk& AskOf(const framework::CycleState& state, std::string_view key,
                                const framework::PodInfo& pod, gpu::GpuAsk* scratch) {
  if (const auto* s = state.ReadAs<AskState>(key)) return s->ask;
  *scratch = gpu::ParseGpuAsk(pod.Pod());
  return *scratch;
}

inline void WriteAsk(framework::CycleState& state, std::string_view key,
                     const framework::PodInfo& pod) {
  auto s = std::make_unique<AskState>();
  s->ask = gpu::ParseGpuAsk(pod.Pod());
  state.Write(key, std::move(s));
}

// True for a pod that requests nothing (FGD scores it 100 everywhere, as the artifact).
inline bool NoRequests(const framework::PodInfo& pod, const gpu::GpuAsk& ask) {
  const auto& r = pod.requests;
  return !ask.has_gpu() && r.milli_cpu == 0 && r.memory == 0 && r.ephemeral_storage == 0 &&
         r.scalar.empty();
}

inline int64_t ClampScore(int64_t s) {
  return std::clamp<int64_t>(s, framework::kMinNodeScore, framework::kMaxNodeScore);
}

// How a policy's equal best scores are resolved.
//   Random (default): left to the scheduler (uniformly at random, seeded).
//   NodeOrder: the first node in a seed-dependent order wins — the FGD artifact's
//     methodology (its vendored selectHost takes the lexicographically smallest name among
//     the best, and node names carry a seed-permuted prefix). A random tie-break spreads
//     pods among equally scored nodes; this one keeps filling the same nodes, which
//     changes FGD's results markedly. Applied in NormalizeScore: the winner ends strictly
//     above the others; meant for profiles where the policy is the only scorer.
enum class TieBreak : uint8_t { kRandom, kNodeOrder };

struct PolicyArgs {
  TieBreak tie_break = TieBreak::kRandom;
};

// Decodes a policy's args of kind `kind` ("<Plugin>Args"): tieBreak (Random | NodeOrder);
// FGD's targetWorkload key is accepted (and left to FGD) when `with_target_workload`.
// Errors: "<kind>: tieBreak: Unsupported value: ...", unknown keys.
framework::StatusOr<PolicyArgs> ParsePolicyArgs(framework::PluginArgs args, std::string_view kind,
                                                bool with_target_workload = false);

// A node's place in the seed-dependent node order: splitmix64(salt ^ FNV-1a(name)); the
// smaller key comes first.
uint64_t NodeOrderKey(uint64_t salt, std::string_view node_name);

// NodeOrder tie-breaking state of one plugin: a salt drawn once from the scheduler's
// seeded RNG orders the nodes by hash(salt, name).
class NodeOrderTieBreak {
 public:
  // Among the nodes with the highest score, the first in the salted order gets max + 1
  // (or, at 100, every other best node drops to 99).
  void Apply(framework::Handle& h, const std::vector<const framework::NodeInfo*>& nodes,
             std::vector<int64_t>& scores);

 private:
  bool have_salt_ = false;
  uint64_t salt_ = 0;
};

// What every GPU placement policy (BestFit, DotProduct, GpuPacking, GpuClustering, FGD)
// shares: PreScore + Score + the NodeOrder tie-break as NormalizeScore (only when the
// args ask for it), the handle, the args and the per-profile GPU context.
class PolicyScorePlugin : public framework::PreScorePlugin,
                          public framework::ScorePlugin,
                          public framework::ScoreExtensions {
 public:
  PolicyScorePlugin(PolicyArgs args, framework::Handle& h)
      : handle_(h), args_(args), ctx_(GpuContext::For(h)) {}
  framework::ScoreExtensions* GetScoreExtensions() override {
    return args_.tie_break == TieBreak::kNodeOrder ? this : nullptr;
  }
  // NodeOrder tie-break (see NodeOrderTieBreak).
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   const std::vector<const framework::NodeInfo*>& nodes,
                                   std::vector<int64_t>& scores) override {
    tie_.Apply(handle_, nodes, scores);
    return framework::Status();
  }

 protected:
  framework::Handle& handle_;
  PolicyArgs args_;
  NodeOrderTieBreak tie_;
  std::shared_ptr<GpuContext> ctx_;
};

}  // namespace phalanx::plugins::gpupolicy
