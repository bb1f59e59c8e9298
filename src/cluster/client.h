// The write side of the seam between the scheduler and a cluster: the time source and the
// writes plugins and the scheduler make (bind, delete, status, events). Implemented by the
// in-process Store (simulate, tests) and by the API client (live mode). Part of the seam
// module src/cluster/ (interfaces only): client and store implement it without including
// each other or the framework's internals. framework::Clock / framework::ClusterClient
// (framework/handle.h) name the same types.
//
// Results are api::Status (api/status.h), with the API server's answer as the code:
// NotFound (the pod is gone), AlreadyExists / Aborted (409: already bound, recreated),
// Unavailable (transport, 5xx) ...; plugins turn them into their framework::Status.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"

namespace phalanx::cluster {

// Time source, injected so that simulate and tests are deterministic.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual api::Timestamp Now() const = 0;
};

// Writes that plugins (binder, preemption) make to the cluster: the embedded store in
// simulate, the API server in live mode.
class ClusterClient {
 public:
  virtual ~ClusterClient() = default;
  // POST pods/binding. Errors: pod gone (NotFound), already bound (Conflict), transport.
  virtual api::Status Bind(const api::Pod& pod, const std::string& node) = 0;
  // DELETE a pod (preemption victim).
  virtual api::Status DeletePod(const api::Pod& pod) = 0;
  // PATCH the pod's metadata.annotations: each key of `annotations` is added or replaced,
  // the pod's other annotations are kept (strategic merge patch, as upstream's
  // schedulerutil.PatchPod and the GPU-sharing extenders' PatchPodAnnotationSpec send).
  // Synchronous (PreBind runs it on a binding worker). When the pod has a UID the patch
  // carries it, so a pod re-created under the same name is not patched (Conflict or
  // Invalid from the server). Errors: NotFound (pod gone), transport. Sources that cannot
  // write annotations return Unimplemented.
  virtual api::Status PatchPodAnnotations(const api::Pod& pod,
                                          const std::map<std::string, std::string>& annotations) {
    return api::Status(absl::StatusCode::kUnimplemented,
                       "this cluster client cannot patch pod annotations");
  }
  // PUT (replace) an object of a kind the core model does not type: `obj.object` is the
  // whole new object, its metadata.resourceVersion the version it was read at (the API
  // server answers Conflict, Aborted here, when the object changed since). VolumeBinding's
  // PreBind writes PersistentVolumes (spec.claimRef) and PersistentVolumeClaims (the
  // selected-node annotation) through it, as upstream's binder does with Update
  // (pkg/controller/volume/scheduling/scheduler_binder.go bindAPIUpdate). Errors: NotFound,
  // Aborted, transport. Sources that cannot write objects return Unimplemented.
  virtual api::Status PutObject(const api::Unstructured& obj) {
    return api::Status(absl::StatusCode::kUnimplemented,
                       "this cluster client cannot update " + obj.kind + " objects");
  }
  // PATCH status.nominatedNodeName (empty clears it) and/or the PodScheduled condition.
  virtual api::Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                                      const std::string* nominated_node_name) = 0;
  // Replaces the status of a resource.k8s.io ResourceClaim (PUT resourceclaims/NAME/status
  // with `claim`, the stored object whose status holds the new allocation and reservedFor,
  // as the DynamicResources plugin's PreBind writes it; upstream bindClaim). Synchronous.
  // Errors: NotFound (claim gone), Aborted (409 Conflict: a newer version exists),
  // transport. Sources that cannot write claims return Unimplemented.
  virtual api::Status UpdateResourceClaimStatus(const api::Unstructured& claim) {
    return api::Status(absl::StatusCode::kUnimplemented,
                       "this cluster client cannot write ResourceClaim status");
  }
  // POST resourceclaims: creates `claim` (a resource.k8s.io/v1 ResourceClaim whose
  // metadata.name is set, or empty with metadata.generateName for the server to complete)
  // and returns the object as stored (name, uid, resourceVersion set). DynamicResources'
  // PreBind creates the claim of a pod's extended resources backed by DRA through it
  // (upstream extendeddynamicresources.go createExtendedResourceClaimInAPI). Errors:
  // AlreadyExists, InvalidArgument (422), transport. Sources that cannot create claims
  // return Unimplemented.
  virtual api::StatusOr<api::Unstructured> CreateResourceClaim(const api::Unstructured& claim) {
    return api::Status(absl::StatusCode::kUnimplemented,
                       "this cluster client cannot create ResourceClaims");
  }
  // POST an object of a kind the core model does not type (e.g. a v1 PodTemplate, an
  // autoscaling.x-k8s.io/v1 ProvisioningRequest): `obj.object` is the whole object, its
  // metadata.name set (or generateName for the server to complete). Returns the object as
  // stored (uid and resourceVersion set). Errors: AlreadyExists, NotFound (the kind is not
  // served: its CRD is not installed), InvalidArgument (422), PermissionDenied (RBAC),
  // transport. Sources that cannot create objects return Unimplemented.
  virtual api::StatusOr<api::Unstructured> PostObject(const api::Unstructured& obj) {
    return api::Status(absl::StatusCode::kUnimplemented,
                       "this cluster client cannot create " + obj.kind + " objects");
  }
  // DELETE an object of such a kind (with its UID as precondition when it has one).
  // Errors: NotFound (already gone), Aborted (UID differs), transport. Unimplemented where
  // objects cannot be deleted.
  virtual api::Status DeleteObject(const api::Unstructured& obj) {
    return api::Status(absl::StatusCode::kUnimplemented,
                       "this cluster client cannot delete " + obj.kind + " objects");
  }
  // DELETE resourceclaims/NAME, with the claim's UID as precondition when it has one
  // (Unreserve of a claim PreBind created; upstream deleteClaim). Errors: NotFound (gone),
  // Aborted (UID differs), transport. Unimplemented where claims cannot be deleted.
  virtual api::Status DeleteResourceClaim(const api::Unstructured& claim) {
    return api::Status(absl::StatusCode::kUnimplemented,
                       "this cluster client cannot delete ResourceClaims");
  }
  // PATCH pods/NAME/status setting status.extendedResourceClaimStatus (upstream
  // patchPodExtendedResourceClaimStatus; strategic merge patch with the pod's UID).
  // Errors: NotFound (pod gone), transport. Unimplemented where pods cannot be patched.
  virtual api::Status PatchPodExtendedResourceClaimStatus(
      const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) {
    return api::Status(absl::StatusCode::kUnimplemented,
                       "this cluster client cannot patch pod status.extendedResourceClaimStatus");
  }
  // Records an Event (reason Scheduled / FailedScheduling / Preempted ...).
  virtual void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                           std::string_view message) = 0;
  // Records an Event on another object (e.g. a gang's PodGroup). `api_version`/`kind`
  // name the object's type. Sources that cannot record such events may ignore it.
  virtual void RecordObjectEvent(std::string_view api_version, std::string_view kind,
                                 std::string_view ns, std::string_view name, std::string_view type,
                                 std::string_view reason, std::string_view message) {}
  // Writes the status of a gang's PodGroup object (see PodGroupStatus below for the
  // dialects and fields). Asynchronous and coalesced by implementations that talk to a
  // server; never blocks the caller on the network. Sources that cannot write it may
  // ignore it.
  struct PodGroupStatus;
  virtual void UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                                    std::string_view ns, std::string_view name,
                                    const PodGroupStatus& status) {}
};

// The scheduler's view of a gang, written to its PodGroup's status. Field names follow
// the dialect's own API (the object's API group picks which fields are written):
//   scheduling.x-k8s.io/v1alpha1 (scheduler-plugins apis/scheduling/v1alpha1/types.go,
//     its CRD manifests/coscheduling/crd.yaml):
//     status.phase (Pending | Scheduling | Scheduled | Running | Finished | Failed),
//     status.running / succeeded / failed (member pods by phase),
//     status.scheduleStartTime (RFC 3339), status.occupiedBy ("ns/owner,...").
//   scheduling.sigs.k8s.io/v1alpha1 (the older group, as Koordinator's CRD still serves
//     it): the same plus status.scheduled, which its schema keeps (the x-k8s.io CRD
//     dropped it: the API server would prune it).
//   scheduling.volcano.sh/v1beta1 (volcano pkg/apis/scheduling/v1beta1/types.go):
//     status.phase (Pending | Inqueue | Running | Unknown | Completed),
//     status.running / succeeded / failed,
//     status.conditions[] {type Scheduled | Unschedulable, status, reason, message,
//     lastTransitionTime}.
//   scheduling.run.ai/v2alpha2 (KAI pkg/apis/scheduling/v2alpha2/podgroup_types.go):
//     status.pending / running / succeeded / failed, and
//     status.schedulingConditions[] {type UnschedulableOnNodePool, nodePool, status,
//     reason, message, reasons[] {reason, message}, lastTransitionTime}: one while the
//     gang is unschedulable, [] once it is placed. No phase (KAI defines no values).
//   scheduling.k8s.io/v1alpha2 PodGroup (KEP-5832, 1.36): status.conditions[] (a
//     metav1.Condition) {type PodGroupScheduled, status True | False, reason Scheduled |
//     Unschedulable, message, lastTransitionTime}. No phase, no counts.
struct ClusterClient::PodGroupStatus {
  std::string phase;                       // "" = not written (KAI, scheduling.k8s.io)
  int32_t scheduled = 0;                   // members bound (or finished after being bound)
  int32_t pending = 0;                     // members not bound yet
  int32_t running = 0;                     // members whose pod phase is Running
  int32_t succeeded = 0;                   // members that ended Succeeded
  int32_t failed = 0;                      // members that ended Failed
  api::Timestamp schedule_start_time = 0;  // 0 = unknown (not written)
  std::string occupied_by;                 // "" = not written
  // The latest scheduling outcome as a condition: type ("" = none; "Scheduled" /
  // "Unschedulable" for Volcano, "UnschedulableOnNodePool" for KAI, "PodGroupScheduled"
  // for scheduling.k8s.io), status ("True" / "False"), reason (CamelCase) and message.
  std::string condition_type;
  std::string condition_status = "True";
  std::string condition_reason;
  std::string condition_message;
  // When the condition last changed type, status or reason (its lastTransitionTime, as
  // metav1.Condition defines it); 0 = not known yet. Implementations keep it across
  // writes that change only the message or the counts (MergeConditionTime).
  api::Timestamp condition_time = 0;
  bool operator==(const PodGroupStatus& o) const {
    return phase == o.phase && scheduled == o.scheduled && pending == o.pending &&
           running == o.running && succeeded == o.succeeded && failed == o.failed &&
           schedule_start_time == o.schedule_start_time && occupied_by == o.occupied_by &&
           condition_type == o.condition_type && condition_status == o.condition_status &&
           condition_reason == o.condition_reason && condition_message == o.condition_message &&
           condition_time == o.condition_time;
  }
  // Sets condition_time: `prev`'s when `prev` (the status last written, or nullptr) has
  // the same condition type, status and reason, else `now`.
  void MergeConditionTime(const PodGroupStatus* prev, api::Timestamp now) {
    const bool same = prev && prev->condition_type == condition_type &&
                      prev->condition_status == condition_status &&
                      prev->condition_reason == condition_reason && prev->condition_time != 0;
    condition_time = same ? prev->condition_time : now;
  }
};

}  // namespace phalanx::cluster
