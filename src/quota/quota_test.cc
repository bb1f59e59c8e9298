// Queue dialect parsing, tree validation, fair share (hand-computed KAI Proportion
// examples), admission messages and reclaim victim selection.
#include <gtest/gtest.h>

#include <cmath>

#include "api/decode.h"
#include "api/pod_resources.h"
#include "gang/default_podgroup_manager.h"
#include "quota/fair_share.h"
#include "quota/queue_manager.h"
#include "quota/queue_metrics.h"
#include "quota/queue_tree.h"
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

// QueueManager::CheckReclaimVictims's outcome as its message ("" for OK); a refusal must be
// FailedPrecondition.
std::string ReclaimReason(const api::Status& s) {
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  return std::string(s.message());
}

std::vector<api::Unstructured> Decode(const std::string& yaml) {
  api::Manifests m;
  std::string err;
  EXPECT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &m), &err)) << err;
  return m.objects;
}

QueueSpec Q(std::string name, std::string parent, ResourceList guarantee, ResourceList limit,
            double weight = 1, int32_t priority = 0) {
  QueueSpec q;
  q.name = std::move(name);
  q.source = "Queue " + q.name;
  q.parent = std::move(parent);
  q.guarantee = std::move(guarantee);
  q.limit = std::move(limit);
  q.default_weight = weight;
  q.priority = priority;
  return q;
}

constexpr const char* kGpu = "nvidia.com/gpu";

double G(const std::map<std::string, Share>& s, const std::string& q) {
  auto it = s.find(q);
  if (it == s.end()) return -1;
  auto r = it->second.find(kGpu);
  return r == it->second.end() ? -1 : r->second;
}

// ---- fair share ----

TEST(FairShare, QuotaFirstThenOverQuotaByWeight) {
  // 100 GPUs; A quota 20 w1, B quota 10 w3, C no quota w1 limit 15; all ask for 100.
  // Quotas: A 20, B 10, C 0; 70 left split 1:3:1 -> 14, 42, 14 (C's 14 < its limit 15).
  auto t = BuildQueueTree({Q("a", "", {{kGpu, 20}}, {}, 1), Q("b", "", {{kGpu, 10}}, {}, 3),
                           Q("c", "", {}, {{kGpu, 15}}, 1)});
  auto s = ComputeFairShare(t, {{kGpu, 100}},
                            {{"a", {{kGpu, 100}}}, {"b", {{kGpu, 100}}}, {"c", {{kGpu, 100}}}});
  EXPECT_NEAR(G(s, "a"), 34, 1e-9);
  EXPECT_NEAR(G(s, "b"), 52, 1e-9);
  EXPECT_NEAR(G(s, "c"), 14, 1e-9);
}

TEST(FairShare, LimitSaturatesAndTheRestIsRedivided) {
  // As above with C's limit 10: C stops at 10, the remaining 60 go 1:3 -> A 35, B 55.
  auto t = BuildQueueTree({Q("a", "", {{kGpu, 20}}, {}, 1), Q("b", "", {{kGpu, 10}}, {}, 3),
                           Q("c", "", {}, {{kGpu, 10}}, 1)});
  auto s = ComputeFairShare(t, {{kGpu, 100}},
                            {{"a", {{kGpu, 100}}}, {"b", {{kGpu, 100}}}, {"c", {{kGpu, 100}}}});
  EXPECT_NEAR(G(s, "a"), 35, 1e-9);
  EXPECT_NEAR(G(s, "b"), 55, 1e-9);
  EXPECT_NEAR(G(s, "c"), 10, 1e-9);
}

TEST(FairShare, DemandCapsTheShare) {
  // A asks for 5 only (quota 20): it deserves 5. B (quota 10, w3) and C (limit 15, w1)
  // divide 85: C's 21.25 exceeds its limit -> 15, B gets the other 70 -> 80.
  auto t = BuildQueueTree({Q("a", "", {{kGpu, 20}}, {}, 1), Q("b", "", {{kGpu, 10}}, {}, 3),
                           Q("c", "", {}, {{kGpu, 15}}, 1)});
  auto s = ComputeFairShare(t, {{kGpu, 100}},
                            {{"a", {{kGpu, 5}}}, {"b", {{kGpu, 100}}}, {"c", {{kGpu, 100}}}});
  EXPECT_NEAR(G(s, "a"), 5, 1e-9);
  EXPECT_NEAR(G(s, "b"), 80, 1e-9);
  EXPECT_NEAR(G(s, "c"), 15, 1e-9);
}

TEST(FairShare, OversubscribedQuotasScaleDown) {
  auto t = BuildQueueTree({Q("a", "", {{kGpu, 30}}, {}), Q("b", "", {{kGpu, 10}}, {})});
  auto s = ComputeFairShare(t, {{kGpu, 20}}, {{"a", {{kGpu, 50}}}, {"b", {{kGpu, 50}}}});
  EXPECT_NEAR(G(s, "a"), 15, 1e-9);
  EXPECT_NEAR(G(s, "b"), 5, 1e-9);
}

TEST(FairShare, ParentLimitCapsChildren) {
  // 32 GPUs; dept (limit 8) with two children, and a sibling queue; weights all 1.
  // Top level: dept capped at 8, other gets 24; dept's 8 split 4 / 4.
  auto t = BuildQueueTree({Q("dept", "", {}, {{kGpu, 8}}), Q("x", "dept", {}, {}),
                           Q("y", "dept", {}, {}), Q("other", "", {}, {})});
  auto s = ComputeFairShare(t, {{kGpu, 32}},
                            {{"x", {{kGpu, 100}}}, {"y", {{kGpu, 100}}}, {"other", {{kGpu, 100}}}});
  EXPECT_NEAR(G(s, "dept"), 8, 1e-9);
  EXPECT_NEAR(G(s, "other"), 24, 1e-9);
  EXPECT_NEAR(G(s, "x"), 4, 1e-9);
  EXPECT_NEAR(G(s, "y"), 4, 1e-9);
}

TEST(FairShare, OverQuotaPriorityGroupsGoFirst) {
  // KAI over-quota priority: "hi" (priority 10) takes the over-quota part first up to its
  // demand (30), "lo" gets what is left (10).
  auto t = BuildQueueTree({Q("hi", "", {}, {}, 1, 10), Q("lo", "", {}, {}, 5, 0)});
  auto s = ComputeFairShare(t, {{kGpu, 40}}, {{"hi", {{kGpu, 30}}}, {"lo", {{kGpu, 100}}}});
  EXPECT_NEAR(G(s, "hi"), 30, 1e-9);
  EXPECT_NEAR(G(s, "lo"), 10, 1e-9);
}

TEST(FairShare, WeightZeroGetsOnlyItsQuota) {
  auto t = BuildQueueTree({Q("a", "", {{kGpu, 4}}, {}, 0), Q("b", "", {}, {}, 1)});
  auto s = ComputeFairShare(t, {{kGpu, 16}}, {{"a", {{kGpu, 16}}}, {"b", {{kGpu, 16}}}});
  EXPECT_NEAR(G(s, "a"), 4, 1e-9);
  EXPECT_NEAR(G(s, "b"), 12, 1e-9);
}

TEST(FairShare, DominantShare) {
  EXPECT_DOUBLE_EQ(DominantShare({{"cpu", 4000}, {kGpu, 2}}, {{"cpu", 8000}, {kGpu, 8}}), 0.5);
  EXPECT_DOUBLE_EQ(DominantShare({}, {{kGpu, 8}}), 0);
  EXPECT_TRUE(std::isinf(DominantShare({{kGpu, 1}}, {{kGpu, 0}})));
}

// ---- dialects and validation ----

TEST(QueueTree, ParsesEveryDialect) {
  auto objs = Decode(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec:
  parentQueue: dept
  priority: 5
  resources:
    gpu: {quota: 8, limit: 16, overQuotaWeight: 2}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: 1000, limit: -1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: vq}
spec:
  weight: 3
  capability: {nvidia.com/gpu: 10, cpu: "40"}
  guarantee: {resource: {nvidia.com/gpu: 2}}
  reclaimable: false
  parent: root
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: eq, namespace: ns1}
spec: {min: {cpu: "10"}, max: {cpu: "20"}}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: kq
  namespace: ns2
  labels: {quota.scheduling.koordinator.sh/parent: kparent}
spec: {min: {cpu: "4"}, max: {cpu: "8"}}
)");
  ASSERT_EQ(objs.size(), 4u);
  auto kai = QueueFromObject(objs[0]);
  ASSERT_TRUE(kai);
  EXPECT_EQ(kai->invalid, "");
  EXPECT_EQ(kai->dialect, QueueDialect::kKAI);
  EXPECT_EQ(kai->parent, "dept");
  EXPECT_EQ(kai->priority, 5);
  EXPECT_EQ(kai->GuaranteeOf(kGpu), 8);
  EXPECT_EQ(kai->LimitOf(kGpu), 16);
  EXPECT_EQ(kai->LimitOf("cpu"), INT64_MAX);
  EXPECT_EQ(kai->GuaranteeOf("cpu"), 0);
  EXPECT_EQ(kai->GuaranteeOf("memory"), 1000 * 1000000LL);
  EXPECT_DOUBLE_EQ(kai->WeightOf(kGpu), 2);
  auto vq = QueueFromObject(objs[1]);
  ASSERT_TRUE(vq);
  EXPECT_EQ(vq->invalid, "");
  EXPECT_EQ(vq->parent, "");
  EXPECT_DOUBLE_EQ(vq->WeightOf(kGpu), 3);
  EXPECT_EQ(vq->LimitOf("cpu"), 40000);
  EXPECT_EQ(vq->GuaranteeOf(kGpu), 2);
  EXPECT_FALSE(vq->reclaimable);
  auto eq = QueueFromObject(objs[2]);
  ASSERT_TRUE(eq);
  EXPECT_EQ(eq->dialect, QueueDialect::kCapacityScheduling);
  EXPECT_EQ(eq->namespace_, "ns1");
  EXPECT_EQ(eq->GuaranteeOf("cpu"), 10000);
  EXPECT_EQ(eq->LimitOf("cpu"), 20000);
  auto kq = QueueFromObject(objs[3]);
  ASSERT_TRUE(kq);
  EXPECT_EQ(kq->dialect, QueueDialect::kKoordinator);
  EXPECT_EQ(kq->parent, "kparent");
  EXPECT_DOUBLE_EQ(kq->WeightOf("cpu"), 8000);  // shared weight defaults to max
}

TEST(QueueTree, NegativeQuotaIsAClearError) {
  auto objs = Decode(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: bad}
spec: {resources: {gpu: {quota: -4}}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: neg, namespace: ns1}
spec: {min: {cpu: "-1"}}
)");
  ASSERT_EQ(objs.size(), 2u);
  auto a = QueueFromObject(objs[0]);
  auto b = QueueFromObject(objs[1]);
  EXPECT_EQ(a->invalid,
            "Queue bad (scheduling.run.ai/v2): spec.resources.gpu.quota: must be >= 0 (or -1: no "
            "quota), got -4");
  EXPECT_EQ(b->invalid,
            "ElasticQuota ns1/neg (scheduling.x-k8s.io/v1alpha1): spec.min.cpu: must be greater "
            "than or equal to 0, got \"-1\"");
  auto t = BuildQueueTree({*a, *b});
  EXPECT_FALSE(t.Usable("bad"));
  EXPECT_EQ(t.errors.at("bad"), a->invalid);
  EXPECT_TRUE(t.quota_by_namespace.empty());
}

TEST(QueueTree, CyclesMissingParentsAndDescendants) {
  auto t = BuildQueueTree({Q("a", "b", {}, {}), Q("b", "a", {}, {}), Q("c", "a", {}, {}),
                           Q("d", "nope", {}, {}), Q("ok", "", {}, {})});
  EXPECT_EQ(t.errors.at("a"), "Queue a: spec.parentQueue: cycle in the queue tree: a -> b -> a");
  EXPECT_EQ(t.errors.at("b"), "Queue b: spec.parentQueue: cycle in the queue tree: b -> a -> b");
  EXPECT_NE(t.errors.at("c").find("ancestor queue a is invalid"), std::string::npos)
      << t.errors.at("c");
  EXPECT_EQ(t.errors.at("d"), "Queue d: spec.parentQueue: parent queue nope does not exist");
  EXPECT_TRUE(t.Usable("ok"));
  ASSERT_EQ(t.children.at("").size(), 1u);
  // Fair share ignores unusable queues and does not loop.
  auto s = ComputeFairShare(t, {{kGpu, 8}}, {{"a", {{kGpu, 8}}}, {"ok", {{kGpu, 8}}}});
  EXPECT_NEAR(G(s, "ok"), 8, 1e-9);
  EXPECT_EQ(G(s, "a"), -1);
}

TEST(QueueTree, DuplicateNamesAcrossDialects) {
  QueueSpec v = Q("team", "", {}, {});
  v.dialect = QueueDialect::kVolcano;
  v.source = "Queue team (scheduling.volcano.sh/v1beta1)";
  QueueSpec k = Q("team", "", {}, {});
  k.source = "Queue team (scheduling.run.ai/v2)";
  auto t = BuildQueueTree({v, k});
  EXPECT_EQ(
      t.errors.at("team"),
      "Queue team (scheduling.run.ai/v2): metadata.name: queue team is also defined by "
      "Queue team (scheduling.volcano.sh/v1beta1); queue names must be unique across dialects");
}

// ---- QueueManager ----

api::UnstructuredPtr Obj(const std::string& yaml) {
  auto o = Decode(yaml);
  EXPECT_EQ(o.size(), 1u);
  return std::make_shared<api::Unstructured>(o.at(0));
}

api::PodPtr GpuPod(const std::string& name, const std::string& queue, int gpus,
                   const std::string& node = "", int32_t prio = 0, api::Timestamp created = 0) {
  testing::PodBuilder b(name);
  b.Req(kGpu, std::to_string(gpus));
  if (!queue.empty()) b.Label(kKAIQueueLabel, queue);
  if (!node.empty()) b.NodeName(node);
  b.Priority(prio);
  b.CreationTimestamp(created);
  return std::make_shared<api::Pod>(b.Obj());
}

// A KAI Queue object named `name` with `spec` (YAML flow map).
api::UnstructuredPtr KaiQueue(const std::string& name, const std::string& spec) {
  return Obj("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " + name +
             "}\nspec: " + spec + "\n");
}

TEST(QueueManager, AdmissionMessageAndParentLimit) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec: {resources: {gpu: {quota: 0, limit: 12}}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec: {parentQueue: dept, resources: {gpu: {quota: 8, limit: 16}}}
)"));
  m.SetCapacity({{kGpu, 64}});
  m.OnPodAdd(GpuPod("run-0", "team-a", 8, "n1"));
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("team-a", {{kGpu, 4}})), "");
  // team-a: 16 - 8 = 8 free, but dept caps at 12: 4 free.
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("team-a", {{kGpu, 16}})),
            "waiting for queue team-a quota: needs 16 nvidia.com/gpu, 8 free");
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("team-a", {{kGpu, 6}})),
            "waiting for queue dept (parent of team-a) quota: needs 6 nvidia.com/gpu, 4 free");
  // Reserve takes quota before the binding is seen; Unreserve gives it back.
  auto p = GpuPod("p", "team-a", 4);
  m.OnPodAdd(p);
  m.MarkAssumed(*p);
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("team-a", {{kGpu, 1}})),
            "waiting for queue dept (parent of team-a) quota: needs 1 nvidia.com/gpu, 0 free");
  m.MarkForgotten(*p);
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("team-a", {{kGpu, 4}})), "");
  auto st = m.Status();
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[1].name, "team-a");
  EXPECT_EQ(st[1].allocated.at(kGpu), 8);
  EXPECT_EQ(st[1].pending.at(kGpu), 4);
  EXPECT_EQ(st[0].allocated.at(kGpu), 8);  // dept: subtree sum
}

// An update keeps the entry's request only while the pod's request is unchanged (the bind
// fast path): a resize, a new extended resource or a dropped cpu request is counted anew,
// given as the caller's PodRequests or computed from the pod. Expected sums from the pods'
// own numbers.
TEST(QueueManager, UpdateCountsTheNewRequestUnlessUnchanged) {
  QueueManager m;
  m.OnObjectAdd(KaiQueue("team-a", "{resources: {gpu: {quota: 8}}}"));
  auto pending = GpuPod("p", "team-a", 2);
  m.OnPodAdd(pending);
  auto status = [&] { return m.Status().at(0); };
  EXPECT_EQ(status().pending.at(kGpu), 2);
  // Bound, same request: allocated, pending empty.
  auto bound = GpuPod("p", "team-a", 2, "n1");
  const api::Resource bound_req = api::PodRequests(*bound);
  m.OnPodUpdate(pending, bound, &bound_req);
  EXPECT_EQ(status().allocated.at(kGpu), 2);
  EXPECT_EQ(status().pending.count(kGpu), 0u);
  // Resized to 3 GPUs (requests passed in).
  auto resized = GpuPod("p", "team-a", 3, "n1");
  const api::Resource resized_req = api::PodRequests(*resized);
  m.OnPodUpdate(bound, resized, &resized_req);
  EXPECT_EQ(status().allocated.at(kGpu), 3);
  // Resized back to 1 GPU, requests computed from the pod.
  auto smaller = GpuPod("p", "team-a", 1, "n1");
  m.OnPodUpdate(resized, smaller);
  EXPECT_EQ(status().allocated.at(kGpu), 1);
  // A cpu request added, then the GPU dropped: both resources follow.
  testing::PodBuilder b("p");
  b.Req("cpu", "500m").Label(kKAIQueueLabel, "team-a").NodeName("n1");
  auto cpu_only = std::make_shared<api::Pod>(b.Obj());
  const api::Resource cpu_req = api::PodRequests(*cpu_only);
  m.OnPodUpdate(smaller, cpu_only, &cpu_req);
  EXPECT_EQ(status().allocated.count(kGpu), 0u);
  EXPECT_EQ(status().allocated.at("cpu"), 500);
  // Every request dropped: only the pod count is left.
  testing::PodBuilder e("p");
  e.Label(kKAIQueueLabel, "team-a").NodeName("n1");
  auto empty = std::make_shared<api::Pod>(e.Obj());
  m.OnPodUpdate(cpu_only, empty);
  EXPECT_EQ(status().allocated.count("cpu"), 0u);
  EXPECT_EQ(status().allocated.at("pods"), 1);
  EXPECT_EQ(status().running_pods, 1);
}

// Without a queue object the manager only remembers pods (Entry::stale); the first queue
// object counts every one of them as if they had arrived after it, and the last one's
// delete stops counting. The expected sums are recomputed from the pods' own GPU counts and
// states, not from the manager.
TEST(QueueManager, PodsSeenBeforeAnyQueueAreCountedWhenTheFirstQueueArrives) {
  QueueManager m;
  struct Seen {
    api::PodPtr pod;
    bool allocated;
  };
  std::map<std::string, Seen> pods;  // the oracle: each pod's last state
  auto add = [&](api::PodPtr p) {
    m.OnPodAdd(p);
    pods[p->metadata.name] = {p, !p->spec.node_name.empty()};
  };
  auto update = [&](api::PodPtr p) {
    Seen& was = pods.at(p->metadata.name);
    m.OnPodUpdate(was.pod, p);
    was = {p, was.allocated || !p->spec.node_name.empty()};
  };
  add(GpuPod("a-pending", "team-a", 2));
  add(GpuPod("a-bound", "team-a", 4, "n1"));
  add(GpuPod("a-binds", "team-a", 1));
  update(GpuPod("a-binds", "team-a", 1, "n2"));
  add(GpuPod("a-resized", "team-a", 1));
  update(GpuPod("a-resized", "team-a", 3));  // pending, now 3 GPUs
  auto assumed = GpuPod("a-assumed", "team-a", 5);
  add(assumed);
  m.MarkAssumed(*assumed);
  pods.at("a-assumed").allocated = true;
  auto gone = GpuPod("a-gone", "team-a", 7, "n3");
  add(gone);
  m.OnPodDelete(gone);
  pods.erase("a-gone");
  add(GpuPod("b-pending", "team-b", 6));
  // No queue yet: a pod naming one is told it does not exist, and nothing is reported.
  EXPECT_EQ(m.QueueOf(*pods.at("a-pending").pod).error,
            "queue team-a does not exist (named by label kai.scheduler/queue)");
  EXPECT_TRUE(m.Status().empty());
  auto expected = [&](const std::string& queue, bool allocated) {
    int64_t gpus = 0;
    for (const auto& [name, s] : pods) {
      if (s.pod->metadata.labels.at(kKAIQueueLabel) != queue || s.allocated != allocated) continue;
      gpus += api::PodRequests(*s.pod).Scalar(api::InternScalarResource(kGpu));
    }
    return gpus;
  };
  auto gpus_of = [](const ResourceList& l) {
    auto it = l.find(kGpu);
    return it == l.end() ? int64_t{0} : it->second;
  };
  m.OnObjectAdd(KaiQueue("team-a", "{resources: {gpu: {quota: 8}}}"));
  auto st = m.Status();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(gpus_of(st[0].allocated), expected("team-a", true));  // 4 + 1 + 5
  EXPECT_EQ(gpus_of(st[0].pending), expected("team-a", false));   // 2 + 3
  EXPECT_EQ(st[0].running_pods, 3);
  EXPECT_EQ(st[0].pending_pods, 2);
  EXPECT_EQ(m.QueueOf(*pods.at("a-pending").pod).queue, "team-a");
  EXPECT_EQ(m.QueueOf(*pods.at("a-pending").pod).error, "");
  // The second queue counts its pod too; after the last queue goes and comes back, the
  // same sums.
  m.OnObjectAdd(KaiQueue("team-b", "{resources: {gpu: {quota: 8}}}"));
  EXPECT_EQ(gpus_of(m.Status().at(1).pending), expected("team-b", false));
  m.OnObjectDelete(KaiQueue("team-a", "{}"));
  m.OnObjectDelete(KaiQueue("team-b", "{}"));
  EXPECT_TRUE(m.Status().empty());
  add(GpuPod("a-late", "team-a", 2, "n4"));
  m.OnObjectAdd(KaiQueue("team-a", "{resources: {gpu: {quota: 8}}}"));
  st = m.Status();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(gpus_of(st[0].allocated), expected("team-a", true));
  EXPECT_EQ(gpus_of(st[0].pending), expected("team-a", false));
}

TEST(FairShare, LendingLimitKeepsTheUnlentQuota) {
  // 100 GPUs; A quota 20, lendingLimit 5, asks for nothing; B no quota asks for 100.
  // A keeps 20 - 5 = 15 idle; B gets the other 85. Without the limit B would get 100.
  auto a = Q("a", "", {{kGpu, 20}}, {});
  a.lending_limit[kGpu] = 5;
  auto t = BuildQueueTree({a, Q("b", "", {}, {})});
  auto s = ComputeFairShare(t, {{kGpu, 100}}, {{"b", {{kGpu, 100}}}});
  EXPECT_NEAR(G(s, "a"), 15, 1e-9);
  EXPECT_NEAR(G(s, "b"), 85, 1e-9);
  auto t2 = BuildQueueTree({Q("a", "", {{kGpu, 20}}, {}), Q("b", "", {}, {})});
  auto s2 = ComputeFairShare(t2, {{kGpu, 100}}, {{"b", {{kGpu, 100}}}});
  EXPECT_NEAR(G(s2, "a"), 0, 1e-9);
  EXPECT_NEAR(G(s2, "b"), 100, 1e-9);
}

TEST(QueueManager, LendingLimitKeepsIdleQuotaFromOtherQueues) {
  QueueManager m;
  m.OnObjectAdd(KaiQueue("a", "{resources: {gpu: {quota: 20, limit: -1, lendingLimit: 5}}}"));
  m.OnObjectAdd(KaiQueue("b", "{resources: {gpu: {quota: 0, limit: -1}}}"));
  m.SetCapacity({{kGpu, 100}});
  for (int i = 0; i < 10; ++i) m.OnPodAdd(GpuPod("b-" + std::to_string(i), "b", 8, "n1"));
  // 100 - 80 allocated - 15 kept by a = 5 free for b.
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("b", {{kGpu, 5}})), "");
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("b", {{kGpu, 10}})),
            "waiting for queue b: needs 10 nvidia.com/gpu, 5 free outside the idle quota other "
            "queues do not lend (lendingLimit: 15 nvidia.com/gpu kept)");
  // a itself may use what it keeps.
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("a", {{kGpu, 20}})), "");
  // Once a uses 12 of its quota it keeps only 20 - 5 - 12 = 3 idle.
  m.OnPodAdd(GpuPod("a-0", "a", 12, "n2"));
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("b", {{kGpu, 5}})), "");
  EXPECT_NE(AdmissionReason(m.CheckAdmission("b", {{kGpu, 6}})), "");
}

TEST(QueueTree, LendingLimitAboveQuotaIsAnError) {
  auto t = BuildQueueTree(
      {*QueueFromObject(*KaiQueue("a", "{resources: {gpu: {quota: 4, lendingLimit: 6}}}"))});
  ASSERT_TRUE(t.errors.count("a"));
  EXPECT_NE(t.errors.at("a").find("spec.resources.gpu.lendingLimit: must be <= quota (4)"),
            std::string::npos)
      << t.errors.at("a");
}

// ---- time-based fair share (quota/usage.h) ----

constexpr int64_t kS = api::kNanosPerSecond;

TEST(UsageTracker, NormalizesToTheClusterCapacityOverTheWindow) {
  UsageParams p;
  p.window_ns = 1000 * kS;
  UsageTracker u(p);
  u.Accrue(0, {}, {{kGpu, 16}});
  u.Accrue(100 * kS, {{"a", {{kGpu, 8}}}}, {{kGpu, 16}});  // a held 8 of 16 for 100 s
  auto n = u.Normalized(100 * kS);
  EXPECT_NEAR(n["a"][kGpu], 0.5, 1e-9);
  EXPECT_FALSE(n.count("b"));
  // 100 s more with nothing allocated: 800 GPU-s of 3200.
  u.Accrue(200 * kS, {}, {{kGpu, 16}});
  EXPECT_NEAR(u.Normalized(200 * kS)["a"][kGpu], 0.25, 1e-9);
  // Past the sliding window (1000 s) the usage is gone.
  u.Accrue(1300 * kS, {}, {{kGpu, 16}});
  EXPECT_FALSE(u.Normalized(1300 * kS).count("a"));
}

TEST(UsageTracker, HalfLifeDecayMatchesTheIntegral) {
  UsageParams p;
  p.window_ns = 6400 * kS;  // buckets of 100 s
  p.half_life_ns = 1000 * kS;
  UsageTracker u(p);
  u.Accrue(0, {}, {{kGpu, 16}});
  u.Accrue(1000 * kS, {{"a", {{kGpu, 8}}}}, {{kGpu, 16}});
  u.Accrue(2000 * kS, {}, {{kGpu, 16}});
  // Exact: ∫_0^1000 8·0.5^((2000-τ)/h) dτ / ∫_0^2000 16·0.5^((2000-τ)/h) dτ
  //      = 8·(0.5^1 - 0.5^2) / (16·(1 - 0.5^2)) = 1/6.
  EXPECT_NEAR(u.Normalized(2000 * kS)["a"][kGpu], 1.0 / 6.0, 0.002);
}

TEST(UsageTracker, TumblingWindowStartsAfresh) {
  UsageParams p;
  p.window_ns = 1000 * kS;
  p.tumbling = true;
  UsageTracker u(p);
  u.Accrue(0, {}, {{kGpu, 16}});
  u.Accrue(900 * kS, {{"a", {{kGpu, 16}}}}, {{kGpu, 16}});
  EXPECT_NEAR(u.Normalized(900 * kS)["a"][kGpu], 1.0, 1e-9);
  u.Accrue(1100 * kS, {{"a", {{kGpu, 16}}}, {"b", {{kGpu, 0}}}}, {{kGpu, 16}});
  u.Accrue(1200 * kS, {{"b", {{kGpu, 16}}}}, {{kGpu, 16}});
  auto n = u.Normalized(1200 * kS);  // since t = 1000: a 100 s, b 100 s, of 200 s
  EXPECT_NEAR(n["a"][kGpu], 0.5, 1e-9);
  EXPECT_NEAR(n["b"][kGpu], 0.5, 1e-9);
}

TEST(FairShare, UsageLowersTheOverQuotaWeight) {
  // KAI calcShareWeights: two queues of weight 1 (nW 0.5 each), k = 1; a used half the
  // cluster, b nothing: weights max(0, .5 + (.5 - .5)) = .5 and .5 + .5 = 1 -> 16 GPUs split
  // 1:2. Without usage: 8 and 8.
  auto t = BuildQueueTree({Q("a", "", {}, {}), Q("b", "", {}, {})});
  const std::map<std::string, ResourceList> demand = {{"a", {{kGpu, 16}}}, {"b", {{kGpu, 16}}}};
  NormalizedUsage usage = {{"a", {{kGpu, 0.5}}}};
  auto s = ComputeFairShare(t, {{kGpu, 16}}, demand, &usage, 1.0);
  EXPECT_NEAR(G(s, "a"), 16.0 / 3, 1e-9);
  EXPECT_NEAR(G(s, "b"), 32.0 / 3, 1e-9);
  auto plain = ComputeFairShare(t, {{kGpu, 16}}, demand);
  EXPECT_NEAR(G(plain, "a"), 8, 1e-9);
  // k = 0: usage has no weight.
  auto k0 = ComputeFairShare(t, {{kGpu, 16}}, demand, &usage, 0.0);
  EXPECT_NEAR(G(k0, "a"), 8, 1e-9);
  // Quota is not touched by usage: a's quota of 4 stays, the 12 over quota go 1:2 again.
  auto tq = BuildQueueTree({Q("a", "", {{kGpu, 4}}, {}), Q("b", "", {}, {})});
  auto sq = ComputeFairShare(tq, {{kGpu, 16}}, demand, &usage, 1.0);
  EXPECT_NEAR(G(sq, "a"), 4 + 12.0 / 3, 1e-9);
}

TEST(QueueManager, TimeBasedFairShareFollowsTheClock) {
  api::Timestamp now = 0;
  QueueManager m;
  for (const char* q : {"a", "b"}) m.OnObjectAdd(KaiQueue(q, "{}"));
  m.SetCapacity({{kGpu, 16}});
  UsageParams p;
  p.window_ns = 6400 * kS;
  m.EnableTimeBasedFairShare(p, [&now] { return now; });
  m.OnPodAdd(GpuPod("a-run", "a", 8, "n1"));
  now = 100 * kS;  // a held 8 of 16 for 100 s
  m.OnPodDelete(GpuPod("a-run", "a", 8, "n1"));
  EXPECT_NEAR(m.UsageNow()["a"][kGpu], 0.5, 1e-9);
  // Both now ask for 16: a gets a third of the cluster, b two thirds (see above); a's
  // 8-GPU pod then puts it above its share while b's 8 does not.
  m.OnPodAdd(GpuPod("a-0", "a", 16));
  m.OnPodAdd(GpuPod("b-0", "b", 16));
  m.OnPodAdd(GpuPod("a-1", "a", 8, "n1"));
  m.OnPodAdd(GpuPod("b-1", "b", 8, "n2"));
  EXPECT_GT(m.DominantShareOf("a"), 1.0);
  EXPECT_LT(m.DominantShareOf("b"), 1.0);
}

TEST(QueueManager, MissingAndInvalidQueuesAreReported) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: loop}
spec: {parentQueue: loop}
)"));
  auto a = m.QueueOf(*GpuPod("x", "nope", 1));
  EXPECT_EQ(a.error, "queue nope does not exist (named by label kai.scheduler/queue)");
  auto b = m.QueueOf(*GpuPod("y", "loop", 1));
  EXPECT_EQ(b.error,
            "queue loop is invalid: Queue loop (scheduling.run.ai/v2): spec.parentQueue: cycle in "
            "the queue tree: loop -> loop");
  EXPECT_EQ(m.QueueOf(*GpuPod("z", "", 1)).queue, "");
}

TEST(QueueManager, ElasticQuotaByNamespaceBorrowsIdleMin) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: qa, namespace: a}
spec: {min: {cpu: "4"}, max: {cpu: "10"}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: qb, namespace: b}
spec: {min: {cpu: "4"}, max: {cpu: "10"}}
)"));
  m.SetCapacity({{"cpu", 100000}});
  auto pod = [](std::string name, std::string ns, std::string cpu, std::string node) {
    testing::PodBuilder b(name, ns);
    b.Req("cpu", cpu);
    if (!node.empty()) b.NodeName(node);
    return std::make_shared<api::Pod>(b.Obj());
  };
  auto a0 = pod("a0", "a", "4", "n1");
  m.OnPodAdd(a0);
  EXPECT_EQ(m.QueueOf(*a0).queue, "qa");
  EXPECT_EQ(m.QueueOf(*a0).via, "ElasticQuota of namespace a");
  // qb's 4 cpu of min are idle: qa may borrow them, not more.
  EXPECT_EQ(AdmissionReason(m.CheckAdmission("qa", {{"cpu", 4000}})), "");
  EXPECT_EQ(
      AdmissionReason(m.CheckAdmission("qa", {{"cpu", 5000}})),
      "waiting for queue qa quota: needs 5 cpu, 4 free (min 4 cpu, idle min of all quotas 4 cpu)");
  m.OnPodAdd(pod("b0", "b", "4", "n1"));
  EXPECT_EQ(
      AdmissionReason(m.CheckAdmission("qa", {{"cpu", 1000}})),
      "waiting for queue qa quota: needs 1 cpu, 0 free (min 4 cpu, idle min of all quotas 0 cpu)");
}

TEST(QueueManager, ReclaimTakesWholeGangsLowestPriorityFirstNeverBelowGuarantee) {
  gang::DefaultPodGroupManager gangs;
  QueueManager m(&gangs);
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: guaranteed}
spec: {weight: 1, guarantee: {resource: {nvidia.com/gpu: 8}}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: borrower}
spec: {weight: 1, guarantee: {resource: {nvidia.com/gpu: 2}}}
)"));
  m.SetCapacity({{kGpu, 16}});
  // borrower holds all 16 GPUs: a gang of 2 x 4 (priority 0), 4 single pods of 2 GPUs with
  // priority 0..3.
  auto add = [&](const api::PodPtr& p) {
    gangs.OnPodAdd(p, 0);
    m.OnPodAdd(p);
  };
  for (int i = 0; i < 2; ++i) {
    testing::PodBuilder b("g-" + std::to_string(i));
    b.Req(kGpu, "4")
        .NodeName("n1")
        .Label(kKAIQueueLabel, "borrower")
        .Priority(0)
        .Annotation("scheduling.k8s.io/group-name", "g")
        .CreationTimestamp(10);
    add(std::make_shared<api::Pod>(b.Obj()));
  }
  gangs.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: g, namespace: default}
spec: {minMember: 2}
)"));
  for (int i = 0; i < 4; ++i) add(GpuPod("s-" + std::to_string(i), "borrower", 2, "n2", i, i));
  // guaranteed asks for 6 (pending): deserved = 8 (its guarantee) + half of what is left.
  auto want = GpuPod("w", "guaranteed", 6);
  add(want);
  std::string why;
  auto victims = m.SelectReclaimVictims("guaranteed", {{kGpu, 6}}, m.FreeCapacity(), &why);
  // Lowest priority first: the gang (priority 0, 8 GPUs) and s-0 (priority 0, newer than
  // the gang? no: created at 0, the gang at 10 -> the gang first).
  ASSERT_EQ(victims.size(), 1u) << why;
  EXPECT_EQ(victims[0].key, "default/g");
  EXPECT_EQ(victims[0].pods.size(), 2u);
  EXPECT_EQ(victims[0].request.at(kGpu), 8);
  // Asking beyond the deserved share is not a reclaim.
  auto none = m.SelectReclaimVictims("guaranteed", {{kGpu, 13}}, m.FreeCapacity(), &why);
  EXPECT_TRUE(none.empty());
  EXPECT_NE(why.find("would exceed its deserved share"), std::string::npos) << why;
}

TEST(QueueManager, ReclaimNeverTakesAQueueBelowItsGuarantee) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: a}
spec: {weight: 1, guarantee: {resource: {nvidia.com/gpu: 8}}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: b}
spec: {weight: 1, guarantee: {resource: {nvidia.com/gpu: 8}}}
)"));
  m.SetCapacity({{kGpu, 16}});
  // b holds 10 (above its deserved 8 with a's demand of 6 -> a deserves 6.. plus), one pod
  // of 10: taking it would leave b at 0 < 8.
  m.OnPodAdd(GpuPod("big", "b", 10, "n1"));
  m.OnPodAdd(GpuPod("w", "a", 8));
  std::string why;
  auto v = m.SelectReclaimVictims("a", {{kGpu, 8}}, m.FreeCapacity(), &why);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(why,
            "queues above their deserved share cannot free 2 nvidia.com/gpu without dropping "
            "below their guarantee");
}

// The verified reclaim's two halves: ReclaimCandidates offers every unit of a
// queue above its deserved share whatever the free capacity (the room may be scattered);
// CheckReclaimVictims refuses a set that takes a queue below its guarantee or below its
// deserved share by more than its last unit, and lower-priority victims count too.
TEST(QueueManager, ReclaimCandidatesAndTheSetCheck) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: a}
spec: {weight: 1, guarantee: {resource: {nvidia.com/gpu: 8}}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: b}
spec: {weight: 1, guarantee: {resource: {nvidia.com/gpu: 4}}}
)"));
  m.SetCapacity({{kGpu, 16}});
  // b holds all 16 in four pods of 4 (created 0..3). a asks for 8: it deserves 8 (its
  // guarantee, its demand), b the other 8.
  for (int i = 0; i < 4; ++i) m.OnPodAdd(GpuPod("b-" + std::to_string(i), "b", 4, "n1", 0, i));
  m.OnPodAdd(GpuPod("w", "a", 8));
  std::string why;
  // Every unit, not only enough for the request (SelectReclaimVictims would take two): which
  // of them go is the caller's verified choice.
  auto c = m.ReclaimCandidates("a", {{kGpu, 8}}, &why);
  ASSERT_EQ(c.size(), 4u) << why;
  EXPECT_EQ(c[0].key, "default/b-3");  // the newest first
  EXPECT_EQ(c[3].key, "default/b-0");
  const ResourceList four{{kGpu, 4}};
  // Two units: b keeps 8 >= its guarantee 4, and was above its deserved 8 until the last
  // (16 - 8 + 4 = 12 > 8).
  EXPECT_EQ(ReclaimReason(
                m.CheckReclaimVictims({"a"}, {{kGpu, 8}}, {{"b", four, true}, {"b", four, true}})),
            "");
  // Three: 16 - 12 + 4 = 8, not above 8 before the last one.
  EXPECT_EQ(ReclaimReason(m.CheckReclaimVictims(
                {"a"}, {{kGpu, 8}}, {{"b", four, true}, {"b", four, true}, {"b", four, true}})),
            "queue b would be reclaimed below its deserved share");
  // Four (three reclaimed, one lower-priority): b would keep 0 < its guarantee of 4.
  EXPECT_EQ(ReclaimReason(m.CheckReclaimVictims(
                {"a"}, {{kGpu, 8}},
                {{"b", four, true}, {"b", four, true}, {"b", four, true}, {"b", four, false}})),
            "queue b would drop below its guarantee (nvidia.com/gpu: 0 left, 4 guaranteed)");
  // The reclaimer's own pods are not checked (in-queue preemption).
  EXPECT_EQ(ReclaimReason(m.CheckReclaimVictims({"a"}, {{kGpu, 8}}, {{"a", four, false}})), "");
  // Beyond its deserved share a queue reclaims nothing.
  EXPECT_TRUE(m.ReclaimCandidates("a", {{kGpu, 12}}, &why).empty());
  EXPECT_NE(why.find("would exceed its deserved share"), std::string::npos) << why;
}

// KAI minruntime plugin (docs/plugins/minruntime.md, resolver.go): queue min runtimes.

api::PodPtr Started(api::PodPtr p, api::Timestamp start) {
  auto q = std::make_shared<api::Pod>(*p);
  q->status.start_time = start;
  return q;
}

TEST(QueueTree, KAIMinRuntimesAndDefaultPriority) {
  auto q = QueueFromObject(*KaiQueue("prod", "{preemptMinRuntime: 20s, reclaimMinRuntime: 10m}"));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->invalid, "");
  EXPECT_EQ(q->preempt_min_runtime_ns, 20 * kS);
  EXPECT_EQ(q->reclaim_min_runtime_ns, 600 * kS);
  EXPECT_EQ(q->priority, 100);  // KAI: "When not set, default is 100."
  auto bad = QueueFromObject(*KaiQueue("x", "{preemptMinRuntime: soon, reclaimMinRuntime: -5s}"));
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->invalid.find("spec.preemptMinRuntime: must be a duration such as \"10m\", got "
                              "\"soon\""),
            std::string::npos)
      << bad->invalid;
  EXPECT_NE(bad->invalid.find("spec.reclaimMinRuntime: must not be negative"), std::string::npos)
      << bad->invalid;
}

TEST(QueueManager, PreemptMinRuntimeIsInheritedAndEnds) {
  api::Timestamp now = 0;
  QueueManager m;
  m.OnObjectAdd(KaiQueue("dept", "{preemptMinRuntime: 60s}"));
  m.OnObjectAdd(KaiQueue("team", "{parentQueue: dept}"));
  m.OnObjectAdd(KaiQueue("other", "{}"));
  auto p = Started(GpuPod("p", "team", 1, "n1"), 0);
  auto o = Started(GpuPod("o", "other", 1, "n1"), 0);
  m.OnPodAdd(p);
  m.OnPodAdd(o);
  EXPECT_FALSE(m.PreemptProtected(*p));  // no clock: nothing protected
  m.UseClock([&now] { return now; });
  now = 30 * kS;
  EXPECT_TRUE(m.PreemptProtected(*p));  // dept's 60 s, inherited by team
  EXPECT_FALSE(m.PreemptProtected(*o));
  now = 61 * kS;
  EXPECT_FALSE(m.PreemptProtected(*p));
}

TEST(QueueManager, ReclaimMinRuntimeByLowestCommonAncestor) {
  // root r { a (reclaimMinRuntime 10m) { a1, a2 }, b }, r reclaimMinRuntime 1m.
  api::Timestamp now = 0;
  QueueManager m;
  m.OnObjectAdd(KaiQueue("r", "{reclaimMinRuntime: 1m}"));
  m.OnObjectAdd(KaiQueue("a", "{parentQueue: r, reclaimMinRuntime: 10m}"));
  for (const char* q : {"a1", "a2"}) {
    m.OnObjectAdd(KaiQueue(q, "{parentQueue: a}"));
  }
  m.OnObjectAdd(KaiQueue("b", "{parentQueue: r}"));
  m.SetCapacity({{kGpu, 16}});
  m.UseClock([&now] { return now; });
  // a2 holds all 16 GPUs, started at 0. First a1 wants 8 (a1 and a2 deserve 8 each).
  m.OnPodAdd(Started(GpuPod("v", "a2", 16, "n1"), 0));
  auto w1 = GpuPod("w1", "a1", 8);
  m.OnPodAdd(w1);
  std::string why;
  // a1: LCA a, one step down towards the victim is a2 (unset), then up to a: 10m.
  now = 120 * kS;
  EXPECT_TRUE(m.ReclaimCandidates("a1", {{kGpu, 8}}, &why).empty());
  now = 601 * kS;
  EXPECT_EQ(m.ReclaimCandidates("a1", {{kGpu, 8}}, &why).size(), 1u) << why;
  // Then b wants 8 (a and b deserve 8 each): LCA r, one step down is a: 10m as well; a
  // victim of r's own 1m would be free at 2 min.
  m.OnPodDelete(w1);
  m.OnPodAdd(GpuPod("wb", "b", 8));
  now = 120 * kS;
  EXPECT_TRUE(m.ReclaimCandidates("b", {{kGpu, 8}}, &why).empty());
  now = 601 * kS;
  EXPECT_EQ(m.ReclaimCandidates("b", {{kGpu, 8}}, &why).size(), 1u) << why;
}

TEST(QueueManager, PrometheusGauges) {
  QueueManager m;
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec: {resources: {gpu: {quota: 4, limit: 8}}}
)"));
  m.SetCapacity({{kGpu, 16}});
  m.OnPodAdd(GpuPod("run", "team-a", 3, "n1"));
  m.OnPodAdd(GpuPod("wait", "team-a", 2));
  metrics::Registry reg;
  RegisterQueueMetrics(reg, m);
  const std::string text = reg.Render();
  for (const char* line :
       {"phalanx_queue_allocated{queue=\"team-a\",resource=\"nvidia.com/gpu\"} 3",
        "phalanx_queue_pending{queue=\"team-a\",resource=\"nvidia.com/gpu\"} 2",
        "phalanx_queue_deserved{queue=\"team-a\",resource=\"nvidia.com/gpu\"} 5",
        "phalanx_queue_pods{queue=\"team-a\",state=\"running\"} 1",
        "phalanx_queue_pods{queue=\"team-a\",state=\"pending\"} 1"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

}  // namespace
}  // namespace phalanx::quota
