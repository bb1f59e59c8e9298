// Tests of the framework runtime (upstream pkg/scheduler/framework/runtime/framework_test.go):
// plugin list construction from a profile, and the semantics of each extension point,
// with small fake plugins whose behaviour each test sets by plugin name.
#include "framework/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/types.h"
#include "framework/clock.h"
#include "framework/parallelize.h"

namespace phalanx::framework {
namespace {

constexpr int64_t kSec = api::kNanosPerSecond;

// ---- fake plugins ----------------------------------------------------------------------

// Behaviour of the fake plugins, by plugin name, and a log of the calls they received.
struct Env {
  std::map<std::string, Status> pre_enqueue, pre_filter, filter, post_filter, pre_score, score,
      reserve, permit, pre_bind, bind;
  std::map<std::string, PreFilterResult> pre_filter_result;
  std::map<std::string, std::string> post_filter_nominate;
  // Score of a node; default 0.
  std::map<std::string, std::function<int64_t(const NodeInfo&)>> score_fn;
  // When set, the plugin normalizes its scores with this function.
  std::map<std::string, std::function<Status(std::vector<int64_t>&)>> normalize;
  std::map<std::string, int64_t> permit_timeout;
  std::vector<std::string> log;

  static Status Get(const std::map<std::string, Status>& m, const std::string& name) {
    auto it = m.find(name);
    return it == m.end() ? Status::Success() : it->second;
  }
  void Log(const std::string& point, const std::string& name) { log.push_back(point + ":" + name); }
};

class FakeBase : public virtual Plugin {
 public:
  std::string_view Name() const override { return name_; }
  std::string name_;
  Env* env_ = nullptr;
};

class PreEnqueueMixin : public virtual FakeBase, public PreEnqueuePlugin {
 public:
  Status PreEnqueue(const PodInfo&) override {
    env_->Log("PreEnqueue", name_);
    return Env::Get(env_->pre_enqueue, name_);
  }
};

class QueueSortMixin : public virtual FakeBase, public QueueSortPlugin {
 public:
  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.pod_info->priority > b.pod_info->priority;
  }
};

class EnqueueMixin : public virtual FakeBase, public EnqueueExtensions {
 public:
  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    return {{{EventResource::kNode, kAdd, "NodeAdd"}, nullptr}};
  }
};

class PreFilterMixin : public virtual FakeBase, public PreFilterPlugin {
 public:
  Status PreFilter(CycleState&, const PodInfo&, PreFilterResult* r) override {
    env_->Log("PreFilter", name_);
    auto it = env_->pre_filter_result.find(name_);
    if (it != env_->pre_filter_result.end()) *r = it->second;
    return Env::Get(env_->pre_filter, name_);
  }
};

class FilterMixin : public virtual FakeBase, public FilterPlugin {
 public:
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo&) override {
    env_->Log("Filter", name_);
    return Env::Get(env_->filter, name_);
  }
};

class PostFilterMixin : public virtual FakeBase, public PostFilterPlugin {
 public:
  Status PostFilter(CycleState&, const PodInfo&, const NodeToStatus&,
                    PostFilterResult* r) override {
    env_->Log("PostFilter", name_);
    auto it = env_->post_filter_nominate.find(name_);
    if (it != env_->post_filter_nominate.end()) r->nominated_node_name = it->second;
    return Env::Get(env_->post_filter, name_);
  }
};

class PreScoreMixin : public virtual FakeBase, public PreScorePlugin {
 public:
  Status PreScore(CycleState&, const PodInfo&, const std::vector<const NodeInfo*>&) override {
    env_->Log("PreScore", name_);
    return Env::Get(env_->pre_score, name_);
  }
};

class ScoreMixin : public virtual FakeBase, public ScorePlugin, public ScoreExtensions {
 public:
  Status Score(const CycleState&, const PodInfo&, const NodeInfo& node, int64_t* score) override {
    auto it = env_->score_fn.find(name_);
    *score = it == env_->score_fn.end() ? 0 : it->second(node);
    return Env::Get(env_->score, name_);
  }
  ScoreExtensions* GetScoreExtensions() override {
    return env_->normalize.count(name_) ? this : nullptr;
  }
  Status NormalizeScore(const CycleState&, const PodInfo&, const std::vector<const NodeInfo*>&,
                        std::vector<int64_t>& scores) override {
    return env_->normalize.at(name_)(scores);
  }
};

class ReserveMixin : public virtual FakeBase, public ReservePlugin {
 public:
  Status Reserve(CycleState&, const PodInfo&, const std::string&) override {
    env_->Log("Reserve", name_);
    return Env::Get(env_->reserve, name_);
  }
  void Unreserve(CycleState&, const PodInfo&, const std::string&) override {
    env_->Log("Unreserve", name_);
  }
};

class PermitMixin : public virtual FakeBase, public PermitPlugin {
 public:
  Status Permit(CycleState&, const PodInfo&, const std::string&, int64_t* timeout) override {
    env_->Log("Permit", name_);
    auto it = env_->permit_timeout.find(name_);
    if (it != env_->permit_timeout.end()) *timeout = it->second;
    return Env::Get(env_->permit, name_);
  }
};

class PreBindMixin : public virtual FakeBase, public PreBindPlugin {
 public:
  Status PreBind(CycleState&, const PodInfo&, const std::string&) override {
    env_->Log("PreBind", name_);
    return Env::Get(env_->pre_bind, name_);
  }
};

class BindMixin : public virtual FakeBase, public BindPlugin {
 public:
  Status Bind(CycleState&, const PodInfo&, const std::string&) override {
    env_->Log("Bind", name_);
    return Env::Get(env_->bind, name_);
  }
};

class PostBindMixin : public virtual FakeBase, public PostBindPlugin {
 public:
  void PostBind(CycleState&, const PodInfo&, const std::string&) override {
    env_->Log("PostBind", name_);
  }
};

// Plugin kinds used by the tests.
class QSort final : public QueueSortMixin {};
class Binder final : public BindMixin {};
class FilterOnly final : public FilterMixin {};
class PreFilterAndFilter final : public PreFilterMixin, public FilterMixin {};
class Scorer final : public PreScoreMixin, public ScoreMixin {};
class Reserver final : public ReserveMixin {};
class Permitter final : public PermitMixin {};
class PostFilterer final : public PostFilterMixin {};
class Gate final : public PreEnqueueMixin, public EnqueueMixin {};
class BindPhases final : public PreBindMixin, public BindMixin, public PostBindMixin {};
// Implements many points, for multiPoint expansion.
class MultiA final : public PreFilterMixin,
                     public FilterMixin,
                     public ScoreMixin,
                     public ReserveMixin,
                     public EnqueueMixin {};
class MultiB final : public FilterMixin, public ScoreMixin {};

template <typename T>
PluginFactory Factory(std::string name, Env* env) {
  return [name, env](PluginArgs, Handle&) -> StatusOr<std::unique_ptr<Plugin>> {
    auto p = std::make_unique<T>();
    p->name_ = name;
    p->env_ = env;
    return std::unique_ptr<Plugin>(std::move(p));
  };
}

// ---- fixture ---------------------------------------------------------------------------

config::PluginSet Set(std::vector<std::string> names) {
  config::PluginSet s;
  for (auto& n : names) s.enabled.push_back({std::move(n), 0});
  return s;
}

class RuntimeTest : public ::testing::Test {
 public:
  RuntimeTest() : clock_(1000 * kSec), par_(2) {
    auto reg = [&](const std::string& name, PluginFactory f) {
      ASSERT_TRUE(registry_.Register(name, std::move(f)).IsSuccess());
    };
    reg("QSort", Factory<QSort>("QSort", &env_));
    reg("QSort2", Factory<QSort>("QSort2", &env_));
    reg("Binder", Factory<Binder>("Binder", &env_));
    reg("Binder2", Factory<Binder>("Binder2", &env_));
    reg("Binder3", Factory<Binder>("Binder3", &env_));
    reg("FilterOnly", Factory<FilterOnly>("FilterOnly", &env_));
    reg("MultiA", Factory<MultiA>("MultiA", &env_));
    reg("MultiB", Factory<MultiB>("MultiB", &env_));
    reg("Gate", Factory<Gate>("Gate", &env_));
    reg("Gate2", Factory<Gate>("Gate2", &env_));
    reg("BindPhases", Factory<BindPhases>("BindPhases", &env_));
    for (std::string n : {"PF1", "PF2", "PF3", "Zeta", "Alpha"}) {
      reg(n, Factory<PreFilterAndFilter>(n, &env_));
    }
    for (std::string n : {"S1", "S2", "S3"}) reg(n, Factory<Scorer>(n, &env_));
    for (std::string n : {"R1", "R2", "R3"}) reg(n, Factory<Reserver>(n, &env_));
    for (std::string n : {"P1", "P2", "P3"}) reg(n, Factory<Permitter>(n, &env_));
    for (std::string n : {"PostF1", "PostF2"}) reg(n, Factory<PostFilterer>(n, &env_));
    reg("Broken", [](PluginArgs, Handle&) -> StatusOr<std::unique_ptr<Plugin>> {
      return Status::Error("BrokenArgs: foo: Invalid value");
    });
  }

  // A profile with the required QueueSort and Bind plugins.
  static config::Profile BaseProfile() {
    config::Profile p;
    p.scheduler_name = "test";
    p.plugins.queue_sort = Set({"QSort"});
    p.plugins.bind = Set({"Binder"});
    return p;
  }

  // `nominated`: when set, the pods every node has nominated (read at each call).
  std::unique_ptr<Framework> New(const config::Profile& p,
                                 const std::vector<PodInfoPtr>* nominated = nullptr) {
    FrameworkOptions o;
    o.clock = &clock_;
    o.parallelizer = &par_;
    if (nominated)
      o.nominated_pods_for_node = [nominated](const std::string&) { return *nominated; };
    auto f = Framework::New(registry_, p, o);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    if (!f.ok()) return nullptr;
    return std::move(f).value();
  }

  Status NewError(const config::Profile& p) {
    FrameworkOptions o;
    o.clock = &clock_;
    o.parallelizer = &par_;
    auto f = Framework::New(registry_, p, o);
    EXPECT_FALSE(f.ok());
    return f.status();
  }

  static PodInfoPtr Pod(const std::string& name, int32_t priority = 0) {
    auto p = std::make_shared<api::Pod>();
    p->metadata.name = name;
    p->metadata.namespace_ = "ns";
    p->metadata.uid = "uid-" + name;
    p->spec.priority = priority;
    return PodInfo::Make(p);
  }

  static NodeInfo Node(const std::string& name) {
    auto n = std::make_shared<api::Node>();
    n->metadata.name = name;
    return NodeInfo(n);
  }

  Env env_;
  Registry registry_;
  VirtualClock clock_;
  Parallelizer par_;
};

// ---- construction ----------------------------------------------------------------------

TEST_F(RuntimeTest, PluginListsFromProfile) {
  struct Case {
    std::string name;
    std::function<void(config::Plugins&)> set;
    std::map<std::string, std::vector<std::string>> want;  // extension point -> plugins
  };
  const std::vector<Case> cases = {
      {"explicit points",
       [](config::Plugins& p) {
         p.pre_filter = Set({"PF2", "PF1"});
         p.filter = Set({"PF1", "FilterOnly", "PF2"});
         p.score = Set({"S2", "S1"});
       },
       {{"PreFilter", {"PF2", "PF1"}},
        {"Filter", {"PF1", "FilterOnly", "PF2"}},
        {"Score", {"S2", "S1"}},
        {"PreScore", {}},
        {"QueueSort", {"QSort"}},
        {"Bind", {"Binder"}}}},
      {"multiPoint expands to every point a plugin implements",
       [](config::Plugins& p) {
         p.multi_point = Set({"MultiA", "MultiB"});
       },
       {{"PreFilter", {"MultiA"}},
        {"Filter", {"MultiA", "MultiB"}},
        {"Score", {"MultiA", "MultiB"}},
        {"Reserve", {"MultiA"}},
        {"Permit", {}}}},
      {"multiPoint plugins come before the point's own, overrides first",
       [](config::Plugins& p) {
         p.multi_point = Set({"MultiA", "MultiB"});
         p.filter = Set({"FilterOnly", "MultiB"});
       },
       // part 1: overrides in the point's order (MultiB); part 2: multiPoint (MultiA);
       // part 3: the point's other plugins (FilterOnly).
       {{"Filter", {"MultiB", "MultiA", "FilterOnly"}}, {"Score", {"MultiA", "MultiB"}}}},
      {"a point's disabled entry removes a multiPoint plugin there only",
       [](config::Plugins& p) {
         p.multi_point = Set({"MultiA", "MultiB"});
         p.filter.disabled = {{"MultiA", 0}};
       },
       {{"Filter", {"MultiB"}}, {"Score", {"MultiA", "MultiB"}}, {"PreFilter", {"MultiA"}}}},
      {"disabled * skips multiPoint expansion at that point",
       [](config::Plugins& p) {
         p.multi_point = Set({"MultiA", "MultiB"});
         p.filter = Set({"FilterOnly"});
         p.filter.disabled = {{"*", 0}};
       },
       {{"Filter", {"FilterOnly"}}, {"Score", {"MultiA", "MultiB"}}}},
      {"QueueSort and Bind from multiPoint",
       [](config::Plugins& p) {
         p.queue_sort = {};
         p.bind = {};
         p.multi_point = Set({"QSort", "Binder", "BindPhases"});
       },
       {{"QueueSort", {"QSort"}},
        {"Bind", {"Binder", "BindPhases"}},
        {"PreBind", {"BindPhases"}},
        {"PostBind", {"BindPhases"}}}},
      {"PreEnqueue",
       [](config::Plugins& p) {
         p.pre_enqueue = Set({"Gate2", "Gate"});
       },
       {{"PreEnqueue", {"Gate2", "Gate"}}}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    config::Profile p = BaseProfile();
    tc.set(p.plugins);
    auto f = New(p);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->ProfileName(), "test");
    for (const auto& [point, want] : tc.want) EXPECT_EQ(f->ListPlugins(point), want) << point;
  }
}

TEST_F(RuntimeTest, ConstructionErrors) {
  struct Case {
    std::string name;
    std::function<void(config::Profile&)> set;
    std::string want;  // substring of the error
  };
  const std::vector<Case> cases = {
      {"unknown plugin", [](config::Profile& p) { p.plugins.filter = Set({"Nope"}); },
       "profile \"test\": plugin \"Nope\" is not registered (known plugins: Alpha, BindPhases, "},
      {"unknown multiPoint plugin",
       [](config::Profile& p) { p.plugins.multi_point = Set({"Nope"}); },
       "plugin \"Nope\" is not registered"},
      {"plugin does not extend the point",
       [](config::Profile& p) { p.plugins.score = Set({"FilterOnly"}); },
       "profile \"test\": plugins.score.enabled: plugin \"FilterOnly\" does not extend Score "
       "plugin"},
      {"does not extend QueueSort",
       [](config::Profile& p) { p.plugins.queue_sort = Set({"Binder"}); },
       "plugins.queueSort.enabled: plugin \"Binder\" does not extend QueueSort plugin"},
      {"registered twice at a point",
       [](config::Profile& p) {
         p.plugins.filter = Set({"FilterOnly", "FilterOnly"});
       },
       "plugins.filter.enabled: plugin \"FilterOnly\" already registered as Filter"},
      {"registered twice in multiPoint",
       [](config::Profile& p) {
         p.plugins.multi_point = Set({"MultiB", "MultiB"});
       },
       "plugins.multiPoint.enabled: plugin \"MultiB\" already registered as Filter"},
      {"no queue sort", [](config::Profile& p) { p.plugins.queue_sort = {}; },
       "profile \"test\": only one queue sort plugin required for profile, but got 0"},
      {"two queue sorts",
       [](config::Profile& p) {
         p.plugins.queue_sort = Set({"QSort", "QSort2"});
       },
       "only one queue sort plugin required for profile, but got 2"},
      {"queue sort twice via multiPoint and the point",
       [](config::Profile& p) { p.plugins.multi_point = Set({"QSort2"}); },
       "only one queue sort plugin required for profile, but got 2"},
      {"no bind", [](config::Profile& p) { p.plugins.bind = {}; },
       "profile \"test\": at least one bind plugin is needed"},
      {"bind disabled with *",
       [](config::Profile& p) {
         p.plugins.bind = {};
         p.plugins.bind.disabled = {{"*", 0}};
         p.plugins.multi_point = Set({"Binder"});
       },
       "at least one bind plugin is needed"},
      {"repeated pluginConfig",
       [](config::Profile& p) {
         p.plugins.filter = Set({"FilterOnly"});
         p.plugin_config = {{"FilterOnly", nullptr}, {"FilterOnly", nullptr}};
       },
       "pluginConfig: repeated config for plugin FilterOnly"},
      {"factory error", [](config::Profile& p) { p.plugins.filter = Set({"Broken"}); },
       "profile \"test\": initializing plugin \"Broken\": BrokenArgs: foo: Invalid value"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    config::Profile p = BaseProfile();
    tc.set(p);
    Status s = NewError(p);
    EXPECT_TRUE(s.IsError());
    EXPECT_NE(s.Message().find(tc.want), std::string::npos) << s.Message();
  }
}

TEST_F(RuntimeTest, ScoreWeights) {
  struct Case {
    std::string name;
    std::vector<config::PluginRef> score, multi;
    std::map<std::string, int64_t> want;
  };
  const std::vector<Case> cases = {
      {"default weight is 1", {{"S1", 0}}, {}, {{"S1", 1}}},
      {"explicit weight", {{"S1", 3}}, {}, {{"S1", 3}}},
      {"multiPoint weight", {}, {{"S1", 5}}, {{"S1", 5}}},
      {"the score point's weight wins over multiPoint", {{"S1", 2}}, {{"S1", 7}}, {{"S1", 2}}},
      {"a score entry without weight still wins (and means 1)",
       {{"S1", 0}},
       {{"S1", 7}},
       {{"S1", 1}}},
      {"several", {{"S2", 4}}, {{"S1", 0}, {"S2", 9}}, {{"S1", 1}, {"S2", 4}, {"S3", 0}}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    config::Profile p = BaseProfile();
    p.plugins.score.enabled = tc.score;
    p.plugins.multi_point.enabled = tc.multi;
    auto f = New(p);
    ASSERT_NE(f, nullptr);
    for (const auto& [name, w] : tc.want) EXPECT_EQ(f->ScoreWeight(name), w) << name;
  }
}

TEST_F(RuntimeTest, PercentageOfNodesToScoreAndEventHints) {
  config::Profile p = BaseProfile();
  p.plugins.pre_enqueue = Set({"Gate2", "Gate"});
  p.plugins.multi_point = Set({"MultiA"});
  FrameworkOptions o;
  o.clock = &clock_;
  o.parallelizer = &par_;
  o.percentage_of_nodes_to_score = 40;
  auto f = Framework::New(registry_, p, o);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.value()->PercentageOfNodesToScore(), 40);
  // EnqueueExtensions of every instantiated plugin, by plugin name.
  std::vector<std::string> names;
  for (const auto& [plugin, h] : f.value()->EventHints()) {
    names.push_back(plugin);
    EXPECT_EQ(h.event.resource, EventResource::kNode);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Gate", "Gate2", "MultiA"}));

  p.percentage_of_nodes_to_score = 70;
  auto g = Framework::New(registry_, p, o);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g.value()->PercentageOfNodesToScore(), 70);
}

// ---- PreEnqueue / QueueSort --------------------------------------------------------------

TEST_F(RuntimeTest, PreEnqueueFirstFailureWithPlugin) {
  config::Profile p = BaseProfile();
  p.plugins.pre_enqueue = Set({"Gate", "Gate2"});
  auto f = New(p);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->RunPreEnqueuePlugins(*Pod("p")).IsSuccess());
  env_.pre_enqueue["Gate"] = Status::UnschedulableAndUnresolvable("waiting for scheduling gates");
  env_.pre_enqueue["Gate2"] = Status::Unschedulable("other");
  env_.log.clear();
  Status s = f->RunPreEnqueuePlugins(*Pod("p"));
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.plugin(), "Gate");
  EXPECT_EQ(s.Message(), "waiting for scheduling gates");
  EXPECT_EQ(env_.log, (std::vector<std::string>{"PreEnqueue:Gate"}));

  QueuedPodInfo hi, lo;
  hi.pod_info = Pod("hi", 10);
  lo.pod_info = Pod("lo", 1);
  EXPECT_TRUE(f->QueueSortLess(hi, lo));
  EXPECT_FALSE(f->QueueSortLess(lo, hi));
}

// ---- PreFilter / Filter ------------------------------------------------------------------

TEST_F(RuntimeTest, PreFilter) {
  auto nodes = [](std::set<std::string> n) {
    PreFilterResult r;
    r.all_nodes = false;
    r.node_names = std::move(n);
    return r;
  };
  struct Case {
    std::string name;
    std::vector<std::string> plugins;
    std::map<std::string, Status> status;
    std::map<std::string, PreFilterResult> results;
    Code want_code;
    std::string want_plugin;
    std::string want_message;
    std::vector<std::string> want_ran;
    bool want_all_nodes = true;
    std::set<std::string> want_nodes = {};
    std::vector<std::string> want_skipped = {};
  };
  const std::vector<Case> cases = {
      {"all succeed", {"PF1", "PF2"}, {}, {}, Code::kSuccess, "", "", {"PF1", "PF2"}},
      {"Skip marks the plugin's Filter skipped",
       {"PF1", "PF2"},
       {{"PF1", Status(Code::kSkip)}},
       {},
       Code::kSuccess,
       "",
       "",
       {"PF1", "PF2"},
       true,
       {},
       {"PF1"}},
      {"Unschedulable: the others still run",
       {"PF1", "PF2", "PF3"},
       {{"PF1", Status::Unschedulable("no luck")}},
       {},
       Code::kUnschedulable,
       "PF1",
       "no luck",
       {"PF1", "PF2", "PF3"}},
      {"UnschedulableAndUnresolvable stops at once",
       {"PF1", "PF2"},
       {{"PF1", Status::UnschedulableAndUnresolvable("never")}},
       {},
       Code::kUnschedulableAndUnresolvable,
       "PF1",
       "never",
       {"PF1"}},
      {"UnschedulableAndUnresolvable after an Unschedulable wins",
       {"PF1", "PF2", "PF3"},
       {{"PF1", Status::Unschedulable("u")}, {"PF2", Status::UnschedulableAndUnresolvable("uu")}},
       {},
       Code::kUnschedulableAndUnresolvable,
       "PF2",
       "uu",
       {"PF1", "PF2"}},
      {"an error is wrapped and stops",
       {"PF1", "PF2"},
       {{"PF1", Status::Error("boom")}},
       {},
       Code::kError,
       "PF1",
       "running PreFilter plugin \"PF1\": boom",
       {"PF1"}},
      {"results are intersected",
       {"PF1", "PF2", "PF3"},
       {},
       {{"PF1", nodes({"a", "b", "c"})}, {"PF3", nodes({"b", "c", "d"})}},
       Code::kSuccess,
       "",
       "",
       {"PF1", "PF2", "PF3"},
       false,
       {"b", "c"}},
      {"an empty result: didn't satisfy plugin",
       {"PF1", "PF2"},
       {},
       {{"PF1", nodes({})}},
       Code::kUnschedulableAndUnresolvable,
       "",
       "node(s) didn't satisfy plugin PF1",
       {"PF1"},
       false},
      // upstream lists the plugins sorted (sets.List).
      {"disjoint results: didn't satisfy plugins simultaneously",
       {"Zeta", "PF2", "Alpha"},
       {},
       {{"Zeta", nodes({"a"})}, {"Alpha", nodes({"b"})}},
       Code::kUnschedulableAndUnresolvable,
       "",
       "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously",
       {"Zeta", "PF2", "Alpha"},
       false},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    config::Profile p = BaseProfile();
    p.plugins.pre_filter = Set(tc.plugins);
    p.plugins.filter = Set(tc.plugins);
    auto f = New(p);
    ASSERT_NE(f, nullptr);
    env_.pre_filter = tc.status;
    env_.pre_filter_result = tc.results;
    env_.log.clear();
    CycleState state;
    PreFilterResult result;
    Status s = f->RunPreFilterPlugins(state, *Pod("p"), &result);
    EXPECT_EQ(s.code(), tc.want_code) << s.ToString();
    EXPECT_EQ(s.plugin(), tc.want_plugin);
    EXPECT_EQ(s.Message(), tc.want_message);
    std::vector<std::string> ran;
    for (const auto& l : env_.log) ran.push_back(l.substr(l.find(':') + 1));
    EXPECT_EQ(ran, tc.want_ran);
    EXPECT_EQ(result.all_nodes, tc.want_all_nodes);
    EXPECT_EQ(result.node_names, tc.want_nodes);
    std::vector<std::string> skipped(state.skip_filter_plugins.begin(),
                                     state.skip_filter_plugins.end());
    EXPECT_EQ(skipped, tc.want_skipped);
    if (!s.IsSuccess()) continue;
    // Filter: the skipped plugins' Filter does not run.
    env_.log.clear();
    NodeInfo n = Node("n1");
    EXPECT_TRUE(f->RunFilterPlugins(state, *Pod("p"), n).IsSuccess());
    std::vector<std::string> want_filters;
    for (const auto& pl : tc.plugins) {
      if (std::find(tc.want_skipped.begin(), tc.want_skipped.end(), pl) == tc.want_skipped.end()) {
        want_filters.push_back("Filter:" + pl);
      }
    }
    EXPECT_EQ(env_.log, want_filters);
  }
}

TEST(PreFilterResultTest, Merge) {
  auto nodes = [](std::set<std::string> n) {
    PreFilterResult r;
    r.all_nodes = false;
    r.node_names = std::move(n);
    return r;
  };
  PreFilterResult all;
  EXPECT_TRUE(all.Merge(all).all_nodes);
  EXPECT_EQ(all.Merge(nodes({"a"})).node_names, std::set<std::string>{"a"});
  EXPECT_EQ(nodes({"a"}).Merge(all).node_names, std::set<std::string>{"a"});
  PreFilterResult m = nodes({"a", "b"}).Merge(nodes({"b", "c"}));
  EXPECT_FALSE(m.all_nodes);
  EXPECT_EQ(m.node_names, std::set<std::string>{"b"});
  PreFilterResult empty = nodes({"a"}).Merge(nodes({"b"}));
  EXPECT_FALSE(empty.all_nodes);
  EXPECT_TRUE(empty.node_names.empty());
}

TEST_F(RuntimeTest, FilterReturnsFirstFailure) {
  struct Case {
    std::string name;
    std::map<std::string, Status> status;
    Code want_code;
    std::string want_plugin, want_message;
    std::vector<std::string> want_ran;
  };
  const std::vector<Case> cases = {
      {"all pass", {}, Code::kSuccess, "", "", {"PF1", "PF2", "PF3"}},
      {"first failure stops",
       {{"PF2", Status::Unschedulable("Insufficient cpu")},
        {"PF3", Status::UnschedulableAndUnresolvable("x")}},
       Code::kUnschedulable,
       "PF2",
       "Insufficient cpu",
       {"PF1", "PF2"}},
      {"UnschedulableAndUnresolvable kept",
       {{"PF1", Status::UnschedulableAndUnresolvable("taint")}},
       Code::kUnschedulableAndUnresolvable,
       "PF1",
       "taint",
       {"PF1"}},
      {"an error is wrapped",
       {{"PF1", Status::Error("boom")}},
       Code::kError,
       "PF1",
       "running \"PF1\" filter plugin: boom",
       {"PF1"}},
      {"Skip from Filter is not allowed: an error",
       {{"PF2", Status(Code::kSkip, "skip")}},
       Code::kError,
       "PF2",
       "running \"PF2\" filter plugin: skip",
       {"PF1", "PF2"}},
  };
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({"PF1", "PF2", "PF3"});
  auto f = New(p);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->HasFilterPlugins());
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    env_.filter = tc.status;
    env_.log.clear();
    CycleState state;
    NodeInfo n = Node("n1");
    Status s = f->RunFilterPlugins(state, *Pod("p"), n);
    EXPECT_EQ(s.code(), tc.want_code);
    EXPECT_EQ(s.plugin(), tc.want_plugin);
    EXPECT_EQ(s.Message(), tc.want_message);
    std::vector<std::string> want_log;
    for (const auto& r : tc.want_ran) want_log.push_back("Filter:" + r);
    EXPECT_EQ(env_.log, want_log);
  }
}

// Nominated pods of higher or equal priority make Filter run twice (with and without them);
// lower-priority ones and the pod itself are ignored.
TEST_F(RuntimeTest, FilterWithNominatedPods) {
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({"PF1"});
  std::vector<PodInfoPtr> nominated;
  auto f = New(p, &nominated);
  ASSERT_NE(f, nullptr);
  PodInfoPtr pod = Pod("p", 5);
  NodeInfo n = Node("n1");
  CycleState state;
  struct Case {
    std::string name;
    std::vector<PodInfoPtr> nominated;
    int want_filter_runs;
  };
  const std::vector<Case> cases = {
      {"none", {}, 1},
      {"lower priority only", {Pod("low", 1)}, 1},
      {"the pod itself", {pod}, 1},
      {"equal priority", {Pod("eq", 5)}, 2},
      {"higher priority", {Pod("hi", 9), Pod("low", 1)}, 2},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    nominated = tc.nominated;
    env_.log.clear();
    EXPECT_TRUE(f->RunFilterPluginsWithNominatedPods(state, *pod, n).IsSuccess());
    EXPECT_EQ(env_.log.size(), static_cast<size_t>(tc.want_filter_runs));
  }
  // The first pass failing stops there.
  nominated = {Pod("hi", 9)};
  env_.filter["PF1"] = Status::Unschedulable("Insufficient cpu");
  env_.log.clear();
  Status s = f->RunFilterPluginsWithNominatedPods(state, *pod, n);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(env_.log.size(), 1u);
}

// Without PreFilter extensions to run, the node-with-nominated-pods is built once and kept
// on the NodeInfo while the nominated pods and the node stay the same; it is rebuilt when
// either changes, and a copy of the NodeInfo does not carry it.
TEST_F(RuntimeTest, FilterWithNominatedPodsReusesOverlay) {
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({"PF1"});
  std::vector<PodInfoPtr> nominated;
  auto f = New(p, &nominated);
  ASSERT_NE(f, nullptr);
  PodInfoPtr pod = Pod("p", 5);
  NodeInfo n = Node("n1");
  CycleState state;
  nominated = {Pod("hi", 9)};
  ASSERT_TRUE(f->RunFilterPluginsWithNominatedPods(state, *pod, n).IsSuccess());
  auto first = n.nominated_overlay();
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(first->with->pods().size(), 1u);
  EXPECT_EQ(first->with->pods()[0]->pod->metadata.name, "hi");
  EXPECT_TRUE(n.pods().empty());  // the node itself is untouched
  ASSERT_TRUE(f->RunFilterPluginsWithNominatedPods(state, *pod, n).IsSuccess());
  EXPECT_EQ(n.nominated_overlay(), first);  // reused
  // Another nominated pod: rebuilt with both.
  nominated.push_back(Pod("hi2", 7));
  ASSERT_TRUE(f->RunFilterPluginsWithNominatedPods(state, *pod, n).IsSuccess());
  auto second = n.nominated_overlay();
  ASSERT_NE(second, first);
  EXPECT_EQ(second->with->pods().size(), 2u);
  // A copy starts without it; a change of the node drops it.
  NodeInfo copy = n;
  EXPECT_EQ(copy.nominated_overlay(), nullptr);
  n.AddPod(Pod("bound", 0));
  EXPECT_EQ(n.nominated_overlay(), nullptr);
  ASSERT_TRUE(f->RunFilterPluginsWithNominatedPods(state, *pod, n).IsSuccess());
  EXPECT_EQ(n.nominated_overlay()->with->pods().size(), 3u);
}

// ---- PostFilter --------------------------------------------------------------------------

TEST_F(RuntimeTest, PostFilter) {
  struct Case {
    std::string name;
    std::map<std::string, Status> status;
    std::map<std::string, std::string> nominate;
    Code want_code;
    std::string want_plugin, want_message, want_nominated;
    std::vector<std::string> want_ran;
  };
  const std::vector<Case> cases = {
      {"first success wins", {}, {{"PostF1", "n1"}}, Code::kSuccess, "", "", "n1", {"PostF1"}},
      {"Unschedulable then success",
       {{"PostF1", Status::Unschedulable("no victims")}},
       {{"PostF2", "n2"}},
       Code::kSuccess,
       "",
       "",
       "n2",
       {"PostF1", "PostF2"}},
      {"UnschedulableAndUnresolvable stops",
       {{"PostF1", Status::UnschedulableAndUnresolvable("no")}},
       {},
       Code::kUnschedulableAndUnresolvable,
       "PostF1",
       "no",
       "",
       {"PostF1"}},
      {"an error stops",
       {{"PostF1", Status::Error("boom")}},
       {},
       Code::kError,
       "PostF1",
       "boom",
       "",
       {"PostF1"}},
      // upstream: reasons of every rejecting plugin, the first one as the rejector.
      {"all reject: reasons of all, first plugin",
       {{"PostF1", Status::Unschedulable("0/3 nodes are available: a")},
        {"PostF2", Status::Unschedulable("b")}},
       {},
       Code::kUnschedulable,
       "PostF1",
       "0/3 nodes are available: a, b",
       "",
       {"PostF1", "PostF2"}},
  };
  config::Profile p = BaseProfile();
  p.plugins.post_filter = Set({"PostF1", "PostF2"});
  auto f = New(p);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->HasPostFilterPlugins());
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    env_.post_filter = tc.status;
    env_.post_filter_nominate = tc.nominate;
    env_.log.clear();
    CycleState state;
    PostFilterResult r;
    Status s = f->RunPostFilterPlugins(state, *Pod("p"), NodeToStatus{}, &r);
    EXPECT_EQ(s.code(), tc.want_code);
    EXPECT_EQ(s.plugin(), tc.want_plugin);
    EXPECT_EQ(s.Message(), tc.want_message);
    EXPECT_EQ(r.nominated_node_name, tc.want_nominated);
    std::vector<std::string> want_log;
    for (const auto& n : tc.want_ran) want_log.push_back("PostFilter:" + n);
    EXPECT_EQ(env_.log, want_log);
  }
  // Without PostFilter plugins: Unschedulable.
  auto g = New(BaseProfile());
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->HasPostFilterPlugins());
  CycleState state;
  PostFilterResult r;
  EXPECT_EQ(g->RunPostFilterPlugins(state, *Pod("p"), NodeToStatus{}, &r).code(),
            Code::kUnschedulable);
}

// ---- PreScore / Score --------------------------------------------------------------------

TEST_F(RuntimeTest, ScoreNormalizationAndWeights) {
  // S1 scores a node by its index * 10 and normalizes to [0, 100] (max -> 100), weight 2.
  // S2 scores 50 everywhere, weight 1. S3 is not normalized.
  std::vector<NodeInfo> infos;
  for (int i = 0; i < 5; ++i) infos.push_back(Node("n" + std::to_string(i)));
  std::vector<const NodeInfo*> nodes;
  for (const auto& n : infos) nodes.push_back(&n);
  auto index = [](const NodeInfo& n) { return static_cast<int64_t>(n.name()[1] - '0'); };
  env_.score_fn["S1"] = [&](const NodeInfo& n) { return index(n) * 10; };
  env_.normalize["S1"] = [](std::vector<int64_t>& s) {
    int64_t mx = *std::max_element(s.begin(), s.end());
    for (auto& v : s) v = mx == 0 ? 0 : v * 100 / mx;
    return Status::Success();
  };
  env_.score_fn["S2"] = [](const NodeInfo&) { return 50; };

  struct Case {
    std::string name;
    std::function<void(Env&)> set;
    std::vector<std::string> plugins;
    Code want_code;
    std::string want_message;
    std::vector<int64_t> want_totals;
  };
  const std::vector<Case> cases = {
      {"weighted sum of normalized scores",
       [](Env&) {},
       {"S1", "S2"},
       Code::kSuccess,
       "",
       {0 * 2 + 50, 25 * 2 + 50, 50 * 2 + 50, 75 * 2 + 50, 100 * 2 + 50}},
      {"PreScore Skip skips the plugin's Score",
       [](Env& e) { e.pre_score["S1"] = Status(Code::kSkip); },
       {"S1", "S2"},
       Code::kSuccess,
       "",
       {50, 50, 50, 50, 50}},
      {"a Score error",
       [](Env& e) { e.score["S2"] = Status::Error("boom"); },
       {"S1", "S2"},
       Code::kError,
       "running Score plugin \"S2\": boom",
       {}},
      {"a NormalizeScore error",
       [](Env& e) {
         e.normalize["S2"] = [](std::vector<int64_t>&) { return Status::Error("bad"); };
       },
       {"S1", "S2"},
       Code::kError,
       "running Normalize on Score plugins: plugin \"S2\": bad",
       {}},
      {"a score above 100 after normalizing",
       [&](Env& e) {
         e.score_fn["S3"] = [&](const NodeInfo& n) { return index(n) == 3 ? 101 : 0; };
       },
       {"S2", "S3"},
       Code::kError,
       "plugin \"S3\" returns an invalid score 101, it should in the range of [0, 100] after "
       "normalizing",
       {}},
      {"a negative score",
       [](Env& e) { e.score_fn["S3"] = [](const NodeInfo&) { return -1; }; },
       {"S3"},
       Code::kError,
       "plugin \"S3\" returns an invalid score -1, it should in the range of [0, 100] after "
       "normalizing",
       {}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Env saved = env_;
    tc.set(env_);
    config::Profile p = BaseProfile();
    p.plugins.pre_score = Set(tc.plugins);
    p.plugins.score.enabled.clear();
    for (const auto& n : tc.plugins) p.plugins.score.enabled.push_back({n, n == "S1" ? 2 : 0});
    auto f = New(p);
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->HasScorePlugins());
    CycleState state;
    ASSERT_TRUE(f->RunPreScorePlugins(state, *Pod("p"), nodes).IsSuccess());
    std::vector<int64_t> totals;
    Status s = f->RunScorePlugins(state, *Pod("p"), nodes, &totals);
    EXPECT_EQ(s.code(), tc.want_code) << s.ToString();
    EXPECT_EQ(s.Message(), tc.want_message);
    if (s.IsSuccess()) {
      EXPECT_EQ(totals, tc.want_totals);
    }
    env_ = saved;
  }
}

TEST_F(RuntimeTest, PreScoreErrorIsWrapped) {
  config::Profile p = BaseProfile();
  p.plugins.pre_score = Set({"S1", "S2"});
  auto f = New(p);
  ASSERT_NE(f, nullptr);
  env_.pre_score["S1"] = Status::Error("boom");
  env_.log.clear();
  CycleState state;
  Status s = f->RunPreScorePlugins(state, *Pod("p"), {});
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.plugin(), "S1");
  EXPECT_EQ(s.Message(), "running PreScore plugin \"S1\": boom");
  EXPECT_EQ(env_.log, (std::vector<std::string>{"PreScore:S1"}));
}

// Many nodes over several threads: the same totals as one thread.
TEST_F(RuntimeTest, ScoreIsDeterministicInParallel) {
  std::vector<NodeInfo> infos;
  for (int i = 0; i < 500; ++i) infos.push_back(Node("node-" + std::to_string(i)));
  std::vector<const NodeInfo*> nodes;
  for (const auto& n : infos) nodes.push_back(&n);
  env_.score_fn["S1"] = [](const NodeInfo& n) {
    return static_cast<int64_t>(std::hash<std::string>{}(n.name()) % 101);
  };
  config::Profile p = BaseProfile();
  p.plugins.score.enabled = {{"S1", 3}};
  auto f = New(p);
  ASSERT_NE(f, nullptr);
  CycleState state;
  std::vector<int64_t> totals;
  ASSERT_TRUE(f->RunScorePlugins(state, *Pod("p"), nodes, &totals).IsSuccess());
  ASSERT_EQ(totals.size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(totals[i], env_.score_fn["S1"](infos[i]) * 3);
}

// ---- Reserve / Permit / Bind ---------------------------------------------------------------

TEST_F(RuntimeTest, ReserveAndUnreserveOrder) {
  config::Profile p = BaseProfile();
  p.plugins.reserve = Set({"R1", "R2", "R3"});
  auto f = New(p);
  ASSERT_NE(f, nullptr);
  CycleState state;
  EXPECT_TRUE(f->RunReservePluginsReserve(state, *Pod("p"), "n1").IsSuccess());
  f->RunReservePluginsUnreserve(state, *Pod("p"), "n1");
  EXPECT_EQ(env_.log, (std::vector<std::string>{"Reserve:R1", "Reserve:R2", "Reserve:R3",
                                                "Unreserve:R3", "Unreserve:R2", "Unreserve:R1"}));

  struct Case {
    std::string name;
    Status r2;
    Code want_code;
    std::string want_message;
  };
  const std::vector<Case> cases = {
      {"rejection kept", Status::Unschedulable("no room"), Code::kUnschedulable, "no room"},
      {"error wrapped", Status::Error("boom"), Code::kError, "running Reserve plugin \"R2\": boom"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    env_.reserve["R2"] = tc.r2;
    env_.log.clear();
    Status s = f->RunReservePluginsReserve(state, *Pod("p"), "n1");
    EXPECT_EQ(s.code(), tc.want_code);
    EXPECT_EQ(s.plugin(), "R2");
    EXPECT_EQ(s.Message(), tc.want_message);
    EXPECT_EQ(env_.log, (std::vector<std::string>{"Reserve:R1", "Reserve:R2"}));
  }
}

class PermitTest : public RuntimeTest {
 public:
  std::unique_ptr<Framework> NewPermit() {
    config::Profile p = BaseProfile();
    p.plugins.permit = Set({"P1", "P2", "P3"});
    return New(p);
  }
};

TEST_F(PermitTest, SuccessRejectionAndError) {
  auto f = NewPermit();
  ASSERT_NE(f, nullptr);
  struct Case {
    std::string name;
    std::map<std::string, Status> status;
    Code want_code;
    std::string want_plugin, want_message;
  };
  const std::vector<Case> cases = {
      {"all allow", {}, Code::kSuccess, "", ""},
      {"a rejection", {{"P2", Status::Unschedulable("nope")}}, Code::kUnschedulable, "P2", "nope"},
      {"a rejection after a Wait",
       {{"P1", Status(Code::kWait)}, {"P2", Status::Unschedulable("nope")}},
       Code::kUnschedulable,
       "P2",
       "nope"},
      {"an error",
       {{"P3", Status::Error("boom")}},
       Code::kError,
       "P3",
       "running Permit plugin \"P3\": boom"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    env_.permit = tc.status;
    bool called = false;
    CycleState state;
    Status s = f->RunPermitPlugins(state, *Pod("p"), "n1", [&](Status) { called = true; });
    EXPECT_EQ(s.code(), tc.want_code);
    EXPECT_EQ(s.plugin(), tc.want_plugin);
    EXPECT_EQ(s.Message(), tc.want_message);
    EXPECT_FALSE(called) << "on_done is only for pods that wait";
    EXPECT_EQ(f->NumWaitingPods(), 0u);
  }
}

TEST_F(PermitTest, WaitThenAllowedByEveryWaitingPlugin) {
  auto f = NewPermit();
  ASSERT_NE(f, nullptr);
  env_.permit = {{"P1", Status(Code::kWait)}, {"P3", Status(Code::kWait)}};
  env_.permit_timeout = {{"P1", 10 * kSec}, {"P3", 20 * kSec}};
  std::vector<Status> done;
  CycleState state;
  PodInfoPtr pod = Pod("p");
  Status s = f->RunPermitPlugins(state, *pod, "n1", [&](Status st) { done.push_back(st); });
  EXPECT_TRUE(s.IsWait());
  ASSERT_EQ(f->NumWaitingPods(), 1u);
  WaitingPod* wp = f->GetWaitingPod("uid-p");
  ASSERT_NE(wp, nullptr);
  EXPECT_EQ(wp->GetPod().metadata.name, "p");
  EXPECT_EQ(wp->GetPendingPlugins(), (std::vector<std::string>{"P1", "P3"}));
  EXPECT_EQ(f->GetWaitingPod("uid-other"), nullptr);

  wp->Allow("P2");  // not waiting on P2: nothing happens
  wp->Allow("P1");
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(f->NumWaitingPods(), 1u);
  int visited = 0;
  f->IterateOverWaitingPods([&](WaitingPod& w) {
    ++visited;
    EXPECT_EQ(w.GetPendingPlugins(), (std::vector<std::string>{"P3"}));
  });
  EXPECT_EQ(visited, 1);
  f->GetWaitingPod("uid-p")->Allow("P3");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].IsSuccess());
  EXPECT_EQ(f->NumWaitingPods(), 0u);
  EXPECT_EQ(f->NextPermitDeadline(), LLONG_MAX);
  // Nothing expires afterwards, and on_done is not called again.
  clock_.Advance(100 * kSec);
  EXPECT_EQ(f->ExpireWaitingPods(clock_.Now()), 0);
  EXPECT_EQ(done.size(), 1u);
}

TEST_F(PermitTest, WaitThenRejectedByAnotherPlugin) {
  auto f = NewPermit();
  ASSERT_NE(f, nullptr);
  env_.permit = {{"P1", Status(Code::kWait)}};
  env_.permit_timeout = {{"P1", 10 * kSec}};
  std::vector<Status> done;
  CycleState state;
  ASSERT_TRUE(
      f->RunPermitPlugins(state, *Pod("p"), "n1", [&](Status st) { done.push_back(st); }).IsWait());
  f->GetWaitingPod("uid-p")->Reject("Coscheduling", "gang member failed");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].code(), Code::kUnschedulable);
  EXPECT_EQ(done[0].plugin(), "Coscheduling");
  EXPECT_EQ(done[0].Message(), "gang member failed");
  EXPECT_EQ(f->NumWaitingPods(), 0u);

  // RejectWaitingPod by UID (e.g. the pod was deleted).
  ASSERT_TRUE(
      f->RunPermitPlugins(state, *Pod("q"), "n1", [&](Status st) { done.push_back(st); }).IsWait());
  f->RejectWaitingPod("uid-q");
  f->RejectWaitingPod("uid-q");  // already gone: no-op
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].code(), Code::kUnschedulable);
  EXPECT_EQ(f->NumWaitingPods(), 0u);
}

TEST_F(PermitTest, TimeoutOnVirtualClock) {
  auto f = NewPermit();
  ASSERT_NE(f, nullptr);
  env_.permit = {{"P1", Status(Code::kWait)}, {"P2", Status(Code::kWait)}};
  env_.permit_timeout = {{"P1", 30 * kSec}, {"P2", 10 * kSec}};
  const api::Timestamp t0 = clock_.Now();
  std::map<std::string, Status> done;
  CycleState state;
  ASSERT_TRUE(
      f->RunPermitPlugins(state, *Pod("a"), "n1", [&](Status st) { done["a"] = st; }).IsWait());
  clock_.Advance(5 * kSec);
  ASSERT_TRUE(
      f->RunPermitPlugins(state, *Pod("b"), "n1", [&](Status st) { done["b"] = st; }).IsWait());

  // Each waiting plugin has its own timeout (upstream: a timer per plugin): "a" is rejected
  // by P2 after 10 s unless P2 allows it.
  EXPECT_EQ(f->NextPermitDeadline(), t0 + 10 * kSec);
  clock_.AdvanceTo(t0 + 10 * kSec - 1);
  EXPECT_EQ(f->ExpireWaitingPods(clock_.Now()), 0);
  EXPECT_TRUE(done.empty());
  clock_.AdvanceTo(t0 + 10 * kSec);
  EXPECT_EQ(f->ExpireWaitingPods(clock_.Now()), 1);
  ASSERT_EQ(done.count("a"), 1u);
  EXPECT_EQ(done["a"].code(), Code::kUnschedulable);
  EXPECT_EQ(done["a"].plugin(), "P2");
  EXPECT_EQ(done["a"].Message(), "rejected due to timeout after waiting at permit");

  // "b": P2 allows in time; then only P1's 30 s timeout is left.
  EXPECT_EQ(f->NextPermitDeadline(), t0 + 15 * kSec);
  f->GetWaitingPod("uid-b")->Allow("P2");
  EXPECT_EQ(f->NextPermitDeadline(), t0 + 35 * kSec);
  clock_.AdvanceTo(t0 + 34 * kSec);
  EXPECT_EQ(f->ExpireWaitingPods(clock_.Now()), 0);
  clock_.AdvanceTo(t0 + 35 * kSec);
  EXPECT_EQ(f->ExpireWaitingPods(clock_.Now()), 1);
  EXPECT_EQ(done["b"].plugin(), "P1");
  EXPECT_EQ(f->NumWaitingPods(), 0u);
  EXPECT_EQ(f->NextPermitDeadline(), LLONG_MAX);
}

TEST_F(PermitTest, WaitIsCappedAtFifteenMinutes) {
  auto f = NewPermit();
  ASSERT_NE(f, nullptr);
  env_.permit = {{"P1", Status(Code::kWait)}};
  env_.permit_timeout = {{"P1", 3600 * kSec}};
  CycleState state;
  ASSERT_TRUE(f->RunPermitPlugins(state, *Pod("p"), "n1", [](Status) {}).IsWait());
  EXPECT_EQ(f->NextPermitDeadline(), clock_.Now() + 15 * 60 * kSec);
}

TEST_F(RuntimeTest, PreBindBindPostBind) {
  config::Profile p = BaseProfile();
  p.plugins.pre_bind = Set({"BindPhases"});
  p.plugins.bind = Set({"Binder", "Binder2", "Binder3"});
  p.plugins.post_bind = Set({"BindPhases"});
  auto f = New(p);
  ASSERT_NE(f, nullptr);
  struct Case {
    std::string name;
    std::map<std::string, Status> bind;
    Code want_code;
    std::string want_plugin, want_message;
    std::vector<std::string> want_ran;
  };
  const std::vector<Case> cases = {
      {"the first binder binds", {}, Code::kSuccess, "", "", {"Binder"}},
      {"Skip falls through to the next binder",
       {{"Binder", Status(Code::kSkip)}},
       Code::kSuccess,
       "",
       "",
       {"Binder", "Binder2"}},
      {"every binder skips",
       {{"Binder", Status(Code::kSkip)},
        {"Binder2", Status(Code::kSkip)},
        {"Binder3", Status(Code::kSkip)}},
       Code::kSkip,
       "",
       "",
       {"Binder", "Binder2", "Binder3"}},
      {"a rejection stops",
       {{"Binder", Status(Code::kSkip)}, {"Binder2", Status::Unschedulable("gone")}},
       Code::kUnschedulable,
       "Binder2",
       "gone",
       {"Binder", "Binder2"}},
      {"an error stops",
       {{"Binder", Status::Error("conflict")}},
       Code::kError,
       "Binder",
       "binding \"ns/p\" to \"n1\": conflict",
       {"Binder"}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    env_.bind = tc.bind;
    env_.log.clear();
    CycleState state;
    Status s = f->RunBindPlugins(state, *Pod("p"), "n1");
    EXPECT_EQ(s.code(), tc.want_code);
    EXPECT_EQ(s.plugin(), tc.want_plugin);
    EXPECT_EQ(s.Message(), tc.want_message);
    std::vector<std::string> want_log;
    for (const auto& n : tc.want_ran) want_log.push_back("Bind:" + n);
    EXPECT_EQ(env_.log, want_log);
  }
  env_.log.clear();
  CycleState state;
  EXPECT_TRUE(f->RunPreBindPlugins(state, *Pod("p"), "n1").IsSuccess());
  f->RunPostBindPlugins(state, *Pod("p"), "n1");
  EXPECT_EQ(env_.log, (std::vector<std::string>{"PreBind:BindPhases", "PostBind:BindPhases"}));
  env_.pre_bind["BindPhases"] = Status::Error("volume");
  Status s = f->RunPreBindPlugins(state, *Pod("p"), "n1");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.plugin(), "BindPhases");
  EXPECT_EQ(s.Message(), "running PreBind plugin \"BindPhases\": volume");
  // Wait: passed through with the plugin's index when the caller can park the cycle, an
  // error otherwise; a plugin that is no WaitingPreBindPlugin cannot be asked again.
  env_.pre_bind["BindPhases"] = Status(Code::kWait, "device not attached yet");
  size_t waiting = 99;
  Status w = f->RunPreBindPlugins(state, *Pod("p"), "n1", 0, &waiting);
  EXPECT_EQ(w.code(), Code::kWait);
  EXPECT_EQ(w.plugin(), "BindPhases");
  EXPECT_EQ(waiting, 0u);
  EXPECT_EQ(f->RunPreBindPlugins(state, *Pod("p"), "n1").code(), Code::kError);
  int64_t wake = 0;
  Status again = f->RunPreBindWait(0, state, *Pod("p"), "n1", 0, &wake);
  EXPECT_EQ(again.code(), Code::kError);
  EXPECT_EQ(again.Message(),
            "running PreBind plugin \"BindPhases\": PreBind returned Wait but the plugin cannot "
            "wait");
  // From past the last plugin: nothing runs.
  EXPECT_TRUE(f->RunPreBindPlugins(state, *Pod("p"), "n1", 1, &waiting).IsSuccess());
}

}  // namespace
}  // namespace phalanx::framework
