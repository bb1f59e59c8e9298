// Manifest decoding with yaml-cpp (YAML 1.2 parser; JSON is accepted as flow YAML).
//
// Decoding follows what the API server would store: defaulting (namespace "default",
// schedulerName "default-scheduler", toleration operator Equal, container requests
// defaulted from limits as SetDefaults_Pod does, node allocatable from capacity) and the
// subset of pkg/apis/core/validation that matters to a scheduler. Unknown fields are
// ignored. yaml-cpp exceptions never escape: types are checked before conversion and a
// final catch turns anything unexpected into an InvalidArgument api::Status.
#include "api/decode.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "api/field_audit.h"
#include "api/field_errors.h"
#include "api/labels.h"
#include "api/labels_internal.h"
#include "api/pod_resources.h"
#include "api/rfc3339.h"

namespace phalanx::api {
namespace {

using internal::Child;
using internal::FieldInvalid;
using internal::FieldNotSupported;
using internal::FieldRequired;
using internal::Index;

// Deterministic stand-in for the API server's random name suffixes: FNV-1a 64 of `text`
// spelled with the alphabet of k8s.io/apimachinery/pkg/util/rand.SafeEncodeString.
std::string StableSuffix(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (int i = 0; i < 5; ++i) {  // 27^5 ~ 1.4e7 distinct suffixes
    out.push_back(kAlphabet[h % kAlphabet.size()]);
    h /= kAlphabet.size();
  }
  return out;
}

std::string_view TrimSpace(std::string_view s) {
  const std::string_view ws = " \t\n\r\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// pkg/apis/core/v1/defaults.go SetDefaults_Pod with PodLevelResources (beta, on in 1.34):
// defaultHugePagePodLimits then defaultPodRequests. Pod-level limits default the requests
// they lack: cpu / memory from the containers' aggregate requests when containers request
// them, otherwise (and hugepages always) from the pod-level limit. defaultPodLimits only
// touches limits, which scheduling does not read.
void DefaultPodLevelResources(Pod* pod) {
  if (!pod->spec.resources) return;
  ResourceRequirements& r = *pod->spec.resources;
  if (!r.limits.empty() || !r.requests.empty()) {
    for (const auto& [name, q] : AggregateContainerResources(*pod, /*limits=*/true)) {
      if (!name.starts_with("hugepages-") || r.requests.count(name) != 0) continue;
      r.limits.try_emplace(name, q);
    }
  }
  if (r.limits.empty()) return;
  for (const auto& [name, q] : AggregateContainerResources(*pod, /*limits=*/false)) {
    // IsSupportedPodLevelResource && IsOvercommitAllowed: cpu and memory.
    if (name == kResourceCPU || name == kResourceMemory) r.requests.try_emplace(name, q);
  }
  for (const auto& [name, q] : r.limits) {
    if (IsSupportedPodLevelResource(name)) r.requests.try_emplace(name, q);
  }
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// RFC 3339 ("2006-01-02T15:04:05Z07:00", optional fractional seconds), as metav1.Time
// decodes it. Result in nanoseconds since the epoch; false when malformed or outside the
// int64 nanosecond range (years 1678..2261).
bool ParseRFC3339(std::string_view s, Timestamp* out) {
  size_t pos = 0;
  auto num = [&](size_t width, int64_t* v) {
    if (pos + width > s.size()) return false;
    int64_t r = 0;
    for (size_t i = 0; i < width; ++i) {
      const char c = s[pos + i];
      if (c < '0' || c > '9') return false;
      r = r * 10 + (c - '0');
    }
    pos += width;
    *v = r;
    return true;
  };
  auto lit = [&](std::string_view chars) {
    if (pos < s.size() && chars.find(s[pos]) != std::string_view::npos) {
      ++pos;
      return true;
    }
    return false;
  };
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!num(4, &year) || !lit("-") || !num(2, &month) || !lit("-") || !num(2, &day) || !lit("Tt") ||
      !num(2, &hour) || !lit(":") || !num(2, &minute) || !lit(":") || !num(2, &second)) {
    return false;
  }
  int64_t frac_ns = 0;
  if (lit(".,")) {
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) frac_ns = frac_ns * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return false;
    for (int i = digits; i < 9; ++i) frac_ns *= 10;
  }
  int64_t offset_s = 0;
  if (!lit("Zz")) {
    if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-')) return false;
    const int64_t sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t oh = 0, om = 0;
    if (!num(2, &oh) || !lit(":") || !num(2, &om) || oh > 23 || om > 59) return false;
    offset_s = sign * (oh * 3600 + om * 60);
  }
  if (pos != s.size()) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 ||
      day > kDays[month - 1] + (month == 2 && IsLeap(year) ? 1 : 0) || hour > 23 || minute > 59 ||
      second > 59) {
    return false;
  }
  const __int128 secs = static_cast<__int128>(DaysFromCivil(year, month, day)) * 86400 +
                        hour * 3600 + minute * 60 + second - offset_s;
  const __int128 ns = secs * kNanosPerSecond + frac_ns;
  if (ns > std::numeric_limits<int64_t>::max() || ns < std::numeric_limits<int64_t>::min()) {
    return false;
  }
  *out = static_cast<Timestamp>(ns);
  return true;
}

const char* TypeName(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return "string";
    case YAML::NodeType::Sequence:
      return "array";
    case YAML::NodeType::Map:
      return "object";
    case YAML::NodeType::Undefined:
      break;
  }
  return "undefined";
}

// A field is absent when missing or null (JSON null / YAML ~ or empty value).
bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

// ---- Node Declared Features (KEP-5328) --------------------------------------------------
// The features of upstream's registry (k8s.io/component-helpers v0.36.3
// nodedeclaredfeatures/features/registry.go, AllFeatures) whose InferForScheduling can be
// true; the others (GuaranteedQoSPodCPUResize, PodLevelResourcesResize, ...) are inferred on
// pod updates only, which do not reach the scheduler. The rules read the raw spec (the
// fields are not otherwise part of Phalanx's model) and never fail: a malformed field
// infers nothing, as upstream's typed decoding would have rejected the pod earlier.

// restartallcontainers/restart_all_containers.go: a container or init container with a
// restartPolicyRules entry whose action is RestartAllContainers.
// yaml-cpp: a missing key of a const map is an invalid node whose type queries throw.
bool IsSeq(const YAML::Node& n) { return n.IsDefined() && n.IsSequence(); }
bool IsMapNode(const YAML::Node& n) { return n.IsDefined() && n.IsMap(); }
bool ScalarIs(const YAML::Node& n, std::string_view v) {
  return n.IsDefined() && n.IsScalar() && n.Scalar() == v;
}

bool NeedsRestartAllContainers(const YAML::Node& spec) {
  for (const char* list : {"containers", "initContainers"}) {
    const YAML::Node cs = spec[list];
    if (!IsSeq(cs)) continue;
    for (const auto& c : cs) {
      if (!IsMapNode(c)) continue;
      const YAML::Node rules = c["restartPolicyRules"];
      if (!IsSeq(rules)) continue;
      for (const auto& r : rules) {
        if (IsMapNode(r) && ScalarIs(r["action"], "RestartAllContainers")) return true;
      }
    }
  }
  return false;
}

// usernamespaceshostnetwork/user_namespaces_host_network.go: hostNetwork true with
// hostUsers false.
bool NeedsUserNamespacesHostNetwork(const YAML::Node& spec) {
  const YAML::Node hn = spec["hostNetwork"], hu = spec["hostUsers"];
  auto is = [](const YAML::Node& n, std::string_view lower) {
    if (!n.IsDefined() || !n.IsScalar() || n.Scalar().size() != lower.size()) return false;
    for (size_t i = 0; i < lower.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(n.Scalar()[i])) != lower[i]) return false;
    }
    return true;
  };
  return is(hn, "true") && is(hu, "false");
}

}  // namespace

std::vector<std::string> InferNodeFeatures(const YAML::Node& spec) {
  std::vector<std::string> out;
  if (!IsMapNode(spec)) return out;
  // Sorted by name, as upstream's FeatureSet prints them.
  if (NeedsRestartAllContainers(spec)) out.emplace_back("RestartAllContainersOnContainerExits");
  if (NeedsUserNamespacesHostNetwork(spec)) out.emplace_back("UserNamespacesHostNetworkSupport");
  return out;
}

namespace {

// The first error of an object: an api::FieldError whose detail is "<field path>:
// <cause>" (kMessage), at the line and column of the offending node when it has one.
FieldError Located(const YAML::Node& at, std::string detail) {
  FieldError e = FieldError::Message("", detail);
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  if (mark.line >= 0) {
    e.line = mark.line + 1;
    e.column = mark.column + 1;
  }
  return e;
}

// Decodes one object (document or List item) into typed structs. Every method returns
// false after recording the first error in err_.
class ObjectDecoder {
 public:
  const FieldError& error() const { return err_; }

  bool Fail(const YAML::Node& at, std::string detail) {
    err_ = Located(at, std::move(detail));
    return false;
  }
  bool TypeError(const YAML::Node& n, const std::string& path, const char* expected) {
    return Fail(n, path + ": expected " + expected + ", got " + TypeName(n));
  }

  // Map lookup on a node already checked to be a map.
  static YAML::Node Get(const YAML::Node& map, const char* key) {
    const YAML::Node& m = map;
    return m[key];
  }

  bool ExpectMap(const YAML::Node& n, const std::string& path) {
    return n.IsMap() || TypeError(n, path, "object");
  }

  bool Str(const YAML::Node& map, const char* key, const std::string& path, std::string* out) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    if (!n.IsScalar()) return TypeError(n, Child(path, key), "string");
    *out = n.Scalar();
    return true;
  }

  bool Int(const YAML::Node& n, const std::string& path, int64_t lo, int64_t hi, int64_t* out) {
    if (!n.IsScalar()) return TypeError(n, path, "integer");
    int64_t v = 0;
    if (!internal::ParseInt64(n.Scalar(), &v)) {
      return Fail(n, path + ": expected integer, got \"" + n.Scalar() + "\"");
    }
    if (v < lo || v > hi) {
      return Fail(n, FieldInvalid(path, n.Scalar(), "value out of range"));
    }
    *out = v;
    return true;
  }
  bool Int32(const YAML::Node& map, const char* key, const std::string& path, int32_t* out) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    int64_t v = 0;
    if (!Int(n, Child(path, key), std::numeric_limits<int32_t>::min(),
             std::numeric_limits<int32_t>::max(), &v)) {
      return false;
    }
    *out = static_cast<int32_t>(v);
    return true;
  }
  bool OptInt32(const YAML::Node& map, const char* key, const std::string& path,
                std::optional<int32_t>* out) {
    if (!Present(Get(map, key))) return true;
    int32_t v = 0;
    if (!Int32(map, key, path, &v)) return false;
    *out = v;
    return true;
  }
  bool OptInt64(const YAML::Node& map, const char* key, const std::string& path,
                std::optional<int64_t>* out) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    int64_t v = 0;
    if (!Int(n, Child(path, key), std::numeric_limits<int64_t>::min(),
             std::numeric_limits<int64_t>::max(), &v)) {
      return false;
    }
    *out = v;
    return true;
  }

  bool Bool(const YAML::Node& map, const char* key, const std::string& path, bool* out) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    bool v = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
      if (!n.IsScalar()) return TypeError(n, Child(path, key), "boolean");
      return Fail(n, Child(path, key) + ": expected boolean, got \"" + n.Scalar() + "\"");
    }
    *out = v;
    return true;
  }

  bool Time(const YAML::Node& map, const char* key, const std::string& path,
            std::optional<Timestamp>* out) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    const std::string p = Child(path, key);
    if (!n.IsScalar()) return TypeError(n, p, "string");
    Timestamp t = 0;
    if (!ParseRFC3339(n.Scalar(), &t)) {
      return Fail(n,
                  FieldInvalid(p, n.Scalar(), "not an RFC 3339 time (e.g. 2006-01-02T15:04:05Z)"));
    }
    *out = t;
    return true;
  }

  bool StringMap(const YAML::Node& map, const char* key, const std::string& path,
                 std::map<std::string, std::string>* out, bool label_syntax) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    const std::string p = Child(path, key);
    if (!ExpectMap(n, p)) return false;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) return TypeError(kv.first, p, "string keys");
      const std::string& k = kv.first.Scalar();
      const std::string kp = Child(p, k);
      std::string v;
      if (Present(kv.second)) {
        if (!kv.second.IsScalar()) return TypeError(kv.second, kp, "string");
        v = kv.second.Scalar();
      }
      if (label_syntax) {
        if (api::Status msg = internal::QualifiedNameError(k); !msg.ok()) {
          return Fail(kv.first, FieldInvalid(kp, k, std::string(msg.message())));
        }
        if (api::Status msg = internal::LabelValueError(v); !msg.ok()) {
          return Fail(kv.second, FieldInvalid(kp, v, std::string(msg.message())));
        }
      }
      (*out)[k] = std::move(v);
    }
    return true;
  }

  bool StringList(const YAML::Node& map, const char* key, const std::string& path,
                  std::vector<std::string>* out) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    const std::string p = Child(path, key);
    if (!n.IsSequence()) return TypeError(n, p, "array");
    for (size_t i = 0; i < n.size(); ++i) {
      const YAML::Node item = n[i];
      if (Present(item) && !item.IsScalar()) return TypeError(item, Index(p, i), "string");
      out->push_back(Present(item) ? item.Scalar() : "");
    }
    return true;
  }

  // A list of objects: decode(item_node, item_path, &element).
  template <typename T, typename F>
  bool List(const YAML::Node& map, const char* key, const std::string& path, std::vector<T>* out,
            F decode) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    const std::string p = Child(path, key);
    if (!n.IsSequence()) return TypeError(n, p, "array");
    for (size_t i = 0; i < n.size(); ++i) {
      const YAML::Node item = n[i];
      const std::string ip = Index(p, i);
      T value{};
      if (Present(item)) {
        if (!ExpectMap(item, ip) || !decode(item, ip, &value)) return false;
      }
      out->push_back(std::move(value));
    }
    return true;
  }

  // An optional object: decode(node, path, &value) when present.
  template <typename T, typename F>
  bool Object(const YAML::Node& map, const char* key, const std::string& path,
              std::optional<T>* out, F decode) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    const std::string p = Child(path, key);
    if (!ExpectMap(n, p)) return false;
    T value{};
    if (!decode(n, p, &value)) return false;
    *out = std::move(value);
    return true;
  }

  // v1.ResourceList. Quantities are trimmed as Quantity.UnmarshalJSON does; JSON null is
  // zero. Negative values are rejected (ValidateResourceQuantityValue).
  bool Resources(const YAML::Node& map, const char* key, const std::string& path,
                 ResourceList* out) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    const std::string p = Child(path, key);
    if (!ExpectMap(n, p)) return false;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) return TypeError(kv.first, p, "string keys");
      const std::string& name = kv.first.Scalar();
      const std::string rp = Child(p, name);
      Quantity q;
      if (Present(kv.second)) {
        if (!kv.second.IsScalar()) return TypeError(kv.second, rp, "quantity string");
        const std::string_view text = TrimSpace(kv.second.Scalar());
        StatusOr<Quantity> parsed = Quantity::Parse(text);
        if (!parsed.ok()) {
          return Fail(kv.second, rp + ": " + std::string(parsed.status().message()));
        }
        q = *parsed;
        if (q.IsNegative()) {
          return Fail(kv.second, FieldInvalid(rp, text, "must be greater than or equal to 0"));
        }
      }
      (*out)[name] = q;
    }
    return true;
  }

  // ---- metadata -------------------------------------------------------------------------

  bool Meta(const YAML::Node& n, const std::string& path, ObjectMeta* m) {
    if (!ExpectMap(n, path)) return false;
    std::optional<Timestamp> created;
    if (!Str(n, "name", path, &m->name) || !Str(n, "generateName", path, &m->generate_name) ||
        !Str(n, "namespace", path, &m->namespace_) || !Str(n, "uid", path, &m->uid) ||
        !Str(n, "resourceVersion", path, &m->resource_version) ||
        !StringMap(n, "labels", path, &m->labels, /*label_syntax=*/true) ||
        !StringMap(n, "annotations", path, &m->annotations, /*label_syntax=*/false) ||
        !Time(n, "creationTimestamp", path, &created) ||
        !Time(n, "deletionTimestamp", path, &m->deletion_timestamp)) {
      return false;
    }
    m->creation_timestamp = created.value_or(0);
    return List(n, "ownerReferences", path, &m->owner_references,
                [this](const YAML::Node& o, const std::string& p, OwnerReference* r) {
                  return Str(o, "apiVersion", p, &r->api_version) && Str(o, "kind", p, &r->kind) &&
                         Str(o, "name", p, &r->name) && Str(o, "uid", p, &r->uid) &&
                         Bool(o, "controller", p, &r->controller);
                });
  }

  // ---- selectors and affinity -----------------------------------------------------------

  bool LabelSel(const YAML::Node& n, const std::string& path, LabelSelector* sel) {
    if (!StringMap(n, "matchLabels", path, &sel->match_labels, /*label_syntax=*/false) ||
        !List(n, "matchExpressions", path, &sel->match_expressions,
              [this](const YAML::Node& e, const std::string& p, LabelSelectorRequirement* r) {
                return Str(e, "key", p, &r->key) && Str(e, "operator", p, &r->op) &&
                       StringList(e, "values", p, &r->values);
              })) {
      return false;
    }
    if (Status st = ValidateLabelSelector(*sel); !st.ok()) {
      return Fail(n, Child(path, std::string(st.message())));
    }
    return true;
  }

  bool NodeTerm(const YAML::Node& n, const std::string& path, NodeSelectorTerm* term) {
    auto req = [this](const YAML::Node& e, const std::string& p, NodeSelectorRequirement* r) {
      return Str(e, "key", p, &r->key) && Str(e, "operator", p, &r->op) &&
             StringList(e, "values", p, &r->values);
    };
    if (!List(n, "matchExpressions", path, &term->match_expressions, req) ||
        !List(n, "matchFields", path, &term->match_fields, req)) {
      return false;
    }
    if (Status st = ValidateNodeSelectorTerm(*term); !st.ok()) {
      return Fail(n, Child(path, std::string(st.message())));
    }
    return true;
  }

  bool Weight(const YAML::Node& n, const std::string& path, int32_t* w) {
    if (!Int32(n, "weight", path, w)) return false;
    if (*w < 1 || *w > 100) {
      return Fail(
          n, FieldInvalid(Child(path, "weight"), std::to_string(*w), "must be in the range 1-100"));
    }
    return true;
  }

  bool NodeAff(const YAML::Node& n, const std::string& path, NodeAffinity* a) {
    auto selector = [this](const YAML::Node& s, const std::string& p, NodeSelector* sel) {
      if (!List(s, "nodeSelectorTerms", p, &sel->node_selector_terms,
                [this](const YAML::Node& t, const std::string& tp, NodeSelectorTerm* term) {
                  return NodeTerm(t, tp, term);
                })) {
        return false;
      }
      if (sel->node_selector_terms.empty()) {
        return Fail(s, FieldRequired(Child(p, "nodeSelectorTerms"),
                                     "must have at least one node selector term"));
      }
      return true;
    };
    return Object(n, "requiredDuringSchedulingIgnoredDuringExecution", path,
                  &a->required_during_scheduling_ignored_during_execution, selector) &&
           List(n, "preferredDuringSchedulingIgnoredDuringExecution", path,
                &a->preferred_during_scheduling_ignored_during_execution,
                [this](const YAML::Node& t, const std::string& p, PreferredSchedulingTerm* pt) {
                  if (!Weight(t, p, &pt->weight)) return false;
                  const YAML::Node pref = Get(t, "preference");
                  if (!Present(pref)) return true;
                  return ExpectMap(pref, Child(p, "preference")) &&
                         NodeTerm(pref, Child(p, "preference"), &pt->preference);
                });
  }

  bool PodAffTerm(const YAML::Node& n, const std::string& path, PodAffinityTerm* t) {
    auto sel = [this](const YAML::Node& s, const std::string& p, LabelSelector* ls) {
      return LabelSel(s, p, ls);
    };
    if (!Object(n, "labelSelector", path, &t->label_selector, sel) ||
        !StringList(n, "namespaces", path, &t->namespaces) ||
        !Object(n, "namespaceSelector", path, &t->namespace_selector, sel) ||
        !Str(n, "topologyKey", path, &t->topology_key) ||
        !StringList(n, "matchLabelKeys", path, &t->match_label_keys) ||
        !StringList(n, "mismatchLabelKeys", path, &t->mismatch_label_keys)) {
      return false;
    }
    const std::string tk = Child(path, "topologyKey");
    if (t->topology_key.empty()) return Fail(n, FieldRequired(tk, "can not be empty"));
    if (api::Status msg = internal::QualifiedNameError(t->topology_key); !msg.ok()) {
      return Fail(n, FieldInvalid(tk, t->topology_key, std::string(msg.message())));
    }
    return true;
  }

  bool PodAff(const YAML::Node& n, const std::string& path, PodAffinity* a) {
    return List(n, "requiredDuringSchedulingIgnoredDuringExecution", path, &a->required,
                [this](const YAML::Node& t, const std::string& p, PodAffinityTerm* term) {
                  return PodAffTerm(t, p, term);
                }) &&
           List(n, "preferredDuringSchedulingIgnoredDuringExecution", path, &a->preferred,
                [this](const YAML::Node& t, const std::string& p, WeightedPodAffinityTerm* w) {
                  if (!Weight(t, p, &w->weight)) return false;
                  const YAML::Node term = Get(t, "podAffinityTerm");
                  const std::string tp = Child(p, "podAffinityTerm");
                  if (!Present(term)) return Fail(t, FieldRequired(tp, ""));
                  return ExpectMap(term, tp) && PodAffTerm(term, tp, &w->pod_affinity_term);
                });
  }

  bool Aff(const YAML::Node& n, const std::string& path, Affinity* a) {
    return Object(n, "nodeAffinity", path, &a->node_affinity,
                  [this](const YAML::Node& x, const std::string& p, NodeAffinity* v) {
                    return NodeAff(x, p, v);
                  }) &&
           Object(n, "podAffinity", path, &a->pod_affinity,
                  [this](const YAML::Node& x, const std::string& p, PodAffinity* v) {
                    return PodAff(x, p, v);
                  }) &&
           Object(n, "podAntiAffinity", path, &a->pod_anti_affinity,
                  [this](const YAML::Node& x, const std::string& p, PodAffinity* v) {
                    return PodAff(x, p, v);
                  });
  }

  // ---- taints and tolerations (pkg/apis/core/validation) --------------------------------

  bool TaintEffect(const YAML::Node& n, const std::string& path, const std::string& effect,
                   bool allow_empty) {
    if (effect.empty()) {
      if (allow_empty) return true;
      return Fail(n, FieldRequired(path, ""));
    }
    if (effect == "NoSchedule" || effect == "PreferNoSchedule" || effect == "NoExecute") {
      return true;
    }
    return Fail(n,
                FieldNotSupported(path, effect, {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
  }

  bool Tol(const YAML::Node& n, const std::string& path, Toleration* t) {
    if (!Str(n, "key", path, &t->key) || !Str(n, "operator", path, &t->op) ||
        !Str(n, "value", path, &t->value) || !Str(n, "effect", path, &t->effect) ||
        !OptInt64(n, "tolerationSeconds", path, &t->toleration_seconds)) {
      return false;
    }
    if (t->op.empty()) t->op = "Equal";  // an empty operator means Equal
    if (!t->key.empty()) {
      if (api::Status msg = internal::QualifiedNameError(t->key); !msg.ok()) {
        return Fail(n, FieldInvalid(Child(path, "key"), t->key, std::string(msg.message())));
      }
    }
    if (t->op == "Equal") {
      if (t->key.empty()) {
        return Fail(n, FieldInvalid(Child(path, "operator"), t->op,
                                    "operator must be Exists when `key` is empty, which means "
                                    "\"match all values and all keys\""));
      }
      if (api::Status msg = internal::LabelValueError(t->value); !msg.ok()) {
        return Fail(n, FieldInvalid(Child(path, "value"), t->value, std::string(msg.message())));
      }
    } else if (t->op == "Exists") {
      if (!t->value.empty()) {
        return Fail(n, FieldInvalid(Child(path, "operator"), t->op,
                                    "value must be empty when `operator` is 'Exists'"));
      }
    } else {
      return Fail(n, FieldNotSupported(Child(path, "operator"), t->op, {"Equal", "Exists"}));
    }
    if (t->toleration_seconds && t->effect != "NoExecute") {
      return Fail(n, FieldInvalid(Child(path, "effect"), t->effect,
                                  "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    return TaintEffect(n, Child(path, "effect"), t->effect, /*allow_empty=*/true);
  }

  bool TaintObj(const YAML::Node& n, const std::string& path, Taint* t) {
    if (!Str(n, "key", path, &t->key) || !Str(n, "value", path, &t->value) ||
        !Str(n, "effect", path, &t->effect)) {
      return false;
    }
    if (api::Status msg = internal::QualifiedNameError(t->key); !msg.ok()) {
      return Fail(n, FieldInvalid(Child(path, "key"), t->key, std::string(msg.message())));
    }
    if (api::Status msg = internal::LabelValueError(t->value); !msg.ok()) {
      return Fail(n, FieldInvalid(Child(path, "value"), t->value, std::string(msg.message())));
    }
    return TaintEffect(n, Child(path, "effect"), t->effect, /*allow_empty=*/false);
  }

  // ---- containers -----------------------------------------------------------------------

  bool Port(const YAML::Node& n, const std::string& path, ContainerPort* port) {
    if (!Str(n, "name", path, &port->name) ||
        !Int32(n, "containerPort", path, &port->container_port) ||
        !Int32(n, "hostPort", path, &port->host_port) ||
        !Str(n, "protocol", path, &port->protocol) || !Str(n, "hostIP", path, &port->host_ip)) {
      return false;
    }
    if (port->protocol.empty()) port->protocol = "TCP";
    if (port->container_port < 1 || port->container_port > 65535) {
      return Fail(n,
                  FieldInvalid(Child(path, "containerPort"), std::to_string(port->container_port),
                               "must be between 1 and 65535, inclusive"));
    }
    if (port->host_port < 0 || port->host_port > 65535) {
      return Fail(n, FieldInvalid(Child(path, "hostPort"), std::to_string(port->host_port),
                                  "must be between 1 and 65535, inclusive"));
    }
    if (port->protocol != "TCP" && port->protocol != "UDP" && port->protocol != "SCTP") {
      return Fail(
          n, FieldNotSupported(Child(path, "protocol"), port->protocol, {"SCTP", "TCP", "UDP"}));
    }
    return true;
  }

  bool ContainerObj(const YAML::Node& n, const std::string& path, Container* c, bool init) {
    if (!Str(n, "name", path, &c->name) || !Str(n, "image", path, &c->image) ||
        !Str(n, "restartPolicy", path, &c->restart_policy) ||
        !List(n, "ports", path, &c->ports,
              [this](const YAML::Node& x, const std::string& p, ContainerPort* port) {
                return Port(x, p, port);
              })) {
      return false;
    }
    const YAML::Node res = Get(n, "resources");
    if (Present(res)) {
      const std::string rp = Child(path, "resources");
      if (!ExpectMap(res, rp) || !Resources(res, "limits", rp, &c->resources.limits) ||
          !Resources(res, "requests", rp, &c->resources.requests) ||
          !List(res, "claims", rp, &c->resource_claims,
                [this](const YAML::Node& x, const std::string& p, std::string* name) {
                  return ExpectMap(x, p) && Str(x, "name", p, name);
                })) {
        return false;
      }
    }
    // SetDefaults_Pod: a resource with a limit but no request requests its limit.
    for (const auto& [name, q] : c->resources.limits) c->resources.requests.try_emplace(name, q);
    if (init && !c->restart_policy.empty() && c->restart_policy != "Always") {
      return Fail(n,
                  FieldNotSupported(Child(path, "restartPolicy"), c->restart_policy, {"Always"}));
    }
    return true;
  }

  // ---- pod spec -------------------------------------------------------------------------

  bool Spread(const YAML::Node& n, const std::string& path, TopologySpreadConstraint* c) {
    auto sel = [this](const YAML::Node& s, const std::string& p, LabelSelector* ls) {
      return LabelSel(s, p, ls);
    };
    if (!Int32(n, "maxSkew", path, &c->max_skew) ||
        !Str(n, "topologyKey", path, &c->topology_key) ||
        !Str(n, "whenUnsatisfiable", path, &c->when_unsatisfiable) ||
        !Object(n, "labelSelector", path, &c->label_selector, sel) ||
        !OptInt32(n, "minDomains", path, &c->min_domains) ||
        !Str(n, "nodeAffinityPolicy", path, &c->node_affinity_policy) ||
        !Str(n, "nodeTaintsPolicy", path, &c->node_taints_policy) ||
        !StringList(n, "matchLabelKeys", path, &c->match_label_keys)) {
      return false;
    }
    if (c->max_skew <= 0) {
      return Fail(n, FieldInvalid(Child(path, "maxSkew"), std::to_string(c->max_skew),
                                  "must be greater than zero"));
    }
    if (c->topology_key.empty()) {
      return Fail(n, FieldRequired(Child(path, "topologyKey"), "can not be empty"));
    }
    if (c->when_unsatisfiable.empty()) c->when_unsatisfiable = "DoNotSchedule";
    if (c->when_unsatisfiable != "DoNotSchedule" && c->when_unsatisfiable != "ScheduleAnyway") {
      return Fail(n, FieldNotSupported(Child(path, "whenUnsatisfiable"), c->when_unsatisfiable,
                                       {"DoNotSchedule", "ScheduleAnyway"}));
    }
    if (c->min_domains) {
      if (*c->min_domains <= 0) {
        return Fail(n, FieldInvalid(Child(path, "minDomains"), std::to_string(*c->min_domains),
                                    "must be greater than 0"));
      }
      if (c->when_unsatisfiable != "DoNotSchedule") {
        return Fail(n, FieldInvalid(Child(path, "minDomains"), std::to_string(*c->min_domains),
                                    "can only use minDomains if "
                                    "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"));
      }
    }
    for (const auto* policy : {&c->node_affinity_policy, &c->node_taints_policy}) {
      if (!policy->empty() && *policy != "Honor" && *policy != "Ignore") {
        const char* field =
            policy == &c->node_affinity_policy ? "nodeAffinityPolicy" : "nodeTaintsPolicy";
        return Fail(n, FieldNotSupported(Child(path, field), *policy, {"Honor", "Ignore"}));
      }
    }
    return true;
  }

  bool VolumeObj(const YAML::Node& n, const std::string& path, Volume* v) {
    if (!Str(n, "name", path, &v->name)) return false;
    if (const YAML::Node eph = Get(n, "ephemeral"); Present(eph)) {  // generic ephemeral volume
      const std::string ep = Child(path, "ephemeral");
      const YAML::Node tpl = Get(eph, "volumeClaimTemplate");
      if (!ExpectMap(eph, ep)) return false;
      if (!Present(tpl)) {
        return Fail(eph, FieldRequired(Child(ep, "volumeClaimTemplate"), "must be specified"));
      }
      if (!ExpectMap(tpl, Child(ep, "volumeClaimTemplate"))) return false;
      v->ephemeral_claim_template = std::make_shared<const YAML::Node>(YAML::Clone(tpl));
    }
    if (Status s = DecodeVolumeSource(n, path, /*persistent=*/false, &v->source); !s.ok()) {
      return Fail(n, std::string(s.message()));
    }
    const YAML::Node pvc = Get(n, "persistentVolumeClaim");
    if (!Present(pvc)) return true;
    const std::string pp = Child(path, "persistentVolumeClaim");
    return ExpectMap(pvc, pp) && Str(pvc, "claimName", pp, &v->persistent_volume_claim);
  }

  // spec.resourceClaims[]: exactly one source (core validation validatePodResourceClaim).
  bool PodClaim(const YAML::Node& n, const std::string& path, PodResourceClaim* c) {
    if (!ExpectMap(n, path) || !Str(n, "name", path, &c->name) ||
        !Str(n, "resourceClaimName", path, &c->resource_claim_name) ||
        !Str(n, "resourceClaimTemplateName", path, &c->resource_claim_template_name)) {
      return false;
    }
    if (c->name.empty()) return Fail(n, FieldRequired(Child(path, "name"), ""));
    if (c->resource_claim_name.empty() == c->resource_claim_template_name.empty()) {
      return Fail(n, FieldInvalid(path, "",
                                  "must specify one of: `resourceClaimName`, "
                                  "`resourceClaimTemplateName`"));
    }
    return true;
  }

  // spec.resources: only cpu, memory and hugepages-* may be set at pod level
  // (pkg/apis/core/validation validatePodResourceName).
  bool PodLevelResources(const YAML::Node& n, const std::string& path, ResourceRequirements* r) {
    if (!Resources(n, "limits", path, &r->limits) ||
        !Resources(n, "requests", path, &r->requests)) {
      return false;
    }
    for (const auto* list : {&r->limits, &r->requests}) {
      for (const auto& [name, q] : *list) {
        if (IsSupportedPodLevelResource(name)) continue;
        const char* key = list == &r->limits ? "limits" : "requests";
        return Fail(Get(n, key), FieldNotSupported(Child(Child(path, key), name), name,
                                                   {"cpu", "hugepages-", "memory"}));
      }
    }
    return true;
  }

  // An optional v1.ResourceList: nullopt when absent or null (a nil map in Go).
  bool OptResources(const YAML::Node& map, const char* key, const std::string& path,
                    std::optional<ResourceList>* out) {
    if (!Present(Get(map, key))) return true;
    ResourceList list;
    if (!Resources(map, key, path, &list)) return false;
    *out = std::move(list);
    return true;
  }

  // status.containerStatuses[] / initContainerStatuses[]: what in-place resize reads.
  bool ContainerStatusObj(const YAML::Node& n, const std::string& path, ContainerStatus* cs) {
    if (!ExpectMap(n, path) || !Str(n, "name", path, &cs->name) ||
        !OptResources(n, "allocatedResources", path, &cs->allocated_resources)) {
      return false;
    }
    const YAML::Node res = Get(n, "resources");
    if (!Present(res)) return true;
    const std::string rp = Child(path, "resources");
    return ExpectMap(res, rp) && OptResources(res, "requests", rp, &cs->resources_requests);
  }

  // SetDefaults_PodSpec (pkg/apis/core/v1/defaults.go defaultHostNetworkPorts): with host
  // networking every container port without a hostPort takes hostPort = containerPort.
  static void DefaultHostNetworkPorts(PodSpec* s) {
    for (auto* list : {&s->containers, &s->init_containers}) {
      for (auto& c : *list) {
        for (auto& port : c.ports) {
          if (port.host_port == 0) port.host_port = port.container_port;
        }
      }
    }
  }

  bool Spec(const YAML::Node& n, const std::string& path, PodSpec* s) {
    if (!ExpectMap(n, path)) return false;
    if (!Str(n, "nodeName", path, &s->node_name) ||
        !Str(n, "schedulerName", path, &s->scheduler_name) ||
        !StringMap(n, "nodeSelector", path, &s->node_selector, /*label_syntax=*/true) ||
        !Object(n, "affinity", path, &s->affinity,
                [this](const YAML::Node& x, const std::string& p, Affinity* a) {
                  return Aff(x, p, a);
                }) ||
        !List(n, "tolerations", path, &s->tolerations,
              [this](const YAML::Node& x, const std::string& p, Toleration* t) {
                return Tol(x, p, t);
              }) ||
        !List(n, "initContainers", path, &s->init_containers,
              [this](const YAML::Node& x, const std::string& p, Container* c) {
                return ContainerObj(x, p, c, /*init=*/true);
              }) ||
        !List(n, "containers", path, &s->containers,
              [this](const YAML::Node& x, const std::string& p, Container* c) {
                return ContainerObj(x, p, c, /*init=*/false);
              }) ||
        !Resources(n, "overhead", path, &s->overhead) ||
        !OptInt32(n, "priority", path, &s->priority) ||
        !Str(n, "priorityClassName", path, &s->priority_class_name) ||
        !Str(n, "preemptionPolicy", path, &s->preemption_policy) ||
        !List(n, "schedulingGates", path, &s->scheduling_gates,
              [this](const YAML::Node& x, const std::string& p, PodSchedulingGate* g) {
                return Str(x, "name", p, &g->name);
              }) ||
        !List(n, "topologySpreadConstraints", path, &s->topology_spread_constraints,
              [this](const YAML::Node& x, const std::string& p, TopologySpreadConstraint* c) {
                return Spread(x, p, c);
              }) ||
        !List(n, "volumes", path, &s->volumes,
              [this](const YAML::Node& x, const std::string& p, Volume* v) {
                return VolumeObj(x, p, v);
              }) ||
        !List(n, "resourceClaims", path, &s->resource_claims,
              [this](const YAML::Node& x, const std::string& p, PodResourceClaim* c) {
                return PodClaim(x, p, c);
              }) ||
        !Str(n, "restartPolicy", path, &s->restart_policy) ||
        !OptInt64(n, "activeDeadlineSeconds", path, &s->active_deadline_seconds) ||
        !Object(n, "workloadRef", path, &s->workload_ref,
                [this](const YAML::Node& x, const std::string& p, WorkloadReference* w) {
                  return ExpectMap(x, p) && Str(x, "name", p, &w->name) &&
                         Str(x, "podGroup", p, &w->pod_group) &&
                         Str(x, "podGroupReplicaKey", p, &w->pod_group_replica_key);
                })) {
      return false;
    }
    if (!Object(n, "resources", path, &s->resources,
                [this](const YAML::Node& x, const std::string& p, ResourceRequirements* r) {
                  return PodLevelResources(x, p, r);
                })) {
      return false;
    }
    if (const YAML::Node sg = Get(n, "schedulingGroup"); Present(sg)) {
      if (!ExpectMap(sg, Child(path, "schedulingGroup")) ||
          !Str(sg, "podGroupName", Child(path, "schedulingGroup"),
               &s->scheduling_group_pod_group_name)) {
        return false;
      }
    }
    if (!Bool(n, "hostNetwork", path, &s->host_network)) return false;
    if (s->host_network) DefaultHostNetworkPorts(s);
    s->unsupported_fields = UnsupportedPodFields(n, path);
    if (s->scheduler_name.empty()) s->scheduler_name = "default-scheduler";
    if (s->restart_policy.empty()) s->restart_policy = "Always";
    if (!s->preemption_policy.empty() && s->preemption_policy != "PreemptLowerPriority" &&
        s->preemption_policy != "Never") {
      return Fail(Get(n, "preemptionPolicy"),
                  FieldNotSupported(Child(path, "preemptionPolicy"), s->preemption_policy,
                                    {"Never", "PreemptLowerPriority"}));
    }
    return true;
  }

  bool PodStatusObj(const YAML::Node& n, const std::string& path, PodStatus* st) {
    if (!ExpectMap(n, path)) return false;
    if (!Str(n, "phase", path, &st->phase) ||
        !List(n, "conditions", path, &st->conditions,
              [this](const YAML::Node& x, const std::string& p, PodCondition* c) {
                return Str(x, "type", p, &c->type) && Str(x, "status", p, &c->status) &&
                       Str(x, "reason", p, &c->reason) && Str(x, "message", p, &c->message);
              }) ||
        !Str(n, "nominatedNodeName", path, &st->nominated_node_name) ||
        !List(n, "resourceClaimStatuses", path, &st->resource_claim_statuses,
              [this](const YAML::Node& x, const std::string& p, PodResourceClaimStatus* c) {
                return ExpectMap(x, p) && Str(x, "name", p, &c->name) &&
                       Str(x, "resourceClaimName", p, &c->resource_claim_name);
              }) ||
        !Time(n, "startTime", path, &st->start_time) ||
        !List(n, "containerStatuses", path, &st->container_statuses,
              [this](const YAML::Node& x, const std::string& p, ContainerStatus* cs) {
                return ContainerStatusObj(x, p, cs);
              }) ||
        !List(n, "initContainerStatuses", path, &st->init_container_statuses,
              [this](const YAML::Node& x, const std::string& p, ContainerStatus* cs) {
                return ContainerStatusObj(x, p, cs);
              })) {
      return false;
    }
    if (st->phase.empty()) st->phase = "Pending";
    return true;
  }

  // ---- kinds ----------------------------------------------------------------------------

  bool PodObj(const YAML::Node& doc, Pod* pod) {
    const YAML::Node spec = Get(doc, "spec");
    const YAML::Node status = Get(doc, "status");
    if ((Present(spec) && !Spec(spec, "spec", &pod->spec)) ||
        (Present(status) && !PodStatusObj(status, "status", &pod->status))) {
      return false;
    }
    DefaultPodLevelResources(pod);
    pod->spec.required_node_features = InferNodeFeatures(spec);
    return true;
  }

  bool NodeObj(const YAML::Node& doc, Node* node) {
    const YAML::Node spec = Get(doc, "spec");
    if (Present(spec)) {
      if (!ExpectMap(spec, "spec") ||
          !Bool(spec, "unschedulable", "spec", &node->spec.unschedulable) ||
          !List(spec, "taints", "spec", &node->spec.taints,
                [this](const YAML::Node& x, const std::string& p, Taint* t) {
                  return TaintObj(x, p, t);
                })) {
        return false;
      }
    }
    const YAML::Node status = Get(doc, "status");
    if (Present(status)) {
      auto& st = node->status;
      if (!ExpectMap(status, "status") || !Resources(status, "capacity", "status", &st.capacity) ||
          !Resources(status, "allocatable", "status", &st.allocatable) ||
          !List(status, "conditions", "status", &st.conditions,
                [this](const YAML::Node& x, const std::string& p, NodeCondition* c) {
                  return Str(x, "type", p, &c->type) && Str(x, "status", p, &c->status);
                }) ||
          !StringList(status, "declaredFeatures", "status", &st.declared_features) ||
          !List(status, "images", "status", &st.images,
                [this](const YAML::Node& x, const std::string& p, ContainerImage* img) {
                  std::optional<int64_t> size;
                  if (!StringList(x, "names", p, &img->names) ||
                      !OptInt64(x, "sizeBytes", p, &size)) {
                    return false;
                  }
                  img->size_bytes = size.value_or(0);
                  return true;
                })) {
        return false;
      }
    }
    // The kubelet reports allocatable; manifests often give capacity only.
    if (node->status.allocatable.empty()) node->status.allocatable = node->status.capacity;
    auto& df = node->status.declared_features;
    std::sort(df.begin(), df.end());
    df.erase(std::unique(df.begin(), df.end()), df.end());
    return true;
  }

  bool PriorityClassObj(const YAML::Node& doc, PriorityClass* pc) {
    if (!Int32(doc, "value", "", &pc->value) ||
        !Bool(doc, "globalDefault", "", &pc->global_default) ||
        !Str(doc, "preemptionPolicy", "", &pc->preemption_policy)) {
      return false;
    }
    if (pc->preemption_policy.empty()) pc->preemption_policy = "PreemptLowerPriority";
    if (pc->preemption_policy != "PreemptLowerPriority" && pc->preemption_policy != "Never") {
      return Fail(Get(doc, "preemptionPolicy"),
                  FieldNotSupported("preemptionPolicy", pc->preemption_policy,
                                    {"Never", "PreemptLowerPriority"}));
    }
    return true;
  }

  // intstr.IntOrString validated as ValidatePositiveIntOrPercent + IsNotMoreThan100Percent
  // (pkg/apis/policy/validation): an int >= 0, or "N%" with N <= 100. A quoted YAML scalar
  // is a string ("2" is then an invalid percent, as upstream); nodes the live client builds
  // from JSON carry no quoting, which is harmless: the API server admits no numeric string.
  bool IntOrPercent(const YAML::Node& map, const char* key, const std::string& path,
                    std::optional<IntOrString>* out) {
    const YAML::Node n = Get(map, key);
    if (!Present(n)) return true;
    const std::string p = Child(path, key);
    if (!n.IsScalar()) return TypeError(n, p, "integer or string");
    IntOrString v;
    const std::string& text = n.Scalar();
    const bool quoted = n.Tag() == "!";
    int64_t i = 0;
    if (!quoted && internal::ParseInt64(text, &i)) {
      if (i < 0) return Fail(n, FieldInvalid(p, text, "must be greater than or equal to 0"));
      if (i > std::numeric_limits<int32_t>::max()) {
        return Fail(n, FieldInvalid(p, text, "value out of range"));
      }
      v.int_value = static_cast<int32_t>(i);
    } else {
      v.is_string = true;
      v.str_value = text;
      const std::string digits =
          text.size() > 1 && text.back() == '%' ? text.substr(0, text.size() - 1) : std::string();
      if (digits.empty() ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return Fail(n, FieldInvalid(p, text,
                                    "a valid percent string must be a numeric string followed by "
                                    "an ending '%' (e.g. '1%',  or '93%', regex used for "
                                    "validation is '[0-9]+%')"));
      }
      // IsNotMoreThan100Percent (pkg/apis/apps/validation) reads the digits with
      // strconv.Atoi, so leading zeros are fine ("0100%" is 100%).
      const size_t first = digits.find_first_not_of('0');
      const std::string value = first == std::string::npos ? "0" : digits.substr(first);
      if (value.size() > 3 || std::stoi(value) > 100) {
        return Fail(n, FieldInvalid(p, text, "must not be greater than 100%"));
      }
    }
    *out = std::move(v);
    return true;
  }

  // policy/v1 PodDisruptionBudget: spec as ValidatePodDisruptionBudgetSpec checks it, and
  // the status the disruption controller wrote (live objects).
  bool PodDisruptionBudgetObj(const YAML::Node& doc, PodDisruptionBudget* pdb) {
    const YAML::Node spec = Get(doc, "spec");
    if (Present(spec)) {
      auto& sp = pdb->spec;
      auto sel = [this](const YAML::Node& s, const std::string& p, LabelSelector* ls) {
        return LabelSel(s, p, ls);
      };
      if (!ExpectMap(spec, "spec") || !Object(spec, "selector", "spec", &sp.selector, sel) ||
          !IntOrPercent(spec, "minAvailable", "spec", &sp.min_available) ||
          !IntOrPercent(spec, "maxUnavailable", "spec", &sp.max_unavailable) ||
          !Str(spec, "unhealthyPodEvictionPolicy", "spec", &sp.unhealthy_pod_eviction_policy)) {
        return false;
      }
      // ValidatePodDisruptionBudgetSpec (pkg/apis/policy/validation/validation.go):
      // field.Invalid(fldPath /* spec */, spec, ...). The value, upstream the whole spec
      // struct, is left out; the position is that of maxUnavailable.
      if (sp.min_available && sp.max_unavailable) {
        return Fail(
            Get(spec, "maxUnavailable"),
            FieldError::Invalid("spec", "", "minAvailable and maxUnavailable cannot be both set")
                .Error());
      }
      // Upstream checks a set pointer, so an explicit "" is unsupported too.
      const std::string& policy = sp.unhealthy_pod_eviction_policy;
      if (Present(Get(spec, "unhealthyPodEvictionPolicy")) && policy != "IfHealthyBudget" &&
          policy != "AlwaysAllow") {
        return Fail(Get(spec, "unhealthyPodEvictionPolicy"),
                    FieldNotSupported("spec.unhealthyPodEvictionPolicy", policy,
                                      {"AlwaysAllow", "IfHealthyBudget"}));
      }
    }
    const YAML::Node status = Get(doc, "status");
    if (!Present(status)) return true;
    auto& st = pdb->status;
    std::optional<int64_t> generation;
    if (!ExpectMap(status, "status") ||
        !OptInt64(status, "observedGeneration", "status", &generation) ||
        !Int32(status, "disruptionsAllowed", "status", &st.disruptions_allowed) ||
        !Int32(status, "currentHealthy", "status", &st.current_healthy) ||
        !Int32(status, "desiredHealthy", "status", &st.desired_healthy) ||
        !Int32(status, "expectedPods", "status", &st.expected_pods)) {
      return false;
    }
    st.observed_generation = generation.value_or(0);
    const YAML::Node disrupted = Get(status, "disruptedPods");
    if (!Present(disrupted)) return true;
    if (!ExpectMap(disrupted, "status.disruptedPods")) return false;
    for (const auto& kv : disrupted) {
      if (!kv.first.IsScalar()) return TypeError(kv.first, "status.disruptedPods", "string keys");
      std::optional<Timestamp> t;
      if (!Time(disrupted, kv.first.Scalar().c_str(), "status.disruptedPods", &t)) return false;
      st.disrupted_pods[kv.first.Scalar()] = t.value_or(0);
    }
    return true;
  }

  bool NonNegative(const YAML::Node& map, const char* key, const std::string& path, int32_t v) {
    if (v >= 0) return true;
    return Fail(Get(map, key), FieldInvalid(Child(path, key), std::to_string(v),
                                            "must be greater than or equal to 0"));
  }

  bool ControllerObj(const YAML::Node& doc, WorkloadController* c) {
    const YAML::Node spec = Get(doc, "spec");
    if (!Present(spec)) return true;
    if (!ExpectMap(spec, "spec")) return false;
    if (c->kind == "Job") {
      int32_t parallelism = 1;
      std::optional<int32_t> completions;
      if (!Int32(spec, "parallelism", "spec", &parallelism) ||
          !NonNegative(spec, "parallelism", "spec", parallelism) ||
          !OptInt32(spec, "completions", "spec", &completions) ||
          (completions && !NonNegative(spec, "completions", "spec", *completions))) {
        return false;
      }
      c->replicas = completions ? std::min(parallelism, *completions) : parallelism;
      std::string mode;
      if (!Bool(spec, "suspend", "spec", &c->suspend) ||
          !Str(spec, "completionMode", "spec", &mode)) {
        return false;
      }
      if (!mode.empty() && mode != "NonIndexed" && mode != "Indexed") {
        return Fail(Get(spec, "completionMode"),
                    FieldNotSupported("spec.completionMode", mode, {"Indexed", "NonIndexed"}));
      }
      c->indexed = mode == "Indexed";
    } else {
      c->replicas = 1;
      if (!Int32(spec, "replicas", "spec", &c->replicas) ||
          !NonNegative(spec, "replicas", "spec", c->replicas)) {
        return false;
      }
    }
    const YAML::Node tmpl = Get(spec, "template");
    if (!Present(tmpl)) return true;
    if (!ExpectMap(tmpl, "spec.template")) return false;
    const YAML::Node meta = Get(tmpl, "metadata");
    const YAML::Node pod_spec = Get(tmpl, "spec");
    return (!Present(meta) || Meta(meta, "spec.template.metadata", &c->template_metadata)) &&
           (!Present(pod_spec) || Spec(pod_spec, "spec.template.spec", &c->template_spec));
  }

 private:
  FieldError err_;
};

// Cluster-scoped kinds the decoder knows: they get no namespace (a live PUT goes to their
// cluster-scoped path). Other kinds default to "default". The storage and DRA kinds are
// cluster-scoped in core/v1, storage.k8s.io/v1 and resource.k8s.io (DeviceTaintRule:
// v1alpha3 / v1beta2).
bool IsNamespaced(std::string_view kind) {
  static constexpr std::string_view kClusterScoped[] = {
      "Node",    "Namespace", "PriorityClass", "PersistentVolume", "StorageClass",
      "CSINode", "CSIDriver", "DeviceClass",   "ResourceSlice",    "DeviceTaintRule"};
  for (std::string_view k : kClusterScoped) {
    if (kind == k) return false;
  }
  return true;
}

// API group of an apiVersion ("apps/v1" -> "apps", "v1" -> "").
std::string_view GroupOf(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

// Whether `kind` in `api_version` is one we decode (StreamDecoder::Doc requires an
// apiVersion before it asks).
bool KnownKind(std::string_view kind, std::string_view api_version) {
  const std::string_view group = GroupOf(api_version);
  const bool any = api_version.empty();
  if (kind == "Pod" || kind == "Node" || kind == "Namespace") {
    return any || (group.empty() && api_version == "v1");
  }
  if (kind == "PriorityClass") return any || group == "scheduling.k8s.io";
  // policy/v1beta1 too (servers before 1.21 serve only it); api_version tells them apart.
  if (kind == "PodDisruptionBudget") {
    return any || api_version == "policy/v1" || api_version == "policy/v1beta1";
  }
  if (kind == "Deployment" || kind == "ReplicaSet") {
    return any || group == "apps" || group == "extensions";
  }
  if (kind == "StatefulSet") return any || group == "apps";
  if (kind == "Job") return any || group == "batch";
  return false;
}

// yaml-cpp 0.7's LoadAll loops forever, adding an empty document per turn until memory
// runs out, when a document starts with a ',' outside any flow collection (e.g. the text
// "," or "[a],"): the parser emits a null document without consuming the token. This pass
// runs the same parser with a no-op handler first and stops at the first document that
// starts where the previous one did. Parse errors throw as in LoadAll. Found by
// fuzz/fuzz_manifest.cc; regression test in decode_hostile_test.cc.
class DocumentProgress : public YAML::EventHandler {
 public:
  // False (and *stuck set) when the parser stops making progress.
  static bool Check(const std::string& text, YAML::Mark* stuck) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentProgress h;
    int previous = -1;
    while (parser.HandleNextDocument(h)) {
      if (h.start_.pos == previous) {
        *stuck = h.start_;
        return false;
      }
      previous = h.start_.pos;
    }
    return true;
  }
  void OnDocumentStart(const YAML::Mark& mark) override { start_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  YAML::Mark start_ = YAML::Mark::null_mark();
};

// Decodes a stream of documents from one source, all-or-nothing.
class StreamDecoder {
 public:
  explicit StreamDecoder(const std::string& source) : source_(source) {}

  Status Run(std::string_view text) {
    std::vector<YAML::Node> docs;
    try {
      const std::string owned(text);
      YAML::Mark stuck;
      if (!DocumentProgress::Check(owned, &stuck)) {
        std::ostringstream msg;
        msg << source_ << ": malformed YAML at line " << stuck.line + 1 << ", column "
            << stuck.column + 1 << ": unexpected '"
            << (static_cast<size_t>(stuck.pos) < owned.size() ? owned[stuck.pos] : ' ')
            << "' outside a flow collection";
        return SetError(msg.str());
      }
      docs = YAML::LoadAll(owned);
    } catch (const YAML::Exception& e) {
      std::ostringstream msg;
      msg << source_ << ": malformed YAML";
      if (e.mark.line >= 0) {
        msg << " at line " << e.mark.line + 1 << ", column " << e.mark.column + 1;
      }
      // yaml-cpp stops at 500 levels of nesting (CVE-2017-5950 fix) with the text "bad file".
      const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e);
      msg << ": "
          << (deep ? "nesting deeper than " + std::to_string(deep->depth()) + " levels" : e.msg);
      return SetError(msg.str());
    } catch (const std::exception& e) {
      return SetError(source_ + ": malformed YAML: " + e.what());
    }
    for (size_t i = 0; i < docs.size(); ++i) {
      doc_number_ = i + 1;
      std::string object = "document " + std::to_string(doc_number_);
      try {
        if (Status s = Doc(docs[i], ""); !s.ok()) return s;
      } catch (const std::exception& e) {
        // Not expected (types are checked before conversion); keep the no-throw contract.
        return SetError(source_ + ": " + object + ": " + e.what());
      }
    }
    return absl::OkStatus();
  }

  // One parsed document (DecodeManifestNode).
  Status RunNode(const YAML::Node& doc) {
    doc_number_ = 1;
    try {
      return Doc(doc, "");
    } catch (const std::exception& e) {
      return SetError(source_ + ": document 1: " + e.what());
    }
  }

  Manifests& staged() { return staged_; }

 private:
  // Who a document is, as far as messages and dispatch need: kind, apiVersion and the
  // best-effort metadata name / namespace (a malformed metadata is reported later).
  struct Identity {
    std::string kind, api_version, name, ns;
    std::string doc_label;  // "document N"
    std::string label;      // "Kind ns/name", or doc_label when unnamed
  };

  static Status SetError(std::string msg) { return absl::InvalidArgumentError(msg); }

  Status ObjectError(const std::string& object, const std::string& prefix, const FieldError& e) {
    std::string msg = source_ + ": " + object + ": " + Child(prefix, e.detail);
    if (e.line > 0) {
      msg += " (line " + std::to_string(e.line) + ", column " + std::to_string(e.column) + ")";
    }
    return SetError(std::move(msg));
  }

  // Fills `id` from `doc` (a map). Fails only when kind or apiVersion is not a string.
  Status Identify(const YAML::Node& doc, const std::string& prefix, ObjectDecoder& d,
                  Identity* id) {
    id->doc_label = "document " + std::to_string(doc_number_);
    const YAML::Node meta = ObjectDecoder::Get(doc, "metadata");
    if (!d.Str(doc, "kind", "", &id->kind) || !d.Str(doc, "apiVersion", "", &id->api_version)) {
      return ObjectError(id->doc_label, prefix, d.error());
    }
    std::string generate_name;
    if (Present(meta) && meta.IsMap()) {
      auto scalar = [&](const char* key, std::string* out) {
        const YAML::Node n = ObjectDecoder::Get(meta, key);
        if (Present(n) && n.IsScalar()) *out = n.Scalar();
      };
      scalar("name", &id->name);
      scalar("generateName", &generate_name);
      scalar("namespace", &id->ns);
    }
    if (!IsNamespaced(id->kind)) id->ns.clear();
    if (IsNamespaced(id->kind) && id->ns.empty()) id->ns = "default";
    id->label = id->name.empty() || id->kind.empty()
                    ? id->doc_label
                    : id->kind + " " + (id->ns.empty() ? id->name : id->ns + "/" + id->name);
    return absl::OkStatus();
  }

  // Lists: "List" (kubectl get -o yaml) and typed lists ("PodList").
  static bool IsList(const std::string& kind, const YAML::Node& items) {
    return kind == "List" ||
           (kind.size() > 4 && kind.ends_with("List") && Present(items) && items.IsSequence());
  }

  Status ListItems(const YAML::Node& items, const std::string& prefix, const Identity& id,
                   const std::string& path_prefix, ObjectDecoder& d) {
    if (!Present(items)) return absl::OkStatus();
    if (!items.IsSequence()) {
      d.TypeError(items, "items", "array");
      return ObjectError(id.label, path_prefix, d.error());
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (Status s = Doc(items[i], Index(Child(prefix, "items"), i)); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // An object of a kind without a type here, kept whole for the adapters that read it
  // (gang dialects, queues, DRA, workload expansion, ...) and counted in `ignored`
  // ("Kind ns/name"). Its metadata is decoded as strictly as a typed object's (a list where
  // an annotation's string belongs is an error naming the field, never a dropped object),
  // and a generateName gets the same stable generated name.
  Status KeepUntyped(const YAML::Node& doc, const std::string& prefix, const Identity& id,
                     const std::string& path_prefix, ObjectDecoder& d) {
    ObjectMeta um;
    // Component configurations (kubescheduler.config.k8s.io, kubelet.config.k8s.io,
    // kustomize.config.k8s.io, ...) are files, not API objects: they have no name and are
    // kept (and reported unused) under their document's.
    if (id.name.empty() && std::string_view(GroupOf(id.api_version)).ends_with("config.k8s.io")) {
      um.name = "document-" + std::to_string(doc_number_);
    } else if (Status s = TypedMeta(doc, prefix, id, path_prefix, d, &um); !s.ok()) {
      return s;
    }
    Unstructured u;
    u.api_version = id.api_version;
    u.kind = id.kind;
    u.metadata = std::move(um);
    u.metadata.namespace_ = id.ns;
    // Namespaced DRA kinds (resource.k8s.io) default to "default", as the API server does.
    if (u.metadata.namespace_.empty() && u.Group() == "resource.k8s.io" &&
        (id.kind == "ResourceClaim" || id.kind == "ResourceClaimTemplate")) {
      u.metadata.namespace_ = "default";
    }
    if (u.metadata.uid.empty()) u.metadata.uid = u.Key();
    staged_.ignored.push_back(id.kind + " " +
                              (u.metadata.namespace_.empty()
                                   ? u.metadata.name
                                   : u.metadata.namespace_ + "/" + u.metadata.name));
    u.source = source_;
    u.object = std::make_shared<const YAML::Node>(YAML::Clone(doc));
    staged_.objects.push_back(std::move(u));
    return absl::OkStatus();
  }

  // The typed object's metadata: namespace defaulting, and a generated name for
  // generateName (the API server appends 5 random characters; ours depend on the
  // position only).
  Status TypedMeta(const YAML::Node& doc, const std::string& prefix, const Identity& id,
                   const std::string& path_prefix, ObjectDecoder& d, ObjectMeta* m) {
    const YAML::Node meta = ObjectDecoder::Get(doc, "metadata");
    if (Present(meta) && !d.Meta(meta, "metadata", m)) {
      return ObjectError(id.label, path_prefix, d.error());
    }
    if (!IsNamespaced(id.kind)) {
      m->namespace_.clear();
    } else if (m->namespace_.empty()) {
      m->namespace_ = "default";
    }
    if (m->name.empty()) {
      if (m->generate_name.empty()) {
        return ObjectError(
            id.label, path_prefix,
            Located(Present(meta) ? meta : doc,
                    FieldRequired("metadata.name", "name or generateName is required")));
      }
      m->name = m->generate_name +
                StableSuffix(source_ + "#" + std::to_string(doc_number_) + "#" + prefix);
    }
    return absl::OkStatus();
  }

  // Decodes a Pod, Node, Namespace, PriorityClass, PodDisruptionBudget or workload controller
  // into staged_.
  Status Typed(const YAML::Node& doc, const Identity& id, const std::string& path_prefix,
               ObjectDecoder& d, ObjectMeta m) {
    const std::string& kind = id.kind;
    if (kind == "Pod") {
      Pod pod;
      pod.metadata = std::move(m);
      if (!d.PodObj(doc, &pod)) return ObjectError(id.label, path_prefix, d.error());
      if (pod.metadata.uid.empty()) pod.metadata.uid = pod.Key();
      staged_.pods.push_back(std::move(pod));
    } else if (kind == "Node") {
      Node node;
      node.metadata = std::move(m);
      if (!d.NodeObj(doc, &node)) return ObjectError(id.label, path_prefix, d.error());
      staged_.nodes.push_back(std::move(node));
    } else if (kind == "Namespace") {
      staged_.namespaces.push_back(Namespace{std::move(m)});
    } else if (kind == "PriorityClass") {
      PriorityClass pc;
      pc.metadata = std::move(m);
      if (!d.PriorityClassObj(doc, &pc)) return ObjectError(id.label, path_prefix, d.error());
      staged_.priority_classes.push_back(std::move(pc));
    } else if (kind == "PodDisruptionBudget") {
      PodDisruptionBudget pdb;
      pdb.api_version = id.api_version.empty() ? "policy/v1" : id.api_version;
      pdb.metadata = std::move(m);
      if (!d.PodDisruptionBudgetObj(doc, &pdb))
        return ObjectError(id.label, path_prefix, d.error());
      if (pdb.metadata.uid.empty()) pdb.metadata.uid = pdb.Key();
      staged_.pod_disruption_budgets.push_back(std::move(pdb));
    } else {
      WorkloadController c;
      c.api_version = id.api_version;
      c.kind = kind;
      c.metadata = std::move(m);
      if (!d.ControllerObj(doc, &c)) return ObjectError(id.label, path_prefix, d.error());
      if (c.metadata.uid.empty()) {
        c.metadata.uid = c.kind + "/" + c.metadata.namespace_ + "/" + c.metadata.name;
      }
      c.source = source_;
      Unstructured u;
      u.api_version = c.api_version;
      u.kind = c.kind;
      u.metadata = c.metadata;
      u.source = source_;
      u.object = std::make_shared<const YAML::Node>(YAML::Clone(doc));
      staged_.objects.push_back(std::move(u));
      staged_.controllers.push_back(std::move(c));
    }
    return absl::OkStatus();
  }

  // `prefix` is the field path of this object inside its document ("" or "items[2]").
  Status Doc(const YAML::Node& doc, const std::string& prefix) {
    ObjectDecoder d;
    if (!Present(doc)) return absl::OkStatus();  // empty document, e.g. a trailing "---"
    if (!doc.IsMap()) {
      d.TypeError(doc, prefix.empty() ? "<root>" : prefix, "object");
      return ObjectError("document " + std::to_string(doc_number_), "", d.error());
    }
    Identity id;
    if (Status s = Identify(doc, prefix, d, &id); !s.ok()) return s;
    // Field paths are relative to the named object, or to the document when unnamed.
    const std::string& path_prefix = id.name.empty() ? prefix : kEmpty;

    const YAML::Node items = ObjectDecoder::Get(doc, "items");
    // kind and apiVersion are required, as the API server and kubectl require them
    // ("Object 'Kind' is missing", "apiVersion not set"): a document without them would
    // otherwise be typed by guesswork or dropped.
    for (const auto& [field, value] :
         {std::pair<const char*, const std::string*>{"kind", &id.kind},
          std::pair<const char*, const std::string*>{"apiVersion", &id.api_version}}) {
      if (value->empty()) {
        return ObjectError(id.label, path_prefix,
                           Located(doc, FieldRequired(Child(prefix, field), "")));
      }
    }
    if (IsList(id.kind, items)) return ListItems(items, prefix, id, path_prefix, d);
    if (!KnownKind(id.kind, id.api_version)) {
      return KeepUntyped(doc, prefix, id, path_prefix, d);
    }
    ObjectMeta m;
    if (Status s = TypedMeta(doc, prefix, id, path_prefix, d, &m); !s.ok()) return s;
    return Typed(doc, id, path_prefix, d, std::move(m));
  }

  static inline const std::string kEmpty;
  const std::string& source_;
  Manifests staged_;
  size_t doc_number_ = 0;
};

template <typename T>
void AppendAll(std::vector<T>* dst, std::vector<T>* src) {
  dst->insert(dst->end(), std::make_move_iterator(src->begin()),
              std::make_move_iterator(src->end()));
}

StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    return Status(absl::ErrnoToStatusCode(e), path.string() + ": cannot read: " + std::strerror(e));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return absl::DataLossError(path.string() + ": cannot read: I/O error");
  return buf.str();
}

// Moves everything staged into *out.
void AppendManifests(Manifests* out, Manifests* staged) {
  AppendAll(&out->nodes, &staged->nodes);
  AppendAll(&out->pods, &staged->pods);
  AppendAll(&out->namespaces, &staged->namespaces);
  AppendAll(&out->priority_classes, &staged->priority_classes);
  AppendAll(&out->pod_disruption_budgets, &staged->pod_disruption_budgets);
  AppendAll(&out->controllers, &staged->controllers);
  AppendAll(&out->objects, &staged->objects);
  AppendAll(&out->ignored, &staged->ignored);
}

}  // namespace

// All-or-nothing: *out is only appended to when every document decodes. Errors are
// "<source>: <Kind ns/name | document N>: <field path>: <cause> (line L, column C)" or
// "<source>: malformed YAML at line L, column C: <parser message>".
Status DecodeManifests(std::string_view text, const std::string& source, Manifests* out) {
  StreamDecoder decoder(source);
  if (Status s = decoder.Run(text); !s.ok()) return s;
  AppendManifests(out, &decoder.staged());
  return absl::OkStatus();
}

Status DecodeManifestNode(const YAML::Node& doc, const std::string& source, Manifests* out) {
  StreamDecoder decoder(source);
  if (Status s = decoder.RunNode(doc); !s.ok()) return s;
  AppendManifests(out, &decoder.staged());
  return absl::OkStatus();
}

// A directory is read non-recursively; files are decoded in file-name order, each named by
// its path in messages. All-or-nothing across the files, like DecodeManifests.
Status LoadManifests(const std::string& path, Manifests* out) {
  return LoadManifests(std::vector<std::string>{path}, out);
}

Status LoadManifests(const std::vector<std::string>& paths, Manifests* out) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec) {
      return Status(absl::ErrnoToStatusCode(ec.value()), path + ": cannot read: " + ec.message());
    }
    std::vector<fs::path> dir_files;
    std::vector<fs::path>* add = &dir_files;
    if (fs::is_directory(st)) {
      std::vector<fs::path>& files = *add;
      fs::directory_iterator it(path, ec);
      for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const fs::path& p = it->path();
        const std::string ext = p.extension().string();
        std::error_code fec;
        if ((ext == ".yaml" || ext == ".yml" || ext == ".json") && it->is_regular_file(fec)) {
          files.push_back(p);
        }
      }
      if (ec) {
        return Status(absl::ErrnoToStatusCode(ec.value()), path + ": cannot read: " + ec.message());
      }
      std::sort(files.begin(), files.end(),
                [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    } else {
      add->push_back(path);
    }
    files.insert(files.end(), dir_files.begin(), dir_files.end());
  }
  Manifests staged;
  // "Kind namespace/name" -> the file that defined it: the API server refuses a second
  // object of the same name (AlreadyExists), so a duplicate is an error naming both files.
  std::map<std::string, std::string> defined_in;
  for (const fs::path& f : files) {
    StatusOr<std::string> text = ReadFile(f);
    if (!text.ok()) return text.status();
    const size_t pods = staged.pods.size(), nodes = staged.nodes.size(),
                 namespaces = staged.namespaces.size(), pcs = staged.priority_classes.size(),
                 pdbs = staged.pod_disruption_budgets.size(), objects = staged.objects.size();
    if (Status s = DecodeManifests(*text, f.string(), &staged); !s.ok()) return s;
    std::vector<std::string> keys;
    for (size_t i = pods; i < staged.pods.size(); ++i)
      keys.push_back("Pod " + staged.pods[i].Key());
    for (size_t i = nodes; i < staged.nodes.size(); ++i) {
      keys.push_back("Node " + staged.nodes[i].metadata.name);
    }
    for (size_t i = namespaces; i < staged.namespaces.size(); ++i) {
      keys.push_back("Namespace " + staged.namespaces[i].metadata.name);
    }
    for (size_t i = pcs; i < staged.priority_classes.size(); ++i) {
      keys.push_back("PriorityClass " + staged.priority_classes[i].metadata.name);
    }
    for (size_t i = pdbs; i < staged.pod_disruption_budgets.size(); ++i) {
      keys.push_back("PodDisruptionBudget " + staged.pod_disruption_budgets[i].Key());
    }
    for (size_t i = objects; i < staged.objects.size(); ++i) {
      const Unstructured& u = staged.objects[i];
      const std::string group = u.Group();
      keys.push_back(u.kind + (group.empty() ? "" : "." + group) + " " +
                     (u.metadata.namespace_.empty()
                          ? u.metadata.name
                          : u.metadata.namespace_ + "/" + u.metadata.name));
    }
    for (const std::string& k : keys) {
      auto [it, fresh] = defined_in.emplace(k, f.string());
      if (!fresh) {
        return absl::InvalidArgumentError(
            f.string() + ": " + k + ": metadata.name: Duplicate value: already defined " +
            (it->second == f.string() ? "earlier in this file" : "in " + it->second));
      }
    }
  }
  AppendManifests(out, &staged);
  return absl::OkStatus();
}

// Pods are named "<name>-<i>" (StatefulSet), "<name>-<i>-<hash>" (an Indexed Job) or
// "<name>-<hash>-<i>" with a 5-character hash of kind/namespace/name; uid "<namespace>/<pod>".
// A suspended Job gets none (the caller reports it). Besides the template's labels, each pod gets
// the label its controller would add (pod-template-hash, statefulset.kubernetes.io/pod-name
// and apps.kubernetes.io/pod-index, job-name and batch.kubernetes.io/job-name).
std::vector<Pod> ExpandController(const WorkloadController& c) {
  const std::string ns = c.metadata.namespace_.empty() ? "default" : c.metadata.namespace_;
  const std::string owner_uid =
      c.metadata.uid.empty() ? c.kind + "/" + ns + "/" + c.metadata.name : c.metadata.uid;
  const std::string hash = StableSuffix(c.kind + "/" + ns + "/" + c.metadata.name);
  std::vector<Pod> pods;
  if (c.kind == "Job" && c.suspend) return pods;
  pods.reserve(static_cast<size_t>(std::max(c.replicas, 0)));
  for (int32_t i = 0; i < c.replicas; ++i) {
    Pod p;
    p.metadata.labels = c.template_metadata.labels;
    p.metadata.annotations = c.template_metadata.annotations;
    p.metadata.namespace_ = ns;
    const std::string index = std::to_string(i);
    if (c.kind == "StatefulSet") {
      p.metadata.name = c.metadata.name + "-" + index;
      // Labels the StatefulSet controller adds to each pod.
      p.metadata.labels["statefulset.kubernetes.io/pod-name"] = p.metadata.name;
      p.metadata.labels["apps.kubernetes.io/pod-index"] = index;
    } else if (c.kind == "Job" && c.indexed) {
      // Indexed Jobs (pkg/controller/job/indexed_job_utils.go): "<job>-<index>-<random>",
      // the index in an annotation and (1.28+) a label.
      p.metadata.name = c.metadata.name + "-" + index + "-" + hash;
      p.metadata.annotations["batch.kubernetes.io/job-completion-index"] = index;
      p.metadata.labels["batch.kubernetes.io/job-completion-index"] = index;
    } else {
      p.metadata.name = c.metadata.name + "-" + hash + "-" + index;
      if (c.kind == "Deployment") p.metadata.labels["pod-template-hash"] = hash;
    }
    if (c.kind == "Job") {
      p.metadata.labels["batch.kubernetes.io/job-name"] = c.metadata.name;
      p.metadata.labels["job-name"] = c.metadata.name;
    }
    p.metadata.uid = ns + "/" + p.metadata.name;
    p.metadata.creation_timestamp = c.metadata.creation_timestamp;
    p.metadata.owner_references.push_back(
        OwnerReference{c.api_version, c.kind, c.metadata.name, owner_uid, /*controller=*/true});
    p.spec = c.template_spec;
    DefaultPodLevelResources(&p);  // SetDefaults_Pod runs on the created pod, not the template
    pods.push_back(std::move(p));
  }
  return pods;
}

bool ParseRFC3339Time(std::string_view text, Timestamp* out) { return ParseRFC3339(text, out); }

std::string FormatRFC3339(Timestamp t) {
  // Floor to whole seconds (metav1.Time drops the fraction), then the civil date
  // (H. Hinnant's civil_from_days).
  int64_t secs = t / kNanosPerSecond;
  if (t % kNanosPerSecond < 0) --secs;
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), static_cast<long long>(m), static_cast<long long>(d),
                static_cast<long long>(rem / 3600), static_cast<long long>(rem / 60 % 60),
                static_cast<long long>(rem % 60));
  return buf;
}

}  // namespace phalanx::api
