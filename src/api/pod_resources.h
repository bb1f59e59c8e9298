// Pod resource requests as upstream computes them
// (k8s.io/component-helpers/resource/helpers.go PodRequests, current upstream):
//   requests = max( sum(app containers) + sum(sidecars),
//                   for each init container i in order:
//                     regular init: its request + sum(sidecars started before i)
//                     sidecar init (restartPolicy Always): accumulate into sidecars )
//              + overhead
// Limits are not used for scheduling. Non-zero variants (for scoring) substitute
// 100m CPU and 200 MiB memory for containers that request none
// (pkg/scheduler/util/pod_resources.go DefaultMilliCPURequest / DefaultMemoryRequest).
#pragma once

#include "api/resource.h"
#include "api/types.h"

namespace phalanx::api {

inline constexpr int64_t kDefaultMilliCPURequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

// Effective scheduling request of `pod`. allowed_pod_number is left 0. Scalar resources
// are interned. Units as in Resource.
Resource PodRequests(const Pod& pod);

// As PodRequests, but each container (and init container) that requests no cpu / memory
// counts kDefaultMilliCPURequest / kDefaultMemoryRequest. Used by scoring plugins.
Resource PodNonZeroRequests(const Pod& pod);

// Converts a v1.ResourceList into a Resource (cpu as MilliValue, others as Value).
Resource ResourceListToResource(const ResourceList& list);

}  // namespace phalanx::api
