// The informer interface the scheduler consumes (upstream client-go SharedInformerFactory,
// reduced to what a scheduler needs). Implemented by the in-process Store (simulate,
// tests, benchmarks) and by the API client's reflectors (live mode), so that both modes
// share one scheduling code path. Part of the seam module src/cluster/ (interfaces only):
// client and store implement it without including each other.
//
// Handlers are called in resourceVersion order, one event at a time. A handler must not
// write back to the source from inside the callback.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "api/types.h"
#include "api/unstructured.h"

namespace phalanx::cluster {

// Callbacks for one kind of object; unset functions are not called.
template <typename T>
struct EventHandlers {
  std::function<void(const std::shared_ptr<const T>&)> on_add;
  std::function<void(const std::shared_ptr<const T>& old_obj, const std::shared_ptr<const T>& obj)>
      on_update;
  std::function<void(const std::shared_ptr<const T>&)> on_delete;
};

// Source of add/update/delete events for the kinds the scheduler watches.
class InformerFactory {
 public:
  virtual ~InformerFactory() = default;
  // Registering replays the current objects as on_add, then delivers changes.
  virtual void AddPodHandlers(EventHandlers<api::Pod> h) = 0;
  // Pods in phase Succeeded / Failed, for sources whose AddPodHandlers events leave them
  // out (live mode: the pod watch's field selector status.phase!=Succeeded,
  // status.phase!=Failed, as upstream's; a pod that ends arrives there as a delete of its
  // last running state, and here as an add of its terminal state, in either order). The
  // in-process Store delivers the phase change as a pod update and ignores this call.
  virtual void AddTerminalPodHandlers(EventHandlers<api::Pod> h) { (void)h; }
  virtual void AddNodeHandlers(EventHandlers<api::Node> h) = 0;
  virtual void AddPriorityClassHandlers(EventHandlers<api::PriorityClass> h) = 0;
  virtual void AddNamespaceHandlers(EventHandlers<api::Namespace> h) = 0;
  // Objects of kinds without a typed model (PodGroups of every dialect, Workloads, owners
  // such as Jobs and JobSets). Sources that serve none may ignore the call.
  virtual void AddObjectHandlers(EventHandlers<api::Unstructured> h) { (void)h; }
  // policy/v1 PodDisruptionBudgets (upstream's pdbLister, read by DefaultPreemption).
  // Sources that serve none may ignore the call.
  virtual void AddPodDisruptionBudgetHandlers(EventHandlers<api::PodDisruptionBudget> h) {
    (void)h;
  }
};

}  // namespace phalanx::cluster
