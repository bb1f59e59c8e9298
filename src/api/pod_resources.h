// Pod resource requests as upstream computes them
// (k8s.io/component-helpers/resource/helpers.go PodRequests, current upstream):
//   requests = max( sum(app containers) + sum(sidecars),
//                   for each init container i in order:
//                     regular init: its request + sum(sidecars started before i)
//                     sidecar init (restartPolicy Always): accumulate into sidecars )
//   with pod-level resources (KEP-2837) set, spec.resources.requests of cpu, memory and
//   hugepages-* replace that aggregate per resource; then
//              + overhead
// With in-place resize (KEP-1287) the aggregate is max(spec, actuated, allocated) from
// status.containerStatuses, or max(actuated, allocated) while the PodResizePending
// condition says Infeasible (helpers.go AggregateContainerRequests, UseStatusResources).
// Limits are not used for scheduling. Non-zero variants (for scoring) substitute
// 100m CPU and 200 MiB memory for containers that request none
// (pkg/scheduler/util/pod_resources.go DefaultMilliCPURequest / DefaultMemoryRequest).
#pragma once

#include <string_view>

#include "api/resource.h"
#include "api/types.h"

namespace phalanx::api {

inline constexpr int64_t kDefaultMilliCPURequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

// Effective scheduling request of `pod`. allowed_pod_number is left 0. Scalar resources
// are interned. Units as in Resource.
Resource PodRequests(const Pod& pod);

// As PodRequests, but each container (and init container) that requests no cpu / memory
// counts kDefaultMilliCPURequest / kDefaultMemoryRequest. Used by scoring plugins. With
// pod-level requests set, only a resource absent from the pod's requests gets the default
// (pkg/scheduler/framework/types.go calculateResource, getNonMissingContainerRequests).
Resource PodNonZeroRequests(const Pod& pod);

// What the resource scorers add for the pod (resource_allocation.go
// calculatePodResourceRequest): every container missing cpu / memory gets the default,
// even with pod-level requests set (which then replace cpu / memory they name). Equal to
// PodNonZeroRequests for a pod without pod-level requests.
Resource PodScoringNonZeroRequests(const Pod& pod);

// k8s.io/component-helpers/resource/helpers.go AggregateContainerRequests (limits=false) or
// AggregateContainerLimits (limits=true) with empty options: the KEP-753 aggregate of the
// containers' spec, no overhead, no status. Used by the decoder's pod-level defaulting.
ResourceList AggregateContainerResources(const Pod& pod, bool limits);

// k8s.io/component-helpers/resource/helpers.go IsSupportedPodLevelResource.
bool IsSupportedPodLevelResource(std::string_view name);

// k8s.io/component-helpers/resource/helpers.go IsPodLevelRequestsSet.
bool IsPodLevelRequestsSet(const Pod& pod);

// k8s.io/component-helpers/resource/helpers.go IsPodResizeInfeasible.
bool IsPodResizeInfeasible(const Pod& pod);

// Converts a v1.ResourceList into a Resource (cpu as MilliValue, others as Value).
Resource ResourceListToResource(const ResourceList& list);

}  // namespace phalanx::api
