// GpuShare: per-device GPU accounting for whole GPUs and GPU shares (milli-GPU), the
// scheduler side of Alibaba's open-gpu-share and gpushare, and of KAI's fractional GPUs
// (see gpu/device.h for the manifest formats and the annotation keys). Modeled on the FGD
// paper artifact's Open-Gpu-Share plugin (hkust-adsl/kubernetes-scheduler-simulator
// pkg/simulator/plugin/open_gpu_share.go).
//
//   PreFilter  parses the pod's GPU ask (Skip for pods without one; invalid annotations
//              make the pod UnschedulableAndUnresolvable with the field in the reason).
//   Filter     the node must have GPUs of an allowed model and `count` distinct devices
//              with `milli` free each: a node with two half-used GPUs cannot take a pod
//              that needs one whole GPU.
//   Reserve    chooses the devices (deviceSelection, see GpuShareArgs) and records them in
//              the profile's GpuContext; Unreserve releases them. A gpu-index the
//              manifest sets is kept (upstream allocateGpuId); one an earlier attempt of
//              Phalanx wrote (scheduling.phalanx.dev/gpu-node present) is not.
//   PreBind    writes the devices to the pod before the binding, in the annotations the
//              node side reads (gpu::AssignmentAnnotations: alibabacloud.com/gpu-index +
//              assume-time for open-gpu-share; the ALIYUN_COM_GPU_MEM_* set that
//              gpushare-device-plugin's Allocate reads for aliyun.com/gpu-mem pods) through
//              ClusterClient::PatchPodAnnotations (a strategic merge patch in live mode,
//              the store in simulate); skipped when the pod already carries them. A failed
//              write fails the binding (Unreserve frees the devices; the pod is retried), so
//              no pod is bound without its devices on record. A restarted Phalanx counts
//              bound pods on the devices their annotations name (GpuContext::ComputeState).
//
// Not written: KAI's sharing is carried out by KAI's own binder (a BindRequest, then a
// reservation pod asking for one whole nvidia.com/gpu, whose run.ai/reserve_for_gpu_index
// the device side fills in, and the runai-gpu-group label on the fraction pods;
// NVIDIA/KAI-Scheduler pkg/binder/binding/resourcereservation/resource_reservation.go,
// pkg/common/constants/constants.go), so annotations from another scheduler cannot drive
// it; HAMi's device plugin reads hami.io/vgpu-devices-to-allocate with device UUIDs from
// the node's hami.io/node-nvidia-register and HAMi's node lock (Project-HAMi/HAMi
// pkg/device/nvidia/device.go), and asks in nvidia.com/gpumem, which Phalanx does not read.
// Pods of those dialects still get the gpu-index record, so accounting survives restarts.
//
// GPU model constraints are also expressed as required node affinity on the model label
// (the openb loader adds it); Filter checks the pod's gpu-card-model annotation as well so
// manifests without the affinity are held to it.
//
// Not in the default plugin set; enable it in a profile (examples/gpu-sharing/).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "plugins/gpushare/context.h"

namespace phalanx::plugins::gpushare {

// GpuShareArgs (pluginConfig args, kind GpuShareArgs).
struct GpuShareArgs {
  // Which devices a GPU share gets on the chosen node:
  //   Auto (default): the choice of the profile's GPU score policy if it has one (FGDScore:
  //     least fragmentation; RandomScore: random), else BestFit — the paper artifact's
  //     gpuSelMethod settings for its six policies;
  //   BestFit / WorstFit / FirstFit: least / most free milli that fits, lowest index;
  //   Random: uniformly among the devices that fit (scheduler's seeded RNG).
  // Whole devices always take the lowest-indexed free ones.
  std::string device_selection = "Auto";
};

// Errors: "GpuShareArgs: deviceSelection: Unsupported value: ...".
framework::StatusOr<GpuShareArgs> ParseGpuShareArgs(framework::PluginArgs args);

class GpuShare final : public framework::PreFilterPlugin,
                       public framework::FilterPlugin,
                       public framework::ReservePlugin,
                       public framework::PreBindPlugin,
                       public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "GpuShare";
  static constexpr std::string_view kStateKey = "PreFilterGpuShare";
  static constexpr std::string_view kReservedKey = "ReserveGpuShare";
  // Filter reasons.
  static constexpr const char* kReasonNoGpus = "node(s) had no GPUs";
  static constexpr const char* kReasonModel = "node(s) had no GPU of the requested model";
  static constexpr const char* kReasonTooFew = "node(s) had fewer GPUs than requested";
  static constexpr const char* kReasonMemory = "node(s) had GPUs of unknown memory size";
  static constexpr const char* kReasonInsufficient = "Insufficient GPU devices";

  GpuShare(GpuShareArgs args, framework::Handle& h);

  std::string_view Name() const override { return kName; }
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 const std::string& node) override;
  // Writes the reserved devices to the pod (see above). Error when the write fails.
  framework::Status PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node) override;
  // Assigned pod deleted (devices freed); node added or its allocatable / labels changed.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  GpuContext& context() { return *ctx_; }

  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  std::vector<int32_t> ChooseDevices(const NodeGpuState& st, const framework::PodInfo& pod,
                                     const gpu::GpuAsk& ask, int32_t milli);

  GpuShareArgs args_;
  framework::Handle& handle_;
  std::shared_ptr<GpuContext> ctx_;
  uint64_t prefilter_calls_ = 0;
};

}  // namespace phalanx::plugins::gpushare
