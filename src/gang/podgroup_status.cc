#include "gang/podgroup_status.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <vector>

#include "gang/subgroups.h"

namespace phalanx::gang {

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

namespace {

// The scheduling side of a gang's status: where its placement stands.
enum class Placement {
  kPlaced,      // minMember bound (or finished after running), every subgroup too
  kMissing,     // fewer than minMember members exist (`why` says which)
  kRejected,    // the last PodGroup cycle could not place it (`why`: its message)
  kInProgress,  // being placed, or its bindings are in flight
};

Placement PlacementOf(const gang::GangInfo& info, GangOutcome outcome, std::string_view message,
                      std::string* why) {
  const gang::PodGroupSpec& spec = *info.spec;
  const gang::GangCounts& c = info.counts;
  const int32_t min = spec.min_member;
  // Nested quorums (KAI subGroups, Volcano minTaskMember): the gang is placed only when
  // every subgroup is, and a status names the short subgroup (gang/subgroups.h).
  const api::Status sub_missing = gang::ShortSubGroup(spec, info.sub_group_pods, "exist");
  const api::Status sub_short = gang::ShortSubGroup(spec, info.sub_group_active, "placed");
  const int32_t finished = c.succeeded + c.failed;
  if ((c.bound >= min && sub_short.ok()) || (finished > 0 && c.bound + finished >= min)) {
    *why = std::to_string(c.bound + finished) + "/" + std::to_string(min) + " members bound";
    return Placement::kPlaced;
  }
  if (c.pods + finished < min || !sub_missing.ok()) {
    *why = c.pods < min ? std::to_string(c.pods) + "/" + std::to_string(min) +
                              " members exist, waiting for more"
                        : std::string(sub_missing.message()) + ", waiting for more";
    return Placement::kMissing;
  }
  const bool rejected =
      outcome == GangOutcome::kUnschedulable ||
      (outcome == GangOutcome::kNone && info.attempts > 0 && !info.last_reason.empty());
  if (rejected && (c.assumed + c.bound < min || !sub_short.ok())) {
    *why = std::string(outcome == GangOutcome::kUnschedulable ? message : info.last_reason);
    return Placement::kRejected;
  }
  return Placement::kInProgress;
}

// scheduler-plugins pkg/controllers/podgroup_controller.go Reconcile: Finished when
// minMember succeeded; Failed when one failed and failed + running + succeeded reach
// minMember; Running when running + succeeded do; else the scheduling phases.
void CoschedulingStatus(const gang::GangCounts& c, int32_t min, Placement p,
                        cluster::ClusterClient::PodGroupStatus* s) {
  if (c.succeeded >= min) {
    s->phase = "Finished";
  } else if (c.failed > 0 && c.failed + c.running + c.succeeded >= min) {
    s->phase = "Failed";
  } else if (c.running + c.succeeded >= min) {
    s->phase = "Running";
  } else if (p == Placement::kPlaced) {
    s->phase = "Scheduled";
  } else if (p == Placement::kInProgress) {
    s->phase = "Scheduling";
  } else {
    s->phase = "Pending";
  }
}

// Volcano pkg/scheduler/framework/session.go jobStatus: Running when allocated and
// succeeded tasks reach minMember, Pending (with an Unschedulable condition) otherwise,
// Inqueue while being placed.
void VolcanoStatus(Placement p, const std::string& why, cluster::ClusterClient::PodGroupStatus* s) {
  switch (p) {
    case Placement::kPlaced:
      s->phase = "Running";
      s->condition_type = "Scheduled";
      s->condition_reason = "Scheduled";
      break;
    case Placement::kMissing:
    case Placement::kRejected:
      s->phase = "Pending";
      s->condition_type = "Unschedulable";
      s->condition_reason = p == Placement::kMissing ? "NotEnoughTasks" : "NotEnoughResources";
      break;
    case Placement::kInProgress:
      s->phase = "Inqueue";
      return;
  }
  s->condition_message = why;
}

}  // namespace

std::optional<GangObject> GangObjectOf(const gang::PodGroupSpec& spec) {
  GangObject o;
  o.ns = spec.namespace_;
  o.name = spec.name;
  // spec.source: "<Kind> <ns>/<name> (<apiVersion>)[ <field path>]" (gang/dialects.cc
  // ObjectWhat), the object as the informer read it.
  const std::string& src = spec.source;
  const auto space = src.find(' ');
  const auto open = src.find(" (");
  const auto close = open == std::string::npos ? std::string::npos : src.find(')', open);
  if (space != std::string::npos && close != std::string::npos) {
    o.kind = src.substr(0, space);
    o.api_version = src.substr(open + 2, close - open - 2);
  }
  switch (spec.dialect) {
    case gang::Dialect::kCoscheduling:
    case gang::Dialect::kVolcano:
    case gang::Dialect::kKAI:
      o.kind = "PodGroup";
      break;
    case gang::Dialect::kWorkload:
      // A 1.35 Workload's pod group "<workload>/<podGroup>[/<replicaKey>]": the Workload.
      if (o.kind == "Workload") o.name = o.name.substr(0, o.name.find('/'));
      if (o.kind != "Workload") o.kind = "PodGroup";
      break;
    default:
      return std::nullopt;  // annotation-defined or derived gangs have no object of their own
  }
  if (o.api_version.find('/') == std::string::npos) {
    // No object read (a spec made in code): the dialect's current version.
    switch (spec.dialect) {
      case gang::Dialect::kCoscheduling:
        o.api_version = "scheduling.x-k8s.io/v1alpha1";
        break;
      case gang::Dialect::kVolcano:
        o.api_version = "scheduling.volcano.sh/v1beta1";
        break;
      case gang::Dialect::kKAI:
        o.api_version = "scheduling.run.ai/v2alpha2";
        break;
      default:
        o.api_version = "scheduling.k8s.io/v1alpha2";
        break;
    }
  }
  return o;
}

std::optional<PodGroupStatusWrite> ComputePodGroupStatus(const DefaultPodGroupManager& gangs,
                                                         const std::string& gang_key,
                                                         GangOutcome outcome,
                                                         std::string_view message,
                                                         const api::Pod* member) {
  // Called on every member binding and every rejected attempt: a gang without a status
  // of its own (annotation-defined, derived) is told from its spec alone (SummaryOf), and
  // the rest reads Info without the member list (a 1,000-pod gang made it O(n^2)).
  auto sum = gangs.SummaryOf(gang_key);
  if (!sum || !sum->spec || !sum->spec->invalid.empty()) return std::nullopt;
  PodGroupStatusWrite w;
  // Only PodGroup objects have a status of ours; a 1.35 Workload's pod groups have none.
  const auto obj = GangObjectOf(*sum->spec);
  if (!obj || obj->kind != "PodGroup") return std::nullopt;
  w.api_version = obj->api_version;
  auto info = gangs.Info(gang_key, /*with_members=*/false);
  if (!info || !info->spec || !info->spec->invalid.empty()) return std::nullopt;
  const gang::PodGroupSpec& spec = *info->spec;
  w.kind = "PodGroup";
  w.ns = spec.namespace_;
  w.name = spec.name;
  const gang::GangCounts& c = info->counts;
  auto& s = w.status;
  s.scheduled = c.bound + c.succeeded + c.failed;
  s.pending = c.pods - c.running;
  s.running = c.running;
  s.succeeded = c.succeeded;
  s.failed = c.failed;
  std::string why;
  const Placement p = PlacementOf(*info, outcome, message, &why);
  switch (spec.dialect) {
    case gang::Dialect::kCoscheduling:
      if (info->has_quorum) s.schedule_start_time = info->quorum_time;
      if (member) s.occupied_by = OccupiedBy(*member);
      CoschedulingStatus(c, spec.min_member, p, &s);
      break;
    case gang::Dialect::kVolcano:
      VolcanoStatus(p, why, &s);
      break;
    case gang::Dialect::kKAI:
      // KAI's scheduler sets UnschedulableOnNodePool (reason Unschedulable) on a gang it
      // cannot place and removes it once placed (v2alpha2 podgroup_types.go).
      if (p == Placement::kMissing || p == Placement::kRejected) {
        s.condition_type = "UnschedulableOnNodePool";
        s.condition_reason = "Unschedulable";
        s.condition_message = why;
      }
      break;
    default:
      s = cluster::ClusterClient::PodGroupStatus{};  // no counts: equal writes are skipped
      // KEP-5832 "PodGroup Status Lifecycle": PodGroupScheduled True once the gang is
      // bound, False with reason Unschedulable when a cycle rejects it; nothing while it
      // waits for members (its pods are gated at PreEnqueue, never attempted).
      if (p == Placement::kPlaced || p == Placement::kRejected) {
        s.condition_type = "PodGroupScheduled";
        s.condition_status = p == Placement::kPlaced ? "True" : "False";
        s.condition_reason = p == Placement::kPlaced ? "Scheduled" : "Unschedulable";
        s.condition_message = why;
      }
      break;
  }
  return w;
}

void WritePodGroupStatus(const DefaultPodGroupManager& gangs, framework::ClusterClient& client,
                         const std::string& gang_key, GangOutcome outcome, std::string_view message,
                         const api::Pod* member) {
  auto w = ComputePodGroupStatus(gangs, gang_key, outcome, message, member);
  if (w) client.UpdatePodGroupStatus(w->api_version, w->kind, w->ns, w->name, w->status);
}

bool OnlyStatusChanged(const api::Unstructured& a, const api::Unstructured& b) {
  if (a.metadata.labels != b.metadata.labels || a.metadata.annotations != b.metadata.annotations ||
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

}  // namespace phalanx::gang
