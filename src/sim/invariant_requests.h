// An independent oracle for pod requests, used by the invariant checker's over-commit
// check. It deliberately shares no code with the scheduler's accounting
// (api::PodRequests in src/api/pod_resources.*, framework::NodeInfo): it re-derives a
// pod's request from the Pod object's fields by the Kubernetes rules, written out as the
// peak over the pod's lifecycle phases, so that a bug in the scheduler's resource math
// shows up as a disagreement (a node whose bound pods exceed its allocatable) instead of
// hiding behind the same bug in the check.
//
// Rules (k8s.io/component-helpers/resource/helpers.go PodRequests, KEP-753, KEP-2837,
// KEP-1287):
//  - phases: each regular init container runs next to the sidecars (restartPolicy Always
//    init containers) started before it; each sidecar start adds to the running set; the
//    steady state is all sidecars plus all app containers. The request is the per-resource
//    peak over these phases;
//  - in-place resize: the peak is computed from the spec, from
//    status.containerStatuses[].allocatedResources and from
//    status.containerStatuses[].resources.requests (each falling back as upstream does),
//    and the largest of the three wins; while the PodResizePending condition's reason is
//    Infeasible the spec is left out;
//  - pod-level resources: spec.resources.requests for cpu, memory and hugepages-* replace
//    the containers' figure for that resource;
//  - spec.overhead is added;
//  - an extended resource named in status.extendedResourceClaimStatus.requestMappings is
//    left out (a DRA claim's devices serve it, not the node's allocatable).
// Amounts are milli units of each resource (cpu millicores, memory milli-bytes, one pod is
// 1000), every quantity rounded up on its own.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "api/resource.h"
#include "api/types.h"

namespace phalanx::sim {

// Resource name -> amount in milli units.
using OracleAmounts = std::map<std::string, int64_t>;

// The pod's scheduling request by the rules above, plus "pods": 1000 (one pod).
OracleAmounts OracleRequests(const api::Pod& pod);

// status.allocatable of `node` in the same units.
OracleAmounts OracleAllocatable(const api::Node& node);

// into[name] += sign * amount for every entry of `amounts`.
void AddAmounts(OracleAmounts* into, const OracleAmounts& amounts, int sign);

// The first resource whose `used` exceeds `alloc` (absent = 0; ephemeral-storage only when
// used), cpu, memory, ephemeral-storage and pods first; "" when none does.
std::string FirstExceeded(const OracleAmounts& used, const OracleAmounts& alloc);

// The amounts as an api::Resource (whole units rounded up, cpu in millicores), for the
// checker's Allocated() / Capacity() reports.
api::Resource OracleToResource(const OracleAmounts& amounts);

}  // namespace phalanx::sim
