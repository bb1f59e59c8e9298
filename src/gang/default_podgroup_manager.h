// Gang state shared by the GangScheduling plugin and the scheduler (thread-safe).
//
// The DefaultPodGroupManager learns gang definitions from objects (PodGroups of every dialect,
// Workloads) and from pods (Koordinator annotations, PodGrouper), tracks which pods
// belong to which gang and how many of them are pending, assumed or bound.
//
// Gang state machine (per gang key):
//
//              pods < minMember exist                       all members gone
//   Gated  <─────────────────────────────  Ready  ─────────────────────────────► Finished
//     │  the minMember-th pod arrives        ▲ │ a PodGroup cycle commits, or
//     └──────────────────────────────────────┘ │ Permit quorum is reached
//                                              ▼
//   Ready ◄──── forget / rollback ──── Assumed (≥ minMember assumed or bound)
//                                              │ bindings confirmed
//                                              ▼
//                                  Running (satisfied: ≥ minMember bound)
//
// A gang whose object is missing is Unresolvable; one whose spec is invalid is Invalid;
// both are reported on every member pod, and neither ever schedules a partial gang.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/types.h"
#include "api/unstructured.h"
#include "gang/dialects.h"
#include "gang/podgroup.h"
#include "gang/podgroup_manager.h"

namespace phalanx::gang {

// Upstream's pod group manager (pkg/scheduler/backend/podgroupmanager: "the central source
// of truth for the state of pods belonging to PodGroup objects", driven by the scheduler's
// event handlers); "Default" as upstream's DefaultDRAManager. Implements PodGroupManager
// (the plugins' view, through the framework Handle) and is fed every
// pod and object event by the scheduler.
class DefaultPodGroupManager final : public PodGroupManager {
 public:
  explicit DefaultPodGroupManager(DialectOptions opts = {});

  // Objects (any kind: gang objects define specs; every object can be a PodGrouper owner).
  void OnObjectAdd(const api::UnstructuredPtr& obj);
  void OnObjectUpdate(const api::UnstructuredPtr& obj) { OnObjectAdd(obj); }
  // An update that the caller found to change nothing but `status` and resourceVersion
  // (e.g. scheduler::OnlyStatusChanged, our own PodGroup status writes): SpecsFromObject
  // reads neither, so the parsed specs are kept and only the stored object is replaced
  // (no re-parse: ~20k instructions per PodGroup status write). Objects not seen before
  // are handled as OnObjectAdd.
  void OnObjectStatusUpdate(const api::UnstructuredPtr& obj);
  void OnObjectDelete(const api::UnstructuredPtr& obj);

  // Pods (all pods, bound or not). A terminal pod (Succeeded / Failed) leaves its gang's
  // members as a delete does and is counted in counts.succeeded / failed (OnPodFinished).
  void OnPodAdd(const api::PodPtr& pod, api::Timestamp now);
  void OnPodUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod, api::Timestamp now);
  void OnPodDelete(const api::PodPtr& pod);
  // `pod` reached Succeeded or Failed: it leaves the members (if it still is one) and is
  // counted once per pod key in its gang's counts.succeeded / failed; its gang is found
  // from the member entry or, for a pod already deleted from the members (live mode: the
  // pod watch filters terminal pods out, so their last change arrives as a delete before
  // a second watch reports the phase), resolved again from the pod — counted only when
  // that gang is known (members seen) or defined by an object, so that finished pods of
  // long-gone derived gangs (the terminal-pod list at startup) create no gang state.
  // Returns the gang key, "" for a pod outside (known) gangs or a non-terminal pod.
  // Idempotent.
  std::string OnPodFinished(const api::PodPtr& pod);

  void EnablePodGrouper(bool enabled) override;

  // The gang of a pod (cached per pod key), or nullopt.
  std::optional<GangRef> RefOf(const api::Pod& pod) const override;
  // The same without copying: the gang's shared, immutable ref (nullptr when the pod has
  // no gang). For hot paths (queue admission, quota resolution): one map lookup by the
  // pod's "namespace/name" without building the key string, no string copies.
  std::shared_ptr<const GangRef> RefPtrOf(const api::Pod& pod) const override;
  // Snapshot of a gang's state; nullopt if no pod or object mentions the key.
  // Copies the member list: O(members). Hot paths use Summary.
  // with_members = false leaves member_pods empty (O(1) instead of O(members)).
  std::optional<GangInfo> Info(const std::string& gang_key,
                               bool with_members = true) const override;
  // Info's planning subset (PodGroupManager::PlanningInfo).
  std::optional<GangInfo> PlanningInfo(const std::string& gang_key) const override;
  // Spec and counts only (no member list), O(1) apart from the map lookup.
  using Summary = GangSummary;
  std::optional<Summary> SummaryOf(const std::string& gang_key) const override;
  // Keys of the gangs that must be placed together with `gang_key` (its GangGroup),
  // including itself, sorted.
  std::vector<std::string> GroupOf(const std::string& gang_key) const override;

  // Topology objects (kind Topology, IsTopologyObject) arrive through OnObjectAdd / Delete.
  std::shared_ptr<const Topology> TopologyOf(const std::string& name) const override;
  // HyperNode objects (IsHyperNodeObject) arrive through OnObjectAdd / Delete too.
  std::vector<std::shared_ptr<const HyperNode>> HyperNodes() const override;

  // Scheduler bookkeeping: a member was assumed (Reserve) / forgotten (Unreserve).
  void MarkAssumed(const api::Pod& pod, api::Timestamp now) override;
  void MarkForgotten(const api::Pod& pod) override;
  void RecordAttempt(const std::string& gang_key, const std::string& reason) override;

  // True when `gang_key` has reached its quorum under its match policy:
  // once-satisfied: ever reached minMember assumed+bound; waiting-and-running: assumed +
  // bound >= minMember now; only-waiting: assumed >= minMember now. With subgroup quorums
  // (KAI subGroups, Volcano minTaskMember; subgroups.h) the assumed + bound members must
  // meet every subgroup's too (once-satisfied and waiting-and-running).
  bool Satisfied(const std::string& gang_key) const override;

  // The PriorityClass name a pod takes from its gang: the gang object's
  // spec.priorityClassName (KAI, Volcano PodGroup) or the one PodGrouper derived from the
  // owner (KAI's priorityClassName label, dialects.h); "" when none. Lock-free and O(1)
  // while no gang names a class (the scheduler asks for every pod it orders or preempts).
  std::string GangPriorityClassOf(const api::Pod& pod) const;

  // Every gang's key, sorted.
  std::vector<std::string> GangKeys() const;
  // Keys (sorted) of the gangs that ran (satisfied once) and lost an assumed or bound member
  // since the last call: the only gangs that can have become stale (staleness.h).
  std::vector<std::string> TakeRunningLosses();

 private:
  struct Gang;
  struct PodEntry {
    std::string gang;
    // gangs_[gang], found once when the entry is made: gangs are never erased and the
    // hashed map's nodes do not move, so RefPtrOf needs no second lookup.
    const Gang* gang_state = nullptr;
    std::string sub_group;  // the subgroup the pod names under its gang's dialect
    enum State { kPending, kAssumed, kBound } state = kPending;
    bool running = false;  // status.phase Running
  };
  struct Gang {
    std::shared_ptr<const PodGroupSpec> object_spec;  // from an object
    std::shared_ptr<const PodGroupSpec> inline_spec;  // from the first member's annotations
    std::shared_ptr<const GangRef> ref;               // set by the first member, never reset
    std::set<std::string> members;
    std::map<std::string, bool> finished;  // pod key -> Succeeded (true) / Failed (false)
    GangCounts counts;
    SubGroupCounts sub_group_pods;    // per subgroup name: member pods
    SubGroupCounts sub_group_active;  // per subgroup name: assumed or bound members
    int32_t attempts = 0;
    std::string last_reason;
    api::Timestamp quorum_time = 0;
    api::Timestamp satisfied_time = 0;
    api::Timestamp running_time = 0;
    bool has_quorum = false;
    bool running = false;
  };
  // Info (planning_only = false) and PlanningInfo (true) of gang `g` under `key`.
  GangInfo InfoLocked(const Gang& g, const std::string& key, bool with_members,
                      bool planning_only) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<const PodGroupSpec> SpecLocked(const Gang& g, const std::string& key) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddPodLocked(const api::PodPtr& pod, api::Timestamp now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemovePodLocked(const std::string& pod_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string FinishPodLocked(const api::PodPtr& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<GangRef> ResolveLocked(const api::Pod& pod) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateSatisfiedLocked(Gang& g, const std::string& key, api::Timestamp now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds (delta 1) or removes (-1) a member's share of its gang's subgroup counts.
  static void CountSubGroup(Gang& g, const PodEntry& e, int32_t delta);
  const api::Unstructured* OwnerLocked(const std::string& ns, const std::string& kind,
                                       const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // Some spec (object or inline) names a priority class (GangPriorityClassOf).
  std::atomic<bool> has_gang_priorities_{false};
  DialectOptions opts_ ABSL_GUARDED_BY(mu_);
  // By gang key. Hashed (every PodGroup cycle looks gangs up several times; keys of a
  // trace share long prefixes, which an ordered map compares again and again); nothing
  // iterates it in an order that matters (GangKeys sorts). Gangs are never erased.
  std::unordered_map<std::string, Gang> gangs_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> running_losses_ ABSL_GUARDED_BY(mu_);  // TakeRunningLosses
  // Transparent hash/equality so that RefPtrOf finds a pod by a string_view key.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  std::unordered_map<std::string, PodEntry, KeyHash, KeyEq> pods_
      ABSL_GUARDED_BY(mu_);  // pod key -> entry
  // Specs defined by objects, by spec key; and which object defined which keys.
  std::map<std::string, std::shared_ptr<const PodGroupSpec>> object_specs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<std::string>> specs_by_object_ ABSL_GUARDED_BY(mu_);
  // KAI / Kueue Topology objects by "<group>/<name>" (cluster-scoped).
  std::map<std::string, std::shared_ptr<const Topology>> topologies_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const HyperNode>> hyper_nodes_ ABSL_GUARDED_BY(mu_);
  // Every object by "<ns>/<kind>/<name>", for PodGrouper owner lookups.
  std::unordered_map<std::string, api::UnstructuredPtr> objects_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::gang
