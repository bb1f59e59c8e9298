// Scheduler-side GPU device state shared by the plugins of one profile: GpuShare (Filter,
// Reserve) and the GPU score policies (FGD, BestFit, ...). One GpuContext per framework
// Handle (profile); every plugin of that profile gets the same one from
// GpuContext::For(handle), and the simulator finds it with GpuContext::Find(handle).
//
// What a device holds is rebuilt from the NodeInfo on every change, so the state is always
// that of the snapshot (pods added, bound, deleted): a pod's devices come from the
// assignment GpuShare recorded at Reserve in this process (keyed by pod UID), else from
// the pod's annotations (gpu::RecordedDevices: alibabacloud.com/gpu-index, which
// GpuShare's PreBind writes, or ALIYUN_COM_GPU_MEM_IDX) — this is how the accounting
// survives a restart: the new process counts every bound pod on exactly the devices its
// annotations name — else, for pods nobody recorded (gang members placed on the PodGroup
// cycle's view; pods bound by a scheduler that writes no index), from best fit in pod
// order: they still take their share of the node, on the devices best fit would give
// them, and a pod whose share fits no device counts as overcommitted. A pod without a GPU
// ask whose allocated ResourceClaims hold GPUs of NVIDIA's DRA driver on the node (devices
// "gpu-<i>", placed by another scheduler or written by hand) takes those devices, so the
// policies score DRA GPUs that GpuShare never chose. Such a claim's allocation is read
// when the node's state is computed: one that changes while the node's pods do not is
// seen at the node's next change.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "dra/dra_manager.h"
#include "framework/handle.h"
#include "framework/types.h"
#include "gpu/device.h"
#include "gpu/frag.h"

namespace phalanx::plugins::gpushare {

// The key GpuShare records a pod's devices under: its UID, or namespace/name without one.
inline std::string PodIdentity(const api::Pod& p) {
  return p.metadata.uid.empty() ? p.Key() : p.metadata.uid;
}

// One node's GPUs as the snapshot holds them.
struct NodeGpuState {
  gpu::NodeGpus gpus;
  // model, CPU left (allocatable - requested, milli) and free milli per device.
  gpu::NodeShape shape;
  // GpuClustering's pod tags on this node ("share-gpu", "<n>-gpu") -> number of pods.
  std::map<std::string, int32_t> affinity;
  // Pods whose devices did not fit (over-committed node, e.g. bound by another scheduler).
  int32_t overcommitted_pods = 0;
  // Reserve only (ComputeState with a pod): other pods on the node without devices
  // (gang members placed in this cycle) and the devices best fit in pod order gives the
  // pod — the ones Filter assumed for the members placed after it.
  bool others_unassigned = false;
  std::vector<int32_t> self_in_order;
};

// A policy's choice of devices for a pod on a node (Ray-style composition: a score
// policy may also decide which devices its node choice uses).
class DevicePolicy {
 public:
  virtual ~DevicePolicy() = default;
  // `milli` per device on this node; returns ask.count device indices, or empty to leave
  // the choice to GpuShare's default (best fit).
  virtual std::vector<int32_t> ChooseDevices(const NodeGpuState& node,
                                             const framework::PodInfo& pod, const gpu::GpuAsk& ask,
                                             int32_t milli) = 0;
};

// The PodShape of a pod for the GPU policies: non-zero CPU request, GPU ask (memory asks
// resolved with `gpus` when given, else counted as a whole device per 1000 milli).
gpu::PodShape PodShapeOf(const framework::PodInfo& pod, const gpu::GpuAsk& ask,
                         const gpu::NodeGpus* gpus);

// GpuClustering's tag of an ask ("" for pods without GPU).
std::string AffinityTag(const gpu::GpuAsk& ask);

class GpuContext {
 public:
  // The context of `handle`'s profile, created on first use.
  static std::shared_ptr<GpuContext> For(framework::Handle& handle);
  // nullptr when no GPU plugin of `handle`'s profile exists.
  static std::shared_ptr<GpuContext> Find(const framework::Handle& handle);

  // ---- assignments ----
  void Assign(const std::string& uid, const std::string& node, std::vector<int32_t> devices);
  void Release(const std::string& uid);
  std::optional<std::vector<int32_t>> Assignment(const std::string& uid) const;
  size_t NumAssignments() const;
  // Drops assignments of pods no longer on any node of `lister` when they outnumber the
  // pods there (pods deleted after binding).
  void MaybePrune(const framework::NodeInfoLister& lister);

  // ---- node state ----
  // Cached by (NodeInfo generation, pod count, last pod, assignment epoch of the node).
  std::shared_ptr<const NodeGpuState> State(const framework::NodeInfo& ni);
  // Uncached; `self_uid` (may be empty) is left out of the devices' usage.
  NodeGpuState ComputeState(const framework::NodeInfo& ni, const std::string& self_uid) const;

  // ---- device policy ----
  // The first registered policy decides devices when GpuShare's deviceSelection is Auto.
  void RegisterDevicePolicy(const std::string& name, DevicePolicy* policy);
  void UnregisterDevicePolicy(DevicePolicy* policy);
  DevicePolicy* PreferredDevicePolicy(std::string* name = nullptr) const;

  // ---- target workload (FGD) ----
  // Set by the simulator (the trace's pod shapes) or derived from plugin args; FGD falls
  // back to the shapes of the pods it has scored so far when none is set.
  void SetTargetWorkload(std::shared_ptr<const gpu::TargetWorkload> w);
  std::shared_ptr<const gpu::TargetWorkload> target_workload() const;

 private:
  struct Assigned {
    std::string node;
    std::vector<int32_t> devices;
  };
  struct Cached {
    int64_t generation = -1;
    size_t pods = 0;
    framework::PodInfoPtr last;
    uint64_t epoch = 0;
    std::shared_ptr<const NodeGpuState> state;
  };
  uint64_t NodeEpoch(const std::string& node) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The GPUs of NVIDIA's DRA driver on `node` that the allocated ResourceClaims of `pod` (a
  // pod without a GPU ask) hold: device "gpu-<i>" of pool `node` takes its consumed
  // `compute` (a share, replay/dra_gpus.h) or the whole GPU. Claims in *seen are skipped
  // (a claim shared by several pods counts once); each one counted is added.
  void TakeDraGpus(const api::Pod& pod, const std::string& node, std::set<std::string>* seen,
                   std::vector<int32_t>* free) const;

  // The scheduler's DRA state (nullptr without one); set once when the context is made.
  const dra::DefaultDRAManager* dra_ = nullptr;

  mutable absl::Mutex mu_;
  std::unordered_map<std::string, Assigned> assigned_ ABSL_GUARDED_BY(mu_);    // pod UID -> devices
  std::unordered_map<std::string, uint64_t> node_epoch_ ABSL_GUARDED_BY(mu_);  // node -> changes
  std::unordered_map<std::string, Cached> cache_ ABSL_GUARDED_BY(mu_);         // node -> state
  std::vector<std::pair<std::string, DevicePolicy*>> policies_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const gpu::TargetWorkload> workload_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::plugins::gpushare
