// The PodGroup scheduling algorithm (upstream pkg/scheduler algorithm_podgroup.go, 1.36+):
// place the pending members of a gang — or of every gang of a GangGroup — on one
// copy-on-write view of the snapshot, member by member with the profile's normal plugins
// (Scheduler::SchedulePod, with placement batches), so that each member sees the ones placed
// before it. It decides; it commits nothing. The driver (schedule_one_podgroup.cc) assumes,
// reserves and binds the placement, or reverts it and reports one gang-level reason.
//
// Steps: minResources against the cluster's free capacity; admission of the whole plan
// (PodGroupPlugin::AdmitPodGroup: queue quota; reclaim is PodGroup preemption's, after a
// failed placement); placement, inside one domain of a
// topology level when a unit asks for one (multi-level, scored: PlaceInTopology below).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/interface.h"
#include "framework/podgroup.h"
#include "framework/runtime.h"
#include "scheduler/scheduler.h"

namespace phalanx::scheduler {

// One pending member of a PodGroup cycle and where the algorithm put it.
struct PodGroupMember {
  framework::QueuedPodInfoPtr qp;
  size_t pod_group = 0;  // index in plan.pod_groups
  std::shared_ptr<framework::CycleState> state;
  std::string host;               // the chosen node, when placed
  framework::PodInfoPtr assumed;  // the pod with spec.nodeName = host, shared by the view
                                  // and (after commit) the cache
  bool placed = false;
  framework::Status status;  // SchedulePod's result
  Diagnosis diag;
};

// One candidate placement of a topology level (framework::Placement: the nodes of one
// domain, from the profile's PlacementGenerate plugins, TopologyPlacement) and how the
// gang fared inside it: a trial placement on the snapshot view, scored by the profile's
// PlacementScore plugins (PlacementBinPacking: the tightest domain), then reverted. The
// best-scored feasible candidate of the first level where one fits wins (KEP-5732 generates
// candidate placements and scores them instead of taking the first that fits).
struct TopologyCandidate {
  std::string level;   // node label key, e.g. "rack"
  std::string domain;  // its value, e.g. "r2"
  int32_t nodes = 0;   // nodes in the domain
  bool fits = false;   // every pod group reached its need inside the domain
  std::string reason;  // why not, when !fits (the first short pod group's reason)
  int64_t score = 0;   // when fits: the weighted total of the PlacementScore plugins
  std::string detail;  // when fits: their accounts, "free GPUs 4, free cpu 116000m, ..."
};
// One line per candidate, e.g.
//   "rack=r2: fits, free GPUs 4, free cpu 116000m, stranded GPUs 0"
//   "block=b1: does not fit (pod group ml/train: 3 of 4 pending members fit, 4 needed)"
std::string FormatTopologyCandidate(const TopologyCandidate& c);

// What the algorithm decided.
struct PodGroupPlacement {
  // Empty: every unit reached its need, and the placed members are on the snapshot view.
  // Otherwise why not, e.g. "pod group ml/train: 3 of 8 pending members fit, 8 needed".
  std::string reject_reason;
  std::string admit_plugin;     // the plugin whose AdmitPodGroup rejected the plan, if any
  std::vector<int32_t> placed;  // members placed, per unit
  int64_t batched = 0;          // placements taken from a PlacementBatch (statistics)
  // Topology-aware placement: every candidate domain scored, level by level (narrowest
  // first), and the chosen one ("rack=r2"; empty when the gang was placed on the whole
  // cluster or has no topology).
  std::vector<TopologyCandidate> topology_candidates;
  std::string topology_domain;
  // Subgroups with their own topology (PodGroupInfo::topology_scopes): the domain each one
  // got, e.g. `subgroup "decode": rack=r1` (`... : anywhere in the parent domain` when its
  // preferred levels did not fit).
  std::vector<std::string> sub_group_domains;
  // For the gang's Scheduled Event: "topology: rack=r2; candidates: ...", then
  // "; subgroups: subgroup \"decode\": rack=r1, ..." ("" without topology).
  std::string TopologySummary() const;
  // minResources and admission passed and the placement fell short: the failure that
  // gang preemption may resolve (src/plugins/defaultpreemption/podgroup_preemption.h).
  bool placement_failed = false;
};

class PodGroupAlgorithm {
 public:
  // `members` (their qp and unit set) are placed in order; all references must outlive
  // the algorithm.
  PodGroupAlgorithm(Scheduler& sched, framework::Framework& fwk,
                    const framework::QueuedPodGroupInfo& plan, std::vector<PodGroupMember>& members)
      : sched_(sched), fwk_(fwk), plan_(plan), members_(members) {}
  // Tells the PodGroupPlacementPlugins that the cycle's trial placements are gone.
  ~PodGroupAlgorithm();
  PodGroupAlgorithm(const PodGroupAlgorithm&) = delete;
  PodGroupAlgorithm& operator=(const PodGroupAlgorithm&) = delete;
  // Placements that needed the joint pass (PlaceMembers), for tests and statistics.
  int64_t joint_placements() const { return joint_placements_; }

  // Runs every step; fills the members' placement fields.
  PodGroupPlacement Run();
  // Drops the placements from the snapshot view (refreshes it from the cache): the
  // revert action of a rejected placement.
  void Revert();
  // The placement step alone (no minResources check, no admission) on the current view:
  // Success when every unit reached its need, else Unschedulable with the reason (as
  // PodGroupPlacement::reject_reason). For the preemption dry run
  // (src/plugins/defaultpreemption/podgroup_preemption.h).
  framework::Status Place(std::vector<int32_t>* placed);
  // Applied to the view after every refresh (Revert), e.g. taking preemption victims off it;
  // an empty function: none.
  void SetViewEdit(std::function<void(cache::Snapshot&)> edit) { view_edit_ = std::move(edit); }

 private:
  // Success when every unit's minResources fit the free capacity of the cluster, else
  // Unschedulable, e.g. "pod group ml/train: minResources exceed the cluster's free capacity
  // (cpu: 64000m requested, 12000m free)".
  framework::Status CheckMinResources() const;
  // Success when the plan's plugins admit it, else the rejection of the one that did not
  // (Framework::RunAdmitPodGroup's status, its plugin() naming it).
  framework::Status Admit();
  // Places every member (inside `restriction` when given); Success when every unit reached
  // its need, else Unschedulable with the first short unit's reason. Member by member first; when
  // that falls short and a PodGroupPlacementPlugin concerns a member (DRA claims), a second pass
  // places each member as if alone and the plugins choose jointly
  // (PodGroupPlacementPlugin::PlaceJointly: DynamicResources allocates every member's claims
  // together, backtracking over device choices); its failure is appended to the reason ("...;
  // placed jointly: ..."). Units with topology scopes go through PlaceScoped (no joint pass).
  framework::Status PlaceMembers(const std::set<std::string>* restriction,
                                 std::vector<int32_t>* placed);
  // One member-by-member pass (PlaceMembers' first), its result as PlaceMembers'.
  framework::Status PlaceMembersInOrder(const std::set<std::string>* restriction,
                                        std::vector<int32_t>* placed);
  // One member through SchedulePod inside `restriction`, put on the view when it fits;
  // false on an error that is not a rejection (*reason says it).
  bool PlaceOne(PodGroupMember& m, PlacementBatch* batch, const std::set<std::string>* restriction,
                std::string* reason);
  // Nested topology (PodGroupInfo::topology_scopes, KAI subGroups[].topologyConstraint):
  // every unit's scopes, parents first, each inside one domain of its levels chosen as
  // PlaceInTopology chooses (a trial per domain inside the parent's domain, scored by
  // the PlacementScore plugins, the best trial kept), then the members outside any scope.
  // A required scope with no fitting domain fails the placement, naming the subgroup, e.g.
  // `pod group ml/serve (...): subgroup "decode": required topology level "rack" (topology
  // dc): no rack domain fits (rack=r1: subgroup "decode": 1/2 members placeable; ...)`; a
  // preferred one falls back to its parent's domain. Success, or Unschedulable with that
  // reason.
  framework::Status PlaceScoped(const std::set<std::string>* restriction,
                                std::vector<int32_t>* placed);
  // Scope `s` of unit `u` (-1: the unit's members in no scope) and the scopes below it:
  // Success, or Unschedulable with the first failure.
  framework::Status PlaceScope(size_t u, int s, const std::set<std::string>* restriction);
  // Scope `s` of unit `u` placed in the best domain of its levels (PlaceScoped): Success, or
  // Unschedulable naming the subgroup and its required level.
  framework::Status ChooseScopeDomain(size_t u, int s, const std::set<std::string>* restriction);
  // Refreshes the view from the cache and puts every placed member back on it.
  void RebuildView();
  // The placement step into `out` (placed per unit; the topology candidates when a unit
  // asks for a topology): Success when every unit reached its need, else Unschedulable with
  // the reason.
  framework::Status PlaceIn(PodGroupPlacement* out);
  // Success when unit `u` reached its need and every subgroup minimum with `placed` of its
  // `pending` members placed; else Unschedulable with its reason, e.g. `pod group ml/serve
  // (...): subgroup "decode": 0/2 members placeable; 2 of 4 pending members fit, 4 needed`.
  framework::Status UnitShortfall(size_t u, int32_t pending, int32_t placed) const;
  // Multi-level topology (src/gang/topology.h): for each of `unit`'s levels, narrowest
  // first, every placement the PlacementGenerate plugins offer (a domain of the level) is
  // a candidate: the gang is placed inside it on the view, scored by the PlacementScore
  // plugins, and reverted; the best candidate that fits wins and its trial is put back on
  // the view. Cost: one trial placement per domain whose free capacity
  // is not below the gang's minimum (MinimumDemand), for each level tried. No domain of the
  // level fits: the next level up. No level fits: the whole cluster, unless the last level is
  // required — then the reason names that level, e.g. `required topology level "rack"
  // (topology cluster-topology): no rack domain fits the gang (rack=r1: pod group ml/train:
  // 2 of 4 pending members fit, 4 needed; ...)`. Success, or Unschedulable with that reason.
  framework::Status PlaceInTopology(const framework::PodGroupInfo& unit, PodGroupPlacement* out);
  // Tries and scores every placement of one level into out->topology_candidates; returns
  // the index there of the best one that fits, or -1, keeping its trial in best_members_ /
  // best_placed_.
  int ScoreLevel(const std::vector<framework::Placement>& placements, PodGroupPlacement* out);
  // The PlacementScore plugins' scores of `placement`, the trial on the view; *detail: their
  // accounts joined with ", ". Not Success: a plugin error.
  framework::Status ScoreTrial(framework::CycleState& state, const framework::Placement& placement,
                               std::vector<framework::PlacementScore>* scores, std::string* detail);
  // The placements of one level (PlacementGenerate plugins); *why when there is none.
  std::vector<framework::Placement> GeneratePlacements(const framework::PlacementLevel& level,
                                                       std::string* why);
  // The index of the best of `scores` (one entry per feasible placement, one score per
  // plugin): the highest weighted total, the first of equals; totals go to *totals.
  size_t BestPlacement(framework::CycleState& state,
                       std::vector<std::vector<framework::PlacementScore>>& scores,
                       std::vector<int64_t>* totals);
  // Puts the best trial of ScoreLevel back: the members' placements and the snapshot view
  // (after the last trial was reverted).
  void RestoreBestTrial(std::vector<int32_t>* placed);
  // Per resource, the sum over units of the `need` smallest requests among the unit's
  // pending members: a domain with less free capacity cannot hold the gang.
  api::Resource MinimumDemand() const;

  Scheduler& sched_;
  framework::Framework& fwk_;
  const framework::QueuedPodGroupInfo& plan_;
  std::vector<PodGroupMember>& members_;
  int64_t batched_ = 0;
  int64_t joint_placements_ = 0;
  std::vector<framework::PodInfoPtr> pods_;      // the members' pods, for PlacementScore plugins
  std::vector<PodGroupMember> best_members_;     // ScoreLevel's best trial so far
  std::vector<int32_t> best_placed_;             // and its members placed per unit
  std::vector<std::string> best_scope_domains_;  // and its subgroups' domains
  std::vector<int> member_scope_;                // per member: innermost scope (-1: none)
  std::vector<std::string> scope_domains_;       // PodGroupPlacement::sub_group_domains so far
  std::function<void(cache::Snapshot&)> view_edit_;
};

}  // namespace phalanx::scheduler
