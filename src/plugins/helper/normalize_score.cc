#include "plugins/helper/normalize_score.h"

#include <algorithm>

namespace phalanx::plugins::helper {

void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::vector<int64_t>& scores) {
  // The maximum, at least 0 (upstream starts its running maximum at 0).
  const int64_t max_count = MaxWithFloor(scores.data(), scores.size(), 0);
  if (max_count == 0) {
    if (reverse) {
      for (int64_t& s : scores) s = max_priority;
    }
    return;
  }
  for (int64_t& s : scores) {
    int64_t v = max_priority * s / max_count;
    if (reverse) v = max_priority - v;
    s = v;
  }
}

}  // namespace phalanx::plugins::helper
