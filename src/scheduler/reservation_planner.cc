// Gang reservations with backfill, the scheduler's side (Slurm EASY backfill): a
// gang whose PodGroup cycle fails after waiting reservationThresholdSeconds gets the nodes
// that free soonest for it (gang::PlanReservation over the snapshot's running pods and their
// expected end times); the GangReservation plugin keeps other pods off those nodes unless
// they end before the forecast start. Released when the gang commits, when it is gone or
// gated, or when it has not started by forecast start + grace (the next failed cycle plans
// again). Runs on the scheduling thread, on the scheduler's clock.
#include <string>
#include <vector>

#include "gang/manager.h"
#include "gang/reservation.h"
#include "scheduler/gang_coordinator.h"
#include "scheduler/podgroup_algorithm.h"
#include "scheduler/scheduler.h"

namespace phalanx::scheduler {

namespace {

// The snapshot's schedulable nodes as the forecast sees them: free room now and, per
// running pod of known runtime, when it ends and what it gives back. A pod without
// status.startTime is taken to start `now` (its end is then later than the real one).
// Nodes another reservation holds are left out (`taken`, may be null).
std::vector<gang::NodeForecast> ForecastNodes(const std::vector<const framework::NodeInfo*>& nodes,
                                              const gang::ReservationView* taken,
                                              api::Timestamp now) {
  std::vector<gang::NodeForecast> out;
  out.reserve(nodes.size());
  for (const framework::NodeInfo* ni : nodes) {
    if (!ni->node() || ni->unschedulable()) continue;
    if (taken && taken->node_to_reservation.count(ni->name())) continue;
    gang::NodeForecast f;
    f.name = ni->name();
    f.allocatable = ni->allocatable();
    f.free = ni->allocatable();
    f.free.Subtract(ni->requested());
    f.free.allowed_pod_number =
        ni->allocatable().allowed_pod_number - static_cast<int64_t>(ni->pods().size());
    for (const auto& p : ni->pods()) {
      auto end = gang::ExpectedEnd(p->Pod(), now);
      if (!end) continue;
      api::Resource r = p->requests;
      r.allowed_pod_number = 1;
      f.releases.emplace_back(*end, std::move(r));
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string Seconds(int64_t ns) { return std::to_string(ns / api::kNanosPerSecond) + "s"; }

std::string HeldLine(const gang::Reservation& r) {
  return "node reservation: " + std::to_string(r.nodes.size()) + " node(s) held for gang " +
         r.gang + ", forecast start " + gang::FormatReservationTime(r.forecast_start) +
         ", expires " + gang::FormatReservationTime(r.expires);
}

}  // namespace

std::string Scheduler::PlanGangReservation(const framework::QueuedPodGroupInfo& plan,
                                           const std::vector<PodGroupMember>& members) {
  const gang::ReservationSettings settings = reservations_->Settings();
  if (!settings.enabled() || plan.pod_groups.empty()) return "";
  const api::Timestamp now = opts_.clock->Now();
  SweepReservations(now);
  const std::string& key = plan.pod_groups[0].key;
  if (auto held = reservations_->HeldBy(key)) return HeldLine(*held);
  auto info = gangs_->Info(key, /*with_members=*/false);
  if (!info || !info->spec) return "";
  const api::Timestamp since =
      info->has_quorum ? info->quorum_time : info->spec->creation_timestamp;
  if (now - since < settings.threshold_ns || info->spec->min_member < settings.min_members) {
    return "";
  }
  // The head of the queue only (EASY): the longest-waiting gang over the threshold.
  if (!reservations_->TakeTurn(key, since, [this](const std::string& g) { return GangGone(g); }) ||
      !reservations_->HasRoom()) {
    return "";
  }
  // The members still needed, per unit: the first `need` of its pending members.
  std::vector<api::Resource> demand;
  std::vector<int32_t> taken(plan.pod_groups.size(), 0);
  for (const auto& m : members) {
    if (m.pod_group >= plan.pod_groups.size() ||
        taken[m.pod_group] >= plan.pod_groups[m.pod_group].Need())
      continue;
    api::Resource r = m.qp->pod_info->requests;
    r.allowed_pod_number = 1;
    demand.push_back(std::move(r));
    ++taken[m.pod_group];
  }
  cache_.UpdateSnapshot(&snapshot_);  // the committed state, without this cycle's view
  const auto reserved = reservations_->View();
  gang::ReservationPlan rp =
      gang::PlanReservation(ForecastNodes(snapshot_.List(), reserved.get(), now), demand, now);
  if (!rp.ok) {
    reservations_->CountNotMade();
    return "no node reservation after waiting " + Seconds(now - since) + ": " + rp.why_not;
  }
  gang::Reservation r;
  r.gang = key;
  for (const auto& u : plan.pod_groups) r.gangs.push_back(u.key);
  r.nodes = rp.nodes;
  r.made = now;
  r.forecast_start = rp.forecast_start;
  r.members = static_cast<int32_t>(demand.size());
  if (!reservations_->Add(r)) return "";
  const std::string msg = "Reserved " + std::to_string(rp.nodes.size()) + " node(s) for gang " +
                          key + " (" + std::to_string(demand.size()) + " members) after waiting " +
                          Seconds(now - since) + ", forecast start " +
                          gang::FormatReservationTime(rp.forecast_start) +
                          " (backfill only for pods ending before it)";
  gang_coordinator_->RecordReserved(plan.pod_groups[0], msg);
  return msg;
}

void Scheduler::ReleaseGangReservation(const framework::QueuedPodGroupInfo& plan) {
  if (reservations_->ActiveCount() == 0) return;
  for (const auto& u : plan.pod_groups) reservations_->Release(u.key, gang::ReleaseCause::kBound);
}

bool Scheduler::GangGone(const std::string& key) const {
  auto sum = gangs_->SummaryOf(key);
  if (!sum || !sum->spec || sum->counts.pods == 0) return true;
  return sum->counts.pods < sum->spec->min_member || gangs_->Satisfied(key);
}

void Scheduler::SweepReservations(api::Timestamp now) {
  if (reservations_->ActiveCount() == 0) return;
  auto released =
      reservations_->Sweep(now, [this](const std::string& key) { return GangGone(key); });
  if (released.empty()) return;
  Requeue(framework::EventResource::kAssignedPod, framework::kDelete, "GangReservationReleased",
          {});
}

}  // namespace phalanx::scheduler
