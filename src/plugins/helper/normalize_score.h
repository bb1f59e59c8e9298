// Score normalization shared by in-tree plugins
// (upstream pkg/scheduler/framework/plugins/helper/normalize_score.go).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "framework/score_util.h"

namespace phalanx::plugins::helper {

// Scales `scores` in place to [0, max_priority] relative to the highest score
// (score = max_priority * score / max, integer division). With `reverse`, the result is
// max_priority - score. When every score is 0: all become max_priority if `reverse`,
// else they stay 0. Mirrors upstream helper.DefaultNormalizeScore exactly.
void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::vector<int64_t>& scores);

// framework::MaxWithFloor (framework/score_util.h), for DefaultNormalizeScore (floor 0).
using framework::MaxWithFloor;

}  // namespace phalanx::plugins::helper
