// `phalanx bench WORKLOAD.yaml`: runs scheduler_perf workloads (perf_workload.h) in-process
// and measures them as upstream's scheduler_perf does (test/integration/scheduler_perf
// util.go: throughputCollector, metricsCollector).
//
// Each selected workload gets a fresh embedded Store (the API server stand-in) and a fresh
// Scheduler built from --config (default: the default profile), binding inline. Ops run in
// order on the scheduling thread:
//   createNodes / createPods / createPodGroups / createNamespaces create objects in the
//   Store; createPods then runs scheduling cycles until the namespace's scheduled pods
//   reach the op's count, as upstream's waitUntilPodsScheduledInNamespace (so setup pods
//   that cannot be placed, like MixedSchedulingBasePod's pod-affinity pods on nodes without
//   the zone label, stay pending as they do upstream); an op with collectMetrics waits for
//   its own pods; skipWaitToCompletion pods are left for later ops; barrier runs cycles
//   until the named namespaces (default: all skipped-wait ones) have as many scheduled
//   pods as their skipWaitToCompletion ops created; sleep keeps scheduling (and churning) for the
//   duration; churn creates / deletes objects from its templates every intervalMilliseconds of wall
//   time while later ops run. As in later upstream there is no implicit barrier at the end: pods
//   still pending when the last op is done (e.g. the Unschedulable workloads' large pods) are
//   reported as pending, not waited for.
//
// Time: the scheduler runs on a virtual clock that follows wall time while the scheduler
// works (backoffQ is flushed every 10 ms of it, as upstream flushes every second), and
// jumps ahead when the scheduler is idle (activeQ empty) to its next wake-up (backoff
// expiry, unschedulable flush, Permit deadline), so idle backoff waits cost no wall time
// while busy periods see backoffs expire as upstream does (Preemption depends on it:
// preemptors retry their nominated nodes while later ones are still being processed). A
// wait gives up when 10 minutes of that virtual time pass without a binding (upstream's
// 10-minute timeout). All reported durations are wall time (steady clock).
//
// Measurement (the createPods / createPodGroups ops with collectMetrics: true):
//   seconds        from the start of the op's pod creation to its last binding;
//   throughput     average = measured pods / seconds; p50 / p90 / p99 over pods bound
//                  per sampling window, scaled to pods/s. Upstream samples every 1 s; an
//                  in-process op lasts milliseconds, so the window is seconds / 50 clamped
//                  to [1 ms, 1 s] (or --throughput-window-ms); percentiles use upstream's
//                  index ceil(n * p / 100) - 1 over the sorted samples;
//   extension_points  per-call latency of each extension point during the op (Filter:
//                  one sample per scheduling cycle over all nodes, as upstream), exact
//                  percentiles of the recorded samples (upstream: histogram buckets);
//   peak_rss_kib   the process's peak resident set during the workload (VmHWM, reset
//                  before each workload through /proc/self/clear_refs).
// Several collectMetrics ops in one workload are pooled into one result.
//
// Storage (createNodes nodeAllocatableStrategy, createPods persistentVolume(Claim)
// TemplatePath): objects as upstream creates them (perf_objects.h) — a CSINode per node with
// the strategy's driver counts and migrated-plugins annotation; per pod a PV pre-bound to
// its claim (claimRef, phase Bound) and a claim (phase Bound) that upstream's fake PV
// controller binds (spec.volumeName, bind-completed) — so VolumeBinding and the volume
// limits plugins see what upstream's scheduler sees. These writes are part of the measured
// op, as upstream's API calls are. featureGates are noted and not applied (Phalanx has no
// feature gates).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/status.h"
#include "framework/registry.h"
#include "perf/perf_workload.h"

namespace phalanx::perf {

struct PerfOptions {
  std::string workload_file;
  std::string workload_selector;                // --workload CASE[/WORKLOAD]; "" = all
  std::string label_filter;                     // --label; "" = all
  std::string config_path;                      // KubeSchedulerConfiguration; "" = defaults
  std::string json_path;                        // write the results as JSON ("" = no)
  std::optional<framework::Registry> registry;  // unset: in-tree plugins
  uint64_t seed = 1;
  int parallelism = 0;  // 0: from the configuration
  // SchedulerOptions::opportunistic_batching (false: every plain pod in full, for
  // comparisons; `phalanx bench --no-opportunistic-batching`).
  bool opportunistic_batching = true;
  double throughput_window_ms = 0;  // 0: automatic (see above)
  // A workload that cannot run (an op fails) is recorded with its error and the next one
  // runs (`phalanx bench --keep-going`); else the first error ends the run.
  bool keep_going = false;
  std::function<void(const std::string&)> log;  // progress lines; may be empty
};

struct ThroughputSummary {  // pods/s
  double average = 0;
  double p50 = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
};

struct ExtensionPointSummary {  // microseconds per call
  int64_t count = 0;
  double average_us = 0;
  double p50_us = 0;
  double p90_us = 0;
  double p99_us = 0;
};

struct PerfResult {
  std::string name;           // "Case/Workload"
  int64_t measured_pods = 0;  // pods of the collectMetrics ops
  int64_t scheduled_measured = 0;
  double seconds = 0;
  // Process CPU time (all threads) over the same interval: on a shared machine,
  // scheduled_measured / cpu_seconds ("pods/cpu-s") is the figure that load does not skew.
  double cpu_seconds = 0;
  ThroughputSummary throughput;
  double window_ms = 0;
  int64_t samples = 0;
  long peak_rss_kib = 0;
  std::map<std::string, ExtensionPointSummary> extension_points;
  int64_t pending_at_end = 0;  // pods still unscheduled when the workload ended
  std::vector<std::string> notes;
  // The file's threshold for the workload (0: none) against the measured figure
  // (ApplyThreshold).
  std::string topic;                // the workload file's directory ("misc", "dra", ...)
  double threshold = 0;             // pods/s (SchedulingThroughput)
  std::string threshold_metric;     // "SchedulingThroughput Average"
  bool threshold_compared = false;  // a figure was compared (the metric is measured)
  double threshold_figure = 0;      // the figure compared: the metric's data bucket, pods/s
  std::string threshold_verdict;    // "pass: Average 812.0 > threshold 270.0", "BELOW: ..."
  bool threshold_passed = false;
  std::string error;  // with keep_going: why the workload could not run
};

// Loads opts.workload_file, runs the selected workloads and fills *results. Errors: a file error, a
// scheduler construction error, or a workload whose pods could not all be scheduled ("<file>:
// Case/Workload: op 2 (createPods): only 990 of 1000 pods scheduled ..."); results of earlier
// workloads stay in *results. An empty selection is an error naming the filters.
api::Status RunPerfWorkloads(const PerfOptions& opts, std::vector<PerfResult>* results);

// Runs one workload (params already valid for it). Same errors as above.
api::Status RunPerfWorkload(const PerfConfig& cfg, const PerfTestCase& tc, const PerfWorkload& w,
                            const PerfOptions& opts, PerfResult* result);

// The threshold check of upstream's scheduler_perf (scheduler_perf.go applyThreshold and
// valueWithinThreshold): with result->threshold > 0, the figure of `metric` (its dataBucket
// of SchedulingThroughput: Average, Perc50, Perc90, Perc95 or Perc99 of result->throughput,
// pods/s) must be strictly above the threshold, or strictly below it with expectLower;
// otherwise upstream fails the workload. Sets threshold_metric, threshold_compared,
// threshold_figure, threshold_verdict ("pass: Average 812.0 > threshold 270.0", "BELOW:
// Average 100.0 <= threshold 270.0", "ABOVE: ..." for expectLower) and threshold_passed.
// A metric other than SchedulingThroughput is not measured here: "not compared: ...".
// result->threshold 0: nothing is compared (upstream: "the threshold check is disabled").
void ApplyThreshold(const ThresholdMetric& metric, PerfResult* result);

// The workloads whose compared figure missed the threshold ("Case/Workload: BELOW: ...");
// `phalanx bench` fails with them, as upstream's benchmark does.
std::vector<std::string> ThresholdFailures(const std::vector<PerfResult>& results);

// The human table: one row per workload (pods, seconds, throughput average / p50 / p90 /
// p99, Filter and Score p50 / p99, peak RSS, and the threshold check: the file's threshold,
// the figure compared and "pass", "below" / "above" (missed), "n/c" (not compared) or "-"
// (no threshold)) and the notes below it.
std::string FormatPerfTable(const std::vector<PerfResult>& results);

// {"results":[{"name","measured_pods","seconds","throughput":
// {"average","p50","p90","p99"},"peak_rss_kib","extension_points":{"Filter":{"count",
// "p50_us","p99_us",...}}, ...}]}: the contract scripts/scheduler-perf.sh parses.
nlohmann::json PerfResultsJson(const std::vector<PerfResult>& results);

// Peak RSS support (Linux): resets the high-water mark (after returning freed heap to the
// OS) and reads it back, in KiB. Reset returns false when /proc/self/clear_refs is not
// writable; PeakRssKiB then falls back to getrusage's process-lifetime maximum.
bool ResetPeakRss();
long PeakRssKiB();

}  // namespace phalanx::perf
