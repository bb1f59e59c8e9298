// NodeVolumeLimits (upstream pkg/scheduler/framework/plugins/nodevolumelimits/csi.go,
// CSILimits): the number of unique volumes of each CSI driver on a node must not exceed
// the driver's limit.
//
//   PreFilter  Skip unless the pod has a persistentVolumeClaim, a generic ephemeral or an
//              inline awsElasticBlockStore / gcePersistentDisk / azureDisk / cinder volume.
//   Filter     the pod's new volumes (unique "<driver>/<volumeHandle>") are counted per limit
//              key, after removing those already used by pods on the node, and with the
//              node's volumes must stay within the limits, else Unschedulable "node(s) exceed
//              max volume count". The limits: every node allocatable "attachable-volumes-*"
//              (as upstream's getVolumeLimits), overridden by the node's CSINode
//              spec.drivers[].allocatable.count under "attachable-volumes-csi-<driver>"
//              (CSIAttachLimitKey). A volume counts as:
//                - a claim bound to a CSI PV: (csi.driver, csi.volumeHandle);
//                - a claim bound to an in-tree PV (aws-ebs, gce-pd, azure-disk, cinder) on a
//                  node with a CSINode (migration on): the migrated driver and the translated
//                  handle (translation.h);
//                - an unbound claim, or one bound to a missing PV: its StorageClass's
//                  provisioner (the migrated driver for an in-tree provisioner) and a handle
//                  unique to the claim ("<ns>/<name>"); no class: not counted;
//                - an inline in-tree volume with migration on: as the in-tree PV above.
//              A claim of the pod that does not exist: UnschedulableAndUnresolvable
//              "looking up PVC <ns>/<name>: persistentvolumeclaim \"<name>\" not found"; a
//              generic ephemeral claim not owned by the pod: Error "PVC <ns>/<name> was not
//              created for pod <ns>/<pod> (pod is not owner)". Claims of pods already on the
//              node that are missing are not counted.
//
// In-tree volumes on nodes without a CSINode (migration off): current upstream does not count
// them (the in-tree EBSLimits, GCEPDLimits, AzureDiskLimits and CinderLimits plugins were
// removed in 1.27). As v1.20's plugins did, Phalanx counts them, by in-tree volume id,
// against the node allocatable attachable-volumes-aws-ebs / -gce-pd / -azure-disk / -cinder
// when the node reports that key (v1.20 non_csi.go with its allocatable override). Unlike
// v1.20 no default limit (39 EBS, 16 GCE PD / Azure Disk, 256 Cinder) applies when the
// key is absent.
//
// Not ported: the VolumeAttachment counting of the newest upstream (attachments of volumes
// no pod on the node uses); Phalanx does not keep VolumeAttachment objects.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/interface.h"
#include "framework/registry.h"
#include "volume/catalog.h"

namespace phalanx::plugins::nodevolumelimits {

inline constexpr const char* kReasonMaxVolumeCountExceeded = "node(s) exceed max volume count";

class CSILimits final : public framework::PreFilterPlugin,
                        public framework::FilterPlugin,
                        public framework::EnqueueExtensions,
                        public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "NodeVolumeLimits";
  // No args. Needs the volume::Catalog service (claims, PVs, classes, CSINodes).
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  explicit CSILimits(volume::Catalog* catalog) : catalog_(catalog) {}
  std::string_view Name() const override { return kName; }
  // Pods without volumes that count (see PreFilter) are trivially batchable; others never.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // CSINode and claim adds (storage events), a deleted pod that had a claim, an ephemeral or
  // an inline migratable volume (upstream isSchedulableAfterPodDeleted), and node adds /
  // allocatable changes (Phalanx reads node allocatable attachable-volumes-* too).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // Adds `pod`'s attachable volumes to *out (unique name -> limit key), as upstream
  // filterAttachableVolumes. `new_pod`: a missing claim is an error (else not counted).
  framework::Status AttachableVolumes(const volume::View& view, const api::Pod& pod,
                                      bool has_csi_node, bool new_pod,
                                      std::map<std::string, std::string>* out) const;

 private:
  volume::Catalog* catalog_;
};

}  // namespace phalanx::plugins::nodevolumelimits
