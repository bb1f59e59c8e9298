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

#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"

namespace phalanx::api {

// Everything a manifest set holds: the typed objects below, and every object of another
// kind (CRDs, Services, ConfigMaps, ...) kept whole in `objects` for the adapters that read
// it; the simulator reports the kinds no adapter used (sim/kinds.h).
struct Manifests {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::vector<Namespace> namespaces;
  std::vector<PriorityClass> priority_classes;
  std::vector<PodDisruptionBudget> pod_disruption_budgets;  // policy/v1 and v1beta1
  std::vector<WorkloadController> controllers;              // Deployment/ReplicaSet/StatefulSet/Job
  // Named objects of other kinds (CRDs: PodGroups, Workloads, Queues, JobSets, ...) and
  // the typed controllers above too, kept whole for adapters (gang dialects, PodGrouper).
  std::vector<Unstructured> objects;
  std::vector<std::string> ignored;  // "Kind ns/name" of the objects without a type here
};

// Decodes `text` (YAML or JSON; documents separated by '---'; `kind: List` expanded)
// and appends into *out, all-or-nothing: *out is untouched on error. `source` names the
// file in error messages. The first error as InvalidArgumentError with the full message
// (file, object, field, cause and position). Every document needs `kind` and `apiVersion`
// ("document 2: apiVersion: Required value"); objects of every kind need a
// metadata.name or generateName, and their metadata is decoded strictly.
Status DecodeManifests(std::string_view text, const std::string& source, Manifests* out);

// Decodes one already-parsed document (e.g. built from JSON by the live client, which
// skips yaml-cpp's text scanner) exactly as DecodeManifests decodes a document of `source`.
// Errors as DecodeManifests (without line/column when the node has no position).
Status DecodeManifestNode(const YAML::Node& doc, const std::string& source, Manifests* out);

// The node features (KEP-5328) a pod with this `spec` needs in order to be scheduled, as
// upstream's nodedeclaredfeatures registry infers them (k8s.io/component-helpers v0.36.3,
// features/registry.go): RestartAllContainersOnContainerExits (a container or init
// container restart rule with action RestartAllContainers), UserNamespacesHostNetworkSupport
// (hostNetwork true and hostUsers false). Sorted; empty when `spec` is not a map. The pod
// decoder stores it in PodSpec::required_node_features.
std::vector<std::string> InferNodeFeatures(const YAML::Node& spec);

// Reads a file, or every *.yaml/*.yml/*.json file of a directory in name order, and
// decodes them, all-or-nothing across the files. Errors as above, "path: cannot read:
// <reason>" (the errno's code, e.g. NotFound), or for two objects of one kind and name
// (the API server would refuse the second) "b.yaml: Pod ml/w-0: metadata.name: Duplicate
// value: already defined in a.yaml" (or "earlier in this file").
Status LoadManifests(const std::string& path, Manifests* out);
// The same for several files or directories, read in the order given (each directory's
// files in name order), all-or-nothing, duplicates checked across all of them.
Status LoadManifests(const std::vector<std::string>& paths, Manifests* out);

// Expands a controller into its pods: names "<name>-<i>" for StatefulSet and
// "<name>-<hash>-<i>"-like stable names otherwise, labels and spec from the template,
// namespace from the controller, ownerReferences pointing to the controller.
std::vector<Pod> ExpandController(const WorkloadController& c);

}  // namespace phalanx::api
