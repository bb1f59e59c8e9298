// The phalanx command line (see app.h):
//   phalanx simulate SCENARIO [--config sched.yaml] [--seed N] [--results out.jsonl]
//   phalanx simulate --trace openb --nodes NODES.csv --pods PODS.csv [...]
//   phalanx simulate --trace openb-paper|philly ... --policies fgd,bestfit --seeds 42-51
//       --report out.html [--json results.json]
//   phalanx bench [--nodes 5000 --init-pods 1000 --pods 10000]
//   phalanx bench WORKLOAD.yaml [--workload CASE[/WORKLOAD]] [--label L] [--config F] [--json F]
//   phalanx run --config sched.yaml [--kubeconfig F] [--context C] [--bind-address A]
//   phalanx load create|bind|watch --kubeconfig F [...]   (live_load.h)
//   phalanx version
#include "app/app.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <pthread.h>
#include <unistd.h>
#include <string_view>
#include <utility>

#include "app/live_load.h"
#include "app/run_live.h"
#include "config/config.h"
#include "plugins/registry.h"
#include "sim/bench.h"
#include "sim/perf_runner.h"
#include "sim/experiment.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::app {

namespace {

constexpr const char* kVersion = "0.1.0";

int Fail(const std::string& msg) {
  std::fprintf(stderr, "phalanx: error: %s\n", msg.c_str());
  return 1;
}

bool LoadConfig(const std::string& path, config::KubeSchedulerConfiguration* cfg,
                std::string* err) {
  if (path.empty()) {
    *cfg = config::DefaultConfiguration();
    return true;
  }
  return api::MoveOrMessage(config::LoadConfiguration(path), cfg, err);
}

}  // namespace

Option WithPlugin(std::string name, framework::PluginFactory factory) {
  Option o;
  o.apply = [name = std::move(name),
             factory = std::move(factory)](framework::Registry& r) -> framework::Status {
    if (name.empty()) return framework::Status::Error("out-of-tree plugin with an empty name");
    if (!factory) {
      return framework::Status::Error("out-of-tree plugin " + name + ": no factory");
    }
    framework::Status s = r.Register(name, factory);
    if (!s.IsSuccess()) {
      return framework::Status::Error("out-of-tree plugin " + name + ": " + s.Message());
    }
    return s;
  };
  return o;
}

framework::StatusOr<framework::Registry> NewRegistry(const std::vector<Option>& options) {
  framework::Registry r = plugins::NewInTreeRegistry();
  for (const auto& o : options) {
    if (!o.apply) continue;
    framework::Status s = o.apply(r);
    if (!s.IsSuccess()) return s;
  }
  return r;
}

int Run(int argc, char** argv, std::vector<Option> options) {
  // `phalanx run` handles SIGTERM / SIGINT on its own thread (run_live.cc); block them from
  // the first instruction so that a SIGTERM arriving while the config and kubeconfig are
  // still being read is not fatal but waits for that thread and shuts down cleanly (exit 0).
  if (argc > 1 && std::string_view(argv[1]) == "run") {
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  }
  CLI::App app{"Phalanx: a Kubernetes scheduler with all-or-nothing gang scheduling"};
  app.require_subcommand(1);

  // ---- simulate ----
  auto* sim_cmd = app.add_subcommand("simulate", "Replay manifests or a trace on a virtual clock");
  std::string scenario_path, config_path, trace, nodes_csv, pods_csv, results_path, json_path;
  uint64_t seed = 1;
  size_t max_pods = 0;
  bool untimed = false, progress = false, no_progress = false;
  sim_cmd->add_option("scenario", scenario_path, "Manifest file or directory (Nodes, Pods, workloads)");
  sim_cmd->add_option("--config", config_path, "KubeSchedulerConfiguration file");
  sim_cmd->add_option("--trace", trace,
                      "Trace instead of manifests: openb (arrivals and departures), openb-paper "
                      "(the FGD paper's methodology), philly (jobs as gangs)")
      ->check(CLI::IsMember({"openb", "openb-paper", "philly"}));
  sim_cmd->add_option("--nodes", nodes_csv, "openb node list CSV");
  sim_cmd->add_option("--pods", pods_csv, "openb pod list CSV");
  sim_cmd->add_flag("--untimed", untimed, "openb: all pods at t=0, no departures");
  sim_cmd->add_option("--max-pods", max_pods, "openb: use only the first N pods");
  sim_cmd->add_option("--seed", seed, "Seed for tie-breaking (same seed, same placements)");
  sim_cmd->add_option("--results", results_path, "Write one JSON line per pod to this file");
  sim_cmd->add_option("--json", json_path, "Write the summary as JSON to this file");
  sim_cmd->add_flag("--progress", progress, "Show a progress bar (default when stderr is a terminal)");
  sim_cmd->add_flag("--no-progress", no_progress, "Never show a progress bar");
  // Trace replay experiments (src/sim/experiment.h): policies x seeds, HTML report.
  std::string policies_arg, seeds_arg, report_path, cluster_arg = "32x8", jobs_csv;
  bool gpu_sharing = false;
  sim::PaperOptions paper_opts;
  sim_cmd->add_option("--policies", policies_arg,
                      "GPU placement policies to compare, e.g. fgd,bestfit,random (also "
                      "dotproduct, packing, clustering, default)");
  sim_cmd->add_option("--seeds", seeds_arg, "Seeds to run, e.g. 42-51 or 1,2,3 (overrides --seed)");
  sim_cmd->add_option("--report", report_path, "Write a self-contained HTML report to this file");
  sim_cmd->add_option("--cluster", cluster_arg, "philly: NODESxGPUS, e.g. 32x8");
  sim_cmd->add_option("--jobs", jobs_csv, "philly: job CSV (job_id,submit_time,num_gpu,duration)");
  sim_cmd->add_flag("--gpu-sharing", gpu_sharing,
                    "openb: GPU shares carry no nvidia.com/gpu request (GpuShare accounts per device)");
  sim_cmd->add_option("--load", paper_opts.target_load,
                      "openb-paper: resample arrivals up to this multiple of GPU capacity");
  sim_cmd->add_option("--max-nodes", paper_opts.max_nodes, "openb-paper: use only the first N GPU nodes");

  // ---- bench ----
  auto* bench_cmd = app.add_subcommand(
      "bench", "In-process scheduling throughput: scheduler_perf workload files, or the "
               "SchedulingBasic shape (--nodes/--init-pods/--pods)");
  bench::BasicOptions bo;
  bench::PerfOptions po;
  bench_cmd->add_option("workload", po.workload_file,
                        "scheduler_perf workload file (e.g. upstream's performance-config.yaml)");
  bench_cmd->add_option("--workload", po.workload_selector,
                        "Run only this test case or CASE/WORKLOAD (with a workload file)");
  bench_cmd->add_option("--label", po.label_filter,
                        "Label filter as upstream's -perf-scheduling-label-filter: x,+y,-z");
  bench_cmd->add_option("--throughput-window-ms", po.throughput_window_ms,
                        "Throughput sampling window (default: run time / 50, 1..1000 ms)");
  bench_cmd->add_option("--nodes", bo.nodes, "Nodes");
  bench_cmd->add_option("--init-pods", bo.init_pods, "Pods bound before measuring");
  bench_cmd->add_option("--pods", bo.measured_pods, "Measured pods");
  bench_cmd->add_option("--binding-workers", bo.binding_workers, "Binding pool size (0 = inline)");
  bench_cmd->add_option("--gangs", bo.gangs,
                        "Gang workload: number of PodGroups (minMember = --gang-size)");
  bench_cmd->add_option("--gang-size", bo.gang_size, "Gang workload: pods per PodGroup");
  bench_cmd->add_option("--parallelism", bo.parallelism, "Filter/Score parallelism");
  bench_cmd->add_option("--config", bo.config_path, "KubeSchedulerConfiguration file");
  bench_cmd->add_option("--json", bo.json_path, "Write the result as JSON to this file");

  auto* version_cmd = app.add_subcommand("version", "Print the version");

  // ---- run (live mode; see run_live.h) ----
  auto* run_cmd = app.add_subcommand("run", "Schedule pods of a real cluster (kube-apiserver)");
  LiveOptions live;
  run_cmd->add_option("--config", live.config_path, "KubeSchedulerConfiguration file");
  run_cmd->add_option("--kubeconfig", live.kubeconfig,
                      "kubeconfig (default: clientConnection.kubeconfig, $KUBECONFIG, "
                      "in-cluster, ~/.kube/config)");
  run_cmd->add_option("--context", live.context, "kubeconfig context (default: current-context)");
  run_cmd->add_option("--bind-address", live.bind_address,
                      "host:port for /healthz, /readyz and /metrics (\"\" disables)");
  run_cmd->add_option("--binding-workers", live.binding_workers, "Concurrent binding cycles");
  run_cmd->add_option("--sync-timeout", live.sync_timeout_seconds,
                      "Seconds to wait for the informer caches");
  run_cmd->add_option("--identity", live.identity, "Leader election identity (default: hostname_random)");
  run_cmd->add_option("--log-level", live.log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

  // ---- load (live benchmark load generator; see live_load.h) ----
  auto* load_cmd = app.add_subcommand("load", "Create objects, bind-only client, or watch binds "
                                              "against a kube-apiserver (live benchmarks)");
  LoadOptions load;
  load_cmd->add_option("mode", load.mode, "create | bind | watch")->required();
  load_cmd->add_option("--kubeconfig", load.kubeconfig, "kubeconfig");
  load_cmd->add_option("--context", load.context, "kubeconfig context");
  load_cmd->add_option("--namespace", load.namespace_, "Namespace of the pods");
  load_cmd->add_option("--nodes", load.nodes, "create: nodes");
  load_cmd->add_option("--pods", load.pods, "create: pods; watch: default --expect");
  load_cmd->add_option("--workers", load.workers, "Concurrent requests");
  load_cmd->add_option("--qps", load.qps, "bind: client QPS");
  load_cmd->add_option("--burst", load.burst, "bind: client burst");
  load_cmd->add_option("--expect", load.expect, "watch: bound pods to wait for");
  load_cmd->add_option("--timeout", load.timeout_seconds, "watch: seconds");
  load_cmd->add_option("--ready-file", load.ready_file, "watch: touched once watching");

  CLI11_PARSE(app, argc, argv);

  if (version_cmd->parsed()) {
    std::printf("phalanx %s\n", kVersion);
    return 0;
  }
  if (load_cmd->parsed()) return RunLoad(load);

  // Every subcommand below schedules: in-tree plus out-of-tree plugins.
  auto registry = NewRegistry(options);
  if (!registry.ok()) return Fail(registry.status().Message());

  if (run_cmd->parsed()) return RunLive(live, std::move(registry).value());

  if (bench_cmd->parsed() && !po.workload_file.empty()) {
    po.config_path = bo.config_path;
    po.json_path = bo.json_path;
    po.parallelism = bo.parallelism;
    po.registry = registry.value();
    po.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    std::string err;
    std::vector<bench::PerfResult> results;
    bool ok = bench::RunPerfWorkloads(po, &results, &err);
    if (!results.empty()) std::printf("%s", bench::FormatPerfTable(results).c_str());
    if (!po.json_path.empty()) {
      std::string werr;
      if (!sim::WriteTextFile(po.json_path, bench::PerfResultsJson(results).dump(2) + "\n", &werr)) {
        return Fail(werr);
      }
    }
    return ok ? 0 : Fail(err);
  }
  if (bench_cmd->parsed()) {
    if (!po.workload_selector.empty() || !po.label_filter.empty()) {
      return Fail("--workload and --label need a WORKLOAD.yaml file");
    }
    bo.registry = registry.value();
    std::string err;
    bench::BasicResult r;
    if (!bench::RunBasic(bo, &r, &err)) return Fail(err);
    std::printf("%s", bench::FormatBasic(r).c_str());
    return 0;
  }

  // simulate
  std::string err;
  sim::SimulationOptions so;
  so.seed = seed;
  if (!LoadConfig(config_path, &so.config, &err)) return Fail(err);
  so.config_source = config_path;
  so.registry = std::move(registry).value();
  if (trace == "openb-paper" || trace == "philly" || !policies_arg.empty() || !seeds_arg.empty() ||
      !report_path.empty() || gpu_sharing) {
    // Experiment mode: policies x seeds, JSON results, HTML report, terminal summary.
    if (!results_path.empty()) return Fail("--results is for a single run without --policies/--seeds/--report");
    sim::ExperimentOptions eo;
    eo.trace = trace;
    eo.nodes_csv = nodes_csv;
    eo.pods_csv = pods_csv;
    eo.jobs_csv = jobs_csv;
    eo.scenario_path = scenario_path;
    eo.config = so.config;
    eo.config_source = config_path;
    eo.registry = so.registry;
    eo.paper = paper_opts;
    eo.max_pods = max_pods;
    eo.untimed = untimed;
    eo.gpu_sharing = gpu_sharing;
    eo.seeds = {seed};
    if (!seeds_arg.empty()) {
      eo.seeds.clear();
      if (!sim::ParseSeeds(seeds_arg, &eo.seeds, &err)) return Fail(err);
    }
    if (!policies_arg.empty() && !sim::ParsePolicies(policies_arg, &eo.policies, &err)) return Fail(err);
    if (!config_path.empty() && !eo.policies.empty()) {
      return Fail("--config and --policies exclude each other (a policy is a generated profile)");
    }
    if (trace == "philly" && !sim::ParseClusterSpec(cluster_arg, &eo.cluster, &err)) return Fail(err);
    if (trace.empty() && scenario_path.empty()) {
      return Fail("simulate needs a SCENARIO (manifest file or directory) or --trace");
    }
    eo.log = [](const std::string& line) { std::printf("%s\n", line.c_str()); std::fflush(stdout); };
    if (!no_progress && (progress || isatty(STDERR_FILENO))) {
      eo.progress = [](size_t arrived, size_t total, double) {
        std::fprintf(stderr, "\r  %zu/%zu pods", arrived, total);
        if (arrived == total) std::fprintf(stderr, "\r%30s\r", "");
        std::fflush(stderr);
      };
    }
    nlohmann::json results;
    if (!sim::RunExperiments(eo, &results, &err)) return Fail(err);
    std::printf("%s", sim::FormatReportSummary(results).c_str());
    if (!json_path.empty()) {
      if (!sim::WriteTextFile(json_path, results.dump(1) + "\n", &err)) return Fail(err);
      std::printf("results: %s\n", json_path.c_str());
    }
    if (!report_path.empty()) {
      if (!sim::WriteTextFile(report_path, sim::RenderHtmlReport(results), &err)) return Fail(err);
      std::printf("report: %s\n", report_path.c_str());
    }
    size_t violations = 0;
    for (const auto& r : results["runs"]) violations += r["summary"]["invariant_violations"].get<size_t>();
    return violations == 0 ? 0 : 3;
  }
  sim::Scenario sc;
  if (trace == "openb") {
    if (nodes_csv.empty() || pods_csv.empty()) return Fail("--trace openb needs --nodes and --pods");
    if (!sim::LoadOpenbNodes(nodes_csv, &sc.nodes, &err)) return Fail(err);
    sim::OpenbOptions oo;
    oo.timed = !untimed;
    oo.max_pods = max_pods;
    if (!sim::LoadOpenbPods(pods_csv, oo, &sc.pods, &err)) return Fail(err);
    sc.name = "openb " + pods_csv;
  } else {
    if (scenario_path.empty()) return Fail("simulate needs a SCENARIO (manifest file or directory) or --trace");
    if (!sim::LoadManifestScenario(scenario_path, &sc, &err)) return Fail(err);
  }
  bool show_progress = !no_progress && (progress || isatty(STDERR_FILENO));
  if (show_progress) {
    so.progress = [](size_t arrived, size_t total, double vsec) {
      int width = 40;
      int filled = total ? static_cast<int>(width * arrived / total) : width;
      std::fprintf(stderr, "\r[%s%s] %zu/%zu pods  t=%.0fs", std::string(filled, '=').c_str(),
                   std::string(width - filled, ' ').c_str(), arrived, total, vsec);
      std::fflush(stderr);
    };
  }
  sim::SimulationResult res;
  if (!sim::RunSimulation(sc, so, &res, &err)) {
    if (show_progress) std::fprintf(stderr, "\n");
    return Fail(err);
  }
  if (show_progress) std::fprintf(stderr, "\n");
  std::printf("%s", sim::FormatSummary(res).c_str());
  if (!results_path.empty()) {
    if (!sim::WriteOutcomesJsonl(res, results_path, &err)) return Fail(err);
    std::printf("results: %s\n", results_path.c_str());
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    if (!out) return Fail(json_path + ": cannot open for writing");
    out << sim::ResultJson(res) << "\n";
  }
  return res.invariant_violations.empty() ? 0 : 3;
}

}  // namespace phalanx::app
