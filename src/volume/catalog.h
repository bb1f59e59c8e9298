// The scheduler's model of the cluster's storage: every PersistentVolume,
// PersistentVolumeClaim, StorageClass, CSINode, CSIDriver and CSIStorageCapacity, decoded
// (objects.h) from the object events the scheduler receives (store or live informers), plus
// the bindings the scheduler has assumed but the cluster has not confirmed yet.
//
// Upstream keeps the same state in the volume binder's assume caches
// (pkg/controller/volume/scheduling/scheduler_assume_cache.go): AssumePodVolumes marks the
// chosen PVs as bound to their claims and the claims to provision with the selected node,
// so that the next pod's Filter does not pick the same PV; RevertAssumedPodVolumes
// (Unreserve) restores them. Catalog::Assume / Revert are those operations, keyed by pod.
//
// Readers take an immutable View (the objects with the assumptions applied) once per
// scheduling cycle; it is rebuilt lazily after a change. Thread-safe (one mutex).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "api/unstructured.h"
#include "volume/objects.h"

namespace phalanx::volume {

using PVPtr = std::shared_ptr<const PersistentVolume>;
using PVCPtr = std::shared_ptr<const PersistentVolumeClaim>;

// One unbound claim bound to an existing PV on the chosen node (upstream BindingInfo).
struct StaticBinding {
  std::string claim;  // "ns/name"
  std::string pv;
};

// What a pod's unbound claims get on one node (upstream PodVolumes).
struct PodVolumes {
  std::string node;  // the node these were computed for
  std::vector<StaticBinding> static_bindings;
  std::vector<std::string> provisions;  // claims to provision on the node ("ns/name")
  bool empty() const { return static_bindings.empty() && provisions.empty(); }
};

// The storage objects at one moment, with the scheduler's assumptions applied: an assumed
// PV has claim_ref set (and phase "Bound"), an assumed provisioned claim has the
// selected-node annotation. Immutable once built.
struct View {
  // Hashed: NodeVolumeLimits looks up every existing pod's claim and PV per node it
  // filters, and nothing iterates these two.
  std::unordered_map<std::string, PVPtr> pvs;              // by name
  std::map<std::string, std::vector<PVPtr>> pvs_by_class;  // valid PVs by storageClassName
  std::unordered_map<std::string, PVCPtr> pvcs;            // by "ns/name"
  std::map<std::string, StorageClass> classes;             // by name
  // By node name; shared between views until a CSINode changes (a cluster has one per node,
  // and claims change far more often than CSINodes).
  std::shared_ptr<const std::unordered_map<std::string, CSINode>> csi_nodes;
  // The CSINode of `node_name`, nullptr when there is none.
  const CSINode* CSINodeOf(const std::string& node_name) const;
  std::map<std::string, CSIDriver> csi_drivers;  // by driver name
  std::vector<CSIStorageCapacity> capacities;
  std::string default_class;  // "" when none is marked default

  // The claim's effective class: spec.storageClassName, or the default class when the
  // field is absent (the DefaultStorageClass admission plugin sets it at creation).
  std::string ClassOf(const PersistentVolumeClaim& c) const;
  const StorageClass* Class(const std::string& name) const;
  PVPtr PV(const std::string& name) const;
  PVCPtr PVC(const std::string& key) const;
};
using ViewPtr = std::shared_ptr<const View>;

class Catalog {
 public:
  Catalog() = default;

  // Object events (any kind; non-storage objects are ignored). Returns OK when the object
  // is valid or not a storage object, else InvalidArgument with its decode error (the
  // object is kept with it, as the decoders do).
  api::Status OnObjectAdd(const api::UnstructuredPtr& obj);
  api::Status OnObjectUpdate(const api::UnstructuredPtr& obj) { return OnObjectAdd(obj); }
  void OnObjectDelete(const api::Unstructured& obj);

  // The current objects with assumptions applied.
  ViewPtr Snapshot();

  // Assumes `vols` for pod `pod_uid` (Reserve): each static binding's PV must still be
  // free — no claimRef other than its claim, not assumed for another claim — and each
  // claim to provision must still be unbound. Returns OK on success, else FailedPrecondition
  // saying why not (nothing assumed then), e.g. `persistentvolume "pv-a" is bound to claim
  // "ns/other"`.
  api::Status Assume(const std::string& pod_uid, const PodVolumes& vols);
  // Drops the pod's assumptions (Unreserve, or after its bindings completed). No-op when
  // the pod has none.
  void Revert(const std::string& pod_uid);
  // True when the PVCs of `vols` are bound as the PV controller finishes a binding: a
  // static claim has spec.volumeName = its PV, a provisioned claim has a volumeName.
  // *error: non-empty when a claim or PV disappeared (the binding cannot complete).
  bool BindingsComplete(const PodVolumes& vols, std::string* error);
  // Waits up to `timeout` for BindingsComplete (woken by object events).
  bool WaitForBindings(const PodVolumes& vols, absl::Duration timeout, std::string* error);

  // Decode errors of the invalid objects, by "<Kind> <key>" (for reports and tests).
  std::map<std::string, std::string> Errors() const;

 private:
  bool CompleteLocked(const PodVolumes& vols, std::string* error) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Rebuild() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, PVPtr> pvs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, PVCPtr> pvcs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, StorageClass> classes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, CSINode> csi_nodes_ ABSL_GUARDED_BY(mu_);
  // The copy views share; reset when a CSINode changes.
  std::shared_ptr<const std::unordered_map<std::string, CSINode>> csi_nodes_view_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, CSIDriver> csi_drivers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, CSIStorageCapacity> capacities_ ABSL_GUARDED_BY(mu_);  // ns/name
  // Assumptions: PV name -> claim key; claim key -> selected node; per pod, what it holds.
  std::map<std::string, std::string> assumed_pv_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> assumed_provision_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, PodVolumes> by_pod_ ABSL_GUARDED_BY(mu_);
  ViewPtr view_ ABSL_GUARDED_BY(mu_);  // nullptr: rebuild on the next Snapshot
};

// ---- the binder's matching, on a View (upstream scheduler_binder.go / pv_util) ----

// The smallest valid PV that can bind `claim` on `node` (upstream
// pvutil.FindMatchingVolume with delayBinding): same class, volumeMode,
// volumeAttributesClassName (pre-bound PVs too; vacEnabled, GA in 1.34), access modes a
// superset of the claim's, capacity >= request, the claim's selector matches the PV's
// labels, node affinity admits the node (not checked when `node` is null: the PV
// controller's Immediate binding), not being deleted, unbound (or pre-bound to this
// claim, which wins at once), and not in `exclude` (PVs chosen for the pod's other claims
// or held by pods placed earlier in the same transaction). nullptr when none.
PVPtr FindMatchingVolume(const View& v, const PersistentVolumeClaim& claim, const api::Node* node,
                         const std::set<std::string>& exclude);

// Why a claim cannot be provisioned on `node`, as upstream checkVolumeProvisions:
//   kOk           provisioning on the node can satisfy it;
//   kNoProvision  the class has no provisioner (kubernetes.io/no-provisioner) or its
//                 allowedTopologies exclude the node ("didn't find available persistent
//                 volumes to bind");
//   kNoCapacity   the driver publishes capacity (CSIDriver.spec.storageCapacity) and no
//                 CSIStorageCapacity of the class reachable from the node is large enough
//                 ("did not have enough free storage", upstream hasEnoughCapacity).
enum class Provision { kOk, kNoProvision, kNoCapacity };
Provision CheckProvision(const View& v, const PersistentVolumeClaim& claim, const api::Node& node);
// The first valid CSIStorageCapacity of class `sc` whose nodeTopology selects `node` and
// whose maximumVolumeSize (else capacity) holds the claim's request (upstream
// hasEnoughCapacity's loop); nullptr when none. Only meaningful when the class's CSI driver
// publishes capacity (CSIDriver.spec.storageCapacity).
const CSIStorageCapacity* MatchingCapacity(const View& v, const StorageClass& sc,
                                           const PersistentVolumeClaim& claim,
                                           const api::Node& node);

}  // namespace phalanx::volume
