// GangScheduling: all-or-nothing placement of gangs (PodGroups of every dialect).
//
// Upstream 1.35 ships a GangScheduling plugin for the Workload API (KEP-4671): pods of a
// gang are gated at PreEnqueue until minCount of them exist, and wait at Permit until
// minCount are assumed. Phalanx keeps those semantics and adds the PodGroup cycle: in the
// default `Transactional` mode the scheduler places all pending members of the gang (of
// every gang of a GangGroup) on one copy-on-write view of the snapshot and commits only
// if minMember fit, so a partial gang never holds resources and two gangs cannot
// deadlock each other. `Permit` mode is the compatibility flow of scheduler-plugins
// Coscheduling / Koordinator: members are assumed one by one and wait at Permit, Strict
// (a failed member rejects the waiting ones) or NonStrict (they keep waiting until the
// gang's waiting time runs out).
//
// Args (GangSchedulingArgs):
//   mode: Transactional | Permit               (default Transactional)
//   permitWaitingTimeSeconds: int > 0          (default 300: upstream 1.35's fixed 5 min)
//   staleGangGracePeriodSeconds: int           (default unset: KAI gangs 60 s as KAI's
//       globalDefaultStalenessGracePeriod, other dialects never): how long a running gang
//       may stay below its minimum before its remaining members are evicted; negative:
//       never (the gang is reported and waits to be made whole). A KAI PodGroup's
//       kai.scheduler/staleness-grace-period annotation overrides it (gang/staleness.h).
//   podGrouper: bool                           (default true, KAI's pod-grouper): derive a
//       gang from a pod's top owner (Job with parallelism > 1, JobSet, PyTorchJob, MPIJob;
//       gang/dialects.h) when no PodGroup names it. false: such pods schedule one by one,
//       as with kube-scheduler / Coscheduling (a migration from them keeps its Jobs
//       non-gang). One gang state per scheduler: with several profiles the last applies.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/podgroup.h"
#include "framework/registry.h"
#include "gang/podgroup_manager.h"

namespace phalanx::plugins::gangscheduling {

class GangScheduling final : public framework::PreEnqueuePlugin,
                             public framework::ReservePlugin,
                             public framework::PermitPlugin,
                             public framework::EnqueueExtensions,
                             public framework::PodGroupPlugin,
                             public framework::PodGroupCycleListener {
 public:
  static constexpr std::string_view kName = "GangScheduling";
  enum class Mode { kTransactional, kPermit };

  GangScheduling(framework::Handle& h, Mode mode, int64_t permit_wait_ns)
      : handle_(h),
        gangs_(h.Service<gang::PodGroupManager>()),
        mode_(mode),
        permit_wait_ns_(permit_wait_ns) {}
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }

  framework::Status PreEnqueue(const framework::PodInfo& pod) override;
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
  framework::Status PlanPodGroup(const framework::PodInfo& pod,
                                 framework::QueuedPodGroupInfo* plan) override;
  void PodGroupCycleDone(const framework::QueuedPodGroupInfo& plan, bool committed,
                         const std::string& reason) override;
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            const std::string& node) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 const std::string& node) override;
  framework::Status Permit(framework::CycleState& state, const framework::PodInfo& pod,
                           const std::string& node, int64_t* timeout_ns) override;
  bool PermitTimeoutUncapped() const override { return true; }

  Mode mode() const { return mode_; }

 private:
  framework::Handle& handle_;
  gang::PodGroupManager* gangs_;  // nullptr: the scheduler runs without gang state
  Mode mode_;
  int64_t permit_wait_ns_;
};

// GangPrioritySort: QueueSort that keeps a gang's members together — priority (higher
// first), then the gang's creation time (the pod's own for pods outside gangs), then the
// gang key, then the pod's queue timestamp (scheduler-plugins Coscheduling's Less).
class GangPrioritySort final : public framework::QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "GangPrioritySort";
  explicit GangPrioritySort(framework::Handle& h)
      : handle_(h), gangs_(h.Service<gang::PodGroupManager>()) {}
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }
  bool Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override;

 private:
  framework::Handle& handle_;
  gang::PodGroupManager* gangs_;  // nullptr: the scheduler runs without gang state
};

}  // namespace phalanx::plugins::gangscheduling
