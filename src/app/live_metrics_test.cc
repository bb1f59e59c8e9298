// /metrics names: kube-scheduler's metric families (metrics::UpstreamFamilies, copied from
// upstream pkg/scheduler/metrics/metrics.go) are each served with exactly upstream's
// label names, after a small cluster went through binding, a Permit wait, preemption, an
// unschedulable pod and a queueing hint.
#include "app/live_metrics.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api/decode.h"
#include "config/config.h"
#include "framework/clock.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "store/store.h"

namespace phalanx::app {
namespace {

// The label names of one sample line ("name{a=\"x\",b=\"y\"} 1"), without "le".
std::vector<std::string> LabelNames(const std::string& line) {
  std::vector<std::string> out;
  const auto open = line.find('{');
  if (open == std::string::npos) return out;
  size_t i = open + 1;
  while (i < line.size() && line[i] != '}') {
    const auto eq = line.find('=', i);
    if (eq == std::string::npos) break;
    std::string name = line.substr(i, eq - i);
    if (name != "le") out.push_back(name);
    // Skip the quoted value (with escapes).
    size_t j = eq + 2;
    while (j < line.size() && line[j] != '"') j += line[j] == '\\' ? 2 : 1;
    i = j + 1;
    if (i < line.size() && line[i] == ',') ++i;
  }
  std::sort(out.begin(), out.end());
  return out;
}

// family -> (TYPE, label-name sets of its samples) of an exposition text.
struct Scraped {
  std::string type;
  std::set<std::vector<std::string>> label_sets;
};
std::map<std::string, Scraped> Parse(const std::string& text) {
  std::map<std::string, Scraped> out;
  std::istringstream in(text);
  std::string line, family;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream f(line.substr(7));
      f >> family;
      f >> out[family].type;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    // A histogram's samples are family_bucket / _sum / _count.
    if (name != family && name != family + "_bucket" && name != family + "_sum" &&
        name != family + "_count") {
      ADD_FAILURE() << "sample outside its family " << family << ": " << line;
      continue;
    }
    out[family].label_sets.insert(LabelNames(line));
  }
  return out;
}

std::string Pod(const std::string& name, const std::string& cpu, int priority,
                const std::string& group = "") {
  std::string labels = group.empty() ? "{}" : "{scheduling.x-k8s.io/pod-group: " + group + "}";
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n  labels: " + labels +
         "\nspec:\n  priority: " + std::to_string(priority) +
         "\n  containers: [{name: c, image: busybox, resources: {requests: {cpu: \"" + cpu +
         "\"}}}]\n---\n";
}

struct Cluster {
  Cluster() : clock(1000 * api::kNanosPerSecond), store(clock) {
    scheduler::SchedulerOptions o;
    o.config = config::DefaultConfiguration();
    config::PluginConfig pc;  // gangs wait in Permit: scheduler_permit_wait_duration_seconds
    pc.name = "GangScheduling";
    pc.args = std::make_shared<YAML::Node>(YAML::Load("{mode: Permit}"));
    o.config.profiles[0].plugin_config.push_back(pc);
    o.registry = plugins::NewInTreeRegistry();
    o.clock = &clock;
    o.client = &store;
    o.seed = 1;
    auto s = scheduler::Scheduler::New(std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().Message();
    sched = std::move(s).value();
    // Every plugin call timed, so that each plugin's series shows up in one run.
    live = std::make_unique<LiveMetrics>(reg, *sched, clock, /*plugin_sample_percent=*/100);
    sched->on_bound = [this](const api::Pod& p, const std::string&) { live->OnBound(p); };
    sched->on_failure = [this](const framework::QueuedPodInfo& qp, const framework::Status& st,
                               scheduler::Scheduler::FailurePhase phase) {
      live->OnFailure(qp, st, phase);
    };
    sched->AddEventHandlers(live->TimedInformers(store));
  }
  void Apply(const std::string& yaml) {
    api::Manifests m;
    std::string err;
    ASSERT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &m), &err)) << err;
    for (auto& n : m.nodes) ASSERT_TRUE(store.CreateNode(n).ok());
    for (auto& o : m.objects) ASSERT_TRUE(store.CreateObject(o).ok());
    for (auto& p : m.pods) {
      ASSERT_TRUE(store.CreatePod(p).ok());
      clock.Advance(1'000'000);
    }
  }
  // Like the run loop: Tick, then attempts until activeQ is empty; `seconds` later again.
  void Run(int seconds = 0) {
    for (int i = 0; i <= seconds; ++i) {
      sched->Tick();
      while (live->ScheduleOne(false)) {
      }
      clock.Advance(api::kNanosPerSecond);
    }
  }
  std::string NodeOf(const std::string& name) {
    auto p = store.GetPod("default", name);
    return p ? p->spec.node_name : "<deleted>";
  }

  framework::VirtualClock clock;
  store::Store store;
  metrics::Registry reg;
  std::unique_ptr<scheduler::Scheduler> sched;
  std::unique_ptr<LiveMetrics> live;  // after sched: destroyed first (the scheduler is idle)
};

TEST(LiveMetrics, ServesEveryUpstreamFamilyWithUpstreamLabels) {
  Cluster c;
  c.Apply(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1}}\n"
      "status:\n  capacity: {cpu: \"4\", memory: 64Gi, pods: \"110\"}\n---\n");
  c.Apply(Pod("low", "3", 0));
  c.Run();
  ASSERT_EQ(c.NodeOf("low"), "n1");
  // A gang of two: the first member waits in Permit for the second.
  c.Apply(
      "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, "
      "namespace: default}\nspec: {minMember: 2}\n---\n" +
      Pod("g-0", "100m", 0, "g"));
  c.Run();
  c.Apply(Pod("g-1", "100m", 0, "g"));
  c.Run();
  ASSERT_EQ(c.NodeOf("g-0"), "n1");
  ASSERT_EQ(c.NodeOf("g-1"), "n1");
  // "huge" never fits (NodeResourcesFit rejects it); then "high" evicts "low", and the
  // deletion runs NodeResourcesFit's queueing hint for "huge".
  c.Apply(Pod("huge", "100", 0));
  c.Run();
  c.Apply(Pod("high", "3", 1000));
  c.Run(/*seconds=*/30);
  EXPECT_EQ(c.NodeOf("low"), "<deleted>");
  EXPECT_EQ(c.NodeOf("high"), "n1");
  EXPECT_EQ(c.NodeOf("huge"), "");

  const std::string text = c.reg.Render();
  const auto scraped = Parse(text);
  for (const metrics::FamilySpec& f : metrics::UpstreamFamilies()) {
    SCOPED_TRACE(f.name);
    auto it = scraped.find(f.name);
    ASSERT_NE(it, scraped.end()) << "family not served";
    EXPECT_EQ(it->second.type, f.type);
    std::vector<std::string> want = f.labels;
    std::sort(want.begin(), want.end());
    ASSERT_FALSE(it->second.label_sets.empty()) << "no samples";
    EXPECT_EQ(it->second.label_sets, std::set<std::vector<std::string>>{want});
  }
  // Values with meaning, not just names.
  // DefaultPreemption ran for "huge" twice (nothing to evict) and once for "high".
  EXPECT_NE(text.find("scheduler_preemption_attempts_total 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("scheduler_preemption_victims_count 1\n"), std::string::npos);
  EXPECT_NE(text.find("scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-"
                      "scheduler\"} 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("scheduler_pending_pods{queue=\"unschedulable\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",profile=\"default-"
                      "scheduler\"} 1\n"),
            std::string::npos);
  // g-0 waits for its gang at PreEnqueue (unschedulablePods) until g-1 arrives.
  EXPECT_NE(text.find("scheduler_queue_incoming_pods_total{queue=\"active\",event=\"PodAdd\"} 4\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("scheduler_queue_incoming_pods_total{queue=\"unschedulable\",event=\"PodAdd\"} "
                "1\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("scheduler_queue_incoming_pods_total{queue=\"active\",event=\"AssignedPodDelete\"} "
                "1\n"),
      std::string::npos);
  EXPECT_NE(text.find("scheduler_scheduler_cache_size{type=\"nodes\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("scheduler_permit_wait_duration_seconds_count{result=\"Success\"} 1\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("scheduler_plugin_execution_duration_seconds_count{plugin=\"NodeResourcesFit\","
                "extension_point=\"Filter\",status=\"Unschedulable\"}"),
      std::string::npos);
  EXPECT_NE(text.find("scheduler_framework_extension_point_duration_seconds_count{extension_point="
                      "\"Bind\",status=\"Success\",profile=\"default-scheduler\"} 4\n"),
            std::string::npos);
}

TEST(LiveMetrics, PluginDurationsAreSampled) {
  // With the default 10 %, one cycle in ten times its plugins: 20 attempts -> 2 PreFilter
  // observations of a plugin that runs for every pod.
  framework::VirtualClock clock(1000 * api::kNanosPerSecond);
  store::Store store(clock);
  scheduler::SchedulerOptions o;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  o.clock = &clock;
  o.client = &store;
  auto made = scheduler::Scheduler::New(std::move(o));
  ASSERT_TRUE(made.ok());
  auto sched = std::move(made).value();
  metrics::Registry reg;
  LiveMetrics live(reg, *sched, clock);
  sched->AddEventHandlers(store);
  api::Manifests nodes;
  std::string nerr;
  ASSERT_TRUE(api::OkOrMessage(
      api::DecodeManifests("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n"
                           "  capacity: {cpu: \"64\", memory: 64Gi, pods: \"110\"}\n",
                           "n.yaml", &nodes),
      &nerr))
      << nerr;
  ASSERT_TRUE(store.CreateNode(nodes.nodes[0]).ok());
  for (int i = 0; i < 20; ++i) {
    api::Manifests m;
    std::string err;
    ASSERT_TRUE(api::OkOrMessage(
        api::DecodeManifests(Pod("p" + std::to_string(i), "100m", 0), "t.yaml", &m), &err));
    ASSERT_TRUE(store.CreatePod(m.pods[0]).ok());
  }
  while (live.ScheduleOne(false)) {
  }
  const std::string text = reg.Render();
  EXPECT_NE(text.find("scheduler_plugin_execution_duration_seconds_count{plugin=\""
                      "NodeResourcesFit\",extension_point=\"PreFilter\",status=\"Success\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("scheduler_framework_extension_point_duration_seconds_count{extension_point="
                      "\"PreFilter\",status=\"Success\",profile=\"default-scheduler\"} 20\n"),
            std::string::npos);
}

}  // namespace
}  // namespace phalanx::app
