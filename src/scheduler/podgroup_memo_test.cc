// The PodGroup cycle's early-out (podgroup_memo.h): a rejection is replayed only while
// nothing the cycle reads changed, and replaying gives what the full cycle gives.
#include "scheduler/podgroup_memo.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "scheduler/podgroup_algorithm.h"
#include "scheduler/scheduler_test_env.h"

namespace phalanx::scheduler {
namespace {

framework::QueuedPodGroupInfo Plan(const std::string& gang, int32_t need,
                                   const std::vector<std::string>& pods) {
  framework::QueuedPodGroupInfo plan;
  framework::PodGroupInfo u;
  u.key = gang;
  u.min_count = need;
  u.pending_pods = pods;
  plan.pod_groups.push_back(u);
  return plan;
}

std::vector<PodGroupMember> Members(const std::vector<std::string>& names) {
  std::vector<PodGroupMember> out;
  for (const auto& n : names) {
    auto pod = std::make_shared<api::Pod>();
    pod->metadata.namespace_ = "ml";
    pod->metadata.name = n;
    PodGroupMember m;
    m.qp = std::make_shared<framework::QueuedPodInfo>();
    m.qp->pod_info = framework::PodInfo::Make(pod);
    out.push_back(std::move(m));
  }
  return out;
}

TEST(PodGroupRejectionMemoTest, FindsOnlyTheSameAttemptOnTheSameState) {
  PodGroupRejectionMemo memo;
  const auto plan = Plan("ml/train", 2, {"ml/a", "ml/b"});
  const auto members = Members({"a", "b"});
  EXPECT_EQ(memo.Find(plan, members, 7, 3), nullptr);
  memo.Remember(PodGroupRejectionMemo::Describe(plan, members, 7, 3));
  EXPECT_NE(memo.Find(plan, members, 7, 3), nullptr);
  // The cache moved, an object event arrived, the plan or the members changed: no replay.
  EXPECT_EQ(memo.Find(plan, members, 8, 3), nullptr);
  EXPECT_EQ(memo.Find(plan, members, 7, 4), nullptr);
  EXPECT_EQ(memo.Find(Plan("ml/train", 1, {"ml/a", "ml/b"}), members, 7, 3), nullptr);
  EXPECT_EQ(memo.Find(Plan("ml/train", 2, {"ml/b", "ml/a"}), members, 7, 3), nullptr);
  EXPECT_EQ(memo.Find(plan, Members({"a"}), 7, 3), nullptr);
  EXPECT_EQ(memo.Find(plan, Members({"a", "c"}), 7, 3), nullptr);
  auto topo = plan;
  topo.pod_groups[0].topology_levels = {"rack"};
  EXPECT_EQ(memo.Find(topo, members, 7, 3), nullptr);
  memo.Forget(plan);
  EXPECT_EQ(memo.Find(plan, members, 7, 3), nullptr);
}

// The shape replay refills a gang's remembered record in place: only a one-unit record
// that nothing else holds is handed out, and refilled it is found for the new attempt only.
TEST(PodGroupRejectionMemoTest, ReusableRecordIsTheGangsOwnAndRefilledInPlace) {
  PodGroupRejectionMemo memo;
  const auto plan = Plan("ml/train", 2, {"ml/a", "ml/b"});
  const auto members = Members({"a", "b"});
  EXPECT_EQ(memo.Reusable(plan), nullptr);  // nothing remembered
  memo.Remember(PodGroupRejectionMemo::Describe(plan, members, 7, 3));
  auto r = memo.Reusable(plan);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(memo.Reusable(plan), nullptr);  // r holds it too now
  const PodGroupRejection* before = r.get();
  const auto longer = Members({"a-with-a-name-longer-than-sso", "b"});
  PodGroupRejectionMemo::Describe(Plan("ml/train", 1, {"ml/a-with-a-name-longer-than-sso", "ml/b"}),
                                  longer, 9, 4, r.get());
  r.reset();
  EXPECT_EQ(memo.Find(plan, members, 7, 3), nullptr);
  const auto* found =
      memo.Find(Plan("ml/train", 1, {"ml/a-with-a-name-longer-than-sso", "ml/b"}), longer, 9, 4);
  ASSERT_EQ(found, before);
  EXPECT_EQ(found->member_keys,
            (std::vector<std::string>{"ml/a-with-a-name-longer-than-sso", "ml/b"}));
  // A record shared by two units (a GangGroup) is not handed out for either.
  framework::QueuedPodGroupInfo group = plan;
  framework::PodGroupInfo second = plan.pod_groups[0];
  second.key = "ml/eval";
  second.pending_pods = {"ml/c"};
  group.pod_groups.push_back(second);
  auto both = Members({"a", "b", "c"});
  both[2].pod_group = 1;
  memo.Remember(PodGroupRejectionMemo::Describe(group, both, 9, 4));
  EXPECT_EQ(memo.Reusable(plan), nullptr);
  EXPECT_EQ(memo.Reusable(group), nullptr);
}

std::string GpuNode(const std::string& name, int gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name + "}}\nstatus:\n  capacity: {cpu: \"" +
         std::to_string(8 * gpus) + "\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}\n---\n";
}

std::string Gang(const std::string& name, int members, int gpus, int priority = 0) {
  std::string y =
      "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name +
      ", namespace: ml}\nspec: {minMember: " + std::to_string(members) + "}\n---\n";
  for (int i = 0; i < members; ++i) {
    y += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "-" + std::to_string(i) +
         "\n  namespace: ml\n  labels: {scheduling.x-k8s.io/pod-group: " + name +
         "}\nspec:\n  priority: " + std::to_string(priority) +
         "\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"" +
         std::to_string(gpus) + "\", nvidia.com/gpu: \"" + std::to_string(gpus) + "\"}}}]\n---\n";
  }
  return y;
}

// What a run gives, pod by pod: node and bind time, failures and the last message, the
// events recorded; and the scheduler's counters.
struct Trace {
  std::map<std::string, std::string> bound;  // pod -> "node@seconds"
  std::map<std::string, int> failures;
  std::map<std::string, std::string> last_message;
  std::vector<std::string> events;
  int64_t attempts = 0, unschedulable = 0, replayed = 0;
};

// Random gangs (1-4 members of 1-8 GPUs; with `priorities`, priority 0 or 100, so that
// gang preemption evicts) arriving over time on 4 nodes of 8 GPUs; every bound pod runs
// 10-40 minutes and is then deleted. Virtual time advances one minute at a
// time, so the 5-minute unschedulable flush and the deletions both requeue gangs.
Trace RunRandomGangs(uint64_t seed, bool replay, bool priorities) {
  SchedulerTestOptions o;
  o.seed = seed;
  o.replay_podgroup_rejections = replay;
  SchedulerTestEnv env(o);
  Trace t;
  std::map<std::string, api::Timestamp> ends;  // bound pod -> deletion time
  std::mt19937_64 rng(seed);
  env.sched->on_bound = [&](const api::Pod& pod, const std::string& node) {
    t.bound[pod.Key()] = node + "@" + std::to_string(env.clock.Now() / api::kNanosPerSecond);
    ends[pod.Key()] =
        env.clock.Now() + static_cast<int64_t>(600 + rng() % 1800) * api::kNanosPerSecond;
  };
  env.sched->on_failure = [&](const framework::QueuedPodInfo& qp, const framework::Status&,
                              Scheduler::FailurePhase) {
    ++t.failures[qp.Pod().Key()];
    t.last_message[qp.Pod().Key()] = qp.last_failure_message;
  };
  std::string nodes;
  for (int n = 0; n < 4; ++n) nodes += GpuNode("n" + std::to_string(n), 8);
  env.Apply(nodes);
  for (int minute = 0; minute < 240; ++minute) {
    if (minute < 150 && rng() % 3 == 0) {
      const int members = 1 + static_cast<int>(rng() % 4);
      const int gpus = 1 + static_cast<int>(rng() % 8);
      const int priority = priorities ? static_cast<int>(rng() % 2) * 100 : 0;
      env.Apply(Gang("g" + std::to_string(minute), members, gpus, priority));
    }
    for (auto it = ends.begin(); it != ends.end();) {
      if (it->second > env.clock.Now()) {
        ++it;
        continue;
      }
      const auto slash = it->first.find('/');
      // A preemption victim is gone already.
      (void)env.store.DeletePod(it->first.substr(0, slash), it->first.substr(slash + 1));
      it = ends.erase(it);
    }
    env.AdvanceAndRun(60 * api::kNanosPerSecond);
  }
  for (const auto& e : env.store.Events())
    t.events.push_back(e.pod_key + " " + e.reason + ": " + e.message);
  const SchedulerStats s = env.sched->stats();
  t.attempts = s.attempts;
  t.unschedulable = s.unschedulable;
  t.replayed = s.replayed_podgroup_rejections;
  return t;
}

// Differential check: with and without the replay, every pod is bound to the same node at
// the same time, fails as often with the same last message, and the same events are
// recorded; the replayed run does fewer full PodGroup cycles.
TEST(PodGroupRejectionMemoTest, RandomGangMixesReplayGivesIdenticalPlacements) {
  int64_t replayed = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const bool priorities = seed > 6;  // then gang preemption evicts, and is not replayed
    const Trace full = RunRandomGangs(seed, false, priorities);
    const Trace fast = RunRandomGangs(seed, true, priorities);
    EXPECT_EQ(full.replayed, 0);
    EXPECT_FALSE(full.bound.empty());
    EXPECT_EQ(fast.bound, full.bound) << "seed " << seed;
    EXPECT_EQ(fast.failures, full.failures) << "seed " << seed;
    EXPECT_EQ(fast.last_message, full.last_message) << "seed " << seed;
    EXPECT_EQ(fast.events, full.events) << "seed " << seed;
    EXPECT_EQ(fast.attempts, full.attempts) << "seed " << seed;
    EXPECT_EQ(fast.unschedulable, full.unschedulable) << "seed " << seed;
    replayed += fast.replayed;
  }
  EXPECT_GT(replayed, 0);
}

// A gang that cannot fit on an unchanging cluster is flushed back every 5 minutes; after
// its first full cycle each attempt is a replay, and when the cluster changes the next
// attempt is a full cycle again.
TEST(PodGroupRejectionMemoTest, UnchangedClusterReplaysTheFlushedGangsAttempts) {
  SchedulerTestEnv env;
  env.Apply(GpuNode("n0", 4) + GpuNode("n1", 4) + Gang("big", 2, 8));
  env.RunUntilIdle();
  EXPECT_EQ(env.sched->stats().replayed_podgroup_rejections, 0);
  env.AdvanceAndRun(31 * 60 * api::kNanosPerSecond);  // six flushes
  const SchedulerStats s = env.sched->stats();
  EXPECT_EQ(s.replayed_podgroup_rejections, 6);
  EXPECT_EQ(s.attempts, 2 * 7);
  EXPECT_EQ(env.NodeOf("big-0", "ml"), "");
  // Two nodes of 8 GPUs join: full cycles again (no replay), and the gang fits.
  env.Apply(GpuNode("n2", 8) + GpuNode("n3", 8));
  env.RunUntilIdle();
  EXPECT_EQ(env.sched->stats().replayed_podgroup_rejections, 6);
  EXPECT_NE(env.NodeOf("big-0", "ml"), "");
  EXPECT_NE(env.NodeOf("big-1", "ml"), "");
}

// Two gangs of the same shape that do not fit: the first gang's attempt is a full cycle,
// the second gang's replays it under its own names, and every member's condition is what
// full cycles give.
TEST(PodGroupRejectionMemoTest, SameShapeGangReplaysTheOthersRejectionUnderItsNames) {
  auto conditions = [](bool replay, int64_t* replayed) {
    SchedulerTestOptions o;
    o.replay_podgroup_rejections = replay;
    SchedulerTestEnv env(o);
    env.Apply(GpuNode("n0", 4) + Gang("a", 2, 8) + Gang("b", 2, 8));
    env.RunUntilIdle();
    *replayed = env.sched->stats().replayed_podgroup_rejections;
    std::map<std::string, std::string> out;
    for (const auto& p : env.store.ListPods()) {
      for (const auto& c : p->status.conditions) {
        if (c.type == "PodScheduled") out[p->Key()] = c.message;
      }
    }
    return out;
  };
  int64_t replayed_full = 0, replayed = 0;
  const auto full = conditions(false, &replayed_full);
  const auto fast = conditions(true, &replayed);
  EXPECT_EQ(replayed_full, 0);
  EXPECT_EQ(replayed, 1);
  EXPECT_EQ(fast, full);
  const std::string& b = fast.at("ml/b-0");
  EXPECT_NE(b.find("pod group ml/b"), std::string::npos) << b;
  EXPECT_NE(b.find("ml/b-0: 0/1 nodes are available"), std::string::npos) << b;
  EXPECT_EQ(b.find("ml/a"), std::string::npos) << b;
}

}  // namespace
}  // namespace phalanx::scheduler
