// Invariants every simulation and end-to-end test checks (one reusable checker):
//  - no node's bound requests exceed its allocatable (checked at every binding), with the
//    requests from an independent oracle (sim/invariant_requests.h), never the
//    scheduler's own resource code;
//  - no pod is bound twice, or to a node that does not exist;
//  - every pending pod has a reason visible to the user (PodScheduled=False condition
//    with a message), checked by CheckPendingReasons at quiescent points.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/resource.h"
#include "cluster/informer.h"
#include "sim/invariant_requests.h"

namespace phalanx::sim {

class InvariantChecker {
 public:
  // Subscribes to pod and node events of `informers`.
  void Attach(cluster::InformerFactory& informers);

  std::vector<std::string> violations() const;
  // Pending pods (unbound, non-terminal) without a PodScheduled=False condition message;
  // each becomes a violation. `pods` is the current list from the source of truth.
  void CheckPendingReasons(const std::vector<api::PodPtr>& pods);

  // Sum of requests of bound pods (units as api::Resource), and of node allocatable, both
  // as the oracle counts them.
  api::Resource Allocated() const;
  api::Resource Capacity() const;
  size_t BoundPods() const;

 private:
  void OnBound(const api::Pod& pod) ABSL_LOCKS_EXCLUDED(mu_);
  void OnUnbound(const api::Pod& pod) ABSL_LOCKS_EXCLUDED(mu_);
  void Violation(std::string v) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // allocatable by node
  std::unordered_map<std::string, OracleAmounts> node_alloc_ ABSL_GUARDED_BY(mu_);
  // bound requests by node
  std::unordered_map<std::string, OracleAmounts> node_used_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::string> bound_ ABSL_GUARDED_BY(mu_);  // pod key -> node
  OracleAmounts allocated_ ABSL_GUARDED_BY(mu_);
  OracleAmounts capacity_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::sim
