// Invariants every simulation and end-to-end test checks (one reusable checker):
//  - no node's bound requests exceed its allocatable (checked at every binding);
//  - no pod is bound twice, or to a node that does not exist;
//  - every pending pod has a reason visible to the user (PodScheduled=False condition
//    with a message), checked by CheckPendingReasons at quiescent points.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/resource.h"
#include "cluster/informer.h"

namespace phalanx::sim {

class InvariantChecker {
 public:
  // Subscribes to pod and node events of `informers`.
  void Attach(store::InformerFactory& informers);

  std::vector<std::string> violations() const;
  // Pending pods (unbound, non-terminal) without a PodScheduled=False condition message;
  // each becomes a violation. `pods` is the current list from the source of truth.
  void CheckPendingReasons(const std::vector<api::PodPtr>& pods);

  // Sum of requests of bound pods (units as api::Resource), and of node allocatable.
  api::Resource Allocated() const;
  api::Resource Capacity() const;
  size_t BoundPods() const;

 private:
  void OnBound(const api::Pod& pod);
  void OnUnbound(const api::Pod& pod);
  void Violation(std::string v);

  mutable std::mutex mu_;
  std::unordered_map<std::string, api::Resource> node_alloc_;    // allocatable by node
  std::unordered_map<std::string, api::Resource> node_used_;     // bound requests by node
  std::unordered_map<std::string, std::string> bound_;           // pod key -> node
  api::Resource allocated_, capacity_;
  std::vector<std::string> violations_;
};

}  // namespace phalanx::sim
