// DRA devices charged to queues (quota/device_charge.h): what one claim charges, Kueue's
// mapping validation, and QueueManager admission with claims — expected numbers from the
// claims' own counts (one device per ExactCount unit, one per allocated result).
#include "quota/device_charge.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "dra/dra_manager.h"
#include "quota/queue_manager.h"
#include "quota/queue_metrics.h"
#include "quota/queue_status.h"
#include "testing/builders.h"

namespace phalanx::quota {
namespace {

constexpr const char* kGpu = "nvidia.com/gpu";

api::UnstructuredPtr Obj(const std::string& yaml) {
  api::Manifests m;
  std::string err;
  EXPECT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &m), &err)) << err;
  EXPECT_EQ(m.objects.size(), 1u);
  return std::make_shared<api::Unstructured>(m.objects.at(0));
}

// A ResourceClaim default/`name` with `requests` (YAML block list under
// spec.devices.requests, indented 4) and optionally `status`.
api::UnstructuredPtr Claim(const std::string& name, const std::string& requests,
                           const std::string& status = "") {
  return Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
             ", namespace: default, uid: uid-" + name + "}\nspec:\n  devices:\n    requests:\n" +
             requests + status);
}

dra::ResourceClaim Parsed(const api::UnstructuredPtr& o) {
  auto c = dra::ParseResourceClaim(*o);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : dra::ResourceClaim{};
}

TEST(ClaimCharge, CountsPerClassAndMapsGpuClassesToNvidiaGpu) {
  const DeviceClassMapper mapper(
      std::vector<DeviceClassMapping>{{"example.com/fpga", {"fpga.example.com"}}});
  std::set<std::string> unmapped;
  std::vector<std::string> all;
  // 2 + 1 (count defaults to 1) GPUs, 3 FPGAs through the mapping, 1 NIC (no mapping), an
  // admin-access GPU (nothing), an All request (1 until allocated), a firstAvailable whose
  // first choice is 2 GPUs.
  const auto c =
      Parsed(Claim("c", R"(    - {name: a, exactly: {deviceClassName: gpu.example.com, count: 2}}
    - {name: b, exactly: {deviceClassName: gpu.example.com}}
    - {name: f, exactly: {deviceClassName: fpga.example.com, count: 3}}
    - {name: n, exactly: {deviceClassName: nic.example.com}}
    - {name: adm, exactly: {deviceClassName: gpu.example.com, adminAccess: true}}
    - {name: every, exactly: {deviceClassName: big-gpu.example.com, allocationMode: All}}
    - name: alt
      firstAvailable:
      - {name: two, deviceClassName: gpu.example.com, count: 2}
      - {name: one, deviceClassName: nic.example.com}
)"));
  const ResourceList got = ClaimCharge(c.spec, nullptr, mapper, &unmapped, &all);
  const ResourceList want{{"deviceclass/gpu.example.com", 5},
                          {"deviceclass/fpga.example.com", 3},
                          {"deviceclass/nic.example.com", 1},
                          {"deviceclass/big-gpu.example.com", 1},
                          {"example.com/fpga", 3},
                          {kGpu, 6}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(unmapped, std::set<std::string>{"nic.example.com"});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], "request every (class big-gpu.example.com)");
}

TEST(ClaimCharge, AllocatedClaimChargesTheDevicesAllocated) {
  const DeviceClassMapper mapper;
  // allocationMode All got 3 devices, the firstAvailable request its second choice (a NIC).
  const auto c = Parsed(Claim(
      "c", R"(    - {name: every, exactly: {deviceClassName: gpu.example.com, allocationMode: All}}
    - name: alt
      firstAvailable:
      - {name: two, deviceClassName: gpu.example.com, count: 2}
      - {name: one, deviceClassName: nic.example.com}
)",
      R"(status:
  allocation:
    devices:
      results:
      - {request: every, driver: d, pool: p, device: g0}
      - {request: every, driver: d, pool: p, device: g1}
      - {request: every, driver: d, pool: p, device: g2}
      - {request: alt/one, driver: d, pool: p, device: nic0}
)"));
  ASSERT_TRUE(c.allocation.has_value());
  const ResourceList got = ClaimCharge(c.spec, &*c.allocation, mapper, nullptr, nullptr);
  const ResourceList want{
      {"deviceclass/gpu.example.com", 3}, {"deviceclass/nic.example.com", 1}, {kGpu, 3}};
  EXPECT_EQ(got, want);
}

TEST(DeviceClassMappings, KueueValidation) {
  EXPECT_TRUE(
      ValidateDeviceClassMappings({{kGpu, {"gpu.nvidia.com", "mig.nvidia.com"}}}, "m").empty());
  const auto errs = ValidateDeviceClassMappings(
      {{kGpu, {"gpu.nvidia.com"}}, {"example.com/accel", {"gpu.nvidia.com"}}, {"", {}}}, "m");
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_EQ(errs[0],
            "m[1].deviceClassNames[0]: Invalid value: \"gpu.nvidia.com\": device class already "
            "mapped to resource nvidia.com/gpu");
  EXPECT_EQ(errs[1], "m[2].name: Required value");
  EXPECT_EQ(errs[2],
            "m[2].deviceClassNames: Required value: at least one device class name is required");
}

// A pod of KAI queue team-a with spec.resourceClaims `claims` (already resolved names).
api::PodPtr ClaimPod(const std::string& name, const std::vector<std::string>& claims,
                     const std::string& node = "") {
  testing::PodBuilder b(name);
  b.Label(kKAIQueueLabel, "team-a");
  b.Req("cpu", "1");
  if (!node.empty()) b.NodeName(node);
  auto p = std::make_shared<api::Pod>(b.Obj());
  for (size_t i = 0; i < claims.size(); ++i) {
    p->spec.resource_claims.push_back({"c" + std::to_string(i), claims[i], ""});
  }
  return p;
}

const std::string kOneGpu = "    - {name: g, exactly: {deviceClassName: gpu.example.com}}\n";

// KAI queue limit 4 GPUs; pods take GPUs only through claims. Four bind; the fifth is
// refused with the queue's reason; deleting one lets it in. A claim shared by two pods
// counts once.
TEST(QueueManagerDra, ClaimGpusCountAgainstTheQueueLimit) {
  dra::DefaultDRAManager dra;
  QueueManager m;
  m.UseDRA(&dra);
  m.OnObjectAdd(
      Obj("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
          "spec: {resources: {gpu: {quota: 0, limit: 4}}}\n"));
  for (int i = 0; i < 5; ++i) dra.OnObjectAdd(Claim("gpu-" + std::to_string(i), kOneGpu));
  std::vector<api::PodPtr> pods;
  for (int i = 0; i < 5; ++i) {
    pods.push_back(ClaimPod("p" + std::to_string(i), {"gpu-" + std::to_string(i)}));
    m.OnPodAdd(pods.back());
  }
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(m.CheckAdmission("team-a", m.ChargeOf({pods[i].get()})).ok()) << i;
    m.MarkAssumed(*pods[i]);
  }
  const ResourceList fifth = m.ChargeOf({pods[4].get()});
  EXPECT_EQ(fifth.at(kGpu), 1);
  EXPECT_EQ(fifth.at("deviceclass/gpu.example.com"), 1);
  const api::Status refused = m.CheckAdmission("team-a", fifth);
  EXPECT_EQ(refused.message(), "waiting for queue team-a quota: needs 1 nvidia.com/gpu, 0 free");
  EXPECT_EQ(m.Status().at(0).allocated.at(kGpu), 4);
  EXPECT_EQ(m.Status().at(0).pending.at(kGpu), 1);
  m.OnPodDelete(pods[0]);
  EXPECT_TRUE(m.CheckAdmission("team-a", fifth).ok());

  // Two pods sharing claim "pair" (2 GPUs): 2, not 4, whether admitted together or one
  // after the other is allocated.
  dra.OnObjectAdd(Claim("pair",
                        "    - {name: g, exactly: {deviceClassName: gpu.example.com, "
                        "count: 2}}\n"));
  auto s0 = ClaimPod("s0", {"pair"});
  auto s1 = ClaimPod("s1", {"pair"});
  m.OnPodAdd(s0);
  m.OnPodAdd(s1);
  EXPECT_EQ(m.ChargeOf({s0.get(), s1.get()}).at(kGpu), 2);
  EXPECT_EQ(m.Status().at(0).pending.at(kGpu), 1 + 2);  // p4's, and the pair once
  m.MarkAssumed(*s0);
  EXPECT_EQ(m.Status().at(0).allocated.at(kGpu), 3 + 2);
  EXPECT_EQ(m.ChargeOf({s1.get()}).count(kGpu), 0u);  // held already through s0
  m.OnPodDelete(s0);
  EXPECT_EQ(m.Status().at(0).allocated.at(kGpu), 3);
  EXPECT_EQ(m.Status().at(0).pending.at(kGpu), 1 + 2);  // s1 still uses the pair
}

// A pod whose claims take GPUs (a trace's share turned into a whole DRA device keeps its
// gpu-milli annotations, replay/dra_gpus.h) is charged the claim's GPU, not a share on top.
TEST(QueueManagerDra, ShareAnnotationsOfAPodWithGpuClaimsAreNotChargedTwice) {
  dra::DefaultDRAManager dra;
  QueueManager m;
  m.UseDRA(&dra);
  m.OnObjectAdd(
      Obj("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
          "spec: {resources: {gpu: {quota: 0, limit: 4}}}\n"));
  dra.OnObjectAdd(Claim("g", "    - {name: g, exactly: {deviceClassName: gpu}}\n"));
  auto p = std::make_shared<api::Pod>(*ClaimPod("p", {"g"}));
  p->metadata.annotations["alibabacloud.com/gpu-milli"] = "1000";
  p->metadata.annotations["alibabacloud.com/gpu-count"] = "1";
  m.OnPodAdd(p);
  const ResourceList c = m.ChargeOf({p.get()});
  EXPECT_EQ(c.at(kGpu), 1);
  EXPECT_EQ(c.count(kGpuShareMilli), 0u);
  EXPECT_EQ(m.Status().at(0).pending.at(kGpu), 1);
  EXPECT_EQ(m.Status().at(0).pending.count(kGpuShareMilli), 0u);
}

// A claim for part of a GPU (consumable capacity) is charged as the whole device, and the
// queue's warnings say so, naming the claim, the request and the class.
TEST(QueueManagerDra, CapacityShareOfAGpuIsChargedWholeWithAWarning) {
  dra::DefaultDRAManager dra;
  QueueManager m;
  m.UseDRA(&dra);
  m.OnObjectAdd(
      Obj("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
          "spec: {resources: {gpu: {quota: 0, limit: 4}}}\n"));
  dra.OnObjectAdd(Claim("half",
                        "    - {name: g, exactly: {deviceClassName: gpu, capacity: "
                        "{requests: {compute: \"500\"}}}}\n"));
  dra.OnObjectAdd(Claim("whole", "    - {name: g, exactly: {deviceClassName: gpu}}\n"));
  m.OnPodAdd(ClaimPod("w", {"whole"}));
  EXPECT_TRUE(m.Warnings().empty());
  auto p = ClaimPod("p", {"half"});
  m.OnPodAdd(p);
  EXPECT_EQ(m.ChargeOf({p.get()}).at(kGpu), 1);
  const auto w = m.Warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "claim default/half request g (class gpu): capacity.requests: a share of a device is "
            "charged to the queue as the whole device");
}

TEST(QueueManagerDra, UnmappedClassInAGpuLimitedQueueWarns) {
  dra::DefaultDRAManager dra;
  QueueManager m;
  m.UseDRA(&dra);
  m.OnObjectAdd(
      Obj("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
          "spec: {resources: {gpu: {quota: 0, limit: 4}}}\n"));
  dra.OnObjectAdd(Claim("x", "    - {name: a, exactly: {deviceClassName: accel.example.com}}\n"));
  m.OnPodAdd(ClaimPod("p", {"x"}));
  const auto w = m.Warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "queue team-a limits nvidia.com/gpu but device class accel.example.com (claim "
            "default/x) maps to no quota resource: its devices count only as "
            "deviceclass/accel.example.com; map it in QueuesArgs deviceClassMappings");
  // With the class mapped, it counts as a GPU and there is nothing more to say.
  m.SetDeviceClassMappings({{kGpu, {"accel.example.com"}}});
  EXPECT_EQ(m.Status().at(0).pending.at(kGpu), 1);
  EXPECT_EQ(m.Warnings().size(), 1u);
}

// A pod asking for a GPU share by annotation (no nvidia.com/gpu request) in queue team-a,
// named by the KAI label or the Volcano annotation (`queue_label`); "": the namespace's
// ElasticQuota.
api::PodPtr SharePod(const std::string& name, const std::map<std::string, std::string>& ann,
                     const std::string& queue_label = kKAIQueueLabel) {
  testing::PodBuilder b(name);
  if (queue_label == kKAIQueueLabel) b.Label(queue_label, "team-a");
  auto p = std::make_shared<api::Pod>(b.Obj());
  for (const auto& [k, v] : ann) p->metadata.annotations[k] = v;
  if (queue_label == kVolcanoQueueAnnotation) p->metadata.annotations[queue_label] = "team-a";
  return p;
}

TEST(GpuShares, ChargeTheirFractionInEveryDialect) {
  // The same 1-GPU limit in three dialects; each admits two halves, refuses a third half,
  // and a whole GPU sees half a GPU free after one half.
  const std::vector<std::pair<std::string, std::string>> queues = {
      {"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
       "spec: {resources: {gpu: {quota: 0, limit: 1}}}\n",
       kKAIQueueLabel},
      {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: team-a}\n"
       "spec: {capability: {nvidia.com/gpu: \"1\"}}\n",
       kVolcanoQueueAnnotation},
      {"apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: team-a, "
       "namespace: default}\nspec: {max: {nvidia.com/gpu: \"1\"}}\n",
       ""},
  };
  for (const auto& [queue, label] : queues) {
    SCOPED_TRACE(queue);
    QueueManager m;
    m.OnObjectAdd(Obj(queue));
    // KAI gpu-fraction 0.5; Alibaba gpu-milli 250 on 2 devices = 0.5 as well.
    auto a = SharePod("a", {{"gpu-fraction", "0.5"}}, label);
    auto b = SharePod(
        "b", {{"alibabacloud.com/gpu-milli", "250"}, {"alibabacloud.com/gpu-count", "2"}}, label);
    auto c = SharePod("c", {{"gpu-fraction", "0.5"}}, label);
    EXPECT_EQ(m.ChargeOf({a.get()}).at(kGpuShareMilli), 500);
    EXPECT_EQ(m.ChargeOf({b.get()}).at(kGpuShareMilli), 500);
    m.OnPodAdd(a);
    ASSERT_TRUE(m.CheckAdmission("team-a", m.ChargeOf({a.get()})).ok());
    m.MarkAssumed(*a);
    EXPECT_EQ(m.CheckAdmission("team-a", {{kGpu, 1}}).message(),
              "waiting for queue team-a quota: needs 1 nvidia.com/gpu, 0.5 free");
    m.OnPodAdd(b);
    ASSERT_TRUE(m.CheckAdmission("team-a", m.ChargeOf({b.get()})).ok());
    m.MarkAssumed(*b);
    m.OnPodAdd(c);
    EXPECT_EQ(m.CheckAdmission("team-a", m.ChargeOf({c.get()})).message(),
              "waiting for queue team-a quota: needs 0.5 nvidia.com/gpu, 0 free");
    EXPECT_EQ(m.Status().at(0).allocated.at(kGpuShareMilli), 1000);
    EXPECT_EQ(m.Status().at(0).pending.at(kGpuShareMilli), 500);
    m.OnPodDelete(a);
    EXPECT_TRUE(m.CheckAdmission("team-a", m.ChargeOf({c.get()})).ok());
  }
}

TEST(GpuShares, MemorySharesAreAWarningAndRequestsAreNotChargedTwice) {
  QueueManager m;
  m.OnObjectAdd(
      Obj("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\n"
          "spec: {resources: {gpu: {quota: 0, limit: 1}}}\n"));
  auto mem = SharePod("mem", {{"gpu-memory", "2000"}});
  m.OnPodAdd(mem);
  EXPECT_EQ(m.ChargeOf({mem.get()}).count(kGpuShareMilli), 0u);
  ASSERT_EQ(m.Warnings().size(), 1u);
  EXPECT_EQ(m.Warnings()[0],
            "queue team-a: annotation gpu-memory: a GPU share by device memory is not charged "
            "to the queue (its fraction depends on the node's GPUs); use gpu-fraction");
  // An nvidia.com/gpu request is the request: one GPU, no share on top.
  testing::PodBuilder b("whole");
  b.Label(kKAIQueueLabel, "team-a");
  b.Req(kGpu, "1");
  const api::Pod whole = b.Obj();
  const ResourceList c = m.ChargeOf({&whole});
  EXPECT_EQ(c.at(kGpu), 1);
  EXPECT_EQ(c.count(kGpuShareMilli), 0u);
}

// The status written back and the gauges show shares as part of nvidia.com/gpu.
TEST(GpuShares, StatusAndGaugesShowThemAsPartOfNvidiaGpu) {
  QueueManager m;
  m.OnObjectAdd(
      Obj("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: "
          "{name: team-a}\nspec: {capability: {nvidia.com/gpu: \"4\"}}\n"));
  auto half = SharePod("half", {{"gpu-fraction", "0.5"}}, kVolcanoQueueAnnotation);
  testing::PodBuilder b("whole");
  b.Req(kGpu, "1");
  b.NodeName("n1");
  auto whole = std::make_shared<api::Pod>(b.Obj());
  whole->metadata.annotations[kVolcanoQueueAnnotation] = "team-a";
  m.OnPodAdd(half);
  m.MarkAssumed(*half);
  m.OnPodAdd(whole);
  const auto reports = m.ObjectReports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(
      QueueStatusJson(reports[0]),
      R"({"state":"Open","pending":0,"running":2,"inqueue":0,"allocated":{"nvidia.com/gpu":"1500m"}})");
  metrics::Registry reg;
  RegisterQueueMetrics(reg, m);
  EXPECT_NE(reg.Render().find(
                "phalanx_queue_allocated{queue=\"team-a\",resource=\"nvidia.com/gpu\"} 1.5"),
            std::string::npos)
      << reg.Render();
}

}  // namespace
}  // namespace phalanx::quota
