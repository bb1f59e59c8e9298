// DefaultBinder: binds the pod through the cluster client
// (upstream pkg/scheduler/framework/plugins/defaultbinder/default_binder.go).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::defaultbinder {

class DefaultBinder final : public framework::BindPlugin {
 public:
  static constexpr std::string_view kName = "DefaultBinder";

  explicit DefaultBinder(framework::Handle& h) : handle_(h) {}

  std::string_view Name() const override { return kName; }
  // Handle::Client().Bind(pod, node); a failure becomes an Error status carrying the
  // client's message (upstream AsStatus(err)).
  framework::Status Bind(framework::CycleState& state, const framework::PodInfo& pod,
                         const std::string& node) override;

  // Takes no args.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);

 private:
  framework::Handle& handle_;
};

}  // namespace phalanx::plugins::defaultbinder
