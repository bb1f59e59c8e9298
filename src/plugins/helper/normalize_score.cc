#include "plugins/helper/normalize_score.h"

namespace phalanx::plugins::helper {

void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::vector<int64_t>& scores) {
  int64_t max_count = 0;
  for (int64_t s : scores) {
    if (s > max_count) max_count = s;
  }
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
