// GangReservation (gang_reservation.h): args, and the Filter's backfill rule on a reserved
// node — the reserving gang passes, a pod ending before the forecast start backfills, a pod
// ending after it or of unknown runtime does not; other nodes stay open.
#include "plugins/gangreservation/gang_reservation.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>

#include "gang/default_podgroup_manager.h"
#include "plugins/testing_fake_handle.h"

namespace phalanx::plugins::gangreservation {
namespace {

using framework::Code;
constexpr int64_t kS = api::kNanosPerSecond;

// GangReservation::New with args from YAML text (kept alive for the call).
framework::StatusOr<std::unique_ptr<framework::Plugin>> NewWith(const std::string& yaml,
                                                                framework::Handle& h) {
  const YAML::Node args = YAML::Load(yaml);
  return GangReservation::New(&args, h);
}

// A pod (gang members are made known to `gangs`, as the scheduler's handlers would).
framework::PodInfoPtr Pod(const std::string& name, const std::string& gang, int64_t runtime_s,
                          gang::DefaultPodGroupManager* gangs = nullptr) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.namespace_ = "ns";
  p->metadata.name = name;
  if (!gang.empty()) {
    p->metadata.annotations["gang.scheduling.koordinator.sh/name"] = gang;
    p->metadata.annotations["gang.scheduling.koordinator.sh/min-available"] = "2";
  }
  if (runtime_s > 0) {
    p->metadata.annotations[std::string(gang::kExpectedRuntimeAnnotation)] =
        std::to_string(runtime_s);
  }
  if (gangs) gangs->OnPodAdd(p, 0);
  return framework::PodInfo::Make(p);
}

framework::NodeInfo NodeNamed(const std::string& name) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = name;
  return framework::NodeInfo(n);
}

TEST(GangReservationTest, ArgsConfigureTheReservationManagerAndAreValidated) {
  fake::FakeHandle h;
  gang::ReservationManager ledger;
  h.services().Provide<gang::ReservationManager>(&ledger);
  ASSERT_TRUE(GangReservation::New(nullptr, h).ok());
  EXPECT_EQ(ledger.Settings().threshold_ns, 300 * kS);  // the default
  ASSERT_TRUE(NewWith("{reservationThresholdSeconds: 0}", h).ok());
  EXPECT_FALSE(ledger.Settings().enabled());
  ASSERT_TRUE(NewWith("{reservationThresholdSeconds: 60, reservationGraceSeconds: "
                      "5, maxReservations: 2, minMembers: 3}",
                      h)
                  .ok());
  auto s = ledger.Settings();
  EXPECT_EQ(s.threshold_ns, 60 * kS);
  EXPECT_EQ(s.grace_ns, 5 * kS);
  EXPECT_EQ(s.max_reservations, 2);
  EXPECT_EQ(s.min_members, 3);
  EXPECT_EQ(s.preempt_after_ns, 0);  // eviction off by default
  EXPECT_FALSE(s.evicts());
  ASSERT_TRUE(NewWith("{reservationThresholdSeconds: 60, preemptAfterSeconds: 3600}", h).ok());
  EXPECT_EQ(ledger.Settings().preempt_after_ns, 3600 * kS);
  EXPECT_TRUE(ledger.Settings().evicts());
  // Eviction needs reservations: with threshold 0 nothing is reserved, so nothing evicts.
  ASSERT_TRUE(NewWith("{reservationThresholdSeconds: 0, preemptAfterSeconds: 3600}", h).ok());
  EXPECT_FALSE(ledger.Settings().evicts());
  auto neg = NewWith("{preemptAfterSeconds: -5}", h);
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.status().Message(),
            "GangReservationArgs: preemptAfterSeconds: Invalid value: -5: must be greater than "
            "or equal to 0");
  auto bad = NewWith("{maxReservations: 0}", h);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().Message(),
            "GangReservationArgs: maxReservations: Invalid value: 0: must be greater than or "
            "equal to 1");
  EXPECT_FALSE(NewWith("{reservationThresholdSeconds: -1}", h).ok());
  EXPECT_FALSE(NewWith("{reservationGraceSeconds: soon}", h).ok());
  // A misspelt field is an error naming it, not a silently ignored setting.
  auto typo = NewWith("{reservationTresholdSeconds: 60}", h);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().Message().find("reservationTresholdSeconds"), std::string::npos)
      << typo.status().Message();
}

TEST(GangReservationTest, FilterKeepsReservedNodesForTheGangAndBackfill) {
  fake::FakeHandle h;
  gang::ReservationManager ledger;
  gang::DefaultPodGroupManager gangs;
  h.services().Provide<gang::ReservationManager>(&ledger);
  h.services().Provide<gang::PodGroupManager>(&gangs);
  auto made = NewWith("{reservationThresholdSeconds: 60}", h);
  ASSERT_TRUE(made.ok());
  auto* pl = dynamic_cast<GangReservation*>(made.value().get());
  h.fake_clock().now = 100 * kS;
  const auto a = NodeNamed("a"), b = NodeNamed("b");

  // No reservation: every pod skips the Filter.
  framework::CycleState st0;
  framework::PreFilterResult r;
  EXPECT_EQ(pl->PreFilter(st0, *Pod("p", "", 0), &r).code(), Code::kSkip);

  gang::Reservation res;
  res.gang = "ns/big";
  res.gangs = {"ns/big"};
  res.nodes = {"a"};
  res.forecast_start = 1000 * kS;
  ASSERT_TRUE(ledger.Add(res));

  struct Case {
    const char* name;
    framework::PodInfoPtr pod;
    bool barred;
  };
  const Case cases[] = {
      {"member of the reserving gang", Pod("big-0", "big", 5000, &gangs), false},
      {"ends before the forecast start (backfill)", Pod("short", "", 900), false},
      {"ends after the forecast start", Pod("long", "", 901), true},
      {"unknown runtime", Pod("unknown", "", 0), true},
      {"member of another gang", Pod("other-0", "other", 5000, &gangs), true},
  };
  for (const auto& c : cases) {
    framework::CycleState st;
    const auto ps = pl->PreFilter(st, *c.pod, &r);
    if (!c.barred) {
      EXPECT_EQ(ps.code(), Code::kSkip) << c.name;
      continue;
    }
    ASSERT_TRUE(ps.IsSuccess()) << c.name;
    const auto fa = pl->Filter(st, *c.pod, a);
    EXPECT_EQ(fa.code(), Code::kUnschedulableAndUnresolvable) << c.name;
    EXPECT_EQ(fa.reasons(),
              std::vector<std::string>{"node(s) reserved for gang ns/big from "
                                       "1970-01-01T00:16:40Z (backfill only for pods ending "
                                       "before it)"})
        << c.name;
    EXPECT_TRUE(pl->Filter(st, *c.pod, b).IsSuccess()) << c.name;
  }
  // Batching: same gang and runtime give the same verdicts.
  EXPECT_TRUE(pl->SameSignature(*Pod("x", "", 10), *Pod("y", "", 10)));
  EXPECT_FALSE(pl->SameSignature(*Pod("x", "", 10), *Pod("y", "", 2000)));
  EXPECT_FALSE(pl->SameSignature(*Pod("big-1", "big", 10, &gangs), *Pod("y", "", 10)));
}

}  // namespace
}  // namespace phalanx::plugins::gangreservation
