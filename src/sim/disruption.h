// The disruption controller's status computation, for `phalanx simulate` (no
// kube-controller-manager runs there, so the simulator writes each PodDisruptionBudget's
// status itself, as pkg/controller/disruption/disruption.go trySync does).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"

namespace phalanx::sim {

// After this long an entry of status.disruptedPods no longer keeps its pod out of
// currentHealthy (upstream DeletionTimeout, 2 minutes).
inline constexpr api::Timestamp kDisruptedPodTimeout = 2 * 60 * api::kNanosPerSecond;

// The scale (spec.replicas) of the controller that `owner` (a pod's controller reference,
// with the pod's namespace) names, or nullopt when no such scalable controller exists.
using ControllerScaleFn =
    std::function<std::optional<int32_t>(const api::OwnerReference& owner, const std::string& ns)>;

// The status the disruption controller would write for `pdb` over `pods` (every pod of the
// cluster; those of the PDB's namespace matching spec.selector count) at `now`:
//  - pods: a nil selector matches none, an empty one every pod of the namespace
//    (policy/v1 getPodsForPdb; none for a policy/v1beta1 object);
//  - expectedPods, desiredHealthy (getExpectedPodCount): maxUnavailable -> the sum of the
//    scales of the pods' controllers (getExpectedScale; pods without a controller are
//    skipped as unmanaged), desiredHealthy = expected - maxUnavailable (a percent of
//    expected, rounded up), at least 0; minAvailable int -> expected = number of pods,
//    desiredHealthy = minAvailable; minAvailable percent -> expected from the controllers,
//    desiredHealthy = percent of expected rounded up; neither -> 0 and 0;
//  - disruptedPods: the given entries whose pod still exists, is not deleting and whose
//    expected deletion (entry time + kDisruptedPodTimeout) is not before `now`
//    (buildDisruptedPodMap);
//  - currentHealthy (countHealthyPods): matching pods that are not deleting, not in
//    disruptedPods with an expected deletion after `now` (an entry expiring exactly at
//    `now` stays in disruptedPods but its pod counts), and ready. The simulator has no
//    kubelet: a pod is ready when it is bound (spec.nodeName), not Succeeded / Failed, and
//    has no Ready condition other than "True";
//  - disruptionsAllowed = currentHealthy - desiredHealthy, 0 when negative or when
//    expectedPods is 0 (updatePdbStatus).
// A pod's controller that `scale` does not know is upstream's "found no controllers for
// pod" sync error: its failSafe sets disruptionsAllowed to 0 and keeps the other fields
// of pdb.status.
api::PodDisruptionBudget::Status ComputePodDisruptionBudgetStatus(
    const api::PodDisruptionBudget& pdb, const std::vector<api::PodPtr>& pods,
    const ControllerScaleFn& scale, api::Timestamp now);

}  // namespace phalanx::sim
