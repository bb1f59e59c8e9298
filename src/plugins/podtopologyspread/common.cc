#include "plugins/podtopologyspread/common.h"

#include <algorithm>

#include "plugins/helper/taints.h"
#include "plugins/nodeaffinity/node_affinity.h"

namespace phalanx::plugins::podtopologyspread::internal {

framework::StatusOr<Selector> Selector::FromLabelSelector(
    const std::optional<api::LabelSelector>& sel) {
  if (!sel) return Nothing();
  std::string err;
  if (!api::OkOrMessage(api::ValidateLabelSelector(*sel), &err)) {
    return framework::Status::Error(err);
  }
  Selector s;
  for (const auto& [k, v] : sel->match_labels) s.reqs_.push_back({k, Op::kIn, {v}});
  for (const auto& e : sel->match_expressions) {
    Op op = Op::kIn;
    if (e.op == "NotIn") {
      op = Op::kNotIn;
    } else if (e.op == "Exists") {
      op = Op::kExists;
    } else if (e.op == "DoesNotExist") {
      op = Op::kDoesNotExist;
    }
    s.reqs_.push_back({e.key, op, e.values});
  }
  return s;
}

Selector Selector::FromSet(const api::Labels& set) {
  Selector s;
  for (const auto& [k, v] : set) s.reqs_.push_back({k, Op::kIn, {v}});
  return s;
}

void Selector::MergeSet(const api::Labels& set) {
  if (nothing_ || set.empty()) return;
  std::vector<Requirement> merged;
  merged.reserve(set.size() + reqs_.size());
  for (const auto& [k, v] : set) merged.push_back({k, Op::kIn, {v}});
  for (auto& r : reqs_) merged.push_back(std::move(r));
  reqs_ = std::move(merged);
}

bool Selector::Matches(const api::Labels& labels) const {
  if (nothing_) return false;
  for (const Requirement& r : reqs_) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    switch (r.op) {
      case Op::kIn:
        if (!has || std::find(r.values.begin(), r.values.end(), it->second) == r.values.end()) {
          return false;
        }
        break;
      case Op::kNotIn:
        if (has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end()) {
          return false;
        }
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kDoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

framework::StatusOr<std::vector<Constraint>> FilterConstraints(
    const std::vector<api::TopologySpreadConstraint>& constraints, const api::Labels& pod_labels,
    std::string_view action) {
  std::vector<Constraint> out;
  for (const api::TopologySpreadConstraint& c : constraints) {
    if (c.when_unsatisfiable != action) continue;
    auto sel = Selector::FromLabelSelector(c.label_selector);
    if (!sel.ok()) return sel.status();
    Constraint tsc;
    tsc.selector = std::move(sel.value());
    if (!c.match_label_keys.empty()) {
      api::Labels match;
      for (const std::string& k : c.match_label_keys) {
        auto it = pod_labels.find(k);
        if (it != pod_labels.end()) match[k] = it->second;
      }
      tsc.selector.MergeSet(match);
    }
    tsc.max_skew = c.max_skew;
    tsc.topology_key = c.topology_key;
    tsc.min_domains = c.min_domains.value_or(1);
    tsc.honor_node_affinity = c.node_affinity_policy != kPolicyIgnore;
    tsc.honor_node_taints = c.node_taints_policy == kPolicyHonor;
    out.push_back(std::move(tsc));
  }
  return out;
}

Selector DefaultSelector(const api::Pod& pod) {
  const api::OwnerReference* owner = nullptr;
  for (const auto& ref : pod.metadata.owner_references) {
    if (ref.controller) {
      owner = &ref;
      break;
    }
  }
  if (owner == nullptr) return Selector();
  const std::string& kind = owner->kind;
  const bool core = owner->api_version == "v1" || owner->api_version.empty();
  const bool apps = owner->api_version == "apps/v1" || owner->api_version.empty();
  const bool supported =
      (core && kind == "ReplicationController") ||
      (apps && (kind == "ReplicaSet" || kind == "StatefulSet" || kind == "Deployment"));
  if (!supported) return Selector();
  api::Labels set = pod.metadata.labels;
  // Per-pod labels the StatefulSet controller adds are not part of its selector.
  set.erase("statefulset.kubernetes.io/pod-name");
  set.erase("apps.kubernetes.io/pod-index");
  set.erase("controller-revision-hash");
  return Selector::FromSet(set);
}

framework::StatusOr<std::vector<Constraint>> PodConstraints(
    const api::Pod& pod, const std::vector<api::TopologySpreadConstraint>& defaults,
    std::string_view action) {
  const std::string kind = action == kDoNotSchedule ? "hard" : "soft";
  if (!pod.spec.topology_spread_constraints.empty()) {
    auto cs = FilterConstraints(pod.spec.topology_spread_constraints, pod.metadata.labels, action);
    if (!cs.ok()) {
      return framework::Status::Error("obtaining pod's " + kind +
                                      " topology spread constraints: " + cs.status().Message());
    }
    return cs;
  }
  auto cs = FilterConstraints(defaults, pod.metadata.labels, action);
  if (!cs.ok()) {
    return framework::Status::Error("setting default " + kind +
                                    " topology spread constraints: " + cs.status().Message());
  }
  if (cs->empty()) return cs;
  Selector sel = DefaultSelector(pod);
  if (sel.Empty()) return std::vector<Constraint>();
  for (Constraint& c : cs.value()) c.selector = sel;
  return cs;
}

bool NodeHasAllKeys(const api::Labels& node_labels, const std::vector<Constraint>& constraints) {
  for (const Constraint& c : constraints) {
    if (node_labels.find(c.topology_key) == node_labels.end()) return false;
  }
  return true;
}

bool MatchesNodeAffinity(const api::Pod& pod, const api::Node& node) {
  return nodeaffinity::MatchesRequiredNodeAffinity(pod, node);
}

bool NodeInclusion::Includes(const Constraint& c) {
  if (c.honor_node_affinity) {
    if (!affinity_) affinity_ = MatchesNodeAffinity(pod_, node_);
    if (!*affinity_) return false;
  }
  if (c.honor_node_taints) {
    if (!taints_) taints_ = ToleratesNodeTaints(pod_, node_);
    if (!*taints_) return false;
  }
  return true;
}

bool HasRequiredNodeAffinity(const api::Pod& pod) {
  if (!pod.spec.node_selector.empty()) return true;
  const auto& aff = pod.spec.affinity;
  return aff && aff->node_affinity &&
         aff->node_affinity->required_during_scheduling_ignored_during_execution.has_value();
}

bool ToleratesNodeTaints(const api::Pod& pod, const api::Node& node) {
  return helper::FindUntoleratedDoNotScheduleTaint(node.spec.taints, pod.spec.tolerations) ==
         nullptr;
}

void CountPodsMatch(const std::vector<framework::PodInfoPtr>& pods,
                    const std::vector<Constraint>& constraints, const std::string& ns,
                    int64_t* counts) {
  std::fill(counts, counts + constraints.size(), 0);
  // A constraint counts nothing with an empty selector (upstream countPodsMatchSelector
  // returns 0) or a nil one (labels.Nothing() matches no pod). When that holds for every
  // constraint the node's pods are not walked: a constraint without labelSelector, as in
  // scheduler_perf's TopologySpreading pods, would otherwise cost a pass over every pod of
  // every node per cycle for zeros.
  if (std::all_of(constraints.begin(), constraints.end(),
                  [](const Constraint& c) { return c.selector.Empty() || c.selector.nothing(); })) {
    return;
  }
  for (const framework::PodInfoPtr& p : pods) {
    const api::Pod& pod = p->Pod();
    // Bypass terminating pods (kubernetes#87621) and other namespaces.
    if (pod.metadata.deletion_timestamp || pod.metadata.namespace_ != ns) continue;
    for (size_t i = 0; i < constraints.size(); ++i) {
      const Selector& s = constraints[i].selector;
      if (!s.Empty() && s.Matches(pod.metadata.labels)) ++counts[i];
    }
  }
}

}  // namespace phalanx::plugins::podtopologyspread::internal
