// Opportunistic batching of plain pods (KEP-5598; Scheduler::PlainBatchFor and
// NodeResultCache): a pod of the previous cycle's signature reuses the Filter verdicts and
// raw scores cached for the nodes that did not change since. The property tests schedule
// random plain-pod sequences on random clusters twice, batching on and off, with the same
// seed, and require identical placements pod by pod: small clusters (every node evaluated)
// and clusters of 100-2,000 nodes with node sampling (percentageOfNodesToScore 5-50 and
// the default adaptive percentage), where every cycle filters its own window of nodes from
// the rotating start index. Cluster changes (pods bound by others, node updates,
// deletions) are made between cycles, the same in both runs: the cache must be dropped
// for them.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"
#include "scheduler/scheduler_test_env.h"
#include "testing/builders.h"

namespace phalanx::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

struct Scenario {
  std::vector<api::Node> nodes;
  std::vector<api::Pod> pods;
  // Before pod i's cycle: a cluster change to make (index into pods -> change kind).
  std::map<size_t, int> changes;
};

api::Node RandomNode(std::mt19937_64& rng, int i, bool one_pod = false) {
  NodeBuilder b("n" + std::to_string(i));
  const uint64_t pods = 3 + rng() % 20;
  b.Capacity({{"cpu", std::to_string(2 + rng() % 14)},
              {"memory", std::to_string(4 + rng() % 5 * 8) + "Gi"},
              {"pods", one_pod ? "1" : std::to_string(pods)}});
  b.Label("zone", "z" + std::to_string(rng() % 3));
  if (rng() % 3 == 0) b.Label("fast", "true");
  if (rng() % 4 == 0) b.Taint("spot", "true", "PreferNoSchedule");
  if (rng() % 9 == 0) b.Taint("gpu", "true", "NoSchedule");
  if (rng() % 5 == 0) b.Image("train:v1", 600LL * 1024 * 1024);
  return b.Obj();
}

// Pod templates: most are signable (requests, preferred node affinity, tolerations,
// images, host ports: one pod per node, upstream's own batching case); the last two are
// not (inter-pod anti-affinity, a topology spread constraint) and break batches.
api::Pod TemplatePod(int kind, const std::string& name) {
  PodBuilder b(name);
  switch (kind) {
    case 0:
      b.Container({{"cpu", "500m"}, {"memory", "1Gi"}});
      break;
    case 1:
      b.Container({{"cpu", "2"}, {"memory", "4Gi"}}, "train:v1")
          .PreferredNodeAffinity(10, "zone", {"z0"})
          .PreferredNodeAffinity(30, "fast", {"true"});
      break;
    case 2:
      b.Container({{"cpu", "1"}, {"memory", "2Gi"}}).HostPort(8080);
      break;
    case 3:
      b.Container({{"cpu", "3"}, {"memory", "8Gi"}})
          .Toleration("gpu", "Equal", "true", "NoSchedule")
          .NodeAffinityIn("zone", {"z1", "z2"});
      break;
    case 4:
      b.Container({{"cpu", "250m"}, {"memory", "512Mi"}})
          .Label("app", "web")
          .PodAntiAffinityIn("app", "kubernetes.io/hostname", {"web"});
      break;
    default:
      b.Container({{"cpu", "250m"}, {"memory", "256Mi"}})
          .Label("app", "spread")
          .SpreadConstraint(1, "zone", "DoNotSchedule",
                            api::LabelSelector{{{"app", "spread"}}, {}});
      break;
  }
  return b.Obj();
}

// Nodes [min_nodes, max_nodes), pods [min_pods, max_pods).
struct ScenarioShape {
  int min_nodes = 3, max_nodes = 63;
  int min_pods = 20, max_pods = 100;
  bool uniform_nodes = false;     // identical nodes: every score ties, the random draw decides
  bool one_pod_per_node = false;  // every node holds one pod (upstream's batching case)
};

// Identical nodes but for the zone label.
api::Node UniformNode(int i, bool one_pod) {
  return NodeBuilder("n" + std::to_string(i))
      .Capacity({{"cpu", "4"}, {"memory", "32Gi"}, {"pods", one_pod ? "1" : "110"}})
      .Label("zone", "z" + std::to_string(i % 3))
      .Obj();
}

Scenario RandomScenario(uint64_t seed, bool with_changes, const ScenarioShape& shape = {}) {
  std::mt19937_64 rng(seed);
  Scenario sc;
  const int num_nodes =
      shape.min_nodes + static_cast<int>(rng() % (shape.max_nodes - shape.min_nodes));
  for (int i = 0; i < num_nodes; ++i) {
    sc.nodes.push_back(shape.uniform_nodes ? UniformNode(i, shape.one_pod_per_node)
                                           : RandomNode(rng, i, shape.one_pod_per_node));
  }
  const int num_pods = shape.min_pods + static_cast<int>(rng() % (shape.max_pods - shape.min_pods));
  int kind = 0;
  for (int i = 0; i < num_pods; ++i) {
    // Runs of one template (batches), broken at random.
    if (i == 0 || rng() % 4 == 0) kind = static_cast<int>(rng() % 6);
    if (kind >= 4 && rng() % 2 == 0) kind = static_cast<int>(rng() % 4);
    sc.pods.push_back(TemplatePod(kind, "p" + std::to_string(i)));
    if (with_changes && i > 0 && rng() % 6 == 0) sc.changes[i] = static_cast<int>(rng() % 4);
  }
  return sc;
}

// A change of the cluster made by someone else between two cycles.
void MakeChange(SchedulerTestEnv& env, int kind, size_t at, size_t num_nodes) {
  const std::string node = "n" + std::to_string(at * 7 % num_nodes);
  const std::string name = "other" + std::to_string(at);
  switch (kind) {
    case 0:  // a pod bound by another scheduler
      ASSERT_TRUE(env.store
                      .CreatePod(PodBuilder(name)
                                     .Container({{"cpu", "1"}, {"memory", "1Gi"}})
                                     .NodeName(node)
                                     .SchedulerName("other")
                                     .Obj())
                      .ok());
      break;
    case 1: {  // a node label change (preferred node affinity scores it differently)
      api::Node n = *env.store.GetNode(node);
      n.metadata.labels["fast"] = n.metadata.labels.count("fast") ? "no" : "true";
      ASSERT_TRUE(env.store.UpdateNode(n).ok());
      break;
    }
    case 2: {  // one of our scheduled pods deleted (frees room on its node)
      for (size_t j = at; j-- > 0;) {
        auto p = env.store.GetPod("default", "p" + std::to_string(j));
        if (p && !p->spec.node_name.empty()) {
          ASSERT_TRUE(env.store.DeletePod("default", p->metadata.name).ok());
          break;
        }
      }
      break;
    }
    default: {  // a node gets cordoned
      api::Node n = *env.store.GetNode(node);
      n.spec.unschedulable = !n.spec.unschedulable;
      ASSERT_TRUE(env.store.UpdateNode(n).ok());
      break;
    }
  }
}

struct Outcome {
  std::vector<std::string> placements;  // node per pod, "" when not scheduled
  int64_t batched = 0;
};

Outcome RunScenario(const Scenario& sc, uint64_t seed, bool batching, int binding_workers = 0,
                    int32_t percentage = 0) {
  SchedulerTestOptions o;
  o.config.percentage_of_nodes_to_score = percentage;
  o.seed = seed;
  o.opportunistic_batching = batching;
  o.binding_workers = binding_workers;
  SchedulerTestEnv env(std::move(o));
  for (const auto& n : sc.nodes) EXPECT_TRUE(env.store.CreateNode(n).ok());
  for (const auto& p : sc.pods) {
    EXPECT_TRUE(env.store.CreatePod(p).ok());
    env.clock.Advance(1'000'000);
  }
  // One cycle per pod in queue order (creation order: equal priority); changes come
  // between cycles, before the cycle of the pod they are keyed on.
  for (size_t i = 0; i < sc.pods.size(); ++i) {
    if (auto it = sc.changes.find(i); it != sc.changes.end()) {
      MakeChange(env, it->second, i, sc.nodes.size());
    }
    if (!env.sched->ScheduleOne(false)) break;
  }
  env.sched->WaitForBindings();
  Outcome out;
  for (const auto& p : sc.pods) {
    auto got = env.store.GetPod("default", p.metadata.name);
    out.placements.push_back(got ? got->spec.node_name : "<deleted>");
  }
  out.batched = env.sched->stats().batched_plain_pods;
  return out;
}

void ExpectSamePlacements(bool with_changes) {
  int64_t batched = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Scenario sc = RandomScenario(seed * 7919, with_changes);
    Outcome on = RunScenario(sc, seed, true);
    Outcome off = RunScenario(sc, seed, false);
    EXPECT_EQ(off.batched, 0);
    batched += on.batched;
    ASSERT_EQ(on.placements.size(), off.placements.size());
    for (size_t i = 0; i < on.placements.size(); ++i) {
      EXPECT_EQ(on.placements[i], off.placements[i])
          << "seed " << seed << " pod p" << i << " (" << sc.nodes.size() << " nodes, " << on.batched
          << " pods batched)";
    }
  }
  // The comparison means something only if pods were batched.
  EXPECT_GT(batched, 200);
}

TEST(PlainBatchTest, RandomSequencesPlaceAsOneByOne) { ExpectSamePlacements(false); }

TEST(PlainBatchTest, RandomSequencesWithClusterChangesPlaceAsOneByOne) {
  ExpectSamePlacements(true);
}

// With a binding pool the store's bound events (the cache's confirmations of our assumed
// pods) arrive on binding workers while the next cycles run: counted under batch_mu_ with
// the cache update, they never let a batch outlive a real change nor end it wrongly.
TEST(PlainBatchTest, RandomSequencesWithBindingPoolPlaceAsOneByOne) {
  int64_t batched = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Scenario sc = RandomScenario(seed * 104729, false);
    Outcome on = RunScenario(sc, seed, true, 2);
    Outcome off = RunScenario(sc, seed, false, 2);
    batched += on.batched;
    EXPECT_EQ(on.placements, off.placements) << "seed " << seed;
  }
  EXPECT_GT(batched, 50);
}

// Random plain-pod sequences on clusters of 100-2,000 nodes with node sampling: each cycle
// filters only its window (numFeasibleNodesToFind nodes that fit, from the rotating start
// index), so a batch that reused one pod's window for the next would place differently.
// Percentages 5-50 and 0 (the adaptive default: 50 - nodes/125, at least 5).
void ExpectSamePlacementsSampled(uint64_t salt, bool with_changes, ScenarioShape shape,
                                 int64_t min_batched, int scenarios = 8) {
  static constexpr int32_t kPercentages[] = {0, 5, 10, 30, 50, 0};
  int64_t batched = 0;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(scenarios); ++seed) {
    Scenario sc = RandomScenario(seed * salt, with_changes, shape);
    const int32_t percentage = kPercentages[(seed + salt) % 6];
    Outcome on = RunScenario(sc, seed, true, 0, percentage);
    Outcome off = RunScenario(sc, seed, false, 0, percentage);
    EXPECT_EQ(off.batched, 0);
    batched += on.batched;
    ASSERT_EQ(on.placements.size(), off.placements.size());
    int differing = 0;
    for (size_t i = 0; i < on.placements.size() && differing < 5; ++i) {
      if (on.placements[i] == off.placements[i]) continue;
      ++differing;
      ADD_FAILURE() << "seed " << seed << " pod p" << i << ": batched " << on.placements[i]
                    << ", one by one " << off.placements[i] << " (" << sc.nodes.size()
                    << " nodes, percentageOfNodesToScore " << percentage << ")";
    }
  }
  EXPECT_GT(batched, min_batched);
}

ScenarioShape LargeShape(bool uniform, bool one_pod_per_node) {
  ScenarioShape s;
  s.min_nodes = 100;
  s.max_nodes = 2001;
  s.min_pods = 150;
  s.max_pods = 400;
  s.uniform_nodes = uniform;
  s.one_pod_per_node = one_pod_per_node;
  return s;
}

TEST(PlainBatchTest, SampledNodesRandomClustersPlaceAsOneByOne) {
  ExpectSamePlacementsSampled(104723, false, LargeShape(false, false), 400);
}

TEST(PlainBatchTest, SampledNodesWithClusterChangesPlaceAsOneByOne) {
  ExpectSamePlacementsSampled(7907, true, LargeShape(false, false), 200);
}

// Identical nodes: scores tie across the window and the random draw picks; the draws must
// come in the same order and over the same ties.
TEST(PlainBatchTest, SampledUniformNodesPlaceAsOneByOne) {
  ExpectSamePlacementsSampled(3571, false, LargeShape(true, false), 600);
}

// One pod per node (upstream's own batching case): every placement fills its node, the
// next pod's window moves past it.
TEST(PlainBatchTest, SampledOnePodPerNodePlaceAsOneByOne) {
  ExpectSamePlacementsSampled(6133, false, LargeShape(true, true), 600);
  ExpectSamePlacementsSampled(9311, false, LargeShape(false, true), 300);
}

// Consecutive pods of one signature are batched; a pod of another signature, a failed
// cycle or a cluster change in between starts a new batch.
TEST(PlainBatchTest, BatchesConsecutivePodsOfOneSignatureOnly) {
  SchedulerTestEnv env;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(env.store
                    .CreateNode(NodeBuilder("n" + std::to_string(i))
                                    .Capacity({{"cpu", "8"}, {"memory", "16Gi"}, {"pods", "110"}})
                                    .Obj())
                    .ok());
  }
  auto add = [&](const std::string& name, const char* cpu) {
    ASSERT_TRUE(
        env.store.CreatePod(PodBuilder(name).Container({{"cpu", cpu}, {"memory", "1Gi"}}).Obj())
            .ok());
    env.clock.Advance(1'000'000);
  };
  for (int i = 0; i < 4; ++i) add("a" + std::to_string(i), "1");  // a0 full, a1..a3 batched
  add("b0", "2");                                                 // another signature: full
  add("b1", "2");                                                 // batched
  add("huge", "64");                                              // fails: ends the batch
  add("b2", "2");                                                 // full again
  add("b3", "2");                                                 // batched
  add("b4", "2");                                                 // after a node change: full
  add("b5", "2");                                                 // batched
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(env.sched->ScheduleOne(false));
  EXPECT_EQ(env.sched->stats().batched_plain_pods, 5);  // a1, a2, a3, b1, b3
  api::Node n = *env.store.GetNode("n3");
  n.metadata.labels["x"] = "y";
  ASSERT_TRUE(env.store.UpdateNode(n).ok());
  ASSERT_TRUE(env.sched->ScheduleOne(false));  // b4
  EXPECT_EQ(env.sched->stats().batched_plain_pods, 5);
  ASSERT_TRUE(env.sched->ScheduleOne(false));  // b5
  EXPECT_EQ(env.sched->stats().batched_plain_pods, 6);
  EXPECT_TRUE(env.store.GetPod("default", "huge")->spec.node_name.empty());
  for (const char* p : {"a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3", "b4", "b5"}) {
    EXPECT_FALSE(env.store.GetPod("default", p)->spec.node_name.empty()) << p;
  }
}

// Preemptors one after another (NodeResultCache keep_failed): nodes full of
// low-priority pods, then high-priority pods that fit nowhere until they evict. Each
// preemptor's failed cycle keeps the Filter verdicts for the next one of its signature
// across the evictions, nominations, bindings and other changes in between (pods bound by
// another scheduler, cordons, deleted pods, a pod with anti-affinity that makes verdicts
// non-local). With batching on and off the same pods must be evicted, nominated to the
// same nodes and placed on the same nodes, attempt by attempt.
struct PreemptionOutcome {
  std::vector<std::string> trace;  // after each scheduling attempt: every pod's state
  int64_t batched = 0;
};

PreemptionOutcome RunPreemptionScenario(uint64_t seed, bool batching) {
  std::mt19937_64 rng(seed);
  SchedulerTestOptions o;
  o.seed = seed;
  o.opportunistic_batching = batching;
  SchedulerTestEnv env(std::move(o));
  const int num_nodes = 8 + static_cast<int>(rng() % 40);
  std::vector<std::string> pods;
  for (int i = 0; i < num_nodes; ++i) {
    const std::string node = "n" + std::to_string(i);
    EXPECT_TRUE(env.store
                    .CreateNode(NodeBuilder(node)
                                    .Capacity({{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}})
                                    .Obj())
                    .ok());
    for (int k = 0, n = 2 + static_cast<int>(rng() % 3); k < n; ++k) {
      const std::string name = "low-" + node + "-" + std::to_string(k);
      EXPECT_TRUE(env.store
                      .CreatePod(PodBuilder(name)
                                     .Priority(static_cast<int32_t>(rng() % 3))
                                     .Req("cpu", "900m")
                                     .NodeName(node)
                                     .Obj())
                      .ok());
      pods.push_back(name);
    }
  }
  const int num_high = 10 + static_cast<int>(rng() % 30);
  for (int i = 0; i < num_high; ++i) {
    const std::string name = "high" + std::to_string(i);
    PodBuilder b(name);
    b.Priority(rng() % 8 == 0 ? 5 : 10).Req("cpu", rng() % 6 == 0 ? "2" : "3");
    if (rng() % 15 == 0)
      b.Label("app", "web").PodAntiAffinityIn("app", "kubernetes.io/hostname", {"web"});
    EXPECT_TRUE(env.store.CreatePod(b.Obj()).ok());
    pods.push_back(name);
    env.clock.Advance(1'000'000);
  }
  PreemptionOutcome out;
  auto record = [&] {
    std::string t;
    for (const auto& p : pods) t += p + "=" + env.NodeOf(p) + "/" + env.NominatedOf(p) + " ";
    out.trace.push_back(std::move(t));
  };
  for (int round = 0; round < 12; ++round) {
    for (int attempt = 0; attempt < 400; ++attempt) {
      if (rng() % 7 == 0) {
        const std::string node = "n" + std::to_string(rng() % num_nodes);
        switch (rng() % 3) {
          case 0:
            EXPECT_TRUE(env.store
                            .CreatePod(PodBuilder("other" + std::to_string(round) + "-" +
                                                  std::to_string(attempt))
                                           .Req("cpu", "300m")
                                           .NodeName(node)
                                           .SchedulerName("other")
                                           .Obj())
                            .ok());
            break;
          case 1: {
            api::Node n = *env.store.GetNode(node);
            n.spec.unschedulable = !n.spec.unschedulable;
            EXPECT_TRUE(env.store.UpdateNode(n).ok());
            break;
          }
          default:
            (void)env.store.DeletePod("default", "low-" + node + "-0");
            break;
        }
      }
      env.sched->Tick();
      if (!env.sched->ScheduleOne(false)) break;
      record();
    }
    env.AdvanceAndRun(20 * api::kNanosPerSecond);
    record();
  }
  out.batched = env.sched->stats().batched_plain_pods;
  return out;
}

TEST(PlainBatchTest, PreemptorsOneAfterAnotherAsWithoutBatching) {
  size_t evicted = 0, placed = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    PreemptionOutcome on = RunPreemptionScenario(seed * 31337, true);
    PreemptionOutcome off = RunPreemptionScenario(seed * 31337, false);
    EXPECT_EQ(off.batched, 0);
    ASSERT_FALSE(on.trace.empty());
    const std::string& last = on.trace.back();
    for (size_t at = 0; (at = last.find("=<deleted>", at)) != std::string::npos; ++at) ++evicted;
    for (size_t at = 0; (at = last.find("high", at)) != std::string::npos; ++at) {
      const size_t eq = last.find('=', at);
      if (eq != std::string::npos && last[eq + 1] == 'n') ++placed;
    }
    ASSERT_EQ(on.trace.size(), off.trace.size()) << "seed " << seed;
    for (size_t i = 0; i < on.trace.size(); ++i) {
      ASSERT_EQ(on.trace[i], off.trace[i]) << "seed " << seed << " attempt " << i;
    }
  }
  // The comparison means something only if preemptors evicted and were placed.
  EXPECT_GT(evicted, 100u);
  EXPECT_GT(placed, 100u);
}

}  // namespace
}  // namespace phalanx::scheduler
