#include "sim/workloads.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

namespace phalanx::sim {

namespace {

using YAML::Node;

// ---- YAML access (read only: never operator[] on a node we did not create) ----

Node Get(const Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return Node(YAML::NodeType::Undefined);
  const Node& c = n;
  return c[key];
}
bool Present(const Node& n) { return n.IsDefined() && !n.IsNull(); }

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// A decimal integer, as the API server's JSON decoding of an int32 field takes it.
bool ParseInt(std::string_view s, int64_t* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

const char* TypeName(const Node& n) {
  if (n.IsSequence()) return "array";
  if (n.IsMap()) return "object";
  if (n.IsScalar()) return "string";
  return "null";
}

// A stable 10-hex-digit hash (FNV-1a 64): the group and job keys, which upstream makes with
// SHA-1 (jobHashKey, genGroupUniqueKey); only their equality matters to placement.
std::string StableHash(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out(10, '0');
  for (int i = 9; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[h & 0xF];
    h >>= 4;
  }
  return out;
}

// The object's UID where a label value or a name needs it (the JobSet's jobset-uid label,
// the Volcano PodGroup "<job>-<uid>"): the UID itself when it is a valid label value,
// else a stable hash of it (objects of a manifest that sets none have "<Kind>.<group>/..."
// as their UID, api::Unstructured).
std::string UidToken(const std::string& uid) {
  const bool ok =
      !uid.empty() && uid.size() <= 63 && std::isalnum(static_cast<unsigned char>(uid.front())) &&
      std::isalnum(static_cast<unsigned char>(uid.back())) &&
      std::all_of(uid.begin(), uid.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (!ok) return StableHash(uid);
  std::string lower = uid;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string ToLower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One workload being expanded: its identity for messages, field readers that name the
// field, and the creation of its children.
class Workload {
 public:
  Workload(const api::Unstructured& obj, WorkloadExpansion* out)
      : obj_(obj),
        out_(out),
        what_((obj.source.empty() ? std::string("manifests") : obj.source) + ": " + obj.kind + " " +
              obj.metadata.namespace_ + "/" + obj.metadata.name),
        root_(obj.object ? *obj.object : Node(YAML::NodeType::Undefined)) {}

  const api::Unstructured& obj() const { return obj_; }
  const Node& root() const { return root_; }
  const std::string& what() const { return what_; }
  const std::string& ns() const { return obj_.metadata.namespace_; }
  const std::string& name() const { return obj_.metadata.name; }

  api::Status Error(const std::string& field, const std::string& detail) const {
    return absl::InvalidArgumentError(what_ + ": " + field + ": " + detail);
  }
  void Warn(const std::string& field, const std::string& detail) const {
    out_->warnings.push_back(what_ + ": " + field + ": " + detail);
  }
  void Note(const std::string& field, const std::string& detail) const {
    out_->notes.push_back(what_ + ": " + field + ": " + detail);
  }

  // Integer field `key` of `parent` (at `path`): absent -> `def`; below `min` or not an
  // integer is an error.
  api::Status Int(const Node& parent, const char* key, const std::string& path, int64_t def,
                  int64_t min, int64_t* out) const {
    const Node n = Get(parent, key);
    const std::string field = path.empty() ? key : path + "." + key;
    if (!Present(n)) {
      *out = def;
      return absl::OkStatus();
    }
    int64_t v = 0;
    if (!n.IsScalar() || !ParseInt(n.Scalar(), &v)) {
      return Error(field, "Invalid value: " + (n.IsScalar() ? Quote(n.Scalar()) : TypeName(n)) +
                              ": must be an integer");
    }
    if (v < min || v > std::numeric_limits<int32_t>::max()) {
      return Error(field, "Invalid value: " + std::to_string(v) + ": must be between " +
                              std::to_string(min) + " and 2147483647");
    }
    *out = v;
    return absl::OkStatus();
  }
  api::Status Str(const Node& parent, const char* key, const std::string& path,
                  std::string* out) const {
    const Node n = Get(parent, key);
    out->clear();
    if (!Present(n)) return absl::OkStatus();
    if (!n.IsScalar()) {
      return Error(path.empty() ? key : path + "." + key,
                   std::string("expected string, got ") + TypeName(n));
    }
    *out = n.Scalar();
    return absl::OkStatus();
  }
  api::Status Bool(const Node& parent, const char* key, const std::string& path, bool* out) const {
    const Node n = Get(parent, key);
    *out = false;
    if (!Present(n)) return absl::OkStatus();
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, *out)) {
      return Error(path.empty() ? key : path + "." + key,
                   "expected boolean, got " + (n.IsScalar() ? Quote(n.Scalar()) : TypeName(n)));
    }
    return absl::OkStatus();
  }
  // A map field (labels, annotations, a template's metadata) or an error naming it.
  api::Status Map(const Node& parent, const char* key, const std::string& path) const {
    const Node n = Get(parent, key);
    if (Present(n) && !n.IsMap()) {
      return Error(path.empty() ? key : path + "." + key,
                   std::string("expected object, got ") + TypeName(n));
    }
    return absl::OkStatus();
  }
  api::Status Seq(const Node& parent, const char* key, const std::string& path,
                  bool required) const {
    const Node n = Get(parent, key);
    const std::string field = path.empty() ? key : path + "." + key;
    if (!Present(n)) return required ? Error(field, "Required value") : absl::OkStatus();
    if (!n.IsSequence()) return Error(field, std::string("expected array, got ") + TypeName(n));
    if (required && n.size() == 0) return Error(field, "Required value: must have at least 1 item");
    return absl::OkStatus();
  }

  // A label or annotation of the workload ("" when unset).
  std::string Label(const std::string& key) const {
    auto it = obj_.metadata.labels.find(key);
    return it == obj_.metadata.labels.end() ? std::string() : it->second;
  }
  std::string Annotation(const std::string& key) const {
    auto it = obj_.metadata.annotations.find(key);
    return it == obj_.metadata.annotations.end() ? std::string() : it->second;
  }

  // spec.suspend, with Kueue's part: a workload labelled kueue.x-k8s.io/queue-name is
  // admitted at once (Kueue's webhook suspends it and its controller lifts that on
  // admission), with a warning that Kueue's quotas are not applied.
  api::Status Suspended(const Node& spec, const std::string& path, bool* suspended) const {
    if (auto s = Bool(spec, "suspend", path, suspended); !s.ok()) return s;
    const std::string queue = Label(kKueueQueueNameLabel);
    if (!queue.empty()) {
      Warn(std::string("metadata.labels[") + kKueueQueueNameLabel + "]",
           Quote(queue) +
               ": Kueue's admission (LocalQueue, ClusterQueue quotas) is not modelled: "
               "created as if admitted at once" +
               (*suspended ? " (spec.suspend: true is lifted as Kueue would)" : ""));
      *suspended = false;
      return absl::OkStatus();
    }
    if (*suspended) {
      Note((path.empty() ? std::string() : path + ".") + "suspend",
           "true: no pods are created (as its controller does for a suspended " + obj_.kind + ")");
    }
    return absl::OkStatus();
  }

  // Metadata of a child object: namespace, name, the owner reference to this workload (or
  // `owner` when given: kind, name, uid) and the given labels / annotations.
  Node ChildMeta(const std::string& name, const Node& labels, const Node& annotations,
                 const api::Unstructured* owner = nullptr) const {
    const api::Unstructured& o = owner ? *owner : obj_;
    Node m(YAML::NodeType::Map);
    m["name"] = name;
    m["namespace"] = ns();
    if (Present(labels)) m["labels"] = YAML::Clone(labels);
    if (Present(annotations)) m["annotations"] = YAML::Clone(annotations);
    Node ref(YAML::NodeType::Map);
    ref["apiVersion"] = o.api_version;
    ref["kind"] = o.kind;
    ref["name"] = o.metadata.name;
    ref["uid"] = o.metadata.uid;
    ref["controller"] = true;
    m["ownerReferences"].push_back(ref);
    return m;
  }

  // Decodes a created object as a manifest document (pods, Jobs, PodGroups, ...): its
  // errors name this workload ("<file>: JobSet ns/x creates: Job ns/x-w-0: field: ...").
  api::Status Create(const Node& doc) const {
    return api::DecodeManifestNode(doc, what_ + " creates", &out_->created);
  }

 private:
  const api::Unstructured& obj_;
  WorkloadExpansion* out_;
  std::string what_;
  Node root_;
};

// Sets `key` to `value` in the map `parent[field]` (created when absent).
void SetIn(Node parent, const char* field, const std::string& key, const std::string& value) {
  Node m = parent[field];
  if (!m.IsMap()) {
    parent[field] = Node(YAML::NodeType::Map);
    m = parent[field];
  }
  m[key] = value;
}

// The pod template `tmpl` ({metadata, spec}) copied, its metadata a map.
Node CloneTemplate(const Node& tmpl) {
  Node t = Present(tmpl) ? YAML::Clone(tmpl) : Node(YAML::NodeType::Map);
  if (!Present(Get(t, "metadata"))) t["metadata"] = Node(YAML::NodeType::Map);
  if (!Present(Get(t, "spec"))) t["spec"] = Node(YAML::NodeType::Map);
  return t;
}

// A template's metadata labels / annotations checked to be maps (at `path`.metadata).
api::Status CheckTemplateMeta(const Workload& w, const Node& tmpl, const std::string& path) {
  if (auto s = w.Map(tmpl, "metadata", path); !s.ok()) return s;
  if (auto s = w.Map(tmpl, "spec", path); !s.ok()) return s;
  const Node meta = Get(tmpl, "metadata");
  if (auto s = w.Map(meta, "labels", path + ".metadata"); !s.ok()) return s;
  return w.Map(meta, "annotations", path + ".metadata");
}

// Required pod affinity to `key`=`value` and anti-affinity to other values of `key` (and,
// when `priority_key` is set, of the same priority) in `topology` (JobSet / LWS exclusive
// placement, pod_webhook.go setExclusiveAffinities / SetExclusiveAffinities).
void AddExclusiveAffinity(Node pod_spec, const std::string& key, const std::string& value,
                          const std::string& topology, const std::string& priority_key,
                          const std::string& priority) {
  Node aff = pod_spec["affinity"];
  if (!aff.IsMap()) {
    pod_spec["affinity"] = Node(YAML::NodeType::Map);
    aff = pod_spec["affinity"];
  }
  Node in(YAML::NodeType::Map);
  in["key"] = key;
  in["operator"] = "In";
  in["values"].push_back(value);
  Node term(YAML::NodeType::Map);
  term["labelSelector"]["matchExpressions"].push_back(in);
  term["topologyKey"] = topology;
  if (!priority_key.empty()) term["namespaceSelector"] = Node(YAML::NodeType::Map);
  aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"].push_back(term);

  Node exists(YAML::NodeType::Map);
  exists["key"] = key;
  exists["operator"] = "Exists";
  Node not_in(YAML::NodeType::Map);
  not_in["key"] = key;
  not_in["operator"] = "NotIn";
  not_in["values"].push_back(value);
  Node anti(YAML::NodeType::Map);
  anti["labelSelector"]["matchExpressions"].push_back(exists);
  anti["labelSelector"]["matchExpressions"].push_back(not_in);
  if (!priority_key.empty()) {
    Node same(YAML::NodeType::Map);
    same["key"] = priority_key;
    same["operator"] = "In";
    same["values"].push_back(priority);
    anti["labelSelector"]["matchExpressions"].push_back(same);
    anti["namespaceSelector"] = Node(YAML::NodeType::Map);
  }
  anti["topologyKey"] = topology;
  aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"].push_back(anti);
}

// The priority admission gives a pod of this spec (spec.priorityClassName's value, else
// the globalDefault class's, else 0), as a string (JobSet's jobset.sigs.k8s.io/priority).
std::string AdmittedPriority(const Node& pod_spec, const std::vector<api::PriorityClass>& pcs) {
  const Node pcn = Get(pod_spec, "priorityClassName");
  const std::string pc = Present(pcn) && pcn.IsScalar() ? pcn.Scalar() : std::string();
  int32_t global = 0;
  for (const auto& c : pcs) {
    if (!pc.empty() && c.metadata.name == pc) return std::to_string(c.value);
    if (c.global_default) global = c.value;
  }
  if (pc == "system-node-critical") return "2000001000";
  if (pc == "system-cluster-critical") return "2000000000";
  return std::to_string(global);
}

// ---- JobSet ----

constexpr const char* kJobSetName = "jobset.sigs.k8s.io/jobset-name";
constexpr const char* kJobSetUid = "jobset.sigs.k8s.io/jobset-uid";
constexpr const char* kJobSetRJobName = "jobset.sigs.k8s.io/replicatedjob-name";
constexpr const char* kJobSetRJobReplicas = "jobset.sigs.k8s.io/replicatedjob-replicas";
constexpr const char* kJobSetGlobalReplicas = "jobset.sigs.k8s.io/global-replicas";
constexpr const char* kJobSetJobIndex = "jobset.sigs.k8s.io/job-index";
constexpr const char* kJobSetJobKey = "jobset.sigs.k8s.io/job-key";
constexpr const char* kJobSetJobGlobalIndex = "jobset.sigs.k8s.io/job-global-index";
constexpr const char* kJobSetGroupName = "jobset.sigs.k8s.io/group-name";
constexpr const char* kJobSetGroupReplicas = "jobset.sigs.k8s.io/group-replicas";
constexpr const char* kJobSetJobGroupIndex = "jobset.sigs.k8s.io/job-group-index";
constexpr const char* kJobSetRestarts = "jobset.sigs.k8s.io/restart-attempt";
constexpr const char* kJobSetPriority = "jobset.sigs.k8s.io/priority";
constexpr const char* kJobSetExclusive = "alpha.jobset.sigs.k8s.io/exclusive-topology";
constexpr const char* kJobSetNodeSelectorStrategy = "alpha.jobset.sigs.k8s.io/node-selector";
constexpr const char* kJobSetNamespacedJob = "alpha.jobset.sigs.k8s.io/namespaced-job";
constexpr const char* kJobSetNoSchedule = "alpha.jobset.sigs.k8s.io/no-schedule";

struct ReplicatedJob {
  std::string name, group = "default";
  int64_t replicas = 1;
  Node tmpl;  // JobTemplateSpec {metadata, spec}
};

// spec.replicatedJobs[] of a JobSet, checked as the JobSet webhook does (a name, replicas
// >= 0, a Job template with a pod template); `dependsOn` is a warning (not modelled).
api::Status ParseReplicatedJobs(const Workload& w, const Node& spec,
                                std::vector<ReplicatedJob>* jobs) {
  if (auto s = w.Seq(spec, "replicatedJobs", "spec", /*required=*/true); !s.ok()) return s;
  const Node rjs = Get(spec, "replicatedJobs");
  for (size_t i = 0; i < rjs.size(); ++i) {
    const std::string path = "spec.replicatedJobs[" + std::to_string(i) + "]";
    const Node rj = rjs[i];
    if (!rj.IsMap()) return w.Error(path, std::string("expected object, got ") + TypeName(rj));
    ReplicatedJob r;
    if (auto s = w.Str(rj, "name", path, &r.name); !s.ok()) return s;
    if (r.name.empty()) return w.Error(path + ".name", "Required value");
    std::string group;
    if (auto s = w.Str(rj, "groupName", path, &group); !s.ok()) return s;
    if (!group.empty()) r.group = group;
    if (auto s = w.Int(rj, "replicas", path, 1, 0, &r.replicas); !s.ok()) return s;
    if (auto s = w.Map(rj, "template", path); !s.ok()) return s;
    r.tmpl = Get(rj, "template");
    if (auto s = CheckTemplateMeta(w, r.tmpl, path + ".template"); !s.ok()) return s;
    const Node job_spec = Get(r.tmpl, "spec");
    if (auto s = w.Map(job_spec, "template", path + ".template.spec"); !s.ok()) return s;
    if (auto s = CheckTemplateMeta(w, Get(job_spec, "template"), path + ".template.spec.template");
        !s.ok()) {
      return s;
    }
    if (Present(Get(rj, "dependsOn"))) {
      w.Warn(path + ".dependsOn",
             "not modelled: the Jobs of " + Quote(r.name) +
                 " are created with the others, not once their dependencies are Ready or "
                 "Complete");
    }
    jobs->push_back(std::move(r));
  }
  return absl::OkStatus();
}

// spec.startupPolicy and spec.volumeClaimPolicies of a JobSet: InOrder and volume claim
// policies are warnings (not modelled), an unknown order an error.
api::Status CheckJobSetPolicies(const Workload& w, const Node& spec) {
  std::string order;
  if (auto s =
          w.Str(Get(spec, "startupPolicy"), "startupPolicyOrder", "spec.startupPolicy", &order);
      !s.ok()) {
    return s;
  }
  if (order == "InOrder") {
    w.Warn("spec.startupPolicy.startupPolicyOrder",
           "InOrder: not modelled: every replicatedJob's Jobs are created at once (PodGrouper "
           "still makes each replicatedJob a gang of its own, as KAI does)");
  } else if (!order.empty() && order != "AnyOrder") {
    return w.Error(
        "spec.startupPolicy.startupPolicyOrder",
        "Unsupported value: " + Quote(order) + ": supported values: \"AnyOrder\", \"InOrder\"");
  }
  if (Present(Get(spec, "volumeClaimPolicies"))) {
    w.Warn("spec.volumeClaimPolicies",
           "not modelled: the Jobs get no volumes from it (VolumeBinding does not see them)");
  }
  return absl::OkStatus();
}

// Where one child Job of a JobSet sits: its index in its replicatedJob, in the JobSet and
// in its group, and the replica counts the labels carry (upstream jobset: labelAndAnnotate).
struct JobSetJobIndex {
  int64_t job = 0, global = 0, group = 0;
  int64_t global_replicas = 0, group_replicas = 0;
};

// The Job the JobSet controller creates for replica `at.job` of `r`: the JobSet's labels
// and annotations on the Job and its pod template, Indexed completion by default, and
// exclusive placement (the replicatedJob's annotation over the JobSet's `js_exclusive` /
// `js_strategy`) as node selector + toleration or as pod (anti-)affinity.
Node JobSetChildJob(const Workload& w, const ReplicatedJob& r, const JobSetJobIndex& at,
                    const std::string& js_exclusive, const std::string& js_strategy,
                    const std::vector<api::PriorityClass>& pcs) {
  const std::string job_name = w.name() + "-" + r.name + "-" + std::to_string(at.job);
  const std::string job_key = StableHash(w.ns() + "/" + job_name);
  std::map<std::string, std::string> meta = {
      {kJobSetName, w.name()},
      {kJobSetUid, UidToken(w.obj().metadata.uid)},
      {kJobSetRJobName, r.name},
      {kJobSetRestarts, "0"},
      {kJobSetRJobReplicas, std::to_string(r.replicas)},
      {kJobSetGlobalReplicas, std::to_string(at.global_replicas)},
      {kJobSetJobIndex, std::to_string(at.job)},
      {kJobSetJobKey, job_key},
      {kJobSetJobGlobalIndex, std::to_string(at.global)},
      {kJobSetGroupName, r.group},
      {kJobSetGroupReplicas, std::to_string(at.group_replicas)},
      {kJobSetJobGroupIndex, std::to_string(at.group)},
  };
  // Exclusive placement: the replicatedJob's own annotation wins over the JobSet's.
  const Node tmeta = Get(r.tmpl, "metadata");
  const Node rj_ann = Get(tmeta, "annotations");
  std::string exclusive = js_exclusive, strategy = js_strategy;
  if (Present(Get(rj_ann, kJobSetExclusive))) {
    exclusive = Get(rj_ann, kJobSetExclusive).as<std::string>("");
    strategy = Present(Get(rj_ann, kJobSetNodeSelectorStrategy))
                   ? Get(rj_ann, kJobSetNodeSelectorStrategy).as<std::string>("")
                   : std::string();
  }
  Node job(YAML::NodeType::Map);
  job["apiVersion"] = "batch/v1";
  job["kind"] = "Job";
  job["metadata"] = w.ChildMeta(job_name, Get(tmeta, "labels"), rj_ann);
  job["spec"] =
      Present(Get(r.tmpl, "spec")) ? YAML::Clone(Get(r.tmpl, "spec")) : Node(YAML::NodeType::Map);
  Node js = job["spec"];
  if (!Present(Get(js, "completionMode"))) js["completionMode"] = "Indexed";
  js["suspend"] = false;
  js["template"] = CloneTemplate(Get(js, "template"));
  Node pod = js["template"];
  for (const auto& [k, v] : meta) {
    SetIn(job["metadata"], "labels", k, v);
    SetIn(job["metadata"], "annotations", k, v);
    SetIn(pod["metadata"], "labels", k, v);
    SetIn(pod["metadata"], "annotations", k, v);
  }
  if (!exclusive.empty()) {
    SetIn(pod["metadata"], "annotations", kJobSetExclusive, exclusive);
    if (!strategy.empty()) {
      Node pspec = pod["spec"];
      SetIn(pspec, "nodeSelector", kJobSetNamespacedJob, w.ns() + "_" + job_name);
      Node tol(YAML::NodeType::Map);
      tol["key"] = kJobSetNoSchedule;
      tol["operator"] = "Exists";
      tol["effect"] = "NoSchedule";
      pspec["tolerations"].push_back(tol);
    } else {
      const std::string prio = AdmittedPriority(Get(pod, "spec"), pcs);
      SetIn(pod["metadata"], "labels", kJobSetPriority, prio);
      AddExclusiveAffinity(pod["spec"], kJobSetJobKey, job_key, exclusive, kJobSetPriority, prio);
    }
  }
  return job;
}

api::Status ExpandJobSet(const Workload& w, const std::vector<api::PriorityClass>& pcs) {
  const Node spec = Get(w.root(), "spec");
  if (auto s = w.Map(w.root(), "spec", ""); !s.ok()) return s;
  bool suspended = false;
  if (auto s = w.Suspended(spec, "spec", &suspended); !s.ok()) return s;
  std::vector<ReplicatedJob> jobs;
  if (auto s = ParseReplicatedJobs(w, spec, &jobs); !s.ok()) return s;
  std::map<std::string, int64_t> group_replicas;
  int64_t global_replicas = 0;
  for (const auto& r : jobs) {
    group_replicas[r.group] += r.replicas;
    global_replicas += r.replicas;
  }
  if (auto s = CheckJobSetPolicies(w, spec); !s.ok()) return s;
  if (suspended) return absl::OkStatus();

  const std::string js_exclusive = w.Annotation(kJobSetExclusive);
  const std::string js_strategy = w.Annotation(kJobSetNodeSelectorStrategy);
  std::map<std::string, int64_t> group_seen;
  int64_t global_index = 0;
  for (const auto& r : jobs) {
    for (int64_t j = 0; j < r.replicas; ++j, ++global_index) {
      const JobSetJobIndex at{j, global_index, group_seen[r.group]++, global_replicas,
                              group_replicas[r.group]};
      if (auto s = w.Create(JobSetChildJob(w, r, at, js_exclusive, js_strategy, pcs)); !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

// ---- LeaderWorkerSet ----

constexpr const char* kLwsName = "leaderworkerset.sigs.k8s.io/name";
constexpr const char* kLwsGroupIndex = "leaderworkerset.sigs.k8s.io/group-index";
constexpr const char* kLwsWorkerIndex = "leaderworkerset.sigs.k8s.io/worker-index";
constexpr const char* kLwsGroupKey = "leaderworkerset.sigs.k8s.io/group-key";
constexpr const char* kLwsSize = "leaderworkerset.sigs.k8s.io/size";
constexpr const char* kLwsReplicas = "leaderworkerset.sigs.k8s.io/replicas";
constexpr const char* kLwsLeaderName = "leaderworkerset.sigs.k8s.io/leader-name";
constexpr const char* kLwsRevision = "leaderworkerset.sigs.k8s.io/template-revision-hash";
constexpr const char* kLwsExclusive = "leaderworkerset.sigs.k8s.io/exclusive-topology";
constexpr const char* kVolcanoGroupName = "scheduling.k8s.io/group-name";

// A StatefulSet stand-in (the owner chain PodGrouper follows: pod -> StatefulSet -> LWS).
api::Status CreateStatefulSet(const Workload& w, const std::string& name,
                              const std::string& group_index, api::Unstructured* out) {
  Node sts(YAML::NodeType::Map);
  sts["apiVersion"] = "apps/v1";
  sts["kind"] = "StatefulSet";
  Node labels(YAML::NodeType::Map);
  labels[kLwsName] = w.name();
  if (!group_index.empty()) labels[kLwsGroupIndex] = group_index;
  sts["metadata"] = w.ChildMeta(name, labels, Node());
  out->api_version = "apps/v1";
  out->kind = "StatefulSet";
  out->metadata.name = name;
  out->metadata.namespace_ = w.ns();
  out->metadata.labels = {{kLwsName, w.name()}};
  if (!group_index.empty()) out->metadata.labels[kLwsGroupIndex] = group_index;
  out->metadata.owner_references.push_back(
      {w.obj().api_version, w.obj().kind, w.name(), w.obj().metadata.uid, true});
  out->metadata.uid = out->Key();
  out->object = std::make_shared<const Node>(sts);
  return absl::OkStatus();
}

api::Status ExpandLeaderWorkerSet(const Workload& w, WorkloadExpansion* out) {
  const Node spec = Get(w.root(), "spec");
  if (auto s = w.Map(w.root(), "spec", ""); !s.ok()) return s;
  int64_t replicas = 1, size = 1;
  if (auto s = w.Int(spec, "replicas", "spec", 1, 0, &replicas); !s.ok()) return s;
  const Node lwt = Get(spec, "leaderWorkerTemplate");
  if (!Present(lwt)) return w.Error("spec.leaderWorkerTemplate", "Required value");
  if (!lwt.IsMap()) {
    return w.Error("spec.leaderWorkerTemplate",
                   std::string("expected object, got ") + TypeName(lwt));
  }
  if (auto s = w.Int(lwt, "size", "spec.leaderWorkerTemplate", 1, 1, &size); !s.ok()) return s;
  const Node worker_t = Get(lwt, "workerTemplate");
  if (!Present(worker_t)) {
    return w.Error("spec.leaderWorkerTemplate.workerTemplate", "Required value");
  }
  if (auto s = CheckTemplateMeta(w, worker_t, "spec.leaderWorkerTemplate.workerTemplate");
      !s.ok()) {
    return s;
  }
  const Node leader_in = Get(lwt, "leaderTemplate");
  if (Present(leader_in)) {
    if (auto s = CheckTemplateMeta(w, leader_in, "spec.leaderWorkerTemplate.leaderTemplate");
        !s.ok()) {
      return s;
    }
  }
  const Node leader_t = Present(leader_in) ? leader_in : worker_t;
  std::string startup;
  if (auto s = w.Str(spec, "startupPolicy", "spec", &startup); !s.ok()) return s;
  if (!startup.empty() && startup != "LeaderCreated" && startup != "LeaderReady") {
    return w.Error("spec.startupPolicy", "Unsupported value: " + Quote(startup) +
                                             ": supported values: \"LeaderCreated\", "
                                             "\"LeaderReady\"");
  }
  if (startup == "LeaderReady" && size > 1) {
    w.Warn("spec.startupPolicy",
           "LeaderReady: not modelled: the workers are created with their leader, not once it "
           "is Ready");
  }
  if (Present(Get(lwt, "subGroupPolicy"))) {
    w.Warn("spec.leaderWorkerTemplate.subGroupPolicy",
           "not modelled: no subgroup-index labels nor subgroup exclusive placement");
  }
  const std::string exclusive = w.Annotation(kLwsExclusive);
  const std::string revision = StableHash(w.ns() + "/" + w.name() + "#revision");
  // Volcano gang scheduling (LWS's Volcano provider): recognised by the pods' schedulerName.
  auto scheduler_of = [](const Node& t) {
    const Node n = Get(Get(t, "spec"), "schedulerName");
    return Present(n) && n.IsScalar() ? n.Scalar() : std::string();
  };
  const bool volcano = scheduler_of(leader_t) == "volcano" || scheduler_of(worker_t) == "volcano";

  api::Unstructured leader_sts;
  if (auto s = CreateStatefulSet(w, w.name(), "", &leader_sts); !s.ok()) return s;
  out->created.objects.push_back(leader_sts);
  for (int64_t g = 0; g < replicas; ++g) {
    const std::string gi = std::to_string(g);
    const std::string leader_name = w.name() + "-" + gi;
    const std::string group_key = StableHash(w.ns() + "/" + leader_name);
    const std::string pg_name = w.name() + "-" + gi + "-" + revision;
    api::Unstructured worker_sts;
    if (size > 1) {
      if (auto s = CreateStatefulSet(w, leader_name, gi, &worker_sts); !s.ok()) return s;
      out->created.objects.push_back(worker_sts);
    }
    for (int64_t j = 0; j < size; ++j) {
      const bool leader = j == 0;
      Node t = CloneTemplate(leader ? leader_t : worker_t);
      Node pod(YAML::NodeType::Map);
      pod["apiVersion"] = "v1";
      pod["kind"] = "Pod";
      const std::string pod_name = leader ? leader_name : leader_name + "-" + std::to_string(j);
      pod["metadata"] =
          w.ChildMeta(pod_name, Get(Get(t, "metadata"), "labels"),
                      Get(Get(t, "metadata"), "annotations"), leader ? &leader_sts : &worker_sts);
      Node meta = pod["metadata"];
      SetIn(meta, "labels", kLwsName, w.name());
      SetIn(meta, "labels", kLwsGroupIndex, gi);
      SetIn(meta, "labels", kLwsWorkerIndex, std::to_string(j));
      SetIn(meta, "labels", kLwsGroupKey, group_key);
      SetIn(meta, "labels", kLwsRevision, revision);
      SetIn(meta, "annotations", kLwsSize, std::to_string(size));
      if (leader) {
        SetIn(meta, "annotations", kLwsReplicas, std::to_string(replicas));
      } else {
        SetIn(meta, "annotations", kLwsLeaderName, leader_name);
      }
      pod["spec"] = t["spec"];
      if (!exclusive.empty()) {
        SetIn(meta, "annotations", kLwsExclusive, exclusive);
        AddExclusiveAffinity(pod["spec"], kLwsGroupKey, group_key, exclusive, "", "");
      }
      if (volcano) SetIn(meta, "annotations", kVolcanoGroupName, pg_name);
      if (auto s = w.Create(pod); !s.ok()) return s;
    }
    if (volcano) {
      Node pg(YAML::NodeType::Map);
      pg["apiVersion"] = "scheduling.volcano.sh/v1beta1";
      pg["kind"] = "PodGroup";
      Node labels(YAML::NodeType::Map);
      labels[kLwsName] = w.name();
      labels[kLwsGroupIndex] = gi;
      labels[kLwsRevision] = revision;
      pg["metadata"] = w.ChildMeta(pg_name, labels, Node());
      pg["spec"]["minMember"] = startup == "LeaderReady" ? 1 : size;
      const std::string queue = w.Annotation("scheduling.volcano.sh/queue-name");
      if (!queue.empty()) pg["spec"]["queue"] = queue;
      if (auto s = w.Create(pg); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// ---- Kubeflow training operator v1 (PyTorchJob, TFJob, ...) and MPIJob v2beta1 ----

const char* ReplicaSpecsField(const std::string& kind) {
  if (kind == "PyTorchJob") return "pytorchReplicaSpecs";
  if (kind == "TFJob") return "tfReplicaSpecs";
  if (kind == "XGBoostJob") return "xgbReplicaSpecs";
  if (kind == "PaddleJob") return "paddleReplicaSpecs";
  if (kind == "JAXJob") return "jaxReplicaSpecs";
  if (kind == "MPIJob") return "mpiReplicaSpecs";
  return nullptr;
}

api::Status ExpandKubeflowJob(const Workload& w) {
  const std::string& kind = w.obj().kind;
  const char* field = ReplicaSpecsField(kind);
  const Node spec = Get(w.root(), "spec");
  if (auto s = w.Map(w.root(), "spec", ""); !s.ok()) return s;
  const std::string path = std::string("spec.") + field;
  const Node specs = Get(spec, field);
  if (!Present(specs)) return w.Error(path, "Required value");
  if (!specs.IsMap() || specs.size() == 0) {
    return w.Error(path, "Invalid value: must be a non-empty map of replica type to spec");
  }
  bool suspended = false;
  if (auto s = w.Suspended(Get(spec, "runPolicy"), "spec.runPolicy", &suspended); !s.ok()) {
    return s;
  }
  if (suspended) return absl::OkStatus();
  const bool mpi = kind == "MPIJob";
  // Master / Chief / Launcher first, as the operators create them.
  std::vector<std::pair<std::string, Node>> types;
  for (auto it = specs.begin(); it != specs.end(); ++it) {
    if (!it->first.IsScalar()) return w.Error(path, "expected string keys");
    types.emplace_back(it->first.Scalar(), it->second);
  }
  std::stable_sort(types.begin(), types.end(), [](const auto& a, const auto& b) {
    auto first = [](const std::string& t) {
      return t == "Master" || t == "Chief" || t == "Launcher" ? 0 : 1;
    };
    return first(a.first) < first(b.first);
  });
  for (const auto& [type, rs] : types) {
    const std::string rpath = path + "." + type;
    if (!rs.IsMap()) return w.Error(rpath, std::string("expected object, got ") + TypeName(rs));
    int64_t replicas = 1;
    if (auto s = w.Int(rs, "replicas", rpath, 1, 0, &replicas); !s.ok()) return s;
    if (auto s = w.Map(rs, "template", rpath); !s.ok()) return s;
    if (auto s = CheckTemplateMeta(w, Get(rs, "template"), rpath + ".template"); !s.ok()) return s;
    const std::string rtype = ToLower(type);
    if (mpi && type == "Launcher") {
      // mpi-operator v2: the launcher is a batch Job "<job>-launcher" owned by the MPIJob.
      Node job(YAML::NodeType::Map);
      job["apiVersion"] = "batch/v1";
      job["kind"] = "Job";
      job["metadata"] = w.ChildMeta(w.name() + "-launcher", Node(), Node());
      Node t = CloneTemplate(Get(rs, "template"));
      SetIn(t["metadata"], "labels", "training.kubeflow.org/job-name", w.name());
      SetIn(t["metadata"], "labels", "training.kubeflow.org/job-role", "launcher");
      job["spec"]["template"] = t;
      if (auto s = w.Create(job); !s.ok()) return s;
      continue;
    }
    for (int64_t i = 0; i < replicas; ++i) {
      Node t = CloneTemplate(Get(rs, "template"));
      Node pod(YAML::NodeType::Map);
      pod["apiVersion"] = "v1";
      pod["kind"] = "Pod";
      pod["metadata"] =
          w.ChildMeta(w.name() + "-" + rtype + "-" + std::to_string(i),
                      Get(t["metadata"], "labels"), Get(t["metadata"], "annotations"));
      Node meta = pod["metadata"];
      SetIn(meta, "labels", "training.kubeflow.org/job-name", w.name());
      SetIn(meta, "labels", "training.kubeflow.org/replica-type", rtype);
      SetIn(meta, "labels", "training.kubeflow.org/replica-index", std::to_string(i));
      SetIn(meta, "labels", "training.kubeflow.org/operator-name", ToLower(kind) + "-controller");
      if ((type == "Master" || type == "Chief") && i == 0) {
        SetIn(meta, "labels", "training.kubeflow.org/job-role", "master");
      }
      pod["spec"] = t["spec"];
      if (auto s = w.Create(pod); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// ---- Volcano Job ----

// One spec.tasks[] entry of a Volcano Job.
struct VolcanoTask {
  std::string name;
  int64_t replicas = 0;
  int64_t partition_size = 0;  // partitionPolicy.partitionSize; 0 without a partitionPolicy
  int64_t min = 0;             // the task's minimum: minAvailable, or minPartitions' pods
  Node tmpl;
};

// spec.tasks[i] of a Volcano Job `t`, checked and defaulted as the Job webhook does
// (mutateSpec: a name "default<i>"; partitionPolicy totalPartitions * partitionSize ==
// replicas). A partitionPolicy adds its subGroupPolicy entry to `sub_policies`.
api::Status ParseVolcanoTask(const Workload& w, const Node& t, size_t i, VolcanoTask* task,
                             Node* sub_policies) {
  const std::string path = "spec.tasks[" + std::to_string(i) + "]";
  if (!t.IsMap()) return w.Error(path, std::string("expected object, got ") + TypeName(t));
  if (auto s = w.Str(t, "name", path, &task->name); !s.ok()) return s;
  if (task->name.empty()) task->name = "default" + std::to_string(i);  // mutateSpec
  if (auto s = w.Int(t, "replicas", path, 0, 0, &task->replicas); !s.ok()) return s;
  if (auto s = w.Map(t, "template", path); !s.ok()) return s;
  task->tmpl = Get(t, "template");
  if (auto s = CheckTemplateMeta(w, task->tmpl, path + ".template"); !s.ok()) return s;
  task->min = task->replicas;
  const Node pp = Get(t, "partitionPolicy");
  if (Present(pp)) {
    const std::string ppath = path + ".partitionPolicy";
    int64_t total = 0, min_partitions = 0;
    if (auto s = w.Int(pp, "totalPartitions", ppath, 0, 1, &total); !s.ok()) return s;
    if (auto s = w.Int(pp, "partitionSize", ppath, 0, 1, &task->partition_size); !s.ok()) {
      return s;
    }
    if (auto s = w.Int(pp, "minPartitions", ppath, 0, 0, &min_partitions); !s.ok()) return s;
    if (total * task->partition_size != task->replicas) {
      return w.Error(ppath, "Invalid value: totalPartitions * partitionSize (" +
                                std::to_string(total * task->partition_size) +
                                ") must equal replicas (" + std::to_string(task->replicas) + ")");
    }
    if (min_partitions > 0) task->min = min_partitions * task->partition_size;
    Node policy(YAML::NodeType::Map);
    policy["name"] = task->name;
    policy["subGroupSize"] = task->partition_size;
    policy["minSubGroups"] = min_partitions;
    policy["labelSelector"]["matchLabels"]["volcano.sh/task-spec"] = task->name;
    policy["matchLabelKeys"].push_back("volcano.sh/partition-id");
    if (Present(Get(pp, "networkTopology"))) {
      policy["networkTopology"] = YAML::Clone(Get(pp, "networkTopology"));
    }
    sub_policies->push_back(policy);
  }
  int64_t explicit_min = -1;
  if (auto s = w.Int(t, "minAvailable", path, -1, 0, &explicit_min); !s.ok()) return s;
  if (explicit_min >= 0) task->min = explicit_min;
  return absl::OkStatus();
}

// What every pod of a Volcano Job carries from the Job (upstream volcano
// pkg/controllers/job/job_controller_util.go createJobPod).
struct VolcanoJobPods {
  std::string pg_name, queue, scheduler, priority_class;
};

// Pod `i` of `task`, as the Volcano Job controller creates it: the task-index / task-spec /
// group-name / job-name / queue annotations and labels, the partition-id label, the Job's
// schedulerName and priorityClassName where the template has none.
Node VolcanoTaskPod(const Workload& w, const VolcanoTask& task, int64_t i,
                    const VolcanoJobPods& job) {
  Node t = CloneTemplate(task.tmpl);
  Node pod(YAML::NodeType::Map);
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  pod["metadata"] = w.ChildMeta(w.name() + "-" + task.name + "-" + std::to_string(i),
                                Get(t["metadata"], "labels"), Get(t["metadata"], "annotations"));
  Node meta = pod["metadata"];
  const std::string index = std::to_string(i);
  SetIn(meta, "annotations", "volcano.sh/task-index", index);
  SetIn(meta, "annotations", "volcano.sh/task-spec", task.name);
  SetIn(meta, "annotations", kVolcanoGroupName, job.pg_name);
  SetIn(meta, "annotations", "volcano.sh/job-name", w.name());
  SetIn(meta, "annotations", "volcano.sh/queue-name", job.queue);
  SetIn(meta, "annotations", "volcano.sh/job-version", "0");
  SetIn(meta, "annotations", "volcano.sh/template-uid", w.name() + "-" + task.name);
  SetIn(meta, "labels", "volcano.sh/task-index", index);
  SetIn(meta, "labels", "volcano.sh/job-name", w.name());
  SetIn(meta, "labels", "volcano.sh/task-spec", task.name);
  SetIn(meta, "labels", "volcano.sh/job-namespace", w.ns());
  SetIn(meta, "labels", "volcano.sh/queue-name", job.queue);
  if (task.partition_size > 0) {
    SetIn(meta, "labels", "volcano.sh/partition-id", std::to_string(i / task.partition_size));
  }
  pod["spec"] = t["spec"];
  Node ps = pod["spec"];
  if (!Present(Get(ps, "schedulerName"))) ps["schedulerName"] = job.scheduler;
  if (!job.priority_class.empty() && !Present(Get(ps, "priorityClassName"))) {
    ps["priorityClassName"] = job.priority_class;
  }
  return pod;
}

api::Status ExpandVolcanoJob(const Workload& w) {
  const Node spec = Get(w.root(), "spec");
  if (auto s = w.Map(w.root(), "spec", ""); !s.ok()) return s;
  if (auto s = w.Seq(spec, "tasks", "spec", /*required=*/true); !s.ok()) return s;
  const Node tasks = Get(spec, "tasks");
  VolcanoJobPods job;
  if (auto s = w.Str(spec, "queue", "spec", &job.queue); !s.ok()) return s;
  if (job.queue.empty()) job.queue = "default";
  if (auto s = w.Str(spec, "schedulerName", "spec", &job.scheduler); !s.ok()) return s;
  if (job.scheduler.empty()) job.scheduler = "volcano";  // the webhook's default scheduler name
  if (auto s = w.Str(spec, "priorityClassName", "spec", &job.priority_class); !s.ok()) return s;
  int64_t min_available = 0;
  if (auto s = w.Int(spec, "minAvailable", "spec", 0, 0, &min_available); !s.ok()) return s;
  bool suspended = false;
  if (auto s = w.Suspended(spec, "spec", &suspended); !s.ok()) return s;
  if (Present(Get(spec, "volumes"))) {
    w.Warn("spec.volumes",
           "not modelled: the pods get no volumes from it (VolumeBinding does not see them)");
  }
  job.pg_name = w.name() + "-" + UidToken(w.obj().metadata.uid);
  int64_t sum_min = 0;
  Node min_task(YAML::NodeType::Map);
  Node sub_policies(YAML::NodeType::Sequence);
  std::vector<VolcanoTask> list;
  for (size_t i = 0; i < tasks.size(); ++i) {
    VolcanoTask task;
    if (auto s = ParseVolcanoTask(w, tasks[i], i, &task, &sub_policies); !s.ok()) return s;
    min_task[task.name] = task.min;
    sum_min += task.min;
    list.push_back(std::move(task));
  }
  if (min_available == 0) min_available = sum_min;  // patchDefaultMinAvailable
  if (suspended) return absl::OkStatus();

  Node pg(YAML::NodeType::Map);
  pg["apiVersion"] = "scheduling.volcano.sh/v1beta1";
  pg["kind"] = "PodGroup";
  Node pg_labels(YAML::NodeType::Map), pg_ann(YAML::NodeType::Map);
  for (const auto& [k, v] : w.obj().metadata.labels) pg_labels[k] = v;
  for (const auto& [k, v] : w.obj().metadata.annotations) pg_ann[k] = v;
  pg["metadata"] = w.ChildMeta(job.pg_name, pg_labels, pg_ann);
  pg["spec"]["minMember"] = min_available;
  pg["spec"]["minTaskMember"] = min_task;
  pg["spec"]["queue"] = job.queue;
  if (!job.priority_class.empty()) pg["spec"]["priorityClassName"] = job.priority_class;
  if (Present(Get(spec, "networkTopology"))) {
    pg["spec"]["networkTopology"] = YAML::Clone(Get(spec, "networkTopology"));
  }
  if (sub_policies.size() > 0) pg["spec"]["subGroupPolicy"] = sub_policies;
  if (auto s = w.Create(pg); !s.ok()) return s;

  for (const auto& task : list) {
    for (int64_t i = 0; i < task.replicas; ++i) {
      if (auto s = w.Create(VolcanoTaskPod(w, task, i, job)); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// ---- TrainJob ----

// Strategic-merge-like merge of `patch` into `base` for a JobSet spec: maps merge by key;
// lists whose items are maps with a `name` (replicatedJobs, containers, env) merge by
// name; other values are replaced (upstream: strategicpatch.StrategicMergePatch with the
// JobSetSpec's patch strategies).
void MergeInto(Node base, const Node& patch) {
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string key = it->first.as<std::string>("");
    const Node pv = it->second;
    Node bv = base[key];
    if (pv.IsMap() && bv.IsMap()) {
      MergeInto(bv, pv);
    } else if (pv.IsSequence() && bv.IsSequence() && pv.size() > 0 && pv[0].IsMap() &&
               Present(Get(pv[0], "name"))) {
      for (size_t i = 0; i < pv.size(); ++i) {
        const std::string nm = Get(pv[i], "name").as<std::string>("");
        bool merged = false;
        for (size_t j = 0; j < bv.size(); ++j) {
          if (Get(bv[j], "name").as<std::string>("") == nm) {
            Node item = bv[j];
            MergeInto(item, pv[i]);
            merged = true;
          }
        }
        if (!merged) bv.push_back(YAML::Clone(pv[i]));
      }
    } else {
      base[key] = YAML::Clone(pv);
    }
  }
}

// Requests and limits of `resources` merged over those of the container `c` (trainer's
// MergeResourceRequirements: the TrainJob's values win per resource).
void MergeResources(Node c, const Node& resources) {
  for (const char* part : {"requests", "limits"}) {
    const Node add = Get(resources, part);
    if (!Present(add) || !add.IsMap()) continue;
    for (auto it = add.begin(); it != add.end(); ++it) {
      c["resources"][part][it->first.as<std::string>("")] = YAML::Clone(it->second);
    }
  }
}

// spec.runtimePatches[].trainingRuntimeSpec.template of a TrainJob merged into the runtime's
// JobSet template: metadata labels / annotations into `labels` / `annotations`, spec into
// `jobset_spec` (trainer: the runtime patches apply in order, each a strategic merge).
api::Status ApplyRuntimePatches(const Workload& w, const Node& spec, Node* labels,
                                Node* annotations, Node jobset_spec) {
  const Node patches = Get(spec, "runtimePatches");
  if (!Present(patches)) return absl::OkStatus();
  if (!patches.IsSequence()) {
    return w.Error("spec.runtimePatches", std::string("expected array, got ") + TypeName(patches));
  }
  for (size_t i = 0; i < patches.size(); ++i) {
    const Node pt = Get(Get(patches[i], "trainingRuntimeSpec"), "template");
    if (!Present(pt)) continue;
    const std::string path = "spec.runtimePatches[" + std::to_string(i) + "]";
    if (!pt.IsMap()) return w.Error(path + ".trainingRuntimeSpec.template", "expected object");
    const Node pmeta = Get(pt, "metadata");
    if (Present(Get(pmeta, "labels")) && Get(pmeta, "labels").IsMap()) {
      MergeInto(*labels, Get(pmeta, "labels"));
    }
    if (Present(Get(pmeta, "annotations")) && Get(pmeta, "annotations").IsMap()) {
      MergeInto(*annotations, Get(pmeta, "annotations"));
    }
    if (Present(Get(pt, "spec"))) {
      if (!Get(pt, "spec").IsMap()) {
        return w.Error(path + ".trainingRuntimeSpec.template.spec", "expected object");
      }
      MergeInto(jobset_spec, Get(pt, "spec"));
    }
  }
  return absl::OkStatus();
}

// The trainer step on the runtime's replicatedJobs `rjs` (edited in place): the job whose
// template is labelled trainjob-ancestor-step=trainer runs `num_nodes` pods, its "node"
// container gets spec.trainer's resourcesPerNode and image; a replicatedJob's dependsOn is a
// warning (not modelled). Returns the number of pods of the whole JobSet.
int64_t ApplyTrainerStep(const Workload& w, const std::string& rkind, const std::string& rname,
                         const Node& trainer, int64_t num_nodes, Node rjs) {
  const Node resources = Get(trainer, "resourcesPerNode");
  int64_t total_pods = 0;
  for (size_t i = 0; i < rjs.size(); ++i) {
    Node rj = rjs[i];
    const Node anc = Get(Get(Get(Get(rj, "template"), "metadata"), "labels"),
                         "trainer.kubeflow.org/trainjob-ancestor-step");
    const bool is_trainer = Present(anc) && anc.as<std::string>("") == "trainer";
    int64_t count = 1;
    if (is_trainer) {
      rj["replicas"] = 1;
      rj["template"]["spec"]["parallelism"] = num_nodes;
      rj["template"]["spec"]["completions"] = num_nodes;
      count = num_nodes;
      Node containers = rj["template"]["spec"]["template"]["spec"]["containers"];
      for (size_t c = 0; containers.IsSequence() && c < containers.size(); ++c) {
        if (Get(containers[c], "name").as<std::string>("") != "node") continue;
        Node cn = containers[c];
        if (Present(resources)) MergeResources(cn, resources);
        if (Present(Get(trainer, "image"))) cn["image"] = YAML::Clone(Get(trainer, "image"));
      }
    } else {
      const Node par = Get(Get(Get(rj, "template"), "spec"), "parallelism");
      count = Present(par) && par.IsScalar() ? par.as<int64_t>(1) : 1;
      const Node reps = Get(rj, "replicas");
      count *= Present(reps) && reps.IsScalar() ? reps.as<int64_t>(1) : 1;
    }
    total_pods += count;
    if (Present(Get(rj, "dependsOn"))) {
      w.Warn("spec.runtimeRef",
             rkind + " " + Quote(rname) + " spec.template.spec.replicatedJobs[" +
                 std::to_string(i) +
                 "].dependsOn: not modelled: its Jobs are created with the others");
    }
  }
  return total_pods;
}

// The runtime's podGroupPolicy `pgp`: a Coscheduling (scheduling.x-k8s.io) or Volcano
// PodGroup of minMember `total_pods`, created unless the TrainJob is suspended, and the
// label (`*label_key`) or annotation (`*annotation_key`) its pods name it by; neither for
// a runtime without a policy (trainer: pkg/runtime/framework/plugins/{coscheduling,volcano}).
api::Status CreateTrainJobPodGroup(const Workload& w, const Node& pgp, const Node& js_ann,
                                   int64_t total_pods, bool suspended, std::string* label_key,
                                   std::string* annotation_key) {
  if (Present(Get(pgp, "coscheduling"))) {
    *label_key = "scheduling.x-k8s.io/pod-group";
    Node pg(YAML::NodeType::Map);
    pg["apiVersion"] = "scheduling.x-k8s.io/v1alpha1";
    pg["kind"] = "PodGroup";
    pg["metadata"] = w.ChildMeta(w.name(), Node(), Node());
    pg["spec"]["minMember"] = total_pods;
    const Node timeout = Get(Get(pgp, "coscheduling"), "scheduleTimeoutSeconds");
    if (Present(timeout)) pg["spec"]["scheduleTimeoutSeconds"] = YAML::Clone(timeout);
    if (!suspended) {
      if (auto s = w.Create(pg); !s.ok()) return s;
    }
  } else if (Present(Get(pgp, "volcano"))) {
    *annotation_key = kVolcanoGroupName;
    Node pg(YAML::NodeType::Map);
    pg["apiVersion"] = "scheduling.volcano.sh/v1beta1";
    pg["kind"] = "PodGroup";
    pg["metadata"] = w.ChildMeta(w.name(), Node(), Node());
    pg["spec"]["minMember"] = total_pods;
    const std::string queue =
        Present(Get(js_ann, "scheduling.volcano.sh/queue-name"))
            ? Get(js_ann, "scheduling.volcano.sh/queue-name").as<std::string>("")
            : std::string();
    if (!queue.empty()) pg["spec"]["queue"] = queue;
    const Node nt = Get(Get(pgp, "volcano"), "networkTopology");
    if (Present(nt)) pg["spec"]["networkTopology"] = YAML::Clone(nt);
    if (!suspended) {
      if (auto s = w.Create(pg); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

api::Status ExpandTrainJob(const Workload& w, const std::vector<api::Unstructured>& all,
                           WorkloadExpansion* out) {
  const Node spec = Get(w.root(), "spec");
  if (auto s = w.Map(w.root(), "spec", ""); !s.ok()) return s;
  const Node ref = Get(spec, "runtimeRef");
  if (!Present(ref)) return w.Error("spec.runtimeRef", "Required value");
  std::string rkind, rname, rgroup;
  if (auto s = w.Str(ref, "kind", "spec.runtimeRef", &rkind); !s.ok()) return s;
  if (auto s = w.Str(ref, "name", "spec.runtimeRef", &rname); !s.ok()) return s;
  if (auto s = w.Str(ref, "apiGroup", "spec.runtimeRef", &rgroup); !s.ok()) return s;
  if (rkind.empty()) rkind = "ClusterTrainingRuntime";  // the CRD's default
  if (rgroup.empty()) rgroup = "trainer.kubeflow.org";
  if (rname.empty()) return w.Error("spec.runtimeRef.name", "Required value");
  if (rkind != "ClusterTrainingRuntime" && rkind != "TrainingRuntime") {
    return w.Error("spec.runtimeRef.kind",
                   "Unsupported value: " + Quote(rkind) +
                       ": supported values: \"ClusterTrainingRuntime\", \"TrainingRuntime\"");
  }
  const api::Unstructured* runtime = nullptr;
  for (const auto& o : all) {
    if (o.kind == rkind && o.Group() == rgroup && o.metadata.name == rname &&
        (rkind == "ClusterTrainingRuntime" || o.metadata.namespace_ == w.ns())) {
      runtime = &o;
    }
  }
  if (!runtime) {
    return w.Error("spec.runtimeRef",
                   "Invalid value: " + rkind + " " + Quote(rname) +
                       " not found in the manifests (the Trainer installs its runtimes, e.g. "
                       "manifests/base/runtimes/torch_distributed.yaml: add the runtime's "
                       "manifest)");
  }
  out->used.insert(runtime->Key());
  const std::string rwhat = runtime->source + ": " + rkind + " " + rname;
  const Node rspec = Get(runtime->object ? *runtime->object : Node(), "spec");
  const Node tmpl = Get(rspec, "template");
  if (!Present(Get(tmpl, "spec"))) {
    return absl::InvalidArgumentError(rwhat + ": spec.template.spec: Required value");
  }
  Node jobset_spec = YAML::Clone(Get(tmpl, "spec"));
  // runtimePatches[].trainingRuntimeSpec.template.{metadata, spec}.
  Node js_labels = Present(Get(Get(tmpl, "metadata"), "labels"))
                       ? YAML::Clone(Get(Get(tmpl, "metadata"), "labels"))
                       : Node(YAML::NodeType::Map);
  Node js_ann = Present(Get(Get(tmpl, "metadata"), "annotations"))
                    ? YAML::Clone(Get(Get(tmpl, "metadata"), "annotations"))
                    : Node(YAML::NodeType::Map);
  if (auto s = ApplyRuntimePatches(w, spec, &js_labels, &js_ann, jobset_spec); !s.ok()) return s;
  // The trainer step: numNodes and resourcesPerNode on the "node" container.
  const Node trainer = Get(spec, "trainer");
  int64_t num_nodes = -1;
  if (auto s = w.Int(trainer, "numNodes", "spec.trainer", -1, 1, &num_nodes); !s.ok()) return s;
  if (num_nodes < 0) {
    const Node n = Get(Get(rspec, "mlPolicy"), "numNodes");
    num_nodes = Present(n) && n.IsScalar() ? n.as<int64_t>(1) : 1;
  }
  Node rjs = jobset_spec["replicatedJobs"];
  if (!rjs.IsSequence()) {
    return absl::InvalidArgumentError(rwhat +
                                      ": spec.template.spec.replicatedJobs: Required value");
  }
  const int64_t total_pods = ApplyTrainerStep(w, rkind, rname, trainer, num_nodes, rjs);
  bool suspended = false;
  if (auto s = w.Suspended(spec, "spec", &suspended); !s.ok()) return s;
  jobset_spec["suspend"] = suspended;
  // podGroupPolicy: the pods' gang object and how they name it.
  std::string pod_label_key, pod_ann_key;
  if (auto s = CreateTrainJobPodGroup(w, Get(rspec, "podGroupPolicy"), js_ann, total_pods,
                                      suspended, &pod_label_key, &pod_ann_key);
      !s.ok()) {
    return s;
  }
  if (!pod_label_key.empty() || !pod_ann_key.empty()) {
    for (size_t i = 0; i < rjs.size(); ++i) {
      Node pt = rjs[i]["template"]["spec"]["template"];
      if (!pt["metadata"].IsMap()) pt["metadata"] = Node(YAML::NodeType::Map);
      if (!pod_label_key.empty()) SetIn(pt["metadata"], "labels", pod_label_key, w.name());
      if (!pod_ann_key.empty()) SetIn(pt["metadata"], "annotations", pod_ann_key, w.name());
    }
  }
  Node js(YAML::NodeType::Map);
  js["apiVersion"] = "jobset.x-k8s.io/v1alpha2";
  js["kind"] = "JobSet";
  js["metadata"] = w.ChildMeta(w.name(), js_labels, js_ann);
  js["spec"] = jobset_spec;
  return w.Create(js);
}

}  // namespace

bool IsExpandedWorkload(const std::string& kind, const std::string& group) {
  if (group == "jobset.x-k8s.io") return kind == "JobSet";
  if (group == "leaderworkerset.x-k8s.io") return kind == "LeaderWorkerSet";
  if (group == "kubeflow.org") return ReplicaSpecsField(kind) != nullptr;
  if (group == "trainer.kubeflow.org") return kind == "TrainJob";
  if (group == "batch.volcano.sh") return kind == "Job";
  return false;
}

api::Status ExpandWorkloads(const api::Manifests& in, WorkloadExpansion* out) {
  // Workloads whose children are already in the manifests (a cluster snapshot, or pods
  // written out by hand): their controller ran; nothing is created again.
  std::set<std::string> owners;  // "<kind>/<ns>/<name>" of the children's controllers
  auto add_owner = [&](const std::string& ns, const std::vector<api::OwnerReference>& refs) {
    for (const auto& r : refs) {
      if (r.controller) owners.insert(r.kind + "/" + ns + "/" + r.name);
    }
  };
  for (const auto& p : in.pods) add_owner(p.metadata.namespace_, p.metadata.owner_references);
  for (const auto& o : in.objects) add_owner(o.metadata.namespace_, o.metadata.owner_references);
  // Workloads of the manifests, then those the expansion creates (a TrainJob's JobSet).
  std::deque<api::Unstructured> todo(in.objects.begin(), in.objects.end());
  std::vector<api::Unstructured> all(in.objects.begin(), in.objects.end());
  size_t rounds = 0;
  while (!todo.empty()) {
    if (++rounds > 100000) return absl::InternalError("workload expansion did not terminate");
    const api::Unstructured obj = std::move(todo.front());
    todo.pop_front();
    const std::string group = obj.Group();
    // Typed Jobs (batch/v1) come as api::WorkloadController; their Kueue label is
    // reported by the caller.
    if (!IsExpandedWorkload(obj.kind, group)) continue;
    out->used.insert(obj.Key());
    if (owners.count(obj.kind + "/" + obj.metadata.namespace_ + "/" + obj.metadata.name)) {
      out->notes.push_back((obj.source.empty() ? std::string("manifests") : obj.source) + ": " +
                           obj.kind + " " + obj.metadata.namespace_ + "/" + obj.metadata.name +
                           ": objects it owns are in the manifests: its controller's are not "
                           "created again");
      continue;
    }
    const size_t before = out->created.objects.size();
    Workload w(obj, out);
    api::Status s;
    if (obj.kind == "JobSet") {
      s = ExpandJobSet(w, in.priority_classes);
    } else if (obj.kind == "LeaderWorkerSet") {
      s = ExpandLeaderWorkerSet(w, out);
    } else if (obj.kind == "TrainJob") {
      s = ExpandTrainJob(w, all, out);
    } else if (group == "batch.volcano.sh") {
      s = ExpandVolcanoJob(w);
    } else {
      s = ExpandKubeflowJob(w);
    }
    if (!s.ok()) return s;
    for (size_t i = before; i < out->created.objects.size(); ++i) {
      const api::Unstructured& c = out->created.objects[i];
      if (IsExpandedWorkload(c.kind, c.Group())) todo.push_back(c);
      all.push_back(c);
    }
  }
  return absl::OkStatus();
}

}  // namespace phalanx::sim
