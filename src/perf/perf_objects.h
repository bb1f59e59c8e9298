// The storage objects upstream's scheduler_perf creates, built as upstream builds them, for
// the in-process harness (perf_runner.cc) to write into its Store.
//
// Sources (kubernetes v1.20.2):
//   test/utils/runners.go NodeAllocatableStrategy.createCSINode — a CSINode per node of a
//     createNodes op with nodeAllocatableStrategy;
//   test/utils/runners.go CreatePodWithPersistentVolume (bindVolume = true, the strategy of
//     NewCreatePodWithPersistentVolumeStrategy that getPodStrategy in
//     test/integration/scheduler_perf/scheduler_perf_test.go picks when a createPods op has
//     persistentVolumeClaimTemplatePath) — a PV and a PVC per pod;
//   scheduler_perf_test.go getCustomVolumeFactory — the PV's name and volume ID;
//   test/integration/util/util.go StartFakePVController — the claim's binding.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>

#include "api/status.h"
#include "api/unstructured.h"
#include "perf/perf_workload.h"

namespace phalanx::perf {

// core/v1 MigratedPluginsAnnotationKey.
inline constexpr const char* kAnnMigratedPlugins = "storage.alpha.kubernetes.io/migrated-plugins";

// The CSINode upstream's NodeAllocatableStrategy creates for `node_name`:
//   apiVersion: storage.k8s.io/v1, kind: CSINode, metadata.name: <node>,
//   metadata.annotations[storage.alpha.kubernetes.io/migrated-plugins]: migratedPlugins
//     joined with "," (present, possibly "", as upstream sets it unconditionally),
//   spec.drivers: one {name, nodeID: <node>, allocatable: {count}} per csiNodeAllocatable
//     entry (allocatable omitted when the entry has no count), in driver-name order
//     (upstream ranges over a Go map: any order).
// Upstream creates it through storage/v1beta1; the scheduler reads it as storage/v1.
api::Unstructured MakeCSINode(const std::string& node_name, const NodeStrategy& strategy);

// A createPods op's PersistentVolume and PersistentVolumeClaim templates, loaded once.
struct VolumeTemplates {
  std::string pv_path;
  std::string pvc_path;
  YAML::Node pv;            // the PersistentVolume document
  YAML::Node pvc;           // the PersistentVolumeClaim document
  api::ObjectMeta pv_meta;  // their metadata, decoded (labels, annotations)
  api::ObjectMeta pvc_meta;
};

// Reads both templates: each must be one YAML document with kind PersistentVolume
// (resp. PersistentVolumeClaim) and apiVersion v1 (or none), whose metadata decodes; the
// objects made from them must decode as valid storage objects (volume/objects.h:
// capacity, access modes, ...). Errors name the file and the field, e.g.
// "config/pv.yaml: PersistentVolume \"...\": spec.capacity[storage]: Required value".
api::Status LoadVolumeTemplates(const std::string& pv_path, const std::string& pvc_path,
                                VolumeTemplates* out);

// The objects of pod `i` (0-based within its createPods op) in namespace `ns`, as upstream's
// CreatePodWithPersistentVolume with bindVolume = true makes them:
//   pv   the PV template with name "<ns>-vol-<i>"; spec.csi.volumeHandle or
//        spec.awsElasticBlockStore.volumeID (whichever source the template has) "vol-<i>";
//        spec.claimRef {apiVersion: v1, kind: PersistentVolumeClaim, namespace: ns,
//        name: "pvc-<i>"} (no uid); status.phase Bound;
//   pvc  the PVC template with name "pvc-<i>" in `ns`, spec.volumeName unset (upstream
//        leaves it to the PV controller), status.phase Bound.
// Upstream creates each object (the API server resets status to phase Pending) and then
// writes the status above with UpdateStatus; `pv` and `pvc` hold the final objects and
// `pv_created` / `pvc_created` the created ones (status.phase Pending).
struct PodVolumeObjects {
  api::Unstructured pv_created, pv;
  api::Unstructured pvc_created, pvc;
  std::string claim_name;  // "pvc-<i>": the pod's volume "vol" names it
};
PodVolumeObjects MakePodVolumeObjects(const VolumeTemplates& t, const std::string& ns, int64_t i);

// What upstream's fake PV controller (StartFakePVController syncPV) writes for `pv` when it
// names a claim that exists: the claim with spec.volumeName = pv's name and the annotation
// pv.kubernetes.io/bind-completed: "yes". Returns false (nothing to write) when the PV has
// no claimRef, or the claim's spec.volumeName is already set.
bool FakePVControllerSync(const api::Unstructured& pv, const api::Unstructured& claim,
                          api::Unstructured* updated);

}  // namespace phalanx::perf
