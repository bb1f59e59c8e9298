// scheduler_perf workload files (see perf_workload.h). yaml-cpp exceptions never escape:
// types are checked before conversion and a final catch turns anything unexpected into
// an error naming the file.
#include "perf/perf_workload.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "api/duration.h"

namespace phalanx::perf {

namespace fs = std::filesystem;

const char* PerfOpcodeName(PerfOpKind k) {
  switch (k) {
    case PerfOpKind::kCreateNodes:
      return "createNodes";
    case PerfOpKind::kCreatePods:
      return "createPods";
    case PerfOpKind::kBarrier:
      return "barrier";
    case PerfOpKind::kChurn:
      return "churn";
    case PerfOpKind::kCreateNamespaces:
      return "createNamespaces";
    case PerfOpKind::kSleep:
      return "sleep";
    case PerfOpKind::kCreatePodGroups:
      return "createPodGroups";
    case PerfOpKind::kCreatePodSets:
      return "createPodSets";
    case PerfOpKind::kDeletePods:
      return "deletePods";
    case PerfOpKind::kCreateAny:
      return "createAny";
    case PerfOpKind::kUpdateAny:
      return "updateAny";
    case PerfOpKind::kCreateResourceDriver:
      return "createResourceDriver";
    case PerfOpKind::kAllocResourceClaims:
      return "allocResourceClaims";
    case PerfOpKind::kStartCollectingMetrics:
      return "startCollectingMetrics";
    case PerfOpKind::kStopCollectingMetrics:
      return "stopCollectingMetrics";
  }
  return "?";
}

std::string ResolveTemplatePath(const std::string& workload_file, const std::string& path) {
  if (path.empty()) return "";
  fs::path p(path);
  std::error_code ec;
  if (p.is_absolute()) return fs::exists(p, ec) ? path : "";
  fs::path dir = fs::path(workload_file).parent_path();
  if (dir.empty()) dir = ".";
  // The parent of a one-component relative dir ("config") is the working directory, not
  // "..": `phalanx bench config/performance-config.yaml` run in scheduler_perf/ must find
  // "config/pod-default.yaml" as upstream's test (which runs there) does.
  fs::path parent = dir.parent_path();
  if (parent.empty()) parent = dir == "." || dir == ".." ? dir / ".." : fs::path(".");
  for (const fs::path& base : {dir, parent}) {
    fs::path c = base / p;
    if (fs::exists(c, ec)) return c.lexically_normal().string();
  }
  return "";
}

bool LabelFilterMatches(const std::string& filter, const std::vector<std::string>& labels) {
  auto has = [&](const std::string& l) {
    return std::find(labels.begin(), labels.end(), l) != labels.end();
  };
  std::stringstream ss(filter);
  std::string item;
  while (std::getline(ss, item, ',')) {
    // Upstream does not trim; we tolerate spaces after commas.
    item.erase(0, item.find_first_not_of(' '));
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) continue;
    if (item[0] == '-') {
      if (has(item.substr(1))) return false;
    } else if (item[0] == '+') {
      if (!has(item.substr(1))) return false;
    } else if (!has(item)) {
      return false;
    }
  }
  return true;
}

bool WorkloadSelected(const std::string& selector, const std::string& case_name,
                      const std::string& workload_name) {
  if (selector.empty()) return true;
  if (selector == case_name) return true;
  return selector == case_name + "/" + workload_name;
}

namespace {

// Error context: "file: test case "X": workloadTemplate[2] (createPods): field: message".
struct Ctx {
  std::string file;
  std::string test_case;  // "" before the name is known
  int case_index = -1;
  std::string where;  // "workloadTemplate[2] (createPods)" / "workloads[1]" / ""

  std::string Prefix() const {
    std::string s = file + ":";
    if (case_index >= 0) {
      s += test_case.empty() ? " test case [" + std::to_string(case_index) + "]"
                             : " test case \"" + test_case + "\"";
      s += ":";
    }
    if (!where.empty()) s += " " + where + ":";
    return s;
  }
  // The error "FILE: test case "NAME": WHERE: FIELD: MSG".
  api::Status Fail(const std::string& field, const std::string& msg) const {
    return absl::InvalidArgumentError(Prefix() + (field.empty() ? "" : " " + field + ":") + " " +
                                      msg);
  }
};

// For chains of checks `if (!Ok(A(...), &st) || !Ok(B(...), &st)) return st;`: true when
// `s` is OK, else false with the error kept in *first.
bool Ok(api::Status s, api::Status* first) {
  if (s.ok()) return true;
  *first = std::move(s);
  return false;
}

std::string Line(const YAML::Node& n) {
  if (n.Mark().is_null()) return "";
  return " (line " + std::to_string(n.Mark().line + 1) + ")";
}

api::Status CheckFields(const Ctx& c, const YAML::Node& m, const std::set<std::string>& allowed) {
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it->first.IsScalar()) return c.Fail("", "field names must be strings" + Line(it->first));
    const std::string k = it->first.Scalar();
    if (!allowed.count(k)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return c.Fail(k, "unknown field" + Line(it->first) + " (known: " + list + ")");
    }
  }
  return absl::OkStatus();
}

api::Status GetString(const Ctx& c, const YAML::Node& m, const char* key, std::string* out,
                      bool* present = nullptr) {
  YAML::Node n = m[key];
  if (present) *present = n.IsDefined() && !n.IsNull();
  if (!n.IsDefined() || n.IsNull()) return absl::OkStatus();
  if (!n.IsScalar()) return c.Fail(key, "must be a string" + Line(n));
  *out = n.Scalar();
  return absl::OkStatus();
}

bool ParseInt(const std::string& s, int64_t* out) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e;
}

api::Status GetInt(const Ctx& c, const YAML::Node& m, const char* key, int64_t* out) {
  YAML::Node n = m[key];
  if (!n.IsDefined() || n.IsNull()) return absl::OkStatus();
  if (!n.IsScalar() || !ParseInt(n.Scalar(), out)) {
    return c.Fail(key, "must be an integer" + Line(n) + ", got \"" +
                           (n.IsScalar() ? n.Scalar() : std::string("<non-scalar>")) + "\"");
  }
  return absl::OkStatus();
}

api::Status GetBool(const Ctx& c, const YAML::Node& m, const char* key, bool* out) {
  YAML::Node n = m[key];
  if (!n.IsDefined() || n.IsNull()) return absl::OkStatus();
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") {
      *out = true;
      return absl::OkStatus();
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      *out = false;
      return absl::OkStatus();
    }
  }
  return c.Fail(key, "must be true or false" + Line(n));
}

api::Status GetStringList(const Ctx& c, const YAML::Node& m, const char* key,
                          std::vector<std::string>* out) {
  YAML::Node n = m[key];
  if (!n.IsDefined() || n.IsNull()) return absl::OkStatus();
  if (!n.IsSequence()) return c.Fail(key, "must be a list of strings" + Line(n));
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      return c.Fail(std::string(key) + "[" + std::to_string(i) + "]", "must be a string");
    }
    out->push_back(n[i].Scalar());
  }
  return absl::OkStatus();
}

api::Status GetParam(const Ctx& c, const YAML::Node& m, const char* key, std::string* out) {
  api::Status st;
  if (!Ok(GetString(c, m, key, out), &st)) return st;
  if (!out->empty() && (*out)[0] != '$') {
    return c.Fail(key, "\"" + *out + "\" must start with \"$\" (e.g. \"$" + *out + "\")");
  }
  if (*out == "$") return c.Fail(key, "\"$\" names no parameter");
  return absl::OkStatus();
}

api::Status GetTemplate(const Ctx& c, const YAML::Node& m, const char* key, const std::string& file,
                        std::string* out) {
  api::Status st;
  std::string raw;
  bool present = false;
  if (!Ok(GetString(c, m, key, &raw, &present), &st)) return st;
  if (!present) return absl::OkStatus();
  if (raw.empty()) return c.Fail(key, "empty path");
  *out = ResolveTemplatePath(file, raw);
  if (out->empty()) {
    fs::path dir = fs::path(file).parent_path();
    return c.Fail(key, "template \"" + raw + "\" not found (tried relative to " +
                           (dir.empty() ? std::string(".") : dir.string()) + " and its parent)");
  }
  return absl::OkStatus();
}

// Either count > 0 or countParam "$x" (upstream isValid(true)).
api::Status CheckCount(const Ctx& c, int64_t count, const std::string& param, const char* count_key,
                       const char* param_key) {
  if (count > 0 || !param.empty()) return absl::OkStatus();
  if (count < 0) return c.Fail(count_key, "must be positive, got " + std::to_string(count));
  return c.Fail(count_key, std::string("one of ") + count_key + " (> 0) or " + param_key +
                               " (\"$name\") is required");
}

// nodeAllocatableStrategy.csiNodeAllocatable: driver name -> VolumeNodeResources {count}
// (upstream storagev1beta1.VolumeNodeResources; strict like yaml.UnmarshalStrict; count as
// the CSINode validation: an int32 >= 0).
api::Status ParseCSINodeAllocatable(const Ctx& c, const YAML::Node& csi, NodeStrategy* s) {
  api::Status st;
  if (!csi.IsDefined() || csi.IsNull()) return absl::OkStatus();
  const std::string field = "nodeAllocatableStrategy.csiNodeAllocatable";
  if (!csi.IsMap()) return c.Fail(field, "must be a map of CSI driver name to {count: N}");
  for (auto it = csi.begin(); it != csi.end(); ++it) {
    if (!it->first.IsScalar() || it->first.Scalar().empty()) {
      return c.Fail(field, "driver names must be non-empty strings" + Line(it->first));
    }
    const std::string driver = it->first.Scalar();
    const std::string df = field + "." + driver;
    std::optional<int32_t> count;
    if (!it->second.IsNull()) {
      if (!it->second.IsMap())
        return c.Fail(df, "must be an object ({count: N})" + Line(it->second));
      Ctx dc = c;  // errors name "...csiNodeAllocatable.<driver>: count: ..."
      dc.where += (dc.where.empty() ? "" : ": ") + df;
      int64_t n = -1;
      if (!Ok(CheckFields(dc, it->second, {"count"}), &st) ||
          !Ok(GetInt(dc, it->second, "count", &n), &st)) {
        return st;
      }
      if (it->second["count"].IsDefined() && !it->second["count"].IsNull()) {
        if (n < 0 || n > INT32_MAX) {
          return c.Fail(df + ".count", "must be between 0 and " + std::to_string(INT32_MAX) +
                                           ", got " + std::to_string(n));
        }
        count = static_cast<int32_t>(n);
      }
    }
    s->csi_node_allocatable[driver] = count;
  }
  return absl::OkStatus();
}

api::Status ParseNodeStrategy(const Ctx& c, const YAML::Node& op, NodeStrategy* s) {
  api::Status st;
  // Precedence as upstream getNodePreparer: nodeAllocatable, label, unique label.
  YAML::Node na = op["nodeAllocatableStrategy"];
  YAML::Node lb = op["labelNodePrepareStrategy"];
  YAML::Node un = op["uniqueNodeLabelStrategy"];
  if (na.IsDefined() && !na.IsNull()) {
    Ctx cc = c;
    if (!na.IsMap()) return c.Fail("nodeAllocatableStrategy", "must be an object");
    if (!Ok(CheckFields(c, na, {"nodeAllocatable", "csiNodeAllocatable", "migratedPlugins"}),
            &st)) {
      return st;
    }
    s->kind = NodeStrategy::Kind::kNodeAllocatable;
    YAML::Node a = na["nodeAllocatable"];
    if (a.IsDefined() && !a.IsNull()) {
      if (!a.IsMap()) return c.Fail("nodeAllocatableStrategy.nodeAllocatable", "must be a map");
      for (auto it = a.begin(); it != a.end(); ++it) {
        if (!it->second.IsScalar()) {
          return c.Fail("nodeAllocatableStrategy.nodeAllocatable." + it->first.Scalar(),
                        "must be a quantity string");
        }
        s->allocatable[it->first.Scalar()] = it->second.Scalar();
      }
    }
    if (!Ok(ParseCSINodeAllocatable(c, na["csiNodeAllocatable"], s), &st) ||
        !Ok(GetStringList(c, na, "migratedPlugins", &s->migrated_plugins), &st)) {
      return st;
    }
    return absl::OkStatus();
  }
  if (lb.IsDefined() && !lb.IsNull()) {
    if (!lb.IsMap()) return c.Fail("labelNodePrepareStrategy", "must be an object");
    if (!Ok(CheckFields(c, lb, {"labelKey", "labelValues"}), &st)) return st;
    s->kind = NodeStrategy::Kind::kLabel;
    if (!Ok(GetString(c, lb, "labelKey", &s->label_key), &st) ||
        !Ok(GetStringList(c, lb, "labelValues", &s->label_values), &st)) {
      return st;
    }
    if (s->label_key.empty()) return c.Fail("labelNodePrepareStrategy.labelKey", "required");
    if (s->label_values.empty()) {
      return c.Fail("labelNodePrepareStrategy.labelValues", "at least one value is required");
    }
    return absl::OkStatus();
  }
  if (un.IsDefined() && !un.IsNull()) {
    if (!un.IsMap()) return c.Fail("uniqueNodeLabelStrategy", "must be an object");
    if (!Ok(CheckFields(c, un, {"labelKey"}), &st)) return st;
    s->kind = NodeStrategy::Kind::kUniqueLabel;
    if (!Ok(GetString(c, un, "labelKey", &s->label_key), &st)) return st;
    if (s->label_key.empty()) return c.Fail("uniqueNodeLabelStrategy.labelKey", "required");
  }
  return absl::OkStatus();
}

// createNodes: count | countParam, nodeTemplatePath, a node strategy.
api::Status ParseCreateNodesOp(const Ctx& c, const YAML::Node& n, const std::string& file,
                               PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kCreateNodes;
  if (!Ok(CheckFields(
              c, n,
              {"opcode", "count", "countParam", "nodeTemplatePath", "nodeAllocatableStrategy",
               "labelNodePrepareStrategy", "uniqueNodeLabelStrategy"}),
          &st) ||
      !Ok(GetInt(c, n, "count", &op->count), &st) ||
      !Ok(GetParam(c, n, "countParam", &op->count_param), &st) ||
      !Ok(GetTemplate(c, n, "nodeTemplatePath", file, &op->node_template_path), &st) ||
      !Ok(ParseNodeStrategy(c, n, &op->strategy), &st)) {
    return st;
  }
  return CheckCount(c, op->count, op->count_param, "count", "countParam");
}

// createPods / createPodGroups (`groups`): count | countParam, namespace, podTemplatePath,
// collectMetrics, skipWaitToCompletion; groups: podsPerGroup, minMember; pods: PV / PVC
// templates.
api::Status ParseCreatePodsOp(const Ctx& c, const YAML::Node& n, const std::string& file,
                              bool groups, PerfOp* op) {
  api::Status st;
  op->kind = groups ? PerfOpKind::kCreatePodGroups : PerfOpKind::kCreatePods;
  std::set<std::string> fields = {
      "opcode",    "count",           "countParam",          "collectMetrics",
      "namespace", "podTemplatePath", "skipWaitToCompletion"};
  if (groups) {
    fields.insert({"podsPerGroup", "podsPerGroupParam", "minMember", "minMemberParam"});
  } else {
    fields.insert({"persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath",
                   "steadyState", "steadyStateParam", "duration", "durationParam"});
  }
  std::string ns;
  bool has_ns = false;
  if (!Ok(CheckFields(c, n, fields), &st) || !Ok(GetInt(c, n, "count", &op->count), &st) ||
      !Ok(GetParam(c, n, "countParam", &op->count_param), &st) ||
      !Ok(GetBool(c, n, "collectMetrics", &op->collect_metrics), &st) ||
      !Ok(GetBool(c, n, "skipWaitToCompletion", &op->skip_wait), &st) ||
      !Ok(GetString(c, n, "namespace", &ns, &has_ns), &st) ||
      !Ok(GetTemplate(c, n, "podTemplatePath", file, &op->pod_template_path), &st)) {
    return st;
  }
  if (has_ns) {
    if (ns.empty()) return c.Fail("namespace", "must not be empty");
    op->namespace_ = ns;
  }
  if (!Ok(CheckCount(c, op->count, op->count_param, "count", "countParam"), &st)) return st;
  if (op->collect_metrics && op->skip_wait) {
    // Upstream createPodsOp.isValid.
    return c.Fail("collectMetrics",
                  "collectMetrics and skipWaitToCompletion cannot be true at the same time");
  }
  if (groups) {
    if (!Ok(GetInt(c, n, "podsPerGroup", &op->pods_per_group), &st) ||
        !Ok(GetParam(c, n, "podsPerGroupParam", &op->pods_per_group_param), &st) ||
        !Ok(GetInt(c, n, "minMember", &op->min_member), &st) ||
        !Ok(GetParam(c, n, "minMemberParam", &op->min_member_param), &st)) {
      return st;
    }
    if (!Ok(CheckCount(c, op->pods_per_group, op->pods_per_group_param, "podsPerGroup",
                       "podsPerGroupParam"),
            &st)) {
      return st;
    }
    if (op->min_member < 0) return c.Fail("minMember", "must not be negative");
    return absl::OkStatus();
  }
  if (!Ok(GetTemplate(c, n, "persistentVolumeTemplatePath", file, &op->pv_template_path), &st) ||
      !Ok(GetTemplate(c, n, "persistentVolumeClaimTemplatePath", file, &op->pvc_template_path),
          &st) ||
      !Ok(GetBool(c, n, "steadyState", &op->steady_state), &st) ||
      !Ok(GetParam(c, n, "steadyStateParam", &op->steady_state_param), &st) ||
      !Ok(GetParam(c, n, "durationParam", &op->duration_param), &st)) {
    return st;
  }
  std::string d;
  if (!Ok(GetString(c, n, "duration", &d), &st)) return st;
  if (!d.empty()) {
    auto dur = api::ParseGoDuration(d);
    if (!dur.ok()) return c.Fail("duration", std::string(dur.status().message()));
    op->duration_ns = *dur;
  }
  // Upstream createPodsOp.isValid.
  if (op->skip_wait && (op->steady_state || !op->steady_state_param.empty())) {
    return c.Fail("skipWaitToCompletion",
                  "skipWaitToCompletion and steadyState cannot be true at the same time");
  }
  if (!op->pvc_template_path.empty() && op->pv_template_path.empty()) {
    // Upstream getPodStrategy reads both when a PVC template is given.
    return c.Fail("persistentVolumeTemplatePath",
                  "required with persistentVolumeClaimTemplatePath");
  }
  return absl::OkStatus();
}

api::Status GetLabels(const Ctx& c, const YAML::Node& m, const char* key,
                      std::map<std::string, std::string>* out) {
  YAML::Node n = m[key];
  if (!n.IsDefined() || n.IsNull()) return absl::OkStatus();
  if (!n.IsMap()) return c.Fail(key, "must be a map of label to value" + Line(n));
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar() || !it->second.IsScalar()) {
      return c.Fail(key, "labels and values must be strings" + Line(it->first));
    }
    (*out)[it->first.Scalar()] = it->second.Scalar();
  }
  return absl::OkStatus();
}

// barrier: namespaces, labelSelector, stageRequirement (upstream barrierOp).
api::Status ParseBarrierOp(const Ctx& c, const YAML::Node& n, PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kBarrier;
  std::string stage;
  if (!Ok(CheckFields(c, n, {"opcode", "namespaces", "labelSelector", "stageRequirement"}), &st) ||
      !Ok(GetStringList(c, n, "namespaces", &op->namespaces), &st) ||
      !Ok(GetLabels(c, n, "labelSelector", &op->label_selector), &st) ||
      !Ok(GetString(c, n, "stageRequirement", &stage), &st)) {
    return st;
  }
  if (!stage.empty()) {
    if (stage != "Scheduled" && stage != "Attempted") {
      return c.Fail("stageRequirement",
                    "invalid StageRequirement " + stage + " (Scheduled or Attempted)");
    }
    op->stage_requirement = stage;
  }
  return absl::OkStatus();
}

// createPodSets: count | countParam, namespacePrefix, createPodsOp.
api::Status ParseCreatePodSetsOp(const Ctx& c, const YAML::Node& n, const std::string& file,
                                 const std::string& default_pod_template, PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kCreatePodSets;
  if (!Ok(CheckFields(c, n, {"opcode", "count", "countParam", "namespacePrefix", "createPodsOp"}),
          &st) ||
      !Ok(GetInt(c, n, "count", &op->count), &st) ||
      !Ok(GetParam(c, n, "countParam", &op->count_param), &st) ||
      !Ok(GetString(c, n, "namespacePrefix", &op->namespace_prefix), &st)) {
    return st;
  }
  if (op->namespace_prefix.empty()) return c.Fail("namespacePrefix", "required");
  YAML::Node sub = n["createPodsOp"];
  if (!sub.IsDefined() || !sub.IsMap()) return c.Fail("createPodsOp", "required (a createPods op)");
  Ctx sc = c;
  sc.where += ": createPodsOp";
  auto inner = std::make_shared<PerfOp>();
  inner->index = op->index;
  if (!Ok(ParseCreatePodsOp(sc, sub, file, false, inner.get()), &st)) return st;
  if (inner->namespace_) return sc.Fail("namespace", "set by createPodSets' namespacePrefix");
  if (inner->pod_template_path.empty()) inner->pod_template_path = default_pod_template;
  op->create_pods = std::move(inner);
  op->collect_metrics = op->create_pods->collect_metrics;
  return CheckCount(c, op->count, op->count_param, "count", "countParam");
}

// deletePods: namespace, labelSelector, skipWaitToCompletion, deletePodsPerSecond.
api::Status ParseDeletePodsOp(const Ctx& c, const YAML::Node& n, PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kDeletePods;
  std::string ns;
  if (!Ok(CheckFields(c, n,
                      {"opcode", "namespace", "labelSelector", "skipWaitToCompletion",
                       "deletePodsPerSecond"}),
          &st) ||
      !Ok(GetString(c, n, "namespace", &ns), &st) ||
      !Ok(GetLabels(c, n, "labelSelector", &op->label_selector), &st) ||
      !Ok(GetBool(c, n, "skipWaitToCompletion", &op->skip_wait), &st) ||
      !Ok(GetInt(c, n, "deletePodsPerSecond", &op->per_second), &st)) {
    return st;
  }
  if (ns.empty()) return c.Fail("namespace", "required");
  op->namespace_ = ns;
  if (op->per_second < 0) {
    return c.Fail("deletePodsPerSecond",
                  "invalid DeletePodsPerSecond=" + std::to_string(op->per_second) +
                      "; should be non-negative");
  }
  return absl::OkStatus();
}

// createAny / updateAny: templatePath, count | countParam (default 1), namespace;
// updateAny: updatePerSecond, subresources.
api::Status ParseAnyOp(const Ctx& c, const YAML::Node& n, const std::string& file, bool update,
                       PerfOp* op) {
  api::Status st;
  op->kind = update ? PerfOpKind::kUpdateAny : PerfOpKind::kCreateAny;
  std::set<std::string> fields = {"opcode", "templatePath", "count", "countParam", "namespace"};
  if (update) fields.insert({"updatePerSecond", "subresources"});
  std::string ns;
  bool has_ns = false;
  if (!Ok(CheckFields(c, n, fields), &st) || !Ok(GetInt(c, n, "count", &op->count), &st) ||
      !Ok(GetParam(c, n, "countParam", &op->count_param), &st) ||
      !Ok(GetString(c, n, "namespace", &ns, &has_ns), &st) ||
      !Ok(GetTemplate(c, n, "templatePath", file, &op->template_path), &st)) {
    return st;
  }
  if (op->template_path.empty()) return c.Fail("templatePath", "TemplatePath must be set");
  if (has_ns && !ns.empty()) op->namespace_ = ns;
  if (op->count == 0 && op->count_param.empty()) op->count = 1;  // upstream: defaults to 1
  if (op->count < 0) return c.Fail("count", "must not be negative");
  if (update) {
    if (!Ok(GetInt(c, n, "updatePerSecond", &op->per_second), &st) ||
        !Ok(GetStringList(c, n, "subresources", &op->subresources), &st)) {
      return st;
    }
    if (op->per_second < 0) {
      return c.Fail("updatePerSecond", "invalid UpdatePerSecond=" + std::to_string(op->per_second) +
                                           "; should be non-negative");
    }
  }
  return absl::OkStatus();
}

// createResourceDriver: driverName, nodes, maxClaimsPerNode | maxClaimsPerNodeParam.
api::Status ParseCreateResourceDriverOp(const Ctx& c, const YAML::Node& n, PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kCreateResourceDriver;
  if (!Ok(CheckFields(
              c, n, {"opcode", "driverName", "nodes", "maxClaimsPerNode", "maxClaimsPerNodeParam"}),
          &st) ||
      !Ok(GetString(c, n, "driverName", &op->driver_name), &st) ||
      !Ok(GetString(c, n, "nodes", &op->nodes_glob), &st) ||
      !Ok(GetInt(c, n, "maxClaimsPerNode", &op->max_claims_per_node), &st) ||
      !Ok(GetParam(c, n, "maxClaimsPerNodeParam", &op->max_claims_per_node_param), &st)) {
    return st;
  }
  if (op->driver_name.empty()) return c.Fail("driverName", "DriverName must be set");
  if (op->nodes_glob.empty()) return c.Fail("nodes", "Nodes must be set");
  return CheckCount(c, op->max_claims_per_node, op->max_claims_per_node_param, "maxClaimsPerNode",
                    "maxClaimsPerNodeParam");
}

// allocResourceClaims: namespace ("" = all).
api::Status ParseAllocResourceClaimsOp(const Ctx& c, const YAML::Node& n, PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kAllocResourceClaims;
  std::string ns;
  if (!Ok(CheckFields(c, n, {"opcode", "namespace"}), &st) ||
      !Ok(GetString(c, n, "namespace", &ns), &st)) {
    return st;
  }
  if (!ns.empty()) op->namespace_ = ns;
  return absl::OkStatus();
}

// startCollectingMetrics: name, namespaces (required), labelSelector.
api::Status ParseStartCollectingMetricsOp(const Ctx& c, const YAML::Node& n, PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kStartCollectingMetrics;
  if (!Ok(CheckFields(c, n, {"opcode", "name", "namespaces", "labelSelector"}), &st) ||
      !Ok(GetString(c, n, "name", &op->metrics_name), &st) ||
      !Ok(GetStringList(c, n, "namespaces", &op->namespaces), &st) ||
      !Ok(GetLabels(c, n, "labelSelector", &op->label_selector), &st)) {
    return st;
  }
  if (op->namespaces.empty()) return c.Fail("namespaces", "namespaces cannot be empty");
  return absl::OkStatus();
}

// churn: mode, number, intervalMilliseconds, namespace, templatePaths (upstream churnOp).
api::Status ParseChurnOp(const Ctx& c, const YAML::Node& n, const std::string& file, PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kChurn;
  std::string ns;
  bool has_ns = false;
  if (!Ok(CheckFields(
              c, n,
              {"opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"}),
          &st) ||
      !Ok(GetString(c, n, "mode", &op->mode), &st) ||
      !Ok(GetInt(c, n, "number", &op->number), &st) ||
      !Ok(GetInt(c, n, "intervalMilliseconds", &op->interval_ms), &st) ||
      !Ok(GetString(c, n, "namespace", &ns, &has_ns), &st)) {
    return st;
  }
  if (has_ns) op->namespace_ = ns;
  // Upstream churnOp.isValid.
  if (op->mode != "create" && op->mode != "recreate") {
    return c.Fail("mode", "must be create or recreate, got \"" + op->mode + "\"");
  }
  if (op->mode == "recreate" && op->number <= 0) {
    return c.Fail("number", "must be positive in recreate mode");
  }
  if (op->number < 0) return c.Fail("number", "must not be negative");
  if (op->interval_ms == 0) op->interval_ms = 500;
  if (op->interval_ms < 0) return c.Fail("intervalMilliseconds", "must be positive");
  std::vector<std::string> raw;
  if (!Ok(GetStringList(c, n, "templatePaths", &raw), &st)) return st;
  if (raw.empty()) return c.Fail("templatePaths", "at least one template is required");
  for (size_t i = 0; i < raw.size(); ++i) {
    std::string r = ResolveTemplatePath(file, raw[i]);
    if (r.empty()) {
      return c.Fail("templatePaths[" + std::to_string(i) + "]",
                    "template \"" + raw[i] + "\" not found");
    }
    op->template_paths.push_back(r);
  }
  return absl::OkStatus();
}

// createNamespaces: prefix, count | countParam, namespaceTemplatePath.
api::Status ParseCreateNamespacesOp(const Ctx& c, const YAML::Node& n, const std::string& file,
                                    PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kCreateNamespaces;
  if (!Ok(CheckFields(c, n, {"opcode", "prefix", "count", "countParam", "namespaceTemplatePath"}),
          &st) ||
      !Ok(GetString(c, n, "prefix", &op->prefix), &st) ||
      !Ok(GetInt(c, n, "count", &op->count), &st) ||
      !Ok(GetParam(c, n, "countParam", &op->count_param), &st) ||
      !Ok(GetTemplate(c, n, "namespaceTemplatePath", file, &op->namespace_template_path), &st)) {
    return st;
  }
  if (op->prefix.empty()) return c.Fail("prefix", "required");
  return CheckCount(c, op->count, op->count_param, "count", "countParam");
}

// sleep: duration (Go duration) | durationParam.
api::Status ParseSleepOp(const Ctx& c, const YAML::Node& n, PerfOp* op) {
  api::Status st;
  op->kind = PerfOpKind::kSleep;
  std::string d;
  if (!Ok(CheckFields(c, n, {"opcode", "duration", "durationParam"}), &st) ||
      !Ok(GetString(c, n, "duration", &d), &st) ||
      !Ok(GetParam(c, n, "durationParam", &op->duration_param), &st)) {
    return st;
  }
  if (!d.empty()) {
    auto dur = api::ParseGoDuration(d);
    if (!dur.ok()) return c.Fail("duration", std::string(dur.status().message()));
    op->duration_ns = *dur;
    if (op->duration_ns < 0) return c.Fail("duration", "must not be negative");
  } else if (op->duration_param.empty()) {
    return c.Fail("duration", "one of duration or durationParam is required");
  }
  return absl::OkStatus();
}

api::Status ParseOp(const Ctx& c, const YAML::Node& n, const std::string& file,
                    const std::string& default_pod_template, PerfOp* op) {
  api::Status st;
  if (!n.IsMap()) return c.Fail("", "an op must be an object" + Line(n));
  std::string opcode;
  if (!Ok(GetString(c, n, "opcode", &opcode), &st)) return st;
  if (opcode.empty()) return c.Fail("opcode", "required" + Line(n));
  if (opcode == "createNodes") return ParseCreateNodesOp(c, n, file, op);
  if (opcode == "createPods" || opcode == "createPodGroups") {
    if (!Ok(ParseCreatePodsOp(c, n, file, opcode == "createPodGroups", op), &st)) return st;
    // Upstream: "If nil, DefaultPodTemplatePath will be used."
    if (op->pod_template_path.empty()) op->pod_template_path = default_pod_template;
    return absl::OkStatus();
  }
  if (opcode == "createPodSets") {
    return ParseCreatePodSetsOp(c, n, file, default_pod_template, op);
  }
  if (opcode == "barrier") return ParseBarrierOp(c, n, op);
  if (opcode == "churn") return ParseChurnOp(c, n, file, op);
  if (opcode == "createNamespaces") return ParseCreateNamespacesOp(c, n, file, op);
  if (opcode == "sleep") return ParseSleepOp(c, n, op);
  if (opcode == "deletePods") return ParseDeletePodsOp(c, n, op);
  if (opcode == "createAny") return ParseAnyOp(c, n, file, false, op);
  if (opcode == "updateAny") return ParseAnyOp(c, n, file, true, op);
  if (opcode == "createResourceDriver") return ParseCreateResourceDriverOp(c, n, op);
  if (opcode == "allocResourceClaims") return ParseAllocResourceClaimsOp(c, n, op);
  if (opcode == "startCollectingMetrics") return ParseStartCollectingMetricsOp(c, n, op);
  if (opcode == "stopCollectingMetrics") {
    op->kind = PerfOpKind::kStopCollectingMetrics;
    op->collect_metrics = true;  // upstream: the op that collects (collectsMetrics() true)
    return CheckFields(c, n, {"opcode"});
  }
  return c.Fail("opcode",
                "unknown opcode \"" + opcode +
                    "\" (known: createNodes, createPods, createPodSets, deletePods, barrier, "
                    "churn, createNamespaces, sleep, createAny, updateAny, createResourceDriver, "
                    "allocResourceClaims, startCollectingMetrics, stopCollectingMetrics, "
                    "createPodGroups)");
}

// featureGates: a map of feature to true / false.
api::Status GetFeatureGates(const Ctx& c, const YAML::Node& n, std::map<std::string, bool>* out) {
  api::Status st;
  YAML::Node fg = n["featureGates"];
  if (!fg.IsDefined() || fg.IsNull()) return absl::OkStatus();
  if (!fg.IsMap()) return c.Fail("featureGates", "must be a map of feature to true/false");
  for (auto it = fg.begin(); it != fg.end(); ++it) {
    bool v = false;
    YAML::Node m;
    m["v"] = it->second;
    if (!Ok(GetBool(c, m, "v", &v), &st)) {
      return c.Fail("featureGates." + it->first.Scalar(), "must be true or false");
    }
    (*out)[it->first.Scalar()] = v;
  }
  return absl::OkStatus();
}

// thresholdMetricSelector / defaultThresholdMetricSelector (upstream thresholdMetricSelector).
api::Status GetThresholdMetric(const Ctx& c, const YAML::Node& n, const char* key,
                               std::optional<ThresholdMetric>* out) {
  api::Status st;
  YAML::Node m = n[key];
  if (!m.IsDefined() || m.IsNull()) return absl::OkStatus();
  if (!m.IsMap()) return c.Fail(key, "must be an object");
  Ctx mc = c;
  mc.where += (mc.where.empty() ? "" : ": ") + std::string(key);
  ThresholdMetric t;
  if (!Ok(CheckFields(mc, m, {"name", "labels", "dataBucket", "expectLower"}), &st) ||
      !Ok(GetString(mc, m, "name", &t.name), &st) ||
      !Ok(GetString(mc, m, "dataBucket", &t.data_bucket), &st) ||
      !Ok(GetBool(mc, m, "expectLower", &t.expect_lower), &st) ||
      !Ok(GetLabels(mc, m, "labels", &t.labels), &st)) {
    return st;
  }
  if (t.data_bucket.empty()) {
    return mc.Fail("dataBucket", "dataBucket should be set for metric " + t.name);
  }
  *out = std::move(t);
  return absl::OkStatus();
}

bool ParseNumber(const std::string& s, double* out) {
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && errno == 0 && end == s.c_str() + s.size();
}

// threshold: a number, or a map of topic name to number (upstream thresholds).
api::Status GetThreshold(const Ctx& c, const YAML::Node& n, PerfWorkload* w) {
  YAML::Node t = n["threshold"];
  if (!t.IsDefined() || t.IsNull()) return absl::OkStatus();
  if (t.IsScalar()) {
    if (!ParseNumber(t.Scalar(), &w->threshold)) {
      return c.Fail("threshold", "expected either float64 or topic name -> float64 map, got \"" +
                                     t.Scalar() + "\"");
    }
    if (w->threshold < 0) return c.Fail("threshold", "should be non-negative");
    return absl::OkStatus();
  }
  if (!t.IsMap())
    return c.Fail("threshold", "expected either float64 or topic name -> float64 map");
  for (auto it = t.begin(); it != t.end(); ++it) {
    double v = 0;
    if (!it->second.IsScalar() || !ParseNumber(it->second.Scalar(), &v) || v < 0) {
      return c.Fail("threshold." + it->first.Scalar(), "must be a non-negative number");
    }
    w->threshold_by_topic[it->first.Scalar()] = v;
  }
  return absl::OkStatus();
}

api::Status ParseCase(Ctx c, const YAML::Node& n, const std::string& file, PerfTestCase* tc) {
  api::Status st;
  if (!n.IsMap()) return c.Fail("", "a test case must be an object" + Line(n));
  if (!Ok(GetString(c, n, "name", &tc->name), &st)) return st;
  c.test_case = tc->name;
  if (tc->name.empty()) return c.Fail("name", "required");
  if (!Ok(CheckFields(c, n,
                      {"name", "featureGates", "labels", "metricsCollectorConfig",
                       "workloadTemplate", "workloads", "defaultPodTemplatePath",
                       "schedulerConfigPath", "defaultThresholdMetricSelector"}),
          &st) ||
      !Ok(GetStringList(c, n, "labels", &tc->labels), &st) ||
      !Ok(GetFeatureGates(c, n, &tc->feature_gates), &st) ||
      !Ok(GetTemplate(c, n, "defaultPodTemplatePath", file, &tc->default_pod_template_path), &st) ||
      !Ok(GetTemplate(c, n, "schedulerConfigPath", file, &tc->scheduler_config_path), &st) ||
      !Ok(GetThresholdMetric(c, n, "defaultThresholdMetricSelector", &tc->default_threshold_metric),
          &st)) {
    return st;
  }
  YAML::Node ops = n["workloadTemplate"];
  if (ops.IsDefined() && !ops.IsNull() && !ops.IsSequence()) {
    return c.Fail("workloadTemplate", "must be a list of ops");
  }
  if (ops.IsDefined() && ops.IsSequence()) {
    for (size_t i = 0; i < ops.size(); ++i) {
      Ctx oc = c;
      std::string opcode;
      if (ops[i].IsMap() && ops[i]["opcode"].IsScalar()) opcode = ops[i]["opcode"].Scalar();
      oc.where = "workloadTemplate[" + std::to_string(i) + "]" +
                 (opcode.empty() ? "" : " (" + opcode + ")");
      PerfOp op;
      op.index = static_cast<int>(i);
      if (!Ok(ParseOp(oc, ops[i], file, tc->default_pod_template_path, &op), &st)) return st;
      tc->ops.push_back(std::move(op));
    }
  }
  YAML::Node ws = n["workloads"];
  if (ws.IsDefined() && !ws.IsNull() && !ws.IsSequence()) {
    return c.Fail("workloads", "must be a list");
  }
  std::set<std::string> names;
  if (ws.IsDefined() && ws.IsSequence()) {
    for (size_t i = 0; i < ws.size(); ++i) {
      Ctx wc = c;
      wc.where = "workloads[" + std::to_string(i) + "]";
      const YAML::Node& w = ws[i];
      if (!w.IsMap()) return wc.Fail("", "a workload must be an object");
      PerfWorkload pw;
      if (!Ok(CheckFields(wc, w,
                          {"name", "params", "labels", "featureGates", "threshold",
                           "thresholdMetricSelector"}),
              &st) ||
          !Ok(GetString(wc, w, "name", &pw.name), &st) ||
          !Ok(GetStringList(wc, w, "labels", &pw.labels), &st) ||
          !Ok(GetFeatureGates(wc, w, &pw.feature_gates), &st) ||
          !Ok(GetThreshold(wc, w, &pw), &st) ||
          !Ok(GetThresholdMetric(wc, w, "thresholdMetricSelector", &pw.threshold_metric), &st)) {
        return st;
      }
      if (pw.name.empty()) return wc.Fail("name", "required");
      if (!names.insert(pw.name).second)
        return wc.Fail("name", "duplicate workload \"" + pw.name + "\"");
      YAML::Node p = w["params"];
      if (p.IsDefined() && !p.IsNull()) {
        if (!p.IsMap()) return wc.Fail("params", "must be a map of name to value");
        for (auto it = p.begin(); it != p.end(); ++it) {
          if (!it->second.IsScalar()) {
            return wc.Fail("params." + it->first.Scalar(),
                           "must be a number, a boolean or a duration");
          }
          pw.params[it->first.Scalar()] = it->second.Scalar();
        }
      }
      tc->workloads.push_back(std::move(pw));
    }
  }
  // Upstream validateTestCases.
  if (tc->workloads.empty()) return c.Fail("workloads", "no workloads defined");
  if (tc->ops.empty()) return c.Fail("workloadTemplate", "no ops defined");
  bool collects = false;
  for (const auto& op : tc->ops) collects = collects || op.collect_metrics;
  if (!collects) {
    return c.Fail("workloadTemplate", "no op in the workload template collects metrics");
  }
  return absl::OkStatus();
}

}  // namespace

api::Status ParsePerfConfig(const std::string& text, const std::string& path, PerfConfig* out) {
  api::Status st;
  *out = PerfConfig{};
  out->path = path;
  Ctx c;
  c.file = path;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) return c.Fail("", "no test cases defined");
    if (!root.IsSequence()) return c.Fail("", "a workload file is a list of test cases");
    std::set<std::string> names;
    for (size_t i = 0; i < root.size(); ++i) {
      Ctx tc_ctx = c;
      tc_ctx.case_index = static_cast<int>(i);
      PerfTestCase tc;
      if (!Ok(ParseCase(tc_ctx, root[i], path, &tc), &st)) return st;
      if (!names.insert(tc.name).second) {
        tc_ctx.test_case = tc.name;
        return tc_ctx.Fail("name", "duplicate test case");
      }
      out->cases.push_back(std::move(tc));
    }
    if (out->cases.empty()) return c.Fail("", "no test cases defined");
    return absl::OkStatus();
  } catch (const YAML::Exception& e) {
    return c.Fail("", std::string("invalid YAML: ") + e.what());
  } catch (const std::exception& e) {
    return c.Fail("", e.what());
  }
}

api::Status LoadPerfConfig(const std::string& path, PerfConfig* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(path + ": cannot read: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParsePerfConfig(ss.str(), path, out);
}

api::Status PatchParams(const PerfConfig& cfg, const PerfTestCase& tc, const PerfWorkload& w,
                        std::vector<PerfOp>* out) {
  api::Status st;
  out->clear();
  for (const auto& op0 : tc.ops) {
    PerfOp op = op0;
    Ctx c;
    c.file = cfg.path;
    c.test_case = tc.name + "/" + w.name;
    c.case_index = 0;
    c.where =
        "workloadTemplate[" + std::to_string(op.index) + "] (" + PerfOpcodeName(op.kind) + ")";
    auto patch_int = [&](const std::string& param, const char* field, int64_t* v) -> api::Status {
      if (param.empty()) return absl::OkStatus();
      auto it = w.params.find(param.substr(1));
      if (it == w.params.end()) return c.Fail(field, "parameter " + param + " is undefined");
      if (!ParseInt(it->second, v)) {
        return c.Fail(field,
                      "parameter " + param + " must be an integer, got \"" + it->second + "\"");
      }
      return absl::OkStatus();
    };
    if (!Ok(patch_int(op.count_param, "countParam", &op.count), &st) ||
        !Ok(patch_int(op.pods_per_group_param, "podsPerGroupParam", &op.pods_per_group), &st) ||
        !Ok(patch_int(op.min_member_param, "minMemberParam", &op.min_member), &st) ||
        !Ok(patch_int(op.max_claims_per_node_param, "maxClaimsPerNodeParam",
                      &op.max_claims_per_node),
            &st)) {
      return st;
    }
    if (!op.steady_state_param.empty()) {
      auto it = w.params.find(op.steady_state_param.substr(1));
      if (it == w.params.end()) {
        return c.Fail("steadyStateParam", "parameter " + op.steady_state_param + " is undefined");
      }
      if (it->second != "true" && it->second != "false") {
        return c.Fail("steadyStateParam", "parameter " + op.steady_state_param +
                                              " has the wrong type (want a boolean), got \"" +
                                              it->second + "\"");
      }
      op.steady_state = it->second == "true";
    }
    if (op.create_pods) {
      // createPodSets: the inner createPods op takes the workload's parameters too.
      PerfTestCase one;
      one.name = tc.name;
      one.ops = {*op.create_pods};
      std::vector<PerfOp> inner;
      if (!Ok(PatchParams(cfg, one, w, &inner), &st)) return st;
      op.create_pods = std::make_shared<PerfOp>(inner[0]);
    }
    if (!op.duration_param.empty()) {
      auto it = w.params.find(op.duration_param.substr(1));
      if (it == w.params.end()) {
        return c.Fail("durationParam", "parameter " + op.duration_param + " is undefined");
      }
      auto dur = api::ParseGoDuration(it->second);
      if (!dur.ok()) {
        return c.Fail("durationParam", "parameter " + op.duration_param + ": " +
                                           std::string(dur.status().message()));
      }
      op.duration_ns = *dur;
    }
    // Upstream isValid(false): counts once parameters are applied.
    const bool counted =
        op.kind == PerfOpKind::kCreateNodes || op.kind == PerfOpKind::kCreatePods ||
        op.kind == PerfOpKind::kCreateNamespaces || op.kind == PerfOpKind::kCreatePodGroups ||
        op.kind == PerfOpKind::kCreatePodSets;
    if (op.kind == PerfOpKind::kCreatePods && op.steady_state && op.duration_ns <= 0) {
      return c.Fail("duration",
                    "when creating pods in a steady state, the test duration must be > 0");
    }
    if (op.kind == PerfOpKind::kCreateResourceDriver && op.max_claims_per_node <= 0) {
      return c.Fail("maxClaimsPerNodeParam",
                    "invalid MaxClaimsPerNode=" + std::to_string(op.max_claims_per_node));
    }
    // A count may be 0 (1.36 isValidCount: count >= 0; the dra file's
    // "nodesWithoutDRA: 0", nodedeclaredfeatures' "initPods: 0").
    if (counted && op.count < 0) {
      return c.Fail(
          op.count_param.empty() ? "count" : "countParam",
          "invalid Count=" + std::to_string(op.count) + " / CountParam=\"" + op.count_param + "\"");
    }
    if (op.kind == PerfOpKind::kCreatePodGroups) {
      if (op.pods_per_group <= 0) {
        return c.Fail("podsPerGroup", "must be positive, got " + std::to_string(op.pods_per_group));
      }
      if (op.min_member == 0) op.min_member = op.pods_per_group;
      if (op.min_member < 0 || op.min_member > op.pods_per_group) {
        return c.Fail("minMember", "must be between 1 and podsPerGroup (" +
                                       std::to_string(op.pods_per_group) + "), got " +
                                       std::to_string(op.min_member));
      }
    }
    out->push_back(std::move(op));
  }
  return absl::OkStatus();
}

double ThresholdOf(const PerfWorkload& w, const std::string& topic) {
  auto it = w.threshold_by_topic.find(topic);
  return it != w.threshold_by_topic.end() ? it->second : w.threshold;
}

ThresholdMetric ThresholdMetricOf(const PerfTestCase& tc, const PerfWorkload& w) {
  if (w.threshold_metric) return *w.threshold_metric;
  if (tc.default_threshold_metric) return *tc.default_threshold_metric;
  return ThresholdMetric{};
}

}  // namespace phalanx::perf
