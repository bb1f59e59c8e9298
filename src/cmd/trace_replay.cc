#include "cmd/trace_replay.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "app/command.h"
#include "cmd/bench.h"
#include "cmd/sweep.h"
#include "replay/experiment.h"
#include "replay/openb.h"
#include "replay/report.h"

namespace phalanx::cmd {

namespace {

// --trace openb without experiment flags: the trace as one scenario.
api::Status LoadOpenbScenario(const app::SimulateFlags& f, sim::Scenario* sc) {
  if (f.nodes_csv.empty() || f.pods_csv.empty()) {
    return absl::InvalidArgumentError("--trace openb needs --nodes and --pods");
  }
  if (auto s = replay::LoadOpenbNodes(f.nodes_csv, &sc->nodes); !s.ok()) return s;
  replay::OpenbOptions oo;
  oo.timed = !f.untimed;
  oo.max_pods = f.max_pods;
  if (auto s = replay::LoadOpenbPods(f.pods_csv, oo, &sc->pods); !s.ok()) return s;
  sc->name = "openb " + f.pods_csv;
  return absl::OkStatus();
}

// --compare A.yaml,B.yaml: each file's configuration, named by its stem ("-2", "-3" ...
// appended to a name taken). Errors: "--compare: want at least two configuration files,
// got ...", a file's own errors (config::LoadConfiguration: file, field).
api::Status CompareConfigs(const app::SimulateFlags& f, replay::ExperimentOptions* eo) {
  std::vector<std::string> paths;
  size_t start = 0;
  while (start <= f.compare.size()) {
    const size_t comma = std::min(f.compare.find(',', start), f.compare.size());
    if (comma > start) paths.push_back(f.compare.substr(start, comma - start));
    start = comma + 1;
  }
  if (paths.size() < 2) {
    return absl::InvalidArgumentError("--compare: want at least two configuration files, got \"" +
                                      f.compare + "\"");
  }
  if (!f.config_path.empty())
    return absl::InvalidArgumentError("--compare and --config exclude each other");
  std::set<std::string> names;
  for (const auto& path : paths) {
    replay::ExperimentOptions::CompareConfig c;
    c.source = path;
    if (auto s = app::LoadConfigOrDefault(path, &c.config); !s.ok()) return s;
    std::string name = std::filesystem::path(path).stem().string();
    if (name.empty()) name = "config";
    std::string unique = name;
    for (int k = 2; names.count(unique); ++k) unique = name + "-" + std::to_string(k);
    names.insert(unique);
    c.name = unique;
    eo->compare.push_back(std::move(c));
  }
  return absl::OkStatus();
}

// The experiment's options from the flags. Errors name the flag.
api::Status ExperimentOptionsFrom(const app::SimulateFlags& f, const sim::SimulationOptions& so,
                                  replay::ExperimentOptions* eo) {
  eo->trace = f.trace;
  eo->nodes_csv = f.nodes_csv;
  eo->pods_csv = f.pods_csv;
  eo->jobs_csv = f.jobs_csv;
  eo->scenario_path = f.scenario_path;
  eo->config = so.config;
  eo->config_source = f.config_path;
  eo->registry = so.registry;
  if (f.load) eo->paper.target_load = *f.load;
  eo->paper.max_nodes = f.max_nodes;
  eo->max_pods = f.max_pods;
  eo->untimed = f.untimed;
  eo->gpu_sharing = f.gpu_sharing;
  if (!f.gpu_model.empty()) eo->gpu_model = f.gpu_model;
  eo->results_path = f.results_path;
  eo->job_results_path = f.job_results_path;
  eo->forecast_accuracy = f.forecast_accuracy;
  eo->seeds = {f.seed};
  if (!f.seeds.empty()) {
    eo->seeds.clear();
    if (auto s = replay::ParseSeeds(f.seeds, &eo->seeds); !s.ok()) return s;
  }
  if (!f.policies.empty()) {
    if (auto s = replay::ParsePolicies(f.policies, &eo->policies); !s.ok()) return s;
  }
  if (!f.compare.empty()) {
    if (auto s = CompareConfigs(f, eo); !s.ok()) return s;
  }
  if (!f.shard.empty()) {
    if (auto s = replay::ParseShard(f.shard, &eo->shard_index, &eo->shard_count); !s.ok()) return s;
    if (!f.results_path.empty() || !f.job_results_path.empty()) {
      return absl::InvalidArgumentError(
          "--shard writes its runs with --json; --results and "
          "--job-results are for a single run");
    }
  }
  if (!f.config_path.empty() && !eo->policies.empty()) {
    return absl::InvalidArgumentError(
        "--config and --policies exclude each other (a policy is a generated profile)");
  }
  if (f.trace == "philly") {
    if (auto s = replay::ParseClusterSpec(f.cluster, &eo->cluster); !s.ok()) return s;
  }
  if (f.trace.empty() && f.scenario_path.empty()) {
    return absl::InvalidArgumentError(
        "simulate needs a SCENARIO (manifest file or directory) or --trace");
  }
  return absl::OkStatus();
}

// Experiment mode: the terminal summary, --json and --report; exit code 3 when a run
// found invariant violations.
int RunExperiments(const app::SimulateFlags& f, const sim::SimulationOptions& so) {
  replay::ExperimentOptions eo;
  if (auto s = ExperimentOptionsFrom(f, so, &eo); !s.ok())
    return app::Fail(std::string(s.message()));
  eo.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  if (f.ShowProgress()) {
    eo.progress = [](size_t arrived, size_t total, double) {
      std::fprintf(stderr, "\r  %zu/%zu pods", arrived, total);
      if (arrived == total) std::fprintf(stderr, "\r%30s\r", "");
      std::fflush(stderr);
    };
  }
  nlohmann::json results;
  if (auto s = replay::RunExperiments(eo, &results); !s.ok())
    return app::Fail(std::string(s.message()));
  std::printf("%s", replay::FormatReportSummary(results).c_str());
  if (!f.results_path.empty()) std::printf("one JSON line per pod: %s\n", f.results_path.c_str());
  if (!f.job_results_path.empty())
    std::printf("one CSV line per job: %s\n", f.job_results_path.c_str());
  if (!f.json_path.empty()) {
    if (auto s = app::WriteTextFile(f.json_path, results.dump(1) + "\n"); !s.ok()) {
      return app::Fail(std::string(s.message()));
    }
    std::printf("results: %s\n", f.json_path.c_str());
  }
  if (!f.report_path.empty()) {
    if (auto s = app::WriteTextFile(f.report_path, replay::RenderHtmlReport(results)); !s.ok()) {
      return app::Fail(std::string(s.message()));
    }
    std::printf("report: %s\n", f.report_path.c_str());
  }
  size_t violations = 0;
  for (const auto& r : results["runs"])
    violations += r["summary"]["invariant_violations"].get<size_t>();
  return violations == 0 ? 0 : 3;
}

}  // namespace

app::TraceReplay NewTraceReplay() { return {LoadOpenbScenario, RunExperiments}; }

app::Extensions Extensions() {
  app::Extensions e;
  e.commands.push_back(NewBenchCommand);
  e.commands.push_back(NewReportCommand);
  e.commands.push_back(NewSweepCommand);
  e.trace_replay = NewTraceReplay();
  return e;
}

}  // namespace phalanx::cmd
