// Schema validation as kube-apiserver applies it to writes. Sources of the rules:
//   - built-in types: the OpenAPI v3 documents (k8s.io/kube-openapi), decoded as
//     k8s.io/apimachinery's strict JSON decoding does (unknown fields refused, null leaves
//     a field unset, RawExtension / FieldsV1 / Patch free-form);
//   - CRDs: apiextensions-apiserver's structural schemas (pkg/apiserver/schema: pruning,
//     nullable, x-kubernetes-preserve-unknown-fields, -int-or-string, -embedded-resource;
//     objectmeta.Validate for metadata) and its OpenAPI value validations
//     (pkg/apiserver/validation, kube-openapi's validate package);
//   - list semantics: x-kubernetes-list-type map / set (structured-merge-diff, the API
//     server's "Duplicate value" errors);
//   - strategic merge patches: k8s.io/apimachinery/pkg/util/strategicpatch (directives,
//     merge keys).
#include "schema/schema.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "absl/functional/function_ref.h"

namespace phalanx::schema {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::string_view kRefPrefix = "#/components/schemas/";
constexpr std::string_view kObjectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
constexpr std::string_view kQuantity = "io.k8s.apimachinery.pkg.api.resource.Quantity";

// Built-in schemas whose OpenAPI form is an object without properties but whose Go type
// takes any JSON (runtime.RawExtension, metav1.FieldsV1, metav1.Patch). Every other
// property-less object (e.g. scheduling v1alpha2 BasicSchedulingPolicy, an empty struct)
// takes no fields.
bool FreeFormBuiltin(std::string_view ref) {
  return ref == "io.k8s.apimachinery.pkg.runtime.RawExtension" ||
         ref == "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1" ||
         ref == "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
}

// Enums and patterns the API server's validation code enforces on built-in types, which
// their OpenAPI documents do not carry (k8s.io/api types marked +enum; validation
// functions named per entry). Keyed by (component schema, property).
struct BuiltinRule {
  std::vector<std::string> values;  // allowed values (empty: any)
  std::string pattern;              // ECMAScript regex the value must match (empty: any)
  size_t max_length = 0;            // 0: unbounded
  std::string source;
};
const std::map<std::pair<std::string, std::string>, BuiltinRule>& BuiltinRules() {
  static const auto* rules = new std::map<std::pair<std::string, std::string>, BuiltinRule>{
      // core/v1 ConditionStatus (+enum): ConditionTrue, ConditionFalse, ConditionUnknown.
      {{"io.k8s.api.core.v1.PodCondition", "status"},
       {{"True", "False", "Unknown"}, "", 0, "k8s.io/api core/v1 ConditionStatus"}},
      // core/v1 PodPhase (+enum).
      {{"io.k8s.api.core.v1.PodStatus", "phase"},
       {{"Pending", "Running", "Succeeded", "Failed", "Unknown"},
        "",
        0,
        "k8s.io/api core/v1 PodPhase"}},
      // core/v1 EventTypeNormal / EventTypeWarning; pkg/apis/core/validation/events.go
      // refuses other types.
      {{"io.k8s.api.core.v1.Event", "type"},
       {{"Normal", "Warning"}, "", 0, "pkg/apis/core/validation/events.go"}},
      {{"io.k8s.api.events.v1.Event", "type"},
       {{"Normal", "Warning"}, "", 0, "pkg/apis/core/validation/events.go"}},
      // metav1.Condition: apimachinery/pkg/apis/meta/v1/validation ValidateCondition.
      {{"io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "status"},
       {{"True", "False", "Unknown"}, "", 0, "apimachinery meta/v1/validation ValidateCondition"}},
      {{"io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "reason"},
       {{},
        "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        1024,
        "apimachinery meta/v1/validation ValidateCondition"}},
      {{"io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "message"},
       {{}, "", 32768, "apimachinery meta/v1/validation ValidateCondition"}},
  };
  return *rules;
}

// k8s.io/apimachinery/pkg/api/resource quantity syntax (the pattern the CRD generators
// emit for resource.Quantity).
const std::regex& QuantityRegex() {
  static const std::regex re(
      R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)");
  return re;
}
// RFC 3339 as Go's time.Parse(time.RFC3339 / RFC3339Nano) accepts it (metav1.Time and
// MicroTime; strfmt date-time for CRDs).
const std::regex& DateTimeRegex() {
  static const std::regex re(
      R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$)");
  return re;
}
const std::regex& Base64Regex() {
  static const std::regex re(R"(^[A-Za-z0-9+/]*={0,2}$)");
  return re;
}

// Compiled schema patterns, shared by every validation (std::regex compiles slowly).
// nullptr for a pattern ECMAScript cannot compile (Go RE2 syntax it lacks).
const std::regex* CompiledPattern(const std::string& pattern) {
  static absl::Mutex mu;
  static auto* cache = new std::map<std::string, std::unique_ptr<std::regex>>();
  absl::MutexLock l(&mu);
  auto it = cache->find(pattern);
  if (it == cache->end()) {
    std::unique_ptr<std::regex> re;
    try {
      re = std::make_unique<std::regex>(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
    }
    it = cache->emplace(pattern, std::move(re)).first;
  }
  return it->second.get();
}

std::string JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "value";
  }
}

bool TypeMatches(const std::string& type, const json& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  return true;  // an unknown type name: nothing to check
}

std::string Short(const json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

bool BoolAt(const json& node, const char* key) {
  auto it = node.find(key);
  return it != node.end() && it->is_boolean() && it->get<bool>();
}

const json* At(const json& node, const char* key) {
  if (!node.is_object()) return nullptr;
  auto it = node.find(key);
  return it == node.end() ? nullptr : &*it;
}

size_t Utf8Length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Child(const std::string& path, const std::string& field) {
  return path.empty() ? field : path + "." + field;
}

}  // namespace

// ---- Loaded schemas ----

struct Doc {
  json root;
  const json* schemas = nullptr;  // components.schemas
  std::string path;
};

struct SchemaSet::Kind {
  GroupVersionKind gvk;
  bool crd = false;
  const json* schema = nullptr;
  const Doc* doc = nullptr;  // built-in: the document its $refs resolve in
  std::string ref;           // built-in: its component name
  std::string source;
};

struct SchemaSet::Impl {
  std::vector<std::unique_ptr<Doc>> docs;
  std::vector<std::unique_ptr<json>> crds;
  const Doc* meta_doc = nullptr;  // a document defining ObjectMeta (for CRD metadata)
  mutable absl::Mutex mu;
  std::map<GroupVersionKind, Kind> kinds ABSL_GUARDED_BY(mu);
  struct LazyFile {
    std::string path;
    bool loaded = false;
    std::string error;
  };
  // CRD files by the API group their name declares, loaded on first use.
  std::multimap<std::string, LazyFile> lazy ABSL_GUARDED_BY(mu);

  absl::Status AddCrdLocked(const json& crd, const std::string& source)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  absl::Status AddCrdFileLocked(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void LoadLazyLocked(const std::string& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

SchemaSet::SchemaSet() : impl_(std::make_unique<Impl>()) {}
SchemaSet::~SchemaSet() = default;

GroupVersionKind GroupVersionKind::FromObject(const json& obj) {
  GroupVersionKind g;
  if (!obj.is_object()) return g;
  if (const json* av = At(obj, "apiVersion"); av && av->is_string()) {
    const std::string s = av->get<std::string>();
    const auto slash = s.find('/');
    if (slash == std::string::npos) {
      g.version = s;
    } else {
      g.group = s.substr(0, slash);
      g.version = s.substr(slash + 1);
    }
  }
  if (const json* k = At(obj, "kind"); k && k->is_string()) g.kind = k->get<std::string>();
  return g;
}

absl::StatusOr<GroupVersionKind> GroupVersionKind::Parse(std::string_view s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t slash = s.find('/', start);
    parts.emplace_back(s.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  GroupVersionKind g;
  if (parts.size() == 2) {
    g.version = parts[0];
    g.kind = parts[1];
  } else if (parts.size() == 3) {
    g.group = parts[0];
    g.version = parts[1];
    g.kind = parts[2];
  }
  if (g.version.empty() || g.kind.empty()) {
    return absl::InvalidArgumentError("group-version-kind \"" + std::string(s) +
                                      "\": want group/version/Kind (v1/Pod for the core group)");
  }
  return g;
}

std::string Result::ToString() const {
  std::string out;
  for (const auto& v : violations) out += v.ToString() + "\n";
  return out;
}

absl::Status SchemaSet::AddOpenApiDocument(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(path + ": cannot read");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(path + ": " + e.what());
  }
  return AddOpenApi(std::move(root), path);
}

absl::Status SchemaSet::AddOpenApi(json root, const std::string& path) {
  auto doc = std::make_unique<Doc>();
  doc->path = path;
  doc->root = std::move(root);
  const json* comp = At(doc->root, "components");
  doc->schemas = comp ? At(*comp, "schemas") : nullptr;
  if (!doc->schemas || !doc->schemas->is_object()) {
    return absl::InvalidArgumentError(path +
                                      ": not an OpenAPI v3 document (no components.schemas)");
  }
  absl::MutexLock l(&impl_->mu);
  for (const auto& [name, s] : doc->schemas->items()) {
    const json* gvks = At(s, "x-kubernetes-group-version-kind");
    if (!gvks || !gvks->is_array()) continue;
    for (const auto& g : *gvks) {
      Kind k;
      k.gvk.group = g.value("group", "");
      k.gvk.version = g.value("version", "");
      k.gvk.kind = g.value("kind", "");
      // The meta/v1 kinds (DeleteOptions, WatchEvent, Status ...) repeat in every document;
      // the first one wins.
      if (impl_->kinds.count(k.gvk)) continue;
      k.schema = &s;
      k.doc = doc.get();
      k.ref = name;
      k.source = path;
      impl_->kinds.emplace(k.gvk, std::move(k));
    }
  }
  if (!impl_->meta_doc && doc->schemas->contains(std::string(kObjectMeta))) {
    impl_->meta_doc = doc.get();
  }
  impl_->docs.push_back(std::move(doc));
  return absl::OkStatus();
}

absl::Status SchemaSet::AddOpenApiDir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return absl::NotFoundError(dir + ": no such directory");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    if (auto s = AddOpenApiDocument(f); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SchemaSet::Impl::AddCrdLocked(const json& crd, const std::string& source) {
  if (!crd.is_object() || crd.value("kind", "") != "CustomResourceDefinition") {
    return absl::InvalidArgumentError(source + ": not a CustomResourceDefinition");
  }
  auto owned = std::make_unique<json>(crd);
  const json* spec = At(*owned, "spec");
  const json* names = spec ? At(*spec, "names") : nullptr;
  const json* versions = spec ? At(*spec, "versions") : nullptr;
  if (!spec || !names || !versions || !versions->is_array()) {
    return absl::InvalidArgumentError(source + ": CustomResourceDefinition " +
                                      crd["metadata"].value("name", "") +
                                      ": spec.group, spec.names.kind or spec.versions missing");
  }
  const std::string group = spec->value("group", "");
  const std::string kind = names->value("kind", "");
  for (const auto& v : *versions) {
    const json* sch = At(v, "schema");
    const json* root = sch ? At(*sch, "openAPIV3Schema") : nullptr;
    if (!root || !v.value("served", true)) continue;
    Kind k;
    k.gvk = {group, v.value("name", ""), kind};
    k.crd = true;
    k.schema = root;
    k.source = source;
    kinds[k.gvk] = std::move(k);
  }
  crds.push_back(std::move(owned));
  return absl::OkStatus();
}

absl::Status SchemaSet::AddCrd(const json& crd, const std::string& source) {
  absl::MutexLock l(&impl_->mu);
  return impl_->AddCrdLocked(crd, source);
}

namespace {

// The target of a git symbolic link checked out as a text file (core.symlinks=false, or a
// copy that lost the link): the file's whole content is a relative path. "" otherwise.
std::string SymlinkText(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || size == 0 || size > 1024) return "";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.find_first_of(":\n {}") != std::string::npos) return "";
  const fs::path p(text);
  if (p.is_absolute() || (p.extension() != ".yaml" && p.extension() != ".yml")) return "";
  return text;
}

}  // namespace

absl::Status SchemaSet::Impl::AddCrdFileLocked(const std::string& path) {
  std::string file = path;
  if (const std::string link = SymlinkText(path); !link.empty()) {
    const fs::path target = fs::path(path).parent_path() / link;
    std::error_code ec;
    if (!fs::exists(target, ec)) {
      return absl::NotFoundError(path + " is a git symbolic link checked out as text, to " + link +
                                 ", which does not exist (" + target.lexically_normal().string() +
                                 "): the CRD is missing from this copy");
    }
    file = target.string();
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAllFromFile(file);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(file + ": " + e.what());
  }
  bool any = false;
  for (const auto& d : docs) {
    if (!d.IsMap()) continue;
    const json j = YamlToJson(d);
    if (j.value("kind", "") != "CustomResourceDefinition") continue;
    if (auto s = AddCrdLocked(j, file); !s.ok()) return s;
    any = true;
  }
  if (!any) return absl::InvalidArgumentError(file + ": no CustomResourceDefinition in it");
  return absl::OkStatus();
}

absl::Status SchemaSet::AddCrdFile(const std::string& path) {
  absl::MutexLock l(&impl_->mu);
  return impl_->AddCrdFileLocked(path);
}

absl::Status SchemaSet::AddCrdDir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return absl::NotFoundError(dir + ": no such directory");
  std::vector<std::string> files;
  for (const auto& e :
       fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink)) {
    const auto ext = e.path().extension();
    if (ext == ".yaml" || ext == ".yml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  absl::MutexLock l(&impl_->mu);
  for (const auto& f : files) {
    const std::string name = fs::path(f).filename().string();
    const auto us = name.find('_');
    const std::string group = us == std::string::npos ? "" : name.substr(0, us);
    if (group.find('.') != std::string::npos) {
      impl_->lazy.emplace(group, Impl::LazyFile{f, false, ""});
      continue;
    }
    if (auto s = impl_->AddCrdFileLocked(f); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void SchemaSet::Impl::LoadLazyLocked(const std::string& group) {
  auto [b, e] = lazy.equal_range(group);
  for (auto it = b; it != e; ++it) {
    if (it->second.loaded) continue;
    it->second.loaded = true;
    if (auto s = AddCrdFileLocked(it->second.path); !s.ok()) {
      it->second.error = std::string(s.message());
    }
  }
}

const SchemaSet::Kind* SchemaSet::Find(const GroupVersionKind& gvk, std::string* load_error) const {
  absl::MutexLock l(&impl_->mu);
  impl_->LoadLazyLocked(gvk.group);
  auto it = impl_->kinds.find(gvk);
  if (it != impl_->kinds.end()) return &it->second;
  if (load_error) {
    auto [b, e] = impl_->lazy.equal_range(gvk.group);
    for (auto lf = b; lf != e; ++lf) {
      if (!lf->second.error.empty())
        *load_error += (load_error->empty() ? "" : "; ") + lf->second.error;
    }
  }
  return nullptr;
}

bool SchemaSet::Has(const GroupVersionKind& gvk) const { return Find(gvk, nullptr) != nullptr; }

std::vector<GroupVersionKind> SchemaSet::Kinds() const {
  absl::MutexLock l(&impl_->mu);
  std::set<std::string> groups;
  for (const auto& [g, f] : impl_->lazy) groups.insert(g);
  for (const auto& g : groups) impl_->LoadLazyLocked(g);
  std::vector<GroupVersionKind> out;
  for (const auto& [g, k] : impl_->kinds) out.push_back(g);
  return out;
}

std::string SchemaSet::SourceOf(const GroupVersionKind& gvk) const {
  const Kind* k = Find(gvk, nullptr);
  return k ? k->source : "";
}

// ---- Validation ----

namespace {

// A schema node as validation sees it: the node, its $ref target and (built-in) allOf
// members, flattened. `crd` selects structural-schema semantics.
struct Part {
  const json* node;
  const Doc* doc;
};
struct View {
  std::vector<Part> parts;
  std::string ref;  // the component name reached through $ref (built-in types)
  bool crd = false;
  bool empty() const { return parts.empty(); }
};

void AddResolved(View* v, const json* node, const Doc* doc, int depth) {
  if (!node || !node->is_object() || depth > 32) return;
  v->parts.push_back({node, doc});
  if (const json* r = At(*node, "$ref"); r && r->is_string() && doc && doc->schemas) {
    std::string name = r->get<std::string>();
    if (name.rfind(kRefPrefix, 0) == 0) name = name.substr(kRefPrefix.size());
    auto it = doc->schemas->find(name);
    if (it != doc->schemas->end()) {
      v->ref = name;
      AddResolved(v, &*it, doc, depth + 1);
    }
  }
  // Built-in documents wrap every $ref in allOf; for CRDs allOf is a value validation
  // (structural schemas define the fields outside it).
  if (!v->crd) {
    if (const json* a = At(*node, "allOf"); a && a->is_array()) {
      for (const auto& m : *a) AddResolved(v, &m, doc, depth + 1);
    }
  }
}

View Resolve(const json* node, const Doc* doc, bool crd) {
  View v;
  v.crd = crd;
  AddResolved(&v, node, doc, 0);
  return v;
}

// The view of property `name` (of `additionalProperties` when name is null, of `items`
// for kItems) across the parts of `v`.
enum class Sub { kProperty, kAdditional, kItems };
View SubView(const View& v, Sub sub, const std::string& name = "") {
  View out;
  out.crd = v.crd;
  for (const auto& p : v.parts) {
    const json* child = nullptr;
    if (sub == Sub::kProperty) {
      const json* props = At(*p.node, "properties");
      child = props ? At(*props, name.c_str()) : nullptr;
    } else if (sub == Sub::kAdditional) {
      child = At(*p.node, "additionalProperties");
      if (child && !child->is_object()) child = nullptr;
    } else {
      child = At(*p.node, "items");
    }
    if (child) {
      View c = Resolve(child, p.doc, v.crd);
      if (!c.ref.empty()) out.ref = c.ref;
      out.parts.insert(out.parts.end(), c.parts.begin(), c.parts.end());
    }
  }
  return out;
}

bool AnyBool(const View& v, const char* key) {
  for (const auto& p : v.parts) {
    if (BoolAt(*p.node, key)) return true;
  }
  return false;
}

std::vector<std::string> Types(const View& v) {
  std::vector<std::string> out;
  for (const auto& p : v.parts) {
    if (const json* t = At(*p.node, "type"); t && t->is_string()) {
      const std::string s = t->get<std::string>();
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
  }
  return out;
}

bool IntOrString(const View& v) {
  for (const auto& p : v.parts) {
    if (BoolAt(*p.node, "x-kubernetes-int-or-string")) return true;
    if (const json* f = At(*p.node, "format"); f && f->is_string() && *f == "int-or-string") {
      return true;
    }
  }
  return false;
}

bool HasProperties(const View& v) {
  for (const auto& p : v.parts) {
    if (At(*p.node, "properties")) return true;
  }
  return false;
}

std::set<std::string> Required(const View& v) {
  std::set<std::string> out;
  for (const auto& p : v.parts) {
    if (const json* r = At(*p.node, "required"); r && r->is_array()) {
      for (const auto& n : *r) {
        if (n.is_string()) out.insert(n.get<std::string>());
      }
    }
  }
  return out;
}

std::string StringAt(const View& v, const char* key) {
  for (const auto& p : v.parts) {
    if (const json* s = At(*p.node, key); s && s->is_string()) return s->get<std::string>();
  }
  return "";
}

std::vector<std::string> StringsAt(const View& v, const char* key) {
  for (const auto& p : v.parts) {
    if (const json* s = At(*p.node, key); s && s->is_array()) {
      std::vector<std::string> out;
      for (const auto& x : *s) {
        if (x.is_string()) out.push_back(x.get<std::string>());
      }
      return out;
    }
  }
  return {};
}

bool HasDefault(const View& v) {
  for (const auto& p : v.parts) {
    if (At(*p.node, "default")) return true;
  }
  return false;
}

// One failed value check's message; ValuesOf's callers keep the first or record each.
using ValueFailure = absl::FunctionRef<void(std::string)>;

// The string checks of one schema node on the string `v`: pattern (a pattern std::regex
// cannot compile is counted in out->patterns_not_evaluated, not failed), maxLength /
// minLength in UTF-8 code points, format date-time (RFC 3339) and byte (base64), as
// kube-openapi's validate package does (k8s.io/kube-openapi/pkg/validation/validate).
void StringValues(const json& node, const json& v, Result* out, ValueFailure fail) {
  const std::string& s = v.get_ref<const std::string&>();
  if (const json* p = At(node, "pattern"); p && p->is_string()) {
    const std::regex* re = CompiledPattern(p->get<std::string>());
    if (!re) {
      ++out->patterns_not_evaluated;
    } else if (!std::regex_search(s, *re)) {
      fail("value " + Short(v) + " does not match the pattern " + p->get<std::string>());
    }
  }
  const size_t len = Utf8Length(s);
  if (const json* m = At(node, "maxLength"); m && m->is_number() && len > m->get<double>()) {
    fail("may not be longer than " + m->dump() + " characters");
  }
  if (const json* m = At(node, "minLength"); m && m->is_number() && len < m->get<double>()) {
    fail("must be at least " + m->dump() + " characters long");
  }
  if (const json* f = At(node, "format"); f && f->is_string()) {
    if (*f == "date-time" && !std::regex_match(s, DateTimeRegex())) {
      fail("value " + Short(v) + " is not an RFC 3339 date-time");
    } else if (*f == "byte" && (s.size() % 4 != 0 || !std::regex_match(s, Base64Regex()))) {
      fail("value is not base64");
    }
  }
}

// The number checks of one schema node on the number `v`: int32 / int64 formats, minimum
// / maximum (exclusive or not), multipleOf (to 1e-9).
void NumberValues(const json& node, const json& v, ValueFailure fail) {
  const double d = v.get<double>();
  if (const json* f = At(node, "format"); f && f->is_string() && v.is_number_integer()) {
    if (*f == "int32") {
      const bool in_range = v.is_number_unsigned()
                                ? v.get<uint64_t>() <= std::numeric_limits<int32_t>::max()
                                : v.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                                      v.get<int64_t>() <= std::numeric_limits<int32_t>::max();
      if (!in_range) fail("value " + v.dump() + " does not fit in int32");
    } else if (*f == "int64" && v.is_number_unsigned() &&
               v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail("value " + v.dump() + " does not fit in int64");
    }
  }
  if (const json* m = At(node, "minimum"); m && m->is_number()) {
    const bool excl = BoolAt(node, "exclusiveMinimum");
    if (excl ? d <= m->get<double>() : d < m->get<double>()) {
      fail("must be greater than " + std::string(excl ? "" : "or equal to ") + m->dump());
    }
  }
  if (const json* m = At(node, "maximum"); m && m->is_number()) {
    const bool excl = BoolAt(node, "exclusiveMaximum");
    if (excl ? d >= m->get<double>() : d > m->get<double>()) {
      fail("must be less than " + std::string(excl ? "" : "or equal to ") + m->dump());
    }
  }
  if (const json* m = At(node, "multipleOf"); m && m->is_number() && m->get<double>() != 0) {
    const double q = d / m->get<double>();
    if (std::fabs(q - std::round(q)) > 1e-9) fail("must be a multiple of " + m->dump());
  }
}

// The size checks of one schema node on an array (maxItems, minItems, uniqueItems) or an
// object (maxProperties, minProperties) `v`.
void SizeValues(const json& node, const json& v, ValueFailure fail) {
  if (v.is_array()) {
    if (const json* m = At(node, "maxItems"); m && m->is_number() && v.size() > m->get<double>()) {
      fail("must have at most " + m->dump() + " items");
    }
    if (const json* m = At(node, "minItems"); m && m->is_number() && v.size() < m->get<double>()) {
      fail("must have at least " + m->dump() + " items");
    }
    if (BoolAt(node, "uniqueItems")) {
      for (size_t i = 0; i < v.size(); ++i) {
        for (size_t j = i + 1; j < v.size(); ++j) {
          if (v[i] == v[j]) fail("duplicate item " + Short(v[j]) + " (uniqueItems)");
        }
      }
    }
  }
  if (v.is_object()) {
    if (const json* m = At(node, "maxProperties");
        m && m->is_number() && v.size() > m->get<double>()) {
      fail("must have at most " + m->dump() + " properties");
    }
    if (const json* m = At(node, "minProperties");
        m && m->is_number() && v.size() < m->get<double>()) {
      fail("must have at least " + m->dump() + " properties");
    }
  }
}

class Validator {
 public:
  Validator(const SchemaSet::Impl& impl, Result* out) : impl_(impl), out_(out) {}

  void Walk(const json& v, const View& view, const std::string& path, WriteKind mode,
            bool null_deletes, const BuiltinRule* rule = nullptr);
  void WalkRoot(const json& v, const SchemaSet::Kind& k, WriteKind mode);

 private:
  void Add(const std::string& path, std::string msg) {
    out_->violations.push_back({path, std::move(msg)});
  }
  // Value-level checks of one schema node (no field-name checks); returns false and sets
  // *why at the first failure when `why` is given, else records violations.
  bool Values(const json& node, const json& v, const std::string& path, std::string* why);
  bool Branch(const json& node, const json& v, std::string* why);
  // anyOf / oneOf / allOf (value-only branches) / not of one schema node, each branch
  // checked through Branch.
  void CombinatorValues(const json& node, const json& v, ValueFailure fail);
  void WalkObject(const json& v, const View& view, const std::string& path, WriteKind mode,
                  bool implicit_meta);
  void WalkArray(const json& v, const View& view, const std::string& path, WriteKind mode);
  View ObjectMetaView() const {
    if (!impl_.meta_doc) return View{};
    auto it = impl_.meta_doc->schemas->find(std::string(kObjectMeta));
    View mv = Resolve(&*it, impl_.meta_doc, false);
    mv.ref = std::string(kObjectMeta);
    return mv;
  }

  const SchemaSet::Impl& impl_;
  Result* out_;
};

bool Validator::Branch(const json& node, const json& v, std::string* why) {
  if (!Values(node, v, "", why)) return false;
  // Nested value validations of the branch (its properties and items).
  if (v.is_object()) {
    if (const json* props = At(node, "properties")) {
      for (const auto& [k, child] : props->items()) {
        auto it = v.find(k);
        if (it != v.end() && !it->is_null() && !Branch(child, *it, why)) {
          if (why) *why = k + ": " + *why;
          return false;
        }
      }
    }
  }
  if (v.is_array()) {
    if (const json* items = At(node, "items")) {
      for (size_t i = 0; i < v.size(); ++i) {
        if (!Branch(*items, v[i], why)) {
          if (why) *why = "[" + std::to_string(i) + "]: " + *why;
          return false;
        }
      }
    }
  }
  return true;
}

void Validator::CombinatorValues(const json& node, const json& v, ValueFailure fail) {
  // Combinators as value validations. Built-in documents use oneOf only for Quantity and
  // IntOrString; CRDs use anyOf with int-or-string and value-only allOf / oneOf / not.
  if (const json* any = At(node, "anyOf"); any && any->is_array() && !any->empty()) {
    bool matched = false;
    std::string first;
    for (const auto& b : *any) {
      std::string w;
      if (Branch(b, v, &w)) {
        matched = true;
        break;
      }
      if (first.empty()) first = w;
    }
    if (!matched) fail("matches none of anyOf: " + first);
  }
  if (const json* one = At(node, "oneOf"); one && one->is_array() && !one->empty()) {
    int matched = 0;
    for (const auto& b : *one) {
      std::string w;
      matched += Branch(b, v, &w);
    }
    if (matched != 1) {
      fail(matched == 0 ? "matches none of oneOf" : "matches more than one of oneOf");
    }
  }
  if (At(node, "$ref") == nullptr) {
    if (const json* all = At(node, "allOf"); all && all->is_array()) {
      for (const auto& b : *all) {
        std::string w;
        if (b.contains("$ref")) continue;  // built-in: resolved structurally
        if (!Branch(b, v, &w)) fail("allOf: " + w);
      }
    }
  }
  if (const json* n = At(node, "not"); n && n->is_object()) {
    std::string w;
    if (Branch(*n, v, &w)) fail("must not match the schema under \"not\"");
  }
}

bool Validator::Values(const json& node, const json& v, const std::string& path, std::string* why) {
  bool ok = true;
  auto fail = [&](std::string msg) {
    ok = false;
    if (why) {
      if (why->empty()) *why = std::move(msg);
    } else {
      Add(path, std::move(msg));
    }
  };
  if (!node.is_object()) return true;
  if (const json* t = At(node, "type"); t && t->is_string() && !TypeMatches(*t, v)) {
    if (!(BoolAt(node, "x-kubernetes-int-or-string") && (v.is_string() || v.is_number_integer()))) {
      fail("must be of type " + t->get<std::string>() + ", got " + JsonTypeName(v));
      return false;
    }
  }
  if (const json* e = At(node, "enum"); e && e->is_array()) {
    if (std::find(e->begin(), e->end(), v) == e->end()) {
      std::string allowed;
      for (const auto& x : *e) allowed += (allowed.empty() ? "" : ", ") + x.dump();
      fail("unsupported value " + Short(v) + ": supported values: " + allowed);
    }
  }
  if (v.is_string()) StringValues(node, v, out_, fail);
  if (v.is_number()) NumberValues(node, v, fail);
  SizeValues(node, v, fail);
  if (const json* c = At(node, "x-kubernetes-validations"); c && c->is_array() && !why) {
    out_->cel_rules_not_evaluated += static_cast<int>(c->size());
  }
  CombinatorValues(node, v, fail);
  if (v.is_object() && why) {
    if (const json* r = At(node, "required"); r && r->is_array()) {
      for (const auto& f : *r) {
        if (f.is_string() && !v.contains(f.get<std::string>())) {
          fail("required field \"" + f.get<std::string>() + "\" missing");
        }
      }
    }
  }
  return ok;
}

void Validator::Walk(const json& v, const View& view, const std::string& path, WriteKind mode,
                     bool null_deletes, const BuiltinRule* rule) {
  ++out_->values_checked;
  if (view.empty()) return;
  if (v.is_null()) {
    if (null_deletes && mode != WriteKind::kObject) return;  // a patch deletes the field
    if (!view.crd) return;                                   // Go's decoder leaves the field unset
    if (AnyBool(view, "nullable")) return;
    Add(path, "must not be null: the field is not nullable, so the API server prunes the null");
    return;
  }
  const bool ios = IntOrString(view);
  if (ios) {
    if (!v.is_string() && !v.is_number_integer()) {
      Add(path, "must be an integer or a string (int-or-string), got " + JsonTypeName(v));
      return;
    }
  } else {
    for (const auto& t : Types(view)) {
      if (!TypeMatches(t, v)) {
        Add(path, "must be of type " + t + ", got " + JsonTypeName(v) + " " + Short(v));
        return;
      }
    }
  }
  for (const auto& p : view.parts) {
    if (ios) {
      // The type check above covered int-or-string; the remaining rules still apply.
      json node = *p.node;
      node.erase("type");
      Values(node, v, path, nullptr);
    } else {
      Values(*p.node, v, path, nullptr);
    }
  }
  if (view.ref == kQuantity && v.is_string() &&
      !std::regex_match(v.get_ref<const std::string&>(), QuantityRegex())) {
    Add(path, "quantity " + Short(v) + " does not match the quantity syntax");
  }
  if (rule) {
    if (!rule->values.empty() && v.is_string() &&
        std::find(rule->values.begin(), rule->values.end(), v.get<std::string>()) ==
            rule->values.end()) {
      std::string allowed;
      for (const auto& x : rule->values) allowed += (allowed.empty() ? "\"" : ", \"") + x + "\"";
      Add(path, "unsupported value " + Short(v) + ": supported values: " + allowed + " (" +
                    rule->source + ")");
    }
    if (!rule->pattern.empty() && v.is_string() &&
        !std::regex_match(v.get<std::string>(), std::regex(rule->pattern))) {
      Add(path,
          "value " + Short(v) + " does not match " + rule->pattern + " (" + rule->source + ")");
    }
    if (rule->max_length && v.is_string() && Utf8Length(v.get<std::string>()) > rule->max_length) {
      Add(path, "may not be longer than " + std::to_string(rule->max_length) + " characters (" +
                    rule->source + ")");
    }
  }
  if (v.is_object()) {
    WalkObject(v, view, path, mode, view.crd && AnyBool(view, "x-kubernetes-embedded-resource"));
  } else if (v.is_array()) {
    WalkArray(v, view, path, mode);
  }
}

void Validator::WalkObject(const json& v, const View& view, const std::string& path, WriteKind mode,
                           bool implicit_meta) {
  const bool has_props = HasProperties(view);
  View additional = SubView(view, Sub::kAdditional);
  bool additional_any = false;
  for (const auto& p : view.parts) {
    if (BoolAt(*p.node, "additionalProperties")) additional_any = true;
  }
  const bool preserve = view.crd && AnyBool(view, "x-kubernetes-preserve-unknown-fields");
  const bool free_form =
      preserve || additional_any ||
      (!view.crd && !has_props && additional.empty() && FreeFormBuiltin(view.ref));
  if (mode == WriteKind::kObject) {
    for (const auto& r : Required(view)) {
      auto it = v.find(r);
      if (it == v.end() || it->is_null()) Add(Child(path, r), "required field missing");
    }
    if (implicit_meta) {
      for (const char* r : {"apiVersion", "kind"}) {
        if (!v.contains(r)) Add(Child(path, r), "required field missing (embedded resource)");
      }
    }
  }
  for (const auto& [key, child] : v.items()) {
    const std::string cpath = Child(path, key);
    if (mode == WriteKind::kStrategicMergePatch && !key.empty() && key[0] == '$') {
      ++out_->values_checked;
      if (key == "$patch") {
        if (!child.is_string() || (child != "replace" && child != "merge" && child != "delete")) {
          Add(cpath, "$patch must be \"replace\", \"merge\" or \"delete\"");
        }
      } else if (key == "$retainKeys") {
        if (!child.is_array()) Add(cpath, "$retainKeys must be a list of field names");
      } else if (key.rfind("$setElementOrder/", 0) == 0 ||
                 key.rfind("$deleteFromPrimitiveList/", 0) == 0) {
        const std::string list = key.substr(key.find('/') + 1);
        if (SubView(view, Sub::kProperty, list).empty()) {
          Add(cpath, "directive names the unknown field \"" + list + "\"");
        } else if (!child.is_array()) {
          Add(cpath, "directive value must be a list");
        }
      } else {
        Add(cpath, "unknown strategic merge patch directive");
      }
      continue;
    }
    if (implicit_meta) {
      if (key == "apiVersion" || key == "kind") {
        ++out_->values_checked;
        if (!child.is_string()) Add(cpath, "must be of type string, got " + JsonTypeName(child));
        continue;
      }
      if (key == "metadata") {
        Walk(child, ObjectMetaView(), cpath, mode, true);
        continue;
      }
    }
    View cv = SubView(view, Sub::kProperty, key);
    if (!cv.empty()) {
      const BuiltinRule* rule = nullptr;
      if (!view.crd && !view.ref.empty()) {
        auto it = BuiltinRules().find({view.ref, key});
        if (it != BuiltinRules().end()) rule = &it->second;
      }
      Walk(child, cv, cpath, mode, /*null_deletes=*/true, rule);
      continue;
    }
    if (!additional.empty()) {
      Walk(child, additional, path + "[" + key + "]", mode, /*null_deletes=*/true);
      continue;
    }
    if (free_form) {
      ++out_->values_checked;
      continue;
    }
    Add(cpath, "unknown field \"" + key + "\"" +
                   (view.crd ? " (the CRD's schema has no such field: the API server prunes it)"
                             : " (strict decoding refuses it; otherwise the API server drops it)"));
  }
}

void Validator::WalkArray(const json& v, const View& view, const std::string& path,
                          WriteKind mode) {
  const View items = SubView(view, Sub::kItems);
  const std::string strategy = StringAt(view, "x-kubernetes-patch-strategy");
  const std::string merge_key = StringAt(view, "x-kubernetes-patch-merge-key");
  const bool merging =
      mode == WriteKind::kStrategicMergePatch && strategy.find("merge") != std::string::npos;
  const WriteKind item_mode = merging ? WriteKind::kStrategicMergePatch : WriteKind::kObject;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string ipath = path + "[" + std::to_string(i) + "]";
    if (v[i].is_null()) {
      ++out_->values_checked;
      Add(ipath, "list items must not be null");
      continue;
    }
    if (merging && !merge_key.empty() && v[i].is_object() && !v[i].contains(merge_key)) {
      Add(ipath, "strategic merge patch list item without its merge key \"" + merge_key + "\"");
    }
    Walk(v[i], items, ipath, item_mode, /*null_deletes=*/false);
  }
  const std::string list_type = StringAt(view, "x-kubernetes-list-type");
  if (list_type == "map") {
    const std::vector<std::string> keys = StringsAt(view, "x-kubernetes-list-map-keys");
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_object()) continue;
      json tuple = json::array();
      bool complete = true;
      for (const auto& k : keys) {
        auto it = v[i].find(k);
        if (it == v[i].end()) {
          // A key with a default (e.g. ports[].protocol) is filled in by the server.
          if (item_mode == WriteKind::kObject && !HasDefault(SubView(items, Sub::kProperty, k))) {
            Add(path + "[" + std::to_string(i) + "]." + k,
                "required field missing (a key of the list-type map)");
          }
          complete = complete && HasDefault(SubView(items, Sub::kProperty, k));
          tuple.push_back(nullptr);
        } else {
          tuple.push_back(*it);
        }
      }
      if (!complete) continue;
      auto [it, fresh] = seen.emplace(tuple.dump(), i);
      if (!fresh) {
        Add(path + "[" + std::to_string(i) + "]", "duplicate entry: the keys " + tuple.dump() +
                                                      " repeat item " + std::to_string(it->second) +
                                                      " (x-kubernetes-list-type map)");
      }
    }
  } else if (list_type == "set") {
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      auto [it, fresh] = seen.emplace(v[i].dump(), i);
      if (!fresh) {
        Add(path + "[" + std::to_string(i) + "]",
            "duplicate value " + Short(v[i]) + " (x-kubernetes-list-type set)");
      }
    }
  }
}

void Validator::WalkRoot(const json& v, const SchemaSet::Kind& k, WriteKind mode) {
  View root = Resolve(k.schema, k.doc, k.crd);
  if (!k.ref.empty()) root.ref = k.ref;
  if (!v.is_object()) {
    ++out_->values_checked;
    Add("", "must be an object, got " + JsonTypeName(v));
    return;
  }
  const GroupVersionKind got = GroupVersionKind::FromObject(v);
  if (v.contains("apiVersion") && got.ApiVersion() != k.gvk.ApiVersion()) {
    Add("apiVersion", "is " + Short(v["apiVersion"]) + ", validated as " + k.gvk.ApiVersion());
  }
  if (v.contains("kind") && got.kind != k.gvk.kind) {
    Add("kind", "is " + Short(v["kind"]) + ", validated as " + k.gvk.kind);
  }
  if (!k.crd) {
    Walk(v, root, "", mode, false);
    return;
  }
  // A CRD's root implies apiVersion, kind and metadata (ObjectMeta); the schema's own
  // metadata node may only restrict metadata.name / generateName.
  ++out_->values_checked;
  json rest = v;
  for (const char* f : {"apiVersion", "kind", "metadata"}) rest.erase(f);
  for (const char* f : {"apiVersion", "kind"}) {
    if (v.contains(f) && !v[f].is_string()) Add(f, "must be of type string");
  }
  if (auto m = v.find("metadata"); m != v.end()) {
    Walk(*m, ObjectMetaView(), "metadata", mode, true);
    View own = SubView(root, Sub::kProperty, "metadata");
    if (m->is_object()) {
      for (const char* f : {"name", "generateName"}) {
        View fv = SubView(own, Sub::kProperty, f);
        if (!fv.empty() && m->contains(f)) {
          for (const auto& p : fv.parts)
            Values(*p.node, (*m)[f], std::string("metadata.") + f, nullptr);
        }
      }
    }
  }
  --out_->values_checked;  // the root is counted by Walk
  Walk(rest, root, "", mode, false);
}

void CollectPaths(const View& view, const std::string& path, int depth, int max_depth,
                  std::vector<std::string>* out, std::vector<std::string>* stack) {
  if (depth >= max_depth || view.empty()) return;
  if (!view.ref.empty()) {
    if (std::find(stack->begin(), stack->end(), view.ref) != stack->end()) return;
    stack->push_back(view.ref);
  }
  std::set<std::string> names;
  for (const auto& p : view.parts) {
    if (const json* props = At(*p.node, "properties"); props && props->is_object()) {
      for (const auto& [k, unused] : props->items()) names.insert(k);
    }
  }
  for (const auto& n : names) {
    const std::string cpath = path.empty() ? n : path + "." + n;
    out->push_back(cpath);
    View cv = SubView(view, Sub::kProperty, n);
    const auto types = Types(cv);
    if (std::find(types.begin(), types.end(), "array") != types.end()) {
      View items = SubView(cv, Sub::kItems);
      CollectPaths(items, cpath + "[]", depth + 1, max_depth, out, stack);
    } else {
      View add = SubView(cv, Sub::kAdditional);
      if (!add.empty()) {
        CollectPaths(add, cpath + "{}", depth + 1, max_depth, out, stack);
      } else {
        CollectPaths(cv, cpath, depth + 1, max_depth, out, stack);
      }
    }
  }
  if (!view.ref.empty()) stack->pop_back();
}

}  // namespace

Result SchemaSet::Validate(const json& body, const GroupVersionKind& gvk, WriteKind kind) const {
  Result r;
  std::string load_error;
  const Kind* k = Find(gvk, &load_error);
  if (!k) {
    r.violations.push_back({"", "no schema for " + gvk.String() +
                                    " (the API server does not serve it" +
                                    (load_error.empty() ? ")" : "; " + load_error + ")")});
    return r;
  }
  Validator v(*impl_, &r);
  v.WalkRoot(body, *k, kind);
  return r;
}

Result SchemaSet::Validate(const json& body, WriteKind kind) const {
  return Validate(body, GroupVersionKind::FromObject(body), kind);
}

Result SchemaSet::ValidateMergePatched(const json& base, const json& merge_patch,
                                       const GroupVersionKind& gvk) const {
  Result patch = Validate(merge_patch, gvk, WriteKind::kMergePatch);
  for (auto& v : patch.violations) v.message = "(in the patch) " + v.message;
  json merged = base;
  merged.merge_patch(merge_patch);
  Result whole = Validate(merged, gvk, WriteKind::kObject);
  for (auto& v : whole.violations) v.message = "(in the patched object) " + v.message;
  patch.violations.insert(patch.violations.end(), whole.violations.begin(), whole.violations.end());
  patch.values_checked += whole.values_checked;
  patch.cel_rules_not_evaluated += whole.cel_rules_not_evaluated;
  patch.patterns_not_evaluated += whole.patterns_not_evaluated;
  return patch;
}

std::vector<std::string> SchemaSet::FieldPaths(const GroupVersionKind& gvk, int max_depth) const {
  const Kind* k = Find(gvk, nullptr);
  if (!k) return {};
  View root = Resolve(k->schema, k->doc, k->crd);
  if (!k->ref.empty()) root.ref = k->ref;
  std::vector<std::string> out, stack;
  CollectPaths(root, "", 0, max_depth, &out, &stack);
  return out;
}

absl::StatusOr<const SchemaSet*> SchemaSet::Upstream(const std::string& upstream_dir) {
  static absl::Mutex mu;
  static SchemaSet* set ABSL_GUARDED_BY(mu) = nullptr;
  static absl::Status* error ABSL_GUARDED_BY(mu) = nullptr;
  absl::MutexLock l(&mu);
  if (set) return set;
  if (error) return *error;
  auto s = std::make_unique<SchemaSet>();
  absl::Status st = s->AddOpenApiDir(upstream_dir + "/openapi-v3-v1.36");
  if (st.ok()) st = s->AddCrdDir(upstream_dir + "/crds");
  if (!st.ok()) {
    error = new absl::Status(st);
    return st;
  }
  set = s.release();
  return set;
}

// ---- YAML and files ----

namespace {

json PlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex int_re(R"(^[-+]?[0-9]+$)");
  static const std::regex float_re(R"(^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$)");
  if (std::regex_match(s, int_re)) {
    const char* b = s.data() + (s[0] == '+');
    int64_t i = 0;
    auto [p, ec] = std::from_chars(b, s.data() + s.size(), i);
    if (ec == std::errc() && p == s.data() + s.size()) return i;
    uint64_t u = 0;
    auto [p2, ec2] = std::from_chars(b, s.data() + s.size(), u);
    if (ec2 == std::errc() && p2 == s.data() + s.size()) return u;
    return std::strtod(s.c_str(), nullptr);
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
    int64_t i = 0;
    auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), i, s[1] == 'x' ? 16 : 8);
    if (ec == std::errc() && p == s.data() + s.size()) return i;
  }
  if (std::regex_match(s, float_re)) return std::strtod(s.c_str(), nullptr);
  return s;
}

}  // namespace

json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      if (tag == "?" || tag.empty()) return PlainScalar(node.Scalar());
      if (tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
          tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null") {
        return PlainScalar(node.Scalar());
      }
      return node.Scalar();  // quoted ("!"), !!str and other tags
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& x : node) a.push_back(YamlToJson(x));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : node) o[kv.first.Scalar()] = YamlToJson(kv.second);
      return o;
    }
  }
  return nullptr;
}

absl::StatusOr<json> ReadJsonOrYaml(const std::string& path) {
  const auto ext = fs::path(path).extension();
  if (ext == ".json") {
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(path + ": cannot read");
    try {
      return json::parse(in);
    } catch (const json::exception& e) {
      return absl::InvalidArgumentError(path + ": " + e.what());
    }
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAllFromFile(path);
  } catch (const YAML::BadFile&) {
    return absl::NotFoundError(path + ": cannot read");
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(path + ": " + e.what());
  }
  if (docs.size() == 1) return YamlToJson(docs[0]);
  json a = json::array();
  for (const auto& d : docs) {
    if (!d.IsNull()) a.push_back(YamlToJson(d));
  }
  return a;
}

}  // namespace phalanx::schema
