// DynamicResources: Dynamic Resource Allocation with structured parameters (upstream
// pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, resource.k8s.io/v1).
// Pods name ResourceClaims in spec.resourceClaims; this plugin makes sure that every claim
// is allocated — devices from ResourceSlices picked by the structured allocator
// (dra/allocator.h) — and reserved for the pod before it is bound.
//
//   PreEnqueue  every claim exists (a template's claim recorded in the pod's
//               status.resourceClaimStatuses), is not being deleted, and a generated claim
//               is owned by the pod; otherwise the pod waits (upstream's wording, e.g.
//               `pod "ns/p": ResourceClaim not created yet`, `resourceclaim "c" not found`).
//   PreFilter   the claims; an allocated claim that is reserved for 256 consumers already is
//               "resourceclaim in use"; for unallocated claims the device classes must exist
//               ("request R: device class C does not exist"), no allocation may be in flight
//               ("resource claim ns/c is in the process of being allocated"), and an
//               Allocator is built with the devices already allocated. Pods without claims:
//               Skip.
//   Filter      an allocated claim's node selector must match the node ("resourceclaim not
//               available on the node"); unallocated claims must all be allocatable on the
//               node ("cannot allocate all claims", followed here by the claim that cannot
//               be satisfied even alone: `cannot allocate all claims (claim ns/c)`). The
//               allocation per node is kept for Reserve. A CEL runtime error aborts (Error).
//   PostFilter  an allocated claim unavailable on every node, reserved for nobody else, is
//               deallocated (its status cleared) so that the next attempt can move it.
//   Reserve     the node's allocation becomes the claims' allocation in flight (the
//               DefaultDRAManager's assume cache), re-checked against devices taken meanwhile (a
//               gang's members are reserved one after the other).
//   Unreserve   the allocation in flight is dropped; a reservation written in PreBind is
//               removed from reservedFor.
//   PreBind     each claim's status gets the allocation (with allocationTimestamp from the
//               scheduler's clock when unset) and the pod in reservedFor, written through
//               ClusterClient::UpdateResourceClaimStatus (the store in simulate). When a result
//               has bindingConditions (KEP-5007), the pod then waits in PreBind (a Normal Event
//               BindingConditionsPending "waiting for binding conditions for device on node N")
//               without holding a thread (PreBindWait, see below). The read and write of one
//               claim are serialized across binding cycles: gang members sharing a claim
//               write it once, and none binds before that write has succeeded.
//   PreBindWait upstream's isPodReadyForBinding, polled every 5 s (kBindingPollIntervalNs) and at
//               every scheduler Tick: Success once every result's bindingConditions are True
//               in the claim's status.devices[] entry of that device (driver, pool, device);
//               an Error "claim C binding failed: reason=R, message=\"M\"" as soon as one of
//               its bindingFailureConditions is True, "claim C binding timeout" when the
//               claim's allocationTimestamp is more than bindingTimeout ago, and "device
//               binding timeout" when bindingTimeout passed since the wait began. The failure
//               fails the binding cycle: Unreserve takes the pod out of reservedFor and the pod
//               is retried; in that attempt Filter finds the claim "resourceclaim not
//               available on the node" (failed, or not ready past its timeout) and PostFilter
//               deallocates it (allocation, reservedFor and status.devices cleared:
//               "deallocation of ResourceClaim completed"), freeing the device.
//   Args        DynamicResourcesArgs (pkg/scheduler/apis/config types.go): bindingTimeout
//               (Go duration, at least 1s, default 600s: DynamicResourcesBindingTimeoutDefault)
//               and filterTimeout (>= 0, accepted; Phalanx's allocator is bounded by search
//               steps instead, dra::kMaxSearchSteps). Errors name the field, upstream's
//               wording ("bindingTimeout: Invalid value: \"500ms\": must be at least 1 second").
//   Events      Node Add / UpdateNodeLabel; ResourceClaim Add / Update (hint: a claim of the
//               pod was created or its status changed, or any claim was deallocated);
//               Pod UpdatePodGeneratedResourceClaim (hint: this pod's claims now exist);
//               DeviceClass and ResourceSlice Add / Update.
//
// Workload API claims (KEP-5729): a claim entry that matches one of the pod's
// scheduling.k8s.io PodGroup's spec.resourceClaims is the PodGroup's claim: allocated once
// (the first member's cycle, or jointly in the gang's transaction, as any claim the members
// share), reserved for the PodGroup (one reservedFor entry however many members; a member
// arriving later finds it reserved and only checks the allocation's node selector), and
// kept allocated while the PodGroup lives. Unreserve takes the PodGroup out of reservedFor
// (and deallocates) only when this pod's PreBind put it there.
//
// Gangs (PodGroup cycles): PodGroupPlacement places a gang's members one by one on a view;
// this plugin keeps each placed member's devices tentatively taken (TakeOnView) so that later
// members do not count on them, and when member-by-member placement fails the joint search
// (JointAllocate, podgroup_algorithm.cc) allocates every member's claims together.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "dra/dra_manager.h"
#include "framework/interface.h"
#include "framework/podgroup.h"
#include "framework/prebind_wait.h"
#include "framework/registry.h"

namespace phalanx::plugins::dynamicresources {

// KEP-5007, upstream isClaimReadyForBinding: *ready is true when every result of `c`'s
// allocation that has bindingConditions finds them all True (conditions[].type, status
// "True") in the claim's status.devices[] entry of its driver, pool and device; a missing
// entry is not ready, and an unallocated claim is not ready. Error: FailedPrecondition
// "claim NAME binding failed: reason=R, message=\"M\"" when one of a result's
// bindingFailureConditions is True (checked before its bindingConditions).
api::Status ClaimReadyForBinding(const dra::ResourceClaim& c, bool* ready);
// Whether any result of `c`'s allocation has bindingConditions (upstream hasBindingConditions).
bool HasBindingConditions(const dra::ResourceClaim& c);

class DynamicResources final : public framework::PreEnqueuePlugin,
                               public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::PostFilterPlugin,
                               public framework::ReservePlugin,
                               public framework::PreBindPlugin,
                               public framework::WaitingPreBindPlugin,
                               public framework::EnqueueExtensions,
                               public framework::BatchablePlugin,
                               public framework::PodGroupPlacementPlugin {
 public:
  static constexpr std::string_view kName = "DynamicResources";
  // Needs the dra::DefaultDRAManager service (the scheduler provides it); without one, every pod
  // with claims is rejected with a clear reason.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  DynamicResources(framework::Handle& h, dra::DefaultDRAManager* manager,
                   int64_t binding_timeout_ns = kBindingTimeoutDefaultNs)
      : h_(h), dra_(manager), binding_timeout_ns_(binding_timeout_ns) {}
  // DynamicResourcesBindingTimeoutDefault (600 s) and the PreBind poll interval (upstream's
  // wait.PollUntilContextTimeout(ctx, 5*time.Second, ...)), in nanoseconds.
  static constexpr int64_t kBindingTimeoutDefaultNs = 600'000'000'000;
  static constexpr int64_t kBindingPollIntervalNs = 5'000'000'000;
  // DynamicResourcesArgs' bindingTimeout in nanoseconds (the default when absent). Errors:
  // wrong kind, unknown field, not a duration, bindingTimeout < 1s, filterTimeout < 0.
  static framework::StatusOr<int64_t> ParseArgs(framework::PluginArgs args);
  std::string_view Name() const override { return kName; }

  framework::Status PreEnqueue(const framework::PodInfo& pod) override;
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  framework::Status PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeToStatus& statuses,
                               framework::PostFilterResult* result) override;
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 const std::string& node) override;
  framework::Status PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node) override;
  framework::Status PreBindWait(framework::CycleState& state, const framework::PodInfo& pod,
                                const std::string& node, int64_t now, int64_t* wake_at) override;
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  // KEP-5598 pod signature: pods without resource claims are alike for this plugin (upstream
  // marks pods with claims unsignable).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;

  // PodGroupPlacementPlugin (see the file comment).
  bool ConcernsPodGroupMember(const framework::PodInfo& pod) const override;
  void PlacedOnView(const framework::CycleState& state, const framework::PodInfo& pod,
                    const std::string& node) override;
  void ViewReset() override;
  void SetJointMode(bool joint) override;
  framework::Status PlaceJointly(const std::vector<framework::CycleState*>& states,
                                 const std::vector<const framework::PodInfo*>& pods,
                                 const std::vector<std::string>& nodes) override;

  // The claims of `pod` in spec.resourceClaims order (entries whose template needed no claim
  // left out). `consumers` (optional) gets, per claim, whom it is reserved for: the pod, or
  // for an entry that matches one of its PodGroup's spec.resourceClaims exactly, the
  // PodGroup (KEP-5729; such a generated claim must be owned by the PodGroup: `ResourceClaim
  // ns/c was not created for pod group ns/pg (pod group is not owner)`). Errors: the
  // PreEnqueue reasons above, or the PodGroup's parse error.
  static api::StatusOr<std::vector<dra::ResourceClaimPtr>> PodClaims(
      const dra::DefaultDRAManager& m, const api::Pod& pod,
      std::vector<dra::ConsumerReference>* consumers = nullptr);

 private:
  // The claims of the pod as this cycle sees them: a claim a gang member placed on the view
  // took (tentative_) counts as allocated so. Error as PodClaims.
  api::StatusOr<std::vector<dra::ResourceClaimPtr>> CycleClaims(
      const api::Pod& pod, std::vector<dra::ConsumerReference>* consumers = nullptr) const;

  // PreBind of the pod's extended resources backed by DRA (see the file comment).
  framework::Status BindExtendedClaim(framework::CycleState& state, const api::Pod& pod);
  // Upstream isClaimTimeout: the claim's results have bindingConditions and its
  // allocationTimestamp + bindingTimeout is before `now`.
  bool ClaimTimedOut(const dra::ResourceClaim& c, int64_t now) const;

  framework::Handle& h_;
  dra::DefaultDRAManager* dra_;
  const int64_t binding_timeout_ns_;
  // Trial placements of the current PodGroup cycle (scheduling thread only): claim UID ->
  // the claim with the allocation a placed member's Filter chose for it.
  std::map<std::string, dra::ResourceClaimPtr> tentative_;
  bool joint_mode_ = false;
  // PreBinds run in parallel binding cycles; members of a gang that share a claim would each
  // read it unreserved and write it (one losing with 409 Conflict live). The read, check and
  // write of one claim's status hold the lock of its stripe (by claim UID), so the first
  // member writes the allocation and reservation and the others find it written.
  static constexpr size_t kClaimWriteStripes = 32;
  std::array<absl::Mutex, kClaimWriteStripes> claim_write_mu_;
};

}  // namespace phalanx::plugins::dynamicresources
