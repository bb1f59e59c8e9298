// Gang reservations (reservation.h): expected runtimes, the EASY-backfill forecast and node
// choice, and the ReservationManager's life cycle (turns, room, expiry, release).
#include "gang/reservation.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace phalanx::gang {
namespace {

constexpr int64_t kS = api::kNanosPerSecond;

api::Resource Gpus(int64_t gpus, int64_t pods = 1) {
  api::Resource r;
  r.milli_cpu = 1000 * gpus;
  r.memory = gpus << 30;
  r.allowed_pod_number = pods;
  r.SetScalar(api::InternScalarResource(api::kResourceNvidiaGPU), gpus);
  return r;
}

// A node of 8 GPUs with running pods {gpus, end (s), 0 = unknown}.
NodeForecast Node(const std::string& name, std::vector<std::pair<int64_t, int64_t>> running) {
  NodeForecast n;
  n.name = name;
  n.allocatable = Gpus(8, 110);
  n.free = n.allocatable;
  for (const auto& [gpus, end] : running) {
    n.free.Subtract(Gpus(gpus));
    if (end > 0) n.releases.emplace_back(end * kS, Gpus(gpus));
  }
  return n;
}

TEST(ExpectedRuntimeTest, AnnotationThenActiveDeadlineThenUnknown) {
  api::Pod p;
  EXPECT_EQ(ExpectedRuntimeNs(p), std::nullopt);
  p.spec.active_deadline_seconds = 600;
  EXPECT_EQ(ExpectedRuntimeNs(p), 600 * kS);
  p.metadata.annotations[std::string(kExpectedRuntimeAnnotation)] = "90.5";
  EXPECT_EQ(ExpectedRuntimeNs(p), 90'500'000'000);
  p.metadata.annotations[std::string(kExpectedRuntimeAnnotation)] = "soon";  // malformed
  EXPECT_EQ(ExpectedRuntimeNs(p), 600 * kS);
  p.metadata.annotations[std::string(kExpectedRuntimeAnnotation)] = "-5";
  EXPECT_EQ(ExpectedRuntimeNs(p), 600 * kS);
  p.status.start_time = 100 * kS;
  EXPECT_EQ(ExpectedEnd(p, 0), 700 * kS);
  p.status.start_time.reset();
  EXPECT_EQ(ExpectedEnd(p, 5 * kS), 605 * kS);
  p.spec.active_deadline_seconds.reset();
  EXPECT_EQ(ExpectedEnd(p, 5 * kS), std::nullopt);
}

TEST(PlanReservationTest, ChoosesTheNodesThatFreeSoonest) {
  // A gang of 2 x 8 GPUs; nodes free at 300 s, 100 s, 200 s and never (unknown runtime).
  std::vector<NodeForecast> nodes = {Node("a", {{8, 300}}), Node("b", {{4, 100}, {4, 50}}),
                                     Node("c", {{8, 200}}), Node("d", {{8, 0}})};
  auto plan = PlanReservation(nodes, {Gpus(8), Gpus(8)}, 10 * kS);
  ASSERT_TRUE(plan.ok) << plan.why_not;
  EXPECT_EQ(plan.nodes, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(plan.forecast_start, 200 * kS);  // the latest release among the chosen nodes
}

TEST(PlanReservationTest, FitsNowWhenRoomIsFree) {
  std::vector<NodeForecast> nodes = {Node("a", {}), Node("b", {{8, 100}})};
  auto plan = PlanReservation(nodes, {Gpus(4), Gpus(4)}, 7 * kS);
  ASSERT_TRUE(plan.ok);
  EXPECT_EQ(plan.nodes, (std::vector<std::string>{"a"}));
  EXPECT_EQ(plan.forecast_start, 7 * kS);
}

TEST(PlanReservationTest, NoReservationWhenTheGangCanNeverFitOrHasNoForecast) {
  std::vector<NodeForecast> nodes = {Node("a", {}), Node("b", {})};
  auto too_big = PlanReservation(nodes, {Gpus(8), Gpus(8), Gpus(8)}, 0);
  EXPECT_FALSE(too_big.ok);
  EXPECT_EQ(too_big.why_not, "the gang does not fit even on the empty cluster");
  std::vector<NodeForecast> unknown = {Node("a", {{8, 0}}), Node("b", {{2, 100}})};
  auto none = PlanReservation(unknown, {Gpus(8), Gpus(8)}, 0);
  EXPECT_FALSE(none.ok);
  EXPECT_NE(none.why_not.find("no forecast"), std::string::npos) << none.why_not;
  EXPECT_FALSE(PlanReservation(nodes, {}, 0).ok);
}

TEST(PlanReservationTest, PodSlotsCount) {
  NodeForecast n = Node("a", {});
  n.free.allowed_pod_number = 0;  // full of pods of unknown runtime
  EXPECT_FALSE(PlanReservation({n}, {Gpus(1)}, 0).ok);
}

// Random clusters and gangs: the plan's nodes, at its forecast start, hold the members
// (checked by trying every assignment of plain GPU counts, independent of api::Resource),
// the forecast is `now` or a release time, and a gang that fits now always gets a plan.
TEST(PlanReservationTest, RandomForecastsAreFeasibleAtACandidateTime) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    const int n_nodes = 1 + static_cast<int>(rng() % 6);
    std::vector<NodeForecast> nodes;
    std::vector<std::vector<std::pair<int64_t, int64_t>>> running(n_nodes);  // gpus, end
    for (int i = 0; i < n_nodes; ++i) {
      int64_t used = 0;
      while (used < 8 && rng() % 3 != 0) {
        const int64_t g = 1 + static_cast<int64_t>(rng() % (8 - used));
        running[i].push_back({g, rng() % 5 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 1000)});
        used += g;
      }
      nodes.push_back(Node("n" + std::to_string(i), running[i]));
    }
    std::vector<api::Resource> members;
    std::vector<int64_t> member_gpus;
    for (int m = 0, k = 1 + static_cast<int>(rng() % 4); m < k; ++m) {
      member_gpus.push_back(1 + static_cast<int64_t>(rng() % 8));
      members.push_back(Gpus(member_gpus.back()));
    }
    auto free_at = [&](int i, int64_t t_s) {
      int64_t f = 8;
      for (const auto& [g, end] : running[i]) {
        if (end == 0 || end > t_s) f -= g;
      }
      return f;
    };
    // Whether the members fit on `allowed` nodes at t: every assignment of members to
    // nodes (at most 6^4), GPUs only.
    auto fits = [&](int64_t t_s, const std::set<std::string>* allowed) {
      std::vector<int64_t> f(n_nodes);
      for (int i = 0; i < n_nodes; ++i) {
        f[i] = (!allowed || allowed->count("n" + std::to_string(i))) ? free_at(i, t_s) : -1;
      }
      std::function<bool(size_t)> place = [&](size_t m) {
        if (m == member_gpus.size()) return true;
        for (auto& x : f) {
          if (x < member_gpus[m]) continue;
          x -= member_gpus[m];
          const bool ok = place(m + 1);
          x += member_gpus[m];
          if (ok) return true;
        }
        return false;
      };
      return place(0);
    };
    std::set<int64_t> candidate_times = {0};
    for (const auto& r : running) {
      for (const auto& [g, end] : r) {
        if (end > 0) candidate_times.insert(end);
      }
    }
    auto plan = PlanReservation(nodes, members, 0);
    if (!plan.ok) {
      // Never a plan for a gang that fits now.
      EXPECT_FALSE(fits(0, nullptr)) << "iteration " << iter;
      continue;
    }
    const std::set<std::string> chosen(plan.nodes.begin(), plan.nodes.end());
    const int64_t t_s = plan.forecast_start / kS;
    EXPECT_TRUE(fits(t_s, &chosen)) << "iteration " << iter;
    EXPECT_EQ(candidate_times.count(t_s), 1u) << "iteration " << iter;
  }
}

Reservation R(const std::string& gang, std::vector<std::string> nodes, int64_t start_s) {
  Reservation r;
  r.gang = gang;
  r.gangs = {gang};
  r.nodes = std::move(nodes);
  r.forecast_start = start_s * kS;
  return r;
}

TEST(ReservationManagerTest, AddViewReleaseAndCounters) {
  ReservationManager l;
  l.Configure({.threshold_ns = 60 * kS, .grace_ns = 100 * kS, .max_reservations = 1});
  EXPECT_EQ(l.View(), nullptr);
  EXPECT_TRUE(l.HasRoom());
  ASSERT_TRUE(l.Add(R("ns/g", {"b", "a"}, 500)));
  EXPECT_FALSE(l.HasRoom());
  EXPECT_FALSE(l.Add(R("ns/h", {"c"}, 10)));  // EASY: one at a time
  auto v = l.View();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->reservations[0].nodes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(v->reservations[0].expires, 600 * kS);
  EXPECT_EQ(v->node_to_reservation.count("a"), 1u);
  EXPECT_EQ(l.NextExpiry(), 600 * kS + 1);
  ASSERT_TRUE(l.HeldBy("ns/g").has_value());
  EXPECT_TRUE(l.Release("ns/g", ReleaseCause::kBound).has_value());
  EXPECT_FALSE(l.Release("ns/g", ReleaseCause::kBound).has_value());
  EXPECT_EQ(l.View(), nullptr);
  EXPECT_EQ(l.Counters().made, 1);
  EXPECT_EQ(l.Counters().released_bound, 1);
}

TEST(ReservationManagerTest, OverlappingNodesAndSecondReservationOfAGangAreRefused) {
  ReservationManager l;
  l.Configure({.threshold_ns = 1, .grace_ns = 0, .max_reservations = 3});
  ASSERT_TRUE(l.Add(R("ns/g", {"a"}, 5)));
  EXPECT_FALSE(l.Add(R("ns/h", {"a", "b"}, 5)));
  EXPECT_FALSE(l.Add(R("ns/g", {"c"}, 5)));
  EXPECT_TRUE(l.Add(R("ns/h", {"b"}, 5)));
  EXPECT_EQ(l.ActiveCount(), 2u);
}

TEST(ReservationManagerTest, SweepExpiresAfterGraceAndDropsGoneGangs) {
  ReservationManager l;
  l.Configure({.threshold_ns = 1, .grace_ns = 10 * kS, .max_reservations = 2});
  ASSERT_TRUE(l.Add(R("ns/g", {"a"}, 100)));
  ASSERT_TRUE(l.Add(R("ns/h", {"b"}, 1000)));
  auto none_gone = [](const std::string&) { return false; };
  EXPECT_TRUE(l.Sweep(110 * kS, none_gone).empty());  // expires at 110 s: still held
  auto out = l.Sweep(111 * kS, none_gone);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first.gang, "ns/g");
  EXPECT_EQ(out[0].second, ReleaseCause::kExpired);
  out = l.Sweep(111 * kS, [](const std::string& g) { return g == "ns/h"; });
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second, ReleaseCause::kGone);
  EXPECT_EQ(l.ActiveCount(), 0u);
  EXPECT_EQ(l.Counters().expired, 1);
  EXPECT_EQ(l.Counters().released_gone, 1);
}

TEST(ReservationManagerTest, TurnsGoToTheLongestWaitingLiveGang) {
  ReservationManager l;
  l.Configure({.threshold_ns = 1, .grace_ns = 0, .max_reservations = 2});
  std::set<std::string> gone;
  auto is_gone = [&](const std::string& g) { return gone.count(g) > 0; };
  EXPECT_TRUE(l.TakeTurn("ns/young", 50, is_gone));   // alone: its turn
  EXPECT_TRUE(l.TakeTurn("ns/old", 10, is_gone));     // older
  EXPECT_FALSE(l.TakeTurn("ns/young", 50, is_gone));  // now behind ns/old
  ASSERT_TRUE(l.Add(R("ns/old", {"a"}, 5)));          // a holder does not compete
  EXPECT_TRUE(l.TakeTurn("ns/young", 50, is_gone));
  EXPECT_TRUE(l.TakeTurn("ns/mid", 30, is_gone));  // older than ns/young
  EXPECT_FALSE(l.TakeTurn("ns/young", 50, is_gone));
  gone.insert("ns/mid");
  EXPECT_TRUE(l.TakeTurn("ns/young", 50, is_gone));  // ns/mid is gone: forgotten
}

}  // namespace
}  // namespace phalanx::gang
