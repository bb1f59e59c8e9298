// The PodGroup cycle's plugin API (upstream 1.36 pkg/scheduler/framework/interface.go and
// k8s.io/kube-scheduler/framework: PodGroupInfo, QueuedPodGroupInfo,
// PodGroupPostFilterPlugin, PlacementGeneratePlugin, PlacementScorePlugin; KEP-4671 gang
// scheduling, KEP-5710 workload-aware preemption, KEP-5732 topology-aware workload
// scheduling), with Phalanx's additions (admission of a whole group, victim policies,
// joint placement of a group's claims). One PodGroup cycle (src/scheduler/
// schedule_one_podgroup.cc) places a gang, or every gang of a GangGroup, as one transaction:
//   PodGroupPlugin::PlanPodGroup (the QueuedPodGroupInfo) -> minResources ->
//   PodGroupPlugin::AdmitPodGroup -> each member through the pod's own plugins on one
//   copy-on-write view of the snapshot (PodGroupPlacementPlugin follows the trial
//   placements) -> commit, or PodGroupPostFilter (with the PodGroupFeasibility callback)
//   and rejection -> PodGroupCycleListener::PodGroupCycleDone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/resource.h"
#include "api/types.h"
#include "framework/cycle_state.h"
#include "framework/interface.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::framework {

class PodGroupVictimPolicy;

// One gang (PodGroup) to place in a PodGroup cycle (upstream framework.PodGroupInfo): its
// quorum, its pending members and its placement constraints, as the PodGroupPlugin that
// planned the cycle (GangScheduling) read them from gang state.
struct PodGroupInfo {
  std::string key;      // gang key ("namespace/name")
  std::string display;  // for messages, e.g. "pod group default/train"
  // The gang's quorum (minMember / upstream's gang minCount) and its members already
  // assumed or bound (upstream PodGroupState.ScheduledPodsCount).
  int32_t min_count = 0;
  int32_t scheduled_count = 0;
  // Members that must fit in this cycle for the gang to commit: minCount minus those
  // already assumed or bound, never below 0.
  int32_t Need() const { return std::max<int32_t>(0, min_count - scheduled_count); }
  // Pending members (pod keys) to place in this cycle, in placement order; the pod that
  // was popped is among them.
  std::vector<std::string> pending_pods;
  bool has_min_resources = false;
  api::Resource min_resources;  // checked against the cluster's free capacity first
  // Topology-aware placement (multi-level; src/gang/topology.h): node label keys, narrowest
  // first (the preferred level, then each level above it). The cycle keeps the gang inside
  // the best-scored domain of the first level where one fits; `topology_required`: the last
  // level is hard (no fallback to the whole cluster). Empty: no topology.
  std::vector<std::string> topology_levels;
  bool topology_required = false;
  std::string topology_name;  // the KAI Topology object, for messages ("" = none)
  // Domains of topology_levels[level] over `nodes` (domain name -> node names). Empty
  // function: the nodes' values of the node label topology_levels[level]. Set for Volcano
  // HyperNode tiers (src/gang/topology_hypernode.h: the HyperNodes of a tier and their
  // leaf nodes).
  std::function<std::map<std::string, std::set<std::string>>(
      size_t level, const std::vector<const api::Node*>& nodes)>
      topology_domains;
  // Nested topology (KAI spec.subGroups[].topologyConstraint; src/gang/topology.h): each
  // scope keeps the pending members of one subgroup (the leaves below it) inside one domain
  // of its levels, within the domain of its `parent` scope (-1: the gang's domain, or the
  // whole cluster). Parents come before their children. Empty: none.
  struct TopologyScope {
    std::string name;                 // the subgroup, for messages
    int parent = -1;                  // index in topology_scopes
    std::vector<std::string> levels;  // node label keys, narrowest first
    bool required = false;            // the last level is hard
    std::string topology;             // the KAI Topology object, for messages
    std::vector<std::string> pods;    // pending members in the scope (pod keys)
    // Members of the scope already assumed or bound (pod keys): a required scope stays in
    // a domain that holds their nodes (KAI job_filtering.go: a job with active allocated
    // tasks keeps to their domain at the required level).
    std::vector<std::string> active_pods;
    // Given the keys of the scope's pods placed so far, Success when the subgroup's quorum is
    // met (with its members already assumed or bound), else Unschedulable saying why not
    // (subgroups.h wording).
    std::function<Status(const std::vector<std::string>& placed_pods)> check;
  };
  std::vector<TopologyScope> topology_scopes;
  // Nested quorums (KAI subGroups, Volcano minTaskMember; src/gang/subgroups.h): given the
  // keys of the pending_pods placed in this cycle, Success when they and the members already
  // assumed or bound meet every subgroup's minimum, else Unschedulable naming the short
  // subgroup, e.g. `subgroup "decode": 0/2 members placeable`. Empty function: no nested
  // quorums.
  std::function<Status(const std::vector<std::string>& placed_pods)> check_sub_groups;
};

// What one PodGroup cycle places (upstream framework.QueuedPodGroupInfo): one gang, or
// every gang of a GangGroup (Koordinator gang groups, upstream CompositePodGroup), which
// commit together or not at all.
struct QueuedPodGroupInfo {
  std::vector<PodGroupInfo> pod_groups;
  bool empty() const { return pod_groups.empty(); }
};

// A pod that a PodGroupVictimPolicy offers a failed PodGroup cycle to evict besides
// lower-priority pods (queue reclaim, src/plugins/queues), with the pods evicted together
// with it: one unit, evicted whole or not at all.
struct PodGroupVictimUnit {
  std::vector<api::PodPtr> pods;  // on nodes (bound or assumed)
  std::string owner;              // who gives them up, for messages (e.g. the victim queue)
};

// A PodGroupPlugin plans and admits the PodGroup cycle: it asks the scheduler to place a
// pod together with its gang, as one transaction: either at least Need() members of every
// pod group fit on one copy-on-write view of the snapshot and all of them are assumed, or
// nothing is.
class PodGroupPlugin : public virtual Plugin {
 public:
  // Leaves *group empty when `pod` schedules alone. An error or rejection status fails the
  // pod (and is reported) without running the cycle.
  virtual Status PlanPodGroup(const PodInfo& pod, QueuedPodGroupInfo* group) = 0;
  // Admission of the whole group inside the transaction, before any member is placed
  // (e.g. queue quota, src/plugins/queues): `pods` are the pending members of every pod
  // group that the cycle will try to place (pods[i] belongs to
  // group.pod_groups[pod_group_of[i]]). A rejection fails the whole cycle with the status
  // message; nothing is held.
  virtual Status AdmitPodGroup(const QueuedPodGroupInfo& group,
                               const std::vector<const PodInfo*>& pods,
                               const std::vector<size_t>& pod_group_of) {
    return Status();
  }
};

// A plugin told how each PodGroup cycle ended (its own bookkeeping: GangScheduling's
// attempts, Queues' in-cycle quota, GangReservation's release at commit). Every plugin of
// the profile that implements it, enabled at any point, in the profile's order.
class PodGroupCycleListener : public virtual Plugin {
 public:
  // The cycle of `group` committed, or was rejected with `reason` (the gang's message).
  virtual void PodGroupCycleDone(const QueuedPodGroupInfo& group, bool committed,
                                 const std::string& reason) = 0;
};

// What a failed PodGroup cycle attempted, as its PodGroupPostFilter plugins see it
// (upstream passes the PodGroup and its unscheduled pods).
struct PodGroupAttempt {
  // The pending members the cycle tried to place, in placement order, and the pod group
  // (index in QueuedPodGroupInfo::pod_groups) of each.
  std::vector<PodInfoPtr> pods;
  std::vector<size_t> pod_group_of;
  // The placement itself fell short: minResources and admission passed. False when the
  // cycle failed before placing (minResources, admission), which no eviction addresses.
  bool placement_failed = false;
  // The profile's PodGroupVictimPolicy plugins (enabled at any point, in the profile's
  // order): the units they offer join a victim search (DefaultPreemption's gang
  // preemption searches them together with the lower-priority pods).
  std::vector<PodGroupVictimPolicy*> victim_policies;
};

// Where a PodGroupFeasibility trial put each member (upstream fwk.PodGroupAssignments):
// nodes[i] is the node of PodGroupAttempt::pods[i], "" when it was not placed.
struct PodGroupAssignments {
  std::vector<std::string> nodes;
};

// The placement-feasibility callback handed to PodGroupPostFilter plugins (upstream
// PodGroupSchedulingFunc, KEP-5710): the PodGroup algorithm run again on the snapshot
// view, without PostFilter, as the failed cycle ran it (the same plugins, placement
// batches, topology placements and nested quorums; minResources and admission are not
// checked again). Scheduling thread only; valid during the PodGroupPostFilter call.
class PodGroupFeasibility {
 public:
  virtual ~PodGroupFeasibility() = default;
  // Places every pending member on the view with `removed` taken off it (as if deleted;
  // they stay off through every refresh of this trial). Success when every pod group
  // reached its Need() and subgroup minimums; otherwise Unschedulable with the first short
  // pod group's reason. *out (may be null) gets each member's node. The trial stays on the
  // view until the next Place or Reset.
  virtual Status Place(const std::vector<const api::Pod*>& removed, PodGroupAssignments* out) = 0;
  // Drops any trial: the view is the snapshot as the cache has it, nothing removed.
  virtual void Reset() = 0;
};

struct PodGroupPostFilterResult {
  // Per member (PodGroupAttempt::pods), the node it is nominated to ("" for none); empty
  // when nothing was nominated. Set with a Success status.
  std::vector<std::string> nominated_node_names;
};

// upstream PodGroupPostFilterPlugin (pkg/scheduler/framework/interface.go, 1.36; KEP-5710
// workload-aware preemption): called after a PodGroup cycle failed, with a callback that
// checks whether the group would fit after a change of the cluster (the plugin's victims
// gone). Plugins run in the order of the profile's postFilter point until one returns
// Success; upstream runs DefaultPreemption only, Phalanx every PostFilter plugin that
// implements this (DefaultPreemption's gang preemption with queue reclaim, Queues' reclaim
// without DefaultPreemption, GangReservation's reservations and starvation eviction).
class PodGroupPostFilterPlugin : public virtual Plugin {
 public:
  // `state` is the PodGroup cycle's (shared by this point's plugins of one cycle). Returns:
  //  - Success: the plugin is making room (e.g. victims are being evicted) and
  //    result->nominated_node_names nominates the members; later plugins do not run;
  //  - Unschedulable: it tried, or has something to say, and could not make room;
  //  - Skip: nothing to do for this group.
  // The message of any non-Skip status is appended to the gang's reason ("; " + message):
  // "preemption: 4 victims evicted for the gang". An attempt that ran any plugin's search
  // or got a message is never replayed (podgroup_memo.h).
  virtual Status PodGroupPostFilter(CycleState& state, const QueuedPodGroupInfo& group,
                                    const PodGroupAttempt& attempt,
                                    PodGroupFeasibility& feasibility,
                                    PodGroupPostFilterResult* result) = 0;
};

// A victim policy of PodGroup preemption (Phalanx; src/plugins/defaultpreemption/
// podgroup_preemption.h): units a plugin lets a failed group evict besides lower-priority
// pods, and its rules on the final set. Queue reclaim (src/plugins/queues) is one.
class PodGroupVictimPolicy : public virtual Plugin {
 public:
  // Units this plugin lets `group` evict, the most preferred victim first (e.g. pods of
  // queues above their deserved share). Empty: none.
  virtual std::vector<PodGroupVictimUnit> VictimCandidates(const QueuedPodGroupInfo& group) = 0;
  // Success when evicting `chosen` (units returned by VictimCandidates) together with
  // `lower_priority` (the pods priority preemption chose) is allowed; else Unschedulable
  // with why not. The search evicts nothing when a policy refuses. Must hold for every
  // subset of a set it allows (the reprieve only shrinks sets).
  virtual Status CheckVictims(const QueuedPodGroupInfo& group,
                              const std::vector<const PodGroupVictimUnit*>& chosen,
                              const std::vector<const api::Pod*>& lower_priority) = 0;
  // Evicts `chosen` (verified: the group fits without them) on behalf of `group`: deletion,
  // events, the plugin's own bookkeeping. *evicted: the pods it set out to evict. A non-OK
  // status carries the client's first error.
  virtual Status EvictVictims(const QueuedPodGroupInfo& group,
                              const std::vector<const PodGroupVictimUnit*>& chosen,
                              int64_t* evicted) = 0;
};

// ---- Placement generation and scoring (upstream 1.36 PlacementGeneratePlugin,
// PlacementScorePlugin; KEP-5732 topology-aware workload scheduling) ----

// A candidate set of nodes for a pod group (upstream fwk.Placement): one domain of a
// topology level, e.g. the nodes labelled rack=r2.
struct Placement {
  std::string level;            // the level: a node label key, or a HyperNode tier
  std::string domain;           // the domain's value at that level, e.g. "r2"
  std::set<std::string> nodes;  // node names
  std::string Name() const { return level + "=" + domain; }  // "rack=r2"
};

// One level of a pod group's topology that placements are asked for: the pod group's own
// levels (PodGroupInfo::topology_levels; its topology_domains when set), or a subgroup
// scope's (PodGroupInfo::TopologyScope::levels), inside a parent domain.
struct PlacementLevel {
  const PodGroupInfo* pod_group = nullptr;
  size_t index = 0;  // in pod_group->topology_levels, or in the scope's levels
  std::string key;   // the level: node label key (or HyperNode tier)
  // A subgroup scope's level: label values only (no HyperNode tiers), and only nodes of
  // `parent` (nullptr: every node) — the domain its parent scope was given.
  bool scope = false;
  const std::set<std::string>* parent = nullptr;
};

// upstream PlacementGeneratePlugin: candidate placements of a pod group at one level.
class PlacementGeneratePlugin : public virtual Plugin {
 public:
  // The placements of `level` over the snapshot's nodes (Handle::SnapshotSharedLister), in
  // a fixed order (by domain), each with at least one node; Skip when this plugin has none
  // to offer (another generator may), Unschedulable with why when the level has no domain
  // at all (e.g. "no node has the label rack").
  virtual Status GeneratePlacements(CycleState& state, const QueuedPodGroupInfo& group,
                                    const PlacementLevel& level, std::vector<Placement>* out) = 0;
};

// A placement score (upstream fwk.PlacementScore), with a short account of it for the
// gang's Scheduled Event (e.g. "free GPUs 4, free cpu 116000m, stranded GPUs 0").
struct PlacementScore {
  int64_t score = 0;
  std::string detail;
};

class PlacementScoreExtensions {
 public:
  virtual ~PlacementScoreExtensions() = default;
  // Maps the scores of every feasible placement of one level (aligned with the order they
  // were scored in) in place, e.g. to a rank.
  virtual Status NormalizePlacementScore(CycleState& state, const QueuedPodGroupInfo& group,
                                         std::vector<PlacementScore>& scores) = 0;
};

// upstream PlacementScorePlugin: scores a feasible placement. Called right after the
// PodGroup algorithm's trial placed the group inside `placement` (every pod group reached
// its need there), with the trial's pods on the snapshot view; `pods` are the cycle's
// pending members. Higher is better; the placement with the highest weighted total of one
// level wins, ties going to the first generated (domain order). Weights: the plugin's
// multiPoint weight (0 = 1).
class PlacementScorePlugin : public virtual Plugin {
 public:
  // `assignments`: each of `pods`' node in the trial ("" = not placed).
  virtual Status ScorePlacement(CycleState& state, const QueuedPodGroupInfo& group,
                                const std::vector<PodInfoPtr>& pods, const Placement& placement,
                                const PodGroupAssignments& assignments, PlacementScore* out) = 0;
  virtual PlacementScoreExtensions* GetPlacementScoreExtensions() { return nullptr; }
};

// A plugin whose state must follow the trial placements of a PodGroup cycle on its
// snapshot view (DynamicResources: the devices a placed member's claims take), and that can
// revise them for the whole gang at once. Upstream has no such point: it places a gang's
// members one at a time and so "ignores possible ways to allocate DRA devices when
// scheduling a gang" (kubernetes/kubernetes#138765). Called by the PodGroup algorithm
// (src/scheduler/podgroup_algorithm.cc) on the scheduling thread.
class PodGroupPlacementPlugin : public virtual Plugin {
 public:
  // Whether the plugin has anything to do for `pod` (e.g. it has resource claims).
  virtual bool ConcernsPodGroupMember(const PodInfo& pod) const = 0;
  // `pod` was placed on `node` on the view; `state` is its CycleState from SchedulePod.
  // Later members' scheduling must see what it takes.
  virtual void PlacedOnView(const CycleState& state, const PodInfo& pod,
                            const std::string& node) = 0;
  // The view was refreshed or the cycle ended: forget every PlacedOnView.
  virtual void ViewReset() = 0;
  // Joint mode on: members are placed as if alone (earlier members' PlacedOnView ignored),
  // to be reconciled by PlaceJointly. Off: the normal, member-by-member mode.
  virtual void SetJointMode(bool joint) = 0;
  // The members `pods` were placed in joint mode on `nodes` (states[i] from scheduling
  // pods[i]): choose, for all of them together, what each takes (a search), and leave each
  // choice in its state for Reserve. Success, or Unschedulable with the reason.
  virtual Status PlaceJointly(const std::vector<CycleState*>& states,
                              const std::vector<const PodInfo*>& pods,
                              const std::vector<std::string>& nodes) = 0;
};

}  // namespace phalanx::framework
