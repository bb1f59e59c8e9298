// The field audit's production half: pod fields kube-scheduler reads for placement that
// Phalanx decodes but does not honour yet. The decoder (decode.cc, PodSpec) records them in
// PodSpec::unsupported_fields, and the framework makes such a pod unschedulable with a
// reason naming each field (framework::Framework::RunPreFilterPlugins), so no placement
// ever silently ignores one. The full audit — every Pod, Node and storage field upstream
// reads, honoured or not — is the table in src/sim/field_audit_test.cc, mirrored in
// docs/compatibility.md ("Field audit").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Node;
}

namespace phalanx::api {

// Volume sources of spec.volumes[] that upstream's plugins read and Phalanx does not:
//   portworxVolume: NodeVolumeLimits (plugins/nodevolumelimits/csi.go
//     checkAttachableInlineVolume, utils.go isCSIMigrationOn) counts an inline Portworx volume
//     against the pxd.portworx.com limit of the node's CSINode when the CSIMigrationPortworx
//     gate is on and the CSINode lists kubernetes.io/portworx-volume as migrated; Phalanx's
//     NodeVolumeLimits translates only aws-ebs, gce-pd, azure-disk and cinder.
// The sources VolumeRestrictions and NodeVolumeLimits honour (awsElasticBlockStore,
// gcePersistentDisk, azureDisk, cinder, iscsi, rbd: api/volume_source.h) are not listed;
// azureFile and vsphereVolume are read only to not skip NodeVolumeLimits' Filter, which
// counts nothing for them (isCSIMigrationOn is false for their plugins). Other sources
// (configMap, secret, emptyDir, hostPath, nfs, csi inline, ...) are not read by
// kube-scheduler. Sorted.
const std::vector<std::string_view>& UnsupportedVolumeSources();

// The unsupported fields set in a pod spec node (a YAML/JSON map; anything else gives
// none), as paths under `path` ("spec" for a Pod, "spec.template.spec" for a controller's
// template), in manifest order: "spec.volumes[0].gcePersistentDisk". A field counts as set
// when present and not null, as Go's decoding leaves a nil pointer for null.
std::vector<std::string> UnsupportedPodFields(const YAML::Node& spec, const std::string& path);

// The reason a pod with unsupported fields is unschedulable:
// "<field>: not supported by this scheduler" for each field, joined by "; ".
std::string UnsupportedFieldsReason(const std::vector<std::string>& fields);

}  // namespace phalanx::api
