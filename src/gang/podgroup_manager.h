// What plugins see of the gang state (GangScheduling, DefaultPreemption), upstream's
// framework PodGroupManager (Handle.PodGroupManager(),
// staging/src/k8s.io/kube-scheduler/framework/listers.go): the narrow
// interface that gang::DefaultPodGroupManager implements and the scheduler hands to plugins through
// the framework Handle (framework::ServiceRegistry), so that the framework never names the gang
// module's classes. Thread-safe in every implementation.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "gang/podgroup.h"
#include "gang/subgroups.h"

namespace phalanx::gang {

struct GangCounts {
  int32_t pods = 0;             // member pods that exist (any state, not terminal)
  int32_t pending = 0;          // not yet assumed or bound
  int32_t assumed = 0;          // assumed by the scheduler, binding not yet confirmed
  int32_t bound = 0;            // bound (running)
  bool satisfied_once = false;  // reached minMember assumed+bound at some point
  // Members that ended Succeeded / Failed (terminal pods are no longer in `pods`): each
  // pod once, by key, for the gang's lifetime (a finished pod later deleted still counts);
  // a new non-terminal pod of the same key takes its place. A gang with a succeeded member
  // is never stale (staleness.h).
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t running = 0;  // members whose status.phase is Running (the kubelet started them)
};

struct GangInfo {
  std::string key;
  std::shared_ptr<const PodGroupSpec> spec;  // nullptr: the gang object does not exist
  GangRef ref;                               // how the first member named it
  GangCounts counts;
  std::vector<std::string> member_pods;  // pod keys, sorted
  // The subgroup each member names (subgroups.h SubGroupNameOf), parallel to member_pods.
  std::vector<std::string> member_sub_groups;
  // Whether each member is assumed or bound (else pending), parallel to member_pods.
  std::vector<bool> member_active;
  // Per subgroup name ("" = none): member pods that exist, and those assumed or bound.
  SubGroupCounts sub_group_pods;
  SubGroupCounts sub_group_active;
  int32_t attempts = 0;  // PodGroup cycles or Permit rounds
  std::string last_reason;
  api::Timestamp quorum_time = 0;     // when minMember pods existed
  api::Timestamp satisfied_time = 0;  // when minMember were assumed/bound
  api::Timestamp running_time = 0;    // when minMember were bound
  bool has_quorum = false;            // quorum_time is valid
  bool running = false;               // running_time is valid
};

// Spec and counts of one gang, without its member list.
struct GangSummary {
  std::shared_ptr<const PodGroupSpec> spec;  // nullptr: the gang object does not exist
  GangCounts counts;
};

class PodGroupManager {
 public:
  virtual ~PodGroupManager() = default;

  // The gang of a pod (cached per pod key), or nullopt.
  virtual std::optional<GangRef> RefOf(const api::Pod& pod) const = 0;
  // The same without copying: the gang's shared, immutable ref (nullptr when the pod has
  // no gang); one map lookup, no string copies (hot paths).
  virtual std::shared_ptr<const GangRef> RefPtrOf(const api::Pod& pod) const = 0;
  // Snapshot of a gang's state; nullopt if no pod or object mentions the key. Copies the
  // member list, O(members); with_members = false leaves it empty (O(1)).
  virtual std::optional<GangInfo> Info(const std::string& gang_key,
                                       bool with_members = true) const = 0;
  // What a PodGroup plan reads (GangScheduling::PlanPodGroup, once per attempt): Info's
  // key, spec, counts and member_pods; member_sub_groups, member_active and the subgroup
  // counts only when the spec has subgroups (empty otherwise); ref, attempts, last_reason
  // and the times left default (ref holds a whole inline spec: copying it on every attempt
  // of a backlog cost more than the plan). O(members). Defaults to Info.
  virtual std::optional<GangInfo> PlanningInfo(const std::string& gang_key) const {
    return Info(gang_key);
  }
  // Spec and counts only, O(1) apart from the map lookup.
  virtual std::optional<GangSummary> SummaryOf(const std::string& gang_key) const = 0;
  // Keys of the gangs that must be placed together with `gang_key` (its GangGroup),
  // including itself, sorted.
  virtual std::vector<std::string> GroupOf(const std::string& gang_key) const = 0;
  // True when the gang reached its quorum under its match policy, every subgroup quorum
  // included (see DefaultPodGroupManager).
  virtual bool Satisfied(const std::string& gang_key) const = 0;

  // The KAI Topology object named `name` (kai.scheduler/v1alpha1, else a Kueue Topology of
  // that name), nullptr when none exists: the levels a TopologyConstraint refers to
  // (topology.h ResolvePlacementLevels).
  virtual std::shared_ptr<const Topology> TopologyOf(const std::string& name) const = 0;
  // Every Volcano HyperNode (topology.volcano.sh/v1alpha1), by name: the tiers a Volcano
  // networkTopology refers to (topology_hypernode.h). Implementations without them: none.
  virtual std::vector<std::shared_ptr<const HyperNode>> HyperNodes() const { return {}; }

  // Bookkeeping of the scheduling cycle: a member was assumed (Reserve) / forgotten
  // (Unreserve); a PodGroup cycle or Permit round ended ("" reason: it succeeded).
  virtual void MarkAssumed(const api::Pod& pod, api::Timestamp now) = 0;
  virtual void MarkForgotten(const api::Pod& pod) = 0;
  virtual void RecordAttempt(const std::string& gang_key, const std::string& reason) = 0;

  // PodGrouper (dialects.h DialectOptions::pod_grouper): false stops deriving gangs from
  // pods' top owners (GangSchedulingArgs.podGrouper). Applies to pods seen afterwards:
  // plugins are built before any pod arrives. Implementations without PodGrouper ignore it.
  virtual void EnablePodGrouper(bool enabled) { (void)enabled; }
};

// Events on a gang's own object (its PodGroup, Workload, ...; dialects without an object of
// their own get none): the narrow interface of the scheduler's gang coordinator that
// plugins reach as a service (GangReservation: "Reserved", "StarvationEviction").
class PodGroupEventRecorder {
 public:
  virtual ~PodGroupEventRecorder() = default;
  // A Normal (`normal`) or Warning event with `reason` (e.g. "Reserved") and `message` on
  // the object of gang `gang_key`.
  virtual void RecordPodGroupEvent(const std::string& gang_key, bool normal, const char* reason,
                                   const std::string& message) = 0;
};

}  // namespace phalanx::gang
