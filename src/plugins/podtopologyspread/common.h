// Internal to the PodTopologySpread plugin: parsed constraints and selectors
// (upstream podtopologyspread/common.go, labels.Selector).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/labels.h"
#include "api/types.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::framework {
class PodAffinityIndex;
}  // namespace phalanx::framework

namespace phalanx::plugins::podtopologyspread::internal {

inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
inline constexpr std::string_view kDoNotSchedule = "DoNotSchedule";
inline constexpr std::string_view kScheduleAnyway = "ScheduleAnyway";
inline constexpr std::string_view kPolicyHonor = "Honor";
inline constexpr std::string_view kPolicyIgnore = "Ignore";

// A parsed label selector (labels.Selector): Nothing, or requirements ANDed (none =
// Everything, which is Empty()).
class Selector {
 public:
  enum class Op : uint8_t { kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Op op;
    std::vector<std::string> values;
  };

  static Selector Nothing() {
    Selector s;
    s.nothing_ = true;
    return s;
  }
  // metav1.LabelSelectorAsSelector: nil -> Nothing; errors for invalid selectors.
  static framework::StatusOr<Selector> FromLabelSelector(
      const std::optional<api::LabelSelector>& sel);
  // labels.SelectorFromSet.
  static Selector FromSet(const api::Labels& set);

  bool nothing() const { return nothing_; }
  bool Empty() const { return !nothing_ && reqs_.empty(); }
  bool Matches(const api::Labels& labels) const;
  // mergeLabelSetWithSelector: `set` as equality requirements ANDed with this selector;
  // Nothing stays Nothing.
  void MergeSet(const api::Labels& set);
  const std::vector<Requirement>& requirements() const { return reqs_; }

 private:
  bool nothing_ = false;
  std::vector<Requirement> reqs_;
};

// topologySpreadConstraint.
struct Constraint {
  int32_t max_skew = 1;
  std::string topology_key;
  Selector selector;
  int32_t min_domains = 1;
  bool honor_node_affinity = true;  // nodeAffinityPolicy (default Honor)
  bool honor_node_taints = false;   // nodeTaintsPolicy (default Ignore)
};

// filterTopologySpreadConstraints: the constraints with whenUnsatisfiable == `action`,
// selectors parsed and matchLabelKeys merged from `pod_labels`.
framework::StatusOr<std::vector<Constraint>> FilterConstraints(
    const std::vector<api::TopologySpreadConstraint>& constraints, const api::Labels& pod_labels,
    std::string_view action);

// getConstraints / buildDefaultConstraints: the pod's constraints for `action` (DoNotSchedule
// or ScheduleAnyway) or, when it has none, `defaults` for `action` with DefaultSelector(pod)
// (none when that selector is empty). Errors name the origin, e.g. "obtaining pod's hard
// topology spread constraints: <selector error>".
framework::StatusOr<std::vector<Constraint>> PodConstraints(
    const api::Pod& pod, const std::vector<api::TopologySpreadConstraint>& defaults,
    std::string_view action);

// The selector default constraints use (upstream helper.DefaultSelector). Services and
// controller objects are not known to plugins here, so it is the pod's own labels, minus the
// per-pod ones a StatefulSet adds, for pods controlled by a ReplicationController,
// ReplicaSet, StatefulSet or Deployment (the simulator's direct owner); Empty otherwise.
Selector DefaultSelector(const api::Pod& pod);

// nodeLabelsMatchSpreadConstraints: the node has every constraint's topology key.
bool NodeHasAllKeys(const api::Labels& node_labels, const std::vector<Constraint>& constraints);

// matchNodeInclusionPolicies helpers: the pod's nodeSelector/required node affinity and its
// tolerations of NoSchedule/NoExecute taints.
bool MatchesNodeAffinity(const api::Pod& pod, const api::Node& node);
// Upstream matchNodeInclusionPolicies for one pod and one node, each policy evaluated at
// most once: nodeAffinityPolicy Honor needs the pod's required node affinity to match the
// node, nodeTaintsPolicy Honor needs the pod to tolerate the node's NoSchedule/NoExecute
// taints.
class NodeInclusion {
 public:
  NodeInclusion(const api::Pod& pod, const api::Node& node) : pod_(pod), node_(node) {}
  bool Includes(const Constraint& c);

 private:
  const api::Pod& pod_;
  const api::Node& node_;
  std::optional<bool> affinity_, taints_;
};

// Whether the pod has a nodeSelector or required node affinity (else MatchesNodeAffinity
// holds for every node).
bool HasRequiredNodeAffinity(const api::Pod& pod);

// Whether the per-domain counts of `constraints` can be read from the snapshot's
// PodAffinityIndex instead of walking every node: one topology key for all constraints and
// no node inclusion policy that depends on the node for this pod (nodeTaintsPolicy Honor,
// or nodeAffinityPolicy Honor with a nodeSelector / required node affinity, fall back).
bool CountsFromIndexApply(const api::Pod& pod, const std::vector<Constraint>& constraints);
// Calls add(value, n) for every topology value of key slot `slot` with n > 0 pods of a
// class that `selector` counts for `pod` (same namespace, not terminating, labels match;
// an empty or nil selector counts nothing), once per matching class.
void AddClassCounts(framework::PodAffinityIndex& index, size_t slot, const api::Pod& pod,
                    const Selector& selector,
                    const std::function<void(const std::string&, int64_t)>& add);
bool ToleratesNodeTaints(const api::Pod& pod, const api::Node& node);

// countPodsMatchSelectors into counts[0..constraints.size()): same namespace, not
// terminating, non-empty selector matching.
void CountPodsMatch(const std::vector<framework::PodInfoPtr>& pods,
                    const std::vector<Constraint>& constraints, const std::string& ns,
                    int64_t* counts);

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// Nodes per chunk of framework::ParallelChunks.
inline constexpr size_t kNodesPerChunk = 64;

}  // namespace phalanx::plugins::podtopologyspread::internal
