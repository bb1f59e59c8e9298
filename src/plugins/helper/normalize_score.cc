#include "plugins/helper/normalize_score.h"

#include <algorithm>

namespace phalanx::plugins::helper {

int64_t MaxWithFloor(const int64_t* v, size_t n, int64_t floor) {
  int64_t m0 = floor, m1 = floor, m2 = floor, m3 = floor;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    m0 = std::max(m0, v[i]);
    m1 = std::max(m1, v[i + 1]);
    m2 = std::max(m2, v[i + 2]);
    m3 = std::max(m3, v[i + 3]);
  }
  for (; i < n; ++i) m0 = std::max(m0, v[i]);
  return std::max(std::max(m0, m1), std::max(m2, m3));
}

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
