// A gang as preemptor (src/plugins/defaultpreemption/podgroup_preemption.h, behind
// DefaultPreemption's PodGroupPostFilter) end to end: the PodGroup cycle against the in-process
// Store on a virtual clock — victims, their Events, the members' nominations, the retry once the
// victims are gone, and running victim gangs taken whole or not at all.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "plugins/defaultpreemption/podgroup_preemption.h"
#include "scheduler/scheduler_test_env.h"

namespace phalanx::scheduler {
namespace {

constexpr int64_t kSec = api::kNanosPerSecond;

using Env = SchedulerTestEnv;

std::string Nodes(int n) {
  std::string y;
  for (int i = 1; i <= n; ++i) {
    y += "apiVersion: v1\nkind: Node\nmetadata: {name: n" + std::to_string(i) +
         "}\nstatus: {capacity: {cpu: \"2\", memory: 4Gi, pods: \"10\"}}\n---\n";
  }
  return y;
}

// A pod of 2 CPUs (a whole node) of `priority`, in PodGroup `group` when not empty.
std::string Pod(const std::string& name, int priority, const std::string& group = "") {
  std::string y =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: default\n";
  if (!group.empty()) y += "  labels: {scheduling.x-k8s.io/pod-group: " + group + "}\n";
  return y + "spec:\n  priority: " + std::to_string(priority) +
         "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"2\"}}}]\n---\n";
}

std::string PodGroup(const std::string& name, int min_member) {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: default}\nspec: {minMember: " + std::to_string(min_member) + "}\n---\n";
}

TEST(GangPreemptionTest, GangEvictsNominatesMembersAndBindsAfterVictimsAreGone) {
  Env env;
  env.Apply(Nodes(2) + Pod("low-0", 10) + Pod("low-1", 10));
  env.RunUntilIdle();
  ASSERT_NE(env.NodeOf("low-0"), "");
  ASSERT_NE(env.NodeOf("low-1"), "");
  const std::string low0_node = env.NodeOf("low-0");

  env.Apply(PodGroup("hg", 2) + Pod("hg-0", 1000, "hg") + Pod("hg-1", 1000, "hg"));
  env.RunUntilIdle();
  // Both victims are gone; each member is nominated to one of the freed nodes.
  EXPECT_EQ(env.NodeOf("low-0"), "<deleted>");
  EXPECT_EQ(env.NodeOf("low-1"), "<deleted>");
  EXPECT_EQ(env.NodeOf("hg-0"), "");
  EXPECT_EQ((std::set<std::string>{env.NominatedOf("hg-0"), env.NominatedOf("hg-1")}),
            (std::set<std::string>{"n1", "n2"}));
  std::vector<std::string> events = env.EventsOf("default/low-0");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(),
            "Preempted: Preempted by gang default/hg (priority 1000) on node " + low0_node);
  auto ev = env.store.LastEventFor("default/hg-0");
  ASSERT_TRUE(ev.has_value());
  EXPECT_NE(ev->message.find("preemption: 2 victims evicted for the gang"), std::string::npos)
      << ev->message;

  // The retry binds the whole gang; the nominations are cleared.
  env.AdvanceAndRun(30 * kSec);
  EXPECT_NE(env.NodeOf("hg-0"), "");
  EXPECT_NE(env.NodeOf("hg-1"), "");
  EXPECT_NE(env.NodeOf("hg-0"), env.NodeOf("hg-1"));
  EXPECT_EQ(env.NominatedOf("hg-0"), "");
  EXPECT_EQ(env.NominatedOf("hg-1"), "");
}

// A running gang with one member of a higher priority than the preemptor is no victim at
// all (never split): with it in place the gang cannot fit, so nothing is evicted, not even
// the eligible single pod.
TEST(GangPreemptionTest, RunningGangWithAHigherPriorityMemberIsNeverSplit) {
  Env env;
  env.Apply(Nodes(3) + PodGroup("mixed", 2) + Pod("mixed-0", 10, "mixed") +
            Pod("mixed-1", 5000, "mixed"));
  env.RunUntilIdle();
  env.Apply(Pod("low", 10));
  env.RunUntilIdle();
  ASSERT_NE(env.NodeOf("mixed-0"), "");
  ASSERT_NE(env.NodeOf("mixed-1"), "");
  ASSERT_NE(env.NodeOf("low"), "");

  env.Apply(PodGroup("hg", 2) + Pod("hg-0", 1000, "hg") + Pod("hg-1", 1000, "hg"));
  env.RunUntilIdle();
  EXPECT_NE(env.NodeOf("mixed-0"), "<deleted>");
  EXPECT_NE(env.NodeOf("mixed-1"), "<deleted>");
  EXPECT_NE(env.NodeOf("low"), "<deleted>");
  EXPECT_EQ(env.NominatedOf("hg-0"), "");
  auto ev = env.store.LastEventFor("default/hg-0");
  ASSERT_TRUE(ev.has_value());
  EXPECT_NE(ev->message.find("preemption would not make room for the whole gang (1 "
                             "lower-priority pods considered)"),
            std::string::npos)
      << ev->message;
}

// The same cluster with every member of the running gang of a low priority: the gang is
// one victim unit, evicted whole (the single pod alone is not enough room).
TEST(GangPreemptionTest, RunningLowPriorityGangIsEvictedWhole) {
  Env env;
  env.Apply(Nodes(3) + PodGroup("lowgang", 2) + Pod("lowgang-0", 10, "lowgang") +
            Pod("lowgang-1", 10, "lowgang"));
  env.RunUntilIdle();
  env.Apply(Pod("low", 20));
  env.RunUntilIdle();
  ASSERT_NE(env.NodeOf("lowgang-0"), "");
  ASSERT_NE(env.NodeOf("low"), "");

  env.Apply(PodGroup("hg", 2) + Pod("hg-0", 1000, "hg") + Pod("hg-1", 1000, "hg"));
  env.RunUntilIdle();
  // Room for two members: the gang (2 pods, lower priority) goes whole, the single pod
  // (priority 20, more important) is reprieved.
  EXPECT_EQ(env.NodeOf("lowgang-0"), "<deleted>");
  EXPECT_EQ(env.NodeOf("lowgang-1"), "<deleted>");
  EXPECT_NE(env.NodeOf("low"), "<deleted>");
  env.AdvanceAndRun(30 * kSec);
  EXPECT_NE(env.NodeOf("hg-0"), "");
  EXPECT_NE(env.NodeOf("hg-1"), "");
}

// An elastic gang (minMember 2, four members running) above its minimum gives up its
// surplus members, not the whole gang, to a higher-priority gang that needs two nodes; it
// keeps running at its minimum. A single pod of a lower priority than the elastic gang's
// is still kept: surplus members go first.
TEST(GangPreemptionTest, ElasticGangGivesUpSurplusMembersNotTheGang) {
  Env env;
  env.Apply(Nodes(5) + PodGroup("el", 2) + Pod("el-0", 10, "el") + Pod("el-1", 10, "el") +
            Pod("el-2", 10, "el") + Pod("el-3", 10, "el"));
  env.RunUntilIdle();
  env.Apply(Pod("single", 5));
  env.RunUntilIdle();
  for (const char* p : {"el-0", "el-1", "el-2", "el-3", "single"}) {
    ASSERT_NE(env.NodeOf(p), "") << p;
  }
  env.Apply(PodGroup("hg", 2) + Pod("hg-0", 1000, "hg") + Pod("hg-1", 1000, "hg"));
  env.RunUntilIdle();
  // The surplus: the two members beyond minMember (equal start times: by name).
  EXPECT_EQ(env.NodeOf("el-2"), "<deleted>");
  EXPECT_EQ(env.NodeOf("el-3"), "<deleted>");
  EXPECT_NE(env.NodeOf("el-0"), "<deleted>");
  EXPECT_NE(env.NodeOf("el-1"), "<deleted>");
  EXPECT_NE(env.NodeOf("single"), "<deleted>");
  env.AdvanceAndRun(30 * kSec);
  EXPECT_NE(env.NodeOf("hg-0"), "");
  EXPECT_NE(env.NodeOf("hg-1"), "");
  EXPECT_NE(env.NodeOf("el-0"), "<deleted>");
  EXPECT_NE(env.NodeOf("el-1"), "<deleted>");
}

// PodDisruptionBudgets (defaultpreemption PodDisruptionBudgetViolations): a victim whose
// eviction violates a budget is reprieved first. Without that rule the db pod, of the
// lowest priority, would be the first victim.
TEST(GangPreemptionTest, PdbProtectedVictimIsReprievedFirst) {
  Env env;
  std::string db = Pod("db", 5);
  db.replace(db.find("  namespace: default\n"), std::string("  namespace: default\n").size(),
             "  namespace: default\n  labels: {app: db}\n");
  env.Apply(Nodes(3) + db + Pod("low-0", 10) + Pod("low-1", 10));
  api::Manifests m;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(
      api::DecodeManifests("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: "
                           "db, namespace: default}\nspec: {maxUnavailable: 0, selector: "
                           "{matchLabels: {app: db}}}\nstatus: {disruptionsAllowed: 0}\n",
                           "pdb.yaml", &m),
      &err))
      << err;
  ASSERT_EQ(m.pod_disruption_budgets.size(), 1u);
  ASSERT_TRUE(env.store.CreatePodDisruptionBudget(m.pod_disruption_budgets[0]).ok());
  env.RunUntilIdle();
  ASSERT_NE(env.NodeOf("db"), "");

  env.Apply(PodGroup("hg", 2) + Pod("hg-0", 1000, "hg") + Pod("hg-1", 1000, "hg"));
  env.RunUntilIdle();
  EXPECT_NE(env.NodeOf("db"), "<deleted>");
  EXPECT_EQ(env.NodeOf("low-0"), "<deleted>");
  EXPECT_EQ(env.NodeOf("low-1"), "<deleted>");
  env.AdvanceAndRun(30 * kSec);
  EXPECT_NE(env.NodeOf("hg-0"), "");
  EXPECT_NE(env.NodeOf("hg-1"), "");
}

// Reprieve's batches give the victims of the plain one-unit-per-placement greedy loop, on
// random clusters: 4-cpu nodes with 1- and 2-cpu pods of mixed priorities, then a gang of
// 2..4 members of 2..4 cpus that must preempt.
TEST(GangPreemptionTest, BatchedReprieveChoosesTheSameVictimsAsOneByOne) {
  int preempted_runs = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    const int nodes = 3 + static_cast<int>(rng() % 6);
    std::string cluster;
    for (int i = 1; i <= nodes; ++i) {
      cluster += "apiVersion: v1\nkind: Node\nmetadata: {name: n" + std::to_string(i) +
                 "}\nstatus: {capacity: {cpu: \"4\", memory: 16Gi, pods: \"20\"}}\n---\n";
    }
    std::string fill;
    for (int i = 0; i < nodes * 3; ++i) {
      fill += "apiVersion: v1\nkind: Pod\nmetadata: {name: low-" + std::to_string(i) +
              ", namespace: default}\nspec:\n  priority: " + std::to_string(1 + rng() % 5) +
              "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" +
              std::to_string(1 + rng() % 2) + "\"}}}]\n---\n";
    }
    const int members = 2 + static_cast<int>(rng() % 3);
    const int cpu = 2 + static_cast<int>(rng() % 3);
    std::string gang = PodGroup("hg", members);
    for (int m = 0; m < members; ++m) {
      gang += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hg-" + std::to_string(m) +
              "\n  namespace: default\n  labels: {scheduling.x-k8s.io/pod-group: hg}\nspec:\n"
              "  priority: 1000\n  containers: [{name: c, image: busybox, resources: {requests: "
              "{cpu: \"" +
              std::to_string(cpu) + "\"}}}]\n---\n";
    }
    std::set<std::string> deleted[2];
    for (int one_by_one = 0; one_by_one < 2; ++one_by_one) {
      plugins::defaultpreemption::PodGroupPreemption::reprieve_one_by_one_for_tests =
          one_by_one == 1;
      Env env;
      env.Apply(cluster + fill);
      env.RunUntilIdle();
      std::set<std::string> before;
      for (int i = 0; i < nodes * 3; ++i) {
        if (env.NodeOf("low-" + std::to_string(i)) != "") before.insert("low-" + std::to_string(i));
      }
      env.Apply(gang);
      env.RunUntilIdle();
      for (const auto& name : before) {
        if (env.NodeOf(name) == "<deleted>") deleted[one_by_one].insert(name);
      }
    }
    plugins::defaultpreemption::PodGroupPreemption::reprieve_one_by_one_for_tests = false;
    EXPECT_EQ(deleted[0], deleted[1]) << "seed " << seed;
    if (!deleted[0].empty()) ++preempted_runs;
  }
  EXPECT_GE(preempted_runs, 10);  // the scenarios do preempt
}

}  // namespace
}  // namespace phalanx::scheduler
