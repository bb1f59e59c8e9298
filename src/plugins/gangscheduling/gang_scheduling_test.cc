// Table tests of the GangScheduling plugin's extension points (PreEnqueue, Reserve /
// Unreserve, Permit, the PodGroup plugin calls PlanPodGroup / PodGroupCycleDone) and of
// GangPrioritySort, against the real gang state (gang::DefaultPodGroupManager fed the objects and
// pods of each case) behind a fake framework handle. Ported cases, by their upstream names:
//   - kube-scheduler pkg/scheduler/framework/plugins/gangscheduling/gangscheduling_test.go
//     TestPreEnqueue (the cases without CompositePodGroups, which 1.36 does not have);
//   - scheduler-plugins pkg/coscheduling/coscheduling_test.go TestLess, TestPermit and
//     TestPostFilter (whose rejection of the waiting members is Unreserve's here).
// Cases are built through Env (objects, pods, the plugin, PodInfos) so that a change of the
// cycle's types touches few lines.
#include "plugins/gangscheduling/gang_scheduling.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/decode.h"
#include "framework/cycle_state.h"
#include "gang/default_podgroup_manager.h"
#include "gang/staleness.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::gangscheduling {
namespace {

using framework::Code;
using phalanx::testing::PodBuilder;
constexpr int64_t kSec = api::kNanosPerSecond;

// A Coscheduling (scheduling.x-k8s.io/v1alpha1) PodGroup.
std::string PodGroup(const std::string& ns, const std::string& name, int min_member,
                     const std::string& spec_extra = "", const std::string& created = "") {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name +
         ", namespace: " + ns +
         (created.empty() ? "" : ", creationTimestamp: \"" + created + "\"") +
         "}\nspec: {minMember: " + std::to_string(min_member) +
         (spec_extra.empty() ? "" : ", " + spec_extra) + "}\n---\n";
}

// A pod of the Coscheduling PodGroup `group` ("" = no gang).
api::Pod Member(const std::string& ns, const std::string& name, const std::string& group,
                int32_t priority = 0) {
  PodBuilder b(name);
  b.Namespace(ns).UID(name).Priority(priority);
  if (!group.empty()) b.Label("scheduling.x-k8s.io/pod-group", group);
  return b.Obj();
}

struct Env {
  fake::FakeHandle handle;
  gang::DefaultPodGroupManager gangs;
  gang::StaleGangTracker stale;

  Env() {
    handle.services().Provide<gang::PodGroupManager>(&gangs);
    handle.services().Provide<gang::StaleGangTracker>(&stale);
  }

  // Feeds the gang state the objects of `yaml` (PodGroups, Topologies, ...) and its pods.
  void Apply(const std::string& yaml) {
    api::Manifests m;
    const api::Status s = api::DecodeManifests(yaml, "case.yaml", &m);
    ASSERT_TRUE(s.ok()) << s.message();
    for (auto& o : m.objects) gangs.OnObjectAdd(std::make_shared<api::Unstructured>(std::move(o)));
    for (auto& p : m.pods) AddPod(std::move(p));
  }
  void AddPod(api::Pod p) {
    gangs.OnPodAdd(std::make_shared<api::Pod>(std::move(p)), handle.fake_clock().now);
  }
  void AddPods(const std::vector<api::Pod>& pods) {
    for (const auto& p : pods) AddPod(p);
  }

  // The plugin built from `args` (YAML; "" = none), as the framework builds it.
  std::unique_ptr<GangScheduling> Plugin(const std::string& args = "") {
    std::optional<YAML::Node> node;
    if (!args.empty()) node = YAML::Load(args);
    auto pl = GangScheduling::New(node ? &*node : nullptr, handle);
    EXPECT_TRUE(pl.ok()) << pl.status().Message();
    if (!pl.ok()) return nullptr;
    return std::unique_ptr<GangScheduling>(dynamic_cast<GangScheduling*>(pl.value().release()));
  }
};

// A pod naming a scheduling.k8s.io PodGroup (1.36 spec.schedulingGroup.podGroupName).
api::Pod SchedulingGroupMember(const std::string& ns, const std::string& name,
                               const std::string& group) {
  api::Pod p = Member(ns, name, "");
  p.spec.scheduling_group_pod_group_name = group;
  return p;
}

framework::PodInfoPtr Info(const api::Pod& p) {
  return framework::PodInfo::Make(std::make_shared<api::Pod>(p));
}

// A pod waiting at Permit that records the plugin's decision.
class FakeWaitingPod final : public framework::WaitingPod {
 public:
  explicit FakeWaitingPod(api::Pod p) : pod_(std::move(p)) {}
  const api::Pod& GetPod() const override { return pod_; }
  std::vector<std::string> GetPendingPlugins() const override {
    return {std::string(GangScheduling::kName)};
  }
  void Allow(std::string_view plugin) override { allowed_by = std::string(plugin); }
  void Reject(std::string_view plugin, std::string_view msg) override {
    rejected_by = std::string(plugin);
    reject_message = std::string(msg);
  }
  std::string allowed_by, rejected_by, reject_message;

 private:
  api::Pod pod_;
};

// ---- PreEnqueue ----

// gangscheduling_test.go TestPreEnqueue. Upstream gates a pod whose gang lacks members
// with UnschedulableAndUnresolvable; here it is Unschedulable. The queue reads only the
// gating plugin and the message of a PreEnqueue rejection (SchedulingQueue::RunPreEnqueue),
// so the code changes nothing.
TEST(GangSchedulingPreEnqueue, Table) {
  struct Case {
    const char* name;
    std::string objects;  // PodGroups
    std::vector<api::Pod> initial_pods;
    api::Pod pod;
    Code want;
    std::string want_message;
  };
  const std::string groups = PodGroup("ns1", "pg1", 3) + PodGroup("ns1", "pg2", 4);
  const std::vector<Case> cases = {
      {"non-gang pod succeeds immediately",
       groups,
       {},
       Member("ns1", "non-gang", ""),
       Code::kSuccess,
       ""},
      {"basic policy pod succeeds immediately",
       "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: pg3, namespace: "
       "ns1}\nspec: {schedulingPolicy: {basic: {}}}\n",
       {},
       SchedulingGroupMember("ns1", "basic-pod", "pg3"),
       Code::kSuccess,
       ""},
      {"gang pod fails PreEnqueue when pod group is not yet created",
       "",
       {Member("ns1", "p2", "pg1"), Member("ns1", "p3", "pg1"), Member("ns1", "p4", "pg2"),
        Member("ns1", "p5", "pg2")},
       Member("ns1", "p1", "pg1"),
       Code::kUnschedulableAndUnresolvable,
       "waiting for the gang named by label scheduling.x-k8s.io/pod-group, pod group ns1/pg1, to "
       "be created"},
      {"gang pod fails PreEnqueue when quorum is not met",
       groups,
       {Member("ns1", "p2", "pg1"), Member("ns1", "p4", "pg2"), Member("ns1", "p5", "pg2")},
       Member("ns1", "p1", "pg1"),
       Code::kUnschedulable,
       "waiting for minMember pods of pod group ns1/pg1 (PodGroup ns1/pg1 "
       "(scheduling.x-k8s.io/v1alpha1)): 2/3 exist"},
      {"gang pod passes PreEnqueue",
       groups,
       {Member("ns1", "p2", "pg1"), Member("ns1", "p3", "pg1"), Member("ns1", "p4", "pg2"),
        Member("ns1", "p5", "pg2")},
       Member("ns1", "p1", "pg1"),
       Code::kSuccess,
       ""},
      // Ours: a PodGroup that cannot be honoured gates its pods with the reason.
      {"invalid pod group",
       PodGroup("ns1", "bad", 0),
       {},
       Member("ns1", "p1", "bad"),
       Code::kUnschedulableAndUnresolvable,
       "invalid pod group ns1/bad: PodGroup ns1/bad (scheduling.x-k8s.io/v1alpha1): "
       "spec.minMember: must be >= 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.Apply(c.objects);
    env.AddPods(c.initial_pods);
    env.AddPod(c.pod);
    auto pl = env.Plugin();
    ASSERT_NE(pl, nullptr);
    const framework::Status s = pl->PreEnqueue(*Info(c.pod));
    EXPECT_EQ(s.code(), c.want) << s.Message();
    if (c.want_message.empty()) {
      EXPECT_EQ(s.Message(), "");
    } else {
      EXPECT_EQ(s.Message().substr(0, c.want_message.size()), c.want_message) << s.Message();
    }
  }
}

// ---- Permit mode: Reserve, Permit, Unreserve ----

// coscheduling_test.go TestPermit: pg1 needs 2 members, pg2 one. As the framework runs
// them, Reserve (which counts the member assumed) comes before Permit.
TEST(GangSchedulingPermit, Table) {
  struct Case {
    const char* name;
    api::Pod pod;
    Code want;
    int64_t want_timeout_ns;  // kWait
  };
  const std::vector<Case> cases = {
      {"pods do not belong to any podGroup", Member("ns1", "pod1", ""), Code::kSuccess, 0},
      {"pods belong to a podGroup, Wait", Member("ns1", "pod1", "pg1"), Code::kWait, 300 * kSec},
      {"pods belong to a podGroup, Allow", Member("ns1", "pod1", "pg2"), Code::kSuccess, 0},
      // Ours: the PodGroup's scheduleTimeoutSeconds replaces permitWaitingTimeSeconds.
      {"the pod group's scheduleTimeoutSeconds", Member("ns1", "pod1", "pg3"), Code::kWait,
       20 * kSec},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.Apply(PodGroup("ns1", "pg1", 2) + PodGroup("ns1", "pg2", 1) +
              PodGroup("ns1", "pg3", 2, "scheduleTimeoutSeconds: 20"));
    env.AddPod(c.pod);
    auto pl = env.Plugin("{mode: Permit}");
    ASSERT_NE(pl, nullptr);
    framework::CycleState state;
    ASSERT_TRUE(pl->Reserve(state, *Info(c.pod), "node1").IsSuccess());
    int64_t timeout = 0;
    const framework::Status s = pl->Permit(state, *Info(c.pod), "node1", &timeout);
    EXPECT_EQ(s.code(), c.want) << s.Message();
    if (c.want == Code::kWait) {
      EXPECT_EQ(timeout, c.want_timeout_ns);
    }
  }
}

// The member that completes the quorum allows the members waiting at Permit, of its own
// gang only.
TEST(GangSchedulingPermit, QuorumAllowsTheWaitingMembers) {
  Env env;
  env.Apply(PodGroup("ns1", "pg1", 2) + PodGroup("ns1", "other", 2));
  const api::Pod p1 = Member("ns1", "p1", "pg1"), p2 = Member("ns1", "p2", "pg1");
  const api::Pod q1 = Member("ns1", "q1", "other");
  env.AddPods({p1, p2, q1, Member("ns1", "q2", "other")});
  auto pl = env.Plugin("{mode: Permit}");
  ASSERT_NE(pl, nullptr);
  framework::CycleState state;
  int64_t timeout = 0;
  ASSERT_TRUE(pl->Reserve(state, *Info(p1), "n").IsSuccess());
  EXPECT_EQ(pl->Permit(state, *Info(p1), "n", &timeout).code(), Code::kWait);
  ASSERT_TRUE(pl->Reserve(state, *Info(q1), "n").IsSuccess());
  EXPECT_EQ(pl->Permit(state, *Info(q1), "n", &timeout).code(), Code::kWait);
  FakeWaitingPod w1(p1), wq1(q1);
  env.handle.SetWaitingPods({&w1, &wq1});
  ASSERT_TRUE(pl->Reserve(state, *Info(p2), "n").IsSuccess());
  EXPECT_EQ(pl->Permit(state, *Info(p2), "n", &timeout).code(), Code::kSuccess);
  EXPECT_EQ(w1.allowed_by, "GangScheduling");
  EXPECT_EQ(wq1.allowed_by, "");  // the other gang still lacks a member
  EXPECT_EQ(wq1.rejected_by, "");
}

// coscheduling_test.go TestPostFilter: when a member fails, the waiting members of its
// gang are rejected (here by Unreserve, in the gang's Strict mode); a pod outside any gang
// rejects nobody. NonStrict gangs (Koordinator mode NonStrict) keep waiting. Not ported:
// "enough pods assigned, do not reject all": once the quorum is assumed, Permit has already
// allowed every waiting member, so none is left to reject.
TEST(GangSchedulingUnreserve, Table) {
  struct Case {
    const char* name;
    api::Pod failed;
    bool want_rejected;  // the waiting member of gang "pg"
  };
  const std::string koord_non_strict =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: k1\n  namespace: ns1\n  uid: k1\n"
      "  annotations:\n    gang.scheduling.koordinator.sh/name: kg\n"
      "    gang.scheduling.koordinator.sh/min-available: \"3\"\n"
      "    gang.scheduling.koordinator.sh/mode: NonStrict\n"
      "spec: {containers: [{name: c, image: i}]}\n";
  const std::vector<Case> cases = {
      {"pod does not belong to any pod group", Member("ns1", "pod1", ""), false},
      {"pod failed at filter phase, reject all pods", Member("ns1", "pod1", "pg"), true},
      {"a member of another gang fails", Member("ns1", "x1", "other"), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.Apply(PodGroup("ns1", "pg", 3) + PodGroup("ns1", "other", 2));
    const api::Pod waiting = Member("ns1", "pod0", "pg");
    env.AddPods({waiting, c.failed});
    auto pl = env.Plugin("{mode: Permit}");
    ASSERT_NE(pl, nullptr);
    FakeWaitingPod w(waiting);
    env.handle.SetWaitingPods({&w});
    framework::CycleState state;
    ASSERT_TRUE(pl->Reserve(state, *Info(c.failed), "n").IsSuccess());
    pl->Unreserve(state, *Info(c.failed), "n");
    EXPECT_EQ(w.rejected_by, c.want_rejected ? "GangScheduling" : "");
    if (c.want_rejected) {
      EXPECT_EQ(w.reject_message, "gang ns1/pg: member ns1/pod1 failed (Strict mode)");
    }
  }
  {
    SCOPED_TRACE("NonStrict gang: the waiting members keep waiting");
    Env env;
    env.Apply(koord_non_strict);
    api::Manifests m;
    ASSERT_TRUE(api::DecodeManifests(koord_non_strict, "k.yaml", &m).ok());
    api::Pod k2 = m.pods[0];
    k2.metadata.name = k2.metadata.uid = "k2";
    env.AddPod(k2);
    auto pl = env.Plugin("{mode: Permit}");
    ASSERT_NE(pl, nullptr);
    FakeWaitingPod w(m.pods[0]);
    env.handle.SetWaitingPods({&w});
    framework::CycleState state;
    ASSERT_TRUE(pl->Reserve(state, *Info(k2), "n").IsSuccess());
    pl->Unreserve(state, *Info(k2), "n");
    EXPECT_EQ(w.rejected_by, "");
  }
}

// Reserve / Unreserve keep the gang's assumed count (what Permit and the PodGroup cycle
// read), in every mode.
TEST(GangSchedulingReserve, CountsAssumedMembers) {
  Env env;
  env.Apply(PodGroup("ns1", "pg", 2));
  const api::Pod p1 = Member("ns1", "p1", "pg"), p2 = Member("ns1", "p2", "pg");
  env.AddPods({p1, p2});
  auto pl = env.Plugin();
  ASSERT_NE(pl, nullptr);
  framework::CycleState state;
  ASSERT_TRUE(pl->Reserve(state, *Info(p1), "n").IsSuccess());
  EXPECT_EQ(env.gangs.SummaryOf("ns1/pg")->counts.assumed, 1);
  EXPECT_FALSE(env.gangs.Satisfied("ns1/pg"));
  ASSERT_TRUE(pl->Reserve(state, *Info(p2), "n").IsSuccess());
  EXPECT_TRUE(env.gangs.Satisfied("ns1/pg"));
  pl->Unreserve(state, *Info(p2), "n");
  EXPECT_EQ(env.gangs.SummaryOf("ns1/pg")->counts.assumed, 1);
  // Transactional mode: Permit never waits (the PodGroup cycle placed the quorum at once).
  int64_t timeout = 0;
  EXPECT_EQ(pl->Permit(state, *Info(p1), "n", &timeout).code(), Code::kSuccess);
}

// ---- The PodGroup plugin calls ----

struct PlanCase {
  const char* name;
  std::string yaml;  // objects and pods
  std::string pod;   // "ns/name" of the popped pod (in yaml)
  std::string args;  // GangSchedulingArgs
  Code want;
  std::string want_message;  // prefix
  // Expected plan: per pod group, "key min_count scheduled_count pod,pod,...".
  std::vector<std::string> want_groups;
};

std::string Describe(const framework::PodGroupInfo& u) {
  std::string s =
      u.key + " " + std::to_string(u.min_count) + " " + std::to_string(u.scheduled_count) + " ";
  for (size_t i = 0; i < u.pending_pods.size(); ++i) s += (i ? "," : "") + u.pending_pods[i];
  return s;
}

std::string PodYaml(const std::string& ns, const std::string& name, const std::string& meta) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
         "\n  uid: " + name + "\n" + meta + "spec: {containers: [{name: c, image: i}]}\n---\n";
}
std::string CoschedPod(const std::string& name, const std::string& group) {
  return PodYaml("ns1", name, "  labels: {scheduling.x-k8s.io/pod-group: " + group + "}\n");
}
std::string KoordPod(const std::string& name, const std::string& gang, int min,
                     const std::string& groups) {
  return PodYaml("ns1", name,
                 "  annotations:\n    gang.scheduling.koordinator.sh/name: " + gang +
                     "\n    gang.scheduling.koordinator.sh/min-available: \"" +
                     std::to_string(min) + "\"\n    gang.scheduling.koordinator.sh/groups: '" +
                     groups + "'\n");
}
std::string KaiPod(const std::string& name, const std::string& group, const std::string& sub) {
  return PodYaml("ns1", name,
                 "  annotations: {pod-group-name: " + group + "}\n" +
                     (sub.empty() ? "" : "  labels: {kai.scheduler/subgroup-name: " + sub + "}\n"));
}

TEST(GangSchedulingPlanPodGroup, Table) {
  const std::string kai_subgroups = R"(apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: serve, namespace: ns1}
spec:
  minMember: 3
  subGroups:
  - {name: prefill, minMember: 1}
  - {name: decode, minMember: 2}
---
)";
  const std::vector<PlanCase> cases = {
      {"a pod outside any gang has no pod group to plan",
       PodYaml("ns1", "solo", ""),
       "ns1/solo",
       "",
       Code::kSuccess,
       "",
       {}},
      {"a gang with its quorum: every pending member, in key order",
       PodGroup("ns1", "pg", 2) + CoschedPod("b", "pg") + CoschedPod("a", "pg") +
           CoschedPod("c", "pg"),
       "ns1/b",
       "",
       Code::kSuccess,
       "",
       {"ns1/pg 2 0 ns1/a,ns1/b,ns1/c"}},
      {"a gang below its quorum waits for members",
       PodGroup("ns1", "pg", 3) + CoschedPod("a", "pg"),
       "ns1/a",
       "",
       Code::kUnschedulable,
       "gang group of ns1/pg: waiting for minMember pods of pod group ns1/pg (PodGroup ns1/pg "
       "(scheduling.x-k8s.io/v1alpha1)): 1/3 exist",
       {}},
      {"an invalid pod group",
       PodGroup("ns1", "bad", -1) + CoschedPod("a", "bad"),
       "ns1/a",
       "",
       Code::kUnschedulableAndUnresolvable,
       "invalid pod group ns1/bad: ",
       {}},
      {"Permit mode places members one by one: no plan",
       PodGroup("ns1", "pg", 2) + CoschedPod("a", "pg") + CoschedPod("b", "pg"),
       "ns1/a",
       "{mode: Permit}",
       Code::kSuccess,
       "",
       {}},
      {"Permit mode cannot keep a topology constraint",
       "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: t, namespace: "
       "ns1}\nspec: {minMember: 1, topologyConstraint: {topology: topo, requiredTopologyLevel: "
       "rack}}\n---\n" +
           KaiPod("a", "t", ""),
       "ns1/a",
       "{mode: Permit}",
       Code::kUnschedulableAndUnresolvable,
       "pod group ns1/t: topology constraints need GangScheduling mode Transactional",
       {}},
      {"a topology constraint naming a Topology that does not exist",
       "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: t, namespace: "
       "ns1}\nspec: {minMember: 1, topologyConstraint: {topology: topo, requiredTopologyLevel: "
       "rack}}\n---\n" +
           KaiPod("a", "t", ""),
       "ns1/a",
       "",
       Code::kUnschedulableAndUnresolvable,
       "pod group ns1/t (",
       {}},
      {"a GangGroup plans every gang of the group",
       KoordPod("a1", "ga", 1, R"(["ns1/ga", "ns1/gb"])") +
           KoordPod("b1", "gb", 2, R"(["ns1/ga", "ns1/gb"])") +
           KoordPod("b2", "gb", 2, R"(["ns1/ga", "ns1/gb"])"),
       "ns1/a1",
       "",
       Code::kSuccess,
       "",
       {"ns1/ga 1 0 ns1/a1", "ns1/gb 2 0 ns1/b1,ns1/b2"}},
      {"a GangGroup waits for the members of each gang",
       KoordPod("a1", "ga", 1, R"(["ns1/ga", "ns1/gb"])") +
           KoordPod("b1", "gb", 2, R"(["ns1/ga", "ns1/gb"])"),
       "ns1/a1",
       "",
       Code::kUnschedulable,
       "gang group of ns1/ga: waiting for minMember pods of pod group ns1/gb",
       {}},
      {"subgroups: each subgroup's missing minimum is placed before the extra members",
       kai_subgroups + KaiPod("d1", "serve", "decode") + KaiPod("p1", "serve", "prefill") +
           KaiPod("p2", "serve", "prefill") + KaiPod("d2", "serve", "decode"),
       "ns1/d1",
       "",
       Code::kSuccess,
       "",
       {"ns1/serve 3 0 ns1/d1,ns1/d2,ns1/p1,ns1/p2"}},
      {"subgroups: a subgroup lacking pods waits",
       kai_subgroups + KaiPod("d1", "serve", "decode") + KaiPod("p1", "serve", "prefill") +
           KaiPod("p2", "serve", "prefill"),
       "ns1/d1",
       "",
       Code::kUnschedulable,
       "waiting for members of pod group ns1/serve",
       {}},
      {"a member naming no subgroup is never placed",
       kai_subgroups + KaiPod("d1", "serve", "decode") + KaiPod("d2", "serve", "decode") +
           KaiPod("p1", "serve", "prefill") + KaiPod("x", "serve", "nope"),
       "ns1/x",
       "",
       Code::kUnschedulableAndUnresolvable,
       "pod ns1/x: ",
       {}},
  };
  for (const PlanCase& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.Apply(c.yaml);
    auto pl = env.Plugin(c.args);
    ASSERT_NE(pl, nullptr);
    const auto slash = c.pod.find('/');
    const auto pod = [&]() -> api::PodPtr {
      api::Manifests m;
      EXPECT_TRUE(api::DecodeManifests(c.yaml, "case.yaml", &m).ok());
      for (auto& p : m.pods) {
        if (p.metadata.namespace_ == c.pod.substr(0, slash) &&
            p.metadata.name == c.pod.substr(slash + 1)) {
          return std::make_shared<api::Pod>(p);
        }
      }
      return nullptr;
    }();
    ASSERT_NE(pod, nullptr);
    framework::QueuedPodGroupInfo plan;
    const framework::Status s = pl->PlanPodGroup(*framework::PodInfo::Make(pod), &plan);
    EXPECT_EQ(s.code(), c.want) << s.Message();
    EXPECT_EQ(s.Message().substr(0, c.want_message.size()), c.want_message) << s.Message();
    std::vector<std::string> got;
    for (const auto& u : plan.pod_groups) got.push_back(Describe(u));
    if (c.want == Code::kSuccess) {  // a failed plan is not used
      EXPECT_EQ(got, c.want_groups);
    }
  }
}

// A satisfied gang's remaining members schedule alone, and members already assumed count
// towards the quorum of the next cycle.
TEST(GangSchedulingPlanPodGroup, ScheduledMembers) {
  Env env;
  env.Apply(PodGroup("ns1", "pg", 3) + CoschedPod("a", "pg") + CoschedPod("b", "pg") +
            CoschedPod("c", "pg") + CoschedPod("d", "pg"));
  auto pl = env.Plugin();
  ASSERT_NE(pl, nullptr);
  const api::Pod a = Member("ns1", "a", "pg");
  framework::CycleState state;
  ASSERT_TRUE(pl->Reserve(state, *Info(a), "n").IsSuccess());
  framework::QueuedPodGroupInfo plan;
  ASSERT_TRUE(pl->PlanPodGroup(*Info(Member("ns1", "b", "pg")), &plan).IsSuccess());
  ASSERT_EQ(plan.pod_groups.size(), 1u);
  EXPECT_EQ(plan.pod_groups[0].scheduled_count, 1);
  EXPECT_EQ(plan.pod_groups[0].Need(), 2);
  for (const char* p : {"b", "c"}) {
    ASSERT_TRUE(pl->Reserve(state, *Info(Member("ns1", p, "pg")), "n").IsSuccess());
  }
  ASSERT_TRUE(env.gangs.Satisfied("ns1/pg"));
  ASSERT_TRUE(pl->PlanPodGroup(*Info(Member("ns1", "d", "pg")), &plan).IsSuccess());
  EXPECT_TRUE(plan.pod_groups.empty());
}

TEST(GangSchedulingPlanPodGroup, CycleDoneRecordsTheAttempt) {
  Env env;
  env.Apply(PodGroup("ns1", "pg", 2) + CoschedPod("a", "pg") + CoschedPod("b", "pg"));
  auto pl = env.Plugin();
  ASSERT_NE(pl, nullptr);
  framework::QueuedPodGroupInfo plan;
  ASSERT_TRUE(pl->PlanPodGroup(*Info(Member("ns1", "a", "pg")), &plan).IsSuccess());
  pl->PodGroupCycleDone(plan, /*committed=*/false, "0/3 nodes are available");
  auto info = env.gangs.Info("ns1/pg");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->attempts, 1);
  EXPECT_EQ(info->last_reason, "0/3 nodes are available");
  pl->PodGroupCycleDone(plan, /*committed=*/true, "");
  info = env.gangs.Info("ns1/pg");
  EXPECT_EQ(info->attempts, 2);
  EXPECT_EQ(info->last_reason, "");
}

// ---- Args and events ----

TEST(GangSchedulingArgs, Table) {
  struct Case {
    const char* name;
    const char* args;
    bool ok;
    std::string error;
    GangScheduling::Mode mode = GangScheduling::Mode::kTransactional;
  };
  const std::vector<Case> cases = {
      {"no args: Transactional", "", true, ""},
      {"mode Permit", "{mode: Permit}", true, "", GangScheduling::Mode::kPermit},
      {"mode Transactional", "{kind: GangSchedulingArgs, mode: Transactional}", true, ""},
      {"an unknown mode", "{mode: Eager}", false,
       "GangSchedulingArgs: mode: Unsupported value: \"Eager\": supported values: "
       "\"Transactional\", \"Permit\""},
      {"permitWaitingTimeSeconds must be positive", "{permitWaitingTimeSeconds: 0}", false,
       "GangSchedulingArgs: permitWaitingTimeSeconds: Invalid value: 0: must be greater than 0"},
      {"podGrouper must be a bool", "{podGrouper: maybe}", false,
       "GangSchedulingArgs: podGrouper: Invalid value: maybe: must be true or false"},
      {"an unknown field", "{modes: Permit}", false, "GangSchedulingArgs: unknown field \"modes\""},
      {"another kind", "{kind: CoschedulingArgs}", false,
       "GangSchedulingArgs: want args of kind GangSchedulingArgs, got CoschedulingArgs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fake::FakeHandle h;
    std::optional<YAML::Node> node;
    if (*c.args) node = YAML::Load(c.args);
    auto pl = GangScheduling::New(node ? &*node : nullptr, h);
    ASSERT_EQ(pl.ok(), c.ok) << (pl.ok() ? "" : pl.status().Message());
    if (!c.ok) {
      EXPECT_EQ(pl.status().Message(), c.error);
      continue;
    }
    EXPECT_EQ(dynamic_cast<GangScheduling*>(pl.value().get())->mode(), c.mode);
  }
}

// A parallel Job is a gang only with KAI's batch-min-member annotation (KAI job_grouper.go).
const char* const kJobWithPod = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns1, uid: uid-j, annotations: {kai.scheduler/batch-min-member: "2"}}
spec:
  parallelism: 2
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}
---
apiVersion: v1
kind: Pod
metadata:
  name: j-0
  namespace: ns1
  uid: j-0
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: j, uid: uid-j, controller: true}]
spec: {containers: [{name: c, image: i}]}
)";

// The permit wait comes from permitWaitingTimeSeconds; podGrouper and
// staleGangGracePeriodSeconds reach the gang state.
TEST(GangSchedulingArgs, ReachTheGangState) {
  Env env;
  env.Apply(PodGroup("ns1", "pg", 2));
  const api::Pod p = Member("ns1", "p", "pg");
  env.AddPod(p);
  auto pl = env.Plugin("{mode: Permit, permitWaitingTimeSeconds: 7}");
  ASSERT_NE(pl, nullptr);
  framework::CycleState state;
  ASSERT_TRUE(pl->Reserve(state, *Info(p), "n").IsSuccess());
  int64_t timeout = 0;
  EXPECT_EQ(pl->Permit(state, *Info(p), "n", &timeout).code(), Code::kWait);
  EXPECT_EQ(timeout, 7 * kSec);

  // podGrouper: false: a Job's pods are no gang.
  Env jobs;
  auto off = jobs.Plugin("{podGrouper: false}");
  ASSERT_NE(off, nullptr);
  jobs.Apply(kJobWithPod);
  EXPECT_EQ(jobs.gangs.GangKeys(), std::vector<std::string>{});
  // The same with the default (podGrouper on): the annotated Job is a gang of its own.
  Env on;
  auto def = on.Plugin();
  ASSERT_NE(def, nullptr);
  on.Apply(kJobWithPod);
  EXPECT_EQ(on.gangs.GangKeys(), std::vector<std::string>{"ns1/Job-j"});
}

TEST(GangSchedulingEvents, Registered) {
  Env env;
  auto pl = env.Plugin();
  ASSERT_NE(pl, nullptr);
  std::vector<std::string> got;
  for (const auto& e : pl->EventsToRegister()) got.push_back(e.event.label);
  EXPECT_EQ(got, (std::vector<std::string>{"PodGroupChange", "AssignedPodDelete"}));
}

// ---- GangPrioritySort ----

// coscheduling_test.go TestLess. Coscheduling orders a pod outside a gang by its
// InitialAttemptTimestamp; GangPrioritySort orders it by its creationTimestamp (then its
// queue timestamp), so the cases give the pods that time as creationTimestamp. The gangs'
// creation times are the PodGroups' (pg1..pg4: times[2..5] = now +2 s, +3 s, -2 s, -1 s).
// pg1 is in namespace1, pg2..pg4 in namespace2: pod1 (namespace1) naming pg3 or pg4 names a
// PodGroup that does not exist and orders by its own time, as Coscheduling's
// GetCreationTimestamp falls back to the pod's.
TEST(GangPrioritySortLess, Table) {
  // times[i] as RFC 3339, now = 2024-01-01T00:00:30Z.
  const std::vector<int> offsets = {0, 1, 2, 3, -2, -1};
  const auto time = [&](int i) {
    return "2024-01-01T00:00:" + std::to_string(30 + offsets[static_cast<size_t>(i)]) + "Z";
  };
  const std::string groups = PodGroup("namespace1", "pg1", 5, "", time(2)) +
                             PodGroup("namespace2", "pg2", 5, "", time(3)) +
                             PodGroup("namespace2", "pg3", 5, "", time(4)) +
                             PodGroup("namespace2", "pg4", 5, "", time(5));
  struct P {
    const char* ns;
    const char* name;
    int32_t priority;
    const char* group;  // "" = none
    int time = -1;      // index into times: the pod's creation time (-1: unset)
  };
  struct Case {
    const char* name;
    P p1, p2;
    bool expected;
  };
  const int32_t low = 10, high = 100;
  const std::vector<Case> cases = {
      {"p1.priority less than p2.priority",
       {"namespace1", "pod1", low, ""},
       {"namespace2", "pod2", high, ""},
       false},
      {"p1.priority greater than p2.priority",
       {"namespace1", "pod1", high, ""},
       {"namespace2", "pod2", low, ""},
       true},
      {"equal priority. p1 is added to schedulingQ earlier than p2",
       {"namespace1", "pod1", high, "", 0},
       {"namespace2", "pod2", high, "", 1},
       true},
      {"equal priority. p2 is added to schedulingQ earlier than p1",
       {"namespace1", "pod1", high, "", 1},
       {"namespace2", "pod2", high, "", 0},
       false},
      {"p1.priority less than p2.priority, p1 belongs to podGroup1",
       {"namespace1", "pod1", low, "pg1"},
       {"namespace2", "pod2", high, ""},
       false},
      {"p1.priority greater than p2.priority, p1 belongs to podGroup1",
       {"namespace1", "pod1", high, "pg1"},
       {"namespace2", "pod2", low, ""},
       true},
      {"equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to podGroup3",
       {"namespace1", "pod1", high, "pg3", 0},
       {"namespace2", "pod2", high, "", 1},
       true},
      {"equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to podGroup3",
       {"namespace1", "pod1", high, "pg3", 1},
       {"namespace2", "pod2", high, "", 0},
       false},
      {"p1.priority less than p2.priority, p1 belongs to podGroup1 and p2 belongs to podGroup2",
       {"namespace1", "pod1", low, "pg1"},
       {"namespace2", "pod2", high, "pg2"},
       false},
      {"p1.priority greater than p2.priority, p1 belongs to podGroup1 and p2 belongs to "
       "podGroup2",
       {"namespace1", "pod1", high, "pg1"},
       {"namespace2", "pod2", low, "pg2"},
       true},
      {"equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to podGroup1 and "
       "p2 belongs to podGroup2",
       {"namespace1", "pod1", high, "pg1", 0},
       {"namespace2", "pod2", high, "pg2", 1},
       true},
      {"equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to podGroup4 and "
       "p2 belongs to podGroup3",
       {"namespace1", "pod1", high, "pg4", 1},
       {"namespace2", "pod2", high, "pg3", 0},
       false},
      {"equal priority and creation time, p1 belongs to podGroup1 and p2 belongs to podGroup2",
       {"namespace1", "pod1", high, "pg1", 0},
       {"namespace2", "pod2", high, "pg2", 0},
       true},
      {"equal priority and creation time, p2 belong to podGroup2",
       {"namespace1", "pod1", high, "", 0},
       {"namespace2", "pod2", high, "pg2", 0},
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    env.Apply(groups);
    const auto make = [&](const P& p) {
      std::string meta = "  labels: {";
      if (*p.group) meta += std::string("scheduling.x-k8s.io/pod-group: ") + p.group;
      meta += "}\n";
      if (p.time >= 0) meta += "  creationTimestamp: \"" + time(p.time) + "\"\n";
      api::Manifests m;
      const std::string yaml =
          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + std::string(p.name) +
          "\n  namespace: " + p.ns + "\n  uid: " + p.name + "\n" + meta +
          "spec:\n  priority: " + std::to_string(p.priority) +
          "\n  containers: [{name: c, image: i}]\n";
      EXPECT_TRUE(api::DecodeManifests(yaml, "pod.yaml", &m).ok()) << yaml;
      env.AddPod(m.pods.at(0));
      framework::QueuedPodInfo q;
      q.pod_info = Info(m.pods.at(0));
      return q;
    };
    const framework::QueuedPodInfo q1 = make(c.p1), q2 = make(c.p2);
    auto sort = GangPrioritySort::New(nullptr, env.handle);
    ASSERT_TRUE(sort.ok());
    const auto* less = dynamic_cast<const GangPrioritySort*>(sort.value().get());
    EXPECT_EQ(less->Less(q1, q2), c.expected);
  }
}

// Members of one gang stay together: equal priority and gang creation time order by the
// gang key, then by the queue timestamp (GangPrioritySort's tie-break).
TEST(GangPrioritySortLess, GangMembersStayTogether) {
  Env env;
  env.Apply(PodGroup("ns", "a", 2, "", "2024-01-01T00:00:00Z") +
            PodGroup("ns", "b", 2, "", "2024-01-01T00:00:00Z"));
  const auto q = [&](const char* name, const char* group, api::Timestamp ts) {
    const api::Pod pod = Member("ns", name, group);
    env.AddPod(pod);
    framework::QueuedPodInfo i;
    i.pod_info = Info(pod);
    i.timestamp = ts;
    return i;
  };
  const auto a1 = q("a1", "a", 30), a2 = q("a2", "a", 10), b1 = q("b1", "b", 5);
  auto sort = GangPrioritySort::New(nullptr, env.handle);
  ASSERT_TRUE(sort.ok());
  const auto* s = dynamic_cast<const GangPrioritySort*>(sort.value().get());
  EXPECT_TRUE(s->Less(a1, b1));  // gang a before gang b, whatever the queue times
  EXPECT_TRUE(s->Less(a2, a1));  // within a gang: queue timestamp
  EXPECT_FALSE(s->Less(b1, a2));
}

}  // namespace
}  // namespace phalanx::plugins::gangscheduling
