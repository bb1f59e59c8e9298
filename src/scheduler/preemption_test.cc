// Preemption end to end: the DefaultPreemption PostFilter in the default profile, against
// the in-process Store on a virtual clock.
#include <gtest/gtest.h>

#include <map>
#include <string>

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

using testing::NodeBuilder;
using testing::PodBuilder;

constexpr int64_t kSec = api::kNanosPerSecond;

using Env = SchedulerTestEnv;

api::Node MakeNode(const std::string& name) {
  return NodeBuilder(name).Capacity({{"cpu", "2"}, {"memory", "4Gi"}, {"pods", "10"}}).Obj();
}

TEST(PreemptionTest, HighPriorityPodPreemptsNominatesAndBindsAfterVictimIsGone) {
  Env env;
  ASSERT_TRUE(env.store.CreateNode(MakeNode("n1")).ok());
  ASSERT_TRUE(env.store.CreatePod(PodBuilder("low").Priority(10).Req("cpu", "2").Obj()).ok());
  env.RunUntilIdle();
  ASSERT_EQ(env.NodeOf("low"), "n1");

  ASSERT_TRUE(env.store.CreatePod(PodBuilder("high").Priority(1000).Req("cpu", "2").Obj()).ok());
  const std::string high_uid = env.store.GetPod("default", "high")->metadata.uid;
  env.RunUntilIdle();
  // The victim is gone, the preemptor is nominated to its node and not bound yet.
  EXPECT_EQ(env.NodeOf("low"), "<deleted>");
  EXPECT_EQ(env.NodeOf("high"), "");
  EXPECT_EQ(env.NominatedOf("high"), "n1");
  std::vector<std::string> low_events = env.EventsOf("default/low");
  ASSERT_FALSE(low_events.empty());
  EXPECT_EQ(low_events.back(), "Preempted: Preempted by pod " + high_uid + " on node n1");
  auto ev = env.store.LastEventFor("default/high");
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->reason, "FailedScheduling");
  EXPECT_EQ(ev->message, "0/1 nodes are available: 1 Insufficient cpu.");

  // After its backoff the preemptor binds to the nominated node.
  env.AdvanceAndRun(30 * kSec);
  EXPECT_EQ(env.NodeOf("high"), "n1");
  EXPECT_EQ(env.NominatedOf("high"), "");
}

TEST(PreemptionTest, NoLowerPriorityPodsMeansNoPreemption) {
  Env env;
  ASSERT_TRUE(env.store.CreateNode(MakeNode("n1")).ok());
  ASSERT_TRUE(env.store.CreatePod(PodBuilder("a").Priority(1000).Req("cpu", "2").Obj()).ok());
  env.RunUntilIdle();
  ASSERT_TRUE(env.store.CreatePod(PodBuilder("b").Priority(1000).Req("cpu", "2").Obj()).ok());
  env.RunUntilIdle();
  EXPECT_EQ(env.NodeOf("a"), "n1");
  EXPECT_EQ(env.NodeOf("b"), "");
  auto ev = env.store.LastEventFor("default/b");
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->message,
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
            "0/1 nodes are available: 1 No preemption victims found for incoming pod.");
}

std::string GangYaml() {
  std::string y =
      "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: train, "
      "namespace: default}\nspec: {minMember: 2}\n---\n";
  for (const char* name : {"train-0", "train-1"}) {
    y += std::string("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ") + name +
         "\n  namespace: default\n  labels: {scheduling.x-k8s.io/pod-group: train}\nspec:\n"
         "  priority: 10\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: "
         "\"2\"}}}]\n---\n";
  }
  return y;
}

TEST(PreemptionTest, RunningGangIsDeletedWholeWhenItsMemberIsAVictim) {
  Env env;
  ASSERT_TRUE(env.store.CreateNode(MakeNode("n1")).ok());
  ASSERT_TRUE(env.store.CreateNode(MakeNode("n2")).ok());
  env.Apply(GangYaml());
  env.RunUntilIdle();
  ASSERT_NE(env.NodeOf("train-0"), "");
  ASSERT_NE(env.NodeOf("train-1"), "");
  ASSERT_NE(env.NodeOf("train-0"), env.NodeOf("train-1"));

  // One node's worth of room: the gang member there is a victim, and so is its peer on
  // the other node.
  ASSERT_TRUE(env.store.CreatePod(PodBuilder("high").Priority(1000).Req("cpu", "2").Obj()).ok());
  const std::string high_uid = env.store.GetPod("default", "high")->metadata.uid;
  env.RunUntilIdle();
  const std::string nominated = env.NominatedOf("high");
  ASSERT_TRUE(nominated == "n1" || nominated == "n2") << nominated;
  EXPECT_EQ(env.NodeOf("train-0"), "<deleted>");
  EXPECT_EQ(env.NodeOf("train-1"), "<deleted>");
  for (const char* name : {"default/train-0", "default/train-1"}) {
    auto evs = env.EventsOf(name);
    ASSERT_FALSE(evs.empty()) << name;
    EXPECT_EQ(evs.back(), "Preempted: Preempted by pod " + high_uid + " on node " + nominated);
  }

  env.AdvanceAndRun(30 * kSec);
  EXPECT_EQ(env.NodeOf("high"), nominated);
}

TEST(PreemptionTest, SingleVictimIsPreferredOverAWholeGang) {
  // n3 runs one pod of the gang's priority; evicting it costs one victim, evicting a gang
  // member costs the whole gang (two): n3 is chosen and the gang keeps running.
  Env env;
  ASSERT_TRUE(env.store.CreateNode(MakeNode("n1")).ok());
  ASSERT_TRUE(env.store.CreateNode(MakeNode("n2")).ok());
  env.Apply(GangYaml());
  env.RunUntilIdle();
  ASSERT_TRUE(env.store.CreateNode(MakeNode("n3")).ok());
  ASSERT_TRUE(env.store.CreatePod(PodBuilder("solo").Priority(10).Req("cpu", "2").Obj()).ok());
  env.RunUntilIdle();
  ASSERT_EQ(env.NodeOf("solo"), "n3");

  ASSERT_TRUE(env.store.CreatePod(PodBuilder("high").Priority(1000).Req("cpu", "2").Obj()).ok());
  env.RunUntilIdle();
  EXPECT_EQ(env.NominatedOf("high"), "n3");
  EXPECT_EQ(env.NodeOf("solo"), "<deleted>");
  EXPECT_NE(env.NodeOf("train-0"), "<deleted>");
  EXPECT_NE(env.NodeOf("train-1"), "<deleted>");
  env.AdvanceAndRun(30 * kSec);
  EXPECT_EQ(env.NodeOf("high"), "n3");
}

}  // namespace
}  // namespace phalanx::scheduler
