// Queues and quotas end to end in the simulator (docs/queues.md):
// Koordinator's quota-10 / three-gangs-of-5 example, 1:3 weights converging, a guaranteed
// queue reclaiming whole gangs for its gang (verified reclaim: src/sim/queue_reclaim_test.cc), a
// parent limit capping its children, bad input (cycles, missing queue, negative quota) (the Philly
// replay split into queues: src/replay/replay_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "config/config.h"
#include "framework/types.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

SimulationOptions Options() {
  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  return o;
}

// Writes `yaml` to a fresh file and loads it as a scenario.
Scenario Load(const std::string& name, const std::string& yaml) {
  const std::string path = ::testing::TempDir() + "/queues_test_" + name + ".yaml";
  std::ofstream(path) << yaml;
  Scenario sc;
  EXPECT_EQ(LoadManifestScenario(path, &sc), absl::OkStatus());
  return sc;
}

std::string Nodes(int n, int gpus, int cpu = 32) {
  std::ostringstream o;
  for (int i = 0; i < n; ++i) {
    o << "apiVersion: v1\nkind: Node\nmetadata: {name: n" << i << "}\n"
      << "status: {capacity: {cpu: \"" << cpu << "\", memory: 256Gi, pods: \"110\""
      << (gpus ? ", nvidia.com/gpu: \"" + std::to_string(gpus) + "\"" : "") << "}}\n---\n";
  }
  return o.str();
}

// A KAI PodGroup of `pods` pods of `gpus` GPUs each in `queue`.
std::string KaiGang(const std::string& name, const std::string& queue, int pods, int gpus,
                    double arrival, double duration, int priority = 0) {
  std::ostringstream o;
  o << "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " << name
    << ", namespace: default}\nspec: {minMember: " << pods << ", queue: " << queue << "}\n---\n";
  for (int k = 0; k < pods; ++k) {
    o << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " << name << "-" << k
      << "\n  namespace: default\n  labels: {kai.scheduler/queue: " << queue << "}\n"
      << "  annotations: {pod-group-name: " << name
      << ", simulation.phalanx.dev/arrival-seconds: \"" << arrival
      << "\", simulation.phalanx.dev/duration-seconds: \"" << duration << "\"}\n"
      << "spec:\n  priority: " << priority
      << "\n  containers:\n  - {name: c, image: x, resources: {requests: "
      << "{cpu: \"1\", nvidia.com/gpu: \"" << gpus << "\"}}}\n---\n";
  }
  return o.str();
}

// Samples of one queue by time.
std::map<double, QueueSample> Series(const SimulationResult& r, const std::string& queue) {
  std::map<double, QueueSample> m;
  for (const auto& s : r.queue_timeline) {
    if (s.queue == queue) m[s.t] = s;
  }
  return m;
}

const PodOutcome* Outcome(const SimulationResult& r, const std::string& pod) {
  for (const auto& o : r.outcomes) {
    if (o.pod == pod) return &o;
  }
  return nullptr;
}

// Koordinator's design doc: quota 10, three gangs of 5. Two run, the third waits with a
// clear reason and holds nothing; when the first finishes the third runs (no deadlock).
TEST(QueuesSimulation, KoordinatorQuotaTenThreeGangsOfFive) {
  Scenario sc;
  ASSERT_EQ(
      LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/queues/koordinator", &sc),
      absl::OkStatus());
  SimulationOptions o = Options();
  scheduler::Scheduler* sched = nullptr;
  std::string waiting_reason;
  o.hooks.on_start = [&](scheduler::Scheduler& s) { sched = &s; };
  o.hooks.on_step = [&](double t) {
    if (t < 2 || t >= 600 || !waiting_reason.empty()) return;
    for (const auto& p : sched->scheduling_queue().PendingPods()) {
      if (p->Pod().metadata.name == "gang-c-0") waiting_reason = p->last_failure_message;
    }
  };
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_EQ(r.scheduled, 15u);
  for (int k = 0; k < 5; ++k) {
    const std::string i = std::to_string(k);
    EXPECT_EQ(Outcome(r, "team-a/gang-a-" + i)->scheduled_s, 0.0);
    EXPECT_EQ(Outcome(r, "team-a/gang-b-" + i)->scheduled_s, 1.0);
    // gang-a finishes at 600 s: gang-c starts then, not before.
    EXPECT_EQ(Outcome(r, "team-a/gang-c-" + i)->scheduled_s, 600.0);
  }
  std::printf("gang-c while waiting: %s\n", waiting_reason.c_str());
  EXPECT_NE(waiting_reason.find("waiting for queue team-a quota: needs 5 cpu, 0 free"),
            std::string::npos)
      << waiting_reason;
  // The quota is never exceeded, and gang-c never holds part of it while waiting.
  for (const auto& [t, s] : Series(r, "team-a")) {
    EXPECT_LE(s.allocated, 10.0) << "t=" << t;
    if (t >= 2 && t < 600) {
      EXPECT_EQ(s.allocated, 10.0) << "t=" << t;
    }
  }
}

// Queue order follows the shares at each Pop, not the shares a pod saw when it
// was queued: 12 one-GPU pods of queue a, then 12 of queue b, all queued at t = 0 with every
// share 0, on 8 GPUs. Each placement raises its queue's share, so the next Pop serves the
// other queue: 4 and 4 (equal weights), never a's whole burst first.
TEST(QueuesSimulation, BurstIsSharedByTheCurrentShares) {
  std::ostringstream y;
  y << Nodes(1, 8);
  for (const char* q : {"a", "b"}) {
    y << "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " << q
      << "}\nspec: {}\n---\n";
  }
  for (const char* q : {"a", "b"}) {
    for (int k = 0; k < 12; ++k) {
      y << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " << q << "-" << k
        << "\n  namespace: default\n  labels: {kai.scheduler/queue: " << q << "}\n"
        << "  annotations: {simulation.phalanx.dev/duration-seconds: \"1000\"}\n"
        << "spec:\n  containers:\n  - {name: c, image: x, resources: {requests: "
        << "{cpu: \"1\", nvidia.com/gpu: \"1\"}}}\n---\n";
    }
  }
  Scenario sc = Load("burst", y.str());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  std::map<std::string, int> bound;
  for (const auto& o : r.outcomes) {
    if (o.scheduled_s && *o.scheduled_s < 1000) ++bound[o.pod.substr(8, 1)];  // "default/x-k"
  }
  EXPECT_EQ(bound["a"], 4);
  EXPECT_EQ(bound["b"], 4);
}

// Two queues with over-quota weights 1:3 and a saturating backlog: allocations stay at
// 8 : 24 GPUs (within one gang of 2 GPUs) while both queues have pending gangs.
TEST(QueuesSimulation, WeightsOneToThreeConverge) {
  Scenario sc;
  ASSERT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/queues/weights", &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_EQ(r.queue_resource, "nvidia.com/gpu");
  auto a = Series(r, "team-a"), b = Series(r, "team-b");
  ASSERT_FALSE(a.empty());
  int both_backlogged = 0;
  for (const auto& [t, sa] : a) {
    const QueueSample& sb = b.at(t);
    if (sa.pending_pods == 0 || sb.pending_pods == 0) continue;
    ++both_backlogged;
    EXPECT_NEAR(sa.allocated, 8.0, 2.0) << "t=" << t;
    EXPECT_NEAR(sb.allocated, 24.0, 2.0) << "t=" << t;
    EXPECT_NEAR(sa.deserved, 8.0, 1e-6) << "t=" << t;
    EXPECT_NEAR(sb.deserved, 24.0, 1e-6) << "t=" << t;
  }
  EXPECT_GT(both_backlogged, 10);
  std::printf(
      "samples with both queues backlogged: %d; team-a/team-b time-average %.2f / %.2f GPUs\n",
      both_backlogged, r.queues[0].allocated_avg, r.queues[1].allocated_avg);
}

// A queue with a guaranteed quota takes it back from a borrowing queue as soon as its gang
// arrives; whole gangs are reclaimed, the newest first, and the borrower keeps the rest.
// Reclaim is verified (the gang's placement fails, the victims are chosen so
// that the whole gang fits without them, evicted, and the members nominated), so the gang
// binds on its retry, after the pods' initial backoff of 1 s — as after priority
// preemption — where reclaim before placement had let it bind in the round it arrived.
TEST(QueuesSimulation, GuaranteedQueueReclaimsOnTheGangsRetry) {
  std::string yaml = Nodes(8, 4) + R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: guaranteed}
spec: {weight: 1, guarantee: {resource: {nvidia.com/gpu: "16"}}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: borrower}
spec: {weight: 1}
---
)";
  for (int j = 0; j < 12; ++j) {
    yaml += KaiGang("borrow-" + std::to_string(j), "borrower", 2, 2, /*arrival=*/j * 0.01,
                    /*duration=*/10000);
  }
  yaml += KaiGang("train", "guaranteed", 4, 2, /*arrival=*/100, /*duration=*/500);
  Scenario sc = Load("reclaim", yaml);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  for (int k = 0; k < 4; ++k) {
    const PodOutcome* o = Outcome(r, "default/train-" + std::to_string(k));
    ASSERT_TRUE(o && o->scheduled_s) << k;
    EXPECT_EQ(*o->scheduled_s, 101.0) << "reclaim must let the gang start on its first retry";
  }
  auto g = Series(r, "guaranteed"), b = Series(r, "borrower");
  EXPECT_EQ(b.at(0.07).allocated, 32.0);  // the borrower held every GPU
  EXPECT_EQ(b.at(100).allocated, 24.0);   // two whole gangs of 4 GPUs were reclaimed at once
  EXPECT_EQ(g.at(101).allocated, 8.0);
  EXPECT_EQ(b.at(101).allocated, 24.0);
  // borrow-0..7 ran (8 gangs x 4 GPUs); the two newest of them, borrow-7 and borrow-6, were
  // reclaimed whole (deleted by the scheduler, so the trace's own deletion finds nothing);
  // the older ones ran to the end of their duration.
  for (const std::string victim :
       {"default/borrow-7-0", "default/borrow-7-1", "default/borrow-6-0", "default/borrow-6-1"}) {
    const PodOutcome* o = Outcome(r, victim);
    ASSERT_TRUE(o && o->scheduled_s) << victim;
    EXPECT_FALSE(o->deleted_s) << victim << ": should have been reclaimed";
  }
  for (const std::string kept : {"default/borrow-0-0", "default/borrow-5-1"}) {
    const PodOutcome* o = Outcome(r, kept);
    ASSERT_TRUE(o && o->deleted_s) << kept;
    EXPECT_GE(*o->deleted_s, 10000.0) << kept;
  }
  std::printf("guaranteed at t=101: %.0f GPUs, borrower %.0f GPUs\n", g.at(101).allocated,
              b.at(101).allocated);
}

// Hierarchy: a parent's limit caps the sum of its children; the sibling queue gets the rest.
TEST(QueuesSimulation, ParentLimitCapsChildren) {
  std::string yaml = Nodes(8, 4) + R"(apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec: {resources: {gpu: {quota: 0, limit: 8, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: x}
spec: {parentQueue: dept, resources: {gpu: {quota: 0, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: y}
spec: {parentQueue: dept, resources: {gpu: {quota: 0, limit: -1, overQuotaWeight: 1}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: other}
spec: {resources: {gpu: {quota: 0, limit: -1, overQuotaWeight: 1}}}
---
)";
  for (int j = 0; j < 10; ++j) {
    yaml += KaiGang("x-" + std::to_string(j), "x", 2, 1, 0, 300 + 60 * j);
    yaml += KaiGang("y-" + std::to_string(j), "y", 2, 1, 0, 330 + 60 * j);
    yaml += KaiGang("o-" + std::to_string(j), "other", 2, 1, 0, 360 + 60 * j);
  }
  Scenario sc = Load("hierarchy", yaml);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  auto dept = Series(r, "dept"), x = Series(r, "x"), y = Series(r, "y"), other = Series(r, "other");
  double peak = 0;
  for (const auto& [t, d] : dept) {
    EXPECT_LE(x.at(t).allocated + y.at(t).allocated, 8.0) << "t=" << t;
    EXPECT_EQ(d.allocated, x.at(t).allocated + y.at(t).allocated) << "t=" << t;
    peak = std::max(peak, d.allocated);
  }
  EXPECT_EQ(peak, 8.0);
  EXPECT_EQ(dept.at(0).deserved, 8.0);
  EXPECT_EQ(x.at(0).deserved, 4.0);
  EXPECT_EQ(other.at(0).allocated, 20.0);  // its 10 gangs of 2; the rest stays idle
  EXPECT_EQ(r.scheduled, r.pods);          // every gang ran in the end
}

// Bad input: a cycle in the queue tree, a pod naming a missing queue, a negative quota,
// and a gang larger than its queue's quota: clear pending reasons, no crash, other pods run.
TEST(QueuesSimulation, BadInputGivesClearReasons) {
  std::string yaml = Nodes(2, 8) + R"(apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: loop-a}
spec: {parentQueue: loop-b}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: loop-b}
spec: {parentQueue: loop-a}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: negative}
spec: {resources: {gpu: {quota: -3}}}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {quota: 4, limit: 8, overQuotaWeight: 1}}}
---
)";
  yaml += KaiGang("in-loop", "loop-a", 1, 1, 0, 100);
  yaml += KaiGang("missing", "no-such-queue", 1, 1, 0, 100);
  yaml += KaiGang("neg", "negative", 1, 1, 0, 100);
  yaml += KaiGang("big", "team-a", 4, 4, 0, 100);
  yaml += KaiGang("fits", "team-a", 2, 4, 0, 100);
  yaml += R"(apiVersion: v1
kind: Pod
metadata: {name: no-queue, namespace: default}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
)";
  Scenario sc = Load("bad", yaml);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  auto reason = [&](const std::string& pod) {
    const PodOutcome* o = Outcome(r, pod);
    EXPECT_TRUE(o && !o->scheduled_s) << pod;
    return o ? o->reason : std::string();
  };
  const std::string loop = reason("default/in-loop-0");
  EXPECT_NE(loop.find("queue loop-a is invalid: Queue loop-a (scheduling.run.ai/v2): "
                      "spec.parentQueue: cycle in the queue tree: loop-a -> loop-b -> loop-a"),
            std::string::npos)
      << loop;
  const std::string missing = reason("default/missing-0");
  EXPECT_NE(missing.find("queue no-such-queue does not exist (named by label kai.scheduler/queue)"),
            std::string::npos)
      << missing;
  const std::string neg = reason("default/neg-0");
  EXPECT_NE(neg.find("spec.resources.gpu.quota: must be >= 0 (or -1: no quota), got -3"),
            std::string::npos)
      << neg;
  const std::string big = reason("default/big-0");
  EXPECT_NE(big.find("waiting for queue team-a quota: needs 16 nvidia.com/gpu, 8 free"),
            std::string::npos)
      << big;
  EXPECT_TRUE(Outcome(r, "default/fits-0")->scheduled_s);
  EXPECT_TRUE(Outcome(r, "default/no-queue")->scheduled_s);
  bool listed = false;
  for (const auto& q : r.queues) listed = listed || (q.name == "negative" && !q.error.empty());
  EXPECT_TRUE(listed);
  for (const auto& s : {loop, missing, neg, big}) std::printf("%s\n", s.c_str());
}

}  // namespace
}  // namespace phalanx::sim
