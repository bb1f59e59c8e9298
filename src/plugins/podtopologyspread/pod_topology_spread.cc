// PodTopologySpread args, factory and queueing hints (upstream plugin.go and
// ValidatePodTopologySpreadArgs).
#include "plugins/podtopologyspread/pod_topology_spread.h"

#include <yaml-cpp/yaml.h>

#include "plugins/helper/args.h"
#include "plugins/helper/validation.h"
#include "plugins/podtopologyspread/common.h"

namespace phalanx::plugins::podtopologyspread {

namespace {

using internal::Constraint;

constexpr std::string_view kArgsKind = "PodTopologySpreadArgs";

struct ParsedConstraint {
  api::TopologySpreadConstraint c;
  bool has_selector = false;
};

bool ParseConstraint(const YAML::Node& n, const std::string& p, ParsedConstraint* out,
                     helper::FieldErrors* errs) {
  if (!helper::CheckMap(n, p,
                        {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector",
                         "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"},
                        errs)) {
    if (n.IsDefined() && !n.IsNull()) return false;
    errs->TypeInvalid(p, "must be an object");
    return false;
  }
  api::TopologySpreadConstraint& c = out->c;
  c.when_unsatisfiable.clear();
  bool ok = true;
  int64_t max_skew = 0;
  ok &= helper::ReadInt(n["maxSkew"], p + ".maxSkew", &max_skew, errs);
  c.max_skew = static_cast<int32_t>(max_skew);
  ok &= helper::ReadString(n["topologyKey"], p + ".topologyKey", &c.topology_key, errs);
  ok &= helper::ReadString(n["whenUnsatisfiable"], p + ".whenUnsatisfiable", &c.when_unsatisfiable,
                           errs);
  const YAML::Node sel = n["labelSelector"];
  out->has_selector = sel.IsDefined() && !sel.IsNull();
  if (n["minDomains"].IsDefined() && !n["minDomains"].IsNull()) {
    int64_t md = 0;
    ok &= helper::ReadInt(n["minDomains"], p + ".minDomains", &md, errs);
    c.min_domains = static_cast<int32_t>(md);
  }
  ok &= helper::ReadString(n["nodeAffinityPolicy"], p + ".nodeAffinityPolicy",
                           &c.node_affinity_policy, errs);
  ok &= helper::ReadString(n["nodeTaintsPolicy"], p + ".nodeTaintsPolicy", &c.node_taints_policy,
                           errs);
  ok &=
      helper::ReadStringList(n["matchLabelKeys"], p + ".matchLabelKeys", &c.match_label_keys, errs);
  return ok;
}

// ValidatePodTopologySpreadArgs.
void Validate(const std::string& defaulting_type, const std::vector<ParsedConstraint>& cs,
              helper::FieldErrors* errs) {
  if (defaulting_type != "System" && defaulting_type != "List") {
    errs->NotSupported("defaultingType", defaulting_type, {"System", "List"});
  } else if (defaulting_type == "System" && !cs.empty()) {
    errs->Invalid("defaultingType", defaulting_type, "when .defaultConstraints are not empty");
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    const api::TopologySpreadConstraint& c = cs[i].c;
    const std::string p = "defaultConstraints[" + std::to_string(i) + "]";
    if (c.max_skew <= 0) {
      errs->Invalid(p + ".maxSkew", c.max_skew, "not in valid range (0, inf)");
    }
    if (c.topology_key.empty()) {
      errs->Required(p + ".topologyKey", "can not be empty");
    } else {
      for (const std::string& msg : helper::IsQualifiedName(c.topology_key)) {
        errs->Invalid(p + ".topologyKey", c.topology_key, msg);
      }
    }
    if (c.when_unsatisfiable.empty()) {
      errs->Required(p + ".whenUnsatisfiable", "can not be empty");
    } else if (c.when_unsatisfiable != internal::kDoNotSchedule &&
               c.when_unsatisfiable != internal::kScheduleAnyway) {
      errs->NotSupported(p + ".whenUnsatisfiable", c.when_unsatisfiable,
                         {internal::kDoNotSchedule, internal::kScheduleAnyway});
    }
    if (cs[i].has_selector) {
      errs->Add(p +
                ".labelSelector: Forbidden: constraint must not define a selector, as they "
                "deduced for each pod");
    }
    for (size_t j = 0; j < i; ++j) {
      const api::TopologySpreadConstraint& o = cs[j].c;
      if (c.topology_key == o.topology_key && c.when_unsatisfiable == o.when_unsatisfiable) {
        errs->Duplicate(p, "{" + c.topology_key + ", " + c.when_unsatisfiable + "}");
        break;
      }
    }
  }
}

bool SameTolerations(const std::vector<api::Toleration>& a, const std::vector<api::Toleration>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].value != b[i].value ||
        a[i].effect != b[i].effect || a[i].toleration_seconds != b[i].toleration_seconds) {
      return false;
    }
  }
  return true;
}

bool SameTaints(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].effect != b[i].effect) {
      return false;
    }
  }
  return true;
}

// involvedInTopologySpreading: `p` is bound or nominated and in `target`'s namespace.
bool Involved(const api::Pod& p, const api::Pod& target) {
  if (p.spec.node_name.empty() && p.status.nominated_node_name.empty()) return false;
  return p.metadata.namespace_ == target.metadata.namespace_;
}

bool AnyConstraintMatches(const std::vector<Constraint>& cs, const api::Labels& labels) {
  for (const Constraint& c : cs) {
    if (c.selector.Matches(labels)) return true;
  }
  return false;
}

// isSchedulableAfterPodLabelChange.
framework::QueueingHint AfterPodLabelChange(const api::Pod& original, const api::Pod& modified,
                                            const std::vector<Constraint>& cs) {
  if (original.metadata.labels == modified.metadata.labels) {
    return framework::QueueingHint::kQueueSkip;
  }
  for (const Constraint& c : cs) {
    // The change makes the pod match (or stop matching) a constraint.
    if (c.selector.Matches(original.metadata.labels) !=
        c.selector.Matches(modified.metadata.labels)) {
      return framework::QueueingHint::kQueue;
    }
  }
  return framework::QueueingHint::kQueueSkip;
}

// checkTopologyKeyLabelsChanged (a missing label reads as "").
bool TopologyKeyLabelsChanged(const api::Labels& a, const api::Labels& b,
                              const std::vector<Constraint>& cs) {
  for (const Constraint& c : cs) {
    auto ia = a.find(c.topology_key);
    auto ib = b.find(c.topology_key);
    const std::string_view va = ia == a.end() ? std::string_view() : std::string_view(ia->second);
    const std::string_view vb = ib == b.end() ? std::string_view() : std::string_view(ib->second);
    if (va != vb) return true;
  }
  return false;
}

}  // namespace

const std::vector<api::TopologySpreadConstraint>& SystemDefaultConstraints() {
  static const std::vector<api::TopologySpreadConstraint> kDefaults = [] {
    std::vector<api::TopologySpreadConstraint> v(2);
    v[0].topology_key = std::string(internal::kLabelHostname);
    v[0].when_unsatisfiable = std::string(internal::kScheduleAnyway);
    v[0].max_skew = 3;
    v[1].topology_key = std::string(internal::kLabelTopologyZone);
    v[1].when_unsatisfiable = std::string(internal::kScheduleAnyway);
    v[1].max_skew = 5;
    return v;
  }();
  return kDefaults;
}

framework::StatusOr<PodTopologySpreadArgs> ParsePodTopologySpreadArgs(framework::PluginArgs args) {
  PodTopologySpreadArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind, {"defaultConstraints", "defaultingType"}, &errs,
                            &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  std::string defaulting_type;
  std::vector<ParsedConstraint> parsed;
  if (has_content) {
    helper::ReadString((*args)["defaultingType"], "defaultingType", &defaulting_type, &errs);
    const YAML::Node list = (*args)["defaultConstraints"];
    if (list.IsDefined() && !list.IsNull()) {
      if (!list.IsSequence()) {
        errs.TypeInvalid("defaultConstraints", "must be a list");
      } else {
        for (size_t i = 0; i < list.size(); ++i) {
          ParsedConstraint pc;
          ParseConstraint(list[i], "defaultConstraints[" + std::to_string(i) + "]", &pc, &errs);
          parsed.push_back(std::move(pc));
        }
      }
    }
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  // SetDefaults_PodTopologySpreadArgs.
  if (defaulting_type.empty()) defaulting_type = "System";
  Validate(defaulting_type, parsed, &errs);
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  out.defaulting_type =
      defaulting_type == "System" ? DefaultingType::kSystem : DefaultingType::kList;
  for (auto& pc : parsed) out.default_constraints.push_back(std::move(pc.c));
  return out;
}

PodTopologySpread::PodTopologySpread(PodTopologySpreadArgs args, framework::Handle& handle)
    : handle_(&handle), default_constraints_(std::move(args.default_constraints)) {
  if (args.defaulting_type == DefaultingType::kSystem) {
    default_constraints_ = SystemDefaultConstraints();
    system_defaulted_ = true;
  }
}

std::vector<framework::ClusterEventWithHint> PodTopologySpread::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events(3);
  // Add: a new pod may change the spread; UpdatePodLabel: a pod may start or stop matching;
  // Delete: a matching pod left its domain.
  events[0].event = {framework::EventResource::kAssignedPod,
                     framework::kAdd | framework::kUpdatePodLabel | framework::kDelete,
                     "AssignedPodAdd|AssignedPodLabelChange|AssignedPodDelete"};
  events[0].hint = [this](const api::Pod& pod, const framework::EventObjects& objs) {
    using framework::QueueingHint;
    const api::Pod* original = objs.old_pod;
    const api::Pod* modified = objs.new_pod;
    if ((modified != nullptr && !Involved(*modified, pod)) ||
        (original != nullptr && !Involved(*original, pod))) {
      return QueueingHint::kQueueSkip;
    }
    auto cs = internal::PodConstraints(pod, default_constraints_, internal::kDoNotSchedule);
    if (!cs.ok()) return QueueingHint::kQueue;
    if (modified != nullptr && original != nullptr) {
      return AfterPodLabelChange(*original, *modified, cs.value());
    }
    if (modified != nullptr) {
      return AnyConstraintMatches(cs.value(), modified->metadata.labels) ? QueueingHint::kQueue
                                                                         : QueueingHint::kQueueSkip;
    }
    if (original == nullptr) return QueueingHint::kQueue;
    return AnyConstraintMatches(cs.value(), original->metadata.labels) ? QueueingHint::kQueue
                                                                       : QueueingHint::kQueueSkip;
  };
  // The pod itself (upstream TargetPod): a new toleration matters with nodeTaintsPolicy
  // Honor; a label change may change which pods its constraints count.
  events[1].event = {framework::EventResource::kUnscheduledPod,
                     framework::kUpdatePodTolerations | framework::kUpdatePodLabel,
                     "UnscheduledPodTolerationChange|UnscheduledPodLabelChange"};
  events[1].hint = [this](const api::Pod& pod, const framework::EventObjects& objs) {
    using framework::QueueingHint;
    if (objs.new_pod == nullptr || objs.old_pod == nullptr) return QueueingHint::kQueue;
    if (objs.new_pod->metadata.uid != pod.metadata.uid) return QueueingHint::kQueueSkip;
    auto cs = internal::PodConstraints(pod, default_constraints_, internal::kDoNotSchedule);
    if (!cs.ok()) return QueueingHint::kQueue;
    if (!SameTolerations(objs.old_pod->spec.tolerations, objs.new_pod->spec.tolerations)) {
      for (const Constraint& c : cs.value()) {
        if (c.honor_node_taints) return QueueingHint::kQueue;
      }
    }
    return AfterPodLabelChange(*objs.old_pod, *objs.new_pod, cs.value());
  };
  events[2].event = {framework::EventResource::kNode,
                     framework::kAdd | framework::kDelete | framework::kUpdateNodeLabel |
                         framework::kUpdateNodeTaint,
                     "NodeAdd|NodeDelete|NodeLabelChange|NodeTaintChange"};
  events[2].hint = [this](const api::Pod& pod, const framework::EventObjects& objs) {
    using framework::QueueingHint;
    const api::Node* original = objs.old_node;
    const api::Node* modified = objs.new_node;
    auto cs = internal::PodConstraints(pod, default_constraints_, internal::kDoNotSchedule);
    if (!cs.ok()) return QueueingHint::kQueue;
    const bool original_matching =
        original != nullptr && internal::NodeHasAllKeys(original->metadata.labels, cs.value());
    const bool modified_matching =
        modified != nullptr && internal::NodeHasAllKeys(modified->metadata.labels, cs.value());
    if (original != nullptr && modified != nullptr) {
      if (original_matching != modified_matching) return QueueingHint::kQueue;
      if (modified_matching && (TopologyKeyLabelsChanged(original->metadata.labels,
                                                         modified->metadata.labels, cs.value()) ||
                                !SameTaints(original->spec.taints, modified->spec.taints))) {
        return QueueingHint::kQueue;
      }
      return QueueingHint::kQueueSkip;
    }
    if (modified != nullptr) {
      return modified_matching ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
    }
    if (original != nullptr) {
      return original_matching ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
    }
    return QueueingHint::kQueue;
  };
  return events;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> PodTopologySpread::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto parsed = ParsePodTopologySpreadArgs(args);
  if (!parsed.ok()) return parsed.status();
  return std::unique_ptr<framework::Plugin>(
      std::make_unique<PodTopologySpread>(std::move(parsed.value()), h));
}

bool PodTopologySpread::SameSignature(const framework::PodInfo& canonical,
                                      const framework::PodInfo& pod) const {
  auto free = [this](const api::Pod& p) {
    if (!p.spec.topology_spread_constraints.empty()) return false;
    return default_constraints_.empty() || internal::DefaultSelector(p).Empty();
  };
  return free(*canonical.pod) && (&canonical == &pod || free(*pod.pod));
}

}  // namespace phalanx::plugins::podtopologyspread
