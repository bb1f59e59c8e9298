// Decoding Kubernetes manifests (YAML, multi-document, and JSON; `kind: List` too).
//
// Unknown fields are ignored as the API server does. Invalid values (a bad quantity, a
// wrong type, an invalid selector operator) are errors naming the file, the object
// (kind namespace/name or document index) and the field path, e.g.
//   "cluster.yaml: Pod default/web-0: spec.containers[0].resources.requests.cpu:
//    quantities must match the regular expression ..."
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "api/unstructured.h"

namespace phalanx::api {

// Everything a manifest set can hold that a scheduler cares about. Objects of other kinds
// (Service, ConfigMap, ...) are counted in `ignored` and skipped.
struct Manifests {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::vector<Namespace> namespaces;
  std::vector<PriorityClass> priority_classes;
  std::vector<WorkloadController> controllers;  // Deployment/ReplicaSet/StatefulSet/Job
  // Named objects of other kinds (CRDs: PodGroups, Workloads, Queues, JobSets, ...) and
  // the typed controllers above too, kept whole for adapters (gang dialects, PodGrouper).
  std::vector<Unstructured> objects;
  std::vector<std::string> ignored;             // "kind name" of objects without a type here
};

struct DecodeError {
  std::string message;  // full message incl. file, object and field
};

// Decodes `text` (YAML or JSON; documents separated by '---'; `kind: List` expanded)
// and appends into *out. `source` names the file in error messages. Returns false on
// the first error, with *err set; objects decoded before the error stay in *out only
// if the caller wants them (callers should discard *out on failure).
[[nodiscard]] bool DecodeManifests(std::string_view text, const std::string& source,
                                   Manifests* out, DecodeError* err);

// Decodes one already-parsed document (e.g. built from JSON by the live client, which
// skips yaml-cpp's text scanner) exactly as DecodeManifests decodes a document of `source`.
// Errors as DecodeManifests (without line/column when the node has no position).
[[nodiscard]] bool DecodeManifestNode(const YAML::Node& doc, const std::string& source,
                                      Manifests* out, DecodeError* err);

// Reads a file, or every *.yaml/*.yml/*.json file of a directory in name order, and
// decodes them. Errors as above, or "path: cannot read: <reason>".
[[nodiscard]] bool LoadManifests(const std::string& path, Manifests* out, DecodeError* err);

// Expands a controller into its pods: names "<name>-<i>" for StatefulSet and
// "<name>-<hash>-<i>"-like stable names otherwise, labels and spec from the template,
// namespace from the controller, ownerReferences pointing to the controller.
std::vector<Pod> ExpandController(const WorkloadController& c);

}  // namespace phalanx::api
