// VolumeRestrictions (upstream pkg/scheduler/framework/plugins/volumerestrictions/
// volume_restrictions.go, current release): the in-tree disk conflicts and the
// ReadWriteOncePod access mode.
//
//   PreFilter  for each persistentVolumeClaim volume the claim must exist
//              (UnschedulableAndUnresolvable "persistentvolumeclaim \"x\" not found"; an
//              invalid claim: its decode error); the claims whose access modes include
//              ReadWriteOncePod are counted against the pods already placed (any node)
//              that use a claim of the same namespace/name (upstream
//              StorageInfos().IsPVCUsedByPods). A pod with no inline gcePersistentDisk /
//              awsElasticBlockStore / rbd / iscsi volume and no conflicting claim: Skip.
//   AddPod /   adjust the count by the claims of the pod added or removed (preemption's
//   RemovePod  what-if), as upstream's PreFilterExtensions.
//   Filter     a disk conflict with a pod on the node: Unschedulable "node(s) had no
//              available disk" —
//                gcePersistentDisk: same pdName, unless both are readOnly;
//                awsElasticBlockStore: same volumeID (always);
//                iscsi: same iqn, unless both are readOnly;
//                rbd: a common monitor, same pool and image, unless both are readOnly;
//              then a ReadWriteOncePod claim in use: Unschedulable "node has pod using
//              PersistentVolumeClaim with the same name and ReadWriteOncePod access mode".
// Only inline volumes conflict (PVs are not looked at), as upstream.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/interface.h"
#include "framework/registry.h"
#include "volume/catalog.h"

namespace phalanx::plugins::volumerestrictions {

inline constexpr const char* kReasonDiskConflict = "node(s) had no available disk";
inline constexpr const char* kReasonReadWriteOncePodConflict =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access "
    "mode";

// True when `v` (a volume of the pod to place) conflicts with a volume of `existing`
// (upstream isVolumeConflict).
bool IsVolumeConflict(const api::Volume& v, const api::Pod& existing);

class VolumeRestrictions final : public framework::PreFilterPlugin,
                                 public framework::PreFilterExtensions,
                                 public framework::FilterPlugin,
                                 public framework::EnqueueExtensions,
                                 public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "VolumeRestrictions";
  // No args. Needs the volume::Catalog service for the claims (without one every claim is
  // "not found").
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  VolumeRestrictions(volume::Catalog* catalog, framework::Handle* handle)
      : catalog_(catalog), handle_(handle) {}
  std::string_view Name() const override { return kName; }
  // Pods with neither claims nor inline in-tree disks are trivially batchable; others are
  // never batched (placing one changes the result for the next on that node).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::PreFilterExtensions* GetPreFilterExtensions() override { return this; }
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod_to_schedule,
                           const framework::PodInfoPtr& pod_to_add,
                           const framework::NodeInfo& node) override;
  framework::Status RemovePod(framework::CycleState& state,
                              const framework::PodInfo& pod_to_schedule,
                              const framework::PodInfoPtr& pod_to_remove,
                              const framework::NodeInfo& node) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Pod delete (hint: the deleted pod, of the same namespace, had a conflicting volume or
  // one of the pod's claims), Node add / taint / label update, claim add (storage events).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

 private:
  volume::Catalog* catalog_;
  framework::Handle* handle_;
};

}  // namespace phalanx::plugins::volumerestrictions
