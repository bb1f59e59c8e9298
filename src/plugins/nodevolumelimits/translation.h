// In-tree volume plugins migrated to CSI, for attach-limit counting: the subset of
// k8s.io/csi-translation-lib (translate.go and plugins/{aws_ebs,gce_pd,azure_disk,
// openstack_cinder}.go) that NodeVolumeLimits uses, and the limit keys of
// pkg/volume/util/attach_limit.go.
#pragma once

#include <optional>
#include <string>

#include "api/labels.h"
#include "api/volume_source.h"

namespace phalanx::plugins::nodevolumelimits {

// In-tree plugin names (csilibplugins.*InTreePluginName).
inline constexpr const char* kAWSEBSInTree = "kubernetes.io/aws-ebs";
inline constexpr const char* kGCEPDInTree = "kubernetes.io/gce-pd";
inline constexpr const char* kAzureDiskInTree = "kubernetes.io/azure-disk";
inline constexpr const char* kCinderInTree = "kubernetes.io/cinder";

// The in-tree plugin of a source type ("" for kOther / kCSI / kRBD / kISCSI, which this
// build does not migrate: RBD migration is alpha and off by default upstream).
std::string InTreePluginName(api::VolumeSource::Type t);

// The CSI driver an in-tree plugin migrates to (GetCSINameFromInTreeName):
// aws-ebs -> ebs.csi.aws.com, gce-pd -> pd.csi.storage.gke.io, azure-disk ->
// disk.csi.azure.com, cinder -> cinder.csi.openstack.org; nullopt for other names.
std::optional<std::string> CSIDriverForInTree(const std::string& plugin);

// IsMigratableIntreePluginByName: the in-tree plugins csi-translation-lib knows (the four
// above plus azure-file, vsphere-volume, portworx-volume and rbd).
bool IsMigratableInTreePlugin(const std::string& plugin);

// Upstream isCSIMigrationOn (nodevolumelimits/utils.go) for a node that has a CSINode
// (`has_csi_node`): true for aws-ebs, gce-pd, azure-disk and cinder, whose migration is GA
// and locked on; false otherwise (portworx and rbd need feature gates that are off by
// default; the others are not attachable).
bool IsCSIMigrationOn(bool has_csi_node, const std::string& plugin);

// The CSI volumeHandle an in-tree source translates to (TranslateInTreeInlineVolumeToCSI /
// TranslateInTreePVToCSI); nullopt with *error set when the source cannot be translated.
//   aws-ebs:    volumeID, or for "aws://<zone>/<vol-id>" the vol-id, which must match
//               ^vol-[^/]*$ (KubernetesVolumeIDToEBSVolumeID);
//   gce-pd:     "projects/UNSPECIFIED/zones/<zone>/disks/<pdName>" with the PV's zone label
//               (topology.kubernetes.io/zone, else the beta label; UNSPECIFIED for inline
//               volumes and PVs without one), or ".../regions/<region>/disks/<pdName>" for a
//               multi-zone label "a__b" (all zones of one region);
//   azure-disk: diskURI;  cinder: volumeID.
// `pv_labels` is null for an inline volume.
std::optional<std::string> TranslatedVolumeHandle(const api::VolumeSource& src,
                                                  const api::Labels* pv_labels, std::string* error);

// GetCSIAttachLimitKey: "attachable-volumes-csi-<driver>", or, when that is 63 characters
// or longer, the prefix + the driver's first 23 characters + the first 16 hex digits of
// the driver name's SHA-1.
std::string CSIAttachLimitKey(const std::string& driver);

// The node allocatable keys of v1.20's in-tree limit plugins (EBSLimits, GCEPDLimits,
// AzureDiskLimits, CinderLimits: attachable-volumes-aws-ebs, -gce-pd, -azure-disk,
// -cinder) by in-tree plugin name; "" for other names.
std::string InTreeAttachLimitKey(const std::string& plugin);

// SHA-1 of `data` as 40 lowercase hex digits (FIPS 180-4), for CSIAttachLimitKey.
std::string Sha1Hex(const std::string& data);

}  // namespace phalanx::plugins::nodevolumelimits
