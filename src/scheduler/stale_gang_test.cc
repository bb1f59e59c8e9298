// Stale gangs end to end (gang/staleness.h, Scheduler::SweepStaleGangs): a running gang
// that loses a member is reported on its PodGroup, then evicted after its grace or left to
// be made whole, per KAI's stale-gang eviction and the user's settings.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>

#include "gang/staleness.h"
#include "scheduler/scheduler_test_env.h"

namespace phalanx::scheduler {
namespace {

constexpr int64_t kSec = api::kNanosPerSecond;

std::string Nodes() {
  std::string y;
  for (const char* n : {"n1", "n2", "n3"}) {
    y += std::string("apiVersion: v1\nkind: Node\nmetadata: {name: ") + n +
         "}\nstatus: {capacity: {cpu: \"2\", memory: 4Gi, pods: \"10\"}}\n---\n";
  }
  return y;
}

// A KAI PodGroup (annotation `grace` when not empty) of minMember 2.
std::string KaiGroup(const std::string& grace) {
  std::string y =
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n  name: train\n"
      "  namespace: ml\n";
  if (!grace.empty())
    y += "  annotations: {kai.scheduler/staleness-grace-period: \"" + grace + "\"}\n";
  return y + "spec: {minMember: 2}\n---\n";
}

// A member of KAI pod group "train" that fills a node.
std::string KaiMember(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  annotations: {pod-group-name: train}\nspec:\n  containers: "
         "[{name: c, image: busybox, resources: {requests: {cpu: \"2\"}}}]\n---\n";
}

// A Coscheduling PodGroup "train" of minMember 2 and its member `name`.
std::string CoschedulingGroup() {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: train, "
         "namespace: ml}\nspec: {minMember: 2}\n---\n";
}
std::string CoschedulingMember(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  labels: {scheduling.x-k8s.io/pod-group: train}\nspec:\n  "
         "containers: [{name: c, image: busybox, resources: {requests: {cpu: \"2\"}}}]\n---\n";
}

std::string LastGangEvent(SchedulerTestEnv& env) {
  auto e = env.store.LastObjectEvent("PodGroup", "ml", "train");
  return e ? e->reason + ": " + e->message : "";
}

// Both members bound, then train-0 is lost (deleted, as when its node fails).
void RunThenLoseAMember(SchedulerTestEnv& env, const std::string& manifests) {
  env.Apply(Nodes() + manifests);
  env.RunUntilIdle();
  ASSERT_NE(env.NodeOf("train-0", "ml"), "");
  ASSERT_NE(env.NodeOf("train-1", "ml"), "");
  auto lost = env.store.GetPod("ml", "train-0");
  ASSERT_TRUE(env.store.DeletePod(*lost).ok());
  env.AdvanceAndRun(1 * kSec);
}

TEST(StaleGangTest, KaiGangBelowItsMinimumIsReportedThenEvictedAfterKaisDefaultGrace) {
  SchedulerTestEnv env;
  RunThenLoseAMember(env, KaiGroup("") + KaiMember("train-0") + KaiMember("train-1"));
  EXPECT_EQ(LastGangEvent(env),
            "StaleGang: gang ml/train is stale: 1 of 1 members running (minMember 2); its "
            "running members are evicted in 60 s unless it is made whole");
  env.AdvanceAndRun(58 * kSec);
  EXPECT_NE(env.NodeOf("train-1", "ml"), "<deleted>");  // within the grace
  env.AdvanceAndRun(2 * kSec);
  env.sched->WaitForBindings();
  EXPECT_EQ(env.NodeOf("train-1", "ml"), "<deleted>");
  EXPECT_EQ(LastGangEvent(env).rfind("StaleGangEvicted: Evicted: gang ml/train stayed below its "
                                     "minimum for 60 s (1 of 1 members running (minMember 2))",
                                     0),
            0u)
      << LastGangEvent(env);
  const auto ev = env.EventsOf("ml/train-1");
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().rfind("Evicted: Evicted: gang ml/train", 0), 0u) << ev.back();
}

TEST(StaleGangTest, NegativeGraceWaitsToBeMadeWholeAndAReplacementEndsTheSpell) {
  SchedulerTestEnv env;
  RunThenLoseAMember(env, KaiGroup("-1s") + KaiMember("train-0") + KaiMember("train-1"));
  EXPECT_NE(LastGangEvent(env).find("waiting to be made whole"), std::string::npos)
      << LastGangEvent(env);
  env.AdvanceAndRun(600 * kSec);
  EXPECT_NE(env.NodeOf("train-1", "ml"), "<deleted>");
  // The controller's replacement joins the running gang: it is whole again.
  env.Apply(KaiMember("train-0"));
  env.AdvanceAndRun(2 * kSec);
  EXPECT_NE(env.NodeOf("train-0", "ml"), "");
  env.AdvanceAndRun(1 * kSec);  // the next Tick sees it
  bool whole = false;
  for (const auto& e : env.store.Events()) {
    whole = whole || (e.pod_key == "PodGroup ml/train" && e.reason == "GangWhole" &&
                      e.message == "gang ml/train is whole again");
  }
  EXPECT_TRUE(whole);
}

TEST(StaleGangTest, OtherDialectsWaitByDefaultAndGangSchedulingArgsTurnEvictionOn) {
  {
    SchedulerTestEnv env;
    RunThenLoseAMember(
        env, CoschedulingGroup() + CoschedulingMember("train-0") + CoschedulingMember("train-1"));
    EXPECT_NE(LastGangEvent(env).find("waiting to be made whole"), std::string::npos)
        << LastGangEvent(env);
    env.AdvanceAndRun(600 * kSec);
    EXPECT_NE(env.NodeOf("train-1", "ml"), "<deleted>");
  }
  SchedulerTestOptions o;
  config::PluginConfig pc;
  pc.name = "GangScheduling";
  pc.args = std::make_shared<YAML::Node>(YAML::Load("{staleGangGracePeriodSeconds: 30}"));
  o.config.profiles[0].plugin_config.push_back(pc);
  SchedulerTestEnv env(std::move(o));
  RunThenLoseAMember(
      env, CoschedulingGroup() + CoschedulingMember("train-0") + CoschedulingMember("train-1"));
  EXPECT_NE(LastGangEvent(env).find("evicted in 30 s"), std::string::npos) << LastGangEvent(env);
  env.AdvanceAndRun(30 * kSec);
  env.sched->WaitForBindings();
  EXPECT_EQ(env.NodeOf("train-1", "ml"), "<deleted>");
}

TEST(StaleGangTest, InvalidGraceAnnotationIsAnErrorNamingTheField) {
  SchedulerTestEnv env;
  env.Apply(Nodes() + KaiGroup("soon") + KaiMember("train-0") + KaiMember("train-1"));
  env.RunUntilIdle();
  EXPECT_EQ(env.NodeOf("train-0", "ml"), "");
  // PreEnqueue holds the members with the gang's error (the gang is invalid).
  auto q = env.sched->scheduling_queue().Get("ml/train-0");
  ASSERT_NE(q, nullptr);
  EXPECT_NE(
      q->last_failure_message.find("metadata.annotations.kai.scheduler/staleness-grace-period"),
      std::string::npos)
      << q->last_failure_message;
}

TEST(StaleGangTest, UnknownGangSchedulingArgIsAnError) {
  SchedulerOptions o;
  o.config = config::DefaultConfiguration();
  config::PluginConfig pc;
  pc.name = "GangScheduling";
  pc.args = std::make_shared<YAML::Node>(YAML::Load("{staleGangGraceSeconds: 30}"));
  o.config.profiles[0].plugin_config.push_back(pc);
  o.registry = plugins::NewInTreeRegistry();
  framework::VirtualClock clock(0);
  store::Store store(clock);
  o.clock = &clock;
  o.client = &store;
  auto s = Scheduler::New(std::move(o));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      s.status().Message().find("GangSchedulingArgs: unknown field \"staleGangGraceSeconds\""),
      std::string::npos)
      << s.status().Message();
}

}  // namespace
}  // namespace phalanx::scheduler
