#include "cmd/bench.h"

#include <cstdio>

#include "perf/bench.h"
#include "perf/perf_runner.h"

namespace phalanx::cmd {

namespace {

class BenchCommand : public app::Command {
 public:
  CLI::App* Declare(CLI::App& app) override {
    auto* c = app.add_subcommand(
        "bench",
        "In-process scheduling throughput: scheduler_perf workload files, or the "
        "SchedulingBasic shape (--nodes/--init-pods/--pods)");
    c->add_option("workload", po_.workload_file,
                  "scheduler_perf workload file (e.g. upstream's performance-config.yaml)");
    c->add_option("--workload", po_.workload_selector,
                  "Run only this test case or CASE/WORKLOAD (with a workload file)");
    c->add_option("--label", po_.label_filter,
                  "Label filter as upstream's -perf-scheduling-label-filter: x,+y,-z");
    c->add_flag("--keep-going", po_.keep_going,
                "Record a workload that cannot run with its reason and run the next one");
    c->add_option("--throughput-window-ms", po_.throughput_window_ms,
                  "Throughput sampling window (default: run time / 50, 1..1000 ms)");
    c->add_option("--nodes", bo_.nodes, "Nodes");
    c->add_option("--init-pods", bo_.init_pods, "Pods bound before measuring");
    c->add_option("--pods", bo_.measured_pods, "Measured pods");
    c->add_option("--binding-workers", bo_.binding_workers, "Binding pool size (0 = inline)");
    c->add_option("--gangs", bo_.gangs,
                  "Gang workload: number of PodGroups (minMember = --gang-size)");
    c->add_option("--gang-size", bo_.gang_size, "Gang workload: pods per PodGroup");
    c->add_option("--parallelism", bo_.parallelism, "Filter/Score parallelism");
    c->add_option("--config", bo_.config_path, "KubeSchedulerConfiguration file");
    c->add_option("--json", bo_.json_path, "Write the result as JSON to this file");
    c->add_flag("--no-opportunistic-batching", no_batching_,
                "Schedule every plain pod in full (no reuse of per-node Filter/Score results "
                "across cycles of one pod signature; KEP-5598 opportunistic batching off)");
    return c;
  }

  int Run(framework::Registry registry) override {
    bo_.opportunistic_batching = !no_batching_;
    if (!po_.workload_file.empty()) return RunWorkloads(std::move(registry));
    if (!po_.workload_selector.empty() || !po_.label_filter.empty()) {
      return app::Fail("--workload and --label need a WORKLOAD.yaml file");
    }
    bo_.registry = std::move(registry);
    perf::BasicResult r;
    if (auto s = perf::RunBasic(bo_, &r); !s.ok()) return app::Fail(std::string(s.message()));
    std::printf("%s", perf::FormatBasic(r).c_str());
    return 0;
  }

 private:
  // scheduler_perf workload file: the table on stdout, --json with every result.
  int RunWorkloads(framework::Registry registry) {
    po_.config_path = bo_.config_path;
    po_.json_path = bo_.json_path;
    po_.parallelism = bo_.parallelism;
    po_.opportunistic_batching = bo_.opportunistic_batching;
    po_.registry = std::move(registry);
    po_.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    std::vector<perf::PerfResult> results;
    const api::Status s = perf::RunPerfWorkloads(po_, &results);
    if (!results.empty()) std::printf("%s", perf::FormatPerfTable(results).c_str());
    if (!po_.json_path.empty()) {
      const std::string json = perf::PerfResultsJson(results).dump(2) + "\n";
      if (auto w = app::WriteTextFile(po_.json_path, json); !w.ok()) {
        return app::Fail(std::string(w.message()));
      }
    }
    if (!s.ok()) return app::Fail(std::string(s.message()));
    // As upstream's benchmark, a figure that misses the file's threshold fails the run.
    const std::vector<std::string> missed = perf::ThresholdFailures(results);
    if (!missed.empty()) {
      std::string msg = std::to_string(missed.size()) + " workload(s) missed the file's threshold:";
      for (const auto& m : missed) msg += "\n  " + m;
      return app::Fail(msg);
    }
    return 0;
  }

  perf::BasicOptions bo_;
  perf::PerfOptions po_;
  bool no_batching_ = false;
};

}  // namespace

std::unique_ptr<app::Command> NewBenchCommand() { return std::make_unique<BenchCommand>(); }

}  // namespace phalanx::cmd
