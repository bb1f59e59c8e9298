// VolumeBinding (upstream pkg/scheduler/framework/plugins/volumebinding/volume_binding.go
// with the binder of pkg/controller/volume/scheduling/scheduler_binder.go): a pod's
// PersistentVolumeClaims — its persistentVolumeClaim volumes and the claims of its generic
// ephemeral volumes ("<pod>-<volume>") — must be bound, or bindable, on the node.
//
//   PreFilter  pods without claims: Skip. A claim that does not exist, is invalid (its decode
//              error names the object and field), is being deleted, names a missing or
//              invalid StorageClass, or is an ephemeral claim not owned by the pod:
//              UnschedulableAndUnresolvable with that reason (a missing ephemeral claim:
//              "waiting for ephemeral volume controller to create the persistentvolumeclaim
//              ..."). An unbound claim whose class binds Immediately (or has no class):
//              UnschedulableAndUnresolvable "pod has unbound immediate
//              PersistentVolumeClaims". Unbound WaitForFirstConsumer claims are bound in
//              Filter.
//   Filter     bound claims: the PV's node affinity must admit the node ("node(s) had volume
//              node affinity conflict"; a PV that does not exist: "node(s) unavailable due to
//              one or more pvc(s) bound to non-existent pv(s)"). Unbound claims, smallest
//              request first: the smallest free static PV that fits (catalog.h
//              FindMatchingVolume), else dynamic provisioning on the node (CheckProvision:
//              "node(s) didn't find available persistent volumes to bind", "node(s) did not
//              have enough free storage"). All reasons are UnschedulableAndUnresolvable.
//   Reserve    the node's choice is assumed in the volume::Catalog (no other pod can take
//              the PV); Unreserve reverts it.
//   PreBind    writes the PVs' claimRef and the claims' selected-node annotation through the
//              ClusterClient (PutObject) and waits, up to bindTimeoutSeconds (args,
//              default 600), until the PV controller has bound every claim.
//
// Gangs: the PodGroup algorithm places members on a snapshot view before any Reserve runs.
// So that two members never pick the same static PV, each pod's per-node choices are kept
// while it is in flight, and PreFilter excludes the PVs chosen by in-flight pods found on
// the view at the node their choice was made for (a reverted trial leaves the view and its
// choices stop counting).
//
// Without a volume::Catalog service (a Handle that provides none) every claim is "not
// found".
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "volume/catalog.h"

namespace phalanx::plugins::volumebinding {

// Upstream's reason texts (scheduler_binder.go ConflictReason, volume_binding.go).
inline constexpr const char* kReasonBindConflict =
    "node(s) didn't find available persistent volumes to bind";
inline constexpr const char* kReasonNodeConflict = "node(s) had volume node affinity conflict";
inline constexpr const char* kReasonNotEnoughSpace = "node(s) did not have enough free storage";
inline constexpr const char* kReasonPVNotExist =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
inline constexpr const char* kReasonUnboundImmediate =
    "pod has unbound immediate PersistentVolumeClaims";

// The per-node choices of one pod's cycle (shared by its CycleState and the in-flight list).
struct Choices {
  absl::Mutex mu;
  std::map<std::string, volume::PodVolumes> by_node ABSL_GUARDED_BY(mu);
};

class VolumeBinding final : public framework::PreFilterPlugin,
                            public framework::FilterPlugin,
                            public framework::ReservePlugin,
                            public framework::PreBindPlugin,
                            public framework::EnqueueExtensions,
                            public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "VolumeBinding";
  // args: VolumeBindingArgs {bindTimeoutSeconds: int >= 0 (default 600)}; unknown fields
  // are errors. Needs the volume::Catalog service (scheduler/profile.cc provides it).
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                      framework::Handle& h);
  VolumeBinding(volume::Catalog* catalog, framework::Handle* handle, int64_t bind_timeout_s)
      : catalog_(catalog), handle_(handle), bind_timeout_s_(bind_timeout_s) {}
  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: pods with claims are never batched (each needs its own PVs).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 const std::string& node) override;
  framework::Status PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node) override;
  // PersistentVolumeClaim / storage object events (the scheduler reports every storage
  // kind as a kPersistentVolumeClaim event), node adds and label changes.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

 private:
  // PVs chosen by other in-flight pods that sit on the snapshot view (see the header).
  std::set<std::string> TakenByInFlight(const std::string& self_uid);

  volume::Catalog* catalog_;
  framework::Handle* handle_;
  int64_t bind_timeout_s_;
  absl::Mutex inflight_mu_;
  std::map<std::string, std::shared_ptr<Choices>> inflight_ ABSL_GUARDED_BY(inflight_mu_);
};

// The names of `pod`'s claims, in volume order: persistentVolumeClaim.claimName, or
// "<pod>-<volume>" for a generic ephemeral volume (`ephemeral` set for those).
struct PodClaim {
  std::string name;
  bool ephemeral = false;
};
std::vector<PodClaim> PodClaims(const api::Pod& pod);

}  // namespace phalanx::plugins::volumebinding
