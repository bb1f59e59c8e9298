// Trace replay experiments: one or more placement policies x one or more seeds over one
// trace, each run through the real scheduler (RunSimulation), summarized as one JSON
// document that the HTML report (report.h) and the terminal summary are made from.
// (Module phalanx_replay; the simulator itself is src/sim.)
//
// Traces:
//   openb        the Alibaba openb trace with its arrivals and departures
//   openb-paper  the FGD paper's methodology (paper.h)
//   philly       Philly jobs as gangs on a cluster of --cluster NODESxGPUS (philly.h)
//   ""           a manifest scenario (file or directory)
//
// Policies (--policies): fgd, bestfit, dotproduct, packing, clustering, random select the
// score plugin of a generated profile (GpuShare for Filter/Reserve, every default scorer
// disabled, percentageOfNodesToScore 100 — the paper artifact's scheduler config);
// "default" keeps the default scorers and adds GpuShare. Without --policies the given
// (or default) configuration is used as is.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/status.h"
#include "config/types.h"
#include "framework/registry.h"
#include "replay/paper.h"
#include "replay/philly.h"
#include "sim/scenario.h"

namespace phalanx::replay {

// A policy name as typed (case-insensitive) -> {display name, score plugin ("" = default
// scorers)}; nullopt if unknown.
struct PolicySpec {
  std::string display;
  std::string score_plugin;
};
std::optional<PolicySpec> LookupPolicy(const std::string& name);
// "fgd,bestfit" -> specs; error names the unknown entry and the known ones.
api::Status ParsePolicies(const std::string& list, std::vector<PolicySpec>* out);
// "42-51" or "1,2,7" or "42" -> seeds. Errors name the bad part.
api::Status ParseSeeds(const std::string& text, std::vector<uint64_t>* out);
// The generated profile of a policy (see above) as a v1 KubeSchedulerConfiguration. With
// `node_order_ties` the policy breaks ties as the paper artifact does (tieBreak: NodeOrder,
// plugins/gpupolicy/common.h); openb-paper runs use it.
api::Status PolicyConfiguration(const PolicySpec& p, bool node_order_ties,
                                config::KubeSchedulerConfiguration* out);

// The paper's published unallocated-GPU share at 100 % load (median over seeds 42-51 of
// 100 - allocation % at the 100 % arrival point) for the pod list's file name
// (openb_pod_list_<workload>.csv, any of the artifact's 17 workloads) and policy display
// name (Random, DotProduct, GpuClustering, GpuPacking, BestFit, FGD). Source: the artifact's
// experiments/analysis/expected_results/analysis_allo_discrete.csv (hkust-adsl/kubernetes-
// scheduler-simulator), column "100". nullopt for another file name or policy (the
// figures are of that trace only; new policies have no paper figure).
std::optional<double> PaperUnallocatedAt100(const std::string& pods_csv,
                                            const std::string& display);

struct ExperimentOptions {
  std::string trace;  // "openb", "openb-paper", "philly" or "" (manifests)
  std::string nodes_csv, pods_csv, jobs_csv, scenario_path;
  std::vector<PolicySpec> policies;  // empty: `config` as given ("config" in the results)
  // --compare A.yaml,B.yaml: scheduler configurations run on the same input instead of
  // `policies` (each a "policy" named by its file's stem, deduplicated with -2, -3 ...);
  // the document then has "compare": [{name, config}] and the report a side-by-side table.
  struct CompareConfig {
    std::string name;    // e.g. "fgd" for configs/fgd.yaml
    std::string source;  // the file
    config::KubeSchedulerConfiguration config;
  };
  std::vector<CompareConfig> compare;
  std::vector<uint64_t> seeds = {1};
  config::KubeSchedulerConfiguration config;
  std::string config_source;
  framework::Registry registry;
  PaperOptions paper;
  PhillyCluster cluster;
  size_t max_pods = 0;       // openb / philly: first N pods / jobs
  bool untimed = false;      // openb: all pods at t=0, no departures
  bool gpu_sharing = false;  // openb: shares without nvidia.com/gpu (GpuShare accounts)
  // openb / openb-paper: "extended" (nvidia.com/gpu) or "dra" (replay/dra_gpus.h: GPUs as
  // DRA devices; each run's document gets "gpu_model" and "dra" {nodes, devices, pods,
  // shares}). Other traces: "extended" only.
  std::string gpu_model = "extended";
  // One JSON line per pod (sim::WriteOutcomesJsonl) of the run; only with a single
  // (policy, seed) run.
  std::string results_path;
  // philly: one CSV line per job (WriteJobResultsCsv) of the run; only with a single run.
  std::string job_results_path;
  // philly: forecast every job's start at its submission (SubmissionForecasts) and record
  // the accuracy against the simulated starts in each run's "jobs"."forecast_at_submission"
  // {jobs, forecasts, measured, exact, late, median/mean/p90_abs_error_s} and its log line.
  bool forecast_accuracy = false;
  // Sweeps: with shard_count N > 0 only the runs k (policies x seeds in order,
  // k = policy index * seeds + seed index) with k % N == shard_index are run; the document
  // records "shard" {index, count} and each run's "run_index", and MergeShardReports
  // combines the N documents into the document of the whole experiment.
  size_t shard_index = 0, shard_count = 0;
  // One line per finished run (for the terminal).
  std::function<void(const std::string&)> log;
  std::function<void(size_t, size_t, double)> progress;
};

// Runs every (policy, seed) and fills *results (schema: "kind": "phalanx-replay-report",
// "version": 1; see report.h), and writes opts.results_path. Errors: unreadable traces,
// bad configurations, failed runs — the message names the file or the run; results_path
// with more than one run.
api::Status RunExperiments(const ExperimentOptions& opts, nlohmann::json* results);

// "2/6" -> index 2, count 6 (0 <= index < count). Errors name the text.
api::Status ParseShard(const std::string& text, size_t* index, size_t* count);

// Combines the documents of shards 0..N-1 of one experiment (same mode, trace, pod list,
// policies, seeds and cluster; every index exactly once) into the document one run of the
// whole experiment writes: runs in run order, the comparison recomputed from them, the
// replay speed from every run's pods and wall time. Errors name the file (`names`, one per
// document) and what differs or is missing, e.g. "shard-3.json: policies differ from
// shard-0.json", "shard 4 of 6 is missing".
api::Status MergeShardReports(const std::vector<nlohmann::json>& docs,
                              const std::vector<std::string>& names, nlohmann::json* out);

// A Kubernetes Indexed Job (batch/v1, completionMode Indexed) that runs every shard of a
// sweep on a cluster: `shards` completions and parallelism, container `image` running
// `phalanx simulate ARGS --shard $(JOB_COMPLETION_INDEX)/N --json /results/shard-
// $(JOB_COMPLETION_INDEX).json` (the kubelet expands $(VAR) from the Job controller's
// JOB_COMPLETION_INDEX), results on the PersistentVolumeClaim `claim` mounted at /results
// (empty: an emptyDir — collect the files before the pods go), and `data_claim` (when
// given) mounted read-only at /data for the traces the arguments name. YAML text.
std::string SweepJobManifest(const std::string& name, const std::string& namespace_,
                             const std::string& image, const std::string& claim,
                             const std::string& data_claim, size_t shards,
                             const std::vector<std::string>& simulate_args);

}  // namespace phalanx::replay
