#include "scheduler/podgroup_algorithm.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace phalanx::scheduler {

using framework::CycleState;
using framework::PodInfo;
using framework::Status;

namespace {

// Sum over `nodes` of max(0, allocatable - requested), per resource (units of api::Resource).
api::Resource FreeCapacity(const std::vector<const framework::NodeInfo*>& nodes) {
  api::Resource free;
  for (const auto* ni : nodes) {
    const auto& a = ni->allocatable();
    const auto& r = ni->requested();
    free.milli_cpu += std::max<int64_t>(0, a.milli_cpu - r.milli_cpu);
    free.memory += std::max<int64_t>(0, a.memory - r.memory);
    free.ephemeral_storage += std::max<int64_t>(0, a.ephemeral_storage - r.ephemeral_storage);
    free.allowed_pod_number +=
        std::max<int64_t>(0, a.allowed_pod_number - static_cast<int64_t>(ni->pods().size()));
    for (const auto& [id, v] : a.scalar) free.AddScalar(id, std::max<int64_t>(0, v - r.Scalar(id)));
  }
  return free;
}

// Success if `want` fits in `free`, else Unschedulable with the first resource short, e.g.
// "cpu: 64000m requested, 12000m free".
Status MinResourcesShortfall(const api::Resource& want, const api::Resource& free) {
  auto fmt = [](const std::string& name, int64_t w, int64_t f, const char* unit) {
    return Status::Unschedulable(name + ": " + std::to_string(w) + unit + " requested, " +
                                 std::to_string(f) + unit + " free");
  };
  if (want.milli_cpu > free.milli_cpu) return fmt("cpu", want.milli_cpu, free.milli_cpu, "m");
  if (want.memory > free.memory) return fmt("memory", want.memory, free.memory, "");
  if (want.ephemeral_storage > free.ephemeral_storage) {
    return fmt("ephemeral-storage", want.ephemeral_storage, free.ephemeral_storage, "");
  }
  if (want.allowed_pod_number > 0 && want.allowed_pod_number > free.allowed_pod_number) {
    return fmt("pods", want.allowed_pod_number, free.allowed_pod_number, "");
  }
  for (const auto& [id, v] : want.scalar) {
    if (v > free.Scalar(id)) return fmt(api::ScalarResourceName(id), v, free.Scalar(id), "");
  }
  return Status::Success();
}

// A reason collected as text (PlaceOne's): Success when there is none, else Unschedulable
// with it.
Status Rejection(std::string reason) {
  return reason.empty() ? Status::Success() : Status::Unschedulable(std::move(reason));
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

// The `need` smallest of `values`, summed.
int64_t SumSmallest(std::vector<int64_t> values, size_t need) {
  std::sort(values.begin(), values.end());
  int64_t sum = 0;
  for (size_t i = 0; i < need && i < values.size(); ++i) sum += values[i];
  return sum;
}

}  // namespace

std::string FormatTopologyCandidate(const TopologyCandidate& c) {
  std::string out = c.level + "=" + c.domain + ": ";
  if (!c.fits) return out + "does not fit (" + c.reason + ")";
  return out + "fits" + (c.detail.empty() ? "" : ", " + c.detail);
}

std::string PodGroupPlacement::TopologySummary() const {
  std::string out;
  if (!topology_candidates.empty()) {
    out = "topology: " + (topology_domain.empty() ? "no domain fits" : topology_domain);
    out += "; candidates: ";
    for (size_t i = 0; i < topology_candidates.size(); ++i) {
      out += (i ? "; " : "") + FormatTopologyCandidate(topology_candidates[i]);
    }
  }
  for (size_t i = 0; i < sub_group_domains.size(); ++i) {
    out += (i ? ", " : out.empty() ? "subgroups: " : "; subgroups: ") + sub_group_domains[i];
  }
  return out;
}

PodGroupPlacement PodGroupAlgorithm::Run() {
  PodGroupPlacement out;
  out.placed.assign(plan_.pod_groups.size(), 0);
  out.reject_reason = CheckMinResources().Message();
  if (out.reject_reason.empty()) {
    const Status admit = Admit();
    out.admit_plugin = admit.plugin();
    out.reject_reason = admit.Message();
  }
  if (out.reject_reason.empty()) {
    out.reject_reason = PlaceIn(&out).Message();
    out.placement_failed = !out.reject_reason.empty();
  }
  out.batched = batched_;
  return out;
}

Status PodGroupAlgorithm::Place(std::vector<int32_t>* placed) {
  PodGroupPlacement out;
  Status reason = PlaceIn(&out);
  *placed = std::move(out.placed);
  return reason;
}

Status PodGroupAlgorithm::PlaceIn(PodGroupPlacement* out) {
  out->placed.assign(plan_.pod_groups.size(), 0);
  scope_domains_.clear();
  // The first unit that asks for a topology decides it for the whole plan (a GangGroup
  // is placed in one domain together).
  const auto topo = std::find_if(plan_.pod_groups.begin(), plan_.pod_groups.end(),
                                 [](const auto& u) { return !u.topology_levels.empty(); });
  Status reason = topo != plan_.pod_groups.end() ? PlaceInTopology(*topo, out)
                                                 : PlaceMembers(nullptr, &out->placed);
  out->sub_group_domains = scope_domains_;
  return reason;
}

void PodGroupAlgorithm::Revert() {
  sched_.cache().UpdateSnapshot(&sched_.snapshot());
  if (view_edit_) view_edit_(sched_.snapshot());
  for (auto* p : fwk_.PodGroupPlacementPlugins()) p->ViewReset();
}

Status PodGroupAlgorithm::CheckMinResources() const {
  // A gang whose minimum exceeds the cluster's free capacity is rejected before any
  // per-pod work.
  bool have_free = false;
  api::Resource free;
  for (const auto& u : plan_.pod_groups) {
    if (!u.has_min_resources) continue;
    if (!have_free) {
      free = FreeCapacity(sched_.snapshot().List());
      have_free = true;
    }
    const Status shortfall = MinResourcesShortfall(u.min_resources, free);
    if (!shortfall.IsSuccess()) {
      return Status::Unschedulable(u.display +
                                   ": minResources exceed the cluster's free capacity (" +
                                   shortfall.Message() + ")");
    }
  }
  return Status::Success();
}

Status PodGroupAlgorithm::Admit() {
  // The whole gang's request against its queue, inside the transaction, so that quota is
  // never half-consumed by a gang.
  std::vector<const PodInfo*> pods;
  std::vector<size_t> pod_group_of;
  for (const auto& m : members_) {
    pods.push_back(m.qp->pod_info.get());
    pod_group_of.push_back(m.pod_group);
  }
  Status a = fwk_.RunAdmitPodGroup(plan_, pods, pod_group_of);
  if (!a.IsSuccess()) return a;
  // An admission plugin may have changed the cluster (none in tree evicts since reclaim
  // moved to PodGroup preemption).
  sched_.cache().UpdateSnapshot(&sched_.snapshot());
  return Status::Success();
}

bool PodGroupAlgorithm::PlaceOne(PodGroupMember& m, PlacementBatch* batch,
                                 const std::set<std::string>* restriction, std::string* reason) {
  m.state = std::make_shared<CycleState>();
  ScheduleResult r;
  m.status = sched_.SchedulePod(fwk_, *m.state, *m.qp->pod_info, &r, &m.diag, batch, restriction);
  if (m.status.IsSuccess()) {
    auto ap = std::make_shared<api::Pod>(*m.qp->pod_info->pod);
    ap->spec.node_name = r.suggested_host;
    m.assumed = PodInfo::Make(std::move(ap));
    sched_.snapshot().AddPodToView(m.assumed);
    m.host = r.suggested_host;
    m.placed = true;
    for (auto* p : fwk_.PodGroupPlacementPlugins()) p->PlacedOnView(*m.state, *m.assumed, m.host);
  } else if (!m.status.IsRejected()) {
    *reason = "error placing " + m.qp->Pod().Key() + ": " + m.status.Message();
    return false;
  }
  return true;
}

PodGroupAlgorithm::~PodGroupAlgorithm() {
  for (auto* p : fwk_.PodGroupPlacementPlugins()) p->ViewReset();
}

Status PodGroupAlgorithm::PlaceMembers(const std::set<std::string>* restriction,
                                       std::vector<int32_t>* placed) {
  if (std::any_of(plan_.pod_groups.begin(), plan_.pod_groups.end(),
                  [](const auto& u) { return !u.topology_scopes.empty(); })) {
    return PlaceScoped(restriction, placed);
  }
  Status reason = PlaceMembersInOrder(restriction, placed);
  const auto& plugins = fwk_.PodGroupPlacementPlugins();
  if (reason.IsSuccess() || plugins.empty()) return reason;
  bool concerned = false;
  for (const auto& m : members_) {
    for (auto* p : plugins) concerned = concerned || p->ConcernsPodGroupMember(*m.qp->pod_info);
  }
  if (!concerned) return reason;
  // Member-by-member placement fell short and a plugin keeps per-member choices (DRA
  // devices): place again with each member as if alone, then let the plugins choose for
  // all members together (a search over device choices, e.g. DynamicResources'
  // PlaceJointly), instead of keeping what first fit took for the earlier members.
  Revert();
  for (auto* p : plugins) p->SetJointMode(true);
  std::vector<int32_t> joint_placed(placed->size(), 0);
  std::string joint = PlaceMembersInOrder(restriction, &joint_placed).Message();
  if (joint.empty()) {
    std::vector<framework::CycleState*> states;
    std::vector<const PodInfo*> pods;
    std::vector<std::string> nodes;
    for (auto& m : members_) {
      if (!m.placed) continue;
      states.push_back(m.state.get());
      pods.push_back(m.qp->pod_info.get());
      nodes.push_back(m.host);
    }
    for (auto* p : plugins) {
      Status s = p->PlaceJointly(states, pods, nodes);
      if (!s.IsSuccess()) {
        joint = s.Message();
        break;
      }
    }
  }
  for (auto* p : plugins) p->SetJointMode(false);
  if (!joint.empty()) return Status::Unschedulable(reason.Message() + "; placed jointly: " + joint);
  *placed = std::move(joint_placed);
  ++joint_placements_;
  return Status::Success();
}

Status PodGroupAlgorithm::PlaceMembersInOrder(const std::set<std::string>* restriction,
                                              std::vector<int32_t>* placed) {
  std::vector<int32_t> pending(plan_.pod_groups.size(), 0);
  for (const auto& m : members_) ++pending[m.pod_group];
  std::vector<int32_t> remaining = pending;
  std::fill(placed->begin(), placed->end(), 0);
  for (auto& m : members_) {
    m.placed = false;
    m.host.clear();
    m.diag = Diagnosis{};
  }
  std::string reason;
  PlacementBatch batch;  // members of one signature share the first one's nodes and scores
  for (auto& m : members_) {
    --remaining[m.pod_group];
    if (!PlaceOne(m, &batch, restriction, &reason)) break;
    if (m.placed) ++(*placed)[m.pod_group];
    // Give up early once a unit can no longer reach its need.
    if ((*placed)[m.pod_group] + remaining[m.pod_group] < plan_.pod_groups[m.pod_group].Need())
      break;
  }
  batched_ += batch.batched_pods;
  Status status = Rejection(std::move(reason));  // an error placing a member
  for (size_t u = 0; status.IsSuccess() && u < plan_.pod_groups.size(); ++u) {
    status = UnitShortfall(u, pending[u], (*placed)[u]);
  }
  return status;
}

Status PodGroupAlgorithm::UnitShortfall(size_t u, int32_t pending, int32_t placed) const {
  const framework::PodGroupInfo& unit = plan_.pod_groups[u];
  // Every subgroup's own minimum (KAI subGroups, Volcano minTaskMember), not only the
  // summed need: the short subgroup is named first.
  std::string sub_short;
  if (unit.check_sub_groups) {
    std::vector<std::string> keys;
    for (const auto& m : members_) {
      if (m.pod_group == u && m.placed) keys.push_back(m.qp->Pod().Key());
    }
    sub_short = unit.check_sub_groups(keys).Message();
  }
  std::string count;
  if (placed < unit.Need()) {
    count = std::to_string(placed) + " of " + std::to_string(pending) + " pending members fit, " +
            std::to_string(unit.Need()) + " needed";
  }
  if (sub_short.empty() && count.empty()) return Status::Success();
  return Status::Unschedulable(unit.display + ": " + sub_short +
                               (sub_short.empty() || count.empty() ? "" : "; ") + count);
}

api::Resource PodGroupAlgorithm::MinimumDemand() const {
  api::Resource total;
  for (size_t u = 0; u < plan_.pod_groups.size(); ++u) {
    std::vector<const api::Resource*> reqs;
    for (const auto& m : members_) {
      if (m.pod_group == u) reqs.push_back(&m.qp->pod_info->requests);
    }
    const size_t need = static_cast<size_t>(std::max(0, plan_.pod_groups[u].Need()));
    auto smallest = [&](auto get) {
      std::vector<int64_t> v;
      for (const auto* r : reqs) v.push_back(get(*r));
      return SumSmallest(std::move(v), need);
    };
    total.milli_cpu += smallest([](const api::Resource& r) { return r.milli_cpu; });
    total.memory += smallest([](const api::Resource& r) { return r.memory; });
    total.ephemeral_storage += smallest([](const api::Resource& r) { return r.ephemeral_storage; });
    std::set<api::ResourceId> ids;
    for (const auto* r : reqs) {
      for (const auto& [id, v] : r->scalar) ids.insert(id);
    }
    for (api::ResourceId id : ids) {
      total.AddScalar(id, smallest([id](const api::Resource& r) { return r.Scalar(id); }));
    }
  }
  return total;
}

std::vector<framework::Placement> PodGroupAlgorithm::GeneratePlacements(
    const framework::PlacementLevel& level, std::string* why) {
  std::vector<framework::Placement> placements;
  framework::CycleState state;
  Status g = fwk_.RunPlacementGeneratePlugins(state, plan_, level, &placements);
  if (placements.empty()) *why = g.Message();
  return placements;
}

Status PodGroupAlgorithm::ScoreTrial(framework::CycleState& state,
                                     const framework::Placement& placement,
                                     std::vector<framework::PlacementScore>* scores,
                                     std::string* detail) {
  if (pods_.empty()) {
    for (const auto& m : members_) pods_.push_back(m.qp->pod_info);
  }
  framework::PodGroupAssignments a;
  a.nodes.reserve(members_.size());
  for (const auto& m : members_) a.nodes.push_back(m.placed ? m.host : "");
  Status s = fwk_.RunPlacementScorePlugins(state, plan_, pods_, placement, a, scores);
  detail->clear();
  for (const auto& sc : *scores) {
    if (sc.detail.empty()) continue;
    detail->append(detail->empty() ? "" : ", ").append(sc.detail);
  }
  return s;
}

size_t PodGroupAlgorithm::BestPlacement(framework::CycleState& state,
                                        std::vector<std::vector<framework::PlacementScore>>& scores,
                                        std::vector<int64_t>* totals) {
  Status s = fwk_.TotalPlacementScores(state, plan_, scores, totals);
  if (!s.IsSuccess() || totals->size() != scores.size()) totals->assign(scores.size(), 0);
  size_t best = 0;
  for (size_t i = 1; i < totals->size(); ++i) {
    if ((*totals)[i] > (*totals)[best]) best = i;
  }
  return best;
}

int PodGroupAlgorithm::ScoreLevel(const std::vector<framework::Placement>& placements,
                                  PodGroupPlacement* out) {
  const api::Resource demand = MinimumDemand();
  std::vector<int32_t> placed(plan_.pod_groups.size(), 0);
  framework::CycleState state;  // the level's: PlacementScore plugins keep their measures
  std::vector<size_t> fitting;  // indices in out->topology_candidates
  std::vector<std::vector<framework::PlacementScore>> scores;
  // Each feasible trial itself (hosts, cycle states): placing again could break ties
  // differently (selectHost's RNG) and need not reproduce what was scored.
  struct Trial {
    std::vector<PodGroupMember> members;
    std::vector<int32_t> placed;
    std::vector<std::string> scope_domains;
  };
  std::vector<Trial> trials;
  for (const auto& p : placements) {
    TopologyCandidate c;
    c.level = p.level;
    c.domain = p.domain;
    c.nodes = static_cast<int32_t>(p.nodes.size());
    // A domain whose free capacity is below the gang's minimum is not tried (no SchedulePod).
    std::vector<const framework::NodeInfo*> infos;
    for (const auto& n : p.nodes) {
      if (const auto* ni = sched_.snapshot().Get(n)) infos.push_back(ni);
    }
    c.reason = MinResourcesShortfall(demand, FreeCapacity(infos)).Message();
    if (!c.reason.empty()) {
      c.reason = "free capacity below the gang's minimum: " + c.reason;
    } else {
      c.reason = PlaceMembers(&p.nodes, &placed).Message();
      c.fits = c.reason.empty();
      if (c.fits) {
        std::vector<framework::PlacementScore> sc;
        if (Status st = ScoreTrial(state, p, &sc, &c.detail); st.IsSuccess()) {
          scores.push_back(std::move(sc));
          trials.push_back({members_, placed, scope_domains_});
        } else {
          c.fits = false;
          c.reason = st.Message();
        }
      }
      Revert();  // drop this trial's view
    }
    out->topology_candidates.push_back(std::move(c));
    if (out->topology_candidates.back().fits)
      fitting.push_back(out->topology_candidates.size() - 1);
  }
  if (fitting.empty()) return -1;
  std::vector<int64_t> totals;
  const size_t best = BestPlacement(state, scores, &totals);
  for (size_t i = 0; i < fitting.size(); ++i)
    out->topology_candidates[fitting[i]].score = totals[i];
  best_members_ = std::move(trials[best].members);
  best_placed_ = std::move(trials[best].placed);
  best_scope_domains_ = std::move(trials[best].scope_domains);
  return static_cast<int>(fitting[best]);
}

void PodGroupAlgorithm::RestoreBestTrial(std::vector<int32_t>* placed) {
  for (size_t i = 0; i < members_.size(); ++i) members_[i] = std::move(best_members_[i]);
  best_members_.clear();
  *placed = std::move(best_placed_);
  scope_domains_ = std::move(best_scope_domains_);
  for (const auto& m : members_) {
    if (!m.placed) continue;
    sched_.snapshot().AddPodToView(m.assumed);
    for (auto* p : fwk_.PodGroupPlacementPlugins()) p->PlacedOnView(*m.state, *m.assumed, m.host);
  }
}

Status PodGroupAlgorithm::PlaceInTopology(const framework::PodGroupInfo& unit,
                                          PodGroupPlacement* out) {
  const std::string of_topology =
      unit.topology_name.empty() ? "" : " (topology " + unit.topology_name + ")";
  if (!fwk_.HasPlacementGeneratePlugins()) {
    return Status::Unschedulable(unit.display + ": topology constraint" + of_topology +
                                 " needs a PlacementGenerate plugin (TopologyPlacement) in "
                                 "profile " +
                                 fwk_.ProfileName());
  }
  std::string level_reason;  // the last level's, for the required case
  for (size_t li = 0; li < unit.topology_levels.size(); ++li) {
    framework::PlacementLevel pl;
    pl.pod_group = &unit;
    pl.index = li;
    pl.key = unit.topology_levels[li];
    const std::vector<framework::Placement> placements = GeneratePlacements(pl, &level_reason);
    if (placements.empty()) continue;
    const size_t first = out->topology_candidates.size();
    const int best = ScoreLevel(placements, out);
    if (best >= 0) {
      const TopologyCandidate& c = out->topology_candidates[static_cast<size_t>(best)];
      out->topology_domain = c.level + "=" + c.domain;
      RestoreBestTrial(&out->placed);
      return Status::Success();
    }
    level_reason = "no " + pl.key + " domain fits the gang (";
    for (size_t i = first; i < out->topology_candidates.size(); ++i) {
      const TopologyCandidate& c = out->topology_candidates[i];
      level_reason += (i > first ? "; " : "") + c.level + "=" + c.domain + ": " + c.reason;
    }
    level_reason += ")";
  }
  if (!unit.topology_required) return PlaceMembers(nullptr, &out->placed);
  return Status::Unschedulable("required topology level " + Quote(unit.topology_levels.back()) +
                               of_topology + ": " + level_reason);
}

// ---- Nested topology: subgroups with their own topologyConstraint ----

void PodGroupAlgorithm::RebuildView() {
  Revert();
  for (const auto& m : members_) {
    if (m.placed) sched_.snapshot().AddPodToView(m.assumed);
  }
}

Status PodGroupAlgorithm::PlaceScoped(const std::set<std::string>* restriction,
                                      std::vector<int32_t>* placed) {
  for (auto& m : members_) {
    m.placed = false;
    m.host.clear();
    m.diag = Diagnosis{};
  }
  scope_domains_.clear();
  if (!fwk_.HasPlacementGeneratePlugins()) {
    for (const auto& g : plan_.pod_groups) {
      if (!g.topology_scopes.empty()) {
        return Status::Unschedulable(g.display +
                                     ": subgroup topology constraints need a PlacementGenerate "
                                     "plugin (TopologyPlacement) in profile " +
                                     fwk_.ProfileName());
      }
    }
  }
  // Each member's innermost scope: scopes list parents first, so the last one holding it.
  member_scope_.assign(members_.size(), -1);
  for (size_t i = 0; i < members_.size(); ++i) {
    const auto& scopes = plan_.pod_groups[members_[i].pod_group].topology_scopes;
    const std::string& key = members_[i].qp->Pod().Key();
    for (size_t s = 0; s < scopes.size(); ++s) {
      const auto& pods = scopes[s].pods;
      if (std::find(pods.begin(), pods.end(), key) != pods.end())
        member_scope_[i] = static_cast<int>(s);
    }
  }
  Status reason;
  for (size_t u = 0; reason.IsSuccess() && u < plan_.pod_groups.size(); ++u) {
    reason = PlaceScope(u, -1, restriction);
  }
  std::vector<int32_t> pending(plan_.pod_groups.size(), 0);
  std::fill(placed->begin(), placed->end(), 0);
  for (const auto& m : members_) {
    ++pending[m.pod_group];
    if (m.placed) ++(*placed)[m.pod_group];
  }
  for (size_t u = 0; reason.IsSuccess() && u < plan_.pod_groups.size(); ++u) {
    reason = UnitShortfall(u, pending[u], (*placed)[u]);
  }
  return reason;
}

Status PodGroupAlgorithm::PlaceScope(size_t u, int s, const std::set<std::string>* restriction) {
  const auto& scopes = plan_.pod_groups[u].topology_scopes;
  for (size_t c = 0; c < scopes.size(); ++c) {
    if (scopes[c].parent != s || scopes[c].pods.empty()) continue;
    Status reason = ChooseScopeDomain(u, static_cast<int>(c), restriction);
    if (!reason.IsSuccess()) return reason;
  }
  std::string reason;
  PlacementBatch batch;  // one restriction: members of one signature share filtered nodes
  for (size_t i = 0; i < members_.size(); ++i) {
    if (members_[i].pod_group != u || member_scope_[i] != s) continue;
    if (!PlaceOne(members_[i], &batch, restriction, &reason)) break;
  }
  batched_ += batch.batched_pods;
  return Rejection(std::move(reason));
}

Status PodGroupAlgorithm::ChooseScopeDomain(size_t u, int s,
                                            const std::set<std::string>* restriction) {
  const framework::PodGroupInfo& unit = plan_.pod_groups[u];
  const auto& scope = unit.topology_scopes[static_cast<size_t>(s)];
  const std::string who = "subgroup " + Quote(scope.name);
  const std::vector<PodGroupMember> saved = members_;
  const std::vector<std::string> saved_domains = scope_domains_;
  auto restore = [&](std::vector<PodGroupMember> m, std::vector<std::string> d) {
    members_ = std::move(m);
    scope_domains_ = std::move(d);
    RebuildView();
  };
  // Nodes of the scope's members already assumed or bound: a required level keeps to the
  // domain that holds them.
  std::set<std::string> active_nodes;
  if (scope.required && !scope.active_pods.empty()) {
    const std::set<std::string> keys(scope.active_pods.begin(), scope.active_pods.end());
    for (const auto* ni : sched_.snapshot().List()) {
      for (const auto& p : ni->pods()) {
        if (keys.count(p->pod->Key())) active_nodes.insert(ni->name());
      }
    }
  }
  std::string level_reason;
  for (size_t li = 0; li < scope.levels.size(); ++li) {
    const std::string& level = scope.levels[li];
    framework::PlacementLevel pl;
    pl.pod_group = &unit;
    pl.index = li;
    pl.key = level;
    pl.scope = true;
    pl.parent = restriction;  // inside the parent's domain
    std::string none;
    std::vector<framework::Placement> placements = GeneratePlacements(pl, &none);
    std::erase_if(placements, [&](const framework::Placement& p) {
      return !std::all_of(active_nodes.begin(), active_nodes.end(),
                          [&](const std::string& n) { return p.nodes.count(n) > 0; });
    });
    if (placements.empty() && !active_nodes.empty()) {
      level_reason = "no " + level + " domain " + (restriction ? "of the parent domain " : "") +
                     "holds the nodes of the members already running";
      continue;
    }
    if (placements.empty()) {
      level_reason = none;
      continue;
    }
    framework::CycleState state;  // the level's: PlacementScore plugins keep their measures
    std::vector<std::vector<framework::PlacementScore>> scores;
    struct Trial {
      std::vector<PodGroupMember> members;
      std::vector<std::string> domains;
    };
    std::vector<Trial> trials;
    level_reason = "no " + level + " domain fits " + who + " (";
    bool first = true;
    for (const auto& p : placements) {
      if (!first) restore(saved, saved_domains);  // drop the previous trial
      std::string reason = PlaceScope(u, s, &p.nodes).Message();
      if (reason.empty()) {
        std::vector<std::string> keys;
        for (size_t i = 0; i < members_.size(); ++i) {
          const auto& m = members_[i];
          if (m.pod_group == u && m.placed &&
              std::find(scope.pods.begin(), scope.pods.end(), m.qp->Pod().Key()) !=
                  scope.pods.end()) {
            keys.push_back(m.qp->Pod().Key());
          }
        }
        reason = scope.check(keys).Message();
      }
      if (reason.empty()) {
        std::vector<framework::PlacementScore> sc;
        std::string detail;
        if (Status st = ScoreTrial(state, p, &sc, &detail); st.IsSuccess()) {
          scores.push_back(std::move(sc));
          std::vector<std::string> domains = scope_domains_;
          domains.insert(domains.begin() + static_cast<std::ptrdiff_t>(saved_domains.size()),
                         who + ": " + level + "=" + p.domain);
          trials.push_back({members_, std::move(domains)});
        } else {
          reason = st.Message();
        }
      }
      if (!reason.empty())
        level_reason += (first ? "" : "; ") + level + "=" + p.domain + ": " + reason;
      first = false;
    }
    if (!trials.empty()) {
      std::vector<int64_t> totals;
      const size_t best = BestPlacement(state, scores, &totals);
      restore(std::move(trials[best].members), std::move(trials[best].domains));
      return Status::Success();
    }
    restore(saved, saved_domains);
    level_reason += ")";
  }
  if (!scope.required) {
    // Preferred levels only: the parent's domain (the whole cluster for a top scope).
    scope_domains_.push_back(who + ": anywhere in the parent domain");
    return PlaceScope(u, s, restriction);
  }
  const std::string of = scope.topology.empty() ? "" : " (topology " + scope.topology + ")";
  return Status::Unschedulable(unit.display + ": " + who + ": required topology level " +
                               Quote(scope.levels.back()) + of + ": " + level_reason);
}

}  // namespace phalanx::scheduler
