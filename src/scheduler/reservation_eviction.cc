// Starvation eviction for gang reservations (GangReservation preemptAfterSeconds).
//
// A reservation with backfill never evicts: on a trace where long single-pod jobs hold the
// reserved nodes, a large gang still waits until they end (docs/performance.md, "Gang
// reservations with backfill"). With preemptAfterSeconds > 0, a gang that holds a
// reservation, has waited that long since its quorum, and whose forecast start is still
// ahead evicts what keeps it off its reserved nodes now, and starts.
//
// Sources of the rules:
//  - Volcano's preempt action takes only *starving* jobs as preemptors
//    (volcano-sh/volcano pkg/scheduler/actions/preempt/preempt.go: `ssn.JobStarving(job)`),
//    and Volcano's gang-aware preemption design (docs/design/gang-preemption: evict whole
//    gangs rather than single tasks of many) is why a victim's job is evicted whole: its
//    controller would restart the whole job anyway.
//  - YTsaurus' starvation preemption (user-guide/data-processing/scheduler/preemption.md:
//    "jobs starting with recently run ones are subject to preemption") and upstream
//    SelectVictimsOnNode (reprieve the oldest first) are the victim order: least work lost.
//  - Never more than the reservation needs: Search's greedy reprieve (podgroup_preemption.h)
//    keeps every unit without which the gang still fits.
//  - Never a member of a reserving-class gang (>= minMembers members), never a pod of a
//    higher priority than the gang: starvation is not a priority's right (upstream
//    DefaultPreemption evicts only lower priorities; here equal priority is allowed, since
//    waiting was the gang's claim).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gang/ledger.h"
#include "plugins/defaultpreemption/default_preemption.h"
#include "quota/manager.h"
#include "scheduler/gang_coordinator.h"
#include "scheduler/podgroup_algorithm.h"
#include "scheduler/podgroup_preemption.h"

namespace phalanx::scheduler {

std::vector<PreemptionVictimUnit> PodGroupPreemption::CollectReservationUnits(
    const gang::Reservation& r, int32_t min_members, int32_t priority) const {
  auto* ledger = fwk_.Service<gang::GangLedger>();
  auto* queues = fwk_.Service<quota::QueueLedger>();
  auto shielded = [queues](const api::Pod& p) { return queues && queues->PreemptProtected(p); };
  std::unordered_map<std::string, framework::PodInfoPtr> by_key;  // every pod on a node
  for (const framework::NodeInfo* ni : sched_.snapshot().List()) {
    for (const auto& p : ni->pods()) by_key.emplace(p->Pod().Key(), p);
  }
  std::unordered_set<std::string> seen;  // gangs already offered (or refused)
  std::vector<PreemptionVictimUnit> units;
  std::vector<const framework::NodeInfo*> nodes;
  if (r.nodes.empty()) {
    nodes = sched_.snapshot().List();
  } else {
    for (const std::string& node : r.nodes) {
      if (const framework::NodeInfo* ni = sched_.snapshot().Get(node)) nodes.push_back(ni);
    }
  }
  for (const framework::NodeInfo* ni : nodes) {
    for (const auto& p : ni->pods()) {
      PreemptionVictimUnit u;
      auto ref = ledger ? ledger->RefOf(p->Pod()) : std::nullopt;
      if (ref) {
        if (!seen.insert(ref->key).second) continue;
        if (std::find(r.gangs.begin(), r.gangs.end(), ref->key) != r.gangs.end()) continue;
        auto info = ledger->Info(ref->key);
        if (info && info->spec && info->spec->min_member >= min_members) continue;
        if (info) {
          for (const auto& key : info->member_pods) {
            auto it = by_key.find(key);
            if (it != by_key.end()) u.pods.push_back(it->second);  // pending: nothing to evict
          }
        }
      }
      if (u.pods.empty()) u.pods = {p};
      bool eligible = true;
      for (const auto& v : u.pods) {
        eligible = eligible && fwk_.PriorityOf(v->Pod()) <= priority && !shielded(v->Pod());
        if (u.head == nullptr || fwk_.PriorityOf(v->Pod()) > fwk_.PriorityOf(*u.head)) {
          u.head = &v->Pod();
        }
      }
      if (eligible) units.push_back(std::move(u));
    }
  }
  // Crowding over the candidates: reprieve units on crowded nodes first (fewer victims).
  std::unordered_map<std::string, int64_t> per_node;
  for (const auto& u : units) {
    for (const auto& p : u.pods) ++per_node[p->Pod().spec.node_name];
  }
  for (auto& u : units) {
    for (const auto& p : u.pods)
      u.crowding = std::max(u.crowding, per_node[p->Pod().spec.node_name]);
  }
  return units;
}

PodGroupPreemptionResult PodGroupPreemption::SearchReservation(const gang::Reservation& r,
                                                               int32_t min_members) {
  PodGroupPreemptionResult out;
  const int32_t prio = GangPriority();
  // Victims of an earlier eviction still terminating on a member's nominated node: wait for
  // them (upstream PodEligibleToPreemptOthers), do not evict again (live mode; the
  // simulator deletes at once).
  for (const auto& m : members_) {
    const std::string& nominated = m.qp->Pod().status.nominated_node_name;
    const framework::NodeInfo* ni = nominated.empty() ? nullptr : sched_.snapshot().Get(nominated);
    if (ni == nullptr) continue;
    for (const auto& v : ni->pods()) {
      if (plugins::defaultpreemption::TerminatingByPreemption(v->Pod())) {
        out.message = "waiting for the victims of an earlier eviction to terminate";
        return out;
      }
    }
  }
  // The reserved nodes first; when evicting there cannot make room (they hold other large
  // gangs, which are never victims), every node.
  std::vector<PreemptionVictimUnit> units = CollectReservationUnits(r, min_members, prio);
  size_t considered = 0;
  for (const auto& u : units) considered += u.pods.size();
  std::vector<bool> removed(units.size(), true);
  const char* where = "on its reserved nodes";
  if (units.empty() || !FitsWithout(units, removed)) {
    gang::Reservation anywhere = r;
    anywhere.nodes.clear();
    units = CollectReservationUnits(anywhere, min_members, prio);
    considered = 0;
    for (const auto& u : units) considered += u.pods.size();
    removed.assign(units.size(), true);
    where = "on any node";
  }
  if (units.empty()) {
    algorithm_.Revert();
    out.message = "no evictable pod on its reserved nodes or elsewhere";
    return out;
  }
  out.attempted = true;
  auto no_room = [&] {
    algorithm_.Revert();
    out.message = "eviction would not make room for the whole gang (" + std::to_string(considered) +
                  " evictable pods " + where + ")";
    return out;
  };
  if (!FitsWithout(units, removed)) return no_room();
  std::vector<std::vector<std::string>> violations;
  Reprieve(units, ReprieveOrder(units, &violations), &removed);
  if (!FitsWithout(units, removed)) return no_room();
  Evict(units, removed, violations, prio, &out);
  out.nominated.assign(members_.size(), "");
  for (size_t i = 0; i < members_.size(); ++i) {
    if (members_[i].placed) out.nominated[i] = members_[i].host;
  }
  algorithm_.Revert();
  return out;
}

PodGroupPreemptionResult PodGroupPreemption::RunForReservation(const PodGroupPlacement&,
                                                               const gang::Reservation& r,
                                                               int32_t min_members,
                                                               const std::string& note) {
  std::vector<PodGroupMember> saved = members_;
  plugin_ = "GangReservation";
  victim_note_ = note;
  PodGroupPreemptionResult out = SearchReservation(r, min_members);
  members_ = std::move(saved);
  if (out.attempted) {
    sched_.preemption().RecordAttempt(plugin_, out.victims.empty() ? "Unschedulable" : "Success");
  }
  return out;
}

// The scheduler's side: after a failed PodGroup cycle of a gang that holds a reservation.
std::vector<std::string> Scheduler::EvictForReservation(framework::Framework& fwk,
                                                        const framework::QueuedPodGroupInfo& plan,
                                                        std::vector<PodGroupMember>& members,
                                                        PodGroupAlgorithm& algorithm,
                                                        const PodGroupPlacement& placement,
                                                        std::string* reason) {
  const gang::ReservationSettings settings = reservations_->Settings();
  if (!settings.evicts() || plan.pod_groups.empty()) return {};
  const std::string& key = plan.pod_groups[0].key;
  auto held = reservations_->HeldBy(key);
  const api::Timestamp now = opts_.clock->Now();
  if (!held || held->forecast_start <= now) return {};
  auto info = gangs_->Info(key, /*with_members=*/false);
  if (!info || !info->spec) return {};
  const api::Timestamp since =
      info->has_quorum ? info->quorum_time : info->spec->creation_timestamp;
  if (now - since < settings.preempt_after_ns) return {};
  const std::string waited = std::to_string((now - since) / api::kNanosPerSecond) + "s";
  const std::string note = "starving: waited " + waited + ", reservation's forecast start " +
                           gang::FormatReservationTime(held->forecast_start);
  algorithm.Revert();
  PodGroupPreemptionResult res =
      PodGroupPreemption(*this, fwk, plan, members, algorithm)
          .RunForReservation(placement, *held, settings.min_members, note);
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
  gang_coordinator_->RecordReservationEviction(plan.pod_groups[0], msg);
  reservations_->CountEviction(static_cast<int64_t>(names.size()));
  *reason += "; " + msg;
  return std::move(res.nominated);
}

}  // namespace phalanx::scheduler
