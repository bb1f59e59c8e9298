// Defragmentation: moves running pods so that a pod that fits nowhere, while the free
// capacity it needs exists but is scattered, gets a node (8 free GPUs on 8 nodes do not
// start an 8-GPU pod). KAI calls this consolidation (pkg/scheduler/actions/consolidation:
// pods are evicted only when each of them is placed again in the same plan); Koordinator's
// descheduler and the FGD paper (Weng et al., ATC'23) motivate it for GPU clusters.
//
// A PostFilter plugin, not in the default set; put it after DefaultPreemption (multiPoint
// enabled appends it), so that preemption of lower-priority pods is tried first. When no
// node passed Filter:
//  1. Movable pods: bound, not being deleted, owned by a controller that recreates them
//     (a controller ownerReference of any kind but DaemonSet, whose pods cannot move), not
//     members of a gang (a gang moves whole or not at all: not done here), of a priority
//     not above the pending pod's (so that a recreated pod does not take the room back: the
//     nominated pod counts for it in Filter), running for at least minRuntimeSeconds.
//  2. On every node whose Filter status is Unschedulable, DefaultPreemption's dry run with
//     the movable pods as victims (DefaultPreemption::DryRunPreemption: all removed, Filter
//     re-run with the nominated pods, then as many reprieved as possible, so each node's set
//     is minimal). Nodes whose set violates a PodDisruptionBudget are dropped.
//  3. The plan: candidates by fewest moves (then the node's name); for the first whose moves
//     fit maxMovesPerPod and the run's remaining budget (maxMoves), every moved pod must be
//     placed again on another node of the snapshot, the pods before it counted there: its
//     requests within the node's allocatable minus requested (pods count included), its
//     nodeSelector and required node affinity, NoSchedule / NoExecute taints tolerated, the
//     node schedulable (best fit: the node left with the least free of the pod's largest
//     resource). A candidate whose pods cannot all be placed again is skipped.
//  4. The moves are carried out through the scheduler's PreemptionExecutor (as preemption:
//     DisruptionTarget, delete, off the scheduling thread): each moved pod gets a Normal
//     "Moved" Event naming the pod it made room for and the node it was planned on; the
//     pending pod gets a Normal "Defragmentation" Event listing the moves and is nominated
//     to the node. Their controllers recreate the moved pods, which the scheduler places as
//     any other pod (the plan's nodes are where they fit, not a binding).
// Otherwise Unschedulable with "defragmentation: ..." saying why (no movable pods would make
// room, the budget, a plan that does not place its pods again).
//
// Args (DefragmentationArgs):
//   maxMovesPerPod: int >= 1      (default 4: pods moved for one pending pod)
//   maxMoves: int >= 0            (default 64: pods moved in all by this scheduler; 0 none)
//   minRuntimeSeconds: int >= 0   (default 300: pods that started later are not moved)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/preemption_executor.h"
#include "framework/registry.h"
#include "gang/podgroup_manager.h"

namespace phalanx::plugins::defragmentation {

struct Args {
  int32_t max_moves_per_pod = 4;
  int64_t max_moves = 64;
  int64_t min_runtime_ns = 300 * api::kNanosPerSecond;
};

// Whether a controller recreates `pod` elsewhere once it is deleted: a controller
// ownerReference of a kind other than DaemonSet.
bool RecreatedByController(const api::Pod& pod);

// One planned move: `pod` off its node, placed again on `to`.
struct Move {
  framework::PodInfoPtr pod;
  std::string to;
};

// Places `pods` (all on node `from`) again on the other nodes of `nodes`, in order, each
// counting the ones before it (step 3 of the header comment). Returns the moves, or an
// empty vector with *why naming the first pod that fits nowhere.
std::vector<Move> PlanMoves(const std::vector<framework::PodInfoPtr>& pods, const std::string& from,
                            const std::vector<const framework::NodeInfo*>& nodes, std::string* why);

class Defragmentation final : public framework::PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "Defragmentation";

  Defragmentation(framework::Handle& h, Args args);
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }

  // Success (the moves are being carried out, result->nominated_node_name set), or
  // Unschedulable with "defragmentation: ..." (see the header comment); Error with the
  // dry run's errors.
  framework::Status PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeToStatus& filtered,
                               framework::PostFilterResult* result) override;

  // Pods moved so far.
  int64_t moves() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  bool Movable(const api::Pod& victim, int32_t priority, api::Timestamp now) const;

  framework::Handle& handle_;
  const Args args_;
  std::unique_ptr<framework::PreemptionExecutor> own_executor_;  // when the handle has none
  framework::PreemptionExecutor* executor_;
  const gang::PodGroupManager* gangs_;  // nullptr: no gangs (plugin unit tests)
  mutable absl::Mutex mu_;
  int64_t moves_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace phalanx::plugins::defragmentation
