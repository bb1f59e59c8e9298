// Tests of the scheduling queue, ported from upstream
// pkg/scheduler/backend/queue/scheduling_queue_test.go where they fit (this queue follows
// the "legacy" requeueing of moveRequestCycle for pods that fail while an event arrives,
// and queueing hints for pods that wait in unschedulablePods). Time is a VirtualClock.
#include "backend/queue/scheduling_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "framework/clock.h"
#include "testing/builders.h"

namespace phalanx::queue {
namespace {

using framework::ClusterEvent;
using framework::ClusterEventWithHint;
using framework::EventObjects;
using framework::EventResource;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::QueuedPodInfo;
using framework::QueuedPodInfoPtr;
using framework::QueueingHint;
using framework::Status;
using phalanx::testing::PodBuilder;

constexpr int64_t kSec = api::kNanosPerSecond;
constexpr api::Timestamp kStart = 1'000'000 * kSec;
const std::string kProfile = "default-scheduler";

// PrioritySort (upstream queuesort.PrioritySort.Less): priority, then queue timestamp.
bool PriorityLess(const QueuedPodInfo& a, const QueuedPodInfo& b) {
  const int32_t p1 = a.pod_info->priority, p2 = b.pod_info->priority;
  return p1 > p2 || (p1 == p2 && a.timestamp < b.timestamp);
}

const ClusterEvent kNodeAdd{EventResource::kNode, framework::kAdd, "NodeAdd"};
const ClusterEvent kNodeLabel{EventResource::kNode, framework::kUpdateNodeLabel, "NodeUpdate"};
const ClusterEvent kAssignedPodDelete{EventResource::kAssignedPod, framework::kDelete,
                                      "AssignedPodDelete"};
const ClusterEvent kPvcAdd{EventResource::kPersistentVolumeClaim, framework::kAdd, "PvcAdd"};
const ClusterEvent kWildCard{EventResource::kWildCard, framework::kAll, "UnschedulableTimeout"};

framework::QueueingHintFn ReturnQueue() {
  return [](const api::Pod&, const EventObjects&) { return QueueingHint::kQueue; };
}
framework::QueueingHintFn ReturnSkip() {
  return [](const api::Pod&, const EventObjects&) { return QueueingHint::kQueueSkip; };
}

std::pair<std::string, ClusterEventWithHint> Hint(std::string plugin, ClusterEvent e,
                                                  framework::QueueingHintFn fn) {
  return {std::move(plugin), ClusterEventWithHint{std::move(e), std::move(fn)}};
}

// The SchedulingGates PreEnqueue plugin and its hint (only the pod's own gate removal
// un-gates it).
Status GatesPreEnqueue(const PodInfo& p) {
  if (p.pod->spec.scheduling_gates.empty()) return Status::Success();
  Status s = Status::UnschedulableAndUnresolvable("waiting for scheduling gates");
  s.WithPlugin("SchedulingGates");
  return s;
}
std::pair<std::string, ClusterEventWithHint> GatesHint() {
  return Hint("SchedulingGates",
              {EventResource::kPod, framework::kUpdatePodSchedulingGatesEliminated, "GatesGone"},
              [](const api::Pod& pod, const EventObjects& objs) {
                if (objs.new_pod == nullptr) return QueueingHint::kQueue;
                return objs.new_pod->metadata.uid == pod.metadata.uid ? QueueingHint::kQueue
                                                                      : QueueingHint::kQueueSkip;
              });
}

api::PodPtr MakePod(const std::string& name, int32_t priority = 0) {
  return PodBuilder(name, "ns1").UID(name + "-uid").Priority(priority).Ptr();
}

std::string Key(const api::PodPtr& p) { return p->Key(); }

enum class Where { kNone, kActive, kBackoff, kUnschedulable, kGated };

std::string WhereName(Where w) {
  switch (w) {
    case Where::kNone:
      return "none";
    case Where::kActive:
      return "activeQ";
    case Where::kBackoff:
      return "backoffQ";
    case Where::kUnschedulable:
      return "unschedulablePods";
    case Where::kGated:
      return "unschedulablePods (gated)";
  }
  return "?";
}

class QueueTest : public ::testing::Test {
 public:
  QueueTest() : clock_(kStart) { Reset(QueueOptions{}); }

  void Reset(QueueOptions opts) {
    opts_ = opts;
    q_ = std::make_unique<SchedulingQueue>(PriorityLess, clock_, opts);
  }

  // Pops `pod` (which must be at the head of activeQ), as the scheduler does.
  QueuedPodInfoPtr PopExpect(const api::PodPtr& pod) {
    QueuedPodInfoPtr p = q_->TryPop();
    EXPECT_NE(p, nullptr);
    if (p) {
      EXPECT_EQ(p->Pod().metadata.name, pod->metadata.name);
    }
    return p;
  }

  // Add + Pop + fail with `plugins` (empty: an Error) in the current cycle.
  QueuedPodInfoPtr AddPopFail(const api::PodPtr& pod, std::set<std::string> plugins,
                              std::set<std::string> pending = {}) {
    q_->Add(PodInfo::Make(pod));
    QueuedPodInfoPtr p = PopExpect(pod);
    if (!p) return p;
    p->unschedulable_plugins = std::move(plugins);
    p->pending_plugins = std::move(pending);
    q_->AddUnschedulableIfNotPresent(p, q_->SchedulingCycle());
    return p;
  }

  // Which sub-queue holds `key`. PendingPods() lists activeQ, then backoffQ, then
  // unschedulablePods, and Counts() gives the size of each part.
  Where Locate(const std::string& key) {
    QueuedPodInfoPtr p = q_->Get(key);
    if (!p) return Where::kNone;
    PendingCounts c = q_->Counts();
    std::vector<QueuedPodInfoPtr> all = q_->PendingPods();
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i]->Pod().Key() != key) continue;
      if (i < c.active) return Where::kActive;
      if (i < c.active + c.backoff) return Where::kBackoff;
      return p->gating_plugin.empty() ? Where::kUnschedulable : Where::kGated;
    }
    return Where::kNone;
  }

  void ExpectCounts(size_t active, size_t backoff, size_t unschedulable, size_t gated = 0) {
    PendingCounts c = q_->Counts();
    EXPECT_EQ(c.active, active) << "activeQ";
    EXPECT_EQ(c.backoff, backoff) << "backoffQ";
    EXPECT_EQ(c.unschedulable, unschedulable) << "unschedulablePods";
    EXPECT_EQ(c.gated, gated) << "gated";
  }

  std::vector<std::string> PopAllNames() {
    std::vector<std::string> out;
    while (QueuedPodInfoPtr p = q_->TryPop()) out.push_back(p->Pod().metadata.name);
    return out;
  }

  framework::VirtualClock clock_;
  QueueOptions opts_;
  std::unique_ptr<SchedulingQueue> q_;
};

// ---------------------------------------------------------------------------------------
// activeQ ordering (TestPriorityQueue_Add, _AddWithReversePriorityLessFunc, TestPodTimestamp)

TEST_F(QueueTest, ActiveQOrderIsPriorityThenTimestamp) {
  struct Added {
    std::string name;
    int32_t priority;
    int64_t at;  // seconds after start
  };
  struct Case {
    std::string name;
    std::vector<Added> pods;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"higher priority first",
       {{"mpp", 500, 0}, {"up", 0, 1}, {"hpp", 1000, 2}},
       {"hpp", "mpp", "up"}},
      {"equal priority: earlier timestamp first",
       {{"p1", 0, 3}, {"p2", 0, 1}, {"p3", 0, 2}},
       {"p2", "p3", "p1"}},
      {"priority beats timestamp",
       {{"old-low", 0, 0}, {"new-high", 10, 5}, {"mid", 5, 1}},
       {"new-high", "mid", "old-low"}},
      {"negative priorities", {{"neg", -5, 0}, {"zero", 0, 1}}, {"zero", "neg"}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Reset(QueueOptions{});
    std::vector<Added> by_time = tc.pods;
    std::sort(by_time.begin(), by_time.end(),
              [](const Added& a, const Added& b) { return a.at < b.at; });
    const api::Timestamp base = clock_.Now() + 100 * kSec;
    for (const auto& a : by_time) {
      clock_.AdvanceTo(base + a.at * kSec);
      q_->Add(PodInfo::Make(MakePod(a.name, a.priority)));
    }
    clock_.Advance(kSec);
    EXPECT_EQ(PopAllNames(), tc.want);
  }
}

// A queue that compares PrioritySort keys kept in the heap pops exactly as one that calls
// Less on the pods, through random adds (ties in priority and timestamp included),
// priority updates, deletes and pops.
TEST(QueueSortKeyTest, KeyedHeapPopsInTheSameOrderAsLess) {
  framework::VirtualClock clock(kStart);
  SchedulingQueue by_less(PriorityLess, clock, QueueOptions{});
  SchedulingQueue by_key(PriorityLess, clock, QueueOptions{}, [](const QueuedPodInfo& p) {
    return framework::QueueSortKey{-static_cast<int64_t>(p.pod_info->priority), p.timestamp};
  });
  std::mt19937_64 rng(42);
  std::vector<api::PodPtr> live;
  std::vector<std::string> popped_less, popped_key;
  int next = 0;
  for (int step = 0; step < 4000; ++step) {
    const uint64_t op = rng() % 10;
    if (op < 5 || live.empty()) {
      auto pod = MakePod("p" + std::to_string(next++), static_cast<int32_t>(rng() % 3));
      by_less.Add(PodInfo::Make(pod));
      by_key.Add(PodInfo::Make(pod));
      live.push_back(pod);
      if (rng() % 2) clock.Advance(1);  // else the next pod ties on timestamp
    } else if (op < 7) {
      const size_t i = rng() % live.size();
      auto updated = std::make_shared<api::Pod>(*live[i]);
      updated->spec.priority = static_cast<int32_t>(rng() % 3);
      by_less.Update(*live[i], PodInfo::Make(updated));
      by_key.Update(*live[i], PodInfo::Make(updated));
      live[i] = updated;
    } else if (op < 8) {
      const size_t i = rng() % live.size();
      by_less.Delete(*live[i]);
      by_key.Delete(*live[i]);
      live.erase(live.begin() + static_cast<ptrdiff_t>(i));
    } else {
      auto a = by_less.TryPop();
      auto b = by_key.TryPop();
      ASSERT_EQ(a == nullptr, b == nullptr);
      if (!a) continue;
      popped_less.push_back(a->Pod().metadata.name);
      popped_key.push_back(b->Pod().metadata.name);
      std::erase_if(live,
                    [&](const api::PodPtr& p) { return p->metadata.name == popped_less.back(); });
    }
  }
  while (auto a = by_less.TryPop()) {
    popped_less.push_back(a->Pod().metadata.name);
    auto b = by_key.TryPop();
    ASSERT_NE(b, nullptr);
    popped_key.push_back(b->Pod().metadata.name);
  }
  EXPECT_EQ(by_key.TryPop(), nullptr);
  ASSERT_GT(popped_less.size(), 1000u);
  EXPECT_EQ(popped_less, popped_key);
}

TEST_F(QueueTest, AddIsIdempotentAndPopCountsCyclesAndAttempts) {
  auto pod = MakePod("p");
  q_->Add(PodInfo::Make(pod));
  q_->Add(PodInfo::Make(pod));
  ExpectCounts(1, 0, 0);
  EXPECT_EQ(q_->SchedulingCycle(), 0);
  QueuedPodInfoPtr p = q_->TryPop();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->attempts, 1);
  EXPECT_EQ(p->initial_attempt_timestamp, kStart);
  EXPECT_EQ(p->timestamp, kStart);
  EXPECT_EQ(q_->SchedulingCycle(), 1);
  EXPECT_EQ(q_->TryPop(), nullptr);
  EXPECT_EQ(q_->SchedulingCycle(), 1) << "an empty TryPop is not a cycle";

  // Error -> backoffQ; after backoff it is popped again with attempts 2 and the first
  // attempt's timestamp kept.
  q_->AddUnschedulableIfNotPresent(p, q_->SchedulingCycle());
  clock_.Advance(10 * kSec);
  q_->FlushBackoffQCompleted();
  QueuedPodInfoPtr again = q_->TryPop();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->attempts, 2);
  EXPECT_EQ(again->initial_attempt_timestamp, kStart);
  EXPECT_EQ(q_->SchedulingCycle(), 2);
}

TEST_F(QueueTest, PopBlocksUntilAddAndReturnsNullAfterClose) {
  auto pod = MakePod("p");
  QueuedPodInfoPtr got;
  std::thread popper([&] { got = q_->Pop(); });
  q_->Add(PodInfo::Make(pod));
  popper.join();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->Pod().metadata.name, "p");

  QueuedPodInfoPtr after_close = std::make_shared<QueuedPodInfo>();
  std::thread closer_waiter([&] { after_close = q_->Pop(); });
  q_->Close();
  closer_waiter.join();
  EXPECT_EQ(after_close, nullptr);
  EXPECT_EQ(q_->Pop(), nullptr);
}

// ---------------------------------------------------------------------------------------
// Backoff (TestBackOffFlow, calculateBackoffDuration)

TEST_F(QueueTest, BackoffDurationDoublesPerAttemptUpToMax) {
  struct Case {
    int64_t initial, max;
    int32_t attempts;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {1 * kSec, 10 * kSec, 1, 1 * kSec},
      {1 * kSec, 10 * kSec, 2, 2 * kSec},
      {1 * kSec, 10 * kSec, 3, 4 * kSec},
      {1 * kSec, 10 * kSec, 4, 8 * kSec},
      {1 * kSec, 10 * kSec, 5, 10 * kSec},
      {1 * kSec, 10 * kSec, 6, 10 * kSec},
      {2 * kSec, 60 * kSec, 5, 32 * kSec},
      {2 * kSec, 60 * kSec, 6, 60 * kSec},
      // No overflow with many attempts and a huge max.
      {1 * kSec, INT64_MAX / 2, 200, INT64_MAX / 2},
      {5 * kSec, 5 * kSec, 3, 5 * kSec},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE("initial=" + std::to_string(tc.initial) + " max=" + std::to_string(tc.max) +
                 " attempts=" + std::to_string(tc.attempts));
    QueueOptions o;
    o.initial_backoff_ns = tc.initial;
    o.max_backoff_ns = tc.max;
    Reset(o);
    auto qp = std::make_shared<QueuedPodInfo>();
    qp->pod_info = PodInfo::Make(MakePod("p"));
    qp->attempts = tc.attempts;
    q_->AddUnschedulableIfNotPresent(qp, q_->SchedulingCycle());  // Error -> backoffQ
    ASSERT_EQ(Locate(Key(qp->pod_info->pod)), Where::kBackoff);
    EXPECT_EQ(q_->NextBackoffExpiry() - clock_.Now(), tc.want);
  }
}

TEST_F(QueueTest, BackOffFlow) {
  const std::vector<int64_t> want = {1, 2, 4, 8, 10, 10, 10};
  auto pod = MakePod("test-pod");
  q_->Add(PodInfo::Make(pod));
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const api::Timestamp ts = clock_.Now();
    // Simulate a scheduling attempt.
    QueuedPodInfoPtr p = q_->TryPop();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->attempts, static_cast<int32_t>(i + 1));
    q_->AddUnschedulableIfNotPresent(p, static_cast<int64_t>(i));
    // An event happens.
    q_->MoveAllToActiveOrBackoffQueue(kWildCard, {});
    ASSERT_EQ(Locate(Key(pod)), Where::kBackoff);
    const int64_t backoff = q_->NextBackoffExpiry() - ts;
    EXPECT_EQ(backoff, want[i] * kSec);
    // Still in backoffQ after an early flush.
    clock_.Advance(1'000'000);  // 1ms
    q_->FlushBackoffQCompleted();
    EXPECT_EQ(Locate(Key(pod)), Where::kBackoff);
    // Moved out of backoffQ after the timeout.
    clock_.Advance(backoff);
    q_->FlushBackoffQCompleted();
    EXPECT_EQ(Locate(Key(pod)), Where::kActive);
    EXPECT_EQ(q_->NextBackoffExpiry(), LLONG_MAX);
  }
}

// A backoffQ pod is released exactly when its expiry is reached, in expiry order.
TEST_F(QueueTest, FlushBackoffQCompletedReleasesInExpiryOrder) {
  // a: 1 attempt (1s), b: 3 attempts (4s), c: 2 attempts (2s), all failing with Error now.
  for (auto [name, attempts] :
       std::vector<std::pair<std::string, int>>{{"a", 1}, {"b", 3}, {"c", 2}}) {
    auto qp = std::make_shared<QueuedPodInfo>();
    qp->pod_info = PodInfo::Make(MakePod(name));
    qp->attempts = attempts;
    q_->AddUnschedulableIfNotPresent(qp, 0);
  }
  ExpectCounts(0, 3, 0);
  struct Step {
    int64_t at;  // seconds after start
    std::vector<std::string> active;
    api::Timestamp next;
  };
  const std::vector<Step> steps = {
      {0, {}, kStart + 1 * kSec},
      {1, {"a"}, kStart + 2 * kSec},  // expiry == now: released (not backing off)
      {3, {"a", "c"}, kStart + 4 * kSec},
      {4, {"a", "c", "b"}, LLONG_MAX},
  };
  std::vector<std::string> active;
  for (const auto& st : steps) {
    SCOPED_TRACE("t=" + std::to_string(st.at));
    clock_.AdvanceTo(kStart + st.at * kSec);
    q_->FlushBackoffQCompleted();
    for (const auto& n : st.active) EXPECT_EQ(Locate("ns1/" + n), Where::kActive) << n;
    EXPECT_EQ(q_->Counts().active, st.active.size());
    EXPECT_EQ(q_->NextBackoffExpiry(), st.next);
  }
}

// ---------------------------------------------------------------------------------------
// AddUnschedulableIfNotPresent

TEST_F(QueueTest, AddUnschedulableIfNotPresent) {
  struct Case {
    std::string name;
    std::set<std::string> unschedulable_plugins;
    std::set<std::string> pending_plugins;
    const ClusterEvent* event_during_cycle;  // a MoveAll request after the pod was popped
    const ClusterEvent* event_before_pop;    // a MoveAll request before the pod was popped
    Where want;
    int32_t want_unschedulable_count;
  };
  const std::vector<Case> cases = {
      {"rejected by a plugin: unschedulablePods",
       {"fooPlugin"},
       {},
       nullptr,
       nullptr,
       Where::kUnschedulable,
       1},
      {"rejected with Pending: unschedulablePods",
       {},
       {"gang"},
       nullptr,
       nullptr,
       Where::kUnschedulable,
       1},
      {"Error (no rejecting plugin): backoffQ", {}, {}, nullptr, nullptr, Where::kBackoff, 0},
      // The event need not be one the pod's plugins registered: the pod may have missed it.
      {"rejected, but a move request arrived during its cycle: backoffQ",
       {"fooPlugin"},
       {},
       &kNodeAdd,
       nullptr,
       Where::kBackoff,
       1},
      {"rejected, move request before its cycle started: unschedulablePods",
       {"fooPlugin"},
       {},
       nullptr,
       &kNodeAdd,
       Where::kUnschedulable,
       1},
      {"an event no plugin registered is not a move request",
       {"fooPlugin"},
       {},
       &kPvcAdd,
       nullptr,
       Where::kUnschedulable,
       1},
      {"a wildcard event is a move request",
       {"fooPlugin"},
       {},
       &kWildCard,
       nullptr,
       Where::kBackoff,
       1},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Reset(QueueOptions{});
    q_->SetProfileHooks(kProfile, {nullptr, {Hint("other", kNodeAdd, ReturnSkip())}});
    auto pod = MakePod("p");
    q_->Add(PodInfo::Make(pod));
    if (tc.event_before_pop) q_->MoveAllToActiveOrBackoffQueue(*tc.event_before_pop, {});
    QueuedPodInfoPtr p = PopExpect(pod);
    ASSERT_NE(p, nullptr);
    if (tc.event_during_cycle) q_->MoveAllToActiveOrBackoffQueue(*tc.event_during_cycle, {});
    p->unschedulable_plugins = tc.unschedulable_plugins;
    p->pending_plugins = tc.pending_plugins;
    clock_.Advance(5 * kSec);
    q_->AddUnschedulableIfNotPresent(p, q_->SchedulingCycle());
    EXPECT_EQ(Locate(Key(pod)), tc.want) << WhereName(Locate(Key(pod)));
    EXPECT_EQ(p->unschedulable_count, tc.want_unschedulable_count);
    EXPECT_EQ(p->timestamp, clock_.Now()) << "timestamp refreshed on requeue";

    // Already present: a second call changes nothing.
    auto dup = std::make_shared<QueuedPodInfo>(*p);
    dup->unschedulable_plugins.clear();
    dup->pending_plugins.clear();
    q_->AddUnschedulableIfNotPresent(dup, q_->SchedulingCycle());
    EXPECT_EQ(Locate(Key(pod)), tc.want);
    EXPECT_EQ(q_->Get(Key(pod)), p);
    EXPECT_EQ(q_->PendingPods().size(), 1u);
  }
}

// upstream TestHighPriorityBackoff: an unschedulable high-priority pod does not block the
// others once moved (it backs off).
TEST_F(QueueTest, HighPriorityBackoff) {
  auto mid = MakePod("test-midpod", 100);
  auto high = MakePod("test-highpod", 1000);
  q_->Add(PodInfo::Make(mid));
  q_->Add(PodInfo::Make(high));
  QueuedPodInfoPtr p = PopExpect(high);
  ASSERT_NE(p, nullptr);
  p->unschedulable_plugins = {"fooPlugin"};
  q_->AddUnschedulableIfNotPresent(p, q_->SchedulingCycle());
  q_->MoveAllToActiveOrBackoffQueue(kWildCard, {});
  EXPECT_EQ(Locate(Key(high)), Where::kBackoff);
  PopExpect(mid);
}

// ---------------------------------------------------------------------------------------
// MoveAllToActiveOrBackoffQueue with queueing hints
// (TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint and more)

TEST_F(QueueTest, MoveAllWithQueueingHints) {
  struct Case {
    std::string name;
    std::set<std::string> unschedulable_plugins;
    std::set<std::string> pending_plugins;
    std::vector<std::pair<std::string, ClusterEventWithHint>> hints;
    ClusterEvent event;
    int64_t wait;  // time spent in unschedulablePods before the event
    Where want;
  };
  const std::vector<Case> cases = {
      {"Queue moves a backing-off pod to backoffQ",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnQueue())},
       kNodeAdd,
       0,
       Where::kBackoff},
      {"Queue moves a pod whose backoff expired to activeQ",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnQueue())},
       kNodeAdd,
       1 * kSec + 1,
       Where::kActive},
      {"backoff expiry == now is expired",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnQueue())},
       kNodeAdd,
       1 * kSec,
       Where::kActive},
      {"QueueSkip keeps the pod",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnSkip())},
       kNodeAdd,
       100 * kSec,
       Where::kUnschedulable},
      {"an empty hint function means Queue",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, nullptr)},
       kNodeAdd,
       0,
       Where::kBackoff},
      {"event registered only by a plugin that did not reject the pod",
       {"bar"},
       {},
       {Hint("foo", kNodeAdd, ReturnQueue())},
       kNodeAdd,
       100 * kSec,
       Where::kUnschedulable},
      {"event nobody registered",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnQueue())},
       kAssignedPodDelete,
       100 * kSec,
       Where::kUnschedulable},
      {"same resource, other action",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnQueue())},
       kNodeLabel,
       100 * kSec,
       Where::kUnschedulable},
      {"registered Node/Update covers a label update",
       {"foo"},
       {},
       {Hint("foo", {EventResource::kNode, framework::kUpdate, "NodeUpdate"}, ReturnQueue())},
       kNodeLabel,
       100 * kSec,
       Where::kActive},
      {"registered Pod covers an assigned pod event",
       {"foo"},
       {},
       {Hint("foo", {EventResource::kPod, framework::kDelete, "PodDelete"}, ReturnQueue())},
       kAssignedPodDelete,
       100 * kSec,
       Where::kActive},
      {"one of two rejecting plugins says Queue",
       {"bar", "foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnSkip()), Hint("bar", kNodeAdd, ReturnQueue())},
       kNodeAdd,
       100 * kSec,
       Where::kActive},
      {"both rejecting plugins say Skip",
       {"bar", "foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnSkip()), Hint("bar", kNodeAdd, ReturnSkip())},
       kNodeAdd,
       100 * kSec,
       Where::kUnschedulable},
      {"a plugin registering the event twice: any Queue wins",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnSkip()),
        Hint("foo", {EventResource::kNode, framework::kAll, "Node"}, ReturnQueue())},
       kNodeAdd,
       100 * kSec,
       Where::kActive},
      {"Pending plugin hints are consulted too",
       {},
       {"gang"},
       {Hint("gang", kPvcAdd, ReturnQueue())},
       kPvcAdd,
       100 * kSec,
       Where::kActive},
      {"wildcard event moves regardless of hints",
       {"foo"},
       {},
       {Hint("foo", kNodeAdd, ReturnSkip())},
       kWildCard,
       0,
       Where::kBackoff},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Reset(QueueOptions{});
    q_->SetProfileHooks(kProfile, {nullptr, tc.hints});
    auto pod = MakePod("pod1");
    AddPopFail(pod, tc.unschedulable_plugins, tc.pending_plugins);
    ASSERT_EQ(Locate(Key(pod)), Where::kUnschedulable);
    clock_.Advance(tc.wait);
    q_->MoveAllToActiveOrBackoffQueue(tc.event, {});
    EXPECT_EQ(Locate(Key(pod)), tc.want) << WhereName(Locate(Key(pod)));
  }
}

TEST_F(QueueTest, HintReceivesPodAndEventObjects) {
  std::vector<std::string> seen;
  q_->SetProfileHooks(
      kProfile,
      {nullptr, {Hint("foo", kNodeAdd, [&](const api::Pod& pod, const EventObjects& objs) {
         seen.push_back(pod.metadata.name + "@" +
                        (objs.new_node ? objs.new_node->metadata.name : "null"));
         return pod.metadata.name == "b" ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
       })}});
  AddPopFail(MakePod("b"), {"foo"});
  AddPopFail(MakePod("a"), {"foo"});
  AddPopFail(MakePod("c"), {"bar"});  // not rejected by foo: its hint is not called
  api::Node node;
  node.metadata.name = "n1";
  EventObjects objs;
  objs.new_node = &node;
  clock_.Advance(100 * kSec);
  q_->MoveAllToActiveOrBackoffQueue(kNodeAdd, objs);
  EXPECT_EQ(seen, (std::vector<std::string>{"a@n1", "b@n1"}));  // key order, deterministic
  EXPECT_EQ(Locate("ns1/a"), Where::kUnschedulable);
  EXPECT_EQ(Locate("ns1/b"), Where::kActive);
  EXPECT_EQ(Locate("ns1/c"), Where::kUnschedulable);
}

// upstream TestPriorityQueue_MoveAllToActiveOrBackoffQueue, step by step.
TEST_F(QueueTest, MoveAllToActiveOrBackoffQueueScenario) {
  q_->SetProfileHooks(kProfile, {nullptr, {Hint("fooPlugin", kNodeAdd, ReturnQueue())}});
  auto up = MakePod("up", 0);
  auto hpp = MakePod("hpp", 1000);
  auto hpp1 = MakePod("hpp1", 1000);
  auto hpp2 = MakePod("hpp2", 1000);
  auto mpp = MakePod("mpp", 500);

  q_->Add(PodInfo::Make(up));
  QueuedPodInfoPtr p_up = PopExpect(up);
  q_->Add(PodInfo::Make(hpp));
  QueuedPodInfoPtr p_hpp = PopExpect(hpp);
  p_up->unschedulable_plugins = {"fooPlugin"};
  p_hpp->unschedulable_plugins = {"fooPlugin"};
  q_->AddUnschedulableIfNotPresent(p_up, q_->SchedulingCycle());
  q_->AddUnschedulableIfNotPresent(p_hpp, q_->SchedulingCycle());
  // A pod whose failure is associated with no plugin goes to backoffQ.
  QueuedPodInfoPtr p_hpp1 = AddPopFail(hpp1, {});
  // A pod rejected by barPlugin goes to unschedulablePods.
  AddPopFail(hpp2, {"barPlugin"});
  ExpectCounts(0, 1, 3);

  // NodeAdd moves up and hpp to backoffQ (fooPlugin's hint), hpp2 stays.
  q_->MoveAllToActiveOrBackoffQueue(kNodeAdd, {});
  q_->Add(PodInfo::Make(mpp));
  ExpectCounts(1, 3, 1);
  PopExpect(mpp);

  // After the backoff, the three pods are popped and fail again.
  clock_.Advance(opts_.max_backoff_ns);
  q_->FlushBackoffQCompleted();
  EXPECT_EQ(PopAllNames(), (std::vector<std::string>{"hpp", "hpp1", "up"}));
  p_up->unschedulable_plugins = {"fooPlugin"};
  p_hpp->unschedulable_plugins = {"fooPlugin"};
  p_hpp1->unschedulable_plugins.clear();
  q_->AddUnschedulableIfNotPresent(p_up, q_->SchedulingCycle());
  q_->AddUnschedulableIfNotPresent(p_hpp, q_->SchedulingCycle());
  q_->AddUnschedulableIfNotPresent(p_hpp1, q_->SchedulingCycle());
  q_->Add(PodInfo::Make(mpp));
  for (const auto& pod : {up, hpp, hpp2}) EXPECT_EQ(Locate(Key(pod)), Where::kUnschedulable);
  EXPECT_EQ(Locate(Key(hpp1)), Where::kBackoff);
  ExpectCounts(1, 1, 3);

  // After max backoff, hpp1 is flushed and NodeAdd moves up and hpp straight to activeQ.
  clock_.Advance(opts_.max_backoff_ns);
  q_->FlushBackoffQCompleted();
  q_->MoveAllToActiveOrBackoffQueue(kNodeAdd, {});
  ExpectCounts(4, 0, 1);
  EXPECT_EQ(Locate(Key(hpp2)), Where::kUnschedulable) << "hpp2 is not moved whatever its backoff";
}

// ---------------------------------------------------------------------------------------
// PreEnqueue gating (scheduling gates)

TEST_F(QueueTest, GatedPodWaitsForItsGatesToBeRemoved) {
  q_->SetProfileHooks(kProfile,
                      {GatesPreEnqueue, {GatesHint(), Hint("foo", kNodeAdd, ReturnQueue())}});
  api::Pod gated =
      PodBuilder("gated", "ns1").UID("gated-uid").SchedulingGate("example.com/gate").Obj();
  auto gated_ptr = std::make_shared<api::Pod>(gated);
  q_->Add(PodInfo::Make(gated_ptr));
  q_->Add(PodInfo::Make(MakePod("free")));
  ExpectCounts(1, 0, 0, 1);
  EXPECT_EQ(Locate("ns1/gated"), Where::kGated);
  EXPECT_EQ(q_->Get("ns1/gated")->gating_plugin, "SchedulingGates");
  EXPECT_EQ(q_->Get("ns1/gated")->last_failure_message, "waiting for scheduling gates");
  EXPECT_EQ(PopAllNames(), (std::vector<std::string>{"free"}));

  // Events the gating plugin did not register for do not move it, even wildcard-free
  // ones that other plugins registered.
  q_->MoveAllToActiveOrBackoffQueue(kNodeAdd, {});
  EXPECT_EQ(Locate("ns1/gated"), Where::kGated);

  struct Step {
    std::string name;
    std::function<void(api::Pod&)> change;
    Where want;
  };
  const std::vector<Step> steps = {
      {"status-only update",
       [](api::Pod& p) {
         p.status.conditions.push_back({"PodScheduled", "False", "", ""});
       },
       Where::kGated},
      {"label update", [](api::Pod& p) { p.metadata.labels["a"] = "b"; }, Where::kGated},
      {"gates removed", [](api::Pod& p) { p.spec.scheduling_gates.clear(); }, Where::kActive},
  };
  api::Pod cur = gated;
  for (const auto& st : steps) {
    SCOPED_TRACE(st.name);
    api::Pod next = cur;
    st.change(next);
    q_->Update(cur, PodInfo::Make(std::make_shared<api::Pod>(next)));
    EXPECT_EQ(Locate("ns1/gated"), st.want) << WhereName(Locate("ns1/gated"));
    cur = next;
  }
  QueuedPodInfoPtr p = q_->TryPop();
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->Pod().spec.scheduling_gates.empty());
  EXPECT_TRUE(p->gating_plugin.empty());
}

// TakeGateReports hands each gated pod's gate out once per message (KEP-5501: the
// PodScheduled condition the scheduler writes), again when the message changes, and never
// for a pod that passed PreEnqueue or left the queue in between.
TEST_F(QueueTest, TakeGateReportsOncePerMessage) {
  const auto counting = [](const PodInfo& p) {
    if (p.pod->spec.scheduling_gates.empty()) return Status::Success();
    Status s = Status::UnschedulableAndUnresolvable(
        "waiting for " + std::to_string(p.pod->spec.scheduling_gates.size()) + " gate(s)");
    s.WithPlugin("SchedulingGates");
    return s;
  };
  q_->SetProfileHooks(kProfile, {counting, {GatesHint()}});
  api::Pod two = PodBuilder("a", "ns1").UID("a-uid").SchedulingGate("g1").Obj();
  two.spec.scheduling_gates.push_back(two.spec.scheduling_gates[0]);
  two.spec.scheduling_gates[1].name = "g2";
  q_->Add(PodInfo::Make(std::make_shared<api::Pod>(two)));
  q_->Add(PodInfo::Make(PodBuilder("b", "ns1").UID("b-uid").SchedulingGate("g").Ptr()));
  q_->Add(PodInfo::Make(MakePod("free")));

  auto reports = q_->TakeGateReports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].pod->pod->Key(), "ns1/a");
  EXPECT_EQ(reports[0].plugin, "SchedulingGates");
  EXPECT_EQ(reports[0].message, "waiting for 2 gate(s)");
  EXPECT_EQ(reports[1].pod->pod->Key(), "ns1/b");
  EXPECT_EQ(reports[1].message, "waiting for 1 gate(s)");
  EXPECT_TRUE(q_->TakeGateReports().empty()) << "each report is handed out once";

  // The leftover flush runs PreEnqueue again with the same messages: nothing new.
  clock_.Advance(opts_.max_in_unschedulable_ns + 1);
  q_->FlushUnschedulablePodsLeftover();
  EXPECT_TRUE(q_->TakeGateReports().empty());

  // One gate of a removed: its message changes and is reported again; b is deleted and
  // never reported again.
  api::Pod one = two;
  one.spec.scheduling_gates.pop_back();
  q_->Update(two, PodInfo::Make(std::make_shared<api::Pod>(one)));
  clock_.Advance(opts_.max_in_unschedulable_ns + 1);
  q_->FlushUnschedulablePodsLeftover();
  q_->Delete(*PodBuilder("b", "ns1").UID("b-uid").Ptr());
  reports = q_->TakeGateReports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].pod->pod->Key(), "ns1/a");
  EXPECT_EQ(reports[0].message, "waiting for 1 gate(s)");

  // Its last gate removed: it leaves the gated pods, and nothing is reported for it.
  api::Pod none = one;
  none.spec.scheduling_gates.clear();
  q_->Update(one, PodInfo::Make(std::make_shared<api::Pod>(none)));
  EXPECT_EQ(Locate("ns1/a"), Where::kActive);
  EXPECT_TRUE(q_->TakeGateReports().empty());
}

TEST_F(QueueTest, GateRemovalOfAnotherPodDoesNotUngate) {
  q_->SetProfileHooks(kProfile, {GatesPreEnqueue, {GatesHint()}});
  auto gated = PodBuilder("gated", "ns1").UID("gated-uid").SchedulingGate("g").Ptr();
  q_->Add(PodInfo::Make(gated));
  api::Pod other_old = PodBuilder("other", "ns1").UID("other-uid").SchedulingGate("g").Obj();
  api::Pod other_new = other_old;
  other_new.spec.scheduling_gates.clear();
  EventObjects objs;
  objs.old_pod = &other_old;
  objs.new_pod = &other_new;
  q_->MoveAllToActiveOrBackoffQueue(
      {EventResource::kUnscheduledPod, framework::kUpdatePodSchedulingGatesEliminated, "x"}, objs);
  EXPECT_EQ(Locate("ns1/gated"), Where::kGated);
  // The 5-minute flush re-runs PreEnqueue: still gated, stays; its next check is
  // max_in_unschedulable later, not a time already past (drivers that advance a virtual
  // clock to the next wake-up time would otherwise spin).
  clock_.Advance(opts_.max_in_unschedulable_ns + 1);
  q_->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Locate("ns1/gated"), Where::kGated);
  EXPECT_EQ(q_->NextUnschedulableTimeout(), clock_.Now() + opts_.max_in_unschedulable_ns + 1);
  q_->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Locate("ns1/gated"), Where::kGated);
}

// A pod that becomes gated while in flight is not released to activeQ by the backoff
// flush: every path into activeQ runs PreEnqueue (upstream moveToActiveQ, or PreEnqueue
// on the way into backoffQ with SchedulerPopFromBackoffQ).
TEST_F(QueueTest, FlushBackoffQCompletedRunsPreEnqueue) {
  bool gate = false;
  q_->SetProfileHooks(kProfile, {[&](const PodInfo&) {
                                   if (!gate) return Status::Success();
                                   Status s = Status::UnschedulableAndUnresolvable("quorum");
                                   s.WithPlugin("Gang");
                                   return s;
                                 },
                                 {Hint("Gang", kPvcAdd, ReturnQueue())}});
  auto pod = MakePod("p");
  AddPopFail(pod, {});  // Error -> backoffQ
  ASSERT_EQ(Locate(Key(pod)), Where::kBackoff);
  gate = true;
  clock_.Advance(opts_.max_backoff_ns);
  q_->FlushBackoffQCompleted();
  EXPECT_EQ(Locate(Key(pod)), Where::kGated) << WhereName(Locate(Key(pod)));
  EXPECT_EQ(q_->TryPop(), nullptr);
  gate = false;
  q_->MoveAllToActiveOrBackoffQueue(kPvcAdd, {});
  EXPECT_EQ(Locate(Key(pod)), Where::kActive);
}

// ---------------------------------------------------------------------------------------
// FlushUnschedulablePodsLeftover / NextUnschedulableTimeout

TEST_F(QueueTest, FlushUnschedulablePodsLeftover) {
  q_->SetProfileHooks(kProfile, {nullptr, {Hint("fooPlugin", kNodeAdd, ReturnSkip())}});
  auto hpp = MakePod("hpp", 1000);
  auto up = MakePod("up", 0);
  auto mpp = MakePod("mpp", 500);
  AddPopFail(hpp, {"fooPlugin"});
  AddPopFail(up, {"fooPlugin"});
  EXPECT_EQ(q_->NextUnschedulableTimeout(), kStart + opts_.max_in_unschedulable_ns + 1);

  // Exactly max_in_unschedulable later: not yet (strictly longer is required).
  clock_.Advance(opts_.max_in_unschedulable_ns);
  AddPopFail(mpp, {"fooPlugin"});
  q_->FlushUnschedulablePodsLeftover();
  ExpectCounts(0, 0, 3);
  // One more nanosecond: hpp and up leave (backoff long expired: activeQ), mpp stays.
  clock_.Advance(1);
  EXPECT_EQ(q_->NextUnschedulableTimeout(), clock_.Now());
  q_->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Locate(Key(mpp)), Where::kUnschedulable);
  EXPECT_EQ(PopAllNames(), (std::vector<std::string>{"hpp", "up"}));
  EXPECT_EQ(q_->NextUnschedulableTimeout(), clock_.Now() - 1 + opts_.max_in_unschedulable_ns + 1);

  q_->Delete(*mpp);
  EXPECT_EQ(q_->NextUnschedulableTimeout(), LLONG_MAX);
}

TEST_F(QueueTest, FlushUnschedulableLeftoverSendsBackingOffPodsToBackoffQ) {
  QueueOptions o;
  o.initial_backoff_ns = 60 * kSec;
  o.max_backoff_ns = 120 * kSec;
  o.max_in_unschedulable_ns = 5 * kSec;
  Reset(o);
  auto pod = MakePod("p");
  AddPopFail(pod, {"fooPlugin"});
  clock_.Advance(6 * kSec);
  q_->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Locate(Key(pod)), Where::kBackoff);
  EXPECT_EQ(q_->NextBackoffExpiry(), kStart + 60 * kSec);
}

// ---------------------------------------------------------------------------------------
// Update (TestPriorityQueue_Update)

TEST_F(QueueTest, Update) {
  const std::vector<std::pair<std::string, ClusterEventWithHint>> hints = {
      Hint("queuePlugin", {EventResource::kPod, framework::kUpdate, "PodUpdate"}, ReturnQueue()),
      Hint("skipPlugin", {EventResource::kPod, framework::kUpdate, "PodUpdate"}, ReturnSkip()),
  };
  auto annotate = [](const api::PodPtr& p, const std::string& v) {
    auto c = std::make_shared<api::Pod>(*p);
    c->metadata.annotations["foo"] = v;
    return api::PodPtr(c);
  };
  auto status_only = [](const api::PodPtr& p) {
    auto c = std::make_shared<api::Pod>(*p);
    c->status.conditions.push_back({"PodScheduled", "False", "Unschedulable", "0/3 nodes"});
    return api::PodPtr(c);
  };
  struct Case {
    std::string name;
    // Prepares the queue and returns (old, new).
    std::function<std::pair<api::PodPtr, api::PodPtr>(QueueTest&)> prepare;
    Where want;
  };
  auto mpp = MakePod("mpp", 500);
  const std::vector<Case> cases = {
      {"update a pod that isn't in the queue: activeQ",
       [&](QueueTest&) { return std::make_pair(mpp, annotate(mpp, "test")); }, Where::kActive},
      {"update a pod in activeQ: stays in activeQ",
       [&](QueueTest& t) {
         t.q_->Add(PodInfo::Make(mpp));
         return std::make_pair(mpp, annotate(mpp, "test"));
       },
       Where::kActive},
      {"update a pod in backoffQ: stays in backoffQ",
       [&](QueueTest& t) {
         t.AddPopFail(mpp, {});
         return std::make_pair(mpp, annotate(mpp, "test"));
       },
       Where::kBackoff},
      {"pod in unschedulablePods still backing off: backoffQ",
       [&](QueueTest& t) {
         t.AddPopFail(mpp, {"queuePlugin"});
         return std::make_pair(mpp, annotate(mpp, "test"));
       },
       Where::kBackoff},
      {"pod in unschedulablePods, backoff expired: activeQ",
       [&](QueueTest& t) {
         t.AddPopFail(mpp, {"queuePlugin"});
         t.clock_.Advance(t.opts_.max_backoff_ns);
         return std::make_pair(mpp, annotate(mpp, "test1"));
       },
       Where::kActive},
      {"pod in unschedulablePods, hint returns QueueSkip: stays",
       [&](QueueTest& t) {
         t.AddPopFail(mpp, {"skipPlugin"});
         t.clock_.Advance(t.opts_.max_backoff_ns);
         return std::make_pair(mpp, annotate(mpp, "test1"));
       },
       Where::kUnschedulable},
      {"pod in unschedulablePods, status-only update: stays",
       [&](QueueTest& t) {
         t.AddPopFail(mpp, {"queuePlugin"});
         t.clock_.Advance(t.opts_.max_backoff_ns);
         return std::make_pair(mpp, status_only(mpp));
       },
       Where::kUnschedulable},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Reset(QueueOptions{});
    q_->SetProfileHooks(kProfile, {nullptr, hints});
    auto [old_pod, new_pod] = tc.prepare(*this);
    q_->Update(*old_pod, PodInfo::Make(new_pod));
    EXPECT_EQ(Locate(Key(new_pod)), tc.want) << WhereName(Locate(Key(new_pod)));
    QueuedPodInfoPtr got = q_->Get(Key(new_pod));
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->pod_info->pod, new_pod) << "the queue holds the updated pod";
    EXPECT_EQ(q_->PendingPods().size(), 1u);
  }
}

// An update that raises a pod's priority re-sorts activeQ.
TEST_F(QueueTest, UpdateInActiveQReordersByPriority) {
  auto a = MakePod("a", 10);
  auto b = MakePod("b", 5);
  q_->Add(PodInfo::Make(a));
  q_->Add(PodInfo::Make(b));
  auto b2 = std::make_shared<api::Pod>(*b);
  b2->spec.priority = 100;
  q_->Update(*b, PodInfo::Make(b2));
  EXPECT_EQ(PopAllNames(), (std::vector<std::string>{"b", "a"}));
}

// ---------------------------------------------------------------------------------------
// Delete, Activate, Nominator

TEST_F(QueueTest, Delete) {
  struct Case {
    std::string name;
    std::function<void(QueueTest&, const api::PodPtr&)> place;
  };
  const std::vector<Case> cases = {
      {"from activeQ", [](QueueTest& t, const api::PodPtr& p) { t.q_->Add(PodInfo::Make(p)); }},
      {"from backoffQ", [](QueueTest& t, const api::PodPtr& p) { t.AddPopFail(p, {}); }},
      {"from unschedulablePods",
       [](QueueTest& t, const api::PodPtr& p) { t.AddPopFail(p, {"x"}); }},
      {"not queued", [](QueueTest&, const api::PodPtr&) {}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Reset(QueueOptions{});
    auto hpp = MakePod("hpp", 1000);
    auto up = MakePod("up", 0);
    tc.place(*this, hpp);
    q_->Add(PodInfo::Make(up));
    q_->nominator().Add(PodInfo::Make(hpp), "node1");
    q_->nominator().Add(PodInfo::Make(up), "node1");
    q_->Delete(*hpp);
    EXPECT_EQ(q_->Get(Key(hpp)), nullptr);
    EXPECT_EQ(Locate(Key(up)), Where::kActive);
    ASSERT_EQ(q_->nominator().ForNode("node1").size(), 1u);
    EXPECT_EQ(q_->nominator().ForNode("node1")[0]->pod, up);
    q_->Delete(*up);
    EXPECT_TRUE(q_->nominator().Empty());
    EXPECT_TRUE(q_->PendingPods().empty());
  }
}

TEST_F(QueueTest, Activate) {
  struct Case {
    std::string name;
    std::function<void(QueueTest&, const api::PodPtr&)> place;
    size_t want_active;
  };
  const std::vector<Case> cases = {
      {"pod already in activeQ",
       [](QueueTest& t, const api::PodPtr& p) { t.q_->Add(PodInfo::Make(p)); }, 1},
      {"pod not in unschedulablePods/backoffQ", [](QueueTest&, const api::PodPtr&) {}, 0},
      {"pod in unschedulablePods",
       [](QueueTest& t, const api::PodPtr& p) { t.AddPopFail(p, {"x"}); }, 1},
      {"pod in backoffQ", [](QueueTest& t, const api::PodPtr& p) { t.AddPopFail(p, {}); }, 1},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Reset(QueueOptions{});
    auto hpp = MakePod("hpp", 1000);
    tc.place(*this, hpp);
    q_->Activate({Key(hpp), "ns1/unknown"});
    EXPECT_EQ(q_->Counts().active, tc.want_active);
    if (tc.want_active) {
      EXPECT_EQ(Locate(Key(hpp)), Where::kActive);
    }
    EXPECT_EQ(q_->Counts().backoff + q_->Counts().unschedulable, 0u);
  }
}

TEST_F(QueueTest, ActivateKeepsGatedPodsGated) {
  q_->SetProfileHooks(kProfile, {GatesPreEnqueue, {GatesHint()}});
  auto gated = PodBuilder("gated", "ns1").SchedulingGate("g").Ptr();
  q_->Add(PodInfo::Make(gated));
  q_->Activate({Key(gated)});
  EXPECT_EQ(Locate(Key(gated)), Where::kGated);
}

// Activate during a pod's cycle counts as a move request (the pod goes to backoffQ).
TEST_F(QueueTest, ActivateDuringCycleIsAMoveRequest) {
  auto pod = MakePod("p");
  q_->Add(PodInfo::Make(pod));
  QueuedPodInfoPtr p = PopExpect(pod);
  q_->Activate({"ns1/other"});
  p->unschedulable_plugins = {"x"};
  q_->AddUnschedulableIfNotPresent(p, q_->SchedulingCycle());
  EXPECT_EQ(Locate(Key(pod)), Where::kBackoff);
}

// Activating pods that are queued is not a move request: it cannot be news to a pod in
// flight (upstream records EventForceActivate only for in-flight pods).
TEST_F(QueueTest, ActivateOfQueuedPodsIsNotAMoveRequest) {
  auto pod = MakePod("p", 10);
  auto other = MakePod("q");
  q_->Add(PodInfo::Make(pod));
  QueuedPodInfoPtr p = PopExpect(pod);
  q_->Add(PodInfo::Make(other));
  q_->Activate({Key(other)});
  p->unschedulable_plugins = {"x"};
  q_->AddUnschedulableIfNotPresent(p, q_->SchedulingCycle());
  EXPECT_EQ(Locate(Key(pod)), Where::kUnschedulable);
}

// The member that completes a gang's quorum: AddAndActivate moves the gated members and
// the new one into activeQ together, so the gang's attempt (the first member popped, the
// others extracted) is not followed by a move request of its own making, and its failure
// waits in unschedulablePods. Separately, Add then Activate can interleave with the Pop:
// the Activate then finds the members in flight, and the failed attempt goes to backoffQ.
TEST_F(QueueTest, AddAndActivateCompletesAGangBeforeItsCycle) {
  for (bool atomic : {true, false}) {
    SCOPED_TRACE(atomic ? "AddAndActivate" : "Add, Pop, Activate");
    Reset(QueueOptions{});
    bool quorum = false;
    q_->SetProfileHooks(kProfile, {[&quorum](const PodInfo&) {
                                     if (quorum) return Status::Success();
                                     Status s = Status::Unschedulable("waiting for minMember");
                                     s.WithPlugin("Gang");
                                     return s;
                                   },
                                   {}});
    auto m0 = MakePod("m0"), m1 = MakePod("m1"), m2 = MakePod("m2");
    q_->Add(PodInfo::Make(m0));
    q_->Add(PodInfo::Make(m1));
    EXPECT_EQ(Locate(Key(m0)), Where::kGated);
    quorum = true;
    const std::vector<std::string> keys = {Key(m0), Key(m1), Key(m2)};
    std::vector<QueuedPodInfoPtr> gang;
    if (atomic) {
      q_->AddAndActivate(PodInfo::Make(m2), keys);
      EXPECT_EQ(q_->Counts().active, 3u);
      gang.push_back(q_->TryPop());
    } else {
      q_->Add(PodInfo::Make(m2));
      gang.push_back(PopExpect(m2));
    }
    ASSERT_NE(gang[0], nullptr);
    const int64_t cycle = q_->SchedulingCycle();
    for (const auto& k : keys) {
      if (k == gang[0]->Pod().Key()) continue;
      gang.push_back(q_->Extract(k));
      ASSERT_NE(gang.back(), nullptr) << k;
    }
    if (!atomic) q_->Activate(keys);  // the pod handler, racing the scheduling thread
    for (const auto& p : gang) {
      p->unschedulable_plugins = {"Gang"};
      q_->AddUnschedulableIfNotPresent(p, cycle);
    }
    for (const auto& k : keys) {
      EXPECT_EQ(Locate(k), atomic ? Where::kUnschedulable : Where::kBackoff) << k;
    }
  }
}

TEST(NominatorTest, AddDeleteMove) {
  Nominator n;
  EXPECT_TRUE(n.Empty());
  auto a = PodInfo::Make(MakePod("a"));
  auto b = PodInfo::Make(MakePod("b"));
  auto names = [&](const std::string& node) {
    std::vector<std::string> out;
    for (const auto& p : n.ForNode(node)) out.push_back(p->pod->metadata.name);
    return out;
  };
  n.Add(a, "node1");
  n.Add(b, "node1");
  EXPECT_FALSE(n.Empty());
  EXPECT_EQ(names("node1"), (std::vector<std::string>{"a", "b"}));
  // Re-nominating moves the pod.
  n.Add(a, "node2");
  EXPECT_EQ(names("node1"), (std::vector<std::string>{"b"}));
  EXPECT_EQ(names("node2"), (std::vector<std::string>{"a"}));
  // Nominating the same node again does not duplicate.
  n.Add(a, "node2");
  EXPECT_EQ(names("node2"), (std::vector<std::string>{"a"}));
  // An empty node clears the nomination.
  n.Add(b, "");
  EXPECT_TRUE(n.ForNode("node1").empty());
  n.Delete(*a->pod);
  EXPECT_TRUE(n.ForNode("node2").empty());
  EXPECT_TRUE(n.Empty());
  n.Delete(*a->pod);  // unknown: no-op
  EXPECT_TRUE(n.ForNode("nowhere").empty());
}

// Views are immutable snapshots; DrainChanged reports every node whose list changed.
TEST(NominatorTest, ViewsAndChangedNodes) {
  Nominator n;
  EXPECT_EQ(n.ViewForNode("node1"), nullptr);
  auto a = PodInfo::Make(MakePod("a"));
  auto b = PodInfo::Make(MakePod("b"));
  n.Add(a, "node1");
  auto v1 = n.ViewForNode("node1");
  ASSERT_NE(v1, nullptr);
  n.Add(b, "node1");
  EXPECT_EQ(v1->size(), 1u);  // the earlier view does not change
  EXPECT_EQ(n.ViewForNode("node1")->size(), 2u);
  std::vector<std::string> changed;
  EXPECT_TRUE(n.DrainChanged(&changed));
  EXPECT_EQ(changed, (std::vector<std::string>{"node1", "node1"}));
  changed.clear();
  EXPECT_TRUE(n.DrainChanged(&changed));
  EXPECT_TRUE(changed.empty());
  n.Add(a, "node2");  // a move changes both nodes
  n.Delete(*b->pod);
  EXPECT_TRUE(n.DrainChanged(&changed));
  std::sort(changed.begin(), changed.end());
  EXPECT_EQ(changed, (std::vector<std::string>{"node1", "node1", "node2"}));
  EXPECT_EQ(n.ViewForNode("node1"), nullptr);
}

// ---------------------------------------------------------------------------------------
// Counts / PendingPods / Get / next wake-up times

TEST_F(QueueTest, CountsPendingPodsAndNextTimes) {
  EXPECT_EQ(q_->NextBackoffExpiry(), LLONG_MAX);
  EXPECT_EQ(q_->NextUnschedulableTimeout(), LLONG_MAX);
  q_->SetProfileHooks(kProfile, {GatesPreEnqueue, {GatesHint()}});
  AddPopFail(MakePod("backoff"), {});
  clock_.Advance(kSec / 2);
  AddPopFail(MakePod("unsched"), {"x"});
  q_->Add(PodInfo::Make(PodBuilder("gated", "ns1").SchedulingGate("g").Ptr()));
  q_->Add(PodInfo::Make(MakePod("active")));
  ExpectCounts(1, 1, 1, 1);
  EXPECT_EQ(q_->PendingPods().size(), 4u);
  EXPECT_EQ(q_->NextBackoffExpiry(), kStart + kSec);
  // The gated pod entered unschedulablePods at the same time as "unsched".
  EXPECT_EQ(q_->NextUnschedulableTimeout(), kStart + kSec / 2 + opts_.max_in_unschedulable_ns + 1);
  EXPECT_EQ(q_->Get("ns1/missing"), nullptr);
  EXPECT_EQ(Locate("ns1/active"), Where::kActive);
  EXPECT_EQ(Locate("ns1/backoff"), Where::kBackoff);
  EXPECT_EQ(Locate("ns1/unsched"), Where::kUnschedulable);
  EXPECT_EQ(Locate("ns1/gated"), Where::kGated);
}

// Partitions (QueueSortPlugin::HasPartitions): the partition order is read at
// every Pop, so a partition whose rank changed while its pods waited is served by its
// current rank. Oracle: over all queued pods, the lowest current rank of its partition,
// then PriorityLess — recomputed from the pods themselves at each Pop.
// Partition = the pod name's first letter, ordered by `rank` (read at each Pop).
SchedulingQueue::PartitionFns ByFirstLetter(std::map<std::string, int>* rank) {
  return {[](const QueuedPodInfo& p) { return p.Pod().metadata.name.substr(0, 1); },
          [rank](const std::string& a, const std::string& b) { return (*rank)[a] < (*rank)[b]; }};
}

TEST(SchedulingQueuePartitions, PopFollowsTheCurrentPartitionOrder) {
  framework::VirtualClock clock(kStart);
  std::map<std::string, int> rank;
  SchedulingQueue q(PriorityLess, clock, QueueOptions{}, nullptr, ByFirstLetter(&rank));
  rank = {{"a", 0}, {"b", 1}};
  for (const auto& [name, prio] :
       std::vector<std::pair<std::string, int>>{{"a1", 0}, {"a2", 0}, {"b1", 0}, {"b2", 5}}) {
    q.Add(PodInfo::Make(MakePod(name, prio)));
    clock.Advance(1);
  }
  EXPECT_EQ(q.Pop()->Pod().metadata.name, "a1");
  rank["a"] = 2;  // a's share grew: b goes first now, its own order inside (b2 priority 5)
  EXPECT_EQ(q.Pop()->Pod().metadata.name, "b2");
  rank["a"] = 1;  // a tie: the heads' order decides (a2 was queued before b1)
  EXPECT_EQ(q.Pop()->Pod().metadata.name, "a2");
  EXPECT_EQ(q.Pop()->Pod().metadata.name, "b1");
  EXPECT_EQ(q.TryPop(), nullptr);
}

TEST(SchedulingQueuePartitions, RandomOperationsMatchTheOracle) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    framework::VirtualClock clock(kStart);
    std::map<std::string, int> rank;
    SchedulingQueue q(PriorityLess, clock, QueueOptions{}, nullptr, ByFirstLetter(&rank));
    struct Queued {
      api::PodPtr pod;
      int priority;
      api::Timestamp ts;
    };
    std::map<std::string, Queued> queued;  // oracle: pod key -> what it was queued with
    int next = 0;
    for (int step = 0; step < 300; ++step) {
      const uint32_t op = rng() % 10;
      if (op < 4) {
        const std::string name =
            std::string(1, static_cast<char>('a' + rng() % 4)) + std::to_string(next++);
        const int prio = static_cast<int>(rng() % 3);
        auto pod = MakePod(name, prio);
        queued[pod->Key()] = {pod, prio, clock.Now()};
        q.Add(PodInfo::Make(pod));
        clock.Advance(1);
      } else if (op < 5 && !queued.empty()) {
        auto it = queued.begin();
        std::advance(it, rng() % queued.size());
        q.Delete(*it->second.pod);
        queued.erase(it);
      } else if (op < 7) {
        rank[std::string(1, static_cast<char>('a' + rng() % 4))] = static_cast<int>(rng() % 3);
      } else {
        const Queued* want = nullptr;
        for (const auto& [key, e] : queued) {
          const int r = rank[e.pod->metadata.name.substr(0, 1)];
          if (!want) {
            want = &e;
            continue;
          }
          const int rw = rank[want->pod->metadata.name.substr(0, 1)];
          if (r < rw || (r == rw && (e.priority > want->priority ||
                                     (e.priority == want->priority && e.ts < want->ts)))) {
            want = &e;
          }
        }
        auto got = q.TryPop();
        if (!want) {
          EXPECT_EQ(got, nullptr) << "seed " << seed << " step " << step;
          continue;
        }
        ASSERT_NE(got, nullptr) << "seed " << seed << " step " << step;
        ASSERT_EQ(got->Pod().Key(), want->pod->Key()) << "seed " << seed << " step " << step;
        queued.erase(got->Pod().Key());
      }
    }
  }
}

// RecordRepeatedFlushes (the simulator's skipped flush rounds) against the rounds run one
// by one: the unschedulable flush moves the pod, it is popped, rejected by the same plugin
// and put back, three times; accounting three rounds gives the same attempts,
// unschedulable count, timestamp, scheduling cycle and incoming-pods counts. A pod that is
// not waiting in unschedulablePods (here in backoffQ after an Error) is refused, and the
// refusal changes nothing.
TEST_F(QueueTest, RecordedFlushRoundsMatchTheRoundsRunOneByOne) {
  auto run = [&](bool record) {
    Reset(QueueOptions{});
    std::map<std::string, int> incoming;
    q_->SetIncomingObserver([&](std::string_view queue, std::string_view event) {
      ++incoming[std::string(queue) + "/" + std::string(event)];
    });
    QueuedPodInfoPtr p = AddPopFail(MakePod("a"), {"NodeResourcesFit"});
    const api::Timestamp t0 = p->timestamp;
    if (record) {
      EXPECT_TRUE(q_->RecordRepeatedFlushes({p}, 3, 3));
    } else {
      for (int i = 0; i < 3; ++i) {
        clock_.Advance(q_->UnschedulableFlushPeriod());
        q_->FlushUnschedulablePodsLeftover();
        QueuedPodInfoPtr again = q_->TryPop();
        EXPECT_EQ(again, p);
        if (again) q_->AddUnschedulableIfNotPresent(again, q_->SchedulingCycle());
      }
    }
    std::string out = std::to_string(p->attempts) + " " + std::to_string(p->unschedulable_count) +
                      " " + std::to_string(p->timestamp - t0) + " " +
                      std::to_string(q_->SchedulingCycle());
    for (const auto& [k, n] : incoming) out += " " + k + "=" + std::to_string(n);
    EXPECT_EQ(Locate("ns1/a"), Where::kUnschedulable);
    return out;
  };
  const std::string one_by_one = run(false);
  EXPECT_EQ(run(true), one_by_one);
  EXPECT_NE(one_by_one.find("4 4 "), std::string::npos) << one_by_one;  // 1 + 3 rounds

  Reset(QueueOptions{});
  QueuedPodInfoPtr waiting = AddPopFail(MakePod("a"), {"NodeResourcesFit"});
  const api::Timestamp t0 = waiting->timestamp;
  QueuedPodInfoPtr errored = AddPopFail(MakePod("b"), {});
  ASSERT_EQ(Locate("ns1/b"), Where::kBackoff);
  const int64_t cycle = q_->SchedulingCycle();
  EXPECT_FALSE(q_->RecordRepeatedFlushes({waiting, errored}, 2, 2));
  EXPECT_EQ(waiting->attempts, 1);
  EXPECT_EQ(waiting->timestamp, t0);
  EXPECT_EQ(q_->SchedulingCycle(), cycle);
}

}  // namespace
}  // namespace phalanx::queue
