// Which object a write to the API server is, from its method, path and content type, as
// kube-apiserver routes it: the group/version/kind its body is decoded as and whether the
// body is a whole object, a merge patch or a strategic merge patch. Covers the paths
// Phalanx writes (client/cluster_client.h, client/leader_election.h,
// app/queue_status_sink.h): bindings, pod deletes and patches, Events, the status of gang,
// queue and claim objects, PV / PVC updates, Leases.
#pragma once

#include <optional>
#include <string>

#include "conformance/recording_server.h"
#include "schema/schema.h"

namespace phalanx::conformance {

struct WriteRoute {
  schema::GroupVersionKind gvk;
  schema::WriteKind kind = schema::WriteKind::kObject;
  bool subresource_status = false;  // .../status
  std::string ns, name;             // the object written ("" for a create's name)
};

// nullopt for reads (GET) and for paths the table does not know (then the suite fails:
// every write must be accounted for). Kinds come from the resource's plural (pods -> Pod,
// podgroups -> PodGroup, elasticquotas -> ElasticQuota, ...).
std::optional<WriteRoute> RouteOf(const RecordedRequest& r);

// The Kind of a resource plural ("podgroups" -> "PodGroup"), "" when unknown.
std::string KindOfResource(const std::string& plural);

}  // namespace phalanx::conformance
