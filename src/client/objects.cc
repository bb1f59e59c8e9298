#include "client/objects.h"

#include <simdjson.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdio>
#include <ctime>

#include "api/decode.h"
#include "client/informer.h"
#include "client/rest_client.h"

namespace phalanx::client {

namespace {

simdjson::dom::parser& Parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

void AppendEscaped(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          *out += buf;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// A JSON value as a YAML node for the shared manifest decoder (api/decode.h), built
// directly from the parsed JSON: no text round trip through yaml-cpp's scanner, which
// cost a third of live mode's CPU (perf, 10,000 pods). Numbers keep their JSON text.
// yaml-cpp's own nesting limit (CVE-2017-5950), kept so that deep JSON is the same clear
// error as before.
constexpr int kMaxDepth = 500;

YAML::Node ToYaml(const simdjson::dom::element& el, int depth, bool* too_deep) {
  if (depth > kMaxDepth) {
    *too_deep = true;
    return YAML::Node();
  }
  switch (el.type()) {
    case simdjson::dom::element_type::ARRAY: {
      YAML::Node n(YAML::NodeType::Sequence);
      simdjson::dom::array a;
      if (el.get(a)) return n;
      for (auto c : a) {
        n.push_back(ToYaml(c, depth + 1, too_deep));
        if (*too_deep) break;
      }
      return n;
    }
    case simdjson::dom::element_type::OBJECT: {
      YAML::Node n(YAML::NodeType::Map);
      simdjson::dom::object o;
      if (el.get(o)) return n;
      for (auto f : o) {
        n[std::string(f.key)] = ToYaml(f.value, depth + 1, too_deep);
        if (*too_deep) break;
      }
      return n;
    }
    case simdjson::dom::element_type::STRING: {
      std::string_view v;
      if (el.get(v)) return YAML::Node();
      // Tagged as a quoted scalar: a JSON string stays a string (IntOrPercent reads "2"
      // as a string; YamlToJson writes it back quoted).
      YAML::Node n{std::string(v)};
      n.SetTag("!");
      return n;
    }
    case simdjson::dom::element_type::BOOL: {
      bool v = false;
      if (el.get(v)) return YAML::Node();
      return YAML::Node(v ? "true" : "false");
    }
    case simdjson::dom::element_type::NULL_VALUE:
      return YAML::Node(YAML::NodeType::Null);
    default:  // INT64, UINT64, DOUBLE
      return YAML::Node(simdjson::minify(el));
  }
}

// The object as a YAML node without metadata.managedFields, with kind and apiVersion.
YAML::Node ObjectNode(const simdjson::dom::object& obj, const ResourceType& rt, bool* too_deep) {
  YAML::Node out(YAML::NodeType::Map);
  bool has_kind = false, has_api = false;
  for (auto field : obj) {
    if (field.key == "kind") has_kind = true;
    if (field.key == "apiVersion") has_api = true;
  }
  if (!has_kind) out["kind"] = rt.kind;
  if (!has_api) out["apiVersion"] = rt.ApiVersion();
  for (auto field : obj) {
    simdjson::dom::object meta;
    if (field.key == "metadata" && !field.value.get(meta)) {
      YAML::Node m(YAML::NodeType::Map);
      for (auto mf : meta) {
        if (mf.key == "managedFields") continue;
        m[std::string(mf.key)] = ToYaml(mf.value, 2, too_deep);
      }
      out["metadata"] = m;
    } else {
      out[std::string(field.key)] = ToYaml(field.value, 1, too_deep);
    }
    if (*too_deep) break;
  }
  return out;
}

std::string Identity(const simdjson::dom::element& obj) {
  std::string_view ns, name;
  simdjson::dom::element meta;
  if (obj["metadata"].get(meta)) return "<unnamed>";
  if (meta["namespace"].get(ns)) ns = {};
  if (meta["name"].get(name)) name = {};
  std::string id = ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
  return id.empty() ? "<unnamed>" : id;
}

}  // namespace

std::string ResourceType::ListPath(size_t limit, const std::string& continue_token) const {
  std::string path = CollectionPath() + "?limit=" + std::to_string(limit);
  if (!field_selector.empty()) path += "&fieldSelector=" + UrlEncode(field_selector);
  if (!continue_token.empty()) path += "&continue=" + UrlEncode(continue_token);
  return path;
}

std::string ResourceType::CollectionPath() const {
  if (group.empty()) return "/api/" + version + "/" + resource;
  return "/apis/" + group + "/" + version + "/" + resource;
}

namespace {

// A JSON number as Go's encoding/json writes one (no leading '+', no hex, no inf/nan).
bool IsJsonNumber(const std::string& s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  if (s[i] == '0' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
    return false;
  }
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  return i == s.size();
}

void WriteJson(const YAML::Node& n, std::string* out) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      *out += '{';
      bool first = true;
      for (const auto& kv : n) {
        if (!first) *out += ',';
        first = false;
        *out += JsonString(kv.first.Scalar());
        *out += ':';
        WriteJson(kv.second, out);
      }
      *out += '}';
      return;
    }
    case YAML::NodeType::Sequence: {
      *out += '[';
      for (size_t i = 0; i < n.size(); ++i) {
        if (i) *out += ',';
        WriteJson(n[i], out);
      }
      *out += ']';
      return;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() != "!" && (s == "true" || s == "false" || s == "null" || IsJsonNumber(s))) {
        *out += s;
      } else {
        *out += JsonString(s);
      }
      return;
    }
    default:  // Null, Undefined
      *out += "null";
  }
}

}  // namespace

std::string YamlToJson(const YAML::Node& n) {
  std::string out;
  WriteJson(n, &out);
  return out;
}

std::string UnstructuredPath(const api::Unstructured& obj) {
  std::vector<ResourceType> types = CoreResources();
  for (auto& t : OptionalObjectResources()) types.push_back(std::move(t));
  // Written, never watched: the PodTemplates a ProvisioningRequest names.
  types.push_back(ResourceType{"", "v1", "podtemplates", "PodTemplate", Target::kObject, ""});
  const std::string group = obj.Group();
  for (const ResourceType& t : types) {
    if (t.kind != obj.kind || t.group != group) continue;
    const std::string version = obj.api_version.substr(obj.api_version.find('/') + 1);
    std::string base = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
    if (!obj.metadata.namespace_.empty()) base += "/namespaces/" + obj.metadata.namespace_;
    return base + "/" + t.resource + "/" + obj.metadata.name;
  }
  return "";
}

api::StatusOr<Object> DecodeObjectElement(const simdjson::dom::element& el,
                                          const ResourceType& rt) {
  simdjson::dom::object obj;
  if (el.get(obj)) {
    return absl::InvalidArgumentError(rt.Name() + ": expected a JSON object");
  }
  const std::string id = Identity(el);
  bool too_deep = false;
  const YAML::Node node = ObjectNode(obj, rt, &too_deep);
  if (too_deep) {
    return absl::InvalidArgumentError(rt.Name() + ": " + rt.kind + " " + id +
                                      ": malformed YAML: nesting deeper than " +
                                      std::to_string(kMaxDepth) + " levels");
  }
  api::Manifests m;
  // The decoder names the object ("Pod ns/name: field: cause"); prefix the resource.
  if (api::Status s = api::DecodeManifestNode(node, rt.Name(), &m); !s.ok()) return s;
  Object o;
  switch (rt.target) {
    case Target::kPod:
    case Target::kTerminalPod:
      if (m.pods.size() != 1) break;
      o.key = m.pods[0].Key();
      o.resource_version = m.pods[0].metadata.resource_version;
      o.ptr = std::make_shared<const api::Pod>(std::move(m.pods[0]));
      break;
    case Target::kNode:
      if (m.nodes.size() != 1) break;
      o.key = m.nodes[0].metadata.name;
      o.resource_version = m.nodes[0].metadata.resource_version;
      o.ptr = std::make_shared<const api::Node>(std::move(m.nodes[0]));
      break;
    case Target::kNamespace:
      if (m.namespaces.size() != 1) break;
      o.key = m.namespaces[0].metadata.name;
      o.resource_version = m.namespaces[0].metadata.resource_version;
      o.ptr = std::make_shared<const api::Namespace>(std::move(m.namespaces[0]));
      break;
    case Target::kPriorityClass:
      if (m.priority_classes.size() != 1) break;
      o.key = m.priority_classes[0].metadata.name;
      o.resource_version = m.priority_classes[0].metadata.resource_version;
      o.ptr = std::make_shared<const api::PriorityClass>(std::move(m.priority_classes[0]));
      break;
    case Target::kPodDisruptionBudget:
      if (m.pod_disruption_budgets.size() != 1) break;
      o.key = m.pod_disruption_budgets[0].Key();
      o.resource_version = m.pod_disruption_budgets[0].metadata.resource_version;
      o.ptr =
          std::make_shared<const api::PodDisruptionBudget>(std::move(m.pod_disruption_budgets[0]));
      break;
    case Target::kObject:
      if (m.objects.size() != 1) break;
      o.key = m.objects[0].metadata.namespace_.empty()
                  ? m.objects[0].metadata.name
                  : m.objects[0].metadata.namespace_ + "/" + m.objects[0].metadata.name;
      o.resource_version = m.objects[0].metadata.resource_version;
      o.ptr = std::make_shared<const api::Unstructured>(std::move(m.objects[0]));
      break;
  }
  if (!o.ptr) {
    return absl::InvalidArgumentError(rt.Name() + " " + id + ": not a " + rt.kind + " object");
  }
  return o;
}

api::StatusOr<Object> DecodeObjectJson(std::string_view json, const ResourceType& rt) {
  simdjson::dom::element el;
  if (auto e = Parser().parse(json.data(), json.size()).get(el)) {
    return absl::InvalidArgumentError(rt.Name() +
                                      ": malformed JSON: " + simdjson::error_message(e));
  }
  return DecodeObjectElement(el, rt);
}

api::Status DecodeList(std::string_view json, const ResourceType& rt, ListPage* out) {
  simdjson::dom::element doc;
  if (auto e = Parser().parse(json.data(), json.size()).get(doc)) {
    return absl::InvalidArgumentError(rt.Name() +
                                      " list: malformed JSON: " + simdjson::error_message(e));
  }
  if (!doc.is_object()) {  // e.g. "0": items lookups below would see no document at all
    return absl::InvalidArgumentError(rt.Name() + " list: expected a JSON object");
  }
  simdjson::dom::element meta;
  if (!doc["metadata"].get(meta)) {
    std::string_view rv, cont;
    if (!meta["resourceVersion"].get(rv)) out->resource_version = std::string(rv);
    if (!meta["continue"].get(cont)) out->continue_token = std::string(cont);
  }
  simdjson::dom::array items;
  auto items_res = doc["items"];
  if (items_res.error() == simdjson::NO_SUCH_FIELD) return absl::OkStatus();
  if (items_res.get(items)) {
    simdjson::dom::element it;
    if (!items_res.get(it) && it.is_null()) return absl::OkStatus();
    return absl::InvalidArgumentError(rt.Name() + " list: items: expected an array");
  }
  out->items.reserve(out->items.size() + items.size());
  for (simdjson::dom::element item : items) {
    api::StatusOr<Object> o = DecodeObjectElement(item, rt);
    if (o.ok()) {
      out->items.push_back(*std::move(o));
    } else {
      out->skipped.push_back(std::string(o.status().message()));
    }
  }
  return absl::OkStatus();
}

api::Status DecodeWatchEvent(std::string_view line, const ResourceType& rt, WatchEvent* out) {
  simdjson::dom::element doc;
  if (auto e = Parser().parse(line.data(), line.size()).get(doc)) {
    return absl::InvalidArgumentError(rt.Name() +
                                      " watch: malformed JSON: " + simdjson::error_message(e));
  }
  std::string_view type;
  if (doc["type"].get(type)) {
    return absl::InvalidArgumentError(rt.Name() + " watch: event without a type");
  }
  out->type = std::string(type);
  simdjson::dom::element obj;
  if (doc["object"].get(obj)) {
    return absl::InvalidArgumentError(rt.Name() + " watch: " + out->type +
                                      " event without an object");
  }
  std::string_view rv;
  if (!obj["metadata"]["resourceVersion"].get(rv)) out->resource_version = std::string(rv);
  if (type == "ERROR") {
    int64_t code = 0;
    std::string_view msg;
    if (obj["code"].get(code)) code = 0;
    if (obj["message"].get(msg)) msg = {};
    out->error_code = static_cast<int>(code);
    out->error_message = std::string(msg);
    return absl::OkStatus();
  }
  if (type == "BOOKMARK") return absl::OkStatus();
  api::StatusOr<Object> o = DecodeObjectElement(obj, rt);
  if (!o.ok()) return o.status();
  out->object = *std::move(o);
  return absl::OkStatus();
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendEscaped(&out, s);
  return out;
}

std::string FormatTime(api::Timestamp ns, bool micro) {
  const time_t secs = static_cast<time_t>(ns / api::kNanosPerSecond);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out = buf;
  if (micro) {
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%06lld",
                  static_cast<long long>((ns % api::kNanosPerSecond) / 1000));
    out += frac;
  }
  return out + "Z";
}

bool ParseTime(std::string_view s, api::Timestamp* out) {
  int y, mo, d, h, mi, sec;
  if (s.size() < 20 || std::sscanf(std::string(s.substr(0, 19)).c_str(), "%4d-%2d-%2dT%2d:%2d:%2d",
                                   &y, &mo, &d, &h, &mi, &sec) != 6) {
    return false;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  int64_t t = static_cast<int64_t>(timegm(&tm)) * api::kNanosPerSecond;
  size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    int64_t frac = 0, scale = api::kNanosPerSecond;
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      scale /= 10;
      frac += (s[i] - '0') * scale;
      ++i;
    }
    t += frac;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh = 0, om = 0;
    if (std::sscanf(std::string(s.substr(i + 1)).c_str(), "%2d:%2d", &oh, &om) != 2) return false;
    const int64_t off = (oh * 3600LL + om * 60LL) * api::kNanosPerSecond;
    t += s[i] == '+' ? -off : off;
  } else if (i >= s.size() || (s[i] != 'Z' && s[i] != 'z')) {
    return false;
  }
  *out = t;
  return true;
}

}  // namespace phalanx::client
