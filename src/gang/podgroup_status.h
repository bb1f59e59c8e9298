// PodGroup status as the scheduler sees it, written to the gang's own object.
//
// Called at PodGroup cycle outcomes (podgroup_cycle.cc), when a member's binding is
// observed (Scheduler::OnPodUpdate) and when a member's pod phase changes (Running,
// Succeeded, Failed; GangCoordinator::OnMemberPhase). The ClusterClient coalesces and
// sends the write off the scheduling thread; these functions only compute the status from
// the gang's counts (no copy of its member list).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/types.h"
#include "api/unstructured.h"
#include "framework/handle.h"
#include "gang/default_podgroup_manager.h"

namespace phalanx::gang {

// The API object a gang's Events, conditions and status go to: the gang's own object with
// the apiVersion the informer read it at (so the version the server serves, e.g.
// scheduling.k8s.io/v1alpha2 PodGroup, scheduling.sigs.k8s.io/v1alpha1 PodGroup), kind
// PodGroup, or Workload for a 1.35 Workload's pod groups (name: the Workload's). nullopt
// for gangs without an object (Koordinator annotations, PodGrouper-derived gangs).
struct GangObject {
  std::string api_version, kind, ns, name;
};
std::optional<GangObject> GangObjectOf(const gang::PodGroupSpec& spec);

// What the caller just learned about the gang.
enum class GangOutcome {
  kNone,           // a member was bound (or nothing new): status from the counts alone
  kPlaced,         // a PodGroup cycle committed the gang
  kUnschedulable,  // a PodGroup cycle rejected the gang (`message` says why)
};

// The status to write for the gang `gang_key`, or nullopt for gangs without a status of
// their own (Koordinator annotations, PodGrouper-derived gangs, a 1.35 Workload's pod
// groups), an invalid spec or an unknown gang. `api_version`/`kind`/`ns`/`name` receive
// the object's identity; cluster/client.h ClusterClient::PodGroupStatus lists the fields
// each dialect gets. Counts: scheduled = bound + finished members, pending = members whose
// pod is not Running, running / succeeded / failed by pod phase (gang::GangCounts).
// Phases (Coscheduling, scheduler-plugins pkg/controllers/podgroup_controller.go, values
// from apis/scheduling/v1alpha1):
//   Finished    minMember members succeeded
//   Failed      a member failed and failed + running + succeeded >= minMember
//   Running     running + succeeded >= minMember
//   Scheduled   at least minMember members are bound
//   Scheduling  minMember members exist and the gang is being placed / its binds are in
//               flight
//   Pending     fewer than minMember members exist, or the last cycle could not place it
// Volcano v1beta1 (pkg/scheduler/framework/session.go jobStatus): Pending (with an
// Unschedulable condition whose reason is NotEnoughTasks or NotEnoughResources), Inqueue
// (being placed), Running (minMember bound or succeeded), with a Scheduled condition.
// KAI v2alpha2: no phase; schedulingConditions UnschedulableOnNodePool (reason
// Unschedulable, the same message) while unschedulable or short of members, none once
// placed. scheduling.k8s.io PodGroup (KEP-5832): condition PodGroupScheduled True /
// Scheduled once placed, False / Unschedulable when a cycle rejects it, none while it
// waits for members.
// `member` (optional) supplies status.occupiedBy from its owner references, as the
// scheduler-plugins PodGroup controller does ("ns/owner" sorted, comma-joined).
struct PodGroupStatusWrite {
  std::string api_version, kind, ns, name;
  framework::ClusterClient::PodGroupStatus status;
};
std::optional<PodGroupStatusWrite> ComputePodGroupStatus(const DefaultPodGroupManager& gangs,
                                                         const std::string& gang_key,
                                                         GangOutcome outcome,
                                                         std::string_view message,
                                                         const api::Pod* member);

// ComputePodGroupStatus + client.UpdatePodGroupStatus.
void WritePodGroupStatus(const DefaultPodGroupManager& gangs, framework::ClusterClient& client,
                         const std::string& gang_key, GangOutcome outcome, std::string_view message,
                         const api::Pod* member);

// True if `a` and `b` differ only in status and server-maintained metadata
// (resourceVersion, generation, managedFields): the update carries no new scheduling
// input, so it must not move pods between queues. Our own status writes come back
// through the informer as such updates.
bool OnlyStatusChanged(const api::Unstructured& a, const api::Unstructured& b);

}  // namespace phalanx::gang
