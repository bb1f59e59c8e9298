// StaleReason and StaleGangTracker on hand-built gang states (KAI PodGroupInfo.IsStale and
// stalegangeviction rules; gang/staleness.h).
#include "gang/staleness.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::gang {
namespace {

// StaleReason's outcome: "" when not stale, else its message (FailedPrecondition).
std::string StaleMessage(const api::Status& s) {
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  return std::string(s.message());
}

constexpr int64_t kSec = api::kNanosPerSecond;

// A gang of minMember `min` that ran, with `active` members bound out of `pods`.
GangInfo Running(Dialect d, int32_t min, int32_t pods, int32_t active,
                 std::optional<int64_t> grace = std::nullopt) {
  auto spec = std::make_shared<PodGroupSpec>();
  spec->dialect = d;
  spec->min_member = min;
  spec->staleness_grace_ns = grace;
  GangInfo g;
  g.key = "ml/train";
  g.spec = spec;
  g.counts.pods = pods;
  g.counts.bound = active;
  g.counts.pending = pods - active;
  g.counts.satisfied_once = true;
  for (int32_t i = 0; i < pods; ++i) {
    g.member_pods.push_back("ml/train-" + std::to_string(i));
    g.member_sub_groups.push_back("");
    g.member_active.push_back(i < active);
  }
  g.sub_group_active[""] = active;
  return g;
}

// A PodGroupManager that serves fixed GangInfos.
class FixedPodGroupManager final : public PodGroupManager {
 public:
  std::map<std::string, GangInfo> gangs;
  std::optional<GangRef> RefOf(const api::Pod&) const override { return std::nullopt; }
  std::shared_ptr<const GangRef> RefPtrOf(const api::Pod&) const override { return nullptr; }
  std::optional<GangInfo> Info(const std::string& key, bool) const override {
    auto it = gangs.find(key);
    if (it == gangs.end()) return std::nullopt;
    return it->second;
  }
  std::optional<GangSummary> SummaryOf(const std::string&) const override { return std::nullopt; }
  std::vector<std::string> GroupOf(const std::string& key) const override { return {key}; }
  std::shared_ptr<const Topology> TopologyOf(const std::string&) const override { return nullptr; }
  bool Satisfied(const std::string&) const override { return false; }
  void MarkAssumed(const api::Pod&, api::Timestamp) override {}
  void MarkForgotten(const api::Pod&) override {}
  void RecordAttempt(const std::string&, const std::string&) override {}
};

TEST(StaleReasonTest, KaisRules) {
  EXPECT_EQ(StaleMessage(StaleReason(Running(Dialect::kKAI, 4, 3, 3))),
            "3 of 3 members running (minMember 4)");
  EXPECT_EQ(StaleMessage(StaleReason(Running(Dialect::kKAI, 4, 4, 4))), "");  // whole
  EXPECT_EQ(StaleMessage(StaleReason(Running(Dialect::kKAI, 4, 4, 0))), "");  // nothing running
  GangInfo never = Running(Dialect::kKAI, 4, 3, 3);
  never.counts.satisfied_once = false;  // still gathering: not stale, pending
  EXPECT_EQ(StaleMessage(StaleReason(never)), "");
  // Enough members in all, but a subgroup short of its own minimum.
  GangInfo split = Running(Dialect::kKAI, 3, 3, 3);
  auto spec = std::make_shared<PodGroupSpec>(*split.spec);
  spec->sub_groups = {SubGroup{"prefill", 2, "", std::nullopt, {}},
                      SubGroup{"decode", 2, "", std::nullopt, {}}};
  split.spec = spec;
  split.sub_group_active = {{"prefill", 2}, {"decode", 1}};
  EXPECT_EQ(StaleMessage(StaleReason(split)), "subgroup \"decode\": 1/2 members running");
  GangInfo done = Running(Dialect::kKAI, 4, 3, 3);
  done.counts.succeeded = 1;  // a member finished: the job is ending, not stale
  EXPECT_EQ(StaleMessage(StaleReason(done)), "");
}

TEST(StaleGangTrackerTest, ReportsEvictsOnceAfterTheGraceAndForgetsGoneGangs) {
  FixedPodGroupManager ledger;
  ledger.gangs["ml/train"] = Running(Dialect::kKAI, 2, 1, 1);
  StaleGangTracker t;
  auto a = t.Check(ledger, {"ml/train"}, 100 * kSec);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, StaleGangTracker::Action::Kind::kStale);
  EXPECT_EQ(t.NextDeadline(), 160 * kSec);  // KAI's 60 s
  EXPECT_TRUE(t.Check(ledger, {"ml/train"}, 159 * kSec).empty());
  a = t.Check(ledger, {"ml/train"}, 160 * kSec);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, StaleGangTracker::Action::Kind::kEvict);
  EXPECT_EQ(a[0].pods, std::vector<std::string>{"ml/train-0"});
  EXPECT_TRUE(t.Check(ledger, {"ml/train"}, 200 * kSec).empty());  // once per spell
  EXPECT_EQ(t.NextDeadline(), INT64_MAX);
  // An existing spell is checked without being a candidate again.
  EXPECT_TRUE(t.Check(ledger, {}, 201 * kSec).empty());
  ledger.gangs.erase("ml/train");
  EXPECT_TRUE(t.Check(ledger, {}, 202 * kSec).empty());  // gone: the spell is dropped
  ledger.gangs["ml/train"] = Running(Dialect::kKAI, 2, 1, 1);
  EXPECT_TRUE(t.Check(ledger, {}, 250 * kSec).empty());  // no spell, not a candidate
  a = t.Check(ledger, {"ml/train"}, 300 * kSec);         // a new spell
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, StaleGangTracker::Action::Kind::kStale);
}

TEST(StaleGangTrackerTest, GraceFromTheGangThenTheDefaultThenTheDialect) {
  StaleGangTracker t;
  EXPECT_EQ(t.GraceOf(Running(Dialect::kKAI, 2, 1, 1)), 60 * kSec);
  EXPECT_EQ(t.GraceOf(Running(Dialect::kCoscheduling, 2, 1, 1)), -1);
  EXPECT_EQ(t.GraceOf(Running(Dialect::kKAI, 2, 1, 1, 5 * kSec)), 5 * kSec);
  t.SetDefaultGrace(30 * kSec);
  EXPECT_EQ(t.GraceOf(Running(Dialect::kCoscheduling, 2, 1, 1)), 30 * kSec);
  EXPECT_EQ(t.GraceOf(Running(Dialect::kKAI, 2, 1, 1)), 30 * kSec);
  EXPECT_EQ(t.GraceOf(Running(Dialect::kKAI, 2, 1, 1, -kSec)), -kSec);
  // A negative grace never evicts.
  FixedPodGroupManager ledger;
  ledger.gangs["ml/train"] = Running(Dialect::kKAI, 2, 1, 1, -kSec);
  EXPECT_EQ(t.Check(ledger, {"ml/train"}, 0).size(), 1u);
  EXPECT_TRUE(t.Check(ledger, {"ml/train"}, 1000000 * kSec).empty());
  // Whole again: reported.
  ledger.gangs["ml/train"] = Running(Dialect::kKAI, 2, 2, 2, -kSec);
  auto a = t.Check(ledger, {"ml/train"}, 1000001 * kSec);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, StaleGangTracker::Action::Kind::kRecovered);
}

}  // namespace
}  // namespace phalanx::gang
