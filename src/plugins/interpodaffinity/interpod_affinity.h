// InterPodAffinity: required pod affinity / anti-affinity (incoming pod's and existing
// pods') as a filter, preferred terms (both directions) and existing pods' required
// affinity (hardPodAffinityWeight) as a score
// (upstream pkg/scheduler/framework/plugins/interpodaffinity/{plugin,filtering,scoring}.go).
//
// PreFilter counts, per (topologyKey, value), the existing pods whose required
// anti-affinity matches the incoming pod and the existing pods matching the incoming pod's
// required (anti-)affinity; Filter only looks those counts up (no allocation on success).
// PreScore aggregates the weighted matches per (topologyKey, value); Score sums them for a
// node's labels; NormalizeScore maps min..max to 0..100.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "plugins/interpodaffinity/namespace_lister.h"

namespace phalanx::plugins::interpodaffinity {

inline constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr std::string_view kErrReasonAffinityRulesNotMatch =
    "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch =
    "node(s) didn't match pod anti-affinity rules";

// InterPodAffinityArgs (kubescheduler.config.k8s.io/v1) after defaulting.
struct InterPodAffinityArgs {
  int32_t hard_pod_affinity_weight = 1;  // 0..100
  bool ignore_preferred_terms_of_existing_pods = false;
};

// Decodes, defaults and validates (nullptr = defaults). Errors:
// "InterPodAffinityArgs: hardPodAffinityWeight: Invalid value: 101: not in valid range
// [0, 100]".
framework::StatusOr<InterPodAffinityArgs> ParseInterPodAffinityArgs(framework::PluginArgs args);

class InterPodAffinity final : public framework::PreFilterPlugin,
                               public framework::PreFilterExtensions,
                               public framework::FilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin,
                               public framework::ScoreExtensions,
                               public framework::EnqueueExtensions,
                               public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "InterPodAffinity";
  static constexpr std::string_view kPreFilterStateKey = "PreFilterInterPodAffinity";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreInterPodAffinity";

  InterPodAffinity(InterPodAffinityArgs args, framework::Handle& handle)
      : args_(args), handle_(&handle) {}

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: pods without (anti-)affinity terms of their own; when some
  // pod in the snapshot has terms, also the same namespace and labels (those terms match
  // on them). Placing such a pod adds no term, so no other node's result changes.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;

  // Installs the namespace lister used for namespaceSelector (see namespace_lister.h).
  // Call before scheduling starts; nullptr = every namespace has no labels.
  void SetNamespaceLister(std::shared_ptr<const NamespaceLister> lister) {
    ns_lister_ = std::move(lister);
  }
  const InterPodAffinityArgs& args() const { return args_; }
  // Whether PreFilter and PreScore read the snapshot's PodAffinityIndex (match each class of
  // alike pods once, add its per-domain counts) when the lister keeps one (default), or walk
  // every pod as upstream does. Both give the same counts and scores
  // (interpod_affinity_index_test.cc compares them on random clusters).
  void SetUseIndex(bool use) { use_index_ = use; }

  // UnschedulableAndUnresolvable "parsing pod: ..." for an invalid selector; Skip when no
  // existing pod's required anti-affinity matches the pod and the pod has no required
  // (anti-)affinity terms.
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::PreFilterExtensions* GetPreFilterExtensions() override { return this; }
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                           const framework::PodInfoPtr& pod_to_add,
                           const framework::NodeInfo& node) override;
  framework::Status RemovePod(framework::CycleState& state,
                              const framework::PodInfo& pod_to_schedule,
                              const framework::PodInfoPtr& pod_to_remove,
                              const framework::NodeInfo& node) override;
  // UnschedulableAndUnresolvable kErrReasonAffinityRulesNotMatch, Unschedulable
  // kErrReasonAntiAffinityRulesNotMatch / kErrReasonExistingAntiAffinityRulesNotMatch.
  // Thread-safe, no allocation on success.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  // Skip when there are no nodes, when ignorePreferredTermsOfExistingPods is set and the pod
  // has no preferred terms, or when nothing matched; Error for an invalid selector.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  // Raw score: the sum of the node's topology pair weights (may be negative).
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  // Min-max to [0, 100] (float, truncated), as upstream.
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   const std::vector<const framework::NodeInfo*>& nodes,
                                   std::vector<int64_t>& scores) override;

  // AssignedPod/Add|UpdatePodLabel|Delete, UnscheduledPod/UpdatePodLabel (the pod itself,
  // upstream TargetPod), Node/Add|UpdateNodeLabel; hints as upstream.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  InterPodAffinityArgs args_;
  framework::Handle* handle_;
  std::shared_ptr<const NamespaceLister> ns_lister_;
  bool use_index_ = true;
};

// For tests: PreFilter's counters as {(topologyKey, value) -> count}; nullopt when the state
// is absent.
struct PreFilterCounts {
  using Map = std::map<std::pair<std::string, std::string>, int64_t>;
  Map existing_anti_affinity;
  Map affinity;
  Map anti_affinity;
};
std::optional<PreFilterCounts> GetPreFilterCounts(const framework::CycleState& state);

}  // namespace phalanx::plugins::interpodaffinity
