// Ported from upstream tainttoleration/taint_toleration_test.go (TestTaintTolerationScore,
// TestTaintTolerationFilter, TestIsSchedulableAfterNodeChange,
// Test_isSchedulableAfterPodChange) and component-helpers toleration tests.
#include "plugins/tainttoleration/taint_toleration.h"

#include <gtest/gtest.h>

#include "plugins/helper/taints.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::tainttoleration {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

api::Node NodeWithTaints(const std::string& name, const std::vector<api::Taint>& taints) {
  api::Node n = NodeBuilder(name).Obj();
  n.spec.taints = taints;
  return n;
}

api::Pod PodWithTolerations(const std::string& name,
                            const std::vector<api::Toleration>& tolerations) {
  api::Pod p = PodBuilder(name).Obj();
  p.spec.tolerations = tolerations;
  return p;
}

api::Toleration Tol(std::string key, std::string op, std::string value, std::string effect) {
  api::Toleration t;
  t.key = std::move(key);
  t.op = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  return t;
}

std::unique_ptr<framework::Plugin> NewPlugin(fake::FakeHandle& h) {
  auto pl = TaintToleration::New(nullptr, h);
  EXPECT_TRUE(pl.ok());
  return std::move(pl.value());
}

TEST(TaintTolerationTest, Score) {
  struct Case {
    const char* name;
    api::Pod pod;
    std::vector<api::Node> nodes;
    std::vector<int64_t> want;
  };
  const Case cases[] = {
      {"node with taints tolerated by the pod, gets a higher score than those node with "
       "intolerable taints",
       PodWithTolerations("pod1", {Tol("foo", "Equal", "bar", "PreferNoSchedule")}),
       {NodeWithTaints("nodeA", {{"foo", "bar", "PreferNoSchedule"}}),
        NodeWithTaints("nodeB", {{"foo", "blah", "PreferNoSchedule"}})},
       {100, 0}},
      {"the nodes that all of their taints are tolerated by the pod, get the same score, no "
       "matter how many tolerable taints a node has",
       PodWithTolerations("pod1", {Tol("cpu-type", "Equal", "arm64", "PreferNoSchedule"),
                                   Tol("disk-type", "Equal", "ssd", "PreferNoSchedule")}),
       {NodeWithTaints("nodeA", {}),
        NodeWithTaints("nodeB", {{"cpu-type", "arm64", "PreferNoSchedule"}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", "PreferNoSchedule"},
                                 {"disk-type", "ssd", "PreferNoSchedule"}})},
       {100, 100, 100}},
      {"the more intolerable taints a node has, the lower score it gets.",
       PodWithTolerations("pod1", {Tol("foo", "Equal", "bar", "PreferNoSchedule")}),
       {NodeWithTaints("nodeA", {}),
        NodeWithTaints("nodeB", {{"cpu-type", "arm64", "PreferNoSchedule"}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", "PreferNoSchedule"},
                                 {"disk-type", "ssd", "PreferNoSchedule"}})},
       {100, 50, 0}},
      {"only taints and tolerations that have effect PreferNoSchedule are checked by "
       "taints-tolerations priority function",
       PodWithTolerations("pod1", {Tol("cpu-type", "Equal", "arm64", "NoSchedule"),
                                   Tol("disk-type", "Equal", "ssd", "NoSchedule")}),
       {NodeWithTaints("nodeA", {}), NodeWithTaints("nodeB", {{"cpu-type", "arm64", "NoSchedule"}}),
        NodeWithTaints("nodeC", {{"cpu-type", "arm64", "PreferNoSchedule"},
                                 {"disk-type", "ssd", "PreferNoSchedule"}})},
       {100, 100, 0}},
      {"Default behaviour No taints and tolerations, lands on node with no taints",
       PodWithTolerations("pod1", {}),
       {NodeWithTaints("nodeA", {}),
        NodeWithTaints("nodeB", {{"cpu-type", "arm64", "PreferNoSchedule"}})},
       {100, 0}},
      {"a toleration with an empty effect tolerates PreferNoSchedule taints",
       PodWithTolerations("pod1", {Tol("cpu-type", "Exists", "", "")}),
       {NodeWithTaints("nodeA", {{"cpu-type", "arm64", "PreferNoSchedule"}}),
        NodeWithTaints("nodeB", {{"disk-type", "ssd", "PreferNoSchedule"}})},
       {100, 0}},
  };
  for (const auto& c : cases) {
    fake::FakeHandle h;
    auto pl = NewPlugin(h);
    auto* ps = dynamic_cast<framework::PreScorePlugin*>(pl.get());
    auto* sp = dynamic_cast<framework::ScorePlugin*>(pl.get());
    std::vector<framework::NodeInfo> infos;
    for (const auto& n : c.nodes) infos.push_back(MakeNodeInfo(n));
    std::vector<const framework::NodeInfo*> ptrs;
    for (const auto& n : infos) ptrs.push_back(&n);
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    ASSERT_TRUE(ps->PreScore(state, *pi, ptrs).IsSuccess()) << c.name;
    std::vector<int64_t> scores;
    for (const auto& n : infos) {
      int64_t s = -1;
      ASSERT_TRUE(sp->Score(state, *pi, n, &s).IsSuccess()) << c.name;
      scores.push_back(s);
    }
    ASSERT_NE(sp->GetScoreExtensions(), nullptr);
    ASSERT_TRUE(sp->GetScoreExtensions()->NormalizeScore(state, *pi, ptrs, scores).IsSuccess());
    EXPECT_EQ(scores, c.want) << c.name;
  }
}

TEST(TaintTolerationTest, ScoreWithoutPreScoreIsAnError) {
  fake::FakeHandle h;
  auto pl = NewPlugin(h);
  auto* sp = dynamic_cast<framework::ScorePlugin*>(pl.get());
  framework::CycleState state;
  auto pi = PodBuilder("p").Info();
  auto ni = MakeNodeInfo(NodeBuilder("n").Obj());
  int64_t s = 0;
  auto st = sp->Score(state, *pi, ni, &s);
  EXPECT_EQ(st.code(), framework::Code::kError);
  EXPECT_EQ(st.Message(), "failed to read \"PreScoreTaintToleration\" from cycleState: not found");
}

TEST(TaintTolerationTest, Filter) {
  struct Case {
    const char* name;
    api::Pod pod;
    api::Node node;
    std::string want_reason;  // empty: success
  };
  const Case cases[] = {
      {"A pod having no tolerations can't be scheduled onto a node with nonempty taints",
       PodWithTolerations("pod1", {}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", "NoSchedule"}}),
       "node(s) had untolerated taint {dedicated: user1}"},
      {"A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
       PodWithTolerations("pod1", {Tol("dedicated", "", "user1", "NoSchedule")}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", "NoSchedule"}}), ""},
      {"A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
       "NoSchedule",
       PodWithTolerations("pod1", {Tol("dedicated", "Equal", "user2", "NoSchedule")}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", "NoSchedule"}}),
       "node(s) had untolerated taint {dedicated: user1}"},
      {"A pod can be scheduled onto the node, with a toleration uses operator Exists that "
       "tolerates the taints on the node",
       PodWithTolerations("pod1", {Tol("foo", "Exists", "", "NoSchedule")}),
       NodeWithTaints("nodeA", {{"foo", "bar", "NoSchedule"}}), ""},
      {"A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, "
       "pod can be scheduled onto the node",
       PodWithTolerations("pod1", {Tol("dedicated", "Equal", "user2", "NoSchedule"),
                                   Tol("foo", "Exists", "", "NoSchedule")}),
       NodeWithTaints("nodeA",
                      {{"dedicated", "user2", "NoSchedule"}, {"foo", "bar", "NoSchedule"}}),
       ""},
      {"A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
       "effect doesn't match, can't be scheduled onto the node",
       PodWithTolerations("pod1", {Tol("foo", "Equal", "bar", "PreferNoSchedule")}),
       NodeWithTaints("nodeA", {{"foo", "bar", "NoSchedule"}}),
       "node(s) had untolerated taint {foo: bar}"},
      {"The pod has a toleration that keys and values match the taint on the node, the effect of "
       "toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the "
       "node",
       PodWithTolerations("pod1", {Tol("foo", "Equal", "bar", "")}),
       NodeWithTaints("nodeA", {{"foo", "bar", "NoSchedule"}}), ""},
      {"The pod has a toleration that key and value don't match the taint on the node, but the "
       "effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
       PodWithTolerations("pod1", {Tol("dedicated", "Equal", "user2", "NoSchedule")}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", "PreferNoSchedule"}}), ""},
      {"The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can "
       "be scheduled onto the node",
       PodWithTolerations("pod1", {}),
       NodeWithTaints("nodeA", {{"dedicated", "user1", "PreferNoSchedule"}}), ""},
      {"NoExecute taints are filtered too; the first untolerated one is reported",
       PodWithTolerations("pod1", {Tol("a", "Exists", "", "NoSchedule")}),
       NodeWithTaints(
           "nodeA", {{"a", "1", "NoSchedule"}, {"b", "2", "NoExecute"}, {"c", "3", "NoSchedule"}}),
       "node(s) had untolerated taint {b: 2}"},
      {"An empty key with operator Exists tolerates every taint",
       PodWithTolerations("pod1", {Tol("", "Exists", "", "")}),
       NodeWithTaints("nodeA", {{"a", "1", "NoSchedule"}, {"b", "2", "NoExecute"}}), ""},
  };
  fake::FakeHandle h;
  auto pl = NewPlugin(h);
  auto* f = dynamic_cast<framework::FilterPlugin*>(pl.get());
  for (const auto& c : cases) {
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    auto ni = MakeNodeInfo(c.node);
    auto s = f->Filter(state, *pi, ni);
    if (c.want_reason.empty()) {
      EXPECT_TRUE(s.IsSuccess()) << c.name << ": " << s.ToString();
    } else {
      EXPECT_EQ(s.code(), framework::Code::kUnschedulableAndUnresolvable) << c.name;
      EXPECT_EQ(s.reasons(), std::vector<std::string>{c.want_reason}) << c.name;
    }
  }
}

TEST(TaintTolerationTest, ToleratesTaint) {
  const api::Taint ns{"foo", "bar", "NoSchedule"};
  const api::Taint ne{"foo", "bar", "NoExecute"};
  struct Case {
    const char* name;
    api::Toleration t;
    const api::Taint* taint;
    bool want;
  };
  const Case cases[] = {
      {"empty key with Exists and empty effect tolerates everything", Tol("", "Exists", "", ""),
       &ns, true},
      {"empty key with Exists and an effect tolerates only that effect",
       Tol("", "Exists", "", "NoSchedule"), &ne, false},
      {"empty operator means Equal", Tol("foo", "", "bar", "NoSchedule"), &ns, true},
      {"Equal with a different value", Tol("foo", "Equal", "baz", ""), &ns, false},
      {"Exists ignores the value", Tol("foo", "Exists", "", ""), &ne, true},
      {"different key", Tol("other", "Exists", "", ""), &ns, false},
      {"unknown operator tolerates nothing", Tol("foo", "Gt", "bar", ""), &ns, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(helper::ToleratesTaint(c.t, *c.taint), c.want) << c.name;
  }
}

TEST(TaintTolerationTest, IsSchedulableAfterNodeChange) {
  TaintToleration p;
  auto events = p.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[0].event.action, framework::kAdd | framework::kUpdateNodeTaint);
  const api::Pod pod =
      PodWithTolerations("pod1", {Tol("dedicated", "Equal", "user2", "NoSchedule")});
  const api::Node user1 = NodeWithTaints("nodeA", {{"dedicated", "user1", "NoSchedule"}});
  const api::Node user2 = NodeWithTaints("nodeA", {{"dedicated", "user2", "NoSchedule"}});
  const api::Node user1and3 = NodeWithTaints(
      "nodeA", {{"dedicated", "user1", "NoSchedule"}, {"dedicated", "user3", "NoSchedule"}});
  struct Case {
    const char* name;
    const api::Node* old_node;
    const api::Node* new_node;
    framework::QueueingHint want;
  };
  const Case cases[] = {
      {"skip-queue-on-untoleratedtaint-node-added", nullptr, &user1,
       framework::QueueingHint::kQueueSkip},
      {"queue-on-toleratedtaint-node-added", nullptr, &user2, framework::QueueingHint::kQueue},
      {"skip-unrelated-change", &user1, &user1and3, framework::QueueingHint::kQueueSkip},
      {"queue-on-taint-change", &user1, &user2, framework::QueueingHint::kQueue},
      {"skip-when-already-tolerated", &user2, &user2, framework::QueueingHint::kQueueSkip},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.old_node = c.old_node;
    objs.new_node = c.new_node;
    EXPECT_EQ(events[0].hint(pod, objs), c.want) << c.name;
  }
}

TEST(TaintTolerationTest, IsSchedulableAfterPodTolerationChange) {
  TaintToleration p;
  auto events = p.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[1].event.action, framework::kUpdatePodTolerations);
  const api::Pod target = PodBuilder("pod-1", "ns-1").UID("uid0").Obj();
  const api::Pod other = PodBuilder("pod-2", "ns-1").UID("uid1").Obj();
  const api::Pod self_updated =
      PodBuilder("pod-1", "ns-1").UID("uid0").Toleration("foo", "Exists", "", "NoSchedule").Obj();
  struct Case {
    const char* name;
    const api::Pod* new_pod;
    framework::QueueingHint want;
  };
  const Case cases[] = {
      {"skip-updates-other-pod", &other, framework::QueueingHint::kQueueSkip},
      {"queue-on-the-unsched-pod-updated", &self_updated, framework::QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.old_pod = &target;
    objs.new_pod = c.new_pod;
    EXPECT_EQ(events[1].hint(target, objs), c.want) << c.name;
  }
}

}  // namespace
}  // namespace phalanx::plugins::tainttoleration
