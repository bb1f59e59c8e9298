#include "plugins/gpushare/guard.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>

#include "gpu/device.h"

namespace phalanx::plugins::gpushare {

framework::StatusOr<std::unique_ptr<framework::Plugin>> GpuShareGuard::New(
    framework::PluginArgs args, framework::Handle&) {
  if (args && args->IsDefined() && !args->IsNull() && !(args->IsMap() && args->size() == 0)) {
    return framework::Status::Error("GpuShareGuard takes no arguments");
  }
  return std::unique_ptr<framework::Plugin>(new GpuShareGuard());
}

namespace {

// The pod's nvidia.com/gpu request: the sum over its containers (a container's limit when it
// has no request, as the API server defaults it), or the largest init container's if more.
int64_t ExtendedGpuRequest(const api::Pod& p) {
  auto of = [](const api::Container& c) -> int64_t {
    for (const auto* list : {&c.resources.requests, &c.resources.limits}) {
      if (auto it = list->find("nvidia.com/gpu"); it != list->end()) return it->second.Value();
    }
    return 0;
  };
  int64_t sum = 0, init = 0;
  for (const auto& c : p.spec.containers) sum += of(c);
  for (const auto& c : p.spec.init_containers) init = std::max(init, of(c));
  return std::max(sum, init);
}

}  // namespace

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
  // A pod that also requests nvidia.com/gpu for each device of its ask gets whole GPUs
  // through NodeResourcesFit: on a GPU node, never over the node's GPUs (the openb traces
  // without --gpu-sharing).
  if (ExtendedGpuRequest(p) >= ask.count) return framework::Status(framework::Code::kSkip, "");
  return framework::Status::UnschedulableAndUnresolvable(
      what +
      ": a GPU share is placed only by the GpuShare plugin, which this profile does not "
      "enable (add GpuShare to its plugins, see examples/gpu-sharing)");
}

}  // namespace phalanx::plugins::gpushare
