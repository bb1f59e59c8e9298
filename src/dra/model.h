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
// Selectors are compiled once at parse time (dra::cel::ParseSelector); an expression
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
#include "dra/cel.h"

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
};

// One device of a ResourceSlice (v1 Device). `view` is what CEL sees.
struct Device {
  std::string name;
  cel::DeviceView view;             // driver, attributes, capacity
  cel::PreparedDevice prepared;     // view, converted once for evaluation
  // consumesCounters (partitionable devices, KEP-4815): counter set -> counter -> amount.
  std::map<std::string, std::map<std::string, api::Quantity>> consumes_counters;
};

// ResourceSlice (cluster-scoped). Exactly one of node_name, node_selector, all_nodes
// (validation: "exactly one of nodeName, nodeSelector, allNodes" for slices with devices).
struct ResourceSlice {
  std::string name;
  std::string driver;
  std::string pool;
  int64_t pool_generation = 0;
  int64_t resource_slice_count = 1;
  std::string node_name;
  std::optional<api::NodeSelector> node_selector;
  bool all_nodes = false;
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
  bool all = false;  // allocationMode All (every matching device, at least one)
  int64_t count = 1;  // allocationMode ExactCount (default), count >= 1
  bool admin_access = false;
};

// spec.devices.requests[]: `exactly` (alternatives empty) or firstAvailable (tried in order).
struct DeviceRequest {
  std::string name;
  std::optional<RequestSpec> exactly;
  std::vector<RequestSpec> first_available;
};

// spec.devices.constraints[]: matchAttribute over `requests` (empty: every request).
struct DeviceConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;  // fully qualified "domain/id"
};

// status.allocation.devices.results[].
struct DeviceResult {
  std::string request;  // "req" or "req/subreq"
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  bool operator==(const DeviceResult&) const = default;
};

// status.allocation.
struct AllocationResult {
  std::vector<DeviceResult> devices;
  std::optional<api::NodeSelector> node_selector;  // nullopt: every node
  bool operator==(const AllocationResult&) const = default;
};

// status.reservedFor[] (ResourceClaimConsumerReference; resource "pods" for pods).
struct ConsumerReference {
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
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
};
using ResourceClaimPtr = std::shared_ptr<const ResourceClaim>;

struct ResourceClaimTemplate {
  api::ObjectMeta metadata;
  api::ObjectMeta claim_metadata;  // spec.metadata (labels, annotations)
  ClaimSpec spec;
};

// The kinds of this module; "" for other objects.
enum class Kind { kNone, kDeviceClass, kResourceSlice, kResourceClaim, kResourceClaimTemplate };
Kind KindOf(const api::Unstructured& obj);

// Parsers. InvalidArgumentError "<Kind> <ns/name>: <field>: <what>" (see file comment).
api::StatusOr<DeviceClass> ParseDeviceClass(const api::Unstructured& obj);
api::StatusOr<ResourceSlice> ParseResourceSlice(const api::Unstructured& obj);
api::StatusOr<ResourceClaim> ParseResourceClaim(const api::Unstructured& obj);
api::StatusOr<ResourceClaimTemplate> ParseResourceClaimTemplate(const api::Unstructured& obj);

// Writes `claim`'s status (allocation and reservedFor, in the v1 field names) into a copy
// of `obj` (the claim's stored object): what PreBind sends as the status update.
api::Unstructured WithClaimStatus(const api::Unstructured& obj, const ResourceClaim& claim);

// The name upstream's resourceclaim controller asks for a claim generated from a template
// (pkg/controller/resourceclaim/controller.go handleClaim): generateName
// "<pod>-<podClaimName>-", both parts cut proportionally when longer than 57 characters,
// and the API server appends 5 random characters (names.SimpleNameGenerator). `suffix` is
// those 5 characters (the simulator derives them from the pod's UID for determinism).
std::string GeneratedClaimName(const std::string& pod_name, const std::string& pod_claim_name,
                               const std::string& suffix);

}  // namespace phalanx::dra
