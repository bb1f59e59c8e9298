#include "sim/simulation.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <sstream>
#include <unordered_map>

#include "dra/model.h"
#include "framework/clock.h"
#include "gang/default_podgroup_manager.h"
#include "gpu/device.h"
#include "plugins/defaultpreemption/default_preemption.h"
#include "plugins/defragmentation/defragmentation.h"
#include "plugins/queues/queues.h"
#include "quota/queue_manager.h"
#include "scheduler/scheduler.h"
#include "sim/autoscaler.h"
#include "sim/disruption.h"
#include "sim/dra_claims.h"
#include "sim/invariants.h"
#include "sim/volume_controllers.h"
#include "store/store.h"
#include "volume/objects.h"

namespace phalanx::sim {

namespace {

enum class EvKind { kCreatePod, kDeletePod, kCreateNode, kReleaseClaims, kRecreatePod };
struct Ev {
  api::Timestamp t;
  uint64_t seq;
  EvKind kind;
  size_t pod;                // index into scenario.pods (kCreateNode: into scenario.later_nodes)
  uint32_t incarnation = 0;  // kDeletePod: of the pod's incarnation it was pushed for
  bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

double Seconds(api::Timestamp t) { return static_cast<double>(t) / 1e9; }

struct UsageTracker {
  api::Resource last;
  api::Timestamp last_t = 0;
  bool started = false;
  // integrals of allocated * dt (resource units * ns), as doubles
  double cpu = 0, mem = 0, gpu = 0, pods = 0;
  api::Resource peak;
  api::ResourceId gpu_id = api::InternScalarResource(api::kResourceNvidiaGPU);
  api::Timestamp first_t = 0;

  void Sample(const api::Resource& now_alloc, api::Timestamp t) {
    if (started) {
      double dt = static_cast<double>(t - last_t);
      cpu += dt * static_cast<double>(last.milli_cpu);
      mem += dt * static_cast<double>(last.memory);
      gpu += dt * static_cast<double>(last.Scalar(gpu_id));
      pods += dt * static_cast<double>(last.allowed_pod_number);
    } else {
      started = true;
      first_t = t;
    }
    last = now_alloc;
    last_t = t;
    peak.milli_cpu = std::max(peak.milli_cpu, now_alloc.milli_cpu);
    peak.memory = std::max(peak.memory, now_alloc.memory);
    peak.allowed_pod_number = std::max(peak.allowed_pod_number, now_alloc.allowed_pod_number);
    peak.SetScalar(gpu_id, std::max(peak.Scalar(gpu_id), now_alloc.Scalar(gpu_id)));
  }
};

// The scheduler's ClusterClient in a run: the store, reporting the "Preempted" events
// (victims, and whether the eviction violated a PodDisruptionBudget) on the way.
class CountingClient final : public cluster::ClusterClient {
 public:
  explicit CountingClient(store::Store& store) : store_(store) {}
  api::Status Bind(const api::Pod& pod, const std::string& node) override {
    return store_.Bind(pod, node);
  }
  api::Status DeletePod(const api::Pod& pod) override { return store_.DeletePod(pod); }
  api::Status PatchPodAnnotations(const api::Pod& pod,
                                  const std::map<std::string, std::string>& annotations) override {
    return store_.PatchPodAnnotations(pod, annotations);
  }
  api::Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                              const std::string* nominated_node_name) override {
    return store_.UpdatePodStatus(pod, condition, nominated_node_name);
  }
  api::Status PutObject(const api::Unstructured& obj) override { return store_.PutObject(obj); }
  api::StatusOr<api::Unstructured> PostObject(const api::Unstructured& obj) override {
    return store_.PostObject(obj);
  }
  api::Status DeleteObject(const api::Unstructured& obj) override {
    return store_.DeleteObject(obj);
  }
  void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                   std::string_view message) override {
    if (reason == "Preempted" && on_preempted) {
      on_preempted(pod, message.find(plugins::defaultpreemption::kPDBViolationNote) !=
                            std::string_view::npos);
    }
    store_.RecordEvent(pod, type, reason, message);
  }
  void RecordObjectEvent(std::string_view api_version, std::string_view kind, std::string_view ns,
                         std::string_view name, std::string_view type, std::string_view reason,
                         std::string_view message) override {
    store_.RecordObjectEvent(api_version, kind, ns, name, type, reason, message);
  }
  void UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                            std::string_view ns, std::string_view name,
                            const PodGroupStatus& status) override {
    store_.UpdatePodGroupStatus(api_version, kind, ns, name, status);
  }
  api::Status UpdateResourceClaimStatus(const api::Unstructured& claim) override {
    return store_.UpdateResourceClaimStatus(claim);
  }
  api::StatusOr<api::Unstructured> CreateResourceClaim(const api::Unstructured& claim) override {
    return store_.CreateResourceClaim(claim);
  }
  api::Status DeleteResourceClaim(const api::Unstructured& claim) override {
    return store_.DeleteResourceClaim(claim);
  }
  api::Status PatchPodExtendedResourceClaimStatus(
      const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) override {
    return store_.PatchPodExtendedResourceClaimStatus(pod, status);
  }

  // (victim, whether its eviction violated a PodDisruptionBudget); called on the
  // scheduling thread (binding is inline in a simulation).
  std::function<void(const api::Pod&, bool)> on_preempted;

 private:
  store::Store& store_;
};

// Counts preemptions (one per eviction the scheduler's PreemptionExecutor runs: a pod's,
// a gang's or a queue reclaim's) into the result, and apart from them the pods that the
// Defragmentation plugin moves through the same executor; inline in a simulation.
class PreemptionCounter final : public framework::PreemptionObserver {
 public:
  PreemptionCounter(int64_t* preemptions, int64_t* moved_pods)
      : preemptions_(preemptions), moved_pods_(moved_pods) {}
  void PreemptionAttempt(std::string_view, std::string_view) override {}
  void PreemptionVictims(std::string_view plugin, size_t victims, int64_t) override {
    if (plugin == plugins::defragmentation::Defragmentation::kName) {
      *moved_pods_ += static_cast<int64_t>(victims);
    } else {
      ++*preemptions_;
    }
  }
  void PreemptionWorkDone(std::string_view, bool, double) override {}

 private:
  int64_t* preemptions_;
  int64_t* moved_pods_;
};

bool SameStatus(const api::PodDisruptionBudget::Status& a,
                const api::PodDisruptionBudget::Status& b) {
  return a.disruptions_allowed == b.disruptions_allowed && a.current_healthy == b.current_healthy &&
         a.desired_healthy == b.desired_healthy && a.expected_pods == b.expected_pods &&
         a.disrupted_pods == b.disrupted_pods;
}

// One run of RunSimulation: the store, the scheduler on the virtual clock, the event queue
// and the figures recorded while the loop runs (see simulation.h for the loop).
class Driver {
 public:
  Driver(const Scenario& sc, const SimulationOptions& opts, SimulationResult* res)
      : sc_(sc), opts_(opts), res_(res), clock_(0), store_(clock_), client_(store_) {}

  api::Status Run() {
    const auto wall_start = std::chrono::steady_clock::now();
    store_.set_keep_all_events(false);
    checker_.Attach(store_);
    volume_controllers_.Attach();  // before any object or pod exists
    if (!sc_.node_groups.empty()) {
      autoscaler_ = std::make_unique<Autoscaler>(store_, clock_, sc_.node_groups, opts_.seed);
      autoscaler_->on_node_added = [this](const api::Node& n) {
        ++res_->nodes;
        node_gpus_[n.metadata.name] = gpu::ParseNodeGpus(n);
        res_->gpu_milli_capacity += 1000.0 * node_gpus_[n.metadata.name].count;
        capacity_peak_.SetMax(checker_.Capacity());
      };
      autoscaler_->Attach();
    }
    if (auto s = NewScheduler(); !s.ok()) return s;
    if (auto s = CreateObjects(); !s.ok()) return s;
    sched_->AddEventHandlers(store_);
    CountGpuCapacity();
    if (opts_.hooks.on_start) opts_.hooks.on_start(*sched_);
    res_->scenario = sc_.name;
    res_->unused_kinds = sc_.unused_kinds;
    res_->warnings = sc_.warnings;
    res_->notes = sc_.notes;
    res_->seed = opts_.seed;
    res_->nodes = sc_.nodes.size();
    res_->pods = sc_.pods.size();
    res_->outcomes.resize(sc_.pods.size());
    index_.reserve(sc_.pods.size() * 2);
    for (size_t i = 0; i < sc_.pods.size(); ++i) Push(sc_.pods[i].arrival, EvKind::kCreatePod, i);
    for (size_t i = 0; i < sc_.later_nodes.size(); ++i) {
      Push(sc_.later_nodes[i].arrival, EvKind::kCreateNode, i);
    }
    InstallCallbacks();
    if (has_queues_)
      res_->queue_resource = HasGpus() ? std::string(api::kResourceNvidiaGPU) : "cpu";
    if (auto s = Loop(); !s.ok()) return s;
    if (opts_.hooks.on_end) opts_.hooks.on_end(*sched_, store_);
    Finish();
    res_->wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return absl::OkStatus();
  }

 private:
  api::Status NewScheduler() {
    scheduler::SchedulerOptions so;
    so.config = opts_.config;
    // Queue objects in the scenario turn the Queues plugin on (docs/queues.md).
    has_queues_ = std::any_of(sc_.objects.begin(), sc_.objects.end(),
                              [](const api::Unstructured& o) { return quota::IsQueueObject(o); });
    if (has_queues_) {
      for (auto& prof : so.config.profiles) plugins::queues::EnableQueuesInProfile(&prof);
    }
    so.registry = opts_.registry;
    so.clock = &clock_;
    so.client = &client_;
    so.seed = opts_.seed;
    so.binding_workers = 0;
    // A binder extender's bind is sent to it and then applied to the in-process store.
    so.bind_after_extender_binding = true;
    auto sched_or = scheduler::Scheduler::New(std::move(so));
    if (!sched_or.ok()) {
      return absl::InvalidArgumentError(
          (opts_.config_source.empty() ? "" : opts_.config_source + ": ") +
          sched_or.status().Message());
    }
    sched_ = std::move(sched_or).value();
    for (const auto& prof : opts_.config.profiles) {
      profile_names_ += (profile_names_.empty() ? "" : ", ") + prof.scheduler_name;
    }
    return absl::OkStatus();
  }

  // PriorityClasses, Namespaces, other objects (gangs, queues, ...), PodDisruptionBudgets
  // and Nodes, in that order.
  api::Status CreateObjects() {
    for (const auto& pc : sc_.priority_classes) {
      auto r = store_.CreatePriorityClass(pc);
      if (!r.ok())
        return absl::InvalidArgumentError("PriorityClass " + pc.metadata.name + ": " +
                                          std::string(r.message()));
    }
    for (const auto& ns : sc_.namespaces) (void)store_.CreateNamespace(ns);
    for (auto o : sc_.objects) {
      // Namespaced storage objects default to "default", as the API server does.
      const volume::Kind vk = volume::KindOf(o);
      if ((vk == volume::Kind::kPVC || vk == volume::Kind::kCSIStorageCapacity) &&
          o.metadata.namespace_.empty()) {
        o.metadata.namespace_ = "default";
      }
      auto r = store_.CreateObject(o);
      if (!r.ok()) {
        return absl::InvalidArgumentError(o.kind + " " + o.metadata.namespace_ + "/" +
                                          o.metadata.name + ": " + std::string(r.message()));
      }
    }
    for (const auto& pdb : sc_.pod_disruption_budgets) {
      auto r = store_.CreatePodDisruptionBudget(pdb);
      if (!r.ok()) {
        return absl::InvalidArgumentError("PodDisruptionBudget " + pdb.Key() + ": " +
                                          std::string(r.message()));
      }
    }
    res_->pod_disruption_budgets = sc_.pod_disruption_budgets.size();
    for (const auto& n : sc_.nodes) {
      auto r = store_.CreateNode(n);
      if (!r.ok())
        return absl::InvalidArgumentError("Node " + n.metadata.name + ": " +
                                          std::string(r.message()));
    }
    return absl::OkStatus();
  }

  // GPU devices per node (device model of src/gpu), for the GPU milli timeline.
  void CountGpuCapacity() {
    for (const auto& n : sc_.nodes) {
      node_gpus_[n.metadata.name] = gpu::ParseNodeGpus(n);
      res_->gpu_milli_capacity += 1000.0 * node_gpus_[n.metadata.name].count;
    }
    pod_gpu_milli_.assign(sc_.pods.size(), 0.0);
    incarnation_.assign(sc_.pods.size(), 0);
  }

  bool HasGpus() const {
    const std::string gpu(api::kResourceNvidiaGPU);
    for (const auto& n : sc_.nodes) {
      auto it = n.status.allocatable.find(gpu);
      auto ct = n.status.capacity.find(gpu);
      if ((it != n.status.allocatable.end() && !it->second.IsZero()) ||
          (ct != n.status.capacity.end() && !ct->second.IsZero())) {
        return true;
      }
    }
    // GPUs as DRA devices only: a ResourceSlice with devices and a DeviceClass whose name
    // contains "gpu", which queues count as nvidia.com/gpu (quota/device_charge.h).
    bool slices = false, gpu_class = false;
    for (const auto& o : sc_.objects) {
      if (o.kind == "ResourceSlice" && o.Group() == "resource.k8s.io") slices = true;
      if (o.kind == "DeviceClass" && o.Group() == "resource.k8s.io" &&
          !quota::DeviceClassMapper().MappedName(o.metadata.name).empty()) {
        gpu_class = true;
      }
    }
    return slices && gpu_class;
  }

  // True when a profile serves the pod's spec.schedulerName (else the scheduler ignores it).
  bool Served(const api::Pod& pod) const {
    return sched_->Profile(pod.spec.scheduler_name) != nullptr;
  }

  void Push(api::Timestamp t, EvKind kind, size_t pod) {
    const uint32_t inc =
        kind == EvKind::kDeletePod && pod < incarnation_.size() ? incarnation_[pod] : 0;
    events_.push({t, seq_++, kind, pod, inc});
  }

  void InstallCallbacks() {
    sched_->on_bound = [this](const api::Pod& pod, const std::string& node) { OnBound(pod, node); };
    sched_->preemption().SetObserver(&preemption_counter_);
    sched_->on_failure = [this](const framework::QueuedPodInfo& qp, const framework::Status&,
                                scheduler::Scheduler::FailurePhase) {
      auto it = index_.find(qp.Pod().Key());
      if (it == index_.end()) return;
      res_->outcomes[it->second].reason = qp.last_failure_message;
      ++res_->outcomes[it->second].attempts;
      last_reasons_[it->second] = qp.last_failure_reasons;
      if (opts_.delete_unschedulable) Push(clock_.Now(), EvKind::kDeletePod, it->second);
    };
    client_.on_preempted = [this](const api::Pod& pod, bool violates_pdb) {
      ++res_->preemption_victims;
      if (violates_pdb) ++res_->pdb_violations;
      auto it = index_.find(pod.Key());
      if (it != index_.end()) res_->outcomes[it->second].preempted = true;
    };
    // Pods deleted by the scheduler itself (preemption, queue reclaim) give their GPU milli
    // back too; the trace's own deletions find it already zeroed.
    store_.AddPodHandlers({[this](const api::PodPtr&) { pdbs_stale_ = true; },
                           [this](const api::PodPtr&, const api::PodPtr&) { pdbs_stale_ = true; },
                           [this](const api::PodPtr& p) {
                             pdbs_stale_ = true;
                             auto it = index_.find(p->Key());
                             if (it == index_.end()) return;
                             if (!in_sim_delete_) EvictedByScheduler(it->second);
                             ReleaseGpuMilli(it->second);
                             // The resourceclaim controller's part, after this event (a
                             // handler does not write back to the store).
                             if (!p->spec.resource_claims.empty() ||
                                 p->status.extended_resource_claim_status) {
                               gone_with_claims_[it->second] = *p;
                               Push(clock_.Now(), EvKind::kReleaseClaims, it->second);
                             }
                           }});
  }

  void OnBound(const api::Pod& pod, const std::string& node) {
    auto it = index_.find(pod.Key());
    if (it == index_.end()) return;
    PodOutcome& o = res_->outcomes[it->second];
    if (!o.scheduled_s) {
      o.scheduled_s = Seconds(clock_.Now());
      o.node = node;
      ++o.attempts;
    }
    Holds(it->second, pod, node);
  }

  // Pod i holds resources on `node` from now on (bound by the scheduler or in the
  // manifest): its GPU milli, the on_bound hook, its departure after the run duration.
  void Holds(size_t i, const api::Pod& pod, const std::string& node) {
    if (pod_gpu_milli_[i] == 0) {
      const auto ask = gpu::ParseGpuAsk(pod);
      auto ng = node_gpus_.find(node);
      if (ask.has_gpu() && ng != node_gpus_.end()) {
        int32_t m = gpu::MilliOnNode(ask, ng->second);
        pod_gpu_milli_[i] = static_cast<double>(ask.count) * (m == 0 ? 1000 : m);
        cur_.gpu_milli += pod_gpu_milli_[i];
      }
    }
    if (opts_.hooks.on_bound) opts_.hooks.on_bound(i, pod, node, Seconds(clock_.Now()));
    const TimedPod& tp = sc_.pods[i];
    if (tp.run_duration_ns) Push(clock_.Now() + *tp.run_duration_ns, EvKind::kDeletePod, i);
  }

  // The scheduler deleted pod i (preemption, reclaim, starvation eviction): a running pod
  // whose controller restarts it (TimedPod::restart_on_eviction) is created again now and
  // its lost work counted; its pending departure no longer applies (incarnation).
  void EvictedByScheduler(size_t i) {
    PodOutcome& o = res_->outcomes[i];
    const bool restarts = sc_.pods[i].restart_on_eviction && o.scheduled_s && !o.deleted_s;
    if (opts_.hooks.on_evicted) opts_.hooks.on_evicted(i, Seconds(clock_.Now()), restarts);
    if (!restarts) return;
    const double ran = Seconds(clock_.Now()) - *o.scheduled_s;
    res_->lost_gpu_seconds += ran * pod_gpu_milli_[i] / 1000.0;
    ++res_->restarts;
    ++o.restarts;
    o.scheduled_s.reset();
    o.node.clear();
    ++incarnation_[i];
    Push(clock_.Now(), EvKind::kRecreatePod, i);
  }

  // Pod i again, as its controller creates it after an eviction (same name; from the
  // controller's template, so without the spec.nodeName a manifest may have bound it with:
  // the scheduler places it again).
  api::Status RecreatePod(size_t i) { return CreateInStore(i, " (restart)", true); }

  // Creates scenario pod i in the store, indexes it by key (pod events map back to i) and,
  // as the resourceclaim controller would, creates the claims of its templates (a claim
  // error becomes the pod's outcome reason: it stays pending with it). `what` follows the
  // pod's key in a store error; `unbound`: without spec.nodeName.
  api::Status CreateInStore(size_t i, const char* what, bool unbound = false) {
    const TimedPod& tp = sc_.pods[i];
    api::Pod pod(tp.pod);
    if (unbound) {
      pod.spec.node_name.clear();
      pod.status.start_time.reset();
    }
    auto r = store_.CreatePod(std::move(pod));
    if (!r.ok()) {
      return absl::InvalidArgumentError("Pod " + tp.pod.Key() + what + ": " +
                                        std::string(r.message()));
    }
    index_[tp.pod.Key()] = i;
    const api::Status claims = dra_claims_.OnPodCreated(
        tp.pod.metadata.namespace_.empty() ? "default" : tp.pod.metadata.namespace_,
        tp.pod.metadata.name);
    if (!claims.ok()) res_->outcomes[i].reason = std::string(claims.message());
    return absl::OkStatus();
  }

  void ReleaseGpuMilli(size_t i) {
    cur_.gpu_milli -= pod_gpu_milli_[i];
    pod_gpu_milli_[i] = 0;
  }

  // A never-bound pod's last failure reasons, counted in pending_reasons. `gate`: its
  // GateMessage when the caller read it before the pod was deleted.
  void FinishPending(size_t i, std::string gate = "") {
    PodOutcome& o = res_->outcomes[i];
    if (o.scheduled_s) return;
    auto lr = last_reasons_.find(i);
    if (o.unserved) {
      ++res_->pending_reasons[o.reason];
      ++res_->unserved_scheduler_names[sc_.pods[i].pod.spec.scheduler_name];
    } else if (lr != last_reasons_.end()) {
      std::string key;
      for (const auto& r : lr->second) key += (key.empty() ? "" : "; ") + r;
      ++res_->pending_reasons[key];
    } else if (!o.reason.empty()) {
      // Never attempted for a cause found before the scheduler saw it: its claim could not
      // be created (the resourceclaim controller's message; the scheduler's gate says only
      // that the claim does not exist).
      ++res_->pending_reasons[o.reason];
    } else if (gate = gate.empty() ? GateMessage(i) : gate; !gate.empty()) {
      // Held back before its first attempt (a PreEnqueue plugin; KEP-5501): the reason the
      // scheduler wrote on the pod, the gating plugin's message.
      o.reason = gate;
      ++res_->pending_reasons[gate];
    } else {
      ++res_->pending_reasons["not attempted"];
    }
  }

  // The message of pod i's PodScheduled condition when the scheduler held it back before
  // its first attempt (reason NotReadyForScheduling or SchedulingGated), else "".
  std::string GateMessage(size_t i) const {
    const api::Pod& p = sc_.pods[i].pod;
    const api::PodPtr now = store_.GetPod(
        p.metadata.namespace_.empty() ? "default" : p.metadata.namespace_, p.metadata.name);
    if (!now) return "";
    for (const auto& c : now->status.conditions) {
      if (c.type == "PodScheduled" && c.status == "False" &&
          (c.reason == "NotReadyForScheduling" || c.reason == "SchedulingGated")) {
        return c.message;
      }
    }
    return "";
  }

  // The next scenario event or autoscaler action; LLONG_MAX when none.
  api::Timestamp NextEventTime() const {
    api::Timestamp t = events_.empty() ? LLONG_MAX : events_.top().t;
    if (autoscaler_) t = std::min<api::Timestamp>(t, autoscaler_->NextTime());
    return t;
  }

  // True when no arrivals or departures remain and nothing but the unschedulable flush is
  // left to do; else *t is the next time to advance to.
  bool Done(api::Timestamp* t) {
    const api::Timestamp next_ev = NextEventTime();
    const api::Timestamp wake = sched_->NextWakeTime();
    if (next_ev == LLONG_MAX) {
      auto c = sched_->scheduling_queue().Counts();
      api::Timestamp other = std::min(sched_->scheduling_queue().NextBackoffExpiry(), wake);
      bool only_flush = c.active == 0 && c.backoff == 0 && sched_->WaitingInPreBind() == 0 &&
                        other == sched_->scheduling_queue().NextUnschedulableTimeout();
      if (wake == LLONG_MAX || only_flush) return true;
      // A binding cycle waiting in PreBind ends by its own deadline.
      if (sched_->WaitingInPreBind() == 0 && OnlyErrorsFor3MaxBackoffs()) return true;
    }
    *t = std::min(next_ev, wake);
    return false;
  }

  // Pods whose cycles end in an error (e.g. an unreachable non-ignorable extender) retry
  // from backoffQ forever; with no scenario event left, the run ends once three
  // podMaxBackoffSeconds of virtual time passed in which every attempt was an error.
  bool OnlyErrorsFor3MaxBackoffs() {
    const scheduler::SchedulerStats st = sched_->stats();
    const int64_t non_errors = st.attempts - st.errors;
    if (non_errors != quiet_non_errors_) {
      quiet_non_errors_ = non_errors;
      quiet_since_ = clock_.Now();
      return false;
    }
    const int64_t period =
        3 * std::max<int64_t>(1, opts_.config.pod_max_backoff_seconds) * api::kNanosPerSecond;
    return clock_.Now() - quiet_since_ > period;
  }

  api::Status Loop() {
    api::Timestamp t = 0;
    const api::Timestamp stop =
        opts_.stop_at_s ? static_cast<api::Timestamp>(*opts_.stop_at_s * 1e9) : LLONG_MAX;
    while (!Done(&t)) {
      if (t > stop) break;
      if (SkipRepeatedFlushes(t, stop)) continue;
      clock_.AdvanceTo(t);
      if (auto s = ApplyDueEvents(); !s.ok()) return s;
      if (autoscaler_) autoscaler_->Step(clock_.Now());
      sched_->Tick();
      do {
        SyncPodDisruptionBudgets();
      } while (sched_->ScheduleOne(/*blocking=*/false));
      RecordUsage();
      if (has_queues_) RecordQueues();
      if (opts_.hooks.on_step) opts_.hooks.on_step(Seconds(clock_.Now()));
      if (opts_.hooks.on_step_store) opts_.hooks.on_step_store(Seconds(clock_.Now()), store_);
      if (opts_.progress && (++steps_ % 512 == 0)) {
        opts_.progress(arrived_, sc_.pods.size(), Seconds(clock_.Now()));
      }
    }
    if (opts_.progress) opts_.progress(arrived_, sc_.pods.size(), Seconds(clock_.Now()));
    return absl::OkStatus();
  }

  // When the step at `t` is a scheduler wake-up before the next scenario event, the flush
  // rounds the scheduler can account without running them (Scheduler::SkipRepeatedFlushes)
  // are skipped; the steps they would have been still sample the usage integrals and call
  // on_step, so that every figure is the one of the rounds run one by one. True when steps
  // were skipped (the caller asks Done for the next time again).
  bool SkipRepeatedFlushes(api::Timestamp t, api::Timestamp stop) {
    if (!opts_.skip_repeated_flushes || opts_.delete_unschedulable) return false;
    const api::Timestamp next_ev = NextEventTime();
    if (t >= next_ev || next_ev == LLONG_MAX) return false;
    const api::Timestamp until = stop == LLONG_MAX ? next_ev : std::min(next_ev, stop + 1);
    const std::vector<api::Timestamp> steps = sched_->SkipRepeatedFlushes(until);
    res_->flush_steps_skipped += steps.size();
    for (const api::Timestamp step : steps) {
      clock_.AdvanceTo(step);
      RecordUsage();
      if (has_queues_) RecordQueues();
      if (opts_.hooks.on_step) opts_.hooks.on_step(Seconds(clock_.Now()));
      if (opts_.hooks.on_step_store) opts_.hooks.on_step_store(Seconds(clock_.Now()), store_);
      if (opts_.progress && (++steps_ % 512 == 0)) {
        opts_.progress(arrived_, sc_.pods.size(), Seconds(clock_.Now()));
      }
    }
    return !steps.empty();
  }

  // The disruption controller's part: after pods changed, every PodDisruptionBudget's
  // status is computed again (sim/disruption.h) and written when it changed, before the
  // next scheduling cycle reads it. (Upstream's controller lags behind; here preemption
  // always sees the budgets of the pods as they are.)
  void SyncPodDisruptionBudgets() {
    if (!pdbs_stale_ || sc_.pod_disruption_budgets.empty()) return;
    pdbs_stale_ = false;
    const std::vector<api::PodPtr> pods = store_.ListPods();
    auto scale = [this](const api::OwnerReference& ref,
                        const std::string&) -> std::optional<int32_t> {
      auto it = sc_.controller_replicas.find(ref.uid);
      if (it == sc_.controller_replicas.end()) return std::nullopt;
      return it->second;
    };
    for (const auto& pdb : store_.ListPodDisruptionBudgets()) {
      auto st = ComputePodDisruptionBudgetStatus(*pdb, pods, scale, clock_.Now());
      if (SameStatus(st, pdb->status)) continue;
      api::PodDisruptionBudget updated = *pdb;
      updated.status = std::move(st);
      (void)store_.UpdatePodDisruptionBudget(std::move(updated));
    }
  }

  api::Status ApplyDueEvents() {
    while (!events_.empty() && events_.top().t <= clock_.Now()) {
      Ev e = events_.top();
      events_.pop();
      if (e.kind == EvKind::kCreatePod) {
        if (auto s = CreatePod(e.pod); !s.ok()) return s;
      } else if (e.kind == EvKind::kCreateNode) {
        if (auto s = CreateLaterNode(e.pod); !s.ok()) return s;
      } else if (e.kind == EvKind::kReleaseClaims) {
        auto it = gone_with_claims_.find(e.pod);
        if (it != gone_with_claims_.end()) {
          dra_claims_.OnPodGone(it->second);
          gone_with_claims_.erase(it);
        }
      } else if (e.kind == EvKind::kRecreatePod) {
        if (auto s = RecreatePod(e.pod); !s.ok()) return s;
      } else if (e.incarnation == incarnation_[e.pod]) {  // a departure of an evicted
        DeletePod(e.pod);                                 // incarnation no longer applies
      }
    }
    return absl::OkStatus();
  }

  // A node of scenario.later_nodes joins: the store dispatches it to the scheduler as a
  // watch would (node add: pods rejected for want of room are requeued by their hints).
  api::Status CreateLaterNode(size_t i) {
    const api::Node& n = sc_.later_nodes[i].node;
    auto r = store_.CreateNode(n);
    if (!r.ok())
      return absl::InvalidArgumentError("Node " + n.metadata.name + ": " +
                                        std::string(r.message()));
    ++res_->nodes;
    node_gpus_[n.metadata.name] = gpu::ParseNodeGpus(n);
    res_->gpu_milli_capacity += 1000.0 * node_gpus_[n.metadata.name].count;
    return absl::OkStatus();
  }

  api::Status CreatePod(size_t i) {
    const TimedPod& tp = sc_.pods[i];
    if (api::Status s = CreateInStore(i, ""); !s.ok()) return s;
    PodOutcome& o = res_->outcomes[i];
    o.pod = tp.pod.Key();
    o.arrival_s = Seconds(clock_.Now());
    ++arrived_;
    if (!Served(tp.pod) && tp.pod.spec.node_name.empty()) {
      o.unserved = true;
      o.reason = "no profile serves schedulerName \"" + tp.pod.spec.scheduler_name +
                 "\" (profiles: " + profile_names_ + ")";
    }
    if (opts_.hooks.on_arrival) opts_.hooks.on_arrival(i, o.arrival_s);
    if (!tp.pod.spec.node_name.empty()) {  // bound in the manifest
      o.prebound = true;
      o.node = tp.pod.spec.node_name;
      o.scheduled_s = o.arrival_s;
      Holds(i, tp.pod, o.node);
    }
    if (tp.deletion) Push(std::max(*tp.deletion, clock_.Now()), EvKind::kDeletePod, i);
    return absl::OkStatus();
  }

  void DeletePod(size_t i) {
    const TimedPod& tp = sc_.pods[i];
    PodOutcome& o = res_->outcomes[i];
    if (o.deleted_s) return;
    const std::string gate = o.scheduled_s ? std::string() : GateMessage(i);
    in_sim_delete_ = true;
    auto r = store_.DeletePod(
        tp.pod.metadata.namespace_.empty() ? "default" : tp.pod.metadata.namespace_,
        tp.pod.metadata.name);
    in_sim_delete_ = false;
    if (!r.ok()) return;
    o.deleted_s = Seconds(clock_.Now());
    if (!o.scheduled_s) {
      ++res_->deleted_while_pending;
      FinishPending(i, gate);
    }
    ReleaseGpuMilli(i);
    if (opts_.hooks.on_deleted) opts_.hooks.on_deleted(i, *o.deleted_s);
  }

  // Allocation after a step: the usage integrals, and a timeline sample when it changed.
  void RecordUsage() {
    const api::Resource alloc = checker_.Allocated();
    usage_.Sample(alloc, clock_.Now());
    UsageSample u = cur_;
    u.t = Seconds(clock_.Now());
    u.gpus = static_cast<double>(alloc.Scalar(usage_.gpu_id));
    u.milli_cpu = static_cast<double>(alloc.milli_cpu);
    u.running = checker_.BoundPods();
    const auto c = sched_->scheduling_queue().Counts();
    u.pending = c.active + c.backoff + c.unschedulable + c.gated;
    const UsageSample* last = res_->timeline.empty() ? nullptr : &res_->timeline.back();
    if (!last || last->gpu_milli != u.gpu_milli || last->gpus != u.gpus ||
        last->milli_cpu != u.milli_cpu || last->running != u.running ||
        last->pending != u.pending) {
      res_->timeline.push_back(u);
    }
  }

  // Per-queue allocation and fair share, recorded when any queue's figures changed.
  void RecordQueues() {
    std::vector<QueueSample> now;
    const std::string gpu(api::kResourceNvidiaGPU);
    for (const auto& q : sched_->queue_manager().Status()) {
      // A queue that never touched a GPU is measured in cores (not 0.00 GPUs).
      auto has_gpu = [&](const auto& m) {
        auto it = m.find(gpu);
        auto sh = m.find(quota::kGpuShareMilli);
        return (it != m.end() && it->second > 0) || (sh != m.end() && sh->second > 0);
      };
      if (res_->queue_resource == gpu && (has_gpu(q.guarantee) || has_gpu(q.limit) ||
                                          has_gpu(q.allocated) || has_gpu(q.pending))) {
        gpu_queues_.insert(q.name);
      }
      const std::string& resource =
          res_->queue_resource == gpu && !gpu_queues_.count(q.name) ? kCpu : res_->queue_resource;
      const double scale = resource == kCpu ? 1000.0 : 1.0;
      auto get = [&](const auto& m) -> double {
        auto it = m.find(resource);
        double x = it == m.end() ? 0.0 : static_cast<double>(it->second) / scale;
        // GPU shares (quota/device_charge.h) are part of nvidia.com/gpu.
        if (auto sh = m.find(quota::kGpuShareMilli); resource == gpu && sh != m.end()) {
          x += static_cast<double>(sh->second) / 1000.0;
        }
        return x;
      };
      QueueSample s;
      s.t = Seconds(clock_.Now());
      s.queue = q.name;
      s.resource = resource;
      s.allocated = get(q.allocated);
      s.deserved = get(q.deserved);
      s.demand = s.allocated + get(q.pending);
      s.running_pods = q.running_pods;
      s.pending_pods = q.pending_pods;
      now.push_back(std::move(s));
    }
    bool changed = last_queue_samples_.size() != now.size();
    for (size_t i = 0; !changed && i < now.size(); ++i) {
      const auto& a = now[i];
      const auto& b = last_queue_samples_[i];
      changed = a.queue != b.queue || a.resource != b.resource || a.allocated != b.allocated ||
                a.deserved != b.deserved || a.running_pods != b.running_pods ||
                a.pending_pods != b.pending_pods;
    }
    if (changed) {
      res_->queue_timeline.insert(res_->queue_timeline.end(), now.begin(), now.end());
      last_queue_samples_ = std::move(now);
    }
  }

  void Finish() {
    sched_->ReportGatedPods();  // pods gated in the last step show why, as after a Tick
    // Pods no profile serves are not ours: no PodScheduled condition is expected of us.
    // Pods in their binding cycle at the end (assumed: waiting in PreBind for DRA binding
    // conditions) have no PodScheduled condition either, as upstream's.
    std::vector<api::PodPtr> ours;
    for (auto& p : store_.ListPods()) {
      if (Served(*p) && !sched_->cache().IsAssumedPod(*p)) ours.push_back(std::move(p));
    }
    checker_.CheckPendingReasons(ours);
    for (size_t i = 0; i < sc_.pods.size(); ++i) {
      const PodOutcome& o = res_->outcomes[i];
      if (o.prebound) {
        ++res_->prebound;
      } else if (o.scheduled_s) {
        ++res_->scheduled;
      } else if (!o.deleted_s) {
        ++res_->pending_at_end;
        FinishPending(i);
      }
    }
    res_->attempts = sched_->stats().attempts;
    // Queue accounting that is not what a queue asks for (a device class that maps to no
    // quota resource a queue limits; allocationMode All charged as 1 until allocated).
    for (auto& w : sched_->queue_manager().Warnings()) res_->warnings.push_back(std::move(w));
    res_->reservations = sched_->reservations().Counters();
    res_->reservation_log = sched_->reservations().History();
    res_->virtual_seconds = Seconds(clock_.Now());
    res_->invariant_violations = checker_.violations();
    res_->gangs = CollectGangOutcomes(sched_->gangs());
    if (autoscaler_) res_->scale_up = autoscaler_->Finish(clock_.Now());
    if (has_queues_) SummarizeQueues();
    SummarizeUsage();
    SummarizeClaims();
  }

  // The DRA claims' allocations at the end (as `kubectl get resourceclaims` would show).
  void SummarizeClaims() {
    for (const auto& obj : store_.ListObjects()) {
      if (dra::KindOf(*obj) != dra::Kind::kResourceClaim) continue;
      auto c = dra::ParseResourceClaim(*obj);
      if (!c.ok()) continue;  // listed in dra_errors
      std::string line = c->Key() + ": ";
      if (!c->allocation) {
        line += "not allocated";
      } else {
        for (size_t i = 0; i < c->allocation->devices.size(); ++i) {
          const auto& d = c->allocation->devices[i];
          line += (i ? ", " : "") + d.driver + "/" + d.pool + "/" + d.device;
        }
        std::string by;
        for (const auto& r : c->reserved_for) {
          by += std::string(by.empty() ? "" : ", ") +
                (r.resource == "podgroups" ? "PodGroup " : "") + r.name;
        }
        if (!by.empty()) line += " (reserved for " + by + ")";
      }
      res_->dra_claims.push_back(std::move(line));
    }
    std::sort(res_->dra_claims.begin(), res_->dra_claims.end());
    res_->dra_errors = sched_->dra().Errors();
  }

  // Time-weighted means per queue over the sampled span.
  void SummarizeQueues() {
    std::map<std::string, size_t> at;
    for (const auto& q : sched_->queue_manager().Status()) {
      at[q.name] = res_->queues.size();
      QueueSummary s;
      s.name = q.name;
      s.parent = q.parent;
      s.dialect = q.dialect;
      s.pending_pods_end = q.pending_pods;
      s.error = q.error;
      res_->queues.push_back(std::move(s));
    }
    std::map<std::string, const QueueSample*> prev;
    double t0 = -1, t1 = 0;
    for (const auto& s : res_->queue_timeline) {
      if (t0 < 0) t0 = s.t;
      t1 = std::max(t1, s.t);
      auto it = at.find(s.queue);
      if (it == at.end()) continue;
      QueueSummary& q = res_->queues[it->second];
      q.resource = s.resource;
      auto p = prev.find(s.queue);
      if (p != prev.end()) {
        const double dt = s.t - p->second->t;
        q.allocated_avg += dt * p->second->allocated;
        q.deserved_avg += dt * p->second->deserved;
      }
      q.allocated_peak = std::max(q.allocated_peak, s.allocated);
      q.allocated_end = s.allocated;
      prev[s.queue] = &s;
    }
    const double span = t1 - std::max(0.0, t0);
    for (auto& q : res_->queues) {
      if (span > 0) {
        q.allocated_avg /= span;
        q.deserved_avg /= span;
      } else {
        auto p = prev.find(q.name);
        q.allocated_avg = p == prev.end() ? 0 : p->second->allocated;
        q.deserved_avg = p == prev.end() ? 0 : p->second->deserved;
      }
    }
  }

  void SummarizeUsage() {
    // With an autoscaler the capacity varies: the allocation is shown against its peak.
    api::Resource cap = checker_.Capacity();
    cap.SetMax(capacity_peak_);
    const auto& u = usage_;
    const double span = u.started ? static_cast<double>(u.last_t - u.first_t) : 0;
    auto avg = [&](double integral) { return span > 0 ? integral / span : 0.0; };
    const double gib = 1024.0 * 1024 * 1024;
    res_->usage.push_back(
        {"cpu", cap.milli_cpu / 1000.0, u.peak.milli_cpu / 1000.0, avg(u.cpu) / 1000.0});
    res_->usage.push_back({"memory(GiB)", cap.memory / gib, u.peak.memory / gib, avg(u.mem) / gib});
    res_->usage.push_back({"nvidia.com/gpu", static_cast<double>(cap.Scalar(u.gpu_id)),
                           static_cast<double>(u.peak.Scalar(u.gpu_id)), avg(u.gpu)});
    res_->usage.push_back({"pods", static_cast<double>(cap.allowed_pod_number),
                           static_cast<double>(u.peak.allowed_pod_number), avg(u.pods)});
  }

  const Scenario& sc_;
  const SimulationOptions& opts_;
  SimulationResult* res_;
  framework::VirtualClock clock_;
  store::Store store_;
  DraClaimController dra_claims_{store_};
  std::map<size_t, api::Pod> gone_with_claims_;  // deleted pods whose claims await release
  CountingClient client_;  // the scheduler's ClusterClient: store_, counting preemptions
  VolumeControllers volume_controllers_{store_};  // PV binder, provisioner, ephemeral claims
  bool pdbs_stale_ = true;  // pods changed since the PDB statuses were last computed
  InvariantChecker checker_;
  PreemptionCounter preemption_counter_{&res_->preemptions,
                                        &res_->moved_pods};  // before sched_, which reports to it
  std::unique_ptr<scheduler::Scheduler> sched_;
  std::unique_ptr<Autoscaler> autoscaler_;  // when the scenario declares node groups
  api::Resource capacity_peak_;             // of the nodes, as the autoscaler added them
  bool has_queues_ = false;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> events_;
  uint64_t seq_ = 0;
  std::unordered_map<std::string, size_t> index_;  // pod key -> scenario index
  std::unordered_map<std::string, gpu::NodeGpus> node_gpus_;
  std::vector<double> pod_gpu_milli_;  // GPU milli held per pod
  std::vector<uint32_t> incarnation_;  // per pod: restarts after eviction (Ev::incarnation)
  bool in_sim_delete_ = false;         // DeletePod is deleting (a departure, not an eviction)
  UsageSample cur_;                    // its gpu_milli: held by bound pods now
  UsageTracker usage_;
  std::unordered_map<size_t, std::vector<std::string>> last_reasons_;
  std::vector<QueueSample> last_queue_samples_;
  static inline const std::string kCpu = "cpu";
  std::set<std::string> gpu_queues_;  // queues that guaranteed, limited, held or asked a GPU
  std::string profile_names_;         // "default-scheduler, ..." for the unserved reason
  size_t arrived_ = 0;
  size_t steps_ = 0;
  int64_t quiet_non_errors_ = -1;  // OnlyErrorsFor3MaxBackoffs
  api::Timestamp quiet_since_ = 0;
};

}  // namespace

api::Status RunSimulation(const Scenario& sc, const SimulationOptions& opts,
                          SimulationResult* res) {
  Driver driver(sc, opts, res);
  return driver.Run();
}

namespace {

std::string Opt(const std::optional<double>& s) {
  if (!s) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f", *s);
  return buf;
}

// The "scale-up:" section of the summary: the autoscaler's nodes and every request.
std::string FormatScaleUp(const AutoscalerSummary& s) {
  std::ostringstream o;
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.2f", s.idle_node_seconds / 3600.0);
  o << "scale-up: " << s.nodes_added << " nodes added  " << s.nodes_removed
    << " removed  idle node-hours " << buf << "  ProvisioningRequests " << s.requests.size()
    << "\n";
  for (const auto& r : s.requests) {
    o << "  " << r.request << "  " << r.pods << " pods  "
      << (r.node_group.empty() ? std::string("no nodes")
                               : std::to_string(r.nodes) + " nodes of " + r.node_group)
      << "  created " << Opt(r.created_s) << " s  provisioned " << Opt(r.provisioned_s)
      << " s  nodes ready " << Opt(r.nodes_ready_s) << " s  started " << Opt(r.started_s) << " s";
    if (r.started_s) o << " (time to start " << Opt(*r.started_s - r.created_s) << " s)";
    if (r.failed_scale_ups > 0) o << "  failed scale-ups " << r.failed_scale_ups;
    o << "  " << r.outcome << "\n";
  }
  return o.str();
}

nlohmann::json OptJson(const std::optional<double>& s) {
  return s ? nlohmann::json(*s) : nlohmann::json(nullptr);
}

}  // namespace

std::string FormatSummary(const SimulationResult& r) {
  std::ostringstream o;
  char buf[256];
  o << "scenario: " << r.scenario << " (seed " << r.seed << ")\n";
  o << "nodes: " << r.nodes << "  pods: " << r.pods << "  virtual time: " << r.virtual_seconds
    << " s  wall time: " << r.wall_seconds << " s  attempts: " << r.attempts << "\n";
  o << "scheduled: " << r.scheduled << "  pending at end: " << r.pending_at_end
    << "  deleted while pending: " << r.deleted_while_pending;
  if (r.prebound > 0) o << "  bound in the manifest: " << r.prebound;
  o << "\n";
  if (r.preemption_victims > 0 || r.pod_disruption_budgets > 0) {
    o << "preemptions: " << r.preemptions << "  preemption victims: " << r.preemption_victims
      << "  PodDisruptionBudget violations: " << r.pdb_violations << "\n";
  }
  if (r.moved_pods > 0) o << "pods moved by defragmentation: " << r.moved_pods << "\n";
  if (r.restarts > 0) {
    std::snprintf(buf, sizeof(buf), "%.1f", r.lost_gpu_seconds / 3600.0);
    o << "restarts after eviction: " << r.restarts << " pods  lost GPU-hours: " << buf << "\n";
  }
  if (!r.pending_reasons.empty()) {
    o << "never-scheduled pods by reason of their last attempt:\n";
    std::vector<std::pair<size_t, std::string>> v;
    for (const auto& [k, n] : r.pending_reasons) v.emplace_back(n, k);
    std::sort(v.rbegin(), v.rend());
    for (const auto& [n, k] : v) o << "  " << n << "  " << k << "\n";
  }
  if (!r.unused_kinds.empty()) {
    o << "objects not used:";
    bool first = true;
    for (const auto& [kind, n] : r.unused_kinds) {
      o << (first ? " " : ", ") << n << " " << kind;
      first = false;
    }
    o << "\n";
  }
  for (const auto& w : r.warnings) o << "warning: " << w << "\n";
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  for (const auto& [name, n] : r.unserved_scheduler_names) {
    o << "warning: " << n << " pod(s) with schedulerName \"" << name
      << "\" that no profile serves were left pending, never attempted (a profile of that "
         "name in --config would schedule them)\n";
  }
  o << "allocation (peak / time-average of capacity):\n";
  for (const auto& u : r.usage) {
    if (u.capacity <= 0) continue;
    std::snprintf(buf, sizeof(buf), "  %-15s capacity %12.1f  peak %6.1f%%  average %6.1f%%\n",
                  u.resource.c_str(), u.capacity, 100.0 * u.peak / u.capacity,
                  100.0 * u.time_avg / u.capacity);
    o << buf;
  }
  o << FormatGangSummary(r.gangs);
  if (r.reservations.made > 0 || r.reservations.not_made > 0) {
    o << "gang reservations: " << r.reservations.made << " made  (" << r.reservations.released_bound
      << " started, " << r.reservations.expired << " expired, " << r.reservations.released_gone
      << " gang gone)  " << r.reservations.not_made
      << " failed cycles over the threshold without one\n";
    if (r.reservations.evictions > 0) {
      o << "starvation evictions: " << r.reservations.evictions << " ("
        << r.reservations.evicted_pods << " pods evicted)\n";
    }
  }
  if (r.scale_up) o << FormatScaleUp(*r.scale_up);
  if (!r.queues.empty()) {
    const bool mixed = std::any_of(r.queues.begin(), r.queues.end(), [&](const QueueSummary& q) {
      return !q.resource.empty() && q.resource != r.queue_resource;
    });
    o << "queues (" << r.queue_resource << (r.queue_resource == "cpu" ? " cores" : "")
      << (mixed ? ", or cpu cores where marked" : "")
      << "; time-average allocated / deserved, peak, at end, pending pods at end):\n";
    for (const auto& q : r.queues) {
      const bool cores = mixed && q.resource == "cpu";
      std::snprintf(buf, sizeof(buf),
                    "  %-16s %-18s avg %8.2f / %8.2f  peak %8.2f  end %8.2f  pending %lld%s\n",
                    q.name.c_str(),
                    (q.parent.empty() ? q.dialect : q.dialect + " < " + q.parent).c_str(),
                    q.allocated_avg, q.deserved_avg, q.allocated_peak, q.allocated_end,
                    static_cast<long long>(q.pending_pods_end), cores ? "  (cpu cores)" : "");
      o << buf;
      if (!q.error.empty()) o << "    invalid: " << q.error << "\n";
    }
  }
  if (!r.dra_claims.empty()) {
    o << "DRA claims (allocated devices: driver/pool/device):\n";
    for (const auto& c : r.dra_claims) o << "  " << c << "\n";
  }
  for (const auto& e : r.dra_errors) o << "invalid DRA object: " << e << "\n";
  o << "invariant violations: " << r.invariant_violations.size() << "\n";
  for (size_t i = 0; i < r.invariant_violations.size() && i < 10; ++i) {
    o << "  " << r.invariant_violations[i] << "\n";
  }
  return o.str();
}

api::Status WriteOutcomesJsonl(const SimulationResult& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) return absl::InvalidArgumentError(path + ": cannot open for writing");
  for (const auto& o : r.outcomes) {
    nlohmann::json j;
    j["pod"] = o.pod;
    j["node"] = o.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.node);
    j["arrival"] = o.arrival_s;
    j["scheduled"] = o.scheduled_s ? nlohmann::json(*o.scheduled_s) : nlohmann::json(nullptr);
    j["deleted"] = o.deleted_s ? nlohmann::json(*o.deleted_s) : nlohmann::json(nullptr);
    j["attempts"] = o.attempts;
    j["reason"] = o.scheduled_s ? nlohmann::json(nullptr) : nlohmann::json(o.reason);
    if (o.prebound) j["prebound"] = true;
    if (o.preempted) j["preempted"] = true;
    if (o.restarts > 0) j["restarts"] = o.restarts;
    out << j.dump() << "\n";
  }
  if (!out) return absl::InternalError(path + ": write failed");
  return absl::OkStatus();
}

std::string ResultJson(const SimulationResult& r) {
  nlohmann::json j;
  j["scenario"] = r.scenario;
  j["seed"] = r.seed;
  j["nodes"] = r.nodes;
  j["pods"] = r.pods;
  j["scheduled"] = r.scheduled;
  j["bound_in_manifest"] = r.prebound;
  j["pending_at_end"] = r.pending_at_end;
  j["deleted_while_pending"] = r.deleted_while_pending;
  j["attempts"] = r.attempts;
  j["preemptions"] = r.preemptions;
  if (r.moved_pods > 0) j["moved_pods"] = r.moved_pods;
  j["preemption_victims"] = r.preemption_victims;
  j["pdb_violations"] = r.pdb_violations;
  j["reservations"] = {{"made", r.reservations.made},
                       {"released_started", r.reservations.released_bound},
                       {"expired", r.reservations.expired},
                       {"released_gone", r.reservations.released_gone},
                       {"not_made", r.reservations.not_made},
                       {"evictions", r.reservations.evictions},
                       {"evicted_pods", r.reservations.evicted_pods}};
  j["restarts"] = r.restarts;
  j["lost_gpu_hours"] = r.lost_gpu_seconds / 3600.0;
  j["virtual_seconds"] = r.virtual_seconds;
  j["wall_seconds"] = r.wall_seconds;
  j["pending_reasons"] = r.pending_reasons;
  if (!r.unserved_scheduler_names.empty())
    j["unserved_scheduler_names"] = r.unserved_scheduler_names;
  for (const auto& u : r.usage) {
    j["usage"][u.resource] = {{"capacity", u.capacity}, {"peak", u.peak}, {"time_avg", u.time_avg}};
  }
  j["invariant_violations"] = r.invariant_violations;
  j["unused_kinds"] = nlohmann::json::object();
  for (const auto& [kind, n] : r.unused_kinds) j["unused_kinds"][kind] = n;
  j["warnings"] = r.warnings;
  j["notes"] = r.notes;
  if (!r.queues.empty()) {
    nlohmann::json q;
    q["resource"] = r.queue_resource;
    for (const auto& s : r.queues) {
      q["queues"].push_back({{"name", s.name},
                             {"resource", s.resource.empty() ? r.queue_resource : s.resource},
                             {"parent", s.parent},
                             {"dialect", s.dialect},
                             {"allocated_avg", s.allocated_avg},
                             {"deserved_avg", s.deserved_avg},
                             {"allocated_peak", s.allocated_peak},
                             {"allocated_end", s.allocated_end},
                             {"pending_pods_end", s.pending_pods_end},
                             {"error", s.error}});
    }
    for (const auto& s : r.queue_timeline) {
      q["timeline"].push_back({{"t", s.t},
                               {"queue", s.queue},
                               {"resource", s.resource},
                               {"allocated", s.allocated},
                               {"deserved", s.deserved},
                               {"demand", s.demand},
                               {"running_pods", s.running_pods},
                               {"pending_pods", s.pending_pods}});
    }
    j["queues"] = q;
  }
  if (r.gangs.gangs > 0) {
    nlohmann::json g;
    g["gangs"] = r.gangs.gangs;
    g["started"] = r.gangs.started;
    g["never_started"] = r.gangs.never_started;
    g["attempts"] = r.gangs.attempts_total;
    g["quorum_to_running_s"] = {
        {"mean", r.gangs.wait_mean_s}, {"p50", r.gangs.wait_p50_s}, {"max", r.gangs.wait_max_s}};
    for (const auto& o : r.gangs.outcomes) {
      g["outcomes"].push_back({{"gang", o.key},
                               {"min_member", o.min_member},
                               {"pods", o.pods},
                               {"bound", o.bound},
                               {"started", o.started},
                               {"quorum_to_running_s", o.quorum_to_running_s},
                               {"attempts", o.attempts},
                               {"last_reason", o.last_reason}});
    }
    j["gangs"] = g;
  }
  if (r.scale_up) {
    nlohmann::json su;
    su["nodes_added"] = r.scale_up->nodes_added;
    su["nodes_removed"] = r.scale_up->nodes_removed;
    su["idle_node_hours"] = r.scale_up->idle_node_seconds / 3600.0;
    su["requests"] = nlohmann::json::array();
    for (const auto& q : r.scale_up->requests) {
      su["requests"].push_back({{"request", q.request},
                                {"class", q.class_name},
                                {"node_group", q.node_group},
                                {"pods", q.pods},
                                {"nodes", q.nodes},
                                {"created_s", q.created_s},
                                {"provisioned_s", OptJson(q.provisioned_s)},
                                {"nodes_ready_s", OptJson(q.nodes_ready_s)},
                                {"started_s", OptJson(q.started_s)},
                                {"failed_scale_ups", q.failed_scale_ups},
                                {"outcome", q.outcome}});
    }
    j["scale_up"] = su;
  }
  return j.dump(2);
}

}  // namespace phalanx::sim
