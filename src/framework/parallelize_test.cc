#include "framework/parallelize.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace phalanx::framework {
namespace {

// Every index in [0, n) is visited exactly once, in chunks of at most `chunk`, whatever
// the adaptive rule decides (inline or fanned out).
void ExpectCoversOnce(Parallelizer& p, size_t n, size_t chunk) {
  std::vector<std::atomic<int>> hits(n);
  std::atomic<bool> oversized{false};
  p.Until(n, chunk, [&](size_t b, size_t e) {
    if (e <= b || e - b > chunk || e > n) oversized = true;
    for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
  });
  EXPECT_FALSE(oversized.load()) << "n=" << n << " chunk=" << chunk;
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " n=" << n;
}

TEST(ParallelizerTest, CoversEveryIndexOnceInline) {
  Parallelizer p(2);
  p.set_inline_work_ns(int64_t{1} << 62);  // never fan out
  for (size_t n : {0u, 1u, 15u, 16u, 17u, 500u, 5000u}) ExpectCoversOnce(p, n, 16);
}

TEST(ParallelizerTest, CoversEveryIndexOnceFannedOut) {
  Parallelizer p(2);
  p.set_inline_work_ns(0);  // fan out after the probe
  for (size_t n : {1u, 15u, 16u, 17u, 64u, 65u, 500u, 5000u}) ExpectCoversOnce(p, n, 16);
  for (size_t n : {63u, 64u, 500u, 777u}) ExpectCoversOnce(p, n, 64);
}

TEST(ParallelizerTest, SerialParallelismRunsOnCallingThreadInOrder) {
  Parallelizer p(1);
  std::vector<size_t> begins;
  p.Until(100, 16, [&](size_t b, size_t) { begins.push_back(b); });
  EXPECT_EQ(begins, (std::vector<size_t>{0, 16, 32, 48, 64, 80, 96}));
}

// ParallelChunks hands chunk c exactly [c * grain, min(n, (c + 1) * grain)), once, whether
// it runs inline (no Parallelizer, parallelism 1) or fanned out: callers index per-chunk
// results by c.
TEST(ParallelChunksTest, ChunkIndicesAndRangesDoNotDependOnTheParallelizer) {
  Parallelizer serial(1);
  Parallelizer fanned(2);
  fanned.set_inline_work_ns(0);
  for (Parallelizer* p : {static_cast<Parallelizer*>(nullptr), &serial, &fanned}) {
    for (size_t n : {0u, 1u, 63u, 64u, 65u, 500u, 5000u}) {
      const size_t grain = 64;
      const size_t chunks = (n + grain - 1) / grain;
      std::vector<std::atomic<int>> hits(chunks);
      std::atomic<bool> wrong{false};
      ParallelChunks(p, n, grain, [&](size_t c, size_t b, size_t e) {
        if (c >= chunks || b != c * grain || e != std::min(n, (c + 1) * grain)) wrong = true;
        if (c < chunks) hits[c].fetch_add(1);
      });
      EXPECT_FALSE(wrong.load()) << "n=" << n;
      for (size_t c = 0; c < chunks; ++c) ASSERT_EQ(hits[c].load(), 1) << "chunk " << c;
    }
  }
}

}  // namespace
}  // namespace phalanx::framework
