// Dynamic Resource Allocation objects (resource.k8s.io/v1, Kubernetes 1.34 GA), parsed from
// the store's / informers' Unstructured objects: DeviceClass, ResourceSlice, ResourceClaim,
// ResourceClaimTemplate. Only what structured allocation reads is kept; unknown fields are
// ignored (as the API server does), but the fields kept are checked strictly: a bad value
// is an InvalidArgumentError naming the object and the field, e.g.
//   `ResourceClaim default/gpus: spec.devices.requests[0].exactly.count: Invalid value: 0:
//    must be greater than zero`.
//
// Field names and rules: k8s.io/api/resource/v1/types.go and
// pkg/apis/resource/validation/validation.go. The v1beta1 request shape (deviceClassName
// directly on the request, devices under `basic:`) is read too, so manifests written for
// 1.32/1.33 load unchanged.
//
// Selectors are compiled once at parse time (cel::ParseSelector, src/cel/cel.h); an expression
// outside the supported CEL subset makes the whole object invalid, with the error naming
// the object, the field and the column (never treated as true).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/quantity.h"
#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"
#include "cel/cel.h"

namespace phalanx::dra {

inline constexpr char kGroup[] = "resource.k8s.io";
// Upstream's limits (k8s.io/api/resource/v1 types.go).
inline constexpr int kAllocationResultsMaxSize = 32;  // devices per claim
// The annotation upstream's resourceclaim controller puts on a generated claim
// (pkg/controller/resourceclaim/controller.go: "resource.kubernetes.io/pod-claim-name").
inline constexpr char kPodClaimNameAnnotation[] = "resource.kubernetes.io/pod-claim-name";

// spec.selectors[] of a class or a request: compiled CEL.
using Selectors = std::vector<cel::Selector>;

// DeviceClass (cluster-scoped).
struct DeviceClass {
  std::string name;
  Selectors selectors;
  // spec.extendedResourceName (KEP-5004, DRAExtendedResource: beta in 1.35/1.36, GA in
  // 1.37): an extended resource name ("example.com/gpu") whose container requests this
  // class's devices may serve on nodes that do not advertise the resource in
  // status.allocatable. "" when unset; every class also serves its implicit name
  // kImplicitExtendedResourcePrefix + name.
  std::string extended_resource_name;
  api::Timestamp creation_timestamp = 0;  // metadata.creationTimestamp (which class wins)
};
// k8s.io/api/resource/v1 ResourceDeviceClassPrefix: the implicit extended resource name of
// DeviceClass C is "deviceclass.resource.kubernetes.io/C".
inline constexpr char kImplicitExtendedResourcePrefix[] = "deviceclass.resource.kubernetes.io/";
// k8s.io/api/resource/v1 ExtendedResourceClaimAnnotation: set to "true" on the claim the
// scheduler creates for a pod's extended resources backed by DRA.
inline constexpr char kExtendedResourceClaimAnnotation[] =
    "resource.kubernetes.io/extended-resource-claim";
// Whether a claim with metadata `claim` is the one the scheduler made for the extended
// resources of pod `pod_name` / `pod_uid` (upstream findExtendedResourceClaim: the
// annotation is "true" and the pod, by name and UID, is its controlling owner).
bool IsExtendedResourceClaimOf(const api::ObjectMeta& claim, const std::string& pod_name,
                               const std::string& pod_uid);

// A device taint (KEP-5055, resource.k8s.io/v1 DeviceTaint; k8s.io/api/resource/v1
// types.go): in a ResourceSlice's devices[].taints[] or a DeviceTaintRule's spec.taint.
// effect is "NoSchedule", "NoExecute" or "None" (1.35+; informational). The API server
// keeps unknown effects of newer releases and consumers treat them like None (KEP-5055
// "Consumers must treat unknown effects like None"), so the parser accepts any non-empty
// effect; only NoSchedule and NoExecute keep a device from being allocated.
struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;
  std::string time_added;  // RFC 3339 as given ("" when unset); not used for allocation
  bool operator==(const DeviceTaint&) const = default;
};

// A request's tolerations[] (v1 DeviceToleration). op is "Equal" (default) or "Exists";
// toleration_seconds only matters for NoExecute eviction, which a scheduler does not do.
struct DeviceToleration {
  std::string key;
  std::string op = "Equal";
  std::string value;
  std::string effect;  // "" = every effect
  std::optional<int64_t> toleration_seconds;
};

// k8s.io/dynamic-resource-allocation/resourceclaim/devicetoleration.go ToleratesTaint:
// the effects match (an empty toleration effect matches all), the keys match (an empty
// toleration key matches all; validation requires Exists then), and Equal compares the
// values while Exists matches any value.
bool ToleratesTaint(const DeviceToleration& toleration, const DeviceTaint& taint);
// Whether a device with `taints` may be allocated for a request with `tolerations`: every
// NoSchedule / NoExecute taint is tolerated by one of them (structured/allocator.go
// allTaintsTolerated; None and unknown effects are skipped as KEP-5055 says).
bool AllTaintsTolerated(const std::vector<DeviceTaint>& taints,
                        const std::vector<DeviceToleration>& tolerations);

// A device capacity's requestPolicy (v1 CapacityRequestPolicy; KEP-5075 consumable capacity,
// DRAConsumableCapacity, beta in 1.36): how much of the capacity one allocation of a device
// with allowMultipleAllocations consumes. At most one of valid_range / valid_values; with
// either, default_value is set (validation.go validateRequestPolicy).
struct CapacityRequestPolicy {
  std::optional<api::Quantity> default_value;  // consumed when a request names no amount
  bool has_range = false;                      // validRange {min (required), max, step}
  api::Quantity min;
  std::optional<api::Quantity> max, step;
  std::vector<api::Quantity> valid_values;  // ascending, at most 10
};

// One device of a ResourceSlice (v1 Device). `view` is what CEL sees.
struct Device {
  std::string name;
  cel::DeviceView view;          // driver, attributes, capacity
  cel::PreparedDevice prepared;  // view, converted once for evaluation
  // consumesCounters (partitionable devices, KEP-4815): counter set -> counter -> amount.
  std::map<std::string, std::map<std::string, api::Quantity>> consumes_counters;
  // taints[] from the slice, plus those of matching DeviceTaintRules (added by
  // dra::DefaultDRAManager::Slices, as upstream's ResourceSlice tracker does for the scheduler).
  std::vector<DeviceTaint> taints;
  // Per-device node selection (the slice's spec.perDeviceNodeSelection, KEP-4815): exactly
  // one of node_name, node_selector, all_nodes when the slice sets it, none otherwise.
  std::string node_name;
  std::optional<api::NodeSelector> node_selector;
  bool all_nodes = false;
  // capacity{}.requestPolicy by capacity name (only with view.allow_multiple_allocations).
  std::map<std::string, CapacityRequestPolicy> request_policies;
  // Device binding conditions (KEP-5007, DRADeviceBindingConditions, beta in 1.36;
  // k8s.io/api/resource/v1 types.go Device): bindsToNode limits an allocation of this device
  // to the node it was allocated for (the allocation's nodeSelector names that node);
  // bindingConditions are condition types that must all be True in the claim's
  // status.devices[] entry of the device before the pod is bound, and any of
  // bindingFailureConditions True fails the binding. At most 4 of each, label names, no
  // duplicates, no type in both, one list only with the other (validateDeviceBindingParameters).
  bool binds_to_node = false;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
};

// ResourceSlice (cluster-scoped). Exactly one of node_name, node_selector, all_nodes,
// per_device_node_selection (validation: "Exactly one of NodeName, NodeSelector, AllNodes,
// and PerDeviceNodeSelection must be set"); a node selector has exactly one term. Only one
// of devices and shared_counters is set (1.36: a pool's counter sets live in slices of their
// own, which the pool's device slices reference; the allocator checks the references per
// pool, allocator.h).
struct ResourceSlice {
  std::string name;
  std::string driver;
  std::string pool;
  int64_t pool_generation = 0;
  int64_t resource_slice_count = 1;
  std::string node_name;
  std::optional<api::NodeSelector> node_selector;
  bool all_nodes = false;
  bool per_device_node_selection = false;  // each device names its nodes
  std::vector<Device> devices;
  // sharedCounters[]: counter set name -> counter -> available amount.
  std::map<std::string, std::map<std::string, api::Quantity>> shared_counters;
};
using ResourceSlicePtr = std::shared_ptr<const ResourceSlice>;

// One way of satisfying a request: v1 ExactDeviceRequest, or a firstAvailable subrequest.
struct RequestSpec {
  std::string name;  // the request's name; "request/subrequest" for a subrequest
  std::string device_class_name;
  Selectors selectors;
  bool all = false;   // allocationMode All (every matching device, at least one)
  int64_t count = 1;  // allocationMode ExactCount (default), count >= 1
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;  // at most 16 (DeviceTolerationsMaxLength)
  // capacity.requests (v1 CapacityRequirements, KEP-5075): capacity name -> amount wanted of
  // each device allocated for the request.
  std::map<std::string, api::Quantity> capacity_requests;
};

// spec.devices.requests[]: `exactly` (alternatives empty) or firstAvailable (tried in order).
struct DeviceRequest {
  std::string name;
  std::optional<RequestSpec> exactly;
  std::vector<RequestSpec> first_available;
  // The ways to satisfy the request: `exactly`, or the firstAvailable subrequests in order.
  std::vector<const RequestSpec*> Specs() const {
    std::vector<const RequestSpec*> specs;
    if (exactly) specs.push_back(&*exactly);
    for (const auto& sub : first_available) specs.push_back(&sub);
    return specs;
  }
};

// spec.devices.constraints[]: matchAttribute or distinctAttribute (exactly one; KEP-5075) over
// `requests` (empty: every request).
struct DeviceConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;     // fully qualified "domain/id": one value for all devices
  std::string distinct_attribute;  // fully qualified: a different value for every device
};

// status.allocation.devices.results[].
struct DeviceResult {
  std::string request;  // "req" or "req/subreq"
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  // A share of a device with allowMultipleAllocations (KEP-5075): what it consumes of each of
  // the device's capacities (all of them) and the share's ID (v1 consumedCapacity, shareID).
  std::map<std::string, api::Quantity> consumed_capacity;
  std::string share_id;  // "" for a whole device
  // Copies of the device's bindingConditions / bindingFailureConditions at allocation time
  // (KEP-5007; structured/internal/incubating/allocator_incubating.go).
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  // Quantities compare by value (Quantity.Cmp).
  bool operator==(const DeviceResult& o) const;
};

// status.allocation.
struct AllocationResult {
  std::vector<DeviceResult> devices;
  std::optional<api::NodeSelector> node_selector;  // nullopt: every node
  // allocationTimestamp (metav1.Time, RFC 3339 on the wire, whole seconds): when the
  // scheduler wrote the allocation (upstream's PreBind, bindClaim, sets it when unset, from
  // the scheduler's clock; the binding timeout counts from it). nullopt: not written yet.
  std::optional<api::Timestamp> allocation_timestamp;
  // The same allocation: the same devices on the same nodes. The timestamp says when it was
  // written, not what it is, and is left out (an allocation made in Reserve equals the one
  // PreBind wrote with its timestamp).
  bool operator==(const AllocationResult& o) const {
    return devices == o.devices && node_selector == o.node_selector;
  }
};

// status.devices[].conditions[] of a ResourceClaim (metav1.Condition; written by drivers,
// DRAResourceClaimDeviceStatus): only what binding conditions read.
struct DeviceCondition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  bool operator==(const DeviceCondition&) const = default;
};

// status.devices[] (AllocatedDeviceStatus), keyed by driver, pool, device (upstream's
// getAllocatedDeviceStatus does not compare shareID).
struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::vector<DeviceCondition> conditions;
  bool operator==(const AllocatedDeviceStatus&) const = default;
};

// status.reservedFor[] (ResourceClaimConsumerReference; resource "pods" for pods, apiGroup
// "scheduling.k8s.io" / resource "podgroups" for a PodGroup-owned claim, KEP-5729).
struct ConsumerReference {
  std::string api_group;  // "" = core
  std::string resource = "pods";
  std::string name;
  std::string uid;
  bool operator==(const ConsumerReference&) const = default;
};

// spec of a ResourceClaim (and of a template's claim).
struct ClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
};

struct ResourceClaim {
  api::ObjectMeta metadata;
  ClaimSpec spec;
  std::optional<AllocationResult> allocation;
  std::vector<ConsumerReference> reserved_for;
  // status.devices[] (device status written by drivers; read for binding conditions).
  // WithClaimStatus keeps the stored object's entries while the claim stays allocated and
  // drops them with the allocation (upstream's PostFilter clears status.devices too).
  std::vector<AllocatedDeviceStatus> devices;
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
};
using ResourceClaimPtr = std::shared_ptr<const ResourceClaim>;

struct ResourceClaimTemplate {
  api::ObjectMeta metadata;
  api::ObjectMeta claim_metadata;  // spec.metadata (labels, annotations)
  ClaimSpec spec;
};

// DeviceTaintRule (cluster-scoped; resource.k8s.io/v1alpha3 since 1.33, v1beta2 since
// 1.35; KEP-5055): spec.taint applies to every device matching spec.deviceSelector
// {driver, pool, device} (each optional; all set ones must match; an empty selector
// matches every device, no selector none). DeviceTaintSelector's older fields
// (deviceClassName, selectors) were removed upstream and are rejected here.
struct DeviceTaintRule {
  std::string name;
  bool has_selector = false;
  std::optional<std::string> driver, pool, device;
  DeviceTaint taint;
  // Whether the rule applies to device `device` of pool `pool` of `driver`.
  bool Matches(const std::string& driver_name, const std::string& pool_name,
               const std::string& device_name) const;
};

// KEP-5729 (DRA: ResourceClaim support for workloads; keps/sig-scheduling/
// 5729-resourceclaim-support-for-workloads): a scheduling.k8s.io PodGroup (1.36+,
// v1alpha2 / v1beta1) lists spec.resourceClaims[] {name, resourceClaimName |
// resourceClaimTemplateName} (at most 4, names unique). A pod of the group whose
// spec.resourceClaims entry matches one exactly (all three fields) uses the PodGroup's claim:
// for a template, the one claim the resourceclaim controller generated for the PodGroup
// (owned by it, named in the PodGroup's and the pod's status.resourceClaimStatuses), and
// the claim is reserved for the PodGroup as a whole (reservedFor {apiGroup
// scheduling.k8s.io, resource podgroups, name, uid}) instead of for each pod.
inline constexpr char kPodGroupApiGroup[] = "scheduling.k8s.io";
struct PodGroupResourceClaim {
  std::string name;
  std::string resource_claim_name;
  std::string resource_claim_template_name;
};
struct PodGroupClaims {
  api::ObjectMeta metadata;  // the PodGroup's
  std::vector<PodGroupResourceClaim> claims;
  // status.resourceClaimStatuses[]: entry name -> generated claim name ("" = none needed).
  std::map<std::string, std::string> statuses;
  // The entry a pod's spec.resourceClaims entry matches exactly; nullptr: none (the claim
  // is the pod's own, KEP-5729 "Pod").
  const PodGroupResourceClaim* Match(const api::PodResourceClaim& pc) const;
  // reservedFor entry of this PodGroup.
  ConsumerReference Consumer() const {
    return ConsumerReference{kPodGroupApiGroup, "podgroups", metadata.name, metadata.uid};
  }
};
// True for a scheduling.k8s.io PodGroup object (any version).
bool IsWorkloadPodGroup(const api::Unstructured& obj);
// InvalidArgument "PodGroup ns/name: spec.resourceClaims[i].<field>: <what>" as the other
// parsers (validation after KEP-5729's API: name required, exactly one of
// resourceClaimName and resourceClaimTemplateName, at most 4 entries, unique names).
api::StatusOr<PodGroupClaims> ParsePodGroupClaims(const api::Unstructured& obj);

// The kinds of this module; "" for other objects.
enum class Kind {
  kNone,
  kDeviceClass,
  kResourceSlice,
  kResourceClaim,
  kResourceClaimTemplate,
  kDeviceTaintRule
};
Kind KindOf(const api::Unstructured& obj);

// Parsers. InvalidArgumentError "<Kind> <ns/name>: <field>: <what>" (see file comment).
api::StatusOr<DeviceClass> ParseDeviceClass(const api::Unstructured& obj);
api::StatusOr<ResourceSlice> ParseResourceSlice(const api::Unstructured& obj);
api::StatusOr<ResourceClaim> ParseResourceClaim(const api::Unstructured& obj);
api::StatusOr<ResourceClaimTemplate> ParseResourceClaimTemplate(const api::Unstructured& obj);
api::StatusOr<DeviceTaintRule> ParseDeviceTaintRule(const api::Unstructured& obj);

// Writes `claim`'s status (allocation with its allocationTimestamp and the results' binding
// conditions, and reservedFor, in the v1 field names) into a copy of `obj` (the claim's
// stored object): what PreBind sends as the status update. The object's status.devices is
// kept when `claim` is allocated and dropped when it is not (deallocation).

api::Unstructured WithClaimStatus(const api::Unstructured& obj, const ResourceClaim& claim);

// The name upstream's resourceclaim controller asks for a claim generated from a template
// (pkg/controller/resourceclaim/controller.go handleClaim): generateName
// "<pod>-<podClaimName>-", both parts cut proportionally when longer than 57 characters,
// and the API server appends 5 random characters (names.SimpleNameGenerator). `suffix` is
// those 5 characters (the simulator derives them from the pod's UID for determinism).
std::string GeneratedClaimName(const std::string& pod_name, const std::string& pod_claim_name,
                               const std::string& suffix);

}  // namespace phalanx::dra
