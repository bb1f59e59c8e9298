// The Scheduler object: construction, periodic work, the run loop (upstream
// pkg/scheduler/scheduler.go). The scheduling cycle is in schedule_one.cc, the PodGroup
// cycle in schedule_one_podgroup.cc and podgroup_algorithm.cc, the informer callbacks in
// eventhandlers.cc and the profiles in profile.cc.
#include "scheduler/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "gang/coordinator.h"
#include "gang/default_podgroup_manager.h"
#include "quota/queue_manager.h"
#include "scheduler/binding_pool.h"
#include "volume/catalog.h"

namespace phalanx::scheduler {

using framework::Status;

Scheduler::Scheduler(SchedulerOptions opts)
    : opts_(std::move(opts)),
      gangs_(opts_.gangs ? opts_.gangs : std::make_shared<gang::DefaultPodGroupManager>()),
      queues_(opts_.queues ? opts_.queues : std::make_shared<quota::QueueManager>(gangs_.get())),
      volumes_(opts_.volumes ? opts_.volumes : std::make_shared<volume::Catalog>()),
      cache_(opts_.assumed_pod_ttl_ns),
      rng_(opts_.seed) {
  // Queues charge the devices of the pods' DRA claims (quota/device_charge.h). A
  // QueueManager the caller passed is theirs to wire.
  if (!opts_.queues) queues_->UseDRA(dra_.get());
}

Scheduler::~Scheduler() { Stop(); }

framework::StatusOr<std::unique_ptr<Scheduler>> Scheduler::New(SchedulerOptions opts) {
  if (!opts.clock || !opts.client) return Status::Error("scheduler needs a clock and a client");
  std::unique_ptr<Scheduler> s(new Scheduler(std::move(opts)));
  s->gang_coordinator_ = std::make_unique<gang::Coordinator>(*s->gangs_, *s->opts_.client);
  Scheduler* raw = s.get();
  // A reservation released by expiry or a gone gang frees its nodes for the pods
  // GangReservation rejected there.
  s->reservations_->SetOnReleased([raw] {
    raw->Requeue(framework::EventResource::kAssignedPod, framework::kDelete,
                 "GangReservationReleased", {});
  });
  s->preemption_ = std::make_unique<framework::PreemptionExecutor>(
      *s->opts_.client,
      [raw](std::function<void()> fn) {
        if (raw->binding_pool_) {
          raw->binding_pool_->Submit(std::move(fn));
        } else {
          fn();
        }
      },
      [raw](const std::vector<std::string>& keys, bool only_gated) {
        if (only_gated) {
          raw->queue_->ReleaseGated(keys);
        } else {
          raw->queue_->Activate(keys);
        }
      });
  s->parallelizer_ = std::make_unique<framework::Parallelizer>(s->opts_.config.parallelism);
  if (Status st = s->BuildExtenders(); !st.IsSuccess()) return st;
  if (Status st = s->BuildProfiles(); !st.IsSuccess()) return st;
  if (Status st = s->BuildQueue(); !st.IsSuccess()) return st;
  if (s->opts_.binding_workers > 0) {
    s->binding_pool_ = std::make_unique<BindingPool>(s->opts_.binding_workers);
  }
  return s;
}

int32_t Scheduler::PriorityOf(const api::Pod& pod) const {
  // KAI (docs/priority/README.md, podgrouper defaultgrouper calcPodGroupPriorityClass): a
  // workload's priority is the class its `priorityClassName` label names, then its
  // PodGroup's spec.priorityClassName (or the owner's label, through PodGrouper), before the
  // pod's own class; a name no PriorityClass has is ignored, as KAI ignores it.
  std::string gang_class;
  const std::string* named = nullptr;
  if (!pod.metadata.labels.empty()) {
    static const std::string kLabel(gang::kKaiPriorityLabel);
    auto it = pod.metadata.labels.find(kLabel);
    if (it != pod.metadata.labels.end() && !it->second.empty()) named = &it->second;
  }
  if (named == nullptr && gangs_) {
    gang_class = gangs_->GangPriorityClassOf(pod);
    if (!gang_class.empty()) named = &gang_class;
  }
  if (named != nullptr) {
    absl::MutexLock l(&pc_mu_);
    auto it = priority_classes_.find(*named);
    if (it != priority_classes_.end()) return it->second->value;
  }
  if (pod.spec.priority) return *pod.spec.priority;
  // No class named: the global default, read without pc_mu_ (preemption's dry run asks
  // for every pod on thousands of nodes, from every Filter worker).
  if (pod.spec.priority_class_name.empty())
    return default_priority_.load(std::memory_order_acquire);
  absl::MutexLock l(&pc_mu_);
  auto it = priority_classes_.find(pod.spec.priority_class_name);
  if (it != priority_classes_.end()) return it->second->value;
  return default_priority_.load(std::memory_order_acquire);
}

void Scheduler::UpdateDefaultPriorityLocked() {
  // upstream admission (plugin/pkg/admission/priority): the globalDefault class's value, or
  // 0 without one; with several (which the API server's admission refuses), the first by
  // name, as the map iterates.
  int32_t value = 0;
  for (const auto& [n, pc] : priority_classes_) {
    if (pc->global_default) {
      value = pc->value;
      break;
    }
  }
  default_priority_.store(value, std::memory_order_release);
}

uint64_t Scheduler::Random(uint64_t n) {
  if (n == 0) return 0;
  absl::MutexLock l(&rng_mu_);
  return rng_() % n;
}

void Scheduler::CountAttempts(int64_t n) {
  absl::MutexLock l(&stats_mu_);
  stats_.attempts += n;
}

framework::Framework* Scheduler::ProfileFor(const api::Pod& pod) {
  return Profile(pod.spec.scheduler_name);
}

framework::Framework* Scheduler::Profile(const std::string& name) {
  auto it = profiles_.find(name);
  return it == profiles_.end() ? nullptr : it->second.get();
}

bool Scheduler::ResponsibleFor(const api::Pod& pod) const {
  return profiles_.count(pod.spec.scheduler_name) > 0;
}

int Scheduler::BindingCyclesInFlight() const {
  return binding_pool_ ? binding_pool_->InFlight() : 0;
}

SchedulerStats Scheduler::stats() const {
  absl::MutexLock l(&stats_mu_);
  return stats_;
}

void Scheduler::WaitForBindings() {
  if (binding_pool_) binding_pool_->WaitIdle();
}

// ---- periodic work ----

void Scheduler::ReportGatedPods() {
  for (auto& r : queue_->TakeGateReports()) {
    const api::Pod& pod = *r.pod->pod;
    // The gate as it is now (a gang's message counts the members that exist): PreEnqueue
    // again; a pod it now lets through is left to the queue's next activation.
    if (framework::Framework* fwk = ProfileFor(pod)) {
      const Status now = fwk->RunPreEnqueuePlugins(*r.pod);
      if (now.IsSuccess()) continue;
      r.plugin = now.plugin();
      r.message = now.Message();
    }
    const char* reason =
        r.plugin == "SchedulingGates" ? "SchedulingGated" : "NotReadyForScheduling";
    const bool same = std::any_of(pod.status.conditions.begin(), pod.status.conditions.end(),
                                  [&](const api::PodCondition& c) {
                                    return c.type == "PodScheduled" && c.status == "False" &&
                                           c.reason == reason && c.message == r.message;
                                  });
    if (same) continue;
    opts_.client->RecordEvent(pod, "Normal", reason, r.message);
    const api::PodCondition cond{"PodScheduled", "False", reason, r.message};
    if (api::Status st = opts_.client->UpdatePodStatus(pod, &cond, nullptr);
        !st.ok() && !absl::IsNotFound(st)) {
      spdlog::warn("PodScheduled condition of {}: {}", pod.Key(), std::string(st.message()));
    }
  }
}

void Scheduler::Tick() {
  const api::Timestamp now = opts_.clock->Now();
  queue_->FlushBackoffQCompleted();
  queue_->FlushUnschedulablePodsLeftover();
  ReportGatedPods();
  for (auto& [name, fw] : profiles_) fw->ExpireWaitingPods(now);
  RetryWaitingPreBinds(now);
  SweepReservations(now);
  SweepStaleGangs(now);
  auto expired = cache_.CleanupExpiredAssumedPods(now);
  if (!expired.empty()) {
    Requeue(framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete", {});
  }
}

api::Timestamp Scheduler::NextWakeTime() const {
  api::Timestamp t = std::min(queue_->NextBackoffExpiry(), queue_->NextUnschedulableTimeout());
  for (const auto& [name, fw] : profiles_) t = std::min(t, fw->NextPermitDeadline());
  t = std::min(t, stale_gangs_->NextDeadline());
  {
    absl::MutexLock l(&prebind_mu_);
    for (const PreBindWaiter& w : prebind_waiting_) t = std::min(t, w.wake_at);
  }
  return std::min(t, reservations_->NextExpiry());
}

void Scheduler::Run() {
  std::thread ticker([this] {
    while (!stopped_.load()) {
      Tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  while (!stopped_.load()) {
    if (!ScheduleOne(/*blocking=*/true)) break;
  }
  stopped_ = true;
  ticker.join();
}

void Scheduler::Stop() {
  stopped_ = true;
  if (queue_) queue_->Close();
  WaitForBindings();
}

void Scheduler::SweepStaleGangs(api::Timestamp now) {
  gang_coordinator_->SweepStale(
      now, *stale_gangs_,
      [this](const std::string& key) -> framework::PodInfoPtr {
        const size_t slash = key.find('/');
        if (slash == std::string::npos) return nullptr;
        api::Pod probe;
        probe.metadata.namespace_ = key.substr(0, slash);
        probe.metadata.name = key.substr(slash + 1);
        return cache_.GetPod(probe);
      },
      *preemption_,
      [this](const api::Pod& v) {
        for (auto& [name, fw] : profiles_) {
          if (fw->GetWaitingPod(v.metadata.uid) != nullptr) {
            fw->RejectWaitingPod(v.metadata.uid);
            return true;
          }
        }
        return false;
      });
}

void Scheduler::SweepReservations(api::Timestamp now) {
  if (reservations_->ActiveCount() == 0) return;
  reservations_->Sweep(
      now, [this](const std::string& key) { return gang::ReservationGangGone(*gangs_, key); });
}

}  // namespace phalanx::scheduler
