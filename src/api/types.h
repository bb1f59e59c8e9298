// Kubernetes object model: the core/v1 subset a scheduler reads (plain data).
//
// Field names follow the Kubernetes API (k8s.io/api/core/v1/types.go) in snake_case.
// Only what scheduling needs is kept; unknown fields are ignored on decode, as the API
// server does. Times are nanoseconds since the Unix epoch (virtual in simulate).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/quantity.h"
#include "api/volume_source.h"

namespace YAML {
class Node;
}

namespace phalanx::api {

using Timestamp = int64_t;  // nanoseconds since the Unix epoch
inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

using ResourceList = std::map<std::string, Quantity>;  // v1.ResourceList

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;  // "namespace" is a keyword
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;
  Timestamp creation_timestamp = 0;
  std::optional<Timestamp> deletion_timestamp;
};

// metav1.LabelSelector. Operators: In, NotIn, Exists, DoesNotExist.
struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // "In" | "NotIn" | "Exists" | "DoesNotExist"
  std::vector<std::string> values;
};
struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
};

// v1.NodeSelectorRequirement. Operators: In, NotIn, Exists, DoesNotExist, Gt, Lt.
struct NodeSelectorRequirement {
  std::string key;
  std::string op;
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only key metadata.name
  bool operator==(const NodeSelectorTerm&) const = default;
};
// Terms are ORed; requirements within a term are ANDed. An empty term matches nothing.
struct NodeSelector {
  std::vector<NodeSelectorTerm> node_selector_terms;
  bool operator==(const NodeSelector&) const = default;
};
struct PreferredSchedulingTerm {
  int32_t weight = 0;  // 1..100
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};
struct NodeAffinity {
  std::optional<NodeSelector> required_during_scheduling_ignored_during_execution;
  std::vector<PreferredSchedulingTerm> preferred_during_scheduling_ignored_during_execution;
  bool operator==(const NodeAffinity&) const = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
};
struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm pod_affinity_term;
};
struct PodAffinity {
  std::vector<PodAffinityTerm> required;  // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<WeightedPodAffinityTerm> preferred;
};
struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
};

struct Toleration {
  std::string key;
  std::string op = "Equal";  // "Equal" | "Exists"
  std::string value;
  std::string effect;  // "" (all), NoSchedule, PreferNoSchedule, NoExecute
  std::optional<int64_t> toleration_seconds;
  bool operator==(const Toleration&) const = default;
};
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

struct ContainerPort {
  std::string name;
  int32_t container_port = 0;
  int32_t host_port = 0;  // 0 = none
  std::string protocol = "TCP";
  std::string host_ip;
};

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  // resources.claims[].name: entries of spec.resourceClaims this container uses (DRA).
  std::vector<std::string> resource_claims;
  std::vector<ContainerPort> ports;
  std::string restart_policy;  // init containers only: "Always" makes a native sidecar
};

struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  std::string when_unsatisfiable = "DoNotSchedule";  // | ScheduleAnyway
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::string node_affinity_policy;  // "" | Honor | Ignore
  std::string node_taints_policy;    // "" | Honor | Ignore
  std::vector<std::string> match_label_keys;
};

struct PodSchedulingGate {
  std::string name;
};

struct Volume {
  std::string name;
  std::string persistent_volume_claim;  // claimName; empty when not a PVC volume
  // volumes[].ephemeral.volumeClaimTemplate (generic ephemeral volume, KEP-1698), the whole
  // template ({metadata, spec}) as decoded; null when not an ephemeral volume. The claim is
  // "<pod name>-<volume name>" (upstream k8s.io/component-helpers/storage/ephemeral).
  std::shared_ptr<const YAML::Node> ephemeral_claim_template;
  // The in-tree block-device and csi sources the volume plugins read (api/volume_source.h);
  // type kOther for every other source.
  VolumeSource source;
};

// spec.resourceClaims[] (core/v1 PodResourceClaim, Dynamic Resource Allocation): a name
// local to the pod and exactly one of resourceClaimName (an existing ResourceClaim in the
// pod's namespace) or resourceClaimTemplateName (the resourceclaim controller creates a
// claim for the pod from the template and records it in status.resourceClaimStatuses).
struct PodResourceClaim {
  std::string name;
  std::string resource_claim_name;
  std::string resource_claim_template_name;
};
// status.resourceClaimStatuses[] (core/v1 PodResourceClaimStatus): the generated claim of
// a template entry; empty resource_claim_name: none was needed.
struct PodResourceClaimStatus {
  std::string name;
  std::string resource_claim_name;
  bool operator==(const PodResourceClaimStatus&) const = default;
};

// status.extendedResourceClaimStatus (KEP-5004, core/v1 PodExtendedResourceClaimStatus):
// the claim the scheduler created for the pod's extended resources backed by DRA, and
// which of its requests serves which container's resource.
struct ContainerExtendedResourceRequest {
  std::string container_name;
  std::string resource_name;
  std::string request_name;
  bool operator==(const ContainerExtendedResourceRequest&) const = default;
};
struct PodExtendedResourceClaimStatus {
  std::vector<ContainerExtendedResourceRequest> request_mappings;
  std::string resource_claim_name;
  bool operator==(const PodExtendedResourceClaimStatus&) const = default;
};

// spec.workloadRef (Kubernetes 1.35, KEP-4671): the pod's gang in a Workload.
struct WorkloadReference {
  std::string name;                   // Workload in the pod's namespace
  std::string pod_group;              // entry of spec.podGroups
  std::string pod_group_replica_key;  // splits one pod group into independent gangs
};

struct PodSpec {
  std::string node_name;
  std::string scheduler_name = "default-scheduler";
  std::map<std::string, std::string> node_selector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  ResourceList overhead;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string preemption_policy;  // "" (PreemptLowerPriority) | Never
  std::vector<PodSchedulingGate> scheduling_gates;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::vector<Volume> volumes;
  std::vector<PodResourceClaim> resource_claims;  // spec.resourceClaims (DRA)
  std::string restart_policy;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<WorkloadReference> workload_ref;  // 1.35 spec.workloadRef
  std::string scheduling_group_pod_group_name;    // 1.36+ spec.schedulingGroup.podGroupName
  // Node features the pod needs (KEP-5328 Node Declared Features), inferred on decode
  // from the spec as upstream's k8s.io/component-helpers/nodedeclaredfeatures registry
  // does for scheduling (api::InferNodeFeatures in decode.cc); sorted, unique.
  std::vector<std::string> required_node_features;
  // spec.resources (KEP-2837 pod-level resources, beta in 1.34); nullopt when absent.
  // Requests are defaulted on decode as upstream's SetDefaults_Pod (defaultPodRequests).
  std::optional<ResourceRequirements> resources;
  // spec.hostNetwork. On decode, as upstream's SetDefaults_PodSpec (pkg/apis/core/v1/
  // defaults.go defaultHostNetworkPorts), every container port without a hostPort gets
  // hostPort = containerPort, so NodePorts sees the ports the pod takes on the node.
  bool host_network = false;
  // Fields kube-scheduler reads for placement that Phalanx decodes but does not honour
  // (api::UnsupportedPodFields, field_audit.h), as paths from the manifest, e.g.
  // "spec.volumes[2].gcePersistentDisk". Non-empty: every scheduling attempt of the pod is
  // UnschedulableAndUnresolvable with a reason naming them (framework PreFilter), never a
  // placement that ignores them.
  std::vector<std::string> unsupported_fields;
};

struct PodCondition {
  std::string type;    // PodScheduled, ...
  std::string status;  // True | False | Unknown
  std::string reason;
  std::string message;
};

// v1.ContainerStatus: the fields in-place resize (KEP-1287) accounting reads. nullopt
// mirrors a nil map / pointer in Go (absent), which upstream distinguishes from empty.
struct ContainerStatus {
  std::string name;
  std::optional<ResourceList> allocated_resources;  // allocatedResources
  std::optional<ResourceList> resources_requests;   // resources.requests (actuated)
};

struct PodStatus {
  std::string phase = "Pending";         // Pending | Running | Succeeded | Failed | Unknown
  std::vector<PodCondition> conditions;  // incl. PodResizePending (reason Infeasible|Deferred)
  std::vector<ContainerStatus> container_statuses;
  std::vector<ContainerStatus> init_container_statuses;
  std::string nominated_node_name;
  std::optional<Timestamp> start_time;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;  // DRA, generated claims
  // Written by the scheduler's PreBind (DynamicResources); not decoded from manifests.
  std::optional<PodExtendedResourceClaimStatus> extended_resource_claim_status;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;

  // "namespace/name", the key the cache and queue use.
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
};

struct NodeCondition {
  std::string type;
  std::string status;
};

struct ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

struct Node {
  ObjectMeta metadata;
  struct Spec {
    bool unschedulable = false;
    std::vector<Taint> taints;
  } spec;
  struct Status {
    ResourceList capacity;
    ResourceList allocatable;
    std::vector<NodeCondition> conditions;
    std::vector<ContainerImage> images;
    std::vector<std::string> declared_features;  // status.declaredFeatures (KEP-5328), sorted
  } status;
};

struct Namespace {
  ObjectMeta metadata;
};

struct PriorityClass {
  ObjectMeta metadata;
  int32_t value = 0;
  bool global_default = false;
  std::string preemption_policy;
};

// intstr.IntOrString: an integer or a string such as "50%" (policy/v1 minAvailable /
// maxUnavailable).
struct IntOrString {
  bool is_string = false;
  int32_t int_value = 0;
  std::string str_value;
};

// policy/v1 PodDisruptionBudget (k8s.io/api/policy/v1/types.go). spec.selector unset
// (nullopt) selects no pod; in policy/v1 an empty selector selects every pod of the
// namespace for the disruption controller, while the scheduler's preemption treats nil and
// empty alike as matching nothing (default_preemption.go filterPodsWithPDBViolation).
// At most one of minAvailable / maxUnavailable is set (validation).
struct PodDisruptionBudget {
  // "policy/v1" or "policy/v1beta1", where an empty selector selects nothing for the
  // disruption controller too.
  std::string api_version = "policy/v1";
  ObjectMeta metadata;
  struct Spec {
    std::optional<LabelSelector> selector;
    std::optional<IntOrString> min_available;
    std::optional<IntOrString> max_unavailable;
    // "" (unset: IfHealthyBudget), "IfHealthyBudget" or "AlwaysAllow" (KEP-3017).
    std::string unhealthy_pod_eviction_policy;
  } spec;
  struct Status {
    int64_t observed_generation = 0;
    // Pod name -> time the API server processed its eviction; the disruption controller
    // drops an entry once the pod is gone or after 2 minutes.
    std::map<std::string, Timestamp> disrupted_pods;
    int32_t disruptions_allowed = 0;
    int32_t current_healthy = 0;
    int32_t desired_healthy = 0;
    int32_t expected_pods = 0;
  } status;
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
};
using PodDisruptionBudgetPtr = std::shared_ptr<const PodDisruptionBudget>;

// A controller whose pod template the simulator expands into pods: Deployment,
// ReplicaSet, StatefulSet (replicas) or Job (parallelism, capped by completions).
struct WorkloadController {
  std::string api_version;
  std::string kind;
  ObjectMeta metadata;
  int32_t replicas = 1;  // replicas, or for a Job min(parallelism, completions)
  ObjectMeta template_metadata;
  PodSpec template_spec;
  // Job spec.suspend: the Job controller creates no pods while it is true (batch/v1
  // JobSpec, KEP-2232).
  bool suspend = false;
  // Job spec.completionMode Indexed: each pod carries its completion index (annotation and
  // label batch.kubernetes.io/job-completion-index) and is named "<job>-<index>-<suffix>".
  bool indexed = false;
  std::string source;  // the file it was read from, for messages
};

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;

}  // namespace phalanx::api
