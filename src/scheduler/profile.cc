// The scheduler's profiles (upstream pkg/scheduler/profile): one Framework per
// KubeSchedulerConfiguration profile, all sharing one scheduling queue.
#include <memory>

#include "gang/coordinator.h"
#include "gang/default_podgroup_manager.h"
#include "quota/queue_manager.h"
#include "scheduler/scheduler.h"
#include "volume/catalog.h"

namespace phalanx::scheduler {

using framework::Status;

framework::FrameworkOptions Scheduler::BaseFrameworkOptions() {
  framework::FrameworkOptions fo;
  fo.clock = opts_.clock;
  fo.client = opts_.client;
  fo.snapshot = &snapshot_;
  fo.parallelizer = parallelizer_.get();
  fo.percentage_of_nodes_to_score = opts_.config.percentage_of_nodes_to_score;
  fo.nominated_pods_for_node = [this](const std::string& node) {
    return queue_->nominator().ForNode(node);
  };
  fo.nominated_pods_view = [this](const framework::NodeInfo& ni) {
    // Cached on the NodeInfo until the node's nominations change (SyncNominatedLookups
    // resets it at the start of each Filter pass) or the NodeInfo is replaced.
    if (auto cached = ni.nominated_lookup()) return cached->pods;
    auto pods = queue_->nominator().ViewForNode(ni.name());
    ni.set_nominated_lookup(
        std::make_shared<const framework::NominatedLookup>(framework::NominatedLookup{pods}));
    return pods;
  };
  fo.priority_of = [this](const api::Pod& p) { return PriorityOf(p); };
  fo.random = [this](uint64_t n) { return Random(n); };
  fo.services = opts_.services;
  fo.services.Provide<gang::PodGroupManager>(gangs_.get());
  fo.services.Provide<quota::SharedQueueManager>(queues_.get());
  fo.services.Provide<volume::Catalog>(volumes_.get());
  fo.services.Provide<dra::DefaultDRAManager>(dra_.get());
  fo.services.Provide<gang::ReservationManager>(reservations_.get());
  fo.services.Provide<gang::PodGroupEventRecorder>(gang_coordinator_.get());
  fo.services.Provide<gang::StaleGangTracker>(stale_gangs_.get());
  fo.services.Provide<framework::PreemptionExecutor>(preemption_.get());
  fo.services.Provide<framework::ExtenderList>(&extender_list_);
  fo.services.Provide<framework::ObjectEventSource>(object_watch_.get());
  fo.services.Provide<framework::PodActivator>(object_watch_.get());
  fo.namespace_labels = [this](std::string_view name, std::map<std::string, std::string>* out) {
    absl::MutexLock l(&ns_mu_);
    auto it = namespace_labels_.find(std::string(name));
    if (it == namespace_labels_.end()) return false;
    *out = it->second;
    return true;
  };
  fo.pod_disruption_budgets = [this] { return ListPodDisruptionBudgets(); };
  fo.cluster_object_epoch = [this] { return object_epoch_.load(std::memory_order_acquire); };
  fo.for_each_namespace =
      [this](
          const std::function<void(const std::string&, const std::map<std::string, std::string>&)>&
              fn) {
        std::map<std::string, std::map<std::string, std::string>> copy;
        {
          absl::MutexLock l(&ns_mu_);
          copy = namespace_labels_;
        }
        for (const auto& [n, labels] : copy) fn(n, labels);
      };
  return fo;
}

Status Scheduler::BuildProfiles() {
  const auto& cfg = opts_.config;
  if (cfg.profiles.empty()) return Status::Error("no profiles configured");
  for (const auto& prof : cfg.profiles) {
    auto fw = framework::Framework::New(opts_.registry, prof, BaseFrameworkOptions());
    if (!fw.ok()) return fw.status();
    if (profiles_.count(prof.scheduler_name)) {
      return Status::Error("duplicate profile " + prof.scheduler_name);
    }
    profiles_[prof.scheduler_name] = std::move(fw).value();
  }
  return Status::Success();
}

Status Scheduler::BuildQueue() {
  // All profiles share one queue; upstream requires the same QueueSort everywhere.
  std::string qs;
  for (const auto& [name, fw] : profiles_) {
    auto l = fw->ListPlugins("QueueSort");
    if (qs.empty()) {
      qs = l[0];
    } else if (qs != l[0]) {
      return Status::Error("profiles use different QueueSort plugins (" + qs + ", " + l[0] +
                           "); all profiles must share one");
    }
  }
  const auto& cfg = opts_.config;
  framework::Framework* first = profiles_.begin()->second.get();
  queue::QueueOptions qo;
  qo.initial_backoff_ns = cfg.pod_initial_backoff_seconds * api::kNanosPerSecond;
  qo.max_backoff_ns = cfg.pod_max_backoff_seconds * api::kNanosPerSecond;
  qo.max_in_unschedulable_ns =
      cfg.pod_max_in_unschedulable_pods_duration_seconds * api::kNanosPerSecond;
  queue_ = std::make_unique<queue::SchedulingQueue>(
      [first](const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) {
        return first->QueueSortLess(a, b);
      },
      *opts_.clock, qo,
      first->QueueSortHasKey()
          ? queue::SchedulingQueue::KeyFn(
                [first](const framework::QueuedPodInfo& p) { return first->QueueSortKeyOf(p); })
          : nullptr,
      first->QueueSortHasPartitions() ? queue::SchedulingQueue::PartitionFns{
                                            [first](const framework::QueuedPodInfo& p) {
                                              return first->QueueSortPartitionOf(p);
                                            },
                                            [first](const std::string& a, const std::string& b) {
                                              return first->QueueSortPartitionLess(a, b);
                                            }}
                                      : queue::SchedulingQueue::PartitionFns{});
  for (auto& [name, fw] : profiles_) {
    queue::ProfileHooks hooks;
    framework::Framework* f = fw.get();
    hooks.pre_enqueue = [f](const framework::PodInfo& p) { return f->RunPreEnqueuePlugins(p); };
    hooks.hints = f->EventHints();
    // Extenders have no queueing hints: a pod one rejected is requeued by any event
    // (upstream registers framework.ExtenderName for every event when extenders exist).
    if (!extender_list_.extenders.empty()) {
      hooks.hints.push_back({framework::kExtenderName, framework::ClusterEventWithHint{}});
    }
    queue_->SetProfileHooks(name, std::move(hooks));
  }
  return Status::Success();
}

}  // namespace phalanx::scheduler
