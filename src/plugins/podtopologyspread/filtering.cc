// PodTopologySpread PreFilter / PreFilterExtensions / Filter (upstream filtering.go).
#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framework/parallelize.h"
#include "framework/pod_affinity_index.h"
#include "plugins/podtopologyspread/common.h"
#include "plugins/podtopologyspread/pod_topology_spread.h"

namespace phalanx::plugins::podtopologyspread {

namespace {

using internal::Constraint;

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

// Immutable per-cycle data shared by clones.
struct Shared {
  std::vector<Constraint> constraints;
  std::vector<uint8_t> self_match;  // the incoming pod matches constraint i's selector
};

struct CriticalPath {
  std::string value;
  int64_t num = kMaxInt32;
};
// Two critical paths per constraint: [0] always holds the minimum match number, [1] is >=
// [0] but not necessarily the second minimum (enough, as preemption evaluates one node at a
// time on its own copy of the state).
using CriticalPaths = std::array<CriticalPath, 2>;

// criticalPaths.update.
void UpdatePaths(CriticalPaths& p, std::string_view value, int64_t num) {
  int i = -1;
  if (value == p[0].value) {
    i = 0;
  } else if (value == p[1].value) {
    i = 1;
  }
  if (i >= 0) {
    p[i].num = num;
    if (p[0].num > p[1].num) std::swap(p[0], p[1]);
    return;
  }
  if (num < p[0].num) {
    p[1] = p[0];
    p[0].value = std::string(value);
    p[0].num = num;
  } else if (num < p[1].num) {
    p[1].value = std::string(value);
    p[1].num = num;
  }
}

struct PreFilterState final : framework::StateData {
  std::shared_ptr<const Shared> shared;
  // TpValueToMatchNum: per constraint, topology value -> matching pods.
  std::vector<internal::StringMap<int64_t>> match_num;
  std::vector<CriticalPaths> paths;

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }

  // minMatchNum: the global minimum, 0 while fewer than minDomains domains are eligible.
  int64_t MinMatchNum(size_t i, int32_t min_domains) const {
    if (match_num[i].size() < static_cast<size_t>(std::max(min_domains, 0))) return 0;
    return paths[i][0].num;
  }

  void Add(size_t i, std::string_view value, int64_t delta) {
    auto it = match_num[i].find(value);
    if (it == match_num[i].end()) {
      it = match_num[i].emplace(std::string(value), 0).first;
    }
    it->second += delta;
    UpdatePaths(paths[i], value, it->second);
  }
};

// The critical paths of a fresh TpValueToMatchNum: upstream updates them while iterating a
// Go map (random order); this takes the order sorted by (match number, value), so that [0]
// is the smallest pair and [1] the next one, whatever order the map was filled in.
void InitPaths(const internal::StringMap<int64_t>& m, CriticalPaths& p) {
  const std::string* v0 = nullptr;
  const std::string* v1 = nullptr;
  int64_t n0 = 0, n1 = 0;
  auto less = [](int64_t a, const std::string& av, int64_t b, const std::string& bv) {
    return a < b || (a == b && av < bv);
  };
  for (const auto& [v, n] : m) {
    if (v0 == nullptr || less(n, v, n0, *v0)) {
      v1 = v0;
      n1 = n0;
      v0 = &v;
      n0 = n;
    } else if (v1 == nullptr || less(n, v, n1, *v1)) {
      v1 = &v;
      n1 = n;
    }
  }
  if (v0 != nullptr) p[0] = {*v0, n0};
  if (v1 != nullptr) p[1] = {*v1, n1};
}

struct Entry {
  uint32_t constraint;
  const std::string* value;
  int64_t count;
};

const PreFilterState* ReadState(const framework::CycleState& state) {
  return state.ReadAs<PreFilterState>(PodTopologySpread::kPreFilterStateKey);
}

framework::Status NotFound() {
  return framework::Status::Error(
      "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
}

// updateWithPod.
void UpdateWithPod(PreFilterState* s, const api::Pod& updated, const api::Pod& preemptor,
                   const api::Node* node, int64_t delta) {
  if (s == nullptr || node == nullptr ||
      updated.metadata.namespace_ != preemptor.metadata.namespace_) {
    return;
  }
  const auto& cs = s->shared->constraints;
  const api::Labels& labels = node->metadata.labels;
  if (!internal::NodeHasAllKeys(labels, cs)) return;
  internal::NodeInclusion inclusion(preemptor, *node);
  for (size_t i = 0; i < cs.size(); ++i) {
    const Constraint& c = cs[i];
    if (!c.selector.Matches(updated.metadata.labels)) continue;
    if (!inclusion.Includes(c)) continue;
    s->Add(i, labels.find(c.topology_key)->second, delta);
  }
}

}  // namespace

namespace internal {

bool CountsFromIndexApply(const api::Pod& pod, const std::vector<Constraint>& constraints) {
  if (constraints.empty()) return false;
  const bool restricted = internal::HasRequiredNodeAffinity(pod);
  for (const Constraint& c : constraints) {
    if (c.topology_key != constraints[0].topology_key) return false;
    if (c.honor_node_taints || (c.honor_node_affinity && restricted)) return false;
  }
  return true;
}

void AddClassCounts(framework::PodAffinityIndex& index, size_t slot, const api::Pod& pod,
                    const Selector& selector,
                    const std::function<void(const std::string&, int64_t)>& add) {
  // An empty selector counts nothing (countPodsMatchSelector), nor does a nil one.
  if (selector.Empty() || selector.nothing()) return;
  for (const framework::PodAffinityIndex::Class* c : index.Classes()) {
    const api::Pod& rep = c->representative->Pod();
    // Terminating pods (kubernetes#87621) and other namespaces are not counted.
    if (rep.metadata.deletion_timestamp || rep.metadata.namespace_ != pod.metadata.namespace_) {
      continue;
    }
    if (!selector.Matches(rep.metadata.labels)) continue;
    for (const auto& [value, n] : c->counts(slot)) add(value, n);
  }
}

}  // namespace internal

namespace {

// TpValueToMatchNum from the snapshot's PodAffinityIndex when
// internal::CountsFromIndexApply: every node carrying the key is eligible, so the domains
// are the index's node domains (zeros included) and each constraint adds the per-domain
// counts of the classes of alike pods its selector matches — the same numbers as walking
// every pod of every node (pod_topology_spread_index_test.cc compares the two).
void MatchNumFromIndex(framework::PodAffinityIndex& index,
                       const std::vector<const framework::NodeInfo*>& nodes, const api::Pod& pod,
                       const std::vector<Constraint>& constraints, PreFilterState* s) {
  const size_t slot = index.Track(constraints[0].topology_key, nodes);
  const auto& domains = index.NodeDomains(slot);
  for (size_t i = 0; i < constraints.size(); ++i) {
    auto& m = s->match_num[i];
    m.reserve(domains.size());
    for (const auto& [value, nodes_in_domain] : domains) m.emplace(value, 0);
    internal::AddClassCounts(index, slot, pod, constraints[i].selector,
                             [&m](const std::string& value, int64_t n) {
                               auto it = m.find(std::string_view(value));
                               if (it != m.end()) it->second += n;
                             });
  }
}

// TpValueToMatchNum as upstream computes it: every node with all the constraints' keys (and
// passing the node inclusion policies), every pod on it matched against each selector.
void MatchNumByWalking(framework::Parallelizer* parallelizer,
                       const std::vector<const framework::NodeInfo*>& nodes, const api::Pod& pod,
                       const std::vector<Constraint>& constraints, PreFilterState* s) {
  const size_t n_constraints = constraints.size();
  const size_t chunks = (nodes.size() + internal::kNodesPerChunk - 1) / internal::kNodesPerChunk;
  std::vector<std::vector<Entry>> found(chunks);
  framework::ParallelChunks(
      parallelizer, nodes.size(), internal::kNodesPerChunk, [&](size_t chunk, size_t b, size_t e) {
        std::vector<int64_t> counts(n_constraints);
        for (size_t n = b; n < e; ++n) {
          const framework::NodeInfo& ni = *nodes[n];
          const api::Node* node = ni.node();
          if (node == nullptr) continue;
          const api::Labels& labels = node->metadata.labels;
          // The node must have every constraint's topology key.
          if (!internal::NodeHasAllKeys(labels, constraints)) continue;
          internal::CountPodsMatch(ni.pods(), constraints, pod.metadata.namespace_, counts.data());
          internal::NodeInclusion inclusion(pod, *node);
          for (size_t i = 0; i < n_constraints; ++i) {
            const Constraint& c = constraints[i];
            if (!inclusion.Includes(c)) continue;
            found[chunk].push_back(
                {static_cast<uint32_t>(i), &labels.find(c.topology_key)->second, counts[i]});
          }
        }
      });

  for (size_t i = 0; i < n_constraints; ++i) {
    if (constraints[i].topology_key == internal::kLabelHostname) {
      s->match_num[i].reserve(nodes.size());
    }
  }
  for (const auto& chunk : found) {
    for (const Entry& en : chunk) {
      auto& m = s->match_num[en.constraint];
      auto it = m.find(std::string_view(*en.value));
      if (it == m.end()) {
        m.emplace(*en.value, en.count);
      } else {
        it->second += en.count;
      }
    }
  }
}

}  // namespace

framework::Status PodTopologySpread::PreFilter(framework::CycleState& state,
                                               const framework::PodInfo& pod_info,
                                               framework::PreFilterResult* /*result*/) {
  const api::Pod& pod = pod_info.Pod();
  auto cs = internal::PodConstraints(pod, default_constraints_, internal::kDoNotSchedule);
  if (!cs.ok()) {
    return framework::Status::Error("get constraints from pod: " + cs.status().Message());
  }
  if (cs->empty()) return framework::Status(framework::Code::kSkip);

  auto shared = std::make_shared<Shared>();
  shared->constraints = std::move(cs.value());
  const auto& constraints = shared->constraints;
  const size_t n_constraints = constraints.size();
  for (const Constraint& c : constraints) {
    shared->self_match.push_back(c.selector.Matches(pod.metadata.labels) ? 1 : 0);
  }

  const auto& lister = handle_->SnapshotSharedLister();
  const auto& nodes = lister.List();
  auto s = std::make_unique<PreFilterState>();
  s->match_num.resize(n_constraints);
  s->paths.resize(n_constraints);
  framework::PodAffinityIndex* index =
      use_index_ && internal::CountsFromIndexApply(pod, constraints) ? lister.AffinityIndex()
                                                                     : nullptr;
  if (index != nullptr) {
    MatchNumFromIndex(*index, nodes, pod, constraints, s.get());
  } else {
    MatchNumByWalking(handle_->GetParallelizer(), nodes, pod, constraints, s.get());
  }
  for (size_t i = 0; i < n_constraints; ++i) InitPaths(s->match_num[i], s->paths[i]);
  s->shared = std::move(shared);
  state.Write(kPreFilterStateKey, std::move(s));
  return framework::Status();
}

framework::Status PodTopologySpread::AddPod(framework::CycleState& state,
                                            const framework::PodInfo& pod_to_schedule,
                                            const framework::PodInfoPtr& pod_to_add,
                                            const framework::NodeInfo& node) {
  auto* s = state.ReadAs<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return NotFound();
  UpdateWithPod(s, pod_to_add->Pod(), pod_to_schedule.Pod(), node.node(), 1);
  return framework::Status();
}

framework::Status PodTopologySpread::RemovePod(framework::CycleState& state,
                                               const framework::PodInfo& pod_to_schedule,
                                               const framework::PodInfoPtr& pod_to_remove,
                                               const framework::NodeInfo& node) {
  auto* s = state.ReadAs<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) return NotFound();
  UpdateWithPod(s, pod_to_remove->Pod(), pod_to_schedule.Pod(), node.node(), -1);
  return framework::Status();
}

framework::Status PodTopologySpread::Filter(const framework::CycleState& state,
                                            const framework::PodInfo& /*pod*/,
                                            const framework::NodeInfo& node_info) {
  const PreFilterState* s = ReadState(state);
  if (s == nullptr) return NotFound();
  const api::Node* node = node_info.node();
  if (node == nullptr) return framework::Status::Error("node not found");
  const auto& cs = s->shared->constraints;
  const api::Labels& labels = node->metadata.labels;
  for (size_t i = 0; i < cs.size(); ++i) {
    const Constraint& c = cs[i];
    auto tp = labels.find(c.topology_key);
    if (tp == labels.end()) {
      return framework::Status::UnschedulableAndUnresolvable(
          std::string(kErrReasonNodeLabelNotMatch));
    }
    // 'existing matching num' + 'if self-match (1 or 0)' - 'global minimum' <= 'maxSkew'
    const int64_t min_match = s->MinMatchNum(i, c.min_domains);
    const auto& m = s->match_num[i];
    auto it = m.find(std::string_view(tp->second));
    const int64_t match = it == m.end() ? 0 : it->second;
    const int64_t skew = match + s->shared->self_match[i] - min_match;
    if (skew > c.max_skew) {
      return framework::Status::Unschedulable(std::string(kErrReasonConstraintsNotMatch));
    }
  }
  return framework::Status();
}

std::optional<PreFilterStateView> GetPreFilterState(const framework::CycleState& state) {
  const PreFilterState* s = ReadState(state);
  if (s == nullptr) return std::nullopt;
  PreFilterStateView v;
  for (const auto& m : s->match_num) v.tp_value_to_match_num.emplace_back(m.begin(), m.end());
  for (const auto& p : s->paths) {
    v.critical_paths.push_back({PreFilterStateView::Path{p[0].value, p[0].num},
                                PreFilterStateView::Path{p[1].value, p[1].num}});
  }
  return v;
}

}  // namespace phalanx::plugins::podtopologyspread
