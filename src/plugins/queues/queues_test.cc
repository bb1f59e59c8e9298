// Queues (queues.h): QueuesArgs decoding and what it configures on the queue ledger, and
// the partition order it gives the scheduling queue (the queue with the lowest dominant
// share at the moment of the Pop).
#include "plugins/queues/queues.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "api/decode.h"
#include "plugins/testing_fake_handle.h"
#include "quota/manager.h"
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

// A handle serving `m` as the queue ledger, with KAI queues a and b on 16 GPUs.
void TwoQueues(fake::FakeHandle& h, quota::QueueManager& m) {
  h.services().Provide<quota::QueueLedger>(&m);
  for (const char* q : {"a", "b"}) {
    m.OnObjectAdd(Obj(std::string("apiVersion: scheduling.run.ai/v2\nkind: Queue\n"
                                  "metadata: {name: ") +
                      q + "}\nspec: {}\n"));
  }
  m.SetCapacity({{kGpu, 16}});
}

TEST(QueuesTest, ArgsEnableTimeBasedFairShareOnTheLedgerWithTheSchedulersClock) {
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

}  // namespace
}  // namespace phalanx::plugins::queues
