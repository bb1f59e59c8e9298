// Ported from upstream nodeunschedulable/node_unschedulable_test.go.
#include "plugins/nodeunschedulable/node_unschedulable.h"

#include <gtest/gtest.h>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::nodeunschedulable {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

TEST(NodeUnschedulableTest, Filter) {
  struct Case {
    const char* name;
    api::Pod pod;
    api::Node node;
    framework::Code want_code;
  };
  const Case cases[] = {
      {"Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
       PodBuilder("pod").Obj(), NodeBuilder("n").Unschedulable(true).Obj(),
       framework::Code::kUnschedulableAndUnresolvable},
      {"Schedule pod to normal node", PodBuilder("pod").Obj(),
       NodeBuilder("n").Unschedulable(false).Obj(), framework::Code::kSuccess},
      {"Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
       PodBuilder("pod").Toleration("node.kubernetes.io/unschedulable", "", "", "NoSchedule").Obj(),
       NodeBuilder("n").Unschedulable(true).Obj(), framework::Code::kSuccess},
      {"Schedule pod with Exists toleration of any key to unschedulable node",
       PodBuilder("pod").Toleration("", "Exists", "", "").Obj(),
       NodeBuilder("n").Unschedulable(true).Obj(), framework::Code::kSuccess},
      {"NoExecute toleration does not tolerate the unschedulable taint",
       PodBuilder("pod")
           .Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoExecute")
           .Obj(),
       NodeBuilder("n").Unschedulable(true).Obj(), framework::Code::kUnschedulableAndUnresolvable},
  };
  fake::FakeHandle h;
  auto pl = NodeUnschedulable::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* p = dynamic_cast<framework::FilterPlugin*>(pl.value().get());
  for (const auto& c : cases) {
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    auto ni = MakeNodeInfo(c.node);
    auto s = p->Filter(state, *pi, ni);
    EXPECT_EQ(s.code(), c.want_code) << c.name;
    if (c.want_code != framework::Code::kSuccess) {
      EXPECT_EQ(s.reasons(), std::vector<std::string>{"node(s) were unschedulable"}) << c.name;
    }
  }
}

TEST(NodeUnschedulableTest, IsSchedulableAfterNodeChange) {
  NodeUnschedulable p;
  auto events = p.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[0].event.action, framework::kAdd | framework::kUpdateNodeTaint);
  const api::Pod pod = PodBuilder("pod").Obj();
  const api::Node unsched = NodeBuilder("n").Unschedulable(true).Obj();
  const api::Node sched = NodeBuilder("n").Obj();
  const api::Node sched_tainted = NodeBuilder("n").Taint("k", "v", "NoSchedule").Obj();
  struct Case {
    const char* name;
    const api::Node* old_node;
    const api::Node* new_node;
    framework::QueueingHint want;
  };
  const Case cases[] = {
      {"skip-queue-on-unschedulable-node-added", nullptr, &unsched,
       framework::QueueingHint::kQueueSkip},
      {"queue-on-schedulable-node-added", nullptr, &sched, framework::QueueingHint::kQueue},
      {"skip-unrelated-change", &sched, &sched_tainted, framework::QueueingHint::kQueueSkip},
      {"queue-on-unschedulable-field-change", &unsched, &sched, framework::QueueingHint::kQueue},
      {"skip-on-becoming-unschedulable", &sched, &unsched, framework::QueueingHint::kQueueSkip},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.old_node = c.old_node;
    objs.new_node = c.new_node;
    EXPECT_EQ(events[0].hint(pod, objs), c.want) << c.name;
  }
}

TEST(NodeUnschedulableTest, IsSchedulableAfterPodTolerationChange) {
  NodeUnschedulable p;
  auto events = p.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[1].event.action, framework::kUpdatePodTolerations);
  const api::Pod target = PodBuilder("pod").UID("uid0").Obj();
  const api::Pod tolerating =
      PodBuilder("pod")
          .UID("uid0")
          .Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")
          .Obj();
  const api::Pod unrelated =
      PodBuilder("pod").UID("uid0").Toleration("foo", "Exists", "", "NoSchedule").Obj();
  const api::Pod other =
      PodBuilder("other")
          .UID("uid1")
          .Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")
          .Obj();
  struct Case {
    const char* name;
    const api::Pod* new_pod;
    framework::QueueingHint want;
  };
  const Case cases[] = {
      {"skip-different-pod-update", &other, framework::QueueingHint::kQueueSkip},
      {"queue-when-the-unsched-pod-gets-toleration", &tolerating, framework::QueueingHint::kQueue},
      {"skip-when-the-unsched-pod-gets-unrelated-toleration", &unrelated,
       framework::QueueingHint::kQueueSkip},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.old_pod = &target;
    objs.new_pod = c.new_pod;
    EXPECT_EQ(events[1].hint(target, objs), c.want) << c.name;
  }
}

}  // namespace
}  // namespace phalanx::plugins::nodeunschedulable
