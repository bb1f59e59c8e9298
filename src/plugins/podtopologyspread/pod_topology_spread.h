// PodTopologySpread: DoNotSchedule topology spread constraints as a filter, ScheduleAnyway
// ones as a score, with cluster-level default constraints for pods that set none
// (upstream pkg/scheduler/framework/plugins/podtopologyspread/{plugin,common,filtering,
// scoring}.go, NodeInclusionPolicy and MatchLabelKeys on).
//
// PreFilter counts matching pods per constraint and topology value and keeps the two
// "critical paths" (smallest counts); Filter checks the skew with lookups only (no
// allocation on success). PreScore counts matching pods per topology value of the filtered
// nodes and weighs each constraint by log(#domains + 2); Score sums, NormalizeScore
// inverts to 0..100.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::podtopologyspread {

inline constexpr std::string_view kErrReasonConstraintsNotMatch =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kErrReasonNodeLabelNotMatch =
    "node(s) didn't match pod topology spread constraints (missing required label)";

enum class DefaultingType { kSystem, kList };

// PodTopologySpreadArgs (kubescheduler.config.k8s.io/v1) after defaulting.
struct PodTopologySpreadArgs {
  // Used for pods without spec.topologySpreadConstraints when defaulting_type is kList.
  std::vector<api::TopologySpreadConstraint> default_constraints;
  DefaultingType defaulting_type = DefaultingType::kSystem;
};

// Upstream systemDefaultConstraints: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway.
const std::vector<api::TopologySpreadConstraint>& SystemDefaultConstraints();

// Decodes, defaults (defaultingType System) and validates (ValidatePodTopologySpreadArgs).
// Errors: "PodTopologySpreadArgs: defaultConstraints[0].maxSkew: Invalid value: 0: not in
// valid range (0, inf)", "... defaultingType: Invalid value: \"System\": when
// .defaultConstraints are not empty", ...
framework::StatusOr<PodTopologySpreadArgs> ParsePodTopologySpreadArgs(framework::PluginArgs args);

class PodTopologySpread final : public framework::PreFilterPlugin,
                                public framework::PreFilterExtensions,
                                public framework::FilterPlugin,
                                public framework::PreScorePlugin,
                                public framework::ScorePlugin,
                                public framework::ScoreExtensions,
                                public framework::EnqueueExtensions,
                                public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "PodTopologySpread";
  static constexpr std::string_view kPreFilterStateKey = "PreFilterPodTopologySpread";
  static constexpr std::string_view kPreScoreStateKey = "PreScorePodTopologySpread";

  PodTopologySpread(PodTopologySpreadArgs args, framework::Handle& handle);

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: only pods without spread constraints of their own or by
  // default are signable (placing one changes the skew of every node in its domains).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;

  // Skip when the pod has no DoNotSchedule constraints (own or defaulted); Error for an
  // invalid selector.
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
  // UnschedulableAndUnresolvable kErrReasonNodeLabelNotMatch, Unschedulable
  // kErrReasonConstraintsNotMatch. Thread-safe, no allocation on success.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;

  // Skip when there are no nodes or no ScheduleAnyway constraints.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  framework::ScoreExtensions* GetScoreExtensions() override { return this; }
  framework::Status NormalizeScore(const framework::CycleState& state,
                                   const framework::PodInfo& pod,
                                   const std::vector<const framework::NodeInfo*>& nodes,
                                   std::vector<int64_t>& scores) override;

  // AssignedPod/Add|UpdatePodLabel|Delete, UnscheduledPod/UpdatePodToleration|
  // UpdatePodLabel (the pod itself, upstream TargetPod), Node/Add|Delete|UpdateNodeLabel|
  // UpdateNodeTaint; hints as upstream.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

  // Whether PreFilter and PreScore read per-domain counts from the snapshot's
  // PodAffinityIndex when internal::CountsFromIndexApply holds and the lister keeps one
  // (default), or walk every pod of every node as upstream does. Both give the same states
  // (pod_topology_spread_index_test.cc compares them on random clusters).
  void SetUseIndex(bool use) { use_index_ = use; }

  bool system_defaulted() const { return system_defaulted_; }
  const std::vector<api::TopologySpreadConstraint>& default_constraints() const {
    return default_constraints_;
  }

 private:
  framework::Handle* handle_;
  std::vector<api::TopologySpreadConstraint> default_constraints_;
  bool system_defaulted_ = false;
  bool use_index_ = true;
};

// For tests: PreFilter's per-constraint counts and critical paths; nullopt when absent.
struct PreFilterStateView {
  struct Path {
    std::string value;
    int64_t num;
    bool operator==(const Path&) const = default;
  };
  std::vector<std::map<std::string, int64_t>> tp_value_to_match_num;
  std::vector<std::array<Path, 2>> critical_paths;
};
std::optional<PreFilterStateView> GetPreFilterState(const framework::CycleState& state);

// For tests: PreScore's per-constraint counts per topology value and weights.
struct PreScoreStateView {
  std::vector<std::map<std::string, int64_t>> topology_value_to_pod_counts;
  std::vector<double> topology_normalizing_weight;
  bool require_all_topologies = true;
};
std::optional<PreScoreStateView> GetPreScoreState(const framework::CycleState& state);

}  // namespace phalanx::plugins::podtopologyspread
