// Test helper for plugins that split their PreFilter / PreScore work over the nodes in
// chunks (framework::ParallelChunks): the results must not depend on the Parallelizer the
// Handle gives them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/parallelize.h"
#include "framework/types.h"

namespace phalanx::plugins::fake {

// PreFilter + Filter of `filter_pod` on every listed node (the status messages), then
// PreScore + Score of `score_pod` on every listed node (the raw scores), as strings.
template <typename Plugin>
std::vector<std::string> FilterAndScoreAll(Plugin& pl, const framework::NodeInfoLister& lister,
                                           const framework::PodInfo& filter_pod,
                                           const framework::PodInfo& score_pod) {
  std::vector<std::string> out;
  const auto& list = lister.List();
  framework::CycleState state;
  framework::Status pre = pl.PreFilter(state, filter_pod, nullptr);
  EXPECT_TRUE(pre.IsSuccess()) << pre.Message();
  for (const auto* ni : list) out.push_back(pl.Filter(state, filter_pod, *ni).Message());
  framework::CycleState score_state;
  EXPECT_TRUE(pl.PreScore(score_state, score_pod, list).IsSuccess());
  for (const auto* ni : list) {
    int64_t score = 0;
    EXPECT_TRUE(pl.Score(score_state, score_pod, *ni, &score).IsSuccess());
    out.push_back(std::to_string(score));
  }
  return out;
}

// Expects run(p) to give the same results for p = nullptr (inline), a pool of 1, and a
// pool of 2 that fans out after the first chunk.
template <typename Run>
void ExpectSameResultsWithAnyParallelizer(const Run& run) {
  framework::Parallelizer serial(1);
  framework::Parallelizer fanned(2);
  fanned.set_inline_work_ns(0);
  const auto inline_results = run(nullptr);
  EXPECT_EQ(run(&serial), inline_results);
  EXPECT_EQ(run(&fanned), inline_results);
}

}  // namespace phalanx::plugins::fake
