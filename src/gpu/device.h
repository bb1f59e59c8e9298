// The GPU device model (module phalanx_gpu) shared by the GpuShare plugin, the GPU score
// policies (src/plugins/gpushare, src/plugins/gpupolicy), the simulator and trace replay: what a pod asks for (whole GPUs or a share of one GPU, in milli-GPU), what a
// node offers (N GPUs of one model), and the per-device arithmetic.
//
// Units: a GPU is 1000 milli-GPU; a share is 1..999 milli of one device. Memory asks
// (KAI gpu-memory) are MiB of device memory and become milli on a node of a known model.
//
// Manifest dialects (facts from ../shared/data/README.md and the projects named):
//   Alibaba open-gpu-share (the FGD paper's simulator, hkust-adsl/kubernetes-scheduler-
//   simulator): pod annotations alibabacloud.com/gpu-milli (per device, 1000 = whole),
//   alibabacloud.com/gpu-count, alibabacloud.com/gpu-card-model (allowed models,
//   '|'-separated); the chosen devices in alibabacloud.com/gpu-index ("2-3-4").
//   NVIDIA KAI scheduler: pod annotations gpu-fraction ("0.5"), gpu-memory (MiB) and
//   gpu-fraction-num-devices (devices that each get the fraction); no nvidia.com/gpu
//   request.
//   Plain Kubernetes: an nvidia.com/gpu request of N is N whole devices.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"

namespace phalanx::gpu {

inline constexpr int32_t kMilliPerGpu = 1000;

inline constexpr const char* kGpuMilliAnnotation = "alibabacloud.com/gpu-milli";
inline constexpr const char* kGpuCountAnnotation = "alibabacloud.com/gpu-count";
inline constexpr const char* kGpuModelAnnotation = "alibabacloud.com/gpu-card-model";
inline constexpr const char* kGpuIndexAnnotation = "alibabacloud.com/gpu-index";
inline constexpr const char* kKaiFractionAnnotation = "gpu-fraction";
inline constexpr const char* kKaiMemoryAnnotation = "gpu-memory";
inline constexpr const char* kKaiNumDevicesAnnotation = "gpu-fraction-num-devices";
// Node label with the GPU model (also set by the openb loader); nvidia.com/gpu.product
// (GPU feature discovery) is the fallback.
inline constexpr const char* kGpuModelLabel = "alibabacloud.com/gpu-card-model";
inline constexpr const char* kGfdProductLabel = "nvidia.com/gpu.product";
// Node label with the device memory in MiB (GPU feature discovery).
inline constexpr const char* kGfdMemoryLabel = "nvidia.com/gpu.memory";

// Where a pod's GPU ask came from.
enum class AskSource : uint8_t { kNone, kAlibaba, kKaiFraction, kKaiMemory, kExtendedResource };

// A pod's GPU ask: `count` distinct devices, each with `milli` free (or `memory_mib` of
// device memory when milli is 0 and source is kKaiMemory).
struct GpuAsk {
  AskSource source = AskSource::kNone;
  int32_t count = 0;                // devices; 0 = no GPU
  int32_t milli = 0;                // per device, 1..1000; 0 for memory asks
  int64_t memory_mib = 0;           // per device (KAI gpu-memory)
  std::vector<std::string> models;  // allowed GPU models; empty = any
  std::string error;                // non-empty: the annotations are invalid (pod is unschedulable)

  bool has_gpu() const { return count > 0; }
  // One device, less than all of it (a GPU-sharing pod).
  bool is_share() const { return count == 1 && milli > 0 && milli < kMilliPerGpu; }
  bool is_whole() const { return milli == kMilliPerGpu; }
};

// Reads the pod's ask, in this order: Alibaba annotations, KAI annotations, the
// nvidia.com/gpu request. Alibaba: gpu-milli without gpu-count means one device;
// gpu-count without gpu-milli means whole devices. Invalid values set `error` (e.g.
// "alibabacloud.com/gpu-milli: Invalid value: \"abc\": must be an integer in 1..1000").
GpuAsk ParseGpuAsk(const api::Pod& pod);

// A node's GPUs: count from allocatable nvidia.com/gpu, else the alibabacloud.com/
// gpu-count label or annotation; model from the model label; device memory from the GFD
// label or, for known models, the open-gpu-share table (MapGpuTypeMemoryMiB).
struct NodeGpus {
  int32_t count = 0;
  std::string model;
  int64_t memory_mib = 0;  // per device; 0 = unknown
};
NodeGpus ParseNodeGpus(const api::Node& node);

// Device memory of a GPU model in MiB from open-gpu-share's table (pkg/type/open-gpu-
// share/utils/const.go), 0 if unknown.
int64_t ModelMemoryMiB(std::string_view model);

// The per-device milli of `ask` on a node with `gpus`: ask.milli, or for memory asks
// ceil(memory_mib * 1000 / device memory) capped at 1000; 0 if the device memory is unknown.
int32_t MilliOnNode(const GpuAsk& ask, const NodeGpus& gpus);

// True if `models` is empty or contains `node_model` (upstream IsNodeAccessibleToPodByType).
bool ModelAllowed(const std::vector<std::string>& models, std::string_view node_model);

// "2-3-4" -> {2, 3, 4}; false on malformed input.
bool ParseGpuIndex(std::string_view text, std::vector<int32_t>* out);
std::string FormatGpuIndex(const std::vector<int32_t>& devices);

// Number of devices with at least `milli` free.
int32_t DevicesWithFree(const std::vector<int32_t>& free_milli, int32_t milli);
// True if `count` distinct devices each have `milli` free.
bool Fits(const std::vector<int32_t>& free_milli, int32_t count, int32_t milli);

// Device choices; each returns `count` distinct device indices or empty if they do not fit.
// Whole devices (milli == 1000): the lowest-indexed free devices (upstream
// AllocateExclusiveGpuId). Shares: BestFit takes the device with the least free milli
// that fits (ties: lowest index), WorstFit the most, FirstFit the lowest index.
// Fractions on several devices take devices in BestFit order.
std::vector<int32_t> ChooseBestFit(const std::vector<int32_t>& free_milli, int32_t count,
                                   int32_t milli);
std::vector<int32_t> ChooseWorstFit(const std::vector<int32_t>& free_milli, int32_t count,
                                    int32_t milli);
std::vector<int32_t> ChooseFirstFit(const std::vector<int32_t>& free_milli, int32_t count,
                                    int32_t milli);

}  // namespace phalanx::gpu
