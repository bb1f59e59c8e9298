// The FGD paper's replay methodology on the openb trace (Weng et al., USENIX ATC 2023,
// section 5; the artifact's pkg/simulator/simulator.go and experiments/analysis/*.py):
//   - the GPU nodes only;
//   - the trace's pods sorted by name and shuffled with the seed;
//   - pods drawn with replacement from the trace appended until the requested GPU milli
//     would exceed `target_load` (1.3) times the cluster's GPU capacity;
//   - one pod at a time, no departures: a pod that does not fit when it arrives is dropped;
//   - after every arrival: arrived GPU milli (all pods so far), allocated GPU milli, and the
//     cluster's fragmentation with respect to the trace's pod shapes (frag.h);
//   - curves per integer load step r = round(arrived / capacity * 100): the mean of the
//     samples at r (or at r +- 1 when none), as merge_alloc_discrete_0920.py does.
// Headline figure: unallocated GPU share at 100 % load = 100 - allocation % at r = 100.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/status.h"
#include "gpu/frag.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::replay {

struct PaperOptions {
  double target_load = 1.3;  // requested GPU milli / capacity at which arrivals stop
  size_t max_nodes = 0;      // 0 = every GPU node; else the first N (tests, quick looks)
};

// Builds the replay from openb nodes (any list; nodes without GPUs are dropped) and the
// trace's pods (loaded with OpenbOptions{timed=false, gpu_sharing=true}). Pods arrive one
// per virtual second. Errors: no GPU nodes, no GPU pods.
api::Status BuildPaperScenario(const std::vector<api::Node>& nodes,
                               const std::vector<sim::TimedPod>& trace_pods, uint64_t seed,
                               const PaperOptions& opts, sim::Scenario* out);

// FGD's target workload for a trace: the popular shapes of all its pods (GetTypicalPods).
std::shared_ptr<const gpu::TargetWorkload> TraceWorkload(const std::vector<sim::TimedPod>& pods);

// One sample per arrival, in % of the cluster's GPU capacity (frag_ratio: % of idle GPU
// milli that is fragmented).
struct LoadPoint {
  double arrived_pct = 0;
  double alloc_pct = 0;
  double frag_ratio_pct = 0;
  double frag_pct = 0;  // fragmented GPU milli in % of capacity
};

// The discrete curves (index = load step in %, 0..max); NaN where no sample is near.
struct LoadCurve {
  std::vector<double> alloc_pct;
  std::vector<double> frag_ratio_pct;
  std::vector<double> frag_pct;
};
LoadCurve Discretize(const std::vector<LoadPoint>& points, int max_step = 130);

// GPU allocation and fragmentation over time (any trace mode).
struct FragSample {
  double t = 0;  // virtual seconds
  double alloc_pct = 0;
  double frag_ratio_pct = 0;
};

// Tracks device usage per node from bindings and deletions (devices from the profile's
// GpuContext, best fit when unknown), hands the target workload to the profile's FGD, and
// records a LoadPoint after every arrival and a FragSample whenever the state changed.
class PaperMetrics {
 public:
  PaperMetrics(const sim::Scenario& sc, std::shared_ptr<const gpu::TargetWorkload> w);
  ~PaperMetrics();
  // Hooks to pass in SimulationOptions (they reference this object).
  sim::SimulationHooks Hooks();
  const std::vector<LoadPoint>& points() const { return points_; }
  const std::vector<FragSample>& samples() const { return samples_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<LoadPoint> points_;
  std::vector<FragSample> samples_;
};

}  // namespace phalanx::replay
