// FGDScore: Fragmentation Gradient Descent (Weng et al., USENIX ATC 2023, section 4; the
// artifact's pkg/simulator/plugin/fgd_score.go). A node's score is
//   sigmoid((F(node) - F(node with the pod)) / 1000) * 100, truncated,
// where F is the node's expected fragmented GPU milli with respect to the target workload
// (gpu/frag.h). For a GPU share every device that fits is tried and the best
// one counts; as its device policy FGD then gives the pod that device (GpuShare's Auto
// device selection).
//
// The target workload, in order of precedence: the plugin args' targetWorkload; the one
// set on the profile's GpuContext (the simulator sets the trace's pod shapes, as the
// artifact does); else the shapes of the pods this plugin has scored so far.
//
// Args (kind FGDScoreArgs):
//   tieBreak: Random | NodeOrder (common.h)
//   targetWorkload: [{cpuMilli: 8000, gpuMilli: 500, gpuCount: 1, gpuModel: "T4|P100",
//                     frequency: 0.3}, ...]   (frequencies are renormalized to sum to 1)
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "gpu/frag.h"
#include "plugins/gpupolicy/common.h"

namespace phalanx::plugins::gpupolicy {

struct FGDScoreArgs {
  PolicyArgs policy;  // tieBreak
  std::vector<gpu::TargetPod> target_workload;
};
// Errors: "FGDScoreArgs: targetWorkload[0].frequency: Invalid value: ...".
framework::StatusOr<FGDScoreArgs> ParseFGDScoreArgs(framework::PluginArgs args);

class FGDScore final : public PolicyScorePlugin, public gpushare::DevicePolicy {
 public:
  static constexpr std::string_view kName = "FGDScore";
  static constexpr std::string_view kStateKey = "PreScoreFGDScore";
  FGDScore(FGDScoreArgs args, framework::Handle& h);
  ~FGDScore() override;
  std::string_view Name() const override { return kName; }
  // Scores every feasible node (memoized fragmentation), stored for Score.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const std::vector<const framework::NodeInfo*>& nodes) override;
  framework::Status Score(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node, int64_t* score) override;
  // GPU shares: the device with the best FGD score; whole devices: no opinion.
  std::vector<int32_t> ChooseDevices(const NodeGpuState& node, const framework::PodInfo& pod,
                                     const gpu::GpuAsk& ask, int32_t milli) override;
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  std::shared_ptr<gpu::FragMemo> Memo(const gpu::PodShape* observe);
  int64_t ScoreNode(const NodeGpuState& st, const framework::PodInfo& pod, const gpu::GpuAsk& ask,
                    gpu::FragMemo& memo, int32_t* device);

  std::shared_ptr<const gpu::TargetWorkload> fixed_;  // from args
  absl::Mutex mu_;
  std::shared_ptr<gpu::FragMemo> memo_ ABSL_GUARDED_BY(mu_);
  gpu::LearnedWorkload learned_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::plugins::gpupolicy
