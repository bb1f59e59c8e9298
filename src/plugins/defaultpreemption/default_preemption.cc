#include "plugins/defaultpreemption/default_preemption.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/labels.h"
#include "framework/extender.h"
#include "framework/parallelize.h"
#include "gang/podgroup_manager.h"
#include "gang/reservation.h"
#include "plugins/defaultpreemption/podgroup_preemption.h"
#include "plugins/helper/args.h"
#include "quota/queue_manager.h"

namespace phalanx::plugins::defaultpreemption {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;

namespace {

constexpr std::string_view kArgsKind = "DefaultPreemptionArgs";
constexpr std::string_view kPercentage = "minCandidateNodesPercentage";
constexpr std::string_view kAbsolute = "minCandidateNodesAbsolute";

// utilerrors.NewAggregate(errs).Error(): one message as is, several deduplicated in "[...]".
std::string Aggregate(const std::vector<std::string>& errs) {
  if (errs.size() == 1) return errs[0];
  std::set<std::string> seen;
  std::string out;
  for (const auto& e : errs) {
    if (!seen.insert(e).second) continue;
    if (seen.size() > 1) out += ", ";
    out += e;
  }
  return seen.size() == 1 ? out : "[" + out + "]";
}

// upstream FitError.Error() for a Diagnosis without PreFilter/PostFilter messages: the
// histogram of reasons, nodes absent from `statuses` counted under `absent_reason`.
std::string FitErrorMessage(size_t num_all_nodes,
                            const std::vector<std::pair<std::string, Status>>& statuses,
                            std::string_view absent_reason) {
  std::map<std::string, size_t> hist;
  for (const auto& [node, st] : statuses) {
    for (const auto& r : st.reasons()) ++hist[r];
  }
  if (statuses.size() < num_all_nodes) {
    hist[std::string(absent_reason)] += num_all_nodes - statuses.size();
  }
  return framework::NodesAvailableMessage(num_all_nodes, hist);
}

}  // namespace

bool TerminatingByPreemption(const api::Pod& p) {
  if (!p.metadata.deletion_timestamp) return false;
  for (const auto& c : p.status.conditions) {
    if (c.type == "DisruptionTarget") {
      return c.status == "True" && c.reason == "PreemptionByScheduler";
    }
  }
  return false;
}

// ---- PodDisruptionBudgets ----

// upstream filterPodsWithPDBViolation
// (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go, v1.20 and
// current), per pod of each unit, in the order given.
std::vector<std::vector<std::string>> PodDisruptionBudgetViolations(
    const std::vector<std::vector<const api::Pod*>>& units,
    const std::vector<api::PodDisruptionBudgetPtr>& pdbs) {
  // pdbsAllowed: a copy of each budget's status.disruptionsAllowed, decremented per matching
  // pod across all units.
  std::vector<int64_t> allowed;
  allowed.reserve(pdbs.size());
  // metav1.LabelSelectorAsSelector fails on an invalid selector; upstream then skips the
  // budget ("an invalid selector ... does not match the pod").
  std::vector<bool> usable;
  usable.reserve(pdbs.size());
  for (const auto& pdb : pdbs) {
    allowed.push_back(pdb->status.disruptions_allowed);
    usable.push_back(!pdb->spec.selector || api::ValidateLabelSelector(*pdb->spec.selector).ok());
  }
  std::vector<std::vector<std::string>> out(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    std::set<std::string> violated;
    for (const api::Pod* pod : units[u]) {
      // A pod with no labels matches no PDB.
      if (pod->metadata.labels.empty()) continue;
      for (size_t i = 0; i < pdbs.size(); ++i) {
        const api::PodDisruptionBudget& pdb = *pdbs[i];
        if (pdb.metadata.namespace_ != pod->metadata.namespace_) continue;
        if (!usable[i]) continue;
        // A nil selector (labels.Nothing()) matches nothing, and the scheduler skips an
        // empty one (labels.Everything(), selector.Empty()) as well -- in policy/v1 too,
        // although the disruption controller and the eviction API read an empty v1
        // selector as every pod of the namespace (see sim/disruption.h).
        if (!pdb.spec.selector || (pdb.spec.selector->match_labels.empty() &&
                                   pdb.spec.selector->match_expressions.empty())) {
          continue;
        }
        if (!api::LabelSelectorMatches(*pdb.spec.selector, pod->metadata.labels)) continue;
        // Listed in DisruptedPods: its eviction was processed by the API server already and
        // is counted in disruptionsAllowed; decrementing again would over-count.
        if (pdb.status.disrupted_pods.count(pod->metadata.name)) continue;
        if (--allowed[i] < 0) violated.insert(pdb.Key());
      }
    }
    out[u].assign(violated.begin(), violated.end());
  }
  return out;
}

// ---- args ----

framework::StatusOr<DefaultPreemptionArgs> ParseDefaultPreemptionArgs(framework::PluginArgs args) {
  DefaultPreemptionArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind, {kPercentage, kAbsolute}, &errs, &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  int64_t pct = out.min_candidate_nodes_percentage;
  int64_t abs = out.min_candidate_nodes_absolute;
  if (has_content) {
    bool ok =
        helper::ReadInt((*args)[std::string(kPercentage)], std::string(kPercentage), &pct, &errs);
    ok &= helper::ReadInt((*args)[std::string(kAbsolute)], std::string(kAbsolute), &abs, &errs);
    if (!ok) return helper::ArgsError(errs, kArgsKind);
  }
  // ValidateDefaultPreemptionArgs.
  if (pct < 0 || pct > 100) {
    errs.Invalid(std::string(kPercentage), pct, "not in valid range [0, 100]");
  }
  if (abs < 0) {
    errs.Invalid(std::string(kAbsolute), abs, "not in valid range [0, inf)");
  } else if (abs > INT32_MAX) {
    errs.Invalid(std::string(kAbsolute), abs, "must be a 32-bit integer");
  }
  if (pct == 0 && abs == 0) {
    errs.Invalid(std::string(kPercentage), pct,
                 "cannot be zero at the same time as minCandidateNodesAbsolute");
    errs.Invalid(std::string(kAbsolute), abs,
                 "cannot be zero at the same time as minCandidateNodesPercentage");
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  out.min_candidate_nodes_percentage = static_cast<int32_t>(pct);
  out.min_candidate_nodes_absolute = static_cast<int32_t>(abs);
  return out;
}

DefaultPreemption::DefaultPreemption(DefaultPreemptionArgs args, framework::Handle& handle)
    : args_(args),
      handle_(&handle),
      executor_(framework::PreemptionExecutorOf(handle, &own_executor_)) {}

framework::StatusOr<std::unique_ptr<framework::Plugin>> DefaultPreemption::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto parsed = ParseDefaultPreemptionArgs(args);
  if (!parsed.ok()) return parsed.status();
  return std::unique_ptr<framework::Plugin>(std::make_unique<DefaultPreemption>(parsed.value(), h));
}

// ---- gang bookkeeping for one preemption attempt ----

// Which victims belong to running gangs, and where every member of such a gang is. The
// index of the snapshot's pods by key is built only when the first running gang shows up.
class DefaultPreemption::Context {
 public:
  struct Member {
    const NodeInfo* node;  // the snapshot's NodeInfo holding the member
    PodInfoPtr pod;
  };
  struct Gang {
    bool eligible = true;  // every member has a lower priority than the preemptor
    std::vector<Member> members;
  };

  // Victims: `is_victim`, or (nullptr) the pods of a priority below `preemptor_priority`.
  Context(framework::Handle& h, int32_t preemptor_priority, const VictimFilter* is_victim)
      : h_(h),
        gangs_(h.Service<gang::PodGroupManager>()),
        queues_(h.Service<quota::SharedQueueManager>()),
        priority_(preemptor_priority),
        is_victim_(is_victim) {}

  // By priority, a pod still inside its queue's KAI preemptMinRuntime is no victim.
  bool IsVictim(const api::Pod& p) const {
    if (is_victim_ != nullptr) return (*is_victim_)(p);
    return h_.PriorityOf(p) < priority_ && (queues_ == nullptr || !queues_->PreemptProtected(p));
  }

  // The running gang of `pod` (with its key in *key), or nullptr for a pod that is not in
  // a running gang.
  // Thread-safe (the dry run evaluates nodes in parallel); the Gang stays valid for the
  // Context's life.
  const Gang* RunningGangOf(const api::Pod& pod, std::string* key) ABSL_LOCKS_EXCLUDED(mu_) {
    if (gangs_ == nullptr) return nullptr;
    auto ref = gangs_->RefPtrOf(pod);
    if (!ref) return nullptr;
    *key = ref->key;
    absl::MutexLock l(&mu_);
    auto it = cache_.find(ref->key);
    if (it == cache_.end()) it = cache_.emplace(ref->key, Load(ref->key, pod)).first;
    return it->second ? &*it->second : nullptr;
  }

 private:
  std::optional<Gang> Load(const std::string& gang_key, const api::Pod& pod)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!gangs_->Satisfied(gang_key)) return std::nullopt;
    auto info = gangs_->Info(gang_key);
    if (!info) return std::nullopt;
    BuildIndex();
    Gang g;
    bool has_pod = false;
    for (const auto& key : info->member_pods) {
      auto m = by_key_.find(key);
      if (m == by_key_.end()) continue;  // pending: not on a node, nothing to evict
      has_pod = has_pod || key == pod.Key();
      if (!IsVictim(m->second.pod->Pod())) g.eligible = false;
      g.members.push_back(m->second);
    }
    // The gang state lags the snapshot: treat the pod on its own.
    if (!has_pod) return std::nullopt;
    return g;
  }

  void BuildIndex() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (indexed_) return;
    indexed_ = true;
    for (const NodeInfo* ni : h_.SnapshotSharedLister().List()) {
      for (const auto& p : ni->pods()) by_key_.emplace(p->Pod().Key(), Member{ni, p});
    }
  }

  framework::Handle& h_;
  gang::PodGroupManager* gangs_;
  quota::SharedQueueManager* queues_;
  int32_t priority_;
  const VictimFilter* is_victim_;  // nullptr: by priority
  absl::Mutex mu_;
  bool indexed_ ABSL_GUARDED_BY(mu_) = false;
  std::unordered_map<std::string, Member> by_key_ ABSL_GUARDED_BY(mu_);
  // nullopt: not running. Node-based: a Gang's address survives rehashing.
  std::unordered_map<std::string, std::optional<Gang>> cache_ ABSL_GUARDED_BY(mu_);
};

// Pods removed or reprieved together: one pod, or every placed member of a running gang.
struct DefaultPreemption::Unit {
  std::vector<PodInfoPtr> local;                               // on the evaluated node
  std::vector<std::pair<const NodeInfo*, PodInfoPtr>> remote;  // gang members elsewhere
  const api::Pod* head = nullptr;  // the most important member, for ordering
};

// ---- helpers ----

api::Timestamp DefaultPreemption::StartTime(const api::Pod& p) const {
  // upstream GetPodStartTime: pods that have not started yet count as starting now.
  return p.status.start_time ? *p.status.start_time : handle_->GetClock().Now();
}

bool DefaultPreemption::MoreImportantPod(const api::Pod& a, const api::Pod& b) const {
  const int32_t pa = handle_->PriorityOf(a), pb = handle_->PriorityOf(b);
  if (pa != pb) return pa > pb;
  return StartTime(a) < StartTime(b);
}

std::vector<PodInfoPtr> DefaultPreemption::NominatedToAdd(const PodInfo& pod,
                                                          const NodeInfo& node) const {
  // upstream addNominatedPods: the pods nominated to the node with a priority at least the
  // preemptor's, other than the preemptor itself.
  std::vector<PodInfoPtr> nominated;
  if (auto view = handle_->NominatedPodsViewForNode(node)) {
    const int32_t prio = handle_->PriorityOf(pod.Pod());
    for (const auto& p : *view) {
      if (handle_->PriorityOf(p->Pod()) >= prio &&
          p->Pod().metadata.uid != pod.Pod().metadata.uid) {
        nominated.push_back(p);
      }
    }
  }
  return nominated;
}

Status DefaultPreemption::FitsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                const NodeInfo& node,
                                                const std::vector<PodInfoPtr>& nominated) {
  if (!nominated.empty()) {
    // First pass with the nominated pods added, then (for affinity) without them.
    NodeInfo with = node;
    auto state_with = state.Clone();
    for (const auto& p : nominated) {
      with.AddPod(p);
      Status s = handle_->RunPreFilterExtensionAddPod(*state_with, pod, p, with);
      if (!s.IsSuccess()) return s;
    }
    Status s = handle_->RunFilterPlugins(*state_with, pod, with);
    if (!s.IsSuccess()) return s;
  }
  return handle_->RunFilterPlugins(state, pod, node);
}

// ---- the algorithm ----

std::pair<bool, std::string> DefaultPreemption::PodEligibleToPreemptOthers(
    const PodInfo& pod, const Status& nominated_node_status) const {
  const api::Pod& p = pod.Pod();
  if (p.spec.preemption_policy == "Never") return {false, std::string(kNotEligibleNever)};
  const std::string& nominated = p.status.nominated_node_name;
  if (!nominated.empty()) {
    // The nominated node no longer suits the pod at all: preempt elsewhere.
    if (nominated_node_status.code() == Code::kUnschedulableAndUnresolvable) return {true, ""};
    if (const NodeInfo* ni = handle_->SnapshotSharedLister().Get(nominated)) {
      const int32_t prio = handle_->PriorityOf(p);
      for (const auto& v : ni->pods()) {
        if (handle_->PriorityOf(v->Pod()) < prio && TerminatingByPreemption(v->Pod())) {
          return {false, std::string(kNotEligibleTerminating)};
        }
      }
    }
  }
  return {true, ""};
}

int32_t DefaultPreemption::CalculateNumCandidates(int32_t num_nodes) const {
  int64_t n = static_cast<int64_t>(num_nodes) * args_.min_candidate_nodes_percentage / 100;
  if (n < args_.min_candidate_nodes_absolute) n = args_.min_candidate_nodes_absolute;
  if (n > num_nodes) n = num_nodes;
  return static_cast<int32_t>(n);
}

std::pair<int32_t, int32_t> DefaultPreemption::GetOffsetAndNumCandidates(int32_t num_nodes) {
  const auto offset = static_cast<int32_t>(handle_->Random(static_cast<uint64_t>(num_nodes)));
  return {offset, CalculateNumCandidates(num_nodes)};
}

std::vector<DefaultPreemption::Unit> DefaultPreemption::CollectVictimUnits(Context& ctx,
                                                                           const NodeInfo& node) {
  // Every pod of a lower priority (or that the caller's filter accepts) is a potential
  // victim; members of a running gang come as one unit with the gang's other placed
  // members, or not at all.
  std::vector<Unit> units;
  std::unordered_set<std::string> seen_gangs;
  for (const auto& pi : node.pods()) {
    if (!ctx.IsVictim(pi->Pod())) continue;
    Unit u;
    std::string gang_key;
    if (const Context::Gang* g = ctx.RunningGangOf(pi->Pod(), &gang_key)) {
      if (!seen_gangs.insert(gang_key).second || !g->eligible) continue;
      for (const auto& m : g->members) {
        if (m.node->name() == node.name()) {
          u.local.push_back(m.pod);
        } else {
          u.remote.emplace_back(m.node, m.pod);
        }
        if (u.head == nullptr || MoreImportantPod(m.pod->Pod(), *u.head)) u.head = &m.pod->Pod();
      }
    } else {
      u.local.push_back(pi);
      u.head = &pi->Pod();
    }
    units.push_back(std::move(u));
  }
  return units;
}

Status DefaultPreemption::SelectVictimsOnNode(Context& ctx, CycleState& state, const PodInfo& pod,
                                              NodeInfo& node,
                                              const std::vector<api::PodDisruptionBudgetPtr>& pdbs,
                                              const std::vector<PodInfoPtr>& nominated,
                                              Candidate* c) {
  auto remove_pod = [&](const PodInfoPtr& p) -> Status {
    if (!node.RemovePod(p->Pod())) {
      return Status::Error("pod " + p->Pod().Key() + " not found on node " + node.name());
    }
    return handle_->RunPreFilterExtensionRemovePod(state, pod, p, node);
  };
  auto add_pod = [&](const PodInfoPtr& p) -> Status {
    node.AddPod(p);
    return handle_->RunPreFilterExtensionAddPod(state, pod, p, node);
  };
  auto remove_unit = [&](const Unit& u) -> Status {
    for (const auto& p : u.local) {
      if (Status s = remove_pod(p); !s.IsSuccess()) return s;
    }
    for (const auto& [ni, p] : u.remote) {
      if (Status s = handle_->RunPreFilterExtensionRemovePod(state, pod, p, *ni); !s.IsSuccess()) {
        return s;
      }
    }
    return Status::Success();
  };
  auto add_unit = [&](const Unit& u) -> Status {
    for (const auto& p : u.local) {
      if (Status s = add_pod(p); !s.IsSuccess()) return s;
    }
    for (const auto& [ni, p] : u.remote) {
      if (Status s = handle_->RunPreFilterExtensionAddPod(state, pod, p, *ni); !s.IsSuccess()) {
        return s;
      }
    }
    return Status::Success();
  };

  std::vector<Unit> units = CollectVictimUnits(ctx, node);
  // Nothing to remove: the node's state would not change.
  if (units.empty()) return Status::UnschedulableAndUnresolvable(std::string(kErrReasonNoVictims));
  for (const auto& u : units) {
    if (Status s = remove_unit(u); !s.IsSuccess()) return s;
  }

  // If the pod does not fit even with every potential victim gone, the node is no
  // candidate. (As upstream, a pod failing for inter-pod affinity to a victim is not
  // worked around.)
  if (Status s = FitsWithNominatedPods(state, pod, node, nominated); !s.IsSuccess()) return s;

  // Reprieve as many units as possible, most important first.
  std::stable_sort(units.begin(), units.end(), [&](const Unit& a, const Unit& b) {
    return MoreImportantPod(*a.head, *b.head);
  });
  // PodDisruptionBudgets (upstream filterPodsWithPDBViolation, called once on every
  // potential victim sorted by MoreImportantPod): the units whose eviction
  // would take a budget below zero are reprieved first, so that they stay only when the
  // preemptor cannot fit otherwise; each of them that stays a victim is a violation.
  std::vector<std::vector<const api::Pod*>> unit_pods;
  unit_pods.reserve(units.size());
  for (const auto& u : units) {
    auto& v = unit_pods.emplace_back();
    for (const auto& p : u.local) v.push_back(&p->Pod());
    for (const auto& [ni, p] : u.remote) v.push_back(&p->Pod());
  }
  const auto violations = PodDisruptionBudgetViolations(unit_pods, pdbs);
  std::vector<size_t> order;  // violating units first, each group in importance order
  for (size_t i = 0; i < units.size(); ++i) {
    if (!violations[i].empty()) order.push_back(i);
  }
  const size_t num_violating = order.size();
  for (size_t i = 0; i < units.size(); ++i) {
    if (violations[i].empty()) order.push_back(i);
  }

  std::vector<PodInfoPtr>* victims = &c->victims;
  c->num_pdb_violations = 0;
  c->pdb_violations.clear();
  victims->clear();
  for (size_t k = 0; k < order.size(); ++k) {
    const Unit& u = units[order[k]];
    if (Status s = add_unit(u); !s.IsSuccess()) return s;
    if (FitsWithNominatedPods(state, pod, node, nominated).IsSuccess()) continue;  // reprieved
    if (Status s = remove_unit(u); !s.IsSuccess()) return s;
    victims->insert(victims->end(), u.local.begin(), u.local.end());
    for (const auto& [ni, p] : u.remote) victims->push_back(p);
    if (k >= num_violating) continue;
    c->num_pdb_violations += static_cast<int64_t>(unit_pods[order[k]].size());
    std::string names;
    for (const auto& key : violations[order[k]]) names += (names.empty() ? "" : ", ") + key;
    for (const api::Pod* p : unit_pods[order[k]]) c->pdb_violations[p->Key()] = names;
  }
  // Most important first, as current upstream SelectVictimsOnNode re-sorts the victims when
  // both PDB groups were non-empty (kubernetes PR #128307; v1.20 left the violating ones
  // first, so pickOneNodeForPreemption's Pods[0] could be a lower-priority violating
  // victim). Always sorting is the same for plain pods (each group is already in
  // importance order) and also orders a gang's members among other victims.
  std::stable_sort(victims->begin(), victims->end(), [&](const PodInfoPtr& a, const PodInfoPtr& b) {
    return MoreImportantPod(a->Pod(), b->Pod());
  });
  return Status::Success();
}

bool DefaultPreemption::PrepareMemo(const PodInfo& pod, int32_t priority,
                                    const std::vector<api::PodDisruptionBudgetPtr>& pdbs,
                                    const VictimFilter* is_victim) {
  const std::optional<uint64_t> epoch = handle_->ClusterObjectEpoch();
  const auto* queues = handle_->Service<quota::SharedQueueManager>();
  const auto* reservations = handle_->Service<gang::ReservationManager>();
  const framework::NodeInfoLister& lister = handle_->SnapshotSharedLister();
  const bool usable =
      is_victim == nullptr && epoch.has_value() && (queues == nullptr || !queues->HasQueues()) &&
      (reservations == nullptr || reservations->View() == nullptr) &&
      lister.HavePodsWithAffinityList().empty() &&
      lister.HavePodsWithRequiredAntiAffinityList().empty() && handle_->SameSignature(pod, pod);
  absl::MutexLock l(&memo_.mu);
  const bool same_key = usable && memo_.canonical != nullptr && memo_.priority == priority &&
                        memo_.epoch == *epoch && memo_.pdbs == pdbs &&
                        handle_->SameSignature(*memo_.canonical, pod);
  // Entries of NodeInfos that left the snapshot are never hit again: drop them all when
  // they outnumber the nodes.
  if (!same_key || memo_.nodes.size() > 2 * lister.List().size() + 16) memo_.nodes.clear();
  if (!usable) {
    memo_.canonical.reset();
    return false;
  }
  if (!same_key) {
    memo_.canonical = std::make_shared<PodInfo>(pod);
    memo_.priority = priority;
    memo_.epoch = *epoch;
    memo_.pdbs = pdbs;
  }
  return true;
}

bool DefaultPreemption::Memoizable(const NodeInfo& node) const {
  const auto* gangs = handle_->Service<gang::PodGroupManager>();
  const api::Timestamp now = handle_->GetClock().Now();
  for (const auto& p : node.pods()) {
    const api::Pod& pod = p->Pod();
    if (pod.status.start_time && *pod.status.start_time > now) return false;
    if (gangs != nullptr && gangs->RefPtrOf(pod) != nullptr) return false;
  }
  return true;
}

std::pair<int64_t, int64_t> DefaultPreemption::MemoHitsAndMisses() {
  absl::MutexLock l(&memo_.mu);
  return {memo_.hits, memo_.misses};
}

void DefaultPreemption::DryRunNode(Context& ctx, const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& src,
                                   const std::vector<api::PodDisruptionBudgetPtr>& pdbs, bool memo,
                                   NodeOutcome* r) {
  const std::string& uid = pod.Pod().metadata.uid;
  // The memo: an outcome kept for this NodeInfo at this generation with the same list of
  // nominated pods (the scheduler's cached list object; a list that names the preemptor
  // itself is never keyed on, as NominatedToAdd leaves the preemptor out).
  std::shared_ptr<const std::vector<PodInfoPtr>> view;
  bool keyable = false;
  if (memo) {
    view = handle_->NominatedPodsViewForNode(src);
    keyable = view == nullptr || std::none_of(view->begin(), view->end(), [&](const PodInfoPtr& p) {
                return p->Pod().metadata.uid == uid;
              });
  }
  if (keyable) {
    absl::ReaderMutexLock l(&memo_.mu);
    auto it = memo_.nodes.find(&src);
    if (it != memo_.nodes.end() && it->second.generation == src.generation() &&
        it->second.nominated == view) {
      r->s = it->second.status;
      r->c = it->second.candidate;
      r->hit = true;
      return;
    }
  }
  auto keep = [&] {
    if (!keyable || r->s.IsError() || !Memoizable(src)) return;
    r->store = true;
    r->generation = src.generation();
    r->nominated = std::move(view);
  };
  // Fast path, same outcome as SelectVictimsOnNode: a node without a victim (a
  // lower-priority pod) has none to remove; skip copying its NodeInfo and the CycleState.
  if (std::none_of(src.pods().begin(), src.pods().end(),
                   [&](const PodInfoPtr& p) { return ctx.IsVictim(p->Pod()); })) {
    r->s = Status::UnschedulableAndUnresolvable(std::string(kErrReasonNoVictims));
    keep();
    return;
  }
  // The nominated pods are looked up once per node, through the snapshot NodeInfo (whose
  // lookup the scheduler caches), not through the copy.
  const std::vector<PodInfoPtr> nominated = NominatedToAdd(pod, src);
  NodeInfo node = src;
  auto state_copy = state.Clone();
  r->s = SelectVictimsOnNode(ctx, *state_copy, pod, node, pdbs, nominated, &r->c);
  if (r->s.IsSuccess() && r->c.victims.empty()) {
    r->s = Status::Error("expected at least one victim pod on node \"" + node.name() + "\"");
  }
  r->c.node = node.name();
  keep();
}

std::vector<Candidate> DefaultPreemption::DryRunPreemption(
    const CycleState& state, const PodInfo& pod,
    const std::vector<const NodeInfo*>& potential_nodes, int32_t offset, int32_t num_candidates,
    std::vector<std::pair<std::string, Status>>* node_statuses, std::vector<std::string>* errors,
    const VictimFilter* is_victim) {
  // Upstream evaluates nodes in parallel and stops once enough are found, so which nodes
  // it evaluates depends on timing. Here nodes are evaluated in blocks (in parallel through
  // the Handle's Parallelizer when there is one) and the results are taken in rotation
  // order, stopping where a one-at-a-time run stops: the result is that of parallelism 1,
  // whatever the parallelism (a block may evaluate a few nodes past the stop; they are
  // dropped).
  const int32_t priority = handle_->PriorityOf(pod.Pod());
  Context ctx(*handle_, priority, is_victim);
  const std::vector<api::PodDisruptionBudgetPtr> pdbs = handle_->PodDisruptionBudgets();
  const bool memo = PrepareMemo(pod, priority, pdbs, is_victim);
  const size_t cap = num_candidates > 0 ? static_cast<size_t>(num_candidates) : 0;
  std::vector<Candidate> non_violating, violating;
  const size_t n = potential_nodes.size();
  framework::Parallelizer* par = handle_->GetParallelizer();
  // A caller's victim filter (queue reclaim) is not required to be thread-safe.
  const bool parallel = par != nullptr && par->parallelism() > 1 && is_victim == nullptr;
  std::vector<NodeOutcome> results;
  auto evaluate = [&](const NodeInfo& src, NodeOutcome* r) {
    DryRunNode(ctx, state, pod, src, pdbs, memo, r);
  };
  // After a block: keeps its misses' outcomes (before the results are moved out).
  auto remember = [&](size_t first, size_t count) {
    if (!memo) return;
    absl::MutexLock l(&memo_.mu);
    for (size_t k = 0; k < count; ++k) {
      NodeOutcome& r = results[k];
      if (r.hit) ++memo_.hits;
      if (!r.store) continue;
      ++memo_.misses;
      MemoEntry& e = memo_.nodes[potential_nodes[(static_cast<size_t>(offset) + first + k) % n]];
      e.generation = r.generation;
      e.nominated = std::move(r.nominated);
      e.status = r.s;
      e.candidate = r.c;
    }
  };
  const size_t block =
      parallel ? std::max<size_t>(cap, 4 * static_cast<size_t>(par->parallelism())) : 1;
  for (size_t first = 0; first < n; first += block) {
    const size_t count = std::min(block, n - first);
    results.assign(count, NodeOutcome{});
    auto node_at = [&](size_t k) -> const NodeInfo& {
      return *potential_nodes[(static_cast<size_t>(offset) + first + k) % n];
    };
    if (count == 1) {
      evaluate(node_at(0), &results[0]);
    } else {
      framework::ParallelChunks(par, count, 1, [&](size_t, size_t b, size_t e) {
        for (size_t k = b; k < e; ++k) evaluate(node_at(k), &results[k]);
      });
    }
    remember(first, count);
    for (size_t k = 0; k < count; ++k) {
      NodeOutcome& r = results[k];
      if (r.s.IsSuccess()) {
        auto& list = r.c.num_pdb_violations == 0 ? non_violating : violating;
        if (list.size() < cap) list.push_back(std::move(r.c));
        if (!non_violating.empty() && non_violating.size() + violating.size() >= cap) {
          for (auto& c : violating) non_violating.push_back(std::move(c));
          return non_violating;
        }
        continue;
      }
      if (r.s.IsError()) errors->push_back(r.s.Message());
      node_statuses->emplace_back(node_at(k).name(), std::move(r.s));
    }
  }
  for (auto& c : violating) non_violating.push_back(std::move(c));
  return non_violating;
}

const Candidate* DefaultPreemption::SelectCandidate(
    const std::vector<Candidate>& candidates) const {
  if (candidates.empty()) return nullptr;
  if (candidates.size() == 1) return &candidates[0];
  // upstream pickOneNodeForPreemption (pkg/scheduler/framework/preemption/preemption.go;
  // v1.20: default_preemption.go): the first score function with a single best candidate
  // decides; ties fall through, and the first remaining candidate wins.
  using ScoreFn = std::function<int64_t(const Candidate&)>;
  const std::vector<ScoreFn> score_fns = {
      // Fewest PDB violations.
      [](const Candidate& c) { return -c.num_pdb_violations; },
      // Lowest priority of the most important victim.
      [this](const Candidate& c) {
        return -static_cast<int64_t>(handle_->PriorityOf(c.victims[0]->Pod()));
      },
      // Smallest sum of priorities, each shifted by 2^31 so that more negative-priority
      // victims never look better than fewer.
      [this](const Candidate& c) {
        int64_t sum = 0;
        for (const auto& v : c.victims) {
          sum += static_cast<int64_t>(handle_->PriorityOf(v->Pod())) + (int64_t{INT32_MAX} + 1);
        }
        return -sum;
      },
      // Fewest victims.
      [](const Candidate& c) { return -static_cast<int64_t>(c.victims.size()); },
      // Latest start time of the highest-priority victims (upstream
      // GetEarliestPodStartTime: the earliest start among the victims of the top priority).
      [this](const Candidate& c) {
        api::Timestamp earliest = StartTime(c.victims[0]->Pod());
        int32_t max_prio = handle_->PriorityOf(c.victims[0]->Pod());
        for (const auto& v : c.victims) {
          const int32_t p = handle_->PriorityOf(v->Pod());
          if (p == max_prio) {
            earliest = std::min(earliest, StartTime(v->Pod()));
          } else if (p > max_prio) {
            max_prio = p;
            earliest = StartTime(v->Pod());
          }
        }
        return static_cast<int64_t>(earliest);
      },
  };
  std::vector<const Candidate*> remaining;
  remaining.reserve(candidates.size());
  for (const auto& c : candidates) remaining.push_back(&c);
  for (const auto& f : score_fns) {
    std::vector<const Candidate*> best;
    int64_t max_score = INT64_MIN;
    for (const Candidate* c : remaining) {
      const int64_t score = f(*c);
      if (score > max_score) {
        max_score = score;
        best.clear();
      }
      if (score == max_score) best.push_back(c);
    }
    if (best.size() == 1) return best[0];
    remaining = std::move(best);
  }
  return remaining[0];
}

Status DefaultPreemption::PrepareCandidate(const Candidate& c, const PodInfo& pod) {
  const api::Pod& preemptor = pod.Pod();
  framework::PreemptionRequest req;
  req.plugin = std::string(kName);
  req.preemptors.push_back(std::make_shared<PodInfo>(pod));
  req.disruption_message = framework::DisruptionTargetMessage(preemptor.spec.scheduler_name, "pod");
  for (const auto& victim : c.victims) {
    const api::Pod& v = victim->Pod();
    std::string msg = "Preempted by pod " + preemptor.metadata.uid + " on node " + c.node;
    if (auto it = c.pdb_violations.find(v.Key()); it != c.pdb_violations.end()) {
      msg += std::string(kPDBViolationNote) + it->second;
    }
    req.victims.push_back({victim, std::move(msg)});
  }
  req.num_pdb_violations = c.num_pdb_violations;
  // Lower-priority pods nominated to this node may no longer fit there: their nomination
  // is cleared so that they look for another place sooner. (Upstream skips pods whose
  // cached object shows no nomination; the nominator here may hold a pod object older than
  // its nomination, so the patch is always sent; it is a no-op for a pod that is not
  // nominated.)
  const int32_t prio = handle_->PriorityOf(preemptor);
  for (const auto& p : handle_->NominatedPodsForNode(c.node)) {
    if (handle_->PriorityOf(p->Pod()) < prio) req.clear_nominations.push_back(p);
  }
  req.reject_if_waiting = framework::RejectIfWaitingIn(*handle_);
  executor_->Execute(std::move(req));
  return Status::Success();
}

Status DefaultPreemption::PodGroupPostFilter(framework::CycleState& state,
                                             const framework::QueuedPodGroupInfo& group,
                                             const framework::PodGroupAttempt& attempt,
                                             framework::PodGroupFeasibility& feasibility,
                                             framework::PodGroupPostFilterResult* result) {
  MarkVictimPoliciesSearched(state);
  return PodGroupPostFilterStatus(
      PodGroupPreemption(*handle_, *executor_, group, attempt, feasibility).Run(true), result);
}

Status DefaultPreemption::PreEnqueue(const PodInfo& pod) {
  if (executor_->IsPodRunningPreemption(pod.Pod().metadata.uid)) {
    return Status::UnschedulableAndUnresolvable(
        "waiting for the preemption for this pod to be finished");
  }
  return Status::Success();
}

std::vector<framework::ClusterEventWithHint> DefaultPreemption::EventsToRegister() const {
  framework::PreemptionExecutor* ex = executor_;
  return {{{framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete"},
           [ex](const api::Pod& pod, const framework::EventObjects&) {
             return ex->IsPodRunningPreemption(pod.metadata.uid)
                        ? framework::QueueingHint::kQueueSkip
                        : framework::QueueingHint::kQueue;
           }}};
}

std::vector<const NodeInfo*> PotentialNodes(const std::vector<const NodeInfo*>& all,
                                            const framework::NodeToStatus& filtered) {
  std::vector<const NodeInfo*> potential;
  if (filtered.absent_nodes_code == Code::kUnschedulable) {
    std::unordered_set<std::string_view> listed;
    for (const auto& [ni, st] : filtered.statuses) {
      if (ni != nullptr) listed.insert(ni->name());
    }
    for (const NodeInfo* ni : all) {
      if (!listed.count(ni->name())) potential.push_back(ni);
    }
  }
  for (const auto& [ni, st] : filtered.statuses) {
    if (ni != nullptr && st.code() == Code::kUnschedulable) potential.push_back(ni);
  }
  return potential;
}

Status DefaultPreemption::FindCandidate(CycleState& state, const PodInfo& pod,
                                        const framework::NodeToStatus& filtered,
                                        const VictimFilter* is_victim, Candidate* out) {
  const auto& all = handle_->SnapshotSharedLister().List();
  if (all.empty()) return Status::Error("no nodes available");
  const std::vector<const NodeInfo*> potential = PotentialNodes(all, filtered);
  std::vector<std::pair<std::string, Status>> node_statuses;
  std::vector<std::string> errors;
  std::vector<Candidate> candidates;
  if (!potential.empty()) {
    auto [offset, num] = GetOffsetAndNumCandidates(static_cast<int32_t>(potential.size()));
    candidates =
        DryRunPreemption(state, pod, potential, offset, num, &node_statuses, &errors, is_victim);
  }
  if (candidates.empty() && !errors.empty()) return Status::Error(Aggregate(errors));
  if (candidates.empty()) {
    return Status::Unschedulable(FitErrorMessage(all.size(), node_statuses, kErrReasonNotHelpful));
  }
  // 3) The extenders that support preemption narrow the candidates.
  if (Status s = CallExtenders(pod, &candidates); !s.IsSuccess()) return s;
  const Candidate* best = SelectCandidate(candidates);
  if (best == nullptr || best->node.empty()) {
    return Status::Unschedulable("no candidate node for preemption");
  }
  *out = *best;
  return Status::Success();
}

Status DefaultPreemption::CallExtenders(const PodInfo& pod, std::vector<Candidate>* candidates) {
  const auto* list = handle_->Service<framework::ExtenderList>();
  if (list == nullptr || list->extenders.empty() || candidates->empty()) return Status::Success();
  std::map<std::string, const Candidate*> by_node;
  framework::ExtenderVictimsMap victims;
  for (const Candidate& c : *candidates) {
    by_node[c.node] = &c;
    victims[c.node] = framework::ExtenderVictims{c.victims, c.num_pdb_violations};
  }
  for (framework::Extender* ext : list->extenders) {
    if (!ext->SupportsPreemption() || !ext->IsInterested(*pod.pod)) continue;
    framework::ExtenderVictimsMap out;
    api::Status s =
        ext->ProcessPreemption(*pod.pod, victims, handle_->SnapshotSharedLister(), &out);
    if (!s.ok()) {
      if (ext->IsIgnorable()) continue;  // upstream: "Skipped extender as it returned error"
      return Status::Error(std::string(s.message()));
    }
    for (auto it = out.begin(); it != out.end();) {
      if (!it->second.pods.empty()) {
        ++it;
      } else if (ext->IsIgnorable()) {
        it = out.erase(it);
      } else {
        return Status::Error("expected at least one victim pod on node \"" + it->first + "\"");
      }
    }
    victims = std::move(out);
    if (victims.empty()) break;
  }
  std::vector<Candidate> next;
  for (auto& [node, v] : victims) {
    Candidate c;
    c.node = node;
    c.victims = std::move(v.pods);
    c.num_pdb_violations = v.num_pdb_violations;
    // The budgets a kept victim violates, as the dry run found them.
    if (auto it = by_node.find(node); it != by_node.end()) {
      for (const auto& p : c.victims) {
        auto pv = it->second->pdb_violations.find(p->pod->Key());
        if (pv != it->second->pdb_violations.end()) c.pdb_violations.insert(*pv);
      }
    }
    next.push_back(std::move(c));
  }
  *candidates = std::move(next);
  return Status::Success();
}

Status DefaultPreemption::PostFilter(CycleState& state, const PodInfo& pod,
                                     const framework::NodeToStatus& filtered,
                                     framework::PostFilterResult* result) {
  auto preempt = [&]() -> Status {
    // 1) Is the pod eligible to preempt?
    const std::string& nominated = pod.Pod().status.nominated_node_name;
    Status nominated_status(filtered.absent_nodes_code);
    for (const auto& [ni, st] : filtered.statuses) {
      if (ni != nullptr && ni->name() == nominated) {
        nominated_status = st;
        break;
      }
    }
    if (auto [ok, msg] = PodEligibleToPreemptOthers(pod, nominated_status); !ok) {
      return Status::Unschedulable(std::move(msg));
    }

    // 2) Candidates, from the nodes whose rejection preemption may resolve; 3) the best.
    Candidate best;
    if (Status s = FindCandidate(state, pod, filtered, nullptr, &best); !s.IsSuccess()) {
      // Clears a stale nomination (upstream NominatedNodeName "" in override mode).
      if (s.IsRejected()) result->nominated_node_name.clear();
      return s;
    }
    // 4) Make room on it.
    if (Status s = PrepareCandidate(best, pod); !s.IsSuccess()) return s;
    result->nominated_node_name = best.node;
    return Status::Success();
  };
  Status s = preempt();
  executor_->RecordAttempt(kName, framework::CodeName(s.code()));
  if (s.IsSuccess()) return s;
  const std::string msg = s.Message();
  if (msg.empty()) return s;
  return Status(s.code(), "preemption: " + msg);
}

}  // namespace phalanx::plugins::defaultpreemption
