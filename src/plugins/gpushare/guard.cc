#include "plugins/gpushare/guard.h"

#include <yaml-cpp/yaml.h>

#include "gpu/device.h"

namespace phalanx::plugins::gpushare {

framework::StatusOr<std::unique_ptr<framework::Plugin>> GpuShareGuard::New(
    framework::PluginArgs args, framework::Handle&) {
  if (args && args->IsDefined() && !args->IsNull() && !(args->IsMap() && args->size() == 0)) {
    return framework::Status::Error("GpuShareGuard takes no arguments");
  }
  return std::unique_ptr<framework::Plugin>(new GpuShareGuard());
}

framework::Status GpuShareGuard::PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                                           framework::PreFilterResult*) {
  const api::Pod& p = pod.Pod();
  // Fast path: the dialects that need GpuShare are annotations or the aliyun.com/gpu-mem
  // resource.
  bool maybe = !p.metadata.annotations.empty();
  if (!maybe) {
    for (const auto& c : p.spec.containers) {
      maybe = maybe || c.resources.limits.count(gpu::kAliyunGpuMemResource) ||
              c.resources.requests.count(gpu::kAliyunGpuMemResource);
    }
  }
  if (!maybe) return framework::Status(framework::Code::kSkip, "");
  const gpu::GpuAsk ask = gpu::ParseGpuAsk(p);
  if (!ask.error.empty()) return framework::Status::UnschedulableAndUnresolvable(ask.error);
  std::string what;
  auto annotation = [&](const char* key) {
    auto it = p.metadata.annotations.find(key);
    return std::string("annotation ") + key +
           (it == p.metadata.annotations.end() ? "" : " \"" + it->second + "\"");
  };
  switch (ask.source) {
    case gpu::AskSource::kKaiFraction:
      what = annotation(gpu::kKaiFractionAnnotation);
      break;
    case gpu::AskSource::kKaiMemory:
      what = annotation(gpu::kKaiMemoryAnnotation);
      break;
    case gpu::AskSource::kAlibaba:
      what = p.metadata.annotations.count(gpu::kGpuMilliAnnotation)
                 ? annotation(gpu::kGpuMilliAnnotation)
                 : annotation(gpu::kGpuCountAnnotation);
      break;
    case gpu::AskSource::kAliyunMemory:
      what = std::string("resource ") + gpu::kAliyunGpuMemResource;
      break;
    default:
      return framework::Status(framework::Code::kSkip, "");
  }
  if (!ask.has_gpu()) return framework::Status(framework::Code::kSkip, "");
  return framework::Status::UnschedulableAndUnresolvable(
      what +
      ": a GPU share is placed only by the GpuShare plugin, which this profile does not "
      "enable (add GpuShare to its plugins, see examples/gpu-sharing)");
}

}  // namespace phalanx::plugins::gpushare
