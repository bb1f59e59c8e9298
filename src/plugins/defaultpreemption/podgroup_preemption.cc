#include "plugins/defaultpreemption/podgroup_preemption.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "gang/podgroup_manager.h"
#include "plugins/defaultpreemption/default_preemption.h"
#include "quota/queue_manager.h"

namespace phalanx::plugins::defaultpreemption {

using framework::NodeInfo;
using framework::PodInfoPtr;
using framework::Status;

namespace {

constexpr std::string_view kNoRoom = "would not make room for the whole gang";

}  // namespace

int32_t PodGroupPreemption::GangPriority() const {
  int32_t prio = INT32_MAX;
  for (const auto& p : attempt_.pods) prio = std::min(prio, handle_.PriorityOf(*p->pod));
  return prio;
}

PodGroupPreemption::Eligibility PodGroupPreemption::PodGroupEligibleToPreemptOthers(
    bool by_default_preemption) const {
  if (!attempt_.placement_failed || attempt_.pods.empty()) return Eligibility::kNotPlacementFailure;
  // A gang still gathering: its missing members, not room, hold it back.
  std::vector<int32_t> pending(group_.pod_groups.size(), 0);
  for (size_t g : attempt_.pod_group_of) {
    if (g < pending.size()) ++pending[g];
  }
  for (size_t g = 0; g < group_.pod_groups.size(); ++g) {
    if (pending[g] < group_.pod_groups[g].Need()) return Eligibility::kQuorumNotPresent;
  }
  // A profile without DefaultPreemption does not preempt, for a gang as for a single pod.
  if (!by_default_preemption) return Eligibility::kNoDefaultPreemption;
  for (const auto& p : attempt_.pods) {
    if (p->pod->spec.preemption_policy == "Never") return Eligibility::kNever;
  }
  // Victims of an earlier preemption still terminating on a member's nominated node: wait.
  const int32_t prio = GangPriority();
  const framework::NodeInfoLister& snapshot = handle_.SnapshotSharedLister();
  for (const auto& p : attempt_.pods) {
    const std::string& nominated = p->pod->status.nominated_node_name;
    if (nominated.empty()) continue;
    const NodeInfo* ni = snapshot.Get(nominated);
    if (ni == nullptr) continue;
    for (const auto& v : ni->pods()) {
      if (handle_.PriorityOf(v->Pod()) < prio && TerminatingByPreemption(v->Pod())) {
        return Eligibility::kTerminating;
      }
    }
  }
  return Eligibility::kEligible;
}

std::vector<PodGroupVictimCandidate> PodGroupPreemption::CollectVictimUnits(
    int32_t priority) const {
  auto* ledger = handle_.Service<gang::PodGroupManager>();
  // KAI preemptMinRuntime: a pod (a gang: any member) that started too recently is no victim.
  auto* queues = handle_.Service<quota::SharedQueueManager>();
  auto shielded = [queues](const api::Pod& p) { return queues && queues->PreemptProtected(p); };
  const std::vector<const NodeInfo*>& nodes = handle_.SnapshotSharedLister().List();
  std::map<std::string, int64_t> per_node;  // victims per node
  for (const NodeInfo* ni : nodes) {
    for (const auto& p : ni->pods()) {
      if (handle_.PriorityOf(p->Pod()) < priority) ++per_node[ni->name()];
    }
  }
  // No pod of a lower priority (every failed cycle of a cluster of one priority): nothing
  // to index.
  if (per_node.empty()) return {};
  std::unordered_map<std::string, PodInfoPtr> by_key;  // every pod on a node
  for (const NodeInfo* ni : nodes) {
    for (const auto& p : ni->pods()) by_key.emplace(p->Pod().Key(), p);
  }
  std::vector<PodGroupVictimCandidate> units;
  std::unordered_set<std::string> seen_gangs;
  for (const NodeInfo* ni : nodes) {
    for (const auto& p : ni->pods()) {
      if (handle_.PriorityOf(p->Pod()) >= priority) continue;
      auto ref = ledger ? ledger->RefOf(p->Pod()) : std::nullopt;
      std::optional<gang::GangInfo> info;
      if (ref && ledger->Satisfied(ref->key)) info = ledger->Info(ref->key);
      if (info) {
        if (seen_gangs.count(ref->key)) continue;
        std::vector<PodInfoPtr> placed;
        bool whole = false;
        for (const auto& key : info->member_pods) {
          auto it = by_key.find(key);
          if (it == by_key.end()) continue;  // pending: nothing to evict
          whole = whole || key == p->Pod().Key();
          placed.push_back(it->second);
        }
        if (whole) {
          seen_gangs.insert(ref->key);
          AddRunningGangUnits(*info, std::move(placed), priority, per_node, shielded, &units);
          continue;
        }
      }
      if (shielded(p->Pod())) continue;
      PodGroupVictimCandidate u;
      u.pods = {p};  // not running, or the PodGroupManager lags the snapshot
      AddUnit(std::move(u), per_node, &units);
    }
  }
  return units;
}

void PodGroupPreemption::AddUnit(PodGroupVictimCandidate u,
                                 const std::map<std::string, int64_t>& per_node,
                                 std::vector<PodGroupVictimCandidate>* units) const {
  for (const auto& v : u.pods) {
    const bool more =
        u.head == nullptr || handle_.PriorityOf(v->Pod()) > handle_.PriorityOf(*u.head);
    if (more) u.head = &v->Pod();
    auto it = per_node.find(v->Pod().spec.node_name);
    u.crowding = std::max(u.crowding, it == per_node.end() ? int64_t{0} : it->second);
  }
  units->push_back(std::move(u));
}

void PodGroupPreemption::AddRunningGangUnits(const gang::GangInfo& info,
                                             std::vector<PodInfoPtr> placed, int32_t priority,
                                             const std::map<std::string, int64_t>& per_node,
                                             const std::function<bool(const api::Pod&)>& shielded,
                                             std::vector<PodGroupVictimCandidate>* units) const {
  auto start = [](const PodInfoPtr& p) {
    return p->Pod().status.start_time.value_or(std::numeric_limits<api::Timestamp>::max());
  };
  // Elastic gang (minMember < placed members): the newest members beyond minMember are
  // surplus, one unit each; the oldest minMember stay one unit. Subgroups keep the gang
  // whole (their own quorums would need a split per subgroup).
  const int32_t min_member = info.spec ? info.spec->min_member : 0;
  size_t core = placed.size();
  if (min_member > 0 && info.spec->sub_groups.empty() &&
      placed.size() > static_cast<size_t>(min_member)) {
    std::sort(placed.begin(), placed.end(), [&](const PodInfoPtr& a, const PodInfoPtr& b) {
      if (start(a) != start(b)) return start(a) < start(b);
      return a->Pod().Key() < b->Pod().Key();
    });
    core = static_cast<size_t>(min_member);
  }
  auto victim = [&](const PodInfoPtr& p) {
    return handle_.PriorityOf(p->Pod()) < priority && !shielded(p->Pod());
  };
  // The core: eligible only when every member of it is (never split).
  PodGroupVictimCandidate whole;
  bool eligible = true;
  for (size_t i = 0; i < core; ++i) {
    eligible = eligible && victim(placed[i]);
    whole.pods.push_back(placed[i]);
  }
  if (eligible && !whole.pods.empty()) AddUnit(std::move(whole), per_node, units);
  for (size_t i = core; i < placed.size(); ++i) {
    if (!victim(placed[i])) continue;
    PodGroupVictimCandidate u;
    u.pods = {placed[i]};
    u.surplus = true;
    AddUnit(std::move(u), per_node, units);
  }
}

bool PodGroupPreemption::MoreImportant(const PodGroupVictimCandidate& a,
                                       const PodGroupVictimCandidate& b) const {
  // An elastic gang's surplus member goes before any unit that would take a gang (or a
  // pod) below what it needs.
  if (a.surplus != b.surplus) return b.surplus;
  const int32_t pa = handle_.PriorityOf(*a.head), pb = handle_.PriorityOf(*b.head);
  if (pa != pb) return pa > pb;
  // Equal priority: keep the crowded nodes, so that fewer pods are evicted.
  if (a.crowding != b.crowding) return a.crowding > b.crowding;
  const api::Timestamp now = handle_.GetClock().Now();
  const api::Timestamp sa = a.head->status.start_time ? *a.head->status.start_time : now;
  const api::Timestamp sb = b.head->status.start_time ? *b.head->status.start_time : now;
  if (sa != sb) return sa < sb;
  return a.keep_rank > b.keep_rank;  // a victim policy's order (e.g. reclaim: newest first)
}

std::vector<size_t> PodGroupPreemption::ReprieveOrder(
    const std::vector<PodGroupVictimCandidate>& units,
    std::vector<std::vector<std::string>>* violations) const {
  std::vector<size_t> by_importance(units.size());
  for (size_t i = 0; i < units.size(); ++i) by_importance[i] = i;
  std::stable_sort(by_importance.begin(), by_importance.end(),
                   [&](size_t a, size_t b) { return MoreImportant(units[a], units[b]); });
  std::vector<std::vector<const api::Pod*>> unit_pods;
  for (size_t i : by_importance) {
    auto& v = unit_pods.emplace_back();
    for (const auto& p : units[i].pods) v.push_back(&p->Pod());
  }
  const auto counted = PodDisruptionBudgetViolations(unit_pods, handle_.PodDisruptionBudgets());
  violations->assign(units.size(), {});
  std::vector<size_t> order;  // violating units first, each group in importance order
  for (size_t k = 0; k < by_importance.size(); ++k) {
    (*violations)[by_importance[k]] = counted[k];
    if (!counted[k].empty()) order.push_back(by_importance[k]);
  }
  for (size_t k = 0; k < by_importance.size(); ++k) {
    if (counted[k].empty()) order.push_back(by_importance[k]);
  }
  return order;
}

bool PodGroupPreemption::FitsWithout(const std::vector<PodGroupVictimCandidate>& units,
                                     const std::vector<bool>& removed) {
  std::vector<const api::Pod*> gone;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!removed[i]) continue;
    for (const auto& p : units[i].pods) gone.push_back(&p->Pod());
  }
  return feasibility_.Place(gone, &assignments_).IsSuccess();
}

std::vector<std::string> PodGroupPreemption::Nominations() const {
  std::vector<std::string> out = assignments_.nodes;
  out.resize(attempt_.pods.size());
  return out;
}

std::string PodGroupPreemption::GangName() const {
  const api::Pod& first = *attempt_.pods.front()->pod;
  if (auto* ledger = handle_.Service<gang::PodGroupManager>()) {
    if (auto ref = ledger->RefOf(first)) return ref->namespace_ + "/" + ref->name;
  }
  return group_.pod_groups.empty() ? first.Key() : group_.pod_groups.front().key;
}

void PodGroupPreemption::Evict(const std::vector<PodGroupVictimCandidate>& units,
                               const std::vector<bool>& removed,
                               const std::vector<std::vector<std::string>>& violations,
                               int32_t priority, PodGroupPreemptionResult* out) {
  const std::string gang = GangName();
  framework::PreemptionRequest req;
  req.plugin = plugin_;
  req.preemptors = attempt_.pods;
  req.disruption_message =
      framework::DisruptionTargetMessage(attempt_.pods.front()->pod->spec.scheduler_name, "gang");
  for (size_t i = 0; i < units.size(); ++i) {
    if (!removed[i]) continue;
    std::string budgets;
    for (const auto& b : violations[i]) budgets += (budgets.empty() ? "" : ", ") + b;
    for (const auto& victim : units[i].pods) {
      const api::Pod& v = victim->Pod();
      out->victims.push_back(victim);
      if (!budgets.empty()) ++out->num_pdb_violations;
      std::string msg =
          "Preempted by gang " + gang + " (" +
          (victim_note_.empty() ? "priority " + std::to_string(priority) : victim_note_) +
          ") on node " + v.spec.node_name;
      if (!budgets.empty()) msg += std::string(kPDBViolationNote) + budgets;
      req.victims.push_back({victim, std::move(msg)});
    }
  }
  // Lower-priority pods nominated to the gang's nodes may no longer fit there.
  std::set<std::string> nodes;
  for (const auto& n : assignments_.nodes) {
    if (!n.empty()) nodes.insert(n);
  }
  for (const auto& node : nodes) {
    for (const auto& p : handle_.NominatedPodsForNode(node)) {
      if (handle_.PriorityOf(p->Pod()) < priority) req.clear_nominations.push_back(p);
    }
  }
  req.reject_if_waiting = framework::RejectIfWaitingIn(handle_);
  req.num_pdb_violations = out->num_pdb_violations;
  // Off the scheduling thread (framework/preemption_executor.h); a failed API call is
  // reported there, on the members.
  executor_.Execute(std::move(req));
}

void PodGroupPreemption::Reprieve(const std::vector<PodGroupVictimCandidate>& units,
                                  const std::vector<size_t>& order, std::vector<bool>* removed) {
  auto set = [&](size_t from, size_t to, bool value) {
    for (size_t k = from; k < to; ++k) (*removed)[order[k]] = value;
  };
  if (reprieve_one_by_one_for_tests.load()) {
    for (size_t u : order) {
      (*removed)[u] = false;
      if (!FitsWithout(units, *removed)) (*removed)[u] = true;
    }
    return;
  }
  size_t i = 0, batch = 1;
  while (i < order.size()) {
    const size_t end = std::min(order.size(), i + batch);
    set(i, end, false);
    if (FitsWithout(units, *removed)) {  // the whole batch is reprieved
      i = end;
      batch *= 2;
      continue;
    }
    set(i, end, true);
    // order[i, i + good) can be reprieved, order[i, i + bad) cannot: bisect.
    size_t good = 0, bad = end - i;
    while (bad - good > 1) {
      const size_t mid = good + (bad - good) / 2;
      set(i, i + mid, false);
      if (FitsWithout(units, *removed)) {
        good = mid;
      } else {
        bad = mid;
      }
      set(i, i + mid, true);
    }
    set(i, i + good, false);  // reprieved; order[i + good] stays a victim
    i += good + 1;
    batch = 1;
  }
}

PodGroupPreemptionResult PodGroupPreemption::Run(bool by_default_preemption) {
  PodGroupPreemptionResult out = Search(by_default_preemption);
  if (out.attempted) {
    executor_.RecordAttempt("GangPreemption", out.victims.empty() ? "Unschedulable" : "Success");
  }
  return out;
}

std::vector<PodGroupVictimCandidate> PodGroupPreemption::CollectPolicyUnits() {
  const auto& policies = attempt_.victim_policies;
  candidates_.assign(policies.size(), {});
  // Every pod on a node by key; built only once a policy offers a candidate (most failed
  // cycles have none, and indexing every pod each time dominated a gang backlog's replay).
  std::unordered_map<std::string, PodInfoPtr> by_key;
  std::vector<PodGroupVictimCandidate> units;
  std::unordered_set<std::string> taken;  // a pod offered twice counts once
  for (size_t k = 0; k < policies.size(); ++k) {
    candidates_[k] = policies[k]->VictimCandidates(group_);
    const auto& offered = candidates_[k];
    if (!offered.empty() && by_key.empty()) {
      for (const NodeInfo* ni : handle_.SnapshotSharedLister().List()) {
        for (const auto& p : ni->pods()) by_key.emplace(p->Pod().Key(), p);
      }
    }
    for (size_t i = 0; i < offered.size(); ++i) {
      PodGroupVictimCandidate u;
      u.policy = static_cast<int>(k);
      u.policy_unit = i;
      u.keep_rank = static_cast<int64_t>(i) + 1;  // the first offered is the first victim
      for (const auto& p : offered[i].pods) {
        auto it = by_key.find(p->Key());
        if (it == by_key.end() || !taken.insert(p->Key()).second) continue;
        u.pods.push_back(it->second);
        if (u.head == nullptr || handle_.PriorityOf(*p) > handle_.PriorityOf(*u.head)) {
          u.head = &it->second->Pod();
        }
      }
      if (!u.pods.empty()) units.push_back(std::move(u));
    }
  }
  return units;
}

std::vector<PodGroupVictimCandidate> PodGroupPreemption::CollectAll(bool by_priority,
                                                                    int32_t priority,
                                                                    size_t considered[2]) {
  std::vector<PodGroupVictimCandidate> units = CollectPolicyUnits();
  std::unordered_set<std::string> offered;
  for (const auto& u : units) {
    considered[1] += u.pods.size();
    for (const auto& p : u.pods) offered.insert(p->Pod().Key());
  }
  if (by_priority) {
    for (auto& u : CollectVictimUnits(priority)) {
      // A pod that a policy offers is that policy's victim (its event, its bookkeeping).
      if (std::any_of(u.pods.begin(), u.pods.end(),
                      [&](const PodInfoPtr& p) { return offered.count(p->Pod().Key()) > 0; })) {
        continue;
      }
      considered[0] += u.pods.size();
      units.push_back(std::move(u));
    }
  }
  if (considered[1] == 0) return units;
  // Crowding over every candidate (CollectVictimUnits counted lower-priority pods only).
  std::map<std::string, int64_t> per_node;
  for (const auto& u : units) {
    for (const auto& p : u.pods) ++per_node[p->Pod().spec.node_name];
  }
  for (auto& u : units) {
    u.crowding = 0;
    for (const auto& p : u.pods)
      u.crowding = std::max(u.crowding, per_node[p->Pod().spec.node_name]);
  }
  return units;
}

Status PodGroupPreemption::CheckPolicies(const std::vector<PodGroupVictimCandidate>& units,
                                         const std::vector<bool>& removed) {
  const auto& policies = attempt_.victim_policies;
  std::vector<const api::Pod*> lower;
  std::vector<std::vector<const framework::PodGroupVictimUnit*>> chosen(policies.size());
  for (size_t i = 0; i < units.size(); ++i) {
    if (!removed[i]) continue;
    if (units[i].policy < 0) {
      for (const auto& p : units[i].pods) lower.push_back(&p->Pod());
    } else {
      chosen[units[i].policy].push_back(&candidates_[units[i].policy][units[i].policy_unit]);
    }
  }
  for (size_t k = 0; k < policies.size(); ++k) {
    Status s = policies[k]->CheckVictims(group_, chosen[k], lower);
    if (!s.IsSuccess()) return s;
  }
  return Status::Success();
}

Status PodGroupPreemption::EvictAll(const std::vector<PodGroupVictimCandidate>& units,
                                    const std::vector<bool>& removed,
                                    const std::vector<std::vector<std::string>>& violations,
                                    int32_t priority, PodGroupPreemptionResult* out) {
  std::vector<bool> lower(units.size(), false);
  for (size_t i = 0; i < units.size(); ++i) lower[i] = removed[i] && units[i].policy < 0;
  Evict(units, lower, violations, priority, out);
  Status err;
  const auto& policies = attempt_.victim_policies;
  for (size_t k = 0; k < policies.size(); ++k) {
    std::vector<const framework::PodGroupVictimUnit*> chosen;
    for (size_t i = 0; i < units.size(); ++i) {
      if (!removed[i] || units[i].policy != static_cast<int>(k)) continue;
      chosen.push_back(&candidates_[k][units[i].policy_unit]);
      out->victims.insert(out->victims.end(), units[i].pods.begin(), units[i].pods.end());
      if (!violations[i].empty())
        out->num_pdb_violations += static_cast<int64_t>(units[i].pods.size());
    }
    if (chosen.empty()) continue;
    int64_t evicted = 0;
    Status s = policies[k]->EvictVictims(group_, chosen, &evicted);
    out->reclaimed += evicted;
    if (err.IsSuccess()) err = std::move(s);
  }
  return err;
}

PodGroupPreemptionResult PodGroupPreemption::Search(bool by_default_preemption) {
  PodGroupPreemptionResult out;
  const Eligibility e = PodGroupEligibleToPreemptOthers(by_default_preemption);
  // Lower-priority victims only when the gang may preempt; the victim policies' (queue
  // reclaim) also without DefaultPreemption or with preemptionPolicy Never, but not for a
  // failure preemption does not address nor while earlier victims are still terminating.
  const bool by_priority = e == Eligibility::kEligible;
  const bool by_policy =
      by_priority || e == Eligibility::kNoDefaultPreemption || e == Eligibility::kNever;
  // Said in the gang's reason (the others are silent).
  const std::string_view why = e == Eligibility::kNever         ? kNotEligibleNever
                               : e == Eligibility::kTerminating ? kNotEligibleTerminating
                                                                : "";
  if (!by_policy) {
    if (!why.empty()) out.message = "preemption: " + std::string(why);
    return out;
  }
  const int32_t prio = GangPriority();
  size_t considered[2] = {0, 0};  // lower-priority pods, policy pods
  std::vector<PodGroupVictimCandidate> units = CollectAll(by_priority, prio, considered);
  // No candidate: nothing preemption could do, and nothing to say unless the gang may not
  // preempt (the gang's own reason stands).
  if (units.empty()) {
    if (!by_priority && !why.empty()) out.message = "preemption: " + std::string(why);
    return out;
  }
  out.attempted = true;
  std::vector<bool> removed(units.size(), true);
  auto no_room = [&] {
    feasibility_.Reset();
    const std::string who = considered[1] == 0   ? "preemption"
                            : considered[0] == 0 ? "reclaim"
                                                 : "preemption or reclaim";
    std::string what;
    if (considered[0] > 0) what = std::to_string(considered[0]) + " lower-priority";
    if (considered[1] > 0) {
      what += (what.empty() ? "" : " and ") + std::to_string(considered[1]) + " reclaimable";
    }
    out.message =
        "preemption: " + who + " " + std::string(kNoRoom) + " (" + what + " pods considered)";
    return out;
  };
  if (!FitsWithout(units, removed)) return no_room();
  std::vector<std::vector<std::string>> violations;
  Reprieve(units, ReprieveOrder(units, &violations), &removed);
  // The victim policies' rules on the final set (e.g. never below a queue's guarantee).
  if (Status refused = CheckPolicies(units, removed); !refused.IsSuccess()) {
    feasibility_.Reset();
    out.message = "preemption: " + refused.Message();
    return out;
  }
  // The final check, with exactly the victims that will be evicted gone: it also leaves
  // each member's node in assignments_.
  if (!FitsWithout(units, removed)) return no_room();
  Status err = EvictAll(units, removed, violations, prio, &out);
  out.nominated = Nominations();
  feasibility_.Reset();
  out.message = "preemption: " + std::to_string(out.victims.size()) +
                " victims evicted for the gang" +
                (out.reclaimed > 0 ? " (" + std::to_string(out.reclaimed) + " reclaimed)" : "") +
                (err.IsSuccess() ? "" : " (error: " + err.Message() + ")");
  return out;
}

// ---- Starvation eviction (GangReservation preemptAfterSeconds) ----
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
//  - Never more than the reservation needs: the greedy reprieve keeps every unit without
//    which the gang still fits.
//  - Never a member of a reserving-class gang (>= minMembers members), never a pod of a
//    higher priority than the gang: starvation is not a priority's right (upstream
//    DefaultPreemption evicts only lower priorities; here equal priority is allowed, since
//    waiting was the gang's claim).

std::vector<PodGroupVictimCandidate> PodGroupPreemption::CollectReservationUnits(
    const gang::Reservation& r, int32_t min_members, int32_t priority) const {
  auto* ledger = handle_.Service<gang::PodGroupManager>();
  auto* queues = handle_.Service<quota::SharedQueueManager>();
  auto shielded = [queues](const api::Pod& p) { return queues && queues->PreemptProtected(p); };
  const framework::NodeInfoLister& snapshot = handle_.SnapshotSharedLister();
  std::unordered_map<std::string, framework::PodInfoPtr> by_key;  // every pod on a node
  for (const framework::NodeInfo* ni : snapshot.List()) {
    for (const auto& p : ni->pods()) by_key.emplace(p->Pod().Key(), p);
  }
  std::unordered_set<std::string> seen;  // gangs already offered (or refused)
  std::vector<PodGroupVictimCandidate> units;
  std::vector<const framework::NodeInfo*> nodes;
  if (r.nodes.empty()) {
    nodes = snapshot.List();
  } else {
    for (const std::string& node : r.nodes) {
      if (const framework::NodeInfo* ni = snapshot.Get(node)) nodes.push_back(ni);
    }
  }
  for (const framework::NodeInfo* ni : nodes) {
    for (const auto& p : ni->pods()) {
      PodGroupVictimCandidate u;
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
        eligible = eligible && handle_.PriorityOf(v->Pod()) <= priority && !shielded(v->Pod());
        if (u.head == nullptr || handle_.PriorityOf(v->Pod()) > handle_.PriorityOf(*u.head)) {
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
  const framework::NodeInfoLister& snapshot = handle_.SnapshotSharedLister();
  for (const auto& m : attempt_.pods) {
    const std::string& nominated = m->pod->status.nominated_node_name;
    const framework::NodeInfo* ni = nominated.empty() ? nullptr : snapshot.Get(nominated);
    if (ni == nullptr) continue;
    for (const auto& v : ni->pods()) {
      if (TerminatingByPreemption(v->Pod())) {
        out.message = "waiting for the victims of an earlier eviction to terminate";
        return out;
      }
    }
  }
  // The reserved nodes first; when evicting there cannot make room (they hold other large
  // gangs, which are never victims), every node.
  std::vector<PodGroupVictimCandidate> units = CollectReservationUnits(r, min_members, prio);
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
    feasibility_.Reset();
    out.message = "no evictable pod on its reserved nodes or elsewhere";
    return out;
  }
  out.attempted = true;
  auto no_room = [&] {
    feasibility_.Reset();
    out.message = "eviction would not make room for the whole gang (" + std::to_string(considered) +
                  " evictable pods " + where + ")";
    return out;
  };
  if (!FitsWithout(units, removed)) return no_room();
  std::vector<std::vector<std::string>> violations;
  Reprieve(units, ReprieveOrder(units, &violations), &removed);
  if (!FitsWithout(units, removed)) return no_room();
  Evict(units, removed, violations, prio, &out);
  out.nominated = Nominations();
  feasibility_.Reset();
  return out;
}

PodGroupPreemptionResult PodGroupPreemption::RunForReservation(const gang::Reservation& r,
                                                               int32_t min_members,
                                                               const std::string& note) {
  plugin_ = "GangReservation";
  victim_note_ = note;
  PodGroupPreemptionResult out = SearchReservation(r, min_members);
  if (out.attempted) {
    executor_.RecordAttempt(plugin_, out.victims.empty() ? "Unschedulable" : "Success");
  }
  return out;
}

namespace {
struct VictimPoliciesSearchedState final : framework::StateData {
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<VictimPoliciesSearchedState>();
  }
};
}  // namespace

void MarkVictimPoliciesSearched(framework::CycleState& state) {
  state.Write(kVictimPoliciesSearchedKey, std::make_unique<VictimPoliciesSearchedState>());
}

bool VictimPoliciesSearched(const framework::CycleState& state) {
  return state.Read(kVictimPoliciesSearchedKey) != nullptr;
}

Status PodGroupPostFilterStatus(PodGroupPreemptionResult pre,
                                framework::PodGroupPostFilterResult* result) {
  if (!pre.nominated.empty()) {
    result->nominated_node_names = std::move(pre.nominated);
    return Status(framework::Code::kSuccess, std::move(pre.message));
  }
  if (pre.message.empty()) return Status(framework::Code::kSkip);
  return Status::Unschedulable(std::move(pre.message));
}

}  // namespace phalanx::plugins::defaultpreemption
