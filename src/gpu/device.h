// The GPU device model (module phalanx_gpu) shared by the GpuShare plugin, the GPU score
// policies (src/plugins/gpushare, src/plugins/gpupolicy), the simulator and trace replay: what a
// pod asks for (whole GPUs or a share of one GPU, in milli-GPU), what a node offers (N GPUs of one
// model), and the per-device arithmetic.
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
//   Alibaba gpushare (AliyunContainerService/gpushare-scheduler-extender and its
//   gpushare-device-plugin): a container limit aliyun.com/gpu-mem (device-memory units,
//   GiB by default) on one device of a node whose status.capacity has aliyun.com/gpu-mem
//   (all devices) and aliyun.com/gpu-count (pkg/utils/node.go).
//   Plain Kubernetes: an nvidia.com/gpu request of N is N whole devices.
//
// Assignment annotations (GpuShare's PreBind writes them; AssignmentAnnotations below):
//   open-gpu-share: alibabacloud.com/gpu-index and alibabacloud.com/assume-time (UnixNano),
//     as UpdatePodDeviceAnnoSpec writes them (hkust-adsl/kubernetes-scheduler-simulator
//     pkg/type/open-gpu-share/utils/pod.go, keys in utils/const.go).
//   Alibaba gpushare, for aliyun.com/gpu-mem pods only: ALIYUN_COM_GPU_MEM_IDX (device),
//     ALIYUN_COM_GPU_MEM_POD (the pod's gpu-mem), ALIYUN_COM_GPU_MEM_DEV (one device's
//     gpu-mem), ALIYUN_COM_GPU_MEM_ASSIGNED "false", ALIYUN_COM_GPU_MEM_ASSUME_TIME
//     (UnixNano), as PatchPodAnnotationSpec sends them (gpushare-scheduler-extender
//     pkg/utils/pod.go, keys in pkg/utils/const.go). gpushare-device-plugin's Allocate
//     (pkg/gpu/nvidia/allocate.go, podutils.go) takes the node's pending pod with
//     ASSIGNED "false" and the same gpu-mem, oldest ASSUME_TIME first, hands the container
//     device ALIYUN_COM_GPU_MEM_IDX and sets ASSIGNED "true".
//   Phalanx: scheduling.phalanx.dev/gpu-node, the node the devices were chosen on, so that
//     an index left on a pod whose binding never happened (a crash between the patch and
//     the binding) is recognised as stale rather than taken as the user's choice.
#pragma once

#include <cstdint>
#include <map>
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
inline constexpr const char* kAssumeTimeAnnotation = "alibabacloud.com/assume-time";
inline constexpr const char* kGpuNodeAnnotation = "scheduling.phalanx.dev/gpu-node";
inline constexpr const char* kAliyunGpuMemResource = "aliyun.com/gpu-mem";
inline constexpr const char* kAliyunGpuCountResource = "aliyun.com/gpu-count";
inline constexpr const char* kAliyunMemIdxAnnotation = "ALIYUN_COM_GPU_MEM_IDX";
inline constexpr const char* kAliyunMemPodAnnotation = "ALIYUN_COM_GPU_MEM_POD";
inline constexpr const char* kAliyunMemDevAnnotation = "ALIYUN_COM_GPU_MEM_DEV";
inline constexpr const char* kAliyunAssignedAnnotation = "ALIYUN_COM_GPU_MEM_ASSIGNED";
inline constexpr const char* kAliyunAssumeTimeAnnotation = "ALIYUN_COM_GPU_MEM_ASSUME_TIME";
inline constexpr const char* kKaiFractionAnnotation = "gpu-fraction";
inline constexpr const char* kKaiMemoryAnnotation = "gpu-memory";
inline constexpr const char* kKaiNumDevicesAnnotation = "gpu-fraction-num-devices";
// Node label with the GPU model (also set by the openb loader); nvidia.com/gpu.product
// (GPU feature discovery) is the fallback.
inline constexpr const char* kGpuModelLabel = "alibabacloud.com/gpu-card-model";
inline constexpr const char* kGfdProductLabel = "nvidia.com/gpu.product";
// Node label with the device memory in MiB (GPU feature discovery).
inline constexpr const char* kGfdMemoryLabel = "nvidia.com/gpu.memory";

// NVIDIA's DRA driver (github.com/NVIDIA/k8s-dra-driver-gpu): its driver name, and the
// device name of GPU index i in its ResourceSlices ("gpu-<i>"; MIG partitions have longer
// names).
inline constexpr const char* kDraGpuDriver = "gpu.nvidia.com";
std::string DraGpuDeviceName(int32_t index);
// The consumable capacity of a shareable GPU device in milli-GPU (1000 = the whole device),
// as `--gpu-model dra` publishes it (replay/dra_gpus.h).
inline constexpr const char* kDraGpuCompute = "compute";
// The index of a "gpu-<i>" device name; -1 for any other name.
int32_t DraGpuIndex(std::string_view device);

// Where a pod's GPU ask came from.
enum class AskSource : uint8_t {
  kNone,
  kAlibaba,
  kKaiFraction,
  kKaiMemory,
  kAliyunMemory,
  kExtendedResource
};

// A pod's GPU ask: `count` distinct devices, each with `milli` free (or `memory_mib` of
// device memory when milli is 0 and source is kKaiMemory).
struct GpuAsk {
  AskSource source = AskSource::kNone;
  int32_t count = 0;                // devices; 0 = no GPU
  int32_t milli = 0;                // per device, 1..1000; 0 for memory asks
  int64_t memory_mib = 0;           // per device (KAI gpu-memory)
  int64_t aliyun_mem = 0;           // aliyun.com/gpu-mem units (kAliyunMemory)
  std::vector<std::string> models;  // allowed GPU models; empty = any
  std::string error;                // non-empty: the annotations are invalid (pod is unschedulable)

  bool has_gpu() const { return count > 0; }
  // One device, less than all of it (a GPU-sharing pod).
  bool is_share() const { return count == 1 && milli > 0 && milli < kMilliPerGpu; }
  bool is_whole() const { return milli == kMilliPerGpu; }
};

// Reads the pod's ask, in this order: Alibaba annotations, KAI annotations, the
// aliyun.com/gpu-mem limit (sum over containers, as gpushare's
// GetGPUMemoryFromPodResource; the request when there is no limit), the nvidia.com/gpu
// request. Alibaba: gpu-milli without gpu-count means one device;
// gpu-count without gpu-milli means whole devices. Invalid values set `error` (e.g.
// "alibabacloud.com/gpu-milli: Invalid value: \"abc\": must be an integer in 1..1000").
GpuAsk ParseGpuAsk(const api::Pod& pod);

// A node's GPUs: count from allocatable nvidia.com/gpu, else capacity (or allocatable)
// aliyun.com/gpu-count, else the alibabacloud.com/gpu-count label or annotation; model
// from the model label; device memory from the GFD label or, for known models, the
// open-gpu-share table (MapGpuTypeMemoryMiB).
struct NodeGpus {
  int32_t count = 0;
  std::string model;
  int64_t memory_mib = 0;  // per device; 0 = unknown
  // aliyun.com/gpu-mem of one device (capacity / count); 0 = not a gpushare node.
  int64_t aliyun_mem_per_device = 0;
};
NodeGpus ParseNodeGpus(const api::Node& node);

// Device memory of a GPU model in MiB from open-gpu-share's table (pkg/type/open-gpu-
// share/utils/const.go), 0 if unknown.
int64_t ModelMemoryMiB(std::string_view model);

// The per-device milli of `ask` on a node with `gpus`: ask.milli, or for memory asks
// ceil(memory_mib * 1000 / device memory) capped at 1000 (aliyun.com/gpu-mem: ceil(
// aliyun_mem * 1000 / aliyun_mem_per_device)); 0 if the device memory is unknown. The
// rounding up can leave a device one share short of what its memory holds (a 15-unit
// device takes 14 pods of 1 unit, 67 milli each) but never over-commits it.
int32_t MilliOnNode(const GpuAsk& ask, const NodeGpus& gpus);

// True if `models` is empty or contains `node_model` (upstream IsNodeAccessibleToPodByType).
bool ModelAllowed(const std::vector<std::string>& models, std::string_view node_model);

// The annotations that record `devices` of `node` for `pod` (see "Assignment annotations"
// above): the open-gpu-share pair and scheduling.phalanx.dev/gpu-node always, the
// ALIYUN_COM_GPU_MEM_* set when ask.source is kAliyunMemory. `now_ns`: UnixNano.
std::map<std::string, std::string> AssignmentAnnotations(const GpuAsk& ask, const NodeGpus& gpus,
                                                         const std::string& node,
                                                         const std::vector<int32_t>& devices,
                                                         int64_t now_ns);
// True when `pod` already carries every annotation of `want` with its value, the two
// assume-time keys excepted (their value is the time of writing).
bool HasAssignmentAnnotations(const api::Pod& pod, const std::map<std::string, std::string>& want);

// The devices a pod on `node` holds according to its annotations: alibabacloud.com/
// gpu-index, unless scheduling.phalanx.dev/gpu-node names another node (written for a
// binding that did not happen); else ALIYUN_COM_GPU_MEM_IDX (pods bound by Alibaba's
// extender). False when neither is present and valid.
bool RecordedDevices(const api::Pod& pod, std::string_view node, std::vector<int32_t>* out);

// True when the pod's alibabacloud.com/gpu-index was written by the manifest's author
// (no scheduling.phalanx.dev/gpu-node), so Reserve keeps it (upstream: a predefined index
// is kept); an index Phalanx wrote for an earlier attempt is not.
bool HasPredefinedGpuIndex(const api::Pod& pod);

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
