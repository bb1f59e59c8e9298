#include "plugins/podgrouppodscount/podgroup_pods_count.h"

#include <string>

#include "framework/interface.h"
#include "plugins/helper/normalize_score.h"

namespace phalanx::plugins::podgrouppodscount {

using framework::Status;

framework::StatusOr<std::unique_ptr<framework::Plugin>> PodGroupPodsCount::New(
    framework::PluginArgs /*args*/, framework::Handle& /*h*/) {
  return std::unique_ptr<framework::Plugin>(new PodGroupPodsCount());
}

Status PodGroupPodsCount::ScorePlacement(framework::CycleState&,
                                         const framework::QueuedPodGroupInfo&,
                                         const std::vector<framework::PodInfoPtr>&,
                                         const framework::Placement&,
                                         const framework::PodGroupAssignments& assignments,
                                         framework::PlacementScore* out) {
  out->score = 0;
  for (const auto& n : assignments.nodes) out->score += n.empty() ? 0 : 1;
  out->detail = std::to_string(out->score) + " pods placed";
  return Status::Success();
}

Status PodGroupPodsCount::NormalizePlacementScore(framework::CycleState&,
                                                  const framework::QueuedPodGroupInfo&,
                                                  std::vector<framework::PlacementScore>& scores) {
  std::vector<int64_t> v;
  v.reserve(scores.size());
  for (const auto& s : scores) v.push_back(s.score);
  helper::DefaultNormalizeScore(framework::kMaxNodeScore, false, v);
  for (size_t i = 0; i < scores.size(); ++i) scores[i].score = v[i];
  return Status::Success();
}

}  // namespace phalanx::plugins::podgrouppodscount
