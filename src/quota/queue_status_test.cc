// Queue status content per dialect (Volcano, KAI, ElasticQuota), the writer's coalescing,
// rate limit and retry, and the report of invalid queue objects (a fake sink).
#include "quota/queue_status.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "gang/default_podgroup_manager.h"
#include "testing/builders.h"

namespace phalanx::quota {
namespace {

// QueueManager::CheckAdmission's outcome as its message ("" for OK); a refusal must be
// ResourceExhausted.
std::string AdmissionReason(const api::Status& s) {
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  return std::string(s.message());
}

constexpr const char* kGpu = "nvidia.com/gpu";
constexpr int64_t kSecond = 1'000'000'000;

api::UnstructuredPtr Obj(const std::string& yaml) {
  api::Manifests m;
  std::string err;
  EXPECT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &m), &err)) << err;
  EXPECT_EQ(m.objects.size(), 1u);
  return std::make_shared<api::Unstructured>(m.objects.at(0));
}

api::PodPtr Pod(const std::string& name, const std::string& queue, const std::string& cpu, int gpus,
                const std::string& node, const std::string& gang = "") {
  testing::PodBuilder b(name);
  b.Req("cpu", cpu).Req("memory", "1Gi");
  if (gpus) b.Req(kGpu, std::to_string(gpus));
  b.Annotation(kVolcanoQueueAnnotation, queue);
  if (!gang.empty()) b.Annotation("scheduling.k8s.io/group-name", gang);
  if (!node.empty()) b.NodeName(node);
  return std::make_shared<api::Pod>(b.Obj());
}

struct FakeSink : QueueStatusSink {
  std::vector<std::pair<std::string, std::string>> patches;  // ref key, json
  std::vector<std::pair<std::string, std::string>> invalid;  // ref key, message
  bool fail = false;
  api::Status PatchStatus(const QueueObjectRef& ref, const std::string& json) override {
    if (fail) return absl::UnavailableError("injected");
    patches.emplace_back(ref.Key(), json);
    return absl::OkStatus();
  }
  void ReportInvalid(const QueueObjectRef& ref, const std::string& message) override {
    invalid.emplace_back(ref.Key(), message);
  }
  std::vector<std::string> warnings;
  void ReportWarning(const std::string& message) override { warnings.push_back(message); }
  std::string Last(const std::string& key) const {
    for (auto it = patches.rbegin(); it != patches.rend(); ++it) {
      if (it->first == key) return it->second;
    }
    return "";
  }
};

const char* kVolcanoRoot = R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research, uid: u-research}
spec: {weight: 1}
)";
const char* kVolcanoChild = R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: vision}
spec: {weight: 1, parent: research}
)";

TEST(QueueStatusJson, VolcanoCountsPodGroupsByPhaseAndAllocatedIsTheSubtree) {
  gang::DefaultPodGroupManager gangs;
  QueueManager m(&gangs);
  m.OnObjectAdd(Obj(kVolcanoRoot));
  m.OnObjectAdd(Obj(kVolcanoChild));
  gangs.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: g, namespace: default}
spec: {minMember: 2}
)"));
  auto add = [&](const api::PodPtr& p) {
    gangs.OnPodAdd(p, 0);
    m.OnPodAdd(p);
  };
  // research: a running gang of 2 (1500m + 1500m) and a lone pending pod; vision (its
  // child): one bound pod of 500m with a GPU.
  add(Pod("g-0", "research", "1500m", 0, "n1", "g"));
  add(Pod("g-1", "research", "1500m", 0, "n1", "g"));
  add(Pod("lone", "research", "1", 0, ""));
  add(Pod("v-0", "vision", "500m", 1, "n2"));
  auto reports = m.ObjectReports();
  ASSERT_EQ(reports.size(), 2u);
  const QueueObjectReport* research = nullptr;
  for (const auto& r : reports) {
    if (r.status.name == "research") research = &r;
  }
  ASSERT_NE(research, nullptr);
  EXPECT_EQ(research->error, "");
  EXPECT_EQ(research->units.running, 1);
  EXPECT_EQ(research->units.pending, 1);
  EXPECT_EQ(research->units.inqueue, 0);
  // allocated: 3 + 0.5 cpu, 3Gi memory, 1 GPU (vision is research's child).
  EXPECT_EQ(
      QueueStatusJson(*research),
      R"({"state":"Open","pending":1,"running":1,"inqueue":0,"allocated":{"cpu":"3500m","memory":"3221225472","nvidia.com/gpu":"1"}})");
  // One member of the gang goes (deleted): 1 of 2 allocated -> inqueue.
  m.OnPodDelete(Pod("g-1", "research", "1500m", 0, "n1", "g"));
  for (const auto& r : m.ObjectReports()) {
    if (r.status.name == "research") {
      EXPECT_EQ(r.units.inqueue, 1);
      EXPECT_EQ(r.units.running, 0);
      // A resource written before and gone now is written as "0".
      EXPECT_EQ(
          QueueStatusJson(r, {"cpu", "memory", "nvidia.com/gpu", "example.com/foo"}),
          R"({"state":"Open","pending":1,"running":0,"inqueue":1,"allocated":{"cpu":"2","example.com/foo":"0","memory":"2147483648","nvidia.com/gpu":"1"}})");
    }
  }
}

TEST(QueueStatusJson, KAIChildQueuesAllocatedAndRequested) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec: {resources: {gpu: {quota: 8, limit: -1}}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-b}
spec: {parentQueue: dept, resources: {gpu: {quota: 2}}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec: {parentQueue: dept, resources: {gpu: {quota: 2}}}
)"));
  testing::PodBuilder run("run");
  run.Req(kGpu, "2").Req("cpu", "1").Label(kKAIQueueLabel, "team-a").NodeName("n1");
  testing::PodBuilder wait("wait");
  wait.Req(kGpu, "4").Req("cpu", "2").Label(kKAIQueueLabel, "team-b");
  m.OnPodAdd(std::make_shared<api::Pod>(run.Obj()));
  m.OnPodAdd(std::make_shared<api::Pod>(wait.Obj()));
  for (const auto& r : m.ObjectReports()) {
    if (r.status.name != "dept") continue;
    EXPECT_EQ(
        QueueStatusJson(r),
        R"({"childQueues":["team-a","team-b"],"allocated":{"cpu":"1","nvidia.com/gpu":"2"},"requested":{"cpu":"3","nvidia.com/gpu":"6"}})");
    return;
  }
  FAIL() << "no report for dept";
}

TEST(QueueStatusJson, ElasticQuotaUsedIsWhatItsNamespaceRuns) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: quota-a, namespace: team-a}
spec: {min: {cpu: 2}, max: {cpu: 6}}
)"));
  testing::PodBuilder b("p", "team-a");
  b.Req("cpu", "2500m").NodeName("n1");
  m.OnPodAdd(std::make_shared<api::Pod>(b.Obj()));
  testing::PodBuilder other("q", "elsewhere");
  other.Req("cpu", "4").NodeName("n1");
  m.OnPodAdd(std::make_shared<api::Pod>(other.Obj()));
  auto reports = m.ObjectReports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(QueueStatusJson(reports[0]), R"({"used":{"cpu":"2500m"}})");
  EXPECT_EQ(RefOf(*reports[0].object).Key(),
            "scheduling.x-k8s.io/v1alpha1/ElasticQuota/team-a/quota-a");
}

TEST(QueueStatusWriter, WritesOnlyChangesAtMostOncePerIntervalAndRetriesFailures) {
  QueueManager m;
  m.OnObjectAdd(Obj(kVolcanoRoot));
  FakeSink sink;
  QueueStatusWriter w(m, sink, kSecond);
  const std::string key = "scheduling.volcano.sh/v1beta1/Queue//research";
  auto c = w.Sync(0);
  EXPECT_EQ(c.writes, 1);
  EXPECT_EQ(sink.Last(key),
            R"({"state":"Open","pending":0,"running":0,"inqueue":0,"allocated":{}})");
  // Ten pod changes within the interval: no pass; after it, one write with the latest.
  for (int i = 0; i < 10; ++i) m.OnPodAdd(Pod("p" + std::to_string(i), "research", "1", 0, "n1"));
  EXPECT_EQ(w.Sync(kSecond / 2).writes, 1);
  c = w.Sync(kSecond);
  EXPECT_EQ(c.writes, 2);
  EXPECT_EQ(
      sink.Last(key),
      R"({"state":"Open","pending":0,"running":10,"inqueue":0,"allocated":{"cpu":"10","memory":"10737418240"}})");
  // Nothing changed: no pass at all.
  EXPECT_EQ(w.Sync(3 * kSecond).passes, c.passes);
  // A change whose status is the same (a pod of no queue): a pass, no write.
  testing::PodBuilder none("none");
  none.Req("cpu", "1");
  m.OnPodAdd(std::make_shared<api::Pod>(none.Obj()));
  c = w.Sync(4 * kSecond);
  EXPECT_EQ(c.writes, 2);
  EXPECT_EQ(c.unchanged, 1);
  // A failed write is retried at the next pass even when nothing changes in between.
  m.OnPodDelete(Pod("p0", "research", "1", 0, "n1"));
  sink.fail = true;
  c = w.Sync(5 * kSecond);
  EXPECT_EQ(c.errors, 1);
  sink.fail = false;
  c = w.Sync(6 * kSecond);
  EXPECT_EQ(c.writes, 3);
  EXPECT_EQ(
      sink.Last(key),
      R"({"state":"Open","pending":0,"running":9,"inqueue":0,"allocated":{"cpu":"9","memory":"9663676416"}})");
}

TEST(QueueStatusWriter, InvalidObjectsAreReportedOnceAndTheRestOfTheTreeWorks) {
  QueueManager m;
  m.OnObjectAdd(Obj(kVolcanoRoot));
  // A cycle (a <-> b), a negative KAI quota, an ElasticQuota with min > max.
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: cyc-a}
spec: {parent: cyc-b}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: cyc-b}
spec: {parent: cyc-a}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: negative}
spec: {resources: {cpu: {quota: -5}}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: inverted, namespace: team-x}
spec: {min: {cpu: 8}, max: {cpu: 4}}
)"));
  m.SetCapacity({{"cpu", 16000}, {"memory", int64_t{64} << 30}, {"pods", 100}});
  FakeSink sink;
  QueueStatusWriter w(m, sink, kSecond);
  auto c = w.Sync(0);
  EXPECT_EQ(c.invalid_reports, 4);
  std::map<std::string, std::string> msgs(sink.invalid.begin(), sink.invalid.end());
  EXPECT_NE(msgs["scheduling.volcano.sh/v1beta1/Queue//cyc-a"].find("cycle in the queue tree"),
            std::string::npos);
  EXPECT_NE(msgs["scheduling.volcano.sh/v1beta1/Queue//cyc-b"].find("spec.parent"),
            std::string::npos);
  EXPECT_NE(msgs["scheduling.run.ai/v2/Queue//negative"].find("spec.resources.cpu.quota"),
            std::string::npos);
  EXPECT_NE(msgs["scheduling.x-k8s.io/v1alpha1/ElasticQuota/team-x/inverted"].find(
                "spec.max.cpu: must be >= spec.min.cpu"),
            std::string::npos)
      << msgs["scheduling.x-k8s.io/v1alpha1/ElasticQuota/team-x/inverted"];
  // Only the valid queue gets a status; it still admits.
  ASSERT_EQ(sink.patches.size(), 1u);
  EXPECT_EQ(sink.patches[0].first, "scheduling.volcano.sh/v1beta1/Queue//research");
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("research", {{"cpu", 1000}})), "");
  // A pod of the namespace whose only ElasticQuota is invalid waits with its error: the
  // quota is never silently dropped (the pod would otherwise run outside any quota).
  testing::PodBuilder in_x("x-0", "team-x");
  in_x.Req("cpu", "1");
  const Assignment ax = m.QueueOf(in_x.Obj());
  EXPECT_EQ(ax.queue, "inverted");
  EXPECT_NE(ax.error.find("queue inverted is invalid: ElasticQuota team-x/inverted"),
            std::string::npos)
      << ax.error;
  // The same problems at the next pass are not reported again.
  m.OnPodAdd(Pod("p", "research", "1", 0, "n1"));
  EXPECT_EQ(w.Sync(2 * kSecond).invalid_reports, 4);
  // Fixed (b's parent dropped): the cycle is gone, both get a status; a new problem later
  // is reported again.
  m.OnObjectUpdate(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: cyc-b}
spec: {weight: 1}
)"));
  c = w.Sync(3 * kSecond);
  EXPECT_EQ(c.invalid_reports, 4);
  EXPECT_NE(sink.Last("scheduling.volcano.sh/v1beta1/Queue//cyc-a"), "");
  EXPECT_NE(sink.Last("scheduling.volcano.sh/v1beta1/Queue//cyc-b"), "");
}

// A queue accounting warning (here Volcano's consumable-capacity key, which no pod is
// charged) goes to the sink once, not at every pass.
TEST(QueueStatusWriter, AccountingWarningsAreReportedOnce) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: vgpu}
spec: {capability: {cores.deviceclass/hami-core-gpu.project-hami.io: "800"}}
)"));
  FakeSink sink;
  QueueStatusWriter w(m, sink, kSecond);
  EXPECT_EQ(w.Sync(0).warnings, 1);
  ASSERT_EQ(sink.warnings.size(), 1u);
  EXPECT_EQ(sink.warnings[0],
            "Queue vgpu (scheduling.volcano.sh/v1beta1): "
            "cores.deviceclass/hami-core-gpu.project-hami.io (Volcano DRA consumable capacity) "
            "is not charged by any pod: this limit is not enforced");
  m.OnPodAdd(Pod("p", "vgpu", "1", 0, "n1"));
  EXPECT_EQ(w.Sync(2 * kSecond).warnings, 1);
  EXPECT_EQ(sink.warnings.size(), 1u);
}

TEST(QueueManager, StatusOnlyUpdateKeepsTheTree) {
  QueueManager m;
  m.OnObjectAdd(Obj(kVolcanoRoot));
  const uint64_t g = m.Generation();
  m.OnObjectStatusUpdate(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research, uid: u-research}
spec: {weight: 1}
status: {state: Open, running: 3}
)"));
  EXPECT_EQ(m.Generation(), g);
  auto reports = m.ObjectReports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE((*reports[0].object->object)["status"].IsDefined());
}

}  // namespace
}  // namespace phalanx::quota
