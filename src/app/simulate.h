// `phalanx simulate`: replays a scenario through the real scheduler on a virtual clock
// (src/sim). Manifest scenarios run here; the trace modes (--trace openb|openb-paper|
// philly) and experiments (--policies, --seeds, --report, --gpu-sharing) run through a
// TraceReplay that binaries linking src/replay provide (src/cmd/trace_replay.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/status.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::app {

// simulate's command line as given (see simulate.cc for the help texts).
struct SimulateFlags {
  // Manifest files or directories, read as one set (phalanx simulate cluster.yaml jobs/);
  // scenario_path is the first (trace replay experiments read that one).
  std::vector<std::string> scenario_paths;
  std::string scenario_path;
  std::string config_path;  // KubeSchedulerConfiguration ("" = defaults)
  std::string trace;        // "", openb, openb-paper, philly
  std::string nodes_csv, pods_csv, jobs_csv;
  std::string results_path;        // one JSON line per pod (single runs)
  std::string json_path;           // the summary (single run) or the results document (experiments)
  std::string job_results_path;    // philly: one CSV line per job (single run)
  bool forecast_accuracy = false;  // philly: forecasts at submission vs simulated starts
  // "A.yaml,B.yaml": scheduler configurations compared on the same input (experiment mode).
  std::string compare;
  uint64_t seed = 1;
  size_t max_pods = 0;  // openb / philly: first N pods / jobs (0 = all)
  bool untimed = false;
  bool progress = false, no_progress = false;
  // Experiments.
  std::string policies, seeds, report_path;
  std::string cluster = "32x8";  // philly: NODESxGPUS[,queues=W1:W2...]
  bool gpu_sharing = false;
  std::string gpu_model;       // openb / openb-paper: "" or "extended" (nvidia.com/gpu), "dra"
  std::optional<double> load;  // openb-paper: arrivals up to this multiple of GPU capacity
  size_t max_nodes = 0;        // openb-paper: first N GPU nodes (0 = all)
  // Gang reservations: enables the GangReservation plugin in every profile with this
  // reservationThresholdSeconds (and reservationGraceSeconds when given); unset = the
  // configuration as given.
  std::optional<int64_t> reservation_threshold_s, reservation_grace_s;
  // With reservation_threshold_s: GangReservation preemptAfterSeconds (starvation eviction).
  std::optional<int64_t> reservation_preempt_after_s;
  // Sweeps: "INDEX/COUNT" runs one shard of the policies x seeds experiment (replay
  // ExperimentOptions::shard_index); "" = every run.
  std::string shard;
  // --from-cluster: the scenario is the live cluster's state (app/cluster_import.h), read
  // with this kubeconfig / context (resolved as `phalanx run` does).
  bool from_cluster = false;
  std::string kubeconfig, context;
  // What-if: "COUNTxNODE" entries, each adding COUNT copies of node NODE (sim/whatif.h).
  std::vector<std::string> add_nodes;
  std::string cordon_nodes, remove_nodes;  // "a,b"

  // True when the flags ask for experiment mode (policies x seeds, results document).
  bool Experiment() const {
    return trace == "openb-paper" || trace == "philly" || !policies.empty() || !seeds.empty() ||
           !report_path.empty() || gpu_sharing || !shard.empty() || !compare.empty() ||
           !gpu_model.empty();
  }
  // --progress, or stderr is a terminal and not --no-progress.
  bool ShowProgress() const;
};

// Enables GangReservation (multiPoint) in every profile of `cfg` with args
// reservationThresholdSeconds = threshold_s (and reservationGraceSeconds = *grace_s when
// set, and preemptAfterSeconds = *preempt_after_s when set), replacing args the
// configuration gave it. Used by --reservation-threshold (--reservation-grace,
// --reservation-preempt-after).
void EnableGangReservation(int64_t threshold_s, std::optional<int64_t> grace_s,
                           config::KubeSchedulerConfiguration* cfg,
                           std::optional<int64_t> preempt_after_s = std::nullopt);

// simulate's trace modes, from the replay module.
struct TraceReplay {
  // --trace openb without experiment flags: the trace as a scenario for one run.
  std::function<api::Status(const SimulateFlags&, sim::Scenario*)> load_trace;
  // Experiment mode: runs every (policy, seed) with `base` (seed, configuration, registry),
  // prints the summary and writes --json / --report. Returns the process exit code.
  std::function<int(const SimulateFlags&, const sim::SimulationOptions& base)> run_experiments;
};

}  // namespace phalanx::app
