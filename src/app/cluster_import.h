// Importing a live cluster's scheduling state: `phalanx snapshot` writes it as
// manifests, `phalanx simulate --from-cluster` replays it on the virtual clock.
#pragma once

#include <string>
#include <vector>

#include "api/status.h"
#include "client/rest_client.h"
#include "sim/scenario.h"

namespace phalanx::app {

// What SnapshotCluster listed.
struct ClusterSnapshot {
  // Multi-document YAML whose documents are JSON objects (quoted strings stay strings),
  // one manifest per object, metadata.managedFields dropped, in the order namespaces, priority
  // classes, nodes, the other kinds, then pods (bound pods first, then pending pods by
  // creationTimestamp). Every pod carries simulation.phalanx.dev/arrival-seconds "0" so
  // that a simulation starts from the cluster's state as it is now (bound pods in place,
  // pending pods queued in creation order) instead of replaying creation times.
  std::string yaml;
  std::vector<std::string> counts;   // "pods: 12", per resource listed
  std::vector<std::string> skipped;  // resources not listed and objects not decoded, why
  size_t objects = 0;
};

// Lists, once and paged (limit 500, continue tokens), every resource `phalanx run` watches
// on this server: nodes, non-terminal pods, namespaces, priority classes, PDBs and the
// discovered optional kinds (gang, queue, topology, storage, DRA objects — whatever the
// server serves; client::LiveInformerFactory::Discover). Secrets, ConfigMaps and other
// kinds scheduling does not read are never listed. Each object is re-checked with the
// manifest decoder; one that does not decode is left out and named in `skipped` (with the
// decoder's message), as is a resource the credentials may not list (403). Fails only when
// the server cannot be reached or discovery fails (RestClient::ToStatus's message).
api::Status SnapshotCluster(client::RestClient& client, ClusterSnapshot* out);

// Resolves the kubeconfig as `phalanx run` does (--kubeconfig, $KUBECONFIG, in-cluster,
// ~/.kube/config; `context` picks a context) and calls SnapshotCluster.
api::Status SnapshotClusterFromKubeconfig(const std::string& kubeconfig, const std::string& context,
                                          ClusterSnapshot* out);

// The live cluster's state as a simulation scenario (`simulate --from-cluster`,
// `explain --from-cluster`): SnapshotClusterFromKubeconfig's manifests decoded and built
// as any manifest file is (api::DecodeManifests, sim::ScenarioFromManifests; errors name
// the source "cluster"); the counts and skipped objects are printed to stderr.
api::Status LoadClusterScenario(const std::string& kubeconfig, const std::string& context,
                                sim::Scenario* out);

}  // namespace phalanx::app
