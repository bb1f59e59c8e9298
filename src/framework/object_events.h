// Two scheduler services (framework::ServiceRegistry) for plugins that follow cluster objects
// of their own and wake pods when those change:
//  - ObjectEventSource: the events of objects of one kind (e.g. autoscaling.x-k8s.io
//    ProvisioningRequests), delivered from the scheduler's informer;
//  - PodActivator: moves pods to activeQ now (upstream framework.Handle.Activate /
//    PodActivator, pkg/scheduler/framework/interface.go).
// The scheduler provides both (src/scheduler/profile.cc); tests may provide fakes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/unstructured.h"

namespace phalanx::framework {

// Events of cluster objects of a kind the core does not model.
class ObjectEventSource {
 public:
  // (old, obj, deleted): old is null on an add; on a delete obj is the last state seen.
  using Handler =
      std::function<void(const api::Unstructured* old, const api::Unstructured& obj, bool deleted)>;
  virtual ~ObjectEventSource() = default;
  // Calls `handler` for every add, update and delete of objects of `kind` in API group
  // `group` ("" for the core group), on the informer's thread (the simulator's: the
  // scheduling thread), from now on. Objects of a watched kind go to their handlers only:
  // they requeue no pod and reach no other part of the scheduler. Call from a plugin's
  // constructor (before the informers start). Several handlers of one kind are called in
  // the order they were added.
  virtual void Watch(const std::string& group, const std::string& kind, Handler handler) = 0;
};

// Moves pods to activeQ (upstream Handle.Activate): pods waiting in unschedulablePods or
// backoffQ are moved now; a pod in flight is moved once its cycle ends; unknown keys are
// ignored. Any thread.
class PodActivator {
 public:
  virtual ~PodActivator() = default;
  virtual void Activate(const std::vector<std::string>& pod_keys) = 0;  // "namespace/name"
};

}  // namespace phalanx::framework
