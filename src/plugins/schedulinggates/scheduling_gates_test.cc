// Ported from upstream schedulinggates/scheduling_gates_test.go.
#include "plugins/schedulinggates/scheduling_gates.h"

#include <gtest/gtest.h>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::schedulinggates {
namespace {

using phalanx::testing::PodBuilder;

TEST(SchedulingGatesTest, PreEnqueue) {
  struct Case {
    const char* name;
    api::PodPtr pod;
    framework::Code want_code;
    std::vector<std::string> want_reasons;
  };
  const Case cases[] = {
      {"pod does not carry scheduling gates",
       PodBuilder("pod").Ptr(),
       framework::Code::kSuccess,
       {}},
      {"pod carries scheduling gates",
       PodBuilder("pod").SchedulingGate("foo").SchedulingGate("bar").Ptr(),
       framework::Code::kUnschedulableAndUnresolvable,
       {"waiting for scheduling gates: [foo bar]"}},
      {"pod carries one scheduling gate",
       PodBuilder("pod").SchedulingGate("example.com/x").Ptr(),
       framework::Code::kUnschedulableAndUnresolvable,
       {"waiting for scheduling gates: [example.com/x]"}},
  };
  fake::FakeHandle h;
  auto pl = SchedulingGates::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* p = dynamic_cast<SchedulingGates*>(pl.value().get());
  for (const auto& c : cases) {
    auto s = p->PreEnqueue(*framework::PodInfo::Make(c.pod));
    EXPECT_EQ(s.code(), c.want_code) << c.name;
    EXPECT_EQ(s.reasons(), c.want_reasons) << c.name;
  }
}

TEST(SchedulingGatesTest, EventsAndHint) {
  SchedulingGates p;
  auto events = p.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[0].event.action, framework::kUpdatePodSchedulingGatesEliminated);
  ASSERT_TRUE(events[0].hint);

  const api::Pod target = PodBuilder("pod").UID("uid0").SchedulingGate("foo").Obj();
  const api::Pod old_self = target;
  const api::Pod new_self = PodBuilder("pod").UID("uid0").Obj();
  const api::Pod new_other = PodBuilder("other").UID("uid1").Obj();
  struct Case {
    const char* name;
    const api::Pod* old_pod;
    const api::Pod* new_pod;
    framework::QueueingHint want;
  };
  const Case cases[] = {
      {"queue when the gates of the pod itself are eliminated", &old_self, &new_self,
       framework::QueueingHint::kQueue},
      {"skip when another pod's gates are eliminated", &new_other, &new_other,
       framework::QueueingHint::kQueueSkip},
      {"queue on a malformed event (no new object)", &old_self, nullptr,
       framework::QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.old_pod = c.old_pod;
    objs.new_pod = c.new_pod;
    EXPECT_EQ(events[0].hint(target, objs), c.want) << c.name;
  }
}

}  // namespace
}  // namespace phalanx::plugins::schedulinggates
