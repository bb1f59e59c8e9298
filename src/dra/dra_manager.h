// The scheduler's DRA state (upstream's DefaultDRAManager, the default implementation of
// framework.SharedDRAManager, with its listers and the claim assume cache,
// pkg/scheduler/framework/plugins/dynamicresources/dra_manager.go): DeviceClasses, ResourceSlices,
// ResourceClaims, ResourceClaimTemplates and DeviceTaintRules parsed from the informers' objects
// and kept current by the object handlers, plus the allocations in flight between Reserve and the
// claim status write in PreBind.
//
// Objects that fail to parse (model.h) are not used; their error is kept under the object
// and given as the reason to pods that reference them (a claim, a class) and listed by
// Errors() (a slice).
//
// Thread safety: every method takes the internal absl::Mutex; returned objects are
// immutable snapshots (shared_ptr to const).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "api/unstructured.h"
#include "dra/allocator.h"
#include "dra/model.h"

namespace phalanx::dra {

// Upstream's ResourceClaimReservedForMaxSize (k8s.io/api/resource/v1 types.go).
inline constexpr size_t kReservedForMaxSize = 256;

class DefaultDRAManager {
 public:
  // Object handlers: true when `obj` is a resource.k8s.io kind of this module (handled).
  bool OnObjectAdd(const api::UnstructuredPtr& obj);
  bool OnObjectUpdate(const api::UnstructuredPtr& obj) { return OnObjectAdd(obj); }
  bool OnObjectDelete(const api::UnstructuredPtr& obj);

  // scheduling.k8s.io PodGroups (KEP-5729: their spec.resourceClaims and
  // status.resourceClaimStatuses). Fed the same objects as the gang module (the scheduler's
  // object handlers call it besides gang::DefaultPodGroupManager); other objects are ignored. No
  // requeue: the pods learn their PodGroup claims through their own status update.
  void OnPodGroup(const api::UnstructuredPtr& obj, bool deleted);
  // The PodGroup ns/name's claims. NotFound when no such PodGroup is known; its parse error
  // (InvalidArgument naming the PodGroup and field).
  api::StatusOr<std::shared_ptr<const PodGroupClaims>> PodGroupClaimsOf(
      const std::string& ns, const std::string& name) const;

  // The claim ns/name as the scheduler sees it: an allocation in flight (Reserve .. PreBind)
  // or just written replaces the informer's status. NotFound "resourceclaim \"NAME\" not
  // found" (upstream's lister error) or the claim's parse error.
  api::StatusOr<ResourceClaimPtr> GetClaim(const std::string& ns, const std::string& name) const;
  // The claim in namespace `ns` that the scheduler made for pod `pod_uid`'s extended
  // resources backed by DRA (annotation resource.kubernetes.io/extended-resource-claim
  // "true", the pod as controlling owner by name and UID; upstream
  // findExtendedResourceClaim), as GetClaim sees it. nullptr when there is none.
  ResourceClaimPtr FindExtendedResourceClaim(const std::string& ns, const std::string& pod_name,
                                             const std::string& pod_uid) const;
  // The stored object of a claim (for the status write), nullptr when unknown.
  api::UnstructuredPtr ClaimObject(const std::string& ns, const std::string& name) const;
  api::StatusOr<ResourceClaimTemplate> GetTemplate(const std::string& ns,
                                                   const std::string& name) const;
  // Every valid DeviceClass by name; a class that failed to parse is absent and its error
  // is ClassError(name).
  std::shared_ptr<const std::map<std::string, DeviceClass>> Classes() const;
  // The DeviceClass that serves extended resource `resource_name` (KEP-5004; upstream's
  // DeviceClassResolver, pkg/scheduler/framework/plugins/dynamicresources/extended): the
  // class whose spec.extendedResourceName is the name, or class C for the implicit name
  // "deviceclass.resource.kubernetes.io/C". Several classes naming the same resource: the
  // newest (metadata.creationTimestamp), then the first by name (upstream keeps whichever
  // class event came last; this is the deterministic choice). "" when none maps it.
  std::string ClassForExtendedResource(const std::string& resource_name) const;
  // Whether any valid class has spec.extendedResourceName set (or any class exists: each
  // has its implicit name). Cheap; lets plugins skip the lookup for pods without such
  // requests.
  bool HasExtendedResourceClasses() const;
  // OK when DeviceClass `name` decoded (or is unknown); else InvalidArgument with its decode
  // error as the message.
  api::Status ClassError(const std::string& name) const;
  // Every valid ResourceSlice; a device matched by DeviceTaintRules carries their taints
  // after its own (KEP-5055: taints are cumulative; upstream's scheduler gets the same
  // from k8s.io/dynamic-resource-allocation/resourceslice/tracker). The patched copies are
  // cached until the slice or any rule changes.
  std::vector<ResourceSlicePtr> Slices() const;
  // The valid DeviceTaintRules (by name).
  std::vector<DeviceTaintRule> TaintRules() const;
  // The current slices indexed for the allocator (AllocatorInput::slice_index); rebuilt on
  // the first call after a slice changed.
  std::shared_ptr<const SliceIndex> SliceIndexView() const;
  // Selector results per device, shared by every cycle (AllocatorInput::memo); entries of
  // replaced or deleted slices are pruned when slices change.
  std::shared_ptr<SelectorMemo> Memo() const { return memo_; }
  // Devices allocated whole (not for admin access, not shares) by any claim, including
  // allocations in flight. Shares of devices with allowMultipleAllocations (results with a
  // shareID) are in InUse()'s `shared`, with the capacity they consume.
  std::set<DeviceId> AllocatedDevices() const { return AllocatedDevicesExcept({}); }
  // The same, leaving out the claims (and allocations in flight) whose UID is in `uids`.
  std::set<DeviceId> AllocatedDevicesExcept(const std::set<std::string>& uids) const;
  // The same sets as snapshots for AllocatorInput::in_use_index, kept incrementally (no
  // pass over every claim per cycle): O(pools) per call after a change.
  std::shared_ptr<const InUseIndex> InUse() const;
  std::shared_ptr<const InUseIndex> InUseExcept(const std::set<std::string>& uids) const;
  // Parse errors of the objects currently stored, e.g. a ResourceSlice with a bad quantity.
  std::vector<std::string> Errors() const;

  // The assume cache: Reserve signals an allocation in flight (upstream
  // SignalClaimPendingAllocation); Unreserve removes it (RemoveClaimPendingAllocation).
  bool HasPendingAllocation(const std::string& uid) const;
  void SignalPendingAllocation(const ResourceClaim& claim);
  bool RemovePendingAllocation(const std::string& uid);
  // After PreBind wrote `claim`'s status: the scheduler's view is `claim` until the
  // informer delivers a version of the object after the write (AssumeClaimAfterAPICall).
  void AssumeWritten(const ResourceClaim& claim);

  // Monotonic counter bumped by every change of the DRA objects (cycle memo invalidation).
  uint64_t generation() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, DeviceClass> classes_ ABSL_GUARDED_BY(mu_);
  mutable std::shared_ptr<const std::map<std::string, DeviceClass>> classes_view_
      ABSL_GUARDED_BY(mu_);
  // Explicit extendedResourceName -> class (rebuilt with classes_view_).
  mutable std::shared_ptr<const std::map<std::string, std::string>> extended_view_
      ABSL_GUARDED_BY(mu_);
  ResourceSlicePtr WithRuleTaints(const ResourceSlicePtr& s) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Slices() under mu_ (the patched copies cached in tainted_).
  std::vector<ResourceSlicePtr> SlicesLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::map<std::string, ResourceSlicePtr> slices_ ABSL_GUARDED_BY(mu_);      // by name
  std::map<std::string, DeviceTaintRule> taint_rules_ ABSL_GUARDED_BY(mu_);  // by name
  // PodGroups by ns/name: parsed, or the parse error.
  std::map<std::string, std::shared_ptr<const PodGroupClaims>> pod_groups_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> pod_group_errors_ ABSL_GUARDED_BY(mu_);
  // slices_ with the rules' taints added, by name (filled lazily by Slices()).
  mutable std::map<std::string, ResourceSlicePtr> tainted_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ResourceClaimPtr> claims_ ABSL_GUARDED_BY(mu_);  // ns/name
  std::map<std::string, api::UnstructuredPtr> claim_objects_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ResourceClaimTemplate> templates_ ABSL_GUARDED_BY(mu_);  // ns/name
  std::map<std::string, std::string> errors_ ABSL_GUARDED_BY(mu_);        // Unstructured key -> msg
  std::map<std::string, ResourceClaimPtr> pending_ ABSL_GUARDED_BY(mu_);  // by uid
  std::map<std::string, ResourceClaimPtr> written_ ABSL_GUARDED_BY(mu_);  // by ns/name
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;

  // Incremental devices-in-use: what each informer claim (by ns/name; nothing while an
  // allocation of it is in flight) and each allocation in flight (by UID) contributes.
  void RecountClaim(const std::string& nn) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecountPending(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetContribution(std::map<std::string, std::vector<DeviceResult>>* by, const std::string& key,
                       const ResourceClaim* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SlicesChanged() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::map<std::string, std::string> uid_to_nn_ ABSL_GUARDED_BY(mu_);
  // The results each contributes (whole devices, and shares of devices with
  // allowMultipleAllocations with their consumedCapacity).
  std::map<std::string, std::vector<DeviceResult>> claim_devices_ ABSL_GUARDED_BY(mu_);  // ns/name
  std::map<std::string, std::vector<DeviceResult>> pending_devices_ ABSL_GUARDED_BY(mu_);  // uid
  InUseIndex in_use_ ABSL_GUARDED_BY(mu_);
  mutable std::shared_ptr<const InUseIndex> in_use_view_ ABSL_GUARDED_BY(mu_);
  mutable std::shared_ptr<const SliceIndex> slice_index_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<SelectorMemo> memo_ = std::make_shared<SelectorMemo>();
};

}  // namespace phalanx::dra
