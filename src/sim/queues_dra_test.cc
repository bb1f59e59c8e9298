// Queue quotas count GPUs taken through DRA claims (docs/queues.md "Devices and GPU
// shares"): on nodes whose GPUs exist only as ResourceSlice devices (no nvidia.com/gpu in
// their capacity), a queue limited to 4 GPUs runs four one-GPU claim pods and the fifth
// waits with the queue's reason until one of the four ends. The numbers come from the
// scenario: 2 nodes × 4 GPUs = 8 devices, so without the queue all five would run at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "config/config.h"
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

Scenario Load(const std::string& name, const std::string& yaml) {
  const std::string path = ::testing::TempDir() + "/queues_dra_test_" + name + ".yaml";
  std::ofstream(path) << yaml;
  Scenario sc;
  EXPECT_EQ(LoadManifestScenario(path, &sc), absl::OkStatus());
  return sc;
}

const PodOutcome* Outcome(const SimulationResult& r, const std::string& pod) {
  for (const auto& o : r.outcomes) {
    if (o.pod == pod) return &o;
  }
  return nullptr;
}

// Two nodes with 4 GPUs each as DRA devices only, a DeviceClass `class_name` selecting
// them, and a template for one GPU of that class.
std::string DraCluster(const std::string& class_name) {
  std::ostringstream o;
  o << "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: " << class_name
    << "}\nspec: {selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n"
    << "---\n";
  for (int n = 0; n < 2; ++n) {
    o << "apiVersion: v1\nkind: Node\nmetadata: {name: n" << n << "}\n"
      << "status: {capacity: {cpu: \"32\", memory: 256Gi, pods: \"110\"}}\n---\n"
      << "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n" << n
      << "-gpus}\nspec:\n  driver: gpu.example.com\n  nodeName: n" << n << "\n  pool: {name: n" << n
      << "}\n  devices:\n";
    for (int d = 0; d < 4; ++d) o << "  - {name: gpu-" << d << "}\n";
    o << "---\n";
  }
  o << "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one-gpu, "
       "namespace: default}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
       "        exactly: {deviceClassName: "
    << class_name << "}\n---\n";
  return o.str();
}

// Pod `name` with `labels` (a flow map's entries, e.g. its queue label) and `annotations`
// (more entries), one GPU through a claim from the template; runs `duration` seconds (0: to
// the end).
std::string ClaimPod(const std::string& name, const std::string& labels,
                     const std::string& annotations, double arrival, double duration) {
  std::ostringstream o;
  o << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " << name << "\n  namespace: default\n"
    << "  labels: {" << labels << "}\n  annotations: {" << annotations
    << (annotations.empty() ? "" : ", ") << "simulation.phalanx.dev/arrival-seconds: \"" << arrival
    << "\"";
  if (duration > 0) o << ", simulation.phalanx.dev/duration-seconds: \"" << duration << "\"";
  o << "}\nspec:\n  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
    << "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: "
       "[{name: gpu}]}}]\n---\n";
  return o.str();
}

struct Dialect {
  const char* name;
  std::string queue;        // the queue object, named team-a, limiting GPUs to 4
  std::string labels;       // how a pod names team-a: label entries ...
  std::string annotations;  // ... or annotation entries
  std::string device_class = "gpu.example.com";
  std::string args;  // Queues plugin args (a profile), "" for none
};

void PrintTo(const Dialect& d, std::ostream* os) { *os << d.name; }

std::vector<Dialect> Dialects() {
  const std::string kai = "kai.scheduler/queue: team-a";
  const std::string volcano = "scheduling.volcano.sh/queue-name: team-a";
  return {
      {"KAI",
       "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
       "spec: {resources: {gpu: {quota: 0, limit: 4, overQuotaWeight: 1}}}\n---\n",
       kai, ""},
      {"VolcanoNvidiaGpu",
       "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: team-a}\n"
       "spec: {weight: 1, capability: {nvidia.com/gpu: \"4\"}}\n---\n",
       "", volcano},
      {"VolcanoDeviceClassKey",
       "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: team-a}\n"
       "spec: {weight: 1, capability: {deviceclass/gpu.example.com: \"4\"}}\n---\n",
       "", volcano},
      {"ElasticQuota",
       "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: team-a, "
       "namespace: default}\nspec: {max: {nvidia.com/gpu: \"4\"}}\n---\n",
       "", ""},
      // A class without "gpu" in its name counts as GPUs through a Kueue-style mapping.
      {"KAIWithDeviceClassMapping",
       "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
       "spec: {resources: {gpu: {quota: 0, limit: 4, overQuotaWeight: 1}}}\n---\n",
       kai, "", "accel.example.com",
       "deviceClassMappings: [{name: nvidia.com/gpu, deviceClassNames: [accel.example.com]}]"},
  };
}

SimulationOptions OptionsFor(const Dialect& d) {
  SimulationOptions o = Options();
  if (!d.args.empty()) {
    auto c = config::DecodeConfiguration(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
        "  - name: Queues\n    args: {" +
            d.args + "}\n",
        "queues_dra_test");
    EXPECT_TRUE(c.ok()) << c.status();
    if (c.ok()) o.config = *c;
  }
  return o;
}

class QueuesDra : public ::testing::TestWithParam<Dialect> {};

// Four GPUs bind at once, the fifth waits for the queue (its reason names the queue) and
// never binds while the four run; with one of the four ending at 30 s it binds then.
TEST_P(QueuesDra, FourGpuLimitHoldsClaimPods) {
  const Dialect& d = GetParam();
  for (bool one_ends : {false, true}) {
    SCOPED_TRACE(one_ends ? "one of the four ends at 30 s" : "the four run to the end");
    std::string y = DraCluster(d.device_class) + d.queue;
    for (int i = 0; i < 4; ++i) {
      y += ClaimPod("p" + std::to_string(i), d.labels, d.annotations, 0,
                    one_ends && i == 0 ? 30 : 0);
    }
    y += ClaimPod("p4", d.labels, d.annotations, 1, 0);
    Scenario sc = Load(std::string(d.name) + (one_ends ? "-ends" : ""), y);
    SimulationOptions o = OptionsFor(d);
    scheduler::Scheduler* sched = nullptr;
    std::string waiting;
    o.hooks.on_start = [&](scheduler::Scheduler& s) { sched = &s; };
    o.hooks.on_step = [&](double t) {
      if (t < 1 || t >= 30 || !waiting.empty()) return;  // p4 arrives at 1 s
      for (const auto& p : sched->scheduling_queue().PendingPods()) {
        if (p->Pod().metadata.name == "p4") waiting = p->last_failure_message;
      }
    };
    SimulationResult r;
    ASSERT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
    EXPECT_TRUE(r.invariant_violations.empty());
    EXPECT_TRUE(r.dra_errors.empty());
    for (int i = 0; i < 4; ++i) {
      const PodOutcome* p = Outcome(r, "default/p" + std::to_string(i));
      ASSERT_NE(p, nullptr);
      ASSERT_TRUE(p->scheduled_s) << p->reason << "\n" << FormatSummary(r);
      EXPECT_EQ(*p->scheduled_s, 0.0);
    }
    const PodOutcome* fifth = Outcome(r, "default/p4");
    ASSERT_NE(fifth, nullptr);
    const std::string resource = std::string(d.name) == "VolcanoDeviceClassKey"
                                     ? "deviceclass/gpu.example.com"
                                     : "nvidia.com/gpu";
    const std::string reason = "waiting for queue team-a quota: needs 1 " + resource + ", 0 free";
    EXPECT_NE(waiting.find(reason), std::string::npos) << waiting;
    if (one_ends) {
      ASSERT_TRUE(fifth->scheduled_s) << fifth->reason << "\n" << FormatSummary(r);
      EXPECT_EQ(*fifth->scheduled_s, 30.0);
    } else {
      EXPECT_FALSE(fifth->scheduled_s) << FormatSummary(r);
      EXPECT_NE(fifth->reason.find(reason), std::string::npos) << fifth->reason;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dialects, QueuesDra, ::testing::ValuesIn(Dialects()),
                         [](const auto& info) { return std::string(info.param.name); });

// A device class that maps to no quota resource, taken by a pod of a queue that limits GPUs,
// is a warning naming the class (its devices are not GPUs to the queue: all three bind).
TEST(QueuesDraWarnings, UnmappedClassInAGpuLimitedQueueIsAWarning) {
  std::string y = DraCluster("accel.example.com") +
                  "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
                  "spec: {resources: {gpu: {quota: 0, limit: 1, overQuotaWeight: 1}}}\n---\n";
  for (int i = 0; i < 3; ++i) {
    y += ClaimPod("p" + std::to_string(i), "kai.scheduler/queue: team-a", "", 0, 0);
  }
  Scenario sc = Load("unmapped", y);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_EQ(r.scheduled, 3u) << FormatSummary(r);
  bool found = false;
  for (const auto& w : r.warnings) {
    found = found || w.find(
                         "queue team-a limits nvidia.com/gpu but device class "
                         "accel.example.com") != std::string::npos;
  }
  EXPECT_TRUE(found) << FormatSummary(r);
}

// A PodGroup's claim (KEP-5729: one claim for the whole gang, from template two-gpus) is
// charged once to the queue, not once per member: a KAI queue limited to 2 GPUs runs the
// gang of 4 members sharing a 2-GPU claim, and a member arriving later joins it. A third
// pod with a claim of its own then waits for the queue.
TEST(QueuesDraShared, PodGroupClaimCountsOncePerQueue) {
  std::string y = DraCluster("gpu.example.com") +
                  "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
                  "spec: {resources: {gpu: {quota: 0, limit: 2, overQuotaWeight: 1}}}\n---\n"
                  "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: "
                  "{name: two-gpus, namespace: default}\nspec:\n  spec:\n    devices:\n"
                  "      requests:\n      - name: gpu\n        exactly: {deviceClassName: "
                  "gpu.example.com, count: 2}\n---\n"
                  "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: "
                  "train, namespace: default}\nspec:\n  schedulingPolicy: {gang: {minCount: 4}}\n"
                  "  resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]\n---\n";
  auto member = [](const std::string& name, double arrival) {
    std::ostringstream o;
    o << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " << name
      << "\n  namespace: default\n  labels: {kai.scheduler/queue: team-a}\n"
      << "  annotations: {simulation.phalanx.dev/arrival-seconds: \"" << arrival << "\"}\n"
      << "spec:\n  schedulingGroup: {podGroupName: train}\n"
      << "  resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]\n"
      << "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: "
         "[{name: gpus}]}}]\n---\n";
    return o.str();
  };
  for (int i = 0; i < 4; ++i) y += member("worker-" + std::to_string(i), 0);
  y += member("late", 10);
  y += ClaimPod("other", "kai.scheduler/queue: team-a", "", 20, 0);
  Scenario sc = Load("podgroup-claim", y);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_TRUE(r.dra_errors.empty());
  for (const char* p : {"default/worker-0", "default/worker-1", "default/worker-2",
                        "default/worker-3", "default/late"}) {
    const PodOutcome* o = Outcome(r, p);
    ASSERT_NE(o, nullptr) << p;
    EXPECT_TRUE(o->scheduled_s) << p << ": " << o->reason << "\n" << FormatSummary(r);
  }
  const PodOutcome* other = Outcome(r, "default/other");
  ASSERT_NE(other, nullptr);
  EXPECT_FALSE(other->scheduled_s) << FormatSummary(r);
  EXPECT_NE(other->reason.find("waiting for queue team-a quota: needs 1 nvidia.com/gpu, 0 free"),
            std::string::npos)
      << other->reason;
}

// examples/queues/dra (the same scenario as a directory for `phalanx simulate`): four
// claim pods bind at 0 s, train-4 waits for the queue and binds at 30 s when train-0 ends.
TEST(QueuesDraExample, FifthPodBindsWhenTheFirstEnds) {
  Scenario sc;
  ASSERT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/queues/dra", &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_TRUE(r.dra_errors.empty());
  for (int i = 0; i < 4; ++i) {
    const PodOutcome* p = Outcome(r, "default/train-" + std::to_string(i));
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->scheduled_s) << FormatSummary(r);
    EXPECT_EQ(*p->scheduled_s, 0.0);
  }
  const PodOutcome* fifth = Outcome(r, "default/train-4");
  ASSERT_NE(fifth, nullptr);
  ASSERT_TRUE(fifth->scheduled_s) << FormatSummary(r);
  EXPECT_EQ(*fifth->scheduled_s, 30.0);
  // The per-queue figures are in GPUs (the cluster's GPUs are DRA devices), and the queue
  // never holds more than its 4.
  EXPECT_EQ(r.queue_resource, "nvidia.com/gpu");
  double peak = 0;
  for (const auto& s : r.queue_timeline) {
    if (s.queue != "team-a") continue;
    EXPECT_EQ(s.resource, "nvidia.com/gpu");
    EXPECT_LE(s.allocated, 4.0) << "t=" << s.t;
    peak = std::max(peak, s.allocated);
  }
  EXPECT_EQ(peak, 4.0);
}

}  // namespace
}  // namespace phalanx::sim
