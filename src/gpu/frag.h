// GPU fragmentation as defined by Weng et al., "Beware of Fragmentation: Scheduling
// GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023, section 4,
// with the exact arithmetic of the paper's artifact (hkust-adsl/kubernetes-scheduler-
// simulator: pkg/utils/frag.go, pkg/type/resource.go, pkg/simulator/plugin/fgd_score.go).
//
// A node's fragmentation with respect to a target workload (pod shapes with
// frequencies) is the expected number of its idle GPU milli that a pod drawn from the
// workload could not use: for each shape, the node is in one of the quadrants Q1 (lacks
// CPU and GPU), Q2 (lacks GPU), Q3 (can host it), Q4 (lacks CPU), XL / XR (CPU-only shape,
// CPU enough / lacking), NoAccess (GPU model not allowed). Outside Q3 all idle GPU milli
// count as fragment; in Q3 only the devices with less free milli than the shape asks per
// device do. FGD places a pod where the fragmentation grows least.
//
// Units: CPU in milli-cores, GPU in milli-GPU (1000 = one device).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace phalanx::gpu {

// A pod's resources as FGD sees them (upstream simontype.PodResource).
struct PodShape {
  int64_t milli_cpu = 0;
  int32_t milli_gpu = 0;  // per device, 0..1000
  int32_t gpu_count = 0;
  std::string models;  // allowed GPU models, '|'-separated; empty = any
  bool operator==(const PodShape&) const = default;
  // Upstream PodResource.Less: cpu, milli gpu, count, models.
  bool operator<(const PodShape& o) const;
  int64_t total_milli_gpu() const { return static_cast<int64_t>(milli_gpu) * gpu_count; }
};

// A node's free resources as FGD sees them (upstream simontype.NodeResource).
struct NodeShape {
  int64_t milli_cpu_left = 0;
  int64_t milli_cpu_capacity = 0;
  std::string model;                // empty: a CPU-only node
  std::vector<int32_t> free_milli;  // per device (device index = position)
  int64_t total_free_milli() const;
  int32_t fully_free_devices() const;
};

struct TargetPod {
  PodShape shape;
  double freq = 0;  // 0..1, sums to 1 over the workload
};

// The target workload: the most popular pod shapes covering `popularity` of the pods
// (upstream GetTypicalPods with isInvolvedCpuPods=true, podPopularityThreshold=95,
// podIncreaseStep=1, gpuResWeight=0, the paper artifact's settings), frequencies
// renormalized to sum to 1.
class TargetWorkload {
 public:
  TargetWorkload() = default;
  explicit TargetWorkload(std::vector<TargetPod> pods);
  // Shapes in any order (one per pod); ties in popularity ordered as upstream.
  static TargetWorkload FromShapes(const std::vector<PodShape>& shapes, double popularity = 0.95);
  const std::vector<TargetPod>& pods() const { return pods_; }
  bool empty() const { return pods_.empty(); }

 private:
  std::vector<TargetPod> pods_;
};

// A target workload learned from pod shapes as a scheduler sees them: rebuilt with
// TargetWorkload::FromShapes(shapes, popularity) at 1, 2, 4, ... shapes and every 1024
// after that (FGD without a given workload; FragLookahead). Not thread-safe: the owner
// guards it.
class LearnedWorkload {
 public:
  explicit LearnedWorkload(double popularity = 0.95) : popularity_(popularity) {}
  void Observe(const PodShape& shape);
  // The workload as last rebuilt; an empty one before the first shape.
  const std::shared_ptr<const TargetWorkload>& Current() const { return current_; }

 private:
  double popularity_;
  std::vector<PodShape> shapes_;
  std::shared_ptr<const TargetWorkload> current_ = std::make_shared<const TargetWorkload>();
};

enum class FragClass : uint8_t {
  kQ1LackBoth,
  kQ2LackGpu,
  kQ3Satisfied,
  kQ4LackCpu,
  kXLSatisfied,
  kXRLackCpu,
  kNoAccess
};

// upstream GetNodePodFrag.
FragClass Classify(const NodeShape& node, const PodShape& pod);
// upstream IsNodeAccessibleToPodByType: true if `models` ('|'-separated) is empty or
// names `node_model`; a CPU-only node (empty model) is never accessible to a GPU model ask.
bool ModelAccessible(std::string_view node_model, std::string_view models);

// Expected fragmented GPU milli of `node` (upstream NodeGpuShareFragAmountScore, i.e. the
// FragAmount summed over every class but Q3).
double NodeFragMilli(const NodeShape& node, const TargetWorkload& workload);

// `node` minus `pod` (upstream NodeResource.Sub): CPU, then the pod's devices packed onto
// the devices with the least free milli that fit. False if it does not fit (then *out is
// partially updated, as upstream).
bool SubtractPod(const NodeShape& node, const PodShape& pod, NodeShape* out);

// FGD's score of placing `pod` on `node` in [0, 100] (upstream
// calculateGpuShareFragExtendScore): sigmoid((frag_before - frag_after) / 1000) * 100,
// truncated. For a GPU share, every device that fits is tried and the best one is returned
// in *device (-1 otherwise); whole devices take AllocateExclusiveGpuId's lowest free ones.
// `frag` returns the node's fragmentation for a state (memoized by the caller).
template <typename FragFn>
int64_t FgdScore(const NodeShape& node, const PodShape& pod, FragFn&& frag, int32_t* device);

// Thread-safe memo of NodeFragMilli keyed by (model, cpu left, sorted free milli): many
// nodes share a state, and FGD evaluates every feasible node per pod.
class FragMemo {
 public:
  explicit FragMemo(std::shared_ptr<const TargetWorkload> workload);
  double Get(const NodeShape& node);
  // The memo key of a node state: model, CPU left and the sorted free milli per device
  // (two nodes with equal keys have equal fragmentation for any workload).
  static std::string Key(const NodeShape& node);
  const std::shared_ptr<const TargetWorkload>& workload() const { return workload_; }

 private:
  std::shared_ptr<const TargetWorkload> workload_;
  absl::Mutex mu_;
  std::unordered_map<std::string, double> memo_ ABSL_GUARDED_BY(mu_);
};

// ---- template implementation ----

double Sigmoid(double x);

template <typename FragFn>
int64_t FgdScore(const NodeShape& node, const PodShape& pod, FragFn&& frag, int32_t* device) {
  *device = -1;
  const double before = frag(node);
  if (pod.gpu_count == 1 && pod.milli_gpu > 0 && pod.milli_gpu < 1000) {
    int64_t best = 0;
    bool found = false;
    NodeShape next = node;
    next.milli_cpu_left -= pod.milli_cpu;
    for (size_t i = 0; i < node.free_milli.size(); ++i) {
      if (node.free_milli[i] < pod.milli_gpu) continue;
      next.free_milli[i] -= pod.milli_gpu;
      const auto s = static_cast<int64_t>(Sigmoid((before - frag(next)) / 1000.0) * 100.0);
      next.free_milli[i] += pod.milli_gpu;
      if (!found || s > best) {
        best = s;
        *device = static_cast<int32_t>(i);
        found = true;
      }
    }
    return best;
  }
  NodeShape next;
  SubtractPod(node, pod, &next);
  return static_cast<int64_t>(Sigmoid((before - frag(next)) / 1000.0) * 100.0);
}

}  // namespace phalanx::gpu
