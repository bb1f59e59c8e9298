// Internal to the InterPodAffinity plugin: affinity-term matching (upstream
// framework.AffinityTerm / PodInfo term parsing) and the (topologyKey, value) counters of
// filtering.go / scoring.go.
//
// Existing pods' terms are matched straight from their api::PodAffinityTerm (no per-cycle
// parsing or allocation); the incoming pod's terms are "bound" once per cycle with the
// namespaceSelector unrolled into namespace names, as upstream's
// mergeAffinityTermNamespacesIfNotEmpty does. matchLabelKeys / mismatchLabelKeys are merged
// into the labelSelector as `key in (v)` / `key notin (v)` with v the term owner's label
// value (what the API server stores at pod creation); keys the owner lacks are ignored.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/labels.h"
#include "api/types.h"
#include "framework/status.h"

namespace phalanx::plugins::interpodaffinity {

class NamespaceLister;

namespace internal {

const std::vector<api::PodAffinityTerm>* RequiredAffinityTerms(const api::Pod& pod);
const std::vector<api::PodAffinityTerm>* RequiredAntiAffinityTerms(const api::Pod& pod);
const std::vector<api::WeightedPodAffinityTerm>* PreferredAffinityTerms(const api::Pod& pod);
const std::vector<api::WeightedPodAffinityTerm>* PreferredAntiAffinityTerms(const api::Pod& pod);

// Upstream PodInfo parse errors: Success when every term is valid, else Error with them
// aggregated as its message (upstream utilerrors.NewAggregate), e.g.
// `requiredAffinityTerms: matchExpressions[0].values[0]: Invalid value: "x": ...`.
// PreFilter reports it as UnschedulableAndUnresolvable, PreScore as Error (upstream).
framework::Status ParseErrors(const api::Pod& pod);

// The term's labelSelector (nil selects nothing), merged with the owner's
// matchLabelKeys/mismatchLabelKeys, matches `labels`.
bool SelectorMatches(const api::PodAffinityTerm& term, const api::Labels& owner_labels,
                     const api::Labels& labels);

// upstream AffinityTerm.Matches for a term of `owner` (an existing pod): `pod` is in the
// term's namespaces (default: the owner's) or its namespace labels `ns_labels` match the
// namespaceSelector, and its labels match the selector.
bool TermMatches(const api::PodAffinityTerm& term, const api::Pod& owner, const api::Pod& pod,
                 const api::Labels& ns_labels);

// An incoming pod's term with namespaces resolved.
struct BoundTerm {
  const api::PodAffinityTerm* term = nullptr;
  std::vector<std::string> namespaces;  // sorted, unique
  bool all_namespaces = false;          // namespaceSelector: {}
  int32_t weight = 0;                   // preferred terms only

  const std::string& topology_key() const { return term->topology_key; }
  // `pod` matches this term of `owner` (upstream Matches(pod, nil) after the merge).
  bool Matches(const api::Pod& owner, const api::Pod& pod) const;
};

BoundTerm BindTerm(const api::PodAffinityTerm& term, const api::Pod& owner, int32_t weight,
                   const NamespaceLister* lister);

// True iff `terms` is non-empty and `pod` matches every term (podMatchesAllAffinityTerms).
bool MatchesAll(const std::vector<BoundTerm>& terms, const api::Pod& owner, const api::Pod& pod);

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using ValueCounts = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

// Counts per (topologyKey, value) (upstream topologyToMatchedTermCount / scoreMap), grouped
// by key: there are few distinct keys per cycle, so lookups are a short scan over keys plus
// one hash probe; Get does not allocate.
class TopologyCounts {
 public:
  struct Key {
    std::string key;
    ValueCounts values;
  };
  // Adds `delta`; an entry that reaches 0 is removed (upstream update()).
  void Add(std::string_view key, std::string_view value, int64_t delta);
  // Adds `delta`, keeping zero entries (scoreMap semantics).
  void Accumulate(std::string_view key, std::string_view value, int64_t delta);
  int64_t Get(std::string_view key, std::string_view value) const;
  // Number of (key, value) entries.
  size_t size() const { return size_; }
  const std::vector<Key>& keys() const { return keys_; }

 private:
  Key& KeyFor(std::string_view key);
  std::vector<Key> keys_;
  size_t size_ = 0;
};

// Nodes per chunk of framework::ParallelChunks.
inline constexpr size_t kNodesPerChunk = 64;

// Node label value for `key`, or nullptr.
inline const std::string* NodeLabel(const api::Node& node, const std::string& key) {
  auto it = node.metadata.labels.find(key);
  return it == node.metadata.labels.end() ? nullptr : &it->second;
}

// A (topologyKey, value) pair with a summed delta, found by a worker; key and value point
// into snapshot / pod objects that outlive the cycle.
struct PairDelta {
  const std::string* key;
  const std::string* value;
  int64_t delta;
};

// Per-node accumulator of topology-pair deltas: the node's label is looked up once per
// distinct topology key (not once per existing pod), and the deltas of all the node's pods
// for one key are summed into one PairDelta. Summing is exact for both TopologyCounts::Add
// (the per-node sum of same-sign deltas; PreFilter only adds +1) and Accumulate (an entry
// is flushed, even with a zero sum, whenever any pod contributed to it, as upstream's
// scoreMap creates the key). Reuse one per worker chunk: Reset keeps the capacity.
class NodePairAccumulator {
 public:
  void Reset(const api::Node& node) {
    node_ = &node;
    entries_.clear();
  }
  // Adds `delta` to (key, node's value of key); no-op when the node lacks the key.
  void Add(const std::string& key, int64_t delta) {
    for (Entry& e : entries_) {
      if (e.key == &key || *e.key == key) {
        if (e.value != nullptr) {
          e.delta += delta;
          e.touched = true;
        }
        return;
      }
    }
    const std::string* v = NodeLabel(*node_, key);
    entries_.push_back(Entry{&key, v, v != nullptr ? delta : 0, v != nullptr});
  }
  // Appends the touched pairs to `out`, summing into the last pair when it has the same
  // key and value (consecutive nodes in one topology domain, e.g. one zone).
  void Flush(std::vector<PairDelta>* out) const {
    for (const Entry& e : entries_) {
      if (!e.touched) continue;
      if (!out->empty()) {
        PairDelta& last = out->back();
        if ((last.key == e.key || *last.key == *e.key) && *last.value == *e.value) {
          last.delta += e.delta;
          continue;
        }
      }
      out->push_back(PairDelta{e.key, e.value, e.delta});
    }
  }

 private:
  struct Entry {
    const std::string* key;
    const std::string* value;  // nullptr: the node lacks the key
    int64_t delta;
    bool touched;
  };
  const api::Node* node_ = nullptr;
  std::vector<Entry> entries_;
};

}  // namespace internal
}  // namespace phalanx::plugins::interpodaffinity
