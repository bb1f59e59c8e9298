// Gang dialect adapters. Facts carried over from each project (see dialects.h for the
// precedence between them):
//
// scheduler-plugins Coscheduling (pkg/coscheduling, kep/42-podgroup-coscheduling):
//   PodGroup scheduling.x-k8s.io/v1alpha1 {spec.minMember, spec.minResources,
//   spec.scheduleTimeoutSeconds}; pods join with label scheduling.x-k8s.io/pod-group. The
//   older API group scheduling.sigs.k8s.io used label pod-group.scheduling.sigs.k8s.io.
//   Quorum counts running + waiting (assumed) pods -> MatchPolicy::kWaitingAndRunning.
// Koordinator (apis/extension/coscheduling.go, core/gang.go, proposal 20220901):
//   pod annotations gang.scheduling.koordinator.sh/{name,min-available,total-number,mode,
//   waiting-time,groups,match-policy}; legacy pod-group.scheduling.sigs.k8s.io/{name,
//   min-available} (Koordinator reads min-available from labels, we accept both) and the
//   alias pod-group.scheduling.sigs.k8s.io/match-policy. The Coscheduling PodGroup CRD may
//   carry total-number/mode/groups/match-policy as annotations (its timeout stays
//   spec.scheduleTimeoutSeconds). Defaults: mode Strict, match-policy once-satisfied,
//   total-number = min-available (and never below it). Gang names must be RFC 1123
//   subdomains; groups is a JSON array of "<namespace>/<name>" gang ids. Koordinator itself
//   falls back to defaults on bad values; here they make the spec invalid (clear reason).
// Upstream Workload API (KEP-4671, KEP-5832; k8s.io/api/scheduling):
//   1.35 v1alpha1 Workload spec.podGroups[]{name, policy{basic{} | gang{minCount}}}, pods
//   spec.workloadRef{name, podGroup, podGroupReplicaKey}. 1.36 v1alpha2 Workload
//   spec.podGroupTemplates[]{name, schedulingPolicy{basic|gang{minCount}},
//   schedulingConstraints{topology[]{key}}} and a standalone PodGroup
//   {spec.podGroupTemplateRef{workload{workloadName, podGroupTemplateName}},
//   spec.schedulingPolicy, spec.schedulingConstraints}; pods spec.schedulingGroup
//   .podGroupName. The 1.37 head (v1alpha3, v1beta1) renames the template reference
//   (spec.workloadRef{workloadName, templateName}) and adds CompositePodGroup; every
//   version's fields are listed at "Upstream Workload API" below. Upstream uses a fixed
//   5 minute gang timeout.
// Volcano (volcano.sh/apis scheduling/v1beta1): PodGroup {spec.minMember,
//   spec.minTaskMember{task: n}, spec.queue (default "default"), spec.priorityClassName,
//   spec.minResources, spec.networkTopology{mode, highestTierAllowed, highestTierName}};
//   pods annotate scheduling.k8s.io/group-name (or the alias
//   scheduling.volcano.sh/group-name), and name their task with volcano.sh/task-spec
//   (minTaskMember quorums: subgroups.h).
// KAI (pkg/apis/scheduling/v2alpha2): PodGroup {spec.minMember (>= 1, optional when
//   minSubGroup is used), spec.minSubGroup, spec.queue, spec.priorityClassName,
//   spec.topologyConstraint{requiredTopologyLevel, preferredTopologyLevel, topology} (the
//   topology names a cluster-scoped kai.scheduler/v1alpha1 Topology{spec.levels[].nodeLabel}),
//   spec.subGroups[]{name, minMember, minSubGroup, parent, topologyConstraint}}; pods
//   annotate pod-group-name and name their subgroup with label kai.scheduler/subgroup-name
//   (quorums: subgroups.h; per-subgroup topology: podgroup.h SubGroup::topology);
//   queue label kai.scheduler/queue.
// PodGrouper (KAI pkg/podgrouper): gangs derived from a pod's top owner. Min-member
//   override annotation kai.scheduler/batch-min-member on the owner; PyTorchJob/MPIJob
//   spec.runPolicy.schedulingPolicy.minAvailable wins; PyTorchJob elastic
//   spec.elasticPolicy.minReplicas; MPIJob launcherCreationPolicy WaitForWorkersReady
//   leaves the launcher out of the quorum; JobSet startupPolicyOrder InOrder creates one
//   replicatedJob at a time, so only the first one forms the quorum.
#include "gang/dialects.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "api/field_errors.h"
#include "api/pod_resources.h"
#include "api/quantity.h"
#include "gang/dialects_parse.h"

namespace phalanx::gang {

const char* DialectName(Dialect d) {
  switch (d) {
    case Dialect::kCoscheduling:
      return "Coscheduling";
    case Dialect::kWorkload:
      return "Workload";
    case Dialect::kKoordinator:
      return "Koordinator";
    case Dialect::kVolcano:
      return "Volcano";
    case Dialect::kKAI:
      return "KAI";
    case Dialect::kDerived:
      return "PodGrouper";
  }
  return "Unknown";
}

namespace {

using Annotations = std::map<std::string, std::string>;

// Pod labels / annotations.
constexpr std::string_view kCoschedLabel = "scheduling.x-k8s.io/pod-group";
constexpr std::string_view kCoschedLegacyLabel = "pod-group.scheduling.sigs.k8s.io";
constexpr std::string_view kKoordPrefix = "gang.scheduling.koordinator.sh/";
constexpr std::string_view kKoordName = "gang.scheduling.koordinator.sh/name";
constexpr std::string_view kKoordMin = "gang.scheduling.koordinator.sh/min-available";
constexpr std::string_view kKoordTotal = "gang.scheduling.koordinator.sh/total-number";
constexpr std::string_view kKoordMode = "gang.scheduling.koordinator.sh/mode";
constexpr std::string_view kKoordWait = "gang.scheduling.koordinator.sh/waiting-time";
constexpr std::string_view kKoordGroups = "gang.scheduling.koordinator.sh/groups";
constexpr std::string_view kKoordMatch = "gang.scheduling.koordinator.sh/match-policy";
constexpr std::string_view kKoordNetworkTopologySpec =
    "gang.scheduling.koordinator.sh/network-topology-spec";
constexpr std::string_view kKoordNetworkTopologyAware =
    "gang.scheduling.koordinator.sh/networkTopologyAware";
constexpr std::string_view kLegacyName = "pod-group.scheduling.sigs.k8s.io/name";
constexpr std::string_view kLegacyMin = "pod-group.scheduling.sigs.k8s.io/min-available";
constexpr std::string_view kLegacyMatch = "pod-group.scheduling.sigs.k8s.io/match-policy";
constexpr std::string_view kVolcanoAnn = "scheduling.k8s.io/group-name";
constexpr std::string_view kVolcanoAnnAlias = "scheduling.volcano.sh/group-name";
constexpr std::string_view kKaiAnn = "pod-group-name";
constexpr std::string_view kKaiQueueLabel = "kai.scheduler/queue";
constexpr std::string_view kKaiMinOverride = "kai.scheduler/batch-min-member";
// KAI docs: "kai.scheduler/staleness-grace-period: \"1m\"" on the PodGroup, a Go duration;
// negative: never evict the stale gang (staleness.h).
constexpr std::string_view kKaiStalenessGrace = "kai.scheduler/staleness-grace-period";
// KAI topology annotations on a workload (docs/topology/README.md).
constexpr std::string_view kKaiTopologyAnn = "kai.scheduler/topology";
constexpr std::string_view kKaiTopologyRequiredAnn = "kai.scheduler/topology-required-placement";
constexpr std::string_view kKaiTopologyPreferredAnn = "kai.scheduler/topology-preferred-placement";
// Kueue TAS annotations on a podset's pod template (kueue apis/kueue/v1beta2
// topology_types.go; site/content/en/docs/concepts/topology_aware_scheduling.md).
constexpr std::string_view kKueueRequiredTopology = "kueue.x-k8s.io/podset-required-topology";
constexpr std::string_view kKueuePreferredTopology = "kueue.x-k8s.io/podset-preferred-topology";
constexpr std::string_view kKueueSliceRequiredTopology =
    "kueue.x-k8s.io/podset-slice-required-topology";
constexpr std::string_view kKueueSliceSize = "kueue.x-k8s.io/podset-slice-size";
constexpr std::string_view kKueuePodSetGroupName = "kueue.x-k8s.io/podset-group-name";
constexpr std::string_view kKueueUnconstrainedTopology =
    "kueue.x-k8s.io/podset-unconstrained-topology";
// Labels the JobSet and LeaderWorkerSet controllers put on their pods.
constexpr std::string_view kJobSetReplicatedJobLabel = "jobset.sigs.k8s.io/replicatedjob-name";
constexpr std::string_view kLwsGroupIndexLabel = "leaderworkerset.sigs.k8s.io/group-index";
constexpr std::string_view kLwsNameLabel = "leaderworkerset.sigs.k8s.io/name";

// API groups.
constexpr std::string_view kGroupCosched = "scheduling.x-k8s.io";
constexpr std::string_view kGroupCoschedLegacy = "scheduling.sigs.k8s.io";
constexpr std::string_view kGroupUpstream = "scheduling.k8s.io";
constexpr std::string_view kGroupVolcano = "scheduling.volcano.sh";
constexpr std::string_view kGroupKAI = "scheduling.run.ai";
constexpr std::string_view kGroupKoordScheduling = "scheduling.koordinator.sh";

constexpr int64_t kUpstreamGangTimeoutNs = 5LL * 60 * api::kNanosPerSecond;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

const std::string* Find(const Annotations& m, std::string_view key) {
  // Pods and objects carry few labels/annotations: a scan compares without building a
  // std::string key (the map's comparator is not transparent).
  if (m.size() <= 8) {
    for (const auto& [k, v] : m) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  auto it = m.find(std::string(key));
  return it == m.end() ? nullptr : &it->second;
}

// Non-empty value or nullptr.
const std::string* FindNonEmpty(const Annotations& m, std::string_view key) {
  const std::string* v = Find(m, key);
  return v != nullptr && !v->empty() ? v : nullptr;
}

bool HasKoordAnnotations(const Annotations& m) {
  auto it = m.lower_bound(std::string(kKoordPrefix));
  return it != m.end() && std::string_view(it->first).starts_with(kKoordPrefix);
}

// Field errors of one object, made with its "<what>"; the spec's `invalid` is
// errs.Summary(): "<what>: <e1>; <e2>".
using Errors = api::FieldErrors;

// ---- YAML access (read only: never operator[] on a non-const node) ----

bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

YAML::Node Child(const YAML::Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& cn = n;
  return cn[key];
}

std::string Str(const YAML::Node& parent, const char* key) {
  const YAML::Node n = Child(parent, key);
  return Present(n) && n.IsScalar() ? n.Scalar() : std::string();
}

enum class Got { kAbsent, kOk, kBad };

Got Int(const YAML::Node& n, int64_t* out) {
  if (!Present(n)) return Got::kAbsent;
  if (!n.IsScalar() || !detail::ParseInt64(n.Scalar(), out)) return Got::kBad;
  return Got::kOk;
}

std::string Describe(const YAML::Node& n) {
  if (n.IsScalar()) return Quote(n.Scalar());
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "an object";
  return "null";
}

// A quorum count field: integer in [min_allowed, 2^31-1]. Returns false (and records why)
// when present but bad; *present tells whether it was set.
bool CountField(const YAML::Node& parent, const char* key, const std::string& path,
                int64_t min_allowed, int32_t* out, bool* present, Errors* errs) {
  int64_t v = 0;
  const YAML::Node n = Child(parent, key);
  switch (Int(n, &v)) {
    case Got::kAbsent:
      *present = false;
      return true;
    case Got::kBad:
      *present = true;
      errs->Add(path, "must be an integer, got " + Describe(n));
      return false;
    case Got::kOk:
      break;
  }
  *present = true;
  if (v < min_allowed) {
    errs->Add(path, "must be >= " + std::to_string(min_allowed) + ", got " + std::to_string(v));
    return false;
  }
  if (v > kInt32Max) {
    errs->Add(path, "must fit in int32, got " + std::to_string(v));
    return false;
  }
  *out = static_cast<int32_t>(v);
  return true;
}

// The minMember of PodGroups: required, >= 1.
void MinMember(const YAML::Node& spec, const char* key, const std::string& path, PodGroupSpec* s,
               Errors* errs) {
  bool present = false;
  int32_t v = 0;
  if (!CountField(spec, key, path, 1, &v, &present, errs)) return;
  if (!present) {
    errs->Add(path, "required, must be >= 1");
    return;
  }
  s->min_member = v;
}

void MinResources(const YAML::Node& spec, const std::string& path, PodGroupSpec* s, Errors* errs) {
  const YAML::Node n = Child(spec, "minResources");
  if (!Present(n)) return;
  if (!n.IsMap()) {
    errs->Add(path, "must be a map of resource name to quantity, got " + Describe(n));
    return;
  }
  api::ResourceList list;
  bool ok = true;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    const YAML::Node v = it->second;
    std::string field = path;
    field.append(".").append(name);
    if (!v.IsScalar()) {
      errs->Add(field, "must be a quantity, got " + Describe(v));
      ok = false;
      continue;
    }
    api::StatusOr<api::Quantity> q = api::Quantity::Parse(v.Scalar());
    if (!q.ok()) {
      errs->Add(field, std::string(q.status().message()));
      ok = false;
      continue;
    }
    if (q->IsNegative()) {
      errs->Add(field, "must be greater than or equal to 0, got " + Quote(v.Scalar()));
      ok = false;
      continue;
    }
    list[name] = *q;
  }
  if (ok && !list.empty()) {
    s->min_resources = api::ResourceListToResource(list);
    s->has_min_resources = true;
  }
}

// spec.scheduleTimeoutSeconds: > 0 sets the timeout, 0 keeps the scheduler default
// (scheduler-plugins and Koordinator fall back to their default for non-positive values;
// a negative value is reported here).
void TimeoutSeconds(const YAML::Node& spec, const std::string& path, PodGroupSpec* s,
                    Errors* errs) {
  int64_t v = 0;
  const YAML::Node n = Child(spec, "scheduleTimeoutSeconds");
  switch (Int(n, &v)) {
    case Got::kAbsent:
      return;
    case Got::kBad:
      errs->Add(path, "must be an integer number of seconds, got " + Describe(n));
      return;
    case Got::kOk:
      break;
  }
  if (v < 0 || v > kInt32Max) {
    errs->Add(path, "must be between 0 and 2147483647, got " + std::to_string(v));
    return;
  }
  if (v > 0) s->schedule_timeout_ns = v * api::kNanosPerSecond;
}

bool ValidGangId(std::string_view id) {
  const size_t slash = id.find('/');
  return slash != std::string_view::npos && slash > 0 && slash + 1 < id.size() &&
         id.find('/', slash + 1) == std::string_view::npos;
}

// Koordinator options shared by pod annotations and PodGroup annotations. `where` prefixes
// field names ("annotation " for pods, "metadata.annotations." for PodGroups).
void ApplyKoordOptions(const Annotations& ann, const std::string& where, bool waiting_time,
                       PodGroupSpec* s, Errors* errs) {
  // total-number: default (and floor) min-available.
  s->total_member = s->min_member;
  if (const std::string* v = FindNonEmpty(ann, kKoordTotal)) {
    int64_t n = 0;
    if (!detail::ParseInt64(*v, &n)) {
      errs->Add(where + std::string(kKoordTotal), "must be an integer, got " + Quote(*v));
    } else if (n < 0 || n > kInt32Max) {
      errs->Add(where + std::string(kKoordTotal),
                "must be between 0 and 2147483647, got " + std::to_string(n));
    } else if (n > s->min_member) {
      s->total_member = static_cast<int32_t>(n);
    }
  }
  if (const std::string* v = FindNonEmpty(ann, kKoordMode)) {
    if (*v == "Strict") {
      s->mode = GangMode::kStrict;
    } else if (*v == "NonStrict") {
      s->mode = GangMode::kNonStrict;
    } else {
      errs->Add(where + std::string(kKoordMode), "must be Strict or NonStrict, got " + Quote(*v));
    }
  }
  std::string_view match_key = kKoordMatch;
  const std::string* match = FindNonEmpty(ann, kKoordMatch);
  if (match == nullptr) {
    match = FindNonEmpty(ann, kLegacyMatch);
    match_key = kLegacyMatch;
  }
  if (match != nullptr) {
    if (*match == "once-satisfied") {
      s->match_policy = MatchPolicy::kOnceSatisfied;
    } else if (*match == "only-waiting") {
      s->match_policy = MatchPolicy::kOnlyWaiting;
    } else if (*match == "waiting-and-running") {
      s->match_policy = MatchPolicy::kWaitingAndRunning;
    } else {
      errs->Add(
          where + std::string(match_key),
          "must be one of once-satisfied, only-waiting, waiting-and-running, got " + Quote(*match));
    }
  }
  if (waiting_time) {
    if (const std::string* v = FindNonEmpty(ann, kKoordWait)) {
      api::StatusOr<int64_t> parsed = detail::ParseGoDuration(*v);
      const int64_t ns = parsed.ok() ? *parsed : 0;
      if (!parsed.ok()) {
        errs->Add(where + std::string(kKoordWait), std::string(parsed.status().message()));
      } else if (ns < 0) {
        errs->Add(where + std::string(kKoordWait), "must not be negative, got " + Quote(*v));
      } else if (ns > 0) {
        s->schedule_timeout_ns = ns;  // "0s": the scheduler default
      }
    }
  }
  if (const std::string* v = FindNonEmpty(ann, kKoordGroups)) {
    api::StatusOr<std::vector<std::string>> parsed = detail::ParseJsonStringArray(*v);
    if (!parsed.ok()) {
      errs->Add(where + std::string(kKoordGroups),
                std::string(parsed.status().message()) + ", got " + Quote(*v));
    } else {
      std::vector<std::string>& ids = *parsed;
      bool ok = true;
      for (const auto& id : ids) {
        if (!ValidGangId(id)) {
          errs->Add(where + std::string(kKoordGroups),
                    "entries must be gang ids \"<namespace>/<name>\", got " + Quote(id));
          ok = false;
          break;
        }
      }
      if (ok && !ids.empty()) {
        ids.push_back(s->key);  // the group always includes this gang
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        if (ids.size() > 1) s->gang_group = std::move(ids);
      }
    }
  }
}

// Koordinator's network-topology gather rules (apis/extension/network_topology.go
// GetNetworkTopologySpec: annotation gang.scheduling.koordinator.sh/network-topology-spec,
// JSON {"gatherStrategy": [{"layer", "strategy": MustGather | PreferGather,
// "podCountMultiple"}]}) into the spec's topology, against the ClusterNetworkTopology
// "default" (pkg/scheduler/frameworkext/networktopology/tree_manager.go). The
// proposal's earlier key gang.scheduling.koordinator.sh/networkTopologyAware is refused by
// name (koord-scheduler does not read it). `where` prefixes field names.
void ApplyKoordNetworkTopology(const Annotations& ann, const std::string& where, PodGroupSpec* s,
                               Errors* errs) {
  if (Find(ann, kKoordNetworkTopologyAware) != nullptr) {
    errs->Add(where + std::string(kKoordNetworkTopologyAware),
              "not read by Koordinator (apis/extension/network_topology.go reads " +
                  std::string(kKoordNetworkTopologySpec) + "): rename it");
  }
  const std::string* v = FindNonEmpty(ann, kKoordNetworkTopologySpec);
  if (v == nullptr) return;
  const std::string field = where + std::string(kKoordNetworkTopologySpec);
  nlohmann::json doc = nlohmann::json::parse(*v, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    errs->Add(field, "must be a JSON object {\"gatherStrategy\": [...]}, got " + Quote(*v));
    return;
  }
  const auto rules = doc.find("gatherStrategy");
  if (rules == doc.end() || !rules->is_array()) {
    errs->Add(field, "gatherStrategy: must be an array of {layer, strategy}");
    return;
  }
  TopologyConstraint& c = s->topology;
  for (size_t i = 0; i < rules->size(); ++i) {
    const nlohmann::json& r = (*rules)[i];
    const std::string item = field + " gatherStrategy[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("layer") || !r["layer"].is_string()) {
      errs->Add(item, "layer: required string");
      continue;
    }
    const std::string strategy = r.value("strategy", std::string());
    const std::string layer = r["layer"].get<std::string>();
    if (strategy == "MustGather") {
      c.must_gather.push_back(layer);
    } else if (strategy == "PreferGather") {
      c.prefer_gather.push_back(layer);
    } else {
      errs->Add(item, "strategy: Unsupported value: " + Quote(strategy) +
                          ": supported values: \"MustGather\", \"PreferGather\"");
    }
    if (r.contains("podCountMultiple") && !r["podCountMultiple"].is_null()) {
      c.unsupported = item +
                      ": podCountMultiple: not supported (pods per domain are not kept "
                      "to a multiple)";
    }
  }
  c.topology = std::string(kGroupKoordScheduling) + "/default";
}

std::string ObjectWhat(const api::Unstructured& obj) {
  return obj.kind + " " + obj.metadata.namespace_ + "/" + obj.metadata.name + " (" +
         obj.api_version + ")";
}

PodGroupSpec ObjectSpec(const api::Unstructured& obj, Dialect d) {
  PodGroupSpec s;
  s.namespace_ = obj.metadata.namespace_;
  s.name = obj.metadata.name;
  s.key = s.namespace_ + "/" + s.name;
  s.dialect = d;
  s.source = ObjectWhat(obj);
  s.creation_timestamp = obj.metadata.creation_timestamp;
  return s;
}

const YAML::Node& Root(const api::Unstructured& obj) {
  static const YAML::Node kEmpty(YAML::NodeType::Undefined);
  return obj.object ? *obj.object : kEmpty;
}

// ---- Coscheduling (scheduler-plugins) / Koordinator PodGroup CRD ----

PodGroupSpec CoschedulingSpec(const api::Unstructured& obj) {
  PodGroupSpec s = ObjectSpec(obj, Dialect::kCoscheduling);
  Errors errs(s.source);
  const YAML::Node spec = Child(Root(obj), "spec");
  MinMember(spec, "minMember", "spec.minMember", &s, &errs);
  MinResources(spec, "spec.minResources", &s, &errs);
  TimeoutSeconds(spec, "spec.scheduleTimeoutSeconds", &s, &errs);
  const Annotations& ann = obj.metadata.annotations;
  // scheduler-plugins counts running + waiting members; a PodGroup that carries
  // Koordinator annotations follows Koordinator's defaults.
  s.match_policy =
      HasKoordAnnotations(ann) ? MatchPolicy::kOnceSatisfied : MatchPolicy::kWaitingAndRunning;
  ApplyKoordOptions(ann, "metadata.annotations.", /*waiting_time=*/false, &s, &errs);
  ApplyKoordNetworkTopology(ann, "metadata.annotations.", &s, &errs);
  if (!HasKoordAnnotations(ann)) s.total_member = 0;
  s.invalid = errs.Summary();
  return s;
}

// ---- Volcano ----

// Volcano spec.networkTopology{mode: hard|soft (default hard), highestTierAllowed,
// highestTierName} (volcano.sh/apis pkg/apis/scheduling/v1beta1/types.go
// NetworkTopologySpec; the user guide docs/user-guide/how_to_use_network_topology_aware_
// scheduling.md: the two tier fields cannot both be set). The tiers are those of the
// HyperNode objects, resolved at planning time (topology_hypernode.h).
void VolcanoNetworkTopology(const YAML::Node& nt, PodGroupSpec* s, Errors* errs) {
  if (!Present(nt)) return;
  if (!nt.IsMap()) {
    errs->Add("spec.networkTopology", "must be an object, got " + Describe(nt));
    return;
  }
  TopologyConstraint& c = s->topology;
  c.hyper_node_tiers = true;
  const std::string mode = Str(nt, "mode");
  if (mode == "soft") {
    c.hard = false;
  } else if (!mode.empty() && mode != "hard") {
    errs->Add("spec.networkTopology.mode",
              "Unsupported value: " + Quote(mode) + ": supported values: \"hard\", \"soft\"");
  }
  bool present = false;
  int32_t tier = 0;
  if (CountField(nt, "highestTierAllowed", "spec.networkTopology.highestTierAllowed", 0, &tier,
                 &present, errs) &&
      present) {
    c.highest_tier = tier;
  }
  c.highest_tier_name = Str(nt, "highestTierName");
  if (c.highest_tier && !c.highest_tier_name.empty()) {
    errs->Add("spec.networkTopology", "highestTierAllowed and highestTierName cannot both be set");
  }
}

PodGroupSpec VolcanoSpec(const api::Unstructured& obj) {
  PodGroupSpec s = ObjectSpec(obj, Dialect::kVolcano);
  Errors errs(s.source);
  const YAML::Node spec = Child(Root(obj), "spec");
  MinMember(spec, "minMember", "spec.minMember", &s, &errs);
  MinResources(spec, "spec.minResources", &s, &errs);
  s.queue = Str(spec, "queue");
  if (s.queue.empty()) s.queue = "default";  // Volcano's default queue
  s.priority_class_name = Str(spec, "priorityClassName");
  s.match_policy = MatchPolicy::kWaitingAndRunning;
  VolcanoNetworkTopology(Child(spec, "networkTopology"), &s, &errs);
  if (Present(Child(spec, "subGroupPolicy"))) {
    // Volcano's SubJobs (a Job task's partitionPolicy): each partition's own quorum and
    // network topology. Refused by name rather than placed without them.
    errs.Add("spec.subGroupPolicy",
             "not supported by Phalanx (Volcano partitions: each a gang of subGroupSize pods "
             "in its own HyperNode); use spec.minTaskMember, or one PodGroup per partition");
  }
  const YAML::Node tasks = Child(spec, "minTaskMember");
  if (Present(tasks)) {
    if (!tasks.IsMap()) {
      errs.Add("spec.minTaskMember", "must be a map of task name to count, got " + Describe(tasks));
    } else {
      for (auto it = tasks.begin(); it != tasks.end(); ++it) {
        SubGroup g;
        g.name = it->first.IsScalar() ? it->first.Scalar() : std::string();
        int64_t v = 0;
        if (Int(it->second, &v) != Got::kOk) {
          errs.Add("spec.minTaskMember." + g.name,
                   "must be an integer, got " + Describe(it->second));
          continue;
        }
        if (v < 0 || v > kInt32Max) {
          errs.Add("spec.minTaskMember." + g.name, "must be >= 0, got " + std::to_string(v));
          continue;
        }
        g.min_member = static_cast<int32_t>(v);
        s.sub_groups.push_back(std::move(g));
      }
    }
  }
  s.invalid = errs.Summary();
  return s;
}

// ---- KAI ----

struct KaiSubGroup {
  SubGroup g;
  std::optional<int32_t> min_member;
  std::optional<int32_t> min_sub_group;
};

// Effective quorum of a KAI sub-group: its minMember, or the smallest `minSubGroup` (all
// when unset) of its children's quorums summed. -1 on a parent cycle.
int64_t KaiQuorum(const std::vector<KaiSubGroup>& all, const std::string& parent,
                  std::optional<int32_t> min_sub_group, int depth) {
  if (depth > static_cast<int>(all.size()) + 1) return -1;
  std::vector<int64_t> children;
  for (const auto& sg : all) {
    if (sg.g.parent != parent) continue;
    int64_t q = 0;
    if (sg.min_member) {
      q = *sg.min_member;
    } else {
      q = KaiQuorum(all, sg.g.name, sg.min_sub_group, depth + 1);
      if (q < 0) return -1;
    }
    children.push_back(q);
  }
  std::sort(children.begin(), children.end());
  size_t take = children.size();
  if (min_sub_group) take = std::min<size_t>(take, static_cast<size_t>(*min_sub_group));
  int64_t sum = 0;
  for (size_t i = 0; i < take; ++i) sum += children[i];
  return sum;
}

// KAI spec.topologyConstraint{topology, requiredTopologyLevel, preferredTopologyLevel}
// (pkg/apis/scheduling/v2alpha2/podgroup_types.go TopologyConstraint); the levels are
// resolved against the named Topology at planning time (topology.h).
// The same struct on a subgroup (spec.subGroups[].topologyConstraint) fills `*c`; `path`
// names the field for errors (a non-object value).
void KaiTopologyInto(const YAML::Node& tc, const std::string& path, TopologyConstraint* c,
                     Errors* errs) {
  if (!Present(tc)) return;
  if (!tc.IsMap()) {
    errs->Add(path, "must be an object, got " + Describe(tc));
    return;
  }
  c->topology = Str(tc, "topology");
  c->required_level = Str(tc, "requiredTopologyLevel");
  c->preferred_level = Str(tc, "preferredTopologyLevel");
}

void KaiTopology(const YAML::Node& tc, PodGroupSpec* s) {
  s->topology.topology = Str(tc, "topology");
  s->topology.required_level = Str(tc, "requiredTopologyLevel");
  s->topology.preferred_level = Str(tc, "preferredTopologyLevel");
}

PodGroupSpec KaiSpec(const api::Unstructured& obj) {
  PodGroupSpec s = ObjectSpec(obj, Dialect::kKAI);
  Errors errs(s.source);
  const YAML::Node spec = Child(Root(obj), "spec");
  s.queue = Str(spec, "queue");
  if (s.queue.empty()) {
    if (const std::string* q = FindNonEmpty(obj.metadata.labels, kKaiQueueLabel)) s.queue = *q;
  }
  s.priority_class_name = Str(spec, "priorityClassName");
  s.match_policy = MatchPolicy::kWaitingAndRunning;
  KaiTopology(Child(spec, "topologyConstraint"), &s);
  if (const std::string* v = FindNonEmpty(obj.metadata.annotations, kKaiStalenessGrace)) {
    // KAI ignores an invalid value; here it is an error on the gang, never a silent default.
    api::StatusOr<int64_t> parsed = detail::ParseGoDuration(*v);
    if (parsed.ok()) {
      s.staleness_grace_ns = *parsed;
    } else {
      errs.Add("metadata.annotations." + std::string(kKaiStalenessGrace),
               std::string(parsed.status().message()));
    }
  }

  std::vector<KaiSubGroup> subs;
  const YAML::Node sgs = Child(spec, "subGroups");
  if (Present(sgs) && !sgs.IsSequence()) {
    errs.Add("spec.subGroups", "must be a list, got " + Describe(sgs));
  } else if (Present(sgs)) {
    for (size_t i = 0; i < sgs.size(); ++i) {
      const YAML::Node item = sgs[i];
      const std::string path = "spec.subGroups[" + std::to_string(i) + "]";
      KaiSubGroup k;
      k.g.name = Str(item, "name");
      k.g.parent = Str(item, "parent");
      if (k.g.name.empty()) errs.Add(path + ".name", "required");
      KaiTopologyInto(Child(item, "topologyConstraint"), path + ".topologyConstraint",
                      &k.g.topology, &errs);
      bool present = false;
      int32_t v = 0;
      if (CountField(item, "minMember", path + ".minMember", 0, &v, &present, &errs) && present) {
        k.min_member = v;
      }
      if (CountField(item, "minSubGroup", path + ".minSubGroup", 0, &v, &present, &errs) &&
          present) {
        k.min_sub_group = v;
        k.g.min_sub_group = v;
      }
      subs.push_back(std::move(k));
    }
    for (size_t i = 0; i < subs.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (!subs[i].g.name.empty() && subs[i].g.name == subs[j].g.name) {
          errs.Add("spec.subGroups[" + std::to_string(i) + "].name",
                   "duplicate sub-group " + Quote(subs[i].g.name));
        }
      }
      const std::string& parent = subs[i].g.parent;
      if (!parent.empty() && std::none_of(subs.begin(), subs.end(), [&](const KaiSubGroup& o) {
            return o.g.name == parent;
          })) {
        errs.Add("spec.subGroups[" + std::to_string(i) + "].parent",
                 "unknown sub-group " + Quote(parent));
      }
    }
  }
  // Each sub-group's own quorum (computed from its children when it uses minSubGroup).
  if (errs.empty()) {
    for (auto& k : subs) {
      if (k.min_member) {
        k.g.min_member = *k.min_member;
      } else {
        const int64_t q = KaiQuorum(subs, k.g.name, k.min_sub_group, 0);
        if (q < 0) {
          errs.Add("spec.subGroups", "parent references form a cycle");
          break;
        }
        k.g.min_member = static_cast<int32_t>(std::min<int64_t>(q, kInt32Max));
      }
    }
  }

  bool present = false;
  int32_t v = 0;
  std::optional<int32_t> min_sub_group;
  if (CountField(spec, "minSubGroup", "spec.minSubGroup", 1, &v, &present, &errs) && present) {
    min_sub_group = v;
    s.min_sub_group = v;
  }
  if (CountField(spec, "minMember", "spec.minMember", 1, &v, &present, &errs)) {
    if (present) {
      s.min_member = v;
    } else if (!subs.empty() && errs.empty()) {
      const int64_t q = KaiQuorum(subs, "", min_sub_group, 0);
      if (q < 1) {
        errs.Add("spec.minMember", "required: the sub-groups define no quorum");
      } else {
        s.min_member = static_cast<int32_t>(std::min<int64_t>(q, kInt32Max));
      }
    } else if (subs.empty()) {
      errs.Add("spec.minMember", "required, must be >= 1");
    }
  }
  for (auto& k : subs) s.sub_groups.push_back(std::move(k.g));
  s.invalid = errs.Summary();
  return s;
}

// ---- Upstream Workload API ----
//
// The shapes each version serves (k8s.io/api scheduling, the round-trip fixtures of 1.36.0
// and of the 1.37 head; the 1.36 OpenAPI document):
//   v1alpha1 (1.35)  Workload spec{controllerRef, podGroups[]{name, policy{basic | gang
//                    {minCount}}}}; pods spec.workloadRef.
//   v1alpha2 (1.36)  Workload spec{controllerRef, podGroupTemplates[]{name, schedulingPolicy,
//                    schedulingConstraints, resourceClaims, disruptionMode, priorityClassName,
//                    priority}}; PodGroup spec{podGroupTemplateRef{workload{workloadName,
//                    podGroupTemplateName}}, schedulingPolicy{basic | gang{minCount}},
//                    schedulingConstraints{topology[]{key}}, resourceClaims, disruptionMode,
//                    priorityClassName, priority}; pods spec.schedulingGroup.podGroupName.
//   v1alpha3, v1beta1 (1.37 head)  PodGroup spec{parentCompositePodGroupName,
//                    workloadRef{workloadName, templateName}, schedulingPolicy,
//                    schedulingConstraints, resourceClaims, disruptionMode{single | all},
//                    priorityClassName, priority, preemptionPolicy}; CompositePodGroup (v1alpha3)
//                    spec{parentCompositePodGroupName, workloadRef, schedulingPolicy{basic |
//                    gang{minGroupCount}}, schedulingConstraints, disruptionMode,
//                    priorityClassName, priority, preemptionPolicy}; Workload adds
//                    compositePodGroupTemplates[]{..., podGroupTemplates[]}.
// Decoding is strict, as the API server's: a field the version does not define is an
// error naming it (the drafts' schedulingConstraints.topologyConstraints[].topologyKey
// among them), so a gang is never placed without a constraint its author wrote. Fields
// the version defines that Phalanx does not honour (workload-aware preemption's
// disruptionMode / priorityClassName / priority / preemptionPolicy, a CompositePodGroup
// parent) keep the gang pending with "<field>: not supported by this scheduler"
// (api/field_audit.h's wording). Validation as pkg/apis/scheduling/validation: exactly
// one of basic / gang, minCount >= 1, at most one topology constraint with a key.

enum class Policy { kNone, kBasic, kGang, kInvalid };

// The API generation of a scheduling.k8s.io object: which fields it may carry.
enum class WorkloadApi { k135, k136, k137 };

WorkloadApi WorkloadApiOf(const api::Unstructured& obj) {
  const std::string v = obj.api_version.substr(obj.api_version.find('/') + 1);
  if (v == "v1alpha1") return WorkloadApi::k135;
  if (v == "v1alpha2") return WorkloadApi::k136;
  return WorkloadApi::k137;  // v1alpha3, v1beta1 and anything newer: the newest shape
}

// Every key of `node` (a map) must be in `known`: else "unknown field" naming it, with
// what the version calls it when the name is a known draft's.
void KnownFields(const YAML::Node& node, const std::string& path,
                 std::initializer_list<std::string_view> known, const std::string& version,
                 Errors* errs) {
  if (!Present(node) || !node.IsMap()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string k = it->first.Scalar();
    if (std::find(known.begin(), known.end(), k) != known.end()) continue;
    std::string hint;
    if (k == "topologyConstraints") hint = " (" + version + " names it topology[].key)";
    if (k == "topologyKey") hint = " (" + version + " names it key)";
    errs->Add(path.empty() ? k : path + "." + k, "unknown field" + hint);
  }
}

// Fields the version defines that Phalanx does not honour: the gang stays pending naming
// each one set.
void NotHonoured(const YAML::Node& node, const std::string& path,
                 std::initializer_list<const char*> fields, Errors* errs) {
  for (const char* f : fields) {
    if (Present(Child(node, f))) errs->Add(path + "." + f, "not supported by this scheduler");
  }
}

// Reads a PodGroupPolicy / PodGroupSchedulingPolicy {basic{} | gang{<count_field>}}.
Policy ReadPolicy(const YAML::Node& policy, const std::string& path, int32_t* min_count,
                  Errors* errs, const char* count_field = "minCount") {
  if (!Present(policy)) {
    errs->Add(path, "required: exactly one of basic or gang");
    return Policy::kInvalid;
  }
  KnownFields(policy, path, {"basic", "gang"}, "", errs);
  const bool basic = Child(policy, "basic").IsDefined();
  const YAML::Node gang = Child(policy, "gang");
  if (basic && gang.IsDefined()) {
    errs->Add(path, "exactly one of basic or gang may be set");
    return Policy::kInvalid;
  }
  if (basic) {
    KnownFields(Child(policy, "basic"), path + ".basic", {}, "", errs);
    return Policy::kBasic;
  }
  if (!gang.IsDefined()) {
    errs->Add(path, "required: exactly one of basic or gang");
    return Policy::kInvalid;
  }
  KnownFields(gang, path + ".gang", {std::string_view(count_field)}, "", errs);
  bool present = false;
  if (!CountField(gang, count_field, path + ".gang." + count_field, 1, min_count, &present, errs)) {
    return Policy::kInvalid;
  }
  if (!present) {
    errs->Add(path + ".gang." + count_field, "required, must be >= 1");
    return Policy::kInvalid;
  }
  return Policy::kGang;
}

// schedulingConstraints{topology[]{key}}: "All pods within the PodGroup must be colocated
// within the same domain instance" of the node label `key`; "Currently only a single
// topology constraint can be specified".
void UpstreamTopology(const YAML::Node& constraints, const std::string& path,
                      const std::string& version, PodGroupSpec* s, Errors* errs) {
  if (!Present(constraints)) return;
  KnownFields(constraints, path, {"topology"}, version, errs);
  const YAML::Node list = Child(constraints, "topology");
  if (!Present(list)) return;
  const std::string lpath = path + ".topology";
  if (!list.IsSequence()) {
    errs->Add(lpath, "must be a list, got " + Describe(list));
    return;
  }
  if (list.size() > 1) {
    errs->Add(lpath, "must have at most 1 item, got " + std::to_string(list.size()));
    return;
  }
  if (list.size() == 0) return;
  const std::string ipath = lpath + "[0]";
  KnownFields(list[0], ipath, {"key"}, version, errs);
  const std::string key = Str(list[0], "key");
  if (key.empty()) {
    errs->Add(ipath + ".key", "required");
    return;
  }
  s->topology.required_level = key;
}

void UpstreamDefaults(PodGroupSpec* s) {
  s->schedule_timeout_ns = kUpstreamGangTimeoutNs;
  s->match_policy = MatchPolicy::kWaitingAndRunning;
}

// scheduling.k8s.io PodGroup (1.36+): one spec, or none for the basic policy.
std::vector<PodGroupSpec> UpstreamPodGroupSpecs(const api::Unstructured& obj) {
  PodGroupSpec s = ObjectSpec(obj, Dialect::kWorkload);
  UpstreamDefaults(&s);
  Errors errs(s.source);
  const YAML::Node spec = Child(Root(obj), "spec");
  const WorkloadApi gen = WorkloadApiOf(obj);
  const std::string& version = obj.api_version;
  if (gen == WorkloadApi::k136) {
    KnownFields(spec, "spec",
                {"podGroupTemplateRef", "schedulingPolicy", "schedulingConstraints",
                 "resourceClaims", "disruptionMode", "priorityClassName", "priority"},
                version, &errs);
    const YAML::Node ref = Child(spec, "podGroupTemplateRef");
    KnownFields(ref, "spec.podGroupTemplateRef", {"workload"}, version, &errs);
    KnownFields(Child(ref, "workload"), "spec.podGroupTemplateRef.workload",
                {"workloadName", "podGroupTemplateName"}, version, &errs);
    NotHonoured(spec, "spec", {"disruptionMode", "priorityClassName", "priority"}, &errs);
  } else {
    KnownFields(
        spec, "spec",
        {"parentCompositePodGroupName", "workloadRef", "schedulingPolicy", "schedulingConstraints",
         "resourceClaims", "disruptionMode", "priorityClassName", "priority", "preemptionPolicy"},
        version, &errs);
    KnownFields(Child(spec, "workloadRef"), "spec.workloadRef", {"workloadName", "templateName"},
                version, &errs);
    NotHonoured(spec, "spec",
                {"parentCompositePodGroupName", "disruptionMode", "priorityClassName", "priority",
                 "preemptionPolicy"},
                &errs);
  }
  int32_t min_count = 0;
  switch (ReadPolicy(Child(spec, "schedulingPolicy"), "spec.schedulingPolicy", &min_count, &errs)) {
    case Policy::kBasic:
      if (errs.empty()) return {};
      break;
    case Policy::kGang:
      s.min_member = min_count;
      break;
    default:
      break;
  }
  UpstreamTopology(Child(spec, "schedulingConstraints"), "spec.schedulingConstraints", version, &s,
                   &errs);
  s.invalid = errs.Summary();
  return {std::move(s)};
}

// A template's fields (Workload podGroupTemplates[] / compositePodGroupTemplates[]).
void CheckTemplate(const YAML::Node& g, const std::string& path, WorkloadApi gen, bool composite,
                   const std::string& version, Errors* errs) {
  if (composite) {
    KnownFields(g, path,
                {"name", "schedulingPolicy", "schedulingConstraints", "disruptionMode",
                 "priorityClassName", "priority", "preemptionPolicy", "podGroupTemplates"},
                version, errs);
  } else if (gen == WorkloadApi::k136) {
    KnownFields(g, path,
                {"name", "schedulingPolicy", "schedulingConstraints", "resourceClaims",
                 "disruptionMode", "priorityClassName", "priority"},
                version, errs);
  } else {
    KnownFields(g, path,
                {"name", "schedulingPolicy", "schedulingConstraints", "resourceClaims",
                 "disruptionMode", "priorityClassName", "priority", "preemptionPolicy"},
                version, errs);
  }
}

// Workload: 1.35 spec.podGroups[].policy (the pod groups are gangs of the pods naming
// them in spec.workloadRef); 1.36+ spec.podGroupTemplates[].schedulingPolicy (templates
// that controllers copy into PodGroup objects, which the pods name: the specs returned
// carry the template's rules and have no members of their own).
std::vector<PodGroupSpec> WorkloadSpecs(const api::Unstructured& obj) {
  const YAML::Node spec = Child(Root(obj), "spec");
  const WorkloadApi gen = WorkloadApiOf(obj);
  const std::string& version = obj.api_version;
  // A 1.35 manifest labelled with a newer version keeps working: the shape decides, and
  // the field check below names what the version does not define.
  const bool templates = gen != WorkloadApi::k135 || Present(Child(spec, "podGroupTemplates"));
  const char* list_field = templates ? "podGroupTemplates" : "podGroups";
  const char* policy_field = templates ? "schedulingPolicy" : "policy";
  Errors top(ObjectWhat(obj));
  if (gen == WorkloadApi::k136) {
    KnownFields(spec, "spec", {"controllerRef", "podGroupTemplates"}, version, &top);
  } else if (gen == WorkloadApi::k137) {
    KnownFields(spec, "spec", {"controllerRef", "podGroupTemplates", "compositePodGroupTemplates"},
                version, &top);
  }
  const YAML::Node groups = Child(spec, list_field);
  std::vector<PodGroupSpec> out;
  if (!Present(groups) || !groups.IsSequence()) {
    PodGroupSpec s = ObjectSpec(obj, Dialect::kWorkload);
    top.Add(std::string("spec.") + list_field,
            Present(groups) ? "must be a list, got " + Describe(groups) : "required");
    s.invalid = top.Summary();
    out.push_back(std::move(s));
    return out;
  }
  const YAML::Node composites = Child(spec, "compositePodGroupTemplates");
  if (Present(composites) && composites.IsSequence()) {
    for (size_t i = 0; i < composites.size(); ++i) {
      const std::string path = "spec.compositePodGroupTemplates[" + std::to_string(i) + "]";
      CheckTemplate(composites[i], path, gen, true, version, &top);
      int32_t unused = 0;
      ReadPolicy(Child(composites[i], "schedulingPolicy"), path + ".schedulingPolicy", &unused,
                 &top, "minGroupCount");
    }
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const YAML::Node g = groups[i];
    const std::string path = std::string("spec.") + list_field + "[" + std::to_string(i) + "]";
    PodGroupSpec s = ObjectSpec(obj, Dialect::kWorkload);
    UpstreamDefaults(&s);
    const std::string name = Str(g, "name");
    s.name = obj.metadata.name + "/" + (name.empty() ? std::to_string(i) : name);
    s.key = s.namespace_ + "/" + s.name;
    s.source = ObjectWhat(obj) + " " + path;
    Errors errs(ObjectWhat(obj));
    for (const auto& e : top) errs.Add(e);
    if (name.empty()) errs.Add(path + ".name", "required");
    if (templates) CheckTemplate(g, path, gen, false, version, &errs);
    int32_t min_count = 0;
    const Policy p =
        ReadPolicy(Child(g, policy_field), path + "." + policy_field, &min_count, &errs);
    if (p == Policy::kBasic && errs.empty()) continue;  // not a gang
    if (p == Policy::kGang) s.min_member = min_count;
    if (templates) {
      UpstreamTopology(Child(g, "schedulingConstraints"), path + ".schedulingConstraints", version,
                       &s, &errs);
    }
    s.invalid = errs.Summary();
    out.push_back(std::move(s));
  }
  return out;
}

// CompositePodGroup (1.37 head, v1alpha3): a group of PodGroups with a quorum of groups
// (gang.minGroupCount). Its fields are checked; it defines no gang of pods itself, and its
// member PodGroups (spec.parentCompositePodGroupName) stay pending naming that field.
std::vector<PodGroupSpec> CompositePodGroupSpecs(const api::Unstructured& obj) {
  Errors errs(ObjectWhat(obj));
  const YAML::Node spec = Child(Root(obj), "spec");
  KnownFields(
      spec, "spec",
      {"parentCompositePodGroupName", "workloadRef", "schedulingPolicy", "schedulingConstraints",
       "disruptionMode", "priorityClassName", "priority", "preemptionPolicy"},
      obj.api_version, &errs);
  int32_t unused = 0;
  ReadPolicy(Child(spec, "schedulingPolicy"), "spec.schedulingPolicy", &unused, &errs,
             "minGroupCount");
  PodGroupSpec probe;
  UpstreamTopology(Child(spec, "schedulingConstraints"), "spec.schedulingConstraints",
                   obj.api_version, &probe, &errs);
  if (errs.empty()) return {};
  PodGroupSpec s = ObjectSpec(obj, Dialect::kWorkload);
  s.invalid = errs.Summary();
  return {std::move(s)};
}

// The policy a Workload gives one of its pod groups (either shape); kNone when the
// Workload has no entry of that name.
Policy WorkloadEntryPolicy(const api::Unstructured& w, const std::string& pod_group) {
  const YAML::Node spec = Child(Root(w), "spec");
  const bool templates = Present(Child(spec, "podGroupTemplates"));
  const YAML::Node groups = Child(spec, templates ? "podGroupTemplates" : "podGroups");
  if (!Present(groups) || !groups.IsSequence()) return Policy::kNone;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (Str(groups[i], "name") != pod_group) continue;
    Errors ignored("");
    int32_t unused = 0;
    return ReadPolicy(Child(groups[i], templates ? "schedulingPolicy" : "policy"), "", &unused,
                      &ignored);
  }
  return Policy::kNone;
}

std::vector<PodGroupSpec> SpecsImpl(const api::Unstructured& obj) {
  const std::string group = obj.Group();
  if (obj.kind == "Workload") {
    if (group == kGroupUpstream) return WorkloadSpecs(obj);
    return {};
  }
  if (obj.kind == "CompositePodGroup") {
    if (group == kGroupUpstream) return CompositePodGroupSpecs(obj);
    return {};
  }
  if (obj.kind != "PodGroup") return {};
  if (group == kGroupUpstream) return UpstreamPodGroupSpecs(obj);
  if (group == kGroupVolcano) return {VolcanoSpec(obj)};
  if (group == kGroupKAI) return {KaiSpec(obj)};
  // scheduling.x-k8s.io, scheduling.sigs.k8s.io, and PodGroups of other groups in the
  // scheduler-plugins shape (spec.minMember).
  return {CoschedulingSpec(obj)};
}

// ---- Pod references ----

std::string PodWhat(const api::Pod& pod) { return "Pod " + pod.Key(); }

GangRef ObjectRef(const api::Pod& pod, Dialect d, const std::string& name, std::string via) {
  GangRef r;
  r.dialect = d;
  r.namespace_ = pod.metadata.namespace_;
  r.name = name;
  r.key = r.namespace_ + "/" + name;
  r.spec_key = r.key;
  r.via = std::move(via);
  return r;
}

PodGroupSpec InvalidInline(const GangRef& r, const std::string& source,
                           const std::string& invalid) {
  PodGroupSpec s;
  s.key = r.spec_key;
  s.namespace_ = r.namespace_;
  s.name = r.name;
  s.dialect = r.dialect;
  s.source = source;
  s.invalid = invalid;
  return s;
}

bool IsBasicUpstreamPodGroup(const api::Unstructured* obj) {
  if (obj == nullptr || obj->Group() != kGroupUpstream) return false;
  const YAML::Node policy = Child(Child(Root(*obj), "spec"), "schedulingPolicy");
  Errors ignored("");
  int32_t unused = 0;
  return ReadPolicy(policy, "", &unused, &ignored) == Policy::kBasic;
}

std::optional<GangRef> UpstreamRef(const api::Pod& pod, const OwnerLookup& lookup) {
  const std::string& ns = pod.metadata.namespace_;
  if (!pod.spec.scheduling_group_pod_group_name.empty()) {
    const std::string& name = pod.spec.scheduling_group_pod_group_name;
    if (lookup && IsBasicUpstreamPodGroup(lookup(ns, "PodGroup", name))) return std::nullopt;
    return ObjectRef(pod, Dialect::kWorkload, name, "spec.schedulingGroup.podGroupName");
  }
  if (!pod.spec.workload_ref) return std::nullopt;
  const api::WorkloadReference& w = *pod.spec.workload_ref;
  GangRef r;
  r.dialect = Dialect::kWorkload;
  r.namespace_ = ns;
  r.name = w.name;
  r.spec_key = ns + "/" + w.name + "/" + w.pod_group;
  r.key = r.spec_key + (w.pod_group_replica_key.empty() ? "" : "/" + w.pod_group_replica_key);
  r.via = "spec.workloadRef";
  Errors errs(PodWhat(pod));
  if (w.name.empty()) errs.Add("spec.workloadRef.name", "required");
  if (w.pod_group.empty()) errs.Add("spec.workloadRef.podGroup", "required");
  if (!errs.empty()) {
    r.inline_spec = InvalidInline(r, PodWhat(pod) + " spec.workloadRef", errs.Summary());
    return r;
  }
  if (lookup) {
    const api::Unstructured* wl = lookup(ns, "Workload", w.name);
    if (wl != nullptr && wl->Group() == kGroupUpstream &&
        WorkloadEntryPolicy(*wl, w.pod_group) == Policy::kBasic) {
      return std::nullopt;
    }
  }
  return r;
}

std::optional<GangRef> KoordinatorRef(const api::Pod& pod) {
  const Annotations& ann = pod.metadata.annotations;
  const Annotations& labels = pod.metadata.labels;
  std::string via;
  const std::string* name = FindNonEmpty(ann, kKoordName);
  if (name != nullptr) {
    via = "annotation " + std::string(kKoordName);
  } else if ((name = FindNonEmpty(ann, kLegacyName)) != nullptr) {
    via = "annotation " + std::string(kLegacyName);
  } else if ((name = FindNonEmpty(labels, kLegacyName)) != nullptr) {
    via = "label " + std::string(kLegacyName);
  } else {
    return std::nullopt;
  }
  GangRef r = ObjectRef(pod, Dialect::kKoordinator, *name, via);
  PodGroupSpec s;
  s.key = r.key;
  s.namespace_ = r.namespace_;
  s.name = *name;
  s.dialect = Dialect::kKoordinator;
  s.source = PodWhat(pod) + " " + via;
  s.creation_timestamp = pod.metadata.creation_timestamp;
  s.match_policy = MatchPolicy::kOnceSatisfied;
  Errors errs(PodWhat(pod));
  if (!detail::IsDNS1123Subdomain(*name)) {
    errs.Add(via, "must be a lowercase RFC 1123 subdomain, got " + Quote(*name));
  }
  // min-available: the Koordinator annotation, else the legacy annotation or label.
  std::string min_field = "annotation " + std::string(kKoordMin);
  const std::string* min = FindNonEmpty(ann, kKoordMin);
  if (min == nullptr && (min = FindNonEmpty(ann, kLegacyMin)) != nullptr) {
    min_field = "annotation " + std::string(kLegacyMin);
  }
  if (min == nullptr && (min = FindNonEmpty(labels, kLegacyMin)) != nullptr) {
    min_field = "label " + std::string(kLegacyMin);
  }
  if (min == nullptr) {
    errs.Add(min_field, "required, must be >= 1");
  } else {
    int64_t v = 0;
    if (!detail::ParseInt64(*min, &v)) {
      errs.Add(min_field, "must be an integer, got " + Quote(*min));
    } else if (v < 1 || v > kInt32Max) {
      errs.Add(min_field, "must be >= 1, got " + std::to_string(v));
    } else {
      s.min_member = static_cast<int32_t>(v);
    }
  }
  ApplyKoordOptions(ann, "annotation ", /*waiting_time=*/true, &s, &errs);
  ApplyKoordNetworkTopology(ann, "annotation ", &s, &errs);
  s.invalid = errs.Summary();
  r.inline_spec = std::move(s);
  return r;
}

// ---- PodGrouper ----

const api::OwnerReference* ControllerRef(const std::vector<api::OwnerReference>& refs) {
  for (const auto& r : refs) {
    if (r.controller) return &r;
  }
  return nullptr;
}

// Pods a Job runs at once: parallelism (default 1), capped by completions when set.
int64_t JobPods(const YAML::Node& job_spec, const std::string& path, Errors* errs) {
  int64_t par = 1;
  int64_t comp = -1;
  const YAML::Node pn = Child(job_spec, "parallelism");
  const YAML::Node cn = Child(job_spec, "completions");
  if (Int(pn, &par) == Got::kBad || par < 0) {
    errs->Add(path + ".parallelism", "must be a non-negative integer, got " + Describe(pn));
    return 0;
  }
  if (Int(cn, &comp) == Got::kBad || (Present(cn) && comp < 0)) {
    errs->Add(path + ".completions", "must be a non-negative integer, got " + Describe(cn));
    return 0;
  }
  return Present(cn) ? std::min(par, comp) : par;
}

// Replicas of a replica spec map (PyTorchJob pytorchReplicaSpecs, MPIJob mpiReplicaSpecs);
// an entry without `replicas` counts 1 (the training operator's default).
bool ReplicaSpecs(const YAML::Node& spec, const char* field,
                  std::vector<std::pair<std::string, int64_t>>* out, Errors* errs) {
  const YAML::Node m = Child(spec, field);
  const std::string path = std::string("spec.") + field;
  if (!Present(m) || !m.IsMap() || m.size() == 0) {
    errs->Add(path, Present(m) ? "must be a non-empty map of replica specs" : "required");
    return false;
  }
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string type = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    int64_t replicas = 1;
    const YAML::Node rn = Child(it->second, "replicas");
    if (Int(rn, &replicas) == Got::kBad || replicas < 0) {
      std::string field = path;
      field.append(".").append(type).append(".replicas");
      errs->Add(field, "must be a non-negative integer, got " + Describe(rn));
      return false;
    }
    out->emplace_back(type, replicas);
  }
  return true;
}

// spec.runPolicy.schedulingPolicy.minAvailable (Kubeflow training operator).
void KubeflowMinAvailable(const YAML::Node& spec, int64_t* min, Errors* errs) {
  const YAML::Node n = Child(Child(Child(spec, "runPolicy"), "schedulingPolicy"), "minAvailable");
  int64_t v = 0;
  switch (Int(n, &v)) {
    case Got::kAbsent:
      return;
    case Got::kBad:
      errs->Add("spec.runPolicy.schedulingPolicy.minAvailable",
                "must be an integer, got " + Describe(n));
      return;
    case Got::kOk:
      if (v < 1) {
        errs->Add("spec.runPolicy.schedulingPolicy.minAvailable",
                  "must be >= 1, got " + std::to_string(v));
        return;
      }
      *min = v;
  }
}

// Replicas of a Kubeflow training-operator job (PyTorchJob, TFJob, ...) or an MPIJob.
const char* KubeflowReplicaField(const std::string& kind) {
  if (kind == "PyTorchJob") return "pytorchReplicaSpecs";
  if (kind == "TFJob") return "tfReplicaSpecs";
  if (kind == "XGBoostJob") return "xgbReplicaSpecs";
  if (kind == "PaddleJob") return "paddleReplicaSpecs";
  if (kind == "JAXJob") return "jaxReplicaSpecs";
  if (kind == "MPIJob") return "mpiReplicaSpecs";
  return nullptr;
}

// KAI topology annotations of a workload (pkg/podgrouper/podgrouper/plugins/defaultgrouper
// GetPodGroupMetadata: read from the top owner) into `c`; true when one is set.
bool KaiTopologyAnnotations(const Annotations& ann, TopologyConstraint* c) {
  const std::string* t = FindNonEmpty(ann, kKaiTopologyAnn);
  const std::string* req = FindNonEmpty(ann, kKaiTopologyRequiredAnn);
  const std::string* pref = FindNonEmpty(ann, kKaiTopologyPreferredAnn);
  if (!t && !req && !pref) return false;
  c->topology = t ? *t : std::string();
  c->required_level = req ? *req : std::string();
  c->preferred_level = pref ? *pref : std::string();
  return true;
}

// Kueue Topology Aware Scheduling annotations of a pod template (kueue
// apis/kueue/v1beta2 constants: podset-required-topology, podset-preferred-topology, and
// the slice / group / unconstrained ones) into `c`: a required or preferred level; the
// others are set as `unsupported` naming the annotation. True when one is set.
bool KueueTopologyAnnotations(const Annotations& ann, TopologyConstraint* c) {
  bool any = false;
  if (const std::string* v = FindNonEmpty(ann, kKueueRequiredTopology)) {
    c->required_level = *v;
    any = true;
  }
  if (const std::string* v = FindNonEmpty(ann, kKueuePreferredTopology)) {
    c->preferred_level = *v;
    any = true;
  }
  for (std::string_view key : {kKueueSliceRequiredTopology, kKueueSliceSize, kKueuePodSetGroupName,
                               kKueueUnconstrainedTopology}) {
    if (Find(ann, key) == nullptr || !c->unsupported.empty()) continue;
    c->unsupported = "annotation " + std::string(key) +
                     ": not supported (Kueue TAS slices, podset groups and unconstrained "
                     "podsets are not modelled; use kueue.x-k8s.io/podset-required-topology)";
    any = true;
  }
  return any;
}

// Derives the gang of `top`. nullopt = not a gang (quorum below 2, or a Job that asks for
// none).
// KAI jobset_grouper.go: the pods of a JobSet's gang (`*total`); InOrder names the gang
// after the pod's replicatedJob (s->name, s->key). Problems go to `errs`.
void DeriveJobSet(const api::Pod& pod, const YAML::Node& spec, PodGroupSpec* s, int64_t* total,
                  Errors* errs) {
  const YAML::Node rjs = Child(spec, "replicatedJobs");
  if (!Present(rjs) || !rjs.IsSequence() || rjs.size() == 0) {
    errs->Add("spec.replicatedJobs", "required, must be a non-empty list");
  } else {
    // KAI jobset_grouper.go: InOrder -> one PodGroup per replicatedJob (the pod's
    // jobset.sigs.k8s.io/replicatedjob-name), minAvailable its replicas x pods; AnyOrder
    // (the JobSet webhook's default) -> one of all of them.
    const bool in_order = Str(Child(spec, "startupPolicy"), "startupPolicyOrder") == "InOrder";
    const std::string* rjob = FindNonEmpty(pod.metadata.labels, kJobSetReplicatedJobLabel);
    if (in_order && rjob == nullptr) {
      errs->Add(
          "spec.startupPolicy.startupPolicyOrder",
          "InOrder: pod " + pod.Key() + " has no label " + std::string(kJobSetReplicatedJobLabel));
    }
    for (size_t i = 0; i < rjs.size(); ++i) {
      const std::string path = "spec.replicatedJobs[" + std::to_string(i) + "]";
      int64_t replicas = 1;
      const YAML::Node rn = Child(rjs[i], "replicas");
      if (Int(rn, &replicas) == Got::kBad || replicas < 0) {
        errs->Add(path + ".replicas", "must be a non-negative integer, got " + Describe(rn));
        break;
      }
      const int64_t per_job =
          JobPods(Child(Child(rjs[i], "template"), "spec"), path + ".template.spec", errs);
      const int64_t pods = std::min<int64_t>(replicas * per_job, kInt32Max);
      if (in_order && rjob != nullptr && Str(rjs[i], "name") != *rjob) continue;
      *total = std::min<int64_t>(*total + pods, kInt32Max);
    }
    if (in_order && rjob != nullptr) {
      s->name += "-" + *rjob;
      s->key = s->namespace_ + "/" + s->name;
    }
  }
}

// KAI lws_grouper.go: one PodGroup per LeaderWorkerSet group (s->name, s->key), `*total`
// its size (LeaderCreated, the default) or, with startupPolicy LeaderReady, `*min` 1 (the
// workers are created once the leader runs). Problems go to `errs`.
void DeriveLeaderWorkerSet(const api::Pod& pod, const YAML::Node& spec, PodGroupSpec* s,
                           int64_t* total, int64_t* min, Errors* errs) {
  const std::string* gi = FindNonEmpty(pod.metadata.labels, kLwsGroupIndexLabel);
  if (gi == nullptr) {
    errs->Add("metadata.labels",
              "pod " + pod.Key() + " has no label " + std::string(kLwsGroupIndexLabel));
  } else {
    s->name += "-group-" + *gi;
    s->key = s->namespace_ + "/" + s->name;
  }
  int64_t size = 1;
  const YAML::Node sn = Child(Child(spec, "leaderWorkerTemplate"), "size");
  if (Int(sn, &size) == Got::kBad || size < 1) {
    errs->Add("spec.leaderWorkerTemplate.size", "must be >= 1, got " + Describe(sn));
  }
  *total = size;
  if (Str(spec, "startupPolicy") == "LeaderReady") *min = 1;
}

// A Kubeflow job's gang (KAI's kubeflow groupers): `*total` the sum of its replica specs,
// `*min` without the launcher for an MPIJob that waits for its workers, an elastic
// PyTorchJob's minReplicas, runPolicy.schedulingPolicy.minAvailable. Problems go to `errs`.
void DeriveKubeflowJob(const std::string& kind, const char* field, const YAML::Node& spec,
                       int64_t* total, int64_t* min, Errors* errs) {
  std::vector<std::pair<std::string, int64_t>> replicas;
  if (ReplicaSpecs(spec, field, &replicas, errs)) {
    int64_t launcher = 0;
    for (const auto& [type, n] : replicas) {
      *total = std::min<int64_t>(*total + n, kInt32Max);
      if (type == "Launcher") launcher = n;
    }
    if (kind == "MPIJob" && Str(spec, "launcherCreationPolicy") == "WaitForWorkersReady") {
      *min = *total - launcher;  // the launcher is created once the workers are ready
    }
    if (kind == "PyTorchJob") {
      int64_t elastic = 0;
      const YAML::Node en = Child(Child(spec, "elasticPolicy"), "minReplicas");
      switch (Int(en, &elastic)) {
        case Got::kAbsent:
          break;
        case Got::kBad:
          errs->Add("spec.elasticPolicy.minReplicas", "must be an integer, got " + Describe(en));
          break;
        case Got::kOk:
          if (elastic < 1) {
            errs->Add("spec.elasticPolicy.minReplicas",
                      "must be >= 1, got " + std::to_string(elastic));
          } else {
            *min = elastic;
          }
      }
    }
    KubeflowMinAvailable(spec, min, errs);
  }
}

std::optional<PodGroupSpec> DeriveSpec(const api::Pod& pod, const api::Unstructured& top) {
  PodGroupSpec s;
  s.namespace_ = top.metadata.namespace_;
  s.name = top.kind + "-" + top.metadata.name;
  s.key = s.namespace_ + "/" + s.name;
  s.dialect = Dialect::kDerived;
  s.source = "PodGrouper: " + ObjectWhat(top);
  s.creation_timestamp = top.metadata.creation_timestamp;
  s.match_policy = MatchPolicy::kWaitingAndRunning;
  if (const std::string* q = FindNonEmpty(top.metadata.labels, kKaiQueueLabel)) {
    s.queue = *q;
  } else if (const std::string* pq = FindNonEmpty(pod.metadata.labels, kKaiQueueLabel)) {
    s.queue = *pq;
  }
  // KAI's priority: the owner's priorityClassName label, else the pod's (the scheduler's
  // PriorityOf reads the pod's label itself; the owner's reaches it through the gang).
  if (const std::string* pc = FindNonEmpty(top.metadata.labels, kKaiPriorityLabel)) {
    s.priority_class_name = *pc;
  } else if (const std::string* ppc = FindNonEmpty(pod.metadata.labels, kKaiPriorityLabel)) {
    s.priority_class_name = *ppc;
  }
  const bool kai_topology = KaiTopologyAnnotations(top.metadata.annotations, &s.topology);
  TopologyConstraint kueue;
  const bool kueue_topology = KueueTopologyAnnotations(pod.metadata.annotations, &kueue);
  if (kueue_topology && !kai_topology) s.topology = kueue;
  Errors errs(ObjectWhat(top));
  const YAML::Node spec = Child(Root(top), "spec");
  const std::string group = top.Group();
  int64_t total = 0;
  int64_t min = -1;  // -1: same as total
  if (top.kind == "Job" && group == "batch") {
    total = JobPods(spec, "spec", &errs);
    // KAI's BatchJob grouper gives each pod a PodGroup of its own (minAvailable 1): a Job
    // is not a gang. Topology asks for its pods together: with KAI's annotations in one
    // PodGroup of minAvailable 1 (KAI docs/topology/README.md's Job example), with
    // Kueue's as the podset Kueue admits whole.
    if (kai_topology) {
      min = 1;
    } else if (!kueue_topology && !Find(top.metadata.annotations, kKaiMinOverride)) {
      return std::nullopt;
    }
  } else if (top.kind == "JobSet" && group == "jobset.x-k8s.io") {
    DeriveJobSet(pod, spec, &s, &total, &errs);
  } else if (top.kind == "LeaderWorkerSet" && group == "leaderworkerset.x-k8s.io") {
    DeriveLeaderWorkerSet(pod, spec, &s, &total, &min, &errs);
  } else if (const char* field = KubeflowReplicaField(top.kind);
             field != nullptr && group == "kubeflow.org") {
    DeriveKubeflowJob(top.kind, field, spec, &total, &min, &errs);
  } else {
    errs.Add("kind", "PodGrouper has no rule to derive a gang from " + top.kind + " of group " +
                         Quote(group));
  }
  if (min < 0) min = total;
  if (const std::string* o = Find(top.metadata.annotations, kKaiMinOverride)) {
    int64_t v = 0;
    const std::string field = "metadata.annotations." + std::string(kKaiMinOverride);
    if (!detail::ParseInt64(*o, &v)) {
      errs.Add(field, "must be an integer, got " + Quote(*o));
    } else if (v < 1 || v > kInt32Max) {
      errs.Add(field, "must be >= 1, got " + std::to_string(v));
    } else {
      min = v;
    }
  }
  if (!errs.empty()) {
    s.invalid = errs.Summary();
    return s;
  }
  // A single pod is not a gang, unless a topology asks for its pods together.
  if (min < 2 && s.topology.empty()) return std::nullopt;
  s.min_member = static_cast<int32_t>(std::clamp<int64_t>(min, 1, kInt32Max));
  s.total_member = static_cast<int32_t>(total);
  return s;
}

std::optional<GangRef> DerivedRef(const api::Pod& pod, const DialectOptions& opts,
                                  const OwnerLookup& lookup) {
  if (!opts.pod_grouper || !lookup) return std::nullopt;
  const std::string& ns = pod.metadata.namespace_;
  auto enabled = [&](const std::string& kind) {
    return std::find(opts.pod_grouper_kinds.begin(), opts.pod_grouper_kinds.end(), kind) !=
           opts.pod_grouper_kinds.end();
  };
  // Follow controller references up: Pod -> Job -> JobSet, Pod -> PyTorchJob, ...
  const api::Unstructured* top = nullptr;
  std::string via = "ownerReferences";
  const api::OwnerReference* ref = ControllerRef(pod.metadata.owner_references);
  for (int depth = 0; ref != nullptr && depth < 16; ++depth) {
    const api::Unstructured* obj = lookup(ns, ref->kind, ref->name);
    if (obj == nullptr) break;
    via += " -> " + obj->kind + "/" + obj->metadata.name;
    if (enabled(obj->kind)) top = obj;  // the topmost enabled owner wins
    ref = ControllerRef(obj->metadata.owner_references);
  }
  // A LeaderWorkerSet's workers are owned by a StatefulSet that the leader pod owns; their
  // label names the set (lws pod_webhook.go), so the set is found without that chain.
  if (top == nullptr || top->kind != "LeaderWorkerSet") {
    if (const std::string* lws = FindNonEmpty(pod.metadata.labels, kLwsNameLabel);
        lws != nullptr && enabled("LeaderWorkerSet")) {
      const api::Unstructured* obj = lookup(ns, "LeaderWorkerSet", *lws);
      if (obj != nullptr && obj->Group() == "leaderworkerset.x-k8s.io") {
        top = obj;
        via += " (label " + std::string(kLwsNameLabel) + ")";
      }
    }
  }
  if (top == nullptr) return std::nullopt;
  std::optional<PodGroupSpec> spec = DeriveSpec(pod, *top);
  if (!spec) return std::nullopt;
  GangRef r;
  r.dialect = Dialect::kDerived;
  r.namespace_ = spec->namespace_;
  r.name = spec->name;
  r.key = spec->key;
  r.spec_key = spec->key;
  r.via = std::move(via);
  r.inline_spec = std::move(spec);
  return r;
}

std::optional<GangRef> ResolveImpl(const api::Pod& pod, const DialectOptions& opts,
                                   const OwnerLookup& owner) {
  if (auto r = UpstreamRef(pod, owner)) return r;
  if (pod.spec.workload_ref || !pod.spec.scheduling_group_pod_group_name.empty()) {
    return std::nullopt;  // a Workload pod group with the basic policy
  }
  const Annotations& labels = pod.metadata.labels;
  const Annotations& ann = pod.metadata.annotations;
  for (std::string_view label : {kCoschedLabel, kCoschedLegacyLabel}) {
    if (const std::string* v = FindNonEmpty(labels, label)) {
      return ObjectRef(pod, Dialect::kCoscheduling, *v, "label " + std::string(label));
    }
  }
  if (auto r = KoordinatorRef(pod)) return r;
  for (std::string_view key : {kVolcanoAnn, kVolcanoAnnAlias}) {
    if (const std::string* v = FindNonEmpty(ann, key)) {
      return ObjectRef(pod, Dialect::kVolcano, *v, "annotation " + std::string(key));
    }
  }
  if (const std::string* v = FindNonEmpty(ann, kKaiAnn)) {
    return ObjectRef(pod, Dialect::kKAI, *v, "annotation " + std::string(kKaiAnn));
  }
  return DerivedRef(pod, opts, owner);
}

}  // namespace

namespace {
// Phalanx's own topology annotations, on a gang object of any dialect or (for inline
// gangs) on the pod: keep the gang inside one domain of a node label.
constexpr const char* kTopologyKeyAnnotation = "scheduling.phalanx.dev/topology-key";
constexpr const char* kTopologyPolicyAnnotation = "scheduling.phalanx.dev/topology-policy";

void ApplyTopologyAnnotations(const std::map<std::string, std::string>& annotations,
                              const std::string& what, PodGroupSpec* s) {
  auto k = annotations.find(kTopologyKeyAnnotation);
  if (k == annotations.end()) return;
  s->topology.topology.clear();
  s->topology.required_level = k->second;
  s->topology.preferred_level.clear();
  auto p = annotations.find(kTopologyPolicyAnnotation);
  if (p != annotations.end()) {
    if (p->second == "Preferred") {
      s->topology.preferred_level = k->second;
      s->topology.required_level.clear();
    } else if (p->second != "Required") {
      s->invalid = what + ": metadata.annotations[" + kTopologyPolicyAnnotation +
                   "]: Unsupported value: \"" + p->second +
                   "\": supported values: \"Required\", \"Preferred\"";
    }
  }
}
}  // namespace

std::optional<GangRef> ResolvePodGang(const api::Pod& pod, const DialectOptions& opts,
                                      const OwnerLookup& owner) {
  try {
    auto ref = ResolveImpl(pod, opts, owner);
    if (ref && ref->inline_spec) {
      ApplyTopologyAnnotations(pod.metadata.annotations, "Pod " + pod.Key(), &*ref->inline_spec);
    }
    return ref;
  } catch (const std::exception&) {
    // Only a malformed owner object can get here (yaml-cpp); the pod then has no gang
    // that we can derive.
    return std::nullopt;
  }
}

bool IsTopologyObject(const api::Unstructured& obj) {
  if (obj.kind == "ClusterNetworkTopology") return obj.Group() == kGroupKoordScheduling;
  return obj.kind == "Topology" &&
         (obj.Group() == "kai.scheduler" || obj.Group() == "kueue.x-k8s.io");
}

namespace {

// Koordinator ClusterNetworkTopology (apis/scheduling/v1alpha1/
// cluster_network_topology_types.go; its CRD): spec.networkTopologySpec[]{topologyLayer,
// parentTopologyLayer, labelKey[]}, a chain from the layer whose parent is
// ClusterTopologyLayer (or none) down to NodeTopologyLayer (the node itself:
// kubernetes.io/hostname). Levels top -> bottom with their layer names.
void ClusterNetworkTopologyLevels(const api::Unstructured& obj, Topology* t, Errors* errs) {
  const YAML::Node spec = Child(Root(obj), "spec");
  for (auto it = spec.begin(); spec.IsMap() && it != spec.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string();
    if (key != "networkTopologySpec") {
      errs->Add("spec." + key, "unknown field (ClusterNetworkTopology " +
                                   std::string(kGroupKoordScheduling) +
                                   "/v1alpha1 has spec.networkTopologySpec)");
    }
  }
  const YAML::Node layers = Child(spec, "networkTopologySpec");
  if (!Present(layers) || !layers.IsSequence() || layers.size() == 0) {
    errs->Add("spec.networkTopologySpec", "must have at least 1 item");
    return;
  }
  std::map<std::string, std::string> parent_of, label_of;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string path = "spec.networkTopologySpec[" + std::to_string(i) + "]";
    const std::string layer = Str(layers[i], "topologyLayer");
    if (layer.empty()) {
      errs->Add(path + ".topologyLayer", "required");
      continue;
    }
    if (parent_of.count(layer)) errs->Add(path + ".topologyLayer", "repeats " + Quote(layer));
    parent_of[layer] = Str(layers[i], "parentTopologyLayer");
    const YAML::Node keys = Child(layers[i], "labelKey");
    if (Present(keys) && (!keys.IsSequence() || keys.size() > 1)) {
      errs->Add(path + ".labelKey",
                "must list one node label key (several, matched as any of, are not supported)");
    } else if (Present(keys) && keys.size() == 1 && keys[0].IsScalar()) {
      label_of[layer] = keys[0].Scalar();
    }
  }
  if (!errs->empty()) return;
  // Walk up from the node layer.
  std::vector<std::pair<std::string, std::string>> chain;  // bottom -> top
  std::string at = "NodeTopologyLayer";
  for (size_t guard = 0; guard <= parent_of.size() + 1; ++guard) {
    const std::string label = at == "NodeTopologyLayer" ? "kubernetes.io/hostname" : label_of[at];
    if (label.empty()) {
      errs->Add("spec.networkTopologySpec", "layer " + Quote(at) + " has no labelKey");
      return;
    }
    chain.emplace_back(at, label);
    auto p = parent_of.find(at);
    if (p == parent_of.end() || p->second.empty() || p->second == "ClusterTopologyLayer") break;
    at = p->second;
    if (!parent_of.count(at)) {
      errs->Add("spec.networkTopologySpec", "parentTopologyLayer " + Quote(at) + " is no layer");
      return;
    }
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    t->levels.push_back(it->second);
    t->layer_names.push_back(it->first);
  }
}

}  // namespace

Topology TopologyFromObject(const api::Unstructured& obj) {
  Topology t;
  t.name = obj.metadata.name;
  if (obj.kind == "ClusterNetworkTopology") {
    t.name = std::string(kGroupKoordScheduling) + "/" + obj.metadata.name;
    Errors errs("ClusterNetworkTopology " + obj.metadata.name);
    try {
      ClusterNetworkTopologyLevels(obj, &t, &errs);
    } catch (const std::exception& e) {
      errs.Add("spec", std::string("malformed object: ") + e.what());
    }
    t.invalid = errs.Summary();
    return t;
  }
  Errors errs("Topology " + t.name);
  try {
    const YAML::Node levels = Child(Child(Root(obj), "spec"), "levels");
    if (!Present(levels) || !levels.IsSequence() || levels.size() == 0) {
      errs.Add("spec.levels", "must have at least 1 item");
    } else {
      for (size_t i = 0; i < levels.size(); ++i) {
        const std::string label = Str(levels[i], "nodeLabel");
        const std::string path = "spec.levels[" + std::to_string(i) + "].nodeLabel";
        if (label.empty()) {
          errs.Add(path, "required");
        } else if (std::find(t.levels.begin(), t.levels.end(), label) != t.levels.end()) {
          errs.Add(path, "must be unique, " + Quote(label) + " repeats");  // KAI's CEL rule
        } else {
          t.levels.push_back(label);
        }
      }
    }
  } catch (const std::exception& e) {
    errs.Add("spec", std::string("malformed object: ") + e.what());
  }
  t.invalid = errs.Summary();
  return t;
}

bool IsGangObject(const api::Unstructured& obj) {
  if (obj.kind == "PodGroup") return true;
  return (obj.kind == "Workload" || obj.kind == "CompositePodGroup") &&
         obj.Group() == kGroupUpstream;
}

std::vector<PodGroupSpec> SpecsFromObject(const api::Unstructured& obj) {
  try {
    auto specs = SpecsImpl(obj);
    for (auto& sp : specs) ApplyTopologyAnnotations(obj.metadata.annotations, ObjectWhat(obj), &sp);
    return specs;
  } catch (const std::exception& e) {
    PodGroupSpec s = ObjectSpec(obj, obj.Group() == kGroupVolcano    ? Dialect::kVolcano
                                     : obj.Group() == kGroupKAI      ? Dialect::kKAI
                                     : obj.Group() == kGroupUpstream ? Dialect::kWorkload
                                                                     : Dialect::kCoscheduling);
    s.invalid = ObjectWhat(obj) + ": malformed object: " + e.what();
    return {std::move(s)};
  }
}

}  // namespace phalanx::gang
