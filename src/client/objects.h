// API objects as the server sends them (JSON) -> the typed model of src/api.
//
// simdjson parses list and watch envelopes; each object is re-serialized without
// metadata.managedFields (with kind/apiVersion filled in, which list items lack) and
// decoded by api::DecodeManifests, so live mode and manifests share one decoder. Runs on
// the watch threads only, never in the scheduling cycle.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"

namespace simdjson::dom {
class element;
}
namespace YAML {
class Node;
}

namespace phalanx::client {

// What a watched resource decodes into.
// kTerminalPod: pods in phase Succeeded / Failed (a second pods watch; decoded as api::Pod,
// delivered to cluster::InformerFactory::AddTerminalPodHandlers).
enum class Target {
  kPod,
  kNode,
  kNamespace,
  kPriorityClass,
  kPodDisruptionBudget,
  kObject,
  kTerminalPod
};

// One resource the informers list and watch, e.g. {"", "v1", "pods", "Pod"}.
struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1", "v1alpha1"
  std::string resource;  // plural, lower case: "pods", "podgroups"
  std::string kind;      // "Pod", "PodGroup"
  Target target = Target::kObject;
  std::string field_selector;  // e.g. pods: "status.phase!=Succeeded,status.phase!=Failed"

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "/api/v1/pods", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups" (all namespaces).
  std::string CollectionPath() const;
  // One page of a paged LIST: CollectionPath()?limit=N, with the field selector and the
  // continue token (when not empty), URL-encoded.
  std::string ListPath(size_t limit, const std::string& continue_token) const;
  // "pods", "podgroups.scheduling.x-k8s.io", "pods(terminal)": for logs and errors.
  std::string Name() const {
    return (group.empty() ? resource : resource + "." + group) +
           (target == Target::kTerminalPod ? "(terminal)" : "");
  }
};

// A decoded object: one of api::Pod, Node, Namespace, PriorityClass, PodDisruptionBudget or
// Unstructured
// (by the resource's Target), with its store key and resourceVersion.
struct Object {
  std::string key;               // "namespace/name" or "name"
  std::string resource_version;  // metadata.resourceVersion
  std::shared_ptr<const void> ptr;
};

// Decodes one object. `json` is the object's JSON text. Errors (InvalidArgument) name the
// resource and the object, e.g. "pods default/web-0: spec.containers[0].resources.requests.cpu:
// ...".
api::StatusOr<Object> DecodeObjectJson(std::string_view json, const ResourceType& rt);
api::StatusOr<Object> DecodeObjectElement(const simdjson::dom::element& obj,
                                          const ResourceType& rt);

// JSON text of a YAML tree (an object as the live decoder or a manifest built it): quoted
// scalars (tag "!", which the live decoder gives every JSON string) are strings; plain
// scalars that read as a JSON number, true, false or null are written as such; other
// plain scalars are strings. Used to send a whole object back (PUT).
std::string YamlToJson(const YAML::Node& n);

// The API path of one object of a kind the informers know (CoreResources and
// OptionalObjectResources, matched by kind and group; version from its apiVersion):
// "/api/v1/persistentvolumes/pv-1",
// "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c". "" for another kind.
std::string UnstructuredPath(const api::Unstructured& obj);

// A page of a LIST response.
struct ListPage {
  std::string resource_version;  // metadata.resourceVersion
  std::string continue_token;    // metadata.continue ("" on the last page)
  std::vector<Object> items;
  std::vector<std::string> skipped;  // objects that failed to decode, with the reason
};
// Fills *out from a LIST response (items appended). InvalidArgument when the page itself
// is malformed; objects that fail to decode go to out->skipped instead.
api::Status DecodeList(std::string_view json, const ResourceType& rt, ListPage* out);

// One line of a WATCH stream.
struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  std::string resource_version;
  Object object;       // ADDED / MODIFIED / DELETED (decoded)
  int error_code = 0;  // ERROR: the Status code (410 = Gone: relist)
  std::string error_message;
};
// InvalidArgument when the line is not a watch event or the object does not decode (for
// a decode failure out->type and out->resource_version are still set).
api::Status DecodeWatchEvent(std::string_view line, const ResourceType& rt, WatchEvent* out);

// JSON helpers for request bodies.
std::string JsonString(std::string_view s);  // quoted and escaped
// RFC 3339 in UTC: "2024-05-01T10:00:00Z"; with micro: "2024-05-01T10:00:00.123456Z".
std::string FormatTime(api::Timestamp ns, bool micro = false);
// Parses RFC 3339 ("...Z", "...+02:00", fractional seconds); false on bad input.
[[nodiscard]] bool ParseTime(std::string_view s, api::Timestamp* out);

}  // namespace phalanx::client
