#include "plugins/queues/queues.h"

#include <algorithm>
#include <map>

#include "api/resource.h"
#include "quota/manager.h"

namespace phalanx::plugins::queues {

using framework::Code;
using framework::Status;

namespace {

void Add(quota::ResourceList& to, const quota::ResourceList& v) {
  for (const auto& [r, a] : v) to[r] += a;
}

}  // namespace

framework::StatusOr<std::unique_ptr<framework::Plugin>> Queues::New(framework::PluginArgs,
                                                                     framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(new Queues(h));
}

bool Queues::Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const {
  quota::QueueLedger* qm = queues_;
  if (qm && qm->HasQueues()) {
    const quota::Assignment qa = qm->QueueOf(a.Pod());
    const quota::Assignment qb = qm->QueueOf(b.Pod());
    if (qa.queue != qb.queue) {
      const double sa = qm->DominantShareOf(qa.queue), sb = qm->DominantShareOf(qb.queue);
      if (sa != sb) return sa < sb;
    }
  }
  return gang_sort_.Less(a, b);
}

void Queues::RefreshCapacity() {
  quota::QueueLedger* qm = queues_;
  if (!qm) return;
  api::Resource total;
  for (const auto* ni : handle_.SnapshotSharedLister().List()) total.Add(ni->allocatable());
  quota::ResourceList cap;
  if (total.milli_cpu) cap["cpu"] = total.milli_cpu;
  if (total.memory) cap["memory"] = total.memory;
  if (total.ephemeral_storage) cap["ephemeral-storage"] = total.ephemeral_storage;
  if (total.allowed_pod_number) cap["pods"] = total.allowed_pod_number;
  for (const auto& [id, v] : total.scalar) {
    if (v) cap[api::ScalarResourceName(id)] = v;
  }
  qm->SetCapacity(cap);
}

Status Queues::PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                         framework::PreFilterResult*) {
  quota::QueueLedger* qm = queues_;
  if (!qm || !qm->HasQueues()) return Status::Success();
  const quota::Assignment a = qm->QueueOf(*pod.pod);
  if (!a.error.empty()) return Status::UnschedulableAndUnresolvable(a.error);
  if (a.queue.empty()) return Status::Success();
  RefreshCapacity();
  quota::ResourceList want = quota::QueueManager::RequestOf(*pod.pod);
  if (in_cycle_) {
    // Members let through earlier in this PodGroup cycle are not assumed yet.
    quota::ResourceList with = in_cycle_used_[a.queue];
    Add(with, want);
    std::string reason = qm->CheckAdmission(a.queue, with, handle_.GetClock().Now());
    if (!reason.empty()) return Status::Unschedulable(reason);
    in_cycle_used_[a.queue] = std::move(with);
    return Status::Success();
  }
  std::string reason = qm->CheckAdmission(a.queue, want, handle_.GetClock().Now());
  if (!reason.empty()) return Status::Unschedulable(reason);
  return Status::Success();
}

int64_t Queues::Reclaim(const std::string& queue, const quota::ResourceList& request,
                        const std::string& who, std::string* why) {
  quota::QueueLedger* qm = queues_;
  RefreshCapacity();
  auto victims = qm->SelectReclaimVictims(queue, request, qm->FreeCapacity(), why);
  int64_t n = 0;
  for (const auto& unit : victims) {
    for (const auto& p : unit.pods) {
      if (!handle_.Client().DeletePod(*p).ok()) continue;
      handle_.Client().RecordEvent(*p, "Normal", "Preempted",
                                   "Reclaimed by queue " + queue + " for " + who + " (queue " +
                                       unit.queue + " is above its deserved share)");
      ++n;
    }
  }
  reclaimed_pods_ += n;
  if (n > 0) qm->SetReclaimHold(queue, handle_.GetClock().Now() + kReclaimHoldNs);
  return n;
}

Status Queues::PostFilter(framework::CycleState&, const framework::PodInfo& pod,
                          const framework::NodeToStatus&, framework::PostFilterResult*) {
  quota::QueueLedger* qm = queues_;
  if (!qm || !qm->HasQueues()) return Status(Code::kUnschedulable);
  const quota::Assignment a = qm->QueueOf(*pod.pod);
  if (a.queue.empty() || !a.error.empty()) return Status(Code::kUnschedulable);
  if (qm->HasReclaimHold(a.queue, handle_.GetClock().Now())) return Status(Code::kUnschedulable);
  std::string why;
  int64_t n = Reclaim(a.queue, quota::QueueManager::RequestOf(*pod.pod), "pod " + pod.pod->Key(), &why);
  if (n == 0) return Status(Code::kUnschedulable);
  return Status::Unschedulable("queue " + a.queue + " reclaimed " + std::to_string(n) +
                               " pod(s) from queues above their deserved share");
}

Status Queues::Reserve(framework::CycleState&, const framework::PodInfo& pod, const std::string&) {
  if (quota::QueueLedger* qm = queues_) qm->MarkAssumed(*pod.pod);
  return Status::Success();
}

void Queues::Unreserve(framework::CycleState&, const framework::PodInfo& pod, const std::string&) {
  if (quota::QueueLedger* qm = queues_) qm->MarkForgotten(*pod.pod);
}

std::vector<framework::ClusterEventWithHint> Queues::EventsToRegister() const {
  // Quota is freed when pods go away; queue objects (kPodGroup covers every dialect
  // object) can change limits or create a missing queue.
  return {
      {{framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete"}, nullptr},
      {{framework::EventResource::kPodGroup, framework::kAdd | framework::kUpdate, "QueueChange"},
       nullptr},
  };
}

Status Queues::PlanPodGroup(const framework::PodInfo&, framework::PodGroupPlan* plan) {
  return Status::Success();  // GangScheduling plans; Queues only admits.
}

Status Queues::AdmitPodGroup(const framework::PodGroupPlan& plan,
                             const std::vector<const framework::PodInfo*>& pods,
                             const std::vector<size_t>& unit_of) {
  in_cycle_ = true;
  admitted_ = false;
  in_cycle_used_.clear();
  admitted_request_.clear();
  admitted_display_.clear();
  quota::QueueLedger* qm = queues_;
  if (!qm || !qm->HasQueues()) return Status::Success();
  RefreshCapacity();
  // The minimum gang: the first `need` pending members of every unit, summed per queue.
  std::vector<int32_t> taken(plan.units.size(), 0);
  std::map<std::string, std::string> display;  // queue -> first unit naming it
  for (size_t i = 0; i < pods.size(); ++i) {
    const size_t u = unit_of[i];
    const quota::Assignment a = qm->QueueOf(*pods[i]->pod);
    if (!a.error.empty()) {
      return Status::UnschedulableAndUnresolvable(plan.units[u].display + ": " + a.error);
    }
    if (a.queue.empty() || taken[u] >= plan.units[u].need) continue;
    ++taken[u];
    Add(admitted_request_[a.queue], quota::QueueManager::RequestOf(*pods[i]->pod));
    display.emplace(a.queue, plan.units[u].display);
  }
  const api::Timestamp now = handle_.GetClock().Now();
  for (const auto& [queue, request] : admitted_request_) {
    std::string reason = qm->CheckAdmission(queue, request, now);
    if (!reason.empty()) return Status::Unschedulable(display[queue] + ": " + reason);
  }
  admitted_ = true;
  admitted_display_ = plan.units.empty() ? "" : plan.units.front().display;
  // Reclaim before placement, so that the gang can use what it freed in this very cycle
  // (the scheduler refreshes the snapshot after admission).
  for (const auto& [queue, request] : admitted_request_) {
    if (qm->HasReclaimHold(queue, now)) continue;  // victims of an earlier reclaim still going
    std::string why;
    Reclaim(queue, request, display[queue], &why);
  }
  return Status::Success();
}

void Queues::PodGroupCycleDone(const framework::PodGroupPlan&, bool, const std::string&) {
  in_cycle_ = false;
  admitted_ = false;
  in_cycle_used_.clear();
  admitted_request_.clear();
}

bool EnableQueuesInProfile(config::Profile* profile) {
  auto has = [&](const config::PluginSet& s) {
    return std::any_of(s.enabled.begin(), s.enabled.end(),
                       [](const config::PluginRef& r) { return r.name == Queues::kName; });
  };
  if (has(profile->plugins.multi_point) || has(profile->plugins.queue_sort)) return false;
  auto drop_sorts = [](config::PluginSet& s) {
    s.enabled.erase(std::remove_if(s.enabled.begin(), s.enabled.end(),
                                   [](const config::PluginRef& r) {
                                     return r.name == "PrioritySort" || r.name == "GangPrioritySort";
                                   }),
                    s.enabled.end());
  };
  drop_sorts(profile->plugins.multi_point);
  drop_sorts(profile->plugins.queue_sort);
  profile->plugins.multi_point.enabled.push_back({std::string(Queues::kName), 0});
  return true;
}

bool Queues::SameSignature(const framework::PodInfo& canonical,
                             const framework::PodInfo& pod) const {
  return true;
}

}  // namespace phalanx::plugins::queues
