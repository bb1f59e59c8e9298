#include "replay/paper.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <unordered_map>

#include "api/pod_resources.h"
#include "framework/types.h"
#include "gpu/device.h"
#include "plugins/gpushare/context.h"
#include "scheduler/scheduler.h"

namespace phalanx::replay {

namespace gs = plugins::gpushare;

namespace {

// Uniform in [0, n) from a 64-bit generator without modulo bias (portable: std::mt19937_64
// output is specified, unlike the standard distributions).
uint64_t Uniform(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t v;
  do {
    v = rng();
  } while (v >= limit);
  return v % n;
}

double AskMilli(const gpu::GpuAsk& ask) {
  if (!ask.has_gpu()) return 0;
  return static_cast<double>(ask.count) * (ask.milli > 0 ? ask.milli : gpu::kMilliPerGpu);
}

}  // namespace

api::Status BuildPaperScenario(const std::vector<api::Node>& nodes,
                               const std::vector<sim::TimedPod>& trace_pods, uint64_t seed,
                               const PaperOptions& opts, sim::Scenario* out) {
  double capacity = 0;
  for (const auto& n : nodes) {
    const auto g = gpu::ParseNodeGpus(n);
    if (g.count <= 0) continue;
    if (opts.max_nodes && out->nodes.size() >= opts.max_nodes) break;
    out->nodes.push_back(n);
    capacity += 1000.0 * g.count;
  }
  if (out->nodes.empty())
    return absl::InvalidArgumentError("openb-paper: no GPU nodes in the node list");
  std::vector<const sim::TimedPod*> sorted;
  sorted.reserve(trace_pods.size());
  for (const auto& p : trace_pods) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const sim::TimedPod* a, const sim::TimedPod* b) {
                     return a->pod.metadata.name < b->pod.metadata.name;
                   });
  double requested = 0;
  for (const auto* p : sorted) requested += AskMilli(gpu::ParseGpuAsk(p->pod));
  if (requested <= 0)
    return absl::InvalidArgumentError("openb-paper: the pod list asks for no GPUs");
  std::mt19937_64 rng(seed);
  std::vector<const sim::TimedPod*> order = sorted;
  // Fisher-Yates, as Go's rand.Shuffle (the sequence differs from Go's generator).
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[Uniform(rng, i)]);
  const double target = opts.target_load * capacity;
  // Tune down (upstream tuneDownPods, for node samples smaller than the trace): drop
  // random pods until the requests are within the target.
  while (requested > target && !order.empty()) {
    const size_t i = Uniform(rng, order.size());
    requested -= AskMilli(gpu::ParseGpuAsk(order[i]->pod));
    order.erase(order.begin() + static_cast<std::ptrdiff_t>(i));
  }
  std::vector<sim::TimedPod> pods;
  pods.reserve(order.size() + order.size() / 2);
  for (const auto* p : order) pods.push_back(*p);
  // Tune up (upstream tuneUpPods): resample until the next pod would pass the target.
  for (size_t i = 0; requested < target; ++i) {
    const sim::TimedPod* p = sorted[Uniform(rng, sorted.size())];
    const double m = AskMilli(gpu::ParseGpuAsk(p->pod));
    if (requested + m > target) break;
    requested += m;
    sim::TimedPod t = *p;
    t.pod.metadata.name += "-tuned-" + std::to_string(i);
    pods.push_back(std::move(t));
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    pods[i].arrival = static_cast<api::Timestamp>(i) * api::kNanosPerSecond;
    pods[i].deletion.reset();
    pods[i].run_duration_ns.reset();
  }
  out->pods = std::move(pods);
  return absl::OkStatus();
}

std::shared_ptr<const gpu::TargetWorkload> TraceWorkload(const std::vector<sim::TimedPod>& pods) {
  std::vector<gpu::PodShape> shapes;
  shapes.reserve(pods.size());
  for (const auto& p : pods) {
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(p.pod));
    shapes.push_back(gs::PodShapeOf(*pi, gpu::ParseGpuAsk(p.pod), nullptr));
  }
  return std::make_shared<const gpu::TargetWorkload>(gpu::TargetWorkload::FromShapes(shapes));
}

LoadCurve Discretize(const std::vector<LoadPoint>& points, int max_step) {
  LoadCurve c;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.alloc_pct.assign(max_step + 1, nan);
  c.frag_ratio_pct.assign(max_step + 1, nan);
  c.frag_pct.assign(max_step + 1, nan);
  std::vector<std::vector<size_t>> at(max_step + 2);
  for (size_t i = 0; i < points.size(); ++i) {
    const double r = std::round(points[i].arrived_pct);
    if (r >= 0 && r <= max_step + 1) at[static_cast<size_t>(r)].push_back(i);
  }
  for (int r = 0; r <= max_step; ++r) {
    std::vector<size_t> use = at[r];
    if (use.empty()) {
      for (int d : {-1, 1}) {
        if (r + d >= 0 && r + d <= max_step + 1) {
          use.insert(use.end(), at[r + d].begin(), at[r + d].end());
        }
      }
    }
    if (use.empty()) continue;
    double a = 0, fr = 0, f = 0;
    for (size_t i : use) {
      a += std::round(points[i].alloc_pct * 100) / 100;  // the artifact rounds samples
      fr += points[i].frag_ratio_pct;
      f += points[i].frag_pct;
    }
    const double n = static_cast<double>(use.size());
    c.alloc_pct[r] = a / n;
    c.frag_ratio_pct[r] = fr / n;
    c.frag_pct[r] = f / n;
  }
  return c;
}

struct PaperMetrics::Impl {
  const sim::Scenario& sc;
  std::shared_ptr<gpu::FragMemo> memo;
  std::shared_ptr<gs::GpuContext> ctx;
  std::unordered_map<std::string, size_t> node_index;
  std::vector<gpu::NodeShape> shapes;
  std::vector<double> frag;  // per node
  double capacity = 0, arrived = 0, allocated = 0, frag_total = 0, idle = 0;
  size_t pending_arrivals = 0;
  bool changed = true;
  struct Placed {
    size_t node = SIZE_MAX;
    std::vector<std::pair<int32_t, int32_t>> taken;  // (device, milli)
    int64_t milli_cpu = 0;
  };
  std::vector<Placed> placed;  // by scenario pod index

  Impl(const sim::Scenario& s, std::shared_ptr<const gpu::TargetWorkload> w)
      : sc(s), memo(std::make_shared<gpu::FragMemo>(std::move(w))), placed(s.pods.size()) {
    for (const auto& n : sc.nodes) {
      const auto g = gpu::ParseNodeGpus(n);
      gpu::NodeShape sh;
      sh.model = g.model;
      auto cpu = n.status.allocatable.find("cpu");
      sh.milli_cpu_capacity = cpu == n.status.allocatable.end() ? 0 : cpu->second.MilliValue();
      sh.milli_cpu_left = sh.milli_cpu_capacity;
      sh.free_milli.assign(static_cast<size_t>(std::max(0, g.count)), gpu::kMilliPerGpu);
      node_index[n.metadata.name] = shapes.size();
      capacity += 1000.0 * g.count;
      idle += 1000.0 * g.count;
      const double f = memo->Get(sh);
      frag.push_back(f);
      frag_total += f;
      shapes.push_back(std::move(sh));
    }
  }

  void Refrag(size_t n) {
    const double f = memo->Get(shapes[n]);
    frag_total += f - frag[n];
    frag[n] = f;
    changed = true;
  }

  void Deleted(size_t idx) {
    Placed& pl = placed[idx];
    if (pl.node == SIZE_MAX) return;
    gpu::NodeShape& sh = shapes[pl.node];
    sh.milli_cpu_left += pl.milli_cpu;
    for (auto [d, m] : pl.taken) {
      sh.free_milli[d] += m;
      allocated -= m;
      idle += m;
    }
    const size_t n = pl.node;
    pl = Placed();
    Refrag(n);
  }

  void Bound(size_t idx, const api::Pod& pod, const std::string& node) {
    auto it = node_index.find(node);
    if (it == node_index.end()) return;
    Placed& pl = placed[idx];
    pl.node = it->second;
    gpu::NodeShape& sh = shapes[it->second];
    pl.milli_cpu = api::PodRequests(pod).milli_cpu;
    sh.milli_cpu_left -= pl.milli_cpu;
    const gpu::GpuAsk ask = gpu::ParseGpuAsk(pod);
    if (ask.has_gpu()) {
      gpu::NodeGpus g{static_cast<int32_t>(sh.free_milli.size()), sh.model, 0};
      g.memory_mib = gpu::ModelMemoryMiB(sh.model);
      int32_t milli = gpu::MilliOnNode(ask, g);
      if (milli == 0) milli = gpu::kMilliPerGpu;
      std::vector<int32_t> devices;
      if (ctx) {
        if (auto a = ctx->Assignment(gs::PodIdentity(pod))) devices = *a;
      }
      if (devices.empty()) devices = gpu::ChooseBestFit(sh.free_milli, ask.count, milli);
      for (int32_t d : devices) {
        if (d < 0 || d >= static_cast<int32_t>(sh.free_milli.size())) continue;
        const int32_t take = std::min(milli, sh.free_milli[d]);
        sh.free_milli[d] -= take;
        allocated += take;
        idle -= take;
        pl.taken.emplace_back(d, take);
      }
    }
    Refrag(it->second);
  }
};

PaperMetrics::PaperMetrics(const sim::Scenario& sc, std::shared_ptr<const gpu::TargetWorkload> w)
    : impl_(std::make_unique<Impl>(sc, std::move(w))) {}

PaperMetrics::~PaperMetrics() = default;

sim::SimulationHooks PaperMetrics::Hooks() {
  sim::SimulationHooks h;
  h.on_start = [this](scheduler::Scheduler& s) {
    for (const auto& p : s.config().profiles) {
      if (auto* fwk = s.Profile(p.scheduler_name)) {
        if (auto ctx = gs::GpuContext::Find(*fwk)) {
          impl_->ctx = ctx;
          ctx->SetTargetWorkload(impl_->memo->workload());
          break;
        }
      }
    }
  };
  h.on_arrival = [this](size_t pod, double) {
    impl_->arrived += AskMilli(gpu::ParseGpuAsk(impl_->sc.pods[pod].pod));
    ++impl_->pending_arrivals;
  };
  h.on_bound = [this](size_t idx, const api::Pod& pod, const std::string& node, double) {
    impl_->Bound(idx, pod, node);
  };
  h.on_deleted = [this](size_t idx, double) { impl_->Deleted(idx); };
  h.on_step = [this](double t) {
    const Impl& m = *impl_;
    if (m.capacity <= 0) return;
    if (m.changed) {
      impl_->changed = false;
      FragSample fs;
      fs.t = t;
      fs.alloc_pct = 100.0 * m.allocated / m.capacity;
      fs.frag_ratio_pct = m.idle > 0 ? 100.0 * m.frag_total / m.idle : 0;
      samples_.push_back(fs);
    }
    if (impl_->pending_arrivals == 0) return;
    impl_->pending_arrivals = 0;
    LoadPoint p;
    p.arrived_pct = 100.0 * m.arrived / m.capacity;
    p.alloc_pct = 100.0 * m.allocated / m.capacity;
    p.frag_ratio_pct = m.idle > 0 ? 100.0 * m.frag_total / m.idle : 0;
    p.frag_pct = 100.0 * m.frag_total / m.capacity;
    points_.push_back(p);
  };
  return h;
}

}  // namespace phalanx::replay
