// InterPodAffinity args, factory and queueing hints (upstream plugin.go).
#include "plugins/interpodaffinity/interpod_affinity.h"

#include <yaml-cpp/yaml.h>

#include "plugins/helper/args.h"
#include "plugins/interpodaffinity/terms.h"

namespace phalanx::plugins::interpodaffinity {

namespace {

constexpr std::string_view kArgsKind = "InterPodAffinityArgs";

bool ReadBool(const YAML::Node& n, const std::string& path, bool* out, helper::FieldErrors* errs) {
  if (!n.IsDefined() || n.IsNull()) return true;
  if (n.IsScalar() && n.Tag() != "!") {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") {
      *out = true;
      return true;
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      *out = false;
      return true;
    }
    errs->Invalid(path, s, "must be a boolean");
    return false;
  }
  errs->TypeInvalid(path, "must be a boolean");
  return false;
}

// `pod` matches every term of `owner` (false for no terms); namespace labels empty
// (upstream podMatchesAllAffinityTerms on unmerged terms, as the hints use them).
bool MatchesAllTerms(const std::vector<api::PodAffinityTerm>* terms, const api::Pod& owner,
                     const api::Pod& pod) {
  static const api::Labels kNoLabels;
  if (terms == nullptr || terms->empty()) return false;
  for (const auto& t : *terms) {
    if (!internal::TermMatches(t, owner, pod, kNoLabels)) return false;
  }
  return true;
}

bool MatchesAnyTerm(const std::vector<api::PodAffinityTerm>* terms, const api::Pod& owner,
                    const api::Pod& pod) {
  static const api::Labels kNoLabels;
  if (terms == nullptr) return false;
  for (const auto& t : *terms) {
    if (internal::TermMatches(t, owner, pod, kNoLabels)) return true;
  }
  return false;
}

bool Unassigned(const api::Pod* p) {
  return p != nullptr && p->spec.node_name.empty() && p->status.nominated_node_name.empty();
}

// isSchedulableAfterAssignedPodChange.
framework::QueueingHint AfterAssignedPodChange(const api::Pod& pod,
                                               const framework::EventObjects& objs) {
  using framework::QueueingHint;
  const api::Pod* original = objs.old_pod;
  const api::Pod* modified = objs.new_pod;
  // Changes of nodeName / nominatedNodeName arrive as Add/Delete events.
  if (Unassigned(modified) || Unassigned(original)) return QueueingHint::kQueueSkip;
  if (!internal::ParseErrors(pod).IsSuccess()) return QueueingHint::kQueue;
  const auto* terms = internal::RequiredAffinityTerms(pod);
  const auto* anti_terms = internal::RequiredAntiAffinityTerms(pod);
  if (modified != nullptr && original != nullptr) {
    // One existing pod must satisfy all affinity terms of the incoming pod.
    if (!MatchesAllTerms(terms, pod, *original) && MatchesAllTerms(terms, pod, *modified)) {
      return QueueingHint::kQueue;
    }
    if (MatchesAnyTerm(anti_terms, pod, *original) && !MatchesAnyTerm(anti_terms, pod, *modified)) {
      return QueueingHint::kQueue;
    }
    return QueueingHint::kQueueSkip;
  }
  if (modified != nullptr) {
    return MatchesAllTerms(terms, pod, *modified) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
  }
  if (original == nullptr) return QueueingHint::kQueue;
  // Deleted: it matched the pod's anti-affinity, or the pod matched its anti-affinity.
  if (MatchesAnyTerm(anti_terms, pod, *original)) return QueueingHint::kQueue;
  if (MatchesAnyTerm(internal::RequiredAntiAffinityTerms(*original), *original, pod)) {
    return QueueingHint::kQueue;
  }
  return QueueingHint::kQueueSkip;
}

// isSchedulableAfterNodeChange.
framework::QueueingHint AfterNodeChange(const api::Pod& pod, const framework::EventObjects& objs) {
  using framework::QueueingHint;
  const api::Node* original = objs.old_node;
  const api::Node* modified = objs.new_node;
  if (modified == nullptr) return QueueingHint::kQueue;
  if (!internal::ParseErrors(pod).IsSuccess()) return QueueingHint::kQueue;
  if (const auto* terms = internal::RequiredAffinityTerms(pod)) {
    for (const auto& t : *terms) {
      const std::string* mv = internal::NodeLabel(*modified, t.topology_key);
      if (original == nullptr) {
        // A new node with the affinity topology key.
        if (mv != nullptr) return QueueingHint::kQueue;
        continue;
      }
      const std::string* ov = internal::NodeLabel(*original, t.topology_key);
      // The node gained the topology key, or moved to another domain.
      if (ov == nullptr && mv != nullptr) return QueueingHint::kQueue;
      if (ov != nullptr && mv != nullptr && *ov != *mv) return QueueingHint::kQueue;
    }
  }
  if (const auto* terms = internal::RequiredAntiAffinityTerms(pod)) {
    for (const auto& t : *terms) {
      // Any new node may be outside every hated domain (or lack the key).
      if (original == nullptr) return QueueingHint::kQueue;
      const std::string* ov = internal::NodeLabel(*original, t.topology_key);
      const std::string* mv = internal::NodeLabel(*modified, t.topology_key);
      // The node lost the topology key, or moved to another domain.
      if (ov != nullptr && mv == nullptr) return QueueingHint::kQueue;
      if (ov != nullptr && mv != nullptr && *ov != *mv) return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kQueueSkip;
}

}  // namespace

framework::StatusOr<InterPodAffinityArgs> ParseInterPodAffinityArgs(framework::PluginArgs args) {
  InterPodAffinityArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind,
                            {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}, &errs,
                            &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  if (has_content) {
    int64_t weight = out.hard_pod_affinity_weight;
    if (helper::ReadInt((*args)["hardPodAffinityWeight"], "hardPodAffinityWeight", &weight,
                        &errs)) {
      // validateHardPodAffinityWeight.
      if (weight < 0 || weight > 100) {
        errs.Invalid("hardPodAffinityWeight", weight, "not in valid range [0, 100]");
      } else {
        out.hard_pod_affinity_weight = static_cast<int32_t>(weight);
      }
    }
    ReadBool((*args)["ignorePreferredTermsOfExistingPods"], "ignorePreferredTermsOfExistingPods",
             &out.ignore_preferred_terms_of_existing_pods, &errs);
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  return out;
}

std::vector<framework::ClusterEventWithHint> InterPodAffinity::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events(3);
  // Delete: a pod may have been rejected for violating an existing pod's anti-affinity.
  // UpdatePodLabel: a label change may stop (anti-)matching. Add: a pod may satisfy the
  // pod's affinity.
  events[0].event = {framework::EventResource::kAssignedPod,
                     framework::kAdd | framework::kUpdatePodLabel | framework::kDelete,
                     "AssignedPodAdd|AssignedPodLabelChange|AssignedPodDelete"};
  events[0].hint = AfterAssignedPodChange;
  // The pod's own label change (upstream TargetPod/UpdatePodLabel): existing pods'
  // anti-affinity may no longer match it. Such events reach only the updated pod.
  events[1].event = {framework::EventResource::kUnscheduledPod, framework::kUpdatePodLabel,
                     "UnscheduledPodLabelChange"};
  events[1].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.new_pod == nullptr) return framework::QueueingHint::kQueue;
    return objs.new_pod->metadata.uid == pod.metadata.uid ? framework::QueueingHint::kQueue
                                                          : framework::QueueingHint::kQueueSkip;
  };
  events[2].event = {framework::EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel,
                     "NodeAdd|NodeLabelChange"};
  events[2].hint = AfterNodeChange;
  return events;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> InterPodAffinity::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto parsed = ParseInterPodAffinityArgs(args);
  if (!parsed.ok()) return parsed.status();
  auto pl = std::make_unique<InterPodAffinity>(parsed.value(), h);
  if (h.HasNamespaces()) pl->SetNamespaceLister(std::make_shared<HandleNamespaceLister>(h));
  return std::unique_ptr<framework::Plugin>(std::move(pl));
}

bool InterPodAffinity::SameSignature(const framework::PodInfo& canonical,
                                     const framework::PodInfo& pod) const {
  if (canonical.has_affinity || pod.has_affinity) return false;
  if (&canonical == &pod) return true;
  const framework::NodeInfoLister& snapshot = handle_->SnapshotSharedLister();
  if (snapshot.HavePodsWithAffinityList().empty() &&
      snapshot.HavePodsWithRequiredAntiAffinityList().empty()) {
    return true;
  }
  return canonical.pod->metadata.namespace_ == pod.pod->metadata.namespace_ &&
         canonical.pod->metadata.labels == pod.pod->metadata.labels;
}

}  // namespace phalanx::plugins::interpodaffinity
