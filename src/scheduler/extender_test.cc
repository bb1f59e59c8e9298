// The scheduling cycle with extenders (upstream schedule_one.go findNodesThatPassExtenders,
// prioritizeNodes, extendersBinding; preemption.go callExtenders), with an in-process fake
// extender. The HTTP side is tested in src/extender and by the CLI test with a python
// extender.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "framework/handle.h"
#include "scheduler/scheduler_test_env.h"

namespace phalanx::scheduler {
namespace {

class FakeExtender : public framework::Extender {
 public:
  std::string name = "http://fake";
  bool ignorable = false;
  std::set<std::string> keep;             // Filter keeps these nodes (empty: all)
  std::string fail_message;               // the reason of the dropped nodes
  std::string error;                      // Filter fails with this
  std::map<std::string, int64_t> scores;  // Prioritize
  int64_t weight = 1;
  store::Store* binder = nullptr;  // Bind through this store
  std::vector<std::string> filtered_pods, bound;
  std::set<std::string> managed;       // IsInterested
  bool preempt = false;                // ProcessPreemption keeps nothing
  bool prioritize_error = false;       // Prioritize fails
  std::set<std::string> unresolvable;  // Filter: UnschedulableAndUnresolvable nodes

  const std::string& Name() const override { return name; }
  bool IsIgnorable() const override { return ignorable; }
  bool IsInterested(const api::Pod& pod) const override {
    if (managed.empty()) return true;
    for (const auto& c : pod.spec.containers) {
      for (const auto& [r, q] : c.resources.requests) {
        if (managed.count(r)) return true;
      }
    }
    return false;
  }
  bool IsBinder() const override { return binder != nullptr; }
  bool SupportsPreemption() const override { return preempt; }
  bool IsPrioritizer() const override { return !scores.empty(); }
  api::Status Filter(const api::Pod& pod, const std::vector<const framework::NodeInfo*>& nodes,
                     framework::ExtenderFilterResult* out) override {
    filtered_pods.push_back(pod.metadata.name);
    if (!error.empty()) return absl::UnavailableError(error);
    for (const auto* ni : nodes) {
      if (unresolvable.count(ni->name())) {
        out->unresolvable[ni->name()] = "unresolvable here";
        out->failed[ni->name()] = fail_message;  // the unresolvable status wins
      } else if (keep.empty() || keep.count(ni->name())) {
        out->nodes.push_back(ni);
      } else {
        out->failed[ni->name()] = fail_message;
      }
    }
    return absl::OkStatus();
  }
  api::Status Prioritize(const api::Pod&, const std::vector<const framework::NodeInfo*>& nodes,
                         std::map<std::string, int64_t>* out, int64_t* w) override {
    if (prioritize_error) return absl::UnavailableError("prioritize down");
    for (const auto* ni : nodes)
      (*out)[ni->name()] = scores.count(ni->name()) ? scores[ni->name()] : 0;
    *w = weight;
    return absl::OkStatus();
  }
  api::Status Bind(const api::Pod& pod, const std::string& node) override {
    bound.push_back(pod.metadata.name + "->" + node);
    return binder->Bind(pod, node);
  }
  api::Status ProcessPreemption(const api::Pod&, const framework::ExtenderVictimsMap&,
                                const framework::NodeInfoLister&,
                                framework::ExtenderVictimsMap* out) override {
    out->clear();  // keeps no candidate
    return absl::OkStatus();
  }
};

std::string Node(const std::string& name, int cpu = 4) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name + "}}\nstatus:\n  capacity: {cpu: \"" +
         std::to_string(cpu) + "\", memory: 16Gi, pods: \"110\"}\n---\n";
}

std::string Pod(const std::string& name, const std::string& cpu = "1", int priority = 0,
                const std::string& extra_labels = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         ", namespace: default, labels: {app: x" + extra_labels +
         "}}\nspec:\n  priority: " + std::to_string(priority) +
         "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu +
         "\"}}}]\n---\n";
}

struct Env {
  explicit Env(std::vector<std::shared_ptr<FakeExtender>> exts) {
    SchedulerTestOptions o;
    for (auto& e : exts) o.extenders.push_back(e);
    env = std::make_unique<SchedulerTestEnv>(std::move(o));
  }
  std::unique_ptr<SchedulerTestEnv> env;
};

TEST(ExtenderTest, FilterThatKeepsOneNodeDecidesEveryPlacement) {
  auto ext = std::make_shared<FakeExtender>();
  ext->keep = {"node-b"};
  ext->fail_message = "not my node";
  Env e({ext});
  e.env->Apply(Node("node-a") + Node("node-b") + Node("node-c") + Pod("p1") + Pod("p2") +
               Pod("p3"));
  e.env->RunUntilIdle();
  for (const char* p : {"p1", "p2", "p3"}) EXPECT_EQ(e.env->NodeOf(p), "node-b") << p;
  EXPECT_EQ(ext->filtered_pods.size(), 3u);
}

TEST(ExtenderTest, FailedNodesMessagesMakeTheFitError) {
  auto ext = std::make_shared<FakeExtender>();
  ext->keep = {"none"};
  ext->fail_message = "extender says no";
  Env e({ext});
  e.env->Apply(Node("node-a") + Node("node-b") + Pod("p1"));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("p1"), "");
  auto ev = e.env->EventsOf("default/p1");
  ASSERT_FALSE(ev.empty());
  // The extender's reasons count like a plugin's; preemption then finds no victims.
  EXPECT_EQ(ev.back(),
            "FailedScheduling: 0/2 nodes are available: 2 extender says no. no new claims to "
            "deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for "
            "incoming pod.");
}

TEST(ExtenderTest, NonIgnorableErrorFailsTheCycleWithItsMessage) {
  auto ext = std::make_shared<FakeExtender>();
  ext->error =
      "Post \"http://127.0.0.1:1/filter\": dial tcp 127.0.0.1:1: connect: connection refused";
  Env e({ext});
  e.env->Apply(Node("node-a") + Pod("p1"));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("p1"), "");
  auto ev = e.env->EventsOf("default/p1");
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back(), "FailedScheduling: " + ext->error);
  auto pod = e.env->store.GetPod("default", "p1");
  ASSERT_FALSE(pod->status.conditions.empty());
  EXPECT_EQ(pod->status.conditions.back().reason, "SchedulerError");
}

TEST(ExtenderTest, IgnorableErrorIsSkipped) {
  auto broken = std::make_shared<FakeExtender>();
  broken->error = "boom";
  broken->ignorable = true;
  auto keeper = std::make_shared<FakeExtender>();
  keeper->keep = {"node-b"};
  Env e({keeper, broken});
  e.env->Apply(Node("node-a") + Node("node-b") + Pod("p1"));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("p1"), "node-b");
  EXPECT_EQ(broken->filtered_pods.size(), 1u);
}

TEST(ExtenderTest, UninterestedExtenderIsNotCalled) {
  auto ext = std::make_shared<FakeExtender>();
  ext->managed = {"example.com/foo"};
  ext->keep = {"none"};
  Env e({ext});
  e.env->Apply(Node("node-a") + Pod("p1"));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("p1"), "node-a");
  EXPECT_TRUE(ext->filtered_pods.empty());
}

TEST(ExtenderTest, PrioritizeScoresTimesWeightTimesTenDecide) {
  auto ext = std::make_shared<FakeExtender>();
  ext->scores = {{"node-c", 10}};
  ext->weight = 2;
  Env e({ext});
  e.env->Apply(Node("node-a") + Node("node-b") + Node("node-c") + Pod("p1") + Pod("p2"));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("p1"), "node-c");
  EXPECT_EQ(e.env->NodeOf("p2"), "node-c");
}

TEST(ExtenderTest, PrioritizeErrorsAreIgnored) {
  auto broken = std::make_shared<FakeExtender>();
  broken->prioritize_error = true;
  broken->scores = {{"node-a", 10}};
  broken->weight = 100;
  auto good = std::make_shared<FakeExtender>();
  good->scores = {{"node-c", 10}};
  Env e({broken, good});
  e.env->Apply(Node("node-a") + Node("node-b") + Node("node-c") + Pod("p1"));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("p1"), "node-c");
}

// FailedAndUnresolvableNodes (current upstream) take precedence over FailedNodes; such a node
// is no preemption candidate.
TEST(ExtenderTest, UnresolvableNodesAreNotPreemptionCandidates) {
  auto ext = std::make_shared<FakeExtender>();
  ext->unresolvable = {"node-a"};
  ext->fail_message = "resolvable";
  Env e({ext});
  e.env->Apply(Node("node-a", 2) + Pod("low", "2", 0));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("low"), "");  // the extender rejects node-a for every pod
  e.env->Apply(Pod("high", "1", 100));
  e.env->RunUntilIdle();
  auto ev = e.env->EventsOf("default/high");
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back(),
            "FailedScheduling: 0/1 nodes are available: 1 unresolvable here. no new claims to "
            "deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
            "scheduling.");
}

TEST(ExtenderTest, BinderExtenderBindsInsteadOfThePlugins) {
  auto ext = std::make_shared<FakeExtender>();
  Env e({ext});
  ext->binder = &e.env->store;
  e.env->Apply(Node("node-a") + Pod("p1"));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("p1"), "node-a");
  ASSERT_EQ(ext->bound.size(), 1u);
  EXPECT_EQ(ext->bound[0], "p1->node-a");
}

TEST(ExtenderTest, GangMembersArePlacedThroughTheExtenderFilter) {
  auto ext = std::make_shared<FakeExtender>();
  ext->keep = {"node-b"};
  Env e({ext});
  std::string y = Node("node-a") + Node("node-b") +
                  "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, "
                  "namespace: default}\nspec: {minMember: 3}\n---\n";
  for (int i = 0; i < 3; ++i) {
    y += Pod("g-" + std::to_string(i), "1", 0, ", scheduling.x-k8s.io/pod-group: g");
  }
  e.env->Apply(y);
  e.env->RunUntilIdle();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(e.env->NodeOf("g-" + std::to_string(i)), "node-b");
  EXPECT_GE(ext->filtered_pods.size(), 3u);
}

TEST(ExtenderTest, PreemptionExtenderThatKeepsNoCandidateStopsPreemption) {
  auto ext = std::make_shared<FakeExtender>();
  ext->preempt = true;
  Env e({ext});
  e.env->Apply(Node("node-a", 2) + Pod("low", "2", 0));
  e.env->RunUntilIdle();
  ASSERT_EQ(e.env->NodeOf("low"), "node-a");
  e.env->Apply(Pod("high", "2", 100));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("low"), "node-a");  // not evicted
  EXPECT_EQ(e.env->NominatedOf("high"), "");
}

// upstream buildExtenders: a managed resource with ignoredByScheduler: true is added to
// NodeResourcesFit's ignoredResources, so a pod asking for it fits nodes without it.
TEST(ExtenderTest, IgnoredBySchedulerResourcesAreNotCheckedByNodeResourcesFit) {
  for (bool ignored : {false, true}) {
    auto ext = std::make_shared<FakeExtender>();
    SchedulerTestOptions o;
    config::Extender cfg;
    cfg.url_prefix = "http://fake";
    cfg.managed_resources = {{"example.com/foo", ignored}};
    o.config.extenders = {cfg};
    o.extenders = {ext};
    SchedulerTestEnv env(std::move(o));
    env.Apply(Node("node-a") +
              "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\nspec:\n"
              "  containers: [{name: c, image: x, resources: {requests: {example.com/foo: \"1\"}, "
              "limits: {example.com/foo: \"1\"}}}]\n");
    env.RunUntilIdle();
    EXPECT_EQ(env.NodeOf("p1"), ignored ? "node-a" : "") << "ignoredByScheduler " << ignored;
    EXPECT_EQ(ext->filtered_pods.size(), ignored ? 1u : 0u);  // interested: it manages foo
  }
}

TEST(ExtenderTest, PreemptionWithoutPreemptExtenderStillPreempts) {
  auto ext = std::make_shared<FakeExtender>();
  Env e({ext});
  e.env->Apply(Node("node-a", 2) + Pod("low", "2", 0));
  e.env->RunUntilIdle();
  e.env->Apply(Pod("high", "2", 100));
  e.env->RunUntilIdle();
  EXPECT_EQ(e.env->NodeOf("low"), "<deleted>");
}

}  // namespace
}  // namespace phalanx::scheduler
