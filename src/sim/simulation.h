// `phalanx simulate`: a discrete-event driver that replays a Scenario through the real
// Scheduler against the in-process Store on a virtual clock.
//
// Loop: advance the clock to the earliest of (next arrival/departure, the scheduler's
// next wake time: backoff expiry, unschedulable flush, Permit timeout); apply every event
// due; run the scheduler's periodic work; run scheduling cycles until activeQ is empty.
// Binding runs inline, so the result is a function of (scenario, config, seed).
// The run ends when no arrivals or departures remain and nothing but the unschedulable
// flush is left to do (retrying then could not change the outcome).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/resource.h"
#include "config/types.h"
#include "framework/registry.h"
#include "sim/scenario.h"

namespace phalanx::sim {

struct SimulationOptions {
  uint64_t seed = 1;
  config::KubeSchedulerConfiguration config;
  std::string config_source;     // file the config came from, for error messages
  framework::Registry registry;  // plugins available to the profiles
  // Called now and then with (pods arrived, pods total, virtual seconds).
  std::function<void(size_t, size_t, double)> progress;
};

struct PodOutcome {
  std::string pod;  // namespace/name
  std::string node;  // empty if never bound
  double arrival_s = 0;
  std::optional<double> scheduled_s;
  std::optional<double> deleted_s;
  int attempts = 0;
  std::string reason;  // last FailedScheduling message if never bound
};

struct ResourceUsage {
  std::string resource;  // cpu (cores), memory (GiB), nvidia.com/gpu, pods
  double capacity = 0;
  double peak = 0;      // max allocated over the run
  double time_avg = 0;  // time-weighted mean allocated while pods were present
};

struct SimulationResult {
  std::string scenario;
  uint64_t seed = 0;
  size_t nodes = 0;
  size_t pods = 0;
  size_t scheduled = 0;           // pods bound at some point
  size_t pending_at_end = 0;      // never bound, still present at the end
  size_t deleted_while_pending = 0;
  int64_t attempts = 0;
  double virtual_seconds = 0;
  double wall_seconds = 0;
  // Distinct reasons of a never-bound pod's last failure, joined with "; " (e.g.
  // "Insufficient nvidia.com/gpu; node(s) had untolerated taint {a: b}") -> pods.
  std::map<std::string, size_t> pending_reasons;
  std::vector<ResourceUsage> usage;
  std::vector<PodOutcome> outcomes;  // in arrival order
  std::vector<std::string> invariant_violations;
};

// Runs the scenario. Errors: scheduler construction (bad profile/plugin), objects the
// store rejects (e.g. a pod naming an unknown PriorityClass) — the message names the object.
[[nodiscard]] bool RunSimulation(const Scenario& scenario, const SimulationOptions& opts,
                                 SimulationResult* result, std::string* error);

// Human summary (several lines) and machine-readable outputs.
std::string FormatSummary(const SimulationResult& r);
// One JSON object per pod: {"pod","node","arrival","scheduled","deleted","attempts","reason"}.
bool WriteOutcomesJsonl(const SimulationResult& r, const std::string& path, std::string* error);
// Whole result (summary figures, usage, reasons) as one JSON document.
std::string ResultJson(const SimulationResult& r);

}  // namespace phalanx::sim
