// The PodGroup cycle's driver (upstream pkg/scheduler schedule_one_podgroup.go, 1.36+):
// place a gang (or every gang of a GangGroup) as one transaction.
//
// It takes every pending member out of the queue, runs the PodGroup algorithm
// (podgroup_algorithm.h) on the snapshot view, and then either commits — assume, Reserve,
// Permit and bind every placed member, the bindings held in one BindingBatch until all are
// reserved — or reverts the view and gives every member one gang-level reason. Because no
// partial gang ever holds resources, gangs cannot deadlock each other (design.md; contrast
// Coscheduling's Permit-only flow). Events and status go through the gang::Coordinator.
#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gang/coordinator.h"
#include "scheduler/binding_pool.h"
#include "scheduler/podgroup_algorithm.h"
#include "scheduler/scheduler.h"

namespace phalanx::scheduler {

using framework::QueuedPodInfoPtr;
using framework::Status;

namespace {

// Every pending member of every unit, taken out of the queue (the popped pod among them:
// as a member of unit 0 when the plan does not list it).
std::vector<PodGroupMember> TakeMembers(queue::SchedulingQueue& queue,
                                        const QueuedPodInfoPtr& popped,
                                        const framework::QueuedPodGroupInfo& plan) {
  std::vector<PodGroupMember> members;
  const std::string popped_key = popped->Pod().Key();
  bool popped_included = false;
  for (size_t u = 0; u < plan.pod_groups.size(); ++u) {
    for (const auto& key : plan.pod_groups[u].pending_pods) {
      QueuedPodInfoPtr qp;
      if (key == popped_key) {
        qp = popped;
        popped_included = true;
      } else {
        auto queued = queue.Get(key);
        if (!queued || queued->Pod().spec.scheduler_name != popped->Pod().spec.scheduler_name)
          continue;
        qp = queue.Extract(key);
        if (!qp) continue;
      }
      PodGroupMember m;
      m.qp = std::move(qp);
      m.pod_group = u;
      members.push_back(std::move(m));
    }
  }
  if (!popped_included) {
    PodGroupMember m;
    m.qp = popped;
    members.push_back(std::move(m));
  }
  return members;
}

// The rejection every member gets: the gang's reason, then the first rejected member's own
// message ("ns/pod: 0/8 nodes are available: ..."); its distinct per-node reasons follow the
// gang's in *reasons, and *plugins collects every member's rejecting plugins.
Status GangRejection(const std::vector<PodGroupMember>& members, const PodGroupPlacement& placement,
                     std::set<std::string>* plugins, std::vector<std::string>* reasons) {
  plugins->insert("GangScheduling");
  if (!placement.admit_plugin.empty()) plugins->insert(placement.admit_plugin);
  reasons->push_back(placement.reject_reason);
  std::string member_msg;
  for (const auto& m : members) {
    plugins->insert(m.diag.unschedulable_plugins.begin(), m.diag.unschedulable_plugins.end());
    plugins->insert(m.diag.pending_plugins.begin(), m.diag.pending_plugins.end());
    if (member_msg.empty() && !m.placed && m.status.IsRejected() && !m.status.reasons().empty()) {
      member_msg = m.qp->Pod().Key() + ": " + m.status.Message();
      std::set<std::string> distinct;
      for (const auto& [node, st] : m.diag.node_statuses) {
        for (const auto& r : st.reasons()) distinct.insert(r);
      }
      reasons->insert(reasons->end(), distinct.begin(), distinct.end());
    }
  }
  std::string msg = placement.reject_reason;
  if (!member_msg.empty()) msg += "; " + member_msg;
  Status s(framework::Code::kUnschedulable, msg);
  s.WithPlugin("GangScheduling");
  return s;
}

// The members' own nominations (from an earlier gang preemption) are taken out of the
// nominator while the gang is placed, so that a member placed on the view is not counted
// twice (once placed, once nominated). Returns each member's nominated node, "" for none;
// RejectPodGroup nominates them again for a gang that is rejected without a new one.
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

// The PodGroup PostFilter's feasibility callback (framework::PodGroupFeasibility; upstream
// runs podGroupSchedulingAlgorithm without post filters): the algorithm's placement step
// again on the snapshot view with the given pods taken off it through every refresh of the
// trial (PodGroupAlgorithm::SetViewEdit). The members' placement fields hold the trial.
class ViewFeasibility final : public framework::PodGroupFeasibility {
 public:
  ViewFeasibility(PodGroupAlgorithm& algorithm, const std::vector<PodGroupMember>& members)
      : algorithm_(algorithm), members_(members) {}
  Status Place(const std::vector<const api::Pod*>& removed,
               framework::PodGroupAssignments* out) override {
    algorithm_.SetViewEdit([&removed](cache::Snapshot& snap) {
      for (const api::Pod* p : removed) snap.RemovePodFromView(*p);
    });
    algorithm_.Revert();
    std::vector<int32_t> placed;
    const Status reason = algorithm_.Place(&placed);
    algorithm_.SetViewEdit(nullptr);
    if (out) {
      out->nodes.assign(members_.size(), "");
      for (size_t i = 0; i < members_.size(); ++i) {
        if (members_[i].placed) out->nodes[i] = members_[i].host;
      }
    }
    return reason.IsSuccess() ? Status::Success() : Status::Unschedulable(reason.Message());
  }
  void Reset() override { algorithm_.Revert(); }

 private:
  PodGroupAlgorithm& algorithm_;
  const std::vector<PodGroupMember>& members_;
};

}  // namespace

void Scheduler::RunPodGroupCycle(framework::Framework* fwk, const QueuedPodInfoPtr& popped,
                                 const framework::QueuedPodGroupInfo& plan, int64_t cycle) {
  std::vector<PodGroupMember> members = TakeMembers(*queue_, popped, plan);
  CountAttempts(static_cast<int64_t>(members.size()) - 1);  // ScheduleOne counted the popped pod
  const uint64_t epoch = object_epoch_.load(std::memory_order_acquire);
  cache_.UpdateSnapshot(&snapshot_);
  const int64_t generation = snapshot_.generation();
  // Gang reservations (the GangReservation plugin) make a rejected cycle depend on the clock
  // and on reservation state the memo does not record: no replay while they are enabled.
  const bool replay = opts_.replay_podgroup_rejections && !reservations_->Settings().enabled();
  // Nothing this attempt reads changed since the gang's last rejection: replay it.
  if (replay && queue_->nominator().Empty()) {
    if (const PodGroupRejection* r = rejection_memo_.Find(plan, members, generation, epoch)) {
      ReplayPodGroupRejection(*fwk, plan, members, *r, cycle);
      return;
    }
  }
  const bool uniform = replay && queue_->nominator().Empty() &&
                       PodGroupRejectionMemo::UniformGang(*fwk, plan, members);
  if (uniform) {
    if (const auto* shape = rejection_memo_.FindShape(*fwk, plan, members, generation, epoch)) {
      ReplayShapeRejection(*fwk, plan, members, *shape, generation, epoch, cycle);
      return;
    }
  }
  std::vector<std::string> nominated = SuspendNominations(*queue_, members);
  PodGroupAlgorithm algorithm(*this, *fwk, plan, members);
  PodGroupPlacement placement = algorithm.Run();
  {
    absl::MutexLock l(&stats_mu_);
    stats_.batched_placements += placement.batched;
  }
  if (placement.reject_reason.empty()) {
    rejection_memo_.Forget(plan);
    CommitPodGroup(fwk, plan, members, placement, cycle);
    return;
  }
  // The PodGroup PostFilter (framework::PodGroupPostFilterPlugin): DefaultPreemption's
  // gang preemption with the victim policies (queue reclaim), GangReservation's
  // reservation and starvation eviction, each given the feasibility callback. Their trials
  // overwrite the members' placement fields; the rejection reports the gang's own attempt.
  algorithm.Revert();
  const std::vector<std::string> nominated_before = nominated;
  bool post_filtered = false;
  if (!fwk->PodGroupPostFilterPlugins().empty()) {
    framework::PodGroupAttempt attempt;
    attempt.pods.reserve(members.size());
    for (const auto& m : members) {
      attempt.pods.push_back(m.qp->pod_info);
      attempt.pod_group_of.push_back(m.pod_group);
    }
    attempt.placement_failed = placement.placement_failed;
    attempt.victim_policies = fwk->PodGroupVictimPolicies();
    std::vector<PodGroupMember> saved = members;
    ViewFeasibility feasibility(algorithm, members);
    framework::CycleState state;
    framework::PodGroupPostFilterResult result;
    std::vector<std::string> messages;
    (void)fwk->RunPodGroupPostFilterPlugins(state, plan, attempt, feasibility, &result, &messages);
    members = std::move(saved);
    for (const auto& m : messages) placement.reject_reason += "; " + m;
    if (!result.nominated_node_names.empty()) nominated = std::move(result.nominated_node_names);
    // A search that ran (its dry runs draw from the random tie-break) or evicted, or
    // anything said, is not replayed.
    post_filtered = !messages.empty() || nominated != nominated_before;
  }
  std::shared_ptr<PodGroupRejection> memo;
  if (replay && PodGroupRejectionMemo::Replayable(*fwk, plan, placement, nominated_before,
                                                  nominated, post_filtered)) {
    memo = PodGroupRejectionMemo::Describe(plan, members, generation, epoch);
    memo->batched = placement.batched;
  }
  RejectPodGroup(*fwk, plan, members, placement, cycle, nominated, memo.get());
  algorithm.Revert();
  // Remembered only if the cache did not move during the attempt (live mode: an event
  // between the snapshot and now), so that the rejection is the one of `generation`.
  if (memo && queue_->nominator().Empty() && snapshot_.generation() == generation) {
    const std::string& display = plan.pod_groups[0].display;
    // Another gang's members get this member's status: only when it names no pod.
    const std::string& name = members[0].qp->Pod().metadata.name;
    bool names_pod = members[0].status.Message().find(name) != std::string::npos;
    for (const auto& [node, st] : members[0].diag.node_statuses) {
      for (const auto& r : st.reasons()) names_pod = names_pod || r.find(name) != std::string::npos;
    }
    if (uniform && !names_pod && placement.reject_reason.rfind(display, 0) == 0) {
      PodGroupRejectionMemo::Shape shape;
      shape.generation = generation;
      shape.epoch = epoch;
      shape.canonical = members[0].qp->pod_info;
      shape.need = plan.pod_groups[0].Need();
      shape.pending = members.size();
      shape.reason_tail = placement.reject_reason.substr(display.size());
      shape.member_status = members[0].status;
      shape.node_statuses = members[0].diag.node_statuses;
      for (const auto& m : members) {
        shape.plugins.insert(m.diag.unschedulable_plugins.begin(),
                             m.diag.unschedulable_plugins.end());
        shape.plugins.insert(m.diag.pending_plugins.begin(), m.diag.pending_plugins.end());
      }
      shape.batched = memo->batched;
      rejection_memo_.RememberShape(std::move(shape));
    }
    rejection_memo_.Remember(std::move(memo));
  } else {
    rejection_memo_.Forget(plan);
  }
}

void Scheduler::CommitPodGroup(framework::Framework* fwk, const framework::QueuedPodGroupInfo& plan,
                               std::vector<PodGroupMember>& members,
                               const PodGroupPlacement& placement, int64_t cycle) {
  // Every placed member is assumed and bound; members that did not fit stay pending and
  // schedule alone now that the gang is satisfied. Inline bindings of this commit leave
  // each gang's status to one write after the loop; with the binding pool the bindings wait
  // in `hold` until every member is reserved and that write is done (a binding that
  // completes last writes fuller counts, and must not be overwritten by this one).
  auto hold = binding_pool_ ? std::make_shared<BindingBatch>() : nullptr;
  if (!hold) gang_coordinator_->BeginCommit(plan);
  for (auto& m : members) {
    if (m.placed) CommitPod(fwk, m.qp, m.state, m.host, cycle, m.assumed, hold);
  }
  std::map<std::string, api::PodPtr> last_bound;
  if (!hold) last_bound = gang_coordinator_->EndCommit(plan);
  for (auto& m : members) {
    if (!m.placed) HandleSchedulingFailure(*fwk, m.qp, m.status, &m.diag, "", cycle);
  }
  gang_coordinator_->RecordCommitted(plan, placement.placed, placement.TopologySummary());
  fwk->RunPodGroupCycleDone(plan, true, "");
  gang_coordinator_->WriteCommittedStatus(plan, last_bound);
  if (hold) {
    for (auto& b : hold->Release()) SubmitBinding(std::move(b));
  }
}

void Scheduler::RejectPodGroup(framework::Framework& fwk, const framework::QueuedPodGroupInfo& plan,
                               std::vector<PodGroupMember>& members,
                               const PodGroupPlacement& placement, int64_t cycle,
                               const std::vector<std::string>& nominated, PodGroupRejection* out) {
  // Nothing is held: every member gets the gang's reason and waits for an event that one
  // of the rejecting plugins' queueing hints accepts.
  std::set<std::string> plugins;
  std::vector<std::string> reasons;
  Status s = GangRejection(members, placement, &plugins, &reasons);
  ApplyPodGroupRejection(fwk, plan, members, s, plugins, reasons, cycle, nominated);
  if (out) {
    out->status = std::move(s);
    out->plugins = std::move(plugins);
    out->reasons = std::move(reasons);
  }
}

void Scheduler::ReplayPodGroupRejection(framework::Framework& fwk,
                                        const framework::QueuedPodGroupInfo& plan,
                                        std::vector<PodGroupMember>& members,
                                        const PodGroupRejection& r, int64_t cycle) {
  {
    absl::MutexLock l(&stats_mu_);
    ++stats_.replayed_podgroup_rejections;
    stats_.batched_placements += r.batched;
  }
  ApplyPodGroupRejection(fwk, plan, members, r.status, r.plugins, r.reasons, cycle, {});
}

void Scheduler::ReplayShapeRejection(framework::Framework& fwk,
                                     const framework::QueuedPodGroupInfo& plan,
                                     std::vector<PodGroupMember>& members,
                                     const PodGroupRejectionMemo::Shape& shape, int64_t generation,
                                     uint64_t epoch, int64_t cycle) {
  // GangRejection of this gang with its first member failing as the shape's did and the
  // others not reached (no status, no diagnosis): the unit's reason under this gang's
  // display name, then "<first member's key>: <the shape's member message>" and the
  // distinct node reasons; the plugins are GangScheduling's and the diagnosis'. The
  // shape's parts are computed once (Shape::Complete); the record is the gang's last one,
  // refilled in place when nothing else holds it.
  std::shared_ptr<PodGroupRejection> r = rejection_memo_.Reusable(plan);
  const bool reused = r != nullptr;
  if (!reused) r = std::make_shared<PodGroupRejection>();
  PodGroupRejectionMemo::Describe(plan, members, generation, epoch, r.get());
  r->plugins = shape.rejection_plugins;
  r->reasons.resize(1 + (shape.has_member_message ? shape.member_reasons.size() : 0));
  r->reasons[0].assign(plan.pod_groups[0].display).append(shape.reason_tail);
  std::string msg = r->reasons[0];
  if (shape.has_member_message) {
    std::copy(shape.member_reasons.begin(), shape.member_reasons.end(), r->reasons.begin() + 1);
    const api::Pod& first = members[0].qp->Pod();
    msg.append("; ")
        .append(first.metadata.namespace_)
        .append(1, '/')
        .append(first.metadata.name)
        .append(": ")
        .append(shape.member_message);
  }
  r->status = Status(framework::Code::kUnschedulable, std::move(msg));
  r->status.WithPlugin("GangScheduling");
  r->batched = shape.batched;
  ReplayPodGroupRejection(fwk, plan, members, *r, cycle);
  if (!reused) rejection_memo_.Remember(std::move(r));
}

void Scheduler::ApplyPodGroupRejection(framework::Framework& fwk,
                                       const framework::QueuedPodGroupInfo& plan,
                                       std::vector<PodGroupMember>& members, const Status& s,
                                       const std::set<std::string>& plugins,
                                       const std::vector<std::string>& reasons, int64_t cycle,
                                       const std::vector<std::string>& nominated) {
  for (size_t i = 0; i < members.size(); ++i) {
    auto& m = members[i];
    m.qp->unschedulable_plugins = plugins;
    m.qp->pending_plugins.clear();
    const std::string none;
    HandleSchedulingFailure(fwk, m.qp, s, nullptr, i < nominated.size() ? nominated[i] : none,
                            cycle, &reasons);
  }
  const std::string& msg = s.reasons()[0];
  gang_coordinator_->RecordRejected(plan, msg);
  fwk.RunPodGroupCycleDone(plan, false, msg);
  gang_coordinator_->WriteRejectedStatus(plan, msg);
}

}  // namespace phalanx::scheduler

namespace phalanx::scheduler {

namespace {

// Whether the pod already shows the PodScheduled condition HandleSchedulingFailure would
// write for the rejection `message` (then a replay writes nothing).
bool ShowsRejection(const api::Pod& pod, const std::string& message) {
  return std::any_of(pod.status.conditions.begin(), pod.status.conditions.end(),
                     [&](const api::PodCondition& c) {
                       return c.type == "PodScheduled" && c.status == "False" &&
                              c.reason == "Unschedulable" && c.message == message;
                     });
}

}  // namespace

// One PodGroup of the backlog that SkipRepeatedFlushes accounts: its plan, members (in
// the order TakeMembers gives), the rejection every flush round replays, and the rounds
// before the limit.
struct Scheduler::RepeatedFlush {
  framework::Framework* fwk = nullptr;
  framework::QueuedPodGroupInfo plan;
  std::vector<QueuedPodInfoPtr> members;
  const PodGroupRejection* rejection = nullptr;
  api::Timestamp timestamp = 0;
  int64_t rounds = 0;
};

bool Scheduler::CollectRepeatedFlushes(api::Timestamp limit, std::vector<RepeatedFlush>* out) {
  const api::Timestamp period = queue_->UnschedulableFlushPeriod();
  // Rounds of a pod whose timestamp is ts: the j >= 1 with ts + j * period < limit.
  auto rounds = [&](api::Timestamp ts) -> int64_t {
    return limit - 1 - ts < period ? 0 : (limit - 1 - ts) / period;
  };
  const std::vector<QueuedPodInfoPtr> pods = queue_->UnschedulablePods();
  if (std::none_of(pods.begin(), pods.end(),
                   [&](const QueuedPodInfoPtr& p) { return rounds(p->timestamp) >= 2; })) {
    return false;
  }
  cache_.UpdateSnapshot(&snapshot_);
  const int64_t generation = snapshot_.generation();
  const uint64_t epoch = object_epoch_.load(std::memory_order_acquire);
  std::unordered_map<std::string, const QueuedPodInfoPtr*> waiting;
  for (const auto& p : pods) waiting.emplace(p->Pod().Key(), &p);
  std::unordered_map<std::string, bool> covered;
  for (const auto& p : pods) {
    const std::string key = p->Pod().Key();
    if (covered.count(key)) continue;
    RepeatedFlush f;
    f.fwk = ProfileFor(p->Pod());
    if (!f.fwk || !f.fwk->HasPodGroupPlugins() || p->Pod().metadata.deletion_timestamp)
      return false;
    if (!f.fwk->RunPlanPodGroup(*p->pod_info, &f.plan).IsSuccess() || f.plan.empty()) return false;
    std::vector<PodGroupMember> members;
    for (size_t u = 0; u < f.plan.pod_groups.size(); ++u) {
      for (const auto& k : f.plan.pod_groups[u].pending_pods) {
        auto it = waiting.find(k);
        if (it == waiting.end() || covered.count(k)) return false;
        const QueuedPodInfoPtr& m = *it->second;
        if (m->timestamp != p->timestamp ||
            m->Pod().spec.scheduler_name != p->Pod().spec.scheduler_name) {
          return false;
        }
        covered.emplace(k, true);
        PodGroupMember pm;
        pm.qp = m;
        pm.pod_group = u;
        members.push_back(std::move(pm));
        f.members.push_back(m);
      }
    }
    if (!covered.count(key)) return false;  // the plan does not list the pod
    f.rejection = rejection_memo_.Find(f.plan, members, generation, epoch);
    if (!f.rejection || f.rejection->status.reasons().empty()) return false;
    // Each member already carries what a replay gives it (ApplyPodGroupRejection) and
    // shows it, so that a replay changes nothing on the pod but its counts.
    const PodGroupRejection& r = *f.rejection;
    for (const auto& m : f.members) {
      if (m->last_failure_message != r.status.Message() || m->unschedulable_plugins != r.plugins ||
          !m->pending_plugins.empty() || m->last_failure_reasons != r.reasons ||
          !ShowsRejection(m->Pod(), r.status.Message())) {
        return false;
      }
    }
    f.timestamp = p->timestamp;
    f.rounds = rounds(p->timestamp);
    out->push_back(std::move(f));
  }
  return true;
}

std::vector<api::Timestamp> Scheduler::SkipRepeatedFlushes(api::Timestamp until) {
  if (!opts_.replay_podgroup_rejections || reservations_->Settings().enabled()) return {};
  if (BindingCyclesInFlight() > 0 || WaitingInPreBind() > 0 || !queue_->nominator().Empty())
    return {};
  const queue::PendingCounts counts = queue_->Counts();
  if (counts.active > 0 || counts.backoff > 0 || counts.gated > 0 || counts.unschedulable == 0)
    return {};
  api::Timestamp limit = std::min(until, stale_gangs_->NextDeadline());
  limit = std::min(limit, reservations_->NextExpiry());
  for (const auto& [name, fw] : profiles_) limit = std::min(limit, fw->NextPermitDeadline());
  if (limit == LLONG_MAX || limit <= opts_.clock->Now()) return {};
  std::vector<RepeatedFlush> flushes;
  if (!CollectRepeatedFlushes(limit, &flushes)) return {};
  const api::Timestamp period = queue_->UnschedulableFlushPeriod();
  std::vector<api::Timestamp> steps;
  for (RepeatedFlush& f : flushes) {
    const int64_t skip = f.rounds - 1;  // the last round runs as usual
    if (skip <= 0) continue;
    // Cannot refuse here: CollectRepeatedFlushes found every member waiting in
    // unschedulablePods, ungated (no pod is gated), with the rejection's plugins (never
    // empty: GangScheduling is one), and nothing ran since on this thread.
    if (!queue_->RecordRepeatedFlushes(f.members, static_cast<int32_t>(skip), skip)) continue;
    const PodGroupRejection& r = *f.rejection;
    const auto members = static_cast<int64_t>(f.members.size());
    {
      absl::MutexLock l(&stats_mu_);
      stats_.attempts += skip * members;
      stats_.unschedulable += skip * members;
      stats_.replayed_podgroup_rejections += skip;
      stats_.batched_placements += skip * r.batched;
    }
    const std::string& msg = r.status.reasons()[0];
    for (int64_t j = 1; j <= skip; ++j) {
      if (on_failure) {
        for (const auto& m : f.members) on_failure(*m, r.status, FailurePhase::kScheduling);
      }
      f.fwk->RunPodGroupCycleDone(f.plan, false, msg);
      steps.push_back(f.timestamp + j * period);
    }
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

}  // namespace phalanx::scheduler
