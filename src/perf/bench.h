// In-process scheduling throughput on the scheduler_perf SchedulingBasic shape
// (upstream test/integration/scheduler_perf config: node-default.yaml = 4 cpu, 32Gi,
// 110 pods; pod-default.yaml = 100m cpu, 500Mi): `nodes` nodes, `init_pods` pods bound
// first (not measured), then `measured_pods` pods timed from creation to the last bind.
// The embedded Store stands in for the API server, so this measures the scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/status.h"
#include "api/unstructured.h"
#include "framework/registry.h"

namespace phalanx::perf {

struct BasicOptions {
  int nodes = 5000;
  int init_pods = 1000;
  int measured_pods = 10000;
  int binding_workers = 0;  // 0: inline binding
  // Gang workload instead of single pods: `gangs` Coscheduling PodGroups (minMember =
  // gang_size) of `gang_size` pods each; measured pods = gangs * gang_size.
  int gangs = 0;
  int gang_size = 0;
  int parallelism = 0;                 // 0: from config (default 16)
  bool opportunistic_batching = true;  // SchedulerOptions::opportunistic_batching
  uint64_t seed = 1;
  std::string config_path;
  std::string json_path;
  // Plugins available to the profile; unset: the in-tree registry.
  std::optional<framework::Registry> registry;
};

struct BasicResult {
  BasicOptions opts;
  double seconds = 0;          // wall time for the measured pods
  double pods_per_second = 0;  // measured_pods / seconds
  int64_t scheduled = 0;
  int64_t attempts = 0;
  double per_pod_us = 0;
  double largest_cycle_ms = 0;  // longest single ScheduleOne call (a whole PodGroup cycle)
  long peak_rss_kib = 0;
};

// Errors: the configuration (file, field), scheduler construction, or "only N of M
// measured pods were scheduled" (*result is filled then too).
api::Status RunBasic(const BasicOptions& opts, BasicResult* result);
std::string FormatBasic(const BasicResult& r);

// A Coscheduling PodGroup (scheduling.x-k8s.io/v1alpha1) `name` in namespace default with
// spec.minMember = `min_member`, as the gang workloads create them.
api::Unstructured CoschedulingPodGroup(const std::string& name, int min_member);

}  // namespace phalanx::perf
