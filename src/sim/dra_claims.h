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
// Missing templates: the pod stays pending with DynamicResources' reason, and the error is
// returned to the caller (the simulation records it in the pod's outcome reason).
#pragma once

#include <string>

#include "api/status.h"
#include "api/types.h"
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
  store::Store& store_;
};

}  // namespace phalanx::sim
