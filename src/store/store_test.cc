// Table tests of the in-process object store (store/store.h) against what its users rely
// on, ported from client-go's fake API machinery where it has the same contract:
//   - k8s.io/client-go/testing/fixture_test.go (the ObjectTracker behind the fake
//     clientset): TestWatchCallMultipleInvocation (every watcher sees every event, in one
//     order), TestGetWithExactMatch, TestPatchWithMissingObject, and the tracker's
//     create / update / delete errors;
//   - k8s.io/client-go/tools/cache shared informers: a handler added later first gets an add
//     for every existing object;
// and the API server rules the store applies (pods/binding conflicts, Priority admission,
// resourceVersion order), cases of our own naming the rule.
#include "store/store.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace phalanx::store {
namespace {

class FixedClock final : public cluster::Clock {
 public:
  api::Timestamp Now() const override { return now; }
  api::Timestamp now = 1000;
};

api::Pod MakePod(const std::string& ns, const std::string& name) {
  api::Pod p;
  p.metadata.namespace_ = ns;
  p.metadata.name = name;
  return p;
}

api::Node MakeNode(const std::string& name) {
  api::Node n;
  n.metadata.name = name;
  return n;
}

// Every event a pod handler received, as "add ns/name", "update ns/name", "delete ns/name".
struct Recorder {
  std::vector<std::string> events;
  cluster::EventHandlers<api::Pod> Handlers() {
    cluster::EventHandlers<api::Pod> h;
    h.on_add = [this](const api::PodPtr& p) { events.push_back("add " + p->Key()); };
    h.on_update = [this](const api::PodPtr&, const api::PodPtr& p) {
      events.push_back("update " + p->Key());
    };
    h.on_delete = [this](const api::PodPtr& p) { events.push_back("delete " + p->Key()); };
    return h;
  }
};

// fixture_test.go TestWatchCallMultipleInvocation: several watchers of the same kind each
// see every event, in the order of the writes.
TEST(StoreWatch, MultipleWatchersSeeEveryEventInOrder) {
  FixedClock clock;
  Store s(clock);
  Recorder a, b;
  s.AddPodHandlers(a.Handlers());
  s.AddPodHandlers(b.Handlers());
  ASSERT_TRUE(s.CreatePod(MakePod("ns", "p1")).ok());
  ASSERT_TRUE(s.CreatePod(MakePod("ns", "p2")).ok());
  ASSERT_TRUE(s.BindPod("ns", "p1", "n1").ok());
  ASSERT_TRUE(s.DeletePod("ns", "p2").ok());
  const std::vector<std::string> want = {"add ns/p1", "add ns/p2", "update ns/p1", "delete ns/p2"};
  EXPECT_EQ(a.events, want);
  EXPECT_EQ(b.events, want);
}

// Shared informers: a handler added later first gets an add for every existing object, then
// the changes.
TEST(StoreWatch, LateHandlerGetsTheExistingObjectsFirst) {
  FixedClock clock;
  Store s(clock);
  ASSERT_TRUE(s.CreatePod(MakePod("ns", "p1")).ok());
  ASSERT_TRUE(s.CreatePod(MakePod("ns", "p2")).ok());
  ASSERT_TRUE(s.DeletePod("ns", "p1").ok());
  Recorder r;
  s.AddPodHandlers(r.Handlers());
  ASSERT_TRUE(s.CreatePod(MakePod("ns", "p3")).ok());
  EXPECT_EQ(r.events, (std::vector<std::string>{"add ns/p2", "add ns/p3"}));
  // Nodes and objects the same way.
  ASSERT_TRUE(s.CreateNode(MakeNode("n1")).ok());
  std::vector<std::string> nodes;
  cluster::EventHandlers<api::Node> nh;
  nh.on_add = [&](const api::NodePtr& n) { nodes.push_back(n->metadata.name); };
  s.AddNodeHandlers(nh);
  EXPECT_EQ(nodes, std::vector<std::string>{"n1"});
}

// A handler that writes to the store from its callback (the scheduler binding inside a pod
// event, in simulate) sees its write's event after the current one: one total order.
TEST(StoreWatch, WritesFromAHandlerAreOrderedAfterTheCurrentEvent) {
  FixedClock clock;
  Store s(clock);
  Recorder r;
  cluster::EventHandlers<api::Pod> binder;
  binder.on_add = [&](const api::PodPtr& p) {
    if (p->spec.node_name.empty()) {
      ASSERT_TRUE(s.BindPod("ns", p->metadata.name, "n1").ok());
    }
  };
  s.AddPodHandlers(binder);
  s.AddPodHandlers(r.Handlers());
  ASSERT_TRUE(s.CreatePod(MakePod("ns", "p1")).ok());
  EXPECT_EQ(r.events, (std::vector<std::string>{"add ns/p1", "update ns/p1"}));
  EXPECT_EQ(s.GetPod("ns", "p1")->spec.node_name, "n1");
}

// Every write bumps one resourceVersion for all kinds and stamps the object with it.
TEST(StoreWatch, ResourceVersionsIncreaseAcrossKinds) {
  FixedClock clock;
  Store s(clock);
  const int64_t start = s.resource_version();
  ASSERT_TRUE(s.CreatePod(MakePod("ns", "p1")).ok());
  const std::string rv1 = s.GetPod("ns", "p1")->metadata.resource_version;
  ASSERT_TRUE(s.CreateNode(MakeNode("n1")).ok());
  const std::string rv2 = s.GetNode("n1")->metadata.resource_version;
  ASSERT_TRUE(s.BindPod("ns", "p1", "n1").ok());
  const std::string rv3 = s.GetPod("ns", "p1")->metadata.resource_version;
  EXPECT_EQ(s.resource_version(), start + 3);
  EXPECT_LT(std::stoll(rv1), std::stoll(rv2));
  EXPECT_LT(std::stoll(rv2), std::stoll(rv3));
  EXPECT_EQ(std::stoll(rv3), s.resource_version());
}

// The tracker's errors, with the API server's messages and codes (store.h).
TEST(StoreWrites, Errors) {
  struct Case {
    const char* name;
    std::function<api::Status(Store&)> write;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"create an existing pod", [](Store& s) { return s.CreatePod(MakePod("ns", "web-0")); },
       absl::StatusCode::kAlreadyExists, "pods \"web-0\" already exists"},
      {"create a pod without a name", [](Store& s) { return s.CreatePod(MakePod("ns", "")); },
       absl::StatusCode::kInvalidArgument, "Pod: metadata.name: Required value"},
      {"update a missing pod", [](Store& s) { return s.UpdatePod(MakePod("ns", "nope")); },
       absl::StatusCode::kNotFound, "pods \"nope\" not found"},
      {"delete a missing pod", [](Store& s) { return s.DeletePod("ns", "nope"); },
       absl::StatusCode::kNotFound, "pods \"nope\" not found"},
      {"bind a missing pod", [](Store& s) { return s.BindPod("ns", "nope", "n1"); },
       absl::StatusCode::kNotFound, "pods \"nope\" not found"},
      {"bind a pod that already has a node (pods/binding 409 Conflict)",
       [](Store& s) {
         EXPECT_TRUE(s.BindPod("ns", "web-0", "n1").ok());
         return s.BindPod("ns", "web-0", "n2");
       },
       absl::StatusCode::kAborted,
       "Operation cannot be fulfilled on pods/binding \"web-0\": pod web-0 is already assigned "
       "to node \"n1\""},
      // TestPatchWithMissingObject.
      {"patch a missing pod",
       [](Store& s) {
         return s.PatchPodAnnotations(MakePod("ns", "nope"), {{"a", "b"}});
       },
       absl::StatusCode::kNotFound, "pods \"nope\" not found"},
      {"create an existing node",
       [](Store& s) {
         EXPECT_TRUE(s.CreateNode(MakeNode("n1")).ok());
         return s.CreateNode(MakeNode("n1"));
       },
       absl::StatusCode::kAlreadyExists, "nodes \"n1\" already exists"},
      {"delete a missing node", [](Store& s) { return s.DeleteNode("nope"); },
       absl::StatusCode::kNotFound, "nodes \"nope\" not found"},
      {"a pod naming a PriorityClass that does not exist",
       [](Store& s) {
         api::Pod p = MakePod("ns", "hi");
         p.spec.priority_class_name = "gold";
         return s.CreatePod(p);
       },
       absl::StatusCode::kInvalidArgument,
       "pods \"hi\" is forbidden: no PriorityClass with name gold was found"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FixedClock clock;
    Store s(clock);
    ASSERT_TRUE(s.CreatePod(MakePod("ns", "web-0")).ok());
    const int64_t rv = s.resource_version();
    Recorder r;
    s.AddPodHandlers(r.Handlers());
    r.events.clear();
    const bool binds_first = std::string(c.name).find("already has a node") != std::string::npos ||
                             std::string(c.name).find("existing node") != std::string::npos;
    const api::Status st = c.write(s);
    EXPECT_EQ(st.code(), c.code) << st.message();
    EXPECT_EQ(std::string(st.message()), c.message);
    // A failed write changes nothing and dispatches nothing.
    if (!binds_first) {
      EXPECT_EQ(s.resource_version(), rv);
      EXPECT_TRUE(r.events.empty());
    }
  }
}

// fixture_test.go TestGetWithExactMatch: a get names exactly one object (namespace and name).
TEST(StoreReads, GetWithExactMatch) {
  FixedClock clock;
  Store s(clock);
  ASSERT_TRUE(s.CreatePod(MakePod("ns1", "p")).ok());
  ASSERT_TRUE(s.CreatePod(MakePod("ns2", "p")).ok());
  ASSERT_NE(s.GetPod("ns1", "p"), nullptr);
  EXPECT_EQ(s.GetPod("ns1", "p")->metadata.namespace_, "ns1");
  EXPECT_EQ(s.GetPod("ns2", "p")->metadata.namespace_, "ns2");
  EXPECT_EQ(s.GetPod("ns3", "p"), nullptr);
  EXPECT_EQ(s.GetPod("ns1", "q"), nullptr);
  EXPECT_EQ(s.ListPods().size(), 2u);
}

// What creation fills in, as the API server's defaulting and admission do.
TEST(StoreWrites, CreationDefaults) {
  FixedClock clock;
  clock.now = 4242;
  Store s(clock);
  api::PriorityClass gold;
  gold.metadata.name = "gold";
  gold.value = 1000;
  gold.preemption_policy = "Never";
  ASSERT_TRUE(s.CreatePriorityClass(gold).ok());
  api::PriorityClass def;
  def.metadata.name = "default-pc";
  def.value = 7;
  def.global_default = true;
  ASSERT_TRUE(s.CreatePriorityClass(def).ok());
  struct Case {
    const char* name;
    std::string priority_class;
    int32_t want_priority;
    std::string want_policy;
  };
  const std::vector<Case> cases = {
      {"priorityClassName resolves to its value and preemptionPolicy", "gold", 1000, "Never"},
      {"no class: the global default PriorityClass", "", 7, ""},
      {"system-cluster-critical", "system-cluster-critical", 2000000000, ""},
      {"system-node-critical", "system-node-critical", 2000001000, ""},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    api::Pod p = MakePod("", "p" + std::to_string(i++));
    p.spec.priority_class_name = c.priority_class;
    ASSERT_TRUE(s.CreatePod(p).ok());
    const api::PodPtr got = s.GetPod("default", p.metadata.name);  // namespace defaults
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->spec.priority.value_or(-1), c.want_priority);
    EXPECT_EQ(got->spec.preemption_policy, c.want_policy);
    EXPECT_FALSE(got->metadata.uid.empty());
    EXPECT_EQ(got->metadata.creation_timestamp, 4242);
  }
}

// The pods/binding subresource: the node, PodScheduled=True, no nomination left.
TEST(StoreWrites, BindSetsTheNodeAndPodScheduled) {
  FixedClock clock;
  Store s(clock);
  api::Pod p = MakePod("ns", "p");
  p.status.nominated_node_name = "n9";
  p.status.conditions.push_back({"PodScheduled", "False", "Unschedulable", "0/1 nodes"});
  ASSERT_TRUE(s.CreatePod(p).ok());
  ASSERT_TRUE(s.BindPod("ns", "p", "n1").ok());
  const api::PodPtr got = s.GetPod("ns", "p");
  EXPECT_EQ(got->spec.node_name, "n1");
  EXPECT_EQ(got->status.nominated_node_name, "");
  ASSERT_EQ(got->status.conditions.size(), 1u);
  EXPECT_EQ(got->status.conditions[0].type, "PodScheduled");
  EXPECT_EQ(got->status.conditions[0].status, "True");
}

// PatchPodAnnotations dispatches an update only when an annotation changes, and rejects a
// patch for a re-created pod (another UID), as the API server's UID precondition.
TEST(StoreWrites, PatchPodAnnotations) {
  FixedClock clock;
  Store s(clock);
  ASSERT_TRUE(s.CreatePod(MakePod("ns", "p")).ok());
  Recorder r;
  s.AddPodHandlers(r.Handlers());
  r.events.clear();
  const api::PodPtr p = s.GetPod("ns", "p");
  ASSERT_TRUE(s.PatchPodAnnotations(*p, {{"a", "1"}}).ok());
  EXPECT_EQ(s.GetPod("ns", "p")->metadata.annotations.at("a"), "1");
  ASSERT_TRUE(s.PatchPodAnnotations(*p, {{"a", "1"}}).ok());  // unchanged: no event
  EXPECT_EQ(r.events, std::vector<std::string>{"update ns/p"});
  api::Pod other = *p;
  other.metadata.uid = "another";
  const api::Status st = s.PatchPodAnnotations(other, {{"a", "2"}});
  EXPECT_EQ(st.code(), absl::StatusCode::kAborted) << st.message();
}

}  // namespace
}  // namespace phalanx::store
