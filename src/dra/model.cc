// Parsers of the resource.k8s.io objects (model.h), strict on the fields they keep.
#include "dra/model.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "api/labels.h"
#include "api/labels_internal.h"
#include "api/rfc3339.h"

namespace phalanx::dra {

namespace {

bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

// Reads fields of one object; the first error is kept with the object's name in front.
class Reader {
 public:
  explicit Reader(std::string object) : object_(std::move(object)) {}

  bool Fail(const std::string& path, const std::string& what) {
    if (error_.empty()) error_ = object_ + ": " + path + ": " + what;
    return false;
  }
  // A message that already names the object and field (a CEL selector's error).
  bool FailRaw(const std::string& msg) {
    if (error_.empty()) error_ = msg;
    return false;
  }
  api::Status Error() const { return absl::InvalidArgumentError(error_); }
  const std::string& object() const { return object_; }

  bool Map(const YAML::Node& n, const std::string& path) {
    return n.IsMap() || Fail(path, "Invalid value: must be an object");
  }
  bool Seq(const YAML::Node& n, const std::string& path) {
    return n.IsSequence() || Fail(path, "Invalid value: must be a list");
  }
  bool Str(const YAML::Node& map, const char* key, const std::string& path, std::string* out) {
    const YAML::Node n = map[key];
    if (!Present(n)) return true;
    if (!n.IsScalar()) return Fail(Child(path, key), "Invalid value: must be a string");
    *out = n.Scalar();
    return true;
  }
  bool Int(const YAML::Node& map, const char* key, const std::string& path,
           std::optional<int64_t>* out) {
    const YAML::Node n = map[key];
    if (!Present(n)) return true;
    int64_t v = 0;
    if (!n.IsScalar() || !ParseInt(n.Scalar(), &v)) {
      return Fail(Child(path, key), "Invalid value: \"" + (n.IsScalar() ? n.Scalar() : "") +
                                        "\": must be an integer");
    }
    *out = v;
    return true;
  }
  bool Bool(const YAML::Node& map, const char* key, const std::string& path, bool* out) {
    const YAML::Node n = map[key];
    if (!Present(n)) return true;
    if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) {
      return Fail(Child(path, key), "Invalid value: must be a boolean");
    }
    *out = n.Scalar() == "true";
    return true;
  }
  bool Strings(const YAML::Node& map, const char* key, const std::string& path,
               std::vector<std::string>* out) {
    const YAML::Node n = map[key];
    if (!Present(n)) return true;
    const std::string p = Child(path, key);
    if (!Seq(n, p)) return false;
    for (size_t i = 0; i < n.size(); ++i) {
      if (!n[i].IsScalar()) return Fail(Index(p, i), "Invalid value: must be a string");
      out->push_back(n[i].Scalar());
    }
    return true;
  }
  bool Quantity(const YAML::Node& n, const std::string& path, api::Quantity* out) {
    if (!n.IsScalar()) return Fail(path, "Invalid value: must be a quantity");
    auto q = api::Quantity::Parse(n.Scalar());
    if (!q.ok()) {
      return Fail(path,
                  "Invalid value: \"" + n.Scalar() + "\": " + std::string(q.status().message()));
    }
    *out = *q;
    return true;
  }

  static std::string Child(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string Index(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }
  static std::string KeyOf(const std::string& path, const std::string& key) {
    return path + "[\"" + key + "\"]";
  }

 private:
  static bool ParseInt(const std::string& s, int64_t* out) {
    if (s.empty()) return false;
    size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
    if (i == s.size()) return false;
    __int128 v = 0;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
      if (v > (static_cast<__int128>(1) << 63)) return false;
    }
    if (s[0] == '-') v = -v;
    if (v > INT64_MAX || v < INT64_MIN) return false;
    *out = static_cast<int64_t>(v);
    return true;
  }

  std::string object_;
  std::string error_;
};

std::string ObjectName(const char* kind, const api::Unstructured& obj) {
  std::string out = std::string(kind) + " ";
  if (!obj.metadata.namespace_.empty()) out += obj.metadata.namespace_ + "/";
  return out + obj.metadata.name;
}

// spec.selectors[] (DeviceSelector: only `cel` exists in v1).
bool ParseSelectors(Reader& r, const YAML::Node& map, const std::string& path, Selectors* out) {
  const YAML::Node n = map["selectors"];
  if (!Present(n)) return true;
  const std::string p = Reader::Child(path, "selectors");
  if (!r.Seq(n, p)) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string ip = Reader::Index(p, i);
    if (!r.Map(n[i], ip)) return false;
    const YAML::Node cel = n[i]["cel"];
    if (!Present(cel)) return r.Fail(Reader::Child(ip, "cel"), "Required value");
    std::string expr;
    if (!r.Map(cel, Reader::Child(ip, "cel")) ||
        !r.Str(cel, "expression", Reader::Child(ip, "cel"), &expr)) {
      return false;
    }
    const std::string ep = Reader::Child(ip, "cel.expression");
    if (expr.empty()) return r.Fail(ep, "Required value");
    auto sel = cel::ParseSelector(expr, r.object() + ": " + ep);
    // The selector's own message names the object, the field and the column.
    if (!sel.ok()) return r.FailRaw(std::string(sel.status().message()));
    out->push_back(std::move(*sel));
  }
  return true;
}

bool ParseRequirements(Reader& r, const YAML::Node& term, const char* key, const std::string& path,
                       std::vector<api::NodeSelectorRequirement>* out) {
  const YAML::Node n = term[key];
  if (!Present(n)) return true;
  const std::string p = Reader::Child(path, key);
  if (!r.Seq(n, p)) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string ip = Reader::Index(p, i);
    api::NodeSelectorRequirement req;
    if (!r.Map(n[i], ip) || !r.Str(n[i], "key", ip, &req.key) ||
        !r.Str(n[i], "operator", ip, &req.op) || !r.Strings(n[i], "values", ip, &req.values)) {
      return false;
    }
    out->push_back(std::move(req));
  }
  return true;
}

// v1.NodeSelector (a slice's or a device's nodeSelector, an allocation's nodeSelector).
// `one_term`: a ResourceSlice's selectors "Must use exactly one term" (v1 types.go).
bool ParseNodeSelector(Reader& r, const YAML::Node& n, const std::string& path,
                       api::NodeSelector* out, bool one_term = false) {
  if (!r.Map(n, path)) return false;
  const YAML::Node terms = n["nodeSelectorTerms"];
  const std::string tp = Reader::Child(path, "nodeSelectorTerms");
  if (!Present(terms))
    return r.Fail(tp, "Required value: must have at least one node selector term");
  if (!r.Seq(terms, tp)) return false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string ip = Reader::Index(tp, i);
    api::NodeSelectorTerm term;
    if (!r.Map(terms[i], ip) ||
        !ParseRequirements(r, terms[i], "matchExpressions", ip, &term.match_expressions) ||
        !ParseRequirements(r, terms[i], "matchFields", ip, &term.match_fields)) {
      return false;
    }
    if (auto s = api::ValidateNodeSelectorTerm(term); !s.ok()) {
      return r.Fail(ip, std::string(s.message()));
    }
    out->node_selector_terms.push_back(std::move(term));
  }
  if (out->node_selector_terms.empty()) {
    return r.Fail(tp, "Required value: must have at least one node selector term");
  }
  if (one_term && out->node_selector_terms.size() != 1) {
    return r.Fail(tp, "Invalid value: must have exactly one node selector term");
  }
  return true;
}

// One DeviceAttribute: exactly one of int, bool, string, version.
bool ParseAttribute(Reader& r, const YAML::Node& n, const std::string& path,
                    cel::AttributeValue* out) {
  if (!r.Map(n, path)) return false;
  // The list-valued attributes (alpha in 1.36: DRAListTypeAttributes) are refused by name
  // rather than as "exactly one value" (they are values too).
  for (const char* list : {"ints", "bools", "strings", "versions"}) {
    if (Present(n[list])) {
      return r.Fail(Reader::Child(path, list),
                    "Forbidden: list-valued attributes are not supported by this scheduler");
    }
  }
  int set = 0;
  if (Present(n["int"])) {
    std::optional<int64_t> v;
    if (!r.Int(n, "int", path, &v)) return false;
    *out = cel::AttributeValue::Int(*v);
    ++set;
  }
  if (Present(n["bool"])) {
    bool v = false;
    if (!r.Bool(n, "bool", path, &v)) return false;
    *out = cel::AttributeValue::Bool(v);
    ++set;
  }
  if (Present(n["string"])) {
    std::string v;
    if (!r.Str(n, "string", path, &v)) return false;
    *out = cel::AttributeValue::String(std::move(v));
    ++set;
  }
  if (Present(n["version"])) {
    std::string v;
    if (!r.Str(n, "version", path, &v)) return false;
    *out = cel::AttributeValue::Version(std::move(v));
    ++set;
  }
  if (set != 1) return r.Fail(path, "Invalid value: exactly one value must be specified");
  return true;
}

bool ParseCounters(Reader& r, const YAML::Node& n, const std::string& path,
                   std::map<std::string, api::Quantity>* out) {
  if (!Present(n)) return r.Fail(path, "Required value");
  if (!r.Map(n, path)) return false;
  for (const auto& kv : n) {
    const std::string name = kv.first.Scalar();
    const std::string cp = Reader::KeyOf(path, name);
    if (!r.Map(kv.second, cp)) return false;
    api::Quantity q;
    if (!Present(kv.second["value"])) return r.Fail(Reader::Child(cp, "value"), "Required value");
    if (!r.Quantity(kv.second["value"], Reader::Child(cp, "value"), &q)) return false;
    (*out)[name] = q;
  }
  return true;
}

// Taints and tolerations (KEP-5055). Validation as pkg/apis/resource/validation
// validateDeviceTaint / validateDeviceToleration: key required (a toleration's may be empty
// with Exists), operator Equal or Exists, Exists without a value, effect of a taint
// required; at most 16 taints per device and 16 tolerations per request
// (DeviceTaintsMaxLength, DeviceTolerationsMaxLength).
constexpr size_t kMaxTaints = 16;
constexpr size_t kMaxTolerations = 16;

bool ParseTaint(Reader& r, const YAML::Node& n, const std::string& path, DeviceTaint* t) {
  if (!r.Map(n, path) || !r.Str(n, "key", path, &t->key) || !r.Str(n, "value", path, &t->value) ||
      !r.Str(n, "effect", path, &t->effect) || !r.Str(n, "timeAdded", path, &t->time_added)) {
    return false;
  }
  if (t->key.empty()) return r.Fail(Reader::Child(path, "key"), "Required value");
  // Unknown effects (a newer API server's) are kept and treated like None (model.h).
  if (t->effect.empty()) {
    return r.Fail(Reader::Child(path, "effect"),
                  "Required value: supported values: \"NoExecute\", \"NoSchedule\", \"None\"");
  }
  return true;
}

bool ParseTaints(Reader& r, const YAML::Node& map, const std::string& path,
                 std::vector<DeviceTaint>* out) {
  const YAML::Node n = map["taints"];
  if (!Present(n)) return true;
  const std::string p = Reader::Child(path, "taints");
  if (!r.Seq(n, p)) return false;
  if (n.size() > kMaxTaints) {
    return r.Fail(p, "Too many: " + std::to_string(n.size()) + ": must have at most " +
                         std::to_string(kMaxTaints) + " items");
  }
  for (size_t i = 0; i < n.size(); ++i) {
    DeviceTaint t;
    if (!ParseTaint(r, n[i], Reader::Index(p, i), &t)) return false;
    out->push_back(std::move(t));
  }
  return true;
}

bool ParseToleration(Reader& r, const YAML::Node& n, const std::string& path, DeviceToleration* t) {
  std::string op;
  if (!r.Map(n, path) || !r.Str(n, "key", path, &t->key) || !r.Str(n, "operator", path, &op) ||
      !r.Str(n, "value", path, &t->value) || !r.Str(n, "effect", path, &t->effect) ||
      !r.Int(n, "tolerationSeconds", path, &t->toleration_seconds)) {
    return false;
  }
  if (!op.empty()) t->op = op;
  if (t->op != "Equal" && t->op != "Exists") {
    return r.Fail(Reader::Child(path, "operator"),
                  "Unsupported value: \"" + op + "\": supported values: \"Equal\", \"Exists\"");
  }
  if (t->key.empty() && t->op != "Exists") {
    return r.Fail(Reader::Child(path, "operator"),
                  "Invalid value: \"" + t->op +
                      "\": value must be Exists when `key` is empty, "
                      "which means \"match all values and all keys\"");
  }
  if (t->op == "Exists" && !t->value.empty()) {
    return r.Fail(Reader::Child(path, "operator"), "Invalid value: \"" + t->value +
                                                       "\": value must be empty when `operator` is "
                                                       "'Exists'");
  }
  if (!t->effect.empty() && t->effect != "NoSchedule" && t->effect != "NoExecute" &&
      t->effect != "None") {
    return r.Fail(Reader::Child(path, "effect"),
                  "Unsupported value: \"" + t->effect +
                      "\": supported values: \"NoExecute\", \"NoSchedule\", \"None\"");
  }
  return true;
}

bool ParseTolerations(Reader& r, const YAML::Node& map, const std::string& path,
                      std::vector<DeviceToleration>* out) {
  const YAML::Node n = map["tolerations"];
  if (!Present(n)) return true;
  const std::string p = Reader::Child(path, "tolerations");
  if (!r.Seq(n, p)) return false;
  if (n.size() > kMaxTolerations) {
    return r.Fail(p, "Too many: " + std::to_string(n.size()) + ": must have at most " +
                         std::to_string(kMaxTolerations) + " items");
  }
  for (size_t i = 0; i < n.size(); ++i) {
    DeviceToleration t;
    if (!ParseToleration(r, n[i], Reader::Index(p, i), &t)) return false;
    out->push_back(std::move(t));
  }
  return true;
}

// capacity{}.requestPolicy of a capacity of `value` (validation.go validateRequestPolicy:
// validRange and validValues are exclusive, either needs a default within it; validValues
// ascending, at most 10, not above the capacity; validRange.min required, step positive).
bool ParseRequestPolicy(Reader& r, const YAML::Node& n, const std::string& path,
                        const api::Quantity& value, CapacityRequestPolicy* p) {
  if (!r.Map(n, path)) return false;
  if (Present(n["default"])) {
    api::Quantity q;
    if (!r.Quantity(n["default"], Reader::Child(path, "default"), &q)) return false;
    if (q.Compare(value) > 0) {
      return r.Fail(Reader::Child(path, "default"),
                    "Invalid value: must be less than or equal to the capacity value");
    }
    p->default_value = q;
  }
  const YAML::Node range = n["validRange"];
  const YAML::Node values = n["validValues"];
  if (Present(range) && Present(values)) {
    return r.Fail(path, "Invalid value: only one of `validRange` and `validValues` can be set");
  }
  if ((Present(range) || Present(values)) && !p->default_value) {
    return r.Fail(Reader::Child(path, "default"),
                  "Required value: when `validRange` or `validValues` is set");
  }
  if (Present(range)) {
    const std::string rp = Reader::Child(path, "validRange");
    if (!r.Map(range, rp)) return false;
    p->has_range = true;
    if (!Present(range["min"])) return r.Fail(Reader::Child(rp, "min"), "Required value");
    if (!r.Quantity(range["min"], Reader::Child(rp, "min"), &p->min)) return false;
    for (const char* key : {"max", "step"}) {
      if (!Present(range[key])) continue;
      api::Quantity q;
      if (!r.Quantity(range[key], Reader::Child(rp, key), &q)) return false;
      (std::string(key) == "max" ? p->max : p->step) = q;
    }
    if (p->step && (p->step->IsZero() || p->step->IsNegative())) {
      return r.Fail(Reader::Child(rp, "step"), "Invalid value: must be greater than zero");
    }
    if (p->default_value->Compare(p->min) < 0 ||
        (p->max && p->default_value->Compare(*p->max) > 0)) {
      return r.Fail(Reader::Child(path, "default"), "Invalid value: must be within `validRange`");
    }
  }
  if (Present(values)) {
    const std::string vp = Reader::Child(path, "validValues");
    if (!r.Seq(values, vp)) return false;
    if (values.size() > 10) {
      return r.Fail(vp,
                    "Too many: " + std::to_string(values.size()) + ": must have at most 10 items");
    }
    bool has_default = false;
    for (size_t i = 0; i < values.size(); ++i) {
      api::Quantity q;
      if (!r.Quantity(values[i], Reader::Index(vp, i), &q)) return false;
      if (!p->valid_values.empty() && p->valid_values.back().Compare(q) >= 0) {
        return r.Fail(Reader::Index(vp, i), "Invalid value: must be sorted in ascending order");
      }
      if (q.Compare(value) > 0) {
        return r.Fail(Reader::Index(vp, i),
                      "Invalid value: must be less than or equal to the capacity value");
      }
      has_default = has_default || q.Compare(*p->default_value) == 0;
      p->valid_values.push_back(q);
    }
    if (!has_default) {
      return r.Fail(Reader::Child(path, "default"), "Invalid value: must be one of `validValues`");
    }
  }
  return true;
}

// Device binding conditions (KEP-5007): pkg/apis/resource/validation
// validateDeviceBindingParameters — at most 4 of each (BindingConditionsMaxSize,
// BindingFailureConditionsMaxSize), each a label name (condition types), no duplicates, no
// type in both lists, and either list only together with the other.
constexpr size_t kMaxBindingConditions = 4;

bool ParseConditionTypes(Reader& r, const YAML::Node& map, const char* key, const std::string& path,
                         std::vector<std::string>* out) {
  if (!r.Strings(map, key, path, out)) return false;
  const std::string p = Reader::Child(path, key);
  if (out->size() > kMaxBindingConditions) {
    return r.Fail(p, "Too many: " + std::to_string(out->size()) + ": must have at most " +
                         std::to_string(kMaxBindingConditions) + " items");
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < out->size(); ++i) {
    const std::string& t = (*out)[i];
    if (api::Status e = api::internal::QualifiedNameError(t); !e.ok()) {
      return r.Fail(Reader::Index(p, i),
                    "Invalid value: \"" + t + "\": " + std::string(e.message()));
    }
    if (!seen.insert(t).second) {
      return r.Fail(Reader::Index(p, i), "Duplicate value: \"" + t + "\"");
    }
  }
  return true;
}

bool ParseBindingParameters(Reader& r, const YAML::Node& n, const std::string& path, Device* d) {
  if (!r.Bool(n, "bindsToNode", path, &d->binds_to_node) ||
      !ParseConditionTypes(r, n, "bindingConditions", path, &d->binding_conditions) ||
      !ParseConditionTypes(r, n, "bindingFailureConditions", path,
                           &d->binding_failure_conditions)) {
    return false;
  }
  for (size_t i = 0; i < d->binding_failure_conditions.size(); ++i) {
    const std::string& t = d->binding_failure_conditions[i];
    if (std::find(d->binding_conditions.begin(), d->binding_conditions.end(), t) !=
        d->binding_conditions.end()) {
      return r.Fail(Reader::Index(Reader::Child(path, "bindingFailureConditions"), i),
                    "Invalid value: \"" + t +
                        "\": bindingFailureConditions must not overlap with bindingConditions");
    }
  }
  if (d->binding_conditions.empty() && !d->binding_failure_conditions.empty()) {
    return r.Fail(Reader::Child(path, "bindingConditions"),
                  "Invalid value: []: bindingConditions are required to use "
                  "bindingFailureConditions");
  }
  if (d->binding_failure_conditions.empty() && !d->binding_conditions.empty()) {
    return r.Fail(Reader::Child(path, "bindingFailureConditions"),
                  "Invalid value: []: bindingFailureConditions are required to use "
                  "bindingConditions");
  }
  return true;
}

// `per_device`: the slice's spec.perDeviceNodeSelection.
bool ParseDevice(Reader& r, const YAML::Node& in, const std::string& path,
                 const std::string& driver, bool per_device, Device* d) {
  if (!r.Map(in, path) || !r.Str(in, "name", path, &d->name)) return false;
  if (d->name.empty()) return r.Fail(Reader::Child(path, "name"), "Required value");
  // v1beta1: the device's fields under `basic`.
  const YAML::Node n = Present(in["basic"]) ? in["basic"] : in;
  const std::string base = Present(in["basic"]) ? Reader::Child(path, "basic") : path;
  if (!r.Map(n, base)) return false;
  d->view.driver = driver;
  if (const YAML::Node attrs = n["attributes"]; Present(attrs)) {
    const std::string ap = Reader::Child(base, "attributes");
    if (!r.Map(attrs, ap)) return false;
    for (const auto& kv : attrs) {
      cel::AttributeValue v;
      if (!ParseAttribute(r, kv.second, Reader::KeyOf(ap, kv.first.Scalar()), &v)) return false;
      d->view.attributes[kv.first.Scalar()] = std::move(v);
    }
  }
  if (const YAML::Node caps = n["capacity"]; Present(caps)) {
    const std::string cp = Reader::Child(base, "capacity");
    if (!r.Map(caps, cp)) return false;
    for (const auto& kv : caps) {
      const std::string ip = Reader::KeyOf(cp, kv.first.Scalar());
      api::Quantity q;
      if (kv.second.IsMap()) {  // v1beta1+: {value: quantity, requestPolicy}
        if (!Present(kv.second["value"]))
          return r.Fail(Reader::Child(ip, "value"), "Required value");
        if (!r.Quantity(kv.second["value"], Reader::Child(ip, "value"), &q)) return false;
        if (const YAML::Node rp = kv.second["requestPolicy"]; Present(rp)) {
          CapacityRequestPolicy policy;
          if (!ParseRequestPolicy(r, rp, Reader::Child(ip, "requestPolicy"), q, &policy)) {
            return false;
          }
          d->request_policies[kv.first.Scalar()] = std::move(policy);
        }
      } else if (!r.Quantity(kv.second, ip, &q)) {
        return false;
      }
      d->view.capacity[kv.first.Scalar()] = q;
    }
  }
  if (!r.Bool(n, "allowMultipleAllocations", base, &d->view.allow_multiple_allocations)) {
    return false;
  }
  if (!d->request_policies.empty() && !d->view.allow_multiple_allocations) {
    return r.Fail(Reader::Child(Reader::KeyOf(Reader::Child(base, "capacity"),
                                              d->request_policies.begin()->first),
                                "requestPolicy"),
                  "Forbidden: allowMultipleAllocations must be true");
  }
  if (const YAML::Node cc = n["consumesCounters"]; Present(cc)) {
    const std::string cp = Reader::Child(base, "consumesCounters");
    if (!r.Seq(cc, cp)) return false;
    for (size_t i = 0; i < cc.size(); ++i) {
      const std::string ip = Reader::Index(cp, i);
      std::string set;
      if (!r.Map(cc[i], ip) || !r.Str(cc[i], "counterSet", ip, &set)) return false;
      if (set.empty()) return r.Fail(Reader::Child(ip, "counterSet"), "Required value");
      if (!ParseCounters(r, cc[i]["counters"], Reader::Child(ip, "counters"),
                         &d->consumes_counters[set])) {
        return false;
      }
    }
  }
  // Per-device node selection (validation.go validateDevice: "must only be set if
  // `perDeviceNodeSelection` is true"; with it, each device names its nodes).
  if (!r.Str(n, "nodeName", base, &d->node_name) || !r.Bool(n, "allNodes", base, &d->all_nodes)) {
    return false;
  }
  if (const YAML::Node ns = n["nodeSelector"]; Present(ns)) {
    api::NodeSelector sel;
    if (!ParseNodeSelector(r, ns, Reader::Child(base, "nodeSelector"), &sel, true)) return false;
    d->node_selector = std::move(sel);
  }
  const int device_sources = !d->node_name.empty() + d->node_selector.has_value() + d->all_nodes;
  if (!per_device && device_sources > 0) {
    const char* set = !d->node_name.empty() ? "nodeName"
                      : d->node_selector    ? "nodeSelector"
                                            : "allNodes";
    return r.Fail(Reader::Child(base, set),
                  "Forbidden: must only be set if `spec.perDeviceNodeSelection` is true");
  }
  if (per_device && device_sources != 1) {
    return r.Fail(base,
                  "Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes` is "
                  "required when `spec.perDeviceNodeSelection` is true");
  }
  if (!ParseTaints(r, n, base, &d->taints)) return false;
  if (!ParseBindingParameters(r, n, base, d)) return false;
  auto prepared = cel::PreparedDevice::Prepare(d->view);
  if (!prepared.ok()) return r.Fail(base, std::string(prepared.status().message()));
  d->prepared = std::move(*prepared);
  return true;
}

// A request's or a subrequest's fields (ExactDeviceRequest / DeviceSubRequest).
bool ParseRequestSpec(Reader& r, const YAML::Node& n, const std::string& path, RequestSpec* s) {
  std::string mode;
  std::optional<int64_t> count;
  if (!r.Map(n, path) || !r.Str(n, "deviceClassName", path, &s->device_class_name) ||
      !ParseSelectors(r, n, path, &s->selectors) || !r.Str(n, "allocationMode", path, &mode) ||
      !r.Int(n, "count", path, &count) || !r.Bool(n, "adminAccess", path, &s->admin_access)) {
    return false;
  }
  if (s->device_class_name.empty()) {
    return r.Fail(Reader::Child(path, "deviceClassName"), "Required value");
  }
  if (mode.empty() || mode == "ExactCount") {
    s->count = count.value_or(1);
    if (s->count <= 0) {
      return r.Fail(Reader::Child(path, "count"),
                    "Invalid value: " + std::to_string(s->count) + ": must be greater than zero");
    }
    if (s->count > kAllocationResultsMaxSize) {
      return r.Fail(Reader::Child(path, "count"), "Invalid value: " + std::to_string(s->count) +
                                                      ": must not be more than " +
                                                      std::to_string(kAllocationResultsMaxSize));
    }
  } else if (mode == "All") {
    s->all = true;
    if (count) {
      return r.Fail(Reader::Child(path, "count"),
                    "Invalid value: " + std::to_string(*count) +
                        ": must not be specified when allocationMode is 'All'");
    }
  } else {
    return r.Fail(Reader::Child(path, "allocationMode"),
                  "Unsupported value: \"" + mode + "\": supported values: \"All\", \"ExactCount\"");
  }
  if (const YAML::Node cap = n["capacity"]; Present(cap)) {
    const std::string cp = Reader::Child(path, "capacity");
    if (!r.Map(cap, cp)) return false;
    if (const YAML::Node reqs = cap["requests"]; Present(reqs)) {
      const std::string rp = Reader::Child(cp, "requests");
      if (!r.Map(reqs, rp)) return false;
      for (const auto& kv : reqs) {
        api::Quantity q;
        if (!r.Quantity(kv.second, Reader::KeyOf(rp, kv.first.Scalar()), &q)) return false;
        if (q.IsNegative()) {
          return r.Fail(Reader::KeyOf(rp, kv.first.Scalar()),
                        "Invalid value: must be greater than or equal to 0");
        }
        s->capacity_requests[kv.first.Scalar()] = q;
      }
    }
  }
  return ParseTolerations(r, n, path, &s->tolerations);
}

bool ParseClaimSpec(Reader& r, const YAML::Node& spec, const std::string& path, ClaimSpec* out) {
  if (!Present(spec)) return true;
  if (!r.Map(spec, path)) return false;
  const YAML::Node devices = spec["devices"];
  if (!Present(devices)) return true;
  const std::string dp = Reader::Child(path, "devices");
  if (!r.Map(devices, dp)) return false;
  std::set<std::string> names;
  if (const YAML::Node reqs = devices["requests"]; Present(reqs)) {
    const std::string rp = Reader::Child(dp, "requests");
    if (!r.Seq(reqs, rp)) return false;
    for (size_t i = 0; i < reqs.size(); ++i) {
      const std::string ip = Reader::Index(rp, i);
      DeviceRequest req;
      if (!r.Map(reqs[i], ip) || !r.Str(reqs[i], "name", ip, &req.name)) return false;
      if (req.name.empty()) return r.Fail(Reader::Child(ip, "name"), "Required value");
      if (!names.insert(req.name).second) {
        return r.Fail(Reader::Child(ip, "name"), "Duplicate value: \"" + req.name + "\"");
      }
      const YAML::Node exactly = reqs[i]["exactly"];
      const YAML::Node first = reqs[i]["firstAvailable"];
      if (Present(exactly) && Present(first)) {
        return r.Fail(ip,
                      "Invalid value: exactly one of `exactly` or `firstAvailable` is required");
      }
      if (Present(first)) {
        const std::string fp = Reader::Child(ip, "firstAvailable");
        if (!r.Seq(first, fp)) return false;
        if (first.size() == 0) return r.Fail(fp, "Required value");
        std::set<std::string> subnames;
        for (size_t j = 0; j < first.size(); ++j) {
          const std::string sp = Reader::Index(fp, j);
          RequestSpec sub;
          std::string subname;
          if (!r.Map(first[j], sp) || !r.Str(first[j], "name", sp, &subname)) return false;
          if (subname.empty()) return r.Fail(Reader::Child(sp, "name"), "Required value");
          if (!subnames.insert(subname).second) {
            return r.Fail(Reader::Child(sp, "name"), "Duplicate value: \"" + subname + "\"");
          }
          if (!ParseRequestSpec(r, first[j], sp, &sub)) return false;
          if (sub.admin_access) {
            return r.Fail(Reader::Child(sp, "adminAccess"),
                          "Forbidden: not supported in a subrequest");
          }
          sub.name = req.name + "/" + subname;
          req.first_available.push_back(std::move(sub));
        }
      } else {
        // v1: `exactly`; v1beta1/v1beta2: the fields on the request itself.
        const bool v1 = Present(exactly);
        RequestSpec spec_one;
        if (!ParseRequestSpec(r, v1 ? exactly : reqs[i], v1 ? Reader::Child(ip, "exactly") : ip,
                              &spec_one)) {
          return false;
        }
        spec_one.name = req.name;
        req.exactly = std::move(spec_one);
      }
      out->requests.push_back(std::move(req));
    }
  }
  if (const YAML::Node cons = devices["constraints"]; Present(cons)) {
    const std::string cp = Reader::Child(dp, "constraints");
    if (!r.Seq(cons, cp)) return false;
    for (size_t i = 0; i < cons.size(); ++i) {
      const std::string ip = Reader::Index(cp, i);
      DeviceConstraint c;
      if (!r.Map(cons[i], ip) || !r.Strings(cons[i], "requests", ip, &c.requests) ||
          !r.Str(cons[i], "matchAttribute", ip, &c.match_attribute) ||
          !r.Str(cons[i], "distinctAttribute", ip, &c.distinct_attribute)) {
        return false;
      }
      if (c.match_attribute.empty() == c.distinct_attribute.empty()) {
        return r.Fail(ip,
                      "Invalid value: exactly one of `matchAttribute` or `distinctAttribute` is "
                      "required");
      }
      const bool match = !c.match_attribute.empty();
      const std::string& attr = match ? c.match_attribute : c.distinct_attribute;
      if (attr.find('/') == std::string::npos) {
        return r.Fail(Reader::Child(ip, match ? "matchAttribute" : "distinctAttribute"),
                      "Invalid value: \"" + attr +
                          "\": a fully qualified name must be a domain and a name separated by "
                          "a slash");
      }
      for (size_t j = 0; j < c.requests.size(); ++j) {
        const std::string& name = c.requests[j];
        const std::string parent = name.substr(0, name.find('/'));
        if (!names.count(parent)) {
          return r.Fail(
              Reader::Index(Reader::Child(ip, "requests"), j),
              "Invalid value: \"" + name + "\": must be the name of a request in the claim");
        }
      }
      out->constraints.push_back(std::move(c));
    }
  }
  return true;
}

bool ParseAllocation(Reader& r, const YAML::Node& n, const std::string& path,
                     AllocationResult* out) {
  if (!r.Map(n, path)) return false;
  if (const YAML::Node devs = n["devices"]; Present(devs)) {
    const std::string dp = Reader::Child(path, "devices");
    if (!r.Map(devs, dp)) return false;
    if (const YAML::Node results = devs["results"]; Present(results)) {
      const std::string rp = Reader::Child(dp, "results");
      if (!r.Seq(results, rp)) return false;
      for (size_t i = 0; i < results.size(); ++i) {
        const std::string ip = Reader::Index(rp, i);
        DeviceResult d;
        if (!r.Map(results[i], ip) || !r.Str(results[i], "request", ip, &d.request) ||
            !r.Str(results[i], "driver", ip, &d.driver) ||
            !r.Str(results[i], "pool", ip, &d.pool) ||
            !r.Str(results[i], "device", ip, &d.device) ||
            !r.Bool(results[i], "adminAccess", ip, &d.admin_access) ||
            !r.Str(results[i], "shareID", ip, &d.share_id) ||
            !r.Strings(results[i], "bindingConditions", ip, &d.binding_conditions) ||
            !r.Strings(results[i], "bindingFailureConditions", ip, &d.binding_failure_conditions)) {
          return false;
        }
        if (const YAML::Node cc = results[i]["consumedCapacity"]; Present(cc)) {
          const std::string cp = Reader::Child(ip, "consumedCapacity");
          if (!r.Map(cc, cp)) return false;
          for (const auto& kv : cc) {
            api::Quantity q;
            if (!r.Quantity(kv.second, Reader::KeyOf(cp, kv.first.Scalar()), &q)) return false;
            d.consumed_capacity[kv.first.Scalar()] = q;
          }
        }
        for (const auto* f : {&d.request, &d.driver, &d.pool, &d.device}) {
          if (f->empty()) return r.Fail(ip, "Required value: request, driver, pool and device");
        }
        out->devices.push_back(std::move(d));
      }
    }
  }
  if (const YAML::Node ns = n["nodeSelector"]; Present(ns)) {
    api::NodeSelector sel;
    if (!ParseNodeSelector(r, ns, Reader::Child(path, "nodeSelector"), &sel)) return false;
    out->node_selector = std::move(sel);
  }
  std::string ts;
  if (!r.Str(n, "allocationTimestamp", path, &ts)) return false;
  if (!ts.empty()) {
    api::Timestamp t = 0;
    if (!api::ParseRFC3339Time(ts, &t)) {
      return r.Fail(
          Reader::Child(path, "allocationTimestamp"),
          "Invalid value: \"" + ts + "\": not an RFC 3339 time (e.g. 2006-01-02T15:04:05Z)");
    }
    out->allocation_timestamp = t;
  }
  return true;
}

}  // namespace

Kind KindOf(const api::Unstructured& obj) {
  if (obj.Group() != kGroup) return Kind::kNone;
  if (obj.kind == "DeviceClass") return Kind::kDeviceClass;
  if (obj.kind == "ResourceSlice") return Kind::kResourceSlice;
  if (obj.kind == "ResourceClaim") return Kind::kResourceClaim;
  if (obj.kind == "ResourceClaimTemplate") return Kind::kResourceClaimTemplate;
  if (obj.kind == "DeviceTaintRule") return Kind::kDeviceTaintRule;
  return Kind::kNone;
}

bool ToleratesTaint(const DeviceToleration& toleration, const DeviceTaint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op == "Exists") return true;
  if (toleration.op == "Equal" || toleration.op.empty()) return toleration.value == taint.value;
  return false;
}

bool AllTaintsTolerated(const std::vector<DeviceTaint>& taints,
                        const std::vector<DeviceToleration>& tolerations) {
  for (const DeviceTaint& taint : taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;  // None, unknown
    bool tolerated = false;
    for (const DeviceToleration& t : tolerations) {
      if (ToleratesTaint(t, taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return false;
  }
  return true;
}

bool DeviceTaintRule::Matches(const std::string& driver_name, const std::string& pool_name,
                              const std::string& device_name) const {
  if (!has_selector) return false;
  return (!driver || *driver == driver_name) && (!pool || *pool == pool_name) &&
         (!device || *device == device_name);
}

api::StatusOr<DeviceTaintRule> ParseDeviceTaintRule(const api::Unstructured& obj) {
  Reader r(ObjectName("DeviceTaintRule", obj));
  DeviceTaintRule rule;
  rule.name = obj.metadata.name;
  const YAML::Node spec = (*obj.object)["spec"];
  if (!Present(spec)) return (r.Fail("spec", "Required value"), r.Error());
  if (!r.Map(spec, "spec")) return r.Error();
  if (const YAML::Node sel = spec["deviceSelector"]; Present(sel)) {
    const std::string sp = "spec.deviceSelector";
    if (!r.Map(sel, sp)) return r.Error();
    rule.has_selector = true;
    for (const char* removed : {"deviceClassName", "selectors"}) {
      if (Present(sel[removed])) {
        return (r.Fail(Reader::Child(sp, removed),
                       "Forbidden: removed from DeviceTaintSelector upstream (1.35); select "
                       "devices by driver, pool and device"),
                r.Error());
      }
    }
    std::optional<std::string>* fields[] = {&rule.driver, &rule.pool, &rule.device};
    const char* keys[] = {"driver", "pool", "device"};
    for (int i = 0; i < 3; ++i) {
      if (!Present(sel[keys[i]])) continue;
      std::string v;
      if (!r.Str(sel, keys[i], sp, &v)) return r.Error();
      if (v.empty()) return (r.Fail(Reader::Child(sp, keys[i]), "Required value"), r.Error());
      *fields[i] = std::move(v);
    }
  }
  const YAML::Node taint = spec["taint"];
  if (!Present(taint)) return (r.Fail("spec.taint", "Required value"), r.Error());
  if (!ParseTaint(r, taint, "spec.taint", &rule.taint)) return r.Error();
  return rule;
}

api::StatusOr<DeviceClass> ParseDeviceClass(const api::Unstructured& obj) {
  Reader r(ObjectName("DeviceClass", obj));
  DeviceClass c;
  c.name = obj.metadata.name;
  c.creation_timestamp = obj.metadata.creation_timestamp;
  const YAML::Node spec = (*obj.object)["spec"];
  if (Present(spec) && (!r.Map(spec, "spec") || !ParseSelectors(r, spec, "spec", &c.selectors) ||
                        !r.Str(spec, "extendedResourceName", "spec", &c.extended_resource_name))) {
    return r.Error();
  }
  // pkg/apis/resource/validation validateDeviceClassSpec: v1helper.IsExtendedResourceName
  // (a '/' in the name, outside the kubernetes.io/ namespace, "requests." + name a
  // qualified name).
  if (const std::string& ern = c.extended_resource_name; !ern.empty()) {
    const bool extended = ern.find('/') != std::string::npos &&
                          ern.find("kubernetes.io/") == std::string::npos &&
                          ern.rfind("requests.", 0) != 0 && ern.size() <= 253 &&
                          ern.find_first_of(" \t\"") == std::string::npos;
    if (!extended) {
      return (r.Fail("spec.extendedResourceName",
                     "Invalid value: \"" + ern + "\": must be a valid extended resource name"),
              r.Error());
    }
  }
  return c;
}

api::StatusOr<ResourceSlice> ParseResourceSlice(const api::Unstructured& obj) {
  Reader r(ObjectName("ResourceSlice", obj));
  ResourceSlice s;
  s.name = obj.metadata.name;
  const YAML::Node spec = (*obj.object)["spec"];
  if (!Present(spec)) return (r.Fail("spec", "Required value"), r.Error());
  if (!r.Map(spec, "spec") || !r.Str(spec, "driver", "spec", &s.driver) ||
      !r.Str(spec, "nodeName", "spec", &s.node_name) ||
      !r.Bool(spec, "allNodes", "spec", &s.all_nodes) ||
      !r.Bool(spec, "perDeviceNodeSelection", "spec", &s.per_device_node_selection)) {
    return r.Error();
  }
  if (s.driver.empty()) return (r.Fail("spec.driver", "Required value"), r.Error());
  const YAML::Node pool = spec["pool"];
  if (!Present(pool)) return (r.Fail("spec.pool", "Required value"), r.Error());
  std::optional<int64_t> gen, count;
  if (!r.Map(pool, "spec.pool") || !r.Str(pool, "name", "spec.pool", &s.pool) ||
      !r.Int(pool, "generation", "spec.pool", &gen) ||
      !r.Int(pool, "resourceSliceCount", "spec.pool", &count)) {
    return r.Error();
  }
  if (s.pool.empty()) return (r.Fail("spec.pool.name", "Required value"), r.Error());
  s.pool_generation = gen.value_or(0);
  s.resource_slice_count = count.value_or(1);
  if (s.resource_slice_count <= 0) {
    return (r.Fail("spec.pool.resourceSliceCount",
                   "Invalid value: " + std::to_string(s.resource_slice_count) +
                       ": must be greater than zero"),
            r.Error());
  }
  if (const YAML::Node ns = spec["nodeSelector"]; Present(ns)) {
    api::NodeSelector sel;
    if (!ParseNodeSelector(r, ns, "spec.nodeSelector", &sel, true)) return r.Error();
    s.node_selector = std::move(sel);
  }
  const int sources = !s.node_name.empty() + s.node_selector.has_value() + s.all_nodes +
                      s.per_device_node_selection;
  if (sources != 1) {
    return (r.Fail("spec",
                   "Invalid value: exactly one of `nodeName`, `nodeSelector`, "
                   "`allNodes`, `perDeviceNodeSelection` is required"),
            r.Error());
  }
  if (Present(spec["devices"]) && Present(spec["sharedCounters"])) {
    return (r.Fail("spec.sharedCounters",
                   "Forbidden: only one of `devices` and `sharedCounters` can be set in a "
                   "ResourceSlice (publish the counter sets in a slice of their own in the pool)"),
            r.Error());
  }
  if (const YAML::Node devs = spec["devices"]; Present(devs)) {
    if (!r.Seq(devs, "spec.devices")) return r.Error();
    std::set<std::string> names;
    for (size_t i = 0; i < devs.size(); ++i) {
      Device d;
      const std::string dp = Reader::Index("spec.devices", i);
      if (!ParseDevice(r, devs[i], dp, s.driver, s.per_device_node_selection, &d)) {
        return r.Error();
      }
      if (!names.insert(d.name).second) {
        return (r.Fail(Reader::Child(dp, "name"), "Duplicate value: \"" + d.name + "\""),
                r.Error());
      }
      s.devices.push_back(std::move(d));
    }
  }
  if (const YAML::Node sc = spec["sharedCounters"]; Present(sc)) {
    if (!r.Seq(sc, "spec.sharedCounters")) return r.Error();
    for (size_t i = 0; i < sc.size(); ++i) {
      const std::string ip = Reader::Index("spec.sharedCounters", i);
      std::string name;
      if (!r.Map(sc[i], ip) || !r.Str(sc[i], "name", ip, &name)) return r.Error();
      if (name.empty()) return (r.Fail(Reader::Child(ip, "name"), "Required value"), r.Error());
      if (s.shared_counters.count(name)) {
        return (r.Fail(Reader::Child(ip, "name"), "Duplicate value: \"" + name + "\""), r.Error());
      }
      if (!ParseCounters(r, sc[i]["counters"], Reader::Child(ip, "counters"),
                         &s.shared_counters[name])) {
        return r.Error();
      }
    }
  }
  // A device's consumesCounters names counter sets of its pool, usually published in another
  // slice: the allocator checks them per pool (an unknown set or counter makes the pool
  // invalid, upstream's pools_incubating.go validateDeviceCounterConsumption).
  return s;
}

namespace {

bool ParseClaimStatus(Reader& r, const YAML::Node& status, ResourceClaim* c) {
  if (!Present(status)) return true;
  if (!r.Map(status, "status")) return false;
  if (const YAML::Node a = status["allocation"]; Present(a)) {
    AllocationResult res;
    if (!ParseAllocation(r, a, "status.allocation", &res)) return false;
    c->allocation = std::move(res);
  }
  if (const YAML::Node rf = status["reservedFor"]; Present(rf)) {
    if (!r.Seq(rf, "status.reservedFor")) return false;
    for (size_t i = 0; i < rf.size(); ++i) {
      const std::string ip = Reader::Index("status.reservedFor", i);
      ConsumerReference ref;
      if (!r.Map(rf[i], ip) || !r.Str(rf[i], "apiGroup", ip, &ref.api_group) ||
          !r.Str(rf[i], "resource", ip, &ref.resource) || !r.Str(rf[i], "name", ip, &ref.name) ||
          !r.Str(rf[i], "uid", ip, &ref.uid)) {
        return false;
      }
      if (ref.uid.empty()) return r.Fail(Reader::Child(ip, "uid"), "Required value");
      c->reserved_for.push_back(std::move(ref));
    }
    if (!c->reserved_for.empty() && !c->allocation) {
      return r.Fail("status.reservedFor",
                    "Forbidden: may not be specified when `allocated` is not set");
    }
  }
  if (const YAML::Node devs = status["devices"]; Present(devs)) {
    if (!r.Seq(devs, "status.devices")) return false;
    for (size_t i = 0; i < devs.size(); ++i) {
      const std::string ip = Reader::Index("status.devices", i);
      AllocatedDeviceStatus ds;
      if (!r.Map(devs[i], ip) || !r.Str(devs[i], "driver", ip, &ds.driver) ||
          !r.Str(devs[i], "pool", ip, &ds.pool) || !r.Str(devs[i], "device", ip, &ds.device)) {
        return false;
      }
      for (const auto* f : {&ds.driver, &ds.pool, &ds.device}) {
        if (f->empty()) return r.Fail(ip, "Required value: driver, pool and device");
      }
      if (const YAML::Node conds = devs[i]["conditions"]; Present(conds)) {
        const std::string cp = Reader::Child(ip, "conditions");
        if (!r.Seq(conds, cp)) return false;
        for (size_t j = 0; j < conds.size(); ++j) {
          const std::string jp = Reader::Index(cp, j);
          DeviceCondition dc;
          if (!r.Map(conds[j], jp) || !r.Str(conds[j], "type", jp, &dc.type) ||
              !r.Str(conds[j], "status", jp, &dc.status) ||
              !r.Str(conds[j], "reason", jp, &dc.reason) ||
              !r.Str(conds[j], "message", jp, &dc.message)) {
            return false;
          }
          if (dc.type.empty()) return r.Fail(Reader::Child(jp, "type"), "Required value");
          // status: the API server admits True, False, Unknown; only "True" counts
          // (apimeta.IsStatusConditionTrue).
          ds.conditions.push_back(std::move(dc));
        }
      }
      c->devices.push_back(std::move(ds));
    }
  }
  return true;
}

}  // namespace

api::StatusOr<ResourceClaim> ParseResourceClaim(const api::Unstructured& obj) {
  Reader r(ObjectName("ResourceClaim", obj));
  ResourceClaim c;
  c.metadata = obj.metadata;
  if (!ParseClaimSpec(r, (*obj.object)["spec"], "spec", &c.spec) ||
      !ParseClaimStatus(r, (*obj.object)["status"], &c)) {
    return r.Error();
  }
  return c;
}

api::StatusOr<ResourceClaimTemplate> ParseResourceClaimTemplate(const api::Unstructured& obj) {
  Reader r(ObjectName("ResourceClaimTemplate", obj));
  ResourceClaimTemplate t;
  t.metadata = obj.metadata;
  const YAML::Node spec = (*obj.object)["spec"];
  if (!Present(spec)) return (r.Fail("spec", "Required value"), r.Error());
  if (!r.Map(spec, "spec")) return r.Error();
  if (const YAML::Node meta = spec["metadata"]; Present(meta)) {
    if (!r.Map(meta, "spec.metadata")) return r.Error();
    for (const char* key : {"labels", "annotations"}) {
      const YAML::Node m = meta[key];
      if (!Present(m)) continue;
      const std::string p = std::string("spec.metadata.") + key;
      if (!r.Map(m, p)) return r.Error();
      auto& out =
          std::string(key) == "labels" ? t.claim_metadata.labels : t.claim_metadata.annotations;
      for (const auto& kv : m) {
        if (!kv.second.IsScalar()) {
          return (r.Fail(Reader::KeyOf(p, kv.first.Scalar()), "Invalid value: must be a string"),
                  r.Error());
        }
        out[kv.first.Scalar()] = kv.second.Scalar();
      }
    }
  }
  if (!ParseClaimSpec(r, spec["spec"], "spec.spec", &t.spec)) return r.Error();
  return t;
}

namespace {

// A quantity's text: whole numbers as integers (with the largest binary suffix that divides
// them exactly, as BinarySI's canonical form), others in milli units ("1500m").
std::string FormatQuantity(const api::Quantity& q) {
  int64_t v = 0;
  if (!q.AsInt64(&v)) return std::to_string(q.MilliValue()) + "m";
  if (v == 0) return "0";
  static const char* kSuffixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  int k = -1;
  while (k < 5 && v % 1024 == 0) {
    v /= 1024;
    ++k;
  }
  return std::to_string(v) + (k >= 0 ? kSuffixes[k] : "");
}

YAML::Node NodeSelectorYaml(const api::NodeSelector& sel) {
  YAML::Node out;
  YAML::Node terms(YAML::NodeType::Sequence);
  for (const auto& t : sel.node_selector_terms) {
    YAML::Node term(YAML::NodeType::Map);
    auto reqs = [](const std::vector<api::NodeSelectorRequirement>& rs) {
      YAML::Node seq(YAML::NodeType::Sequence);
      for (const auto& r : rs) {
        YAML::Node n;
        n["key"] = r.key;
        n["operator"] = r.op;
        YAML::Node vals(YAML::NodeType::Sequence);
        for (const auto& v : r.values) vals.push_back(v);
        n["values"] = vals;
        seq.push_back(n);
      }
      return seq;
    };
    if (!t.match_expressions.empty()) term["matchExpressions"] = reqs(t.match_expressions);
    if (!t.match_fields.empty()) term["matchFields"] = reqs(t.match_fields);
    terms.push_back(term);
  }
  out["nodeSelectorTerms"] = terms;
  return out;
}

}  // namespace

api::Unstructured WithClaimStatus(const api::Unstructured& obj, const ResourceClaim& claim) {
  api::Unstructured out = obj;
  YAML::Node doc = YAML::Clone(*obj.object);
  YAML::Node status(YAML::NodeType::Map);
  if (claim.allocation) {
    YAML::Node alloc;
    YAML::Node results(YAML::NodeType::Sequence);
    for (const auto& d : claim.allocation->devices) {
      YAML::Node n;
      n["request"] = d.request;
      n["driver"] = d.driver;
      n["pool"] = d.pool;
      n["device"] = d.device;
      if (d.admin_access) n["adminAccess"] = true;
      if (!d.share_id.empty()) n["shareID"] = d.share_id;
      if (!d.consumed_capacity.empty()) {
        YAML::Node cc(YAML::NodeType::Map);
        for (const auto& [name, q] : d.consumed_capacity) cc[name] = FormatQuantity(q);
        n["consumedCapacity"] = cc;
      }
      if (!d.binding_conditions.empty()) {
        YAML::Node bc(YAML::NodeType::Sequence);
        for (const auto& t : d.binding_conditions) bc.push_back(t);
        n["bindingConditions"] = bc;
      }
      if (!d.binding_failure_conditions.empty()) {
        YAML::Node bf(YAML::NodeType::Sequence);
        for (const auto& t : d.binding_failure_conditions) bf.push_back(t);
        n["bindingFailureConditions"] = bf;
      }
      results.push_back(n);
    }
    alloc["devices"]["results"] = results;
    if (claim.allocation->node_selector) {
      alloc["nodeSelector"] = NodeSelectorYaml(*claim.allocation->node_selector);
    }
    if (claim.allocation->allocation_timestamp) {
      alloc["allocationTimestamp"] = api::FormatRFC3339(*claim.allocation->allocation_timestamp);
    }
    status["allocation"] = alloc;
    // Device status belongs to the drivers: kept as stored while the claim is allocated.
    if (const YAML::Node old = (*obj.object)["status"];
        Present(old) && old.IsMap() && Present(old["devices"])) {
      status["devices"] = YAML::Clone(old["devices"]);
    }
  }
  if (!claim.reserved_for.empty()) {
    YAML::Node rf(YAML::NodeType::Sequence);
    for (const auto& c : claim.reserved_for) {
      YAML::Node n;
      if (!c.api_group.empty()) n["apiGroup"] = c.api_group;
      n["resource"] = c.resource;
      n["name"] = c.name;
      n["uid"] = c.uid;
      rf.push_back(n);
    }
    status["reservedFor"] = rf;
  }
  doc["status"] = status;
  out.object = std::make_shared<const YAML::Node>(doc);
  return out;
}

bool DeviceResult::operator==(const DeviceResult& o) const {
  if (std::tie(request, driver, pool, device, admin_access, share_id, binding_conditions,
               binding_failure_conditions) !=
          std::tie(o.request, o.driver, o.pool, o.device, o.admin_access, o.share_id,
                   o.binding_conditions, o.binding_failure_conditions) ||
      consumed_capacity.size() != o.consumed_capacity.size()) {
    return false;
  }
  for (auto a = consumed_capacity.begin(), b = o.consumed_capacity.begin();
       a != consumed_capacity.end(); ++a, ++b) {
    if (a->first != b->first || a->second.Compare(b->second) != 0) return false;
  }
  return true;
}

bool IsExtendedResourceClaimOf(const api::ObjectMeta& claim, const std::string& pod_name,
                               const std::string& pod_uid) {
  auto a = claim.annotations.find(kExtendedResourceClaimAnnotation);
  if (a == claim.annotations.end() || a->second != "true") return false;
  for (const auto& o : claim.owner_references) {
    if (o.controller && o.name == pod_name && o.uid == pod_uid) return true;
  }
  return false;
}

const PodGroupResourceClaim* PodGroupClaims::Match(const api::PodResourceClaim& pc) const {
  for (const auto& c : claims) {
    if (c.name == pc.name && c.resource_claim_name == pc.resource_claim_name &&
        c.resource_claim_template_name == pc.resource_claim_template_name) {
      return &c;
    }
  }
  return nullptr;
}

bool IsWorkloadPodGroup(const api::Unstructured& obj) {
  return obj.kind == "PodGroup" && obj.Group() == kPodGroupApiGroup;
}

api::StatusOr<PodGroupClaims> ParsePodGroupClaims(const api::Unstructured& obj) {
  Reader r(ObjectName("PodGroup", obj));
  PodGroupClaims out;
  out.metadata = obj.metadata;
  const YAML::Node spec = (*obj.object)["spec"];
  const YAML::Node list = Present(spec) && spec.IsMap() ? spec["resourceClaims"] : YAML::Node();
  if (Present(list)) {
    const std::string lp = "spec.resourceClaims";
    if (!r.Seq(list, lp)) return r.Error();
    if (list.size() > 4) {
      return (
          r.Fail(lp, "Too many: " + std::to_string(list.size()) + ": must have at most 4 items"),
          r.Error());
    }
    std::set<std::string> names;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string ip = Reader::Index(lp, i);
      PodGroupResourceClaim c;
      if (!r.Map(list[i], ip) || !r.Str(list[i], "name", ip, &c.name) ||
          !r.Str(list[i], "resourceClaimName", ip, &c.resource_claim_name) ||
          !r.Str(list[i], "resourceClaimTemplateName", ip, &c.resource_claim_template_name)) {
        return r.Error();
      }
      if (c.name.empty()) return (r.Fail(Reader::Child(ip, "name"), "Required value"), r.Error());
      if (!names.insert(c.name).second) {
        return (r.Fail(Reader::Child(ip, "name"), "Duplicate value: \"" + c.name + "\""),
                r.Error());
      }
      if (c.resource_claim_name.empty() == c.resource_claim_template_name.empty()) {
        return (r.Fail(ip,
                       "Invalid value: exactly one of `resourceClaimName` or "
                       "`resourceClaimTemplateName` is required"),
                r.Error());
      }
      out.claims.push_back(std::move(c));
    }
  }
  const YAML::Node status = (*obj.object)["status"];
  const YAML::Node st =
      Present(status) && status.IsMap() ? status["resourceClaimStatuses"] : YAML::Node();
  if (Present(st)) {
    const std::string sp = "status.resourceClaimStatuses";
    if (!r.Seq(st, sp)) return r.Error();
    for (size_t i = 0; i < st.size(); ++i) {
      const std::string ip = Reader::Index(sp, i);
      std::string name, claim;
      if (!r.Map(st[i], ip) || !r.Str(st[i], "name", ip, &name) ||
          !r.Str(st[i], "resourceClaimName", ip, &claim)) {
        return r.Error();
      }
      if (name.empty()) return (r.Fail(Reader::Child(ip, "name"), "Required value"), r.Error());
      out.statuses[name] = claim;
    }
  }
  return out;
}

std::string GeneratedClaimName(const std::string& pod_name, const std::string& pod_claim_name,
                               const std::string& suffix) {
  // controller.go: generateName := pod.Name + "-" + podClaim.Name + "-"; maxBaseLen := 57;
  // when longer, pod.Name[0:len(pod.Name)*maxBaseLen/len(generateName)] + "-" +
  // podClaim.Name[0:len(podClaim.Name)*maxBaseLen/len(generateName)].
  constexpr size_t kMaxBaseLen = 57;
  std::string generate = pod_name + "-" + pod_claim_name + "-";
  if (generate.size() > kMaxBaseLen) {
    const size_t len = generate.size();
    generate = pod_name.substr(0, pod_name.size() * kMaxBaseLen / len) + "-" +
               pod_claim_name.substr(0, pod_claim_name.size() * kMaxBaseLen / len);
  }
  return generate + suffix;
}

}  // namespace phalanx::dra
