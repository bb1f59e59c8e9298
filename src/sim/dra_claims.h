// The simulator's resourceclaim controller (upstream pkg/controller/resourceclaim/
// controller.go, run by kube-controller-manager): what a cluster does around a pod's
// ResourceClaims that is not the scheduler's job.
//
//   - A pod entry with resourceClaimTemplateName gets a ResourceClaim made from the template
//     (spec, labels, annotations; annotation resource.kubernetes.io/pod-claim-name = the
//     entry's name; the pod as controlling owner) named as the controller asks the API
//     server to: generateName "<pod>-<entry>-" (both parts cut in proportion past 57
//     characters) plus 5 characters, here derived from the pod's UID and the entry instead
//     of random ones so that runs are reproducible (dra::GeneratedClaimName). The pod's
//     status.resourceClaimStatuses records the claim (a pod update, which is what lets
//     DynamicResources' PreEnqueue pass).
//   - When a pod is gone (deleted, or finished), it is removed from its claims'
//     status.reservedFor; a claim that no consumer reserves any more is deallocated
//     (status.allocation cleared: controller.go syncClaim "deallocate"), and a claim
//     generated for the pod is deleted (the garbage collector follows the owner
//     reference).
//   - KEP-5729 (Workload API): a template entry of a pod that matches one of its
//     scheduling.k8s.io PodGroup's spec.resourceClaims exactly gets the PodGroup's claim:
//     generated once per PodGroup ("<podgroup>-<entry>-" plus 5 characters from the
//     PodGroup's UID), owned by the PodGroup, recorded in the PodGroup's
//     status.resourceClaimStatuses and in every member's. It is made when the first member
//     arrives (upstream's controller makes it when the PodGroup appears; the outcome is the
//     same claim). Members leaving do not touch it: it is reserved for the PodGroup, and
//     stays allocated while the PodGroup exists (the simulator never deletes PodGroups).
// Missing templates: the pod stays pending with DynamicResources' reason, and the error is
// returned to the caller (the simulation records it in the pod's outcome reason).
#pragma once

#include <string>

#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"
#include "dra/model.h"
#include "store/store.h"

namespace phalanx::sim {

class DraClaimController {
 public:
  explicit DraClaimController(store::Store& store) : store_(store) {}

  // After the pod was created in the store: its template claims and its status update.
  // Nothing for pods without template entries. Error: a template is missing or invalid.
  api::Status OnPodCreated(const std::string& ns, const std::string& name);
  // After the pod left the store (or ended): reservedFor, deallocation, generated claims.
  void OnPodGone(const api::Pod& pod);

 private:
  api::StatusOr<std::string> ClaimFromTemplate(const std::string& ns, const std::string& what,
                                               const std::string& entry,
                                               const std::string& tmpl_name,
                                               const api::OwnerReference& owner);
  api::StatusOr<std::string> PodGroupClaim(const api::UnstructuredPtr& pg_obj,
                                           const dra::PodGroupClaims& pg,
                                           const dra::PodGroupResourceClaim& entry);

  store::Store& store_;
};

}  // namespace phalanx::sim
