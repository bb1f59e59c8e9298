// Ported from upstream nodename/node_name_test.go, plus PreFilter and the queueing hint.
#include "plugins/nodename/node_name.h"

#include <gtest/gtest.h>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::nodename {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

TEST(NodeNameTest, PreFilterAndFilter) {
  struct Case {
    const char* name;
    api::Pod pod;
    std::string node;
    framework::Code want_code;
    bool want_all_nodes;
  };
  const Case cases[] = {
      {"no host specified", PodBuilder("pod").Obj(), "foo", framework::Code::kSuccess, true},
      {"host matches", PodBuilder("pod").NodeName("foo").Obj(), "foo", framework::Code::kSuccess,
       false},
      {"host doesn't match", PodBuilder("pod").NodeName("bar").Obj(), "foo",
       framework::Code::kUnschedulableAndUnresolvable, false},
  };
  fake::FakeHandle h;
  auto pl = NodeName::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* pf = dynamic_cast<framework::PreFilterPlugin*>(pl.value().get());
  auto* f = dynamic_cast<framework::FilterPlugin*>(pl.value().get());
  ASSERT_NE(pf, nullptr);
  ASSERT_NE(f, nullptr);
  for (const auto& c : cases) {
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    framework::PreFilterResult result;
    EXPECT_TRUE(pf->PreFilter(state, *pi, &result).IsSuccess()) << c.name;
    EXPECT_EQ(result.all_nodes, c.want_all_nodes) << c.name;
    if (!c.want_all_nodes) {
      EXPECT_EQ(result.node_names, std::set<std::string>{c.pod.spec.node_name}) << c.name;
    }
    auto ni = MakeNodeInfo(NodeBuilder(c.node).Obj());
    auto s = f->Filter(state, *pi, ni);
    EXPECT_EQ(s.code(), c.want_code) << c.name;
    if (!s.IsSuccess()) {
      EXPECT_EQ(s.reasons(),
                std::vector<std::string>{"node(s) didn't match the requested node name"});
    }
  }
}

TEST(NodeNameTest, IsSchedulableAfterNodeAdd) {
  NodeName p;
  auto events = p.EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[0].event.action, framework::kAdd);
  const api::Node foo = NodeBuilder("foo").Obj();
  struct Case {
    const char* name;
    api::Pod pod;
    framework::QueueingHint want;
  };
  const Case cases[] = {
      {"queue when the added node is the requested one", PodBuilder("p").NodeName("foo").Obj(),
       framework::QueueingHint::kQueue},
      {"skip when the added node is another one", PodBuilder("p").NodeName("bar").Obj(),
       framework::QueueingHint::kQueueSkip},
      {"queue when no node is requested", PodBuilder("p").Obj(), framework::QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.new_node = &foo;
    EXPECT_EQ(events[0].hint(c.pod, objs), c.want) << c.name;
  }
}

}  // namespace
}  // namespace phalanx::plugins::nodename
