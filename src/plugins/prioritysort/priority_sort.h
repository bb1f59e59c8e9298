// PrioritySort: the default QueueSort plugin
// (upstream pkg/scheduler/framework/plugins/queuesort/priority_sort.go).
#pragma once

#include <memory>
#include <string_view>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace phalanx::plugins::prioritysort {

// Orders the activeQ: higher spec.priority first (PodInfo::priority, 0 when unset), then
// the earlier queue timestamp (QueuedPodInfo::timestamp, nanoseconds).
class PrioritySort final : public framework::QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "PrioritySort";

  std::string_view Name() const override { return kName; }
  bool Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override;
  // (-priority, timestamp): the same order as Less.
  bool HasSortKey() const override { return true; }
  framework::QueueSortKey SortKey(const framework::QueuedPodInfo& p) const override;

  // Takes no args (ignored, as upstream).
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
};

}  // namespace phalanx::plugins::prioritysort
