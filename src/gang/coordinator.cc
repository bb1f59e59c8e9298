#include "gang/coordinator.h"

#include <algorithm>
#include <utility>

namespace phalanx::gang {

std::vector<std::string> Coordinator::MembersToActivate(const api::Pod& pod) const {
  std::vector<std::string> keys;
  auto ref = gangs_.RefOf(pod);
  if (!ref) return keys;
  auto sum = gangs_.SummaryOf(ref->key);
  if (!sum || !sum->spec || sum->counts.pods != sum->spec->min_member) return keys;
  for (const auto& g : gangs_.GroupOf(ref->key)) {
    if (auto gi = gangs_.Info(g))
      keys.insert(keys.end(), gi->member_pods.begin(), gi->member_pods.end());
  }
  return keys;
}

void Coordinator::OnMemberBound(const api::PodPtr& pod) {
  auto ref = gangs_.RefPtrOf(*pod);  // every bound pod passes here: no copy of the ref
  if (!ref) return;
  {
    absl::MutexLock l(&mu_);
    if (committing_.count(ref->key)) {
      last_bound_[ref->key] = pod;
      return;
    }
  }
  // With the binding pool a gang's members bind on several threads: the binding that
  // completes last writes the status (its counts include every earlier one), not one
  // write per member; a failed binding writes instead if it was the last.
  if (!BindingsInFlight(ref->key)) WriteStatus(ref->key, GangOutcome::kNone, "", pod.get());
}

void Coordinator::OnMemberPhase(const api::Pod& pod, const std::string& gang_key) {
  if (!gang_key.empty()) {
    WriteStatus(gang_key, GangOutcome::kNone, "", nullptr);
  } else if (auto ref = gangs_.RefPtrOf(pod)) {
    WriteStatus(ref->key, GangOutcome::kNone, "", nullptr);
  }
}

void Coordinator::OnBindingFailed(const api::Pod& pod) {
  if (auto ref = gangs_.RefPtrOf(pod); ref && !BindingsInFlight(ref->key)) {
    WriteStatus(ref->key, GangOutcome::kNone, "", nullptr);
  }
}

void Coordinator::BeginCommit(const framework::QueuedPodGroupInfo& plan) {
  absl::MutexLock l(&mu_);
  for (const auto& u : plan.pod_groups) committing_.insert(u.key);
}

std::map<std::string, api::PodPtr> Coordinator::EndCommit(
    const framework::QueuedPodGroupInfo& plan) {
  std::map<std::string, api::PodPtr> last;
  absl::MutexLock l(&mu_);
  for (const auto& u : plan.pod_groups) {
    committing_.erase(u.key);
    if (auto it = last_bound_.find(u.key); it != last_bound_.end()) {
      last[u.key] = std::move(it->second);
      last_bound_.erase(it);
    }
  }
  return last;
}

void Coordinator::RecordCommitted(const framework::QueuedPodGroupInfo& plan,
                                  const std::vector<int32_t>& placed_per_unit,
                                  const std::string& topology_summary) {
  for (size_t i = 0; i < plan.pod_groups.size(); ++i) {
    const auto& u = plan.pod_groups[i];
    RecordEvent(u, true,
                "gang " + u.key + ": " + std::to_string(placed_per_unit[i]) + " members placed" +
                    SubGroupTally(u) + (topology_summary.empty() ? "" : "; " + topology_summary));
  }
}

// " (subgroups prefill: 4, decode: 2)": assumed or bound members per subgroup of a gang
// with nested quorums, in spec order; "" otherwise.
std::string Coordinator::SubGroupTally(const framework::PodGroupInfo& unit) const {
  if (!unit.check_sub_groups) return "";
  auto info = gangs_.Info(unit.key, /*with_members=*/false);
  if (!info || !info->spec) return "";
  std::string out;
  for (const auto& g : info->spec->sub_groups) {
    const auto& all = info->spec->sub_groups;
    if (std::any_of(all.begin(), all.end(), [&](const auto& o) { return o.parent == g.name; })) {
      continue;  // a parent: its pods are counted in its leaves
    }
    auto it = info->sub_group_active.find(g.name);
    out += (out.empty() ? " (subgroups " : ", ") + g.name + ": " +
           std::to_string(it == info->sub_group_active.end() ? 0 : it->second);
  }
  return out.empty() ? "" : out + ")";
}

void Coordinator::WriteCommittedStatus(const framework::QueuedPodGroupInfo& plan,
                                       const std::map<std::string, api::PodPtr>& last_bound) {
  for (const auto& u : plan.pod_groups) {
    if (BindingsInFlight(u.key)) continue;
    auto it = last_bound.find(u.key);
    WriteStatus(u.key, GangOutcome::kPlaced, "",
                it == last_bound.end() ? nullptr : it->second.get());
  }
}

void Coordinator::RecordRejected(const framework::QueuedPodGroupInfo& plan,
                                 const std::string& message) {
  for (const auto& u : plan.pod_groups) RecordEvent(u, false, "gang " + message);
}

void Coordinator::WriteRejectedStatus(const framework::QueuedPodGroupInfo& plan,
                                      const std::string& message) {
  for (const auto& u : plan.pod_groups)
    WriteStatus(u.key, GangOutcome::kUnschedulable, message, nullptr);
}

bool Coordinator::BindingsInFlight(const std::string& gang_key) const {
  auto sum = gangs_.SummaryOf(gang_key);
  return sum && sum->counts.assumed > 0;
}

// An Event on the gang's own object (dialects that have one), so that a Pending gang is
// never opaque: "gang nlp/giant: 1 of 5 pending members fit, 5 needed; ...".
void Coordinator::RecordEvent(const framework::PodGroupInfo& unit, bool ok,
                              const std::string& message, const char* reason) {
  auto info = gangs_.SummaryOf(unit.key);
  if (!info || !info->spec) return;
  const auto obj = GangObjectOf(*info->spec);
  if (!obj) return;  // annotation-defined or derived gangs have no object of their own
  client_.RecordObjectEvent(obj->api_version, obj->kind, obj->ns, obj->name,
                            ok ? "Normal" : "Warning",
                            *reason ? reason : (ok ? "Scheduled" : "FailedScheduling"), message);
}

void Coordinator::SweepStale(
    api::Timestamp now, StaleGangTracker& tracker,
    const std::function<framework::PodInfoPtr(const std::string&)>& cached_pod,
    framework::PreemptionExecutor& executor,
    const std::function<bool(const api::Pod&)>& reject_if_waiting) {
  using Kind = StaleGangTracker::Action::Kind;
  for (auto& a : tracker.Check(gangs_, gangs_.TakeRunningLosses(), now)) {
    if (a.kind == Kind::kRecovered) {
      RecordStaleness(a.gang, true, a.message, "GangWhole");
      continue;
    }
    if (a.kind == Kind::kStale) {
      RecordStaleness(a.gang, false, a.message, "StaleGang");
      continue;
    }
    framework::PreemptionRequest req;
    req.plugin = "StaleGangEviction";
    for (const auto& key : a.pods) {
      framework::PodInfoPtr p = cached_pod(key);
      if (p == nullptr) continue;
      if (req.disruption_message.empty()) {
        req.disruption_message = p->Pod().spec.scheduler_name + ": stale gang eviction";
      }
      req.victims.push_back({p, a.message, "Evicted"});
    }
    RecordStaleness(a.gang, false, a.message, "StaleGangEvicted");
    if (req.victims.empty()) continue;
    req.reject_if_waiting = reject_if_waiting;
    executor.Execute(std::move(req));
  }
}

}  // namespace phalanx::gang
