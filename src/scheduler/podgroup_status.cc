#include "scheduler/podgroup_status.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <vector>

#include "gang/subgroups.h"

namespace phalanx::scheduler {

namespace {

bool YamlEqual(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return true;
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence: {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!YamlEqual(a[i], b[i])) return false;
      }
      return true;
    }
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      for (auto it = a.begin(); it != a.end(); ++it) {
        const std::string k = it->first.as<std::string>("");
        const YAML::Node other = b[k];
        if (!other.IsDefined() || !YamlEqual(it->second, other)) return false;
      }
      return true;
    }
  }
  return false;
}

std::string OccupiedBy(const api::Pod& pod) {
  std::vector<std::string> refs;
  for (const auto& o : pod.metadata.owner_references) {
    refs.push_back(pod.metadata.namespace_ + "/" + o.name);
  }
  std::sort(refs.begin(), refs.end());
  std::string out;
  for (const auto& r : refs) out += (out.empty() ? "" : ",") + r;
  return out;
}

}  // namespace

std::optional<PodGroupStatusWrite> ComputePodGroupStatus(const gang::Manager& gangs,
                                                         const std::string& gang_key,
                                                         GangOutcome outcome,
                                                         std::string_view message,
                                                         const api::Pod* member) {
  // Called on every member binding: no member list copy (a 1,000-pod gang made it O(n^2)).
  auto info = gangs.Info(gang_key, /*with_members=*/false);
  if (!info || !info->spec || !info->spec->invalid.empty()) return std::nullopt;
  const gang::PodGroupSpec& spec = *info->spec;
  PodGroupStatusWrite w;
  // The object's own apiVersion, as recorded in spec.source "PodGroup ns/name (apiVersion)".
  std::string from_source;
  if (auto open = spec.source.rfind('('); open != std::string::npos && spec.source.back() == ')') {
    from_source = spec.source.substr(open + 1, spec.source.size() - open - 2);
  }
  switch (spec.dialect) {
    case gang::Dialect::kCoscheduling:
      w.api_version = from_source.empty() ? "scheduling.x-k8s.io/v1alpha1" : from_source;
      break;
    case gang::Dialect::kVolcano:
      w.api_version = from_source.empty() ? "scheduling.volcano.sh/v1beta1" : from_source;
      break;
    default: return std::nullopt;
  }
  w.kind = "PodGroup";
  w.ns = spec.namespace_;
  w.name = spec.name;
  const gang::GangCounts& c = info->counts;
  const int32_t min = spec.min_member;
  const bool failed = outcome == GangOutcome::kUnschedulable ||
                      (outcome == GangOutcome::kNone && info->attempts > 0 &&
                       !info->last_reason.empty());
  auto& s = w.status;
  s.scheduled = c.bound;
  if (info->has_quorum) s.schedule_start_time = info->quorum_time;
  if (member) s.occupied_by = OccupiedBy(*member);
  const bool volcano = spec.dialect == gang::Dialect::kVolcano;
  // Nested quorums (KAI subGroups, Volcano minTaskMember): the gang is Scheduled only when
  // every subgroup is, and a status names the short subgroup (gang/subgroups.h).
  const std::string sub_missing = gang::ShortSubGroup(spec, info->sub_group_pods, "exist");
  const std::string sub_short = gang::ShortSubGroup(spec, info->sub_group_active, "placed");
  if (c.bound >= min && sub_short.empty()) {
    s.phase = volcano ? "Running" : "Scheduled";
    s.condition_type = "Scheduled";
    s.condition_reason = "Scheduled";
    s.condition_message =
        std::to_string(c.bound) + "/" + std::to_string(min) + " members bound";
  } else if (c.pods < min || !sub_missing.empty()) {
    s.phase = "Pending";
    s.condition_type = "Unschedulable";
    s.condition_reason = "NotEnoughTasks";
    s.condition_message = c.pods < min ? std::to_string(c.pods) + "/" + std::to_string(min) +
                                             " members exist, waiting for more"
                                       : sub_missing + ", waiting for more";
  } else if (failed && (c.assumed + c.bound < min || !sub_short.empty())) {
    s.phase = "Pending";
    s.condition_type = "Unschedulable";
    s.condition_reason = "NotEnoughResources";
    s.condition_message =
        std::string(outcome == GangOutcome::kUnschedulable ? message : info->last_reason);
  } else {
    s.phase = volcano ? "Inqueue" : "Scheduling";
  }
  return w;
}

void WritePodGroupStatus(const gang::Manager& gangs, framework::ClusterClient& client,
                         const std::string& gang_key, GangOutcome outcome,
                         std::string_view message, const api::Pod* member) {
  auto w = ComputePodGroupStatus(gangs, gang_key, outcome, message, member);
  if (w) client.UpdatePodGroupStatus(w->api_version, w->kind, w->ns, w->name, w->status);
}

bool OnlyStatusChanged(const api::Unstructured& a, const api::Unstructured& b) {
  if (a.metadata.labels != b.metadata.labels ||
      a.metadata.annotations != b.metadata.annotations ||
      a.metadata.owner_references.size() != b.metadata.owner_references.size() ||
      a.metadata.deletion_timestamp != b.metadata.deletion_timestamp) {
    return false;
  }
  if (!a.object || !b.object) return false;
  const YAML::Node& x = *a.object;
  const YAML::Node& y = *b.object;
  if (!x.IsMap() || !y.IsMap()) return false;
  auto compare_from = [](const YAML::Node& p, const YAML::Node& q) {
    for (auto it = p.begin(); it != p.end(); ++it) {
      const std::string k = it->first.as<std::string>("");
      if (k == "status" || k == "metadata") continue;
      const YAML::Node other = q[k];
      if (!other.IsDefined() || !YamlEqual(it->second, other)) return false;
    }
    return true;
  };
  return compare_from(x, y) && compare_from(y, x);
}

}  // namespace phalanx::scheduler
