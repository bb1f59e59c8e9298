// PodGroup status written by the scheduler (podgroup_status.h) through the in-process
// Store, and status-only PodGroup updates leaving the queue alone.
#include "gang/podgroup_status.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "api/decode.h"
#include "config/config.h"
#include "framework/clock.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_test_env.h"
#include "store/store.h"

namespace phalanx::scheduler {
namespace {

using gang::ComputePodGroupStatus;
using gang::GangOutcome;
using gang::OnlyStatusChanged;

constexpr int64_t kSec = api::kNanosPerSecond;

struct Env : SchedulerTestEnv {
  // binding_workers > 0: bindings run on a pool of that many threads (wait for them with
  // sched->WaitForBindings()).
  explicit Env(int binding_workers = 0)
      : SchedulerTestEnv({config::DefaultConfiguration(), 1, {}, binding_workers}) {}
  YAML::Node Status(const std::string& key) {
    auto o = store.GetObject(key);
    EXPECT_TRUE(o != nullptr) << key;
    return o ? YAML::Clone((*o->object)["status"]) : YAML::Node();
  }
};

std::string Node(const std::string& name, int cpu) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus:\n  capacity: {cpu: \"" + std::to_string(cpu) +
         "\", memory: 64Gi, pods: \"110\"}\n---\n";
}

std::string PodGroup(const std::string& api_version, const std::string& name, int min) {
  return "apiVersion: " + api_version + "\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: ml}\nspec: {minMember: " + std::to_string(min) + "}\n---\n";
}

// A member pod; `volcano` names the gang with Volcano's annotation, else Coscheduling's label.
std::string Pod(const std::string& name, const std::string& group, const std::string& cpu,
                bool volcano = false) {
  std::string ref = volcano ? "  annotations: {scheduling.k8s.io/group-name: " + group + "}\n"
                            : "  labels: {scheduling.x-k8s.io/pod-group: " + group + "}\n";
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: ml\n" + ref +
         "  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: " + group +
         "-job, uid: u1}]\nspec:\n  containers: [{name: c, image: busybox, resources: "
         "{requests: {cpu: \"" +
         cpu + "\"}}}]\n---\n";
}

const char* kCosched = "PodGroup.scheduling.x-k8s.io/ml/";
const char* kVolcano = "PodGroup.scheduling.volcano.sh/ml/";

TEST(PodGroupStatusTest, CoschedulingGangThatFitsIsScheduledWithMinMemberBound) {
  Env env;
  std::string y =
      Node("n1", 4) + Node("n2", 4) + PodGroup("scheduling.x-k8s.io/v1alpha1", "train", 3);
  for (int i = 0; i < 4; ++i) y += Pod("train-" + std::to_string(i), "train", "1");
  env.Apply(y);
  env.RunUntilIdle();
  YAML::Node st = env.Status(std::string(kCosched) + "train");
  EXPECT_EQ(st["phase"].as<std::string>(""), "Scheduled");
  // scheduler-plugins' CRD (manifests/coscheduling/crd.yaml) has no status.scheduled.
  EXPECT_FALSE(st["scheduled"].IsDefined());
  EXPECT_EQ(st["occupiedBy"].as<std::string>(""), "ml/train-job");
  // quorum (the 3rd member) arrived at 1000 s + 2 ms: RFC 3339 to the second.
  EXPECT_EQ(st["scheduleStartTime"].as<std::string>(""), "1970-01-01T00:16:40Z");
  EXPECT_FALSE(st["conditions"].IsDefined());  // Coscheduling has no conditions
}

// The older group's CRD (scheduling.sigs.k8s.io, as Koordinator installs it) keeps
// status.scheduled: bound members, finished ones included.
TEST(PodGroupStatusTest, SigsCoschedulingGangCountsScheduledMembers) {
  Env env;
  std::string y =
      Node("n1", 4) + Node("n2", 4) + PodGroup("scheduling.sigs.k8s.io/v1alpha1", "train", 3);
  for (int i = 0; i < 4; ++i) {
    y += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train-" + std::to_string(i) +
         "\n  namespace: ml\n  labels: {pod-group.scheduling.sigs.k8s.io: train}\nspec:\n"
         "  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n"
         "---\n";
  }
  env.Apply(y);
  env.RunUntilIdle();
  YAML::Node st = env.Status("PodGroup.scheduling.sigs.k8s.io/ml/train");
  EXPECT_EQ(st["phase"].as<std::string>(""), "Scheduled");
  EXPECT_EQ(st["scheduled"].as<int>(-1), 4);
}

// With the binding pool, members bind on several threads; the binding that completes
// last writes the gang's status (full counts), not every member: one write per gang,
// where one per member (8) would be written otherwise.
TEST(PodGroupStatusTest, BindingPoolWritesEachGangsStatusOnceItsBindingsAreDone) {
  Env env(/*binding_workers=*/4);
  constexpr int kGangs = 10, kSize = 8;
  std::string y;
  for (int i = 0; i < 8; ++i) y += Node("n" + std::to_string(i), 16);
  for (int g = 0; g < kGangs; ++g) {
    const std::string name = "g" + std::to_string(g);
    y += PodGroup("scheduling.x-k8s.io/v1alpha1", name, kSize);
    for (int i = 0; i < kSize; ++i) y += Pod(name + "-" + std::to_string(i), name, "1");
  }
  env.Apply(y);
  env.RunUntilIdle();
  env.sched->WaitForBindings();
  for (int g = 0; g < kGangs; ++g) {
    YAML::Node st = env.Status(std::string(kCosched) + "g" + std::to_string(g));
    EXPECT_EQ(st["phase"].as<std::string>(""), "Scheduled") << g;
    EXPECT_EQ(st["running"].as<int>(-1), 0) << g;
  }
  // One write per gang: the last binding's (the PodGroup cycle leaves it to the bindings).
  EXPECT_EQ(env.store.podgroup_status_writes(), kGangs);
}

TEST(PodGroupStatusTest, UnschedulableGangIsPendingAndItsOwnStatusWriteDoesNotRequeueIt) {
  Env env;
  std::string y =
      Node("n1", 2) + Node("n2", 2) + PodGroup("scheduling.x-k8s.io/v1alpha1", "big", 3);
  for (int i = 0; i < 3; ++i) y += Pod("big-" + std::to_string(i), "big", "1500m");
  env.Apply(y);
  env.RunUntilIdle();
  YAML::Node st = env.Status(std::string(kCosched) + "big");
  EXPECT_EQ(st["phase"].as<std::string>(""), "Pending");
  EXPECT_EQ(st["running"].as<int>(-1), 0);
  const int64_t writes = env.store.podgroup_status_writes();
  EXPECT_GE(writes, 1);
  // The write came back as a PodGroup update: the members stay in unschedulablePods.
  auto c = env.sched->scheduling_queue().Counts();
  EXPECT_EQ(c.unschedulable, 3) << "active " << c.active << " backoff " << c.backoff;
  EXPECT_EQ(c.backoff + c.active, 0);
  const int64_t attempts = env.sched->stats().attempts;
  env.clock.Advance(30 * kSec);  // past any backoff, short of the 5 min unschedulable flush
  env.RunUntilIdle();
  EXPECT_EQ(env.sched->stats().attempts, attempts);
  EXPECT_EQ(env.store.podgroup_status_writes(), writes);  // nothing changed: nothing written
  // A spec change is a real change: it requeues.
  auto obj = *env.store.GetObject(std::string(kCosched) + "big");
  auto doc = std::make_shared<YAML::Node>(YAML::Clone(*obj.object));
  (*doc)["spec"]["minMember"] = 2;
  obj.object = doc;
  ASSERT_TRUE(env.store.UpdateObject(obj).ok());
  c = env.sched->scheduling_queue().Counts();
  EXPECT_EQ(c.unschedulable, 0);
}

TEST(PodGroupStatusTest, VolcanoGangGetsPhaseAndCondition) {
  Env env;
  std::string y = Node("n1", 2) + PodGroup("scheduling.volcano.sh/v1beta1", "big", 2) +
                  PodGroup("scheduling.volcano.sh/v1beta1", "ok", 1);
  for (int i = 0; i < 2; ++i) y += Pod("big-" + std::to_string(i), "big", "1500m", true);
  y += Pod("ok-0", "ok", "100m", true);
  env.Apply(y);
  env.RunUntilIdle();
  YAML::Node st = env.Status(std::string(kVolcano) + "big");
  EXPECT_EQ(st["phase"].as<std::string>(""), "Pending");
  ASSERT_TRUE(st["conditions"].IsSequence());
  EXPECT_EQ(st["conditions"][0]["type"].as<std::string>(""), "Unschedulable");
  EXPECT_EQ(st["conditions"][0]["reason"].as<std::string>(""), "NotEnoughResources");
  EXPECT_NE(st["conditions"][0]["message"].as<std::string>("").find("1 of 2 pending members fit"),
            std::string::npos)
      << st["conditions"][0]["message"].as<std::string>("");
  EXPECT_FALSE(st["scheduled"].IsDefined());  // not a Volcano field
  YAML::Node ok = env.Status(std::string(kVolcano) + "ok");
  EXPECT_EQ(ok["phase"].as<std::string>(""), "Running");
  EXPECT_EQ(ok["conditions"][0]["type"].as<std::string>(""), "Scheduled");
}

TEST(PodGroupStatusTest, GangBelowMinMemberIsPendingNotEnoughTasks) {
  gang::DefaultPodGroupManager m;
  api::Unstructured pg;
  pg.api_version = "scheduling.volcano.sh/v1beta1";
  pg.kind = "PodGroup";
  pg.metadata.namespace_ = "ml";
  pg.metadata.name = "g";
  pg.object = std::make_shared<YAML::Node>(
      YAML::Load("{apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: g, "
                 "namespace: ml}, spec: {minMember: 3}}"));
  m.OnObjectAdd(std::make_shared<api::Unstructured>(pg));
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.namespace_ = "ml";
  pod->metadata.name = "g-0";
  pod->metadata.annotations["scheduling.k8s.io/group-name"] = "g";
  m.OnPodAdd(pod, 5);
  auto w = ComputePodGroupStatus(m, "ml/g", GangOutcome::kNone, "", nullptr);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->api_version, "scheduling.volcano.sh/v1beta1");
  EXPECT_EQ(w->name, "g");
  EXPECT_EQ(w->status.phase, "Pending");
  EXPECT_EQ(w->status.condition_reason, "NotEnoughTasks");
  EXPECT_EQ(w->status.condition_message, "1/3 members exist, waiting for more");
  EXPECT_FALSE(ComputePodGroupStatus(m, "ml/unknown", GangOutcome::kNone, "", nullptr));
}

TEST(PodGroupStatusTest, OnlyStatusChangedIgnoresStatusAndServerMetadata) {
  auto make = [](const std::string& doc) {
    api::Unstructured u;
    u.api_version = "scheduling.x-k8s.io/v1alpha1";
    u.kind = "PodGroup";
    u.object = std::make_shared<YAML::Node>(YAML::Load(doc));
    return u;
  };
  auto a = make("{metadata: {name: g, resourceVersion: '1', generation: 1}, spec: {minMember: 2}}");
  auto b = make(
      "{metadata: {name: g, resourceVersion: '2', generation: 2}, spec: {minMember: 2}, "
      "status: {phase: Pending}}");
  auto c = make("{metadata: {name: g}, spec: {minMember: 3}, status: {phase: Pending}}");
  auto d = make("{metadata: {name: g}, spec: {minMember: 2, queue: q}}");
  EXPECT_TRUE(OnlyStatusChanged(a, b));
  EXPECT_FALSE(OnlyStatusChanged(b, c));
  EXPECT_FALSE(OnlyStatusChanged(a, d));
  EXPECT_FALSE(OnlyStatusChanged(d, a));
  b.metadata.labels["x"] = "y";
  EXPECT_FALSE(OnlyStatusChanged(a, b));
}

}  // namespace
}  // namespace phalanx::scheduler

namespace phalanx::scheduler {
namespace {

// A Volcano member of task `task` (annotation volcano.sh/task-spec).
std::string TaskPod(const std::string& name, const std::string& group, const std::string& task,
                    const std::string& cpu) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  annotations: {scheduling.k8s.io/group-name: " + group +
         ", volcano.sh/task-spec: " + task +
         "}\nspec:\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu +
         "\"}}}]\n---\n";
}

// Nested quorums: the status condition and the Event on the PodGroup name the short task
// (minTaskMember), not only the summed count; once it fits, the Scheduled Event counts the
// members per task.
TEST(PodGroupStatusTest, VolcanoShortTaskIsNamedInStatusAndEvent) {
  Env env;
  std::string y = Node("n1", 4) +
                  "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: "
                  "serve, namespace: ml}\nspec: {minMember: 4, minTaskMember: {prefill: 2, "
                  "decode: 2}}\n---\n";
  for (int i = 0; i < 4; ++i) {
    y += TaskPod("prefill-" + std::to_string(i), "serve", "prefill", "500m");
  }
  for (int i = 0; i < 2; ++i) y += TaskPod("decode-" + std::to_string(i), "serve", "decode", "3");
  env.Apply(y);
  env.RunUntilIdle();
  for (const auto& p : env.store.ListPods()) EXPECT_TRUE(p->spec.node_name.empty()) << p->Key();
  YAML::Node st = env.Status(std::string(kVolcano) + "serve");
  EXPECT_EQ(st["phase"].as<std::string>(""), "Pending");
  ASSERT_TRUE(st["conditions"].IsSequence());
  EXPECT_EQ(st["conditions"][0]["reason"].as<std::string>(""), "NotEnoughResources");
  const std::string msg = st["conditions"][0]["message"].as<std::string>("");
  EXPECT_NE(msg.find("subgroup \"decode\": 1/2 members placeable"), std::string::npos) << msg;
  auto ev = env.store.LastObjectEvent("PodGroup", "ml", "serve");
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->reason, "FailedScheduling");
  EXPECT_NE(ev->message.find("subgroup \"decode\""), std::string::npos) << ev->message;

  env.Apply(Node("n2", 4));
  env.clock.AdvanceTo(env.clock.Now() + 60 * kSec);
  env.RunUntilIdle();
  for (const auto& p : env.store.ListPods()) EXPECT_FALSE(p->spec.node_name.empty()) << p->Key();
  ev = env.store.LastObjectEvent("PodGroup", "ml", "serve");
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->reason, "Scheduled");
  EXPECT_NE(ev->message.find("(subgroups prefill: 4, decode: 2)"), std::string::npos)
      << ev->message;
  st = env.Status(std::string(kVolcano) + "serve");
  EXPECT_EQ(st["phase"].as<std::string>(""), "Running");
}

}  // namespace
}  // namespace phalanx::scheduler

// Pod phases: the gang's status follows its members' pods as a kubelet runs
// them — Coscheduling's Running / Finished / Failed phases and counts, KAI's counts and
// schedulingConditions, the upstream PodGroup's PodGroupScheduled condition.
namespace phalanx::scheduler {
namespace {

// Sets `phase` on pod ml/`name` as a kubelet would (status only).
void SetPhase(Env& env, const std::string& name, const std::string& phase) {
  auto p = env.store.GetPod("ml", name);
  ASSERT_TRUE(p != nullptr) << name;
  api::Pod copy = *p;
  copy.status.phase = phase;
  ASSERT_TRUE(env.store.UpdatePod(copy).ok()) << name;
}

std::string Phase(Env& env, const std::string& key) {
  return env.Status(key)["phase"].as<std::string>("");
}

TEST(PodGroupStatusTest, CoschedulingGoesScheduledRunningFinishedAsItsPodsRunAndEnd) {
  Env env;
  const std::string key = std::string(kCosched) + "train";
  env.Apply(Node("n1", 4) + PodGroup("scheduling.x-k8s.io/v1alpha1", "train", 2) +
            Pod("train-0", "train", "1") + Pod("train-1", "train", "1"));
  env.RunUntilIdle();
  EXPECT_EQ(Phase(env, key), "Scheduled");
  SetPhase(env, "train-0", "Running");
  EXPECT_EQ(Phase(env, key), "Scheduled");  // 1 of minMember 2 running
  EXPECT_EQ(env.Status(key)["running"].as<int>(-1), 1);
  SetPhase(env, "train-1", "Running");
  YAML::Node st = env.Status(key);
  EXPECT_EQ(st["phase"].as<std::string>(""), "Running");
  EXPECT_EQ(st["running"].as<int>(-1), 2);
  SetPhase(env, "train-0", "Succeeded");
  st = env.Status(key);
  EXPECT_EQ(st["phase"].as<std::string>(""), "Running");  // running 1 + succeeded 1
  EXPECT_EQ(st["running"].as<int>(-1), 1);
  EXPECT_EQ(st["succeeded"].as<int>(-1), 1);
  SetPhase(env, "train-1", "Succeeded");
  st = env.Status(key);
  EXPECT_EQ(st["phase"].as<std::string>(""), "Finished");
  EXPECT_EQ(st["succeeded"].as<int>(-1), 2);
  EXPECT_EQ(st["running"].as<int>(-1), 0);
  EXPECT_FALSE(st["scheduled"].IsDefined());  // not in scheduling.x-k8s.io's CRD
}

TEST(PodGroupStatusTest, CoschedulingWithAFailedMemberIsFailed) {
  Env env;
  const std::string key = std::string(kCosched) + "train";
  env.Apply(Node("n1", 4) + PodGroup("scheduling.x-k8s.io/v1alpha1", "train", 2) +
            Pod("train-0", "train", "1") + Pod("train-1", "train", "1"));
  env.RunUntilIdle();
  SetPhase(env, "train-0", "Running");
  SetPhase(env, "train-1", "Running");
  SetPhase(env, "train-1", "Failed");
  YAML::Node st = env.Status(key);
  EXPECT_EQ(st["phase"].as<std::string>(""), "Failed");
  EXPECT_EQ(st["failed"].as<int>(-1), 1);
  EXPECT_EQ(st["running"].as<int>(-1), 1);
}

std::string KaiGroupYaml(const std::string& name, int min) {
  return "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: ml}\nspec: {minMember: " + std::to_string(min) + "}\n---\n";
}

std::string KaiPod(const std::string& name, const std::string& group, const std::string& cpu) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  annotations: {pod-group-name: " + group +
         "}\nspec:\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu +
         "\"}}}]\n---\n";
}

TEST(PodGroupStatusTest, KaiGetsCountsAndUnschedulableOnNodePoolUntilPlaced) {
  Env env;
  const std::string key = "PodGroup.scheduling.run.ai/ml/train";
  env.Apply(Node("n1", 2) + KaiGroupYaml("train", 2) + KaiPod("train-0", "train", "1500m") +
            KaiPod("train-1", "train", "1500m"));
  env.RunUntilIdle();
  YAML::Node st = env.Status(key);
  EXPECT_FALSE(st["phase"].IsDefined());  // KAI defines no phase values
  ASSERT_TRUE(st["schedulingConditions"].IsSequence());
  ASSERT_EQ(st["schedulingConditions"].size(), 1u);
  const YAML::Node c = st["schedulingConditions"][0];
  EXPECT_EQ(c["type"].as<std::string>(""), "UnschedulableOnNodePool");
  EXPECT_EQ(c["status"].as<std::string>(""), "True");
  EXPECT_EQ(c["reason"].as<std::string>(""), "Unschedulable");
  EXPECT_EQ(c["nodePool"].as<std::string>(""), "default");
  EXPECT_NE(c["message"].as<std::string>("").find("1 of 2 pending members fit"), std::string::npos)
      << c["message"].as<std::string>("");
  EXPECT_EQ(c["reasons"][0]["message"].as<std::string>(""), c["message"].as<std::string>(""));
  EXPECT_EQ(st["pending"].as<int>(-1), 2);
  EXPECT_FALSE(st["scheduled"].IsDefined());  // not a KAI field

  env.Apply(Node("n2", 2));
  env.AdvanceAndRun(60 * kSec);
  ASSERT_NE(env.NodeOf("train-0", "ml"), "");
  ASSERT_NE(env.NodeOf("train-1", "ml"), "");
  st = env.Status(key);
  ASSERT_TRUE(st["schedulingConditions"].IsSequence());
  EXPECT_EQ(st["schedulingConditions"].size(), 0u);  // cleared once placed
  SetPhase(env, "train-0", "Running");
  SetPhase(env, "train-1", "Succeeded");
  st = env.Status(key);
  EXPECT_EQ(st["running"].as<int>(-1), 1);
  EXPECT_EQ(st["succeeded"].as<int>(-1), 1);
  EXPECT_EQ(st["pending"].as<int>(-1), 0);
  EXPECT_EQ(st["failed"].as<int>(-1), 0);
}

std::string UpstreamGroupYaml(const std::string& name, int min) {
  return "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: ml}\nspec:\n  schedulingPolicy: {gang: {minCount: " + std::to_string(min) +
         "}}\n---\n";
}

std::string UpstreamPod(const std::string& name, const std::string& group, const std::string& cpu) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         ", namespace: ml}\nspec:\n  schedulingGroup: {podGroupName: " + group +
         "}\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu +
         "\"}}}]\n---\n";
}

TEST(PodGroupStatusTest, UpstreamPodGroupGetsPodGroupScheduledCondition) {
  Env env;
  const std::string key = "PodGroup.scheduling.k8s.io/ml/";
  env.Apply(Node("n1", 2) + UpstreamGroupYaml("big", 2) + UpstreamGroupYaml("ok", 2) +
            UpstreamPod("big-0", "big", "1500m") + UpstreamPod("big-1", "big", "1500m") +
            UpstreamPod("ok-0", "ok", "100m") + UpstreamPod("ok-1", "ok", "100m"));
  env.RunUntilIdle();
  YAML::Node st = env.Status(key + "big");
  EXPECT_FALSE(st["phase"].IsDefined());
  ASSERT_TRUE(st["conditions"].IsSequence());
  EXPECT_EQ(st["conditions"][0]["type"].as<std::string>(""), "PodGroupScheduled");
  EXPECT_EQ(st["conditions"][0]["status"].as<std::string>(""), "False");
  EXPECT_EQ(st["conditions"][0]["reason"].as<std::string>(""), "Unschedulable");
  EXPECT_TRUE(st["conditions"][0]["lastTransitionTime"].IsDefined());
  st = env.Status(key + "ok");
  ASSERT_TRUE(st["conditions"].IsSequence());
  EXPECT_EQ(st["conditions"][0]["type"].as<std::string>(""), "PodGroupScheduled");
  EXPECT_EQ(st["conditions"][0]["status"].as<std::string>(""), "True");
  EXPECT_EQ(st["conditions"][0]["reason"].as<std::string>(""), "Scheduled");
  EXPECT_EQ(st["conditions"][0]["message"].as<std::string>(""), "2/2 members bound");
  EXPECT_FALSE(st["running"].IsDefined());  // the upstream PodGroup has no counts
  // Its members finish: still scheduled (True), not back to waiting for members.
  SetPhase(env, "ok-0", "Succeeded");
  SetPhase(env, "ok-1", "Succeeded");
  EXPECT_EQ(env.Status(key + "ok")["conditions"][0]["status"].as<std::string>(""), "True");
}

// A 1.35 Workload's embedded pod groups have no status of their own: nothing is written.
TEST(PodGroupStatusTest, WorkloadPodGroupsGetNoStatus) {
  gang::DefaultPodGroupManager m;
  api::Unstructured wl;
  wl.api_version = "scheduling.k8s.io/v1alpha1";
  wl.kind = "Workload";
  wl.metadata.namespace_ = "ml";
  wl.metadata.name = "train";
  wl.object = std::make_shared<YAML::Node>(
      YAML::Load("{apiVersion: scheduling.k8s.io/v1alpha1, kind: Workload, metadata: {name: train, "
                 "namespace: ml}, spec: {podGroups: [{name: w, policy: {gang: {minCount: 2}}}]}}"));
  m.OnObjectAdd(std::make_shared<api::Unstructured>(wl));
  ASSERT_TRUE(m.Info("ml/train/w").has_value());
  EXPECT_FALSE(ComputePodGroupStatus(m, "ml/train/w", GangOutcome::kPlaced, "", nullptr));
}

api::PodPtr Member(const std::string& name, const std::string& phase, bool bound) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.namespace_ = "ml";
  p->metadata.name = name;
  p->metadata.labels["scheduling.x-k8s.io/pod-group"] = "g";
  if (bound) p->spec.node_name = "n1";
  p->status.phase = phase;
  return p;
}

// Live mode sees a pod that ends twice, in either order: the filtered pod watch deletes
// its last running state, the terminal-pod watch adds its final phase. Either way it is
// counted once; a recreated pod of the same name replaces the finished one.
TEST(PodGroupStatusTest, FinishedMemberIsCountedOnceWhicheverWatchReportsFirst) {
  for (bool delete_first : {true, false}) {
    gang::DefaultPodGroupManager m;
    api::Unstructured pg;
    pg.api_version = "scheduling.x-k8s.io/v1alpha1";
    pg.kind = "PodGroup";
    pg.metadata.namespace_ = "ml";
    pg.metadata.name = "g";
    pg.object = std::make_shared<YAML::Node>(
        YAML::Load("{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: g, "
                   "namespace: ml}, spec: {minMember: 2}}"));
    m.OnObjectAdd(std::make_shared<api::Unstructured>(pg));
    m.OnPodAdd(Member("g-0", "Running", true), 1);
    m.OnPodAdd(Member("g-1", "Running", true), 1);
    EXPECT_EQ(m.SummaryOf("ml/g")->counts.running, 2);
    if (delete_first) {
      m.OnPodDelete(Member("g-0", "Running", true));
      EXPECT_EQ(m.OnPodFinished(Member("g-0", "Succeeded", true)), "ml/g");
    } else {
      EXPECT_EQ(m.OnPodFinished(Member("g-0", "Succeeded", true)), "ml/g");
      m.OnPodDelete(Member("g-0", "Running", true));
    }
    EXPECT_EQ(m.OnPodFinished(Member("g-0", "Succeeded", true)), "ml/g");  // a relist
    auto c = m.SummaryOf("ml/g")->counts;
    EXPECT_EQ(c.succeeded, 1) << delete_first;
    EXPECT_EQ(c.running, 1) << delete_first;
    EXPECT_EQ(c.pods, 1) << delete_first;
    auto w = ComputePodGroupStatus(m, "ml/g", GangOutcome::kNone, "", nullptr);
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->status.phase, "Running");
    // The Job recreates g-0 (same name, pending): it is a member again, not finished.
    m.OnPodAdd(Member("g-0", "Pending", false), 2);
    c = m.SummaryOf("ml/g")->counts;
    EXPECT_EQ(c.succeeded, 0);
    EXPECT_EQ(c.pods, 2);
    EXPECT_EQ(m.OnPodFinished(Member("other", "Succeeded", true)), "ml/g");  // never a member
    EXPECT_EQ(m.OnPodFinished(Member("g-1", "Running", true)), "");          // not terminal
    // A finished pod of a gang never seen and without an object: no gang state.
    auto stray = std::make_shared<api::Pod>(*Member("old-0", "Succeeded", true));
    stray->metadata.labels["scheduling.x-k8s.io/pod-group"] = "long-gone";
    EXPECT_EQ(m.OnPodFinished(stray), "");
    EXPECT_FALSE(m.SummaryOf("ml/long-gone").has_value());
  }
}

}  // namespace
}  // namespace phalanx::scheduler

// Migration safety: PodGrouper makes every Job with parallelism > 1 an
// all-or-nothing gang; GangSchedulingArgs.podGrouper: false turns that off, so a cluster
// moving from kube-scheduler / Coscheduling keeps its Jobs' pods scheduling one by one.
namespace phalanx::scheduler {
namespace {

std::string JobWithTwoPods() {
  std::string y =
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml, uid: job-uid,\n"
      "  annotations: {kai.scheduler/batch-min-member: \"2\"}}\n"
      "spec:\n  parallelism: 2\n  template:\n    spec:\n      restartPolicy: Never\n"
      "      containers: [{name: c, image: busybox}]\n---\n";
  for (int i = 0; i < 2; ++i) {
    y += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train-" + std::to_string(i) +
         "\n  namespace: ml\n  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, "
         "uid: job-uid, controller: true}]\nspec:\n  containers: [{name: c, image: busybox, "
         "resources: {requests: {cpu: 1500m}}}]\n---\n";
  }
  return y;
}

SchedulerTestOptions WithGangArgs(const std::string& args) {
  SchedulerTestOptions o;
  config::PluginConfig pc;
  pc.name = "GangScheduling";
  pc.args = std::make_shared<YAML::Node>(YAML::Load(args));
  o.config.profiles[0].plugin_config.push_back(pc);
  return o;
}

// A parallel Job is not a gang (KAI job_grouper.go); with KAI's batch-min-member annotation it is.
TEST(PodGrouperSwitchTest, JobIsAGangByDefaultAndNotWithPodGrouperFalse) {
  {
    SchedulerTestEnv env;  // default: PodGrouper on, the Job a gang of 2 that cannot fit
    env.Apply(Node("n1", 2) + JobWithTwoPods());
    env.RunUntilIdle();
    EXPECT_EQ(env.NodeOf("train-0", "ml"), "");
    EXPECT_EQ(env.NodeOf("train-1", "ml"), "");
    EXPECT_TRUE(env.sched->gangs().RefOf(*env.store.GetPod("ml", "train-0")).has_value());
  }
  SchedulerTestEnv env(WithGangArgs("{podGrouper: false}"));
  env.Apply(Node("n1", 2) + JobWithTwoPods());
  env.RunUntilIdle();
  EXPECT_FALSE(env.sched->gangs().RefOf(*env.store.GetPod("ml", "train-0")).has_value());
  const int bound =
      (env.NodeOf("train-0", "ml").empty() ? 0 : 1) + (env.NodeOf("train-1", "ml").empty() ? 0 : 1);
  EXPECT_EQ(bound, 1);  // one by one: the first fits, the second does not
}

TEST(PodGrouperSwitchTest, NonBooleanPodGrouperIsAnErrorNamingTheField) {
  SchedulerOptions o;
  o.config = WithGangArgs("{podGrouper: sometimes}").config;
  o.registry = plugins::NewInTreeRegistry();
  framework::VirtualClock clock(0);
  store::Store store(clock);
  o.clock = &clock;
  o.client = &store;
  auto s = Scheduler::New(std::move(o));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().Message().find("GangSchedulingArgs: podGrouper: Invalid value: sometimes"),
            std::string::npos)
      << s.status().Message();
}

// Scheduler::PriorityOf (what plugins get as Handle::PriorityOf): spec.priority, else the
// named class, else the globalDefault class's value (0 without one), following
// PriorityClass adds and deletes (the default is kept outside the class map's lock).
TEST(SchedulerPriorityTest, PriorityOfFollowsTheGlobalDefaultClass) {
  SchedulerOptions o;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  framework::VirtualClock clock(0);
  store::Store store(clock);
  o.clock = &clock;
  o.client = &store;
  auto s = Scheduler::New(std::move(o));
  ASSERT_TRUE(s.ok()) << s.status().Message();
  Scheduler& sched = **s;
  framework::Framework* fw = sched.Profile("default-scheduler");
  ASSERT_NE(fw, nullptr);
  auto pc = [](const std::string& name, int32_t value, bool global_default) {
    auto c = std::make_shared<api::PriorityClass>();
    c->metadata.name = name;
    c->value = value;
    c->global_default = global_default;
    return std::shared_ptr<const api::PriorityClass>(c);
  };
  api::Pod plain, named, missing, explicit_prio;
  named.spec.priority_class_name = "high";
  missing.spec.priority_class_name = "absent";
  explicit_prio.spec.priority = 7;
  EXPECT_EQ(fw->PriorityOf(plain), 0);
  sched.OnPriorityClassAdd(pc("high", 1000, false));
  sched.OnPriorityClassAdd(pc("default", 50, true));
  EXPECT_EQ(fw->PriorityOf(plain), 50);
  EXPECT_EQ(fw->PriorityOf(named), 1000);
  EXPECT_EQ(fw->PriorityOf(missing), 50);
  EXPECT_EQ(fw->PriorityOf(explicit_prio), 7);
  sched.OnPriorityClassAdd(pc("default", 60, true));  // updated value
  EXPECT_EQ(fw->PriorityOf(plain), 60);
  sched.OnPriorityClassDelete(pc("default", 60, true));
  EXPECT_EQ(fw->PriorityOf(plain), 0);
  EXPECT_EQ(fw->PriorityOf(missing), 0);
  EXPECT_EQ(fw->PriorityOf(named), 1000);
}

}  // namespace
}  // namespace phalanx::scheduler
