// The volume sources the volume plugins read (core/v1 VolumeSource and
// PersistentVolumeSource, k8s.io/api/core/v1/types.go): the in-tree block devices whose
// conflicts and attach limits the scheduler checks (awsElasticBlockStore, gcePersistentDisk,
// azureDisk, cinder, rbd, iscsi) and csi. Every other source (configMap, secret, emptyDir,
// hostPath, nfs, persistentVolumeClaim, ephemeral, ...) is kOther: the scheduler's volume
// plugins do not look at it.
//
// Readers: VolumeRestrictions (the disk conflicts of volume_restrictions.go
// isVolumeConflict) and NodeVolumeLimits (the in-tree -> CSI translation of
// k8s.io/csi-translation-lib). Decoded by DecodeVolumeSource for pod volumes
// (spec.volumes[i]) and PersistentVolumes (spec).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/status.h"

namespace YAML {
class Node;
}

namespace phalanx::api {

struct VolumeSource {
  enum class Type : uint8_t {
    kOther,
    kAWSElasticBlockStore,  // awsElasticBlockStore {volumeID, readOnly}
    kGCEPersistentDisk,     // gcePersistentDisk {pdName, readOnly}
    kAzureDisk,             // azureDisk {diskName, diskURI, readOnly}
    kCinder,                // cinder {volumeID, readOnly}
    kRBD,                   // rbd {monitors, pool (default "rbd"), image, readOnly}
    kISCSI,                 // iscsi {targetPortal, iqn, lun, readOnly}
    kCSI,                   // csi {driver, volumeHandle (PVs only), readOnly}
  };
  Type type = Type::kOther;
  // The volume's identity for its type: awsElasticBlockStore.volumeID, gcePersistentDisk.pdName,
  // azureDisk.diskURI, cinder.volumeID, rbd.image, iscsi.iqn, csi.volumeHandle ("" for an
  // inline csi volume, which has none).
  std::string id;
  bool read_only = false;
  std::string driver;                 // csi.driver
  std::string disk_name;              // azureDisk.diskName
  std::vector<std::string> monitors;  // rbd.monitors
  std::string pool;                   // rbd.pool (defaulted to "rbd" as the API server does)
  std::string target_portal;          // iscsi.targetPortal
  int32_t lun = 0;                    // iscsi.lun
};

// Decodes the source fields of `n` (a pod volume or a PersistentVolume's spec) into *out.
// Returns OK, else InvalidArgument with "<path>.<field>: <cause>" for a malformed field, with the
// required fields of upstream's validation (pkg/apis/core/validation validateVolumeSource /
// validatePersistentVolumeSpec): awsElasticBlockStore.volumeID, gcePersistentDisk.pdName,
// azureDisk.diskName and diskURI, cinder.volumeID, rbd.monitors and image, iscsi.targetPortal
// and iqn, csi.driver (and csi.volumeHandle for a PV: `persistent`). More than one of the
// sources above is an error ("may not specify more than 1 volume type"). `path` is the field
// path of `n`, e.g. "spec.volumes[0]" or "spec".
Status DecodeVolumeSource(const YAML::Node& n, const std::string& path, bool persistent,
                          VolumeSource* out);

}  // namespace phalanx::api
