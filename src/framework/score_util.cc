#include "framework/score_util.h"

#include <algorithm>

namespace phalanx::framework {

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

}  // namespace phalanx::framework
