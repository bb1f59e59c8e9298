// `phalanx simulate` (see simulate.h).
#include "app/simulate.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "app/app.h"
#include "app/cluster_import.h"
#include "sim/whatif.h"

namespace phalanx::app {

bool SimulateFlags::ShowProgress() const {
  return !no_progress && (progress || isatty(STDERR_FILENO));
}

void EnableGangReservation(int64_t threshold_s, std::optional<int64_t> grace_s,
                           config::KubeSchedulerConfiguration* cfg,
                           std::optional<int64_t> preempt_after_s) {
  for (auto& prof : cfg->profiles) {
    auto& mp = prof.plugins.multi_point.enabled;
    if (std::none_of(mp.begin(), mp.end(),
                     [](const auto& r) { return r.name == "GangReservation"; })) {
      mp.push_back({"GangReservation", 0});
    }
    YAML::Node args;
    args["reservationThresholdSeconds"] = threshold_s;
    if (grace_s) args["reservationGraceSeconds"] = *grace_s;
    if (preempt_after_s) args["preemptAfterSeconds"] = *preempt_after_s;
    std::erase_if(prof.plugin_config, [](const auto& pc) { return pc.name == "GangReservation"; });
    prof.plugin_config.push_back({"GangReservation", std::make_shared<const YAML::Node>(args)});
  }
}

namespace {

class SimulateCommand : public Command {
 public:
  explicit SimulateCommand(TraceReplay replay) : replay_(std::move(replay)) {}

  CLI::App* Declare(CLI::App& app) override {
    auto* c = app.add_subcommand("simulate", "Replay manifests or a trace on a virtual clock");
    DeclareRunFlags(c);
    DeclareExperimentFlags(c);
    return c;
  }

  int Run(framework::Registry registry) override {
    f_.scenario_path = f_.scenario_paths.empty() ? std::string() : f_.scenario_paths.front();
    sim::SimulationOptions so;
    so.seed = f_.seed;
    if (auto s = LoadConfigOrDefault(f_.config_path, &so.config); !s.ok()) {
      return Fail(std::string(s.message()));
    }
    so.config_source = f_.config_path;
    if (f_.reservation_threshold_s) {
      if (!f_.policies.empty() || !f_.compare.empty()) {
        return Fail("--reservation-threshold and --policies / --compare exclude each other");
      }
      EnableGangReservation(*f_.reservation_threshold_s, f_.reservation_grace_s, &so.config,
                            f_.reservation_preempt_after_s);
    } else if (f_.reservation_grace_s || f_.reservation_preempt_after_s) {
      return Fail(
          "--reservation-grace and --reservation-preempt-after need --reservation-threshold");
    }
    so.registry = std::move(registry);
    if (f_.Experiment()) {
      if (!f_.add_nodes.empty() || !f_.cordon_nodes.empty() || !f_.remove_nodes.empty()) {
        return Fail(
            "--add-nodes, --cordon-nodes and --remove-nodes are for a single run of manifests or "
            "--trace openb");
      }
      // --results with several (policy, seed) runs is refused by the experiment itself.
      if (!replay_.run_experiments) return NoReplay();
      return replay_.run_experiments(f_, so);
    }
    sim::Scenario sc;
    if (f_.trace == "openb") {
      if (!replay_.load_trace) return NoReplay();
      if (auto s = replay_.load_trace(f_, &sc); !s.ok()) return Fail(std::string(s.message()));
    } else if (f_.from_cluster) {
      if (!f_.scenario_path.empty())
        return Fail("--from-cluster and a SCENARIO exclude each other");
      if (auto s = LoadClusterScenario(f_.kubeconfig, f_.context, &sc); !s.ok())
        return Fail(std::string(s.message()));
    } else {
      if (f_.scenario_path.empty()) {
        return Fail(
            "simulate needs a SCENARIO (manifest file or directory), --from-cluster or "
            "--trace");
      }
      if (auto s = sim::LoadManifestScenario(f_.scenario_paths, &sc); !s.ok()) {
        return Fail(std::string(s.message()));
      }
    }
    if (auto s = sim::ApplyNodeEdits({f_.add_nodes, f_.cordon_nodes, f_.remove_nodes}, &sc);
        !s.ok()) {
      return Fail(std::string(s.message()));
    }
    return RunOnce(sc, std::move(so));
  }

 private:
  void DeclareRunFlags(CLI::App* c) {
    c->add_option("scenario", f_.scenario_paths,
                  "Manifest files or directories, read as one set (Nodes, Pods, workloads)");
    c->add_option("--config", f_.config_path, "KubeSchedulerConfiguration file");
    c->add_option("--trace", f_.trace,
                  "Trace instead of manifests: openb (arrivals and departures), openb-paper "
                  "(the FGD paper's methodology), philly (jobs as gangs)")
        ->check(CLI::IsMember({"openb", "openb-paper", "philly"}));
    c->add_option("--nodes", f_.nodes_csv, "openb node list CSV");
    c->add_option("--pods", f_.pods_csv, "openb pod list CSV");
    c->add_flag("--untimed", f_.untimed, "openb: all pods at t=0, no departures");
    c->add_option("--max-pods", f_.max_pods, "openb: use only the first N pods");
    c->add_option("--seed", f_.seed, "Seed for tie-breaking (same seed, same placements)");
    c->add_option("--results", f_.results_path,
                  "Write one JSON line per pod to this file (a single run: one policy, one seed)");
    c->add_option("--json", f_.json_path, "Write the summary as JSON to this file");
    c->add_option("--add-nodes", f_.add_nodes,
                  "What-if: COUNTxNODE more copies of an existing node, present from the start "
                  "(e.g. 2xgpu-1; repeatable; manifests and --trace openb)");
    c->add_option("--cordon-nodes", f_.cordon_nodes,
                  "What-if: mark these nodes unschedulable from the start, e.g. gpu-1,gpu-2");
    c->add_option("--remove-nodes", f_.remove_nodes,
                  "What-if: leave these nodes out, e.g. gpu-1,gpu-2");
    c->add_flag("--progress", f_.progress,
                "Show a progress bar (default when stderr is a terminal)");
    c->add_flag("--no-progress", f_.no_progress, "Never show a progress bar");
    c->add_option("--reservation-threshold", f_.reservation_threshold_s,
                  "Enable gang reservations with backfill (GangReservation plugin) for gangs "
                  "waiting at least this many seconds (0 = plugin on, reservations off)")
        ->check(CLI::NonNegativeNumber);
    c->add_option("--reservation-grace", f_.reservation_grace_s,
                  "With --reservation-threshold: seconds after the forecast start before an "
                  "unused reservation expires (default 600)")
        ->check(CLI::NonNegativeNumber);
    c->add_option("--reservation-preempt-after", f_.reservation_preempt_after_s,
                  "With --reservation-threshold: a gang holding a reservation that has waited "
                  "this many seconds, its forecast start still ahead, evicts the small jobs on "
                  "its reserved nodes (GangReservation preemptAfterSeconds; 0 = off, default)")
        ->check(CLI::NonNegativeNumber);
    c->add_flag("--from-cluster", f_.from_cluster,
                "Start from the live cluster's state: its nodes, pods (bound ones in place, "
                "pending ones queued), namespaces, priority classes, PDBs, gang, queue and "
                "other scheduling objects (see `phalanx snapshot`)");
    c->add_option("--kubeconfig", f_.kubeconfig, "With --from-cluster: kubeconfig file");
    c->add_option("--context", f_.context, "With --from-cluster: kubeconfig context");
  }

  // Trace replay experiments (src/replay/experiment.h): policies x seeds, HTML report.
  void DeclareExperimentFlags(CLI::App* c) {
    c->add_option("--policies", f_.policies,
                  "GPU placement policies to compare, e.g. fgd,bestfit,random (also "
                  "lookahead, dotproduct, packing, clustering, default)");
    c->add_option("--seeds", f_.seeds, "Seeds to run, e.g. 42-51 or 1,2,3 (overrides --seed)");
    c->add_option("--report", f_.report_path, "Write a self-contained HTML report to this file");
    c->add_option("--compare", f_.compare,
                  "Compare scheduler configurations on the same input, e.g. a.yaml,b.yaml (one "
                  "run per configuration and seed; the report shows them side by side)");
    c->add_option("--shard", f_.shard,
                  "Run one slice INDEX/COUNT of the policies x seeds experiment (run k when "
                  "k % COUNT == INDEX); combine the --json files with `phalanx report merge`");
    c->add_option("--cluster", f_.cluster, "philly: NODESxGPUS, e.g. 32x8");
    c->add_option("--jobs", f_.jobs_csv, "philly: job CSV (job_id,submit_time,num_gpu,duration)");
    c->add_option("--job-results", f_.job_results_path,
                  "philly: write one CSV line per job (job_id,submit_s,start_s,end_s,gpus,queue_s,"
                  "reserved_s,forecast_start_s,restarts) to this file (a single run)");
    c->add_flag("--forecast-accuracy", f_.forecast_accuracy,
                "philly: forecast each job's start at its submission (as phalanx explain does) and "
                "report the absolute error against the simulated start (median, mean, p90)");
    c->add_flag("--gpu-sharing", f_.gpu_sharing,
                "openb: GPU shares carry no nvidia.com/gpu request (GpuShare accounts per device)");
    c->add_option("--gpu-model", f_.gpu_model,
                  "openb, openb-paper: GPUs as the nvidia.com/gpu extended resource (extended, the "
                  "default) or as DRA devices (dra: a ResourceSlice per node, a ResourceClaim per "
                  "GPU pod; GPU shares take a whole device)")
        ->check(CLI::IsMember({"extended", "dra"}));
    c->add_option("--load", f_.load,
                  "openb-paper: resample arrivals up to this multiple of GPU capacity");
    c->add_option("--max-nodes", f_.max_nodes, "openb-paper: use only the first N GPU nodes");
  }

  int NoReplay() const {
    return Fail(
        "simulate: --trace, --policies, --seeds, --report, --gpu-sharing and --gpu-model need "
        "trace "
        "replay (src/replay), which this program was built without");
  }

  // One run: the summary on stdout, --results and --json files.
  int RunOnce(const sim::Scenario& sc, sim::SimulationOptions so) {
    const bool show_progress = f_.ShowProgress();
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
    const api::Status s = sim::RunSimulation(sc, so, &res);
    if (show_progress) std::fprintf(stderr, "\n");
    if (!s.ok()) return Fail(std::string(s.message()));
    std::printf("%s", sim::FormatSummary(res).c_str());
    if (!f_.results_path.empty()) {
      if (auto w = sim::WriteOutcomesJsonl(res, f_.results_path); !w.ok()) {
        return Fail(std::string(w.message()));
      }
      std::printf("results: %s\n", f_.results_path.c_str());
    }
    if (!f_.json_path.empty()) {
      std::ofstream out(f_.json_path);
      if (!out) return Fail(f_.json_path + ": cannot open for writing");
      out << sim::ResultJson(res) << "\n";
    }
    // 3: an invariant was violated; 2: the run completed with warnings (parts of the
    // manifests that affect placement and are not modelled, pods no profile serves).
    if (!res.invariant_violations.empty()) return 3;
    return res.HasWarnings() ? 2 : 0;
  }

  SimulateFlags f_;
  TraceReplay replay_;
};

}  // namespace

std::unique_ptr<Command> NewSimulateCommand(TraceReplay trace_replay) {
  return std::make_unique<SimulateCommand>(std::move(trace_replay));
}

}  // namespace phalanx::app
