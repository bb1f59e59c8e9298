// Gang reservations through the scheduler (the GangReservation plugin, planner.cc and its Filter;
// the plugin) on the in-process Store: the Reserved Event on the PodGroup, the reservation in the
// gang's reason, the Filter's message for a pod that may not backfill, a short pod that may,
// and the reservation's end when the gang is deleted or does not start in time.
#include "gang/reservation.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>

#include "config/config.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_test_env.h"

namespace phalanx::scheduler {
namespace {

constexpr int64_t kSec = api::kNanosPerSecond;

config::KubeSchedulerConfiguration ReservationConfig(const std::string& args) {
  auto cfg = config::DefaultConfiguration();
  cfg.profiles[0].plugins.multi_point.enabled.push_back({"GangReservation", 0});
  cfg.profiles[0].plugin_config.push_back(
      {"GangReservation", std::make_shared<const YAML::Node>(YAML::Load(args))});
  return cfg;
}

std::string GpuNode(const std::string& name) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name +
         "}}\nstatus:\n  capacity: {cpu: \"8\", memory: 64Gi, pods: \"110\", nvidia.com/gpu: "
         "\"4\"}\n---\n";
}

// A pod of 4 GPUs; `group` "": no gang; `runtime_s` 0: no expected runtime.
std::string GpuPod(const std::string& name, const std::string& group, int runtime_s) {
  std::string meta =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: ml\n";
  if (!group.empty()) meta += "  labels: {scheduling.x-k8s.io/pod-group: " + group + "}\n";
  if (runtime_s > 0) {
    meta += "  annotations: {scheduling.phalanx.dev/expected-runtime-seconds: \"" +
            std::to_string(runtime_s) + "\"}\n";
  }
  return meta +
         "spec:\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\", "
         "nvidia.com/gpu: \"4\"}}}]\n---\n";
}

std::string Condition(SchedulerTestEnv& env, const std::string& name) {
  auto p = env.store.GetPod("ml", name);
  if (!p) return "<deleted>";
  for (const auto& c : p->status.conditions) {
    if (c.type == "PodScheduled") return c.message;
  }
  return "";
}

// Two nodes of 4 GPUs busy with pods ending at +500 s and +800 s; a PodGroup ml/big of two
// 4-GPU members that cannot fit until both end.
void StartStarvedGang(SchedulerTestEnv& env) {
  env.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n" + GpuNode("n1") +
            GpuNode("n2") + GpuPod("fill-1", "", 500) + GpuPod("fill-2", "", 800));
  env.RunUntilIdle();
  ASSERT_EQ(env.NodeOf("fill-1", "ml").empty(), false);
  env.Apply(
      "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: big, "
      "namespace: ml}\nspec: {minMember: 2}\n---\n" +
      GpuPod("big-0", "big", 100) + GpuPod("big-1", "big", 100));
  env.RunUntilIdle();
}

TEST(GangReservationTest, ReservedEventReasonBackfillAndFilterMessage) {
  SchedulerTestEnv env({ReservationConfig("{reservationThresholdSeconds: 60}")});
  StartStarvedGang(env);
  EXPECT_EQ(env.sched->reservations().ActiveCount(), 0u);  // waited 0 s
  // The unschedulable flush retries the gang after it waited past the threshold.
  env.AdvanceAndRun(400 * kSec);
  ASSERT_EQ(env.sched->reservations().ActiveCount(), 1u);
  auto held = env.sched->reservations().HeldBy("ml/big");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->nodes, (std::vector<std::string>{"n1", "n2"}));
  auto ev = env.store.LastObjectEvent("PodGroup", "ml", "big");
  ASSERT_TRUE(ev.has_value());
  // The FailedScheduling event of the same cycle follows the Reserved one; both name it.
  EXPECT_NE(ev->message.find("Reserved 2 node(s) for gang ml/big (2 members)"), std::string::npos)
      << ev->message;
  EXPECT_NE(Condition(env, "big-0").find("forecast start"), std::string::npos)
      << Condition(env, "big-0");
  bool reserved_event = false;
  for (const auto& e : env.store.Events()) reserved_event |= e.reason == "Reserved";
  EXPECT_TRUE(reserved_event);

  // n1 frees; a long pod may not use it, a short one backfills it.
  ASSERT_TRUE(env.store.DeletePod("ml", "fill-1").ok());
  env.Apply(GpuPod("long", "", 10000) + GpuPod("short", "", 60));
  env.RunUntilIdle();
  EXPECT_EQ(env.NodeOf("long", "ml"), "");
  EXPECT_NE(Condition(env, "long").find("node(s) reserved for gang ml/big from"), std::string::npos)
      << Condition(env, "long");
  EXPECT_EQ(env.NodeOf("short", "ml"), "n1");

  // Both nodes free: the gang starts and its reservation ends.
  ASSERT_TRUE(env.store.DeletePod("ml", "short").ok());
  ASSERT_TRUE(env.store.DeletePod("ml", "fill-2").ok());
  env.AdvanceAndRun(20 * kSec);  // past the members' backoff
  EXPECT_FALSE(env.NodeOf("big-0", "ml").empty());
  EXPECT_FALSE(env.NodeOf("big-1", "ml").empty());
  EXPECT_EQ(env.sched->reservations().ActiveCount(), 0u);
  EXPECT_EQ(env.sched->reservations().Counters().released_bound, 1);
}

TEST(GangReservationTest, ReleasedWhenTheGangIsDeleted) {
  SchedulerTestEnv env({ReservationConfig("{reservationThresholdSeconds: 60}")});
  StartStarvedGang(env);
  env.AdvanceAndRun(400 * kSec);
  ASSERT_EQ(env.sched->reservations().ActiveCount(), 1u);
  ASSERT_TRUE(env.store.DeletePod("ml", "big-0").ok());  // gated: 1 of 2 members
  env.RunUntilIdle();
  EXPECT_EQ(env.sched->reservations().ActiveCount(), 0u);
  EXPECT_EQ(env.sched->reservations().Counters().released_gone, 1);
}

TEST(GangReservationTest, ExpiresWhenTheGangDoesNotStartWithinGrace) {
  SchedulerTestEnv env(
      {ReservationConfig("{reservationThresholdSeconds: 60, reservationGraceSeconds: 30}")});
  StartStarvedGang(env);
  env.AdvanceAndRun(400 * kSec);
  auto held = env.sched->reservations().HeldBy("ml/big");
  ASSERT_TRUE(held.has_value());
  // The fills outlive their forecast (nothing deletes them): past forecast + grace the
  // reservation expires, and the gang's next failed cycle plans again.
  const api::Timestamp expires = held->expires;
  env.AdvanceAndRun(expires - env.clock.Now() + kSec);
  EXPECT_EQ(env.sched->reservations().Counters().expired, 1);
}

// ---- preemptAfterSeconds: starvation eviction (GangReservation's PodGroupPostFilter, planner.cc)
// ----

std::string GpuNodeN(const std::string& name, int gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name +
         "}}\nstatus:\n  capacity: {cpu: \"16\", memory: 64Gi, pods: \"110\", nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}\n---\n";
}

// A pod of `gpus` GPUs on `node` (nodeSelector), in PodGroup `group` when not empty.
std::string PinnedPod(const std::string& name, const std::string& group, int gpus,
                      const std::string& node, int runtime_s) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: ml\n";
  if (!group.empty()) y += "  labels: {scheduling.x-k8s.io/pod-group: " + group + "}\n";
  y += "  annotations: {scheduling.phalanx.dev/expected-runtime-seconds: \"" +
       std::to_string(runtime_s) + "\"}\nspec:\n";
  if (!node.empty()) y += "  nodeSelector: {kubernetes.io/hostname: " + node + "}\n";
  return y +
         "  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\", "
         "nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}}}]\n---\n";
}

std::string Group(const std::string& name, int min_member) {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: ml}\nspec: {minMember: " + std::to_string(min_member) + "}\n---\n";
}

// n1 (8 GPUs): "old" (2 GPUs, started first), job "newjob" member new-0 (2 GPUs, started
// 100 s later; its PodGroup has minMember 1 and a second member new-1 on n2) and keep-0 of
// PodGroup "keep" (minMember 2; keep-1 on n2). n2 (8 GPUs): keep-1 (4) and new-1 (2) and a
// 2-GPU "other". Every pod runs 5,000 s. Then gang ml/big (2 x 2 GPUs) arrives: it fits
// nowhere until "old" ends, so its reservation is n1 (frees first), forecast ~5,000 s.
void StartGangStarvedBySmallJobs(SchedulerTestEnv& env) {
  env.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n" + GpuNodeN("n1", 8) +
            GpuNodeN("n2", 8) + PinnedPod("old", "", 2, "n1", 5000) +
            PinnedPod("other", "", 2, "n2", 5100));
  env.RunUntilIdle();
  env.AdvanceAndRun(100 * kSec);
  env.Apply(Group("newjob", 1) + PinnedPod("new-0", "newjob", 2, "n1", 5000) +
            PinnedPod("new-1", "newjob", 2, "n2", 5000) + Group("keep", 2) +
            PinnedPod("keep-0", "keep", 4, "n1", 5000) +
            PinnedPod("keep-1", "keep", 4, "n2", 5000));
  env.RunUntilIdle();
  for (const char* p : {"old", "other", "new-0", "new-1", "keep-0", "keep-1"}) {
    ASSERT_FALSE(env.NodeOf(p, "ml").empty()) << p;
  }
  env.Apply(Group("big", 2) + PinnedPod("big-0", "big", 1, "", 100) +
            PinnedPod("big-1", "big", 1, "", 100));
  env.RunUntilIdle();
  ASSERT_EQ(env.NodeOf("big-0", "ml"), "");
}

TEST(GangReservationEvictionTest, StarvingGangEvictsTheNewestSmallJobWholeNeverAGang) {
  SchedulerTestEnv env(
      {ReservationConfig("{reservationThresholdSeconds: 60, preemptAfterSeconds: 120}")});
  StartGangStarvedBySmallJobs(env);
  env.AdvanceAndRun(400 * kSec);  // the unschedulable flush retries the gang: reserve, evict
  const auto history = env.sched->reservations().History();
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].gang, "ml/big");
  EXPECT_EQ(history[0].nodes, (std::vector<std::string>{"n1"}));
  // The newest job goes (both its pods: the job is evicted whole, also new-1 on n2); the
  // older small pod and the members of the 2-member gang "keep" stay.
  EXPECT_EQ(env.NodeOf("new-0", "ml"), "<deleted>");
  EXPECT_EQ(env.NodeOf("new-1", "ml"), "<deleted>");
  EXPECT_EQ(env.NodeOf("old", "ml"), "n1");
  EXPECT_EQ(env.NodeOf("keep-0", "ml"), "n1");
  EXPECT_EQ(env.NodeOf("keep-1", "ml"), "n2");
  EXPECT_EQ(env.NodeOf("other", "ml"), "n2");
  const auto c = env.sched->reservations().Counters();
  EXPECT_EQ(c.evictions, 1);
  EXPECT_EQ(c.evicted_pods, 2);
  // The victims' Preempted Event, through the preemption path, names the gang and why.
  std::vector<std::string> ev = env.EventsOf("ml/new-0");
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().rfind("Preempted: Preempted by gang ml/big (starving: waited ", 0), 0u)
      << ev.back();
  EXPECT_NE(ev.back().find(") on node n1"), std::string::npos) << ev.back();
  // The gang's StarvationEviction Event names the victims.
  bool named = false;
  for (const auto& e : env.store.Events()) {
    if (e.reason != "StarvationEviction") continue;
    named = e.message.find("gang ml/big") != std::string::npos &&
            e.message.find("ml/new-0") != std::string::npos &&
            e.message.find("ml/new-1") != std::string::npos;
  }
  EXPECT_TRUE(named);
  // The gang starts once the victims are gone, and its reservation ends.
  env.AdvanceAndRun(30 * kSec);
  EXPECT_FALSE(env.NodeOf("big-0", "ml").empty());
  EXPECT_FALSE(env.NodeOf("big-1", "ml").empty());
  EXPECT_EQ(env.sched->reservations().ActiveCount(), 0u);
}

TEST(GangReservationEvictionTest, NothingEvictedWhenOffOrOnlyGangsHoldTheReservedNodes) {
  {  // off (the default): the reservation holds, nothing is evicted
    SchedulerTestEnv env({ReservationConfig("{reservationThresholdSeconds: 60}")});
    StartGangStarvedBySmallJobs(env);
    env.AdvanceAndRun(400 * kSec);
    EXPECT_TRUE(env.sched->reservations().HeldBy("ml/big").has_value());
    EXPECT_EQ(env.NodeOf("new-0", "ml"), "n1");
    EXPECT_EQ(env.sched->reservations().Counters().evictions, 0);
  }
  {  // on, but n1 and n2 hold only members of 2-member gangs: no victim, the gang's reason says so
    SchedulerTestEnv env(
        {ReservationConfig("{reservationThresholdSeconds: 60, preemptAfterSeconds: 120}")});
    env.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n" + GpuNodeN("n1", 8) +
              GpuNodeN("n2", 8) + Group("g", 2) + PinnedPod("g-0", "g", 8, "n1", 5000) +
              PinnedPod("g-1", "g", 8, "n2", 6000));
    env.RunUntilIdle();
    env.Apply(Group("big", 2) + PinnedPod("big-0", "big", 1, "", 100) +
              PinnedPod("big-1", "big", 1, "", 100));
    env.RunUntilIdle();
    env.AdvanceAndRun(400 * kSec);
    EXPECT_TRUE(env.sched->reservations().HeldBy("ml/big").has_value());
    EXPECT_EQ(env.NodeOf("g-0", "ml"), "n1");
    EXPECT_EQ(env.NodeOf("g-1", "ml"), "n2");
    EXPECT_EQ(env.sched->reservations().Counters().evictions, 0);
    EXPECT_NE(Condition(env, "big-0").find("starvation eviction: no evictable pod"),
              std::string::npos)
        << Condition(env, "big-0");
  }
}

}  // namespace
}  // namespace phalanx::scheduler
