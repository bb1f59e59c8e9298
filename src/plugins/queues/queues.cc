#include "plugins/queues/queues.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "api/resource.h"
#include "plugins/defaultpreemption/default_preemption.h"
#include "plugins/defaultpreemption/podgroup_preemption.h"
#include "plugins/helper/args.h"
#include "quota/queue_manager.h"

namespace phalanx::plugins::queues {

using framework::Code;
using framework::Status;

namespace {

void Add(quota::ResourceList& to, const quota::ResourceList& v) {
  for (const auto& [r, a] : v) to[r] += a;
}

}  // namespace

namespace {

// A non-negative number of seconds (integer, or a decimal string) into *ns.
void ReadSeconds(const YAML::Node& n, const std::string& path, int64_t min_s, int64_t* ns,
                 helper::FieldErrors* errs) {
  if (!n.IsDefined() || n.IsNull()) return;
  int64_t v = 0;
  if (!helper::ReadInt(n, path, &v, errs)) return;
  if (v < min_s) {
    errs->Invalid(path, v, "must be greater than or equal to " + std::to_string(min_s));
    return;
  }
  *ns = v * api::kNanosPerSecond;
}

}  // namespace

framework::StatusOr<QueuesArgs> ParseQueuesArgs(framework::PluginArgs args) {
  QueuesArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, "QueuesArgs", {"timeBasedFairShare", "deviceClassMappings"},
                            &errs, &has_content)) {
    return helper::ArgsError(errs, "QueuesArgs");
  }
  if (!has_content) return out;
  if (const YAML::Node m = (*args)["deviceClassMappings"]; m.IsDefined() && !m.IsNull()) {
    if (!m.IsSequence()) {
      errs.TypeInvalid("deviceClassMappings", "must be a list");
    } else {
      for (size_t i = 0; i < m.size(); ++i) {
        const std::string path = "deviceClassMappings[" + std::to_string(i) + "]";
        quota::DeviceClassMapping dm;
        if (!helper::CheckMap(m[i], path, {"name", "deviceClassNames"}, &errs)) {
          if (errs.empty()) errs.Required(path, "must be a map");
          continue;
        }
        helper::ReadString(m[i]["name"], path + ".name", &dm.name, &errs);
        helper::ReadStringList(m[i]["deviceClassNames"], path + ".deviceClassNames",
                               &dm.device_class_names, &errs);
        out.device_class_mappings.push_back(std::move(dm));
      }
      if (errs.empty()) {
        for (auto& e :
             quota::ValidateDeviceClassMappings(out.device_class_mappings, "deviceClassMappings")) {
          errs.Add(std::move(e));
        }
      }
    }
    if (!errs.empty()) return helper::ArgsError(errs, "QueuesArgs");
  }
  const YAML::Node t = (*args)["timeBasedFairShare"];
  if (!helper::CheckMap(t, "timeBasedFairShare",
                        {"windowSeconds", "windowType", "halfLifeSeconds", "kValue"}, &errs)) {
    if (!errs.empty()) return helper::ArgsError(errs, "QueuesArgs");
    return out;  // null: off
  }
  quota::UsageParams u;
  ReadSeconds(t["windowSeconds"], "timeBasedFairShare.windowSeconds", 1, &u.window_ns, &errs);
  ReadSeconds(t["halfLifeSeconds"], "timeBasedFairShare.halfLifeSeconds", 0, &u.half_life_ns,
              &errs);
  std::string type = "sliding";
  helper::ReadString(t["windowType"], "timeBasedFairShare.windowType", &type, &errs);
  if (type == "tumbling") {
    u.tumbling = true;
  } else if (type != "sliding") {
    errs.NotSupported("timeBasedFairShare.windowType", type, {"sliding", "tumbling"});
  }
  helper::ReadNonNegativeNumber(t["kValue"], "timeBasedFairShare.kValue", &u.k_value, &errs);
  if (!errs.empty()) return helper::ArgsError(errs, "QueuesArgs");
  out.time_based_fair_share = u;
  return out;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> Queues::New(framework::PluginArgs args,
                                                                    framework::Handle& h) {
  auto a = ParseQueuesArgs(args);
  if (!a.ok()) return a.status();
  auto* ledger = h.Service<quota::SharedQueueManager>();
  if (ledger) {
    const framework::Clock* clock = &h.GetClock();
    ledger->UseClock([clock] { return clock->Now(); });  // KAI min runtimes
    if (!a.value().device_class_mappings.empty()) {
      ledger->SetDeviceClassMappings(a.value().device_class_mappings);
    }
    if (a.value().time_based_fair_share) {
      ledger->EnableTimeBasedFairShare(*a.value().time_based_fair_share,
                                       [clock] { return clock->Now(); });
    }
  }
  return std::unique_ptr<framework::Plugin>(new Queues(h));
}

bool Queues::Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const {
  quota::SharedQueueManager* qm = queues_;
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

std::string Queues::Partition(const framework::QueuedPodInfo& p) const {
  quota::SharedQueueManager* qm = queues_;
  if (!qm || !qm->HasQueues()) return "";
  return qm->QueueOf(p.Pod()).queue;
}

bool Queues::PartitionLess(const std::string& a, const std::string& b) const {
  quota::SharedQueueManager* qm = queues_;
  if (!qm || a == b) return false;
  return qm->DominantShareOf(a) < qm->DominantShareOf(b);
}

void Queues::RefreshCapacity() {
  quota::SharedQueueManager* qm = queues_;
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
  quota::SharedQueueManager* qm = queues_;
  if (!qm || !qm->HasQueues()) return Status::Success();
  const quota::Assignment a = qm->QueueOf(*pod.pod);
  if (!a.error.empty()) return Status::UnschedulableAndUnresolvable(a.error);
  if (a.queue.empty()) return Status::Success();
  RefreshCapacity();
  if (in_cycle_) {
    // Members let through earlier in this PodGroup cycle are not assumed yet. Keyed by pod:
    // the cycle may place a member more than once (topology trials, preemption dry runs).
    // Charged together, so that a claim they share counts once.
    auto& used = in_cycle_used_[a.queue];
    used[pod.pod->Key()] = pod.pod;
    std::vector<const api::Pod*> members;
    for (const auto& [key, p] : used) members.push_back(p.get());
    api::Status reason =
        qm->CheckAdmission(a.queue, qm->ChargeOf(members), handle_.GetClock().Now());
    if (!reason.ok()) {
      used.erase(pod.pod->Key());
      return Status::Unschedulable(std::string(reason.message()));
    }
    return Status::Success();
  }
  const quota::ResourceList want = qm->ChargeOf({pod.pod.get()});
  api::Status reason = qm->CheckAdmission(a.queue, want, handle_.GetClock().Now());
  if (!reason.ok()) return Status::Unschedulable(std::string(reason.message()));
  return Status::Success();
}

Queues::Queues(framework::Handle& h)
    : handle_(h),
      queues_(h.Service<quota::SharedQueueManager>()),
      executor_(framework::PreemptionExecutorOf(h, &own_executor_)),
      gang_sort_(h) {}

int64_t Queues::Reclaim(const std::string& queue, const std::vector<quota::ReclaimUnit>& victims,
                        const std::string& who, const framework::PodInfo* pod) {
  quota::SharedQueueManager* qm = queues_;
  framework::PreemptionRequest req;
  req.plugin = std::string(kName);
  if (pod != nullptr) req.preemptors.push_back(std::make_shared<framework::PodInfo>(*pod));
  std::string scheduler_name = pod != nullptr ? pod->Pod().spec.scheduler_name : std::string();
  for (const auto& unit : victims) {
    for (const auto& p : unit.pods) {
      if (scheduler_name.empty()) scheduler_name = p->spec.scheduler_name;
      req.victims.push_back({framework::PodInfo::Make(p), "Reclaimed by queue " + queue + " for " +
                                                              who + " (queue " + unit.queue +
                                                              " is above its deserved share)"});
    }
  }
  const int64_t n = static_cast<int64_t>(req.victims.size());
  if (n == 0) return 0;
  req.disruption_message = scheduler_name + ": reclaimed for queue " + queue;
  req.reject_if_waiting = framework::RejectIfWaitingIn(handle_);
  executor_->Execute(std::move(req));
  reclaimed_pods_ += n;
  qm->SetReclaimHold(queue, handle_.GetClock().Now() + kReclaimHoldNs);
  return n;
}

Status Queues::PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeToStatus& filtered,
                          framework::PostFilterResult* result) {
  quota::SharedQueueManager* qm = queues_;
  if (!qm || !qm->HasQueues()) return Status(Code::kUnschedulable);
  const quota::Assignment a = qm->QueueOf(*pod.pod);
  if (a.queue.empty() || !a.error.empty()) return Status(Code::kUnschedulable);
  if (qm->HasReclaimHold(a.queue, handle_.GetClock().Now())) return Status(Code::kUnschedulable);
  RefreshCapacity();
  const quota::ResourceList request = qm->ChargeOf({pod.pod.get()});
  std::string why;
  const std::vector<quota::ReclaimUnit> units = qm->ReclaimCandidates(a.queue, request, &why);
  if (units.empty()) return Status(Code::kUnschedulable);
  std::unordered_map<std::string, size_t> unit_of;  // candidate pod key -> unit
  size_t considered = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    for (const auto& p : units[i].pods) unit_of.emplace(p->Key(), i);
    considered += units[i].pods.size();
  }
  // The per-node dry run of DefaultPreemption with the reclaim candidates as victims: evict
  // only where the pod then passes Filter.
  const defaultpreemption::VictimFilter reclaimable = [&](const api::Pod& p) {
    return unit_of.count(p.Key()) > 0;
  };
  defaultpreemption::DefaultPreemption dry_run(defaultpreemption::DefaultPreemptionArgs{}, handle_);
  defaultpreemption::Candidate c;
  Status s = dry_run.FindCandidate(state, pod, filtered, &reclaimable, &c);
  if (s.IsError()) return Status::Error("reclaim: " + s.Message());
  const std::string no_room = "reclaim for queue " + a.queue +
                              " would not make room for the pod (" + std::to_string(considered) +
                              " reclaimable pods considered)";
  if (!s.IsSuccess()) return Status::Unschedulable(no_room);
  // The node's victims, as whole units (a running gang's other members too).
  std::vector<quota::ReclaimUnit> chosen;
  std::vector<quota::ReclaimVictim> check;
  std::set<size_t> taken;
  for (const auto& v : c.victims) {
    auto it = unit_of.find(v->Pod().Key());
    if (it == unit_of.end() || !taken.insert(it->second).second) continue;
    chosen.push_back(units[it->second]);
    check.push_back({units[it->second].queue, units[it->second].request, true});
  }
  if (api::Status refused = qm->CheckReclaimVictims({a.queue}, request, check); !refused.ok()) {
    return Status::Unschedulable("reclaim: " + std::string(refused.message()));
  }
  if (Reclaim(a.queue, chosen, "pod " + pod.pod->Key(), &pod) == 0) {
    return Status::Unschedulable(no_room);
  }
  result->nominated_node_name = c.node;
  return Status::Success();
}

Status Queues::Reserve(framework::CycleState&, const framework::PodInfo& pod, const std::string&) {
  if (quota::SharedQueueManager* qm = queues_) qm->MarkAssumed(*pod.pod);
  return Status::Success();
}

void Queues::Unreserve(framework::CycleState&, const framework::PodInfo& pod, const std::string&) {
  if (quota::SharedQueueManager* qm = queues_) qm->MarkForgotten(*pod.pod);
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

Status Queues::PlanPodGroup(const framework::PodInfo&, framework::QueuedPodGroupInfo* plan) {
  return Status::Success();  // GangScheduling plans; Queues only admits.
}

Status Queues::AdmitPodGroup(const framework::QueuedPodGroupInfo& plan,
                             const std::vector<const framework::PodInfo*>& pods,
                             const std::vector<size_t>& pod_group_of) {
  in_cycle_ = true;
  admitted_ = false;
  in_cycle_used_.clear();
  admitted_request_.clear();
  admitted_display_.clear();
  candidate_reclaimer_.clear();
  quota::SharedQueueManager* qm = queues_;
  if (!qm || !qm->HasQueues()) return Status::Success();
  RefreshCapacity();
  // The minimum gang: the first `need` pending members of every unit, summed per queue.
  std::vector<int32_t> taken(plan.pod_groups.size(), 0);
  std::map<std::string, std::string> display;  // queue -> first unit naming it
  std::map<std::string, std::vector<const api::Pod*>> by_queue;
  for (size_t i = 0; i < pods.size(); ++i) {
    const size_t u = pod_group_of[i];
    const quota::Assignment a = qm->QueueOf(*pods[i]->pod);
    if (!a.error.empty()) {
      return Status::UnschedulableAndUnresolvable(plan.pod_groups[u].display + ": " + a.error);
    }
    if (a.queue.empty() || taken[u] >= plan.pod_groups[u].Need()) continue;
    ++taken[u];
    by_queue[a.queue].push_back(pods[i]->pod.get());
    display.emplace(a.queue, plan.pod_groups[u].display);
  }
  // Per queue, the members charged together: a claim they share counts once.
  for (const auto& [queue, members] : by_queue) admitted_request_[queue] = qm->ChargeOf(members);
  const api::Timestamp now = handle_.GetClock().Now();
  for (const auto& [queue, request] : admitted_request_) {
    api::Status reason = qm->CheckAdmission(queue, request, now);
    if (!reason.ok()) {
      return Status::Unschedulable(display[queue] + ": " + std::string(reason.message()));
    }
  }
  admitted_ = true;
  admitted_display_ = std::move(display);
  // No reclaim here: if the placement fails, PodGroup preemption asks VictimCandidates and
  // evicts only victims with which the whole plan fits.
  return Status::Success();
}

std::vector<framework::PodGroupVictimUnit> Queues::VictimCandidates(
    const framework::QueuedPodGroupInfo&) {
  candidate_reclaimer_.clear();
  quota::SharedQueueManager* qm = queues_;
  if (!qm || !admitted_) return {};
  RefreshCapacity();
  const api::Timestamp now = handle_.GetClock().Now();
  std::vector<framework::PodGroupVictimUnit> out;
  std::set<std::string> seen;  // unit keys
  for (const auto& [queue, request] : admitted_request_) {
    if (qm->HasReclaimHold(queue, now)) continue;  // victims of an earlier reclaim still going
    std::string why_none;
    for (auto& u : qm->ReclaimCandidates(queue, request, &why_none)) {
      // Never a pod of a reclaiming queue (a GangGroup may span queues).
      if (admitted_request_.count(u.queue) || !seen.insert(u.key).second) continue;
      candidate_reclaimer_[u.pods.front()->Key()] = queue;
      out.push_back({std::move(u.pods), u.queue});
    }
  }
  return out;
}

Status Queues::CheckVictims(const framework::QueuedPodGroupInfo&,
                            const std::vector<const framework::PodGroupVictimUnit*>& chosen,
                            const std::vector<const api::Pod*>& lower_priority) {
  quota::SharedQueueManager* qm = queues_;
  if (!qm || !admitted_) return Status::Success();
  std::vector<std::string> reclaimers;
  quota::ResourceList request;
  for (const auto& [queue, r] : admitted_request_) {
    reclaimers.push_back(queue);
    Add(request, r);
  }
  std::vector<quota::ReclaimVictim> victims;
  for (const auto* u : chosen) {
    quota::ReclaimVictim v{u->owner, {}, true};
    std::vector<const api::Pod*> members;
    for (const auto& p : u->pods) members.push_back(p.get());
    v.request = qm->ChargeOf(members);
    victims.push_back(std::move(v));
  }
  for (const api::Pod* p : lower_priority) {
    const quota::Assignment a = qm->QueueOf(*p);
    if (!a.queue.empty()) victims.push_back({a.queue, qm->ChargeOf({p}), false});
  }
  api::Status why = qm->CheckReclaimVictims(reclaimers, request, victims);
  return why.ok() ? Status::Success() : Status::Unschedulable(std::string(why.message()));
}

Status Queues::EvictVictims(const framework::QueuedPodGroupInfo&,
                            const std::vector<const framework::PodGroupVictimUnit*>& chosen,
                            int64_t* evicted) {
  std::map<std::string, std::vector<quota::ReclaimUnit>> by_reclaimer;
  for (const auto* u : chosen) {
    if (u->pods.empty()) continue;
    auto it = candidate_reclaimer_.find(u->pods.front()->Key());
    if (it == candidate_reclaimer_.end()) continue;
    quota::ReclaimUnit r;
    r.queue = u->owner;
    r.pods = u->pods;
    by_reclaimer[it->second].push_back(std::move(r));
  }
  int64_t n = 0;
  for (const auto& [queue, units] : by_reclaimer)
    n += Reclaim(queue, units, admitted_display_[queue], nullptr);
  *evicted = n;
  // Reclaim hands the deletions to the PreemptionExecutor, which reports a failed call on
  // the members itself.
  return Status::Success();
}

Status Queues::PodGroupPostFilter(framework::CycleState& state,
                                  const framework::QueuedPodGroupInfo& group,
                                  const framework::PodGroupAttempt& attempt,
                                  framework::PodGroupFeasibility& feasibility,
                                  framework::PodGroupPostFilterResult* result) {
  if (defaultpreemption::VictimPoliciesSearched(state)) return Status(Code::kSkip);
  defaultpreemption::MarkVictimPoliciesSearched(state);
  return defaultpreemption::PodGroupPostFilterStatus(
      defaultpreemption::PodGroupPreemption(handle_, *executor_, group, attempt, feasibility)
          .Run(false),
      result);
}

void Queues::PodGroupCycleDone(const framework::QueuedPodGroupInfo&, bool, const std::string&) {
  in_cycle_ = false;
  admitted_ = false;
  in_cycle_used_.clear();
  admitted_request_.clear();
  admitted_display_.clear();
  candidate_reclaimer_.clear();
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
                                     return r.name == "PrioritySort" ||
                                            r.name == "GangPrioritySort";
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
