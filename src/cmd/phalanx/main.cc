// phalanx: a Kubernetes pod scheduler.
//   phalanx simulate SCENARIO [--config sched.yaml] [--seed N] [--results out.jsonl]
//   phalanx simulate --trace openb --nodes NODES.csv --pods PODS.csv [...]
//   phalanx bench [--nodes 5000 --init-pods 1000 --pods 10000]
//   phalanx version
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "sim/bench.h"
#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace {

constexpr const char* kVersion = "0.1.0";

int Fail(const std::string& msg) {
  std::fprintf(stderr, "phalanx: error: %s\n", msg.c_str());
  return 1;
}

bool LoadConfig(const std::string& path, phalanx::config::KubeSchedulerConfiguration* cfg,
                std::string* err) {
  if (path.empty()) {
    *cfg = phalanx::config::DefaultConfiguration();
    return true;
  }
  return phalanx::config::LoadConfiguration(path, cfg, err);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Phalanx: a Kubernetes scheduler with all-or-nothing gang scheduling"};
  app.require_subcommand(1);

  // ---- simulate ----
  auto* sim = app.add_subcommand("simulate", "Replay manifests or a trace on a virtual clock");
  std::string scenario_path, config_path, trace, nodes_csv, pods_csv, results_path, json_path;
  uint64_t seed = 1;
  size_t max_pods = 0;
  bool untimed = false, progress = false, no_progress = false;
  sim->add_option("scenario", scenario_path, "Manifest file or directory (Nodes, Pods, workloads)");
  sim->add_option("--config", config_path, "KubeSchedulerConfiguration file");
  sim->add_option("--trace", trace, "Trace format instead of manifests: openb")
      ->check(CLI::IsMember({"openb"}));
  sim->add_option("--nodes", nodes_csv, "openb node list CSV");
  sim->add_option("--pods", pods_csv, "openb pod list CSV");
  sim->add_flag("--untimed", untimed, "openb: all pods at t=0, no departures");
  sim->add_option("--max-pods", max_pods, "openb: use only the first N pods");
  sim->add_option("--seed", seed, "Seed for tie-breaking (same seed, same placements)");
  sim->add_option("--results", results_path, "Write one JSON line per pod to this file");
  sim->add_option("--json", json_path, "Write the summary as JSON to this file");
  sim->add_flag("--progress", progress, "Show a progress bar (default when stderr is a terminal)");
  sim->add_flag("--no-progress", no_progress, "Never show a progress bar");

  // ---- bench ----
  auto* bench = app.add_subcommand("bench", "In-process scheduling throughput (SchedulingBasic shape)");
  phalanx::bench::BasicOptions bo;
  bench->add_option("--nodes", bo.nodes, "Nodes");
  bench->add_option("--init-pods", bo.init_pods, "Pods bound before measuring");
  bench->add_option("--pods", bo.measured_pods, "Measured pods");
  bench->add_option("--binding-workers", bo.binding_workers, "Binding pool size (0 = inline)");
  bench->add_option("--parallelism", bo.parallelism, "Filter/Score parallelism");
  bench->add_option("--config", bo.config_path, "KubeSchedulerConfiguration file");
  bench->add_option("--json", bo.json_path, "Write the result as JSON to this file");

  auto* version = app.add_subcommand("version", "Print the version");

  CLI11_PARSE(app, argc, argv);

  if (version->parsed()) {
    std::printf("phalanx %s\n", kVersion);
    return 0;
  }

  if (bench->parsed()) {
    std::string err;
    phalanx::bench::BasicResult r;
    if (!phalanx::bench::RunBasic(bo, &r, &err)) return Fail(err);
    std::printf("%s", phalanx::bench::FormatBasic(r).c_str());
    return 0;
  }

  // simulate
  std::string err;
  phalanx::sim::SimulationOptions so;
  so.seed = seed;
  if (!LoadConfig(config_path, &so.config, &err)) return Fail(err);
  so.config_source = config_path;
  so.registry = phalanx::plugins::NewInTreeRegistry();
  phalanx::sim::Scenario sc;
  if (trace == "openb") {
    if (nodes_csv.empty() || pods_csv.empty()) return Fail("--trace openb needs --nodes and --pods");
    if (!phalanx::sim::LoadOpenbNodes(nodes_csv, &sc.nodes, &err)) return Fail(err);
    phalanx::sim::OpenbOptions oo;
    oo.timed = !untimed;
    oo.max_pods = max_pods;
    if (!phalanx::sim::LoadOpenbPods(pods_csv, oo, &sc.pods, &err)) return Fail(err);
    sc.name = "openb " + pods_csv;
  } else {
    if (scenario_path.empty()) return Fail("simulate needs a SCENARIO (manifest file or directory) or --trace");
    if (!phalanx::sim::LoadManifestScenario(scenario_path, &sc, &err)) return Fail(err);
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
  phalanx::sim::SimulationResult res;
  if (!phalanx::sim::RunSimulation(sc, so, &res, &err)) {
    if (show_progress) std::fprintf(stderr, "\n");
    return Fail(err);
  }
  if (show_progress) std::fprintf(stderr, "\n");
  std::printf("%s", phalanx::sim::FormatSummary(res).c_str());
  if (!results_path.empty()) {
    if (!phalanx::sim::WriteOutcomesJsonl(res, results_path, &err)) return Fail(err);
    std::printf("results: %s\n", results_path.c_str());
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    if (!out) return Fail(json_path + ": cannot open for writing");
    out << phalanx::sim::ResultJson(res) << "\n";
  }
  return res.invariant_violations.empty() ? 0 : 3;
}
