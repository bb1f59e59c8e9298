// GangReservation behind the PodGroup PostFilter: a gang whose PodGroup cycle failed after
// waiting reservationThresholdSeconds gets the nodes that free soonest for it (Slurm EASY
// backfill: gang::PlanReservation over the snapshot's running pods and their expected end
// times), and, with preemptAfterSeconds, a starving gang holding a reservation evicts what
// keeps it off its reserved nodes now (starvation eviction). Released at the gang's commit
// (PodGroupCycleDone), when it is gone or gated, or when it has not started by forecast
// start + grace (the next failed cycle plans again). Runs on the scheduling thread, on the
// scheduler's clock.
#include <string>
#include <vector>

#include "plugins/defaultpreemption/podgroup_preemption.h"
#include "plugins/gangreservation/gang_reservation.h"

namespace phalanx::plugins::gangreservation {

using framework::Status;

namespace {

std::string Seconds(int64_t ns) { return std::to_string(ns / api::kNanosPerSecond) + "s"; }

std::string HeldLine(const gang::Reservation& r) {
  return "node reservation: " + std::to_string(r.nodes.size()) + " node(s) held for gang " +
         r.gang + ", forecast start " + gang::FormatReservationTime(r.forecast_start) +
         ", expires " + gang::FormatReservationTime(r.expires);
}

}  // namespace

bool GangReservation::GangGone(const std::string& key) const {
  return gangs_ == nullptr || gang::ReservationGangGone(*gangs_, key);
}

void GangReservation::Sweep(api::Timestamp now) {
  if (ledger_->ActiveCount() == 0) return;
  ledger_->Sweep(now, [this](const std::string& key) { return GangGone(key); });
}

std::string GangReservation::PlanFor(const framework::QueuedPodGroupInfo& group,
                                     const framework::PodGroupAttempt& attempt,
                                     framework::PodGroupFeasibility& feasibility) {
  const gang::ReservationSettings settings = ledger_->Settings();
  if (!settings.enabled() || group.pod_groups.empty() || !gangs_) return "";
  const api::Timestamp now = handle_.GetClock().Now();
  Sweep(now);
  const std::string& key = group.pod_groups[0].key;
  if (auto held = ledger_->HeldBy(key)) return HeldLine(*held);
  auto info = gangs_->Info(key, /*with_members=*/false);
  if (!info || !info->spec) return "";
  const api::Timestamp since =
      info->has_quorum ? info->quorum_time : info->spec->creation_timestamp;
  if (now - since < settings.threshold_ns || info->spec->min_member < settings.min_members) {
    return "";
  }
  // The head of the queue only (EASY): the longest-waiting gang over the threshold.
  if (!ledger_->TakeTurn(key, since, [this](const std::string& g) { return GangGone(g); }) ||
      !ledger_->HasRoom()) {
    return "";
  }
  // The members still needed, per pod group: the first Need() of its pending members.
  std::vector<api::Resource> demand;
  std::vector<int32_t> taken(group.pod_groups.size(), 0);
  for (size_t i = 0; i < attempt.pods.size(); ++i) {
    const size_t g = attempt.pod_group_of[i];
    if (g >= group.pod_groups.size() || taken[g] >= group.pod_groups[g].Need()) continue;
    api::Resource r = attempt.pods[i]->requests;
    r.allowed_pod_number = 1;
    demand.push_back(std::move(r));
    ++taken[g];
  }
  feasibility.Reset();  // the committed state, without this cycle's view
  const auto reserved = ledger_->View();
  const auto nodes =
      gang::ForecastNodes(handle_.SnapshotSharedLister().List(), reserved.get(),
                          [now](const api::Pod& p) { return gang::ExpectedEnd(p, now); });
  gang::ReservationPlan rp = gang::PlanReservation(nodes, demand, now);
  if (!rp.ok) {
    ledger_->CountNotMade();
    return "no node reservation after waiting " + Seconds(now - since) + ": " + rp.why_not;
  }
  gang::Reservation r;
  r.gang = key;
  for (const auto& g : group.pod_groups) r.gangs.push_back(g.key);
  r.nodes = rp.nodes;
  r.made = now;
  r.forecast_start = rp.forecast_start;
  r.members = static_cast<int32_t>(demand.size());
  if (!ledger_->Add(r)) return "";
  const std::string msg = "Reserved " + std::to_string(rp.nodes.size()) + " node(s) for gang " +
                          key + " (" + std::to_string(demand.size()) + " members) after waiting " +
                          Seconds(now - since) + ", forecast start " +
                          gang::FormatReservationTime(rp.forecast_start) +
                          " (backfill only for pods ending before it)";
  if (events_) events_->RecordPodGroupEvent(key, true, "Reserved", msg);
  return msg;
}

std::vector<std::string> GangReservation::EvictFor(const framework::QueuedPodGroupInfo& group,
                                                   const framework::PodGroupAttempt& attempt,
                                                   framework::PodGroupFeasibility& feasibility,
                                                   std::string* reason) {
  const gang::ReservationSettings settings = ledger_->Settings();
  if (!settings.evicts() || group.pod_groups.empty()) return {};
  const std::string& key = group.pod_groups[0].key;
  auto held = ledger_->HeldBy(key);
  const api::Timestamp now = handle_.GetClock().Now();
  if (!held || held->forecast_start <= now) return {};
  auto info = gangs_->Info(key, /*with_members=*/false);
  if (!info || !info->spec) return {};
  const api::Timestamp since =
      info->has_quorum ? info->quorum_time : info->spec->creation_timestamp;
  if (now - since < settings.preempt_after_ns) return {};
  const std::string note = "starving: waited " + Seconds(now - since) +
                           ", reservation's forecast start " +
                           gang::FormatReservationTime(held->forecast_start);
  feasibility.Reset();
  defaultpreemption::PodGroupPreemptionResult res =
      defaultpreemption::PodGroupPreemption(handle_, *executor_, group, attempt, feasibility)
          .RunForReservation(*held, settings.min_members, note);
  if (res.victims.empty()) {
    if (!res.message.empty()) *reason += "; starvation eviction: " + res.message;
    return {};
  }
  // One Event on the gang naming its victims (their jobs), and the counters.
  std::vector<std::string> names;
  for (const auto& v : res.victims) names.push_back(v->Pod().Key());
  std::string list;
  for (size_t i = 0; i < names.size() && i < 8; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 8) list += ", ... (" + std::to_string(names.size() - 8) + " more)";
  const std::string msg = "Evicted " + std::to_string(names.size()) + " pod(s) so that gang " +
                          key + " can start (on its reserved nodes, else anywhere; " + note +
                          "): " + list;
  if (events_) events_->RecordPodGroupEvent(key, false, "StarvationEviction", msg);
  ledger_->CountEviction(static_cast<int64_t>(names.size()));
  *reason += "; " + msg;
  return std::move(res.nominated);
}

Status GangReservation::PodGroupPostFilter(framework::CycleState&,
                                           const framework::QueuedPodGroupInfo& group,
                                           const framework::PodGroupAttempt& attempt,
                                           framework::PodGroupFeasibility& feasibility,
                                           framework::PodGroupPostFilterResult* result) {
  if (!ledger_) return Status(framework::Code::kSkip);
  std::string reason = PlanFor(group, attempt, feasibility);
  if (reason.empty()) return Status(framework::Code::kSkip);
  // A starving gang holding a reservation may evict (preemptAfterSeconds).
  std::vector<std::string> nominated = EvictFor(group, attempt, feasibility, &reason);
  if (nominated.empty()) return Status::Unschedulable(reason);
  result->nominated_node_names = std::move(nominated);
  return Status(framework::Code::kSuccess, reason);
}

void GangReservation::PodGroupCycleDone(const framework::QueuedPodGroupInfo& group, bool committed,
                                        const std::string&) {
  if (!committed || !ledger_ || ledger_->ActiveCount() == 0) return;
  for (const auto& g : group.pod_groups) ledger_->Release(g.key, gang::ReleaseCause::kBound);
}

}  // namespace phalanx::plugins::gangreservation
