#include "replay/philly.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "gang/reservation.h"
#include "quota/queue_manager.h"
#include "replay/csv.h"
#include "replay/openb.h"
#include "scheduler/scheduler.h"

namespace phalanx::replay {

namespace {

bool ParseNumber(const std::string& s, double* v) {
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(*v) && *v >= 0;
}

}  // namespace

api::Status ParseClusterSpec(const std::string& text_in, PhillyCluster* out) {
  std::string text = text_in;
  const std::string want = "--cluster: want NODESxGPUS (e.g. 32x8), got \"" + text_in + "\"";
  const std::string want_queues =
      "--cluster: want NODESxGPUS,queues=W1:W2... (e.g. 32x8,queues=1:3), got \"" + text_in + "\"";
  out->queue_weights.clear();
  if (size_t comma = text.find(','); comma != std::string::npos) {
    const std::string opt = text.substr(comma + 1);
    text = text.substr(0, comma);
    if (opt.rfind("queues=", 0) != 0) return absl::InvalidArgumentError(want_queues);
    std::string list = opt.substr(7) + ":";
    for (size_t start = 0, colon; (colon = list.find(':', start)) != std::string::npos;
         start = colon + 1) {
      double w = 0;
      if (!ParseNumber(list.substr(start, colon - start), &w) || w <= 0) {
        return absl::InvalidArgumentError(want_queues + ": queue weights must be numbers > 0");
      }
      out->queue_weights.push_back(w);
    }
  }
  const size_t x = text.find('x');
  int64_t n = 0, g = 0;
  auto num = [](std::string_view s, int64_t* v) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
  };
  if (x == std::string::npos || !num(std::string_view(text).substr(0, x), &n) ||
      !num(std::string_view(text).substr(x + 1), &g) || n < 1 || g < 1 || n > 100000 || g > 64) {
    return absl::InvalidArgumentError(want);
  }
  out->nodes = static_cast<int32_t>(n);
  out->gpus_per_node = static_cast<int32_t>(g);
  return absl::OkStatus();
}

namespace {

// The cluster: `nodes` nodes "philly-node-NNN" of `gpus_per_node` GPUs each.
void AddNodes(const PhillyCluster& cl, sim::Scenario* out) {
  for (int32_t i = 0; i < cl.nodes; ++i) {
    api::Node n;
    char name[32];
    std::snprintf(name, sizeof(name), "philly-node-%03d", i);
    n.metadata.name = name;
    n.metadata.labels["kubernetes.io/hostname"] = name;
    n.metadata.labels[kGpuModelLabel] = cl.gpu_model;
    n.status.capacity["cpu"] = api::Quantity::FromMilli(cl.milli_cpu_per_gpu * cl.gpus_per_node);
    n.status.capacity["memory"] =
        api::Quantity::FromValue(cl.memory_gib_per_gpu * cl.gpus_per_node * (int64_t{1} << 30));
    n.status.capacity["pods"] = api::Quantity::FromValue(110);
    n.status.capacity[std::string(api::kResourceNvidiaGPU)] =
        api::Quantity::FromValue(cl.gpus_per_node);
    n.status.allocatable = n.status.capacity;
    n.status.conditions.push_back({"Ready", "True"});
    out->nodes.push_back(std::move(n));
  }
}

// Queues (KAI dialect, scheduling.run.ai/v2): no quota, unlimited, weight per queue.
void AddQueues(const PhillyCluster& cl, sim::Scenario* out) {
  for (size_t q = 0; q < cl.queue_weights.size(); ++q) {
    char w[32];
    std::snprintf(w, sizeof(w), "%g", cl.queue_weights[q]);
    const std::string name = "philly-q" + std::to_string(q);
    const std::string weight = w;
    api::Unstructured u;
    u.api_version = "scheduling.run.ai/v2";
    u.kind = "Queue";
    u.metadata.name = name;
    u.object = std::make_shared<YAML::Node>(
        YAML::Load("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " + name +
                   "}\nspec: {resources: {gpu: {quota: 0, limit: -1, overQuotaWeight: " + weight +
                   "}, cpu: {quota: 0, limit: -1, overQuotaWeight: " + weight +
                   "}, memory: {quota: 0, limit: -1, overQuotaWeight: " + weight + "}}}\n"));
    out->objects.push_back(std::move(u));
  }
}

// The job's gang: one pod per node-sized slice of its GPUs, appended to out->pods.
void AddJobPods(const PhillyCluster& cl, PhillyJob* job, sim::Scenario* out) {
  std::vector<int32_t> slices;
  for (int32_t left = job->gpus; left > 0; left -= cl.gpus_per_node) {
    slices.push_back(std::min(left, cl.gpus_per_node));
  }
  for (size_t k = 0; k < slices.size(); ++k) {
    sim::TimedPod tp;
    api::Pod& p = tp.pod;
    p.metadata.namespace_ = "philly";
    p.metadata.name = "job-" + job->id + "-" + std::to_string(k);
    p.metadata.labels["philly/job"] = job->id;
    if (!cl.queue_weights.empty()) {
      uint64_t h = 1469598103934665603ULL;  // FNV-1a of the job id
      for (unsigned char ch : job->id) h = (h ^ ch) * 1099511628211ULL;
      p.metadata.labels[quota::kKAIQueueLabel] =
          "philly-q" + std::to_string(h % cl.queue_weights.size());
    }
    p.metadata.annotations["gang.scheduling.koordinator.sh/name"] = "job-" + job->id;
    p.metadata.annotations["gang.scheduling.koordinator.sh/min-available"] =
        std::to_string(slices.size());
    // The trace's duration, so that reservations can forecast when the job ends.
    char runtime[32];
    std::snprintf(runtime, sizeof(runtime), "%.0f", std::max(1.0, std::ceil(job->duration_s)));
    p.metadata.annotations[std::string(gang::kExpectedRuntimeAnnotation)] = runtime;
    api::Container c;
    c.name = "worker";
    c.resources.requests["cpu"] = api::Quantity::FromMilli(cl.milli_cpu_per_gpu * slices[k] / 2);
    c.resources.requests["memory"] =
        api::Quantity::FromValue(cl.memory_gib_per_gpu * slices[k] / 2 * (int64_t{1} << 30));
    c.resources.requests[std::string(api::kResourceNvidiaGPU)] =
        api::Quantity::FromValue(slices[k]);
    p.spec.containers.push_back(std::move(c));
    tp.arrival = static_cast<api::Timestamp>(std::llround(job->submit_s * 1e9));
    tp.run_duration_ns = static_cast<int64_t>(std::llround(job->duration_s * 1e9));
    // The job's controller restarts an evicted job (new pods, the full duration again).
    tp.restart_on_eviction = true;
    job->pods.push_back(out->pods.size());
    out->pods.push_back(std::move(tp));
  }
}

// One job line; `gpus` must be a whole number >= 1.
api::Status ParseJob(const CsvRow& row, PhillyJob* job) {
  double gpus = 0;
  auto bad = [&](const char* c) {
    return absl::InvalidArgumentError(row.Where(c) + "invalid value \"" + row.Get(c) + "\"");
  };
  if (!ParseNumber(row.Get("submit_time"), &job->submit_s)) return bad("submit_time");
  if (!ParseNumber(row.Get("num_gpu"), &gpus) || gpus < 1 || gpus != std::floor(gpus)) {
    return bad("num_gpu");
  }
  if (!ParseNumber(row.Get("duration"), &job->duration_s)) return bad("duration");
  job->id = row.Get("job_id");
  // The id names the gang and its pods (job-ID, job-ID-K): a DNS-1123 label's characters,
  // short enough for a 63-character pod name. Else the pods could never be created or
  // grouped (an upper-case id left the gang pending).
  const auto label_char = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
  };
  if (job->id.empty() || job->id.size() > 50 || job->id.front() == '-' || job->id.back() == '-' ||
      !std::all_of(job->id.begin(), job->id.end(), label_char)) {
    return absl::InvalidArgumentError(row.Where("job_id") + "invalid value \"" + job->id +
                                      "\": want at most 50 lower-case letters, digits and '-' "
                                      "(it names the job's pods job-ID-K)");
  }
  job->gpus = gpus > INT32_MAX ? INT32_MAX : static_cast<int32_t>(gpus);
  return absl::OkStatus();
}

// Scenario pods must be sorted by arrival (the trace is; keep the order stable); the jobs'
// pod indices follow.
void SortByArrival(sim::Scenario* out, std::vector<PhillyJob>* jobs) {
  std::vector<size_t> order(out->pods.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return out->pods[a].arrival < out->pods[b].arrival; });
  std::vector<size_t> where(order.size());
  std::vector<sim::TimedPod> sorted;
  sorted.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    where[order[i]] = i;
    sorted.push_back(std::move(out->pods[order[i]]));
  }
  out->pods = std::move(sorted);
  for (auto& j : *jobs) {
    for (auto& p : j.pods) p = where[p];
  }
}

}  // namespace

api::Status LoadPhillyTrace(const std::string& path, const PhillyCluster& cl, size_t max_jobs,
                            sim::Scenario* out, std::vector<PhillyJob>* jobs, size_t* too_large) {
  Csv csv;
  if (auto s = ReadCsv(path, {"job_id", "submit_time", "num_gpu", "duration"}, &csv); !s.ok()) {
    return s;
  }
  AddNodes(cl, out);
  out->namespaces.push_back({});
  out->namespaces.back().metadata.name = "philly";
  AddQueues(cl, out);
  const int64_t cluster_gpus = static_cast<int64_t>(cl.nodes) * cl.gpus_per_node;
  *too_large = 0;
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    if (max_jobs && jobs->size() >= max_jobs) break;
    PhillyJob job;
    if (auto s = ParseJob(CsvRow{csv, i, path}, &job); !s.ok()) return s;
    if (job.gpus > cluster_gpus) {
      ++*too_large;
      continue;
    }
    AddJobPods(cl, &job, out);
    jobs->push_back(std::move(job));
  }
  SortByArrival(out, jobs);
  out->name = "philly " + path;
  return absl::OkStatus();
}

std::vector<JobOutcome> JobOutcomes(const std::vector<PhillyJob>& jobs,
                                    const sim::SimulationResult& r) {
  std::vector<JobOutcome> out;
  out.reserve(jobs.size());
  for (const auto& j : jobs) {
    JobOutcome o;
    o.id = j.id;
    o.gpus = j.gpus;
    o.submit_s = j.submit_s;
    bool all = !j.pods.empty();
    double start = 0;
    for (size_t p : j.pods) {
      if (p >= r.outcomes.size() || !r.outcomes[p].scheduled_s) {
        all = false;
        break;
      }
      start = std::max(start, *r.outcomes[p].scheduled_s);
    }
    for (size_t p : j.pods) {
      if (p < r.outcomes.size()) o.restarts = std::max(o.restarts, r.outcomes[p].restarts);
    }
    if (all) {
      o.start_s = start;
      o.finish_s = start + j.duration_s;
    }
    out.push_back(o);
  }
  // The first reservation of each job's gang ("philly/job-<id>").
  std::map<std::string, const gang::Reservation*> first;
  for (const auto& rv : r.reservation_log) first.emplace(rv.gang, &rv);
  for (auto& o : out) {
    auto it = first.find("philly/job-" + o.id);
    if (it == first.end()) continue;
    o.reserved_s = static_cast<double>(it->second->made) / 1e9;
    o.forecast_start_s = static_cast<double>(it->second->forecast_start) / 1e9;
  }
  return out;
}

api::Status WriteJobResultsCsv(const std::vector<JobOutcome>& jobs, const std::string& path) {
  std::ofstream out(path);
  if (!out) return absl::InvalidArgumentError(path + ": cannot open for writing");
  out << "job_id,submit_s,start_s,end_s,gpus,queue_s,reserved_s,forecast_start_s,restarts\n";
  auto cell = [](double v) {
    if (v < 0) return std::string();
    char b[32];
    std::snprintf(b, sizeof(b), "%.3f", v);
    return std::string(b);
  };
  for (const auto& j : jobs) {
    const bool started = j.start_s >= 0;
    out << j.id << "," << cell(j.submit_s) << "," << cell(j.start_s) << "," << cell(j.finish_s)
        << "," << j.gpus << "," << (started ? cell(j.queue_delay_s()) : "") << ","
        << cell(j.reserved_s) << "," << cell(j.forecast_start_s) << "," << j.restarts << "\n";
  }
  if (!out) return absl::InternalError(path + ": write failed");
  return absl::OkStatus();
}

SubmissionForecasts::SubmissionForecasts(const sim::Scenario& sc,
                                         const std::vector<PhillyJob>& jobs)
    : sc_(sc),
      jobs_(jobs),
      job_of_pod_(sc.pods.size(), SIZE_MAX),
      demand_(jobs.size()),
      forecast_s_(jobs.size(), -1),
      ends_(sc) {
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (size_t i : jobs[j].pods) {
      if (i >= sc.pods.size()) continue;
      job_of_pod_[i] = j;
      demand_[j].push_back(
          framework::PodInfo::Make(std::make_shared<api::Pod>(sc.pods[i].pod))->requests);
    }
  }
}

void SubmissionForecasts::Install(sim::SimulationHooks* hooks) {
  auto start = hooks->on_start;
  hooks->on_start = [this, start](scheduler::Scheduler& s) {
    if (start) start(s);
    sched_ = &s;
  };
  auto bound = hooks->on_bound;
  hooks->on_bound = [this, bound](size_t i, const api::Pod& p, const std::string& n, double t) {
    if (bound) bound(i, p, n, t);
    ends_.OnBound(i, t);
  };
  auto arrival = hooks->on_arrival;
  hooks->on_arrival = [this, arrival](size_t i, double t) {
    if (arrival) arrival(i, t);
    OnArrival(i, t);
  };
}

void SubmissionForecasts::OnArrival(size_t pod, double t) {
  if (!sched_ || pod >= job_of_pod_.size() || job_of_pod_[pod] == SIZE_MAX) return;
  const size_t j = job_of_pod_[pod];
  if (jobs_[j].pods.empty() || jobs_[j].pods.front() != pod) return;  // once, at the first pod
  // The scheduling thread is this one (binding is inline in a simulation): the snapshot
  // may be refreshed here as a scheduling cycle would.
  sched_->cache().UpdateSnapshot(&sched_->snapshot());
  const sim::StartForecast f =
      sim::ForecastStart(sched_->snapshot().List(), demand_[j], ends_.Fn(),
                         static_cast<api::Timestamp>(std::llround(t * 1e9)));
  if (f.ok) forecast_s_[j] = f.start_s;
}

ForecastAccuracy MeasureForecastAccuracy(const std::vector<JobOutcome>& outcomes,
                                         const std::vector<double>& forecast_s) {
  ForecastAccuracy a;
  a.jobs = outcomes.size();
  std::vector<double> err, waiting;
  for (size_t j = 0; j < outcomes.size() && j < forecast_s.size(); ++j) {
    if (forecast_s[j] < 0) continue;
    ++a.forecasts;
    if (outcomes[j].start_s < 0) continue;
    const double e = outcomes[j].start_s - forecast_s[j];
    err.push_back(std::abs(e));
    if (outcomes[j].start_s - outcomes[j].submit_s >= 1) waiting.push_back(std::abs(e));
    if (std::abs(e) < 1) ++a.exact;
    if (e >= 1) ++a.late;
  }
  a.measured = err.size();
  a.waiting = waiting.size();
  if (err.empty()) return a;
  auto median = [](std::vector<double>& v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  a.median_abs_error_waiting_s = median(waiting);
  a.median_abs_error_s = median(err);
  const size_t n = err.size();
  double sum = 0;
  for (double e : err) sum += e;
  a.mean_abs_error_s = sum / static_cast<double>(n);
  a.p90_abs_error_s =
      err[std::min(n - 1, static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1)];
  return a;
}

}  // namespace phalanx::replay
