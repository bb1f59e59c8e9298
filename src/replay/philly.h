// Philly-style job traces (../shared/data/philly/: philly_103959.csv from ElasticFlow,
// tiresias_60_job.csv from Tiresias): columns job_id, submit_time (s), num_gpu, duration
// (s). Each job is a gang: one pod per node-sized slice of its GPUs (G GPUs on nodes of
// P GPUs: floor(G/P) pods of P GPUs and one pod of the remainder), minMember = number of
// pods, written in the Koordinator dialect the gang manager reads
// (gang.scheduling.koordinator.sh/name, /min-available). Every pod asks for
// nvidia.com/gpu: its slice and runs for the job's duration once bound (the gang cycle
// binds all members together).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/status.h"
#include "sim/forecast.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::replay {

struct PhillyCluster {
  int32_t nodes = 32;
  int32_t gpus_per_node = 8;
  int64_t milli_cpu_per_gpu = 8000;  // node CPU = GPUs * this
  int64_t memory_gib_per_gpu = 64;
  std::string gpu_model = "P100";
  // Split the jobs into KAI queues philly-q0, philly-q1, ... (no quota, unlimited, these
  // over-quota weights). The trace has one virtual cluster and no user column, so a job
  // goes to queue FNV-1a(job_id) mod N (a stand-in for a user hash). Empty: no queues.
  std::vector<double> queue_weights;
};

// "32x8" -> 32 nodes of 8 GPUs; "32x8,queues=1:3" also splits the jobs into two queues
// with over-quota weights 1 and 3. Errors: "--cluster: want NODESxGPUS (e.g. 32x8), got
// ..." (or "... NODESxGPUS,queues=W1:W2... ..." for a bad queue list).
api::Status ParseClusterSpec(const std::string& text, PhillyCluster* out);

struct PhillyJob {
  std::string id;
  double submit_s = 0;
  int32_t gpus = 0;
  double duration_s = 0;
  std::vector<size_t> pods;  // indices into Scenario::pods
};

// Loads the job CSV into nodes and pods of `out` (namespace "philly", pods
// "job-<id>-<k>", gang "job-<id>"). Jobs asking more GPUs than the cluster has are left out
// and counted in *too_large. `max_jobs` 0 = all. Errors: "FILE:LINE: column X: ..." (the whole file
// is read, so a malformed line after the first `max_jobs` jobs is an error too).
api::Status LoadPhillyTrace(const std::string& path, const PhillyCluster& cluster, size_t max_jobs,
                            sim::Scenario* out, std::vector<PhillyJob>* jobs, size_t* too_large);

// Per-job outcome of a run.
struct JobOutcome {
  std::string id;
  int32_t gpus = 0;
  double submit_s = 0;
  double start_s = -1;   // when the last member was bound; -1 never started
  double finish_s = -1;  // start + duration
  // The job's first gang reservation (GangReservation): when it was made and its forecast
  // start (s); -1 when it had none.
  double reserved_s = -1;
  double forecast_start_s = -1;
  // Times the job was evicted and restarted by its controller (starvation eviction,
  // preemption); start_s is then its last start, and JCT still counts from submit_s.
  int restarts = 0;
  double queue_delay_s() const { return start_s - submit_s; }
  double jct_s() const { return finish_s - submit_s; }
};
std::vector<JobOutcome> JobOutcomes(const std::vector<PhillyJob>& jobs,
                                    const sim::SimulationResult& r);

// One CSV line per job: job_id,submit_s,start_s,end_s,gpus,queue_s,reserved_s,
// forecast_start_s,restarts (empty cells for a job that never started / had no reservation).
// Errors: "PATH: cannot open for writing", "PATH: write failed".
api::Status WriteJobResultsCsv(const std::vector<JobOutcome>& jobs, const std::string& path);

// Start forecasts made at each job's submission, to measure how good
// `phalanx explain`'s forecast is: when the first pod of a job is created, the forecast is
// sim::ForecastStart for the job's members over the scheduler's snapshot at that moment
// (running pods end at their bind time + the expected runtime the trace gives), i.e. what
// `explain` would print for the job right after submission. Install before the run; the
// hooks already in *hooks are still called, first.
class SubmissionForecasts {
 public:
  SubmissionForecasts(const sim::Scenario& sc, const std::vector<PhillyJob>& jobs);
  void Install(sim::SimulationHooks* hooks);
  // Per job (in `jobs` order): the forecast start in virtual seconds, -1 when none
  // (the job does not fit the empty cluster, or pods of unknown runtime hold the room).
  const std::vector<double>& forecast_s() const { return forecast_s_; }

 private:
  void OnArrival(size_t pod, double t);
  const sim::Scenario& sc_;
  const std::vector<PhillyJob>& jobs_;
  std::vector<size_t> job_of_pod_;                  // job index per scenario pod (SIZE_MAX: none)
  std::vector<std::vector<api::Resource>> demand_;  // per job, its members' requests
  std::vector<double> forecast_s_;
  sim::ExpectedEnds ends_;
  scheduler::Scheduler* sched_ = nullptr;
};

// Forecast accuracy over the jobs that had a forecast at submission and started:
// |forecast - actual start| in seconds.
struct ForecastAccuracy {
  size_t jobs = 0;       // jobs in the trace
  size_t forecasts = 0;  // jobs with a forecast at submission
  size_t measured = 0;   // of those, jobs that started (errors below are over these)
  size_t exact = 0;      // error < 1 s
  size_t late = 0;       // the job started later than forecast
  double median_abs_error_s = 0, mean_abs_error_s = 0, p90_abs_error_s = 0;
  // Over the measured jobs that did not start at their submission (they waited): the
  // forecast is exact by construction for a job that fits at once.
  size_t waiting = 0;
  double median_abs_error_waiting_s = 0;
};
ForecastAccuracy MeasureForecastAccuracy(const std::vector<JobOutcome>& outcomes,
                                         const std::vector<double>& forecast_s);

}  // namespace phalanx::replay
