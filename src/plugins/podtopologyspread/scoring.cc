// PodTopologySpread PreScore / Score / NormalizeScore (upstream scoring.go).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/parallelize.h"
#include "framework/pod_affinity_index.h"
#include "plugins/podtopologyspread/common.h"
#include "plugins/podtopologyspread/pod_topology_spread.h"

namespace phalanx::plugins::podtopologyspread {

namespace {

using internal::Constraint;

struct ScoreData {
  std::vector<Constraint> constraints;
  // Nodes lacking some topology key are not scored (IgnoredNodes); only with the pod's own
  // or List-defaulted constraints, so that zone-less nodes still get hostname spreading.
  bool require_all_topologies = true;
  // Per constraint: topology value of a candidate node -> index into counts[i].
  std::vector<internal::StringMap<uint32_t>> domain_index;
  std::vector<std::vector<int64_t>> counts;  // TopologyValueToPodCounts
  std::vector<double> weights;               // TopologyNormalizingWeight

  bool Ignored(const api::Node& node) const {
    return require_all_topologies && !internal::NodeHasAllKeys(node.metadata.labels, constraints);
  }
};

struct PreScoreState final : framework::StateData {
  std::shared_ptr<const ScoreData> data;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

const PreScoreState* ReadState(const framework::CycleState& state) {
  return state.ReadAs<PreScoreState>(PodTopologySpread::kPreScoreStateKey);
}

framework::Status NotFound() {
  return framework::Status::Error(
      "error reading \"PreScorePodTopologySpread\" from cycleState: not found");
}

// topologyNormalizingWeight: log(size + 2), in [1.09, 8.52] for up to 5k domains.
double TopologyNormalizingWeight(size_t size) { return std::log(static_cast<double>(size + 2)); }

// scoreForCount: maxSkew-1 waters down differences between domains.
double ScoreForCount(int64_t cnt, int32_t max_skew, double weight) {
  return static_cast<double>(cnt) * weight + static_cast<double>(max_skew - 1);
}

const std::string& LabelOrEmpty(const api::Labels& labels, const std::string& key) {
  static const std::string kEmpty;
  auto it = labels.find(key);
  return it == labels.end() ? kEmpty : it->second;
}

struct Entry {
  uint32_t constraint;
  uint32_t domain;
  int64_t count;
};

// TopologyValueToPodCounts as upstream computes it: every pod of every eligible node matched
// against each selector.
void CountByWalking(framework::Parallelizer* parallelizer,
                    const std::vector<const framework::NodeInfo*>& all_nodes, const api::Pod& pod,
                    ScoreData* data) {
  const auto& constraints = data->constraints;
  const size_t n_constraints = constraints.size();
  const size_t chunks =
      (all_nodes.size() + internal::kNodesPerChunk - 1) / internal::kNodesPerChunk;
  std::vector<std::vector<Entry>> found(chunks);
  const ScoreData& d = *data;
  framework::ParallelChunks(
      parallelizer, all_nodes.size(), internal::kNodesPerChunk,
      [&](size_t chunk, size_t b, size_t e) {
        std::vector<int64_t> counts(n_constraints);
        for (size_t n = b; n < e; ++n) {
          const framework::NodeInfo& ni = *all_nodes[n];
          const api::Node* node = ni.node();
          if (node == nullptr || d.Ignored(*node)) continue;
          internal::CountPodsMatch(ni.pods(), constraints, pod.metadata.namespace_, counts.data());
          internal::NodeInclusion inclusion(pod, *node);
          for (size_t i = 0; i < n_constraints; ++i) {
            const Constraint& c = constraints[i];
            if (!inclusion.Includes(c)) continue;
            const std::string& v = LabelOrEmpty(node->metadata.labels, c.topology_key);
            auto it = d.domain_index[i].find(std::string_view(v));
            // Topology values without candidate nodes do not matter.
            if (it == d.domain_index[i].end()) continue;
            if (counts[i] != 0)
              found[chunk].push_back({static_cast<uint32_t>(i), it->second, counts[i]});
          }
        }
      });
  for (const auto& chunk : found) {
    for (const Entry& en : chunk) data->counts[en.constraint][en.domain] += en.count;
  }
}

}  // namespace

framework::Status PodTopologySpread::PreScore(
    framework::CycleState& state, const framework::PodInfo& pod_info,
    const std::vector<const framework::NodeInfo*>& filtered_nodes) {
  const auto& all_nodes = handle_->SnapshotSharedLister().List();
  if (all_nodes.empty()) return framework::Status(framework::Code::kSkip);
  const api::Pod& pod = pod_info.Pod();

  auto data = std::make_shared<ScoreData>();
  data->require_all_topologies =
      !pod.spec.topology_spread_constraints.empty() || !system_defaulted_;
  auto cs = internal::PodConstraints(pod, default_constraints_, internal::kScheduleAnyway);
  if (!cs.ok()) {
    return framework::Status::Error("calculating preScoreState: " + cs.status().Message());
  }
  if (cs->empty()) return framework::Status(framework::Code::kSkip);
  data->constraints = std::move(cs.value());
  const auto& constraints = data->constraints;
  const size_t n_constraints = constraints.size();

  // initPreScoreState: the topology values of the candidate nodes.
  data->domain_index.resize(n_constraints);
  data->counts.resize(n_constraints);
  size_t ignored = 0;
  for (const framework::NodeInfo* ni : filtered_nodes) {
    const api::Node* node = ni->node();
    if (node == nullptr) continue;
    if (data->Ignored(*node)) {
      ++ignored;
      continue;
    }
    for (size_t i = 0; i < n_constraints; ++i) {
      const std::string& v = LabelOrEmpty(node->metadata.labels, constraints[i].topology_key);
      auto& index = data->domain_index[i];
      if (index.find(std::string_view(v)) == index.end()) {
        index.emplace(v, static_cast<uint32_t>(data->counts[i].size()));
        data->counts[i].push_back(0);
      }
    }
  }
  data->weights.resize(n_constraints);
  for (size_t i = 0; i < n_constraints; ++i) {
    size_t size = data->counts[i].size();
    if (constraints[i].topology_key == internal::kLabelHostname) {
      size = filtered_nodes.size() - ignored;
    }
    data->weights[i] = TopologyNormalizingWeight(size);
  }

  // Matching pods of every node (not only candidates) per candidate topology value: none when
  // no selector counts anything; from the index's classes when it applies (one key, every
  // node with it eligible); else by walking every node's pods as upstream does.
  const bool counts_nothing =
      std::all_of(constraints.begin(), constraints.end(),
                  [](const Constraint& c) { return c.selector.Empty() || c.selector.nothing(); });
  framework::PodAffinityIndex* index = nullptr;
  if (!counts_nothing && use_index_ && data->require_all_topologies &&
      internal::CountsFromIndexApply(pod, constraints)) {
    index = handle_->SnapshotSharedLister().AffinityIndex();
  }
  if (index != nullptr) {
    const size_t slot = index->Track(constraints[0].topology_key, all_nodes);
    for (size_t i = 0; i < n_constraints; ++i) {
      const auto& domains = data->domain_index[i];
      auto& counts = data->counts[i];
      internal::AddClassCounts(*index, slot, pod, constraints[i].selector,
                               [&](const std::string& value, int64_t n) {
                                 auto it = domains.find(std::string_view(value));
                                 if (it != domains.end()) counts[it->second] += n;
                               });
    }
  } else if (!counts_nothing) {
    CountByWalking(handle_->GetParallelizer(), all_nodes, pod, data.get());
  }

  auto s = std::make_unique<PreScoreState>();
  s->data = std::move(data);
  state.Write(kPreScoreStateKey, std::move(s));
  return framework::Status();
}

framework::Status PodTopologySpread::Score(const framework::CycleState& state,
                                           const framework::PodInfo& /*pod*/,
                                           const framework::NodeInfo& node_info, int64_t* score) {
  const PreScoreState* s = ReadState(state);
  if (s == nullptr) return NotFound();
  const api::Node* node = node_info.node();
  if (node == nullptr) return framework::Status::Error("node not found");
  const ScoreData& d = *s->data;
  if (d.Ignored(*node)) {
    *score = 0;
    return framework::Status();
  }
  // Each present pair credits the node with its matching pods, weighted.
  double sum = 0;
  const api::Labels& labels = node->metadata.labels;
  for (size_t i = 0; i < d.constraints.size(); ++i) {
    const Constraint& c = d.constraints[i];
    auto tp = labels.find(c.topology_key);
    if (tp == labels.end()) continue;
    auto it = d.domain_index[i].find(std::string_view(tp->second));
    const int64_t cnt = it == d.domain_index[i].end() ? 0 : d.counts[i][it->second];
    sum += ScoreForCount(cnt, c.max_skew, d.weights[i]);
  }
  *score = static_cast<int64_t>(std::llround(sum));
  return framework::Status();
}

framework::Status PodTopologySpread::NormalizeScore(
    const framework::CycleState& state, const framework::PodInfo& /*pod*/,
    const std::vector<const framework::NodeInfo*>& nodes, std::vector<int64_t>& scores) {
  const PreScoreState* s = ReadState(state);
  if (s == nullptr) return NotFound();
  const ScoreData& d = *s->data;
  auto ignored = [&](size_t i) {
    return i < nodes.size() && nodes[i]->node() != nullptr && d.Ignored(*nodes[i]->node());
  };
  int64_t min_score = std::numeric_limits<int64_t>::max();
  int64_t max_score = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (ignored(i)) continue;
    min_score = std::min(min_score, scores[i]);
    max_score = std::max(max_score, scores[i]);
  }
  for (size_t i = 0; i < scores.size(); ++i) {
    if (ignored(i)) {
      scores[i] = 0;
    } else if (max_score == 0) {
      scores[i] = framework::kMaxNodeScore;
    } else {
      scores[i] = framework::kMaxNodeScore * (max_score + min_score - scores[i]) / max_score;
    }
  }
  return framework::Status();
}

std::optional<PreScoreStateView> GetPreScoreState(const framework::CycleState& state) {
  const PreScoreState* s = ReadState(state);
  if (s == nullptr) return std::nullopt;
  const ScoreData& d = *s->data;
  PreScoreStateView v;
  v.require_all_topologies = d.require_all_topologies;
  v.topology_normalizing_weight = d.weights;
  for (size_t i = 0; i < d.constraints.size(); ++i) {
    std::map<std::string, int64_t> m;
    for (const auto& [value, idx] : d.domain_index[i]) m[value] = d.counts[i][idx];
    v.topology_value_to_pod_counts.push_back(std::move(m));
  }
  return v;
}

}  // namespace phalanx::plugins::podtopologyspread
