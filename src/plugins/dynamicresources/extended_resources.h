// Extended resources backed by DRA (KEP-5004, DRAExtendedResource: beta and on by default in
// 1.36, GA in 1.37). A DeviceClass with spec.extendedResourceName "example.com/gpu" (and
// every class C under its implicit name "deviceclass.resource.kubernetes.io/C") serves a
// container's plain `example.com/gpu: 2` request on nodes whose status.allocatable does not
// list the resource: the scheduler allocates devices of the class for it in a ResourceClaim
// of its own making, owned by the pod and annotated
// resource.kubernetes.io/extended-resource-claim: "true", and records which request serves
// which container in the pod's status.extendedResourceClaimStatus.
//
// This file holds the parts that are pure functions of the pod (upstream
// pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go); the
// DynamicResources plugin (dynamic_resources.h) runs them at its extension points.
#pragma once

#include <string>
#include <vector>

#include "api/types.h"
#include "dra/model.h"

namespace phalanx::plugins::dynamicresources {

// The name the in-memory claim has until PreBind creates it (upstream specialClaimInMemName,
// not a valid object name so that it never meets a real claim).
inline constexpr char kExtendedClaimInMemoryName[] = "<extended-resources>";

// One extended resource of the pod to be served by DRA on some node: its name and the
// DeviceClass whose devices serve it.
struct ExtendedResourceClass {
  std::string resource;
  std::string device_class;
};

// upstream createRequestsAndMappings: the claim's device requests for `resources` (sorted by
// resource name) and the mapping of each container's request to them. Containers are the
// init containers then the app containers, indexed in that order; per resource:
//   - every long-lived container (app container or sidecar init container, restartPolicy
//     Always) that requests n > 0 of it gets request "container-<i>-request-<j>" (j: the
//     resource's position among the container's requests sorted by name) for n devices,
//     allocationMode ExactCount;
//   - a regular init container first reuses the requests of the long-lived containers after
//     it, in order, until they cover its n (then it maps to them and adds nothing), else
//     asks for the rest in a request of its own; of those own requests only the largest is
//     kept and every init container's mapping to another one is renamed to it (init
//     containers run one after another, so they can share it).
// Requests are returned sorted by name. A quantity that is not a whole number is skipped
// (upstream AsInt64 fails). `requests` and `mappings` are replaced.
void ExtendedResourceRequests(const api::Pod& pod,
                              const std::vector<ExtendedResourceClass>& resources,
                              std::vector<dra::DeviceRequest>* requests,
                              std::vector<api::ContainerExtendedResourceRequest>* mappings);

// The claim object PreBind creates (POST resourceclaims): apiVersion resource.k8s.io/v1, in
// the pod's namespace, generateName "<pod>-extended-resources-", the pod as controlling
// owner, the extended-resource-claim annotation, and spec.devices.requests from `requests`.
api::Unstructured ExtendedResourceClaimObject(const api::Pod& pod,
                                              const std::vector<dra::DeviceRequest>& requests);

}  // namespace phalanx::plugins::dynamicresources
