// Small score helpers shared by the scheduler's selectHost and the plugins' normalization
// (upstream pkg/scheduler/framework/plugins/helper/normalize_score.go).
#pragma once

#include <cstddef>
#include <cstdint>

namespace phalanx::framework {

// The largest of v[0..n) and `floor` (floor when n == 0), scanned with four independent
// running maxima so that the scan over every feasible node is not one long dependency
// chain. Used by the scheduler's selectHost and plugins::helper::DefaultNormalizeScore.
int64_t MaxWithFloor(const int64_t* v, size_t n, int64_t floor);

}  // namespace phalanx::framework
