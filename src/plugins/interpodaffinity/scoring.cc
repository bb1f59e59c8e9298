// InterPodAffinity PreScore / Score / NormalizeScore (upstream scoring.go).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/parallelize.h"
#include "framework/pod_affinity_index.h"
#include "plugins/interpodaffinity/interpod_affinity.h"
#include "plugins/interpodaffinity/terms.h"

namespace phalanx::plugins::interpodaffinity {

namespace {

using internal::BoundTerm;
using internal::NodeLabel;
using internal::NodePairAccumulator;
using internal::PairDelta;

// topologyScore: (topologyKey, value) -> summed weight (upstream scoreMap: an entry exists
// once any term contributed, even when its weights sum to 0). Built once by PreScore,
// immutable after. Values are views into one arena reserved to the exact total length
// before filling, so a per-hostname map of thousands of nodes costs no string allocation
// per entry; the arena never reallocates, and the object is neither copied nor moved.
class TopologyScore {
 public:
  // Open-addressing (linear probing) map value -> weight, sized once for every entry of the
  // cycle (load factor <= 3/4): no allocation per entry, no rehash.
  class Values {
   public:
    void Init(size_t max_entries) {
      size_t cap = 16;
      while (cap * 3 < max_entries * 4) cap <<= 1;
      slots_.assign(cap, Slot{});
      mask_ = cap - 1;
    }
    // The weight of `v`, or nullptr.
    const int64_t* Find(std::string_view v) const {
      for (size_t i = std::hash<std::string_view>{}(v)&mask_;; i = (i + 1) & mask_) {
        const Slot& s = slots_[i];
        if (!s.used) return nullptr;
        if (s.key == v) return &s.value;
      }
    }
    // The slot of `v`; a new slot (used, value 0) gets its key from `stable()` (called
    // only on insertion), and *inserted is set.
    template <typename StableKey>
    int64_t& Upsert(std::string_view v, StableKey&& stable, bool* inserted) {
      for (size_t i = std::hash<std::string_view>{}(v)&mask_;; i = (i + 1) & mask_) {
        Slot& s = slots_[i];
        if (!s.used) {
          s.used = true;
          s.key = stable();
          *inserted = true;
          return s.value;
        }
        if (s.key == v) {
          *inserted = false;
          return s.value;
        }
      }
    }

   private:
    struct Slot {
      std::string_view key;
      int64_t value = 0;
      bool used = false;
    };
    std::vector<Slot> slots_;
    size_t mask_ = 0;
  };
  struct Key {
    std::string key;
    Values values;
  };
  TopologyScore() = default;
  TopologyScore(const TopologyScore&) = delete;
  TopologyScore& operator=(const TopologyScore&) = delete;

  void Build(const std::vector<std::vector<PairDelta>>& found) {
    size_t entries = 0, bytes = 0;
    for (const auto& chunk : found) {
      entries += chunk.size();
      for (const PairDelta& e : chunk) bytes += e.value->size();
    }
    // Above the small-string capacity, so the buffer is on the heap and stable.
    arena_.reserve(std::max<size_t>(bytes, 64));
    const char* const base = arena_.data();
    const std::string* last_key = nullptr;
    Key* last = nullptr;
    for (const auto& chunk : found) {
      for (const PairDelta& e : chunk) {
        if (e.key != last_key) {
          last_key = e.key;
          last = &KeyFor(*e.key, entries);
        }
        bool inserted = false;
        int64_t& w = last->values.Upsert(
            *e.value,
            [&] {
              const size_t off = arena_.size();
              arena_.append(*e.value);
              return std::string_view(base + off, e.value->size());
            },
            &inserted);
        w += e.delta;
        if (inserted) ++size_;
      }
    }
  }
  size_t size() const { return size_; }
  const std::vector<Key>& keys() const { return keys_; }

 private:
  Key& KeyFor(const std::string& key, size_t reserve) {
    for (Key& k : keys_) {
      if (k.key == key) return k;
    }
    keys_.emplace_back();  // at most a few keys; `last` is re-fetched after each growth
    keys_.back().key = key;
    keys_.back().values.Init(reserve);
    return keys_.back();
  }
  std::string arena_;
  std::vector<Key> keys_;
  size_t size_ = 0;
};

// One class's contribution kept by reference (the index path, few classes): every
// (key, v) of `counts` adds weight × count. The map is the index's copy-on-write one, so it
// stays as PreScore saw it while this state lives.
struct DomainRef {
  std::string key;
  int64_t weight = 0;
  std::shared_ptr<const framework::PodAffinityIndex::DomainCounts> counts;  // non-empty
};

// At most this many references are kept; beyond, PreScore sums them into a TopologyScore
// (Score then looks each key up once instead of once per reference).
constexpr size_t kMaxDomainRefs = 16;

struct PreScoreState final : framework::StateData {
  // Exactly one of the two is set: the summed map, or (index path) references sorted by key.
  std::shared_ptr<const TopologyScore> topology_score;
  std::shared_ptr<const std::vector<DomainRef>> refs;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

struct ScoringContext {
  const api::Pod* pod;
  std::vector<BoundTerm> preferred_affinity;
  std::vector<BoundTerm> preferred_anti_affinity;
  api::Labels ns_labels;
  int32_t hard_weight;
};

// Summed weight per topology key touched by one pod's terms (no node: the index applies
// them to every domain of the pod's class). Entries are added even when the sum is 0.
class KeyWeights {
 public:
  void Reset() { entries_.clear(); }
  void Add(const std::string& key, int64_t delta) {
    for (auto& e : entries_) {
      if (e.first == &key || *e.first == key) {
        e.second += delta;
        return;
      }
    }
    entries_.emplace_back(&key, delta);
  }
  const std::vector<std::pair<const std::string*, int64_t>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<const std::string*, int64_t>> entries_;
};

// processTerm for a bound (incoming) term matched against an existing pod.
template <typename Acc>
void ProcessIncoming(const std::vector<BoundTerm>& terms, const api::Pod& owner,
                     const api::Pod& existing, int64_t multiplier, Acc* out) {
  for (const BoundTerm& t : terms) {
    if (!t.Matches(owner, existing)) continue;
    out->Add(t.topology_key(), static_cast<int64_t>(t.weight) * multiplier);
  }
}

// processTerm for an existing pod's term matched against the incoming pod.
template <typename Acc>
void ProcessExistingTerm(const api::PodAffinityTerm& t, int32_t weight, const api::Pod& owner,
                         const ScoringContext& ctx, int64_t multiplier, Acc* out) {
  if (!internal::TermMatches(t, owner, *ctx.pod, ctx.ns_labels)) return;
  out->Add(t.topology_key, static_cast<int64_t>(weight) * multiplier);
}

// processExistingPod; `out` is reset to the existing pod's node, which has labels (or is a
// KeyWeights).
template <typename Acc>
void ProcessExistingPod(const ScoringContext& ctx, const api::Pod& existing, Acc* out) {
  ProcessIncoming(ctx.preferred_affinity, *ctx.pod, existing, 1, out);
  ProcessIncoming(ctx.preferred_anti_affinity, *ctx.pod, existing, -1, out);
  if (ctx.hard_weight > 0) {
    if (const auto* terms = internal::RequiredAffinityTerms(existing)) {
      for (const auto& t : *terms) {
        ProcessExistingTerm(t, ctx.hard_weight, existing, ctx, 1, out);
      }
    }
  }
  if (const auto* terms = internal::PreferredAffinityTerms(existing)) {
    for (const auto& wt : *terms) {
      ProcessExistingTerm(wt.pod_affinity_term, wt.weight, existing, ctx, 1, out);
    }
  }
  if (const auto* terms = internal::PreferredAntiAffinityTerms(existing)) {
    for (const auto& wt : *terms) {
      ProcessExistingTerm(wt.pod_affinity_term, wt.weight, existing, ctx, -1, out);
    }
  }
}

// The topology pairs by walking every pod (upstream's algorithm), one list per chunk.
std::vector<std::vector<PairDelta>> PairsByWalking(const ScoringContext& ctx,
                                                   const framework::NodeInfoLister& snapshot,
                                                   framework::Parallelizer* par,
                                                   bool has_constraints) {
  const auto& all_nodes = has_constraints ? snapshot.List() : snapshot.HavePodsWithAffinityList();
  const size_t chunks =
      (all_nodes.size() + internal::kNodesPerChunk - 1) / internal::kNodesPerChunk;
  std::vector<std::vector<PairDelta>> found(chunks);
  framework::ParallelChunks(
      par, all_nodes.size(), internal::kNodesPerChunk, [&](size_t c, size_t b, size_t e) {
        // Filled locally and moved in once: adjacent found[] headers share a cache line, and
        // pushing into them from two threads thrashes it (false sharing).
        std::vector<PairDelta> local;
        NodePairAccumulator acc;
        for (size_t i = b; i < e; ++i) {
          const framework::NodeInfo& ni = *all_nodes[i];
          const api::Node* node = ni.node();
          if (node == nullptr || node->metadata.labels.empty()) continue;
          acc.Reset(*node);
          const auto& pods = has_constraints ? ni.pods() : ni.pods_with_affinity();
          for (const framework::PodInfoPtr& existing : pods) {
            ProcessExistingPod(ctx, existing->Pod(), &acc);
          }
          acc.Flush(&local);
        }
        found[c] = std::move(local);
      });

  return found;
}

// The same contributions from the snapshot's PodAffinityIndex: ProcessExistingPod runs once
// per class on its representative (into a KeyWeights: no node) to find which topology keys
// the class touches and with which summed weight; each member on a node with value v of
// such a key contributes that weight to (key, v), so the class adds weight × members per
// domain. A touched key whose weights sum to 0 still creates its entries (upstream's
// scoreMap), as the walk does; a class with no member on a node with the key adds nothing.
std::vector<DomainRef> RefsWithIndex(const ScoringContext& ctx, framework::PodAffinityIndex& index,
                                     const std::vector<const framework::NodeInfo*>& nodes,
                                     bool has_constraints) {
  std::vector<DomainRef> out;
  KeyWeights acc;
  const auto& classes = has_constraints ? index.Classes() : index.ClassesWithAffinity();
  for (const auto* c : classes) {
    acc.Reset();
    ProcessExistingPod(ctx, c->representative->Pod(), &acc);
    for (const auto& [key, weight] : acc.entries()) {
      const size_t slot = index.Track(*key, nodes);
      if (c->counts(slot).empty()) continue;
      out.push_back(DomainRef{*key, weight, c->Shared(slot)});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const DomainRef& a, const DomainRef& b) { return a.key < b.key; });
  return out;
}

// The pairs of `refs`, for TopologyScore::Build.
std::vector<PairDelta> PairsOf(const std::vector<DomainRef>& refs) {
  std::vector<PairDelta> out;
  for (const DomainRef& r : refs) {
    for (const auto& [value, n] : *r.counts) out.push_back(PairDelta{&r.key, &value, r.weight * n});
  }
  return out;
}

const PreScoreState* ReadState(const framework::CycleState& state) {
  return state.ReadAs<PreScoreState>(InterPodAffinity::kPreScoreStateKey);
}

framework::Status NotFound() {
  return framework::Status::Error(
      "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
}

}  // namespace

framework::Status InterPodAffinity::PreScore(framework::CycleState& state,
                                             const framework::PodInfo& pod_info,
                                             const std::vector<const framework::NodeInfo*>& nodes) {
  if (nodes.empty()) return framework::Status(framework::Code::kSkip);
  const api::Pod& pod = pod_info.Pod();
  const bool has_constraints = internal::PreferredAffinityTerms(pod) != nullptr ||
                               internal::PreferredAntiAffinityTerms(pod) != nullptr;
  // Optionally ignore existing pods' preferences when the pod has no preferred terms.
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) {
    return framework::Status(framework::Code::kSkip);
  }
  if (framework::Status err = internal::ParseErrors(pod); !err.IsSuccess()) {
    return framework::Status::Error("failed to parse pod: " + err.Message());
  }

  ScoringContext ctx;
  ctx.pod = &pod;
  ctx.hard_weight = args_.hard_pod_affinity_weight;
  const NamespaceLister* lister = ns_lister_.get();
  if (const auto* terms = internal::PreferredAffinityTerms(pod)) {
    for (const auto& wt : *terms) {
      ctx.preferred_affinity.push_back(
          internal::BindTerm(wt.pod_affinity_term, pod, wt.weight, lister));
    }
  }
  if (const auto* terms = internal::PreferredAntiAffinityTerms(pod)) {
    for (const auto& wt : *terms) {
      ctx.preferred_anti_affinity.push_back(
          internal::BindTerm(wt.pod_affinity_term, pod, wt.weight, lister));
    }
  }
  if (lister != nullptr) lister->GetLabels(pod.metadata.namespace_, &ctx.ns_labels);

  // Unless the pod has preferred terms, only pods with affinity can contribute.
  const framework::NodeInfoLister& snapshot = handle_->SnapshotSharedLister();
  std::vector<std::vector<PairDelta>> found;
  framework::PodAffinityIndex* index = nullptr;
  if (use_index_ && (has_constraints || !snapshot.HavePodsWithAffinityList().empty())) {
    index = snapshot.AffinityIndex();
  }
  std::shared_ptr<std::vector<DomainRef>> refs;  // outlives `found`, which points into it
  if (index != nullptr) {
    refs = std::make_shared<std::vector<DomainRef>>(
        RefsWithIndex(ctx, *index, snapshot.List(), has_constraints));
    if (refs->empty()) return framework::Status(framework::Code::kSkip);
    if (refs->size() <= kMaxDomainRefs) {
      auto s = std::make_unique<PreScoreState>();
      s->refs = std::move(refs);
      state.Write(kPreScoreStateKey, std::move(s));
      return framework::Status();
    }
    found.push_back(PairsOf(*refs));
  } else {
    found = PairsByWalking(ctx, snapshot, handle_->GetParallelizer(), has_constraints);
  }

  auto score = std::make_shared<TopologyScore>();
  score->Build(found);
  if (score->size() == 0) return framework::Status(framework::Code::kSkip);
  auto s = std::make_unique<PreScoreState>();
  s->topology_score = std::move(score);
  state.Write(kPreScoreStateKey, std::move(s));
  return framework::Status();
}

framework::Status InterPodAffinity::Score(const framework::CycleState& state,
                                          const framework::PodInfo& /*pod*/,
                                          const framework::NodeInfo& node_info, int64_t* score) {
  const PreScoreState* s = ReadState(state);
  if (s == nullptr) return NotFound();
  const api::Node* node = node_info.node();
  if (node == nullptr) return framework::Status::Error("node not found");
  int64_t sum = 0;
  if (s->refs != nullptr) {
    const std::string* key = nullptr;
    const std::string* v = nullptr;
    for (const DomainRef& r : *s->refs) {
      if (key == nullptr || r.key != *key) {
        key = &r.key;
        v = NodeLabel(*node, r.key);
      }
      if (v == nullptr) continue;
      auto it = r.counts->find(std::string_view(*v));
      if (it != r.counts->end()) sum += r.weight * it->second;
    }
    *score = sum;
    return framework::Status();
  }
  for (const TopologyScore::Key& k : s->topology_score->keys()) {
    const std::string* v = NodeLabel(*node, k.key);
    if (v == nullptr) continue;
    if (const int64_t* w = k.values.Find(*v)) sum += *w;
  }
  *score = sum;
  return framework::Status();
}

framework::Status InterPodAffinity::NormalizeScore(const framework::CycleState& state,
                                                   const framework::PodInfo& /*pod*/,
                                                   const std::vector<const framework::NodeInfo*>&,
                                                   std::vector<int64_t>& scores) {
  const PreScoreState* s = ReadState(state);
  if (s == nullptr) return NotFound();
  if (s->refs == nullptr && s->topology_score->size() == 0) return framework::Status();
  int64_t min_count = std::numeric_limits<int64_t>::max();
  int64_t max_count = -std::numeric_limits<int64_t>::max();
  for (int64_t v : scores) {
    if (v > max_count) max_count = v;
    if (v < min_count) min_count = v;
  }
  const int64_t diff = max_count - min_count;
  for (int64_t& v : scores) {
    double f = 0;
    if (diff > 0) {
      f = static_cast<double>(framework::kMaxNodeScore) *
          (static_cast<double>(v - min_count) / static_cast<double>(diff));
    }
    v = static_cast<int64_t>(f);
  }
  return framework::Status();
}

}  // namespace phalanx::plugins::interpodaffinity
