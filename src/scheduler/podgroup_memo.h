// Rejected PodGroup cycles, remembered so that an attempt that can only repeat one is
// replayed instead of placing the gang again (the PodGroup cycle's early-out).
//
// Under a backlog most attempts of a pending gang repeat its last one exactly: the
// 5-minute unschedulable flush (SchedulingQueue::FlushUnschedulablePodsLeftover, as
// upstream: every pod that waited that long is moved, whatever the queueing hints say)
// moves it back while nothing in the cluster has changed since, and the cycle —
// minResources, admission, every member through SchedulePod, gang preemption's search —
// recomputes the same rejection. A PodGroup cycle is a function of what it reads: the
// plan (units, needs, pending members in order), the members' pods, the snapshot (the
// cache's nodes and pods), the nominator, the cluster objects the plugins read
// (namespaces, PriorityClasses, PDBs, PodGroups and other objects) and, when a member is
// placed, the random tie-break. So when the plan and members are the same, the cache
// generation is the same (Cache::UpdateSnapshot: any node or pod change moves it), no pod
// is nominated, no object event arrived (the scheduler's object epoch), and the last
// attempt placed no member (no random draw) and preempted nothing, the attempt is
// replayed: every member gets the remembered status, plugins and reasons through the
// same failure handling (queue, events, conditions, gang status, statistics), so the
// queue, the results and every object the scheduler writes are what the full cycle gives.
//
// Second kind (Shape, below): after a job's end the backlog's gangs are tried one after
// another on the same state once the freed room is taken; a one-unit gang whose members
// share the pod signature (same Filter result on every node), preemption policy, need and
// member count with a gang rejected on this generation and epoch gets that rejection under
// its own names — the unit's reason after its display name, and the first member's status
// and node statuses (not when they name the pod).
//
// In the simulator, an idle stretch whose every waiting gang would replay its record at
// each flush round is not run round by round (Scheduler::SkipRepeatedFlushes): the rounds
// are accounted, and only each gang's last one before the next event runs.
//
// Not used while gang reservations are enabled (the GangReservation plugin: a rejected cycle
// then depends on the clock and on reservation state).
//
// Scheduling thread only (not thread-safe; the Scheduler owns one).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/interface.h"
#include "framework/runtime.h"
#include "framework/status.h"

namespace phalanx::scheduler {

struct PodGroupMember;     // podgroup_algorithm.h
struct PodGroupPlacement;  // podgroup_algorithm.h

// What a replay needs: the rejection every member got, and what the attempt read.
struct PodGroupRejection {
  // What the attempt read (compared by PodGroupRejectionMemo::Find).
  int64_t generation = 0;  // Snapshot::generation() after the attempt
  uint64_t epoch = 0;      // the scheduler's object epoch when the attempt started
  std::vector<std::string> unit_keys;
  std::vector<int32_t> needs;
  std::vector<std::vector<std::string>> pending;  // per unit, in placement order
  std::vector<std::string> member_keys;           // the members taken, in order
  std::vector<size_t> member_units;
  // What every member got (Scheduler::RejectPodGroup).
  framework::Status status;
  std::set<std::string> plugins;
  std::vector<std::string> reasons;
  int64_t batched = 0;  // PlacementBatch statistics of the attempt, again
};

class PodGroupRejectionMemo {
 public:
  // Whether a rejected attempt may be replayed later: a plan without topology levels,
  // nested quorums or minResources (its free-capacity check reads only the snapshot, but
  // is kept out for simplicity), whose placement failed with no member placed, no member
  // nominated before or after, and no victim or nomination from preemption; and a
  // profile whose only PodGroup plugin is GangScheduling (no admission or reclaim with
  // state of its own, e.g. Queues' quota).
  static bool Replayable(const framework::Framework& fwk, const framework::QueuedPodGroupInfo& plan,
                         const PodGroupPlacement& placement,
                         const std::vector<std::string>& nominated_before,
                         const std::vector<std::string>& nominated_after, bool preempted);

  // Remembers `r` for every unit of the plan (replacing what was there).
  void Remember(std::shared_ptr<PodGroupRejection> r);
  // The record remembered for a one-unit plan's gang when only this memo holds it and it
  // describes that gang alone, for the caller to refill in place (Describe's `into`; its
  // strings and vectors keep their storage, so that a backlog's replays do not allocate
  // and free a record each); nullptr otherwise. It stays remembered under the gang's key.
  std::shared_ptr<PodGroupRejection> Reusable(const framework::QueuedPodGroupInfo& plan);
  // Drops what was remembered for the plan's units (their cycle committed, or was not
  // replayable).
  void Forget(const framework::QueuedPodGroupInfo& plan);
  // The rejection to replay for this attempt, or nullptr: same plan, same members (keys
  // and units, in order), same generation and epoch.
  const PodGroupRejection* Find(const framework::QueuedPodGroupInfo& plan,
                                const std::vector<PodGroupMember>& members, int64_t generation,
                                uint64_t epoch) const;
  // Builds the record of a rejected attempt (what it read; the outcome fields are the
  // caller's to fill).
  static std::shared_ptr<PodGroupRejection> Describe(const framework::QueuedPodGroupInfo& plan,
                                                     const std::vector<PodGroupMember>& members,
                                                     int64_t generation, uint64_t epoch);
  // The same into an existing record (its read fields replaced; the outcome fields kept).
  static void Describe(const framework::QueuedPodGroupInfo& plan,
                       const std::vector<PodGroupMember>& members, int64_t generation,
                       uint64_t epoch, PodGroupRejection* into);

  size_t size() const { return by_gang_.size(); }

  // Another gang of the same shape on the same state (a backlog of identical jobs after a
  // job's end): a one-unit plan whose members all have the first member's pod signature
  // (Framework::SameSignature: same Filter results on every node) and preemption policy,
  // with the same need and number of pending members, rejected at this generation and
  // epoch. Its members' attempt gives the same per-member status and node statuses, so
  // only the names in the gang's reason differ.
  struct Shape {
    int64_t generation = 0;
    uint64_t epoch = 0;
    framework::PodInfoPtr canonical;  // the first member of the rejected gang
    int32_t need = 0;
    size_t pending = 0;
    std::string reason_tail;          // the unit's reason after its display name
    framework::Status member_status;  // the first member's SchedulePod result
    std::vector<std::pair<std::string, framework::Status>> node_statuses;  // its Diagnosis'
    std::set<std::string> plugins;  // its Diagnosis' unschedulable and pending plugins
    int64_t batched = 0;
    // What the gang-level rejection (schedule_one_podgroup.cc GangRejection) takes from
    // the above, computed once by Complete(): "GangScheduling" and `plugins`; when the
    // member status is a rejection with reasons, its Message() (after "<pod key>: ") and
    // the distinct reasons of `node_statuses`, sorted.
    std::set<std::string> rejection_plugins;
    bool has_member_message = false;
    std::string member_message;
    std::vector<std::string> member_reasons;
    void Complete();
  };
  // Whether `plan` and `members` form a one-unit gang whose members share a signature.
  static bool UniformGang(const framework::Framework& fwk,
                          const framework::QueuedPodGroupInfo& plan,
                          const std::vector<PodGroupMember>& members);
  // Remembers a replayable rejection of a uniform gang (shapes of older states are dropped).
  void RememberShape(Shape s);
  // A shape `members` share at this generation and epoch, or nullptr (call only for a
  // uniform gang).
  const Shape* FindShape(const framework::Framework& fwk, const framework::QueuedPodGroupInfo& plan,
                         const std::vector<PodGroupMember>& members, int64_t generation,
                         uint64_t epoch) const;

 private:
  std::unordered_map<std::string, std::shared_ptr<PodGroupRejection>> by_gang_;
  std::vector<Shape> shapes_;  // all of one generation and epoch
};

}  // namespace phalanx::scheduler
