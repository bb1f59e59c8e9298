// Gang reservations through the scheduler (reservation_planner.cc, the GangReservation
// plugin) on the in-process Store: the Reserved Event on the PodGroup, the reservation in the
// gang's reason, the Filter's message for a pod that may not backfill, a short pod that may,
// and the reservation's end when the gang is deleted or does not start in time.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>

#include "config/config.h"
#include "gang/reservation.h"
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
         "}}\nstatus:\n  capacity: {cpu: \"8\", memory: 64Gi, pods: \"110\", nvidia.com/gpu: \"4\"}\n---\n";
}

// A pod of 4 GPUs; `group` "": no gang; `runtime_s` 0: no expected runtime.
std::string GpuPod(const std::string& name, const std::string& group, int runtime_s) {
  std::string meta = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: ml\n";
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
  env.Apply("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: big, "
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
  SchedulerTestEnv env({ReservationConfig("{reservationThresholdSeconds: 60, reservationGraceSeconds: 30}")});
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

}  // namespace
}  // namespace phalanx::scheduler
