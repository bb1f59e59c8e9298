#include "plugins/imagelocality/image_locality.h"

namespace phalanx::plugins::imagelocality {

namespace {

struct PreScoreState final : framework::StateData {
  std::vector<std::string> images;  // normalized, init containers first
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

std::vector<std::string> NormalizedImages(const api::Pod& pod) {
  std::vector<std::string> out;
  out.reserve(pod.spec.init_containers.size() + pod.spec.containers.size());
  for (const auto& c : pod.spec.init_containers) out.push_back(NormalizedImageName(c.image));
  for (const auto& c : pod.spec.containers) out.push_back(NormalizedImageName(c.image));
  return out;
}

}  // namespace

std::string NormalizedImageName(std::string_view name) {
  const size_t colon = name.rfind(':');
  const size_t slash = name.rfind('/');
  // Go: strings.LastIndex(name, ":") <= strings.LastIndex(name, "/"), with -1 for absent.
  const long long c = colon == std::string_view::npos ? -1 : static_cast<long long>(colon);
  const long long s = slash == std::string_view::npos ? -1 : static_cast<long long>(slash);
  std::string out(name);
  if (c <= s) out += ":latest";
  return out;
}

int64_t ScaledImageScore(int64_t size, int32_t num_nodes, size_t total_nodes) {
  if (total_nodes == 0) return 0;
  const double spread = static_cast<double>(num_nodes) / static_cast<double>(total_nodes);
  return static_cast<int64_t>(static_cast<double>(size) * spread);
}

int64_t CalculatePriority(int64_t sum_scores, int64_t num_containers) {
  const int64_t max_threshold = kMaxContainerThreshold * num_containers;
  if (sum_scores < kMinThreshold) {
    sum_scores = kMinThreshold;
  } else if (sum_scores > max_threshold) {
    sum_scores = max_threshold;
  }
  return framework::kMaxNodeScore * (sum_scores - kMinThreshold) / (max_threshold - kMinThreshold);
}

framework::Status ImageLocality::PreScore(framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const std::vector<const framework::NodeInfo*>&) {
  auto s = std::make_unique<PreScoreState>();
  s->images = NormalizedImages(pod.Pod());
  // No node has any of the pod's images: every node would score the minimum, 0 (and so
  // would a pod without containers), so Score is skipped; the totals are the same.
  const auto& lister = handle_.SnapshotSharedLister();
  bool present = false;
  for (const auto& image : s->images) {
    if (lister.NumNodesWithImage(image) != 0) {
      present = true;
      break;
    }
  }
  if (!present) return framework::Status(framework::Code::kSkip);
  state.Write(kPreScoreStateKey, std::move(s));
  return framework::Status();
}

framework::Status ImageLocality::Score(const framework::CycleState& state,
                                       const framework::PodInfo& pod,
                                       const framework::NodeInfo& node, int64_t* score) {
  const size_t total_nodes = handle_.SnapshotSharedLister().List().size();
  const auto* s = state.ReadAs<PreScoreState>(kPreScoreStateKey);
  std::vector<std::string> fallback;
  if (s == nullptr) fallback = NormalizedImages(pod.Pod());
  const std::vector<std::string>& images = s ? s->images : fallback;
  const auto& states = node.image_states();
  int64_t sum = 0;
  // A node without images scores the minimum; no lookups (most nodes in a fresh cluster).
  if (!states.empty()) {
    for (const auto& image : images) {
      auto it = states.find(image);
      if (it != states.end())
        sum += ScaledImageScore(it->second.size, it->second.num_nodes, total_nodes);
    }
  }
  *score = CalculatePriority(sum, static_cast<int64_t>(images.size()));
  return framework::Status();
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> ImageLocality::New(
    framework::PluginArgs /*args*/, framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<ImageLocality>(h));
}

bool ImageLocality::SameSignature(const framework::PodInfo& canonical,
                                  const framework::PodInfo& pod) const {
  const auto& a = canonical.pod->spec;
  const auto& b = pod.pod->spec;
  auto same = [](const std::vector<api::Container>& x, const std::vector<api::Container>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].image != y[i].image) return false;
    }
    return true;
  };
  return same(a.init_containers, b.init_containers) && same(a.containers, b.containers);
}

}  // namespace phalanx::plugins::imagelocality
