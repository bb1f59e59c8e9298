// ImageLocality: favors nodes that already hold the pod's container images, scaled by
// how widely each image is spread
// (upstream pkg/scheduler/framework/plugins/imagelocality/image_locality.go).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::imagelocality {

inline constexpr int64_t kMB = 1024 * 1024;
inline constexpr int64_t kMinThreshold = 23 * kMB;             // bytes
inline constexpr int64_t kMaxContainerThreshold = 1000 * kMB;  // bytes per container

// Appends ":latest" when the last ':' does not come after the last '/' (no tag). Digests
// ("name@sha256:...") and registry ports ("host:5000/name") are handled as upstream;
// registries are not normalized (upstream does not add "docker.io/library/").
std::string NormalizedImageName(std::string_view name);

// size * (num_nodes / total_nodes), truncated (upstream scaledImageScore). Bytes.
int64_t ScaledImageScore(int64_t size, int32_t num_nodes, size_t total_nodes);

// 100 * (clamp(sum, min, max) - min) / (max - min) with max = 1000 MiB * num_containers.
int64_t CalculatePriority(int64_t sum_scores, int64_t num_containers);

class ImageLocality final : public framework::PreScorePlugin,
                            public framework::ScorePlugin,
                            public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "ImageLocality";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreImageLocality";

  explicit ImageLocality(framework::Handle& h) : handle_(h) {}

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same its container images (a node's image
  // counts stay fixed in a cycle).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  // Precomputes the normalized image names of init and app containers (not upstream:
  // upstream normalizes per node in Score; the result is identical).
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  // Score in [0, 100] from NodeInfo::image_states() and the snapshot's node count
  // (Handle::SnapshotSharedLister().List().size()). Falls back to normalizing names
  // itself when PreScore did not run.
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;

  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  framework::Handle& handle_;
};

}  // namespace phalanx::plugins::imagelocality
