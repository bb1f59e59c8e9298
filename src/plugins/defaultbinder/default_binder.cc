#include "plugins/defaultbinder/default_binder.h"

namespace phalanx::plugins::defaultbinder {

framework::Status DefaultBinder::Bind(framework::CycleState& /*state*/,
                                      const framework::PodInfo& pod, const std::string& node) {
  api::Status s = handle_.Client().Bind(pod.Pod(), node);
  if (s.ok()) return framework::Status();
  std::string msg(s.message());
  if (msg.empty()) msg = absl::StatusCodeToString(s.code());
  return framework::Status::Error(std::move(msg));
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> DefaultBinder::New(
    framework::PluginArgs /*args*/, framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<DefaultBinder>(h));
}

}  // namespace phalanx::plugins::defaultbinder
