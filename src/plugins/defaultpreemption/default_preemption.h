// DefaultPreemption: the PostFilter plugin that evicts lower-priority pods so that a pod
// that fits nowhere can be scheduled (upstream
// pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and the
// Evaluator of pkg/scheduler/framework/preemption/preemption.go, synchronous preemption).
//
// PostFilter, when no node passed Filter:
//  1. PodEligibleToPreemptOthers: a pod with preemptionPolicy Never does not preempt;
//     neither does a pod whose nominated node (from an earlier preemption) still has a
//     lower-priority victim terminating by preemption (deletionTimestamp and
//     DisruptionTarget=True/PreemptionByScheduler), unless that node is now
//     UnschedulableAndUnresolvable for it.
//  2. Candidates come only from nodes whose Filter status is Unschedulable (never
//     UnschedulableAndUnresolvable, nor nodes absent from the status map unless their
//     absent code is Unschedulable). They are dry-run from a random offset
//     (Handle::Random) in rotation until max(numNodes * minCandidateNodesPercentage / 100,
//     minCandidateNodesAbsolute) (capped at numNodes) candidates were found and at least
//     one of them violates no PodDisruptionBudget (Handle::PodDisruptionBudgets(), read
//     once per attempt; see PodDisruptionBudgetViolations).
//  3. SelectVictimsOnNode, on a copy of the NodeInfo and a clone of the CycleState:
//     remove every lower-priority pod (PreFilter RemovePod extensions), check that the pod
//     fits (Filter, with higher-or-equal-priority nominated pods added as upstream's
//     RunFilterPluginsWithNominatedPods does), then reprieve as many pods as possible,
//     PDB-violating ones first, most important (highest priority, then earliest start)
//     first.
//  4. pickOneNodeForPreemption: fewest PDB violations, then lowest highest-victim
//     priority, smallest sum of (priority + 2^31), fewest victims, latest start time of
//     the highest-priority victims, then the first candidate.
//  5. prepareCandidate, asynchronously as upstream since 1.33 (KEP-4832,
//     prepareCandidateAsync; framework/preemption_executor.h): waiting (Permit) victims are
//     rejected, the others get the DisruptionTarget condition and are deleted, off the
//     scheduling thread; each gets a "Preempted" event ("Preempted by pod <uid> on node
//     <node>"); lower-priority pods nominated to the node lose their nomination. The result
//     nominates the node for the preemptor at once. Until the eviction is done, PreEnqueue
//     keeps the preemptor out of activeQ: "waiting for the preemption for this pod to be
//     finished". A failed API call spares the remaining victims, is reported (log, Warning
//     event "FailedPreemption" on the preemptor) and activates the preemptor.
// Dry-run memo (Phalanx; no upstream counterpart, same results). Between two preemptors of
// one pod signature (Handle::SameSignature, equal priority) most nodes do not change, and
// a node's dry-run outcome -- no candidate with a status, or a candidate with its victims
// and PDB violations -- is a function of the preemptor's signature, that node's NodeInfo,
// the pods nominated to it, the PodDisruptionBudgets and the cluster objects. So each
// node's outcome is kept and reused while all of these are unchanged: the same NodeInfo
// object at the same generation (any pod or node change moves it), the same list object of
// nominated pods (Handle::NominatedPodsViewForNode; the scheduler makes a new one when the
// node's nominations change; one naming the preemptor is not used), the same budget
// objects, the same
// Handle::ClusterObjectEpoch and a signature-equal preemptor of the same priority. Only
// where a node's outcome cannot depend on other nodes or on time: off for queue reclaim
// (`is_victim`), with queues (KAI preemptMinRuntime reads the clock), with a gang
// reservation (gang::ReservationManager), while any pod in the snapshot has (anti-)affinity
// terms (InterPodAffinity reads other nodes), for an unsignable preemptor (the signature
// excludes topology spread constraints, volumes and claims read across nodes), and for a
// node holding a gang member or a pod whose start time is in the future (victim order
// compares it with now). The order of evaluation, the random offset, numCandidates and the
// chosen candidate are those without the memo.
//
// Failures read as upstream's: "preemption: 0/N nodes are available: 2 No preemption
// victims found for incoming pod, 1 Preemption is not helpful for scheduling." (the
// scheduler appends its own "." after the PostFilter message, as upstream does).
//
// Gangs (Phalanx extension). A victim that belongs to a running gang (one that
// gang::DefaultPodGroupManager::Satisfied reports) is never split from its gang:
//  - the gang is one victim unit: every member of the gang that is on a node (bound or
//    assumed), on this node or any other, is removed together or reprieved together, and
//    when the unit is chosen all of them are deleted (waiting members are rejected);
//  - the unit is eligible only if every such member has a lower priority than the
//    preemptor; otherwise none of its members is a victim;
//  - removing the unit also removes its members on other nodes from the PreFilter state
//    (RemovePod extensions with that member's node), so spreading/affinity counts see the
//    whole gang gone; only members on the evaluated node free room there. A gang whose
//    removal (together with every other eligible victim) still does not let the preemptor
//    fit yields no candidate, and a gang whose removal is not needed is reprieved whole;
//  - candidates count every member of a chosen gang as a victim: the highest priority,
//    sum of priorities, number of victims and start times are taken over the whole gang;
//  - PodDisruptionBudgets see each member: the unit is PDB-violating when some member's
//    eviction violates a budget, and a violating unit that stays a victim adds all its
//    members to num_pdb_violations.
// Members of gangs that are not running (still gathering, or not in a gang) are ordinary
// victims, as upstream.
//
// Args (DefaultPreemptionArgs, kubescheduler.config.k8s.io/v1):
//   minCandidateNodesPercentage: int in [0, 100]   (default 10)
//   minCandidateNodesAbsolute:   int >= 0          (default 100)
//   not both 0.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/podgroup.h"
#include "framework/preemption_executor.h"
#include "framework/registry.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::plugins::defaultpreemption {

inline constexpr std::string_view kErrReasonNoVictims =
    "No preemption victims found for incoming pod";
inline constexpr std::string_view kErrReasonNotHelpful = "Preemption is not helpful for scheduling";
inline constexpr std::string_view kNotEligibleNever = "not eligible due to preemptionPolicy=Never.";
inline constexpr std::string_view kNotEligibleTerminating =
    "not eligible due to a terminating pod on the nominated node.";

// DefaultPreemptionArgs after defaulting.
struct DefaultPreemptionArgs {
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

// Decodes, defaults and validates (nullptr = defaults). Errors, e.g.
// "DefaultPreemptionArgs: minCandidateNodesPercentage: Invalid value: 101: not in valid
// range [0, 100]".
framework::StatusOr<DefaultPreemptionArgs> ParseDefaultPreemptionArgs(framework::PluginArgs args);

// Appended to the "Preempted" event message of a victim whose eviction violates a
// PodDisruptionBudget, followed by the budgets ("ns/name", comma-separated). Upstream's
// message has no such note; Phalanx adds it so that a violation is visible on the victim
// (the simulator counts these events).
inline constexpr std::string_view kPDBViolationNote = "; violates PodDisruptionBudget ";

// A node where the preemptor fits once `victims` are gone (upstream Candidate).
struct Candidate {
  std::string node;
  std::vector<framework::PodInfoPtr> victims;  // most important first
  // Victims whose eviction violates a PodDisruptionBudget (upstream
  // Victims.NumPDBViolations), and for each such victim (by namespace/name) the budgets it
  // violates, "ns/name" joined with ", ".
  int64_t num_pdb_violations = 0;
  std::map<std::string, std::string> pdb_violations;
};

// upstream filterPodsWithPDBViolation (default_preemption.go), over victim units in
// reprieve order (a unit: one pod, or every placed member of a running gang). For each
// unit, the budgets ("ns/name", sorted) that evicting it, after every unit before it, takes
// below zero: a PDB of the pod's namespace whose selector matches the pod's labels (a pod
// without labels, a nil or empty selector -- also in policy/v1 -- and an invalid selector
// match nothing) and that does not list the pod's name in status.disruptedPods (its
// eviction was already counted) has its status.disruptionsAllowed decremented once per such
// pod; the pod violates it when the count drops below 0. An empty list: the unit violates
// no budget. The caller passes units most important first, as upstream sorts
// potentialVictims with MoreImportantPod before calling filterPodsWithPDBViolation.
// spec.unhealthyPodEvictionPolicy is not read, as upstream's scheduler does not read it
// (checked against default_preemption.go of v1.20 and of current master, and
// pkg/scheduler/framework/preemption/preemption.go, which only lists the budgets in
// getPodDisruptionBudgets): the policy governs the eviction API
// (pkg/registry/core/pod/storage/eviction.go), and preemption deletes its victims directly.
std::vector<std::vector<std::string>> PodDisruptionBudgetViolations(
    const std::vector<std::vector<const api::Pod*>>& units,
    const std::vector<api::PodDisruptionBudgetPtr>& pdbs);

// The nodes where evicting pods may help (upstream nodesWherePreemptionMightHelp): those of
// `all` whose Filter status in `filtered` is Unschedulable, and those absent from it when
// its absent-node code is Unschedulable; never UnschedulableAndUnresolvable ones. Order:
// the absent nodes in `all`'s order, then the listed ones in `filtered`'s.
std::vector<const framework::NodeInfo*> PotentialNodes(
    const std::vector<const framework::NodeInfo*>& all, const framework::NodeToStatus& filtered);

// Whether a pod on a node may be evicted for the preemptor (PostFilter: a priority lower
// than the preemptor's; queue reclaim: a pod of a queue above its deserved share).
using VictimFilter = std::function<bool(const api::Pod&)>;

// upstream podTerminatingByPreemption (pkg/scheduler/framework/preemption/preemption.go):
// `p` is being deleted and carries DisruptionTarget=True with reason PreemptionByScheduler,
// i.e. it is a victim of an earlier preemption still terminating. Read by DefaultPreemption
// and by the PodGroup preemption and starvation eviction of src/scheduler.
bool TerminatingByPreemption(const api::Pod& p);

class DefaultPreemption final : public framework::PostFilterPlugin,
                                public framework::PodGroupPostFilterPlugin,
                                public framework::PreEnqueuePlugin,
                                public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";

  // Evicts through the scheduler's framework::PreemptionExecutor service, or through an
  // inline one of its own on handle.Client() when the handle has none (unit tests).
  DefaultPreemption(DefaultPreemptionArgs args, framework::Handle& handle);

  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }
  const DefaultPreemptionArgs& args() const { return args_; }

  // Success with result->nominated_node_name set, or Unschedulable / Error with a message
  // prefixed "preemption: ".
  framework::Status PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeToStatus& filtered,
                               framework::PostFilterResult* result) override;

  // Gang preemption (podgroup_preemption.h): lower-priority victims, with the units of the
  // profile's victim policies (queue reclaim), for the whole group, through the feasibility
  // callback. Success when victims are being evicted (each member nominated); Unschedulable
  // with "preemption: ..." when it searched or may not preempt; Skip when there is nothing
  // to do or say.
  framework::Status PodGroupPostFilter(framework::CycleState& state,
                                       const framework::QueuedPodGroupInfo& group,
                                       const framework::PodGroupAttempt& attempt,
                                       framework::PodGroupFeasibility& feasibility,
                                       framework::PodGroupPostFilterResult* result) override;

  // UnschedulableAndUnresolvable "waiting for the preemption for this pod to be finished"
  // while this pod's victims are being evicted (upstream DefaultPreemption.PreEnqueue).
  framework::Status PreEnqueue(const framework::PodInfo& pod) override;
  // Assigned-pod deletions: a pod gated by PreEnqueue is queued once its preemption is no
  // longer running (upstream registers the event with a hint of its own; the executor also
  // releases the gate when the eviction ends).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // PostFilter's steps 2-4 (see the header comment) for every caller: the candidate nodes
  // from `filtered` (those whose status is Unschedulable), the per-node dry run
  // (SelectVictimsOnNode: every victim of the node removed, Filter re-run with the
  // nominated pods, the victims reprieved most important first) and the best node
  // (SelectCandidate), with victims chosen by `is_victim` (nullptr: a priority lower than
  // `pod`'s, PostFilter's rule). A running gang is a victim only whole, when every placed
  // member passes `is_victim`. Queue reclaim (src/plugins/queues) uses it so that a single
  // pod evicts only where it then passes Filter. Evicts nothing (PrepareCandidate does).
  // Returns Success with *out filled; Unschedulable with upstream's message ("0/N nodes are
  // available: 2 No preemption victims found for incoming pod, 1 Preemption is not helpful
  // for scheduling") when no node would let the pod fit; Error with the plugins' errors.
  framework::Status FindCandidate(framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::NodeToStatus& filtered,
                                  const VictimFilter* is_victim, Candidate* out);

  // ---- the steps, exposed for tests (upstream exports them as well) ----

  // (eligible, reason when not). `nominated_node_status` is the Filter status of the pod's
  // nominated node.
  std::pair<bool, std::string> PodEligibleToPreemptOthers(
      const framework::PodInfo& pod, const framework::Status& nominated_node_status) const;
  // max(num_nodes * percentage / 100, absolute), at most num_nodes.
  int32_t CalculateNumCandidates(int32_t num_nodes) const;
  // (Handle::Random(num_nodes), CalculateNumCandidates(num_nodes)).
  std::pair<int32_t, int32_t> GetOffsetAndNumCandidates(int32_t num_nodes);
  // Dry-runs preemption on potential_nodes[(offset + i) % n] in order until enough
  // candidates were found (see the header comment); candidates that violate no PDB come
  // first. With a Parallelizer of parallelism > 1, nodes are evaluated in blocks of
  // max(numCandidates, 4 x parallelism) in parallel and taken in order: the same result as
  // one at a time. Nodes that yield no candidate get their status in *node_statuses; the
  // messages of Error statuses are appended to *errors. Victims: `is_victim` (nullptr: the
  // pods of a lower priority than `pod`).
  std::vector<Candidate> DryRunPreemption(
      const framework::CycleState& state, const framework::PodInfo& pod,
      const std::vector<const framework::NodeInfo*>& potential_nodes, int32_t offset,
      int32_t num_candidates, std::vector<std::pair<std::string, framework::Status>>* node_statuses,
      std::vector<std::string>* errors, const VictimFilter* is_victim = nullptr);
  // The best candidate by pickOneNodeForPreemption's criteria; nullptr when empty.
  const Candidate* SelectCandidate(const std::vector<Candidate>& candidates) const;
  // Dry-run memo statistics (see the header comment): nodes whose outcome was reused, and
  // nodes evaluated while the memo was on.
  std::pair<int64_t, int64_t> MemoHitsAndMisses() ABSL_LOCKS_EXCLUDED(memo_.mu);
  // upstream callExtenders (preemption.go): every extender with a preemptVerb interested in
  // `pod` gets the candidates (node -> victims) in turn and returns the ones it keeps, with
  // its victims; an ignorable extender's error skips it, another's is an Error. A node
  // returned without victims is an error ("expected at least one victim pod on node") or,
  // from an ignorable extender, dropped. The extender's victims are taken as returned (a
  // running gang's members it leaves out stay).
  framework::Status CallExtenders(const framework::PodInfo& pod,
                                  std::vector<Candidate>* candidates);
  // Evicts the candidate's victims and clears lower-priority nominations on its node.
  framework::Status PrepareCandidate(const Candidate& c, const framework::PodInfo& pod);

 private:
  class Context;
  struct Unit;
  // Fills c->victims, c->num_pdb_violations and c->pdb_violations (not c->node).
  // `nominated`: NominatedToAdd(pod, node), looked up once by the caller.
  framework::Status SelectVictimsOnNode(Context& ctx, framework::CycleState& state,
                                        const framework::PodInfo& pod, framework::NodeInfo& node,
                                        const std::vector<api::PodDisruptionBudgetPtr>& pdbs,
                                        const std::vector<framework::PodInfoPtr>& nominated,
                                        Candidate* c);
  // The victims of `node` (Context::IsVictim) as units (a running gang's members together).
  std::vector<Unit> CollectVictimUnits(Context& ctx, const framework::NodeInfo& node);
  // The pods nominated to `node` that upstream's addNominatedPods adds for `pod`: priority
  // (PriorityOf) at least the pod's, other than the pod itself, in the nominator's order.
  std::vector<framework::PodInfoPtr> NominatedToAdd(const framework::PodInfo& pod,
                                                    const framework::NodeInfo& node) const;
  // Filter on `node` as if the `nominated` pods (NominatedToAdd) were running there, then
  // without them (upstream RunFilterPluginsWithNominatedPods).
  framework::Status FitsWithNominatedPods(const framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node,
                                          const std::vector<framework::PodInfoPtr>& nominated);
  // upstream util.MoreImportantPod: higher priority, then earlier start time.
  bool MoreImportantPod(const api::Pod& a, const api::Pod& b) const;
  api::Timestamp StartTime(const api::Pod& p) const;

  // The dry-run memo (see the header comment): per node, the outcome for preemptors of
  // `canonical`'s signature.
  struct MemoEntry {
    int64_t generation = 0;  // the NodeInfo's generation then
    // Handle::NominatedPodsViewForNode then (the list object; held, so that its address
    // is not reused), which did not name the preemptor.
    std::shared_ptr<const std::vector<framework::PodInfoPtr>> nominated;
    framework::Status status;  // the outcome: not Success ...
    Candidate candidate;       // ... or Success with this candidate
  };
  struct Memo {
    absl::Mutex mu;
    framework::PodInfoPtr canonical ABSL_GUARDED_BY(mu);  // nullptr: empty
    int32_t priority ABSL_GUARDED_BY(mu) = 0;
    uint64_t epoch ABSL_GUARDED_BY(mu) = 0;
    std::vector<api::PodDisruptionBudgetPtr> pdbs ABSL_GUARDED_BY(mu);
    std::unordered_map<const framework::NodeInfo*, MemoEntry> nodes ABSL_GUARDED_BY(mu);
    int64_t hits ABSL_GUARDED_BY(mu) = 0;
    int64_t misses ABSL_GUARDED_BY(mu) = 0;
  };
  // Whether this dry run may use the memo; resets it when its key (signature, priority,
  // epoch, budgets) no longer matches `pod`.
  bool PrepareMemo(const framework::PodInfo& pod, int32_t priority,
                   const std::vector<api::PodDisruptionBudgetPtr>& pdbs,
                   const VictimFilter* is_victim) ABSL_LOCKS_EXCLUDED(memo_.mu);
  // One node's dry run (DryRunPreemption): Success with victims in c, or the node's
  // status; from the memo when `memo` and the node's entry is valid (hit), else computed
  // and marked for the memo when it may be kept (store).
  struct NodeOutcome {
    framework::Status s;
    Candidate c;
    bool hit = false;
    bool store = false;
    int64_t generation = 0;  // with store: the NodeInfo's generation and nominated list
    std::shared_ptr<const std::vector<framework::PodInfoPtr>> nominated;
  };
  void DryRunNode(Context& ctx, const framework::CycleState& state, const framework::PodInfo& pod,
                  const framework::NodeInfo& src,
                  const std::vector<api::PodDisruptionBudgetPtr>& pdbs, bool memo, NodeOutcome* r)
      ABSL_LOCKS_EXCLUDED(memo_.mu);
  // Whether `node`'s outcome may be kept: no pod of a gang, no start time after now.
  bool Memoizable(const framework::NodeInfo& node) const;

  DefaultPreemptionArgs args_;
  framework::Handle* handle_;
  Memo memo_;
  std::unique_ptr<framework::PreemptionExecutor> own_executor_;  // when the handle has none
  framework::PreemptionExecutor* executor_;
};

}  // namespace phalanx::plugins::defaultpreemption
