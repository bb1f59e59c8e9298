#include "plugins/gpupolicy/frag_lookahead.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "plugins/helper/args.h"

namespace phalanx::plugins::gpupolicy {

namespace {

constexpr std::string_view kArgsKind = "FragLookaheadScoreArgs";
constexpr double kInf = std::numeric_limits<double>::infinity();

struct LookaheadState final : framework::StateData {
  std::unordered_map<const framework::NodeInfo*, int64_t> scores;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<LookaheadState>(*this);
  }
};

// FGD's score bucket of a cost (upstream calculateGpuShareFragExtendScore's
// sigmoid(-cost / 1000) * 100, truncated); higher is better.
int64_t Bucket(double cost) {
  if (cost == kInf) return -1;
  return static_cast<int64_t>(gpu::Sigmoid(-cost / 1000.0) * 100.0);
}

// Per target shape: the smallest delta over every node, how many nodes reach it, and the
// second smallest (the best over the others when one node alone holds the smallest).
struct BestHosts {
  std::vector<double> best, second;
  std::vector<int32_t> best_count;
};

}  // namespace

framework::StatusOr<FragLookaheadScoreArgs> ParseFragLookaheadScoreArgs(
    framework::PluginArgs args) {
  FragLookaheadScoreArgs out;
  out.policy.tie_break = TieBreak::kNodeOrder;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind, {"tieBreak", "lookaheadWeight", "candidates"}, &errs,
                            &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  if (!has_content) return out;
  const YAML::Node tb_node = (*args)["tieBreak"];
  if (tb_node.IsDefined() && !tb_node.IsNull()) {
    std::string tb;
    helper::ReadString(tb_node, "tieBreak", &tb, &errs);
    if (tb == "Random") {
      out.policy.tie_break = TieBreak::kRandom;
    } else if (tb != "NodeOrder") {
      errs.NotSupported("tieBreak", tb, {"NodeOrder", "Random"});
    }
  }
  helper::ReadNonNegativeNumber((*args)["lookaheadWeight"], "lookaheadWeight",
                                &out.lookahead_weight, &errs);
  const YAML::Node c = (*args)["candidates"];
  if (c.IsDefined() && !c.IsNull()) {
    int64_t n = 0;
    if (helper::ReadInt(c, "candidates", &n, &errs)) {
      if (n < 1 || n > 100000) {
        errs.Invalid("candidates", n, "must be in 1..100000");
      } else {
        out.candidates = static_cast<int32_t>(n);
      }
    }
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  return out;
}

FragLookaheadScore::FragLookaheadScore(FragLookaheadScoreArgs args, framework::Handle& h)
    : PolicyScorePlugin(args.policy, h), la_args_(args) {
  ctx_->RegisterDevicePolicy(std::string(kName), this);
}

FragLookaheadScore::~FragLookaheadScore() { ctx_->UnregisterDevicePolicy(this); }

framework::StatusOr<std::unique_ptr<framework::Plugin>> FragLookaheadScore::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto a = ParseFragLookaheadScoreArgs(args);
  if (!a.ok()) return a.status();
  return std::unique_ptr<framework::Plugin>(
      std::make_unique<FragLookaheadScore>(std::move(a).value(), h));
}

std::shared_ptr<gpu::FragMemo> FragLookaheadScore::Memo(const gpu::PodShape* observe) {
  absl::MutexLock l(&mu_);
  if (observe) learned_.Observe(*observe);
  const std::shared_ptr<const gpu::TargetWorkload>& w = learned_.Current();
  if (!memo_ || memo_->workload() != w) memo_ = std::make_shared<gpu::FragMemo>(w);
  return memo_;
}

double FragLookaheadScore::Delta(const gpu::NodeShape& node, const gpu::PodShape& pod,
                                 gpu::FragMemo& memo, int32_t* device) {
  *device = -1;
  if (node.milli_cpu_left < pod.milli_cpu) return kInf;
  return DeltaFrom(memo.Get(node), node, pod, memo, device);
}

double FragLookaheadScore::DeltaFrom(double before, const gpu::NodeShape& node,
                                     const gpu::PodShape& pod, gpu::FragMemo& memo,
                                     int32_t* device) {
  *device = -1;
  if (node.milli_cpu_left < pod.milli_cpu) return kInf;
  if (pod.gpu_count == 1 && pod.milli_gpu > 0 && pod.milli_gpu < 1000) {
    double best = kInf;
    gpu::NodeShape next = node;
    next.milli_cpu_left -= pod.milli_cpu;
    for (size_t i = 0; i < node.free_milli.size(); ++i) {
      if (node.free_milli[i] < pod.milli_gpu) continue;
      next.free_milli[i] -= pod.milli_gpu;
      const double c = memo.Get(next) - before;
      next.free_milli[i] += pod.milli_gpu;
      if (c < best) {
        best = c;
        *device = static_cast<int32_t>(i);
      }
    }
    return best;
  }
  gpu::NodeShape next;
  if (!gpu::SubtractPod(node, pod, &next)) return kInf;
  return memo.Get(next) - before;
}

gpu::NodeShape FragLookaheadScore::After(const gpu::NodeShape& node, const gpu::PodShape& pod,
                                         int32_t device) {
  gpu::NodeShape next = node;
  if (device >= 0 && static_cast<size_t>(device) < next.free_milli.size()) {
    next.milli_cpu_left -= pod.milli_cpu;
    next.free_milli[device] -= pod.milli_gpu;
    return next;
  }
  gpu::SubtractPod(node, pod, &next);
  return next;
}

std::shared_ptr<const TargetDeltas> FragLookaheadScore::DeltasOf(const gpu::NodeShape& node,
                                                                 gpu::FragMemo& memo) {
  std::string key = gpu::FragMemo::Key(node);
  auto it = deltas_memo_.find(key);
  if (it != deltas_memo_.end()) return it->second;
  const auto& w = memo.workload()->pods();
  auto d = std::make_shared<TargetDeltas>(w.size(), kInf);
  const double before = memo.Get(node);
  int32_t device;
  for (size_t t = 0; t < w.size(); ++t) {
    if (!gpu::ModelAccessible(node.model, w[t].shape.models)) continue;
    (*d)[t] = DeltaFrom(before, node, w[t].shape, memo, &device);
  }
  if (deltas_memo_.size() > (1u << 18)) deltas_memo_.clear();
  return deltas_memo_.emplace(std::move(key), std::move(d)).first->second;
}

void FragLookaheadScore::LookAhead(const framework::PodInfo& pod, const gpu::GpuAsk& ask,
                                   const std::vector<const framework::NodeInfo*>& nodes,
                                   const std::vector<std::shared_ptr<const NodeGpuState>>& states,
                                   const std::vector<size_t>& candidates, gpu::FragMemo& memo,
                                   std::vector<double>* cost) {
  const auto& w = memo.workload()->pods();
  const size_t T = w.size();
  if (look_memo_ != &memo) {  // a new workload: every delta changes
    look_.clear();
    deltas_memo_.clear();
    look_memo_ = &memo;
  }
  // Every node's current deltas (nodes with one state share one vector), then the best
  // host of each target shape over the cluster.
  const auto& all = handle_.SnapshotSharedLister().List();
  if (look_.size() != all.size()) look_.assign(all.size(), NodeLook());
  std::unordered_map<const TargetDeltas*, int32_t> distinct;
  distinct.reserve(256);
  for (size_t j = 0; j < all.size(); ++j) {
    const framework::NodeInfo& m = *all[j];
    NodeLook& l = look_[j];
    if (!l.deltas || l.generation != m.generation() || l.pods != m.pods().size() ||
        l.name != m.name()) {
      l.name = m.name();
      l.generation = m.generation();
      l.pods = m.pods().size();
      l.deltas = DeltasOf(ctx_->State(m)->shape, memo);
    }
    ++distinct[l.deltas.get()];
  }
  BestHosts b{std::vector<double>(T, kInf), std::vector<double>(T, kInf),
              std::vector<int32_t>(T, 0)};
  for (const auto& [d, count] : distinct) {
    for (size_t t = 0; t < T; ++t) {
      const double v = (*d)[t];
      if (v < b.best[t]) {
        b.second[t] = count > 1 ? v : b.best[t];
        b.best[t] = v;
        b.best_count[t] = count;
      } else if (v == b.best[t]) {
        b.best_count[t] += count;
      } else if (v < b.second[t]) {
        b.second[t] = v;
      }
    }
  }
  for (size_t i : candidates) {
    const auto& st = states[i];
    const gpu::PodShape shape = gpushare::PodShapeOf(pod, ask, &st->gpus);
    int32_t device;
    if (Delta(st->shape, shape, memo, &device) == kInf) continue;
    // The candidate's current deltas: its entry in the list (feasible nodes come from it).
    const TargetDeltas* before = nullptr;
    for (size_t j = 0; j < all.size() && !before; ++j) {
      if (all[j] == nodes[i]) before = look_[j].deltas.get();
    }
    const auto after = DeltasOf(After(st->shape, shape, device), memo);
    double future = 0;
    for (size_t t = 0; t < T; ++t) {
      // The best host of t among the other nodes: this node held the best alone?
      const bool alone = before && (*before)[t] == b.best[t] && b.best_count[t] == 1;
      double g = std::min(alone ? b.second[t] : b.best[t], (*after)[t]);
      if (g == kInf) g = static_cast<double>(w[t].shape.total_milli_gpu());
      future += w[t].freq * g;
    }
    (*cost)[i] += la_args_.lookahead_weight * future;
  }
}

framework::Status FragLookaheadScore::PreScore(
    framework::CycleState& state, const framework::PodInfo& pod,
    const std::vector<const framework::NodeInfo*>& nodes) {
  const gpu::GpuAsk ask = gpu::ParseGpuAsk(pod.Pod());
  const gpu::PodShape observed = gpushare::PodShapeOf(pod, ask, nullptr);
  auto memo = Memo(&observed);
  absl::MutexLock l(&look_mu_);
  if (!have_salt_ || args_.tie_break == TieBreak::kRandom) {
    salt_ = handle_.Random(UINT64_MAX);
    have_salt_ = true;
  }
  const size_t n = nodes.size();
  std::vector<double> cost(n, 0);
  std::vector<int64_t> bucket(n, Bucket(0));
  std::vector<uint64_t> key(n);
  std::vector<std::shared_ptr<const NodeGpuState>> states(n);
  const bool none = NoRequests(pod, ask);
  for (size_t i = 0; i < n; ++i) {
    key[i] = NodeOrderKey(salt_, nodes[i]->name());
    if (none) continue;
    states[i] = ctx_->State(*nodes[i]);
    int32_t device;
    cost[i] =
        Delta(states[i]->shape, gpushare::PodShapeOf(pod, ask, &states[i]->gpus), *memo, &device);
    bucket[i] = Bucket(cost[i]);
  }
  // FGD's ranking (bucket, then the node order); its best `candidates` are looked ahead from.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  auto before = [&key](const std::vector<int64_t>& b) {
    return [&b, &key](size_t x, size_t y) { return b[x] != b[y] ? b[x] > b[y] : key[x] < key[y]; };
  };
  const size_t m =
      none ? std::min<size_t>(n, 1) : std::min(n, static_cast<size_t>(la_args_.candidates));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(m), order.end(),
                    before(bucket));
  order.resize(m);
  size_t winner = m > 0 ? order[0] : n;
  if (!none && m > 0 && la_args_.lookahead_weight > 0 && !memo->workload()->empty()) {
    std::vector<double> total = cost;
    LookAhead(pod, ask, nodes, states, order, *memo, &total);
    std::vector<int64_t> total_bucket(n, -1);
    for (size_t i : order) total_bucket[i] = Bucket(total[i]);
    winner = *std::min_element(order.begin(), order.end(), before(total_bucket));
  }
  auto s = std::make_unique<LookaheadState>();
  s->scores.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // The winner 100; the rest 99..0 by FGD's bucket (a coarse order for other scorers).
    s->scores[nodes[i]] =
        i == winner ? framework::kMaxNodeScore : std::clamp<int64_t>(bucket[i], 0, 99);
  }
  state.Write(kStateKey, std::move(s));
  return framework::Status();
}

framework::Status FragLookaheadScore::Score(const framework::CycleState& state,
                                            const framework::PodInfo&,
                                            const framework::NodeInfo& node, int64_t* score) {
  *score = 0;
  if (const auto* s = state.ReadAs<LookaheadState>(kStateKey)) {
    auto it = s->scores.find(&node);
    if (it != s->scores.end()) *score = it->second;
  }
  return framework::Status();
}

std::vector<int32_t> FragLookaheadScore::ChooseDevices(const NodeGpuState& node,
                                                       const framework::PodInfo& pod,
                                                       const gpu::GpuAsk& ask, int32_t milli) {
  if (!ask.is_share()) return {};
  auto memo = Memo(nullptr);
  gpu::PodShape shape = gpushare::PodShapeOf(pod, ask, &node.gpus);
  shape.milli_gpu = milli;
  int32_t device = -1;
  Delta(node.shape, shape, *memo, &device);
  if (device < 0) return {};
  return {device};
}

}  // namespace phalanx::plugins::gpupolicy
