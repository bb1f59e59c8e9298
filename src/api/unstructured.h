// An object of a kind the core model does not type (CRDs such as PodGroups of the gang
// dialects, Workloads, Queues, JobSets, PyTorchJobs): its identity and metadata, typed,
// and the whole object as a YAML/JSON tree for the adapter that understands it.
#pragma once

#include <memory>
#include <string>

#include "api/types.h"

namespace YAML {
class Node;
}

namespace phalanx::api {

struct Unstructured {
  std::string api_version;  // e.g. "scheduling.x-k8s.io/v1alpha1"
  std::string kind;         // e.g. "PodGroup"
  ObjectMeta metadata;
  std::shared_ptr<const YAML::Node> object;  // the full document (never null once decoded)
  // The file it was read from, for messages ("" when it came from a server or was made by
  // a simulated controller).
  std::string source;

  // "group" part of api_version ("" for the core group).
  std::string Group() const {
    auto slash = api_version.find('/');
    return slash == std::string::npos ? std::string() : api_version.substr(0, slash);
  }
  // Identity within a kind: "<kind>.<group>/<namespace>/<name>".
  std::string Key() const {
    return kind + "." + Group() + "/" + metadata.namespace_ + "/" + metadata.name;
  }
};

using UnstructuredPtr = std::shared_ptr<const Unstructured>;

}  // namespace phalanx::api
