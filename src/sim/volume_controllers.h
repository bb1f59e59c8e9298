// Stand-ins for kube-controller-manager's volume controllers in `phalanx simulate` (no
// controller manager runs there), attached to the in-process Store as event handlers. They
// complete what the scheduler's VolumeBinding starts, so that simulated pods with claims
// bind as they would in a cluster:
//
//  - the PV controller's binding (pkg/controller/volume/persistentvolume/pv_controller.go
//    syncVolume / bindClaimToVolume): a PersistentVolume whose spec.claimRef names an
//    unbound claim gets status.phase Bound, and the claim gets spec.volumeName, the
//    annotation pv.kubernetes.io/bind-completed: "yes" and status.phase Bound;
//  - dynamic provisioning (provisionClaimOperation, as an external provisioner would): an
//    unbound claim with the annotation volume.kubernetes.io/selected-node whose class names a
//    provisioner other than kubernetes.io/no-provisioner gets a new PV "pvc-<claim uid>"
//    (capacity = the request, the claim's access modes and volumeMode, the class, node
//    affinity kubernetes.io/hostname In [the node's hostname label, or its name]), bound as
//    above;
//  - pre-bound claims (syncUnboundClaim, claim.spec.volumeName set): a claim naming a PV
//    gets that PV if the PV is free and satisfies it (class, capacity, access modes,
//    volume mode; the PV gets the claimRef) or already names the claim, and is then bound
//    as above; a claim naming a missing PV, or one held by another claim, stays Pending;
//  - Immediate binding (syncUnboundClaim): an unbound claim whose class binds Immediately
//    is bound to the smallest matching PV (volume::FindMatchingVolume without a node);
//  - the ephemeral volume controller (pkg/controller/volume/ephemeral): for every pod with
//    a generic ephemeral volume, the claim "<pod>-<volume>" from the volume's
//    volumeClaimTemplate (its metadata labels / annotations and spec), owned by the pod
//    (ownerReferences controller: true).
// Writes happen synchronously inside the triggering event (the Store's handlers may write).
#pragma once

#include "store/store.h"
#include "volume/objects.h"

namespace phalanx::sim {

class VolumeControllers {
 public:
  explicit VolumeControllers(store::Store& store) : store_(store) {}
  // Registers the handlers; call before objects and pods are created.
  void Attach();

 private:
  void OnPod(const api::Pod& pod);
  void OnObject(const api::Unstructured& obj);
  void BindClaim(const api::Unstructured& pv_obj, const std::string& claim_key);
  void Provision(const api::Unstructured& claim_obj, const std::string& node);
  void BindImmediate(const api::Unstructured& claim_obj);
  void CompletePreBound(const volume::PersistentVolumeClaim& c);

  store::Store& store_;
};

}  // namespace phalanx::sim
