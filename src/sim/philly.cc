#include "sim/philly.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>

#include <yaml-cpp/yaml.h>

#include "quota/manager.h"

namespace phalanx::sim {

namespace {

bool ParseNumber(const std::string& s, double* v) {
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(*v) && *v >= 0;
}

}  // namespace

bool ParseClusterSpec(const std::string& text_in, PhillyCluster* out, std::string* error) {
  std::string text = text_in;
  const std::string want = "--cluster: want NODESxGPUS (e.g. 32x8), got \"" + text_in + "\"";
  const std::string want_queues =
      "--cluster: want NODESxGPUS,queues=W1:W2... (e.g. 32x8,queues=1:3), got \"" + text_in + "\"";
  out->queue_weights.clear();
  if (size_t comma = text.find(','); comma != std::string::npos) {
    const std::string opt = text.substr(comma + 1);
    text = text.substr(0, comma);
    if (opt.rfind("queues=", 0) != 0) {
      *error = want_queues;
      return false;
    }
    std::string list = opt.substr(7) + ":";
    for (size_t start = 0, colon; (colon = list.find(':', start)) != std::string::npos;
         start = colon + 1) {
      double w = 0;
      if (!ParseNumber(list.substr(start, colon - start), &w) || w <= 0) {
        *error = want_queues + ": queue weights must be numbers > 0";
        return false;
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
    *error = want;
    return false;
  }
  out->nodes = static_cast<int32_t>(n);
  out->gpus_per_node = static_cast<int32_t>(g);
  return true;
}

bool LoadPhillyTrace(const std::string& path, const PhillyCluster& cl, size_t max_jobs,
                     Scenario* out, std::vector<PhillyJob>* jobs, size_t* too_large,
                     std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot read file";
    return false;
  }
  std::string line;
  if (!std::getline(in, line)) {
    *error = path + ": empty file";
    return false;
  }
  std::map<std::string, size_t> col;
  auto header = SplitCsv(line);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* c : {"job_id", "submit_time", "num_gpu", "duration"}) {
    if (!col.count(c)) {
      *error = path + ":1: missing column \"" + c + "\"";
      return false;
    }
  }
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
  out->namespaces.push_back({});
  out->namespaces.back().metadata.name = "philly";
  // Queues (KAI dialect, scheduling.run.ai/v2): no quota, unlimited, weight per queue.
  for (size_t q = 0; q < cl.queue_weights.size(); ++q) {
    char w[32];
    std::snprintf(w, sizeof(w), "%g", cl.queue_weights[q]);
    const std::string name = "philly-q" + std::to_string(q);
    const std::string weight = w;
    api::Unstructured u;
    u.api_version = "scheduling.run.ai/v2";
    u.kind = "Queue";
    u.metadata.name = name;
    u.object = std::make_shared<YAML::Node>(YAML::Load(
        "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " + name +
        "}\nspec: {resources: {gpu: {quota: 0, limit: -1, overQuotaWeight: " + weight +
        "}, cpu: {quota: 0, limit: -1, overQuotaWeight: " + weight +
        "}, memory: {quota: 0, limit: -1, overQuotaWeight: " + weight + "}}}\n"));
    out->objects.push_back(std::move(u));
  }
  const int64_t cluster_gpus = static_cast<int64_t>(cl.nodes) * cl.gpus_per_node;
  *too_large = 0;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    if (max_jobs && jobs->size() >= max_jobs) break;
    auto f = SplitCsv(line);
    if (f.size() != header.size()) {
      *error = path + ":" + std::to_string(line_no) + ": expected " +
               std::to_string(header.size()) + " columns, got " + std::to_string(f.size());
      return false;
    }
    double submit = 0, gpus = 0, duration = 0;
    auto bad = [&](const char* c) {
      *error = path + ":" + std::to_string(line_no) + ": column " + c + ": invalid value \"" +
               f[col[c]] + "\"";
      return false;
    };
    if (!ParseNumber(f[col["submit_time"]], &submit)) return bad("submit_time");
    if (!ParseNumber(f[col["num_gpu"]], &gpus) || gpus < 1 || gpus != std::floor(gpus)) {
      return bad("num_gpu");
    }
    if (!ParseNumber(f[col["duration"]], &duration)) return bad("duration");
    if (static_cast<int64_t>(gpus) > cluster_gpus) {
      ++*too_large;
      continue;
    }
    PhillyJob job;
    job.id = f[col["job_id"]];
    job.submit_s = submit;
    job.gpus = static_cast<int32_t>(gpus);
    job.duration_s = duration;
    std::vector<int32_t> slices;
    for (int32_t left = job.gpus; left > 0; left -= cl.gpus_per_node) {
      slices.push_back(std::min(left, cl.gpus_per_node));
    }
    for (size_t k = 0; k < slices.size(); ++k) {
      TimedPod tp;
      api::Pod& p = tp.pod;
      p.metadata.namespace_ = "philly";
      p.metadata.name = "job-" + job.id + "-" + std::to_string(k);
      p.metadata.labels["philly/job"] = job.id;
      if (!cl.queue_weights.empty()) {
        uint64_t h = 1469598103934665603ULL;  // FNV-1a of the job id
        for (unsigned char ch : job.id) h = (h ^ ch) * 1099511628211ULL;
        p.metadata.labels[quota::kKAIQueueLabel] =
            "philly-q" + std::to_string(h % cl.queue_weights.size());
      }
      p.metadata.annotations["gang.scheduling.koordinator.sh/name"] = "job-" + job.id;
      p.metadata.annotations["gang.scheduling.koordinator.sh/min-available"] =
          std::to_string(slices.size());
      api::Container c;
      c.name = "worker";
      c.resources.requests["cpu"] = api::Quantity::FromMilli(cl.milli_cpu_per_gpu * slices[k] / 2);
      c.resources.requests["memory"] =
          api::Quantity::FromValue(cl.memory_gib_per_gpu * slices[k] / 2 * (int64_t{1} << 30));
      c.resources.requests[std::string(api::kResourceNvidiaGPU)] =
          api::Quantity::FromValue(slices[k]);
      p.spec.containers.push_back(std::move(c));
      tp.arrival = static_cast<api::Timestamp>(std::llround(submit * 1e9));
      tp.run_duration_ns = static_cast<int64_t>(std::llround(duration * 1e9));
      job.pods.push_back(out->pods.size());
      out->pods.push_back(std::move(tp));
    }
    jobs->push_back(std::move(job));
  }
  // Scenario pods must be sorted by arrival (the trace is; keep the order stable).
  std::vector<size_t> order(out->pods.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return out->pods[a].arrival < out->pods[b].arrival; });
  std::vector<size_t> where(order.size());
  std::vector<TimedPod> sorted;
  sorted.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    where[order[i]] = i;
    sorted.push_back(std::move(out->pods[order[i]]));
  }
  out->pods = std::move(sorted);
  for (auto& j : *jobs) {
    for (auto& p : j.pods) p = where[p];
  }
  out->name = "philly " + path;
  return true;
}

std::vector<JobOutcome> JobOutcomes(const std::vector<PhillyJob>& jobs, const SimulationResult& r) {
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
    if (all) {
      o.start_s = start;
      o.finish_s = start + j.duration_s;
    }
    out.push_back(o);
  }
  return out;
}

}  // namespace phalanx::sim
