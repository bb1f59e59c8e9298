#include "framework/preemption_executor.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

namespace phalanx::framework {

std::function<bool(const api::Pod&)> RejectIfWaitingIn(Handle& h) {
  Handle* handle = &h;
  return [handle](const api::Pod& v) {
    if (handle->GetWaitingPod(v.metadata.uid) == nullptr) return false;
    handle->RejectWaitingPod(v.metadata.uid);
    return true;
  };
}

PreemptionExecutor* PreemptionExecutorOf(Handle& h, std::unique_ptr<PreemptionExecutor>* own) {
  if (auto* ex = h.Service<PreemptionExecutor>()) return ex;
  *own = std::make_unique<PreemptionExecutor>(h.Client(), nullptr, nullptr);
  return own->get();
}

std::string DisruptionTargetMessage(std::string_view scheduler_name, std::string_view what) {
  return std::string(scheduler_name) + ": preempting to accommodate a higher priority " +
         std::string(what);
}

void PreemptionExecutor::RecordAttempt(std::string_view plugin, std::string_view result) {
  PreemptionObserver* observer = nullptr;
  {
    absl::MutexLock l(&mu_);
    observer = observer_;
  }
  if (observer) observer->PreemptionAttempt(plugin, result);
}

void PreemptionExecutor::Execute(PreemptionRequest req) {
  PreemptionObserver* observer = nullptr;
  {
    absl::MutexLock l(&mu_);
    for (const auto& p : req.preemptors) preempting_.insert(p->Pod().metadata.uid);
    ++in_flight_;
    observer = observer_;
  }
  if (observer) observer->PreemptionVictims(req.plugin, req.victims.size(), req.num_pdb_violations);
  auto work = [this, req = std::move(req)]() {
    const auto start = std::chrono::steady_clock::now();
    api::Status error = Evict(req);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Finish(req, error, seconds);
  };
  if (runner_) {
    runner_(std::move(work));
  } else {
    work();
  }
}

api::Status PreemptionExecutor::Evict(const PreemptionRequest& req) {
  const api::PodCondition cond{"DisruptionTarget", "True", "PreemptionByScheduler",
                               req.disruption_message};
  for (const auto& victim : req.victims) {
    const api::Pod& v = victim.pod->Pod();
    // Graceful deletion already started: nothing to send (upstream skips such victims).
    if (v.metadata.deletion_timestamp) continue;
    if (!req.reject_if_waiting || !req.reject_if_waiting(v)) {
      api::Status s = client_.UpdatePodStatus(v, &cond, nullptr);
      if (s.ok()) s = client_.DeletePod(v);
      if (absl::IsNotFound(s)) continue;  // already deleted
      if (!s.ok())
        return api::Status(s.code(), "preempt " + v.Key() + ": " + std::string(s.message()));
    }
    client_.RecordEvent(v, "Normal", victim.event_reason, victim.event_message);
  }
  // Lower-priority pods nominated to the freed nodes may no longer fit there: clearing
  // their nomination lets them look elsewhere sooner. Not critical (upstream logs it).
  const std::string none;
  for (const auto& p : req.clear_nominations) {
    api::Status s = client_.UpdatePodStatus(p->Pod(), nullptr, &none);
    if (!s.ok() && !absl::IsNotFound(s)) {
      spdlog::warn("preemption: cannot clear the nominatedNodeName of {}: {}", p->Pod().Key(),
                   std::string(s.message()));
    }
  }
  return absl::OkStatus();
}

void PreemptionExecutor::Finish(const PreemptionRequest& req, const api::Status& error,
                                double seconds) {
  std::vector<std::string> keys;
  keys.reserve(req.preemptors.size());
  for (const auto& p : req.preemptors) keys.push_back(p->Pod().Key());
  if (!error.ok()) {
    const std::string message(error.message());
    spdlog::warn("{}: preemption for {} failed: {}", req.plugin,
                 keys.empty() ? std::string("?") : keys.front(), message);
    for (const auto& p : req.preemptors) {
      client_.RecordEvent(p->Pod(), "Warning", "FailedPreemption",
                          "Preemption failed, remaining victims spared: " + message);
    }
  }
  PreemptionObserver* observer = nullptr;
  {
    absl::MutexLock l(&mu_);
    for (const auto& p : req.preemptors) {
      auto it = preempting_.find(p->Pod().metadata.uid);
      if (it != preempting_.end()) preempting_.erase(it);
    }
    --in_flight_;
    observer = observer_;
  }
  if (observer) observer->PreemptionWorkDone(req.plugin, error.ok(), seconds);
  // On success only pods that PreEnqueue held back need a push; on failure the preemptor
  // is retried at once wherever it waits (upstream Activate on error).
  if (activate_ && !keys.empty()) activate_(keys, /*only_gated=*/error.ok());
}

bool PreemptionExecutor::IsPodRunningPreemption(std::string_view uid) const {
  absl::MutexLock l(&mu_);
  return preempting_.find(uid) != preempting_.end();
}

int64_t PreemptionExecutor::InFlight() const {
  absl::MutexLock l(&mu_);
  return in_flight_;
}

void PreemptionExecutor::SetObserver(PreemptionObserver* o) {
  absl::MutexLock l(&mu_);
  observer_ = o;
}

}  // namespace phalanx::framework
