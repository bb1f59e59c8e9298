// InterPodAffinity PreFilter / PreFilterExtensions / Filter (upstream filtering.go).
#include <memory>
#include <string>
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
using internal::TopologyCounts;

// What the incoming pod contributes to the cycle; immutable, shared by clones.
struct IncomingPod {
  api::PodPtr pod;                  // keeps the terms alive
  std::vector<BoundTerm> affinity;  // required affinity terms, namespaces merged
  std::vector<BoundTerm> anti_affinity;
  api::Labels ns_labels;              // labels of the pod's namespace
  bool matches_own_affinity = false;  // podMatchesAllAffinityTerms(affinity, pod)
};

struct PreFilterState final : framework::StateData {
  std::shared_ptr<const IncomingPod> incoming;
  // Existing pods whose required anti-affinity terms match the incoming pod.
  TopologyCounts existing_anti_affinity;
  // Existing pods matching all / each of the incoming pod's required (anti-)affinity terms.
  TopologyCounts affinity;
  TopologyCounts anti_affinity;

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }

  // upstream preFilterState.updateWithPod.
  void UpdateWithPod(const api::Pod& p, const api::Node& node, int64_t multiplier) {
    const api::Pod& pod = *incoming->pod;
    if (const auto* terms = internal::RequiredAntiAffinityTerms(p)) {
      for (const api::PodAffinityTerm& t : *terms) {
        if (!internal::TermMatches(t, p, pod, incoming->ns_labels)) continue;
        if (const std::string* v = NodeLabel(node, t.topology_key)) {
          existing_anti_affinity.Add(t.topology_key, *v, multiplier);
        }
      }
    }
    if (internal::MatchesAll(incoming->affinity, pod, p)) {
      for (const BoundTerm& t : incoming->affinity) {
        if (const std::string* v = NodeLabel(node, t.topology_key())) {
          affinity.Add(t.topology_key(), *v, multiplier);
        }
      }
    }
    for (const BoundTerm& t : incoming->anti_affinity) {
      if (!t.Matches(pod, p)) continue;
      if (const std::string* v = NodeLabel(node, t.topology_key())) {
        anti_affinity.Add(t.topology_key(), *v, multiplier);
      }
    }
  }
};

framework::Status NotFound() {
  return framework::Status::Error(
      "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

PreFilterState* ReadState(const framework::CycleState& state) {
  return state.ReadAs<PreFilterState>(InterPodAffinity::kPreFilterStateKey);
}

// satisfyPodAffinity.
bool SatisfyPodAffinity(const PreFilterState& s, const api::Node& node) {
  bool pods_exist = true;
  for (const BoundTerm& t : s.incoming->affinity) {
    const std::string* v = NodeLabel(node, t.topology_key());
    if (v == nullptr) return false;  // all topology labels must exist on the node
    if (s.affinity.Get(t.topology_key(), *v) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group with affinity to itself: no pod in the cluster matches the
  // terms yet, the pod matches its own terms and the node has every topology key.
  return s.affinity.size() == 0 && s.incoming->matches_own_affinity;
}

// satisfyPodAntiAffinity.
bool SatisfyPodAntiAffinity(const PreFilterState& s, const api::Node& node) {
  if (s.anti_affinity.size() == 0) return true;
  for (const BoundTerm& t : s.incoming->anti_affinity) {
    const std::string* v = NodeLabel(node, t.topology_key());
    if (v != nullptr && s.anti_affinity.Get(t.topology_key(), *v) > 0) return false;
  }
  return true;
}

// satisfyExistingPodsAntiAffinity: any (key, value) of the node's labels with a count.
bool SatisfyExistingPodsAntiAffinity(const PreFilterState& s, const api::Node& node) {
  if (s.existing_anti_affinity.size() == 0) return true;
  for (const TopologyCounts::Key& k : s.existing_anti_affinity.keys()) {
    if (k.values.empty()) continue;
    const std::string* v = NodeLabel(node, k.key);
    if (v == nullptr) continue;
    auto it = k.values.find(std::string_view(*v));
    if (it != k.values.end() && it->second > 0) return false;
  }
  return true;
}

PreFilterCounts::Map ToMap(const TopologyCounts& c) {
  PreFilterCounts::Map m;
  for (const auto& k : c.keys()) {
    for (const auto& [v, n] : k.values) m[{k.key, v}] = n;
  }
  return m;
}

// The counts by walking every pod of the snapshot (upstream's algorithm).
void CountByWalking(const framework::NodeInfoLister& snapshot, framework::Parallelizer* par,
                    const IncomingPod& incoming, PreFilterState* s) {
  const IncomingPod* in = &incoming;
  const api::Pod& pod = *in->pod;

  // Existing pods' required anti-affinity against the incoming pod.
  {
    const auto& nodes = snapshot.HavePodsWithRequiredAntiAffinityList();
    const size_t chunks = (nodes.size() + internal::kNodesPerChunk - 1) / internal::kNodesPerChunk;
    std::vector<std::vector<PairDelta>> found(chunks);
    framework::ParallelChunks(par, nodes.size(), internal::kNodesPerChunk,
                              [&](size_t c, size_t b, size_t e) {
                                // Filled locally and moved in once: the headers of found[c] and
                                // found[c + 1] share a cache line, and pushing into them from two
                                // threads thrashes it (false sharing).
                                std::vector<PairDelta> local;
                                NodePairAccumulator acc;
                                for (size_t i = b; i < e; ++i) {
                                  const api::Node* node = nodes[i]->node();
                                  if (node == nullptr) continue;
                                  acc.Reset(*node);
                                  for (const framework::PodInfoPtr& existing :
                                       nodes[i]->pods_with_required_anti_affinity()) {
                                    const api::Pod& ep = existing->Pod();
                                    const auto* terms = internal::RequiredAntiAffinityTerms(ep);
                                    if (terms == nullptr) continue;
                                    for (const api::PodAffinityTerm& t : *terms) {
                                      if (internal::TermMatches(t, ep, pod, in->ns_labels))
                                        acc.Add(t.topology_key, 1);
                                    }
                                  }
                                  acc.Flush(&local);
                                }
                                found[c] = std::move(local);
                              });
    for (const auto& chunk : found) {
      for (const PairDelta& p : chunk) s->existing_anti_affinity.Add(*p.key, *p.value, p.delta);
    }
  }

  // Existing pods against the incoming pod's required (anti-)affinity.
  if (!in->affinity.empty() || !in->anti_affinity.empty()) {
    const auto& nodes = snapshot.List();
    const size_t chunks = (nodes.size() + internal::kNodesPerChunk - 1) / internal::kNodesPerChunk;
    std::vector<std::vector<PairDelta>> aff(chunks), anti(chunks);
    framework::ParallelChunks(
        par, nodes.size(), internal::kNodesPerChunk, [&](size_t c, size_t b, size_t e) {
          std::vector<PairDelta> local_aff, local_anti;  // see above: no false sharing
          NodePairAccumulator aff_acc, anti_acc;
          for (size_t i = b; i < e; ++i) {
            const api::Node* node = nodes[i]->node();
            if (node == nullptr) continue;
            aff_acc.Reset(*node);
            anti_acc.Reset(*node);
            for (const framework::PodInfoPtr& existing : nodes[i]->pods()) {
              const api::Pod& ep = existing->Pod();
              if (internal::MatchesAll(in->affinity, pod, ep)) {
                for (const BoundTerm& t : in->affinity) aff_acc.Add(t.topology_key(), 1);
              }
              for (const BoundTerm& t : in->anti_affinity) {
                if (t.Matches(pod, ep)) anti_acc.Add(t.topology_key(), 1);
              }
            }
            aff_acc.Flush(&local_aff);
            anti_acc.Flush(&local_anti);
          }
          aff[c] = std::move(local_aff);
          anti[c] = std::move(local_anti);
        });
    for (size_t c = 0; c < chunks; ++c) {
      for (const PairDelta& p : aff[c]) s->affinity.Add(*p.key, *p.value, p.delta);
      for (const PairDelta& p : anti[c]) s->anti_affinity.Add(*p.key, *p.value, p.delta);
    }
  }
}

// The same counts from the snapshot's PodAffinityIndex: each class of alike pods is matched
// once and adds its members per topology domain (the walk adds 1 per member per matching
// term on a node with the key; a class's DomainCounts are those sums).
void CountWithIndex(framework::PodAffinityIndex& index, const framework::NodeInfoLister& snapshot,
                    const IncomingPod& in, PreFilterState* s) {
  const api::Pod& pod = *in.pod;
  const auto& nodes = snapshot.List();
  auto add_all = [&](TopologyCounts& counts, const std::string& key, size_t slot,
                     const framework::PodAffinityIndex::Class& c) {
    for (const auto& [value, n] : c.counts(slot)) counts.Add(key, value, n);
  };
  if (!snapshot.HavePodsWithRequiredAntiAffinityList().empty()) {
    for (const auto* c : index.ClassesWithRequiredAntiAffinity()) {
      const api::Pod& ep = c->representative->Pod();
      const auto* terms = internal::RequiredAntiAffinityTerms(ep);
      if (terms == nullptr) continue;
      for (const api::PodAffinityTerm& t : *terms) {
        if (!internal::TermMatches(t, ep, pod, in.ns_labels)) continue;
        add_all(s->existing_anti_affinity, t.topology_key, index.Track(t.topology_key, nodes), *c);
      }
    }
  }
  if (in.affinity.empty() && in.anti_affinity.empty()) return;
  std::vector<size_t> aff_slots, anti_slots;
  for (const BoundTerm& t : in.affinity) aff_slots.push_back(index.Track(t.topology_key(), nodes));
  for (const BoundTerm& t : in.anti_affinity) {
    anti_slots.push_back(index.Track(t.topology_key(), nodes));
  }
  for (const auto* c : index.Classes()) {
    const api::Pod& ep = c->representative->Pod();
    if (internal::MatchesAll(in.affinity, pod, ep)) {
      for (size_t i = 0; i < in.affinity.size(); ++i) {
        add_all(s->affinity, in.affinity[i].topology_key(), aff_slots[i], *c);
      }
    }
    for (size_t i = 0; i < in.anti_affinity.size(); ++i) {
      if (in.anti_affinity[i].Matches(pod, ep)) {
        add_all(s->anti_affinity, in.anti_affinity[i].topology_key(), anti_slots[i], *c);
      }
    }
  }
}

}  // namespace

framework::Status InterPodAffinity::PreFilter(framework::CycleState& state,
                                              const framework::PodInfo& pod_info,
                                              framework::PreFilterResult* /*result*/) {
  const api::Pod& pod = pod_info.Pod();
  if (framework::Status err = internal::ParseErrors(pod); !err.IsSuccess()) {
    return framework::Status::UnschedulableAndUnresolvable("parsing pod: " + err.Message());
  }
  auto in = std::make_shared<IncomingPod>();
  in->pod = pod_info.pod;
  const NamespaceLister* lister = ns_lister_.get();
  if (const auto* terms = internal::RequiredAffinityTerms(pod)) {
    for (const auto& t : *terms) in->affinity.push_back(internal::BindTerm(t, pod, 0, lister));
  }
  if (const auto* terms = internal::RequiredAntiAffinityTerms(pod)) {
    for (const auto& t : *terms) {
      in->anti_affinity.push_back(internal::BindTerm(t, pod, 0, lister));
    }
  }
  if (lister != nullptr) lister->GetLabels(pod.metadata.namespace_, &in->ns_labels);
  in->matches_own_affinity = internal::MatchesAll(in->affinity, pod, pod);

  const framework::NodeInfoLister& snapshot = handle_->SnapshotSharedLister();
  auto s = std::make_unique<PreFilterState>();
  const bool needs_pods = !snapshot.HavePodsWithRequiredAntiAffinityList().empty() ||
                          !in->affinity.empty() || !in->anti_affinity.empty();
  framework::PodAffinityIndex* index =
      use_index_ && needs_pods ? snapshot.AffinityIndex() : nullptr;
  if (index != nullptr) {
    CountWithIndex(*index, snapshot, *in, s.get());
  } else {
    CountByWalking(snapshot, handle_->GetParallelizer(), *in, s.get());
  }

  if (s->existing_anti_affinity.size() == 0 && in->affinity.empty() && in->anti_affinity.empty()) {
    return framework::Status(framework::Code::kSkip);
  }
  s->incoming = std::move(in);
  state.Write(kPreFilterStateKey, std::move(s));
  return framework::Status();
}

framework::Status InterPodAffinity::AddPod(framework::CycleState& state,
                                           const framework::PodInfo& /*pod_to_schedule*/,
                                           const framework::PodInfoPtr& pod_to_add,
                                           const framework::NodeInfo& node) {
  PreFilterState* s = ReadState(state);
  if (s == nullptr) return NotFound();
  if (node.node() != nullptr) s->UpdateWithPod(pod_to_add->Pod(), *node.node(), 1);
  return framework::Status();
}

framework::Status InterPodAffinity::RemovePod(framework::CycleState& state,
                                              const framework::PodInfo& /*pod_to_schedule*/,
                                              const framework::PodInfoPtr& pod_to_remove,
                                              const framework::NodeInfo& node) {
  PreFilterState* s = ReadState(state);
  if (s == nullptr) return NotFound();
  if (node.node() != nullptr) s->UpdateWithPod(pod_to_remove->Pod(), *node.node(), -1);
  return framework::Status();
}

framework::Status InterPodAffinity::Filter(const framework::CycleState& state,
                                           const framework::PodInfo& /*pod*/,
                                           const framework::NodeInfo& node_info) {
  const PreFilterState* s = ReadState(state);
  if (s == nullptr) return NotFound();
  const api::Node* node = node_info.node();
  if (node == nullptr) return framework::Status::Error("node not found");
  if (!SatisfyPodAffinity(*s, *node)) {
    return framework::Status::UnschedulableAndUnresolvable(
        std::string(kErrReasonAffinityRulesNotMatch));
  }
  if (!SatisfyPodAntiAffinity(*s, *node)) {
    return framework::Status::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch));
  }
  if (!SatisfyExistingPodsAntiAffinity(*s, *node)) {
    return framework::Status::Unschedulable(
        std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
  }
  return framework::Status();
}

std::optional<PreFilterCounts> GetPreFilterCounts(const framework::CycleState& state) {
  const PreFilterState* s = ReadState(state);
  if (s == nullptr) return std::nullopt;
  return PreFilterCounts{ToMap(s->existing_anti_affinity), ToMap(s->affinity),
                         ToMap(s->anti_affinity)};
}

}  // namespace phalanx::plugins::interpodaffinity
