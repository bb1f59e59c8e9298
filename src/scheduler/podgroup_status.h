// PodGroup status as the scheduler sees it, written to the gang's own object.
//
// Called at PodGroup cycle outcomes (podgroup_cycle.cc) and when a member's binding is
// observed (Scheduler::OnPodUpdate). The ClusterClient coalesces and sends the write off
// the scheduling thread; these functions only compute the status from the gang's counts
// (no copy of its member list).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/types.h"
#include "api/unstructured.h"
#include "framework/handle.h"
#include "gang/manager.h"

namespace phalanx::scheduler {

// What the caller just learned about the gang.
enum class GangOutcome {
  kNone,           // a member was bound (or nothing new): status from the counts alone
  kPlaced,         // a PodGroup cycle committed the gang
  kUnschedulable,  // a PodGroup cycle rejected the gang (`message` says why)
};

// The status to write for the gang `gang_key`, or nullopt for dialects whose status we do
// not write (Koordinator annotations, PodGrouper-derived gangs, KAI, Workload) or an
// unknown gang. `api_version`/`kind`/`ns`/`name` receive the object's identity.
// Phases (Coscheduling, scheduler-plugins apis/scheduling/v1alpha1):
//   Pending     fewer than minMember members exist, or the last cycle could not place it
//   Scheduling  minMember members exist and the gang is being placed / its binds are in
//               flight
//   Scheduled   at least minMember members are bound
// Phases (Volcano v1beta1): Pending (same as above, with an Unschedulable condition whose
// reason is NotEnoughTasks or NotEnoughResources), Inqueue (being placed), Running (at
// least minMember bound; Volcano's own scheduler calls a gang with minAvailable allocated
// tasks Running), with a Scheduled condition.
// `member` (optional) supplies status.occupiedBy from its owner references, as the
// scheduler-plugins PodGroup controller does ("ns/owner" sorted, comma-joined).
struct PodGroupStatusWrite {
  std::string api_version, kind, ns, name;
  framework::ClusterClient::PodGroupStatus status;
};
std::optional<PodGroupStatusWrite> ComputePodGroupStatus(const gang::Manager& gangs,
                                                         const std::string& gang_key,
                                                         GangOutcome outcome,
                                                         std::string_view message,
                                                         const api::Pod* member);

// ComputePodGroupStatus + client.UpdatePodGroupStatus.
void WritePodGroupStatus(const gang::Manager& gangs, framework::ClusterClient& client,
                         const std::string& gang_key, GangOutcome outcome,
                         std::string_view message, const api::Pod* member);

// True if `a` and `b` differ only in status and server-maintained metadata
// (resourceVersion, generation, managedFields): the update carries no new scheduling
// input, so it must not move pods between queues. Our own status writes come back
// through the informer as such updates.
bool OnlyStatusChanged(const api::Unstructured& a, const api::Unstructured& b);

}  // namespace phalanx::scheduler
