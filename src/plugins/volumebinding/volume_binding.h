// VolumeBinding, as far as this build goes: Phalanx does not model PersistentVolumes and
// StorageClasses yet, so a pod that uses a PersistentVolumeClaim is not silently placed
// where its volume may not be reachable. PreFilter rejects it as
// UnschedulableAndUnresolvable with a reason naming the claim; a profile that disables
// VolumeBinding (plugins.multiPoint.disabled: [{name: VolumeBinding}]) schedules such
// pods by their other constraints. Pods without claims skip the plugin (PreFilter Skip),
// as upstream's VolumeBinding does.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::volumebinding {

class VolumeBinding final : public framework::PreFilterPlugin,
                            public framework::FilterPlugin,
                            public framework::ReservePlugin,
                            public framework::PreBindPlugin,
                            public framework::EnqueueExtensions,
    public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "VolumeBinding";
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                      framework::Handle& h);
  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same pods without PersistentVolumeClaims (upstream marks pods with volumes other than ConfigMap/Secret unsignable; only claims matter here).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  // Never reached for pods without claims (PreFilter skips them).
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Upstream binds volumes here; with no claims there is nothing to do (the points exist
  // so that configurations naming VolumeBinding at reserve / preBind, as v1beta2's
  // defaults do, load unchanged).
  framework::Status Reserve(framework::CycleState&, const framework::PodInfo&,
                            const std::string&) override {
    return framework::Status::Success();
  }
  void Unreserve(framework::CycleState&, const framework::PodInfo&, const std::string&) override {}
  framework::Status PreBind(framework::CycleState&, const framework::PodInfo&,
                            const std::string&) override {
    return framework::Status::Success();
  }
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
};

}  // namespace phalanx::plugins::volumebinding
