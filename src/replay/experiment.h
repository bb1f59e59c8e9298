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
std::optional<double> PaperUnallocatedAt100(const std::string& pods_csv, const std::string& display);

struct ExperimentOptions {
  std::string trace;  // "openb", "openb-paper", "philly" or "" (manifests)
  std::string nodes_csv, pods_csv, jobs_csv, scenario_path;
  std::vector<PolicySpec> policies;  // empty: `config` as given ("config" in the results)
  std::vector<uint64_t> seeds = {1};
  config::KubeSchedulerConfiguration config;
  std::string config_source;
  framework::Registry registry;
  PaperOptions paper;
  PhillyCluster cluster;
  size_t max_pods = 0;       // openb / philly: first N pods / jobs
  bool untimed = false;      // openb: all pods at t=0, no departures
  bool gpu_sharing = false;  // openb: shares without nvidia.com/gpu (GpuShare accounts)
  // One JSON line per pod (sim::WriteOutcomesJsonl) of the run; only with a single
  // (policy, seed) run.
  std::string results_path;
  // philly: one CSV line per job (WriteJobResultsCsv) of the run; only with a single run.
  std::string job_results_path;
  // One line per finished run (for the terminal).
  std::function<void(const std::string&)> log;
  std::function<void(size_t, size_t, double)> progress;
};

// Runs every (policy, seed) and fills *results (schema: "kind": "phalanx-replay-report",
// "version": 1; see report.h), and writes opts.results_path. Errors: unreadable traces,
// bad configurations, failed runs — the message names the file or the run; results_path
// with more than one run.
api::Status RunExperiments(const ExperimentOptions& opts, nlohmann::json* results);

}  // namespace phalanx::replay
