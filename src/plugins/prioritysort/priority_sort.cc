#include "plugins/prioritysort/priority_sort.h"

namespace phalanx::plugins::prioritysort {

bool PrioritySort::Less(const framework::QueuedPodInfo& a,
                        const framework::QueuedPodInfo& b) const {
  const int32_t p1 = a.pod_info->priority;
  const int32_t p2 = b.pod_info->priority;
  return p1 > p2 || (p1 == p2 && a.timestamp < b.timestamp);
}

framework::QueueSortKey PrioritySort::SortKey(const framework::QueuedPodInfo& p) const {
  return {-static_cast<int64_t>(p.pod_info->priority), p.timestamp};
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> PrioritySort::New(
    framework::PluginArgs /*args*/, framework::Handle& /*h*/) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<PrioritySort>());
}

}  // namespace phalanx::plugins::prioritysort
