// NodeNumber: the teaching example of an out-of-tree Score plugin, after the upstream
// sample (kubernetes-sigs/kube-scheduler-simulator simulator/docs/sample/nodenumber and
// sanposhiho/mini-kube-scheduler). It favors the node whose name ends in the same digit
// as the pod's name: pod-2 -> node-2. With `reverse: true` it favors the others instead.
//
// It shows the pieces every plugin has:
//   - PreScore: per-pod work done once per scheduling cycle, stored in CycleState;
//   - Score: called for each node (concurrently), reads the CycleState;
//   - EnqueueExtensions: the cluster events that may help a pod this plugin rejected;
//   - New: the factory, which decodes and validates the plugin's args.
//
// Scores are 10 on a match and 0 otherwise (the plugin's range is [0, 100] and it has no
// NormalizeScore); only the last character of each name is compared ("single digit only"
// as upstream), and a name that does not end in a digit scores 0 everywhere.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace nodenumber {

namespace fw = phalanx::framework;

// The digit `name` ends in, or nullopt if it is empty or ends in something else.
std::optional<int> SuffixNumber(std::string_view name);

class NodeNumber final : public fw::PreScorePlugin,
                         public fw::ScorePlugin,
                         public fw::EnqueueExtensions {
 public:
  // The name used in the registry (app::WithPlugin) and in KubeSchedulerConfiguration.
  static constexpr std::string_view kName = "NodeNumber";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreNodeNumber";
  // Kind of the args document in pluginConfig[].args (optional).
  static constexpr std::string_view kArgsKind = "NodeNumberArgs";
  static constexpr int64_t kMatchScore = 10;
  static constexpr int64_t kNonMatchScore = 0;

  // `reverse`: favor nodes whose number differs from the pod's.
  explicit NodeNumber(bool reverse = false) : reverse_(reverse) {}

  std::string_view Name() const override { return kName; }

  // Stores the pod's suffix digit in `state`; a pod name without one stores nothing (the
  // pod then gets 0 on every node). Always Success.
  fw::Status PreScore(fw::CycleState& state, const fw::PodInfo& pod,
                      const std::vector<const fw::NodeInfo*>& nodes) override;

  // kMatchScore when the node's suffix digit equals the pod's (swapped with kNonMatchScore
  // when reverse), 0 when either has no digit or PreScore stored nothing.
  fw::Status Score(const fw::CycleState& state, const fw::PodInfo& pod, const fw::NodeInfo& node,
                   int64_t* score) override;

  // Node/Add, as upstream's sample. A Score plugin never rejects a pod, so this only
  // matters once the plugin grows a Filter; it is here to show the interface.
  std::vector<fw::ClusterEventWithHint> EventsToRegister() const override;

  bool reverse() const { return reverse_; }

  // The factory given to app::WithPlugin. `args` (optional):
  //   {kind: NodeNumberArgs, apiVersion: ..., reverse: <bool>}
  // Errors name the field: "NodeNumberArgs: reverse: Invalid value: \"maybe\": must be a
  // boolean".
  static fw::StatusOr<std::unique_ptr<fw::Plugin>> New(fw::PluginArgs args, fw::Handle& handle);

 private:
  bool reverse_;
};

}  // namespace nodenumber
