// NodePorts: a pod's host ports must be free on the node
// (upstream pkg/scheduler/framework/plugins/nodeports/node_ports.go and
// framework.HostPortInfo.CheckConflict).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"
#include "framework/types.h"

namespace phalanx::plugins::nodeports {

inline constexpr std::string_view kErrReason =
    "node(s) didn't have free ports for the requested pod ports";

// Host ports a pod asks for: ports with hostPort > 0 of its containers and restartable
// (sidecar) init containers; hostIP defaults to 0.0.0.0, protocol to TCP.
std::vector<framework::HostPort> GetHostPorts(const api::Pod& pod);

// True if `want` conflicts with a port in `used`: same protocol and port, and either side
// binds the wildcard IP 0.0.0.0 or both bind the same IP. Ports <= 0 never conflict.
bool CheckConflict(const framework::HostPort& want, const std::vector<framework::HostPort>& used);

// True if none of `want` conflicts with `used` (upstream fitsPorts).
bool FitsPorts(const std::vector<framework::HostPort>& want,
               const std::vector<framework::HostPort>& used);

class NodePorts final : public framework::PreFilterPlugin,
                        public framework::FilterPlugin,
                        public framework::EnqueueExtensions,
                        public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "NodePorts";

  std::string_view Name() const override { return kName; }
  // KEP-5598 pod signature: equal for pods with the same its host ports.
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  // Skip when the pod requests no host port (PodInfo::host_ports empty).
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  // Unschedulable kErrReason on a conflict with NodeInfo::used_ports(). Thread-safe, no
  // allocation on success.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Pod/Delete (queue when the deleted, assigned or nominated, pod held a conflicting
  // port) and Node/Add (always queue).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // Takes no args.
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::nodeports
