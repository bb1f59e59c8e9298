// scheduler_perf workload files (see perf_workload.h). yaml-cpp exceptions never escape:
// types are checked before conversion and a final catch turns anything unexpected into
// an error naming the file.
#include "sim/perf_workload.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "api/duration.h"

namespace phalanx::bench {

namespace fs = std::filesystem;

const char* PerfOpcodeName(PerfOpKind k) {
  switch (k) {
    case PerfOpKind::kCreateNodes: return "createNodes";
    case PerfOpKind::kCreatePods: return "createPods";
    case PerfOpKind::kBarrier: return "barrier";
    case PerfOpKind::kChurn: return "churn";
    case PerfOpKind::kCreateNamespaces: return "createNamespaces";
    case PerfOpKind::kSleep: return "sleep";
    case PerfOpKind::kCreatePodGroups: return "createPodGroups";
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
  std::string where;      // "workloadTemplate[2] (createPods)" / "workloads[1]" / ""

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
  bool Fail(std::string* err, const std::string& field, const std::string& msg) const {
    *err = Prefix() + (field.empty() ? "" : " " + field + ":") + " " + msg;
    return false;
  }
};

std::string Line(const YAML::Node& n) {
  if (n.Mark().is_null()) return "";
  return " (line " + std::to_string(n.Mark().line + 1) + ")";
}

bool CheckFields(const Ctx& c, const YAML::Node& m, const std::set<std::string>& allowed,
                 std::string* err) {
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it->first.IsScalar()) return c.Fail(err, "", "field names must be strings" + Line(it->first));
    const std::string k = it->first.Scalar();
    if (!allowed.count(k)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return c.Fail(err, k, "unknown field" + Line(it->first) + " (known: " + list + ")");
    }
  }
  return true;
}

bool GetString(const Ctx& c, const YAML::Node& m, const char* key, std::string* out,
               std::string* err, bool* present = nullptr) {
  YAML::Node n = m[key];
  if (present) *present = n.IsDefined() && !n.IsNull();
  if (!n.IsDefined() || n.IsNull()) return true;
  if (!n.IsScalar()) return c.Fail(err, key, "must be a string" + Line(n));
  *out = n.Scalar();
  return true;
}

bool ParseInt(const std::string& s, int64_t* out) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e;
}

bool GetInt(const Ctx& c, const YAML::Node& m, const char* key, int64_t* out, std::string* err) {
  YAML::Node n = m[key];
  if (!n.IsDefined() || n.IsNull()) return true;
  if (!n.IsScalar() || !ParseInt(n.Scalar(), out)) {
    return c.Fail(err, key, "must be an integer" + Line(n) + ", got \"" +
                                (n.IsScalar() ? n.Scalar() : std::string("<non-scalar>")) + "\"");
  }
  return true;
}

bool GetBool(const Ctx& c, const YAML::Node& m, const char* key, bool* out, std::string* err) {
  YAML::Node n = m[key];
  if (!n.IsDefined() || n.IsNull()) return true;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") {
      *out = true;
      return true;
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      *out = false;
      return true;
    }
  }
  return c.Fail(err, key, "must be true or false" + Line(n));
}

bool GetStringList(const Ctx& c, const YAML::Node& m, const char* key,
                   std::vector<std::string>* out, std::string* err) {
  YAML::Node n = m[key];
  if (!n.IsDefined() || n.IsNull()) return true;
  if (!n.IsSequence()) return c.Fail(err, key, "must be a list of strings" + Line(n));
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      return c.Fail(err, std::string(key) + "[" + std::to_string(i) + "]", "must be a string");
    }
    out->push_back(n[i].Scalar());
  }
  return true;
}

bool GetParam(const Ctx& c, const YAML::Node& m, const char* key, std::string* out,
              std::string* err) {
  if (!GetString(c, m, key, out, err)) return false;
  if (!out->empty() && (*out)[0] != '$') {
    return c.Fail(err, key, "\"" + *out + "\" must start with \"$\" (e.g. \"$" + *out + "\")");
  }
  if (*out == "$") return c.Fail(err, key, "\"$\" names no parameter");
  return true;
}

bool GetTemplate(const Ctx& c, const YAML::Node& m, const char* key, const std::string& file,
                 std::string* out, std::string* err) {
  std::string raw;
  bool present = false;
  if (!GetString(c, m, key, &raw, err, &present)) return false;
  if (!present) return true;
  if (raw.empty()) return c.Fail(err, key, "empty path");
  *out = ResolveTemplatePath(file, raw);
  if (out->empty()) {
    fs::path dir = fs::path(file).parent_path();
    return c.Fail(err, key,
                  "template \"" + raw + "\" not found (tried relative to " +
                      (dir.empty() ? std::string(".") : dir.string()) + " and its parent)");
  }
  return true;
}

// Either count > 0 or countParam "$x" (upstream isValid(true)).
bool CheckCount(const Ctx& c, int64_t count, const std::string& param, const char* count_key,
                const char* param_key, std::string* err) {
  if (count > 0 || !param.empty()) return true;
  if (count < 0) return c.Fail(err, count_key, "must be positive, got " + std::to_string(count));
  return c.Fail(err, count_key, std::string("one of ") + count_key + " (> 0) or " + param_key +
                                    " (\"$name\") is required");
}

bool ParseNodeStrategy(const Ctx& c, const YAML::Node& op, NodeStrategy* s, std::string* err) {
  // Precedence as upstream getNodePreparer: nodeAllocatable, label, unique label.
  YAML::Node na = op["nodeAllocatableStrategy"];
  YAML::Node lb = op["labelNodePrepareStrategy"];
  YAML::Node un = op["uniqueNodeLabelStrategy"];
  if (na.IsDefined() && !na.IsNull()) {
    Ctx cc = c;
    if (!na.IsMap()) return c.Fail(err, "nodeAllocatableStrategy", "must be an object");
    if (!CheckFields(c, na, {"nodeAllocatable", "csiNodeAllocatable", "migratedPlugins"}, err)) {
      return false;
    }
    s->kind = NodeStrategy::Kind::kNodeAllocatable;
    YAML::Node a = na["nodeAllocatable"];
    if (a.IsDefined() && !a.IsNull()) {
      if (!a.IsMap()) return c.Fail(err, "nodeAllocatableStrategy.nodeAllocatable", "must be a map");
      for (auto it = a.begin(); it != a.end(); ++it) {
        if (!it->second.IsScalar()) {
          return c.Fail(err, "nodeAllocatableStrategy.nodeAllocatable." + it->first.Scalar(),
                        "must be a quantity string");
        }
        s->allocatable[it->first.Scalar()] = it->second.Scalar();
      }
    }
    YAML::Node csi = na["csiNodeAllocatable"];
    s->csi_node_allocatable = csi.IsDefined() && !csi.IsNull();
    return true;
  }
  if (lb.IsDefined() && !lb.IsNull()) {
    if (!lb.IsMap()) return c.Fail(err, "labelNodePrepareStrategy", "must be an object");
    if (!CheckFields(c, lb, {"labelKey", "labelValues"}, err)) return false;
    s->kind = NodeStrategy::Kind::kLabel;
    if (!GetString(c, lb, "labelKey", &s->label_key, err) ||
        !GetStringList(c, lb, "labelValues", &s->label_values, err)) {
      return false;
    }
    if (s->label_key.empty()) return c.Fail(err, "labelNodePrepareStrategy.labelKey", "required");
    if (s->label_values.empty()) {
      return c.Fail(err, "labelNodePrepareStrategy.labelValues", "at least one value is required");
    }
    return true;
  }
  if (un.IsDefined() && !un.IsNull()) {
    if (!un.IsMap()) return c.Fail(err, "uniqueNodeLabelStrategy", "must be an object");
    if (!CheckFields(c, un, {"labelKey"}, err)) return false;
    s->kind = NodeStrategy::Kind::kUniqueLabel;
    if (!GetString(c, un, "labelKey", &s->label_key, err)) return false;
    if (s->label_key.empty()) return c.Fail(err, "uniqueNodeLabelStrategy.labelKey", "required");
  }
  return true;
}

bool ParseOp(const Ctx& c, const YAML::Node& n, const std::string& file, PerfOp* op,
             std::string* err) {
  if (!n.IsMap()) return c.Fail(err, "", "an op must be an object" + Line(n));
  std::string opcode;
  if (!GetString(c, n, "opcode", &opcode, err)) return false;
  if (opcode.empty()) return c.Fail(err, "opcode", "required" + Line(n));
  if (opcode == "createNodes") {
    op->kind = PerfOpKind::kCreateNodes;
    if (!CheckFields(c, n,
                     {"opcode", "count", "countParam", "nodeTemplatePath", "nodeAllocatableStrategy",
                      "labelNodePrepareStrategy", "uniqueNodeLabelStrategy"},
                     err) ||
        !GetInt(c, n, "count", &op->count, err) || !GetParam(c, n, "countParam", &op->count_param, err) ||
        !GetTemplate(c, n, "nodeTemplatePath", file, &op->node_template_path, err) ||
        !ParseNodeStrategy(c, n, &op->strategy, err)) {
      return false;
    }
    return CheckCount(c, op->count, op->count_param, "count", "countParam", err);
  }
  if (opcode == "createPods" || opcode == "createPodGroups") {
    const bool groups = opcode == "createPodGroups";
    op->kind = groups ? PerfOpKind::kCreatePodGroups : PerfOpKind::kCreatePods;
    std::set<std::string> fields = {"opcode",         "count",           "countParam",
                                    "collectMetrics", "namespace",       "podTemplatePath",
                                    "skipWaitToCompletion"};
    if (groups) {
      fields.insert({"podsPerGroup", "podsPerGroupParam", "minMember", "minMemberParam"});
    } else {
      fields.insert({"persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath"});
    }
    std::string ns;
    bool has_ns = false;
    if (!CheckFields(c, n, fields, err) || !GetInt(c, n, "count", &op->count, err) ||
        !GetParam(c, n, "countParam", &op->count_param, err) ||
        !GetBool(c, n, "collectMetrics", &op->collect_metrics, err) ||
        !GetBool(c, n, "skipWaitToCompletion", &op->skip_wait, err) ||
        !GetString(c, n, "namespace", &ns, err, &has_ns) ||
        !GetTemplate(c, n, "podTemplatePath", file, &op->pod_template_path, err)) {
      return false;
    }
    if (has_ns) {
      if (ns.empty()) return c.Fail(err, "namespace", "must not be empty");
      op->namespace_ = ns;
    }
    if (!CheckCount(c, op->count, op->count_param, "count", "countParam", err)) return false;
    if (op->collect_metrics && op->skip_wait) {
      // Upstream createPodsOp.isValid.
      return c.Fail(err, "collectMetrics",
                    "collectMetrics and skipWaitToCompletion cannot be true at the same time");
    }
    if (groups) {
      if (!GetInt(c, n, "podsPerGroup", &op->pods_per_group, err) ||
          !GetParam(c, n, "podsPerGroupParam", &op->pods_per_group_param, err) ||
          !GetInt(c, n, "minMember", &op->min_member, err) ||
          !GetParam(c, n, "minMemberParam", &op->min_member_param, err)) {
        return false;
      }
      if (!CheckCount(c, op->pods_per_group, op->pods_per_group_param, "podsPerGroup",
                      "podsPerGroupParam", err)) {
        return false;
      }
      if (op->min_member < 0) return c.Fail(err, "minMember", "must not be negative");
      return true;
    }
    if (!GetTemplate(c, n, "persistentVolumeTemplatePath", file, &op->pv_template_path, err) ||
        !GetTemplate(c, n, "persistentVolumeClaimTemplatePath", file, &op->pvc_template_path, err)) {
      return false;
    }
    if (!op->pvc_template_path.empty() && op->pv_template_path.empty()) {
      // Upstream getPodStrategy reads both when a PVC template is given.
      return c.Fail(err, "persistentVolumeTemplatePath",
                    "required with persistentVolumeClaimTemplatePath");
    }
    return true;
  }
  if (opcode == "barrier") {
    op->kind = PerfOpKind::kBarrier;
    return CheckFields(c, n, {"opcode", "namespaces"}, err) &&
           GetStringList(c, n, "namespaces", &op->namespaces, err);
  }
  if (opcode == "churn") {
    op->kind = PerfOpKind::kChurn;
    std::string ns;
    bool has_ns = false;
    if (!CheckFields(c, n, {"opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"},
                     err) ||
        !GetString(c, n, "mode", &op->mode, err) || !GetInt(c, n, "number", &op->number, err) ||
        !GetInt(c, n, "intervalMilliseconds", &op->interval_ms, err) ||
        !GetString(c, n, "namespace", &ns, err, &has_ns)) {
      return false;
    }
    if (has_ns) op->namespace_ = ns;
    // Upstream churnOp.isValid.
    if (op->mode != "create" && op->mode != "recreate") {
      return c.Fail(err, "mode", "must be create or recreate, got \"" + op->mode + "\"");
    }
    if (op->mode == "recreate" && op->number <= 0) {
      return c.Fail(err, "number", "must be positive in recreate mode");
    }
    if (op->number < 0) return c.Fail(err, "number", "must not be negative");
    if (op->interval_ms == 0) op->interval_ms = 500;
    if (op->interval_ms < 0) return c.Fail(err, "intervalMilliseconds", "must be positive");
    std::vector<std::string> raw;
    if (!GetStringList(c, n, "templatePaths", &raw, err)) return false;
    if (raw.empty()) return c.Fail(err, "templatePaths", "at least one template is required");
    for (size_t i = 0; i < raw.size(); ++i) {
      std::string r = ResolveTemplatePath(file, raw[i]);
      if (r.empty()) {
        return c.Fail(err, "templatePaths[" + std::to_string(i) + "]",
                      "template \"" + raw[i] + "\" not found");
      }
      op->template_paths.push_back(r);
    }
    return true;
  }
  if (opcode == "createNamespaces") {
    op->kind = PerfOpKind::kCreateNamespaces;
    if (!CheckFields(c, n, {"opcode", "prefix", "count", "countParam", "namespaceTemplatePath"}, err) ||
        !GetString(c, n, "prefix", &op->prefix, err) || !GetInt(c, n, "count", &op->count, err) ||
        !GetParam(c, n, "countParam", &op->count_param, err) ||
        !GetTemplate(c, n, "namespaceTemplatePath", file, &op->namespace_template_path, err)) {
      return false;
    }
    if (op->prefix.empty()) return c.Fail(err, "prefix", "required");
    return CheckCount(c, op->count, op->count_param, "count", "countParam", err);
  }
  if (opcode == "sleep") {
    op->kind = PerfOpKind::kSleep;
    std::string d;
    if (!CheckFields(c, n, {"opcode", "duration", "durationParam"}, err) ||
        !GetString(c, n, "duration", &d, err) || !GetParam(c, n, "durationParam", &op->duration_param, err)) {
      return false;
    }
    if (!d.empty()) {
      std::string perr;
      if (!api::MoveOrMessage(api::ParseGoDuration(d), &op->duration_ns, &perr)) {
        return c.Fail(err, "duration", perr);
      }
      if (op->duration_ns < 0) return c.Fail(err, "duration", "must not be negative");
    } else if (op->duration_param.empty()) {
      return c.Fail(err, "duration", "one of duration or durationParam is required");
    }
    return true;
  }
  return c.Fail(err, "opcode",
                "unknown opcode \"" + opcode +
                    "\" (known: createNodes, createPods, barrier, churn, createNamespaces, sleep, "
                    "createPodGroups)");
}

bool ParseCase(Ctx c, const YAML::Node& n, const std::string& file, PerfTestCase* tc,
               std::string* err) {
  if (!n.IsMap()) return c.Fail(err, "", "a test case must be an object" + Line(n));
  if (!GetString(c, n, "name", &tc->name, err)) return false;
  c.test_case = tc->name;
  if (tc->name.empty()) return c.Fail(err, "name", "required");
  if (!CheckFields(c, n,
                   {"name", "featureGates", "labels", "metricsCollectorConfig", "workloadTemplate",
                    "workloads"},
                   err) ||
      !GetStringList(c, n, "labels", &tc->labels, err)) {
    return false;
  }
  YAML::Node fg = n["featureGates"];
  if (fg.IsDefined() && !fg.IsNull()) {
    if (!fg.IsMap()) return c.Fail(err, "featureGates", "must be a map of feature to true/false");
    for (auto it = fg.begin(); it != fg.end(); ++it) {
      bool v = false;
      YAML::Node m;
      m["v"] = it->second;
      if (!GetBool(c, m, "v", &v, err)) {
        return c.Fail(err, "featureGates." + it->first.Scalar(), "must be true or false");
      }
      tc->feature_gates[it->first.Scalar()] = v;
    }
  }
  YAML::Node ops = n["workloadTemplate"];
  if (ops.IsDefined() && !ops.IsNull() && !ops.IsSequence()) {
    return c.Fail(err, "workloadTemplate", "must be a list of ops");
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
      if (!ParseOp(oc, ops[i], file, &op, err)) return false;
      tc->ops.push_back(std::move(op));
    }
  }
  YAML::Node ws = n["workloads"];
  if (ws.IsDefined() && !ws.IsNull() && !ws.IsSequence()) {
    return c.Fail(err, "workloads", "must be a list");
  }
  std::set<std::string> names;
  if (ws.IsDefined() && ws.IsSequence()) {
    for (size_t i = 0; i < ws.size(); ++i) {
      Ctx wc = c;
      wc.where = "workloads[" + std::to_string(i) + "]";
      const YAML::Node& w = ws[i];
      if (!w.IsMap()) return wc.Fail(err, "", "a workload must be an object");
      PerfWorkload pw;
      if (!CheckFields(wc, w, {"name", "params", "labels", "featureGates"}, err) ||
          !GetString(wc, w, "name", &pw.name, err) ||
          !GetStringList(wc, w, "labels", &pw.labels, err)) {
        return false;
      }
      if (pw.name.empty()) return wc.Fail(err, "name", "required");
      if (!names.insert(pw.name).second) return wc.Fail(err, "name", "duplicate workload \"" + pw.name + "\"");
      YAML::Node p = w["params"];
      if (p.IsDefined() && !p.IsNull()) {
        if (!p.IsMap()) return wc.Fail(err, "params", "must be a map of name to value");
        for (auto it = p.begin(); it != p.end(); ++it) {
          if (!it->second.IsScalar()) {
            return wc.Fail(err, "params." + it->first.Scalar(), "must be a number or a duration");
          }
          pw.params[it->first.Scalar()] = it->second.Scalar();
        }
      }
      tc->workloads.push_back(std::move(pw));
    }
  }
  // Upstream validateTestCases.
  if (tc->workloads.empty()) return c.Fail(err, "workloads", "no workloads defined");
  if (tc->ops.empty()) return c.Fail(err, "workloadTemplate", "no ops defined");
  bool collects = false;
  for (const auto& op : tc->ops) collects = collects || op.collect_metrics;
  if (!collects) {
    return c.Fail(err, "workloadTemplate", "no op in the workload template collects metrics");
  }
  return true;
}

}  // namespace

bool ParsePerfConfig(const std::string& text, const std::string& path, PerfConfig* out,
                     std::string* err) {
  *out = PerfConfig{};
  out->path = path;
  Ctx c;
  c.file = path;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) return c.Fail(err, "", "no test cases defined");
    if (!root.IsSequence()) return c.Fail(err, "", "a workload file is a list of test cases");
    std::set<std::string> names;
    for (size_t i = 0; i < root.size(); ++i) {
      Ctx tc_ctx = c;
      tc_ctx.case_index = static_cast<int>(i);
      PerfTestCase tc;
      if (!ParseCase(tc_ctx, root[i], path, &tc, err)) return false;
      if (!names.insert(tc.name).second) {
        tc_ctx.test_case = tc.name;
        return tc_ctx.Fail(err, "name", "duplicate test case");
      }
      out->cases.push_back(std::move(tc));
    }
    if (out->cases.empty()) return c.Fail(err, "", "no test cases defined");
    return true;
  } catch (const YAML::Exception& e) {
    return c.Fail(err, "", std::string("invalid YAML: ") + e.what());
  } catch (const std::exception& e) {
    return c.Fail(err, "", e.what());
  }
}

bool LoadPerfConfig(const std::string& path, PerfConfig* out, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParsePerfConfig(ss.str(), path, out, err);
}

bool PatchParams(const PerfConfig& cfg, const PerfTestCase& tc, const PerfWorkload& w,
                 std::vector<PerfOp>* out, std::string* err) {
  out->clear();
  for (const auto& op0 : tc.ops) {
    PerfOp op = op0;
    Ctx c;
    c.file = cfg.path;
    c.test_case = tc.name + "/" + w.name;
    c.case_index = 0;
    c.where = "workloadTemplate[" + std::to_string(op.index) + "] (" + PerfOpcodeName(op.kind) + ")";
    auto patch_int = [&](const std::string& param, const char* field, int64_t* v) {
      if (param.empty()) return true;
      auto it = w.params.find(param.substr(1));
      if (it == w.params.end()) return c.Fail(err, field, "parameter " + param + " is undefined");
      if (!ParseInt(it->second, v)) {
        return c.Fail(err, field,
                      "parameter " + param + " must be an integer, got \"" + it->second + "\"");
      }
      return true;
    };
    if (!patch_int(op.count_param, "countParam", &op.count) ||
        !patch_int(op.pods_per_group_param, "podsPerGroupParam", &op.pods_per_group) ||
        !patch_int(op.min_member_param, "minMemberParam", &op.min_member)) {
      return false;
    }
    if (!op.duration_param.empty()) {
      auto it = w.params.find(op.duration_param.substr(1));
      if (it == w.params.end()) {
        return c.Fail(err, "durationParam", "parameter " + op.duration_param + " is undefined");
      }
      std::string perr;
      if (!api::MoveOrMessage(api::ParseGoDuration(it->second), &op.duration_ns, &perr)) {
        return c.Fail(err, "durationParam", "parameter " + op.duration_param + ": " + perr);
      }
    }
    // Upstream isValid(false): counts must be positive once parameters are applied.
    const bool counted = op.kind == PerfOpKind::kCreateNodes || op.kind == PerfOpKind::kCreatePods ||
                         op.kind == PerfOpKind::kCreateNamespaces ||
                         op.kind == PerfOpKind::kCreatePodGroups;
    if (counted && op.count <= 0) {
      return c.Fail(err, op.count_param.empty() ? "count" : "countParam",
                    "invalid Count=" + std::to_string(op.count) + " / CountParam=\"" +
                        op.count_param + "\"");
    }
    if (op.kind == PerfOpKind::kCreatePodGroups) {
      if (op.pods_per_group <= 0) {
        return c.Fail(err, "podsPerGroup", "must be positive, got " + std::to_string(op.pods_per_group));
      }
      if (op.min_member == 0) op.min_member = op.pods_per_group;
      if (op.min_member < 0 || op.min_member > op.pods_per_group) {
        return c.Fail(err, "minMember",
                      "must be between 1 and podsPerGroup (" + std::to_string(op.pods_per_group) +
                          "), got " + std::to_string(op.min_member));
      }
    }
    out->push_back(std::move(op));
  }
  return true;
}

}  // namespace phalanx::bench
