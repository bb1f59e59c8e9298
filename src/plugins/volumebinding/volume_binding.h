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
//   PreScore / Score  capacity scoring, only when the args carry `shape` (see
//              VolumeBindingArgs below; upstream volume_binding.go Score with the feature
//              gates VolumeCapacityPriority and StorageCapacityScoring on): the node's
//              choice from Filter scored per storage class by utilization = requested * 100 /
//              capacity through the shape (CapacityScorer). Without `shape` PreScore Skips.
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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "plugins/noderesources/resource_allocation.h"
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

// config.VolumeBindingArgs (upstream pkg/scheduler/apis/config/types_pluginargs.go).
//   bindTimeoutSeconds  int >= 0, default 600.
//   shape               list of {utilization: 0..100, score: 0..10} with utilization
//                       strictly increasing (upstream validateFunctionShape, errors name
//                       "shape[i].utilization" / "shape[i].score"). Absent or null: no
//                       capacity scoring (upstream with the VolumeCapacityPriority gate off,
//                       its default). Present: scoring on, as upstream with the gates
//                       VolumeCapacityPriority and StorageCapacityScoring on; an empty list
//                       takes upstream's SetDefaults_VolumeBindingArgs shape for that case,
//                       {0: 10, 100: 0} (prefer the node with the most free capacity).
struct VolumeBindingArgs {
  int64_t bind_timeout_seconds = 600;
  std::optional<std::vector<noderesources::UtilizationShapePoint>> shape;
};
// Decodes and validates `args` (null / empty: defaults). Errors: Status::Error
// "VolumeBindingArgs: <field path>: <upstream's field error>"; unknown fields are errors.
framework::StatusOr<VolumeBindingArgs> ParseVolumeBindingArgs(framework::PluginArgs args);

// Requested and capacity bytes of one storage class on one node (upstream StorageResource).
struct StorageResource {
  int64_t requested = 0;
  int64_t capacity = 0;
};

// Upstream scorer.go buildScorerFunction: per class f(requested * 100 / capacity), f(100)
// when capacity is 0 or exceeded, f = helper.BuildBrokenLinearFunction over the shape with
// scores scaled from 0..10 to 0..MaxNodeScore; the node score is the mean over the classes
// rounded half away from zero (0 with no class). Utilization is computed in 128 bits.
class CapacityScorer {
 public:
  explicit CapacityScorer(const std::vector<noderesources::UtilizationShapePoint>& shape);
  int64_t operator()(const std::map<std::string, StorageResource>& classes) const;

 private:
  noderesources::BrokenLinearFunction f_;
};

// The per-node choices of one pod's cycle (shared by its CycleState and the in-flight list).
struct Choices {
  absl::Mutex mu;
  std::map<std::string, volume::PodVolumes> by_node ABSL_GUARDED_BY(mu);
};

class VolumeBinding final : public framework::PreFilterPlugin,
                            public framework::FilterPlugin,
                            public framework::PreScorePlugin,
                            public framework::ScorePlugin,
                            public framework::ReservePlugin,
                            public framework::PreBindPlugin,
                            public framework::EnqueueExtensions,
                            public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "VolumeBinding";
  // args: VolumeBindingArgs (above; ParseVolumeBindingArgs). Needs the volume::Catalog
  // service (scheduler/profile.cc provides it).
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  VolumeBinding(volume::Catalog* catalog, framework::Handle* handle, const VolumeBindingArgs& args)
      : catalog_(catalog), handle_(handle), bind_timeout_s_(args.bind_timeout_seconds) {
    if (args.shape) scorer_.emplace(*args.shape);
  }
  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: pods with claims are never batched (each needs its own PVs).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Skip without `shape` or for pods without claims.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  // 0..100 (upstream Score): with static bindings on the node, per class (the PV's
  // storageClassName) requested = sum of the claims' requests, capacity = sum of the chosen
  // PVs' capacities; with none, per claim class the provisioned claims' requests against
  // spec.capacity of the CSIStorageCapacity Filter's capacity check chose (the last one per
  // class, as upstream; claims of drivers that publish no capacity are left out).
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
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
  std::optional<CapacityScorer> scorer_;  // set when the args carry `shape`
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
