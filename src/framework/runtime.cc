#include "framework/runtime.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <set>

#include "api/field_audit.h"
#include "config/types.h"
#include "framework/prebind_wait.h"

namespace phalanx::framework {

namespace {

// Runs `body` (an extension point's plugins, returning the point's Status) and reports its
// duration and code to `o` (nullptr: no clock read).
template <typename F>
Status TimedPoint(ExtensionPointObserver* o, ExtensionPoint point, F&& body) {
  if (!o) return body();
  const auto t0 = std::chrono::steady_clock::now();
  Status s = body();
  o->ObserveStatus(point, s.code(), NanosSince(t0));
  return s;
}

// Runs one plugin call (`call` returns its Status); in a sampled cycle
// (state.record_plugin_metrics) its duration goes to `o` (upstream
// frameworkImpl.run*Plugin with state.ShouldRecordPluginMetrics()).
template <typename F>
Status TimedPlugin(ExtensionPointObserver* o, const CycleState& state, std::string_view plugin,
                   ExtensionPoint point, F&& call) {
  if (!state.record_plugin_metrics || !o) return call();
  const auto t0 = std::chrono::steady_clock::now();
  Status s = call();
  o->ObservePlugin(plugin, point, s.code(), NanosSince(t0));
  return s;
}

}  // namespace

// ---- waiting pods ----

class WaitingPodImpl : public WaitingPod {
 public:
  // `plugins`: each waiting plugin with its own deadline (upstream runs a timer per plugin).
  WaitingPodImpl(Framework* fw, PodInfoPtr pod,
                 std::vector<std::pair<std::string, api::Timestamp>> plugins,
                 std::function<void(Status)> on_done)
      : fw_(fw), pod_(std::move(pod)), pending_(std::move(plugins)), on_done_(std::move(on_done)) {}

  const api::Pod& GetPod() const override { return *pod_->pod; }
  std::vector<std::string> GetPendingPlugins() const override {
    absl::MutexLock l(&mu_);
    std::vector<std::string> out;
    for (const auto& [name, deadline] : pending_) out.push_back(name);
    return out;
  }
  void Allow(std::string_view plugin) override {
    std::function<void(Status)> done;
    {
      absl::MutexLock l(&mu_);
      std::erase_if(pending_, [&](const auto& e) { return e.first == plugin; });
      if (!pending_.empty() || finished_) return;
      finished_ = true;
      done = std::move(on_done_);
    }
    Finish(std::move(done), Status::Success());
  }
  void Reject(std::string_view plugin, std::string_view msg) override {
    std::function<void(Status)> done;
    {
      absl::MutexLock l(&mu_);
      if (finished_) return;
      finished_ = true;
      done = std::move(on_done_);
    }
    Status s(Code::kUnschedulable, std::string(msg));
    s.WithPlugin(plugin);
    Finish(std::move(done), std::move(s));
  }
  // The plugin still waiting whose timeout comes first, and that deadline.
  std::pair<std::string, api::Timestamp> NextDeadline() const {
    absl::MutexLock l(&mu_);
    std::pair<std::string, api::Timestamp> next{"", LLONG_MAX};
    for (const auto& e : pending_) {
      if (e.second < next.second) next = e;
    }
    return next;
  }
  api::Timestamp deadline() const { return NextDeadline().second; }

 private:
  void Finish(std::function<void(Status)> done, Status s) {
    fw_->RemoveWaitingPod(pod_->pod->metadata.uid);
    if (done) done(std::move(s));
  }

  Framework* fw_;
  PodInfoPtr pod_;
  mutable absl::Mutex mu_;
  // plugin, deadline
  std::vector<std::pair<std::string, api::Timestamp>> pending_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void(Status)> on_done_ ABSL_GUARDED_BY(mu_);
};

// ---- construction ----

namespace {

struct PointRef {
  const char* field;  // config field name, for errors
  const config::PluginSet* set;
};

template <typename T>
Status BuildList(const std::string& profile, const char* point_name, const char* field,
                 const config::PluginSet& set, const config::PluginSet& multi,
                 const std::unordered_map<std::string, Plugin*>& plugins, std::vector<T*>* out) {
  std::vector<std::string> enabled;
  for (const auto& p : set.enabled) {
    auto it = plugins.find(p.name);
    if (it == plugins.end()) {
      return Status::Error("profile \"" + profile + "\": plugins." + field +
                           ".enabled: " + point_name + " plugin \"" + p.name + "\" does not exist");
    }
    if (dynamic_cast<T*>(it->second) == nullptr) {
      return Status::Error("profile \"" + profile + "\": plugins." + field + ".enabled: plugin \"" +
                           p.name + "\" does not extend " + point_name + " plugin");
    }
    if (std::find(enabled.begin(), enabled.end(), p.name) != enabled.end()) {
      return Status::Error("profile \"" + profile + "\": plugins." + field + ".enabled: plugin \"" +
                           p.name + "\" already registered as " + point_name);
    }
    enabled.push_back(p.name);
  }
  std::set<std::string> disabled;
  for (const auto& p : set.disabled) disabled.insert(p.name);
  std::vector<std::string> overrides, multi_enabled;
  if (!disabled.count("*")) {
    for (const auto& p : multi.enabled) {
      auto it = plugins.find(p.name);
      if (it == plugins.end()) {
        return Status::Error("profile \"" + profile + "\": plugins.multiPoint.enabled: plugin \"" +
                             p.name + "\" does not exist");
      }
      if (dynamic_cast<T*>(it->second) == nullptr) continue;
      if (disabled.count(p.name)) continue;
      if (std::find(enabled.begin(), enabled.end(), p.name) != enabled.end()) {
        overrides.push_back(p.name);
        continue;
      }
      if (std::find(multi_enabled.begin(), multi_enabled.end(), p.name) != multi_enabled.end()) {
        return Status::Error("profile \"" + profile + "\": plugins.multiPoint.enabled: plugin \"" +
                             p.name + "\" already registered as " + point_name);
      }
      multi_enabled.push_back(p.name);
    }
  }
  // Upstream order: overrides (in the point's order), then multiPoint, then the rest.
  std::vector<std::string> order;
  for (const auto& n : enabled) {
    if (std::find(overrides.begin(), overrides.end(), n) != overrides.end()) order.push_back(n);
  }
  for (const auto& n : multi_enabled) order.push_back(n);
  for (const auto& n : enabled) {
    if (std::find(overrides.begin(), overrides.end(), n) == overrides.end()) order.push_back(n);
  }
  out->clear();
  for (const auto& n : order) out->push_back(dynamic_cast<T*>(plugins.at(n)));
  return Status::Success();
}

}  // namespace

StatusOr<std::unique_ptr<Framework>> Framework::New(const Registry& registry,
                                                    const config::Profile& profile,
                                                    FrameworkOptions opts) {
  std::unique_ptr<Framework> f(new Framework());
  f->profile_name_ = profile.scheduler_name;
  f->opts_ = std::move(opts);
  f->percentage_of_nodes_to_score_ =
      profile.percentage_of_nodes_to_score.value_or(f->opts_.percentage_of_nodes_to_score);
  const std::string& pn = profile.scheduler_name;
  const config::Plugins& ps = profile.plugins;

  // Plugins needed: every enabled name at any point.
  std::vector<std::string> needed;
  auto collect = [&](const config::PluginSet& s) {
    for (const auto& p : s.enabled) {
      if (std::find(needed.begin(), needed.end(), p.name) == needed.end()) needed.push_back(p.name);
    }
  };
  for (const auto* s : {&ps.pre_enqueue, &ps.queue_sort, &ps.pre_filter, &ps.filter,
                        &ps.post_filter, &ps.pre_score, &ps.score, &ps.reserve, &ps.permit,
                        &ps.pre_bind, &ps.bind, &ps.post_bind, &ps.multi_point}) {
    collect(*s);
  }
  std::unordered_map<std::string, Plugin*> plugins;
  Status s = f->InstantiatePlugins(registry, profile, needed, &plugins);
  if (!s.IsSuccess()) return s;

  std::vector<PreEnqueuePlugin*> pre_enqueue_tmp;
  std::vector<QueueSortPlugin*> queue_sort_tmp;
  std::vector<PreFilterPlugin*> pre_filter_tmp;
  std::vector<FilterPlugin*> filter_tmp;
  std::vector<PostFilterPlugin*> post_filter_tmp;
  std::vector<PreScorePlugin*> pre_score_tmp;
  std::vector<ScorePlugin*> score_tmp;
  std::vector<ReservePlugin*> reserve_tmp;
  std::vector<PermitPlugin*> permit_tmp;
  std::vector<PreBindPlugin*> pre_bind_tmp;
  std::vector<BindPlugin*> bind_tmp;
  std::vector<PostBindPlugin*> post_bind_tmp;
#define PHALANX_BUILD(T, point, field, member)                                           \
  s = BuildList<T>(pn, point, field, ps.member, ps.multi_point, plugins, &member##_tmp); \
  if (!s.IsSuccess()) return s;
  PHALANX_BUILD(PreEnqueuePlugin, "PreEnqueue", "preEnqueue", pre_enqueue)
  PHALANX_BUILD(QueueSortPlugin, "QueueSort", "queueSort", queue_sort)
  PHALANX_BUILD(PreFilterPlugin, "PreFilter", "preFilter", pre_filter)
  PHALANX_BUILD(FilterPlugin, "Filter", "filter", filter)
  PHALANX_BUILD(PostFilterPlugin, "PostFilter", "postFilter", post_filter)
  PHALANX_BUILD(PreScorePlugin, "PreScore", "preScore", pre_score)
  PHALANX_BUILD(ScorePlugin, "Score", "score", score)
  PHALANX_BUILD(ReservePlugin, "Reserve", "reserve", reserve)
  PHALANX_BUILD(PermitPlugin, "Permit", "permit", permit)
  PHALANX_BUILD(PreBindPlugin, "PreBind", "preBind", pre_bind)
  PHALANX_BUILD(BindPlugin, "Bind", "bind", bind)
  PHALANX_BUILD(PostBindPlugin, "PostBind", "postBind", post_bind)
#undef PHALANX_BUILD
  // PodGroupPostFilter plugins (framework/podgroup.h): the postFilter point's list for that
  // interface — its explicit entries that implement it, then multiPoint's — so that a
  // PostFilter plugin without it is no error there (upstream filters its PostFilter list
  // the same way) and a plugin with no single-pod PostFilter (GangReservation) joins it.
  {
    config::PluginSet point = ps.post_filter;
    std::erase_if(point.enabled, [&](const config::PluginRef& e) {
      auto it = plugins.find(e.name);
      return it == plugins.end() || dynamic_cast<PodGroupPostFilterPlugin*>(it->second) == nullptr;
    });
    s = BuildList<PodGroupPostFilterPlugin>(pn, "PodGroupPostFilter", "postFilter", point,
                                            ps.multi_point, plugins, &f->pod_group_post_filter_);
    if (!s.IsSuccess()) return s;
  }
  f->pre_enqueue_ = std::move(pre_enqueue_tmp);
  f->pre_filter_ = std::move(pre_filter_tmp);
  for (auto* p : f->pre_filter_) {
    if (p->GetPreFilterExtensions() != nullptr) f->pre_filter_with_extensions_.push_back(p);
  }
  f->filter_ = std::move(filter_tmp);
  f->post_filter_ = std::move(post_filter_tmp);
  f->pre_score_ = std::move(pre_score_tmp);
  f->score_ = std::move(score_tmp);
  f->reserve_ = std::move(reserve_tmp);
  f->permit_ = std::move(permit_tmp);
  f->pre_bind_ = std::move(pre_bind_tmp);
  f->bind_ = std::move(bind_tmp);
  f->post_bind_ = std::move(post_bind_tmp);

  if (queue_sort_tmp.size() != 1) {
    return Status::Error("profile \"" + pn +
                         "\": only one queue sort plugin required for profile, but got " +
                         std::to_string(queue_sort_tmp.size()));
  }
  f->queue_sort_ = queue_sort_tmp[0];
  if (f->bind_.empty()) {
    return Status::Error("profile \"" + pn + "\": at least one bind plugin is needed");
  }
  f->SetScoreWeights(ps);
  f->CollectExtensions(ps, needed, plugins);
  return f;
}

Status Framework::InstantiatePlugins(const Registry& registry, const config::Profile& profile,
                                     const std::vector<std::string>& needed,
                                     std::unordered_map<std::string, Plugin*>* plugins) {
  const std::string& pn = profile.scheduler_name;
  std::set<std::string> seen_config;
  for (const auto& pc : profile.plugin_config) {
    if (!registry.Has(pc.name)) {
      return Status::Error("profile \"" + pn + "\": pluginConfig: plugin \"" + pc.name +
                           "\" is not registered");
    }
    if (!seen_config.insert(pc.name).second) {
      return Status::Error("profile \"" + pn + "\": pluginConfig: repeated config for plugin " +
                           pc.name);
    }
  }
  for (const auto& name : needed) {
    const PluginFactory* factory = registry.Find(name);
    if (!factory) {
      std::string known;
      for (const auto& [n, _] : registry.factories()) known += (known.empty() ? "" : ", ") + n;
      return Status::Error("profile \"" + pn + "\": plugin \"" + name +
                           "\" is not registered (known plugins: " + known + ")");
    }
    const YAML::Node* args = nullptr;
    for (const auto& pc : profile.plugin_config) {
      if (pc.name == name && pc.args) args = pc.args.get();
    }
    auto p = (*factory)(args, *this);
    if (!p.ok()) {
      return Status::Error("profile \"" + pn + "\": initializing plugin \"" + name +
                           "\": " + p.status().Message());
    }
    (*plugins)[name] = p.value().get();
    owned_.push_back(std::move(p).value());
  }
  return Status::Success();
}

void Framework::SetScoreWeights(const config::Plugins& ps) {
  // Score weights: the score point's value first, then multiPoint's; 0 means 1.
  for (auto* sp : score_) {
    int64_t w = -1;
    for (const auto* set : {&ps.score, &ps.multi_point}) {
      for (const auto& p : set->enabled) {
        if (w < 0 && p.name == sp->Name()) w = p.weight;
      }
    }
    if (w <= 0) w = 1;
    score_weights_.push_back(w);
  }
}

void Framework::CollectExtensions(const config::Plugins& ps, const std::vector<std::string>& needed,
                                  const std::unordered_map<std::string, Plugin*>& plugins) {
  for (const auto& [name, p] : plugins) {
    if (auto* e = dynamic_cast<EnqueueExtensions*>(p)) enqueue_ext_.push_back(e);
  }
  std::sort(enqueue_ext_.begin(), enqueue_ext_.end(),
            [](auto* a, auto* b) { return a->Name() < b->Name(); });
  // PodGroup plugins: those enabled for any point (they implement no upstream point of
  // their own), in the order of the profile's plugin list.
  for (const auto& name : needed) {
    if (auto* pg = dynamic_cast<PodGroupPlugin*>(plugins.at(name))) {
      bool disabled = false;
      for (const auto& d : ps.multi_point.disabled) disabled = disabled || d.name == name;
      if (!disabled) pod_group_.push_back(pg);
    }
    if (auto* pp = dynamic_cast<PodGroupPlacementPlugin*>(plugins.at(name))) {
      bool disabled = false;
      for (const auto& d : ps.multi_point.disabled) disabled = disabled || d.name == name;
      if (!disabled) pod_group_placement_.push_back(pp);
    }
    if (auto* g = dynamic_cast<PlacementGeneratePlugin*>(plugins.at(name))) {
      bool disabled = false;
      for (const auto& d : ps.multi_point.disabled) disabled = disabled || d.name == name;
      if (!disabled) placement_generate_.push_back(g);
    }
    if (auto* sc = dynamic_cast<PlacementScorePlugin*>(plugins.at(name))) {
      bool disabled = false;
      for (const auto& d : ps.multi_point.disabled) disabled = disabled || d.name == name;
      if (!disabled) {
        // The weight of its multiPoint (or score) entry; 0 means 1.
        int64_t w = 0;
        for (const auto* set : {&ps.score, &ps.multi_point}) {
          for (const auto& e : set->enabled) {
            if (w == 0 && e.name == name) w = e.weight;
          }
        }
        placement_score_.push_back(sc);
        placement_score_weights_.push_back(w <= 0 ? 1 : w);
      }
    }
    if (auto* l = dynamic_cast<PodGroupCycleListener*>(plugins.at(name))) {
      bool disabled = false;
      for (const auto& d : ps.multi_point.disabled) disabled = disabled || d.name == name;
      if (!disabled) pod_group_listeners_.push_back(l);
    }
    if (auto* v = dynamic_cast<PodGroupVictimPolicy*>(plugins.at(name))) {
      bool disabled = false;
      for (const auto& d : ps.multi_point.disabled) disabled = disabled || d.name == name;
      if (!disabled) pod_group_victim_policies_.push_back(v);
    }
  }
  // Batching (KEP-5598) needs a signature from every plugin that filters or scores.
  std::set<const Plugin*> seen;
  bool all = true;
  auto add = [&](const Plugin* p) {
    if (!seen.insert(p).second) return;
    if (const auto* b = dynamic_cast<const BatchablePlugin*>(p)) {
      batchable_plugins_.push_back(b);
    } else {
      all = false;
    }
  };
  for (const auto* p : pre_filter_) add(p);
  for (const auto* p : filter_) add(p);
  for (const auto* p : pre_score_) add(p);
  for (const auto* p : score_) add(p);
  batchable_ = all;
}

Framework::~Framework() = default;

// ---- extension points ----

Status Framework::RunPreEnqueuePlugins(const PodInfo& pod) {
  for (auto* p : pre_enqueue_) {
    Status s = p->PreEnqueue(pod);
    if (!s.IsSuccess()) {
      s.WithPlugin(p->Name());
      return s;
    }
  }
  return Status::Success();
}

void Framework::SetExtensionPointObserver(ExtensionPointObserver* o) {
  observer_ = o;
  filter_evaluations_.reset();
  score_evaluations_.reset();
  if (o && o->WantsEvaluations()) {
    filter_evaluations_ = std::make_unique<EvalCount[]>(filter_.size());
    score_evaluations_ = std::make_unique<EvalCount[]>(score_.size());
  }
}

void Framework::FlushPluginEvaluations() {
  if (!observer_ || !filter_evaluations_) return;
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (uint64_t n = filter_evaluations_[i].n.exchange(0, std::memory_order_relaxed)) {
      observer_->CountEvaluations(filter_[i]->Name(), ExtensionPoint::kFilter, n);
    }
  }
  for (size_t i = 0; i < score_.size(); ++i) {
    if (uint64_t n = score_evaluations_[i].n.exchange(0, std::memory_order_relaxed)) {
      observer_->CountEvaluations(score_[i]->Name(), ExtensionPoint::kScore, n);
    }
  }
}

bool Framework::QueueSortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  return queue_sort_->Less(a, b);
}

bool Framework::QueueSortHasKey() const { return queue_sort_->HasSortKey(); }

QueueSortKey Framework::QueueSortKeyOf(const QueuedPodInfo& p) const {
  return queue_sort_->SortKey(p);
}

bool Framework::QueueSortHasPartitions() const { return queue_sort_->HasPartitions(); }

std::string Framework::QueueSortPartitionOf(const QueuedPodInfo& p) const {
  return queue_sort_->Partition(p);
}

bool Framework::QueueSortPartitionLess(const std::string& a, const std::string& b) const {
  return queue_sort_->PartitionLess(a, b);
}

std::vector<std::pair<std::string, ClusterEventWithHint>> Framework::EventHints() const {
  std::vector<std::pair<std::string, ClusterEventWithHint>> out;
  for (auto* e : enqueue_ext_) {
    for (auto& h : e->EventsToRegister()) out.emplace_back(std::string(e->Name()), std::move(h));
  }
  return out;
}

Status Framework::RunPreFilterPlugins(CycleState& state, const PodInfo& pod,
                                      PreFilterResult* result) {
  ExtensionPointTimer timer(observer_, ExtensionPoint::kPreFilter);
  FlushPluginEvaluations();
  Status s = RunPreFilterPluginsInternal(state, pod, result);
  timer.set_code(s.code());
  state.skip_filter_mask = 0;
  for (size_t i = 0; i < filter_.size() && i < 64; ++i) {
    if (state.SkipFilter(filter_[i]->Name())) state.skip_filter_mask |= uint64_t{1} << i;
  }
  return s;
}

Status Framework::RunPreFilterPluginsInternal(CycleState& state, const PodInfo& pod,
                                              PreFilterResult* result) {
  *result = PreFilterResult{};
  // The field audit (api/field_audit.h): a pod that sets a field upstream reads for
  // placement and Phalanx does not honour is never placed as if the field were absent.
  if (const auto& fields = pod.Pod().spec.unsupported_fields; !fields.empty()) {
    return Status(Code::kUnschedulableAndUnresolvable, api::UnsupportedFieldsReason(fields));
  }
  Status ret;
  std::vector<std::string> with_nodes;
  for (auto* p : pre_filter_) {
    PreFilterResult r;
    Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kPreFilter,
                           [&] { return p->PreFilter(state, pod, &r); });
    if (s.IsSkip()) {
      state.skip_filter_plugins.push_back(p->Name());
      continue;
    }
    if (observer_) observer_->CountEvaluations(p->Name(), ExtensionPoint::kPreFilter, 1);
    if (!s.IsSuccess()) {
      s.WithPlugin(p->Name());
      if (s.code() == Code::kUnschedulableAndUnresolvable) return s;
      if (s.code() == Code::kUnschedulable) {
        ret = std::move(s);
        continue;
      }
      Status e = Status::Error("running PreFilter plugin \"" + std::string(p->Name()) +
                               "\": " + s.Message());
      e.WithPlugin(p->Name());
      return e;
    }
    // A plugin that keeps every node changes nothing (Merge would copy the result onto
    // itself, and narrowed_by onto itself).
    if (r.all_nodes && r.node_names.empty() && result->all_nodes) continue;
    if (!r.all_nodes) with_nodes.emplace_back(p->Name());
    *result = result->Merge(r);
    result->narrowed_by = with_nodes;
    if (!result->all_nodes && result->node_names.empty()) {
      std::sort(with_nodes.begin(), with_nodes.end());  // upstream sets.List: sorted
      std::string msg;
      if (with_nodes.size() == 1) {
        msg = "node(s) didn't satisfy plugin " + with_nodes[0];
      } else {
        msg = "node(s) didn't satisfy plugin(s) [";
        for (size_t i = 0; i < with_nodes.size(); ++i) msg += (i ? " " : "") + with_nodes[i];
        msg += "] simultaneously";
      }
      return Status(Code::kUnschedulableAndUnresolvable, msg);
    }
  }
  std::sort(result->narrowed_by.begin(), result->narrowed_by.end());
  return ret;
}

PreFilterResult PreFilterResult::Merge(const PreFilterResult& other) const {
  if (all_nodes) return other;
  if (other.all_nodes) return *this;
  PreFilterResult r;
  r.all_nodes = false;
  for (const auto& n : node_names) {
    if (other.node_names.count(n)) r.node_names.insert(n);
  }
  return r;
}

Status Framework::RunFilterPlugins(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node) {
  // The hot loop stays as lean as without metrics: counting evaluations and sampled
  // timing take the general loop below.
  if (filter_.size() <= 64 && !filter_evaluations_ && !state.record_plugin_metrics) {
    // Only the plugins PreFilter did not skip, in profile order: one bit scan per plugin
    // run instead of a test per configured plugin (most are skipped for plain pods).
    uint64_t active = filter_.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << filter_.size()) - 1;
    active &= ~state.skip_filter_mask;
    for (; active != 0; active &= active - 1) {
      FilterPlugin* p = filter_[static_cast<size_t>(__builtin_ctzll(active))];
      Status s = p->Filter(state, pod, node);
      if (!s.IsSuccess()) {
        if (!s.IsRejected()) {
          s = Status::Error("running \"" + std::string(p->Name()) +
                            "\" filter plugin: " + s.Message());
        }
        s.WithPlugin(p->Name());
        return s;
      }
    }
    return Status::Success();
  }
  for (size_t i = 0; i < filter_.size(); ++i) {
    FilterPlugin* p = filter_[i];
    if (i < 64 ? (state.skip_filter_mask >> i) & 1
               : (!state.skip_filter_plugins.empty() && state.SkipFilter(p->Name()))) {
      continue;
    }
    if (filter_evaluations_) filter_evaluations_[i].n.fetch_add(1, std::memory_order_relaxed);
    Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kFilter,
                           [&] { return p->Filter(state, pod, node); });
    if (!s.IsSuccess()) {
      if (!s.IsRejected()) {
        s = Status::Error("running \"" + std::string(p->Name()) +
                          "\" filter plugin: " + s.Message());
      }
      s.WithPlugin(p->Name());
      return s;
    }
  }
  return Status::Success();
}

Status Framework::RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                    const NodeInfo& node) {
  // The nominated pods to add: at least the pod's priority, not the pod itself.
  auto view = NominatedPodsViewForNode(node);
  auto to_add = [&](const PodInfoPtr& p) {
    return p->priority >= pod.priority && p->pod->metadata.uid != pod.pod->metadata.uid;
  };
  if (!view || std::none_of(view->begin(), view->end(), to_add)) {
    return RunFilterPlugins(state, pod, node);
  }
  // First pass: with the nominated pods added; second: without (upstream, for affinity).
  bool extensions = false;
  for (auto* p : pre_filter_with_extensions_) {
    if (!state.SkipFilter(p->Name())) {
      extensions = true;
      break;
    }
  }
  if (!extensions) {
    // Only the NodeInfo changes: reuse the overlay built for the same nominated pods
    // (compared in place: a Filter pass asks this of every node holding nominations).
    auto overlay = node.nominated_overlay();
    bool same = overlay != nullptr;
    size_t j = 0;
    for (auto it = view->begin(); same && it != view->end(); ++it) {
      if (!to_add(*it)) continue;
      same = j < overlay->pods.size() && overlay->pods[j] == *it;
      ++j;
    }
    if (!same || j != overlay->pods.size()) {
      auto with = std::make_shared<NodeInfo>(node);
      auto o = std::make_shared<NominatedOverlay>();
      for (const auto& p : *view) {
        if (!to_add(p)) continue;
        with->AddPod(p);
        o->pods.push_back(p);
      }
      o->with = std::move(with);
      node.set_nominated_overlay(o);
      overlay = std::move(o);
    }
    Status s = RunFilterPlugins(state, pod, *overlay->with);
    if (!s.IsSuccess()) return s;
    return RunFilterPlugins(state, pod, node);
  }
  NodeInfo with = node;
  auto state_copy = state.Clone();
  for (const auto& p : *view) {
    if (!to_add(p)) continue;
    with.AddPod(p);
    Status s = RunPreFilterExtensionAddPod(*state_copy, pod, p, with);
    if (!s.IsSuccess()) return s;
  }
  Status s = RunFilterPlugins(*state_copy, pod, with);
  if (!s.IsSuccess()) return s;
  return RunFilterPlugins(state, pod, node);
}

Status Framework::RunPostFilterPlugins(CycleState& state, const PodInfo& pod, const NodeToStatus& f,
                                       PostFilterResult* result) {
  return TimedPoint(observer_, ExtensionPoint::kPostFilter, [&]() -> Status {
    // upstream: the reasons of every rejecting plugin, with the first one as the rejector.
    std::vector<std::string> reasons;
    std::string rejector;
    for (auto* p : post_filter_) {
      Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kPostFilter,
                             [&] { return p->PostFilter(state, pod, f, result); });
      if (s.IsSuccess()) return s;
      if (s.code() == Code::kUnschedulableAndUnresolvable) {
        s.WithPlugin(p->Name());
        return s;
      }
      if (!s.IsRejected()) {
        s.WithPlugin(p->Name());
        return s;
      }
      reasons.insert(reasons.end(), s.reasons().begin(), s.reasons().end());
      if (rejector.empty()) rejector = std::string(p->Name());
    }
    Status out(Code::kUnschedulable, std::move(reasons));
    out.WithPlugin(rejector);
    return out;
  });
}

Status Framework::RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                                     const std::vector<const NodeInfo*>& nodes) {
  return TimedPoint(observer_, ExtensionPoint::kPreScore, [&]() -> Status {
    for (auto* p : pre_score_) {
      Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kPreScore,
                             [&] { return p->PreScore(state, pod, nodes); });
      if (s.IsSkip()) {
        state.skip_score_plugins.push_back(p->Name());
        continue;
      }
      if (observer_) observer_->CountEvaluations(p->Name(), ExtensionPoint::kPreScore, 1);
      if (!s.IsSuccess()) {
        Status e = Status::Error("running PreScore plugin \"" + std::string(p->Name()) +
                                 "\": " + s.Message());
        e.WithPlugin(p->Name());
        return e;
      }
    }
    return Status::Success();
  });
}

namespace {

// The Error a failing Score plugin becomes (upstream runScorePlugins' wording).
Status ScoreError(const ScorePlugin& p, const Status& s) {
  Status e =
      Status::Error("running Score plugin \"" + std::string(p.Name()) + "\": " + s.Message());
  e.WithPlugin(p.Name());
  return e;
}

// The Error a failing NormalizeScore becomes.
Status NormalizeError(const ScorePlugin& p, const Status& s) {
  Status e = Status::Error("running Normalize on Score plugins: plugin \"" + std::string(p.Name()) +
                           "\": " + s.Message());
  e.WithPlugin(p.Name());
  return e;
}

// Adds value_at(i) * weight to (*totals)[i] for every node i; Error for a normalized score
// outside [kMinNodeScore, kMaxNodeScore], with the totals then updated up to the first
// invalid score only (as a loop stopping there would leave them). The common case (every
// score in range) is one branch-free pass the compiler can vectorize; the first invalid
// score is looked up only when there is one. (Unsigned arithmetic: an out-of-range score
// added and taken away again wraps instead of overflowing.)
template <class ValueAt>
Status AddWeighted(const ScorePlugin& p, ValueAt value_at, int64_t weight,
                   std::vector<int64_t>* totals) {
  const size_t n = totals->size();
  int64_t* t = totals->data();
  const uint64_t w = static_cast<uint64_t>(weight);
  bool bad = false;
  for (size_t i = 0; i < n; ++i) {
    const int64_t v = value_at(i);
    bad |= (v < kMinNodeScore) | (v > kMaxNodeScore);
    t[i] = static_cast<int64_t>(static_cast<uint64_t>(t[i]) + static_cast<uint64_t>(v) * w);
  }
  if (!bad) return Status::Success();
  for (size_t i = 0; i < n; ++i) {
    const int64_t v = value_at(i);
    if (v < kMinNodeScore || v > kMaxNodeScore) {
      for (size_t q = i; q < n; ++q) {  // not added from the invalid one on
        t[q] = static_cast<int64_t>(static_cast<uint64_t>(t[q]) -
                                    static_cast<uint64_t>(value_at(q)) * w);
      }
      Status e = Status::Error("plugin \"" + std::string(p.Name()) +
                               "\" returns an invalid score " + std::to_string(v) +
                               ", it should in the range of [0, 100] after normalizing");
      e.WithPlugin(p.Name());
      return e;
    }
  }
  return Status::Success();
}

// AddWeighted of a normalized row.
Status AddWeightedRow(const ScorePlugin& p, const std::vector<int64_t>& row, int64_t weight,
                      std::vector<int64_t>* totals) {
  const int64_t* r = row.data();
  return AddWeighted(
      p, [r](size_t i) { return r[i]; }, weight, totals);
}

// AddWeighted of the row raw[slots[0..n)] without writing the row out (a plugin with no
// NormalizeScore: its raw scores are added as they are).
Status AddWeightedGather(const ScorePlugin& p, const int64_t* raw, const uint32_t* slots,
                         int64_t weight, std::vector<int64_t>* totals) {
  return AddWeighted(
      p, [raw, slots](size_t i) { return raw[slots[i]]; }, weight, totals);
}

}  // namespace

Status Framework::RunScorePlugins(const CycleState& state, const PodInfo& pod,
                                  const std::vector<const NodeInfo*>& nodes,
                                  std::vector<int64_t>* totals, ScoreTable* table) {
  return TimedPoint(observer_, ExtensionPoint::kScore, [&]() -> Status {
    const Status s = RunScorePluginsInternal(state, pod, nodes, totals, table);
    FlushPluginEvaluations();
    return s;
  });
}

Status Framework::RunScorePluginsInternal(const CycleState& state, const PodInfo& pod,
                                          const std::vector<const NodeInfo*>& nodes,
                                          std::vector<int64_t>* totals, ScoreTable* table) {
  const size_t n = nodes.size();
  totals->assign(n, 0);
  std::vector<ScorePlugin*> active;
  std::vector<size_t> active_index;  // into score_
  std::vector<int64_t> weights;
  for (size_t j = 0; j < score_.size(); ++j) {
    if (!state.skip_score_plugins.empty() && state.SkipScore(score_[j]->Name())) continue;
    active.push_back(score_[j]);
    active_index.push_back(j);
    weights.push_back(score_weights_[j]);
  }
  if (table) *table = ScoreTable{};
  if (active.empty()) return Status::Success();
  // Score rows are reused across cycles (one set per thread: a cycle runs on one thread).
  // (A reference, so that pool workers running the lambda use this thread's rows.)
  thread_local std::vector<std::vector<int64_t>> tl_scores;
  std::vector<std::vector<int64_t>>& scores = tl_scores;
  if (scores.size() < active.size()) scores.resize(active.size());
  // Every score of a row is written by ScoreNodes (no separate zeroing pass).
  for (size_t j = 0; j < active.size(); ++j) scores[j].resize(n);
  absl::Mutex err_mu;
  Status err;
  bool failed = false;
  opts_.parallelizer->Until(n, 64, [&](size_t b, size_t e) {
    // Plugin-major within a chunk: one plugin's code and state stay hot across nodes.
    for (size_t j = 0; j < active.size(); ++j) {
      ScorePlugin* p = active[j];
      if (score_evaluations_) {
        score_evaluations_[active_index[j]].n.fetch_add(e - b, std::memory_order_relaxed);
      }
      Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kScore, [&] {
        return p->ScoreNodes(state, pod, nodes, b, e, scores[j].data());
      });
      if (!s.IsSuccess()) {
        absl::MutexLock l(&err_mu);
        if (!failed) {
          failed = true;
          err = ScoreError(*p, s);
        }
      }
    }
  });
  if (failed) return err;
  if (table) {
    table->plugins = active_index;
    table->weights = weights;
    table->raw.assign(scores.begin(), scores.begin() + static_cast<ptrdiff_t>(active.size()));
  }
  for (size_t j = 0; j < active.size(); ++j) {
    if (auto* ext = active[j]->GetScoreExtensions()) {
      Status s = ext->NormalizeScore(state, pod, nodes, scores[j]);
      if (!s.IsSuccess()) return NormalizeError(*active[j], s);
    }
    Status s = AddWeightedRow(*active[j], scores[j], weights[j], totals);
    if (!s.IsSuccess()) return s;
  }
  if (table) {
    table->normalized.assign(scores.begin(),
                             scores.begin() + static_cast<ptrdiff_t>(active.size()));
  }
  return Status::Success();
}

Status Framework::RunScorePluginsCached(const CycleState& state, const PodInfo& pod,
                                        const std::vector<const NodeInfo*>& nodes,
                                        const std::vector<uint32_t>& slots,
                                        const std::vector<int64_t>& generations,
                                        RawScoreCache* cache, std::vector<int64_t>* totals) {
  return TimedPoint(observer_, ExtensionPoint::kScore, [&]() -> Status {
    const Status s =
        RunScorePluginsCachedInternal(state, pod, nodes, slots, generations, cache, totals);
    FlushPluginEvaluations();
    return s;
  });
}

Status Framework::RunScorePluginsCachedInternal(const CycleState& state, const PodInfo& pod,
                                                const std::vector<const NodeInfo*>& nodes,
                                                const std::vector<uint32_t>& slots,
                                                const std::vector<int64_t>& generations,
                                                RawScoreCache* cache,
                                                std::vector<int64_t>* totals) {
  const size_t n = nodes.size();
  const size_t num_slots = generations.size();
  totals->assign(n, 0);
  // Scratch reused across cycles (one set per thread: a cycle runs on one thread).
  thread_local std::vector<size_t> tl_active_index;
  thread_local std::vector<const NodeInfo*> tl_missing;
  thread_local std::vector<uint32_t> tl_missing_slots;
  std::vector<size_t>& active_index = tl_active_index;  // into score_
  active_index.clear();
  for (size_t j = 0; j < score_.size(); ++j) {
    if (!state.skip_score_plugins.empty() && state.SkipScore(score_[j]->Name())) continue;
    active_index.push_back(j);
  }
  if (!cache->initialized || cache->plugins != active_index || cache->node.size() != num_slots) {
    cache->Clear();
    cache->initialized = true;
    cache->plugins = active_index;
    cache->raw.assign(active_index.size(), std::vector<int64_t>(num_slots, 0));
    cache->nonzero.assign(active_index.size(), 0);
    cache->node.assign(num_slots, nullptr);
    cache->generation.assign(num_slots, 0);
  }
  const size_t k = active_index.size();
  if (k == 0) return Status::Success();
  // The nodes without valid raw scores, scored as RunScorePlugins would (in parallel).
  std::vector<const NodeInfo*>& missing = tl_missing;
  std::vector<uint32_t>& missing_slots = tl_missing_slots;
  missing.clear();
  missing_slots.clear();
  const NodeInfo* const* cached_node = cache->node.data();
  const int64_t* cached_generation = cache->generation.data();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t slot = slots[i];
    if (cached_node[slot] != nodes[i] || cached_generation[slot] != generations[slot]) {
      missing.push_back(nodes[i]);
      missing_slots.push_back(slot);
    }
  }
  if (!missing.empty()) {
    const size_t m = missing.size();
    std::vector<std::vector<int64_t>> fresh(k, std::vector<int64_t>(m, 0));
    absl::Mutex err_mu;
    Status err;
    bool failed = false;
    opts_.parallelizer->Until(m, 64, [&](size_t b, size_t e) {
      for (size_t j = 0; j < k; ++j) {
        ScorePlugin* p = score_[active_index[j]];
        if (score_evaluations_) {
          score_evaluations_[active_index[j]].n.fetch_add(e - b, std::memory_order_relaxed);
        }
        Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kScore, [&] {
          return p->ScoreNodes(state, pod, missing, b, e, fresh[j].data());
        });
        if (!s.IsSuccess()) {
          absl::MutexLock l(&err_mu);
          if (!failed) {
            failed = true;
            err = ScoreError(*p, s);
          }
        }
      }
    });
    if (failed) {
      cache->Clear();
      return err;
    }
    for (size_t q = 0; q < m; ++q) {
      const uint32_t slot = missing_slots[q];
      for (size_t j = 0; j < k; ++j) {
        int64_t& r = cache->raw[j][slot];
        cache->nonzero[j] += static_cast<size_t>(fresh[j][q] != 0) - static_cast<size_t>(r != 0);
        r = fresh[j][q];
      }
      cache->node[slot] = missing[q];
      cache->generation[slot] = missing[q]->generation();
    }
    cache->computed += static_cast<int64_t>(m);
  }
  thread_local std::vector<int64_t> row;  // reused across cycles (the scheduling thread)
  row.resize(n);
  for (size_t j = 0; j < k; ++j) {
    ScorePlugin* p = score_[active_index[j]];
    auto* ext = p->GetScoreExtensions();
    if (cache->nonzero[j] == 0) {
      // Every raw score is 0: nothing to add unless NormalizeScore maps the zeros to
      // something else (e.g. TaintToleration's reverse normalization, to 100).
      if (ext == nullptr) continue;
      row.assign(n, 0);
    } else if (ext == nullptr) {
      Status s = AddWeightedGather(*p, cache->raw[j].data(), slots.data(),
                                   score_weights_[active_index[j]], totals);
      if (!s.IsSuccess()) return s;
      continue;
    } else {
      const int64_t* raw = cache->raw[j].data();
      const uint32_t* slot = slots.data();
      int64_t* out = row.data();
      for (size_t i = 0; i < n; ++i) out[i] = raw[slot[i]];
    }
    if (ext) {
      Status s = ext->NormalizeScore(state, pod, nodes, row);
      if (!s.IsSuccess()) return NormalizeError(*p, s);
    }
    Status s = AddWeightedRow(*p, row, score_weights_[active_index[j]], totals);
    if (!s.IsSuccess()) return s;
  }
  return Status::Success();
}

bool Framework::RescoreScoreTable(const CycleState& state, const PodInfo& pod,
                                  const std::vector<const NodeInfo*>& nodes, size_t i, bool removed,
                                  ScoreTable* table, std::vector<int64_t>* totals, Status* status) {
  *status = Status::Success();
  // The plugins that run for `pod` must be the table's (PreScore may skip some).
  size_t k = 0;
  for (size_t j = 0; j < score_.size(); ++j) {
    if (!state.skip_score_plugins.empty() && state.SkipScore(score_[j]->Name())) continue;
    if (k >= table->plugins.size() || table->plugins[k] != j) return false;
    ++k;
  }
  if (k != table->plugins.size()) return false;
  const size_t n = nodes.size();
  if (table->raw.size() != k || (k > 0 && table->raw[0].size() != n + (removed ? 1 : 0))) {
    return false;
  }
  ExtensionPointTimer timer(observer_, ExtensionPoint::kScore);
  for (size_t j = 0; j < k; ++j) {
    ScorePlugin* p = score_[table->plugins[j]];
    auto& raw = table->raw[j];
    auto& norm = table->normalized[j];
    ScoreExtensions* ext = p->GetScoreExtensions();
    bool changed = removed;
    if (removed) {
      raw.erase(raw.begin() + static_cast<ptrdiff_t>(i));
      norm.erase(norm.begin() + static_cast<ptrdiff_t>(i));
    } else {
      int64_t v = 0;
      Status s = p->Score(state, pod, *nodes[i], &v);
      if (!s.IsSuccess()) {
        *status = ScoreError(*p, s);
        return true;
      }
      changed = v != raw[i];
      raw[i] = v;
      if (!ext) norm[i] = v;
    }
    if (ext && changed) {
      norm = raw;
      Status s = ext->NormalizeScore(state, pod, nodes, norm);
      if (!s.IsSuccess()) {
        *status = NormalizeError(*p, s);
        return true;
      }
    }
  }
  totals->assign(n, 0);
  for (size_t j = 0; j < k && status->IsSuccess(); ++j) {
    *status =
        AddWeightedRow(*score_[table->plugins[j]], table->normalized[j], table->weights[j], totals);
  }
  return true;
}

bool Framework::SameSignature(const PodInfo& canonical, const PodInfo& pod) const {
  if (!batchable_) return false;
  if (canonical.priority != pod.priority) return false;
  if (!canonical.pod->spec.unsupported_fields.empty() ||
      !pod.pod->spec.unsupported_fields.empty()) {
    return false;
  }
  if (!canonical.pod->status.nominated_node_name.empty() ||
      !pod.pod->status.nominated_node_name.empty()) {
    return false;
  }
  for (const auto* p : batchable_plugins_) {
    if (!p->SameSignature(canonical, pod)) return false;
  }
  return true;
}

Status Framework::RunReservePluginsReserve(CycleState& state, const PodInfo& pod,
                                           const std::string& node) {
  return TimedPoint(observer_, ExtensionPoint::kReserve, [&]() -> Status {
    for (auto* p : reserve_) {
      Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kReserve,
                             [&] { return p->Reserve(state, pod, node); });
      if (!s.IsSuccess()) {
        if (!s.IsRejected()) {
          s = Status::Error("running Reserve plugin \"" + std::string(p->Name()) +
                            "\": " + s.Message());
        }
        s.WithPlugin(p->Name());
        return s;
      }
    }
    return Status::Success();
  });
}

void Framework::RunReservePluginsUnreserve(CycleState& state, const PodInfo& pod,
                                           const std::string& node) {
  ExtensionPointTimer timer(observer_, ExtensionPoint::kUnreserve);
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) {
    (void)TimedPlugin(observer_, state, (*it)->Name(), ExtensionPoint::kUnreserve, [&] {
      (*it)->Unreserve(state, pod, node);
      return Status::Success();
    });
  }
}

Status Framework::RunPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                   std::function<void(Status)> on_done) {
  return TimedPoint(observer_, ExtensionPoint::kPermit, [&]() -> Status {
    std::vector<std::pair<std::string, api::Timestamp>> waiting_plugins;  // plugin, deadline
    const api::Timestamp now = opts_.clock->Now();
    for (auto* p : permit_) {
      int64_t timeout = 0;
      Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kPermit,
                             [&] { return p->Permit(state, pod, node, &timeout); });
      if (s.IsSuccess()) continue;
      if (s.IsRejected()) {
        s.WithPlugin(p->Name());
        return s;
      }
      if (s.IsWait()) {
        // Upstream caps a plugin's wait at 15 minutes (maxTimeout).
        constexpr int64_t kMaxTimeout = 15 * 60 * api::kNanosPerSecond;
        // Each plugin's wait times out on its own (upstream newWaitingPod: a timer per plugin).
        waiting_plugins.emplace_back(
            p->Name(),
            now + (p->PermitTimeoutUncapped() ? timeout : std::min(timeout, kMaxTimeout)));
        continue;
      }
      Status e =
          Status::Error("running Permit plugin \"" + std::string(p->Name()) + "\": " + s.Message());
      e.WithPlugin(p->Name());
      return e;
    }
    if (waiting_plugins.empty()) return Status::Success();
    if (observer_) {  // upstream scheduler_permit_wait_duration_seconds
      on_done = [o = observer_, t0 = std::chrono::steady_clock::now(),
                 done = std::move(on_done)](Status outcome) {
        o->ObservePermitWait(outcome.code(), NanosSince(t0));
        done(std::move(outcome));
      };
    }
    auto wp = std::make_shared<WaitingPodImpl>(this, PodInfo::Make(pod.pod),
                                               std::move(waiting_plugins), std::move(on_done));
    {
      absl::MutexLock l(&waiting_mu_);
      waiting_[pod.pod->metadata.uid] = wp;
    }
    return Status(Code::kWait);
  });
}

Status Framework::RunPlanPodGroup(const PodInfo& pod, QueuedPodGroupInfo* plan) {
  plan->pod_groups.clear();
  for (auto* p : pod_group_) {
    Status s = p->PlanPodGroup(pod, plan);
    if (!s.IsSuccess()) {
      s.WithPlugin(p->Name());
      return s;
    }
    if (!plan->empty()) return s;
  }
  return Status::Success();
}

Status Framework::RunAdmitPodGroup(const QueuedPodGroupInfo& plan,
                                   const std::vector<const PodInfo*>& pods,
                                   const std::vector<size_t>& pod_group_of) {
  for (auto* p : pod_group_) {
    Status s = p->AdmitPodGroup(plan, pods, pod_group_of);
    if (!s.IsSuccess()) {
      s.WithPlugin(p->Name());
      return s;
    }
  }
  return Status::Success();
}

void Framework::RunPodGroupCycleDone(const QueuedPodGroupInfo& group, bool committed,
                                     const std::string& reason) {
  for (auto* p : pod_group_listeners_) p->PodGroupCycleDone(group, committed, reason);
}

Status Framework::RunPlacementGeneratePlugins(CycleState& state, const QueuedPodGroupInfo& group,
                                              const PlacementLevel& level,
                                              std::vector<Placement>* out) {
  if (placement_generate_.empty()) {
    return Status::Error("profile \"" + profile_name_ + "\" has no PlacementGenerate plugin");
  }
  Status first_refusal;
  for (auto* p : placement_generate_) {
    Status s = p->GeneratePlacements(state, group, level, out);
    if (s.IsError()) return s.WithPlugin(p->Name());
    if (s.IsRejected() && first_refusal.IsSuccess()) first_refusal = s.WithPlugin(p->Name());
  }
  if (!out->empty()) return Status::Success();
  return first_refusal.IsSuccess() ? Status::Unschedulable("no placement for " + level.key)
                                   : first_refusal;
}

Status Framework::RunPlacementScorePlugins(CycleState& state, const QueuedPodGroupInfo& group,
                                           const std::vector<PodInfoPtr>& pods,
                                           const Placement& placement,
                                           const PodGroupAssignments& assignments,
                                           std::vector<PlacementScore>* out) {
  out->assign(placement_score_.size(), PlacementScore{});
  for (size_t k = 0; k < placement_score_.size(); ++k) {
    Status s =
        placement_score_[k]->ScorePlacement(state, group, pods, placement, assignments, &(*out)[k]);
    if (!s.IsSuccess()) return s.WithPlugin(placement_score_[k]->Name());
  }
  return Status::Success();
}

Status Framework::TotalPlacementScores(CycleState& state, const QueuedPodGroupInfo& group,
                                       std::vector<std::vector<PlacementScore>>& scores,
                                       std::vector<int64_t>* totals) {
  totals->assign(scores.size(), 0);
  for (size_t k = 0; k < placement_score_.size(); ++k) {
    std::vector<PlacementScore> column;
    column.reserve(scores.size());
    for (const auto& row : scores) column.push_back(row[k]);
    if (auto* ext = placement_score_[k]->GetPlacementScoreExtensions()) {
      Status s = ext->NormalizePlacementScore(state, group, column);
      if (!s.IsSuccess()) return s.WithPlugin(placement_score_[k]->Name());
    }
    for (size_t i = 0; i < scores.size(); ++i) {
      scores[i][k] = column[i];
      (*totals)[i] += placement_score_weights_[k] * column[i].score;
    }
  }
  return Status::Success();
}

Status Framework::RunPodGroupPostFilterPlugins(CycleState& state, const QueuedPodGroupInfo& group,
                                               const PodGroupAttempt& attempt,
                                               PodGroupFeasibility& feasibility,
                                               PodGroupPostFilterResult* result,
                                               std::vector<std::string>* messages) {
  for (auto* p : pod_group_post_filter_) {
    PodGroupPostFilterResult r;
    Status s = p->PodGroupPostFilter(state, group, attempt, feasibility, &r);
    if (s.IsSkip()) continue;
    if (!s.reasons().empty()) messages->push_back(s.Message());
    if (s.IsSuccess()) {
      *result = std::move(r);
      s.WithPlugin(p->Name());
      return s;
    }
  }
  return Status(Code::kUnschedulable);
}

Status Framework::RunPreBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                    size_t from, size_t* waiting) {
  return TimedPoint(observer_, ExtensionPoint::kPreBind, [&]() -> Status {
    for (size_t i = from; i < pre_bind_.size(); ++i) {
      PreBindPlugin* p = pre_bind_[i];
      Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kPreBind,
                             [&] { return p->PreBind(state, pod, node); });
      if (s.IsWait() && waiting) {
        *waiting = i;
        s.WithPlugin(p->Name());
        return s;
      }
      if (!s.IsSuccess()) {
        if (!s.IsRejected()) {
          s = Status::Error("running PreBind plugin \"" + std::string(p->Name()) +
                            "\": " + s.Message());
        }
        s.WithPlugin(p->Name());
        return s;
      }
    }
    return Status::Success();
  });
}

Status Framework::RunPreBindWait(size_t index, CycleState& state, const PodInfo& pod,
                                 const std::string& node, int64_t now, int64_t* wake_at) {
  if (index >= pre_bind_.size()) return Status::Error("no PreBind plugin waits at this index");
  PreBindPlugin* p = pre_bind_[index];
  auto* w = dynamic_cast<WaitingPreBindPlugin*>(p);
  Status s = w ? w->PreBindWait(state, pod, node, now, wake_at)
               : Status::Error("PreBind returned Wait but the plugin cannot wait");
  if (!s.IsSuccess() && !s.IsWait() && !s.IsRejected()) {
    s = Status::Error("running PreBind plugin \"" + std::string(p->Name()) + "\": " + s.Message());
  }
  if (!s.IsSuccess()) s.WithPlugin(p->Name());
  return s;
}

Status Framework::RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) {
  return TimedPoint(observer_, ExtensionPoint::kBind, [&]() -> Status {
    Status last(Code::kSkip);
    for (auto* p : bind_) {
      Status s = TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kBind,
                             [&] { return p->Bind(state, pod, node); });
      if (s.IsSkip()) continue;
      if (!s.IsSuccess()) {
        if (!s.IsRejected()) {
          s = Status::Error("binding \"" + pod.pod->Key() + "\" to \"" + node +
                            "\": " + s.Message());
        }
        s.WithPlugin(p->Name());
        return s;
      }
      return s;
    }
    return last;
  });
}

void Framework::RunPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) {
  ExtensionPointTimer timer(observer_, ExtensionPoint::kPostBind);
  for (auto* p : post_bind_) {
    (void)TimedPlugin(observer_, state, p->Name(), ExtensionPoint::kPostBind, [&] {
      p->PostBind(state, pod, node);
      return Status::Success();
    });
  }
}

// ---- waiting pods ----

void Framework::RemoveWaitingPod(const std::string& uid) {
  absl::MutexLock l(&waiting_mu_);
  waiting_.erase(uid);
}

int Framework::ExpireWaitingPods(api::Timestamp now) {
  std::vector<std::shared_ptr<WaitingPodImpl>> expired;
  {
    absl::MutexLock l(&waiting_mu_);
    for (auto& [uid, wp] : waiting_) {
      if (wp->deadline() <= now) expired.push_back(wp);
    }
  }
  std::sort(expired.begin(), expired.end(),
            [](const auto& a, const auto& b) { return a->GetPod().Key() < b->GetPod().Key(); });
  for (auto& wp : expired) {
    // The plugin whose timeout passed rejects the pod.
    wp->Reject(wp->NextDeadline().first, "rejected due to timeout after waiting at permit");
  }
  return static_cast<int>(expired.size());
}

api::Timestamp Framework::NextPermitDeadline() const {
  absl::MutexLock l(&waiting_mu_);
  api::Timestamp t = LLONG_MAX;
  for (const auto& [uid, wp] : waiting_) t = std::min(t, wp->deadline());
  return t;
}

size_t Framework::NumWaitingPods() const {
  absl::MutexLock l(&waiting_mu_);
  return waiting_.size();
}

void Framework::IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) {
  std::vector<std::shared_ptr<WaitingPodImpl>> all;
  {
    absl::MutexLock l(&waiting_mu_);
    for (auto& [uid, wp] : waiting_) all.push_back(wp);
  }
  for (auto& wp : all) fn(*wp);
}

WaitingPod* Framework::GetWaitingPod(std::string_view uid) {
  absl::MutexLock l(&waiting_mu_);
  auto it = waiting_.find(std::string(uid));
  return it == waiting_.end() ? nullptr : it->second.get();
}

void Framework::RejectWaitingPod(std::string_view uid) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    absl::MutexLock l(&waiting_mu_);
    auto it = waiting_.find(std::string(uid));
    if (it == waiting_.end()) return;
    wp = it->second;
  }
  wp->Reject("", "removed");
}

Status Framework::RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod,
                                              const PodInfoPtr& to_add, const NodeInfo& node) {
  for (auto* p : pre_filter_) {
    if (state.SkipFilter(p->Name())) continue;
    auto* ext = p->GetPreFilterExtensions();
    if (!ext) continue;
    Status s = ext->AddPod(state, pod, to_add, node);
    if (!s.IsSuccess()) {
      Status e = Status::Error("running AddPod on PreFilter plugin \"" + std::string(p->Name()) +
                               "\": " + s.Message());
      return e;
    }
  }
  return Status::Success();
}

Status Framework::RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                                 const PodInfoPtr& to_remove,
                                                 const NodeInfo& node) {
  for (auto* p : pre_filter_) {
    if (state.SkipFilter(p->Name())) continue;
    auto* ext = p->GetPreFilterExtensions();
    if (!ext) continue;
    Status s = ext->RemovePod(state, pod, to_remove, node);
    if (!s.IsSuccess()) {
      return Status::Error("running RemovePod on PreFilter plugin \"" + std::string(p->Name()) +
                           "\": " + s.Message());
    }
  }
  return Status::Success();
}

std::vector<PodInfoPtr> Framework::NominatedPodsForNode(const std::string& node) const {
  if (!opts_.nominated_pods_for_node) return {};
  return opts_.nominated_pods_for_node(node);
}

std::shared_ptr<const std::vector<PodInfoPtr>> Framework::NominatedPodsViewForNode(
    const NodeInfo& node) const {
  if (opts_.nominated_pods_view) return opts_.nominated_pods_view(node);
  return Handle::NominatedPodsViewForNode(node);  // wraps NominatedPodsForNode
}

int32_t Framework::PriorityOf(const api::Pod& pod) const {
  if (opts_.priority_of) return opts_.priority_of(pod);
  return pod.spec.priority.value_or(0);
}

uint64_t Framework::Random(uint64_t n) { return opts_.random ? opts_.random(n) : 0; }

std::vector<std::string> Framework::ListPlugins(std::string_view point) const {
  std::vector<std::string> out;
  auto add = [&](const auto& v) {
    for (auto* p : v) out.emplace_back(p->Name());
  };
  if (point == "PreEnqueue") add(pre_enqueue_);
  if (point == "QueueSort") out.emplace_back(queue_sort_->Name());
  if (point == "PreFilter") add(pre_filter_);
  if (point == "Filter") add(filter_);
  if (point == "PostFilter") add(post_filter_);
  if (point == "PreScore") add(pre_score_);
  if (point == "Score") add(score_);
  if (point == "Reserve") add(reserve_);
  if (point == "Permit") add(permit_);
  if (point == "PreBind") add(pre_bind_);
  if (point == "Bind") add(bind_);
  if (point == "PostBind") add(post_bind_);
  return out;
}

int64_t Framework::ScoreWeight(std::string_view plugin) const {
  for (size_t j = 0; j < score_.size(); ++j) {
    if (score_[j]->Name() == plugin) return score_weights_[j];
  }
  return 0;
}

}  // namespace phalanx::framework
