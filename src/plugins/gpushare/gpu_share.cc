#include "plugins/gpushare/gpu_share.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "framework/device_choice.h"
#include "plugins/helper/args.h"
#include "plugins/helper/validation.h"

namespace phalanx::plugins::gpushare {

namespace {

constexpr std::string_view kArgsKind = "GpuShareArgs";

struct PreFilterState final : framework::StateData {
  gpu::GpuAsk ask;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

// What Reserve chose, for PreBind (which writes it to the pod).
struct ReservedState final : framework::StateData {
  gpu::GpuAsk ask;
  gpu::NodeGpus gpus;
  std::string node;
  std::vector<int32_t> devices;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<ReservedState>(*this);
  }
};

}  // namespace

framework::StatusOr<GpuShareArgs> ParseGpuShareArgs(framework::PluginArgs args) {
  GpuShareArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind, {"deviceSelection"}, &errs, &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  if (has_content)
    helper::ReadString((*args)["deviceSelection"], "deviceSelection", &out.device_selection, &errs);
  if (out.device_selection.empty()) out.device_selection = "Auto";
  const std::vector<std::string_view> kSupported = {"Auto", "BestFit", "WorstFit", "FirstFit",
                                                    "Random"};
  if (errs.empty() &&
      std::find(kSupported.begin(), kSupported.end(), out.device_selection) == kSupported.end()) {
    errs.NotSupported("deviceSelection", out.device_selection, kSupported);
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  return out;
}

GpuShare::GpuShare(GpuShareArgs args, framework::Handle& h)
    : args_(std::move(args)), handle_(h), ctx_(GpuContext::For(h)) {}

framework::StatusOr<std::unique_ptr<framework::Plugin>> GpuShare::New(framework::PluginArgs args,
                                                                      framework::Handle& h) {
  auto a = ParseGpuShareArgs(args);
  if (!a.ok()) return a.status();
  return std::unique_ptr<framework::Plugin>(std::make_unique<GpuShare>(std::move(a).value(), h));
}

framework::Status GpuShare::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                      framework::PreFilterResult*) {
  if ((++prefilter_calls_ & 63) == 0) ctx_->MaybePrune(handle_.SnapshotSharedLister());
  auto s = std::make_unique<PreFilterState>();
  s->ask = gpu::ParseGpuAsk(pod.Pod());
  if (!s->ask.error.empty()) {
    return framework::Status::UnschedulableAndUnresolvable(s->ask.error);
  }
  if (!s->ask.has_gpu()) return framework::Status(framework::Code::kSkip);
  state.Write(kStateKey, std::move(s));
  return framework::Status();
}

framework::Status GpuShare::Filter(const framework::CycleState& state,
                                   const framework::PodInfo& pod, const framework::NodeInfo& node) {
  const auto* s = state.ReadAs<PreFilterState>(kStateKey);
  if (s == nullptr) {
    return framework::Status::Error(
        "error reading \"PreFilterGpuShare\" from cycleState: not found");
  }
  const gpu::GpuAsk& ask = s->ask;
  auto st = ctx_->State(node);
  if (st->gpus.count == 0) return framework::Status::UnschedulableAndUnresolvable(kReasonNoGpus);
  if (!gpu::ModelAllowed(ask.models, st->gpus.model)) {
    return framework::Status::UnschedulableAndUnresolvable(kReasonModel);
  }
  if (ask.count > st->gpus.count) {
    return framework::Status::UnschedulableAndUnresolvable(kReasonTooFew);
  }
  const int32_t milli = gpu::MilliOnNode(ask, st->gpus);
  if (milli == 0) return framework::Status::UnschedulableAndUnresolvable(kReasonMemory);
  if (!gpu::Fits(st->shape.free_milli, ask.count, milli)) {
    return framework::Status::Unschedulable(kReasonInsufficient);
  }
  return framework::Status();
}

std::vector<int32_t> GpuShare::ChooseDevices(const NodeGpuState& st, const framework::PodInfo& pod,
                                             const gpu::GpuAsk& ask, int32_t milli) {
  const auto& free = st.shape.free_milli;
  const std::string& sel = args_.device_selection;
  if (sel == "Auto") {
    if (DevicePolicy* p = ctx_->PreferredDevicePolicy()) {
      auto d = p->ChooseDevices(st, pod, ask, milli);
      if (!d.empty()) return d;
    }
    return gpu::ChooseBestFit(free, ask.count, milli);
  }
  if (sel == "WorstFit") return gpu::ChooseWorstFit(free, ask.count, milli);
  if (sel == "FirstFit") return gpu::ChooseFirstFit(free, ask.count, milli);
  if (sel == "Random" && ask.is_share()) {
    // upstream allocateGpuIdBasedOnRandomFit: reservoir sampling over devices that fit.
    int32_t chosen = -1, seen = 0;
    for (int32_t i = 0; i < static_cast<int32_t>(free.size()); ++i) {
      if (free[i] < milli) continue;
      ++seen;
      if (handle_.Random(static_cast<uint64_t>(seen)) == 0) chosen = i;
    }
    if (chosen >= 0) return {chosen};
    return {};
  }
  return gpu::ChooseBestFit(free, ask.count, milli);
}

namespace {

// The GPU indices of the devices of NVIDIA's DRA driver that DynamicResources allocated to
// the pod on `node` when it reserved before GpuShare ("gpu-<i>" names), or nullptr.
std::optional<std::vector<int32_t>> AllocatedDraGpus(const framework::CycleState& state,
                                                     const framework::PodInfo& pod,
                                                     const std::string& node) {
  if (pod.Pod().spec.resource_claims.empty()) return std::nullopt;
  const auto* c = state.ReadAs<framework::DeviceChoice>(framework::kAllocatedDevicesKey);
  if (!c || c->node != node) return std::nullopt;
  auto it = c->devices.find(gpu::kDraGpuDriver);
  if (it == c->devices.end()) return std::nullopt;
  std::vector<int32_t> out;
  for (const auto& name : it->second) {
    const int32_t i = gpu::DraGpuIndex(name);
    if (i < 0) return std::nullopt;  // not a whole GPU (a MIG partition, ...)
    out.push_back(i);
  }
  return out;
}

}  // namespace

framework::Status GpuShare::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                                    const std::string& node_name) {
  gpu::GpuAsk parsed;
  const gpu::GpuAsk* ask;
  if (const auto* s = state.ReadAs<PreFilterState>(kStateKey)) {
    ask = &s->ask;
  } else {
    parsed = gpu::ParseGpuAsk(pod.Pod());
    ask = &parsed;
  }
  if (!ask->has_gpu() || !ask->error.empty()) return framework::Status();
  const framework::NodeInfo* ni = handle_.SnapshotSharedLister().Get(node_name);
  if (ni == nullptr || ni->node() == nullptr) {
    return framework::Status::Error("GpuShare: node " + node_name + " not in the snapshot");
  }
  const std::string id = PodIdentity(pod.Pod());
  NodeGpuState st = ctx_->ComputeState(*ni, id);
  int32_t milli = gpu::MilliOnNode(*ask, st.gpus);
  if (milli == 0) milli = gpu::kMilliPerGpu;
  std::vector<int32_t> devices;
  auto ann = pod.Pod().metadata.annotations.find(gpu::kGpuIndexAnnotation);
  if (gpu::HasPredefinedGpuIndex(pod.Pod())) {
    // Devices fixed by the manifest (upstream: a predefined gpu-index is kept).
    if (!gpu::ParseGpuIndex(ann->second, &devices)) {
      return framework::Status::UnschedulableAndUnresolvable(
          std::string(gpu::kGpuIndexAnnotation) + ": Invalid value: \"" + ann->second + "\"");
    }
  } else if (auto dra = AllocatedDraGpus(state, pod, node_name)) {
    devices = std::move(*dra);  // DynamicResources reserved first: the devices its allocation names
  } else if (st.others_unassigned && !st.self_in_order.empty()) {
    devices = st.self_in_order;  // gang members placed together: the devices Filter assumed
  } else {
    devices = ChooseDevices(st, pod, *ask, milli);
  }
  // Validate: `count` distinct devices, each with `milli` free.
  bool ok = static_cast<int32_t>(devices.size()) == ask->count;
  std::vector<bool> used(st.shape.free_milli.size(), false);
  for (int32_t d : devices) {
    if (d < 0 || d >= static_cast<int32_t>(used.size()) || used[d] ||
        st.shape.free_milli[d] < milli) {
      ok = false;
      break;
    }
    used[d] = true;
  }
  if (!ok) {
    return framework::Status::Unschedulable(std::string(kReasonInsufficient) + " on node " +
                                            node_name + " at Reserve")
        .WithPlugin(kName);
  }
  auto reserved = std::make_unique<ReservedState>();
  reserved->ask = *ask;
  reserved->gpus = st.gpus;
  reserved->node = node_name;
  reserved->devices = devices;
  state.Write(kReservedKey, std::move(reserved));
  if (!pod.Pod().spec.resource_claims.empty()) {
    // The pod's GPUs may be DRA devices: DynamicResources, reserving after this plugin,
    // allocates the same ones (framework/device_choice.h).
    auto pref = std::make_unique<framework::DeviceChoice>();
    pref->node = node_name;
    auto& names = pref->devices[gpu::kDraGpuDriver];
    for (int32_t dev : devices) names.push_back(gpu::DraGpuDeviceName(dev));
    state.Write(framework::kPreferredDevicesKey, std::move(pref));
  }
  ctx_->Assign(id, node_name, std::move(devices));
  return framework::Status();
}

framework::Status GpuShare::PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                                    const std::string& node_name) {
  const auto* r = state.ReadAs<ReservedState>(kReservedKey);
  if (r == nullptr) {
    // No GPU ask (Reserve recorded nothing). A GPU pod always passes Reserve first.
    const gpu::GpuAsk ask = gpu::ParseGpuAsk(pod.Pod());
    if (!ask.has_gpu() || !ask.error.empty()) return framework::Status();
    return framework::Status::Error("GpuShare: no devices reserved for pod " + pod.Pod().Key() +
                                    " on node " + node_name);
  }
  if (r->node != node_name) {
    return framework::Status::Error("GpuShare: pod " + pod.Pod().Key() + " reserved devices on " +
                                    r->node + ", binding to " + node_name);
  }
  auto want =
      gpu::AssignmentAnnotations(r->ask, r->gpus, node_name, r->devices, handle_.GetClock().Now());
  if (gpu::HasAssignmentAnnotations(pod.Pod(), want)) return framework::Status();
  api::Status s = handle_.Client().PatchPodAnnotations(pod.Pod(), want);
  if (!s.ok()) {
    return framework::Status::Error("GpuShare: writing GPU devices " +
                                    gpu::FormatGpuIndex(r->devices) + " of node " + node_name +
                                    " to pod " + pod.Pod().Key() + ": " + std::string(s.message()));
  }
  return framework::Status();
}

void GpuShare::Unreserve(framework::CycleState&, const framework::PodInfo& pod,
                         const std::string&) {
  ctx_->Release(PodIdentity(pod.Pod()));
}

std::vector<framework::ClusterEventWithHint> GpuShare::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events(2);
  events[0].event = {framework::EventResource::kAssignedPod, framework::kDelete,
                     "AssignedPodDelete"};
  events[0].hint = [](const api::Pod&, const framework::EventObjects& objs) {
    if (objs.old_pod && !gpu::ParseGpuAsk(*objs.old_pod).has_gpu()) {
      return framework::QueueingHint::kQueueSkip;
    }
    return framework::QueueingHint::kQueue;
  };
  events[1].event = {
      framework::EventResource::kNode,
      framework::kAdd | framework::kUpdateNodeAllocatable | framework::kUpdateNodeLabel,
      "NodeAdd|NodeAllocatableChange|NodeLabelChange"};
  return events;
}

}  // namespace phalanx::plugins::gpushare
