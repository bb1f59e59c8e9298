// Validation of objects and patches against the schemas a kube-apiserver serves: the
// OpenAPI v3 documents of the built-in groups (/openapi/v3/<group-version>) and the
// openAPIV3Schema of CustomResourceDefinitions (the gang schedulers' own CRDs).
//
// What it checks, as the API server would on a write:
//   - field names: a field the schema does not define is an "unknown field" (strict
//     field validation refuses it; without it the built-in decoder drops it and a CRD
//     prunes it, both in silence);
//   - JSON types (object, array, string, integer, number, boolean), formats (int32 /
//     int64 ranges, date-time, byte, int-or-string), Quantity strings;
//   - required fields (for whole objects; see WriteKind for patches);
//   - enums (a CRD's `enum`; for built-in types, whose OpenAPI documents carry no enums,
//     a small table of the enums the API server's validation code enforces, with their
//     sources in schema.cc);
//   - list semantics (x-kubernetes-list-type map: unique keys, present; set: unique
//     items), CRD value validations (pattern, minimum / maximum, lengths, item and
//     property counts, anyOf / oneOf / allOf / not);
//   - nulls: a CRD field that is not `nullable` must not be null (the server prunes it),
//     except in a merge patch where null deletes the field; built-in types accept null
//     (Go's decoder leaves the field unset).
// The x-kubernetes-* extensions are honoured as apiextensions-apiserver does:
// preserve-unknown-fields (unknown fields kept, known ones still checked),
// int-or-string, embedded-resource (apiVersion, kind and metadata implied; metadata is
// ObjectMeta) and the implied apiVersion / kind / metadata (ObjectMeta) at a CRD's root.
// CEL rules (x-kubernetes-validations) are not evaluated; Result counts the rules met
// so a caller can see what went unchecked.
//
// The checker shares no code with Phalanx's decoders or writers (it reads YAML with
// yaml-cpp and JSON with nlohmann::json itself), so it can serve as their oracle.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace YAML {
class Node;
}

namespace phalanx::schema {

// Group ("" for the core group), version and kind of an object.
struct GroupVersionKind {
  std::string group, version, kind;

  // From an object's apiVersion ("v1", "scheduling.k8s.io/v1alpha2") and kind; empty
  // fields where they are missing.
  static GroupVersionKind FromObject(const nlohmann::json& obj);
  // Parses "group/version/Kind" ("/v1/Pod" or "v1/Pod" for the core group).
  static absl::StatusOr<GroupVersionKind> Parse(std::string_view s);
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "scheduling.k8s.io/v1alpha2 PodGroup", "v1 Pod".
  std::string String() const { return ApiVersion() + " " + kind; }
  auto operator<=>(const GroupVersionKind&) const = default;
};

// What a body is, which decides how required fields and nulls are read.
enum class WriteKind {
  // A whole object (POST / PUT body, or an object as read): required fields must be
  // present.
  kObject,
  // An RFC 7386 merge patch (application/merge-patch+json): objects are partial, so
  // required fields are not checked, and null deletes a field. Lists replace what the
  // object holds, so list items are whole objects.
  kMergePatch,
  // A strategic merge patch (application/strategic-merge-patch+json): as a merge patch,
  // but the items of lists whose x-kubernetes-patch-strategy is "merge" merge into the
  // existing items by their x-kubernetes-patch-merge-key (which each item must carry),
  // and the directives $patch, $retainKeys, $setElementOrder/<list> and
  // $deleteFromPrimitiveList/<list> are allowed (k8s.io/apimachinery strategicpatch).
  kStrategicMergePatch,
};

// One finding: the field path in the API server's notation
// ("status.conditions[0].lastTransitionTime", "metadata.labels[app]") and what is wrong.
struct Violation {
  std::string path;
  std::string message;
  std::string ToString() const { return (path.empty() ? "<root>" : path) + ": " + message; }
};

struct Result {
  std::vector<Violation> violations;
  int values_checked = 0;           // JSON values visited (objects, lists and scalars)
  int cel_rules_not_evaluated = 0;  // x-kubernetes-validations rules on visited nodes
  int patterns_not_evaluated = 0;   // `pattern`s std::regex cannot compile (RE2-only syntax)
  bool ok() const { return violations.empty(); }
  // "" when ok; else every violation, one per line.
  std::string ToString() const;
};

// A set of schemas, indexed by group/version/kind. Loading is not thread-safe against
// concurrent loading; Validate and Has may be called from any thread once loading is done
// (the lazy loading of AddCrdDir is guarded).
class SchemaSet {
 public:
  SchemaSet();
  ~SchemaSet();
  SchemaSet(const SchemaSet&) = delete;
  SchemaSet& operator=(const SchemaSet&) = delete;

  // One OpenAPI v3 document as kube-apiserver serves it at /openapi/v3/<group-version>
  // (components.schemas; kinds from x-kubernetes-group-version-kind). Errors: the file
  // cannot be read or is not such a document.
  absl::Status AddOpenApiDocument(const std::string& path);
  // The same for a document already parsed; `source` names it in messages.
  absl::Status AddOpenApi(nlohmann::json doc, const std::string& source);
  // Every *.json file of `dir`.
  absl::Status AddOpenApiDir(const std::string& dir);
  // A CustomResourceDefinition (apiextensions.k8s.io/v1) given as JSON: every version
  // with a schema. `source` names it in messages.
  absl::Status AddCrd(const nlohmann::json& crd, const std::string& source);
  // A YAML file of CustomResourceDefinitions (several documents allowed; other kinds are
  // skipped). A file whose whole content is a relative path is a git symlink checked out
  // as text: the path is followed (error when its target is missing).
  absl::Status AddCrdFile(const std::string& path);
  // Every *.yaml / *.yml under `dir` (recursively). Files named <group>_<plural>.yaml
  // (controller-gen's names) load when a kind of <group> is first asked for; others load
  // now. A file that fails to load later is reported by Validate for its group.
  absl::Status AddCrdDir(const std::string& dir);

  // True when a schema for `gvk` is known (after lazy loading).
  bool Has(const GroupVersionKind& gvk) const;
  // Every known kind (loads every lazy file).
  std::vector<GroupVersionKind> Kinds() const;

  // Validates `body` as `gvk` written as `kind`. An unknown gvk is one violation at the
  // root ("no schema for ..."): the server would not serve it. When the body carries
  // apiVersion / kind, they must match gvk.
  Result Validate(const nlohmann::json& body, const GroupVersionKind& gvk,
                  WriteKind kind = WriteKind::kObject) const;
  // The same with the gvk read from the body's apiVersion and kind.
  Result Validate(const nlohmann::json& body, WriteKind kind = WriteKind::kObject) const;
  // Applies `merge_patch` to `base` (RFC 7386) and validates the result as a whole
  // object, after validating the patch itself: what a merge PATCH leaves on the server.
  Result ValidateMergePatched(const nlohmann::json& base, const nlohmann::json& merge_patch,
                              const GroupVersionKind& gvk) const;

  // The field paths a kind's schema defines, "spec.schedulingConstraints.topology[].key"
  // style (maps as "labels{}"), depth-first, at most `max_depth` levels, recursive types
  // cut at their first repeat. Empty for an unknown kind.
  std::vector<std::string> FieldPaths(const GroupVersionKind& gvk, int max_depth = 16) const;

  // Where the schema of `gvk` came from (a document path or a CRD file), "" if unknown.
  std::string SourceOf(const GroupVersionKind& gvk) const;

  // A process-wide set holding upstream_dir/openapi-v3-v1.36 and every CRD under
  // upstream_dir/crds (the layout of ../shared/upstream). Loaded once; later calls with
  // another directory return the first set. Errors: a directory is missing or a document
  // does not load.
  static absl::StatusOr<const SchemaSet*> Upstream(const std::string& upstream_dir);

  struct Kind;
  struct Impl;

 private:
  const Kind* Find(const GroupVersionKind& gvk, std::string* load_error) const;
  std::unique_ptr<Impl> impl_;
};

// YAML (yaml-cpp) to JSON with YAML 1.2 core-schema scalars: plain null / ~ / empty are
// null, true / false booleans, integers and floats numbers, everything quoted a string.
nlohmann::json YamlToJson(const YAML::Node& node);
// Reads a .json file, or a .yaml / .yml file (every document; one document is returned
// as itself, several as a JSON array). Errors name the file.
absl::StatusOr<nlohmann::json> ReadJsonOrYaml(const std::string& path);

}  // namespace phalanx::schema
