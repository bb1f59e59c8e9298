// BindingPool runs what is submitted and WaitIdle waits for all of it; BindingBatch holds
// a PodGroup commit's bindings until Release and lets later ones through.
#include "scheduler/binding_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <vector>

namespace phalanx::scheduler {
namespace {

TEST(BindingPoolTest, WaitIdleReturnsOnceEverySubmittedFunctionRan) {
  std::atomic<int> ran{0};
  BindingPool pool(3);
  for (int i = 0; i < 200; ++i) pool.Submit([&] { ran.fetch_add(1); });
  pool.WaitIdle();
  EXPECT_EQ(ran.load(), 200);
}

TEST(BindingPoolTest, DestructorRunsWhatIsStillQueued) {
  std::atomic<int> ran{0};
  {
    BindingPool pool(1);
    for (int i = 0; i < 50; ++i) pool.Submit([&] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 50);
}

TEST(BindingBatchTest, HoldsUntilReleaseInOrderThenLetsLaterBindingsThrough) {
  BindingBatch batch;
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) {
    std::function<void()> fn = [&order, i] { order.push_back(i); };
    EXPECT_TRUE(batch.Hold(fn));
    EXPECT_FALSE(fn) << "a held function is moved into the batch";
  }
  EXPECT_TRUE(order.empty()) << "nothing runs while the batch is open";
  auto held = batch.Release();
  ASSERT_EQ(held.size(), 3u);
  for (auto& fn : held) fn();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  std::function<void()> late = [&order] { order.push_back(9); };
  EXPECT_FALSE(batch.Hold(late)) << "after Release the caller submits itself";
  ASSERT_TRUE(late);
  EXPECT_TRUE(batch.Release().empty());
}

}  // namespace
}  // namespace phalanx::scheduler
