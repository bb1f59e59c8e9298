// Scheduler extenders as the scheduling cycle and plugins see them (upstream
// pkg/scheduler/framework/extender.go, the Extender interface). The HTTP implementation
// (upstream pkg/scheduler/extender.go HTTPExtender) is src/extender/http_extender.h; the
// framework names only this interface, so plugins (DefaultPreemption) and tests can use
// any implementation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/status.h"
#include "api/types.h"
#include "framework/types.h"

namespace phalanx::framework {

class NodeInfoLister;

// Scores of Prioritize are in [0, kMaxExtenderPriority] (upstream extenderv1
// MaxExtenderPriority); the scheduler multiplies them by the extender's weight and by
// MaxNodeScore / kMaxExtenderPriority (= 10) before adding them to the plugins' totals.
inline constexpr int64_t kMaxExtenderPriority = 10;

// The name the scheduling cycle records among a pod's unschedulable plugins when an
// extender filtered out nodes (upstream framework.ExtenderName): such a pod is requeued on
// any cluster event, extenders having no queueing hints.
inline constexpr char kExtenderName[] = "Extender";

// The victims on one node (upstream extenderv1.Victims).
struct ExtenderVictims {
  std::vector<PodInfoPtr> pods;
  int64_t num_pdb_violations = 0;
};
using ExtenderVictimsMap = std::map<std::string, ExtenderVictims>;  // node name -> victims

// The outcome of Filter (upstream: filtered nodes, FailedNodesMap,
// FailedAndUnresolvableNodes).
struct ExtenderFilterResult {
  std::vector<const NodeInfo*> nodes;               // nodes that pass, a subset of the input
  std::map<std::string, std::string> failed;        // node -> reason (Unschedulable)
  std::map<std::string, std::string> unresolvable;  // node -> reason (UnschedulableAndUnresolvable)
};

// One extender. Methods that call out may block for up to the extender's httpTimeout and
// are called from the scheduling thread (Filter, Prioritize, ProcessPreemption) and from
// binding workers (Bind): implementations must be thread-safe. Errors are the messages
// upstream's HTTPExtender returns, e.g.
//   `Post "http://127.0.0.1:1/filter": dial tcp 127.0.0.1:1: connect: connection refused`
//   `failed filter with extender at URL http://h/filter, code 500`.
class Extender {
 public:
  virtual ~Extender() = default;
  // The urlPrefix (upstream Name()).
  virtual const std::string& Name() const = 0;
  // An ignorable extender's errors skip it instead of failing the cycle.
  virtual bool IsIgnorable() const = 0;
  // True when the extender manages no resources, or the pod requests or limits one of
  // them in a container or init container (upstream IsInterested).
  virtual bool IsInterested(const api::Pod& pod) const = 0;
  virtual bool IsBinder() const = 0;            // bindVerb set
  virtual bool SupportsPreemption() const = 0;  // preemptVerb set
  virtual bool IsPrioritizer() const = 0;       // prioritizeVerb set

  // The nodes among `nodes` the extender accepts, and why the others fail. An extender
  // without filterVerb returns every node. Errors: transport, non-200 status, a body that
  // does not decode, the result's Error field, a node not in the input.
  virtual api::Status Filter(const api::Pod& pod, const std::vector<const NodeInfo*>& nodes,
                             ExtenderFilterResult* out) = 0;
  // Scores (0..10) by node name and the extender's weight. Without prioritizeVerb every
  // node scores 0 with weight 0.
  virtual api::Status Prioritize(const api::Pod& pod, const std::vector<const NodeInfo*>& nodes,
                                 std::map<std::string, int64_t>* scores, int64_t* weight) = 0;
  // Binds `pod` to `node` through the extender (ExtenderBindingArgs); an error when the
  // extender's result carries one.
  virtual api::Status Bind(const api::Pod& pod, const std::string& node) = 0;
  // The candidates (node -> victims) the extender keeps, with the victims it chose
  // (resolved by UID on `nodes`). Errors as Filter, and when a returned node or victim is
  // unknown.
  virtual api::Status ProcessPreemption(const api::Pod& pod, const ExtenderVictimsMap& candidates,
                                        const NodeInfoLister& nodes, ExtenderVictimsMap* out) = 0;
};

// The scheduler's extenders in call order (non-ignorable first, as upstream's
// buildExtenders orders them), provided to plugins as a service (Handle::Service<
// ExtenderList>()); absent or empty when none is configured.
struct ExtenderList {
  std::vector<Extender*> extenders;
};

}  // namespace phalanx::framework
