// Pods and nodes for the GPU tests (src/gpu/gpu_test.cc, src/plugins/gpushare): test-only.
#pragma once

#include <string>

#include "api/types.h"
#include "gpu/device.h"
#include "testing/builders.h"

namespace phalanx::gpu::testing {

// A pod with Alibaba annotations (milli per device, count) and optional devices.
inline api::Pod Share(const std::string& name, int milli, int count = 1,
                      const std::string& index = "", const std::string& model = "") {
  phalanx::testing::PodBuilder b(name);
  b.UID("uid-" + name).Req("cpu", "1");
  b.Annotation(kGpuMilliAnnotation, std::to_string(milli));
  b.Annotation(kGpuCountAnnotation, std::to_string(count));
  if (!index.empty()) b.Annotation(kGpuIndexAnnotation, index);
  if (!model.empty()) b.Annotation(kGpuModelAnnotation, model);
  return b.Obj();
}

// A node with `gpus` nvidia.com/gpu of `model` (32 cpu, 256Gi).
inline api::Node GpuNode(const std::string& name, int gpus, const std::string& model = "V100M16") {
  auto b = phalanx::testing::NodeBuilder(name).Capacity({{"cpu", "32"},
                                                         {"memory", "256Gi"},
                                                         {"pods", "110"},
                                                         {"nvidia.com/gpu", std::to_string(gpus)}});
  if (!model.empty()) b.Label(kGpuModelLabel, model);
  return b.Obj();
}

}  // namespace phalanx::gpu::testing
