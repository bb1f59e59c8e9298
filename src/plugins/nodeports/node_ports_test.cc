// Ported from upstream nodeports/node_ports_test.go (TestNodePorts,
// Test_isSchedulableAfterPodDeleted) and framework HostPortInfo conflict tests.
#include "plugins/nodeports/node_ports.h"

#include <gtest/gtest.h>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::nodeports {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

// newPod("m1", "UDP/127.0.0.1/8080", ...) as upstream: "protocol/hostIP/hostPort".
api::Pod NewPod(const std::string& node, const std::vector<std::string>& port_infos,
                const std::string& name = "pod") {
  PodBuilder b(name);
  b.NodeName(node);
  for (const auto& info : port_infos) {
    const size_t a = info.find('/'), z = info.rfind('/');
    b.HostPort(std::stoi(info.substr(z + 1)), info.substr(0, a), info.substr(a + 1, z - a - 1));
  }
  return b.Obj();
}

TEST(NodePortsTest, PreFilterAndFilter) {
  struct Case {
    const char* name;
    api::Pod pod;
    std::vector<api::Pod> existing;
    framework::Code want_prefilter;
    framework::Code want_filter;
  };
  using C = framework::Code;
  const Case cases[] = {
      {"skip filter", PodBuilder("p").Obj(), {}, C::kSkip, C::kSuccess},
      {"other port",
       NewPod("m1", {"UDP/127.0.0.1/8080"}),
       {NewPod("m1", {"UDP/127.0.0.1/9090"}, "e")},
       C::kSuccess,
       C::kSuccess},
      {"same udp port",
       NewPod("m1", {"UDP/127.0.0.1/8080"}),
       {NewPod("m1", {"UDP/127.0.0.1/8080"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
      {"same tcp port",
       NewPod("m1", {"TCP/127.0.0.1/8080"}),
       {NewPod("m1", {"TCP/127.0.0.1/8080"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
      {"different host ip",
       NewPod("m1", {"TCP/127.0.0.1/8080"}),
       {NewPod("m1", {"TCP/127.0.0.2/8080"}, "e")},
       C::kSuccess,
       C::kSuccess},
      {"different protocol",
       NewPod("m1", {"UDP/127.0.0.1/8080"}),
       {NewPod("m1", {"TCP/127.0.0.1/8080"}, "e")},
       C::kSuccess,
       C::kSuccess},
      {"second udp port conflict",
       NewPod("m1", {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"}),
       {NewPod("m1", {"UDP/127.0.0.1/8080"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
      {"first tcp port conflict",
       NewPod("m1", {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"}),
       {NewPod("m1", {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
      {"first tcp port conflict due to 0.0.0.0 hostIP",
       NewPod("m1", {"TCP/0.0.0.0/8001"}),
       {NewPod("m1", {"TCP/127.0.0.1/8001"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP",
       NewPod("m1", {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"}),
       {NewPod("m1", {"TCP/127.0.0.1/8001"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
      {"second tcp port conflict to 0.0.0.0 hostIP",
       NewPod("m1", {"TCP/127.0.0.1/8001"}),
       {NewPod("m1", {"TCP/0.0.0.0/8001"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
      {"second different protocol",
       NewPod("m1", {"UDP/127.0.0.1/8001"}),
       {NewPod("m1", {"TCP/0.0.0.0/8001"}, "e")},
       C::kSuccess,
       C::kSuccess},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP",
       NewPod("m1", {"UDP/127.0.0.1/8001"}),
       {NewPod("m1", {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
      {"empty hostIP is the wildcard",
       NewPod("m1", {"TCP//8001"}),
       {NewPod("m1", {"TCP/10.1.1.1/8001"}, "e")},
       C::kSuccess,
       C::kUnschedulable},
  };
  fake::FakeHandle h;
  auto pl = NodePorts::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* pf = dynamic_cast<framework::PreFilterPlugin*>(pl.value().get());
  auto* f = dynamic_cast<framework::FilterPlugin*>(pl.value().get());
  for (const auto& c : cases) {
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    framework::PreFilterResult result;
    auto ps = pf->PreFilter(state, *pi, &result);
    EXPECT_EQ(ps.code(), c.want_prefilter) << c.name;
    EXPECT_TRUE(result.all_nodes) << c.name;
    if (ps.IsSkip()) continue;
    auto ni = MakeNodeInfo(NodeBuilder("m1").Obj(), c.existing);
    auto s = f->Filter(state, *pi, ni);
    EXPECT_EQ(s.code(), c.want_filter) << c.name;
    if (!s.IsSuccess()) {
      EXPECT_EQ(s.reasons(), std::vector<std::string>{
                                 "node(s) didn't have free ports for the requested pod ports"});
    }
  }
}

TEST(NodePortsTest, GetHostPortsIncludesSidecars) {
  api::Pod pod = NewPod("", {"TCP/1.2.3.4/80"});
  api::Container init;
  init.ports.push_back({"", 81, 81, "UDP", ""});
  pod.spec.init_containers.push_back(init);  // not restartable: ignored
  init.restart_policy = "Always";
  init.ports[0].host_port = 82;
  pod.spec.init_containers.push_back(init);  // sidecar: counted
  const auto ports = GetHostPorts(pod);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0], (framework::HostPort{"0.0.0.0", "UDP", 82}));
  EXPECT_EQ(ports[1], (framework::HostPort{"1.2.3.4", "TCP", 80}));
}

TEST(NodePortsTest, IsSchedulableAfterPodDeleted) {
  NodePorts p;
  auto events = p.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[0].event.action, framework::kDelete);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[1].event.action, framework::kAdd);
  EXPECT_FALSE(events[1].hint);

  const api::Pod pod = NewPod("", {"TCP/0.0.0.0/8080"}, "target");
  api::Pod nominated = NewPod("", {"TCP/0.0.0.0/8080"}, "nominated");
  nominated.status.nominated_node_name = "fake-node";
  struct Case {
    const char* name;
    api::Pod deleted;
    framework::QueueingHint want;
  };
  const Case cases[] = {
      {"skip-queue-on-unscheduled", NewPod("", {"TCP/0.0.0.0/8080"}, "p"),
       framework::QueueingHint::kQueueSkip},
      {"skip-queue-on-non-hostport", NewPod("fake-node", {}, "p"),
       framework::QueueingHint::kQueueSkip},
      {"skip-queue-on-unrelated-hostport", NewPod("fake-node", {"TCP/0.0.0.0/8081"}, "p"),
       framework::QueueingHint::kQueueSkip},
      {"queue-on-released-hostport", NewPod("fake-node", {"TCP/0.0.0.0/8080"}, "p"),
       framework::QueueingHint::kQueue},
      {"queue-on-nominated-pod-deleted", nominated, framework::QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.old_pod = &c.deleted;
    EXPECT_EQ(events[0].hint(pod, objs), c.want) << c.name;
  }
}

}  // namespace
}  // namespace phalanx::plugins::nodeports
