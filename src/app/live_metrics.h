// The live scheduler's Prometheus metrics: kube-scheduler's families
// (metrics/scheduler_metrics.h, upstream pkg/scheduler/metrics/metrics.go) fed from the
// scheduler's hooks. One LiveMetrics per `phalanx run` (or test):
//
//   metrics::Registry reg;
//   app::LiveMetrics lm(reg, *sched, clock);            // attaches to every profile
//   sched->AddEventHandlers(lm.TimedInformers(informers));
//   ... reg.Render() ...
//
// What feeds what:
//   - each profile's Framework: an ExtensionPointObserver recording
//     scheduler_framework_extension_point_duration_seconds{extension_point,status,profile},
//     scheduler_plugin_execution_duration_seconds{plugin,extension_point,status} for
//     `plugin_sample_percent` of the scheduling cycles (upstream pluginMetricsSamplePercent
//     = 10, pkg/scheduler/schedule_one.go), scheduler_plugin_evaluation_total,
//     scheduler_permit_wait_duration_seconds and
//     scheduler_scheduling_algorithm_duration_seconds;
//   - the queue: scheduler_queue_incoming_pods_total{queue,event},
//     scheduler_queueing_hint_execution_duration_seconds, scheduler_pending_pods,
//     scheduler_unschedulable_pods;
//   - Scheduler::on_scheduled: the scheduling SLI (pod_scheduling_sli_duration_seconds,
//     pod_scheduling_duration_seconds, pod_scheduling_attempts);
//   - the PreemptionExecutor: preemption attempts and victims;
//   - TimedInformers: scheduler_event_handling_duration_seconds{event};
//   - scrape time: scheduler_scheduler_cache_size{type}, scheduler_goroutines{operation}.
//   - the run loop (ScheduleOne, OnBound, OnFailure): scheduler_schedule_attempts_total and
//     scheduler_scheduling_attempt_duration_seconds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/informer.h"
#include "framework/clock.h"
#include "metrics/metrics.h"
#include "metrics/scheduler_metrics.h"
#include "scheduler/scheduler.h"

namespace phalanx::app {

class LiveMetrics {
 public:
  // `reg` and `clock` must outlive this object, and this object must outlive `sched` (or
  // its last scheduling, binding or event): it installs observers on the profiles, the
  // queue, the preemption executor and Scheduler::on_scheduled. Call before scheduling
  // starts.
  LiveMetrics(metrics::Registry& reg, scheduler::Scheduler& sched, const framework::Clock& clock,
              int plugin_sample_percent = 10);
  ~LiveMetrics();
  LiveMetrics(const LiveMetrics&) = delete;
  LiveMetrics& operator=(const LiveMetrics&) = delete;

  metrics::SchedulerMetrics& scheduler_metrics() { return *sm_; }

  // One scheduling attempt of the run loop: sched.ScheduleOne(blocking), timed into
  // scheduler_scheduling_attempt_duration_seconds{result,profile} (result "scheduled" when
  // the cycle did not fail; attempts skipped for deleted or assumed pods are not timed).
  // Scheduling thread only. Returns ScheduleOne's result.
  bool ScheduleOne(bool blocking);
  // To be called from Scheduler::on_bound: schedule_attempts_total{result="scheduled"}.
  void OnBound(const api::Pod& pod);
  // To be called from Scheduler::on_failure: schedule_attempts_total{result="unschedulable"
  // (a rejection) | "error"}; a binding-phase failure also counts
  // phalanx_binding_failures_total.
  void OnFailure(const framework::QueuedPodInfo& qp, const framework::Status& status,
                 scheduler::Scheduler::FailurePhase phase);
  // `inner`, with every handler registered through it timed into
  // scheduler_event_handling_duration_seconds{event}: event "AssignedPodAdd",
  // "UnscheduledPodAdd", "NodeUpdate", ... (upstream's ClusterEvent labels; objects without
  // a typed model: their kind + Add/Update/Delete). Valid while this object lives.
  cluster::InformerFactory& TimedInformers(cluster::InformerFactory& inner);

 private:
  class ProfileObserver;
  class PreemptionObserver;
  class TimingInformers;
  scheduler::Scheduler& sched_;
  std::unique_ptr<metrics::SchedulerMetrics> sm_;
  std::string sole_profile_;  // the profile of a one-profile configuration
  // The failure of the attempt ScheduleOne is timing (set by OnFailure in the scheduling
  // phase, on the scheduling thread; read and cleared by ScheduleOne).
  std::string attempt_failure_result_;
  std::string attempt_failure_profile_;
  std::vector<std::unique_ptr<ProfileObserver>> profiles_;
  std::unique_ptr<PreemptionObserver> preemption_;
  std::vector<std::unique_ptr<TimingInformers>> informers_;
};

}  // namespace phalanx::app
