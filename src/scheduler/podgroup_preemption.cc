#include "scheduler/podgroup_preemption.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "gang/ledger.h"
#include "plugins/defaultpreemption/default_preemption.h"
#include "quota/manager.h"

namespace phalanx::scheduler {

using framework::NodeInfo;
using framework::PodInfoPtr;
namespace dp = plugins::defaultpreemption;

namespace {

constexpr std::string_view kNoRoom = "would not make room for the whole gang";
constexpr std::string_view kNoDefaultPreemption = "DefaultPreemption is not enabled";

}  // namespace

std::vector<std::string> SuspendNominations(queue::SchedulingQueue& queue,
                                            const std::vector<PodGroupMember>& members) {
  std::vector<std::string> out;
  out.reserve(members.size());
  for (const auto& m : members) {
    out.push_back(m.qp->Pod().status.nominated_node_name);
    if (!out.back().empty()) queue.nominator().Delete(m.qp->Pod());
  }
  return out;
}

int32_t PodGroupPreemption::GangPriority() const {
  int32_t prio = INT32_MAX;
  for (const auto& m : members_) prio = std::min(prio, fwk_.PriorityOf(m.qp->Pod()));
  return prio;
}

std::string PodGroupPreemption::PodGroupEligibleToPreemptOthers(const PodGroupPlacement& placement,
                                                                bool* silent) const {
  *silent = true;
  if (!placement.placement_failed || members_.empty()) return "not a placement failure";
  // A gang still gathering: its missing members, not room, hold it back.
  std::vector<int32_t> pending(plan_.pod_groups.size(), 0);
  for (const auto& m : members_) {
    if (m.pod_group < pending.size()) ++pending[m.pod_group];
  }
  for (size_t u = 0; u < plan_.pod_groups.size(); ++u) {
    if (pending[u] < plan_.pod_groups[u].Need()) return "quorum not present";
  }
  // A profile without DefaultPreemption does not preempt, for a gang as for a single pod.
  const auto post_filter = fwk_.ListPlugins("PostFilter");
  if (std::find(post_filter.begin(), post_filter.end(), dp::DefaultPreemption::kName) ==
      post_filter.end()) {
    return std::string(kNoDefaultPreemption);
  }
  *silent = false;
  for (const auto& m : members_) {
    if (m.qp->Pod().spec.preemption_policy == "Never") return std::string(dp::kNotEligibleNever);
  }
  // Victims of an earlier preemption still terminating on a member's nominated node: wait.
  const int32_t prio = GangPriority();
  for (const auto& m : members_) {
    const std::string& nominated = m.qp->Pod().status.nominated_node_name;
    if (nominated.empty()) continue;
    const NodeInfo* ni = sched_.snapshot().Get(nominated);
    if (ni == nullptr) continue;
    for (const auto& v : ni->pods()) {
      if (fwk_.PriorityOf(v->Pod()) < prio &&
          plugins::defaultpreemption::TerminatingByPreemption(v->Pod())) {
        return std::string(dp::kNotEligibleTerminating);
      }
    }
  }
  return "";
}

std::vector<PreemptionVictimUnit> PodGroupPreemption::CollectVictimUnits(int32_t priority) const {
  auto* ledger = fwk_.Service<gang::GangLedger>();
  // KAI preemptMinRuntime: a pod (a gang: any member) that started too recently is no victim.
  auto* queues = fwk_.Service<quota::QueueLedger>();
  auto shielded = [queues](const api::Pod& p) { return queues && queues->PreemptProtected(p); };
  std::map<std::string, int64_t> per_node;  // victims per node
  for (const NodeInfo* ni : sched_.snapshot().List()) {
    for (const auto& p : ni->pods()) {
      if (fwk_.PriorityOf(p->Pod()) < priority) ++per_node[ni->name()];
    }
  }
  // No pod of a lower priority (every failed cycle of a cluster of one priority): nothing
  // to index.
  if (per_node.empty()) return {};
  std::unordered_map<std::string, PodInfoPtr> by_key;  // every pod on a node
  for (const NodeInfo* ni : sched_.snapshot().List()) {
    for (const auto& p : ni->pods()) by_key.emplace(p->Pod().Key(), p);
  }
  std::vector<PreemptionVictimUnit> units;
  std::unordered_set<std::string> seen_gangs;
  for (const NodeInfo* ni : sched_.snapshot().List()) {
    for (const auto& p : ni->pods()) {
      if (fwk_.PriorityOf(p->Pod()) >= priority) continue;
      PreemptionVictimUnit u;
      auto ref = ledger ? ledger->RefOf(p->Pod()) : std::nullopt;
      std::optional<gang::GangInfo> info;
      if (ref && ledger->Satisfied(ref->key)) info = ledger->Info(ref->key);
      bool whole = false;
      if (info) {
        if (seen_gangs.count(ref->key)) continue;
        bool eligible = true;
        for (const auto& key : info->member_pods) {
          auto it = by_key.find(key);
          if (it == by_key.end()) continue;  // pending: nothing to evict
          whole = whole || key == p->Pod().Key();
          if (fwk_.PriorityOf(it->second->Pod()) >= priority || shielded(it->second->Pod())) {
            eligible = false;
          }
          u.pods.push_back(it->second);
        }
        if (whole) seen_gangs.insert(ref->key);
        if (whole && !eligible) continue;
      }
      if (!whole) {
        if (shielded(p->Pod())) continue;
        u.pods = {p};  // not running, or the ledger lags the snapshot
      }
      for (const auto& v : u.pods) {
        const bool more = u.head == nullptr || fwk_.PriorityOf(v->Pod()) > fwk_.PriorityOf(*u.head);
        if (more) u.head = &v->Pod();
        u.crowding = std::max(u.crowding, per_node[v->Pod().spec.node_name]);
      }
      units.push_back(std::move(u));
    }
  }
  return units;
}

bool PodGroupPreemption::MoreImportant(const PreemptionVictimUnit& a,
                                       const PreemptionVictimUnit& b) const {
  const int32_t pa = fwk_.PriorityOf(*a.head), pb = fwk_.PriorityOf(*b.head);
  if (pa != pb) return pa > pb;
  // Equal priority: keep the crowded nodes, so that fewer pods are evicted.
  if (a.crowding != b.crowding) return a.crowding > b.crowding;
  const api::Timestamp now = fwk_.GetClock().Now();
  const api::Timestamp sa = a.head->status.start_time ? *a.head->status.start_time : now;
  const api::Timestamp sb = b.head->status.start_time ? *b.head->status.start_time : now;
  if (sa != sb) return sa < sb;
  return a.keep_rank > b.keep_rank;  // a victim policy's order (e.g. reclaim: newest first)
}

std::vector<size_t> PodGroupPreemption::ReprieveOrder(
    const std::vector<PreemptionVictimUnit>& units,
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
  const auto counted = dp::PodDisruptionBudgetViolations(unit_pods, fwk_.PodDisruptionBudgets());
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

bool PodGroupPreemption::FitsWithout(const std::vector<PreemptionVictimUnit>& units,
                                     const std::vector<bool>& removed) {
  algorithm_.SetViewEdit([&units, &removed](cache::Snapshot& snap) {
    for (size_t i = 0; i < units.size(); ++i) {
      if (!removed[i]) continue;
      for (const auto& p : units[i].pods) snap.RemovePodFromView(p->Pod());
    }
  });
  algorithm_.Revert();
  std::vector<int32_t> placed;
  const bool fits = algorithm_.Place(&placed).empty();
  algorithm_.SetViewEdit(nullptr);
  return fits;
}

std::string PodGroupPreemption::GangName() const {
  auto* ledger = fwk_.Service<gang::GangLedger>();
  if (ledger != nullptr) {
    if (auto ref = ledger->RefOf(members_.front().qp->Pod())) {
      return ref->namespace_ + "/" + ref->name;
    }
  }
  return plan_.pod_groups.empty() ? members_.front().qp->Pod().Key() : plan_.pod_groups.front().key;
}

void PodGroupPreemption::Evict(const std::vector<PreemptionVictimUnit>& units,
                               const std::vector<bool>& removed,
                               const std::vector<std::vector<std::string>>& violations,
                               int32_t priority, PodGroupPreemptionResult* out) {
  const std::string gang = GangName();
  framework::PreemptionRequest req;
  req.plugin = plugin_;
  for (const auto& m : members_) req.preemptors.push_back(m.qp->pod_info);
  req.disruption_message =
      framework::DisruptionTargetMessage(members_.front().qp->Pod().spec.scheduler_name, "gang");
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
      if (!budgets.empty()) msg += std::string(dp::kPDBViolationNote) + budgets;
      req.victims.push_back({victim, std::move(msg)});
    }
  }
  // Lower-priority pods nominated to the gang's nodes may no longer fit there.
  std::set<std::string> nodes;
  for (const auto& m : members_) {
    if (m.placed) nodes.insert(m.host);
  }
  for (const auto& node : nodes) {
    for (const auto& p : fwk_.NominatedPodsForNode(node)) {
      if (fwk_.PriorityOf(p->Pod()) < priority) req.clear_nominations.push_back(p);
    }
  }
  req.reject_if_waiting = framework::RejectIfWaitingIn(fwk_);
  req.num_pdb_violations = out->num_pdb_violations;
  // Off the scheduling thread (framework/preemption_executor.h); a failed API call is
  // reported there, on the members.
  sched_.preemption().Execute(std::move(req));
}

void PodGroupPreemption::Reprieve(const std::vector<PreemptionVictimUnit>& units,
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

PodGroupPreemptionResult PodGroupPreemption::Run(const PodGroupPlacement& placement) {
  // The dry runs overwrite the members' placement fields; the rejection reports the
  // gang's own attempt.
  std::vector<PodGroupMember> saved = members_;
  PodGroupPreemptionResult out = Search(placement);
  members_ = std::move(saved);
  if (out.attempted) {
    sched_.preemption().RecordAttempt("GangPreemption",
                                      out.victims.empty() ? "Unschedulable" : "Success");
  }
  return out;
}

std::vector<PreemptionVictimUnit> PodGroupPreemption::CollectPolicyUnits(std::string* why) {
  const auto& plugins = fwk_.PodGroupPlugins();
  candidates_.assign(plugins.size(), {});
  // Every pod on a node by key; built only once a policy offers a candidate (most failed
  // cycles have none, and indexing every pod each time dominated a gang backlog's replay).
  std::unordered_map<std::string, PodInfoPtr> by_key;
  std::vector<PreemptionVictimUnit> units;
  std::unordered_set<std::string> taken;  // a pod offered twice counts once
  for (size_t k = 0; k < plugins.size(); ++k) {
    std::string w;
    candidates_[k] = plugins[k]->VictimCandidates(plan_, &w);
    if (candidates_[k].empty() && why->empty()) *why = std::move(w);
    const auto& offered = candidates_[k];
    if (!offered.empty() && by_key.empty()) {
      for (const NodeInfo* ni : sched_.snapshot().List()) {
        for (const auto& p : ni->pods()) by_key.emplace(p->Pod().Key(), p);
      }
    }
    for (size_t i = 0; i < offered.size(); ++i) {
      PreemptionVictimUnit u;
      u.policy = static_cast<int>(k);
      u.policy_unit = i;
      u.keep_rank = static_cast<int64_t>(i) + 1;  // the first offered is the first victim
      for (const auto& p : offered[i].pods) {
        auto it = by_key.find(p->Key());
        if (it == by_key.end() || !taken.insert(p->Key()).second) continue;
        u.pods.push_back(it->second);
        if (u.head == nullptr || fwk_.PriorityOf(*p) > fwk_.PriorityOf(*u.head)) {
          u.head = &it->second->Pod();
        }
      }
      if (!u.pods.empty()) units.push_back(std::move(u));
    }
  }
  return units;
}

std::vector<PreemptionVictimUnit> PodGroupPreemption::CollectAll(bool by_priority, int32_t priority,
                                                                 size_t considered[2],
                                                                 std::string* why) {
  std::vector<PreemptionVictimUnit> units = CollectPolicyUnits(why);
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

std::string PodGroupPreemption::CheckPolicies(const std::vector<PreemptionVictimUnit>& units,
                                              const std::vector<bool>& removed) {
  const auto& plugins = fwk_.PodGroupPlugins();
  std::vector<const api::Pod*> lower;
  std::vector<std::vector<const framework::PodGroupVictimUnit*>> chosen(plugins.size());
  for (size_t i = 0; i < units.size(); ++i) {
    if (!removed[i]) continue;
    if (units[i].policy < 0) {
      for (const auto& p : units[i].pods) lower.push_back(&p->Pod());
    } else {
      chosen[units[i].policy].push_back(&candidates_[units[i].policy][units[i].policy_unit]);
    }
  }
  for (size_t k = 0; k < plugins.size(); ++k) {
    std::string why = plugins[k]->CheckVictims(plan_, chosen[k], lower);
    if (!why.empty()) return why;
  }
  return "";
}

std::string PodGroupPreemption::EvictAll(const std::vector<PreemptionVictimUnit>& units,
                                         const std::vector<bool>& removed,
                                         const std::vector<std::vector<std::string>>& violations,
                                         int32_t priority, PodGroupPreemptionResult* out) {
  std::vector<bool> lower(units.size(), false);
  for (size_t i = 0; i < units.size(); ++i) lower[i] = removed[i] && units[i].policy < 0;
  Evict(units, lower, violations, priority, out);
  std::string err;
  const auto& plugins = fwk_.PodGroupPlugins();
  for (size_t k = 0; k < plugins.size(); ++k) {
    std::vector<const framework::PodGroupVictimUnit*> chosen;
    for (size_t i = 0; i < units.size(); ++i) {
      if (!removed[i] || units[i].policy != static_cast<int>(k)) continue;
      chosen.push_back(&candidates_[k][units[i].policy_unit]);
      out->victims.insert(out->victims.end(), units[i].pods.begin(), units[i].pods.end());
      if (!violations[i].empty())
        out->num_pdb_violations += static_cast<int64_t>(units[i].pods.size());
    }
    if (chosen.empty()) continue;
    std::string e;
    out->reclaimed += plugins[k]->EvictVictims(plan_, chosen, &e);
    if (err.empty()) err = std::move(e);
  }
  return err;
}

PodGroupPreemptionResult PodGroupPreemption::Search(const PodGroupPlacement& placement) {
  PodGroupPreemptionResult out;
  bool silent = false;
  const std::string why = PodGroupEligibleToPreemptOthers(placement, &silent);
  // Lower-priority victims only when the gang may preempt; the victim policies' (queue
  // reclaim) also without DefaultPreemption or with preemptionPolicy Never, but not for a
  // failure preemption does not address nor while earlier victims are still terminating.
  const bool by_priority = why.empty();
  const bool by_policy = by_priority || why == kNoDefaultPreemption || why == dp::kNotEligibleNever;
  if (!by_policy) {
    if (!silent) out.message = "preemption: " + why;
    return out;
  }
  const int32_t prio = GangPriority();
  size_t considered[2] = {0, 0};  // lower-priority pods, policy pods
  std::string policy_why;
  std::vector<PreemptionVictimUnit> units = CollectAll(by_priority, prio, considered, &policy_why);
  // No candidate: nothing preemption could do, and nothing to say unless the gang may not
  // preempt (the gang's own reason stands).
  if (units.empty()) {
    if (!by_priority && !silent) out.message = "preemption: " + why;
    return out;
  }
  out.attempted = true;
  std::vector<bool> removed(units.size(), true);
  auto no_room = [&] {
    algorithm_.Revert();
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
  if (std::string refused = CheckPolicies(units, removed); !refused.empty()) {
    algorithm_.Revert();
    out.message = "preemption: " + refused;
    return out;
  }
  // The final check, with exactly the victims that will be evicted gone: it also leaves
  // each member's node in its placement fields.
  if (!FitsWithout(units, removed)) return no_room();
  std::string err = EvictAll(units, removed, violations, prio, &out);
  out.nominated.assign(members_.size(), "");
  for (size_t i = 0; i < members_.size(); ++i) {
    if (members_[i].placed) out.nominated[i] = members_[i].host;
  }
  algorithm_.Revert();
  out.message = "preemption: " + std::to_string(out.victims.size()) +
                " victims evicted for the gang" +
                (out.reclaimed > 0 ? " (" + std::to_string(out.reclaimed) + " reclaimed)" : "") +
                (err.empty() ? "" : " (error: " + err + ")");
  return out;
}

}  // namespace phalanx::scheduler
