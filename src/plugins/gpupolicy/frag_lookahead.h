// FragLookaheadScore: FGD with a one-pod lookahead, on a target workload learned only from
// the pods the scheduler has seen.
//
// Idea. FGD (Weng et al., USENIX ATC 2023; fgd.h) places a pod where the node's expected
// fragmented GPU milli F grows least. It looks at the pod being placed only: it cannot see
// that the node it picks was the last one able to host some other likely pod (an 8-GPU
// pod, a whole-GPU pod that needs 16 cores), so near full load those pods fail while
// FGD's deltas were all small. This policy adds to FGD's delta the expected cost of
// placing the *next* pod: for each shape t of the target workload (frequency f_t),
//   best_t(i)  = the smallest FGD delta of t over every node of the cluster after the pod
//                is placed on candidate i (only node i changed, so this is the smaller of
//                node i's new delta and the best over the other nodes);
//                when no node can host t, t's GPU milli (what it would leave unallocated)
//   cost(i)    = dF_i(pod) + lookaheadWeight * sum_t f_t * best_t(i)
// i.e. a two-step greedy rollout in expectation (the "FGD with a short lookahead on the
// scheduler's own view" direction; one-step lookahead as in rollout policies,
// Bertsekas, "Rollout Algorithms for Discrete Optimization", 2013). Like FGD, the cost is
// scored as sigmoid(-cost / 1000) * 100 truncated and ties go to the first node in a
// seed-dependent order: that coarse bucketing packs pods onto the same nodes and is worth
// about 1 point of unallocated GPU on the openb traces (exact deltas place worse).
// Only the `candidates` nodes FGD ranks best are looked ahead from; the rest keep FGD's
// order below them.
//
// Target workload: the shapes (CPU, GPU milli per device, device count, GPU models) of
// the pods this plugin has scored so far, every shape kept (popularity 1.0: the rare
// large shapes are the ones that fail), rebuilt at 1, 2, 4, ... pods and every 1024 pods.
// Never the trace's future, and never the simulator's GpuContext workload.
//
// Cost per pod: FGD's per-node deltas, plus the target shapes' deltas of every distinct
// node state (memoized by state, recomputed when a node changes) and of the `candidates`
// placements. On the openb traces about half of FGD's replay speed (docs/performance.md).
//
// Args (kind FragLookaheadScoreArgs):
//   tieBreak: NodeOrder (default: the FGD artifact's methodology) | Random (a fresh order
//             per pod)
//   lookaheadWeight: "4" (decimal string or number >= 0; 0 = FGD's ranking on the learned
//             workload)
//   candidates: 16 (>= 1)
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "gpu/frag.h"
#include "plugins/gpupolicy/common.h"

namespace phalanx::plugins::gpupolicy {

struct FragLookaheadScoreArgs {
  PolicyArgs policy;              // tieBreak; NodeOrder unless the args say Random
  double lookahead_weight = 4.0;  // chosen on openb gpushare40 (see docs/performance.md)
  int32_t candidates = 16;
};
// Errors: "FragLookaheadScoreArgs: lookaheadWeight: Invalid value: ...", unknown keys.
framework::StatusOr<FragLookaheadScoreArgs> ParseFragLookaheadScoreArgs(framework::PluginArgs args);

// Per target shape t, FGD's delta of t on a node state (+inf where t does not fit).
using TargetDeltas = std::vector<double>;

class FragLookaheadScore final : public PolicyScorePlugin, public gpushare::DevicePolicy {
 public:
  static constexpr std::string_view kName = "FragLookaheadScore";
  static constexpr std::string_view kStateKey = "PreScoreFragLookaheadScore";
  FragLookaheadScore(FragLookaheadScoreArgs args, framework::Handle& h);
  ~FragLookaheadScore() override;
  std::string_view Name() const override { return kName; }
  // Ranks every feasible node (see the file comment): the chosen node 100, the others
  // 99 down to 0 by cost. Stored for Score.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  // The ranking is complete after PreScore: no normalization, no extra tie-break.
  framework::ScoreExtensions* GetScoreExtensions() override { return nullptr; }
  // GPU shares: the device whose use grows F least (as FGD); whole devices: no opinion.
  std::vector<int32_t> ChooseDevices(const NodeGpuState& node, const framework::PodInfo& pod,
                                     const gpu::GpuAsk& ask, int32_t milli) override;
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

  // FGD's delta F(node - pod) - F(node) in milli, exact; for a GPU share the best device
  // (in *device, else -1). +inf when the pod does not fit.
  static double Delta(const gpu::NodeShape& node, const gpu::PodShape& pod, gpu::FragMemo& memo,
                      int32_t* device);
  // The same with F(node) already known (`before`).
  static double DeltaFrom(double before, const gpu::NodeShape& node, const gpu::PodShape& pod,
                          gpu::FragMemo& memo, int32_t* device);
  // `node` after placing `pod` on `device` (a share) or on the best-fit devices.
  static gpu::NodeShape After(const gpu::NodeShape& node, const gpu::PodShape& pod, int32_t device);

 private:
  // One node of the snapshot's list, by position: its deltas as of (generation, pods).
  struct NodeLook {
    std::string name;
    int64_t generation = -1;
    size_t pods = 0;
    std::shared_ptr<const TargetDeltas> deltas;
  };
  std::shared_ptr<gpu::FragMemo> Memo(const gpu::PodShape* observe);
  std::shared_ptr<const TargetDeltas> DeltasOf(const gpu::NodeShape& node, gpu::FragMemo& memo)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(look_mu_);
  // Adds to (*cost)[i], for each of the `candidates` (indices into `nodes`, whose GPU
  // states are `states`), lookaheadWeight x the expected cost of the next pod (file comment).
  void LookAhead(const framework::PodInfo& pod, const gpu::GpuAsk& ask,
                 const std::vector<const framework::NodeInfo*>& nodes,
                 const std::vector<std::shared_ptr<const NodeGpuState>>& states,
                 const std::vector<size_t>& candidates, gpu::FragMemo& memo,
                 std::vector<double>* cost) ABSL_EXCLUSIVE_LOCKS_REQUIRED(look_mu_);

  FragLookaheadScoreArgs la_args_;
  absl::Mutex mu_;
  std::shared_ptr<gpu::FragMemo> memo_ ABSL_GUARDED_BY(mu_);
  gpu::LearnedWorkload learned_ ABSL_GUARDED_BY(mu_){/*popularity=*/1.0};

  absl::Mutex look_mu_;
  const gpu::FragMemo* look_memo_ ABSL_GUARDED_BY(look_mu_) = nullptr;
  std::vector<NodeLook> look_ ABSL_GUARDED_BY(look_mu_);  // parallel to the snapshot's list
  std::unordered_map<std::string, std::shared_ptr<const TargetDeltas>> deltas_memo_
      ABSL_GUARDED_BY(look_mu_);  // by FragMemo::Key
  uint64_t salt_ ABSL_GUARDED_BY(look_mu_) = 0;
  bool have_salt_ ABSL_GUARDED_BY(look_mu_) = false;
};

}  // namespace phalanx::plugins::gpupolicy
