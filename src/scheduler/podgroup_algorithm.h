// The PodGroup scheduling algorithm (upstream pkg/scheduler algorithm_podgroup.go, 1.36+):
// place the pending members of a gang — or of every gang of a GangGroup — on one
// copy-on-write view of the snapshot, member by member with the profile's normal plugins
// (Scheduler::SchedulePod, with placement batches), so that each member sees the ones placed
// before it. It decides; it commits nothing. The driver (schedule_one_podgroup.cc) assumes,
// reserves and binds the placement, or reverts it and reports one gang-level reason.
//
// Steps: minResources against the cluster's free capacity; admission of the whole plan
// (PodGroupPlugin::AdmitPodGroup: queue quota, reclaim); placement, inside one domain of a
// topology label when a unit asks for one (domains tried largest first; a preferred label
// falls back to the whole cluster).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "framework/cycle_state.h"
#include "framework/interface.h"
#include "framework/runtime.h"
#include "scheduler/scheduler.h"

namespace phalanx::scheduler {

// One pending member of a PodGroup cycle and where the algorithm put it.
struct PodGroupMember {
  framework::QueuedPodInfoPtr qp;
  size_t unit = 0;  // index in plan.units
  std::shared_ptr<framework::CycleState> state;
  std::string host;                // the chosen node, when placed
  framework::PodInfoPtr assumed;   // the pod with spec.nodeName = host, shared by the view
                                   // and (after commit) the cache
  bool placed = false;
  framework::Status status;        // SchedulePod's result
  Diagnosis diag;
};

// What the algorithm decided.
struct PodGroupPlacement {
  // Empty: every unit reached its need, and the placed members are on the snapshot view.
  // Otherwise why not, e.g. "pod group ml/train: 3 of 8 pending members fit, 8 needed".
  std::string reject_reason;
  std::string admit_plugin;     // the plugin whose AdmitPodGroup rejected the plan, if any
  std::vector<int32_t> placed;  // members placed, per unit
  int64_t batched = 0;          // placements taken from a PlacementBatch (statistics)
  // minResources and admission passed and the placement fell short: the failure that
  // gang preemption may resolve (podgroup_preemption.h).
  bool placement_failed = false;
};

class PodGroupAlgorithm {
 public:
  // `members` (their qp and unit set) are placed in order; all references must outlive
  // the algorithm.
  PodGroupAlgorithm(Scheduler& sched, framework::Framework& fwk,
                    const framework::PodGroupPlan& plan, std::vector<PodGroupMember>& members)
      : sched_(sched), fwk_(fwk), plan_(plan), members_(members) {}

  // Runs every step; fills the members' placement fields.
  PodGroupPlacement Run();
  // Drops the placements from the snapshot view (refreshes it from the cache): the
  // revert action of a rejected placement.
  void Revert();
  // The placement step alone (no minResources check, no admission) on the current view:
  // "" when every unit reached its need. For the preemption dry run (podgroup_preemption.h).
  std::string Place(std::vector<int32_t>* placed);
  // Applied to the view after every refresh (Revert), e.g. taking preemption victims off it;
  // an empty function: none.
  void SetViewEdit(std::function<void(cache::Snapshot&)> edit) { view_edit_ = std::move(edit); }

 private:
  // "" when every unit's minResources fit the free capacity of the cluster.
  std::string CheckMinResources() const;
  // "" when the plan's plugins admit it (*plugin names the one that did not).
  std::string Admit(std::string* plugin);
  // Places every member (inside `restriction` when given); "" when every unit reached its
  // need, else the first short unit's reason.
  std::string PlaceMembers(const std::set<std::string>* restriction, std::vector<int32_t>* placed);
  // "" when unit `u` reached its need and every subgroup minimum with `placed` of its
  // `pending` members placed; else its reason, e.g. `pod group ml/serve (...): subgroup
  // "decode": 0/2 members placeable; 2 of 4 pending members fit, 4 needed`.
  std::string UnitShortfall(size_t u, int32_t pending, int32_t placed) const;
  // PlaceMembers inside one domain of `key` after another (largest first), then, unless
  // `required`, on the whole cluster.
  std::string PlaceInTopology(const std::string& key, bool required, std::vector<int32_t>* placed);

  Scheduler& sched_;
  framework::Framework& fwk_;
  const framework::PodGroupPlan& plan_;
  std::vector<PodGroupMember>& members_;
  int64_t batched_ = 0;
  std::function<void(cache::Snapshot&)> view_edit_;
};

}  // namespace phalanx::scheduler
