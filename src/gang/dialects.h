// Dialect adapters: from pods and objects in the users' own formats to the one model in
// podgroup.h. Pure functions, no state; the DefaultPodGroupManager (default_podgroup_manager.h)
// calls them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "api/unstructured.h"
#include "gang/podgroup.h"

namespace phalanx::gang {

// KAI's workload priority label (docs/priority/README.md): on the owner or the pod, the
// name of a PriorityClass; PodGrouper copies it into the derived gang, and the scheduler's
// PriorityOf honours it before the pod's own class.
inline constexpr const char* kKaiPriorityLabel = "priorityClassName";

struct DialectOptions {
  // PodGrouper: derive gangs from the pod's top owner for these owner kinds (KAI
  // pkg/podgrouper/podgrouper/hub/hub.go's groupers for them). Plain Deployments /
  // ReplicaSets / StatefulSets are never gangs unless listed here; a Job is a gang only
  // when it asks for one (see ResolvePodGang).
  std::vector<std::string> pod_grouper_kinds = {"Job",        "JobSet",    "LeaderWorkerSet",
                                                "PyTorchJob", "MPIJob",    "TFJob",
                                                "XGBoostJob", "PaddleJob", "JAXJob"};
  bool pod_grouper = true;
};

// Finds the gang a pod belongs to, in this order of precedence:
//   spec.workloadRef (1.35) / spec.schedulingGroup.podGroupName (1.36+)
//   label scheduling.x-k8s.io/pod-group, then pod-group.scheduling.sigs.k8s.io
//   annotations gang.scheduling.koordinator.sh/name (inline spec from the other
//     gang.scheduling.koordinator.sh/* annotations), then the legacy
//     pod-group.scheduling.sigs.k8s.io/name + /min-available annotations
//   annotation scheduling.k8s.io/group-name or scheduling.volcano.sh/group-name (Volcano)
//   annotation pod-group-name (KAI)
//   PodGrouper: the pod's top owner (looked up with `owner`), if its kind is enabled:
//     Job: not a gang (KAI's BatchJob grouper: one PodGroup per pod, minAvailable 1), unless
//       the owner sets kai.scheduler/batch-min-member (Phalanx's) or carries KAI topology
//       annotations (the Job's pods placed together, minMember 1), or the pods carry Kueue
//       topology annotations (the podset admitted whole: minMember = all its pods);
//     JobSet: one gang of every replicatedJob's pods, or with startupPolicyOrder InOrder
//       one per replicatedJob (KAI jobset_grouper.go);
//     LeaderWorkerSet: one gang per group (label leaderworkerset.sigs.k8s.io/group-index),
//       minMember = leaderWorkerTemplate.size (KAI lws_grouper.go; with startupPolicy
//       LeaderReady an unbound leader alone);
//     PyTorchJob, MPIJob, TFJob, XGBoostJob, PaddleJob, JAXJob: every replica.
//     The owner's KAI annotations kai.scheduler/topology, topology-required-placement and
//     topology-preferred-placement become the gang's topology constraint, its
//     priorityClassName label (else the pod's) its priority class (KAI defaultgrouper);
//     the pods' Kueue annotations kueue.x-k8s.io/podset-required-topology /
//     podset-preferred-topology a required / preferred level (Kueue TAS), the slice,
//     group and unconstrained ones an unsupported constraint (the pods stay pending
//     naming the annotation).
// Returns nullopt for a pod that is not in a gang. Invalid annotation values yield a
// ref whose inline_spec has `invalid` set (never an exception).
using OwnerLookup = std::function<const api::Unstructured*(
    const std::string& ns, const std::string& kind, const std::string& name)>;
std::optional<GangRef> ResolvePodGang(const api::Pod& pod, const DialectOptions& opts,
                                      const OwnerLookup& owner);

// True if the object is a gang definition of some dialect (PodGroup of any group,
// Workload and CompositePodGroup of scheduling.k8s.io).
bool IsGangObject(const api::Unstructured& obj);

// True for a KAI Topology (kind Topology of group kai.scheduler; also kueue.x-k8s.io, the
// Kueue Topology that KAI read before it had its own, KAI docs/topology/README.md).
bool IsTopologyObject(const api::Unstructured& obj);
// Its levels, top → bottom. Never throws: a missing or empty spec.levels, an item without
// nodeLabel or a repeated label sets `invalid`
// (e.g. "Topology t: spec.levels: must have at least 1 item").
Topology TopologyFromObject(const api::Unstructured& obj);

// Specs defined by a gang object: one for a PodGroup; one per spec.podGroups[] entry of a
// 1.35 Workload (only those with policy.gang; policy.basic groups are not gangs); for
// 1.36+ a Workload yields its templates' specs (pods reference PodGroup objects, so they
// get no members), a PodGroup (scheduling.k8s.io) yields one spec from
// spec.schedulingPolicy.gang.minCount and spec.schedulingConstraints.topology[0].key, a
// CompositePodGroup (1.37 head) none unless invalid. scheduling.k8s.io objects are decoded
// strictly per version: a field the version does not define is an error naming it.
// Invalid fields set `invalid` on the spec (e.g. "spec.minMember: must be >= 1";
// "spec.schedulingConstraints.topologyConstraints: unknown field (scheduling.k8s.io/v1alpha2
// names it topology[].key)").
std::vector<PodGroupSpec> SpecsFromObject(const api::Unstructured& obj);

}  // namespace phalanx::gang
