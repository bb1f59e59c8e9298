// Queue reclaim through the verified path of gang preemption ("Reclaim"): a queue
// under its deserved share evicts pods of queues above theirs only when the whole reclaiming
// gang fits on the cluster with those victims gone
// (src/plugins/defaultpreemption/podgroup_preemption.h, src/plugins/queues/queues.h), and never
// takes a victim queue below its guarantee.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

SimulationOptions Options(uint64_t seed = 1) {
  SimulationOptions o;
  o.seed = seed;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  return o;
}

api::Status Load(const std::string& name, const std::string& yaml, Scenario* sc) {
  const auto path =
      std::filesystem::path(::testing::TempDir()) / ("queue_reclaim_test_" + name + ".yaml");
  std::ofstream(path) << yaml;
  return LoadManifestScenario(path.string(), sc);
}

// Nodes `prefix`0 ... of 8 GPUs and 32 CPUs, labelled pool=`pool` when given.
std::string Nodes(const std::string& prefix, int n, const std::string& pool = "") {
  std::ostringstream o;
  for (int i = 0; i < n; ++i) {
    o << "apiVersion: v1\nkind: Node\nmetadata: {name: " << prefix << i;
    if (!pool.empty()) o << ", labels: {pool: " << pool << "}";
    o << "}\nstatus: {capacity: {cpu: \"32\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: "
         "\"8\"}}\n---\n";
  }
  return o.str();
}

// A Volcano queue; `extra` is appended to its spec (e.g. ", reclaimable: false").
std::string Queue(const std::string& name, int guarantee_gpus, const std::string& extra = "") {
  std::string s =
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " + name +
      "}\nspec: {weight: 1";
  if (guarantee_gpus > 0) {
    s += ", guarantee: {resource: {nvidia.com/gpu: \"" + std::to_string(guarantee_gpus) + "\"}}";
  }
  return s + extra + "}\n---\n";
}

// A pod of `gpus` GPUs and one CPU in `queue`, arriving at `arrival` s, in the KAI PodGroup
// `group` when not empty, with nodeSelector pool=`pool` when not empty; runs until the end.
std::string Pod(const std::string& name, const std::string& queue, int gpus, double arrival,
                const std::string& group = "", const std::string& pool = "", int priority = 0) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " << name
    << "\n  namespace: default\n  labels: {kai.scheduler/queue: " << queue << "}\n"
    << "  annotations: {simulation.phalanx.dev/arrival-seconds: \"" << arrival << "\"";
  if (!group.empty()) o << ", pod-group-name: " << group;
  o << "}\nspec:\n  priority: " << priority << "\n";
  if (!pool.empty()) o << "  nodeSelector: {pool: " << pool << "}\n";
  o << "  containers:\n  - {name: c, image: x, resources: {requests: {cpu: \"1\", "
       "nvidia.com/gpu: \""
    << gpus << "\"}}}\n---\n";
  return o.str();
}

// A KAI PodGroup of `pods` pods of `gpus` GPUs in `queue`.
std::string Gang(const std::string& name, const std::string& queue, int pods, int gpus,
                 double arrival, const std::string& pool = "", int priority = 0) {
  std::string s =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
      ", namespace: default}\nspec: {minMember: " + std::to_string(pods) + ", queue: " + queue +
      "}\n---\n";
  for (int k = 0; k < pods; ++k) {
    s += Pod(name + "-" + std::to_string(k), queue, gpus, arrival, name, pool, priority);
  }
  return s;
}

struct Counts {
  int bound = 0;      // on a node at the end
  int preempted = 0;  // evicted (a "Preempted" event: priority preemption or reclaim)
};

Counts CountPrefix(const SimulationResult& r, const std::string& prefix) {
  Counts c;
  for (const auto& o : r.outcomes) {
    if (!o.pod.starts_with("default/" + prefix)) continue;
    if (!o.node.empty() && !o.deleted_s && !o.preempted) ++c.bound;
    if (o.preempted) ++c.preempted;
  }
  return c;
}

// Must-show ("Reclaim: the old failure"): 4 nodes of 8 GPUs, a0 a1 labelled
// pool=a and b0 b1 pool=b. Queue `fixed` (guarantee 16 GPUs, not reclaimable) runs two
// 8-GPU pods on pool a; queue `borrower` (no guarantee) runs two 8-GPU pods on pool b. Queue
// `train` (guarantee 16 GPUs) then submits a gang of 2 x 8 GPUs that must run on pool a.
// `train` is under its deserved share (16) and `borrower` above its (0), so by queue
// accounting reclaim applies, and the borrower's pods would free 16 GPUs — but on pool b,
// where the gang cannot run. No pod may be evicted: the gang stays pending with a reason
// that says reclaim would not make room for it.
TEST(QueueReclaimSimTest, NoEvictionWhenReclaimWouldNotLetTheGangFit) {
  Scenario sc;
  ASSERT_EQ(
      Load("unusable",
           Nodes("a", 2, "a") + Nodes("b", 2, "b") + Queue("train", 16) +
               Queue("fixed", 16, ", reclaimable: false") + Queue("borrower", 0) +
               Pod("fixed-0", "fixed", 8, 0, "", "a") + Pod("fixed-1", "fixed", 8, 0, "", "a") +
               Pod("borrow-0", "borrower", 8, 0, "", "b") +
               Pod("borrow-1", "borrower", 8, 0, "", "b") + Gang("train", "train", 2, 8, 10, "a"),
           &sc),
      absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  std::printf("%s", FormatSummary(r).c_str());
  EXPECT_EQ(r.preemption_victims, 0) << "reclaim evicted pods and the gang still does not fit";
  EXPECT_EQ(CountPrefix(r, "borrow-").bound, 2);
  EXPECT_EQ(CountPrefix(r, "borrow-").preempted, 0);
  EXPECT_EQ(CountPrefix(r, "fixed-").bound, 2);
  EXPECT_EQ(CountPrefix(r, "train-").bound, 0);
  bool reason_given = false;
  for (const auto& [reason, n] : r.pending_reasons) {
    if (reason.find("reclaim would not make room for the whole gang") != std::string::npos) {
      reason_given = true;
      EXPECT_EQ(n, 2u) << reason;
    }
  }
  EXPECT_TRUE(reason_given) << FormatSummary(r);
}

// Verified reclaim does evict, and the gang binds: 4 nodes of 8 GPUs, queue `borrower` runs
// eight 4-GPU pods, two on every node (the newest four one per node). Queue `train`
// (guarantee 16) submits a gang of 2 x 8 GPUs. Reclaim by queue accounting alone took the
// four newest pods — 4 GPUs on each node, room for no member. The verified search evicts
// four pods too (the borrower keeps its deserved 16), but two whole nodes of them, and the
// gang binds there; the victims get the reclaim event (counted as preemption victims).
TEST(QueueReclaimSimTest, ReclaimEvictsWholeNodesAndTheGangBinds) {
  std::string yaml = Nodes("n", 4) + Queue("train", 16) + Queue("borrower", 0);
  for (int i = 0; i < 8; ++i) yaml += Pod("borrow-" + std::to_string(i), "borrower", 4, i * 0.01);
  yaml += Gang("train", "train", 2, 8, 10);
  Scenario sc;
  ASSERT_EQ(Load("scattered", yaml, &sc), absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  std::printf("%s", FormatSummary(r).c_str());
  EXPECT_EQ(CountPrefix(r, "train-").bound, 2) << FormatSummary(r);
  EXPECT_EQ(r.preemption_victims, 4);
  EXPECT_EQ(CountPrefix(r, "borrow-").preempted, 4);
  EXPECT_EQ(CountPrefix(r, "borrow-").bound, 4);
  // The gang's nodes hold nothing of the borrower: the victims were two whole nodes.
  std::set<std::string> gang_nodes;
  for (const auto& o : r.outcomes) {
    if (o.pod.starts_with("default/train-")) gang_nodes.insert(o.node);
  }
  EXPECT_EQ(gang_nodes.size(), 2u);
  for (const auto& o : r.outcomes) {
    if (o.pod.starts_with("default/borrow-") && !o.preempted) {
      EXPECT_EQ(gang_nodes.count(o.node), 0u) << o.pod << " shares " << o.node << " with the gang";
    }
  }
}

// A single pod (Queues' PostFilter) is verified too, by DefaultPreemption's per-node dry
// run: the pod of queue `train` must run on pool a, the borrower's pods are on pool b.
// Nothing is evicted, and the reason says why.
TEST(QueueReclaimSimTest, SinglePodNoEvictionWhenReclaimWouldNotLetItFit) {
  Scenario sc;
  ASSERT_EQ(Load("single-unusable",
                 Nodes("a", 1, "a") + Nodes("b", 1, "b") + Queue("train", 8) +
                     Queue("fixed", 8, ", reclaimable: false") + Queue("borrower", 0) +
                     Pod("fixed-0", "fixed", 8, 0, "", "a") +
                     Pod("borrow-0", "borrower", 8, 0, "", "b") + Pod("w", "train", 8, 10, "", "a"),
                 &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  std::printf("%s", FormatSummary(r).c_str());
  EXPECT_EQ(r.preemption_victims, 0);
  EXPECT_EQ(CountPrefix(r, "borrow-").bound, 1);
  EXPECT_EQ(CountPrefix(r, "w").bound, 0);
  std::string reason;  // the pod's last failure message (its FailedScheduling event)
  for (const auto& o : r.outcomes) {
    if (o.pod == "default/w") reason = o.reason;
  }
  std::printf("w: %s\n", reason.c_str());
  EXPECT_NE(reason.find("reclaim for queue train would not make room for the pod (1 "
                        "reclaimable pods considered)"),
            std::string::npos)
      << reason;
}

// A single pod that needs 8 GPUs on one node, two nodes each holding two 4-GPU pods of the
// borrower: reclaim evicts the two pods of one node (not the two newest, one per node), and
// the pod binds there.
TEST(QueueReclaimSimTest, SinglePodReclaimEvictsOneNodeAndBinds) {
  std::string yaml = Nodes("n", 2) + Queue("train", 8) + Queue("borrower", 0);
  for (int i = 0; i < 4; ++i) yaml += Pod("borrow-" + std::to_string(i), "borrower", 4, i * 0.01);
  yaml += Pod("w", "train", 8, 10);
  Scenario sc;
  ASSERT_EQ(Load("single-scattered", yaml, &sc), absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  std::printf("%s", FormatSummary(r).c_str());
  EXPECT_EQ(CountPrefix(r, "w").bound, 1) << FormatSummary(r);
  EXPECT_EQ(r.preemption_victims, 2);
  std::string node;
  for (const auto& o : r.outcomes) {
    if (o.pod == "default/w") node = o.node;
  }
  for (const auto& o : r.outcomes) {
    if (o.pod.starts_with("default/borrow-") && !o.preempted) {
      EXPECT_NE(o.node, node) << o.pod;
    }
  }
}

// Never below a queue's guarantee, for the lower-priority victims of the same search too:
// 2 nodes of 8 GPUs, queue `b` (guarantee 8) runs two low-priority 8-GPU pods; a
// high-priority gang of 2 x 8 GPUs of queue `a` (guarantee 8) would fit only with both gone,
// which leaves `b` at 0. Nothing is evicted and the reason names the guarantee. (`a` asks
// beyond its deserved share, so this is priority preemption, not reclaim.)
TEST(QueueReclaimSimTest, PriorityPreemptionNeverTakesAnotherQueueBelowItsGuarantee) {
  Scenario sc;
  ASSERT_EQ(Load("guarantee",
                 Nodes("n", 2) + Queue("a", 8) + Queue("b", 8) + Pod("low-0", "b", 8, 0) +
                     Pod("low-1", "b", 8, 0) + Gang("high", "a", 2, 8, 10, "", 1000),
                 &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  std::printf("%s", FormatSummary(r).c_str());
  EXPECT_EQ(r.preemption_victims, 0);
  EXPECT_EQ(CountPrefix(r, "low-").bound, 2);
  EXPECT_EQ(CountPrefix(r, "high-").bound, 0);
  bool reason_given = false;
  for (const auto& [reason, n] : r.pending_reasons) {
    reason_given = reason_given || reason.find(
                                       "preemption: queue b would drop below its "
                                       "guarantee (nvidia.com/gpu: 0 left, 8 "
                                       "guaranteed)") != std::string::npos;
  }
  EXPECT_TRUE(reason_given) << FormatSummary(r);
}

}  // namespace
}  // namespace phalanx::sim
