// Ported from upstream queuesort/priority_sort_test.go (TestLess).
#include "plugins/prioritysort/priority_sort.h"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::prioritysort {
namespace {

using phalanx::testing::PodBuilder;

framework::QueuedPodInfo Queued(std::optional<int32_t> priority, api::Timestamp ts) {
  PodBuilder b("p");
  if (priority) b.Priority(*priority);
  framework::QueuedPodInfo q;
  q.pod_info = b.Info();
  q.timestamp = ts;
  return q;
}

TEST(PrioritySortTest, Less) {
  constexpr int32_t kLow = 10, kHigh = 100;
  constexpr api::Timestamp t1 = 1'000 * api::kNanosPerSecond;
  constexpr api::Timestamp t2 = t1 + api::kNanosPerSecond;
  struct Case {
    const char* name;
    framework::QueuedPodInfo p1, p2;
    bool want;
  };
  const Case cases[] = {
      {"p1.priority less than p2.priority", Queued(kLow, t1), Queued(kHigh, t2), false},
      {"p1.priority greater than p2.priority", Queued(kHigh, t1), Queued(kLow, t2), true},
      {"equal priority, p1 added to schedulingQ earlier than p2", Queued(kHigh, t1),
       Queued(kHigh, t2), true},
      {"equal priority, p2 added to schedulingQ earlier than p1", Queued(kHigh, t2),
       Queued(kHigh, t1), false},
      {"unset priority counts as 0", Queued(std::nullopt, t1), Queued(-1, t2), true},
      {"same priority and timestamp is not less", Queued(kLow, t1), Queued(kLow, t1), false},
  };
  fake::FakeHandle h;
  auto pl = PrioritySort::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* qs = dynamic_cast<framework::QueueSortPlugin*>(pl.value().get());
  ASSERT_NE(qs, nullptr);
  EXPECT_EQ(qs->Name(), "PrioritySort");
  for (const auto& c : cases) {
    EXPECT_EQ(qs->Less(c.p1, c.p2), c.want) << c.name;
    // The key the queue compares instead must give the same answer in both directions.
    ASSERT_TRUE(qs->HasSortKey());
    EXPECT_EQ(qs->SortKey(c.p1) < qs->SortKey(c.p2), c.want) << c.name;
    EXPECT_EQ(qs->SortKey(c.p2) < qs->SortKey(c.p1), qs->Less(c.p2, c.p1)) << c.name;
  }
}

// SortKey agrees with Less on every pair over the extremes of priority and timestamp.
TEST(PrioritySortTest, SortKeyAgreesWithLessOnExtremes) {
  fake::FakeHandle h;
  auto pl = PrioritySort::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* qs = dynamic_cast<framework::QueueSortPlugin*>(pl.value().get());
  ASSERT_NE(qs, nullptr);
  std::vector<framework::QueuedPodInfo> pods;
  for (int32_t pr : {INT32_MIN, -1, 0, 1, INT32_MAX}) {
    for (api::Timestamp t : {api::Timestamp{0}, api::Timestamp{1}, INT64_MAX}) {
      pods.push_back(Queued(pr, t));
    }
  }
  for (const auto& a : pods) {
    for (const auto& b : pods) {
      EXPECT_EQ(qs->SortKey(a) < qs->SortKey(b), qs->Less(a, b))
          << a.pod_info->priority << "@" << a.timestamp << " vs " << b.pod_info->priority << "@"
          << b.timestamp;
    }
  }
}

}  // namespace
}  // namespace phalanx::plugins::prioritysort
