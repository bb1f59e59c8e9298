#include "sim/simulation.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <climits>
#include <fstream>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "framework/clock.h"
#include "plugins/gpushare/device.h"
#include "gang/manager.h"
#include "plugins/queues/queues.h"
#include "quota/manager.h"
#include "scheduler/scheduler.h"
#include "sim/invariants.h"
#include "store/store.h"

namespace phalanx::sim {

namespace {

enum class EvKind { kCreatePod, kDeletePod };
struct Ev {
  api::Timestamp t;
  uint64_t seq;
  EvKind kind;
  size_t pod;  // index into scenario.pods
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

}  // namespace

bool RunSimulation(const Scenario& sc, const SimulationOptions& opts, SimulationResult* res,
                   std::string* error) {
  auto wall_start = std::chrono::steady_clock::now();
  framework::VirtualClock clock(0);
  store::Store store(clock);
  store.set_keep_all_events(false);
  InvariantChecker checker;
  checker.Attach(store);

  scheduler::SchedulerOptions so;
  so.config = opts.config;
  // Queue objects in the scenario turn the Queues plugin on (docs/queues.md).
  const bool has_queues = std::any_of(sc.objects.begin(), sc.objects.end(),
                                      [](const api::Unstructured& o) { return quota::IsQueueObject(o); });
  if (has_queues) {
    for (auto& prof : so.config.profiles) plugins::queues::EnableQueuesInProfile(&prof);
  }
  so.registry = opts.registry;
  so.clock = &clock;
  so.client = &store;
  so.seed = opts.seed;
  so.binding_workers = 0;
  auto sched_or = scheduler::Scheduler::New(std::move(so));
  if (!sched_or.ok()) {
    *error = (opts.config_source.empty() ? "" : opts.config_source + ": ") +
             sched_or.status().Message();
    return false;
  }
  std::unique_ptr<scheduler::Scheduler> sched = std::move(sched_or).value();

  for (const auto& pc : sc.priority_classes) {
    auto r = store.CreatePriorityClass(pc);
    if (!r.ok()) {
      *error = "PriorityClass " + pc.metadata.name + ": " + std::string(r.message());
      return false;
    }
  }
  for (const auto& ns : sc.namespaces) (void)store.CreateNamespace(ns);
  for (const auto& o : sc.objects) {
    auto r = store.CreateObject(o);
    if (!r.ok()) {
      *error = o.kind + " " + o.metadata.namespace_ + "/" + o.metadata.name + ": " +
               std::string(r.message());
      return false;
    }
  }
  for (const auto& n : sc.nodes) {
    auto r = store.CreateNode(n);
    if (!r.ok()) {
      *error = "Node " + n.metadata.name + ": " + std::string(r.message());
      return false;
    }
  }
  sched->AddEventHandlers(store);
  // GPU milli held per pod (device model of plugins/gpushare), for the timeline.
  std::unordered_map<std::string, plugins::gpushare::NodeGpus> node_gpus;
  for (const auto& n : sc.nodes) {
    node_gpus[n.metadata.name] = plugins::gpushare::ParseNodeGpus(n);
    res->gpu_milli_capacity += 1000.0 * node_gpus[n.metadata.name].count;
  }
  std::vector<double> pod_gpu_milli(sc.pods.size(), 0.0);
  UsageSample cur;
  if (opts.hooks.on_start) opts.hooks.on_start(*sched);

  res->scenario = sc.name;
  res->seed = opts.seed;
  res->nodes = sc.nodes.size();
  res->pods = sc.pods.size();
  res->outcomes.resize(sc.pods.size());
  std::unordered_map<std::string, size_t> index;  // pod key -> scenario index
  index.reserve(sc.pods.size() * 2);

  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> events;
  uint64_t seq = 0;
  for (size_t i = 0; i < sc.pods.size(); ++i) {
    events.push({sc.pods[i].arrival, seq++, EvKind::kCreatePod, i});
  }

  sched->on_bound = [&](const api::Pod& pod, const std::string& node) {
    auto it = index.find(pod.Key());
    if (it == index.end()) return;
    PodOutcome& o = res->outcomes[it->second];
    if (!o.scheduled_s) {
      o.scheduled_s = Seconds(clock.Now());
      o.node = node;
      ++o.attempts;
    }
    const TimedPod& tp = sc.pods[it->second];
    if (pod_gpu_milli[it->second] == 0) {
      const auto ask = plugins::gpushare::ParseGpuAsk(pod);
      auto ng = node_gpus.find(node);
      if (ask.has_gpu() && ng != node_gpus.end()) {
        int32_t m = plugins::gpushare::MilliOnNode(ask, ng->second);
        pod_gpu_milli[it->second] = static_cast<double>(ask.count) * (m == 0 ? 1000 : m);
        cur.gpu_milli += pod_gpu_milli[it->second];
      }
    }
    if (opts.hooks.on_bound) opts.hooks.on_bound(it->second, pod, node, Seconds(clock.Now()));
    if (tp.run_duration_ns) {
      events.push({clock.Now() + *tp.run_duration_ns, seq++, EvKind::kDeletePod, it->second});
    }
  };
  std::unordered_map<size_t, std::vector<std::string>> last_reasons;
  sched->on_failure = [&](const framework::QueuedPodInfo& qp, const framework::Status&) {
    auto it = index.find(qp.Pod().Key());
    if (it == index.end()) return;
    res->outcomes[it->second].reason = qp.last_failure_message;
    ++res->outcomes[it->second].attempts;
    last_reasons[it->second] = qp.last_failure_reasons;
    if (opts.delete_unschedulable) events.push({clock.Now(), seq++, EvKind::kDeletePod, it->second});
  };

  // Pods deleted by the scheduler itself (preemption, queue reclaim) give their GPU milli
  // back too; the trace's own deletions below find it already zeroed.
  store.AddPodHandlers({[](const api::PodPtr&) {}, [](const api::PodPtr&, const api::PodPtr&) {},
                        [&](const api::PodPtr& p) {
                          auto it = index.find(p->Key());
                          if (it == index.end()) return;
                          cur.gpu_milli -= pod_gpu_milli[it->second];
                          pod_gpu_milli[it->second] = 0;
                        }});
  UsageTracker usage;
  std::vector<QueueSample> last_queue_samples;
  if (has_queues) {
    bool gpus = false;
    for (const auto& n : sc.nodes) {
      const std::string gpu(api::kResourceNvidiaGPU);
      auto it = n.status.allocatable.find(gpu);
      auto ct = n.status.capacity.find(gpu);
      gpus = gpus || (it != n.status.allocatable.end() && !it->second.IsZero()) ||
             (ct != n.status.capacity.end() && !ct->second.IsZero());
    }
    res->queue_resource = gpus ? std::string(api::kResourceNvidiaGPU) : std::string("cpu");
  }
  size_t arrived = 0;
  size_t steps = 0;
  auto finish_pending = [&](size_t i) {
    PodOutcome& o = res->outcomes[i];
    if (o.scheduled_s) return;
    auto lr = last_reasons.find(i);
    if (lr != last_reasons.end()) {
      std::string key;
      for (const auto& r : lr->second) key += (key.empty() ? "" : "; ") + r;
      ++res->pending_reasons[key];
    } else {
      ++res->pending_reasons["not attempted before deletion"];
    }
  };

  for (;;) {
    api::Timestamp next_ev = events.empty() ? LLONG_MAX : events.top().t;
    api::Timestamp wake = sched->NextWakeTime();
    if (next_ev == LLONG_MAX) {
      auto c = sched->queue().Counts();
      api::Timestamp other = std::min(sched->queue().NextBackoffExpiry(), wake);
      bool only_flush = c.active == 0 && c.backoff == 0 &&
                        other == sched->queue().NextUnschedulableTimeout();
      if (wake == LLONG_MAX || only_flush) break;
    }
    api::Timestamp t = std::min(next_ev, wake);
    clock.AdvanceTo(t);
    while (!events.empty() && events.top().t <= clock.Now()) {
      Ev e = events.top();
      events.pop();
      const TimedPod& tp = sc.pods[e.pod];
      if (e.kind == EvKind::kCreatePod) {
        api::Pod p = tp.pod;
        auto r = store.CreatePod(std::move(p));
        if (!r.ok()) {
          *error = "Pod " + tp.pod.Key() + ": " + std::string(r.message());
          return false;
        }
        index[tp.pod.Key()] = e.pod;
        PodOutcome& o = res->outcomes[e.pod];
        o.pod = tp.pod.Key();
        o.arrival_s = Seconds(clock.Now());
        ++arrived;
        if (opts.hooks.on_arrival) opts.hooks.on_arrival(e.pod, o.arrival_s);
        if (tp.deletion) events.push({std::max(*tp.deletion, clock.Now()), seq++, EvKind::kDeletePod, e.pod});
      } else {
        PodOutcome& o = res->outcomes[e.pod];
        if (o.deleted_s) continue;
        auto r = store.DeletePod(tp.pod.metadata.namespace_.empty() ? "default" : tp.pod.metadata.namespace_,
                                 tp.pod.metadata.name);
        if (r.ok()) {
          o.deleted_s = Seconds(clock.Now());
          if (!o.scheduled_s) {
            ++res->deleted_while_pending;
            finish_pending(e.pod);
          }
          cur.gpu_milli -= pod_gpu_milli[e.pod];
          pod_gpu_milli[e.pod] = 0;
          if (opts.hooks.on_deleted) opts.hooks.on_deleted(e.pod, *o.deleted_s);
        }
      }
    }
    sched->Tick();
    while (sched->ScheduleOne(/*blocking=*/false)) {
    }
    const api::Resource alloc = checker.Allocated();
    usage.Sample(alloc, clock.Now());
    {
      UsageSample u = cur;
      u.t = Seconds(clock.Now());
      u.gpus = static_cast<double>(alloc.Scalar(usage.gpu_id));
      u.milli_cpu = static_cast<double>(alloc.milli_cpu);
      u.running = checker.BoundPods();
      const auto c = sched->queue().Counts();
      u.pending = c.active + c.backoff + c.unschedulable + c.gated;
      const UsageSample* last = res->timeline.empty() ? nullptr : &res->timeline.back();
      if (!last || last->gpu_milli != u.gpu_milli || last->gpus != u.gpus ||
          last->milli_cpu != u.milli_cpu || last->running != u.running ||
          last->pending != u.pending) {
        res->timeline.push_back(u);
      }
    }
    if (has_queues) {
      // Per-queue allocation and fair share, recorded when any queue's figures changed.
      std::vector<QueueSample> now;
      for (const auto& q : sched->queues().Status()) {
        QueueSample s;
        s.t = Seconds(clock.Now());
        s.queue = q.name;
        auto get = [&](const auto& m) -> double {
          auto it = m.find(res->queue_resource);
          if (it == m.end()) return 0.0;
          return static_cast<double>(it->second) / (res->queue_resource == "cpu" ? 1000.0 : 1.0);
        };
        s.allocated = get(q.allocated);
        s.deserved = get(q.deserved);
        s.demand = s.allocated + get(q.pending);
        s.running_pods = q.running_pods;
        s.pending_pods = q.pending_pods;
        now.push_back(std::move(s));
      }
      bool changed = last_queue_samples.size() != now.size();
      for (size_t i = 0; !changed && i < now.size(); ++i) {
        const auto& a = now[i];
        const auto& b = last_queue_samples[i];
        changed = a.queue != b.queue || a.allocated != b.allocated || a.deserved != b.deserved ||
                  a.running_pods != b.running_pods || a.pending_pods != b.pending_pods;
      }
      if (changed) {
        res->queue_timeline.insert(res->queue_timeline.end(), now.begin(), now.end());
        last_queue_samples = std::move(now);
      }
    }
    if (opts.hooks.on_step) opts.hooks.on_step(Seconds(clock.Now()));
    if (opts.progress && (++steps % 512 == 0)) opts.progress(arrived, sc.pods.size(), Seconds(clock.Now()));
  }
  if (opts.progress) opts.progress(arrived, sc.pods.size(), Seconds(clock.Now()));

  auto pods_now = store.ListPods();
  checker.CheckPendingReasons(pods_now);
  for (size_t i = 0; i < sc.pods.size(); ++i) {
    const PodOutcome& o = res->outcomes[i];
    if (o.scheduled_s) {
      ++res->scheduled;
    } else if (!o.deleted_s) {
      ++res->pending_at_end;
      finish_pending(i);
    }
  }
  res->attempts = sched->stats().attempts;
  res->virtual_seconds = Seconds(clock.Now());
  res->invariant_violations = checker.violations();
  res->gangs = CollectGangOutcomes(sched->gangs());
  if (has_queues) {
    // Time-weighted means per queue over the sampled span.
    const auto status = sched->queues().Status();
    std::map<std::string, size_t> at;
    for (const auto& q : status) {
      at[q.name] = res->queues.size();
      QueueSummary s;
      s.name = q.name;
      s.parent = q.parent;
      s.dialect = q.dialect;
      s.pending_pods_end = q.pending_pods;
      s.error = q.error;
      res->queues.push_back(std::move(s));
    }
    std::map<std::string, const QueueSample*> prev;
    double t0 = -1, t1 = 0;
    for (const auto& s : res->queue_timeline) {
      if (t0 < 0) t0 = s.t;
      t1 = std::max(t1, s.t);
      auto it = at.find(s.queue);
      if (it == at.end()) continue;
      QueueSummary& q = res->queues[it->second];
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
    for (auto& q : res->queues) {
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

  const api::Resource cap = checker.Capacity();
  const double span = usage.started ? static_cast<double>(usage.last_t - usage.first_t) : 0;
  auto avg = [&](double integral) { return span > 0 ? integral / span : 0.0; };
  const double gib = 1024.0 * 1024 * 1024;
  res->usage.push_back({"cpu", cap.milli_cpu / 1000.0, usage.peak.milli_cpu / 1000.0, avg(usage.cpu) / 1000.0});
  res->usage.push_back({"memory(GiB)", cap.memory / gib, usage.peak.memory / gib, avg(usage.mem) / gib});
  res->usage.push_back({"nvidia.com/gpu", static_cast<double>(cap.Scalar(usage.gpu_id)),
                        static_cast<double>(usage.peak.Scalar(usage.gpu_id)), avg(usage.gpu)});
  res->usage.push_back({"pods", static_cast<double>(cap.allowed_pod_number),
                        static_cast<double>(usage.peak.allowed_pod_number), avg(usage.pods)});
  res->wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return true;
}

std::string FormatSummary(const SimulationResult& r) {
  std::ostringstream o;
  char buf[256];
  o << "scenario: " << r.scenario << " (seed " << r.seed << ")\n";
  o << "nodes: " << r.nodes << "  pods: " << r.pods << "  virtual time: " << r.virtual_seconds
    << " s  wall time: " << r.wall_seconds << " s  attempts: " << r.attempts << "\n";
  o << "scheduled: " << r.scheduled << "  pending at end: " << r.pending_at_end
    << "  deleted while pending: " << r.deleted_while_pending << "\n";
  if (!r.pending_reasons.empty()) {
    o << "never-scheduled pods by reason of their last attempt:\n";
    std::vector<std::pair<size_t, std::string>> v;
    for (const auto& [k, n] : r.pending_reasons) v.emplace_back(n, k);
    std::sort(v.rbegin(), v.rend());
    for (const auto& [n, k] : v) o << "  " << n << "  " << k << "\n";
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
  if (!r.queues.empty()) {
    o << "queues (" << r.queue_resource << (r.queue_resource == "cpu" ? " cores" : "")
      << "; time-average allocated / deserved, peak, at end, pending pods at end):\n";
    for (const auto& q : r.queues) {
      std::snprintf(buf, sizeof(buf), "  %-16s %-18s avg %8.2f / %8.2f  peak %8.2f  end %8.2f  pending %lld\n",
                    q.name.c_str(), (q.parent.empty() ? q.dialect : q.dialect + " < " + q.parent).c_str(),
                    q.allocated_avg, q.deserved_avg, q.allocated_peak, q.allocated_end,
                    static_cast<long long>(q.pending_pods_end));
      o << buf;
      if (!q.error.empty()) o << "    invalid: " << q.error << "\n";
    }
  }
  o << "invariant violations: " << r.invariant_violations.size() << "\n";
  for (size_t i = 0; i < r.invariant_violations.size() && i < 10; ++i) {
    o << "  " << r.invariant_violations[i] << "\n";
  }
  return o.str();
}

bool WriteOutcomesJsonl(const SimulationResult& r, const std::string& path, std::string* error) {
  std::ofstream out(path);
  if (!out) {
    *error = path + ": cannot open for writing";
    return false;
  }
  for (const auto& o : r.outcomes) {
    nlohmann::json j;
    j["pod"] = o.pod;
    j["node"] = o.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.node);
    j["arrival"] = o.arrival_s;
    j["scheduled"] = o.scheduled_s ? nlohmann::json(*o.scheduled_s) : nlohmann::json(nullptr);
    j["deleted"] = o.deleted_s ? nlohmann::json(*o.deleted_s) : nlohmann::json(nullptr);
    j["attempts"] = o.attempts;
    j["reason"] = o.scheduled_s ? nlohmann::json(nullptr) : nlohmann::json(o.reason);
    out << j.dump() << "\n";
  }
  if (!out) {
    *error = path + ": write failed";
    return false;
  }
  return true;
}

std::string ResultJson(const SimulationResult& r) {
  nlohmann::json j;
  j["scenario"] = r.scenario;
  j["seed"] = r.seed;
  j["nodes"] = r.nodes;
  j["pods"] = r.pods;
  j["scheduled"] = r.scheduled;
  j["pending_at_end"] = r.pending_at_end;
  j["deleted_while_pending"] = r.deleted_while_pending;
  j["attempts"] = r.attempts;
  j["virtual_seconds"] = r.virtual_seconds;
  j["wall_seconds"] = r.wall_seconds;
  j["pending_reasons"] = r.pending_reasons;
  for (const auto& u : r.usage) {
    j["usage"][u.resource] = {{"capacity", u.capacity}, {"peak", u.peak}, {"time_avg", u.time_avg}};
  }
  j["invariant_violations"] = r.invariant_violations;
  if (!r.queues.empty()) {
    nlohmann::json q;
    q["resource"] = r.queue_resource;
    for (const auto& s : r.queues) {
      q["queues"].push_back({{"name", s.name}, {"parent", s.parent}, {"dialect", s.dialect},
                             {"allocated_avg", s.allocated_avg}, {"deserved_avg", s.deserved_avg},
                             {"allocated_peak", s.allocated_peak}, {"allocated_end", s.allocated_end},
                             {"pending_pods_end", s.pending_pods_end}, {"error", s.error}});
    }
    for (const auto& s : r.queue_timeline) {
      q["timeline"].push_back({{"t", s.t}, {"queue", s.queue}, {"allocated", s.allocated},
                               {"deserved", s.deserved}, {"demand", s.demand},
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
    g["quorum_to_running_s"] = {{"mean", r.gangs.wait_mean_s}, {"p50", r.gangs.wait_p50_s},
                                {"max", r.gangs.wait_max_s}};
    for (const auto& o : r.gangs.outcomes) {
      g["outcomes"].push_back({{"gang", o.key}, {"min_member", o.min_member}, {"pods", o.pods},
                               {"bound", o.bound}, {"started", o.started},
                               {"quorum_to_running_s", o.quorum_to_running_s},
                               {"attempts", o.attempts}, {"last_reason", o.last_reason}});
    }
    j["gangs"] = g;
  }
  return j.dump(2);
}

}  // namespace phalanx::sim
