// Trace replay modes and the HTML report: parsing helpers, the Philly gang loader, the
// paper methodology on small samples, determinism, and the report checked in a real
// headless browser (Debian's chromium) against the JSON results.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "config/config.h"
#include "dra/model.h"
#include "plugins/registry.h"
#include "replay/dra_gpus.h"
#include "replay/experiment.h"
#include "replay/openb.h"
#include "replay/paper.h"
#include "replay/philly.h"
#include "replay/report.h"
#include "scheduler/scheduler.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "store/store.h"

namespace phalanx::replay {
namespace {

namespace fs = std::filesystem;
const std::string kData = PHALANX_SHARED_DATA_DIR;

// Skips (developer clone without ../shared) or fails (CI=true) when `path` is missing.
#define REQUIRE_SHARED_DATA(path)                                                           \
  do {                                                                                      \
    if (!fs::exists(path)) {                                                                \
      const char* ci = std::getenv("CI");                                                   \
      if (ci && std::string(ci) == "true") FAIL() << "shared data missing in CI: " << path; \
      GTEST_SKIP() << "needs ../shared/data (" << path << "); not in a user's clone";       \
    }                                                                                       \
  } while (0)

fs::path TempDir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("phalanx_replay_" + name + "_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

void Write(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
}

TEST(ReplayParseTest, SeedsPoliciesAndClusters) {
  std::vector<uint64_t> seeds;
  std::string err;
  ASSERT_EQ(ParseSeeds("42-45,7", &seeds), absl::OkStatus());
  EXPECT_EQ(seeds, (std::vector<uint64_t>{42, 43, 44, 45, 7}));
  seeds.clear();
  err = std::string(ParseSeeds("9-3", &seeds).message());
  EXPECT_NE(err.find("\"9-3\""), std::string::npos) << err;
  std::vector<PolicySpec> p;
  ASSERT_EQ(ParsePolicies("fgd, BestFit,dotprod,packing,clustering,random,default", &p),
            absl::OkStatus());
  ASSERT_EQ(p.size(), 7u);
  EXPECT_EQ(p[0].score_plugin, "FGDScore");
  EXPECT_EQ(p[1].display, "BestFit");
  EXPECT_EQ(p[2].score_plugin, "DotProductScore");
  EXPECT_EQ(p[6].score_plugin, "");
  p.clear();
  err = std::string(ParsePolicies("fgd,tetris", &p).message());
  EXPECT_NE(err.find("unknown policy \"tetris\""), std::string::npos) << err;
  PhillyCluster c;
  ASSERT_EQ(ParseClusterSpec("16x4", &c), absl::OkStatus());
  EXPECT_EQ(c.nodes, 16);
  EXPECT_EQ(c.gpus_per_node, 4);
  err = std::string(ParseClusterSpec("16", &c).message());
  EXPECT_EQ(err, "--cluster: want NODESxGPUS (e.g. 32x8), got \"16\"");
  EXPECT_EQ(PaperUnallocatedAt100("data/openb_pod_list_default.csv", "FGD"), 4.77);
  EXPECT_FALSE(PaperUnallocatedAt100("openb_pod_list_default.csv", "Default").has_value());
  EXPECT_EQ(PaperUnallocatedAt100("data/openb_pod_list_gpuspec33.csv", "FGD"), 12.12);
  EXPECT_EQ(PaperUnallocatedAt100("openb_pod_list_multigpu20.csv", "BestFit"), 6.27);
  EXPECT_EQ(PaperUnallocatedAt100("openb_pod_list_cpu050.csv", "Random"), 11.015);
  EXPECT_FALSE(PaperUnallocatedAt100("my_pods.csv", "FGD").has_value());
  EXPECT_FALSE(PaperUnallocatedAt100("openb_pod_list_default.csv", "FragLookahead").has_value());
}

TEST(ReplayParseTest, PolicyProfilesDisableTheDefaultScorers) {
  config::KubeSchedulerConfiguration cfg;
  std::string err;
  ASSERT_EQ(PolicyConfiguration(*LookupPolicy("fgd"), true, &cfg), absl::OkStatus());
  ASSERT_EQ(cfg.profiles.size(), 1u);
  const auto& pl = cfg.profiles[0].plugins;
  ASSERT_EQ(pl.score.enabled.size(), 1u);
  EXPECT_EQ(pl.score.enabled[0].name, "FGDScore");
  ASSERT_EQ(pl.score.disabled.size(), 1u);
  EXPECT_EQ(pl.score.disabled[0].name, "*");
  ASSERT_FALSE(pl.multi_point.enabled.empty());  // the defaults, then GpuShare
  EXPECT_EQ(pl.multi_point.enabled.back().name, "GpuShare");
  // GpuShare reserves before DynamicResources (framework/device_choice.h), writes no
  // annotations in PreBind.
  ASSERT_EQ(pl.reserve.enabled.size(), 2u);
  EXPECT_EQ(pl.reserve.enabled[0].name, "GpuShare");
  EXPECT_EQ(pl.reserve.enabled[1].name, "DynamicResources");
  ASSERT_EQ(pl.pre_bind.disabled.size(), 1u);
  EXPECT_EQ(pl.pre_bind.disabled[0].name, "GpuShare");
  EXPECT_EQ(cfg.percentage_of_nodes_to_score, 100);
  EXPECT_NE(cfg.profiles[0].ArgsFor("FGDScore"), nullptr);
}

TEST(OpenbLoaderTest, GpuSharingDropsTheWholeGpuRequestOfShares) {
  auto dir = TempDir("loader");
  Write(dir / "pods.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
        "share,1000,1024,1,500\n"
        "whole,1000,1024,2,1000\n"
        "cpu,1000,1024,0,0\n");
  for (bool sharing : {false, true}) {
    std::vector<sim::TimedPod> pods;
    std::string err;
    OpenbOptions oo;
    oo.gpu_sharing = sharing;
    ASSERT_EQ(LoadOpenbPods((dir / "pods.csv").string(), oo, &pods), absl::OkStatus());
    ASSERT_EQ(pods.size(), 3u);
    const auto& share = pods[0].pod.spec.containers[0].resources.requests;
    const auto& whole = pods[1].pod.spec.containers[0].resources.requests;
    EXPECT_EQ(share.count("nvidia.com/gpu"), sharing ? 0u : 1u);
    EXPECT_EQ(whole.at("nvidia.com/gpu").Value(), 2);
    EXPECT_EQ(pods[0].pod.metadata.annotations.at("alibabacloud.com/gpu-milli"), "500");
  }
}

// The whole openb default trace through the simulator (RunSimulation, default profile).
sim::SimulationOptions DefaultProfile(uint64_t seed) {
  sim::SimulationOptions o;
  o.seed = seed;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  return o;
}

// The openb traces' GPU shares (alibabacloud.com/gpu-milli) need GpuShare; a profile without
// it holds them pending (GpuShareGuard). The default profile plus GpuShare, as
// `phalanx simulate --trace openb` runs them (experiment.cc ResolvePolicies, policy "default").
sim::SimulationOptions OpenbProfile(uint64_t seed) {
  sim::SimulationOptions o = DefaultProfile(seed);
  const auto policy = LookupPolicy("default");
  EXPECT_TRUE(policy.has_value());
  if (policy) {
    EXPECT_EQ(PolicyConfiguration(*policy, false, &o.config), absl::OkStatus());
  }
  return o;
}

std::vector<std::string> NodesOf(const sim::SimulationResult& r) {
  std::vector<std::string> v;
  for (const auto& o : r.outcomes) v.push_back(o.node);
  return v;
}

TEST(OpenbTraceTest, DefaultTraceRunsToCompletionWithInvariantsAndDeterminism) {
  const std::string nodes = kData + "/alibaba-openb/openb_node_list_all_node.csv";
  const std::string pods = kData + "/alibaba-openb/openb_pod_list_default.csv";
  REQUIRE_SHARED_DATA(pods);
  sim::Scenario sc;
  ASSERT_EQ(LoadOpenbNodes(nodes, &sc.nodes), absl::OkStatus());
  ASSERT_EQ(LoadOpenbPods(pods, {}, &sc.pods), absl::OkStatus());
  ASSERT_EQ(sc.nodes.size(), 1523u);
  ASSERT_EQ(sc.pods.size(), 8152u);
  sim::SimulationResult a, b, c;
  ASSERT_EQ(sim::RunSimulation(sc, OpenbProfile(42), &a), absl::OkStatus());
  EXPECT_EQ(a.invariant_violations, std::vector<std::string>{});
  for (const auto& u : a.usage) EXPECT_LE(u.peak, u.capacity + 1e-9) << u.resource;
  EXPECT_EQ(a.pods, 8152u);
  EXPECT_EQ(a.scheduled + a.pending_at_end + a.deleted_while_pending, 8152u);
  EXPECT_GT(a.scheduled, 8000u);
  ASSERT_EQ(sim::RunSimulation(sc, OpenbProfile(42), &b), absl::OkStatus());
  EXPECT_EQ(NodesOf(a), NodesOf(b));
  ASSERT_EQ(sim::RunSimulation(sc, OpenbProfile(43), &c), absl::OkStatus());
  EXPECT_NE(NodesOf(a), NodesOf(c));
}

TEST(OpenbTraceTest, UntimedTraceOverloadsTheClusterAndEveryPendingPodHasAReason) {
  const std::string pods = kData + "/alibaba-openb/openb_pod_list_multigpu20.csv";
  REQUIRE_SHARED_DATA(pods);
  sim::Scenario sc;
  ASSERT_EQ(LoadOpenbNodes(kData + "/alibaba-openb/openb_node_list_gpu_node.csv", &sc.nodes),
            absl::OkStatus());
  OpenbOptions oo;
  oo.timed = false;
  ASSERT_EQ(LoadOpenbPods(pods, oo, &sc.pods), absl::OkStatus());
  sim::SimulationResult r;
  ASSERT_EQ(sim::RunSimulation(sc, OpenbProfile(1), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  for (const auto& o : r.outcomes) {
    EXPECT_TRUE(o.scheduled_s || o.deleted_s || !o.reason.empty()) << o.pod;
  }
  EXPECT_GT(r.pending_at_end, 0u);
  EXPECT_FALSE(r.pending_reasons.empty());
  size_t with_reason = 0;
  for (const auto& [reason, n] : r.pending_reasons) with_reason += n;
  EXPECT_EQ(with_reason, r.pending_at_end);
}

TEST(OpenbLoaderTest, CsvErrorsNameFileLineAndColumn) {
  const auto path = (TempDir("openb_errors") / "pods.csv").string();
  Write(path,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
        "p0,1000,1024,1,1000\n"
        "p1,lots,1024,1,1000\n");
  std::vector<sim::TimedPod> pods;
  const api::Status s = LoadOpenbPods(path, {}, &pods);
  EXPECT_EQ(s.message(), path + ":3: column cpu_milli: invalid value \"lots\"");
}

TEST(PhillyLoaderTest, JobsBecomeGangsOfNodeSizedPods) {
  auto dir = TempDir("philly");
  Write(dir / "jobs.csv",
        "job_id,num_gpu,submit_time,duration\n"
        "0,10,5,100\n"
        "1,2,0,50\n"
        "2,64,1,10\n");
  PhillyCluster c;
  c.nodes = 4;
  c.gpus_per_node = 4;
  sim::Scenario sc;
  std::vector<PhillyJob> jobs;
  size_t too_large = 0;
  std::string err;
  ASSERT_EQ(LoadPhillyTrace((dir / "jobs.csv").string(), c, 0, &sc, &jobs, &too_large),
            absl::OkStatus());
  EXPECT_EQ(too_large, 1u);  // 64 GPUs > 16
  ASSERT_EQ(jobs.size(), 2u);
  ASSERT_EQ(sc.nodes.size(), 4u);
  ASSERT_EQ(sc.pods.size(), 4u);  // job 0: 4 + 4 + 2; job 1: 2
  // Sorted by arrival: job 1 (t=0) first.
  EXPECT_EQ(sc.pods[0].pod.metadata.name, "job-1-0");
  EXPECT_EQ(jobs[0].pods.size(), 3u);
  std::multiset<int64_t> sizes;
  for (size_t i : jobs[0].pods) {
    const auto& p = sc.pods[i].pod;
    EXPECT_EQ(p.metadata.annotations.at("gang.scheduling.koordinator.sh/name"), "job-0");
    EXPECT_EQ(p.metadata.annotations.at("gang.scheduling.koordinator.sh/min-available"), "3");
    EXPECT_EQ(sc.pods[i].arrival, 5 * api::kNanosPerSecond);
    EXPECT_EQ(*sc.pods[i].run_duration_ns, 100 * api::kNanosPerSecond);
    // The trace's duration, for gang reservations' forecasts (gang/reservation.h).
    EXPECT_EQ(p.metadata.annotations.at("scheduling.phalanx.dev/expected-runtime-seconds"), "100");
    sizes.insert(p.spec.containers[0].resources.requests.at("nvidia.com/gpu").Value());
  }
  EXPECT_EQ(sizes, (std::multiset<int64_t>{2, 4, 4}));
  Write(dir / "bad.csv", "job_id,num_gpu,submit_time,duration\n0,two,5,100\n");
  err = std::string(
      LoadPhillyTrace((dir / "bad.csv").string(), c, 0, &sc, &jobs, &too_large).message());
  EXPECT_EQ(err, (dir / "bad.csv").string() + ":2: column num_gpu: invalid value \"two\"");
  // Upper-case ids would name pods and gangs no API server accepts.
  Write(dir / "upper.csv", "job_id,num_gpu,submit_time,duration\n0,1,5,100\nJob_A,2,5,100\n");
  err = std::string(
      LoadPhillyTrace((dir / "upper.csv").string(), c, 0, &sc, &jobs, &too_large).message());
  EXPECT_EQ(err, (dir / "upper.csv").string() +
                     ":3: column job_id: invalid value \"Job_A\": want at most 50 lower-case "
                     "letters, digits and '-' (it names the job's pods job-ID-K)");
}

// The Philly replay split into queues (--cluster 2x8,queues=1:3, 16 GPUs so that the
// queues contend): per-queue share over time is recorded; while both queues ask for more
// than their weighted share, the fair share is exactly 4 : 12 GPUs, and over those periods
// the weight-3 queue holds about three times the GPUs of the weight-1 queue. Skipped when
// the shared data set is absent.
TEST(PhillyTest, SplitIntoQueuesSharesGpusByWeight) {
  const std::string path = std::string(PHALANX_SHARED_DATA_DIR) + "/philly/philly_103959.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  PhillyCluster cluster;
  std::string err;
  ASSERT_EQ(ParseClusterSpec("2x8,queues=1:3", &cluster), absl::OkStatus());
  EXPECT_EQ(cluster.queue_weights, (std::vector<double>{1, 3}));
  sim::Scenario sc;
  std::vector<PhillyJob> jobs;
  size_t too_large = 0;
  ASSERT_EQ(LoadPhillyTrace(path, cluster, 300, &sc, &jobs, &too_large), absl::OkStatus());
  sim::SimulationResult r;
  ASSERT_EQ(sim::RunSimulation(sc, DefaultProfile(1), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  ASSERT_EQ(r.queues.size(), 2u);
  EXPECT_EQ(r.queues[0].name, "philly-q0");
  EXPECT_EQ(r.queues[1].name, "philly-q1");
  std::map<double, sim::QueueSample> a, b;  // per queue: time -> sample
  for (const auto& s : r.queue_timeline) (s.queue == "philly-q0" ? a : b)[s.t] = s;
  double t_both = 0, alloc_a = 0, alloc_b = 0;
  const sim::QueueSample *pa = nullptr, *pb = nullptr;
  for (const auto& [t, sa] : a) {
    const sim::QueueSample& sb = b.at(t);
    if (pa && pa->demand >= 4 && pb->demand >= 12) {
      const double dt = t - pa->t;
      t_both += dt;
      alloc_a += dt * pa->allocated;
      alloc_b += dt * pb->allocated;
    }
    if (sa.demand >= 4 && sb.demand >= 12) {
      EXPECT_NEAR(sa.deserved, 4.0, 1e-6) << "t=" << t;
      EXPECT_NEAR(sb.deserved, 12.0, 1e-6) << "t=" << t;
    }
    pa = &sa;
    pb = &sb;
  }
  ASSERT_GT(t_both, 3600.0);  // the split must produce real contention
  const double ratio = alloc_b / alloc_a;
  std::printf(
      "philly 300 jobs on 2x8, queues 1:3: %.1f h contended; GPUs held there %.2f : %.2f "
      "(ratio %.2f); whole-run averages %.2f / %.2f\n",
      t_both / 3600, alloc_a / t_both, alloc_b / t_both, ratio, r.queues[0].allocated_avg,
      r.queues[1].allocated_avg);
  EXPECT_GT(ratio, 2.0);
  EXPECT_LT(ratio, 4.5);
}

TEST(PaperTest, DiscretizeAveragesSamplesPerLoadStep) {
  std::vector<LoadPoint> pts = {
      {0.2, 0.2, 0, 0}, {99.6, 95.0, 50, 5}, {100.4, 96.0, 70, 7}, {102.0, 96.5, 80, 8}};
  LoadCurve c = Discretize(pts, 103);
  EXPECT_DOUBLE_EQ(c.alloc_pct[0], 0.2);
  EXPECT_DOUBLE_EQ(c.alloc_pct[100], 95.5);  // 99.6 and 100.4 round to 100
  EXPECT_DOUBLE_EQ(c.frag_ratio_pct[100], 60);
  EXPECT_NEAR(c.alloc_pct[101], (95.0 + 96.0 + 96.5) / 3, 1e-9);  // none at 101: 100 and 102
  EXPECT_TRUE(std::isnan(c.alloc_pct[50]));
}

// ---- small synthetic traces written as openb / Philly CSVs ----

struct SmallTraces {
  fs::path dir;
  std::string nodes, pods, jobs;
};

SmallTraces MakeSmallTraces() {
  SmallTraces t;
  t.dir = TempDir("small");
  std::string n = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (int i = 0; i < 12; ++i) {
    n += "node-" + std::to_string(i) + ",64000,524288,8," + (i % 2 ? "T4" : "V100M16") + "\n";
  }
  std::string p = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
  const int shares[] = {300, 500, 700, 250, 1000, 1000, 0, 500};
  for (int i = 0; i < 24; ++i) {
    const int m = shares[i % 8];
    const int num = m == 0 ? 0 : (i % 11 == 5 ? 2 : 1);
    p += "pod-" + std::to_string(i) + "," + std::to_string(2000 + 500 * (i % 3)) + ",4096," +
         std::to_string(num) + "," + std::to_string(m) + "," + (i % 7 == 3 ? "T4" : "") + "\n";
  }
  std::string j = "job_id,submit_time,num_gpu,duration\n";
  for (int i = 0; i < 30; ++i) {
    j += std::to_string(i) + "," + std::to_string(i * 120) + "," + std::to_string(1 << (i % 4)) +
         "," + std::to_string(600 + 300 * (i % 5)) + "\n";
  }
  t.nodes = (t.dir / "nodes.csv").string();
  t.pods = (t.dir / "pods.csv").string();
  t.jobs = (t.dir / "jobs.csv").string();
  Write(t.nodes, n);
  Write(t.pods, p);
  Write(t.jobs, j);
  return t;
}

ExperimentOptions Base() {
  ExperimentOptions o;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  return o;
}

TEST(PaperTest, SmallTraceReachesTheTargetLoadAndIsDeterministic) {
  const SmallTraces t = MakeSmallTraces();
  ExperimentOptions o = Base();
  o.trace = "openb-paper";
  o.nodes_csv = t.nodes;
  o.pods_csv = t.pods;
  std::string err;
  ASSERT_EQ(ParsePolicies("fgd,bestfit,random", &o.policies), absl::OkStatus());
  o.seeds = {3, 4};
  nlohmann::json a, b;
  ASSERT_EQ(RunExperiments(o, &a), absl::OkStatus());
  ASSERT_EQ(RunExperiments(o, &b), absl::OkStatus());
  EXPECT_EQ(a["runs"].size(), 6u);
  for (size_t i = 0; i < a["runs"].size(); ++i) {
    const auto& r = a["runs"][i];
    EXPECT_EQ(r["summary"]["invariant_violations"], 0) << r["policy"];
    // Arrivals reach ~130% of the 96 GPUs: the last load step with a sample is >= 125.
    const auto& alloc = r["load_curve"]["alloc_pct"];
    int last = 0;
    for (int s = 0; s < static_cast<int>(alloc.size()); ++s) {
      if (alloc[s].is_number()) last = s;
    }
    EXPECT_GE(last, 125) << r["policy"];
    ASSERT_TRUE(r["unallocated_at_100_pct"].is_number());
    EXPECT_GE(r["unallocated_at_100_pct"].get<double>(), 0);
    EXPECT_LE(r["unallocated_at_100_pct"].get<double>(), 100);
    // Same seed, same outcome.
    EXPECT_EQ(r["load_curve"], b["runs"][i]["load_curve"]) << r["policy"] << " " << r["seed"];
    EXPECT_EQ(r["summary"]["scheduled"], b["runs"][i]["summary"]["scheduled"]);
  }
}

// The "Paper (%)" column shows the paper's figures only for the pod list they
// are of (openb_pod_list_default.csv), "-" for any other list.
// --gpu-model dra: the nodes' GPUs become one ResourceSlice each, with shareable devices of
// compute 1000; GPU pods get a claim from a template per (devices, milli), shares as
// compute requests; nvidia.com/gpu goes from nodes and pods, the annotations stay.
TEST(DraGpusTest, NodesBecomeSlicesAndGpuPodsClaims) {
  const SmallTraces t = MakeSmallTraces();
  sim::Scenario sc;
  ASSERT_EQ(LoadOpenbNodes(t.nodes, &sc.nodes), absl::OkStatus());
  OpenbOptions oo;
  oo.timed = false;
  ASSERT_EQ(LoadOpenbPods(t.pods, oo, &sc.pods), absl::OkStatus());
  // The oracle: the asks read from the pods' annotations before the conversion.
  std::map<std::string, std::string> milli_before;
  std::set<std::pair<std::string, std::string>> asks;  // (gpu-count, gpu-milli)
  for (const auto& tp : sc.pods) {
    const auto& a = tp.pod.metadata.annotations;
    auto m = a.find("alibabacloud.com/gpu-milli");
    if (m == a.end() || m->second == "0") continue;
    milli_before[tp.pod.metadata.name] = m->second;
    auto c = a.find("alibabacloud.com/gpu-count");
    asks.emplace(c == a.end() ? "1" : c->second, m->second);
  }
  DraGpuStats st;
  ASSERT_EQ(ToDraGpus(&sc, &st), absl::OkStatus());
  EXPECT_EQ(st.nodes, 12u);
  EXPECT_EQ(st.devices, 96u);
  // 24 pods, shares {300,500,700,250,1000,1000,0,500}: every 8th has no GPU; 15 ask
  // for less than a whole device (one of them, pod-16, for 2 devices of 300 milli each).
  EXPECT_EQ(st.pods, 21u);
  EXPECT_EQ(st.shares, 15u);
  for (const auto& n : sc.nodes) {
    EXPECT_EQ(n.status.capacity.count("nvidia.com/gpu"), 0u);
    EXPECT_EQ(n.metadata.labels.at("alibabacloud.com/gpu-count"), "8");
  }
  std::map<std::string, int> kinds;
  std::set<std::pair<std::string, std::string>> templates;  // (count, compute request or "")
  for (const auto& o : sc.objects) {
    ++kinds[o.kind];
    if (o.kind != "ResourceClaimTemplate") continue;
    auto tmpl = dra::ParseResourceClaimTemplate(o);
    ASSERT_TRUE(tmpl.ok()) << tmpl.status();
    const YAML::Node req = (*o.object)["spec"]["spec"]["devices"]["requests"][0]["exactly"];
    const std::string compute =
        req["capacity"] ? req["capacity"]["requests"]["compute"].as<std::string>() : "1000";
    templates.emplace(req["count"].as<std::string>(), compute);
  }
  EXPECT_EQ(kinds["DeviceClass"], 1);
  EXPECT_EQ(kinds["ResourceSlice"], 12);
  EXPECT_EQ(templates, asks);
  auto slice = dra::ParseResourceSlice(sc.objects[1]);
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->driver, "gpu.nvidia.com");
  ASSERT_EQ(slice->devices.size(), 8u);
  EXPECT_EQ(slice->devices[7].name, "gpu-7");
  EXPECT_EQ(slice->devices[0].view.attributes.at("productName").string_value, "V100M16");
  EXPECT_TRUE(slice->devices[0].view.allow_multiple_allocations);
  EXPECT_EQ(slice->devices[0].view.capacity.at("compute").MilliValue(), 1000 * 1000);
  int with_claims = 0;
  for (const auto& tp : sc.pods) {
    const auto& c = tp.pod.spec.containers[0];
    EXPECT_EQ(
        c.resources.limits.count("nvidia.com/gpu") + c.resources.requests.count("nvidia.com/gpu"),
        0u);
    if (tp.pod.spec.resource_claims.empty()) continue;
    ++with_claims;
    EXPECT_EQ(c.resource_claims, std::vector<std::string>{"gpu"});
    EXPECT_EQ(tp.pod.metadata.annotations.at("alibabacloud.com/gpu-milli"),
              milli_before.at(tp.pod.metadata.name));
  }
  EXPECT_EQ(with_claims, 21);
}

// The same openb-paper input and seed with GPUs as nvidia.com/gpu (shares accounted by
// GpuShare) and as DRA devices (shares as consumable capacity, the claims allocated on the
// devices GpuShare chose): both runs are clean and deterministic, and they bind the same
// pods with the same load curve. Prints the side-by-side figures.
TEST(DraGpusTest, PaperModeDraAgainstExtendedResourcesSameSeed) {
  const SmallTraces t = MakeSmallTraces();
  std::map<std::string, nlohmann::json> runs;
  for (const std::string model : {"extended", "dra", "dra"}) {
    ExperimentOptions o = Base();
    o.trace = "openb-paper";
    o.nodes_csv = t.nodes;
    o.pods_csv = t.pods;
    o.gpu_model = model;
    ASSERT_EQ(ParsePolicies("fgd,bestfit", &o.policies), absl::OkStatus());
    o.seeds = {3};
    nlohmann::json r;
    ASSERT_EQ(RunExperiments(o, &r), absl::OkStatus());
    ASSERT_EQ(r["runs"].size(), 2u);
    if (runs.count(model)) {  // the second DRA run: same seed, same outcome
      for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(r["runs"][i]["load_curve"], runs[model]["runs"][i]["load_curve"]);
        EXPECT_EQ(r["runs"][i]["summary"]["scheduled"],
                  runs[model]["runs"][i]["summary"]["scheduled"]);
      }
      continue;
    }
    runs[model] = r;
  }
  for (size_t i = 0; i < 2; ++i) {
    const auto& ext = runs["extended"]["runs"][i];
    const auto& dra = runs["dra"]["runs"][i];
    EXPECT_EQ(ext["gpu_model"], "extended");
    EXPECT_EQ(dra["gpu_model"], "dra");
    EXPECT_EQ(dra["summary"]["invariant_violations"], 0);
    EXPECT_EQ(ext["summary"]["invariant_violations"], 0);
    EXPECT_GT(dra["dra"]["shares"].get<int>(), 0);
    EXPECT_EQ(dra["summary"]["scheduled"], ext["summary"]["scheduled"]) << dra["policy"];
    EXPECT_EQ(dra["load_curve"], ext["load_curve"]) << dra["policy"];
    std::printf(
        "%-8s extended: %d bound, unallocated GPU at 100%% load %.2f%%, %.0f pods/s | "
        "dra: %d bound, unallocated %.2f%%, %.0f pods/s\n",
        ext["policy"].get<std::string>().c_str(), ext["summary"]["scheduled"].get<int>(),
        ext["unallocated_at_100_pct"].get<double>(),
        ext["summary"]["pods_per_second"].get<double>(), dra["summary"]["scheduled"].get<int>(),
        dra["unallocated_at_100_pct"].get<double>(),
        dra["summary"]["pods_per_second"].get<double>());
  }
}

TEST(PaperTest, PaperFiguresOnlyForTheDefaultPodList) {
  const SmallTraces t = MakeSmallTraces();
  ExperimentOptions o = Base();
  o.trace = "openb-paper";
  o.nodes_csv = t.nodes;
  ASSERT_EQ(ParsePolicies("fgd", &o.policies), absl::OkStatus());
  auto paper_figure = [&](const std::string& pods_csv) {
    o.pods_csv = pods_csv;
    nlohmann::json r;
    EXPECT_EQ(RunExperiments(o, &r), absl::OkStatus());
    return std::make_pair(r["comparison"]["rows"][0]["metrics"]["paper_unallocated_at_100_pct"],
                          FormatReportSummary(r));
  };
  const auto [other, other_text] = paper_figure(t.pods);
  EXPECT_TRUE(other.is_null()) << other;
  EXPECT_NE(other_text.find("has no figures for this pod list"), std::string::npos) << other_text;
  const std::string as_default = (t.dir / "openb_pod_list_default.csv").string();
  fs::copy_file(t.pods, as_default, fs::copy_options::overwrite_existing);
  const auto [fig, text] = paper_figure(as_default);
  EXPECT_EQ(fig, 4.77);
  EXPECT_NE(text.find("next to the paper's figures"), std::string::npos) << text;
}

// Each policy's margin over FGD is taken per seed (same shuffled trace), and the
// table shows its median and spread. Recomputed here from the runs' own figures.
TEST(PaperTest, MarginOverFgdIsPerSeed) {
  const SmallTraces t = MakeSmallTraces();
  ExperimentOptions o = Base();
  o.trace = "openb-paper";
  o.nodes_csv = t.nodes;
  o.pods_csv = t.pods;
  o.seeds = {1, 2, 3};
  ASSERT_EQ(ParsePolicies("fgd,random", &o.policies), absl::OkStatus());
  nlohmann::json r;
  ASSERT_EQ(RunExperiments(o, &r), absl::OkStatus());
  std::map<uint64_t, double> fgd;
  std::vector<double> diffs;
  for (const auto& run : r["runs"]) {
    if (run["policy"] == "FGD") fgd[run["seed"].get<uint64_t>()] = run["unallocated_at_100_pct"];
  }
  for (const auto& run : r["runs"]) {
    if (run["policy"] != "Random") continue;
    diffs.push_back(run["unallocated_at_100_pct"].get<double>() -
                    fgd.at(run["seed"].get<uint64_t>()));
  }
  ASSERT_EQ(diffs.size(), 3u);
  std::sort(diffs.begin(), diffs.end());
  const auto& rows = r["comparison"]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["metrics"]["vs_fgd_median_pts"], 0.0);
  const auto& m = rows[1]["metrics"];
  EXPECT_NEAR(m["vs_fgd_median_pts"].get<double>(), diffs[1], 0.006);
  EXPECT_NEAR(m["vs_fgd_best_pts"].get<double>(), diffs[0], 0.006);
  EXPECT_NEAR(m["vs_fgd_worst_pts"].get<double>(), diffs[2], 0.006);
  EXPECT_NE(FormatReportSummary(r).find("vs FGD per seed: median [best, worst]"),
            std::string::npos);
}

// Sweeps: an experiment split into shards (--shard i/N) and merged gives the
// document of one run of the whole experiment — the same runs in the same order and the same
// comparison table; only wall-clock figures (replay speed) differ.
nlohmann::json WithoutWallClock(nlohmann::json d) {
  d.erase("replay_pods_per_second");
  for (auto& r : d["runs"]) {
    r["summary"].erase("wall_seconds");
    r["summary"].erase("pods_per_second");
  }
  for (auto& row : d["comparison"]["rows"]) row["metrics"].erase("pods_per_second");
  return d;
}

// An openb-paper experiment on the small traces.
ExperimentOptions SmallPaperExperiment(const SmallTraces& t, const std::string& policies,
                                       std::vector<uint64_t> seeds) {
  ExperimentOptions o = Base();
  o.trace = "openb-paper";
  o.nodes_csv = t.nodes;
  o.pods_csv = t.pods;
  EXPECT_EQ(ParsePolicies(policies, &o.policies), absl::OkStatus());
  o.seeds = std::move(seeds);
  return o;
}

TEST(SweepTest, ShardsMergeIntoTheWholeExperiment) {
  const SmallTraces t = MakeSmallTraces();
  const ExperimentOptions o = SmallPaperExperiment(t, "fgd,bestfit,random", {1, 2, 3, 4});
  nlohmann::json whole;
  ASSERT_EQ(RunExperiments(o, &whole), absl::OkStatus());
  for (size_t n : {1, 3, 5}) {
    std::vector<nlohmann::json> shards;
    std::vector<std::string> names;
    size_t runs = 0;
    for (size_t i = 0; i < n; ++i) {
      ExperimentOptions so = o;
      so.shard_index = i;
      so.shard_count = n;
      nlohmann::json d;
      ASSERT_EQ(RunExperiments(so, &d), absl::OkStatus());
      EXPECT_EQ(d["shard"]["index"], i);
      for (const auto& r : d["runs"]) EXPECT_EQ(r["run_index"].get<size_t>() % n, i);
      runs += d["runs"].size();
      shards.push_back(std::move(d));
      names.push_back("shard-" + std::to_string(i) + ".json");
    }
    EXPECT_EQ(runs, 12u);
    // Any order of the files.
    std::reverse(shards.begin(), shards.end());
    std::reverse(names.begin(), names.end());
    nlohmann::json merged;
    ASSERT_EQ(MergeShardReports(shards, names, &merged), absl::OkStatus()) << n;
    EXPECT_FALSE(merged.contains("shard"));
    EXPECT_EQ(WithoutWallClock(merged), WithoutWallClock(whole)) << n << " shards";
  }
}

TEST(SweepTest, MergeRefusesIncompleteOrMismatchedShards) {
  const SmallTraces t = MakeSmallTraces();
  const ExperimentOptions o = SmallPaperExperiment(t, "fgd,random", {1, 2});
  std::vector<nlohmann::json> d(3);
  for (size_t i = 0; i < 3; ++i) {
    ExperimentOptions so = o;
    so.shard_index = i;
    so.shard_count = 3;
    ASSERT_EQ(RunExperiments(so, &d[i]), absl::OkStatus());
  }
  nlohmann::json out;
  auto msg = [&](std::vector<nlohmann::json> docs) {
    std::vector<std::string> names;
    for (size_t i = 0; i < docs.size(); ++i) names.push_back("s" + std::to_string(i) + ".json");
    return std::string(MergeShardReports(docs, names, &out).message());
  };
  EXPECT_EQ(msg({d[0], d[2]}), "shard 1 of 3 is missing");
  EXPECT_EQ(msg({d[0], d[1], d[1]}), "s2.json: shard 1 is also in s1.json");
  nlohmann::json other = d[1];
  other["seeds"] = {1, 2, 3};
  EXPECT_EQ(msg({d[0], other, d[2]}), "s1.json: seeds differs from s0.json");
  nlohmann::json whole;
  ASSERT_EQ(RunExperiments(o, &whole), absl::OkStatus());
  EXPECT_EQ(msg({whole}), "s0.json: not a shard (written without --shard)");
  size_t i = 0, n = 0;
  EXPECT_EQ(ParseShard("2/6", &i, &n), absl::OkStatus());
  EXPECT_EQ(i, 2u);
  EXPECT_EQ(n, 6u);
  for (const char* bad : {"6/6", "1", "a/2", "-1/3", "1/0", ""}) {
    EXPECT_NE(ParseShard(bad, &i, &n), absl::OkStatus()) << bad;
  }
}

TEST(SweepTest, IndexedJobManifestShape) {
  const std::string y = SweepJobManifest("sweep", "exp", "phalanx:0.1.0", "results", "traces", 6,
                                         {"--trace", "openb-paper", "--seeds", "42-51"});
  const YAML::Node j = YAML::Load(y);
  EXPECT_EQ(j["apiVersion"].as<std::string>(), "batch/v1");
  EXPECT_EQ(j["kind"].as<std::string>(), "Job");
  EXPECT_EQ(j["metadata"]["namespace"].as<std::string>(), "exp");
  EXPECT_EQ(j["spec"]["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(j["spec"]["completions"].as<int>(), 6);
  EXPECT_EQ(j["spec"]["parallelism"].as<int>(), 6);
  const YAML::Node pod = j["spec"]["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"].as<std::string>(), "Never");
  const YAML::Node c = pod["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), "phalanx:0.1.0");
  std::vector<std::string> args;
  for (const auto& a : c["args"]) args.push_back(a.as<std::string>());
  const std::vector<std::string> want = {"simulate",
                                         "--trace",
                                         "openb-paper",
                                         "--seeds",
                                         "42-51",
                                         "--shard",
                                         "$(JOB_COMPLETION_INDEX)/6",
                                         "--json",
                                         "/results/shard-$(JOB_COMPLETION_INDEX).json",
                                         "--no-progress"};
  EXPECT_EQ(args, want);
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>(), "results");
  EXPECT_EQ(pod["volumes"][1]["persistentVolumeClaim"]["claimName"].as<std::string>(), "traces");
  EXPECT_TRUE(pod["volumes"][1]["persistentVolumeClaim"]["readOnly"].as<bool>());
  EXPECT_EQ(c["volumeMounts"][1]["mountPath"].as<std::string>(), "/data");
}

TEST(PaperTest, OpenbSampleWithThePaperMethodology) {
  REQUIRE_SHARED_DATA(kData + "/alibaba-openb/openb_pod_list_default.csv");
  ExperimentOptions o = Base();
  o.trace = "openb-paper";
  o.nodes_csv = kData + "/alibaba-openb/openb_node_list_gpu_node.csv";
  o.pods_csv = kData + "/alibaba-openb/openb_pod_list_default.csv";
  o.paper.max_nodes = 150;  // a sample: the trace is tuned down to 130% of these nodes
  std::string err;
  ASSERT_EQ(ParsePolicies("fgd,random", &o.policies), absl::OkStatus());
  o.seeds = {42};
  nlohmann::json r;
  ASSERT_EQ(RunExperiments(o, &r), absl::OkStatus());
  ASSERT_EQ(r["runs"].size(), 2u);
  for (const auto& run : r["runs"]) {
    EXPECT_EQ(run["summary"]["nodes"], 150);
    EXPECT_EQ(run["summary"]["invariant_violations"], 0);
    EXPECT_GT(run["summary"]["dropped"].get<int>(), 0);  // 130 % cannot all fit
    const double u = run["unallocated_at_100_pct"].get<double>();
    EXPECT_GT(u, 0);
    EXPECT_LT(u, 30);
    const double frag = run["frag_ratio_at_100_pct"].get<double>();
    EXPECT_GT(frag, 0);
    EXPECT_LE(frag, 100);
  }
}

TEST(PhillyTest, WholeTraceReplaysWithGangsAndIsDeterministicPerSeed) {
  REQUIRE_SHARED_DATA(kData + "/philly/philly_103959.csv");
  ExperimentOptions o = Base();
  o.trace = "philly";
  o.jobs_csv = kData + "/philly/philly_103959.csv";
  std::string err;
  ASSERT_EQ(ParseClusterSpec("8x4", &o.cluster), absl::OkStatus());  // 32 GPUs: jobs queue
  o.seeds = {7};
  nlohmann::json a, b;
  ASSERT_EQ(RunExperiments(o, &a), absl::OkStatus());
  ASSERT_EQ(RunExperiments(o, &b), absl::OkStatus());
  const auto& ja = a["runs"][0]["jobs"];
  EXPECT_EQ(ja["count"], 876);
  EXPECT_EQ(ja["started"], 876);  // every job ran to completion
  EXPECT_EQ(a["runs"][0]["summary"]["invariant_violations"], 0);
  EXPECT_GT(ja["makespan_h"].get<double>(), 0);
  EXPECT_GT(ja["mean_queue_delay_min"].get<double>(), 0);  // 32 GPUs are contended
  EXPECT_EQ(ja["start_s"], b["runs"][0]["jobs"]["start_s"]);
  const std::string text = FormatReportSummary(a);
  EXPECT_NE(text.find("Mean JCT (h)"), std::string::npos) << text;
}

// Forecasts at submission on 2 nodes of 8 GPUs: A (job 1, 16 GPUs, t=0, 100 s) takes
// both nodes; B (job 2, 8 GPUs, t=10, 50 s) is forecast for t=100 and starts then; C (job 3, 16
// GPUs, t=20) is forecast for t=100 too (A's end; the forecast does not know that B, ahead in the
// queue, takes a node then) and starts at 150 when B ends: errors 0, 0, 50.
TEST(PhillyTest, ForecastAtSubmissionAgainstSimulatedStarts) {
  auto dir = TempDir("forecast");
  Write(dir / "jobs.csv",
        "job_id,submit_time,num_gpu,duration\n"
        "1,0,16,100\n"
        "2,10,8,50\n"
        "3,20,16,10\n");
  PhillyCluster c;
  c.nodes = 2;
  c.gpus_per_node = 8;
  sim::Scenario sc;
  std::vector<PhillyJob> jobs;
  size_t too_large = 0;
  ASSERT_EQ(LoadPhillyTrace((dir / "jobs.csv").string(), c, 0, &sc, &jobs, &too_large),
            absl::OkStatus());
  ASSERT_EQ(jobs.size(), 3u);
  SubmissionForecasts fc(sc, jobs);
  sim::SimulationOptions so;
  so.config = config::DefaultConfiguration();
  so.registry = plugins::NewInTreeRegistry();
  fc.Install(&so.hooks);
  sim::SimulationResult res;
  ASSERT_EQ(sim::RunSimulation(sc, so, &res), absl::OkStatus());
  const auto outcomes = JobOutcomes(jobs, res);
  std::map<std::string, std::pair<double, double>> by_id;  // id -> (forecast, start)
  for (size_t j = 0; j < jobs.size(); ++j)
    by_id[jobs[j].id] = {fc.forecast_s()[j], outcomes[j].start_s};
  EXPECT_EQ(by_id["1"], std::make_pair(0.0, 0.0));      // A
  EXPECT_EQ(by_id["2"], std::make_pair(100.0, 100.0));  // B
  EXPECT_EQ(by_id["3"], std::make_pair(100.0, 150.0));  // C
  const ForecastAccuracy a = MeasureForecastAccuracy(outcomes, fc.forecast_s());
  EXPECT_EQ(a.forecasts, 3u);
  EXPECT_EQ(a.measured, 3u);
  EXPECT_EQ(a.exact, 2u);
  EXPECT_EQ(a.late, 1u);
  EXPECT_DOUBLE_EQ(a.median_abs_error_s, 0);
  EXPECT_NEAR(a.mean_abs_error_s, 50.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(a.p90_abs_error_s, 50);
  EXPECT_EQ(a.waiting, 2u);  // B and C did not start at submission
  EXPECT_DOUBLE_EQ(a.median_abs_error_waiting_s, 25);
  // Through the experiment: the same figures in the run's JSON.
  ExperimentOptions o = Base();
  o.trace = "philly";
  o.jobs_csv = (dir / "jobs.csv").string();
  o.cluster = c;
  o.forecast_accuracy = true;
  nlohmann::json doc;
  ASSERT_EQ(RunExperiments(o, &doc), absl::OkStatus());
  const auto& f = doc["runs"][0]["jobs"]["forecast_at_submission"];
  EXPECT_EQ(f["measured"], 3);
  EXPECT_EQ(f["late"], 1);
  EXPECT_DOUBLE_EQ(f["mean_abs_error_s"].get<double>(), 16.67);
}

// What a run gives, for the flush-skip differential: every pod's outcome, the summary
// JSON but for wall time and speed, the usage timeline, the last Event of every pod and
// gang object, and the scheduler's counters.
struct RunRecord {
  std::vector<std::string> outcomes;
  std::string summary;
  std::vector<std::string> timeline;
  std::vector<std::string> events;
  std::string stats;
  size_t skipped = 0;
};

RunRecord RunPhilly(const sim::Scenario& sc, bool skip, int64_t reservation_threshold_s,
                    std::optional<double> stop_at_s) {
  sim::SimulationOptions so;
  so.stop_at_s = stop_at_s;
  so.config = config::DefaultConfiguration();
  so.registry = plugins::NewInTreeRegistry();
  so.skip_repeated_flushes = skip;
  if (reservation_threshold_s >= 0) {
    // As `--reservation-threshold`: the GangReservation plugin with that threshold.
    auto& prof = so.config.profiles[0];
    prof.plugins.multi_point.enabled.push_back({"GangReservation", 0});
    YAML::Node args;
    args["reservationThresholdSeconds"] = reservation_threshold_s;
    prof.plugin_config.push_back({"GangReservation", std::make_shared<const YAML::Node>(args)});
  }
  RunRecord rec;
  so.hooks.on_end = [&](scheduler::Scheduler& sched, store::Store& store) {
    const scheduler::SchedulerStats st = sched.stats();
    rec.stats = std::to_string(st.attempts) + " " + std::to_string(st.scheduled) + " " +
                std::to_string(st.unschedulable) + " " + std::to_string(st.errors) + " " +
                std::to_string(st.replayed_podgroup_rejections) + " " +
                std::to_string(st.batched_placements);
    for (const auto& e : store.Events()) {
      rec.events.push_back(e.pod_key + " " + e.reason + " " + std::to_string(e.time) + " " +
                           e.message);
    }
    std::sort(rec.events.begin(), rec.events.end());
  };
  sim::SimulationResult r;
  EXPECT_EQ(sim::RunSimulation(sc, so, &r), absl::OkStatus());
  for (const auto& o : r.outcomes) {
    rec.outcomes.push_back(o.pod + " " + o.node + " " + std::to_string(o.arrival_s) + " " +
                           (o.scheduled_s ? std::to_string(*o.scheduled_s) : "-") + " " +
                           (o.deleted_s ? std::to_string(*o.deleted_s) : "-") + " " +
                           std::to_string(o.attempts) + " " + o.reason);
  }
  nlohmann::json j = nlohmann::json::parse(sim::ResultJson(r));
  j.erase("wall_seconds");
  j.erase("pods_per_second");
  rec.summary = j.dump();
  for (const auto& u : r.timeline) {
    rec.timeline.push_back(std::to_string(u.t) + " " + std::to_string(u.gpus) + " " +
                           std::to_string(u.running) + " " + std::to_string(u.pending));
  }
  rec.skipped = r.flush_steps_skipped;
  return rec;
}

// The flush skip (Scheduler::SkipRepeatedFlushes) against the same runs with every flush
// round run one by one: random Philly-style traces on 4 nodes of 8 GPUs whose large gangs
// wait for hours (so the 5-minute flush moves them back many times between job ends) give
// the same outcome per pod (node, bind time, attempts, last message), summary, usage
// timeline, last Event of every pod (at its time) and counters, also when the run stops
// half-way with gangs still waiting; the skip did skip rounds. With KAI queues (the Queues
// plugin: rejections are not replayed) and with gang reservations nothing is skipped and
// the runs are again the same.
TEST(PhillyTest, SkippedFlushRoundsGiveTheRoundByRoundRun) {
  auto dir = TempDir("flushskip");
  size_t skipped = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    std::string csv = "job_id,submit_time,num_gpu,duration\n";
    int64_t t = 0;
    const int sizes[] = {1, 1, 2, 4, 8, 12, 16, 20, 24, 32};
    for (int j = 0; j < 40; ++j) {
      csv += std::to_string(j) + "," + std::to_string(t) + "," + std::to_string(sizes[rng() % 10]) +
             "," + std::to_string(600 + rng() % 20000) + "\n";
      t += static_cast<int64_t>(rng() % 4000);
    }
    Write(dir / "jobs.csv", csv);
    // The whole trace; stopped half-way (pods still pending then: their last Event is a
    // FailedScheduling of the last round before the stop); with queues; with reservations.
    for (int variant = 0; variant < 4; ++variant) {
      const std::string spec = variant == 2 ? "4x8,queues=1:2" : "4x8";
      const int64_t reserve = variant == 3 ? 3600 : -1;
      const std::optional<double> stop =
          variant == 1 ? std::optional<double>(static_cast<double>(t) / 2) : std::nullopt;
      PhillyCluster c;
      ASSERT_EQ(ParseClusterSpec(spec, &c), absl::OkStatus());
      sim::Scenario sc;
      std::vector<PhillyJob> jobs;
      size_t too_large = 0;
      ASSERT_EQ(LoadPhillyTrace((dir / "jobs.csv").string(), c, 0, &sc, &jobs, &too_large),
                absl::OkStatus());
      const RunRecord one_by_one = RunPhilly(sc, false, reserve, stop);
      const RunRecord skipping = RunPhilly(sc, true, reserve, stop);
      const std::string at = "seed " + std::to_string(seed) + " variant " + std::to_string(variant);
      EXPECT_EQ(one_by_one.skipped, 0u) << at;
      EXPECT_EQ(skipping.outcomes, one_by_one.outcomes) << at;
      EXPECT_EQ(skipping.summary, one_by_one.summary) << at;
      EXPECT_EQ(skipping.timeline, one_by_one.timeline) << at;
      EXPECT_EQ(skipping.events, one_by_one.events) << at;
      EXPECT_EQ(skipping.stats, one_by_one.stats) << at;
      if (variant <= 1) {
        skipped += skipping.skipped;
      } else {
        EXPECT_EQ(skipping.skipped, 0u) << at;
      }
    }
  }
  EXPECT_GT(skipped, 100u);
}

// Gang reservations (GangReservation) on the Philly trace 2869ce, 8x8: off vs on in
// one binary. Large gangs (16+ GPUs) wait far less at p95, utilization does not move, every
// job still runs, and the per-job CSV shows each reserved job starting at its forecast
// (the trace's durations are exact) — docs/performance.md has the full table.
TEST(PhillyTest, ReservationsCutLargeGangQueueingOn2869ce) {
  REQUIRE_SHARED_DATA(kData + "/philly/philly_2869ce.csv");
  ExperimentOptions o = Base();
  o.trace = "philly";
  o.jobs_csv = kData + "/philly/philly_2869ce.csv";
  ASSERT_EQ(ParseClusterSpec("8x8", &o.cluster), absl::OkStatus());
  nlohmann::json off, on;
  ASSERT_EQ(RunExperiments(o, &off), absl::OkStatus());
  for (auto& prof : o.config.profiles) {
    prof.plugins.multi_point.enabled.push_back({"GangReservation", 0});
    prof.plugin_config.push_back({"GangReservation", std::make_shared<const YAML::Node>(YAML::Load(
                                                         "{reservationThresholdSeconds: 600}"))});
  }
  auto dir = TempDir("philly-res");
  o.job_results_path = (dir / "jobs.csv").string();
  ASSERT_EQ(RunExperiments(o, &on), absl::OkStatus());
  const auto& a = off["runs"][0];
  const auto& b = on["runs"][0];
  EXPECT_EQ(b["jobs"]["started"], b["jobs"]["count"]);
  EXPECT_EQ(b["summary"]["invariant_violations"], 0);
  const double before = a["jobs"]["p95_queue_delay_16plus_min"].get<double>();
  const double after = b["jobs"]["p95_queue_delay_16plus_min"].get<double>();
  EXPECT_LE(after * 5, before) << before << " -> " << after;
  EXPECT_NEAR(b["jobs"]["gpu_util_avg_pct"].get<double>(),
              a["jobs"]["gpu_util_avg_pct"].get<double>(), 5);
  EXPECT_EQ(a["summary"]["reservations"]["made"], 0);
  const int64_t made = b["summary"]["reservations"]["made"].get<int64_t>();
  EXPECT_GT(made, 0);
  std::ifstream in(o.job_results_path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            "job_id,submit_s,start_s,end_s,gpus,queue_s,reserved_s,forecast_start_s,restarts");
  int64_t reserved = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) f.push_back(c);
    if (f.size() < 8 || f[6].empty()) continue;
    ++reserved;
    EXPECT_EQ(std::stod(f[2]), std::stod(f[7])) << line;  // started at its forecast
    EXPECT_GT(std::stoi(f[4]), 8) << line;                // minMembers 2: multi-node gangs only
  }
  EXPECT_EQ(reserved, made);  // one reservation per job here (none expired)
}

// Starvation eviction (GangReservation preemptAfterSeconds) on b436b2, 31x8, where
// reservations alone cannot help (the reserved nodes hold other large gangs and long
// single-pod jobs): off vs threshold + eviction in one binary. 16+ GPU p95 at least 5x lower,
// evicted jobs restart and every job completes, the lost GPU time is counted, and the
// useful utilization (allocation minus lost work) is the same as without eviction.
TEST(PhillyTest, StarvationEvictionCutsLargeGangQueueingOnB436b2) {
  REQUIRE_SHARED_DATA(kData + "/philly/philly_b436b2.csv");
  ExperimentOptions o = Base();
  o.trace = "philly";
  o.jobs_csv = kData + "/philly/philly_b436b2.csv";
  ASSERT_EQ(ParseClusterSpec("31x8", &o.cluster), absl::OkStatus());
  nlohmann::json off, on;
  ASSERT_EQ(RunExperiments(o, &off), absl::OkStatus());
  for (auto& prof : o.config.profiles) {
    prof.plugins.multi_point.enabled.push_back({"GangReservation", 0});
    prof.plugin_config.push_back(
        {"GangReservation", std::make_shared<const YAML::Node>(YAML::Load(
                                "{reservationThresholdSeconds: 600, preemptAfterSeconds: 600}"))});
  }
  ASSERT_EQ(RunExperiments(o, &on), absl::OkStatus());
  const auto& a = off["runs"][0];
  const auto& b = on["runs"][0];
  EXPECT_EQ(b["jobs"]["started"], b["jobs"]["count"]);
  EXPECT_EQ(b["summary"]["invariant_violations"], 0);
  const double before = a["jobs"]["p95_queue_delay_16plus_min"].get<double>();
  const double after = b["jobs"]["p95_queue_delay_16plus_min"].get<double>();
  EXPECT_LE(after * 5, before) << before << " -> " << after;
  const int64_t restarts = b["jobs"]["restarts"].get<int64_t>();
  EXPECT_GT(restarts, 0);
  EXPECT_EQ(b["summary"]["reservations"]["evicted_pods"].get<int64_t>(), restarts);
  EXPECT_GT(b["jobs"]["lost_gpu_hours"].get<double>(), 0);
  EXPECT_EQ(a["jobs"]["restarts"], 0);
  EXPECT_NEAR(b["jobs"]["gpu_util_useful_pct"].get<double>(),
              a["jobs"]["gpu_util_avg_pct"].get<double>(), 0.1);
  EXPECT_NEAR(b["jobs"]["gpu_util_avg_pct"].get<double>(),
              a["jobs"]["gpu_util_avg_pct"].get<double>(), 5);
  EXPECT_GT(b["jobs"]["gpu_util_avg_pct"].get<double>(),
            b["jobs"]["gpu_util_useful_pct"].get<double>());
}

TEST(PhillyTest, TiresiasGangsSpanNodesAndStartTogether) {
  REQUIRE_SHARED_DATA(kData + "/philly/tiresias_60_job.csv");
  PhillyCluster c;
  std::string err;
  ASSERT_EQ(ParseClusterSpec("4x4", &c), absl::OkStatus());
  sim::Scenario sc;
  std::vector<PhillyJob> jobs;
  size_t too_large = 0;
  ASSERT_EQ(LoadPhillyTrace(kData + "/philly/tiresias_60_job.csv", c, 0, &sc, &jobs, &too_large),
            absl::OkStatus());
  ASSERT_EQ(jobs.size(), 60u);
  sim::SimulationOptions so;
  so.seed = 5;
  so.config = config::DefaultConfiguration();
  so.registry = plugins::NewInTreeRegistry();
  sim::SimulationResult r;
  ASSERT_EQ(sim::RunSimulation(sc, so, &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  size_t multi = 0;
  for (const auto& j : jobs) {
    if (j.pods.size() < 2) continue;
    ++multi;
    std::set<double> starts;
    for (size_t p : j.pods) {
      ASSERT_TRUE(r.outcomes[p].scheduled_s.has_value()) << r.outcomes[p].pod;
      starts.insert(*r.outcomes[p].scheduled_s);
    }
    EXPECT_EQ(starts.size(), 1u) << "gang job-" << j.id << " started piecewise";
  }
  EXPECT_GT(multi, 0u);  // the 8-GPU jobs are 2 pods on 4-GPU nodes
}

// ---- the HTML report in a real browser ----

std::string FindChromium() {
  if (const char* c = std::getenv("PHALANX_CHROMIUM")) return c;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    for (const char* dir : {"/usr/bin/", "/usr/local/bin/", "/snap/bin/"}) {
      const std::string p = std::string(dir) + name;
      if (fs::exists(p)) return p;
    }
  }
  return "";
}

// Renders `html` in headless chromium and returns the DOM after the scripts ran.
std::string DumpDom(const std::string& chromium, const fs::path& html, const fs::path& profile) {
  const std::string cmd = "timeout 120 " + chromium +
                          " --headless --no-sandbox --disable-gpu --disable-background-networking"
                          " --disable-component-update --disable-sync --no-first-run"
                          " --user-data-dir=" +
                          profile.string() + " --dump-dom file://" + fs::absolute(html).string() +
                          " 2>/dev/null";
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> f(popen(cmd.c_str(), "r"), pclose);
  if (!f) return out;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f.get())) > 0) out.append(buf.data(), n);
  return out;
}

std::string Fmt2(const nlohmann::json& v) {
  if (!v.is_number()) return "\u2013";
  char b[32];
  std::snprintf(b, sizeof(b), "%.2f", v.get<double>());
  return b;
}

// Checks a rendered report against its results document.
void CheckDom(const std::string& dom, const nlohmann::json& r,
              const std::vector<std::string>& charts) {
  ASSERT_FALSE(dom.empty()) << "chromium produced no DOM";
  EXPECT_NE(dom.find("data-rendered=\"ok\""), std::string::npos)
      << "the report script did not finish";
  EXPECT_EQ(dom.find("data-render-error=\""), std::string::npos);
  for (const auto& id : charts) {
    const std::regex svg("<svg class=\"chart\" id=\"" + id + "\"[^>]*>([\\s\\S]*?)</svg>");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(dom, m, svg)) << "chart " << id << " missing";
    if (id == "chart-compare") continue;
    // Every policy has a drawn series with points.
    for (const auto& p : r["policies"]) {
      const std::regex path("<path class=\"series\"[^>]*data-policy=\"" + p.get<std::string>() +
                            "\" data-points=\"([0-9]+)\"");
      std::smatch pm;
      const std::string body = m[1].str();
      ASSERT_TRUE(std::regex_search(body, pm, path)) << id << " has no series for " << p;
      EXPECT_GT(std::stoi(pm[1].str()), 0) << id << " " << p;
    }
  }
  // The comparison: bars and table cells carry exactly the results' numbers.
  const auto& cmp = r["comparison"];
  const std::string head = cmp["columns"][0]["key"];
  for (const auto& row : cmp["rows"]) {
    const std::string policy = row["policy"];
    const std::string want_head = Fmt2(row["metrics"][head]);
    ASSERT_TRUE(row["metrics"][head].is_number()) << policy << " " << head;
    const std::regex bar("<rect class=\"bar\"[^>]*data-policy=\"" + policy +
                         "\" data-value=\"([^\"]*)\"");
    std::smatch bm;
    ASSERT_TRUE(std::regex_search(dom, bm, bar)) << "no bar for " << policy;
    EXPECT_EQ(bm[1].str(), want_head) << policy;
    const std::regex tr("<tr data-policy=\"" + policy + "\">([\\s\\S]*?)</tr>");
    std::smatch tm;
    ASSERT_TRUE(std::regex_search(dom, tm, tr)) << "no table row for " << policy;
    const std::string cells = tm[1].str();
    for (const auto& col : cmp["columns"]) {
      const std::string key = col["key"];
      const std::regex td("<td data-key=\"" + key + "\"[^>]*>([^<]*)</td>");
      std::smatch dm;
      ASSERT_TRUE(std::regex_search(cells, dm, td)) << policy << " " << key;
      EXPECT_EQ(dm[1].str(), Fmt2(row["metrics"][key])) << policy << " " << key;
    }
  }
}

// The philly report's queueing delay by gang size: for every policy and every GPU-size
// bucket of its run (jobs.queue_delay_by_gpus; one seed, so the median is that run's), a
// bar with the bucket's p95 and a tick with its mean, in minutes, and nothing else.
void CheckDelayByGpus(const std::string& dom, const nlohmann::json& r) {
  const std::regex svg("<svg class=\"chart\" id=\"chart-delay-by-gpus\"[^>]*>([\\s\\S]*?)</svg>");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, svg)) << "chart chart-delay-by-gpus missing";
  const std::string body = m[1].str();
  size_t want_bars = 0;
  for (const auto& run : r["runs"]) {
    const std::string policy = run["policy"];
    ASSERT_TRUE(run["jobs"]["queue_delay_by_gpus"].is_array()) << policy;
    for (const auto& b : run["jobs"]["queue_delay_by_gpus"]) {
      const std::string g = b["gpus"];
      ++want_bars;
      const std::regex bar("<rect class=\"gbar\"[^>]*data-policy=\"" + policy + "\" data-group=\"" +
                           g + "\" data-value=\"([^\"]*)\"");
      std::smatch bm;
      ASSERT_TRUE(std::regex_search(body, bm, bar)) << "no bar for " << policy << " " << g;
      EXPECT_EQ(bm[1].str(), Fmt2(b["p95_queue_delay_min"])) << policy << " " << g;
      const std::regex mark("<line class=\"gmark\"[^>]*data-policy=\"" + policy +
                            "\" data-group=\"" + g + "\" data-value=\"([^\"]*)\"");
      std::smatch mm;
      ASSERT_TRUE(std::regex_search(body, mm, mark)) << "no mean tick for " << policy << " " << g;
      EXPECT_EQ(mm[1].str(), Fmt2(b["mean_queue_delay_min"])) << policy << " " << g;
    }
  }
  const std::regex any_bar("<rect class=\"gbar\"");
  const auto bars = std::distance(std::sregex_iterator(body.begin(), body.end(), any_bar),
                                  std::sregex_iterator());
  EXPECT_EQ(static_cast<size_t>(bars), want_bars);
}

TEST(ReportBrowserTest, ChartsExistAndShowTheJsonNumbers) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true")
      FAIL() << "chromium not found in CI (scripts/install-deps.sh)";
    GTEST_SKIP() << "needs chromium (scripts/install-deps.sh installs it)";
  }
  const SmallTraces t = MakeSmallTraces();
  std::string err;
  // openb-paper: allocation/unallocated/fragmentation against load, two policies, two seeds.
  ExperimentOptions o = Base();
  o.trace = "openb-paper";
  o.nodes_csv = t.nodes;
  o.pods_csv = t.pods;
  ASSERT_EQ(ParsePolicies("fgd,bestfit,lookahead", &o.policies), absl::OkStatus());
  o.seeds = {1, 2};
  nlohmann::json paper;
  ASSERT_EQ(RunExperiments(o, &paper), absl::OkStatus());
  const fs::path html = t.dir / "paper.html";
  Write(html.string(), RenderHtmlReport(paper));
  // The page is self-contained: no network references.
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(page.find("https://"), std::string::npos);
  CheckDom(DumpDom(chromium, html, t.dir / "profile"), paper,
           {"chart-alloc", "chart-unalloc", "chart-frag", "chart-delay-cdf", "chart-compare"});

  // philly: allocation over time, queueing-delay CDF of jobs, comparison of three policies.
  ExperimentOptions p = Base();
  p.trace = "philly";
  p.jobs_csv = t.jobs;
  ASSERT_EQ(ParseClusterSpec("6x4", &p.cluster), absl::OkStatus());
  ASSERT_EQ(ParsePolicies("default,fgd,random", &p.policies), absl::OkStatus());
  nlohmann::json philly;
  ASSERT_EQ(RunExperiments(p, &philly), absl::OkStatus());
  const fs::path html2 = t.dir / "philly.html";
  Write(html2.string(), RenderHtmlReport(philly));
  const std::string dom2 = DumpDom(chromium, html2, t.dir / "profile");
  CheckDom(dom2, philly, {"chart-alloc", "chart-frag", "chart-delay-cdf", "chart-compare"});
  // Jobs of 1, 2, 4 and 8 GPUs: three size buckets, each with a bar per policy.
  ASSERT_EQ(philly["runs"][0]["jobs"]["queue_delay_by_gpus"].size(), 3u);
  CheckDelayByGpus(dom2, philly);
  // openb-paper has no jobs: no such chart.
  EXPECT_EQ(DumpDom(chromium, html, t.dir / "profile").find("id=\"chart-delay-by-gpus\""),
            std::string::npos);
}

// --compare: the default profile and an FGD profile from files on the same openb
// input; one report whose side-by-side table has one column per configuration holding the
// document's figures, and their difference.
TEST(ReportBrowserTest, CompareShowsConfigurationsSideBySide) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true")
      FAIL() << "chromium not found in CI (scripts/install-deps.sh)";
    GTEST_SKIP() << "needs chromium (scripts/install-deps.sh installs it)";
  }
  const SmallTraces t = MakeSmallTraces();
  ExperimentOptions o = Base();
  o.trace = "openb";
  o.untimed = true;  // all at t=0, on 3 of the 12 nodes: the cluster is contended
  const std::string nodes = (t.dir / "nodes-3.csv").string();
  Write(nodes,
        "sn,cpu_milli,memory_mib,gpu,model\nnode-0,64000,524288,8,V100M16\n"
        "node-1,64000,524288,8,T4\nnode-2,16000,524288,8,V100M16\n");
  o.nodes_csv = nodes;
  o.pods_csv = t.pods;
  PolicySpec fgd = *LookupPolicy("fgd");
  ExperimentOptions::CompareConfig a, b;
  a.name = "default";
  a.source = "default.yaml";
  a.config = config::DefaultConfiguration();
  b.name = "fgd";
  b.source = "fgd.yaml";
  ASSERT_EQ(PolicyConfiguration(fgd, false, &b.config), absl::OkStatus());
  o.compare = {a, b};
  nlohmann::json doc;
  ASSERT_EQ(RunExperiments(o, &doc), absl::OkStatus());
  ASSERT_EQ(doc["compare"].size(), 2u);
  EXPECT_EQ(doc["policies"], nlohmann::json({"default", "fgd"}));
  const fs::path html = t.dir / "compare.html";
  Write(html.string(), RenderHtmlReport(doc));
  const std::string dom = DumpDom(chromium, html, t.dir / "profile-compare");
  CheckDom(dom, doc, {"chart-delay-cdf", "chart-compare"});
  const std::regex table("<table id=\"side-by-side\">([\\s\\S]*?)</table>");
  std::smatch tm;
  ASSERT_TRUE(std::regex_search(dom, tm, table)) << "no side-by-side table";
  const std::string body = tm[1].str();
  EXPECT_NE(body.find("data-config=\"default\""), std::string::npos);
  EXPECT_NE(body.find("data-config=\"fgd\""), std::string::npos);
  const auto& cmp = doc["comparison"];
  ASSERT_EQ(cmp["rows"].size(), 2u);
  for (const auto& col : cmp["columns"]) {
    const std::string key = col["key"];
    const std::regex tr("<tr data-key=\"" + key + "\">([\\s\\S]*?)</tr>");
    std::smatch rm;
    ASSERT_TRUE(std::regex_search(body, rm, tr)) << "no row for " << key;
    const std::string cells = rm[1].str();
    std::vector<double> vals;
    for (const auto& row : cmp["rows"]) {
      const std::string name = row["policy"];
      const std::regex td("<td data-config=\"" + name + "\"[^>]*>([^<]*)</td>");
      std::smatch dm;
      ASSERT_TRUE(std::regex_search(cells, dm, td)) << key << " " << name;
      EXPECT_EQ(dm[1].str(), Fmt2(row["metrics"][key])) << key << " " << name;
      vals.push_back(row["metrics"][key].is_number() ? row["metrics"][key].get<double>() : NAN);
    }
    const std::regex diff("<td data-diff=\"1\">([^<]*)</td>");
    std::smatch xm;
    ASSERT_TRUE(std::regex_search(cells, xm, diff)) << key;
    if (std::isfinite(vals[0]) && std::isfinite(vals[1])) {
      EXPECT_EQ(xm[1].str(), Fmt2(vals[1] - vals[0])) << key;
    }
  }
  // The policies differ on this contended input in what they placed, not only in speed.
  nlohmann::json m0 = cmp["rows"][0]["metrics"], m1 = cmp["rows"][1]["metrics"];
  for (auto* m : {&m0, &m1}) m->erase("pods_per_second");
  EXPECT_NE(m0, m1) << m0.dump() << " " << m1.dump();
}

}  // namespace
}  // namespace phalanx::replay
