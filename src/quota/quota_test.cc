// Queue dialect parsing, tree validation, fair share (hand-computed KAI Proportion
// examples), admission messages and reclaim victim selection.
#include <gtest/gtest.h>

#include <cmath>

#include "api/decode.h"
#include "gang/manager.h"
#include "quota/fair_share.h"
#include "quota/manager.h"
#include "quota/queue_metrics.h"
#include "quota/queue_tree.h"
#include "testing/builders.h"

namespace phalanx::quota {
namespace {

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
  auto s = ComputeFairShare(
      t, {{kGpu, 32}}, {{"x", {{kGpu, 100}}}, {"y", {{kGpu, 100}}}, {"other", {{kGpu, 100}}}});
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
  EXPECT_NE(t.errors.at("c").find("ancestor queue a is invalid"), std::string::npos) << t.errors.at("c");
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
  EXPECT_EQ(t.errors.at("team"),
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
  EXPECT_EQ(m.CheckAdmission("team-a", {{kGpu, 4}}), "");
  // team-a: 16 - 8 = 8 free, but dept caps at 12: 4 free.
  EXPECT_EQ(m.CheckAdmission("team-a", {{kGpu, 16}}),
            "waiting for queue team-a quota: needs 16 nvidia.com/gpu, 8 free");
  EXPECT_EQ(m.CheckAdmission("team-a", {{kGpu, 6}}),
            "waiting for queue dept (parent of team-a) quota: needs 6 nvidia.com/gpu, 4 free");
  // Reserve takes quota before the binding is seen; Unreserve gives it back.
  auto p = GpuPod("p", "team-a", 4);
  m.OnPodAdd(p);
  m.MarkAssumed(*p);
  EXPECT_EQ(m.CheckAdmission("team-a", {{kGpu, 1}}),
            "waiting for queue dept (parent of team-a) quota: needs 1 nvidia.com/gpu, 0 free");
  m.MarkForgotten(*p);
  EXPECT_EQ(m.CheckAdmission("team-a", {{kGpu, 4}}), "");
  auto st = m.Status();
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[1].name, "team-a");
  EXPECT_EQ(st[1].allocated.at(kGpu), 8);
  EXPECT_EQ(st[1].pending.at(kGpu), 4);
  EXPECT_EQ(st[0].allocated.at(kGpu), 8);  // dept: subtree sum
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
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec: {resources: {gpu: {quota: 20, limit: -1, lendingLimit: 5}}}
)"));
  m.OnObjectAdd(Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: b}
spec: {resources: {gpu: {quota: 0, limit: -1}}}
)"));
  m.SetCapacity({{kGpu, 100}});
  for (int i = 0; i < 10; ++i) m.OnPodAdd(GpuPod("b-" + std::to_string(i), "b", 8, "n1"));
  // 100 - 80 allocated - 15 kept by a = 5 free for b.
  EXPECT_EQ(m.CheckAdmission("b", {{kGpu, 5}}), "");
  EXPECT_EQ(m.CheckAdmission("b", {{kGpu, 10}}),
            "waiting for queue b: needs 10 nvidia.com/gpu, 5 free outside the idle quota other "
            "queues do not lend (lendingLimit: 15 nvidia.com/gpu kept)");
  // a itself may use what it keeps.
  EXPECT_EQ(m.CheckAdmission("a", {{kGpu, 20}}), "");
  // Once a uses 12 of its quota it keeps only 20 - 5 - 12 = 3 idle.
  m.OnPodAdd(GpuPod("a-0", "a", 12, "n2"));
  EXPECT_EQ(m.CheckAdmission("b", {{kGpu, 5}}), "");
  EXPECT_NE(m.CheckAdmission("b", {{kGpu, 6}}), "");
}

TEST(QueueTree, LendingLimitAboveQuotaIsAnError) {
  auto t = BuildQueueTree({*QueueFromObject(*Obj(R"(
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: a}
spec: {resources: {gpu: {quota: 4, lendingLimit: 6}}}
)"))});
  ASSERT_TRUE(t.errors.count("a"));
  EXPECT_NE(t.errors.at("a").find("spec.resources.gpu.lendingLimit: must be <= quota (4)"),
            std::string::npos)
      << t.errors.at("a");
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
  EXPECT_EQ(m.CheckAdmission("qa", {{"cpu", 4000}}), "");
  EXPECT_EQ(m.CheckAdmission("qa", {{"cpu", 5000}}),
            "waiting for queue qa quota: needs 5 cpu, 4 free (min 4 cpu, idle min of all quotas 4 cpu)");
  m.OnPodAdd(pod("b0", "b", "4", "n1"));
  EXPECT_EQ(m.CheckAdmission("qa", {{"cpu", 1000}}),
            "waiting for queue qa quota: needs 1 cpu, 0 free (min 4 cpu, idle min of all quotas 0 cpu)");
}

TEST(QueueManager, ReclaimTakesWholeGangsLowestPriorityFirstNeverBelowGuarantee) {
  gang::Manager gangs;
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
    b.Req(kGpu, "4").NodeName("n1").Label(kKAIQueueLabel, "borrower").Priority(0)
        .Annotation("scheduling.k8s.io/group-name", "g").CreationTimestamp(10);
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
  EXPECT_EQ(why, "queues above their deserved share cannot free 2 nvidia.com/gpu without dropping "
                 "below their guarantee");
}

// The verified reclaim's two halves (issue 20): ReclaimCandidates offers every unit of a
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
  EXPECT_EQ(m.CheckReclaimVictims({"a"}, {{kGpu, 8}}, {{"b", four, true}, {"b", four, true}}), "");
  // Three: 16 - 12 + 4 = 8, not above 8 before the last one.
  EXPECT_EQ(m.CheckReclaimVictims({"a"}, {{kGpu, 8}},
                                  {{"b", four, true}, {"b", four, true}, {"b", four, true}}),
            "queue b would be reclaimed below its deserved share");
  // Four (three reclaimed, one lower-priority): b would keep 0 < its guarantee of 4.
  EXPECT_EQ(m.CheckReclaimVictims(
                {"a"}, {{kGpu, 8}},
                {{"b", four, true}, {"b", four, true}, {"b", four, true}, {"b", four, false}}),
            "queue b would drop below its guarantee (nvidia.com/gpu: 0 left, 4 guaranteed)");
  // The reclaimer's own pods are not checked (in-queue preemption).
  EXPECT_EQ(m.CheckReclaimVictims({"a"}, {{kGpu, 8}}, {{"a", four, false}}), "");
  // Beyond its deserved share a queue reclaims nothing.
  EXPECT_TRUE(m.ReclaimCandidates("a", {{kGpu, 12}}, &why).empty());
  EXPECT_NE(why.find("would exceed its deserved share"), std::string::npos) << why;
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
  for (const char* line : {"phalanx_queue_allocated{queue=\"team-a\",resource=\"nvidia.com/gpu\"} 3",
                           "phalanx_queue_pending{queue=\"team-a\",resource=\"nvidia.com/gpu\"} 2",
                           "phalanx_queue_deserved{queue=\"team-a\",resource=\"nvidia.com/gpu\"} 5",
                           "phalanx_queue_pods{queue=\"team-a\",state=\"running\"} 1",
                           "phalanx_queue_pods{queue=\"team-a\",state=\"pending\"} 1"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

}  // namespace
}  // namespace phalanx::quota
