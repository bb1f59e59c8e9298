// Nested gang quorums (subgroups.h): the quorum tree of KAI subGroups and Volcano
// minTaskMember, pod membership, and the DefaultPodGroupManager's per-subgroup counts.
#include "gang/subgroups.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "api/decode.h"
#include "gang/default_podgroup_manager.h"
#include "gang/dialects.h"

namespace phalanx::gang {
namespace {

// ShortSubGroup's outcome: "" for OK, else its message; a short subgroup is
// FailedPrecondition.
std::string ShortReason(const api::Status& s) {
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  return std::string(s.message());
}

// SubGroupMembershipError's outcome: "" for OK, else its message (InvalidArgument).
std::string MembershipReason(const api::Status& s) {
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  return std::string(s.message());
}

PodGroupSpec SpecOf(const std::string& yaml) {
  api::Manifests m;
  std::string err;
  EXPECT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &m), &err)) << err;
  EXPECT_EQ(m.objects.size(), 1u);
  if (m.objects.empty()) return {};
  auto specs = SpecsFromObject(m.objects[0]);
  EXPECT_EQ(specs.size(), 1u);
  if (specs.empty()) return {};
  EXPECT_EQ(specs[0].invalid, "");
  return specs[0];
}

constexpr char kKaiServe[] = R"(apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: serve, namespace: ml}
spec:
  subGroups:
  - {name: prefill, minMember: 2}
  - {name: decode, minMember: 2}
)";

constexpr char kKaiTree[] = R"(apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: tree, namespace: ml}
spec:
  minSubGroup: 2
  subGroups:
  - {name: driver, minMember: 1}
  - {name: workers, minSubGroup: 2}
  - {name: workers-0, minMember: 2, parent: workers}
  - {name: workers-1, minMember: 2, parent: workers}
  - {name: workers-2, minMember: 2, parent: workers}
  - {name: spare, minMember: 3}
)";

constexpr char kVolcano[] = R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: tf, namespace: ml}
spec:
  minMember: 3
  minTaskMember: {ps: 1, worker: 2}
)";

TEST(SubGroupsTest, KaiEverySubGroupMustMeetItsMinimum) {
  const PodGroupSpec s = SpecOf(kKaiServe);
  EXPECT_EQ(s.min_member, 4);  // summed, as before; the subgroups are checked on top
  EXPECT_TRUE(HasSubGroupQuorums(s));
  // Four prefill pods reach the summed quorum but not decode's.
  EXPECT_EQ(ShortReason(ShortSubGroup(s, {{"prefill", 4}}, "placeable")),
            "subgroup \"decode\": 0/2 members placeable");
  EXPECT_EQ(ShortReason(ShortSubGroup(s, {{"prefill", 2}, {"decode", 1}}, "placeable")),
            "subgroup \"decode\": 1/2 members placeable");
  EXPECT_EQ(ShortReason(ShortSubGroup(s, {{"prefill", 2}, {"decode", 2}}, "placeable")), "");
  EXPECT_EQ(LeafQuorum(s, "decode"), 2);
  EXPECT_EQ(LeafQuorum(s, "nope"), 0);
}

TEST(SubGroupsTest, KaiMinSubGroupCountsDirectChildren) {
  const PodGroupSpec s = SpecOf(kKaiTree);
  // Root needs 2 of {driver, workers, spare}; workers needs 2 of its 3 replicas.
  EXPECT_EQ(ShortReason(
                ShortSubGroup(s, {{"driver", 1}, {"workers-0", 2}, {"workers-2", 2}}, "placeable")),
            "");
  EXPECT_EQ(ShortReason(ShortSubGroup(s, {{"driver", 1}, {"spare", 3}}, "placeable")), "");
  EXPECT_EQ(ShortReason(
                ShortSubGroup(s, {{"driver", 1}, {"workers-0", 2}, {"workers-1", 1}}, "placeable")),
            "pod group: 1/2 child subgroups placeable (subgroup \"workers\": 1/2 child "
            "subgroups placeable (subgroup \"workers-1\": 1/2 members placeable))");
  EXPECT_EQ(LeafQuorum(s, "workers"), 0);  // a parent holds no pods itself
}

TEST(SubGroupsTest, KaiParentMinMemberCountsDescendants) {
  const PodGroupSpec s = SpecOf(R"(apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec:
  minMember: 5
  subGroups:
  - {name: leader, minMember: 1}
  - {name: workers, minMember: 4}
  - {name: workers-a, minMember: 2, parent: workers}
)");
  EXPECT_EQ(ShortReason(ShortSubGroup(s, {{"leader", 1}, {"workers-a", 3}}, "placeable")),
            "subgroup \"workers\": 3/4 members placeable");
  EXPECT_EQ(ShortReason(ShortSubGroup(s, {{"leader", 1}, {"workers-a", 4}}, "placeable")), "");
}

TEST(SubGroupsTest, KaiMembershipNamesTheLabelAndTheLeaves) {
  const PodGroupSpec s = SpecOf(kKaiTree);
  EXPECT_EQ(MembershipReason(SubGroupMembershipError(s, "workers-1")), "");
  EXPECT_EQ(MembershipReason(SubGroupMembershipError(s, "decod")),
            "label kai.scheduler/subgroup-name \"decod\" names no subgroup of pod group ml/tree "
            "(leaf subgroups: driver, workers-0, workers-1, workers-2, spare)");
  EXPECT_NE(MembershipReason(SubGroupMembershipError(s, ""))
                .find("label kai.scheduler/subgroup-name is not set"),
            std::string::npos);
  EXPECT_NE(
      MembershipReason(SubGroupMembershipError(s, "workers")).find("which has child subgroups"),
      std::string::npos);
}

TEST(SubGroupsTest, VolcanoTasks) {
  const PodGroupSpec s = SpecOf(kVolcano);
  EXPECT_TRUE(HasSubGroupQuorums(s));
  EXPECT_EQ(ShortReason(ShortSubGroup(s, {{"worker", 3}}, "placeable")),
            "subgroup \"ps\": 0/1 members placeable");
  EXPECT_EQ(ShortReason(ShortSubGroup(s, {{"worker", 2}, {"ps", 1}}, "placeable")), "");
  // Volcano lets pods of tasks without a minimum in (they count toward minMember).
  EXPECT_EQ(MembershipReason(SubGroupMembershipError(s, "evaluator")), "");
  EXPECT_EQ(MembershipReason(SubGroupMembershipError(s, "")), "");
  // minMember below the tasks' sum: Volcano skips the per-task check (CheckTaskValid).
  PodGroupSpec low = s;
  low.min_member = 2;
  EXPECT_FALSE(HasSubGroupQuorums(low));
  EXPECT_EQ(ShortReason(ShortSubGroup(low, {{"worker", 2}}, "placeable")), "");
}

TEST(SubGroupsTest, PodNamesItsSubGroupByTheDialectsKey) {
  api::Pod p;
  p.metadata.labels[kKaiSubGroupLabel] = "decode";
  p.metadata.annotations[kVolcanoTaskSpecKey] = "worker";
  EXPECT_EQ(SubGroupNameOf(Dialect::kKAI, p), "decode");
  EXPECT_EQ(SubGroupNameOf(Dialect::kVolcano, p), "worker");
  EXPECT_EQ(SubGroupNameOf(Dialect::kCoscheduling, p), "");
  api::Pod q;
  q.metadata.labels[kVolcanoTaskSpecKey] = "ps";  // Volcano falls back to the label
  EXPECT_EQ(SubGroupNameOf(Dialect::kVolcano, q), "ps");
}

api::PodPtr KaiPod(const std::string& name, const std::string& sub_group) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.namespace_ = "ml";
  p->metadata.name = name;
  p->metadata.annotations["pod-group-name"] = "serve";
  if (!sub_group.empty()) p->metadata.labels[kKaiSubGroupLabel] = sub_group;
  return p;
}

// The DefaultPodGroupManager counts members per subgroup, and a gang whose summed minMember is
// reached by one subgroup alone is not Satisfied.
TEST(SubGroupsTest, ManagerSatisfiedNeedsEverySubGroup) {
  DefaultPodGroupManager m;
  api::Manifests mf;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(api::DecodeManifests(kKaiServe, "t.yaml", &mf), &err)) << err;
  m.OnObjectAdd(std::make_shared<api::Unstructured>(mf.objects[0]));
  std::vector<api::PodPtr> pods = {KaiPod("p0", "prefill"), KaiPod("p1", "prefill"),
                                   KaiPod("p2", "prefill"), KaiPod("p3", "prefill"),
                                   KaiPod("d0", "decode"),  KaiPod("d1", "decode")};
  for (const auto& p : pods) m.OnPodAdd(p, 0);
  for (int i = 0; i < 4; ++i) m.MarkAssumed(*pods[i], 1);
  EXPECT_FALSE(m.Satisfied("ml/serve"));
  auto info = m.Info("ml/serve");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->sub_group_active["prefill"], 4);
  EXPECT_EQ(info->sub_group_pods["decode"], 2);
  ASSERT_EQ(info->member_sub_groups.size(), info->member_pods.size());
  EXPECT_EQ(info->member_sub_groups[0], "decode");  // members sorted: ml/d0 first
  m.MarkAssumed(*pods[4], 2);
  m.MarkAssumed(*pods[5], 2);
  EXPECT_TRUE(m.Satisfied("ml/serve"));
  m.MarkForgotten(*pods[5]);
  EXPECT_FALSE(m.Satisfied("ml/serve"));
  m.OnPodDelete(pods[0]);
  EXPECT_EQ(m.Info("ml/serve")->sub_group_active["prefill"], 3);
}

}  // namespace
}  // namespace phalanx::gang
