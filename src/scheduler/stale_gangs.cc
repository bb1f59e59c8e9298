// Stale gangs (gang/staleness.h; KAI pkg/scheduler/actions/stalegangeviction): Tick reports
// running gangs that fell below their minimum and, after their grace, evicts the members
// still running, as preemption evicts (framework/preemption_executor.h).
#include <string>
#include <vector>

#include "gang/manager.h"
#include "scheduler/gang_coordinator.h"
#include "scheduler/scheduler.h"

namespace phalanx::scheduler {

namespace {

// The cache's pod of a "namespace/name" key, or nullptr.
framework::PodInfoPtr CachedPod(const cache::Cache& cache, const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return nullptr;
  api::Pod probe;
  probe.metadata.namespace_ = key.substr(0, slash);
  probe.metadata.name = key.substr(slash + 1);
  return cache.GetPod(probe);
}

}  // namespace

void Scheduler::SweepStaleGangs(api::Timestamp now) {
  using Kind = gang::StaleGangTracker::Action::Kind;
  for (auto& a : stale_gangs_->Check(*gangs_, gangs_->TakeRunningLosses(), now)) {
    if (a.kind == Kind::kRecovered) {
      gang_coordinator_->RecordStaleness(a.gang, true, a.message, "GangWhole");
      continue;
    }
    if (a.kind == Kind::kStale) {
      gang_coordinator_->RecordStaleness(a.gang, false, a.message, "StaleGang");
      continue;
    }
    framework::PreemptionRequest req;
    req.plugin = "StaleGangEviction";
    for (const auto& key : a.pods) {
      framework::PodInfoPtr p = CachedPod(cache_, key);
      if (p == nullptr) continue;
      if (req.disruption_message.empty()) {
        req.disruption_message = p->Pod().spec.scheduler_name + ": stale gang eviction";
      }
      req.victims.push_back({p, a.message, "Evicted"});
    }
    gang_coordinator_->RecordStaleness(a.gang, false, a.message, "StaleGangEvicted");
    if (req.victims.empty()) continue;
    req.reject_if_waiting = [this](const api::Pod& v) {
      for (auto& [name, fw] : profiles_) {
        if (fw->GetWaitingPod(v.metadata.uid) != nullptr) {
          fw->RejectWaitingPod(v.metadata.uid);
          return true;
        }
      }
      return false;
    };
    preemption_->Execute(std::move(req));
  }
}

}  // namespace phalanx::scheduler
