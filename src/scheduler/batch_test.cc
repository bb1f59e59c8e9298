// Placement batches (KEP-5598 opportunistic batching inside the PodGroup cycle): pods of
// one signature reuse the nodes filtered and scored for the first of them. The tests
// check the batch against a fresh Filter and Score pass over the same nodes, the
// signature of every default plugin, and gangs placed end to end through the store.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "api/decode.h"
#include "config/config.h"
#include "framework/clock.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_test_env.h"
#include "store/store.h"
#include "testing/builders.h"

namespace phalanx::scheduler {
namespace {

using framework::CycleState;
using framework::PodInfo;
using framework::PodInfoPtr;
using testing::NodeBuilder;
using testing::PodBuilder;

constexpr int64_t kSec = api::kNanosPerSecond;

struct Env : SchedulerTestEnv {
  explicit Env(config::KubeSchedulerConfiguration cfg = config::DefaultConfiguration(),
               framework::Registry extra = {})
      : SchedulerTestEnv({std::move(cfg), 7, std::move(extra)}) {}
  framework::Framework* fwk() { return sched->Profile("default-scheduler"); }
};

// 30 nodes (all of them are evaluated below 100 nodes) of different sizes, some with a
// PreferNoSchedule taint (TaintToleration normalizes), a zone label (preferred node
// affinity normalizes) or the pod's image (ImageLocality).
void AddMixedNodes(Env& env) {
  for (int i = 0; i < 30; ++i) {
    NodeBuilder b("n" + std::to_string(i));
    b.Capacity({{"cpu", std::to_string(4 + (i * 7) % 13)},
                {"memory", std::to_string(8 + i % 5 * 8) + "Gi"},
                {"pods", "110"}});
    b.Label("zone", i % 3 == 0 ? "a" : "b");
    // n0 is the most preferred node (both preferred terms) and fits one pod: when it is
    // dropped, NodeAffinity's maximum, and so every node's normalized score, changes.
    if (i == 0 || i % 7 == 3) b.Label("fast", "true");
    if (i == 0) b.Capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}});
    if (i % 4 == 1) b.Taint("spot", "true", "PreferNoSchedule");
    if (i % 5 == 2) b.Image("train:v1", 800LL * 1024 * 1024);
    ASSERT_TRUE(env.store.CreateNode(b.Obj()).ok());
  }
}

api::Pod TrainPod(const std::string& name) {
  return PodBuilder(name)
      .Container({{"cpu", "3"}, {"memory", "6Gi"}}, "train:v1")
      .PreferredNodeAffinity(10, "zone", {"a"})
      .PreferredNodeAffinity(20, "fast", {"true"})
      .Label("job", "train")
      .Obj();
}

// Names of the nodes where `pod` passes Filter on the current snapshot view.
std::set<std::string> FeasibleNow(Env& env, const PodInfo& pod) {
  CycleState state;
  framework::PreFilterResult pfr;
  EXPECT_TRUE(env.fwk()->RunPreFilterPlugins(state, pod, &pfr).IsSuccess());
  std::set<std::string> out;
  for (const auto* ni : env.sched->snapshot().List()) {
    if (env.fwk()->RunFilterPlugins(state, pod, *ni).IsSuccess()) out.insert(ni->name());
  }
  return out;
}

// Each pod after the first is placed from the batch; after every placement the batch's
// nodes are exactly the nodes that still fit, and its totals equal a fresh PreScore and
// Score pass of the pod over those nodes. Nodes fill up (3-cpu pods on 4- to 16-cpu
// nodes), so both ways a batch changes are taken: a node scored again and a node dropped.
TEST(PlacementBatchTest, TotalsEqualAFreshScoreOfTheBatchsNodesAfterEveryPlacement) {
  Env env;
  AddMixedNodes(env);
  env.sched->cache().UpdateSnapshot(&env.sched->snapshot());
  PlacementBatch batch;
  std::vector<PodInfoPtr> pods;  // the batch points at its canonical pod
  int full_cycles = 0;
  size_t dropped = 0;
  int placed_pods = 0;
  for (int i = 0; i < 200; ++i) {
    pods.push_back(PodInfo::Make(std::make_shared<api::Pod>(TrainPod("p" + std::to_string(i)))));
    const PodInfo& pod = *pods.back();
    const size_t before = batch.nodes.size();
    const int64_t batched_before = batch.batched_pods;
    CycleState state;
    ScheduleResult r;
    Diagnosis d;
    framework::Status st = env.sched->SchedulePod(*env.fwk(), state, pod, &r, &d, &batch);
    if (st.IsRejected()) {
      EXPECT_TRUE(FeasibleNow(env, pod).empty());  // the cluster is full
      break;
    }
    ASSERT_TRUE(st.IsSuccess()) << i << ": " << st.Message();
    ++placed_pods;
    if (batch.batched_pods == batched_before) {
      ++full_cycles;
    } else if (batch.nodes.size() < before) {
      ++dropped;
    }
    // The batch's view of the cluster is the cluster's.
    std::set<std::string> in_batch;
    for (const auto* ni : batch.nodes) in_batch.insert(ni->name());
    EXPECT_EQ(in_batch, FeasibleNow(env, pod)) << "pod " << i;
    ASSERT_EQ(batch.nodes.size(), batch.totals.size());
    CycleState fresh;
    framework::PreFilterResult pfr;
    ASSERT_TRUE(env.fwk()->RunPreFilterPlugins(fresh, pod, &pfr).IsSuccess());
    ASSERT_TRUE(env.fwk()->RunPreScorePlugins(fresh, pod, batch.nodes).IsSuccess());
    std::vector<int64_t> totals;
    ASSERT_TRUE(env.fwk()->RunScorePlugins(fresh, pod, batch.nodes, &totals).IsSuccess());
    EXPECT_EQ(totals, batch.totals) << "pod " << i;
    // The pod took a node of the highest total.
    ASSERT_EQ(batch.nodes[batch.chosen]->name(), r.suggested_host);
    EXPECT_EQ(totals[batch.chosen], *std::max_element(totals.begin(), totals.end()));
    // The caller's part: the pod is on its node before the next pod is placed.
    auto placed = std::make_shared<api::Pod>(*pod.pod);
    placed->spec.node_name = r.suggested_host;
    ASSERT_TRUE(env.sched->snapshot().AddPodToView(PodInfo::Make(placed)));
  }
  // One full pass, every other pod from its nodes until the cluster is full.
  EXPECT_GT(placed_pods, 60);
  EXPECT_EQ(full_cycles, 1);
  EXPECT_EQ(batch.batched_pods, placed_pods - 1);
  EXPECT_GT(dropped, 20u);
}

// When every node of the batch is full, the next pod is scheduled the normal way (and
// fails the normal way when nothing fits).
TEST(PlacementBatchTest, ExhaustedBatchFallsBackToAFullCycle) {
  Env env;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(env.store
                    .CreateNode(NodeBuilder("n" + std::to_string(i))
                                    .Capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}})
                                    .Obj())
                    .ok());
  }
  env.sched->cache().UpdateSnapshot(&env.sched->snapshot());
  PlacementBatch batch;
  std::vector<PodInfoPtr> pods;
  std::set<std::string> hosts;
  for (int i = 0; i < 4; ++i) {
    pods.push_back(PodBuilder("p" + std::to_string(i)).Req("cpu", "3").Info());
    CycleState state;
    ScheduleResult r;
    Diagnosis d;
    framework::Status s = env.sched->SchedulePod(*env.fwk(), state, *pods.back(), &r, &d, &batch);
    if (i < 3) {
      ASSERT_TRUE(s.IsSuccess()) << i << ": " << s.Message();
      hosts.insert(r.suggested_host);
      auto placed = std::make_shared<api::Pod>(*pods.back()->pod);
      placed->spec.node_name = r.suggested_host;
      ASSERT_TRUE(env.sched->snapshot().AddPodToView(PodInfo::Make(placed)));
    } else {
      EXPECT_TRUE(s.IsRejected());
      EXPECT_EQ(s.Message(), "0/3 nodes are available: 3 Insufficient cpu.");
      EXPECT_EQ(batch.canonical, nullptr);
    }
  }
  EXPECT_EQ(hosts.size(), 3u);
  EXPECT_EQ(batch.batched_pods, 2);
}

// Framework::SameSignature with the default profile: one field at a time makes a pod
// differ from the template, and pods that upstream marks unsignable never match.
TEST(PlacementBatchTest, DefaultPluginsSignatures) {
  Env env;
  auto* fwk = env.fwk();
  auto base = [] {
    return PodBuilder("a").Container({{"cpu", "1"}, {"memory", "1Gi"}}, "img:1").Label("app", "x");
  };
  auto a = base().Info();
  EXPECT_TRUE(fwk->SameSignature(*a, *a));
  EXPECT_TRUE(fwk->SameSignature(*a, *PodBuilder("b")
                                          .Container({{"cpu", "1"}, {"memory", "1Gi"}}, "img:1")
                                          .Label("app", "x")
                                          .Info()));
  // No pod in the cluster has affinity terms, so labels do not matter.
  EXPECT_TRUE(fwk->SameSignature(*a, *base().Label("index", "3").Info()));
  struct Case {
    const char* name;
    PodInfoPtr pod;
  };
  api::Pod pvc = base().Obj();
  pvc.spec.volumes.push_back({"data", "claim-1"});
  const Case differ[] = {
      {"requests (NodeResourcesFit)",
       PodBuilder("b").Container({{"cpu", "2"}, {"memory", "1Gi"}}, "img:1").Info()},
      {"image (ImageLocality)",
       PodBuilder("b").Container({{"cpu", "1"}, {"memory", "1Gi"}}, "img:2").Info()},
      {"toleration (TaintToleration)", base().Toleration("k", "Exists", "", "NoSchedule").Info()},
      {"nodeSelector (NodeAffinity)", base().NodeSelector({{"zone", "a"}}).Info()},
      {"preferred node affinity (NodeAffinity)",
       base().PreferredNodeAffinity(5, "zone", {"a"}).Info()},
      {"host port (NodePorts)", base().HostPort(8080).Info()},
      {"priority", base().Priority(10).Info()},
  };
  for (const auto& c : differ) {
    EXPECT_FALSE(fwk->SameSignature(*a, *c.pod)) << c.name;
    EXPECT_TRUE(fwk->SameSignature(*c.pod, *c.pod)) << c.name << " is signable";
  }
  const Case unsignable[] = {
      {"pod anti-affinity (InterPodAffinity)",
       base().PodAntiAffinityExists("app", "kubernetes.io/hostname").Info()},
      {"spread constraint (PodTopologySpread)",
       base()
           .SpreadConstraint(1, "zone", "ScheduleAnyway",
                             testing::MakeLabelSelector({{"app", "x"}}))
           .Info()},
      {"ReplicaSet owner: system default spreading (PodTopologySpread)",
       base().OwnerReference("ReplicaSet", "rs").Info()},
      {"PersistentVolumeClaim (VolumeBinding)", PodInfo::Make(std::make_shared<api::Pod>(pvc))},
  };
  for (const auto& c : unsignable) {
    EXPECT_FALSE(fwk->SameSignature(*c.pod, *c.pod)) << c.name;
    EXPECT_FALSE(fwk->SameSignature(*a, *c.pod)) << c.name;
  }
  api::Pod nominated = base().Obj();
  nominated.status.nominated_node_name = "n1";
  EXPECT_FALSE(fwk->SameSignature(*a, *PodInfo::Make(std::make_shared<api::Pod>(nominated))));
}

// Once some pod in the cluster has affinity terms, they match on labels: pods with other
// labels then differ.
TEST(PlacementBatchTest, LabelsMatterOnceAPodHasAffinityTerms) {
  Env env;
  ASSERT_TRUE(
      env.store
          .CreateNode(
              NodeBuilder("n1").Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}}).Obj())
          .ok());
  ASSERT_TRUE(env.store
                  .CreatePod(PodBuilder("web")
                                 .Req("cpu", "1")
                                 .NodeName("n1")
                                 .PodAntiAffinityIn("job", "kubernetes.io/hostname", {"train"})
                                 .Obj())
                  .ok());
  env.sched->cache().UpdateSnapshot(&env.sched->snapshot());
  auto a = PodBuilder("a").Req("cpu", "1").Label("job", "train").Info();
  EXPECT_TRUE(
      env.fwk()->SameSignature(*a, *PodBuilder("b").Req("cpu", "1").Label("job", "train").Info()));
  EXPECT_FALSE(
      env.fwk()->SameSignature(*a, *PodBuilder("b").Req("cpu", "1").Label("job", "eval").Info()));
  EXPECT_FALSE(env.fwk()->SameSignature(
      *a, *PodBuilder("b", "other").Req("cpu", "1").Label("job", "train").Info()));
}

std::string PodGroupManifest(const std::string& name, int min) {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: default}\nspec: {minMember: " + std::to_string(min) + "}\n";
}

api::Pod Member(const std::string& name, const std::string& group,
                const std::map<std::string, std::string>& req) {
  return PodBuilder(name).Label("scheduling.x-k8s.io/pod-group", group).Container(req).Obj();
}

void CreatePodGroup(Env& env, const std::string& name, int min) {
  api::Manifests m;
  std::string err;
  ASSERT_TRUE(
      api::OkOrMessage(api::DecodeManifests(PodGroupManifest(name, min), "pg.yaml", &m), &err))
      << err;
  for (auto& o : m.objects) ASSERT_TRUE(env.store.CreateObject(o).ok());
}

// A launcher and 8 one-node GPU workers: the launcher and the first worker are full
// cycles, the other 7 workers come from the first worker's batch; each worker gets its
// own node and nothing is over capacity.
TEST(PlacementBatchTest, GangOfOnePodPerNodeWorkersIsPlacedFromOneBatch) {
  Env env;
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(env.store
                    .CreateNode(NodeBuilder("g" + std::to_string(i))
                                    .Capacity({{"cpu", "64"},
                                               {"memory", "512Gi"},
                                               {"pods", "110"},
                                               {"nvidia.com/gpu", "8"}})
                                    .Obj())
                    .ok());
  }
  CreatePodGroup(env, "llm", 9);
  ASSERT_TRUE(env.store.CreatePod(Member("launcher", "llm", {{"cpu", "1"}})).ok());
  env.clock.Advance(1000);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(env.store
                    .CreatePod(Member("worker-" + std::to_string(i), "llm",
                                      {{"cpu", "32"}, {"nvidia.com/gpu", "8"}}))
                    .ok());
    env.clock.Advance(1000);
  }
  env.RunUntilIdle();
  std::set<std::string> worker_nodes;
  for (int i = 0; i < 8; ++i) {
    auto p = env.store.GetPod("default", "worker-" + std::to_string(i));
    ASSERT_FALSE(p->spec.node_name.empty()) << p->metadata.name;
    worker_nodes.insert(p->spec.node_name);
  }
  EXPECT_EQ(worker_nodes.size(), 8u);
  EXPECT_FALSE(env.store.GetPod("default", "launcher")->spec.node_name.empty());
  EXPECT_EQ(env.sched->stats().batched_placements, 7);
}

// Members with required anti-affinity on the hostname are not signable: each is placed
// by a full cycle, which sees the members placed before it.
TEST(PlacementBatchTest, AntiAffinityGangIsNotBatchedAndSpreads) {
  Env env;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(env.store
                    .CreateNode(NodeBuilder("n" + std::to_string(i))
                                    .Label("kubernetes.io/hostname", "n" + std::to_string(i))
                                    .Capacity({{"cpu", "16"}, {"memory", "64Gi"}, {"pods", "110"}})
                                    .Obj())
                    .ok());
  }
  CreatePodGroup(env, "spread", 5);
  for (int i = 0; i < 5; ++i) {
    api::Pod p = PodBuilder("m" + std::to_string(i))
                     .Label("scheduling.x-k8s.io/pod-group", "spread")
                     .Label("app", "spread")
                     .Req("cpu", "1")
                     .PodAntiAffinityIn("app", "kubernetes.io/hostname", {"spread"})
                     .Obj();
    ASSERT_TRUE(env.store.CreatePod(p).ok());
    env.clock.Advance(1000);
  }
  env.RunUntilIdle();
  std::set<std::string> nodes;
  for (int i = 0; i < 5; ++i) {
    auto p = env.store.GetPod("default", "m" + std::to_string(i));
    ASSERT_FALSE(p->spec.node_name.empty());
    nodes.insert(p->spec.node_name);
  }
  EXPECT_EQ(nodes.size(), 5u);
  EXPECT_EQ(env.sched->stats().batched_placements, 0);
}

// A Filter plugin without a signature (here an out-of-tree one) turns batching off for
// its profile; the gang is still placed, by full cycles.
class PlainFilter final : public framework::FilterPlugin {
 public:
  std::string_view Name() const override { return "PlainFilter"; }
  framework::Status Filter(const CycleState&, const PodInfo&, const framework::NodeInfo&) override {
    return framework::Status();
  }
};

TEST(PlacementBatchTest, PluginWithoutSignatureTurnsBatchingOff) {
  framework::Registry extra;
  ASSERT_TRUE(extra
                  .Register("PlainFilter",
                            [](framework::PluginArgs, framework::Handle&)
                                -> framework::StatusOr<std::unique_ptr<framework::Plugin>> {
                              return std::unique_ptr<framework::Plugin>(new PlainFilter());
                            })
                  .IsSuccess());
  auto cfg = config::DefaultConfiguration();
  cfg.profiles[0].plugins.filter.enabled.push_back({"PlainFilter", 0});
  Env env(cfg, extra);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(env.store
                    .CreateNode(NodeBuilder("n" + std::to_string(i))
                                    .Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}})
                                    .Obj())
                    .ok());
  }
  auto a = PodBuilder("a").Req("cpu", "1").Info();
  EXPECT_FALSE(env.fwk()->SameSignature(*a, *a));
  CreatePodGroup(env, "g", 4);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(env.store.CreatePod(Member("m" + std::to_string(i), "g", {{"cpu", "1"}})).ok());
    env.clock.Advance(1000);
  }
  env.RunUntilIdle();
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(env.store.GetPod("default", "m" + std::to_string(i))->spec.node_name.empty());
  }
  EXPECT_EQ(env.sched->stats().batched_placements, 0);
}

}  // namespace
}  // namespace phalanx::scheduler
