#include "perf/bench.h"

#include <sys/resource.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/config.h"
#include "framework/clock.h"
#include "perf/scheduler_options_internal.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "store/store.h"

namespace phalanx::perf {

namespace {
api::Node BenchNode(int i) {
  api::Node n;
  n.metadata.name = "node-" + std::to_string(i);
  n.metadata.labels["kubernetes.io/hostname"] = n.metadata.name;
  n.status.capacity["cpu"] = api::Quantity::FromValue(4);
  n.status.capacity["memory"] = api::Quantity::FromValue(32LL * 1024 * 1024 * 1024);
  n.status.capacity["pods"] = api::Quantity::FromValue(110);
  n.status.allocatable = n.status.capacity;
  n.status.conditions.push_back({"Ready", "True"});
  return n;
}

api::Pod BenchPod(const std::string& prefix, int i) {
  api::Pod p;
  p.metadata.name = prefix + std::to_string(i);
  p.metadata.namespace_ = "default";
  api::Container c;
  c.name = "pause";
  c.image = "registry.k8s.io/pause:3.9";
  c.resources.requests["cpu"] = api::Quantity::FromMilli(100);
  c.resources.requests["memory"] = api::Quantity::FromValue(500LL * 1024 * 1024);
  p.spec.containers.push_back(std::move(c));
  return p;
}

long PeakRssKiB() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}
}  // namespace

api::Unstructured CoschedulingPodGroup(const std::string& name, int min_member) {
  api::Unstructured u;
  u.api_version = "scheduling.x-k8s.io/v1alpha1";
  u.kind = "PodGroup";
  u.metadata.name = name;
  u.metadata.namespace_ = "default";
  YAML::Node n;
  n["apiVersion"] = u.api_version;
  n["kind"] = u.kind;
  n["metadata"]["name"] = name;
  n["metadata"]["namespace"] = "default";
  n["spec"]["minMember"] = min_member;
  u.object = std::make_shared<const YAML::Node>(n);
  return u;
}

api::Status BenchSchedulerOptions(const std::string& config_path, int parallelism,
                                  const std::optional<framework::Registry>& registry, uint64_t seed,
                                  scheduler::SchedulerOptions* so) {
  auto loaded = config::LoadConfigurationOrDefault(config_path);
  if (!loaded.ok()) return loaded.status();
  so->config = *std::move(loaded);
  if (parallelism > 0) so->config.parallelism = parallelism;
  so->registry = registry ? *registry : plugins::NewInTreeRegistry();
  so->seed = seed;
  return absl::OkStatus();
}

api::Status RunBasic(const BasicOptions& opts, BasicResult* res) {
  res->opts = opts;
  framework::RealClock clock;
  store::Store store(clock);
  store.set_keep_all_events(false);
  scheduler::SchedulerOptions so;
  if (auto st =
          BenchSchedulerOptions(opts.config_path, opts.parallelism, opts.registry, opts.seed, &so);
      !st.ok()) {
    return st;
  }
  so.clock = &clock;
  so.client = &store;
  so.binding_workers = opts.binding_workers;
  so.opportunistic_batching = opts.opportunistic_batching;
  auto s = scheduler::Scheduler::New(std::move(so));
  if (!s.ok()) return absl::InvalidArgumentError(s.status().Message());
  auto sched = std::move(s).value();
  sched->AddEventHandlers(store);
  for (int i = 0; i < opts.nodes; ++i) (void)store.CreateNode(BenchNode(i));
  for (int i = 0; i < opts.init_pods; ++i) (void)store.CreatePod(BenchPod("init-pod-", i));
  while (sched->ScheduleOne(false)) {
  }
  sched->WaitForBindings();
  const int64_t before = sched->stats().scheduled;
  const int64_t attempts_before = sched->stats().attempts;
  int measured = opts.measured_pods;
  if (opts.gangs > 0 && opts.gang_size > 0) {
    measured = opts.gangs * opts.gang_size;
    for (int g = 0; g < opts.gangs; ++g) {
      (void)store.CreateObject(CoschedulingPodGroup("gang-" + std::to_string(g), opts.gang_size));
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  if (opts.gangs > 0 && opts.gang_size > 0) {
    for (int g = 0; g < opts.gangs; ++g) {
      for (int i = 0; i < opts.gang_size; ++i) {
        api::Pod p = BenchPod("gang-" + std::to_string(g) + "-", i);
        p.metadata.labels["scheduling.x-k8s.io/pod-group"] = "gang-" + std::to_string(g);
        (void)store.CreatePod(std::move(p));
      }
    }
  } else {
    for (int i = 0; i < opts.measured_pods; ++i) (void)store.CreatePod(BenchPod("pod-", i));
  }
  for (;;) {
    auto c0 = std::chrono::steady_clock::now();
    if (!sched->ScheduleOne(false)) break;
    res->largest_cycle_ms = std::max(
        res->largest_cycle_ms,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count());
  }
  sched->WaitForBindings();
  auto t1 = std::chrono::steady_clock::now();
  res->seconds = std::chrono::duration<double>(t1 - t0).count();
  res->scheduled = sched->stats().scheduled - before;
  res->attempts = sched->stats().attempts - attempts_before;
  res->pods_per_second = res->seconds > 0 ? res->scheduled / res->seconds : 0;
  res->per_pod_us = res->scheduled > 0 ? 1e6 * res->seconds / res->scheduled : 0;
  res->peak_rss_kib = PeakRssKiB();
  if (!opts.json_path.empty()) {
    nlohmann::json j{{"workload", opts.gangs > 0 ? "SchedulingGangs" : "SchedulingBasic"},
                     {"gangs", opts.gangs},
                     {"gang_size", opts.gang_size},
                     {"largest_cycle_ms", res->largest_cycle_ms},
                     {"nodes", opts.nodes},
                     {"init_pods", opts.init_pods},
                     {"measured_pods", opts.measured_pods},
                     {"scheduled", res->scheduled},
                     {"seconds", res->seconds},
                     {"pods_per_second", res->pods_per_second},
                     {"peak_rss_kib", res->peak_rss_kib}};
    std::ofstream out(opts.json_path);
    out << j.dump(2) << "\n";
  }
  if (res->scheduled != measured) {
    return absl::InternalError("only " + std::to_string(res->scheduled) + " of " +
                               std::to_string(measured) + " measured pods were scheduled");
  }
  return absl::OkStatus();
}

std::string FormatBasic(const BasicResult& r) {
  std::ostringstream o;
  if (r.opts.gangs > 0) {
    o << "SchedulingGangs: " << r.opts.nodes << " nodes, " << r.opts.init_pods << " init pods, "
      << r.opts.gangs << " gangs x " << r.opts.gang_size << " pods (minMember " << r.opts.gang_size
      << ")\n";
  } else {
    o << "SchedulingBasic: " << r.opts.nodes << " nodes, " << r.opts.init_pods << " init pods, "
      << r.opts.measured_pods << " measured pods\n";
  }
  o << "scheduled " << r.scheduled << " pods in " << r.seconds
    << " s: " << static_cast<int64_t>(r.pods_per_second) << " pods/s (" << r.per_pod_us
    << " us/pod), attempts " << r.attempts << ", peak RSS " << r.peak_rss_kib / 1024
    << " MiB, longest cycle " << r.largest_cycle_ms << " ms\n";
  return o.str();
}

}  // namespace phalanx::perf
