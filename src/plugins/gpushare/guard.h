// GpuShareGuard: a GPU share (a pod asking for part of a GPU, or for GPUs by annotation
// rather than by the nvidia.com/gpu resource) is never placed by a profile that does not
// account for it. Without GpuShare, NodeResourcesFit sees no GPU request in such a pod and
// would put it on any node, a node with no GPU at all included.
//
//   PreFilter  a pod whose GPU ask (gpu/device.h ParseGpuAsk: Alibaba open-gpu-share
//              alibabacloud.com/gpu-milli / gpu-count, KAI gpu-fraction / gpu-memory, the
//              gpushare resource aliyun.com/gpu-mem) comes from one of those dialects is
//              UnschedulableAndUnresolvable, naming the annotation and the plugin to enable:
//              `annotation gpu-fraction "0.5": a GPU share is placed only by the GpuShare
//              plugin, which this profile does not enable (add GpuShare to its plugins,
//              see examples/gpu-sharing)`; an invalid annotation, with its error. Other pods
//              (Skip): unaffected, and so is a pod that also requests nvidia.com/gpu for
//              every device of its ask: NodeResourcesFit gives it that many whole GPUs (the
//              openb traces' GPU pods without --gpu-sharing carry both).
//
// In every profile's defaults (config/default_plugins.cc); a profile that enables GpuShare
// at any extension point drops it (config::internal::MergePlugins), so the two never run
// together.
#pragma once

#include <memory>
#include <string_view>

#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::gpushare {

class GpuShareGuard final : public framework::PreFilterPlugin, public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "GpuShareGuard";
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  // PreFilter alone, the same for every node: pods batch as they would without it.
  bool SameSignature(const framework::PodInfo&, const framework::PodInfo&) const override {
    return true;
  }
};

}  // namespace phalanx::plugins::gpushare
