// Score normalization shared by in-tree plugins
// (upstream pkg/scheduler/framework/plugins/helper/normalize_score.go).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace phalanx::plugins::helper {

// Scales `scores` in place to [0, max_priority] relative to the highest score
// (score = max_priority * score / max, integer division). With `reverse`, the result is
// max_priority - score. When every score is 0: all become max_priority if `reverse`,
// else they stay 0. Mirrors upstream helper.DefaultNormalizeScore exactly.
void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::vector<int64_t>& scores);

// The largest of v[0..n) and `floor` (floor when n == 0), scanned with four independent
// running maxima so that the scan over every feasible node is not one long dependency
// chain. Used by DefaultNormalizeScore (floor 0) and the scheduler's selectHost.
int64_t MaxWithFloor(const int64_t* v, size_t n, int64_t floor);

}  // namespace phalanx::plugins::helper
