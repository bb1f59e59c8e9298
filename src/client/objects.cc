#include "client/objects.h"

#include <simdjson.h>

#include <cstdio>
#include <ctime>

#include "api/decode.h"

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
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
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

// The object's JSON without metadata.managedFields, with kind and apiVersion.
std::string Reserialize(const simdjson::dom::object& obj, const ResourceType& rt) {
  std::string out;
  out.reserve(2048);
  out += "{";
  bool has_kind = false, has_api = false;
  for (auto field : obj) {
    if (field.key == "kind") has_kind = true;
    if (field.key == "apiVersion") has_api = true;
  }
  bool first = true;
  auto sep = [&] {
    if (!first) out.push_back(',');
    first = false;
  };
  if (!has_kind) {
    sep();
    out += "\"kind\":";
    AppendEscaped(&out, rt.kind);
  }
  if (!has_api) {
    sep();
    out += "\"apiVersion\":";
    AppendEscaped(&out, rt.ApiVersion());
  }
  for (auto field : obj) {
    sep();
    AppendEscaped(&out, field.key);
    out.push_back(':');
    simdjson::dom::object meta;
    if (field.key == "metadata" && !field.value.get(meta)) {
      out.push_back('{');
      bool mfirst = true;
      for (auto mf : meta) {
        if (mf.key == "managedFields") continue;
        if (!mfirst) out.push_back(',');
        mfirst = false;
        AppendEscaped(&out, mf.key);
        out.push_back(':');
        out += simdjson::minify(mf.value);
      }
      out.push_back('}');
    } else {
      out += simdjson::minify(field.value);
    }
  }
  out += "}";
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

std::string ResourceType::CollectionPath() const {
  if (group.empty()) return "/api/" + version + "/" + resource;
  return "/apis/" + group + "/" + version + "/" + resource;
}

bool DecodeObjectElement(const simdjson::dom::element& el, const ResourceType& rt, Object* out,
                         std::string* err) {
  simdjson::dom::object obj;
  if (el.get(obj)) {
    *err = rt.Name() + ": expected a JSON object";
    return false;
  }
  const std::string id = Identity(el);
  const std::string text = Reserialize(obj, rt);
  api::Manifests m;
  api::DecodeError de;
  // DecodeManifests names the object ("Pod ns/name: field: cause"); prefix the resource.
  if (!api::DecodeManifests(text, rt.Name(), &m, &de)) {
    *err = de.message;
    return false;
  }
  Object o;
  switch (rt.target) {
    case Target::kPod:
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
    *err = rt.Name() + " " + id + ": not a " + rt.kind + " object";
    return false;
  }
  *out = std::move(o);
  return true;
}

bool DecodeObjectJson(std::string_view json, const ResourceType& rt, Object* out,
                      std::string* err) {
  simdjson::dom::element el;
  if (auto e = Parser().parse(json.data(), json.size()).get(el)) {
    *err = rt.Name() + ": malformed JSON: " + simdjson::error_message(e);
    return false;
  }
  return DecodeObjectElement(el, rt, out, err);
}

bool DecodeList(std::string_view json, const ResourceType& rt, ListPage* out, std::string* err) {
  simdjson::dom::element doc;
  if (auto e = Parser().parse(json.data(), json.size()).get(doc)) {
    *err = rt.Name() + " list: malformed JSON: " + simdjson::error_message(e);
    return false;
  }
  if (!doc.is_object()) {  // e.g. "0": items lookups below would see no document at all
    *err = rt.Name() + " list: expected a JSON object";
    return false;
  }
  simdjson::dom::element meta;
  if (!doc["metadata"].get(meta)) {
    std::string_view rv, cont;
    if (!meta["resourceVersion"].get(rv)) out->resource_version = std::string(rv);
    if (!meta["continue"].get(cont)) out->continue_token = std::string(cont);
  }
  simdjson::dom::array items;
  auto items_res = doc["items"];
  if (items_res.error() == simdjson::NO_SUCH_FIELD) return true;
  if (items_res.get(items)) {
    simdjson::dom::element it;
    if (!items_res.get(it) && it.is_null()) return true;
    *err = rt.Name() + " list: items: expected an array";
    return false;
  }
  out->items.reserve(out->items.size() + items.size());
  for (simdjson::dom::element item : items) {
    Object o;
    std::string e;
    if (DecodeObjectElement(item, rt, &o, &e)) {
      out->items.push_back(std::move(o));
    } else {
      out->skipped.push_back(std::move(e));
    }
  }
  return true;
}

bool DecodeWatchEvent(std::string_view line, const ResourceType& rt, WatchEvent* out,
                      std::string* err) {
  simdjson::dom::element doc;
  if (auto e = Parser().parse(line.data(), line.size()).get(doc)) {
    *err = rt.Name() + " watch: malformed JSON: " + simdjson::error_message(e);
    return false;
  }
  std::string_view type;
  if (doc["type"].get(type)) {
    *err = rt.Name() + " watch: event without a type";
    return false;
  }
  out->type = std::string(type);
  simdjson::dom::element obj;
  if (doc["object"].get(obj)) {
    *err = rt.Name() + " watch: " + out->type + " event without an object";
    return false;
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
    return true;
  }
  if (type == "BOOKMARK") return true;
  return DecodeObjectElement(obj, rt, &out->object, err);
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
