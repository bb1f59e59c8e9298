// The storage objects kube-scheduler reads, decoded from the store's Unstructured objects:
// core/v1 PersistentVolume and PersistentVolumeClaim, storage.k8s.io/v1 StorageClass,
// CSINode, CSIDriver and CSIStorageCapacity (field names and meanings as in
// k8s.io/api/core/v1/types.go and k8s.io/api/storage/v1/types.go).
//
// Decoding is strict about the fields scheduling depends on: a malformed node affinity, a
// negative or unparsable storage quantity, an unknown volumeBindingMode or access mode make
// the object invalid, with an error naming the object and the field as the API server's
// validation does ("PersistentVolume \"pv-1\": spec.nodeAffinity.required...: Unsupported
// value: ..."). Invalid objects are kept (with `error` set) so that a pod that needs one
// gets that error as its reason; they never match a claim.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/labels.h"
#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"

namespace phalanx::volume {

// Annotation the scheduler sets on a claim to ask for provisioning on a node
// (k8s.io/component-helpers/storage/volume: AnnSelectedNode).
inline constexpr const char* kAnnSelectedNode = "volume.kubernetes.io/selected-node";
// Default StorageClass marker (storage/v1: IsDefaultStorageClassAnnotation).
inline constexpr const char* kAnnDefaultClass = "storageclass.kubernetes.io/is-default-class";
// The provisioner of classes whose volumes are all created by hand (local PVs).
inline constexpr const char* kNoProvisioner = "kubernetes.io/no-provisioner";
// Bind-completed marker the PV controller sets on a bound claim (pv_controller.go).
inline constexpr const char* kAnnBindCompleted = "pv.kubernetes.io/bind-completed";

// A claim reference (v1.ObjectReference subset) on a PersistentVolume.
struct ClaimRef {
  std::string namespace_;
  std::string name;
  std::string uid;  // empty: a pre-bound PV that names the claim only
  std::string Key() const { return namespace_ + "/" + name; }
};

// core/v1 PersistentVolume (cluster-scoped).
struct PersistentVolume {
  std::string name;
  api::Labels labels;
  std::string storage_class;  // spec.storageClassName ("" = none)
  int64_t capacity = 0;       // spec.capacity[storage], bytes
  std::vector<std::string>
      access_modes;  // ReadWriteOnce | ReadOnlyMany | ReadWriteMany | ReadWriteOncePod
  std::string volume_mode = "Filesystem";          // spec.volumeMode
  std::optional<api::NodeSelector> node_affinity;  // spec.nodeAffinity.required
  std::optional<ClaimRef> claim_ref;               // spec.claimRef
  std::string phase;       // status.phase: Available | Bound | Released | Failed
  std::string csi_driver;  // spec.csi.driver, "" when not a CSI volume
  // spec.volumeAttributesClassName ("" when unset or null, as upstream's ptr.Deref).
  std::string volume_attributes_class;
  api::VolumeSource source;  // spec's in-tree / csi source (api/volume_source.h)
  bool deleting = false;     // metadata.deletionTimestamp set
  std::string error;         // non-empty: invalid, never matched
  api::UnstructuredPtr object;
};

// core/v1 PersistentVolumeClaim (namespaced).
struct PersistentVolumeClaim {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::map<std::string, std::string> annotations;
  std::vector<api::OwnerReference> owner_references;
  std::optional<std::string> storage_class;  // spec.storageClassName (absent != "")
  std::string volume_name;                   // spec.volumeName ("" = unbound)
  std::vector<std::string> access_modes;
  std::string volume_mode = "Filesystem";
  int64_t request = 0;  // spec.resources.requests[storage], bytes
  // spec.volumeAttributesClassName ("" when unset or null). A static PV matches only with
  // the same class (VolumeAttributesClass is GA and on since 1.34).
  std::string volume_attributes_class;
  std::optional<api::LabelSelector> selector;  // spec.selector
  std::string phase;                           // status.phase: Pending | Bound | Lost
  bool deleting = false;
  std::string error;
  api::UnstructuredPtr object;
  std::string Key() const { return namespace_ + "/" + name; }
  // Bound as the scheduler counts it: spec.volumeName set and the PV controller's
  // pv.kubernetes.io/bind-completed annotation present (upstream's binder,
  // pkg/scheduler/framework/plugins/volumebinding/binder.go isPVCFullyBound; v1.20's
  // pkg/controller/volume/scheduling/scheduler_binder.go the same). A claim with only
  // spec.volumeName ("pre-bound") is not bound yet.
  bool FullyBound() const { return !volume_name.empty() && annotations.count(kAnnBindCompleted); }
};

// storage.k8s.io/v1 StorageClass.
struct StorageClass {
  std::string name;
  std::string provisioner;
  std::string volume_binding_mode = "Immediate";  // Immediate | WaitForFirstConsumer
  // allowedTopologies: terms ORed; each matchLabelExpressions entry (key, values) is an In
  // requirement, ANDed within the term. Empty: any node.
  std::vector<api::NodeSelectorTerm> allowed_topologies;
  bool is_default = false;
  std::string error;
  bool WaitForFirstConsumer() const { return volume_binding_mode == "WaitForFirstConsumer"; }
};

// storage.k8s.io/v1 CSINode: the CSI drivers installed on a node.
struct CSINodeDriver {
  std::string name;
  std::vector<std::string> topology_keys;
  std::optional<int32_t> allocatable_count;  // allocatable.count: attachable volumes
};
struct CSINode {
  std::string name;  // the node's name
  std::vector<CSINodeDriver> drivers;
  std::string error;
};

// storage.k8s.io/v1 CSIDriver.
struct CSIDriver {
  std::string name;
  bool storage_capacity = false;  // spec.storageCapacity: CSIStorageCapacity objects apply
  bool attach_required = true;
  std::string error;
};

// storage.k8s.io/v1 (v1beta1) CSIStorageCapacity: free space of a class in a topology.
struct CSIStorageCapacity {
  std::string namespace_;
  std::string name;
  std::string storage_class;
  std::optional<api::LabelSelector> node_topology;  // absent: matches no node
  std::optional<int64_t> capacity;                  // bytes; absent: unknown (no space)
  std::optional<int64_t> maximum_volume_size;       // bytes; when set, compared instead
  std::string error;
};

// Which storage kind an object is, from its kind and API group; kNone for other objects.
enum class Kind { kNone, kPV, kPVC, kStorageClass, kCSINode, kCSIDriver, kCSIStorageCapacity };
Kind KindOf(const api::Unstructured& obj);

// Decoders. Each returns the object; on invalid input the object's `error` is set to
// "<Kind> \"<name>\": <field path>: <cause>" and the fields decoded so far are kept.
PersistentVolume DecodePersistentVolume(const api::UnstructuredPtr& obj);
PersistentVolumeClaim DecodePersistentVolumeClaim(const api::UnstructuredPtr& obj);
StorageClass DecodeStorageClass(const api::Unstructured& obj);
CSINode DecodeCSINode(const api::Unstructured& obj);
CSIDriver DecodeCSIDriver(const api::Unstructured& obj);
CSIStorageCapacity DecodeCSIStorageCapacity(const api::Unstructured& obj);

// True when every mode of `want` is in `have` (upstream util.CheckAccessModes).
bool HasAccessModes(const std::vector<std::string>& have, const std::vector<std::string>& want);
// The PV's node affinity admits `node` (upstream volumeutil.CheckNodeAffinity): no
// affinity admits every node.
bool NodeAffinityAdmits(const PersistentVolume& pv, const api::Node& node);

}  // namespace phalanx::volume

namespace phalanx::volume {

// Copies of stored objects with one change, for the writes of the binder and of the
// simulator's controllers. Both the typed metadata and the YAML tree are changed.
//   WithAnnotation: metadata.annotations[key] = value.
//   WithClaimRef: a PV's spec.claimRef = {apiVersion v1, kind PersistentVolumeClaim,
//     namespace, name, uid} and the annotation pv.kubernetes.io/bound-by-controller: "yes"
//     (upstream pvutil.GetBindVolumeToClaim).
//   WithField: the scalar at `path` (e.g. {"spec", "volumeName"}) = value.
api::Unstructured WithAnnotation(const api::Unstructured& obj, const std::string& key,
                                 const std::string& value);
api::Unstructured WithClaimRef(const api::Unstructured& pv, const PersistentVolumeClaim& claim);
api::Unstructured WithField(const api::Unstructured& obj, const std::vector<std::string>& path,
                            const std::string& value);

}  // namespace phalanx::volume
