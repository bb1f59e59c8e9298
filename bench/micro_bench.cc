// Google Benchmark micro benchmarks of the scheduler's hot paths:
//   BM_Filter/<plugin>, BM_Score/<plugin>  one Filter / Score call on one node (5,000-node
//                                         cluster with 5,000 bound pods; PreFilter /
//                                         PreScore run once outside the timed loop)
//   BM_SnapshotUpdate                     Cache::UpdateSnapshot after one pod was assumed
//                                         (one NodeInfo changed out of 5,000)
//   BM_QueuePushPop                       SchedulingQueue Add + TryPop of one pod with
//                                         `range(0)` pods already queued
//   BM_PodGroupCycle                      one whole PodGroup cycle of an 8-pod gang
//                                         (Coscheduling PodGroup, minMember 8) on 5,000
//                                         nodes, including its binding cycles
// Timings are never asserted; CTest (label bench) only proves each one runs.
#include <benchmark/benchmark.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/types.h"
#include "config/config.h"
#include "framework/clock.h"
#include "framework/cycle_state.h"
#include "framework/interface.h"
#include "framework/runtime.h"
#include "perf/bench.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "store/store.h"

namespace phalanx {
namespace {

constexpr int kNodes = 5000;
constexpr int kPods = 5000;
const char* kZones[] = {"zone-a", "zone-b", "zone-c"};

api::Pod MakePod(const std::string& ns, const std::string& name, int64_t milli_cpu) {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = ns;
  api::Container c;
  c.name = "pause";
  c.resources.requests["cpu"] = api::Quantity::FromMilli(milli_cpu);
  c.resources.requests["memory"] = api::Quantity::FromValue(500LL * 1024 * 1024);
  p.spec.containers.push_back(std::move(c));
  return p;
}

api::PodAffinityTerm Term(const std::string& key, const std::string& value,
                          const std::string& topology_key) {
  api::PodAffinityTerm t;
  api::LabelSelector sel;
  sel.match_labels[key] = value;
  t.label_selector = sel;
  t.topology_key = topology_key;
  return t;
}

// A 5,000-node cluster (hostname and zone labels, every 10th node tainted) with 5,000
// bound pods, a tenth of which carry pod (anti-)affinity; scheduled by a real Scheduler
// on an embedded Store so that the snapshot, cache and queue are the production ones.
struct Cluster {
  framework::VirtualClock clock{1};
  store::Store store{clock};
  std::unique_ptr<scheduler::Scheduler> sched;
  framework::Framework* fwk = nullptr;

  Cluster() {
    store.set_keep_all_events(false);
    scheduler::SchedulerOptions so;
    so.config = config::DefaultConfiguration();
    so.registry = plugins::NewInTreeRegistry();
    so.clock = &clock;
    so.client = &store;
    auto s = scheduler::Scheduler::New(std::move(so));
    if (!s.ok()) std::abort();
    sched = std::move(s).value();
    sched->AddEventHandlers(store);
    fwk = sched->Profile("default-scheduler");
    for (int i = 0; i < kNodes; ++i) {
      api::Node n;
      n.metadata.name = "node-" + std::to_string(i);
      n.metadata.labels["kubernetes.io/hostname"] = n.metadata.name;
      n.metadata.labels["topology.kubernetes.io/zone"] = kZones[i % 3];
      n.status.capacity["cpu"] = api::Quantity::FromValue(64);
      n.status.capacity["memory"] = api::Quantity::FromValue(256LL << 30);
      n.status.capacity["pods"] = api::Quantity::FromValue(110);
      n.status.allocatable = n.status.capacity;
      n.status.conditions.push_back({"Ready", "True"});
      if (i % 10 == 0) n.spec.taints.push_back({"dedicated", "infra", "NoSchedule"});
      (void)store.CreateNode(std::move(n));
    }
    for (int i = 0; i < kPods; ++i) {
      api::Pod p = MakePod("default", "pod-" + std::to_string(i), 100);
      p.metadata.labels["app"] = "app-" + std::to_string(i % 50);
      if (i % 10 == 0) {
        api::Affinity a;
        a.pod_anti_affinity.emplace();
        a.pod_anti_affinity->required.push_back(
            Term("app", "app-" + std::to_string(i % 50), "kubernetes.io/hostname"));
        p.spec.affinity = a;
      }
      p.spec.node_name = "node-" + std::to_string((i * 7) % kNodes);
      (void)store.CreatePod(std::move(p));
    }
    sched->cache().UpdateSnapshot(&sched->snapshot());
  }

  std::unique_ptr<framework::Plugin> NewPlugin(const std::string& name) {
    auto reg = plugins::NewInTreeRegistry();
    const framework::PluginFactory* f = reg.Find(name);
    if (!f) std::abort();
    auto p = (*f)(nullptr, *fwk);
    if (!p.ok()) std::abort();
    return std::move(p).value();
  }
};

Cluster& Shared() {
  static Cluster* c = new Cluster();
  return *c;
}

// The pod each plugin is benchmarked with: one that exercises the plugin.
framework::PodInfoPtr PodFor(const std::string& plugin) {
  api::Pod p = MakePod("default", "incoming", 200);
  p.metadata.labels["app"] = "app-7";
  if (plugin == "TaintToleration") {
    p.spec.tolerations.push_back({"dedicated", "Equal", "infra", "NoSchedule", std::nullopt});
    p.spec.tolerations.push_back({"spot", "Exists", "", "PreferNoSchedule", std::nullopt});
  } else if (plugin == "NodeAffinity") {
    api::Affinity a;
    a.node_affinity.emplace();
    api::NodeSelector sel;
    api::NodeSelectorTerm term;
    term.match_expressions.push_back({"topology.kubernetes.io/zone", "In", {"zone-a", "zone-b"}});
    sel.node_selector_terms.push_back(term);
    a.node_affinity->required_during_scheduling_ignored_during_execution = sel;
    api::PreferredSchedulingTerm pref;
    pref.weight = 10;
    pref.preference.match_expressions.push_back({"topology.kubernetes.io/zone", "In", {"zone-a"}});
    a.node_affinity->preferred_during_scheduling_ignored_during_execution.push_back(pref);
    p.spec.affinity = a;
  } else if (plugin == "InterPodAffinity") {
    api::Affinity a;
    a.pod_anti_affinity.emplace();
    a.pod_anti_affinity->required.push_back(Term("app", "app-7", "kubernetes.io/hostname"));
    a.pod_affinity.emplace();
    api::WeightedPodAffinityTerm w;
    w.weight = 5;
    w.pod_affinity_term = Term("app", "app-3", "topology.kubernetes.io/zone");
    a.pod_affinity->preferred.push_back(w);
    p.spec.affinity = a;
  } else if (plugin == "PodTopologySpread") {
    api::TopologySpreadConstraint c;
    c.max_skew = 1;
    c.topology_key = "topology.kubernetes.io/zone";
    c.when_unsatisfiable = "DoNotSchedule";
    api::LabelSelector sel;
    sel.match_labels["app"] = "app-7";
    c.label_selector = sel;
    p.spec.topology_spread_constraints.push_back(c);
    api::TopologySpreadConstraint s = c;
    s.topology_key = "kubernetes.io/hostname";
    s.when_unsatisfiable = "ScheduleAnyway";
    p.spec.topology_spread_constraints.push_back(s);
  }
  return framework::PodInfo::Make(std::make_shared<api::Pod>(std::move(p)));
}

void BM_Filter(benchmark::State& state, std::string plugin) {
  Cluster& c = Shared();
  auto pl = c.NewPlugin(plugin);
  auto* filter = dynamic_cast<framework::FilterPlugin*>(pl.get());
  auto* pre = dynamic_cast<framework::PreFilterPlugin*>(pl.get());
  auto pod = PodFor(plugin);
  framework::CycleState cs;
  if (pre) {
    framework::PreFilterResult r;
    (void)pre->PreFilter(cs, *pod, &r);
  }
  const auto& nodes = c.sched->snapshot().List();
  size_t i = 0;
  for (auto _ : state) {
    framework::Status s = filter->Filter(cs, *pod, *nodes[i]);
    benchmark::DoNotOptimize(s);
    if (++i == nodes.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("per node");
}

void BM_Score(benchmark::State& state, std::string plugin) {
  Cluster& c = Shared();
  auto pl = c.NewPlugin(plugin);
  auto* score = dynamic_cast<framework::ScorePlugin*>(pl.get());
  auto pod = PodFor(plugin);
  const auto& nodes = c.sched->snapshot().List();
  framework::CycleState cs;
  if (auto* pre = dynamic_cast<framework::PreFilterPlugin*>(pl.get())) {
    framework::PreFilterResult r;
    (void)pre->PreFilter(cs, *pod, &r);
  }
  if (auto* ps = dynamic_cast<framework::PreScorePlugin*>(pl.get())) {
    (void)ps->PreScore(cs, *pod, nodes);
  }
  size_t i = 0;
  for (auto _ : state) {
    int64_t v = 0;
    framework::Status s = score->Score(cs, *pod, *nodes[i], &v);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(v);
    if (++i == nodes.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("per node");
}

void BM_SnapshotUpdate(benchmark::State& state) {
  Cluster& c = Shared();
  auto& cache = c.sched->cache();
  int64_t k = 0;
  for (auto _ : state) {
    auto p = std::make_shared<api::Pod>(MakePod("snap", "p-" + std::to_string(k), 10));
    p->spec.node_name = "node-" + std::to_string(k % kNodes);
    p->metadata.uid = "snap-" + std::to_string(k++);
    auto info = framework::PodInfo::Make(p);
    (void)cache.AssumePod(info);
    cache.UpdateSnapshot(&c.sched->snapshot());
    state.PauseTiming();
    (void)cache.ForgetPod(*p);
    cache.UpdateSnapshot(&c.sched->snapshot());
    state.ResumeTiming();
  }
}

void BM_QueuePushPop(benchmark::State& state) {
  framework::VirtualClock clock{1};
  store::Store store{clock};
  scheduler::SchedulerOptions so;
  so.config = config::DefaultConfiguration();
  so.registry = plugins::NewInTreeRegistry();
  so.clock = &clock;
  so.client = &store;
  auto sched = std::move(scheduler::Scheduler::New(std::move(so))).value();
  auto& q = sched->scheduling_queue();
  const int64_t backlog = state.range(0);
  std::vector<framework::PodInfoPtr> pods;
  for (int64_t i = 0; i < backlog + 1024; ++i) {
    api::Pod p = MakePod("q", "p-" + std::to_string(i), 100);
    p.metadata.uid = "q-" + std::to_string(i);
    p.metadata.creation_timestamp = i;
    p.spec.priority = static_cast<int32_t>(i % 7);
    pods.push_back(framework::PodInfo::Make(std::make_shared<api::Pod>(std::move(p))));
  }
  for (int64_t i = 0; i < backlog; ++i) q.Add(pods[i]);
  std::unordered_map<const framework::PodInfo*, size_t> index;
  for (size_t j = 0; j < pods.size(); ++j) index[pods[j].get()] = j;
  size_t next = static_cast<size_t>(backlog);
  for (auto _ : state) {
    q.Add(pods[next]);
    auto popped = q.TryPop();
    benchmark::DoNotOptimize(popped);
    // Keep the backlog constant: the popped pod is the next one pushed (a hash lookup).
    next = index.at(popped->pod_info.get());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_PodGroupCycle(benchmark::State& state) {
  framework::VirtualClock clock{1};
  store::Store store{clock};
  store.set_keep_all_events(false);
  scheduler::SchedulerOptions so;
  so.config = config::DefaultConfiguration();
  so.registry = plugins::NewInTreeRegistry();
  so.clock = &clock;
  so.client = &store;
  auto sched = std::move(scheduler::Scheduler::New(std::move(so))).value();
  sched->AddEventHandlers(store);
  for (int i = 0; i < kNodes; ++i) {
    api::Node n;
    n.metadata.name = "node-" + std::to_string(i);
    n.status.capacity["cpu"] = api::Quantity::FromValue(4);
    n.status.capacity["memory"] = api::Quantity::FromValue(32LL << 30);
    n.status.capacity["pods"] = api::Quantity::FromValue(110);
    n.status.allocatable = n.status.capacity;
    n.status.conditions.push_back({"Ready", "True"});
    (void)store.CreateNode(std::move(n));
  }
  constexpr int kGang = 8;
  int64_t g = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string name = "gang-" + std::to_string(g++);
    (void)store.CreateObject(perf::CoschedulingPodGroup(name, kGang));
    for (int i = 0; i < kGang; ++i) {
      api::Pod p = MakePod("default", name + "-" + std::to_string(i), 100);
      p.metadata.labels["scheduling.x-k8s.io/pod-group"] = name;
      (void)store.CreatePod(std::move(p));
    }
    state.ResumeTiming();
    while (sched->ScheduleOne(false)) {
    }
  }
  if (sched->stats().scheduled != g * kGang) state.SkipWithError("gang pods were not all bound");
  state.SetItemsProcessed(state.iterations() * kGang);
  state.SetLabel("items = pods");
}

void Register() {
  for (const char* p : {"NodeResourcesFit", "TaintToleration", "NodeAffinity", "InterPodAffinity",
                        "PodTopologySpread"}) {
    benchmark::RegisterBenchmark((std::string("BM_Filter/") + p).c_str(), BM_Filter,
                                 std::string(p));
    benchmark::RegisterBenchmark((std::string("BM_Score/") + p).c_str(), BM_Score, std::string(p));
  }
  benchmark::RegisterBenchmark("BM_SnapshotUpdate", BM_SnapshotUpdate);
  benchmark::RegisterBenchmark("BM_QueuePushPop", BM_QueuePushPop)->Arg(0)->Arg(10000);
  benchmark::RegisterBenchmark("BM_PodGroupCycle", BM_PodGroupCycle)->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace phalanx

int main(int argc, char** argv) {
  // As app::Run: no deadlock-detection graph on every absl::Mutex acquisition.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  phalanx::Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
