#include "replay/experiment.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "config/config.h"
#include "replay/dra_gpus.h"
#include "replay/openb.h"
#include "sim/simulation.h"

namespace phalanx::replay {

using nlohmann::json;

namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Rounded to 2 decimals (the report prints 2); NaN / inf become null.
json R2(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::round(v * 100.0) / 100.0;
}

double Median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

double Mean(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Indices of at most `max` evenly spread elements of [0, n), first and last included.
std::vector<size_t> Spread(size_t n, size_t max) {
  std::vector<size_t> idx;
  if (n == 0) return idx;
  if (n <= max) {
    for (size_t i = 0; i < n; ++i) idx.push_back(i);
    return idx;
  }
  for (size_t k = 0; k < max; ++k) {
    idx.push_back(static_cast<size_t>(std::llround(
        static_cast<double>(k) * static_cast<double>(n - 1) / static_cast<double>(max - 1))));
  }
  return idx;
}

// Distribution summary and CDF (<= 200 points) of delays in seconds.
json DelayJson(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  json j;
  j["count"] = v.size();
  j["mean_s"] = R2(Mean(v));
  j["p50_s"] = R2(Quantile(v, 0.5));
  j["p95_s"] = R2(Quantile(v, 0.95));
  j["max_s"] = R2(v.empty() ? std::numeric_limits<double>::quiet_NaN() : v.back());
  json xs = json::array(), ps = json::array();
  for (size_t i : Spread(v.size(), 200)) {
    xs.push_back(R2(v[i]));
    ps.push_back(R2(100.0 * static_cast<double>(i + 1) / static_cast<double>(v.size())));
  }
  j["cdf"] = {{"x_s", xs}, {"p_pct", ps}};
  return j;
}

struct RunRecord {
  std::string policy;
  uint64_t seed = 0;
  json j;
};

}  // namespace

std::optional<PolicySpec> LookupPolicy(const std::string& name) {
  static const std::map<std::string, PolicySpec> kPolicies = {
      {"fgd", {"FGD", "FGDScore"}},
      {"lookahead", {"FragLookahead", "FragLookaheadScore"}},
      {"fraglookahead", {"FragLookahead", "FragLookaheadScore"}},
      {"bestfit", {"BestFit", "BestFitScore"}},
      {"dotproduct", {"DotProduct", "DotProductScore"}},
      {"dotprod", {"DotProduct", "DotProductScore"}},
      {"packing", {"GpuPacking", "GpuPackingScore"}},
      {"gpupacking", {"GpuPacking", "GpuPackingScore"}},
      {"clustering", {"GpuClustering", "GpuClusteringScore"}},
      {"gpuclustering", {"GpuClustering", "GpuClusteringScore"}},
      {"random", {"Random", "RandomScore"}},
      {"default", {"Default", ""}},
  };
  auto it = kPolicies.find(Lower(name));
  if (it == kPolicies.end()) return std::nullopt;
  return it->second;
}

api::Status ParsePolicies(const std::string& list, std::vector<PolicySpec>* out) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(pos, comma - pos);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) {
      auto p = LookupPolicy(name);
      if (!p) {
        return absl::InvalidArgumentError(
            "--policies: unknown policy \"" + name +
            "\" (known: fgd, lookahead, bestfit, dotproduct, packing, clustering, random, "
            "default)");
      }
      out->push_back(*p);
    }
    pos = comma + 1;
  }
  if (out->empty()) return absl::InvalidArgumentError("--policies: empty list");
  return absl::OkStatus();
}

api::Status ParseSeeds(const std::string& text, std::vector<uint64_t>* out) {
  auto num = [](std::string_view s, uint64_t* v) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(pos, comma - pos);
    const size_t dash = part.find('-');
    uint64_t a = 0, b = 0;
    if (dash == std::string::npos
            ? !num(part, &a)
            : (!num(std::string_view(part).substr(0, dash), &a) ||
               !num(std::string_view(part).substr(dash + 1), &b) || b < a || b - a > 100000)) {
      return absl::InvalidArgumentError("--seeds: want N, A-B or a comma-separated list, got \"" +
                                        part + "\"");
    }
    if (dash == std::string::npos) b = a;
    for (uint64_t s = a; s <= b; ++s) out->push_back(s);
    pos = comma + 1;
  }
  return absl::OkStatus();
}

api::Status PolicyConfiguration(const PolicySpec& p, bool node_order_ties,
                                config::KubeSchedulerConfiguration* out) {
  std::string y =
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n";
  if (!p.score_plugin.empty()) y += "percentageOfNodesToScore: 100\n";
  y += "profiles:\n"
       "- schedulerName: default-scheduler\n"
       "  plugins:\n"
       // GpuShare on every point it extends but PreBind (the simulator needs no
       // gpu-index annotation), reserving before DynamicResources: with --gpu-model dra the
       // claim allocation takes the devices GpuShare chose (framework/device_choice.h).
       // Upstream's order puts the plugins of a point that are also in multiPoint first,
       // in the point's order.
       "    multiPoint: {enabled: [{name: GpuShare}]}\n"
       "    preBind: {disabled: [{name: GpuShare}]}\n"
       "    reserve: {enabled: [{name: GpuShare}, {name: DynamicResources}]}\n";
  if (!p.score_plugin.empty()) {
    y += "    preScore: {disabled: [{name: \"*\"}], enabled: [{name: " + p.score_plugin + "}]}\n";
    y += "    score: {disabled: [{name: \"*\"}], enabled: [{name: " + p.score_plugin +
         ", weight: 1}]}\n";
    if (node_order_ties) {
      y += "  pluginConfig:\n  - name: " + p.score_plugin + "\n    args: {tieBreak: NodeOrder}\n";
    }
  }
  auto cfg = config::DecodeConfiguration(y, "policy " + p.display);
  if (!cfg.ok()) return cfg.status();
  *out = *std::move(cfg);
  return absl::OkStatus();
}

std::optional<double> PaperUnallocatedAt100(const std::string& pods_csv,
                                            const std::string& display) {
  // Medians over seeds 42-51, in the order Random, DotProduct, GpuClustering, GpuPacking,
  // BestFit, FGD (analysis_allo_discrete.csv; 100 - the "100" column).
  static const std::map<std::string, std::array<double, 6>> kPaper = {
      {"openb_pod_list_cpu050", {11.015, 6.94, 6.52, 6.465, 6.42, 5.005}},
      {"openb_pod_list_cpu100", {12.56, 8.22, 7.46, 7.445, 6.72, 4.79}},
      {"openb_pod_list_cpu200", {17.005, 12.24, 10.245, 9.87, 7.855, 5.18}},
      {"openb_pod_list_cpu250", {20.06, 16.22, 12.48, 11.92, 8.705, 6.8}},
      {"openb_pod_list_default", {13.75, 9.445, 8.42, 8.195, 7.09, 4.77}},
      {"openb_pod_list_gpushare100", {21.075, 17.93, 17.7, 17.78, 15.4, 13.36}},
      {"openb_pod_list_gpushare40", {15.04, 10.665, 10.18, 10.195, 8.53, 6.045}},
      {"openb_pod_list_gpushare60", {17.215, 13.17, 13.03, 12.75, 10.915, 8.705}},
      {"openb_pod_list_gpushare80", {19.355, 15.89, 15.455, 15.28, 13.265, 10.91}},
      {"openb_pod_list_gpuspec10", {13.685, 9.75, 8.055, 7.765, 6.885, 5.3}},
      {"openb_pod_list_gpuspec20", {13.905, 11.68, 10.87, 10.645, 11.535, 5.31}},
      {"openb_pod_list_gpuspec25", {14.59, 14.55, 13.59, 13.22, 14.3, 6.08}},
      {"openb_pod_list_gpuspec33", {16.19, 20.17, 18.96, 17.665, 19.585, 12.12}},
      {"openb_pod_list_multigpu20", {13.165, 8.185, 6.615, 6.49, 6.27, 4.47}},
      {"openb_pod_list_multigpu30", {13.43, 6.985, 5.455, 5.23, 5.47, 3.61}},
      {"openb_pod_list_multigpu40", {14.765, 5.905, 4.535, 4.435, 4.91, 3.105}},
      {"openb_pod_list_multigpu50", {18.61, 5.245, 4.355, 3.93, 4.425, 2.905}},
  };
  static const std::map<std::string, size_t> kColumn = {
      {"Random", 0},     {"DotProduct", 1}, {"GpuClustering", 2},
      {"GpuPacking", 3}, {"BestFit", 4},    {"FGD", 5},
  };
  const auto row = kPaper.find(std::filesystem::path(pods_csv).stem().string());
  const auto col = kColumn.find(display);
  if (row == kPaper.end() || col == kColumn.end()) return std::nullopt;
  return row->second[col->second];
}

namespace {

// A trace loaded once for every (policy, seed) run.
struct Trace {
  sim::Scenario base;
  std::vector<sim::TimedPod> trace_pods;  // openb-paper: the trace before shuffling
  std::vector<PhillyJob> jobs;            // philly
  size_t too_large = 0;                   // philly: jobs left out
};

api::Status LoadTrace(const ExperimentOptions& opts, Trace* t) {
  const std::string& mode = opts.trace;
  if (opts.gpu_model != "extended" && opts.gpu_model != "dra") {
    return absl::InvalidArgumentError("--gpu-model: want extended or dra, got \"" + opts.gpu_model +
                                      "\"");
  }
  if (opts.gpu_model == "dra" && mode != "openb" && mode != "openb-paper") {
    return absl::InvalidArgumentError("--gpu-model dra is for --trace openb and openb-paper");
  }
  if (mode == "openb-paper" || mode == "openb") {
    if (opts.nodes_csv.empty() || opts.pods_csv.empty()) {
      return absl::InvalidArgumentError("--trace " + mode + " needs --nodes and --pods");
    }
    if (auto s = LoadOpenbNodes(opts.nodes_csv, &t->base.nodes); !s.ok()) return s;
    OpenbOptions oo;
    oo.max_pods = opts.max_pods;
    oo.timed = mode == "openb" && !opts.untimed;
    oo.gpu_sharing = mode == "openb-paper" || opts.gpu_sharing;
    auto* pods = mode == "openb" ? &t->base.pods : &t->trace_pods;
    if (auto s = LoadOpenbPods(opts.pods_csv, oo, pods); !s.ok()) return s;
    t->base.name = mode + " " + opts.pods_csv;
    return absl::OkStatus();
  }
  if (mode == "philly") {
    const std::string& path = opts.jobs_csv.empty() ? opts.pods_csv : opts.jobs_csv;
    if (path.empty())
      return absl::InvalidArgumentError("--trace philly needs --jobs (a Philly job CSV)");
    return LoadPhillyTrace(path, opts.cluster, opts.max_pods, &t->base, &t->jobs, &t->too_large);
  }
  if (mode.empty()) return sim::LoadManifestScenario(opts.scenario_path, &t->base);
  return absl::InvalidArgumentError("unknown trace \"" + mode + "\"");
}

// The policies to run: opts.policies, or {"config"} for the configuration as given. GPU
// shares need GpuShare: without --policies and without a configuration file, the default
// scorers plus GpuShare; a given configuration must enable it itself.
api::Status ResolvePolicies(const ExperimentOptions& opts, std::vector<PolicySpec>* policies,
                            bool* as_given) {
  if (!opts.compare.empty()) {
    if (!opts.policies.empty())
      return absl::InvalidArgumentError("--compare and --policies exclude each other");
    policies->clear();
    for (const auto& c : opts.compare) policies->push_back({c.name, ""});
    *as_given = false;
    return absl::OkStatus();
  }
  *policies = opts.policies;
  const bool shares = opts.trace == "openb-paper" || (opts.trace == "openb" && opts.gpu_sharing);
  if (policies->empty() && shares) {
    bool has = false;
    for (const auto& prof : opts.config.profiles) {
      for (const auto* set : {&prof.plugins.filter, &prof.plugins.multi_point}) {
        for (const auto& ref : set->enabled) has = has || ref.name == "GpuShare";
      }
    }
    if (!has && opts.config_source.empty()) {
      policies->push_back(*LookupPolicy("default"));
    } else if (!has) {
      return absl::InvalidArgumentError(opts.config_source +
                                        ": GPU shares need the GpuShare plugin (filter and "
                                        "reserve); enable it in the profile or use --policies");
    }
  }
  *as_given = policies->empty();
  if (*as_given) policies->push_back({"config", ""});
  return absl::OkStatus();
}

// The run's summary figures; GPU allocation as peak and time average (between the first
// and last timeline sample).
json SummaryJson(const sim::SimulationResult& res) {
  const double cap = res.gpu_milli_capacity;
  json s;
  s["nodes"] = res.nodes;
  s["pods"] = res.pods;
  s["scheduled"] = res.scheduled;
  s["pending_at_end"] = res.pending_at_end;
  s["dropped"] = res.deleted_while_pending;
  s["attempts"] = res.attempts;
  s["virtual_seconds"] = R2(res.virtual_seconds);
  s["wall_seconds"] = R2(res.wall_seconds);
  s["pods_per_second"] =
      R2(res.wall_seconds > 0 ? static_cast<double>(res.pods) / res.wall_seconds : 0);
  s["invariant_violations"] = res.invariant_violations.size();
  s["reservations"] = {{"made", res.reservations.made},
                       {"released_started", res.reservations.released_bound},
                       {"expired", res.reservations.expired},
                       {"released_gone", res.reservations.released_gone},
                       {"not_made", res.reservations.not_made},
                       {"evictions", res.reservations.evictions},
                       {"evicted_pods", res.reservations.evicted_pods}};
  s["restarts"] = res.restarts;
  s["lost_gpu_hours"] = R2(res.lost_gpu_seconds / 3600.0);
  s["unplaced_reasons"] = res.pending_reasons;  // reason of the last attempt -> pods
  s["gpu_capacity"] = R2(cap / 1000.0);
  s["scheduled_pct"] =
      R2(res.pods ? 100.0 * static_cast<double>(res.scheduled) / static_cast<double>(res.pods) : 0);
  double peak = 0, integral = 0;
  for (size_t i = 0; i < res.timeline.size(); ++i) {
    peak = std::max(peak, res.timeline[i].gpu_milli);
    if (i + 1 < res.timeline.size()) {
      integral += res.timeline[i].gpu_milli * (res.timeline[i + 1].t - res.timeline[i].t);
    }
  }
  const double span = res.timeline.size() > 1 ? res.timeline.back().t - res.timeline.front().t : 0;
  s["gpu_alloc_peak_pct"] = R2(cap > 0 ? 100.0 * peak / cap : 0);
  s["gpu_alloc_avg_pct"] = R2(
      cap > 0 && span > 0
          ? 100.0 * integral / span / cap
          : (cap > 0 && !res.timeline.empty() ? 100.0 * res.timeline.back().gpu_milli / cap : 0));
  return s;
}

// GPU allocation, running and pending pods over time (<= 300 points).
json TimelineJson(const sim::SimulationResult& res) {
  const double cap = res.gpu_milli_capacity;
  json tl = {{"t_hours", json::array()},
             {"gpu_alloc_pct", json::array()},
             {"running", json::array()},
             {"pending", json::array()}};
  for (size_t i : Spread(res.timeline.size(), 300)) {
    const auto& u = res.timeline[i];
    tl["t_hours"].push_back(R2(u.t / 3600.0));
    tl["gpu_alloc_pct"].push_back(R2(cap > 0 ? 100.0 * u.gpu_milli / cap : 0));
    tl["running"].push_back(u.running);
    tl["pending"].push_back(u.pending);
  }
  return tl;
}

json FragTimelineJson(const PaperMetrics& metrics) {
  json ft = {
      {"t_hours", json::array()}, {"alloc_pct", json::array()}, {"frag_ratio_pct", json::array()}};
  for (size_t i : Spread(metrics.samples().size(), 300)) {
    const auto& f = metrics.samples()[i];
    ft["t_hours"].push_back(R2(f.t / 3600.0));
    ft["alloc_pct"].push_back(R2(f.alloc_pct));
    ft["frag_ratio_pct"].push_back(R2(f.frag_ratio_pct));
  }
  return ft;
}

// Per-queue allocation and fair share over time (queues and quotas, src/quota).
json QueuesJson(const sim::SimulationResult& res) {
  std::vector<double> times;
  std::map<std::string, std::map<double, std::pair<double, double>>> by_queue;
  for (const auto& q : res.queue_timeline) {
    if (times.empty() || times.back() != q.t) times.push_back(q.t);
    by_queue[q.queue][q.t] = {q.allocated, q.deserved};
  }
  json qj = {
      {"resource", res.queue_resource}, {"t_hours", json::array()}, {"series", json::array()}};
  const auto idx = Spread(times.size(), 300);
  for (size_t i : idx) qj["t_hours"].push_back(R2(times[i] / 3600.0));
  for (const auto& s : res.queues) {
    json one = {{"name", s.name},
                {"parent", s.parent},
                {"allocated_avg", R2(s.allocated_avg)},
                {"deserved_avg", R2(s.deserved_avg)},
                {"allocated", json::array()},
                {"deserved", json::array()}};
    const auto& m = by_queue[s.name];
    for (size_t i : idx) {
      auto it = m.find(times[i]);
      one["allocated"].push_back(R2(it == m.end() ? 0.0 : it->second.first));
      one["deserved"].push_back(R2(it == m.end() ? 0.0 : it->second.second));
    }
    qj["series"].push_back(one);
  }
  return qj;
}

// Queueing delay by job size (GPUs: 1, 2-4, 5-8, 16+ and the rest between): count, started,
// mean and p95 in minutes, one object per non-empty bucket; and the log line's part.
json DelayByGpus(const std::vector<JobOutcome>& outcomes, std::string* line) {
  struct Bucket {
    const char* name;
    int32_t lo, hi;
    std::vector<double> qd;
    size_t count = 0;
  };
  std::vector<Bucket> b = {{"1", 1, 1, {}},
                           {"2-4", 2, 4, {}},
                           {"5-8", 5, 8, {}},
                           {"9-15", 9, 15, {}},
                           {"16+", 16, INT32_MAX, {}}};
  for (const auto& o : outcomes) {
    for (auto& k : b) {
      if (o.gpus < k.lo || o.gpus > k.hi) continue;
      ++k.count;
      if (o.start_s >= 0) k.qd.push_back(o.queue_delay_s());
    }
  }
  json out = json::array();
  for (auto& k : b) {
    if (k.count == 0) continue;
    std::sort(k.qd.begin(), k.qd.end());
    out.push_back({{"gpus", k.name},
                   {"jobs", k.count},
                   {"started", k.qd.size()},
                   {"mean_queue_delay_min", R2(Mean(k.qd) / 60.0)},
                   {"p95_queue_delay_min", R2(Quantile(k.qd, 0.95) / 60.0)}});
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%s %s GPUs: %zu jobs, p95 %.0f min", line->empty() ? "" : ";",
                  k.name, k.count, Quantile(k.qd, 0.95) / 60.0);
    *line += buf;
  }
  return out;
}

// Philly with --forecast-accuracy: j["jobs"]["forecast_at_submission"]; returns the log
// line's part about it.
std::string AddForecastAccuracy(const Trace& trace, const sim::SimulationResult& res,
                                const std::vector<double>& forecast_s, json* j) {
  const ForecastAccuracy a = MeasureForecastAccuracy(JobOutcomes(trace.jobs, res), forecast_s);
  (*j)["jobs"]["forecast_at_submission"] = {
      {"jobs", a.jobs},
      {"forecasts", a.forecasts},
      {"measured", a.measured},
      {"exact", a.exact},
      {"late", a.late},
      {"median_abs_error_s", R2(a.median_abs_error_s)},
      {"mean_abs_error_s", R2(a.mean_abs_error_s)},
      {"p90_abs_error_s", R2(a.p90_abs_error_s)},
      {"waiting", a.waiting},
      {"median_abs_error_waiting_s", R2(a.median_abs_error_waiting_s)}};
  char buf[300];
  std::snprintf(buf, sizeof(buf),
                "; forecast at submission: median |error| %.0f s, mean %.0f s, p90 %.0f s over %zu "
                "jobs (%zu exact, %zu late; %zu of %zu jobs had a forecast); median |error| of the "
                "%zu jobs that waited %.0f s",
                a.median_abs_error_s, a.mean_abs_error_s, a.p90_abs_error_s, a.measured, a.exact,
                a.late, a.forecasts, a.jobs, a.waiting, a.median_abs_error_waiting_s);
  return buf;
}

// Philly: the jobs' figures into j["jobs"], their queueing delays into *delays; returns the
// log line's part about them.
std::string AddJobs(const Trace& trace, const sim::SimulationResult& res, json* j,
                    std::vector<double>* delays) {
  const auto outcomes = JobOutcomes(trace.jobs, res);
  std::vector<double> jct, qd;
  double first_submit = std::numeric_limits<double>::infinity(), last_finish = 0;
  size_t started = 0;
  for (const auto& o : outcomes) {
    first_submit = std::min(first_submit, o.submit_s);
    if (o.start_s < 0) continue;
    ++started;
    jct.push_back(o.jct_s());
    qd.push_back(o.queue_delay_s());
    last_finish = std::max(last_finish, o.finish_s);
  }
  *delays = qd;
  std::sort(jct.begin(), jct.end());
  std::sort(qd.begin(), qd.end());
  json jb;
  jb["count"] = outcomes.size();
  jb["started"] = started;
  jb["too_large"] = trace.too_large;
  jb["mean_jct_h"] = R2(Mean(jct) / 3600.0);
  jb["p50_jct_h"] = R2(Quantile(jct, 0.5) / 3600.0);
  jb["makespan_h"] = R2(started ? (last_finish - first_submit) / 3600.0
                                : std::numeric_limits<double>::quiet_NaN());
  jb["mean_queue_delay_min"] = R2(Mean(qd) / 60.0);
  jb["p95_queue_delay_min"] = R2(Quantile(qd, 0.95) / 60.0);
  jb["gpu_util_avg_pct"] = (*j)["summary"]["gpu_alloc_avg_pct"];
  // Evicted jobs restarted by their controller (restart_on_eviction): the GPU time they had
  // run is lost. gpu_util_avg_pct counts it as allocated; the useful figure takes it out
  // (over the same span and capacity as gpu_alloc_avg_pct).
  const double cap_gpus = res.gpu_milli_capacity / 1000.0;
  const double span =
      res.timeline.size() > 1 ? res.timeline.back().t - res.timeline.front().t : 0.0;
  const double lost_pct =
      cap_gpus > 0 && span > 0 ? 100.0 * res.lost_gpu_seconds / (cap_gpus * span) : 0.0;
  jb["restarts"] = res.restarts;
  jb["lost_gpu_hours"] = R2(res.lost_gpu_seconds / 3600.0);
  if ((*j)["summary"]["gpu_alloc_avg_pct"].is_number()) {
    jb["gpu_util_useful_pct"] = R2((*j)["summary"]["gpu_alloc_avg_pct"].get<double>() - lost_pct);
  }
  std::string by_size;
  jb["queue_delay_by_gpus"] = DelayByGpus(outcomes, &by_size);
  double large_p95 = std::numeric_limits<double>::quiet_NaN();
  for (const auto& b : jb["queue_delay_by_gpus"]) {
    // null (NaN) when no job of the bucket started
    if (b["gpus"] == "16+" && b["p95_queue_delay_min"].is_number()) {
      large_p95 = b["p95_queue_delay_min"].get<double>();
    }
  }
  jb["p95_queue_delay_16plus_min"] = large_p95;
  // Job start times, for determinism checks.
  json starts = json::array();
  for (const auto& o : outcomes) starts.push_back(o.start_s < 0 ? json(nullptr) : json(o.start_s));
  jb["start_s"] = starts;
  (*j)["jobs"] = jb;
  char buf[200];
  std::snprintf(buf, sizeof(buf), "; jobs %zu/%zu started, mean JCT %.2f h, makespan %.2f h",
                started, outcomes.size(), Mean(jct) / 3600.0,
                started ? (last_finish - first_submit) / 3600.0 : 0.0);
  std::string line = buf;
  line += "; queueing by size:" + by_size;
  const auto& rv = (*j)["summary"]["reservations"];
  if (rv["made"].get<int64_t>() > 0 || rv["not_made"].get<int64_t>() > 0) {
    std::snprintf(buf, sizeof(buf), "; reservations %lld made, %lld started, %lld expired",
                  static_cast<long long>(rv["made"].get<int64_t>()),
                  static_cast<long long>(rv["released_started"].get<int64_t>()),
                  static_cast<long long>(rv["expired"].get<int64_t>()));
    line += buf;
    if (rv["evictions"].get<int64_t>() > 0 || res.restarts > 0) {
      std::snprintf(buf, sizeof(buf),
                    "; starvation evictions %lld (%lld pods), restarts %lld, lost %.1f GPU-h",
                    static_cast<long long>(rv["evictions"].get<int64_t>()),
                    static_cast<long long>(rv["evicted_pods"].get<int64_t>()),
                    static_cast<long long>(res.restarts), res.lost_gpu_seconds / 3600.0);
      line += buf;
    }
  }
  return line;
}

// openb-paper: the load curve and the figures at 100 % load into *j; returns the log
// line's part about them.
std::string AddLoadCurve(const PaperMetrics& metrics, const sim::SimulationResult& res, json* j) {
  const LoadCurve c = Discretize(metrics.points());
  json lc = {{"step_pct", json::array()},
             {"alloc_pct", json::array()},
             {"frag_ratio_pct", json::array()},
             {"frag_pct", json::array()}};
  for (size_t r = 0; r < c.alloc_pct.size(); ++r) {
    lc["step_pct"].push_back(r);
    lc["alloc_pct"].push_back(R2(c.alloc_pct[r]));
    lc["frag_ratio_pct"].push_back(R2(c.frag_ratio_pct[r]));
    lc["frag_pct"].push_back(R2(c.frag_pct[r]));
  }
  (*j)["load_curve"] = lc;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double a100 = c.alloc_pct.size() > 100 ? c.alloc_pct[100] : nan;
  (*j)["unallocated_at_100_pct"] = R2(100.0 - a100);
  (*j)["frag_ratio_at_100_pct"] = R2(c.frag_ratio_pct.size() > 100 ? c.frag_ratio_pct[100] : nan);
  char buf[160];
  std::snprintf(buf, sizeof(buf), ", %zu dropped; unallocated GPU at 100%% load %.2f%%",
                res.deleted_while_pending, 100.0 - a100);
  return buf;
}

// One (policy, seed) run: simulates, then its results document entry and log line.
struct RunSpec {
  const PolicySpec* policy;
  const config::KubeSchedulerConfiguration* config;
  std::string config_source;
  uint64_t seed;
};

api::Status RunOne(const ExperimentOptions& opts, const Trace& trace,
                   const std::shared_ptr<const gpu::TargetWorkload>& workload, const RunSpec& spec,
                   RunRecord* out, sim::SimulationResult* res) {
  const std::string& mode = opts.trace;
  const std::string name = spec.policy->display + " seed " + std::to_string(spec.seed);
  sim::Scenario paper_sc;
  const sim::Scenario* sc = &trace.base;
  if (mode == "openb-paper") {
    paper_sc.name = trace.base.name;
    if (auto s = BuildPaperScenario(trace.base.nodes, trace.trace_pods, spec.seed, opts.paper,
                                    &paper_sc);
        !s.ok()) {
      return s;
    }
    sc = &paper_sc;
  }
  sim::Scenario dra_sc;
  DraGpuStats dra_stats;
  if (opts.gpu_model == "dra") {
    dra_sc = *sc;
    if (auto s = ToDraGpus(&dra_sc, &dra_stats); !s.ok()) return s;
    sc = &dra_sc;
  }
  PaperMetrics metrics(*sc, workload);
  sim::SimulationOptions so;
  so.seed = spec.seed;
  so.config = *spec.config;
  so.config_source = spec.config_source;
  so.registry = opts.registry;
  so.progress = opts.progress;
  so.hooks = metrics.Hooks();
  std::optional<SubmissionForecasts> forecasts;
  if (mode == "philly" && opts.forecast_accuracy) {
    forecasts.emplace(*sc, trace.jobs);
    forecasts->Install(&so.hooks);
  }
  so.delete_unschedulable = mode == "openb-paper";
  if (auto s = sim::RunSimulation(*sc, so, res); !s.ok()) {
    return absl::Status(s.code(), name + ": " + std::string(s.message()));
  }
  json& j = out->j;
  j["policy"] = spec.policy->display;
  j["seed"] = spec.seed;
  j["gpu_model"] = opts.gpu_model;
  if (opts.gpu_model == "dra") {
    j["dra"] = {{"nodes", dra_stats.nodes},
                {"devices", dra_stats.devices},
                {"pods", dra_stats.pods},
                {"shares", dra_stats.shares}};
  }
  j["summary"] = SummaryJson(*res);
  j["timeline"] = TimelineJson(*res);
  j["frag_timeline"] = FragTimelineJson(metrics);
  if (!res->queue_timeline.empty()) j["queues"] = QueuesJson(*res);
  std::vector<double> delays;
  std::string line = name + ": " + std::to_string(res->pods) + " pods, " +
                     std::to_string(res->scheduled) + " bound";
  if (mode == "philly") {
    line += AddJobs(trace, *res, &j, &delays);
    if (forecasts) line += AddForecastAccuracy(trace, *res, forecasts->forecast_s(), &j);
  } else {
    for (const auto& o : res->outcomes) {
      if (o.scheduled_s) delays.push_back(*o.scheduled_s - o.arrival_s);
    }
  }
  j["queue_delay"] = DelayJson(delays);
  if (mode == "openb-paper") line += AddLoadCurve(metrics, *res, &j);
  if (opts.gpu_model == "dra") {
    line += ", GPUs as DRA devices (" + std::to_string(dra_stats.shares) +
            " GPU shares as consumable capacity)";
  }
  char buf[120];
  std::snprintf(buf, sizeof(buf), " (%.1f s wall, %.0f pods/s)", res->wall_seconds,
                res->wall_seconds > 0 ? static_cast<double>(res->pods) / res->wall_seconds : 0.0);
  line += buf;
  if (!res->invariant_violations.empty()) {
    line += "; " + std::to_string(res->invariant_violations.size()) + " invariant violations";
  }
  if (opts.log) opts.log(line);
  out->policy = spec.policy->display;
  out->seed = spec.seed;
  return absl::OkStatus();
}

// A column of the per-policy comparison (medians over seeds); `get` reads a run's value,
// none: the paper's published figure.
struct Col {
  const char* key;
  const char* label;
  const char* better;
  std::function<double(const json&)> get;
};

double Num(const json& v) {
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// The comparison's columns for a trace mode; the first is the headline. A column reads
// r[a] or r[a][b] of a run; "paper_unallocated_at_100_pct" is the paper's figure instead,
// and "vs_fgd_*" compare a policy's unallocated GPU with FGD's on the same seed.
std::vector<Col> Columns(const std::string& mode) {
  struct Spec {
    const char *key, *label, *better, *a, *b;
  };
  static const Spec kOpenbPaper[] = {
      {"unallocated_at_100_pct", "Unallocated GPU at 100% load (%)", "lower",
       "unallocated_at_100_pct", nullptr},
      {"paper_unallocated_at_100_pct", "Paper (%)", "lower", nullptr, nullptr},
      {"vs_fgd_median_pts", "vs FGD per seed, median (points)", "lower", nullptr, nullptr},
      {"vs_fgd_best_pts", "vs FGD, best seed", "lower", nullptr, nullptr},
      {"vs_fgd_worst_pts", "vs FGD, worst seed", "lower", nullptr, nullptr},
      {"frag_ratio_at_100_pct", "Fragmented idle GPU at 100% load (%)", "lower",
       "frag_ratio_at_100_pct", nullptr},
      {"dropped", "Pods not placed", "lower", "summary", "dropped"}};
  static const Spec kPhilly[] = {
      {"mean_jct_h", "Mean JCT (h)", "lower", "jobs", "mean_jct_h"},
      {"makespan_h", "Makespan (h)", "lower", "jobs", "makespan_h"},
      {"mean_queue_delay_min", "Mean queueing delay (min)", "lower", "jobs",
       "mean_queue_delay_min"},
      {"p95_queue_delay_min", "p95 queueing delay (min)", "lower", "jobs", "p95_queue_delay_min"},
      {"p95_queue_delay_16plus_min", "p95 queueing delay, 16+ GPU jobs (min)", "lower", "jobs",
       "p95_queue_delay_16plus_min"},
      {"gpu_util_avg_pct", "GPU utilization, mean (%)", "higher", "jobs", "gpu_util_avg_pct"}};
  static const Spec kOther[] = {
      {"gpu_alloc_avg_pct", "GPU allocation, mean (%)", "higher", "summary", "gpu_alloc_avg_pct"},
      {"scheduled_pct", "Pods scheduled (%)", "higher", "summary", "scheduled_pct"},
      {"p50_queue_delay_s", "Median queueing delay (s)", "lower", "queue_delay", "p50_s"},
      {"p95_queue_delay_s", "p95 queueing delay (s)", "lower", "queue_delay", "p95_s"}};
  static const Spec kSpeed = {"pods_per_second", "Replay speed (pods/s)", "higher", "summary",
                              "pods_per_second"};
  std::vector<Spec> specs;
  if (mode == "openb-paper") {
    specs.assign(std::begin(kOpenbPaper), std::end(kOpenbPaper));
  } else if (mode == "philly") {
    specs.assign(std::begin(kPhilly), std::end(kPhilly));
  } else {
    specs.assign(std::begin(kOther), std::end(kOther));
  }
  specs.push_back(kSpeed);
  std::vector<Col> cols;
  for (const Spec& sp : specs) {
    Col c{sp.key, sp.label, sp.better, nullptr};
    if (sp.a) {
      c.get = [a = sp.a, b = sp.b](const json& r) { return Num(b ? r[a][b] : r[a]); };
    }
    cols.push_back(std::move(c));
  }
  return cols;
}

// Per seed, `policy`'s unallocated GPU at 100 % load minus FGD's on the same seed (points;
// negative = less GPU left unallocated than FGD). Empty when FGD did not run.
std::vector<double> MarginsOverFgd(const std::string& policy, const std::vector<RunRecord>& runs) {
  std::map<uint64_t, double> fgd;
  for (const auto& r : runs) {
    if (r.policy == "FGD") fgd[r.seed] = Num(r.j["unallocated_at_100_pct"]);
  }
  std::vector<double> out;
  for (const auto& r : runs) {
    if (r.policy != policy) continue;
    auto it = fgd.find(r.seed);
    if (it != fgd.end()) out.push_back(Num(r.j["unallocated_at_100_pct"]) - it->second);
  }
  return out;
}

// The value of a column without a per-run getter: the paper's figure or a margin over FGD.
json DerivedCell(const std::string& pods_csv, const std::string& key, const std::string& display,
                 const std::vector<RunRecord>& runs) {
  if (key == "paper_unallocated_at_100_pct") {
    auto v = PaperUnallocatedAt100(pods_csv, display);
    return v ? json(R2(*v)) : json(nullptr);
  }
  std::vector<double> d = MarginsOverFgd(display, runs);
  if (d.empty()) return nullptr;
  std::sort(d.begin(), d.end());
  if (key == "vs_fgd_median_pts") return R2(Median(d));
  if (key == "vs_fgd_best_pts") return R2(d.front());
  return R2(d.back());
}

// The per-policy comparison: medians over seeds of every column.
// `mode` is the trace ("" = manifests), `policies` the display names in order.
json ComparisonJson(const std::string& mode, const std::string& pods_csv,
                    const std::vector<std::string>& policies, const std::vector<RunRecord>& runs) {
  const std::vector<Col> cols = Columns(mode);
  json jc = json::array();
  for (const auto& c : cols)
    jc.push_back({{"key", c.key}, {"label", c.label}, {"better", c.better}});
  json rows = json::array();
  for (const auto& display : policies) {
    json row;
    row["policy"] = display;
    json m;
    size_t n = 0;
    for (const auto& c : cols) {
      if (!c.get) {
        m[c.key] = DerivedCell(pods_csv, c.key, display, runs);
        continue;
      }
      std::vector<double> vals;
      n = 0;
      for (const auto& r : runs) {
        if (r.policy != display) continue;
        vals.push_back(c.get(r.j));
        ++n;
      }
      m[c.key] = R2(Median(vals));
    }
    row["seeds"] = n;
    row["metrics"] = m;
    rows.push_back(row);
  }
  return {{"statistic", "median over seeds"}, {"columns", jc}, {"rows", rows}};
}

}  // namespace

api::Status RunExperiments(const ExperimentOptions& opts, json* results) {
  Trace trace;
  if (auto s = LoadTrace(opts, &trace); !s.ok()) return s;
  const std::string& mode = opts.trace;
  const auto workload = TraceWorkload(mode == "openb-paper" ? trace.trace_pods : trace.base.pods);
  std::vector<PolicySpec> policies;
  bool as_given = false;
  if (auto s = ResolvePolicies(opts, &policies, &as_given); !s.ok()) return s;
  if (!opts.job_results_path.empty() &&
      (mode != "philly" || policies.size() * opts.seeds.size() != 1)) {
    return absl::InvalidArgumentError(
        "--job-results is for a single --trace philly run (one policy, one seed)");
  }
  if (!opts.results_path.empty() && policies.size() * opts.seeds.size() != 1) {
    return absl::InvalidArgumentError("--results is for a single run (one policy, one seed), not " +
                                      std::to_string(policies.size() * opts.seeds.size()));
  }
  if (opts.shard_count > 0 && opts.shard_index >= opts.shard_count) {
    return absl::InvalidArgumentError("--shard " + std::to_string(opts.shard_index) + "/" +
                                      std::to_string(opts.shard_count) + ": index out of range");
  }
  std::vector<RunRecord> runs;
  double total_pods = 0, total_wall = 0;
  size_t run_index = 0;
  for (size_t pi = 0; pi < policies.size(); ++pi) {
    const PolicySpec& pol = policies[pi];
    RunSpec spec{&pol, &opts.config, opts.config_source, 0};
    config::KubeSchedulerConfiguration cfg;
    if (!opts.compare.empty()) {
      spec.config = &opts.compare[pi].config;
      spec.config_source = opts.compare[pi].source;
    } else if (!as_given) {
      if (auto s = PolicyConfiguration(pol, mode == "openb-paper", &cfg); !s.ok()) return s;
      spec.config = &cfg;
      spec.config_source = "policy " + pol.display;
    }
    for (uint64_t seed : opts.seeds) {
      const size_t k = run_index++;
      if (opts.shard_count > 0 && k % opts.shard_count != opts.shard_index) continue;
      spec.seed = seed;
      RunRecord rec;
      sim::SimulationResult res;
      if (auto s = RunOne(opts, trace, workload, spec, &rec, &res); !s.ok()) return s;
      if (!opts.results_path.empty()) {
        if (auto s = sim::WriteOutcomesJsonl(res, opts.results_path); !s.ok()) return s;
      }
      if (!opts.job_results_path.empty()) {
        if (auto s = WriteJobResultsCsv(JobOutcomes(trace.jobs, res), opts.job_results_path);
            !s.ok()) {
          return s;
        }
      }
      total_pods += static_cast<double>(res.pods);
      total_wall += res.wall_seconds;
      rec.j["run_index"] = k;
      runs.push_back(std::move(rec));
    }
  }
  json doc;
  doc["kind"] = "phalanx-replay-report";
  doc["version"] = 1;
  doc["mode"] = mode.empty() ? "manifests" : mode;
  doc["trace"] = trace.base.name.empty() ? opts.scenario_path : trace.base.name;
  doc["pods_csv"] = opts.pods_csv;
  json pols = json::array();
  std::vector<std::string> displays;
  for (const auto& p : policies) {
    pols.push_back(p.display);
    displays.push_back(p.display);
  }
  doc["policies"] = pols;
  if (!opts.compare.empty()) {
    json cmp = json::array();
    for (const auto& c : opts.compare) cmp.push_back({{"name", c.name}, {"config", c.source}});
    doc["compare"] = cmp;
  }
  doc["seeds"] = opts.seeds;
  if (opts.shard_count > 0) {
    doc["shard"] = {{"index", opts.shard_index}, {"count", opts.shard_count}};
  }
  if (mode == "philly") {
    doc["cluster"] = {{"nodes", opts.cluster.nodes}, {"gpus_per_node", opts.cluster.gpus_per_node}};
  }
  doc["replay_pods_per_second"] = R2(total_wall > 0 ? total_pods / total_wall : 0);
  json jr = json::array();
  for (const auto& r : runs) jr.push_back(r.j);
  doc["runs"] = jr;
  doc["comparison"] = ComparisonJson(mode, opts.pods_csv, displays, runs);
  *results = std::move(doc);
  return absl::OkStatus();
}

api::Status ParseShard(const std::string& text, size_t* index, size_t* count) {
  const auto slash = text.find('/');
  auto number = [](const std::string& t, size_t* out) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    *out = std::stoul(t);
    return true;
  };
  if (slash == std::string::npos || !number(text.substr(0, slash), index) ||
      !number(text.substr(slash + 1), count) || *count == 0 || *index >= *count) {
    return absl::InvalidArgumentError("--shard \"" + text +
                                      "\": want INDEX/COUNT with 0 <= INDEX < COUNT, e.g. 0/6");
  }
  return absl::OkStatus();
}

api::Status MergeShardReports(const std::vector<json>& docs, const std::vector<std::string>& names,
                              json* out) {
  if (docs.empty()) return absl::InvalidArgumentError("report merge: no shard documents given");
  auto name = [&](size_t i) {
    return i < names.size() ? names[i] : "document " + std::to_string(i);
  };
  const json& first = docs[0];
  for (size_t i = 0; i < docs.size(); ++i) {
    const json& d = docs[i];
    if (!d.is_object() || d.value("kind", "") != "phalanx-replay-report") {
      return absl::InvalidArgumentError(name(i) + ": not a phalanx-replay-report document");
    }
    if (!d.contains("shard") || !d["shard"].is_object()) {
      return absl::InvalidArgumentError(name(i) + ": not a shard (written without --shard)");
    }
    for (const char* key :
         {"version", "mode", "trace", "pods_csv", "policies", "seeds", "cluster", "compare"}) {
      const json a = first.contains(key) ? first[key] : json(nullptr);
      const json b = d.contains(key) ? d[key] : json(nullptr);
      if (a != b) {
        return absl::InvalidArgumentError(name(i) + ": " + key + " differs from " + name(0));
      }
    }
  }
  const json count_j = first["shard"]["count"];
  if (!count_j.is_number_unsigned())
    return absl::InvalidArgumentError(name(0) + ": bad shard count");
  const size_t count = count_j.get<size_t>();
  std::vector<int> seen(count, -1);
  for (size_t i = 0; i < docs.size(); ++i) {
    const json& sh = docs[i]["shard"];
    if (sh.value("count", size_t{0}) != count) {
      return absl::InvalidArgumentError(name(i) + ": shard count " + sh["count"].dump() +
                                        " differs from " + name(0) + "'s " + std::to_string(count));
    }
    const size_t idx = sh.value("index", count);
    if (idx >= count) return absl::InvalidArgumentError(name(i) + ": bad shard index");
    if (seen[idx] >= 0) {
      return absl::InvalidArgumentError(name(i) + ": shard " + std::to_string(idx) +
                                        " is also in " + name(static_cast<size_t>(seen[idx])));
    }
    seen[idx] = static_cast<int>(i);
  }
  for (size_t k = 0; k < count; ++k) {
    if (seen[k] < 0) {
      return absl::InvalidArgumentError("shard " + std::to_string(k) + " of " +
                                        std::to_string(count) + " is missing");
    }
  }
  std::vector<RunRecord> runs;
  for (const json& d : docs) {
    for (const json& r : d["runs"]) {
      runs.push_back({r.value("policy", ""), r.value("seed", uint64_t{0}), r});
    }
  }
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
    return a.j.value("run_index", size_t{0}) < b.j.value("run_index", size_t{0});
  });
  const size_t expected = first["policies"].size() * first["seeds"].size();
  for (size_t k = 0; k < runs.size(); ++k) {
    if (runs[k].j.value("run_index", size_t{0}) != k) {
      return absl::InvalidArgumentError("run " + std::to_string(k) + " is missing or repeated");
    }
  }
  if (runs.size() != expected) {
    return absl::InvalidArgumentError("the shards hold " + std::to_string(runs.size()) +
                                      " runs; the experiment has " + std::to_string(expected));
  }
  json doc = first;
  doc.erase("shard");
  double pods = 0, wall = 0;
  json jr = json::array();
  std::vector<std::string> displays;
  for (const auto& p : first["policies"]) displays.push_back(p.get<std::string>());
  for (const auto& r : runs) {
    pods += Num(r.j["summary"]["pods"]);
    wall += Num(r.j["summary"]["wall_seconds"]);
    jr.push_back(r.j);
  }
  doc["runs"] = jr;
  doc["replay_pods_per_second"] = R2(wall > 0 ? pods / wall : 0);
  const std::string mode = first.value("mode", "");
  doc["comparison"] =
      ComparisonJson(mode == "manifests" ? "" : mode, first.value("pods_csv", ""), displays, runs);
  *out = std::move(doc);
  return absl::OkStatus();
}

std::string SweepJobManifest(const std::string& name, const std::string& namespace_,
                             const std::string& image, const std::string& claim,
                             const std::string& data_claim, size_t shards,
                             const std::vector<std::string>& simulate_args) {
  std::vector<std::string> args = {"simulate"};
  args.insert(args.end(), simulate_args.begin(), simulate_args.end());
  const std::string n = std::to_string(shards);
  for (std::string a :
       std::vector<std::string>{"--shard", "$(JOB_COMPLETION_INDEX)/" + n, "--json",
                                "/results/shard-$(JOB_COMPLETION_INDEX).json", "--no-progress"}) {
    args.push_back(std::move(a));
  }
  std::string y;
  y += "# phalanx sweep: " + n + " shards; merge with\n";
  y += "#   phalanx report merge shard-*.json --json merged.json --report merged.html\n";
  y += "apiVersion: batch/v1\nkind: Job\nmetadata:\n";
  y += "  name: " + json(name).dump() + "\n";
  y += "  namespace: " + json(namespace_).dump() + "\n";
  y += "  labels: {app.kubernetes.io/name: phalanx-sweep}\n";
  y += "spec:\n  completionMode: Indexed\n";
  y += "  completions: " + n + "\n  parallelism: " + n + "\n  backoffLimit: " + n + "\n";
  y += "  template:\n    metadata:\n      labels: {app.kubernetes.io/name: phalanx-sweep}\n";
  y += "    spec:\n      restartPolicy: Never\n      containers:\n      - name: simulate\n";
  y += "        image: " + json(image).dump() + "\n        command: [\"phalanx\"]\n        args:\n";
  for (const auto& a : args) y += "        - " + json(a).dump() + "\n";
  y += "        volumeMounts:\n        - {name: results, mountPath: /results}\n";
  if (!data_claim.empty()) y += "        - {name: data, mountPath: /data, readOnly: true}\n";
  y += "      volumes:\n      - name: results\n";
  if (claim.empty()) {
    y += "        emptyDir: {}\n";
  } else {
    y += "        persistentVolumeClaim: {claimName: " + json(claim).dump() + "}\n";
  }
  if (!data_claim.empty()) {
    y += "      - name: data\n        persistentVolumeClaim: {claimName: " +
         json(data_claim).dump() + ", readOnly: true}\n";
  }
  return y;
}

}  // namespace phalanx::replay
