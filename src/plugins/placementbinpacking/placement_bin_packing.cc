#include "plugins/placementbinpacking/placement_bin_packing.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "api/resource.h"

namespace phalanx::plugins::placementbinpacking {

using framework::Status;

namespace {

constexpr std::string_view kStateKey = "PlacementScorePlacementBinPacking";

const api::ResourceId kGpu = api::InternScalarResource(api::kResourceNvidiaGPU);

// What a placement leaves free, lower is tighter (compared as a tuple).
struct Measure {
  int64_t free_gpus = 0;
  int64_t free_milli_cpu = 0;
  int64_t stranded_gpus = 0;
  auto Key() const { return std::tie(free_gpus, free_milli_cpu, stranded_gpus); }
};

// The measures of one level's feasible placements, in the order they were scored.
struct Measures final : framework::StateData {
  std::vector<Measure> of;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<Measures>(*this);
  }
};

}  // namespace

framework::StatusOr<std::unique_ptr<framework::Plugin>> PlacementBinPacking::New(
    framework::PluginArgs /*args*/, framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(new PlacementBinPacking(h));
}

Status PlacementBinPacking::ScorePlacement(framework::CycleState& state,
                                           const framework::QueuedPodGroupInfo&,
                                           const std::vector<framework::PodInfoPtr>& pods,
                                           const framework::Placement& placement,
                                           const framework::PodGroupAssignments&,
                                           framework::PlacementScore* out) {
  int64_t smallest_gpu_member = 0;  // smallest whole-GPU request among members (0 = none)
  for (const auto& p : pods) {
    const int64_t g = p->requests.Scalar(kGpu);
    if (g > 0 && (smallest_gpu_member == 0 || g < smallest_gpu_member)) smallest_gpu_member = g;
  }
  Measure m;
  const framework::NodeInfoLister& snapshot = handle_.SnapshotSharedLister();
  for (const auto& name : placement.nodes) {
    const framework::NodeInfo* ni = snapshot.Get(name);
    if (!ni) continue;
    const int64_t gpus =
        std::max<int64_t>(0, ni->allocatable().Scalar(kGpu) - ni->requested().Scalar(kGpu));
    m.free_gpus += gpus;
    m.free_milli_cpu +=
        std::max<int64_t>(0, ni->allocatable().milli_cpu - ni->requested().milli_cpu);
    if (gpus > 0 && gpus < smallest_gpu_member) m.stranded_gpus += gpus;
  }
  auto* measures = state.ReadAs<Measures>(kStateKey);
  if (!measures) {
    state.Write(kStateKey, std::make_unique<Measures>());
    measures = state.ReadAs<Measures>(kStateKey);
  }
  measures->of.push_back(m);
  out->score = 0;
  out->detail = "free GPUs " + std::to_string(m.free_gpus) + ", free cpu " +
                std::to_string(m.free_milli_cpu) + "m, stranded GPUs " +
                std::to_string(m.stranded_gpus);
  return Status::Success();
}

Status PlacementBinPacking::NormalizePlacementScore(
    framework::CycleState& state, const framework::QueuedPodGroupInfo&,
    std::vector<framework::PlacementScore>& scores) {
  const auto* measures = state.ReadAs<Measures>(kStateKey);
  if (!measures || measures->of.size() != scores.size()) {
    return Status::Error("PlacementBinPacking: " + std::to_string(scores.size()) +
                         " placement scores to normalize, " +
                         std::to_string(measures ? measures->of.size() : 0) + " measured");
  }
  std::vector<Measure> distinct = measures->of;
  std::sort(distinct.begin(), distinct.end(),
            [](const Measure& a, const Measure& b) { return a.Key() < b.Key(); });
  distinct.erase(std::unique(distinct.begin(), distinct.end(),
                             [](const Measure& a, const Measure& b) { return a.Key() == b.Key(); }),
                 distinct.end());
  const int64_t n = static_cast<int64_t>(distinct.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const auto it =
        std::lower_bound(distinct.begin(), distinct.end(), measures->of[i],
                         [](const Measure& a, const Measure& b) { return a.Key() < b.Key(); });
    scores[i].score = n - 1 - static_cast<int64_t>(it - distinct.begin());
  }
  return Status::Success();
}

}  // namespace phalanx::plugins::placementbinpacking
