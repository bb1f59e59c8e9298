#include "app/live_metrics.h"

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "framework/extension_point_observer.h"
#include "framework/preemption_executor.h"

namespace phalanx::app {

namespace {

constexpr size_t kPoints = static_cast<size_t>(framework::ExtensionPoint::kCount);
constexpr size_t kCodes = static_cast<size_t>(framework::Code::kPending) + 1;
constexpr size_t kSeries = kPoints * kCodes;

double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

size_t SeriesIndex(framework::ExtensionPoint point, framework::Code code) {
  return static_cast<size_t>(point) * kCodes + static_cast<size_t>(code);
}

}  // namespace

// One profile's extension points, plugin calls, evaluations and Permit waits. Series are
// looked up once and cached: a sampled Filter pass reports one duration per node and
// plugin, from the Filter workers at once.
class LiveMetrics::ProfileObserver final : public framework::ExtensionPointObserver {
 public:
  ProfileObserver(metrics::SchedulerMetrics& sm, std::string profile, int sample_percent)
      : sm_(sm), profile_(std::move(profile)), sample_percent_(sample_percent) {}

  void Observe(framework::ExtensionPoint point, int64_t nanos) override {
    ObserveStatus(point, framework::Code::kSuccess, nanos);
  }
  void ObserveStatus(framework::ExtensionPoint point, framework::Code code,
                     int64_t nanos) override {
    const size_t i = SeriesIndex(point, code);
    if (i >= kSeries) return;
    metrics::HistogramValue* h = points_[i].load(std::memory_order_acquire);
    if (!h) {  // racing threads get the same series from the family
      h = &sm_.ExtensionPointSeries(framework::ExtensionPointName(point), framework::CodeName(code),
                                    profile_);
      points_[i].store(h, std::memory_order_release);
    }
    h->Observe(Seconds(nanos));
  }
  int PluginSamplePercent() const override { return sample_percent_; }
  void ObservePlugin(std::string_view plugin, framework::ExtensionPoint point, framework::Code code,
                     int64_t nanos) override {
    const size_t i = SeriesIndex(point, code);
    if (i >= kSeries) return;
    metrics::HistogramValue* h = nullptr;
    {
      absl::ReaderMutexLock l(&mu_);
      auto it = plugins_.find(absl::string_view(plugin.data(), plugin.size()));
      if (it != plugins_.end()) h = it->second[i];
    }
    if (!h) {
      h = &sm_.PluginDuration(plugin, framework::ExtensionPointName(point),
                              framework::CodeName(code));
      absl::MutexLock l(&mu_);
      plugins_[std::string(plugin)][i] = h;
    }
    h->Observe(Seconds(nanos));
  }
  void ObservePermitWait(framework::Code code, int64_t nanos) override {
    sm_.PermitWait(framework::CodeName(code), Seconds(nanos));
  }
  void ObserveAlgorithm(int64_t nanos) override { sm_.AlgorithmDuration(Seconds(nanos)); }
  bool WantsEvaluations() const override { return true; }
  void CountEvaluations(std::string_view plugin, framework::ExtensionPoint point,
                        uint64_t n) override {
    sm_.PluginEvaluations(plugin, framework::ExtensionPointName(point), profile_,
                          static_cast<double>(n));
  }

 private:
  metrics::SchedulerMetrics& sm_;
  const std::string profile_;
  const int sample_percent_;
  std::array<std::atomic<metrics::HistogramValue*>, kSeries> points_{};
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::array<metrics::HistogramValue*, kSeries>> plugins_
      ABSL_GUARDED_BY(mu_);
};

// Preemption counts (framework::PreemptionObserver) into the scheduler's metrics.
class LiveMetrics::PreemptionObserver final : public framework::PreemptionObserver {
 public:
  explicit PreemptionObserver(metrics::SchedulerMetrics& m) : m_(m) {}
  void PreemptionAttempt(std::string_view plugin, std::string_view result) override {
    m_.PreemptionAttempt(std::string(plugin), std::string(result));
  }
  void PreemptionVictims(std::string_view plugin, size_t victims, int64_t pdb_violations) override {
    m_.PreemptionVictims(std::string(plugin), double(victims), double(pdb_violations));
  }
  void PreemptionWorkDone(std::string_view, bool ok, double seconds) override {
    m_.PreemptionWorkDone(ok ? "success" : "error", seconds);
  }

 private:
  metrics::SchedulerMetrics& m_;
};

// An InformerFactory that times the handlers registered through it.
class LiveMetrics::TimingInformers final : public cluster::InformerFactory {
 public:
  TimingInformers(cluster::InformerFactory& inner, metrics::SchedulerMetrics& sm)
      : inner_(inner), sm_(sm) {}

  void AddPodHandlers(cluster::EventHandlers<api::Pod> h) override {
    // Upstream labels pods by whether they are assigned (eventhandlers.go).
    auto kind = [](const api::Pod& p) {
      return p.spec.node_name.empty() ? std::string("UnscheduledPod") : std::string("AssignedPod");
    };
    inner_.AddPodHandlers(Wrap(std::move(h), kind));
  }
  void AddTerminalPodHandlers(cluster::EventHandlers<api::Pod> h) override {
    inner_.AddTerminalPodHandlers(
        Wrap(std::move(h), [](const api::Pod&) { return std::string("TerminalPod"); }));
  }
  void AddNodeHandlers(cluster::EventHandlers<api::Node> h) override {
    inner_.AddNodeHandlers(
        Wrap(std::move(h), [](const api::Node&) { return std::string("Node"); }));
  }
  void AddPriorityClassHandlers(cluster::EventHandlers<api::PriorityClass> h) override {
    inner_.AddPriorityClassHandlers(
        Wrap(std::move(h), [](const api::PriorityClass&) { return std::string("PriorityClass"); }));
  }
  void AddNamespaceHandlers(cluster::EventHandlers<api::Namespace> h) override {
    inner_.AddNamespaceHandlers(
        Wrap(std::move(h), [](const api::Namespace&) { return std::string("Namespace"); }));
  }
  void AddObjectHandlers(cluster::EventHandlers<api::Unstructured> h) override {
    inner_.AddObjectHandlers(Wrap(std::move(h), [](const api::Unstructured& u) { return u.kind; }));
  }
  void AddPodDisruptionBudgetHandlers(cluster::EventHandlers<api::PodDisruptionBudget> h) override {
    inner_.AddPodDisruptionBudgetHandlers(Wrap(std::move(h), [](const api::PodDisruptionBudget&) {
      return std::string("PodDisruptionBudget");
    }));
  }

 private:
  template <typename T, typename KindFn>
  cluster::EventHandlers<T> Wrap(cluster::EventHandlers<T> h, KindFn kind) {
    using Ptr = std::shared_ptr<const T>;
    metrics::SchedulerMetrics* sm = &sm_;
    auto timed = [sm](const std::string& event, const auto& fn) {
      const auto t0 = std::chrono::steady_clock::now();
      fn();
      sm->EventHandling(event, Seconds(framework::NanosSince(t0)));
    };
    cluster::EventHandlers<T> out;
    if (h.on_add) {
      out.on_add = [timed, kind, f = std::move(h.on_add)](const Ptr& o) {
        timed(kind(*o) + "Add", [&] { f(o); });
      };
    }
    if (h.on_update) {
      out.on_update = [timed, kind, f = std::move(h.on_update)](const Ptr& old_obj, const Ptr& o) {
        timed(kind(*o) + "Update", [&] { f(old_obj, o); });
      };
    }
    if (h.on_delete) {
      out.on_delete = [timed, kind, f = std::move(h.on_delete)](const Ptr& o) {
        timed(kind(*o) + "Delete", [&] { f(o); });
      };
    }
    return out;
  }

  cluster::InformerFactory& inner_;
  metrics::SchedulerMetrics& sm_;
};

LiveMetrics::LiveMetrics(metrics::Registry& reg, scheduler::Scheduler& sched,
                         const framework::Clock& clock, int plugin_sample_percent)
    : sched_(sched) {
  const auto& profiles = sched.config().profiles;
  if (profiles.size() == 1) sole_profile_ = profiles[0].scheduler_name;
  metrics::SchedulerSources src;
  src.pending = [&sched] {
    auto c = sched.scheduling_queue().Counts();
    return metrics::PendingPods{double(c.active), double(c.backoff), double(c.unschedulable),
                                double(c.gated)};
  };
  src.cache_size = [&sched] {
    return metrics::CacheSize{double(sched.cache().NodeCount()), double(sched.cache().PodCount()),
                              double(sched.cache().AssumedPodCount())};
  };
  src.binding_goroutines = [&sched] { return double(sched.BindingCyclesInFlight()); };
  src.unschedulable_by_plugin = [&sched] {
    std::vector<std::pair<metrics::Labels, double>> rows;
    for (const auto& [key, n] : sched.scheduling_queue().UnschedulableByPlugin()) {
      rows.push_back({{key.first, key.second}, double(n)});
    }
    return rows;
  };
  sm_ = std::make_unique<metrics::SchedulerMetrics>(reg, std::move(src));
  for (const auto& p : sched.config().profiles) {
    framework::Framework* fwk = sched.Profile(p.scheduler_name);
    if (!fwk) continue;
    profiles_.push_back(
        std::make_unique<ProfileObserver>(*sm_, p.scheduler_name, plugin_sample_percent));
    fwk->SetExtensionPointObserver(profiles_.back().get());
  }
  metrics::SchedulerMetrics* sm = sm_.get();
  sched.scheduling_queue().SetIncomingObserver(
      [sm](std::string_view queue, std::string_view event) { sm->QueueIncoming(queue, event); });
  sched.scheduling_queue().SetHintObserver(
      [sm](std::string_view plugin, std::string_view event, std::string_view hint, double seconds) {
        sm->QueueingHint(plugin, event, hint, seconds);
      });
  preemption_ = std::make_unique<PreemptionObserver>(*sm_);
  sched.preemption().SetObserver(preemption_.get());
  const framework::Clock* c = &clock;
  sched.on_scheduled = [sm, c](const framework::QueuedPodInfo& qp, const std::string&) {
    const api::Timestamp start =
        qp.initial_attempt_timestamp != 0 ? qp.initial_attempt_timestamp : qp.timestamp;
    sm->PodScheduled(qp.attempts, double(c->Now() - start) / double(api::kNanosPerSecond));
  };
}

LiveMetrics::~LiveMetrics() = default;

bool LiveMetrics::ScheduleOne(bool blocking) {
  const int64_t before = sched_.stats().attempts;
  attempt_failure_result_.clear();
  const auto t0 = std::chrono::steady_clock::now();
  if (!sched_.ScheduleOne(blocking)) return false;
  if (sched_.stats().attempts == before) return true;  // skipped (deleted, assumed)
  const double secs = Seconds(framework::NanosSince(t0));
  if (!attempt_failure_result_.empty()) {
    sm_->AttemptDuration(attempt_failure_result_, attempt_failure_profile_, secs);
  } else {
    sm_->AttemptDuration("scheduled", sole_profile_, secs);
  }
  return true;
}

void LiveMetrics::OnBound(const api::Pod& pod) {
  sm_->Attempt("scheduled", pod.spec.scheduler_name);
}

void LiveMetrics::OnFailure(const framework::QueuedPodInfo& qp, const framework::Status& status,
                            scheduler::Scheduler::FailurePhase phase) {
  const std::string result = status.IsRejected() ? "unschedulable" : "error";
  sm_->Attempt(result, qp.Pod().spec.scheduler_name);
  if (phase == scheduler::Scheduler::FailurePhase::kScheduling) {
    attempt_failure_result_ = result;
    attempt_failure_profile_ = qp.Pod().spec.scheduler_name;
  } else {
    sm_->BindingFailure();
  }
}

cluster::InformerFactory& LiveMetrics::TimedInformers(cluster::InformerFactory& inner) {
  informers_.push_back(std::make_unique<TimingInformers>(inner, *sm_));
  return *informers_.back();
}

}  // namespace phalanx::app
