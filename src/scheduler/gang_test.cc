// Gang scheduling end to end: the PodGroup cycle and the Permit compatibility mode,
// against the in-process Store on a virtual clock.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <random>

#include "api/decode.h"
#include "api/pod_resources.h"
#include "config/config.h"
#include "framework/clock.h"
#include "gang/default_podgroup_manager.h"
#include "gang/dialects.h"
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

config::KubeSchedulerConfiguration PermitModeConfig() {
  auto cfg = config::DefaultConfiguration();
  config::PluginConfig pc;
  pc.name = "GangScheduling";
  auto node = std::make_shared<YAML::Node>(YAML::Load("{mode: Permit}"));
  pc.args = node;
  cfg.profiles[0].plugin_config.push_back(pc);
  return cfg;
}

struct Env : SchedulerTestEnv {
  explicit Env(config::KubeSchedulerConfiguration cfg = config::DefaultConfiguration(),
               uint64_t seed = 1, framework::Registry extra = {})
      : SchedulerTestEnv({std::move(cfg), seed, std::move(extra)}) {}
  // Bound pods per gang label value "gang".
  std::map<std::string, int> BoundByLabel(const std::string& label) {
    std::map<std::string, int> out;
    for (const auto& p : store.ListPods()) {
      auto it = p->metadata.labels.find(label);
      if (it != p->metadata.labels.end() && !p->spec.node_name.empty()) ++out[it->second];
    }
    return out;
  }
  std::string Condition(const std::string& ns, const std::string& name) {
    auto p = store.GetPod(ns, name);
    for (const auto& c : p->status.conditions) {
      if (c.type == "PodScheduled") return c.message;
    }
    return "";
  }
};

std::string Node(const std::string& name, int cpu, int pods = 110, int gpus = 0) {
  std::string s = "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
                  ", labels: {kubernetes.io/hostname: " + name +
                  "}}\nstatus:\n  capacity: {cpu: \"" + std::to_string(cpu) +
                  "\", memory: 64Gi, pods: \"" + std::to_string(pods) + "\"";
  if (gpus) s += ", nvidia.com/gpu: \"" + std::to_string(gpus) + "\"";
  return s + "}\n---\n";
}

std::string CoschedulingPodGroup(const std::string& ns, const std::string& name, int min) {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: " + ns + "}\nspec: {minMember: " + std::to_string(min) + "}\n---\n";
}

std::string CoschedulingPod(const std::string& ns, const std::string& name,
                            const std::string& group, const std::string& cpu, int gpus = 0) {
  std::string req = "cpu: \"" + cpu + "\"";
  if (gpus) req += ", nvidia.com/gpu: \"" + std::to_string(gpus) + "\"";
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
         "\n  labels: {scheduling.x-k8s.io/pod-group: " + group + ", gang: " + group +
         "}\nspec:\n  containers: [{name: c, image: busybox, resources: {requests: {" + req +
         "}}}]\n---\n";
}

std::string KoordPod(const std::string& name, const std::string& gang, int min,
                     const std::string& mode, const std::string& waiting) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n  labels: {gang: " + gang +
         "}\n  annotations:\n    gang.scheduling.koordinator.sh/name: " + gang +
         "\n    gang.scheduling.koordinator.sh/min-available: \"" + std::to_string(min) +
         "\"\n    gang.scheduling.koordinator.sh/mode: " + mode +
         "\n    gang.scheduling.koordinator.sh/waiting-time: " + waiting +
         "\nspec:\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: "
         "\"1\"}}}]\n---\n";
}

// Koordinator's design doc example: room for 10 pods, three gangs of 5 arriving
// interleaved. Whole-gang placement runs two gangs and the third waits holding nothing.
TEST(GangTest, KoordinatorExampleTransactionalTwoGangsRunThirdWaitsNoDeadlock) {
  Env env;
  std::string y = Node("n1", 10);
  for (int i = 0; i < 5; ++i) {
    for (const char* g : {"a", "b", "c"})
      y += KoordPod(std::string(g) + "-" + std::to_string(i), g, 5, "Strict", "600s");
  }
  env.Apply(y);
  env.RunUntilIdle();
  auto bound = env.BoundByLabel("gang");
  int full = 0, empty = 0;
  for (const char* g : {"a", "b", "c"}) {
    if (bound[g] == 5) ++full;
    if (bound[g] == 0) ++empty;
  }
  EXPECT_EQ(full, 2);
  EXPECT_EQ(empty, 1);
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 0u);
  // The waiting gang's pods say why.
  for (const char* g : {"a", "b", "c"}) {
    if (bound[g] != 0) continue;
    EXPECT_NE(env.Condition("default", std::string(g) + "-0").find("pending members fit"),
              std::string::npos)
        << env.Condition("default", std::string(g) + "-0");
  }
  // When one running gang finishes, the third runs.
  for (const char* g : {"a", "b", "c"}) {
    if (bound[g] != 5) continue;
    for (int i = 0; i < 5; ++i)
      ASSERT_TRUE(env.store.DeletePod("default", std::string(g) + "-" + std::to_string(i)).ok());
    break;
  }
  env.AdvanceAndRun(60 * kSec);
  bound = env.BoundByLabel("gang");
  int running = 0;
  for (const auto& [g, n] : bound) running += n;
  EXPECT_EQ(running, 10);
}

// The same cluster in NonStrict Permit mode (Koordinator's / Coscheduling's flow): pods
// are assumed one by one and wait at Permit, so the interleaved gangs split the 10 slots
// and none reaches 5: the documented deadlock. This is why Transactional is the default.
TEST(GangTest, KoordinatorExamplePermitNonStrictReproducesDeadlock) {
  Env env(PermitModeConfig());
  std::string y = Node("n1", 10);
  for (int i = 0; i < 5; ++i) {
    for (const char* g : {"a", "b", "c"})
      y += KoordPod(std::string(g) + "-" + std::to_string(i), g, 5, "NonStrict", "600s");
  }
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 10u);  // every slot held...
  auto bound = env.BoundByLabel("gang");
  EXPECT_TRUE(bound.empty());     // ...and no gang can start
  env.AdvanceAndRun(300 * kSec);  // still stuck before the waiting time
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 10u);
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  // After the 600 s waiting time the waiting pods are rejected and their slots released
  // (only to be split again: NonStrict has no way out of the interleaving).
  env.AdvanceAndRun(301 * kSec);
  int timed_out = 0;
  for (const auto& p : env.store.ListPods()) {
    for (const auto& c : p->status.conditions) {
      if (c.message.find("rejected due to timeout") != std::string::npos) ++timed_out;
    }
  }
  EXPECT_GT(timed_out, 0);
}

TEST(GangTest, GangThatNeverFitsHoldsNothingAndItsRoomIsUsableAtOnce) {
  Env env;
  std::string y = Node("n1", 4, 110, 4) + Node("n2", 4, 110, 4);
  y += CoschedulingPodGroup("ml", "big", 3);
  for (int i = 0; i < 3; ++i) y += CoschedulingPod("ml", "big-" + std::to_string(i), "big", "1", 4);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 0u);
  EXPECT_NE(env.Condition("ml", "big-0").find("pod group ml/big"), std::string::npos)
      << env.Condition("ml", "big-0");
  EXPECT_NE(env.Condition("ml", "big-2").find("Insufficient nvidia.com/gpu"), std::string::npos)
      << env.Condition("ml", "big-2");
  // The PodGroup itself carries the gang-level event.
  auto ev = env.store.LastObjectEvent("PodGroup", "ml", "big");
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->reason, "FailedScheduling");
  EXPECT_NE(ev->message.find("2 of 3 pending members fit, 3 needed"), std::string::npos)
      << ev->message;
  // A single pod wanting all of n1's GPUs schedules in the same instant.
  ASSERT_TRUE(
      env.store.CreatePod(PodBuilder("solo").Req("cpu", "1").Req("nvidia.com/gpu", "4").Obj())
          .ok());
  env.RunUntilIdle();
  EXPECT_FALSE(env.store.GetPod("default", "solo")->spec.node_name.empty());
}

TEST(GangTest, GangBindsWhenItFitsAndOnlyThen) {
  Env env;
  std::string y = Node("n1", 8, 110, 8) + Node("n2", 8, 110, 8);
  y += CoschedulingPodGroup("ml", "train", 4);
  for (int i = 0; i < 3; ++i)
    y += CoschedulingPod("ml", "train-" + std::to_string(i), "train", "1", 4);
  env.Apply(y);
  env.RunUntilIdle();
  // Three of four members exist: gated at PreEnqueue, nothing attempted.
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  EXPECT_NE(env.Condition("ml", "train-0").find(""), std::string::npos);
  EXPECT_EQ(env.sched->stats().attempts, 0);
  env.Apply(CoschedulingPod("ml", "train-3", "train", "1", 4));
  env.RunUntilIdle();
  EXPECT_EQ(env.BoundByLabel("gang")["train"], 4);
}

// minMember is mutable (upstream 1.37 makes a PodGroup's minCount mutable; Coscheduling's
// and Volcano's always were): a gang of 4 that waits for room on a 2-node cluster starts
// with the 2 members that fit once its PodGroup lowers minMember to 2, without a restart.
TEST(GangTest, LoweredMinMemberLetsAWaitingGangStart) {
  Env env;
  std::string y = Node("n1", 8, 110, 8) + Node("n2", 8, 110, 8);
  y += CoschedulingPodGroup("ml", "train", 4);
  for (int i = 0; i < 4; ++i)
    y += CoschedulingPod("ml", "train-" + std::to_string(i), "train", "1", 8);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(env.BoundByLabel("gang").empty());  // 4 whole-node members, 2 nodes
  api::Manifests m;
  ASSERT_TRUE(api::DecodeManifests(CoschedulingPodGroup("ml", "train", 2), "update.yaml", &m).ok());
  ASSERT_EQ(m.objects.size(), 1u);
  ASSERT_TRUE(env.store.UpdateObject(m.objects[0]).ok());
  env.AdvanceAndRun(60 * kSec);
  EXPECT_EQ(env.BoundByLabel("gang")["train"], 2);
}

// A PreBind plugin that deletes the chosen node of the first pod it sees from the store.
class DeleteFirstNodeAtPreBind : public framework::PreBindPlugin {
 public:
  explicit DeleteFirstNodeAtPreBind(store::Store* const* store) : store_(store) {}
  std::string_view Name() const override { return "DeleteFirstNodeAtPreBind"; }
  framework::Status PreBind(framework::CycleState&, const framework::PodInfo&,
                            const std::string& node) override {
    if (!deleted_) {
      deleted_ = true;
      EXPECT_TRUE((*store_)->DeleteNode(node).ok());
    }
    return framework::Status::Success();
  }

 private:
  store::Store* const* store_;
  bool deleted_ = false;
};

// A member whose node is deleted between the gang's placement and its binding is not
// bound there; it is requeued and, with its bound siblings counting toward minMember,
// placed on another node.
TEST(GangTest, MemberWhoseNodeIsDeletedBeforeBindingIsPlacedAgain) {
  auto cfg = config::DefaultConfiguration();
  cfg.profiles[0].plugins.pre_bind.enabled.push_back({"DeleteFirstNodeAtPreBind", 0});
  store::Store* store_ptr = nullptr;
  framework::Registry extra;
  ASSERT_TRUE(extra
                  .Register("DeleteFirstNodeAtPreBind",
                            [&store_ptr](framework::PluginArgs, framework::Handle&)
                                -> framework::StatusOr<std::unique_ptr<framework::Plugin>> {
                              return std::unique_ptr<framework::Plugin>(
                                  new DeleteFirstNodeAtPreBind(&store_ptr));
                            })
                  .IsSuccess());
  Env env(cfg, 1, extra);
  store_ptr = &env.store;
  std::string y = Node("n1", 1) + Node("n2", 1) + Node("n3", 1) + Node("n4", 1);
  y += CoschedulingPodGroup("ml", "train", 4);
  for (int i = 0; i < 4; ++i)
    y += CoschedulingPod("ml", "train-" + std::to_string(i), "train", "1");
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_EQ(env.BoundByLabel("gang")["train"], 3);
  EXPECT_EQ(env.sched->stats().bind_failures, 1);
  env.Apply(Node("n5", 1));
  env.AdvanceAndRun(60 * kSec);
  EXPECT_EQ(env.BoundByLabel("gang")["train"], 4);
  for (int i = 0; i < 4; ++i) {
    auto p = env.store.GetPod("ml", "train-" + std::to_string(i));
    EXPECT_FALSE(p->spec.node_name.empty())
        << p->Key() << ": " << env.Condition("ml", p->metadata.name);
  }
}

TEST(GangTest, GangGroupAcrossNamespacesBindsOnlyWhenBothFit) {
  auto group_pod = [](const std::string& ns, const std::string& name, const std::string& gang,
                      int gpus) {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
           "\n  labels: {gang: " + gang +
           "}\n  annotations:\n    gang.scheduling.koordinator.sh/name: " + gang +
           "\n    gang.scheduling.koordinator.sh/min-available: \"2\"\n    "
           "gang.scheduling.koordinator.sh/groups: "
           "'[\"team-a/driver\", \"team-b/workers\"]'\nspec:\n  containers: [{name: c, image: x, "
           "resources: "
           "{requests: {cpu: \"1\", nvidia.com/gpu: \"" +
           std::to_string(gpus) + "\"}}}]\n---\n";
  };
  Env env;
  std::string y = Node("n1", 16, 110, 8);
  y += group_pod("team-a", "driver-0", "driver", 1) + group_pod("team-a", "driver-1", "driver", 1);
  y += group_pod("team-b", "workers-0", "workers", 4) +
       group_pod("team-b", "workers-1", "workers", 4);
  env.Apply(y);
  env.RunUntilIdle();
  // driver fits (2 GPUs) but workers need 8 more: 10 > 8. Nothing binds.
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 0u);
  // Add room: both bind together.
  env.Apply(Node("n2", 16, 110, 8));
  env.AdvanceAndRun(30 * kSec);
  auto bound = env.BoundByLabel("gang");
  EXPECT_EQ(bound["driver"], 2);
  EXPECT_EQ(bound["workers"], 2);
}

TEST(GangTest, PermitModeTimesOutOnVirtualClockAndRollsBack) {
  Env env(PermitModeConfig());
  std::string y = Node("n1", 8);
  y += CoschedulingPodGroup("ml", "g", 3);
  y += "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: unused, "
       "namespace: ml}\nspec: {minMember: 1}\n---\n";
  env.Apply(y);
  // Members exist but one of them cannot fit (needs 9 cpus): the others wait at Permit.
  env.Apply(CoschedulingPod("ml", "g-0", "g", "1") + CoschedulingPod("ml", "g-1", "g", "1") +
            CoschedulingPod("ml", "g-2", "g", "9"));
  env.RunUntilIdle();
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 2u);
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  auto* fw = env.sched->Profile("default-scheduler");
  const api::Timestamp deadline = fw->NextPermitDeadline();
  EXPECT_EQ(deadline, env.clock.Now() + 300 * kSec);  // default permitWaitingTimeSeconds
  env.clock.AdvanceTo(deadline - 1);
  env.sched->Tick();
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 2u);  // not a nanosecond early
  env.clock.AdvanceTo(deadline);
  env.sched->Tick();
  EXPECT_EQ(env.sched->cache().AssumedPodCount(), 0u);  // rolled back
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  EXPECT_NE(env.Condition("ml", "g-0").find("rejected due to timeout"), std::string::npos)
      << env.Condition("ml", "g-0");
}

TEST(GangTest, BadInputGivesClearReasonsAndNoCrash) {
  Env env;
  std::string y = Node("n1", 8);
  // A pod naming a PodGroup that does not exist.
  y += CoschedulingPod("ml", "orphan", "missing", "1");
  // minMember larger than the members that will ever exist.
  y += CoschedulingPodGroup("ml", "toobig", 5);
  y += CoschedulingPod("ml", "toobig-0", "toobig", "1");
  // Koordinator: min-available 0 and an unknown mode.
  y += KoordPod("zero-0", "zero", 0, "Strict", "10s");
  y += KoordPod("weird-0", "weird", 1, "Sometimes", "10s");
  env.Apply(y);
  env.AdvanceAndRun(600 * kSec);
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  auto pending_reason = [&](const std::string& ns, const std::string& name) {
    auto p = env.store.GetPod(ns, name);
    auto q = env.sched->scheduling_queue().Get(p->Key());
    return q ? q->last_failure_message : std::string("<not queued>");
  };
  EXPECT_NE(pending_reason("ml", "orphan").find("ml/missing"), std::string::npos)
      << pending_reason("ml", "orphan");
  EXPECT_NE(pending_reason("ml", "toobig-0").find("1/5"), std::string::npos)
      << pending_reason("ml", "toobig-0");
  EXPECT_NE(pending_reason("default", "zero-0").find("invalid"), std::string::npos)
      << pending_reason("default", "zero-0");
  EXPECT_NE(pending_reason("default", "weird-0").find("invalid"), std::string::npos)
      << pending_reason("default", "weird-0");
}

// Property: random clusters and gang mixes; no gang ever has between 1 and minMember-1
// members bound unless it was satisfied before, and no node is over-allocated.
TEST(GangTest, PropertyNoPartialGangsNoOvercommit) {
  const int kSeeds = 2000;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    std::mt19937 rng(seed);
    Env env(config::DefaultConfiguration(), seed);
    int nodes = 1 + rng() % 6;
    std::string y;
    for (int n = 0; n < nodes; ++n)
      y += Node("n" + std::to_string(n), 2 + rng() % 8, 110, rng() % 5);
    int gangs = 1 + rng() % 5;
    std::map<std::string, int> min_of;
    for (int g = 0; g < gangs; ++g) {
      std::string name = "g" + std::to_string(g);
      int members = 1 + rng() % 6;
      int min = 1 + rng() % members;
      min_of[name] = min;
      y += CoschedulingPodGroup("default", name, min);
      for (int m = 0; m < members; ++m) {
        y += CoschedulingPod("default", name + "-" + std::to_string(m), name,
                             std::to_string(1 + rng() % 3), rng() % 3);
      }
    }
    env.Apply(y);
    std::map<std::string, bool> satisfied;
    for (int step = 0; step < 6; ++step) {
      env.AdvanceAndRun(20 * kSec);
      auto bound = env.BoundByLabel("gang");
      for (const auto& [g, n] : bound) {
        if (n >= min_of[g]) satisfied[g] = true;
        ASSERT_TRUE(n == 0 || n >= min_of[g] || satisfied[g])
            << "seed " << seed << ": gang " << g << " has " << n << "/" << min_of[g] << " bound";
      }
      // Over-allocation: per node, bound requests <= allocatable.
      std::map<std::string, api::Resource> used;
      for (const auto& p : env.store.ListPods()) {
        if (!p->spec.node_name.empty())
          used[p->spec.node_name].Add(framework::PodInfo::Make(p)->requests);
      }
      for (const auto& [node, u] : used) {
        auto alloc = api::ResourceListToResource(env.store.GetNode(node)->status.allocatable);
        ASSERT_LE(u.milli_cpu, alloc.milli_cpu) << "seed " << seed << " node " << node;
        for (const auto& [id, v] : u.scalar) ASSERT_LE(v, alloc.Scalar(id)) << "seed " << seed;
      }
      // Remove a random bound gang now and then, so others get room.
      if (!bound.empty() && rng() % 2) {
        auto it = bound.begin();
        std::advance(it, rng() % bound.size());
        for (const auto& p : env.store.ListPods()) {
          if (p->metadata.labels.count("gang") && p->metadata.labels.at("gang") == it->first) {
            (void)env.store.DeletePod(p->metadata.namespace_, p->metadata.name);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace phalanx::scheduler

namespace phalanx::scheduler {
namespace {

std::string ZoneNode(const std::string& name, const std::string& zone, int gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name + ", topology.kubernetes.io/zone: " + zone +
         "}}\nstatus:\n  capacity: {cpu: \"32\", memory: 64Gi, "
         "pods: \"110\", nvidia.com/gpu: \"" +
         std::to_string(gpus) + "\"}\n---\n";
}

std::string TopologyPodGroup(const std::string& name, int min, const std::string& policy) {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  annotations:\n    scheduling.phalanx.dev/topology-key: "
         "topology.kubernetes.io/zone\n"
         "    scheduling.phalanx.dev/topology-policy: " +
         policy + "\nspec: {minMember: " + std::to_string(min) + "}\n---\n";
}

std::map<std::string, std::string> ZonesOf(Env& env, const std::string& gang) {
  std::map<std::string, std::string> out;
  for (const auto& p : env.store.ListPods()) {
    if (p->metadata.labels.count("gang") && p->metadata.labels.at("gang") == gang &&
        !p->spec.node_name.empty()) {
      out[p->metadata.name] =
          env.store.GetNode(p->spec.node_name)->metadata.labels.at("topology.kubernetes.io/zone");
    }
  }
  return out;
}

std::string KaiPod(const std::string& name, const std::string& sub_group, int gpus) {
  std::string req = "cpu: \"1\"";
  if (gpus) req += ", nvidia.com/gpu: \"" + std::to_string(gpus) + "\"";
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  labels: {gang: serve, kai.scheduler/subgroup-name: " + sub_group +
         "}\n  annotations: {pod-group-name: serve}\nspec:\n  containers: [{name: c, image: "
         "busybox, resources: {requests: {" +
         req + "}}}]\n---\n";
}

constexpr char kKaiServe[] =
    "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: serve, namespace: "
    "ml}\nspec:\n  subGroups:\n  - {name: prefill, minMember: 2}\n  - {name: decode, minMember: "
    "2}\n---\n";

// Nested quorums in the Permit compatibility mode: members wait at Permit until the gang is
// Satisfied, which with KAI subGroups means every subgroup's minimum, not the summed
// minMember that four prefill members reach alone. Nothing binds until decode fits.
TEST(GangTest, PermitModeKaiSubGroupsWaitForEverySubGroup) {
  Env env(PermitModeConfig());
  std::string y = Node("cpu", 8) + kKaiServe;
  for (int i = 0; i < 4; ++i) y += KaiPod("prefill-" + std::to_string(i), "prefill", 0);
  for (int i = 0; i < 2; ++i) y += KaiPod("decode-" + std::to_string(i), "decode", 1);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  env.AdvanceAndRun(400 * kSec);  // past the Permit wait: the waiting members roll back
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  env.Apply(Node("gpu", 8, 110, 2));
  env.AdvanceAndRun(400 * kSec);
  EXPECT_EQ(env.BoundByLabel("gang")["serve"], 6);
}

// The transactional cycle on the same gang: nothing is held while decode does not fit, and
// every member's reason names the short subgroup.
TEST(GangTest, TransactionalKaiSubGroupShortNamesIt) {
  Env env;
  std::string y = Node("cpu", 8) + kKaiServe;
  for (int i = 0; i < 4; ++i) y += KaiPod("prefill-" + std::to_string(i), "prefill", 0);
  for (int i = 0; i < 2; ++i) y += KaiPod("decode-" + std::to_string(i), "decode", 1);
  env.Apply(y);
  env.RunUntilIdle();
  EXPECT_TRUE(env.BoundByLabel("gang").empty());
  EXPECT_NE(env.Condition("ml", "prefill-3").find("subgroup \"decode\": 0/2 members placeable"),
            std::string::npos)
      << env.Condition("ml", "prefill-3");
  env.Apply(Node("gpu", 8, 110, 2));
  env.AdvanceAndRun(60 * kSec);
  EXPECT_EQ(env.BoundByLabel("gang")["serve"], 6);
}

TEST(GangTopologyTest, RequiredTopologyPlacesTheWholeGangInOneZone) {
  Env env;
  std::string y = ZoneNode("a1", "a", 4) + ZoneNode("a2", "a", 4) + ZoneNode("b1", "b", 8) +
                  ZoneNode("b2", "b", 8);
  y += TopologyPodGroup("ring", 4, "Required");
  for (int i = 0; i < 4; ++i)
    y += CoschedulingPod("ml", "ring-" + std::to_string(i), "ring", "1", 4);
  env.Apply(y);
  env.RunUntilIdle();
  auto zones = ZonesOf(env, "ring");
  ASSERT_EQ(zones.size(), 4u);
  for (const auto& [pod, zone] : zones) EXPECT_EQ(zone, "b") << pod;
}

TEST(GangTopologyTest, RequiredTopologyThatNoZoneFitsHoldsNothingPreferredSpreads) {
  for (const std::string policy : {"Required", "Preferred"}) {
    Env env;
    std::string y = ZoneNode("a1", "a", 8) + ZoneNode("b1", "b", 8);
    y += TopologyPodGroup("wide", 3, policy);
    for (int i = 0; i < 3; ++i)
      y += CoschedulingPod("ml", "wide-" + std::to_string(i), "wide", "1", 4);
    env.Apply(y);
    env.RunUntilIdle();
    auto zones = ZonesOf(env, "wide");
    if (policy == "Required") {
      EXPECT_TRUE(zones.empty());
      EXPECT_EQ(env.sched->cache().AssumedPodCount(), 0u);
      EXPECT_NE(env.Condition("ml", "wide-0").find("topology.kubernetes.io/zone"),
                std::string::npos)
          << env.Condition("ml", "wide-0");
    } else {
      EXPECT_EQ(zones.size(), 3u);
    }
  }
}

}  // namespace
}  // namespace phalanx::scheduler
