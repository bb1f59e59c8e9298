// Queues (queues.h): QueuesArgs decoding and what it configures on the SharedQueueManager, and
// the partition order it gives the scheduling queue (the queue with the lowest dominant
// share at the moment of the Pop).
#include "plugins/queues/queues.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "api/decode.h"
#include "plugins/testing_fake_handle.h"
#include "quota/queue_manager.h"
#include "testing/builders.h"

namespace phalanx::plugins::queues {
namespace {

constexpr int64_t kS = api::kNanosPerSecond;
constexpr const char* kGpu = "nvidia.com/gpu";

framework::StatusOr<QueuesArgs> Parse(const std::string& yaml) {
  const YAML::Node args = YAML::Load(yaml);
  return ParseQueuesArgs(&args);
}

std::string ErrorOf(const std::string& yaml) {
  auto a = Parse(yaml);
  return a.ok() ? "" : a.status().Message();
}

TEST(QueuesArgsTest, DefaultsAndTimeBasedFairShare) {
  auto none = ParseQueuesArgs(nullptr);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none.value().time_based_fair_share);
  auto off = Parse("{timeBasedFairShare: null}");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off.value().time_based_fair_share);
  auto d = Parse("{timeBasedFairShare: {}}");
  ASSERT_TRUE(d.ok()) << d.status().Message();
  ASSERT_TRUE(d.value().time_based_fair_share);
  EXPECT_EQ(d.value().time_based_fair_share->window_ns, 7 * 24 * 3600 * kS);  // KAI's 1 week
  EXPECT_FALSE(d.value().time_based_fair_share->tumbling);
  EXPECT_EQ(d.value().time_based_fair_share->half_life_ns, 0);
  EXPECT_DOUBLE_EQ(d.value().time_based_fair_share->k_value, 1.0);
  auto a = Parse(
      "{timeBasedFairShare: {windowSeconds: 3600, windowType: tumbling, halfLifeSeconds: 600, "
      "kValue: 0.5}}");
  ASSERT_TRUE(a.ok()) << a.status().Message();
  EXPECT_EQ(a.value().time_based_fair_share->window_ns, 3600 * kS);
  EXPECT_TRUE(a.value().time_based_fair_share->tumbling);
  EXPECT_EQ(a.value().time_based_fair_share->half_life_ns, 600 * kS);
  EXPECT_DOUBLE_EQ(a.value().time_based_fair_share->k_value, 0.5);
}

TEST(QueuesArgsTest, BadArgsAreErrorsNamingTheField) {
  EXPECT_NE(ErrorOf("{timeBasedFairShar: {}}").find("timeBasedFairShar"), std::string::npos);
  EXPECT_NE(ErrorOf("{timeBasedFairShare: {halfLife: 5}}").find("halfLife"), std::string::npos);
  EXPECT_EQ(ErrorOf("{timeBasedFairShare: {kValue: lots}}"),
            "QueuesArgs: timeBasedFairShare.kValue: Invalid value: \"lots\": must be a number "
            ">= 0");
  EXPECT_EQ(ErrorOf("{timeBasedFairShare: {windowSeconds: 0}}"),
            "QueuesArgs: timeBasedFairShare.windowSeconds: Invalid value: 0: must be greater "
            "than or equal to 1");
  EXPECT_NE(ErrorOf("{timeBasedFairShare: {windowType: fixed}}")
                .find("timeBasedFairShare.windowType: Unsupported value: \"fixed\""),
            std::string::npos);
  EXPECT_NE(ErrorOf("{timeBasedFairShare: {halfLifeSeconds: -1}}"), "");
}

TEST(QueuesArgsTest, DeviceClassMappingsAsKueueValidatesThem) {
  auto a = Parse(
      "{deviceClassMappings: [{name: nvidia.com/gpu, deviceClassNames: [gpu.nvidia.com, "
      "mig.nvidia.com]}, {name: example.com/fpga, deviceClassNames: [fpga.example.com]}]}");
  ASSERT_TRUE(a.ok()) << a.status().Message();
  const std::vector<quota::DeviceClassMapping> want = {
      {"nvidia.com/gpu", {"gpu.nvidia.com", "mig.nvidia.com"}},
      {"example.com/fpga", {"fpga.example.com"}}};
  EXPECT_EQ(a.value().device_class_mappings, want);
  EXPECT_FALSE(a.value().time_based_fair_share);
  EXPECT_EQ(ErrorOf("{deviceClassMappings: [{name: nvidia.com/gpu, deviceClassNames: [g]}, "
                    "{name: example.com/gpu, deviceClassNames: [g]}]}"),
            "QueuesArgs: deviceClassMappings[1].deviceClassNames[0]: Invalid value: \"g\": "
            "device class already mapped to resource nvidia.com/gpu");
  EXPECT_NE(ErrorOf("{deviceClassMappings: [{name: x, classes: [g]}]}").find("classes"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{deviceClassMappings: {name: x}}").find("deviceClassMappings"),
            std::string::npos);
}

api::UnstructuredPtr Obj(const std::string& yaml) {
  api::Manifests m;
  std::string err;
  EXPECT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &m), &err)) << err;
  return std::make_shared<api::Unstructured>(m.objects.at(0));
}

api::PodPtr GpuPod(const std::string& name, const std::string& queue, int gpus,
                   const std::string& node = "") {
  phalanx::testing::PodBuilder b(name, "ns");
  b.Label("kai.scheduler/queue", queue).Req(kGpu, std::to_string(gpus));
  if (!node.empty()) b.NodeName(node);
  return std::make_shared<api::Pod>(b.Obj());
}

// A handle serving `m` as the SharedQueueManager, with KAI queues a and b on 16 GPUs.
void TwoQueues(fake::FakeHandle& h, quota::QueueManager& m) {
  h.services().Provide<quota::SharedQueueManager>(&m);
  for (const char* q : {"a", "b"}) {
    m.OnObjectAdd(Obj(std::string("apiVersion: scheduling.run.ai/v2\nkind: Queue\n"
                                  "metadata: {name: ") +
                      q + "}\nspec: {}\n"));
  }
  m.SetCapacity({{kGpu, 16}});
}

TEST(QueuesTest, ArgsEnableTimeBasedFairShareOnTheQueueManagerWithTheSchedulersClock) {
  fake::FakeHandle h;
  quota::QueueManager m;
  TwoQueues(h, m);
  const YAML::Node args = YAML::Load("{timeBasedFairShare: {windowSeconds: 6400}}");
  ASSERT_TRUE(Queues::New(&args, h).ok());
  m.OnPodAdd(GpuPod("a-run", "a", 8, "n1"));
  h.fake_clock().now = 100 * kS;
  EXPECT_NEAR(m.UsageNow()["a"][kGpu], 0.5, 1e-9);
}

TEST(QueuesTest, PartitionsAreQueuesOrderedByTheCurrentDominantShare) {
  fake::FakeHandle h;
  quota::QueueManager m;
  TwoQueues(h, m);
  auto made = Queues::New(nullptr, h);
  ASSERT_TRUE(made.ok());
  auto* plugin = dynamic_cast<Queues*>(made.value().get());
  ASSERT_NE(plugin, nullptr);
  EXPECT_TRUE(plugin->HasPartitions());
  auto pa = GpuPod("a-0", "a", 8), pb = GpuPod("b-0", "b", 8);
  m.OnPodAdd(pa);
  m.OnPodAdd(pb);
  framework::QueuedPodInfo qa, qb;
  qa.pod_info = framework::PodInfo::Make(pa);
  qb.pod_info = framework::PodInfo::Make(pb);
  EXPECT_EQ(plugin->Partition(qa), "a");
  EXPECT_EQ(plugin->Partition(qb), "b");
  EXPECT_FALSE(plugin->PartitionLess("a", "b"));
  EXPECT_FALSE(plugin->PartitionLess("b", "a"));
  // a gets 8 GPUs: now b (share 0) goes first, a (8 of its 8) after.
  m.OnPodAdd(GpuPod("a-run", "a", 8, "n1"));
  EXPECT_TRUE(plugin->PartitionLess("b", "a"));
  EXPECT_FALSE(plugin->PartitionLess("a", "b"));
}

// ---- Table tests: CapacityScheduling (ElasticQuota), KAI and Volcano queues ----

// A pod of `ns` requesting `mem` bytes of memory (and `gpus` GPUs), bound to `node` ("" =
// pending).
api::PodPtr MemPod(const std::string& name, const std::string& ns, int64_t mem,
                   const std::string& node = "", int gpus = 0) {
  phalanx::testing::PodBuilder b(name, ns);
  b.UID(name).Req("memory", std::to_string(mem));
  if (gpus > 0) b.Req(kGpu, std::to_string(gpus));
  if (!node.empty()) b.NodeName(node);
  return std::make_shared<api::Pod>(b.Obj());
}

std::string ElasticQuota(const std::string& ns, int64_t min_mem, int64_t max_mem) {
  // Named after its namespace (upstream's makeEQ names them apart too): queue names are
  // unique across dialects.
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: eq-" + ns +
         ", namespace: " + ns + "}\nspec: {min: {memory: \"" + std::to_string(min_mem) +
         "\"}, max: {memory: \"" + std::to_string(max_mem) + "\"}}\n";
}

struct QueueEnv {
  fake::FakeHandle handle;
  quota::QueueManager queues;
  std::unique_ptr<framework::Plugin> made;
  Queues* plugin = nullptr;

  QueueEnv() { handle.services().Provide<quota::SharedQueueManager>(&queues); }
  void Object(const std::string& yaml) { queues.OnObjectAdd(Obj(yaml)); }
  void Build() {
    auto p = Queues::New(nullptr, handle);
    ASSERT_TRUE(p.ok()) << p.status().Message();
    made = std::move(p.value());
    plugin = dynamic_cast<Queues*>(made.get());
    ASSERT_NE(plugin, nullptr);
  }
  framework::Status PreFilter(const api::PodPtr& pod) {
    framework::CycleState state;
    framework::PreFilterResult result;
    return plugin->PreFilter(state, *framework::PodInfo::Make(pod), &result);
  }
  quota::QueueStatus StatusOf(const std::string& queue) {
    for (const auto& q : queues.Status()) {
      if (q.name == queue) return q;
    }
    ADD_FAILURE() << "no queue " << queue;
    return {};
  }
};

// capacity_scheduling_test.go TestPreFilter. The quota's Used is what pods of the namespace
// already run (a bound pod of that request). Deviation, case "the sum of used is bigger than
// the sum of min": CapacityScheduling rejects ns2's pod although ns2 stays within its min,
// because ns1 borrowed (its PreFilter checks the sum over all quotas of used + request
// against the sum of min before anything else, and its PostFilter then preempts the
// borrower). Phalanx guarantees min at admission (docs/queues.md "Admission": only going
// above min borrows idle min), so the pod is admitted; when the nodes are full it fails
// Filter and the Queues PostFilter reclaims the borrowed part.
TEST(QueuesPreFilter, CapacityScheduling) {
  struct Case {
    const char* name;
    std::vector<std::string> quotas;
    std::vector<api::PodPtr> used;  // bound pods
    std::vector<api::PodPtr> pods;
    std::vector<framework::Code> expected;
  };
  using framework::Code;
  const std::vector<Case> cases = {
      {"pod subjects to ElasticQuota",
       {ElasticQuota("ns1", 1000, 2000)},
       {MemPod("used", "ns1", 300, "n1")},
       {MemPod("ns1-p1", "ns1", 500), MemPod("ns1-p2", "ns1", 1800)},
       {Code::kSuccess, Code::kUnschedulable}},
      {"the sum of used is bigger than the sum of min",
       {ElasticQuota("ns1", 1000, 2000), ElasticQuota("ns2", 1000, 2000)},
       {MemPod("used1", "ns1", 1800, "n1"), MemPod("used2", "ns2", 200, "n1")},
       {MemPod("ns2-p1", "ns2", 500)},
       {Code::kSuccess}},  // upstream: Unschedulable (see above)
      {"without elasticQuotaInfo", {}, {}, {MemPod("ns2-p1", "ns2", 500)}, {Code::kSuccess}},
      // Borrowing idle min: above its own min, a quota may use the min others leave idle.
      {"above min, borrowing the idle min of another quota",
       {ElasticQuota("ns1", 1000, 3000), ElasticQuota("ns2", 1000, 2000)},
       {MemPod("used1", "ns1", 900, "n1")},
       {MemPod("ns1-p1", "ns1", 1000)},
       {Code::kSuccess}},
      {"above min, more than the idle min of all quotas",
       {ElasticQuota("ns1", 1000, 3000), ElasticQuota("ns2", 1000, 2000)},
       {MemPod("used1", "ns1", 900, "n1"), MemPod("used2", "ns2", 800, "n1")},
       {MemPod("ns1-p1", "ns1", 500)},
       {Code::kUnschedulable}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    QueueEnv env;
    for (const auto& q : c.quotas) env.Object(q);
    for (const auto& p : c.used) env.queues.OnPodAdd(p);
    env.Build();
    for (size_t i = 0; i < c.pods.size(); ++i) {
      env.queues.OnPodAdd(c.pods[i]);
      const framework::Status s = env.PreFilter(c.pods[i]);
      EXPECT_EQ(s.code(), c.expected[i]) << c.pods[i]->Key() << ": " << s.Message();
    }
  }
}

// The reasons name the queue, the resource and what is free.
TEST(QueuesPreFilter, Reasons) {
  struct Case {
    const char* name;
    std::vector<std::string> objects;
    std::vector<api::PodPtr> used;
    api::PodPtr pod;
    framework::Code code;
    std::string message;
  };
  using framework::Code;
  const std::string kai_a =
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {resources: "
      "{gpu: {quota: 4, limit: 8}}}\n";
  const auto kai_pod = [](const std::string& name, const std::string& queue, int gpus,
                          const std::string& node = "") { return GpuPod(name, queue, gpus, node); };
  const std::vector<Case> cases = {
      {"a pod naming a KAI queue that does not exist",
       {kai_a},
       {},
       kai_pod("p", "nope", 1),
       Code::kUnschedulableAndUnresolvable,
       "queue nope does not exist (named by label kai.scheduler/queue)"},
      {"within the KAI queue's limit",
       {kai_a},
       {kai_pod("r", "a", 6, "n1")},
       kai_pod("p", "a", 2),
       Code::kSuccess,
       ""},
      {"beyond the KAI queue's limit",
       {kai_a},
       {kai_pod("r", "a", 6, "n1")},
       kai_pod("p", "a", 4),
       Code::kUnschedulable,
       "waiting for queue a quota: needs 4 nvidia.com/gpu, 2 free"},
      {"beyond an ElasticQuota's max",
       {ElasticQuota("ns1", 1000, 2000)},
       {MemPod("r", "ns1", 1500, "n1")},
       MemPod("p", "ns1", 600),
       Code::kUnschedulable,
       "waiting for queue "},
      {"a pod outside every queue", {kai_a}, {}, MemPod("p", "ns9", 1), Code::kSuccess, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    QueueEnv env;
    for (const auto& o : c.objects) env.Object(o);
    env.queues.SetCapacity({{kGpu, 16}, {"memory", 1 << 20}});
    for (const auto& p : c.used) env.queues.OnPodAdd(p);
    env.Build();
    env.queues.OnPodAdd(c.pod);
    const framework::Status s = env.PreFilter(c.pod);
    EXPECT_EQ(s.code(), c.code) << s.Message();
    EXPECT_EQ(s.Message().substr(0, c.message.size()), c.message) << s.Message();
  }
}

// capacity_scheduling_test.go TestReserve / TestUnreserve: Reserve counts the pod's
// request as its quota's (its namespace's) allocation, a pod of a namespace without a quota
// changes nothing, Unreserve returns only what was reserved.
TEST(QueuesReserve, CapacityScheduling) {
  QueueEnv env;
  env.Object(ElasticQuota("ns1", 1000, 2000));
  env.queues.OnPodAdd(MemPod("used", "ns1", 300, "n1"));
  env.Build();
  const std::string q = env.queues.QueueOf(*MemPod("x", "ns1", 1)).queue;
  ASSERT_FALSE(q.empty());
  const auto mem = [&] {
    const quota::ResourceList a = env.StatusOf(q).allocated;
    auto it = a.find("memory");
    return it == a.end() ? int64_t{0} : it->second;
  };
  EXPECT_EQ(mem(), 300);
  const api::PodPtr p1 = MemPod("t1-p1", "ns1", 50), p2 = MemPod("t1-p2", "ns2", 50);
  const api::PodPtr p3 = MemPod("t1-p3", "ns1", 50);
  for (const auto& p : {p1, p2, p3}) env.queues.OnPodAdd(p);
  framework::CycleState state;
  // "Reserve pods": t1-p1 counts, t1-p2 (no quota in ns2) does not.
  ASSERT_TRUE(env.plugin->Reserve(state, *framework::PodInfo::Make(p1), "node-a").IsSuccess());
  EXPECT_EQ(mem(), 350);
  ASSERT_TRUE(env.plugin->Reserve(state, *framework::PodInfo::Make(p2), "node-a").IsSuccess());
  EXPECT_EQ(mem(), 350);
  // "Unreserve pods": a pod never reserved returns nothing; a reserved one its request.
  env.plugin->Unreserve(state, *framework::PodInfo::Make(p3), "node-a");
  EXPECT_EQ(mem(), 350);
  env.plugin->Unreserve(state, *framework::PodInfo::Make(p1), "node-a");
  EXPECT_EQ(mem(), 300);
}

TEST(QueuesEvents, Registered) {
  QueueEnv env;
  env.Build();
  std::vector<std::string> got;
  for (const auto& e : env.plugin->EventsToRegister()) got.push_back(e.event.label);
  EXPECT_EQ(got, (std::vector<std::string>{"AssignedPodDelete", "QueueChange"}));
}

TEST(QueuesProfile, EnableQueuesInProfile) {
  struct Case {
    const char* name;
    std::vector<std::string> multi_point, queue_sort;
    bool changed;
    std::vector<std::string> want_multi_point, want_queue_sort;
  };
  const std::vector<Case> cases = {
      {"the default profile: Queues replaces PrioritySort",
       {"PrioritySort", "NodeResourcesFit", "DefaultPreemption"},
       {},
       true,
       {"NodeResourcesFit", "DefaultPreemption", "Queues"},
       {}},
      {"GangPrioritySort as queueSort is dropped too",
       {"GangScheduling"},
       {"GangPrioritySort"},
       true,
       {"GangScheduling", "Queues"},
       {}},
      {"already enabled in multiPoint",
       {"Queues", "PrioritySort"},
       {},
       false,
       {"Queues", "PrioritySort"},
       {}},
      {"already the queueSort plugin",
       {"PrioritySort"},
       {"Queues"},
       false,
       {"PrioritySort"},
       {"Queues"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    config::Profile p;
    for (const auto& n : c.multi_point) p.plugins.multi_point.enabled.push_back({n, 0});
    for (const auto& n : c.queue_sort) p.plugins.queue_sort.enabled.push_back({n, 0});
    EXPECT_EQ(EnableQueuesInProfile(&p), c.changed);
    std::vector<std::string> mp, qs;
    for (const auto& r : p.plugins.multi_point.enabled) mp.push_back(r.name);
    for (const auto& r : p.plugins.queue_sort.enabled) qs.push_back(r.name);
    EXPECT_EQ(mp, c.want_multi_point);
    EXPECT_EQ(qs, c.want_queue_sort);
  }
}

// Within a queue, or at equal shares, GangPrioritySort's order: priority first.
TEST(QueuesQueueSort, LessIsGangPrioritySortWithinAQueue) {
  QueueEnv env;
  env.Build();
  const auto q = [](const std::string& name, int32_t prio, api::Timestamp ts) {
    phalanx::testing::PodBuilder b(name, "ns");
    b.Priority(prio).CreationTimestamp(ts);
    framework::QueuedPodInfo i;
    i.pod_info = framework::PodInfo::Make(std::make_shared<api::Pod>(b.Obj()));
    return i;
  };
  const auto hi = q("hi", 100, 20), lo = q("lo", 10, 10), early = q("early", 10, 5);
  EXPECT_TRUE(env.plugin->Less(hi, lo));
  EXPECT_FALSE(env.plugin->Less(lo, hi));
  EXPECT_TRUE(env.plugin->Less(early, lo));  // equal priority: the older pod
}

}  // namespace
}  // namespace phalanx::plugins::queues
