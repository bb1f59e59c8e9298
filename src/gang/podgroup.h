// The one internal gang model that every dialect maps to.
//
// Dialects (src/gang/dialects.h): scheduler-plugins Coscheduling PodGroup
// (scheduling.x-k8s.io / scheduling.sigs.k8s.io), upstream Workload API (1.35 v1alpha1
// Workload + spec.workloadRef; 1.36 v1alpha2 Workload + PodGroup + spec.schedulingGroup;
// 1.37 v1beta1), Koordinator annotations (gang.scheduling.koordinator.sh/*), Volcano
// PodGroup (scheduling.volcano.sh/v1beta1), KAI PodGroup (scheduling.run.ai/v2alpha2),
// and PodGrouper-derived gangs (a pod's top owner: Job, JobSet, PyTorchJob, MPIJob).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/resource.h"
#include "api/types.h"

namespace phalanx::gang {

enum class Dialect : uint8_t {
  kCoscheduling,  // scheduling.x-k8s.io/v1alpha1 PodGroup (+ older scheduling.sigs.k8s.io)
  kWorkload,      // upstream scheduling.k8s.io Workload / PodGroup
  kKoordinator,   // gang.scheduling.koordinator.sh/* annotations (+ legacy annotations)
  kVolcano,       // scheduling.volcano.sh/v1beta1 PodGroup
  kKAI,           // scheduling.run.ai/v2alpha2 PodGroup
  kDerived,       // PodGrouper: from the pod's top owner
};
const char* DialectName(Dialect d);

// Koordinator gang modes: Strict rejects the whole gang when one member fails;
// NonStrict keeps the waiting members and accumulates across cycles.
enum class GangMode : uint8_t { kStrict, kNonStrict };

// What counts toward the quorum (Koordinator match-policy).
enum class MatchPolicy : uint8_t {
  kOnceSatisfied,     // once the gang reached quorum, later members schedule alone
  kOnlyWaiting,       // only members assumed/waiting in this attempt count
  kWaitingAndRunning  // waiting plus already running (bound) members count
};

// Where a gang must / should be kept together: KAI PodGroup spec.topologyConstraint
// (pkg/apis/scheduling/v2alpha2/podgroup_types.go TopologyConstraint), the upstream
// Workload API schedulingConstraints.topology[].key (required) and Phalanx's
// scheduling.phalanx.dev/topology-key / topology-policy annotations. Levels are node label
// keys (e.g. "cloud.provider.com/topology-rack").
struct TopologyConstraint {
  // KAI spec.topologyConstraint.topology: the name of a cluster-scoped kai.scheduler/v1alpha1
  // Topology whose spec.levels order the labels top → bottom. Empty: no Topology object;
  // only the levels named below are used.
  std::string topology;
  std::string required_level;   // the whole gang within one domain of it (hard); "" = none
  std::string preferred_level;  // try one domain of it first, then the levels above; "" = none
  // Volcano spec.networkTopology (volcano.sh/apis pkg/apis/scheduling/v1beta1 types.go
  // NetworkTopologySpec): the levels are the tiers of the topology.volcano.sh/v1alpha1
  // HyperNode objects (topology_hypernode.h), not node labels.
  bool hyper_node_tiers = false;
  bool hard = true;                     // mode: hard (the default) / soft
  std::optional<int32_t> highest_tier;  // highestTierAllowed
  std::string highest_tier_name;        // highestTierName (matches HyperNode spec.tierName)
  // Koordinator gather rules (annotation gang.scheduling.koordinator.sh/
  // network-topology-spec, apis/extension/network_topology.go): the layers of MustGather
  // and PreferGather rules; topology.h takes the narrowest of each as the required /
  // preferred level (`topology` names the ClusterNetworkTopology).
  std::vector<std::string> must_gather, prefer_gather;
  // Set when the gang asks for a topology that Phalanx does not honour: the reason its
  // members stay pending (e.g. Kueue TAS slices, Koordinator podCountMultiple).
  std::string unsupported;
  bool empty() const {
    return topology.empty() && required_level.empty() && preferred_level.empty() &&
           !hyper_node_tiers && unsupported.empty() && must_gather.empty() && prefer_gather.empty();
  }
};

// A nested quorum inside a gang: a KAI PodGroup subGroup (scheduling.run.ai/v2alpha2
// SubGroup{name, minMember, minSubGroup, parent}) or a Volcano task of
// spec.minTaskMember (then top-level, min_member = the task's count). Pods name theirs with
// the KAI label kai.scheduler/subgroup-name / the Volcano annotation volcano.sh/task-spec;
// src/gang/subgroups.h evaluates the quorums.
struct SubGroup {
  std::string name;
  // Members it needs: its minMember; for a KAI parent given only minSubGroup, the sum of
  // its smallest children's quorums (dialects.cc KaiQuorum).
  int32_t min_member = 0;
  std::string parent;  // empty for top-level sub-groups
  // KAI minSubGroup: how many direct child subgroups must meet their quorum (unset: all;
  // KAI docs/developer/designs/min-subgroups).
  std::optional<int32_t> min_sub_group;
  // KAI spec.subGroups[].topologyConstraint (v2alpha2 SubGroup.TopologyConstraint): every
  // member of this subgroup (the leaves below it) within one domain of its level, inside
  // the domain its nearest constrained ancestor (or the gang) was given (KAI
  // pkg/scheduler/api/podgroup_info/subgroup_info/factory.go, plugins/topology
  // job_filtering.go subSetNodesFn). An empty `topology` name inherits the nearest
  // ancestor's, then the PodGroup's (KAI would ignore the constraint). Empty: none.
  TopologyConstraint topology;
};

// A KAI Topology object (kai.scheduler/v1alpha1 Topology, cluster-scoped;
// KAI pkg/apis/kai/v1alpha1/topology_types.go, derived from Kueue's Topology): spec.levels[]
// of {nodeLabel}, ordered from the top (widest, e.g. zone) to the bottom (narrowest, e.g.
// kubernetes.io/hostname).
// A Koordinator ClusterNetworkTopology (scheduling.koordinator.sh/v1alpha1, "default") is
// one too, named "scheduling.koordinator.sh/default": its layers' label keys as levels and
// their layer names (e.g. "BlockLayer") in layer_names, by which a gang's gather rules name
// them (topology.h accepts either).
struct Topology {
  std::string name;
  std::vector<std::string> levels;       // node label keys, top → bottom
  std::vector<std::string> layer_names;  // Koordinator: parallel to levels; else empty
  // Set when the object is malformed (e.g. "Topology cluster-topology: spec.levels: must have
  // at least 1 item"); gangs that name it stay pending with this reason.
  std::string invalid;
};

// A Volcano HyperNode (topology.volcano.sh/v1alpha1, cluster-scoped; volcano.sh/apis
// pkg/apis/topology/v1alpha1/hypernode_types.go): a network performance domain of tier
// spec.tier (an integer >= 0, lower = tighter, e.g. 1 = a ToR switch), optionally named
// spec.tierName, whose spec.members are nodes (selector exactMatch{name},
// regexMatch{pattern} on the node name, or labelMatch, a metav1.LabelSelector) or other
// HyperNodes (selector exactMatch{name}). HyperNodes form a tree; its nodes are the leaves
// (Volcano pkg/scheduler/api/hyper_node_info.go). topology_hypernode.h decodes and
// resolves them.
struct HyperNodeMember {
  bool hyper_node = false;                   // type HyperNode (else Node)
  std::string exact;                         // exactMatch.name ("" = not this selector)
  std::string regex;                         // regexMatch.pattern ("" = not this selector)
  std::optional<api::LabelSelector> labels;  // labelMatch
};
struct HyperNode {
  std::string name;
  int32_t tier = 0;
  std::string tier_name;
  std::vector<HyperNodeMember> members;
  // Set when the object is malformed (e.g. "HyperNode s0: spec.tier: required"); gangs
  // whose networkTopology would use it stay pending with this reason.
  std::string invalid;
};

struct PodGroupSpec {
  // Canonical identity "<namespace>/<name>" (Workload gangs: "<ns>/<workload>/<podGroup>"
  // plus "/<replicaKey>" when the pod gives one).
  std::string key;
  std::string namespace_;
  std::string name;
  Dialect dialect = Dialect::kCoscheduling;
  std::string source;  // object kind/apiVersion or annotation the spec came from (for messages)

  int32_t min_member = 1;       // quorum; the dialect's minMember / minCount / min-available
  int32_t total_member = 0;     // Koordinator total-number; 0 = unknown
  api::Resource min_resources;  // Coscheduling/Volcano minResources (zero = none)
  bool has_min_resources = false;
  std::optional<int64_t> schedule_timeout_ns;  // scheduleTimeoutSeconds / waiting-time
  // How long a running gang may stay below its minimum before its members are evicted
  // (staleness.h): KAI annotation kai.scheduler/staleness-grace-period; negative: never.
  std::optional<int64_t> staleness_grace_ns;
  GangMode mode = GangMode::kStrict;
  MatchPolicy match_policy = MatchPolicy::kOnceSatisfied;
  // Keys of every gang in the same GangGroup, including this one (Koordinator `groups`);
  // empty = a group of its own.
  std::vector<std::string> gang_group;
  std::string queue;                 // KAI / Volcano queue name
  std::string priority_class_name;   // KAI PodGroup priorityClassName
  std::vector<SubGroup> sub_groups;  // nested quorums, in spec order (subgroups.h)
  // KAI spec.minSubGroup: how many top-level subgroups must meet their quorum (unset: all).
  std::optional<int32_t> min_sub_group;
  // Topology-aware placement (src/gang/topology.h turns it into the levels to try).
  TopologyConstraint topology;
  api::Timestamp creation_timestamp = 0;

  // Invalid specs (minMember < 1, unknown mode, ...) are kept with the error so that the
  // pods get a clear reason instead of silently scheduling alone.
  std::string invalid;
};

// How a pod names its gang.
struct GangRef {
  std::string key;       // identity of this gang (PodGroupSpec::key of its spec, or for a
                         // Workload pod group with podGroupReplicaKey: spec_key + "/" + replica)
  std::string spec_key;  // key of the PodGroupSpec that defines it
  Dialect dialect = Dialect::kCoscheduling;
  std::string namespace_;
  std::string name;  // the object the pod names (PodGroup / Workload name)
  // Set when the pod itself defines the gang (Koordinator annotations, PodGrouper): no
  // separate object needs to exist.
  std::optional<PodGroupSpec> inline_spec;
  // Where on the pod the reference was found, for messages (e.g. "label
  // scheduling.x-k8s.io/pod-group").
  std::string via;
};

}  // namespace phalanx::gang
