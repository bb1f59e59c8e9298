// GpuShare through the whole scheduler on the in-process store: the devices
// chosen at Reserve are on the bound pods' annotations (PreBind), and a scheduler that
// starts on a cluster of bound, annotated pods counts them on exactly those devices.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "gpu/device.h"
#include "scheduler/scheduler_test_env.h"

namespace phalanx::scheduler {
namespace {

config::KubeSchedulerConfiguration GpuShareConfig() {
  const std::string yaml = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter: {enabled: [{name: GpuShare}]}
    filter: {enabled: [{name: GpuShare}]}
    reserve: {enabled: [{name: GpuShare}]}
    preBind: {enabled: [{name: GpuShare}]}
)";
  auto r = config::DecodeConfiguration(yaml, "gpushare_test");
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : config::DefaultConfiguration();
}

const char* kGpuNode = R"(apiVersion: v1
kind: Node
metadata: {name: g, labels: {kubernetes.io/hostname: g}}
status:
  capacity: {cpu: "32", memory: 64Gi, pods: "110", nvidia.com/gpu: "2"}
)";

// A pod asking for `milli` of one GPU; `extra` is appended to its metadata (YAML lines).
std::string SharePod(const std::string& name, int milli, const std::string& extra = "",
                     const std::string& node = "") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n  annotations:\n    alibabacloud.com/gpu-milli: \"" +
         std::to_string(milli) + "\"\n    alibabacloud.com/gpu-count: \"1\"\n" + extra + "spec:\n" +
         (node.empty() ? "" : "  nodeName: " + node + "\n") +
         "  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n";
}

// milli per device of the bound pods in `store`, from their annotations only.
std::map<std::string, int> MilliPerDevice(const store::Store& store) {
  std::map<std::string, int> m;
  for (const auto& p : store.ListPods()) {
    if (p->spec.node_name.empty()) continue;
    auto idx = p->metadata.annotations.find(gpu::kGpuIndexAnnotation);
    EXPECT_NE(idx, p->metadata.annotations.end()) << p->Key() << " bound without gpu-index";
    if (idx == p->metadata.annotations.end()) continue;
    m[idx->second] += std::stoi(p->metadata.annotations.at(gpu::kGpuMilliAnnotation));
  }
  return m;
}

TEST(GpuShareSchedulerTest, BoundPodsCarryTheirDevices) {
  SchedulerTestOptions o;
  o.config = GpuShareConfig();
  SchedulerTestEnv env(std::move(o));
  env.Apply(std::string(kGpuNode) + SharePod("a", 600) + SharePod("b", 600) + SharePod("c", 300) +
            SharePod("d", 300) + SharePod("e", 300));
  env.RunUntilIdle();
  // 600 + 300 on each device; e (300) fits neither (100 free on each).
  EXPECT_EQ(MilliPerDevice(env.store), (std::map<std::string, int>{{"0", 900}, {"1", 900}}));
  for (const char* n : {"a", "b", "c", "d"}) {
    auto p = env.store.GetPod("default", n);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->spec.node_name, "g") << n;
    EXPECT_EQ(p->metadata.annotations.at(gpu::kGpuNodeAnnotation), "g") << n;
    EXPECT_EQ(p->metadata.annotations.at(gpu::kAssumeTimeAnnotation).size(), 13u)
        << n << ": UnixNano of the virtual clock (1000 s + ms)";
  }
  EXPECT_TRUE(env.store.GetPod("default", "e")->spec.node_name.empty());
}

// A new scheduler (a restart) on a cluster whose bound pods say x holds device 0 and y
// device 1, 500 each. Best fit in pod order would put both on device 0 and leave device 1
// free for a whole GPU; the annotations must win: w (1000) stays pending, z (500) binds.
TEST(GpuShareSchedulerTest, RestartCountsBoundPodsOnTheirAnnotatedDevices) {
  SchedulerTestOptions o;
  o.config = GpuShareConfig();
  SchedulerTestEnv env(std::move(o));
  auto on = [](const std::string& dev) {
    return "    alibabacloud.com/gpu-index: \"" + dev +
           "\"\n    scheduling.phalanx.dev/gpu-node: g\n";
  };
  env.Apply(std::string(kGpuNode) + SharePod("x", 500, on("0"), "g") +
            SharePod("y", 500, on("1"), "g") + SharePod("w", 1000) + SharePod("z", 500));
  env.RunUntilIdle();
  EXPECT_TRUE(env.store.GetPod("default", "w")->spec.node_name.empty());
  EXPECT_EQ(env.store.GetPod("default", "z")->spec.node_name, "g");
  // z went to device 0 (best fit: both have 500 free, the lowest index wins).
  EXPECT_EQ(MilliPerDevice(env.store), (std::map<std::string, int>{{"0", 1000}, {"1", 500}}));
}

// A Coscheduling gang of GPU shares goes through the PodGroup cycle (members placed on one
// view, then reserved and bound): every member carries its devices, none over-committed.
TEST(GpuShareSchedulerTest, GangMembersCarryTheirDevices) {
  SchedulerTestOptions o;
  o.config = GpuShareConfig();
  SchedulerTestEnv env(std::move(o));
  const std::string member = "  labels: {scheduling.x-k8s.io/pod-group: g}\n";
  env.Apply(std::string(kGpuNode) +
            "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
            "metadata: {name: g, namespace: default}\nspec: {minMember: 4}\n" +
            SharePod("m0", 600, member) + SharePod("m1", 300, member) +
            SharePod("m2", 600, member) + SharePod("m3", 300, member));
  env.RunUntilIdle();
  for (const char* n : {"m0", "m1", "m2", "m3"}) {
    EXPECT_EQ(env.store.GetPod("default", n)->spec.node_name, "g") << n;
  }
  EXPECT_EQ(MilliPerDevice(env.store), (std::map<std::string, int>{{"0", 900}, {"1", 900}}));
}

// The in-process store's side of ClusterClient::PatchPodAnnotations: merged into the pod's
// annotations, no update when nothing changes, NotFound / Aborted (another UID) as the API
// server answers.
TEST(GpuShareSchedulerTest, StorePatchesPodAnnotations) {
  SchedulerTestEnv env;
  env.Apply(SharePod("p", 500));
  api::PodPtr p = env.store.GetPod("default", "p");
  ASSERT_NE(p, nullptr);
  const std::map<std::string, std::string> ann = {{gpu::kGpuIndexAnnotation, "1"}};
  ASSERT_TRUE(env.store.PatchPodAnnotations(*p, ann).ok());
  api::PodPtr q = env.store.GetPod("default", "p");
  EXPECT_EQ(q->metadata.annotations.at(gpu::kGpuIndexAnnotation), "1");
  EXPECT_EQ(q->metadata.annotations.at(gpu::kGpuMilliAnnotation), "500");  // kept
  EXPECT_NE(q->metadata.resource_version, p->metadata.resource_version);
  ASSERT_TRUE(env.store.PatchPodAnnotations(*q, ann).ok());
  EXPECT_EQ(env.store.GetPod("default", "p")->metadata.resource_version,
            q->metadata.resource_version);  // unchanged: no update
  api::Pod other = *q;
  other.metadata.uid = "someone-else";
  EXPECT_TRUE(absl::IsAborted(env.store.PatchPodAnnotations(other, ann)));
  other.metadata.name = "gone";
  EXPECT_TRUE(absl::IsNotFound(env.store.PatchPodAnnotations(other, ann)));
}

}  // namespace
}  // namespace phalanx::scheduler
