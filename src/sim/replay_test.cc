// Trace replay modes and the HTML report: parsing helpers, the Philly gang loader, the
// paper methodology on small samples, determinism, and the report checked in a real
// headless browser (Debian's chromium) against the JSON results.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/experiment.h"
#include "sim/paper.h"
#include "sim/philly.h"
#include "sim/report.h"
#include "sim/scenario.h"

namespace phalanx::sim {
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
  ASSERT_TRUE(ParseSeeds("42-45,7", &seeds, &err)) << err;
  EXPECT_EQ(seeds, (std::vector<uint64_t>{42, 43, 44, 45, 7}));
  seeds.clear();
  EXPECT_FALSE(ParseSeeds("9-3", &seeds, &err));
  EXPECT_NE(err.find("\"9-3\""), std::string::npos) << err;
  std::vector<PolicySpec> p;
  ASSERT_TRUE(ParsePolicies("fgd, BestFit,dotprod,packing,clustering,random,default", &p, &err));
  ASSERT_EQ(p.size(), 7u);
  EXPECT_EQ(p[0].score_plugin, "FGDScore");
  EXPECT_EQ(p[1].display, "BestFit");
  EXPECT_EQ(p[2].score_plugin, "DotProductScore");
  EXPECT_EQ(p[6].score_plugin, "");
  p.clear();
  EXPECT_FALSE(ParsePolicies("fgd,tetris", &p, &err));
  EXPECT_NE(err.find("unknown policy \"tetris\""), std::string::npos) << err;
  PhillyCluster c;
  ASSERT_TRUE(ParseClusterSpec("16x4", &c, &err));
  EXPECT_EQ(c.nodes, 16);
  EXPECT_EQ(c.gpus_per_node, 4);
  EXPECT_FALSE(ParseClusterSpec("16", &c, &err));
  EXPECT_EQ(err, "--cluster: want NODESxGPUS (e.g. 32x8), got \"16\"");
  EXPECT_EQ(PaperUnallocatedAt100("FGD"), 4.77);
  EXPECT_FALSE(PaperUnallocatedAt100("Default").has_value());
}

TEST(ReplayParseTest, PolicyProfilesDisableTheDefaultScorers) {
  config::KubeSchedulerConfiguration cfg;
  std::string err;
  ASSERT_TRUE(PolicyConfiguration(*LookupPolicy("fgd"), true, &cfg, &err)) << err;
  ASSERT_EQ(cfg.profiles.size(), 1u);
  const auto& pl = cfg.profiles[0].plugins;
  ASSERT_EQ(pl.score.enabled.size(), 1u);
  EXPECT_EQ(pl.score.enabled[0].name, "FGDScore");
  ASSERT_EQ(pl.score.disabled.size(), 1u);
  EXPECT_EQ(pl.score.disabled[0].name, "*");
  EXPECT_EQ(pl.filter.enabled[0].name, "GpuShare");
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
    std::vector<TimedPod> pods;
    std::string err;
    OpenbOptions oo;
    oo.gpu_sharing = sharing;
    ASSERT_TRUE(LoadOpenbPods((dir / "pods.csv").string(), oo, &pods, &err)) << err;
    ASSERT_EQ(pods.size(), 3u);
    const auto& share = pods[0].pod.spec.containers[0].resources.requests;
    const auto& whole = pods[1].pod.spec.containers[0].resources.requests;
    EXPECT_EQ(share.count("nvidia.com/gpu"), sharing ? 0u : 1u);
    EXPECT_EQ(whole.at("nvidia.com/gpu").Value(), 2);
    EXPECT_EQ(pods[0].pod.metadata.annotations.at("alibabacloud.com/gpu-milli"), "500");
  }
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
  Scenario sc;
  std::vector<PhillyJob> jobs;
  size_t too_large = 0;
  std::string err;
  ASSERT_TRUE(LoadPhillyTrace((dir / "jobs.csv").string(), c, 0, &sc, &jobs, &too_large, &err))
      << err;
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
    sizes.insert(p.spec.containers[0].resources.requests.at("nvidia.com/gpu").Value());
  }
  EXPECT_EQ(sizes, (std::multiset<int64_t>{2, 4, 4}));
  Write(dir / "bad.csv", "job_id,num_gpu,submit_time,duration\n0,two,5,100\n");
  EXPECT_FALSE(LoadPhillyTrace((dir / "bad.csv").string(), c, 0, &sc, &jobs, &too_large, &err));
  EXPECT_EQ(err, (dir / "bad.csv").string() + ":2: column num_gpu: invalid value \"two\"");
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
  ASSERT_TRUE(ParsePolicies("fgd,bestfit,random", &o.policies, &err));
  o.seeds = {3, 4};
  nlohmann::json a, b;
  ASSERT_TRUE(RunExperiments(o, &a, &err)) << err;
  ASSERT_TRUE(RunExperiments(o, &b, &err)) << err;
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

TEST(PaperTest, OpenbSampleWithThePaperMethodology) {
  REQUIRE_SHARED_DATA(kData + "/alibaba-openb/openb_pod_list_default.csv");
  ExperimentOptions o = Base();
  o.trace = "openb-paper";
  o.nodes_csv = kData + "/alibaba-openb/openb_node_list_gpu_node.csv";
  o.pods_csv = kData + "/alibaba-openb/openb_pod_list_default.csv";
  o.paper.max_nodes = 150;  // a sample: the trace is tuned down to 130% of these nodes
  std::string err;
  ASSERT_TRUE(ParsePolicies("fgd,random", &o.policies, &err));
  o.seeds = {42};
  nlohmann::json r;
  ASSERT_TRUE(RunExperiments(o, &r, &err)) << err;
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
  ASSERT_TRUE(ParseClusterSpec("8x4", &o.cluster, &err));  // 32 GPUs: jobs queue
  o.seeds = {7};
  nlohmann::json a, b;
  ASSERT_TRUE(RunExperiments(o, &a, &err)) << err;
  ASSERT_TRUE(RunExperiments(o, &b, &err)) << err;
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

TEST(PhillyTest, TiresiasGangsSpanNodesAndStartTogether) {
  REQUIRE_SHARED_DATA(kData + "/philly/tiresias_60_job.csv");
  PhillyCluster c;
  std::string err;
  ASSERT_TRUE(ParseClusterSpec("4x4", &c, &err));
  Scenario sc;
  std::vector<PhillyJob> jobs;
  size_t too_large = 0;
  ASSERT_TRUE(
      LoadPhillyTrace(kData + "/philly/tiresias_60_job.csv", c, 0, &sc, &jobs, &too_large, &err))
      << err;
  ASSERT_EQ(jobs.size(), 60u);
  SimulationOptions so;
  so.seed = 5;
  so.config = config::DefaultConfiguration();
  so.registry = plugins::NewInTreeRegistry();
  SimulationResult r;
  ASSERT_TRUE(RunSimulation(sc, so, &r, &err)) << err;
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
  ASSERT_TRUE(ParsePolicies("fgd,bestfit", &o.policies, &err));
  o.seeds = {1, 2};
  nlohmann::json paper;
  ASSERT_TRUE(RunExperiments(o, &paper, &err)) << err;
  const fs::path html = t.dir / "paper.html";
  ASSERT_TRUE(WriteTextFile(html.string(), RenderHtmlReport(paper), &err)) << err;
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
  ASSERT_TRUE(ParseClusterSpec("6x4", &p.cluster, &err));
  ASSERT_TRUE(ParsePolicies("default,fgd,random", &p.policies, &err));
  nlohmann::json philly;
  ASSERT_TRUE(RunExperiments(p, &philly, &err)) << err;
  const fs::path html2 = t.dir / "philly.html";
  ASSERT_TRUE(WriteTextFile(html2.string(), RenderHtmlReport(philly), &err)) << err;
  CheckDom(DumpDom(chromium, html2, t.dir / "profile"), philly,
           {"chart-alloc", "chart-frag", "chart-delay-cdf", "chart-compare"});
}

}  // namespace
}  // namespace phalanx::sim
