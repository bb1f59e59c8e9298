// Which objects of a manifest set `phalanx simulate` uses, and which it does not: every
// kind is either used or listed, and a kind that would create pods or change placement in a
// cluster, but that the simulator does not model, is a warning naming it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/unstructured.h"

namespace phalanx::sim {

enum class ObjectUse {
  kUsed,        // read by the scheduler, a plugin or a simulated controller
  kNotUsed,     // no effect on placement (Service, ConfigMap, RBAC, ...): listed
  kNotModelled  // would create pods or change placement in a cluster: a warning
};

struct ObjectClass {
  ObjectUse use = ObjectUse::kNotUsed;
  // kNotModelled: what the kind does that the simulation leaves out, e.g. "a DaemonSet
  // creates a pod on every matching node; none are simulated".
  std::string why;
};

// Classifies `obj` by kind and API group. Used: the objects of the gang dialects (PodGroup,
// Workload), KAI / Kueue Topology, Volcano HyperNode, queues (KAI / Volcano Queue,
// ElasticQuota), DRA and storage objects, Koordinator ClusterNetworkTopology, the typed
// controllers (Deployment, ReplicaSet, StatefulSet, Job) and the workloads sim/workloads.h
// expands. Not modelled: a table of the ecosystem's pod-creating and placement-changing
// kinds (DaemonSet, CronJob, ReplicationController, Ray, Spark, Argo, Tekton, Kueue,
// AppWrapper, HorizontalPodAutoscaler, LimitRange, ResourceQuota, Koordinator Reservation,
// scheduler-plugins NetworkTopology / AppGroup / NodeResourceTopology, ...) and any other
// kind whose object holds a pod template (a `template` with `spec.containers`).
ObjectClass ClassifyObject(const api::Unstructured& obj);

// Fields and annotations of a used object that affect placement in its project and that
// the simulation does not honour, each "<field>: <what happens instead>": Volcano Queue
// annotations volcano.sh/hierarchy and volcano.sh/hierarchy-weights (the DRF plugin's
// hierarchical shares; spec.parent is honoured).
std::vector<std::string> UnmodelledFields(const api::Unstructured& obj);

// "Kind (apiVersion)" as the summary names a kind.
std::string KindName(const api::Unstructured& obj);

}  // namespace phalanx::sim
