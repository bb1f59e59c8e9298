#include "plugins/nodeaffinity/node_affinity.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "api/labels.h"
#include "plugins/helper/args.h"
#include "plugins/helper/normalize_score.h"

namespace phalanx::plugins::nodeaffinity {

namespace {

constexpr std::string_view kArgsKind = "NodeAffinityArgs";
constexpr std::string_view kObjectNameField = "metadata.name";

bool IsEmptyTerm(const api::NodeSelectorTerm& t) {
  return t.match_expressions.empty() && t.match_fields.empty();
}

const api::NodeSelector* RequiredSelector(const api::Pod& pod) {
  const auto& aff = pod.spec.affinity;
  if (!aff || !aff->node_affinity ||
      !aff->node_affinity->required_during_scheduling_ignored_during_execution) {
    return nullptr;
  }
  return &*aff->node_affinity->required_during_scheduling_ignored_during_execution;
}

const std::vector<api::PreferredSchedulingTerm>* PreferredTerms(const api::Pod& pod) {
  const auto& aff = pod.spec.affinity;
  if (!aff || !aff->node_affinity ||
      aff->node_affinity->preferred_during_scheduling_ignored_during_execution.empty()) {
    return nullptr;
  }
  return &aff->node_affinity->preferred_during_scheduling_ignored_during_execution;
}

// labels.SelectorFromSet(nodeSelector).Matches(node labels).
bool MatchesNodeSelectorMap(const std::map<std::string, std::string>& sel,
                            const api::Labels& labels) {
  for (const auto& [k, v] : sel) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

int64_t ScoreTerms(const std::vector<api::PreferredSchedulingTerm>& terms, const api::Node& node) {
  int64_t count = 0;
  for (const auto& t : terms) {
    // Upstream NewPreferredSchedulingTerms drops zero-weight and empty terms.
    if (t.weight == 0 || IsEmptyTerm(t.preference)) continue;
    if (api::NodeSelectorTermMatches(t.preference, node.metadata.labels, node.metadata.name)) {
      count += t.weight;
    }
  }
  return count;
}

}  // namespace

framework::StatusOr<NodeAffinityArgs> ParseNodeAffinityArgs(framework::PluginArgs args) {
  NodeAffinityArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind, {"addedAffinity"}, &errs, &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  if (!has_content) return out;
  const YAML::Node aff = (*args)["addedAffinity"];
  const std::string aff_path = "addedAffinity";
  if (helper::CheckMap(aff, aff_path,
                       {"requiredDuringSchedulingIgnoredDuringExecution",
                        "preferredDuringSchedulingIgnoredDuringExecution"},
                       &errs)) {
    const YAML::Node req = aff["requiredDuringSchedulingIgnoredDuringExecution"];
    const std::string req_path = aff_path + ".requiredDuringSchedulingIgnoredDuringExecution";
    if (req.IsDefined() && !req.IsNull()) {
      api::NodeSelector ns;
      if (helper::ReadNodeSelector(req, req_path, &ns, &errs)) {
        for (size_t i = 0; i < ns.node_selector_terms.size(); ++i) {
          std::string err;
          if (!api::OkOrMessage(api::ValidateNodeSelectorTerm(ns.node_selector_terms[i]), &err)) {
            errs.Add(req_path + ".nodeSelectorTerms[" + std::to_string(i) + "]." + err);
          }
        }
        out.added_required = std::move(ns);
      }
    }
    const std::string pref_path = aff_path + ".preferredDuringSchedulingIgnoredDuringExecution";
    if (helper::ReadPreferredSchedulingTerms(aff["preferredDuringSchedulingIgnoredDuringExecution"],
                                             pref_path, &out.added_preferred, &errs)) {
      for (size_t i = 0; i < out.added_preferred.size(); ++i) {
        const auto& t = out.added_preferred[i];
        if (t.weight == 0 || IsEmptyTerm(t.preference)) continue;
        std::string err;
        if (!api::OkOrMessage(api::ValidateNodeSelectorTerm(t.preference), &err)) {
          errs.Add(pref_path + "[" + std::to_string(i) + "]." + err);
        }
      }
    }
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  return out;
}

bool MatchesRequiredNodeAffinity(const api::Pod& pod, const api::Node& node) {
  if (!MatchesNodeSelectorMap(pod.spec.node_selector, node.metadata.labels)) return false;
  if (const api::NodeSelector* req = RequiredSelector(pod)) {
    return api::NodeSelectorMatches(*req, node.metadata.labels, node.metadata.name);
  }
  return true;
}

bool NodeAffinity::MatchesAdded(const api::Node& node) const {
  return !args_.added_required ||
         api::NodeSelectorMatches(*args_.added_required, node.metadata.labels, node.metadata.name);
}

framework::Status NodeAffinity::PreFilter(framework::CycleState& /*state*/,
                                          const framework::PodInfo& pod,
                                          framework::PreFilterResult* result) {
  const api::Pod& p = pod.Pod();
  const api::NodeSelector* req = RequiredSelector(p);
  if (req == nullptr && !args_.added_required && p.spec.node_selector.empty()) {
    return framework::Status(framework::Code::kSkip);
  }
  if (req == nullptr || req->node_selector_terms.empty()) return framework::Status();

  // Affinity to specific node names (e.g. DaemonSet pods) narrows the nodes to evaluate.
  std::optional<std::set<std::string>> node_names;
  for (const auto& term : req->node_selector_terms) {
    std::optional<std::set<std::string>> term_names;
    for (const auto& r : term.match_fields) {
      if (r.key != kObjectNameField || r.op != "In") continue;
      std::set<std::string> s(r.values.begin(), r.values.end());
      if (!term_names) {
        term_names = std::move(s);
      } else {
        std::set<std::string> inter;
        std::set_intersection(term_names->begin(), term_names->end(), s.begin(), s.end(),
                              std::inserter(inter, inter.begin()));
        term_names = std::move(inter);
      }
    }
    // A term without a node-name requirement admits every node: terms are ORed.
    if (!term_names) return framework::Status();
    if (!node_names) node_names.emplace();
    node_names->insert(term_names->begin(), term_names->end());
  }
  if (node_names && node_names->empty()) {
    return framework::Status::UnschedulableAndUnresolvable(std::string(kErrReasonConflict));
  }
  if (node_names && result != nullptr) {
    result->all_nodes = false;
    result->node_names = std::move(*node_names);
  }
  return framework::Status();
}

framework::Status NodeAffinity::Filter(const framework::CycleState& /*state*/,
                                       const framework::PodInfo& pod,
                                       const framework::NodeInfo& node) {
  const api::Node* n = node.node();
  if (n == nullptr) return framework::Status::Error("node not found");
  if (!MatchesAdded(*n)) {
    return framework::Status::UnschedulableAndUnresolvable(std::string(kErrReasonEnforced));
  }
  if (!MatchesRequiredNodeAffinity(pod.Pod(), *n)) {
    return framework::Status::UnschedulableAndUnresolvable(std::string(kErrReasonPod));
  }
  return framework::Status();
}

framework::Status NodeAffinity::PreScore(framework::CycleState& /*state*/,
                                         const framework::PodInfo& pod,
                                         const std::vector<const framework::NodeInfo*>&) {
  const auto* terms = PreferredTerms(pod.Pod());
  if (terms == nullptr && args_.added_preferred.empty()) {
    return framework::Status(framework::Code::kSkip);
  }
  if (terms != nullptr) {
    for (size_t i = 0; i < terms->size(); ++i) {
      const auto& t = (*terms)[i];
      if (t.weight == 0 || IsEmptyTerm(t.preference)) continue;
      std::string err;
      if (!api::OkOrMessage(api::ValidateNodeSelectorTerm(t.preference), &err)) {
        return framework::Status::Error("[" + std::to_string(i) + "]." + err);
      }
    }
  }
  return framework::Status();
}

framework::Status NodeAffinity::Score(const framework::CycleState& /*state*/,
                                      const framework::PodInfo& pod,
                                      const framework::NodeInfo& node, int64_t* score) {
  const api::Node* n = node.node();
  if (n == nullptr) return framework::Status::Error("node not found");
  int64_t count = ScoreTerms(args_.added_preferred, *n);
  if (const auto* terms = PreferredTerms(pod.Pod())) count += ScoreTerms(*terms, *n);
  *score = count;
  return framework::Status();
}

framework::Status NodeAffinity::NormalizeScore(const framework::CycleState&,
                                               const framework::PodInfo&,
                                               const std::vector<const framework::NodeInfo*>&,
                                               std::vector<int64_t>& scores) {
  helper::DefaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/false, scores);
  return framework::Status();
}

std::vector<framework::ClusterEventWithHint> NodeAffinity::EventsToRegister() const {
  framework::ClusterEventWithHint e;
  e.event = {framework::EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel,
             "NodeAdd|NodeLabelChange"};
  // isSchedulableAfterNodeChange.
  e.hint = [this](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.new_node == nullptr) return framework::QueueingHint::kQueue;
    if (!MatchesAdded(*objs.new_node)) return framework::QueueingHint::kQueueSkip;
    if (!MatchesRequiredNodeAffinity(pod, *objs.new_node)) {
      return framework::QueueingHint::kQueueSkip;
    }
    if (objs.old_node == nullptr) return framework::QueueingHint::kQueue;
    // An update helps only if the node did not match before.
    return MatchesRequiredNodeAffinity(pod, *objs.old_node) ? framework::QueueingHint::kQueueSkip
                                                            : framework::QueueingHint::kQueue;
  };
  return {std::move(e)};
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> NodeAffinity::New(
    framework::PluginArgs args, framework::Handle& /*h*/) {
  auto parsed = ParseNodeAffinityArgs(args);
  if (!parsed.ok()) return parsed.status();
  return std::unique_ptr<framework::Plugin>(
      std::make_unique<NodeAffinity>(std::move(parsed.value())));
}

bool NodeAffinity::SameSignature(const framework::PodInfo& canonical,
                                 const framework::PodInfo& pod) const {
  const auto& a = canonical.pod->spec;
  const auto& b = pod.pod->spec;
  if (a.node_selector != b.node_selector) return false;
  static const std::optional<api::NodeAffinity> kNone;
  const auto& na = a.affinity ? a.affinity->node_affinity : kNone;
  const auto& nb = b.affinity ? b.affinity->node_affinity : kNone;
  return na == nb;
}

}  // namespace phalanx::plugins::nodeaffinity
