// Nested gang quorums: KAI PodGroup subGroups and Volcano spec.minTaskMember. A gang with
// subgroups commits only when every subgroup's own minimum is met, not just the summed
// minMember: "prefill >= 2, decode >= 2" never binds 4 prefill and 0 decode.
//
// Which subgroup a pod is in:
//   KAI: label kai.scheduler/subgroup-name (KAI pkg/common/constants/constants.go
//     SubGroupLabelKey, read in pkg/scheduler/api/pod_info/pod_info.go). Pods belong to
//     leaf subgroups (pkg/scheduler/api/podgroup_info/subgroup_info/factory.go: only
//     subgroups without children become PodSets); a pod naming no leaf subgroup is never
//     placed (KAI drops it with "SubGroup not found", podgroup_info/job_info.go AddTaskInfo;
//     we keep it pending with a reason instead).
//   Volcano: annotation volcano.sh/task-spec, else the label of that name
//     (pkg/scheduler/api/job_info.go getTaskRole). Tasks not in minTaskMember have no
//     minimum of their own and count toward minMember only, as in Volcano.
//
// When a subgroup's quorum is met (the tree is evaluated from the leaves):
//   leaf:   members >= its minMember (KAI: at least 1, subgroup_info/factory.go
//           `max(subGroup.MinMember, 1)`; Volcano: a task with 0 has no minimum,
//           job_info.go CheckTaskValid);
//   parent: at least minSubGroup of its direct children met (all of them when unset; KAI
//           podgroup_info/job_info.go IsGangSatisfied: every PodSet), and members below it
//           >= its minMember;
//   gang:   the same over the top-level subgroups with spec.minSubGroup. The gang's own
//           minMember is checked by the caller as before.
//   Volcano checks per-task minimums only when minMember >= the sum of minTaskMember
//   (job_info.go CheckTaskValid / CheckTaskReady: "skip this check" otherwise).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "api/status.h"
#include "api/types.h"
#include "gang/podgroup.h"

namespace phalanx::gang {

inline constexpr char kKaiSubGroupLabel[] = "kai.scheduler/subgroup-name";
inline constexpr char kVolcanoTaskSpecKey[] = "volcano.sh/task-spec";

// The subgroup a pod names under `dialect` (KAI label; Volcano annotation, then label);
// "" when it names none or the dialect has no subgroups.
std::string SubGroupNameOf(Dialect dialect, const api::Pod& pod);

// True when the spec has subgroup quorums that ShortSubGroup enforces (KAI subGroups;
// Volcano minTaskMember with minMember >= their sum).
bool HasSubGroupQuorums(const PodGroupSpec& spec);

// OK when a pod of this gang naming subgroup `name` ("" = none) may be placed; else
// InvalidArgument saying why not, naming the pod's label and the gang's subgroups, e.g. `label
// kai.scheduler/subgroup-name "decod" names no subgroup of pod group ml/serve (leaf
// subgroups: decode, prefill)`. Only KAI constrains membership (see above).
api::Status SubGroupMembershipError(const PodGroupSpec& spec, const std::string& name);

// Members per subgroup name ("" holds pods naming none).
using SubGroupCounts = std::map<std::string, int32_t>;

// OK when `members` (members per leaf subgroup name, e.g. assumed + bound + placed in this
// cycle) meet every subgroup quorum of `spec` (rules above); otherwise FailedPrecondition
// naming the first short subgroup, depth first in spec order, e.g. `subgroup "decode": 0/2
// members placeable`
// with `what` = "placeable", or for a minSubGroup parent `subgroup "decode": 1/2 child
// subgroups placeable (subgroup "decode-workers": 3/4 members placeable)`. A gang
// without subgroup quorums always yields OK.
api::Status ShortSubGroup(const PodGroupSpec& spec, const SubGroupCounts& members,
                          const std::string& what);

// The same for subgroup `name` alone (its own quorum, the subtree below it; OK when it
// is met or no such subgroup exists): a subgroup with its own topology is placed, and
// checked, before the rest of the gang (topology.h ResolveSubGroupScopes).
api::Status ShortSubGroupWithin(const PodGroupSpec& spec, const SubGroupCounts& members,
                                const std::string& name, const std::string& what);

// The members a pod's subgroup needs (its leaf quorum as ShortSubGroup counts it), 0 for
// a pod in no subgroup or a gang without subgroup quorums. Used to place each subgroup's
// minimum before any extra members.
int32_t LeafQuorum(const PodGroupSpec& spec, const std::string& name);

}  // namespace phalanx::gang
