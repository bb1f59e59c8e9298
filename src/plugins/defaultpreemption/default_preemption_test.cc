// Ported from upstream defaultpreemption/default_preemption_test.go (TestPostFilter,
// TestDryRunPreemption, TestSelectBestCandidate, TestPodEligibleToPreemptOthers, the
// candidate-count and args validation tests), plus the Phalanx gang rule. The plugin runs
// against a real framework::Framework (NodeResourcesFit, PodTopologySpread,
// InterPodAffinity and small fake plugins) over a fake snapshot and a recording client.
#include "plugins/defaultpreemption/default_preemption.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "config/types.h"
#include "framework/parallelize.h"
#include "framework/runtime.h"
#include "gang/default_podgroup_manager.h"
#include "plugins/registry.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::defaultpreemption {
namespace {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::Status;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

constexpr int32_t kNeg = -100, kLow = 0, kMid = 100, kHigh = 1000, kVeryHigh = 10000;
using Res = std::map<std::string, std::string>;
const Res kSmall = {{"cpu", "100m"}, {"memory", "100"}};
const Res kMedium = {{"cpu", "200m"}, {"memory", "200"}};
const Res kLarge = {{"cpu", "300m"}, {"memory", "300"}};
const Res kVeryLarge = {{"cpu", "500m"}, {"memory", "500"}};
const Res kOnePod = {{"pods", "1"}};
const Res kNodeRes = {{"cpu", "200m"}, {"memory", "400"}};

// ---- fakes ----

// Fails AddPod/RemovePod on nodes labelled error=true (upstream TestPlugin).
class TestPlugin final : public framework::PreFilterPlugin,
                         public framework::PreFilterExtensions,
                         public framework::FilterPlugin {
 public:
  std::string_view Name() const override { return "test-plugin"; }
  Status PreFilter(CycleState&, const PodInfo&, framework::PreFilterResult*) override {
    return Status();
  }
  framework::PreFilterExtensions* GetPreFilterExtensions() override { return this; }
  Status AddPod(CycleState&, const PodInfo& pod, const PodInfoPtr&, const NodeInfo& node) override {
    if (Labelled(node)) return Status::Error("failed to add pod: " + pod.Pod().metadata.name);
    return Status();
  }
  Status RemovePod(CycleState&, const PodInfo& pod, const PodInfoPtr&,
                   const NodeInfo& node) override {
    if (Labelled(node)) return Status::Error("failed to remove pod: " + pod.Pod().metadata.name);
    return Status();
  }
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo&) override { return Status(); }

 private:
  static bool Labelled(const NodeInfo& n) {
    auto it = n.node()->metadata.labels.find("error");
    return it != n.node()->metadata.labels.end() && it->second == "true";
  }
};

// Counts Filter calls; returns `code` for every node (upstream FakeFilterPlugin).
struct FakeFilterState {
  int calls = 0;
  Code code = Code::kSuccess;
};
class FakeFilter final : public framework::FilterPlugin {
 public:
  explicit FakeFilter(FakeFilterState* st) : st_(st) {}
  std::string_view Name() const override { return "FakeFilter"; }
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo&) override {
    ++st_->calls;
    if (st_->code == Code::kSuccess) return Status();
    return Status(st_->code, "fake filter");
  }

 private:
  FakeFilterState* st_;
};

// Makes every pod wait at Permit.
class WaitPermit final : public framework::PermitPlugin {
 public:
  std::string_view Name() const override { return "WaitPermit"; }
  Status Permit(CycleState&, const PodInfo&, const std::string&, int64_t* timeout_ns) override {
    *timeout_ns = 60LL * api::kNanosPerSecond;
    return Status(Code::kWait);
  }
};

// ---- objects ----

// A node with `res` (pods default to 32, as upstream's st.MakeNode().Capacity) and, for
// a name "host/zone", labels hostname=host and zone=zone.
api::Node MakeNode(const std::string& spec, Res res = kVeryLarge) {
  std::vector<std::string> parts;
  size_t b = 0;
  for (size_t e; (e = spec.find('/', b)) != std::string::npos; b = e + 1) {
    parts.push_back(spec.substr(b, e - b));
  }
  parts.push_back(spec.substr(b));
  if (!res.count("pods")) res["pods"] = "32";
  NodeBuilder nb(parts[0]);
  nb.Capacity(res);
  static const char* kKeys[] = {"hostname", "zone", "region"};
  for (size_t i = 0; i < parts.size() && i < 3; ++i) nb.Label(kKeys[i], parts[i]);
  return nb.Obj();
}

PodBuilder Pod(const std::string& name, int32_t prio, const Res& req = {}) {
  PodBuilder b(name);
  b.UID(name).Priority(prio);
  if (!req.empty()) b.Container(req);
  return b;
}

api::Pod WithStart(api::Pod p, api::Timestamp t) {
  p.status.start_time = t;
  return p;
}

// Koordinator gang annotations: gang `gang` with minMember `min`.
api::Pod InGang(api::Pod p, const std::string& gang, int min) {
  p.metadata.annotations["gang.scheduling.koordinator.sh/name"] = gang;
  p.metadata.annotations["gang.scheduling.koordinator.sh/min-available"] = std::to_string(min);
  return p;
}

// ---- the harness: a Framework as the plugin's Handle ----

struct Harness {
  // track_epoch: the Handle reports a ClusterObjectEpoch (`epoch`) and gives nominated
  // pods from `nominated_views` (stable list objects), as the scheduler does, so that the
  // dry-run memo is on.
  explicit Harness(std::vector<std::string> plugins = {"NodeResourcesFit"}, int parallelism = 1,
                   bool track_epoch = false)
      : parallelizer(parallelism) {
    registry = NewInTreeRegistry();
    (void)registry.Register(
        "test-plugin",
        [](framework::PluginArgs,
           framework::Handle&) -> framework::StatusOr<std::unique_ptr<framework::Plugin>> {
          return std::unique_ptr<framework::Plugin>(std::make_unique<TestPlugin>());
        });
    (void)registry.Register(
        "FakeFilter",
        [this](framework::PluginArgs,
               framework::Handle&) -> framework::StatusOr<std::unique_ptr<framework::Plugin>> {
          return std::unique_ptr<framework::Plugin>(std::make_unique<FakeFilter>(&fake_filter));
        });
    (void)registry.Register(
        "WaitPermit",
        [](framework::PluginArgs,
           framework::Handle&) -> framework::StatusOr<std::unique_ptr<framework::Plugin>> {
          return std::unique_ptr<framework::Plugin>(std::make_unique<WaitPermit>());
        });
    config::Profile prof;
    prof.plugins.multi_point.enabled = {{"PrioritySort", 0}, {"DefaultBinder", 0}};
    for (const auto& p : plugins) prof.plugins.multi_point.enabled.push_back({p, 0});
    framework::FrameworkOptions o;
    o.clock = &clock;
    o.client = &client;
    o.snapshot = &lister;
    o.parallelizer = &parallelizer;
    o.nominated_pods_for_node = [this](const std::string& node) {
      auto it = nominated.find(node);
      return it == nominated.end() ? std::vector<PodInfoPtr>{} : it->second;
    };
    o.random = [this](uint64_t n) { return n == 0 ? 0 : random_value % n; };
    o.services.Provide<gang::PodGroupManager>(&gangs);
    o.pod_disruption_budgets = [this] { return pdbs; };
    if (track_epoch) {
      o.cluster_object_epoch = [this] { return epoch; };
      o.nominated_pods_view =
          [this](const NodeInfo& ni) -> std::shared_ptr<const std::vector<PodInfoPtr>> {
        auto it = nominated_views.find(ni.name());
        return it == nominated_views.end() ? nullptr : it->second;
      };
    }
    auto f = framework::Framework::New(registry, prof, std::move(o));
    EXPECT_TRUE(f.ok()) << f.status().Message();
    fw = std::move(f).value();
  }

  // Places `pods` (each names its node) on `nodes`; registers them with the gang manager.
  void SetCluster(const std::vector<api::Node>& nodes, const std::vector<api::Pod>& pods) {
    std::vector<NodeInfo> infos;
    for (const auto& n : nodes) {
      std::vector<api::Pod> on;
      for (const auto& p : pods) {
        if (p.spec.node_name == n.metadata.name) on.push_back(p);
      }
      infos.push_back(phalanx::testing::MakeNodeInfo(n, on));
    }
    lister.Set(std::move(infos));
    for (const auto& p : pods) gangs.OnPodAdd(std::make_shared<api::Pod>(p), 0);
  }

  std::unique_ptr<DefaultPreemption> Plugin(DefaultPreemptionArgs args = {}) {
    return std::make_unique<DefaultPreemption>(args, *fw);
  }

  std::unique_ptr<CycleState> PreFilter(const PodInfo& pod) {
    auto state = std::make_unique<CycleState>();
    framework::PreFilterResult r;
    Status s = fw->RunPreFilterPlugins(*state, pod, &r);
    EXPECT_TRUE(s.IsSuccess()) << s.ToString();
    return state;
  }

  // Filter statuses: `codes` by node name; other nodes are absent.
  framework::NodeToStatus Statuses(const std::map<std::string, Code>& codes,
                                   Code absent = Code::kUnschedulableAndUnresolvable) {
    framework::NodeToStatus m;
    m.absent_nodes_code = absent;
    for (const auto* ni : lister.List()) {
      auto it = codes.find(ni->name());
      if (it != codes.end()) m.statuses.emplace_back(ni, Status(it->second));
    }
    return m;
  }

  framework::Registry registry;
  fake::FakeNodeLister lister;
  fake::FakeClock clock;
  fake::FakeClient client;
  framework::Parallelizer parallelizer;
  std::map<std::string, std::vector<PodInfoPtr>> nominated;
  uint64_t random_value = 0;
  gang::DefaultPodGroupManager gangs;
  FakeFilterState fake_filter;
  std::vector<api::PodDisruptionBudgetPtr> pdbs;  // what Handle::PodDisruptionBudgets lists
  uint64_t epoch = 0;                             // Handle::ClusterObjectEpoch (track_epoch)
  std::map<std::string, std::shared_ptr<const std::vector<PodInfoPtr>>> nominated_views;
  std::unique_ptr<framework::Framework> fw;
};

std::vector<std::string> Names(const std::vector<PodInfoPtr>& pods, bool sorted = true) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->Pod().metadata.name);
  if (sorted) std::sort(out.begin(), out.end());
  return out;
}

// node -> sorted victim names, in candidate order sorted by node name.
std::map<std::string, std::vector<std::string>> ByNode(const std::vector<Candidate>& cs) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& c : cs) out[c.node] = Names(c.victims);
  return out;
}

// ---- PostFilter ----

struct PostFilterCase {
  std::string name;
  api::Pod pod;
  std::vector<api::Pod> pods;
  std::vector<api::Node> nodes;
  std::map<std::string, Code> statuses;
  Code absent = Code::kUnschedulableAndUnresolvable;
  Code want_code;
  std::string want_message;  // empty for success
  std::string want_nominated;
};

TEST(DefaultPreemptionTest, PostFilter) {
  const Code U = Code::kUnschedulable, UU = Code::kUnschedulableAndUnresolvable;
  auto never = Pod("p", kHigh).Obj();
  never.spec.preemption_policy = "Never";
  const std::vector<PostFilterCase> cases = {
      {"pod with higher priority can be made schedulable",
       Pod("p", kHigh).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj()},
       {MakeNode("node1", kOnePod)},
       {{"node1", U}},
       UU,
       Code::kSuccess,
       "",
       "node1"},
      {"pod with tied priority is still unschedulable",
       Pod("p", kLow).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj()},
       {MakeNode("node1", kOnePod)},
       {{"node1", U}},
       UU,
       U,
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
       ""},
      {"preemption should respect filteredNodesStatuses",
       Pod("p", kHigh).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj()},
       {MakeNode("node1", kOnePod)},
       {{"node1", UU}},
       UU,
       U,
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
       ""},
      {"preemption should respect absent NodeToStatus entry meaning UnschedulableAndUnresolvable",
       Pod("p", kHigh).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj()},
       {MakeNode("node1", kOnePod)},
       {},
       UU,
       U,
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
       ""},
      {"absent nodes with code Unschedulable are candidates",
       Pod("p", kHigh).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj()},
       {MakeNode("node1", kOnePod)},
       {},
       U,
       Code::kSuccess,
       "",
       "node1"},
      {"pod can be made schedulable on one node",
       Pod("p", kMid).Obj(),
       {Pod("p1", kHigh).NodeName("node1").Obj(), Pod("p2", kLow).NodeName("node2").Obj()},
       {MakeNode("node1", kOnePod), MakeNode("node2", kOnePod)},
       {{"node1", U}, {"node2", U}},
       UU,
       Code::kSuccess,
       "",
       "node2"},
      {"no candidate nodes found, no enough resource after removing low priority pods",
       Pod("p", kHigh, kLarge).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj(), Pod("p2", kLow).NodeName("node2").Obj()},
       {MakeNode("node1", kNodeRes), MakeNode("node2", kNodeRes)},
       {{"node1", U}, {"node2", U}},
       UU,
       U,
       "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
       ""},
      {"no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU "
       "resource",
       Pod("p", kHigh, kLarge).Obj(),
       {Pod("p1", kHigh).NodeName("node1").Obj(), Pod("p2", kLow).NodeName("node2").Obj(),
        Pod("p3", kHigh).NodeName("node3").Obj()},
       {MakeNode("node1", kOnePod), MakeNode("node2", kNodeRes), MakeNode("node3", kOnePod)},
       {{"node1", U}, {"node2", U}, {"node3", U}},
       UU,
       U,
       "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found "
       "for incoming pod.",
       ""},
      {"no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 "
       "nodes don't have enough CPU resource",
       Pod("p", kHigh, kLarge).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj(), Pod("p2", kLow).NodeName("node2").Obj()},
       {MakeNode("node1", kNodeRes), MakeNode("node2", kNodeRes), MakeNode("node3", kNodeRes),
        MakeNode("node4", kNodeRes)},
       {{"node1", U}, {"node2", U}, {"node4", UU}},
       UU,
       U,
       "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for "
       "scheduling.",
       ""},
      {"only one node but failed with TestPlugin",
       Pod("p", kHigh, kLarge).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj()},
       {[] {
         auto n = MakeNode("node1", kLarge);
         n.metadata.labels["error"] = "true";
         return n;
       }()},
       {{"node1", U}},
       UU,
       Code::kError,
       "preemption: running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p",
       ""},
      {"one failed with TestPlugin and the other pass",
       Pod("p", kHigh, kLarge).Obj(),
       {Pod("p1", kLow).NodeName("node1").Obj(), Pod("p2", kLow, kMedium).NodeName("node2").Obj()},
       {[] {
          auto n = MakeNode("node1", kLarge);
          n.metadata.labels["error"] = "true";
          return n;
        }(),
        MakeNode("node2", kLarge)},
       {{"node1", U}, {"node2", U}},
       UU,
       Code::kSuccess,
       "",
       "node2"},
      {"preemptionPolicy Never does not preempt",
       never,
       {Pod("p1", kLow).NodeName("node1").Obj()},
       {MakeNode("node1", kOnePod)},
       {{"node1", U}},
       UU,
       U,
       "preemption: not eligible due to preemptionPolicy=Never.",
       ""},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Harness h({"NodeResourcesFit", "test-plugin"});
    h.SetCluster(tc.nodes, tc.pods);
    auto pl = h.Plugin();
    PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(tc.pod));
    auto state = h.PreFilter(*pod);
    framework::PostFilterResult result;
    result.nominated_node_name = "stale";
    Status s = pl->PostFilter(*state, *pod, h.Statuses(tc.statuses, tc.absent), &result);
    EXPECT_EQ(s.code(), tc.want_code) << s.ToString();
    EXPECT_EQ(s.Message(), tc.want_message);
    if (tc.want_code == Code::kSuccess || tc.want_message.find("0/") != std::string::npos) {
      EXPECT_EQ(result.nominated_node_name, tc.want_nominated);
    }
  }
}

TEST(DefaultPreemptionTest, PostFilterEvictsVictimsAndRecordsEvents) {
  Harness h;
  h.SetCluster({MakeNode("node1", kOnePod)}, {Pod("p1", kLow).NodeName("node1").Obj()});
  // A lower-priority pod nominated to node1 loses its nomination.
  h.nominated["node1"] = {Pod("nom", kLow).Info()};
  auto pl = h.Plugin();
  PodInfoPtr pod = Pod("p", kHigh).Info();
  auto state = h.PreFilter(*pod);
  framework::PostFilterResult result;
  Status s = pl->PostFilter(*state, *pod, h.Statuses({{"node1", Code::kUnschedulable}}), &result);
  ASSERT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(result.nominated_node_name, "node1");
  EXPECT_EQ(h.client.deleted, std::vector<std::string>({"default/p1"}));
  EXPECT_EQ(h.client.events,
            std::vector<std::string>({"Preempted: Preempted by pod p on node node1"}));
  // The victim got DisruptionTarget before deletion; the nominated pod was patched.
  EXPECT_EQ(h.client.status_updates, std::vector<std::string>({"default/p1", "default/nom"}));
}

TEST(DefaultPreemptionTest, WaitingVictimIsRejectedNotDeleted) {
  Harness h({"NodeResourcesFit", "WaitPermit"});
  api::Pod waiting = Pod("w", kLow).NodeName("node1").Obj();
  h.SetCluster({MakeNode("node1", kOnePod)}, {waiting});
  PodInfoPtr winfo = PodInfo::Make(std::make_shared<api::Pod>(waiting));
  CycleState wstate;
  std::optional<Status> outcome;
  Status ps = h.fw->RunPermitPlugins(wstate, *winfo, "node1", [&](Status s) { outcome = s; });
  ASSERT_TRUE(ps.IsWait());
  ASSERT_EQ(h.fw->NumWaitingPods(), 1u);

  auto pl = h.Plugin();
  PodInfoPtr pod = Pod("p", kHigh).Info();
  auto state = h.PreFilter(*pod);
  framework::PostFilterResult result;
  Status s = pl->PostFilter(*state, *pod, h.Statuses({{"node1", Code::kUnschedulable}}), &result);
  ASSERT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(result.nominated_node_name, "node1");
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(outcome->IsRejected());
  EXPECT_TRUE(h.client.deleted.empty());
  EXPECT_EQ(h.client.events,
            std::vector<std::string>({"Preempted: Preempted by pod p on node node1"}));
}

TEST(DefaultPreemptionTest, HigherPriorityNominatedPodsCountOnTheNode) {
  // Room freed by the victim is already promised to a nominated pod of the same priority.
  Harness h;
  h.SetCluster({MakeNode("node1")}, {Pod("p1", kLow, kLarge).NodeName("node1").Obj()});
  h.nominated["node1"] = {Pod("nom", kHigh, kLarge).Info()};
  auto pl = h.Plugin();
  PodInfoPtr pod = Pod("p", kHigh, kLarge).Info();
  auto state = h.PreFilter(*pod);
  framework::PostFilterResult result;
  Status s = pl->PostFilter(*state, *pod, h.Statuses({{"node1", Code::kUnschedulable}}), &result);
  EXPECT_EQ(s.Message(),
            "preemption: 0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.");
  EXPECT_TRUE(h.client.deleted.empty());
  // A lower-priority nomination does not count.
  h.nominated["node1"] = {Pod("nom", kMid, kLarge).Info()};
  s = pl->PostFilter(*state, *pod, h.Statuses({{"node1", Code::kUnschedulable}}), &result);
  EXPECT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(h.client.deleted, std::vector<std::string>({"default/p1"}));
}

// ---- DryRunPreemption ----

struct DryRunCase {
  std::string name;
  std::vector<std::string> plugins;
  Code fake_filter_code = Code::kSuccess;
  std::vector<std::string> node_names;
  std::vector<api::Pod> test_pods;  // one dry run (cycle) each
  std::vector<api::Pod> init_pods;
  std::optional<DefaultPreemptionArgs> args;
  std::vector<int32_t> offsets;  // per cycle; default 0
  std::vector<std::map<std::string, std::vector<std::string>>> expected;
  std::vector<int> expected_filter_calls;
};

TEST(DefaultPreemptionTest, DryRunPreemption) {
  const std::vector<std::string> fit = {"FakeFilter", "NodeResourcesFit"};
  auto anti = [] {
    auto p = Pod("p1.1", kLow, kSmall)
                 .NodeName("node1")
                 .Label("foo", "")
                 .PodAntiAffinityExists("foo", "hostname");
    return p.Obj();
  }();
  const api::LabelSelector foo_exists =
      phalanx::testing::MakeLabelSelector({}, {phalanx::testing::SelectorExists("foo")});
  const std::vector<DryRunCase> cases = {
      {"a pod that does not fit on any node",
       {"FakeFilter"},
       Code::kUnschedulable,
       {"node1", "node2"},
       {Pod("p", kHigh).Obj()},
       {Pod("p1", kMid).NodeName("node1").Obj(), Pod("p2", kMid).NodeName("node2").Obj()},
       std::nullopt,
       {},
       {{}},
       {2}},
      {"a pod that fits on both nodes when lower priority pods are preempted",
       fit,
       Code::kSuccess,
       {"node1", "node2"},
       {Pod("p", kHigh, kLarge).Obj()},
       {Pod("p1", kMid, kLarge).NodeName("node1").Obj(),
        Pod("p2", kMid, kLarge).NodeName("node2").Obj()},
       std::nullopt,
       {},
       {{{"node1", {"p1"}}, {"node2", {"p2"}}}},
       {4}},
      {"a pod that would fit on the nodes, but other pods running are higher priority",
       fit,
       Code::kSuccess,
       {"node1", "node2"},
       {Pod("p", kLow, kLarge).Obj()},
       {Pod("p1", kMid, kLarge).NodeName("node1").Obj(),
        Pod("p2", kMid, kLarge).NodeName("node2").Obj()},
       std::nullopt,
       {},
       {{}},
       {0}},
      {"medium priority pod is preempted, but lower priority one stays as it is small",
       fit,
       Code::kSuccess,
       {"node1", "node2"},
       {Pod("p", kHigh, kLarge).Obj()},
       {Pod("p1.1", kLow, kSmall).NodeName("node1").Obj(),
        Pod("p1.2", kMid, kLarge).NodeName("node1").Obj(),
        Pod("p2", kMid, kLarge).NodeName("node2").Obj()},
       std::nullopt,
       {},
       {{{"node1", {"p1.2"}}, {"node2", {"p2"}}}},
       {5}},
      {"mixed priority pods are preempted",
       fit,
       Code::kSuccess,
       {"node1", "node2"},
       {Pod("p", kHigh, kLarge).Obj()},
       {Pod("p1.1", kMid, kSmall).NodeName("node1").Obj(),
        Pod("p1.2", kLow, kSmall).NodeName("node1").Obj(),
        Pod("p1.3", kMid, kMedium).NodeName("node1").Obj(),
        Pod("p1.4", kHigh, kSmall).NodeName("node1").Obj(),
        Pod("p2", kHigh, kLarge).NodeName("node2").Obj()},
       std::nullopt,
       {},
       {{{"node1", {"p1.2", "p1.3"}}}},
       {4}},
      {"mixed priority pods are preempted, pick later StartTime one when priorities are equal",
       fit,
       Code::kSuccess,
       {"node1", "node2"},
       {Pod("p", kHigh, kLarge).Obj()},
       {WithStart(Pod("p1.1", kLow, kSmall).NodeName("node1").Obj(), 5),
        WithStart(Pod("p1.2", kLow, kSmall).NodeName("node1").Obj(), 4),
        WithStart(Pod("p1.3", kMid, kMedium).NodeName("node1").Obj(), 3),
        WithStart(Pod("p1.4", kHigh, kSmall).NodeName("node1").Obj(), 2),
        WithStart(Pod("p2", kHigh, kLarge).NodeName("node2").Obj(), 1)},
       std::nullopt,
       {},
       {{{"node1", {"p1.1", "p1.3"}}}},
       {4}},
      {"pod with anti-affinity is preempted",
       {"FakeFilter", "NodeResourcesFit", "InterPodAffinity"},
       Code::kSuccess,
       {"node1", "node2"},
       {Pod("p", kHigh, kSmall).Label("foo", "").Obj()},
       {anti, Pod("p1.2", kMid, kSmall).NodeName("node1").Obj(),
        Pod("p1.3", kHigh, kSmall).NodeName("node1").Obj(),
        Pod("p2", kHigh, kSmall).NodeName("node2").Obj()},
       std::nullopt,
       {},
       {{{"node1", {"p1.1"}}}},
       {3}},
      {"preemption to resolve pod topology spread filter failure",
       {"FakeFilter", "PodTopologySpread"},
       Code::kSuccess,
       {"node-a/zone1", "node-b/zone1", "node-x/zone2"},
       {Pod("p", kHigh)
            .Label("foo", "")
            .SpreadConstraint(1, "zone", "DoNotSchedule", foo_exists)
            .SpreadConstraint(1, "hostname", "DoNotSchedule", foo_exists)
            .Obj()},
       {Pod("pod-a1", kMid).NodeName("node-a").Label("foo", "").Obj(),
        Pod("pod-a2", kLow).NodeName("node-a").Label("foo", "").Obj(),
        Pod("pod-b1", kLow).NodeName("node-b").Label("foo", "").Obj(),
        Pod("pod-x1", kHigh).NodeName("node-x").Label("foo", "").Obj(),
        Pod("pod-x2", kHigh).NodeName("node-x").Label("foo", "").Obj()},
       std::nullopt,
       {},
       {{{"node-a", {"pod-a2"}}, {"node-b", {"pod-b1"}}}},
       {5}},
      {"get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
       fit,
       Code::kUnschedulable,
       {"node1", "node2"},
       {Pod("p", kHigh, kLarge).Obj()},
       {Pod("p1", kMid, kLarge).NodeName("node1").Obj(),
        Pod("p2", kMid, kLarge).NodeName("node2").Obj()},
       std::nullopt,
       {},
       {{}},
       {2}},
      {"all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
       fit,
       Code::kSuccess,
       {"node1", "node2", "node3", "node4", "node5"},
       {Pod("p", kHigh, kLarge).Obj()},
       {Pod("p1", kMid, kLarge).NodeName("node1").Obj(),
        Pod("p2", kMid, kLarge).NodeName("node2").Obj(),
        Pod("p3", kMid, kLarge).NodeName("node3").Obj(),
        Pod("p4", kMid, kLarge).NodeName("node4").Obj(),
        Pod("p5", kMid, kLarge).NodeName("node5").Obj()},
       DefaultPreemptionArgs{40, 1},
       {4},  // offset 4: node5 (yes), node1 (yes)
       {{{"node1", {"p1"}}, {"node5", {"p5"}}}},
       {4}},
      {"some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
       fit,
       Code::kSuccess,
       {"node1", "node2", "node3", "node4", "node5"},
       {Pod("p", kHigh, kLarge).Obj()},
       {Pod("p1", kMid, kLarge).NodeName("node1").Obj(),
        Pod("p2", kVeryHigh, kLarge).NodeName("node2").Obj(),
        Pod("p3", kMid, kLarge).NodeName("node3").Obj(),
        Pod("p4", kMid, kLarge).NodeName("node4").Obj(),
        Pod("p5", kVeryHigh, kLarge).NodeName("node5").Obj()},
       DefaultPreemptionArgs{40, 1},
       {4},  // node5 (no), node1 (yes), node2 (no), node3 (yes)
       {{{"node1", {"p1"}}, {"node3", {"p3"}}}},
       {4}},
      {"preemption offset across multiple scheduling cycles and wrap around",
       fit,
       Code::kSuccess,
       {"node1", "node2", "node3", "node4", "node5"},
       {Pod("tp1", kHigh, kLarge).Obj(), Pod("tp2", kHigh, kLarge).Obj(),
        Pod("tp3", kHigh, kLarge).Obj()},
       {Pod("p1", kMid, kLarge).NodeName("node1").Obj(),
        Pod("p2", kMid, kLarge).NodeName("node2").Obj(),
        Pod("p3", kMid, kLarge).NodeName("node3").Obj(),
        Pod("p4", kMid, kLarge).NodeName("node4").Obj(),
        Pod("p5", kMid, kLarge).NodeName("node5").Obj()},
       DefaultPreemptionArgs{40, 1},
       {4, 1, 3},
       {{{"node1", {"p1"}}, {"node5", {"p5"}}},
        {{"node2", {"p2"}}, {"node3", {"p3"}}},
        {{"node4", {"p4"}}, {"node5", {"p5"}}}},
       {4, 4, 4}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Harness h(tc.plugins);
    h.fake_filter.code = tc.fake_filter_code;
    std::vector<api::Node> nodes;
    for (const auto& n : tc.node_names) nodes.push_back(MakeNode(n));
    h.SetCluster(nodes, tc.init_pods);
    auto pl = h.Plugin(tc.args.value_or(DefaultPreemptionArgs{}));
    int prev_calls = 0;
    for (size_t cycle = 0; cycle < tc.test_pods.size(); ++cycle) {
      SCOPED_TRACE("cycle " + std::to_string(cycle));
      PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(tc.test_pods[cycle]));
      auto state = h.PreFilter(*pod);
      const auto& all = h.lister.List();
      const int32_t offset = cycle < tc.offsets.size() ? tc.offsets[cycle] : 0;
      std::vector<std::pair<std::string, Status>> statuses;
      std::vector<std::string> errors;
      auto got = pl->DryRunPreemption(*state, *pod, all, offset,
                                      pl->CalculateNumCandidates(static_cast<int32_t>(all.size())),
                                      &statuses, &errors);
      EXPECT_EQ(ByNode(got), tc.expected[cycle]);
      EXPECT_EQ(h.fake_filter.calls - prev_calls, tc.expected_filter_calls[cycle]);
      prev_calls = h.fake_filter.calls;
      EXPECT_TRUE(errors.empty());
    }
  }
}

// The dry run evaluates nodes in parallel blocks and keeps the one-at-a-time result: random
// clusters (40 nodes of 500m, pods of 100m..300m at three priorities), random offsets and
// candidate limits, candidates and per-node statuses compared between parallelism 1 and 2.
TEST(DefaultPreemptionTest, DryRunPreemptionIsTheSameWithAnyParallelism) {
  std::mt19937_64 rng(7);
  const Res sizes[] = {kSmall, kMedium, kLarge};
  const int32_t prios[] = {kLow, kMid, kVeryHigh};
  int with_candidates = 0;
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<api::Node> nodes;
    std::vector<api::Pod> pods;
    for (int i = 0; i < 40; ++i) {
      const std::string node = "node" + std::to_string(i);
      nodes.push_back(MakeNode(node));
      int used = 0;
      for (int k = 0; k < 4; ++k) {
        const size_t sz = rng() % 3;
        if (used + 100 * static_cast<int>(sz + 1) > 500) break;
        used += 100 * static_cast<int>(sz + 1);
        pods.push_back(
            Pod(node + "-p" + std::to_string(k), prios[rng() % 3], sizes[sz]).NodeName(node).Obj());
      }
    }
    const api::Pod preemptor = Pod("p", kHigh, rng() % 2 ? kLarge : kVeryLarge).Obj();
    const int32_t offset = static_cast<int32_t>(rng() % 40);
    const DefaultPreemptionArgs args{static_cast<int32_t>(rng() % 30),
                                     static_cast<int32_t>(1 + rng() % 12)};
    std::vector<std::map<std::string, std::vector<std::string>>> got;
    std::vector<std::vector<std::string>> statuses;
    for (int parallelism : {1, 2}) {
      Harness h({"NodeResourcesFit"}, parallelism);
      h.SetCluster(nodes, pods);
      auto pl = h.Plugin(args);
      PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(preemptor));
      auto state = h.PreFilter(*pod);
      const auto& all = h.lister.List();
      std::vector<std::pair<std::string, Status>> st;
      std::vector<std::string> errors;
      got.push_back(ByNode(pl->DryRunPreemption(
          *state, *pod, all, offset, pl->CalculateNumCandidates(static_cast<int32_t>(all.size())),
          &st, &errors)));
      statuses.emplace_back();
      for (const auto& [node, s] : st) statuses.back().push_back(node + ": " + s.ToString());
      EXPECT_TRUE(errors.empty());
    }
    EXPECT_EQ(got[0], got[1]);
    EXPECT_EQ(statuses[0], statuses[1]);
    if (!got[0].empty()) ++with_candidates;
  }
  EXPECT_GE(with_candidates, 20);
}

// ---- SelectCandidate (pickOneNodeForPreemption) ----

struct SelectCase {
  std::string name;
  std::vector<std::string> node_names;
  api::Pod pod;
  std::vector<api::Pod> pods;
  std::vector<std::string> expected;  // any of them
};

TEST(DefaultPreemptionTest, SelectBestCandidate) {
  auto P = [](const std::string& name, const std::string& node, int32_t prio, const Res& r,
              api::Timestamp start = 0) {
    return WithStart(Pod(name, prio, r).NodeName(node).Obj(), start);
  };
  const std::vector<SelectCase> cases = {
      {"a pod that fits on both nodes when lower priority pods are preempted",
       {"node1", "node2"},
       Pod("p", kHigh, kLarge).Obj(),
       {P("p1", "node1", kMid, kLarge), P("p2", "node2", kMid, kLarge)},
       {"node1", "node2"}},
      {"node with min highest priority pod is picked",
       {"node1", "node2", "node3"},
       Pod("p", kHigh, kVeryLarge).Obj(),
       {P("p1.1", "node1", kMid, kMedium), P("p1.2", "node1", kMid, kLarge),
        P("p2.1", "node2", kMid, kMedium), P("p2.2", "node2", kLow, kMedium),
        P("p3.1", "node3", kLow, kMedium), P("p3.2", "node3", kLow, kMedium)},
       {"node3"}},
      {"when highest priorities are the same, minimum sum of priorities is picked",
       {"node1", "node2", "node3"},
       Pod("p", kHigh, kVeryLarge).Obj(),
       {P("p1.1", "node1", kMid, kMedium), P("p1.2", "node1", kMid, kLarge),
        P("p2.1", "node2", kMid, kLarge), P("p2.2", "node2", kLow, kMedium),
        P("p3.1", "node3", kMid, kMedium), P("p3.2", "node3", kMid, kMedium)},
       {"node2"}},
      {"when highest priority and sum are the same, minimum number of pods is picked",
       {"node1", "node2", "node3"},
       Pod("p", kHigh, kVeryLarge).Obj(),
       {P("p1.1", "node1", kMid, kSmall), P("p1.2", "node1", kNeg, kSmall),
        P("p1.3", "node1", kMid, kSmall), P("p1.4", "node1", kNeg, kSmall),
        P("p2.1", "node2", kMid, kLarge), P("p2.2", "node2", kNeg, kMedium),
        P("p3.1", "node3", kMid, kMedium), P("p3.2", "node3", kNeg, kSmall),
        P("p3.3", "node3", kLow, kSmall)},
       {"node2"}},
      {"sum of adjusted priorities is considered",
       {"node1", "node2", "node3"},
       Pod("p", kHigh, kVeryLarge).Obj(),
       {P("p1.1", "node1", kMid, kSmall), P("p1.2", "node1", kNeg, kSmall),
        P("p1.3", "node1", kNeg, kSmall), P("p2.1", "node2", kMid, kLarge),
        P("p2.2", "node2", kNeg, kMedium), P("p3.1", "node3", kMid, kMedium),
        P("p3.2", "node3", kNeg, kSmall), P("p3.3", "node3", kLow, kSmall)},
       {"node2"}},
      {"non-overlapping lowest high priority, sum priorities, and number of pods",
       {"node1", "node2", "node3", "node4"},
       Pod("p", kVeryHigh, kVeryLarge).Obj(),
       {P("p1.1", "node1", kMid, kSmall), P("p1.2", "node1", kLow, kSmall),
        P("p1.3", "node1", kLow, kSmall), P("p2.1", "node2", kHigh, kLarge),
        P("p3.1", "node3", kMid, kMedium), P("p3.2", "node3", kLow, kSmall),
        P("p3.3", "node3", kLow, kSmall), P("p3.4", "node3", kLow, kMedium),
        P("p4.1", "node4", kMid, kMedium), P("p4.2", "node4", kMid, kSmall),
        P("p4.3", "node4", kMid, kSmall), P("p4.4", "node4", kNeg, kSmall)},
       {"node1"}},
      {"same priority, same number of victims, different start time for each node's pod",
       {"node1", "node2", "node3"},
       Pod("p", kHigh, kVeryLarge).Obj(),
       {P("p1.1", "node1", kMid, kMedium, 2), P("p1.2", "node1", kMid, kMedium, 2),
        P("p2.1", "node2", kMid, kMedium, 3), P("p2.2", "node2", kMid, kMedium, 3),
        P("p3.1", "node3", kMid, kMedium, 1), P("p3.2", "node3", kMid, kMedium, 1)},
       {"node2"}},
      {"same priority, same number of victims, different start time for all pods",
       {"node1", "node2", "node3"},
       Pod("p", kHigh, kVeryLarge).Obj(),
       {P("p1.1", "node1", kMid, kMedium, 4), P("p1.2", "node1", kMid, kMedium, 2),
        P("p2.1", "node2", kMid, kMedium, 5), P("p2.2", "node2", kMid, kMedium, 1),
        P("p3.1", "node3", kMid, kMedium, 3), P("p3.2", "node3", kMid, kMedium, 6)},
       {"node3"}},
      {"different priority, same number of victims, different start time for all pods",
       {"node1", "node2", "node3"},
       Pod("p", kHigh, kVeryLarge).Obj(),
       {P("p1.1", "node1", kLow, kMedium, 4), P("p1.2", "node1", kMid, kMedium, 2),
        P("p2.1", "node2", kMid, kMedium, 6), P("p2.2", "node2", kLow, kMedium, 1),
        P("p3.1", "node3", kLow, kMedium, 3), P("p3.2", "node3", kMid, kMedium, 5)},
       {"node2"}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Harness h;
    std::vector<api::Node> nodes;
    for (const auto& n : tc.node_names) nodes.push_back(MakeNode(n));
    h.SetCluster(nodes, tc.pods);
    auto pl = h.Plugin();
    PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(tc.pod));
    auto state = h.PreFilter(*pod);
    const auto& all = h.lister.List();
    std::vector<std::pair<std::string, Status>> statuses;
    std::vector<std::string> errors;
    auto cands = pl->DryRunPreemption(*state, *pod, all, 0, static_cast<int32_t>(all.size()),
                                      &statuses, &errors);
    const Candidate* best = pl->SelectCandidate(cands);
    ASSERT_NE(best, nullptr);
    EXPECT_NE(std::find(tc.expected.begin(), tc.expected.end(), best->node), tc.expected.end())
        << "got " << best->node;
  }
}

TEST(DefaultPreemptionTest, VictimsAreOrderedByImportance) {
  Harness h;
  h.SetCluster({MakeNode("node1")}, {WithStart(Pod("a", kLow, kMedium).NodeName("node1").Obj(), 5),
                                     WithStart(Pod("b", kMid, kMedium).NodeName("node1").Obj(), 9),
                                     WithStart(Pod("c", kLow, kSmall).NodeName("node1").Obj(), 1)});
  auto pl = h.Plugin();
  PodInfoPtr pod = Pod("p", kHigh, kVeryLarge).Info();
  auto state = h.PreFilter(*pod);
  std::vector<std::pair<std::string, Status>> statuses;
  std::vector<std::string> errors;
  auto cands = pl->DryRunPreemption(*state, *pod, h.lister.List(), 0, 1, &statuses, &errors);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_EQ(Names(cands[0].victims, /*sorted=*/false), std::vector<std::string>({"b", "c", "a"}));
}

// ---- PodEligibleToPreemptOthers ----

TEST(DefaultPreemptionTest, PodEligibleToPreemptOthers) {
  auto nominated = [](api::Pod p) {
    p.status.nominated_node_name = "node1";
    return p;
  };
  auto terminating = [](api::Pod p, bool by_preemption) {
    p.metadata.deletion_timestamp = 1;
    if (by_preemption) {
      p.status.conditions.push_back({"DisruptionTarget", "True", "PreemptionByScheduler", ""});
    }
    return p;
  };
  api::Pod never = Pod("p_with_preempt_never_policy", kHigh).Obj();
  never.spec.preemption_policy = "Never";
  struct Case {
    std::string name;
    api::Pod pod;
    std::vector<api::Pod> pods;
    Status nominated_status;
    bool expected;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"Pod with nominated node",
       nominated(Pod("p", kHigh).Obj()),
       {terminating(Pod("p1", kLow).NodeName("node1").Obj(), true)},
       Status::UnschedulableAndUnresolvable("node(s) had untolerated taint"),
       true,
       ""},
      {"Pod without nominated node", Pod("p", kHigh).Obj(), {}, Status(), true, ""},
      {"Pod with 'PreemptNever' preemption policy",
       never,
       {},
       Status(),
       false,
       "not eligible due to preemptionPolicy=Never."},
      {"preemption victim pod terminating, as indicated by the dedicated DisruptionTarget "
       "condition",
       nominated(Pod("p", kHigh).Obj()),
       {terminating(Pod("p1", kLow).NodeName("node1").Obj(), true)},
       Status(),
       false,
       "not eligible due to a terminating pod on the nominated node."},
      {"non-victim Pods terminating",
       nominated(Pod("p", kHigh).Obj()),
       {terminating(Pod("p1", kLow).NodeName("node1").Obj(), false)},
       Status(),
       true,
       ""},
      {"higher-priority pods terminating by preemption do not hold the pod back",
       nominated(Pod("p", kHigh).Obj()),
       {terminating(Pod("p1", kVeryHigh).NodeName("node1").Obj(), true)},
       Status(),
       true,
       ""},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Harness h;
    h.SetCluster({MakeNode("node1")}, tc.pods);
    auto pl = h.Plugin();
    PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(tc.pod));
    auto [ok, reason] = pl->PodEligibleToPreemptOthers(*pod, tc.nominated_status);
    EXPECT_EQ(ok, tc.expected);
    EXPECT_EQ(reason, tc.reason);
  }
}

TEST(DefaultPreemptionTest, NominatedNodeWithTerminatingVictimWaits) {
  Harness h;
  api::Pod victim = Pod("p1", kLow).NodeName("node1").Obj();
  victim.metadata.deletion_timestamp = 1;
  victim.status.conditions.push_back({"DisruptionTarget", "True", "PreemptionByScheduler", ""});
  h.SetCluster({MakeNode("node1", kOnePod), MakeNode("node2", kOnePod)},
               {victim, Pod("p2", kLow).NodeName("node2").Obj()});
  auto pl = h.Plugin();
  api::Pod p = Pod("p", kHigh).Obj();
  p.status.nominated_node_name = "node1";
  PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(p));
  auto state = h.PreFilter(*pod);
  framework::PostFilterResult result;
  Status s = pl->PostFilter(
      *state, *pod, h.Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
      &result);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(),
            "preemption: not eligible due to a terminating pod on the nominated node.");
  EXPECT_TRUE(h.client.deleted.empty());
}

// ---- candidates count and args ----

TEST(DefaultPreemptionTest, CalculateNumCandidates) {
  struct Case {
    int32_t pct, abs, nodes, want;
  };
  for (const Case& c : std::vector<Case>{{10, 100, 10, 10},
                                         {10, 100, 1000, 100},
                                         {40, 1, 10, 4},
                                         {40, 5, 10, 5},
                                         {10, 50, 1000, 100},
                                         {100, 0, 7, 7},
                                         {0, 3, 1000, 3},
                                         {10, 100, 5000, 500}}) {
    Harness h;
    auto pl = h.Plugin({c.pct, c.abs});
    EXPECT_EQ(pl->CalculateNumCandidates(c.nodes), c.want)
        << c.pct << " " << c.abs << " " << c.nodes;
  }
  Harness h;
  h.random_value = 7;
  auto pl = h.Plugin();
  EXPECT_EQ(pl->GetOffsetAndNumCandidates(5), std::make_pair(int32_t{2}, int32_t{5}));
}

TEST(DefaultPreemptionTest, Args) {
  auto parse = [](const std::string& yaml) {
    YAML::Node n = YAML::Load(yaml);
    return ParseDefaultPreemptionArgs(&n);
  };
  auto d = ParseDefaultPreemptionArgs(nullptr);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->min_candidate_nodes_percentage, 10);
  EXPECT_EQ(d->min_candidate_nodes_absolute, 100);
  auto e = parse("{}");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->min_candidate_nodes_percentage, 10);
  auto v = parse(
      "{kind: DefaultPreemptionArgs, minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: "
      "0}");
  ASSERT_TRUE(v.ok()) << v.status().Message();
  EXPECT_EQ(v->min_candidate_nodes_percentage, 50);
  EXPECT_EQ(v->min_candidate_nodes_absolute, 0);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{minCandidateNodesPercentage: -1, minCandidateNodesAbsolute: 100}",
       "DefaultPreemptionArgs: minCandidateNodesPercentage: Invalid value: -1: not in valid range "
       "[0, 100]"},
      {"{minCandidateNodesPercentage: 101}",
       "DefaultPreemptionArgs: minCandidateNodesPercentage: Invalid value: 101: not in valid range "
       "[0, 100]"},
      {"{minCandidateNodesAbsolute: -1}",
       "DefaultPreemptionArgs: minCandidateNodesAbsolute: Invalid value: -1: not in valid range "
       "[0, inf)"},
      {"{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
       "DefaultPreemptionArgs: [minCandidateNodesPercentage: Invalid value: 0: cannot be zero at "
       "the same time as minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: "
       "cannot be zero at the same time as minCandidateNodesPercentage]"},
      {"{minCandidateNodesPercentage: 120, minCandidateNodesAbsolute: -1}",
       "DefaultPreemptionArgs: [minCandidateNodesPercentage: Invalid value: 120: not in valid "
       "range [0, 100], minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, "
       "inf)]"},
  };
  for (const auto& [yaml, want] : bad) {
    auto r = parse(yaml);
    ASSERT_FALSE(r.ok()) << yaml;
    EXPECT_EQ(r.status().Message(), want);
  }
  EXPECT_FALSE(parse("{minCandidateNodesPercentage: abc}").ok());
  EXPECT_FALSE(parse("{minCandidateNodes: 1}").ok());
  EXPECT_FALSE(parse("{kind: NodeAffinityArgs}").ok());
  // The registered factory validates too.
  framework::Registry r = NewInTreeRegistry();
  fake::FakeHandle fh;
  YAML::Node badn = YAML::Load("{minCandidateNodesPercentage: 101}");
  auto pl = (*r.Find("DefaultPreemption"))(&badn, fh);
  EXPECT_FALSE(pl.ok());
  auto okpl = (*r.Find("DefaultPreemption"))(nullptr, fh);
  ASSERT_TRUE(okpl.ok());
  EXPECT_EQ(okpl.value()->Name(), "DefaultPreemption");
}

// ---- gangs (Phalanx extension) ----

// A running gang g (minMember 2) with g1 on node1 and g2 on node2; node1 also runs s1.
// node1 fits two medium pods; the preemptor needs one medium slot there.
struct GangSetup {
  api::Timestamp gang_start = 10, single_start = 10;
  int min_member = 2;
  int32_t g2_priority = kLow;
};

std::vector<Candidate> GangDryRun(Harness& h, const GangSetup& g, Status* node1_status = nullptr) {
  h.SetCluster(
      {MakeNode("node1", {{"cpu", "400m"}, {"memory", "400"}}),
       MakeNode("node2", {{"cpu", "400m"}, {"memory", "400"}})},
      {WithStart(InGang(Pod("g1", kLow, kMedium).NodeName("node1").Obj(), "g", g.min_member),
                 g.gang_start),
       WithStart(
           InGang(Pod("g2", g.g2_priority, kMedium).NodeName("node2").Obj(), "g", g.min_member),
           g.gang_start),
       WithStart(Pod("s1", kLow, kMedium).NodeName("node1").Obj(), g.single_start),
       // node2 is full with a pod the preemptor cannot evict.
       Pod("big", kVeryHigh, kMedium).NodeName("node2").Obj()});
  auto pl = h.Plugin();
  PodInfoPtr pod = Pod("p", kHigh, kMedium).Info();
  auto state = h.PreFilter(*pod);
  std::vector<const NodeInfo*> node1 = {h.lister.Get("node1")};
  std::vector<std::pair<std::string, Status>> statuses;
  std::vector<std::string> errors;
  auto out = pl->DryRunPreemption(*state, *pod, node1, 0, 1, &statuses, &errors);
  if (node1_status != nullptr && !statuses.empty()) *node1_status = statuses[0].second;
  return out;
}

TEST(DefaultPreemptionGangTest, RunningGangIsNeverSplit) {
  struct Case {
    std::string name;
    GangSetup setup;
    std::vector<std::string> want_victims;  // sorted; empty: no candidate
  };
  const std::vector<Case> cases = {
      // The gang is more important (started earlier): it is reprieved whole and s1 goes.
      {"gang reprieved whole", {/*gang_start=*/1, /*single_start=*/5}, {"s1"}},
      // s1 is more important: the whole gang goes, including g2 on node2, which frees
      // nothing on node1.
      {"gang evicted whole, across nodes", {/*gang_start=*/5, /*single_start=*/1}, {"g1", "g2"}},
      // g2 outranks the preemptor: the gang is not eligible at all, only s1 is a victim.
      {"gang with a member the preemptor cannot evict is left alone",
       {/*gang_start=*/5, /*single_start=*/1, /*min_member=*/2, /*g2_priority=*/kVeryHigh},
       {"s1"}},
      // A gang that is not running (minMember 3, two placed) is not a unit: g1 goes alone.
      {"members of a gang that is not running are ordinary victims",
       {/*gang_start=*/5, /*single_start=*/1, /*min_member=*/3},
       {"g1"}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Harness h;
    auto cands = GangDryRun(h, tc.setup);
    ASSERT_EQ(cands.size(), 1u);
    EXPECT_EQ(cands[0].node, "node1");
    EXPECT_EQ(Names(cands[0].victims), tc.want_victims);
    // The invariant: a running gang's placed members are all victims or none is.
    if (tc.setup.min_member == 2) {
      auto names = Names(cands[0].victims);
      const bool g1 = std::count(names.begin(), names.end(), "g1") > 0;
      const bool g2 = std::count(names.begin(), names.end(), "g2") > 0;
      EXPECT_EQ(g1, g2);
    }
  }
}

TEST(DefaultPreemptionGangTest, GangWhoseRemovalDoesNotHelpIsNotChosen) {
  // node1: the gang member g1 (small) next to a pod the preemptor cannot evict; removing
  // the whole gang still leaves too little room on node1, so node1 is no candidate and
  // nothing of the gang is touched; node2 (an ordinary victim) is chosen.
  Harness h;
  h.SetCluster({MakeNode("node1", {{"cpu", "400m"}, {"memory", "400"}}),
                MakeNode("node2", {{"cpu", "400m"}, {"memory", "400"}}),
                MakeNode("node3", {{"cpu", "400m"}, {"memory", "400"}})},
               {InGang(Pod("g1", kLow, kSmall).NodeName("node1").Obj(), "g", 2),
                InGang(Pod("g2", kLow, kSmall).NodeName("node3").Obj(), "g", 2),
                Pod("big1", kVeryHigh, kLarge).NodeName("node1").Obj(),
                Pod("big3", kVeryHigh, kLarge).NodeName("node3").Obj(),
                Pod("s2", kMid, kLarge).NodeName("node2").Obj()});
  auto pl = h.Plugin();
  PodInfoPtr pod = Pod("p", kHigh, kLarge).Info();
  auto state = h.PreFilter(*pod);
  framework::PostFilterResult result;
  Status s = pl->PostFilter(*state, *pod,
                            h.Statuses({{"node1", Code::kUnschedulable},
                                        {"node2", Code::kUnschedulable},
                                        {"node3", Code::kUnschedulable}}),
                            &result);
  ASSERT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(result.nominated_node_name, "node2");
  EXPECT_EQ(h.client.deleted, std::vector<std::string>({"default/s2"}));
}

TEST(DefaultPreemptionGangTest, CandidatesCountTheWholeGang) {
  // node1 frees enough room by evicting g1 alone, but g1's gang has three placed members
  // (g2, g3 on node3): three victims. node2 needs two single victims of the same
  // priority. Upstream's criteria on the whole gang pick node2 (smaller sum of
  // priorities); counting only g1 would pick node1.
  Harness h;
  h.SetCluster({MakeNode("node1"), MakeNode("node2"), MakeNode("node3")},
               {InGang(Pod("g1", kLow, kLarge).NodeName("node1").Obj(), "g", 3),
                InGang(Pod("g2", kLow, kSmall).NodeName("node3").Obj(), "g", 3),
                InGang(Pod("g3", kLow, kSmall).NodeName("node3").Obj(), "g", 3),
                Pod("s1", kLow, kMedium).NodeName("node2").Obj(),
                Pod("s2", kLow, kMedium).NodeName("node2").Obj()});
  auto pl = h.Plugin();
  PodInfoPtr pod = Pod("p", kHigh, kVeryLarge).Info();
  auto state = h.PreFilter(*pod);
  std::vector<std::pair<std::string, Status>> statuses;
  std::vector<std::string> errors;
  std::vector<const NodeInfo*> nodes = {h.lister.Get("node1"), h.lister.Get("node2")};
  auto cands = pl->DryRunPreemption(*state, *pod, nodes, 0, 2, &statuses, &errors);
  ASSERT_EQ(ByNode(cands), (std::map<std::string, std::vector<std::string>>{
                               {"node1", {"g1", "g2", "g3"}}, {"node2", {"s1", "s2"}}}));
  const Candidate* best = pl->SelectCandidate(cands);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->node, "node2");

  // With node2 gone, node1 is chosen and the whole gang is deleted, on every node.
  framework::PostFilterResult result;
  Status s = pl->PostFilter(*state, *pod, h.Statuses({{"node1", Code::kUnschedulable}}), &result);
  ASSERT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(result.nominated_node_name, "node1");
  auto deleted = h.client.deleted;
  std::sort(deleted.begin(), deleted.end());
  EXPECT_EQ(deleted, std::vector<std::string>({"default/g1", "default/g2", "default/g3"}));
  EXPECT_EQ(h.client.events.size(), 3u);
  for (const auto& e : h.client.events) EXPECT_EQ(e, "Preempted: Preempted by pod p on node node1");
}

TEST(DefaultPreemptionGangTest, GangMemberOnOtherNodeDoesNotFreeRoomHere) {
  // node1 holds g1 and s1 (both low) and is full; the preemptor needs both slots there.
  // The gang goes whole (g2 on node2 too), as does s1.
  Harness h;
  h.SetCluster({MakeNode("node1", {{"cpu", "400m"}, {"memory", "400"}}), MakeNode("node2")},
               {InGang(Pod("g1", kLow, kMedium).NodeName("node1").Obj(), "g", 2),
                InGang(Pod("g2", kLow, kMedium).NodeName("node2").Obj(), "g", 2),
                Pod("s1", kLow, kMedium).NodeName("node1").Obj()});
  auto pl = h.Plugin();
  PodInfoPtr pod = Pod("p", kHigh, {{"cpu", "400m"}, {"memory", "400"}}).Info();
  auto state = h.PreFilter(*pod);
  std::vector<std::pair<std::string, Status>> statuses;
  std::vector<std::string> errors;
  std::vector<const NodeInfo*> nodes = {h.lister.Get("node1")};
  auto cands = pl->DryRunPreemption(*state, *pod, nodes, 0, 1, &statuses, &errors);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_EQ(Names(cands[0].victims), std::vector<std::string>({"g1", "g2", "s1"}));
}

}  // namespace
}  // namespace phalanx::plugins::defaultpreemption

// ---- PodDisruptionBudgets (upstream TestDryRunPreemption's PDB cases) ----

namespace phalanx::plugins::defaultpreemption {
namespace {

// A budget in namespace "default" selecting app=<app>, with the given status.
api::PodDisruptionBudgetPtr Pdb(const std::string& name, const std::string& app, int32_t allowed,
                                std::vector<std::string> disrupted = {}) {
  api::PodDisruptionBudget pdb;
  pdb.metadata.name = name;
  pdb.metadata.namespace_ = "default";
  pdb.spec.selector = api::LabelSelector{{{"app", app}}, {}};
  pdb.status.disruptions_allowed = allowed;
  for (auto& d : disrupted) pdb.status.disrupted_pods[d] = 1;
  return std::make_shared<const api::PodDisruptionBudget>(std::move(pdb));
}

api::Pod App(const std::string& name, const std::string& app, int32_t prio, const Res& req,
             const std::string& node) {
  auto p = Pod(name, prio, req).NodeName(node).Obj();
  p.metadata.namespace_ = "default";
  if (!app.empty()) p.metadata.labels["app"] = app;
  return p;
}

struct PdbDryRunCase {
  std::string name;
  std::vector<api::Pod> pods;
  std::vector<api::PodDisruptionBudgetPtr> pdbs;
  std::vector<std::string> want_victims;
  int64_t want_violations;
  int want_filter_calls;
};

TEST(DefaultPreemptionPDBTest, DryRunPreemption) {
  const std::vector<PdbDryRunCase> cases = {
      {"preemption with violation of same pdb",
       {App("p1.1", "foo", kMid, kMedium, "node1"), App("p1.2", "foo", kMid, kMedium, "node1")},
       {Pdb("pdb", "foo", 1)},
       {"p1.1", "p1.2"},
       1,
       3},
      {"preemption with violation of the pdb with pod whose eviction was processed, the victim "
       "doesn't belong to DisruptedPods",
       {App("p1.1", "foo", kMid, kMedium, "node1"), App("p1.2", "foo", kMid, kMedium, "node1")},
       {Pdb("pdb", "foo", 1, {"p2"})},
       {"p1.1", "p1.2"},
       1,
       3},
      {"preemption with violation of the pdb with pod whose eviction was processed, the victim "
       "belongs to DisruptedPods",
       {App("p1.1", "foo", kMid, kMedium, "node1"), App("p1.2", "foo", kMid, kMedium, "node1")},
       {Pdb("pdb", "foo", 1, {"p1.2"})},
       {"p1.1", "p1.2"},
       0,
       3},
      {"preemption with violation of the pdb with pod whose eviction was processed, the victim "
       "which belongs to DisruptedPods is treated as 'nonViolating'",
       {App("p1.1", "foo", kMid, kMedium, "node1"), App("p1.2", "foo", kMid, kMedium, "node1"),
        App("p1.3", "foo", kMid, kMedium, "node1")},
       {Pdb("pdb", "foo", 1, {"p1.3"})},
       {"p1.1", "p1.2", "p1.3"},
       1,
       4},
      {"a pdb of another namespace, or with an empty selector, protects nothing",
       {App("p1.1", "foo", kMid, kMedium, "node1"), App("p1.2", "foo", kMid, kMedium, "node1")},
       {[] {
          auto p = std::make_shared<api::PodDisruptionBudget>(*Pdb("other", "foo", 0));
          p->metadata.namespace_ = "other";
          return api::PodDisruptionBudgetPtr(p);
        }(),
        [] {
          auto p = std::make_shared<api::PodDisruptionBudget>(*Pdb("empty", "foo", 0));
          p->spec.selector = api::LabelSelector{};
          return api::PodDisruptionBudgetPtr(p);
        }()},
       {"p1.1", "p1.2"},
       0,
       3},
      {"a pod without labels matches no pdb",
       {App("p1.1", "", kMid, kMedium, "node1"), App("p1.2", "", kMid, kMedium, "node1")},
       {Pdb("pdb", "foo", 0)},
       {"p1.1", "p1.2"},
       0,
       3},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Harness h({"FakeFilter", "NodeResourcesFit"});
    h.pdbs = tc.pdbs;
    h.SetCluster({MakeNode("node1")}, tc.pods);
    auto pl = h.Plugin();
    PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(Pod("p", kHigh, kVeryLarge).Obj()));
    auto state = h.PreFilter(*pod);
    std::vector<std::pair<std::string, Status>> statuses;
    std::vector<std::string> errors;
    auto got = pl->DryRunPreemption(*state, *pod, h.lister.List(), 0, 1, &statuses, &errors);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(Names(got[0].victims), tc.want_victims);
    EXPECT_EQ(got[0].num_pdb_violations, tc.want_violations);
    EXPECT_EQ(static_cast<int64_t>(got[0].pdb_violations.size()), tc.want_violations);
    EXPECT_EQ(h.fake_filter.calls, tc.want_filter_calls);
    EXPECT_TRUE(errors.empty());
  }
}

// A PDB-violating victim is reprieved first: of two equally important pods of which only
// one must go, the unprotected one goes.
TEST(DefaultPreemptionPDBTest, ViolatingVictimIsReprievedFirst) {
  Harness h;
  h.pdbs = {Pdb("db", "db", 0)};
  // p1.1 is older (more important), so without the PDB it would be reprieved first and
  // p1.2 (protected) evicted.
  h.SetCluster({MakeNode("node1", kNodeRes)},
               {WithStart(App("p1.1", "web", kMid, kSmall, "node1"), 1),
                WithStart(App("p1.2", "db", kMid, kSmall, "node1"), 2)});
  auto pl = h.Plugin();
  PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(Pod("p", kHigh, kSmall).Obj()));
  auto state = h.PreFilter(*pod);
  std::vector<std::pair<std::string, Status>> statuses;
  std::vector<std::string> errors;
  auto got = pl->DryRunPreemption(*state, *pod, h.lister.List(), 0, 1, &statuses, &errors);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(Names(got[0].victims), std::vector<std::string>{"p1.1"});
  EXPECT_EQ(got[0].num_pdb_violations, 0);
}

// pickOneNodeForPreemption: fewest PDB violations first, even against a lower-priority
// alternative; the violation is noted in the victim's Preempted event.
TEST(DefaultPreemptionPDBTest, PostFilterPrefersTheNodeWithoutViolations) {
  Harness h;
  h.pdbs = {Pdb("db", "db", 0)};
  h.SetCluster(
      {MakeNode("node1", kNodeRes), MakeNode("node2", kNodeRes)},
      {App("db-0", "db", kLow, kMedium, "node1"), App("web-0", "web", kMid, kMedium, "node2")});
  auto pl = h.Plugin();
  PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(Pod("p", kHigh, kMedium).Obj()));
  auto state = h.PreFilter(*pod);
  framework::PostFilterResult result;
  Status s = pl->PostFilter(
      *state, *pod, h.Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
      &result);
  ASSERT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(result.nominated_node_name, "node2");
  EXPECT_EQ(h.client.deleted, std::vector<std::string>{"default/web-0"});

  // With the unprotected node gone, the budget is violated and the event says so.
  Harness h2;
  h2.pdbs = h.pdbs;
  h2.SetCluster({MakeNode("node1", kNodeRes)}, {App("db-0", "db", kLow, kMedium, "node1")});
  auto pl2 = h2.Plugin();
  auto state2 = h2.PreFilter(*pod);
  s = pl2->PostFilter(*state2, *pod, h2.Statuses({{"node1", Code::kUnschedulable}}), &result);
  ASSERT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(result.nominated_node_name, "node1");
  ASSERT_EQ(h2.client.events.size(), 1u);
  EXPECT_EQ(h2.client.events[0],
            "Preempted: Preempted by pod p on node node1; violates PodDisruptionBudget default/db");
}

// upstream TestDryRunPreemption: with DisruptionsAllowed 0 every app=foo pod violates; the
// candidate lists are capped at numCandidates (2) each, and the dry run goes on past that
// number until a non-violating candidate is found (offset 4: node5 (yes, pdb), node1 (yes,
// pdb), node2 (dropped: the violating list is full), node3 (yes)).
TEST(DefaultPreemptionPDBTest, PreemptionLooksPastNumCandidates) {
  SCOPED_TRACE("preemption looks past numCandidates until a non-PDB violating node is found");
  Harness h({"FakeFilter", "NodeResourcesFit"});
  h.pdbs = {Pdb("pdb", "foo", 0)};
  std::vector<api::Node> nodes;
  for (const char* n : {"node1", "node2", "node3", "node4", "node5"}) nodes.push_back(MakeNode(n));
  h.SetCluster(nodes,
               {App("p1", "foo", kMid, kLarge, "node1"), App("p2", "foo", kMid, kLarge, "node2"),
                App("p3", "", kMid, kLarge, "node3"), App("p4", "", kMid, kLarge, "node4"),
                App("p5", "foo", kMid, kLarge, "node5")});
  auto pl = h.Plugin(DefaultPreemptionArgs{40, 2});
  PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(Pod("p", kHigh, kLarge).Obj()));
  auto state = h.PreFilter(*pod);
  const auto& all = h.lister.List();
  std::vector<std::pair<std::string, Status>> statuses;
  std::vector<std::string> errors;
  auto got = pl->DryRunPreemption(*state, *pod, all, 4,
                                  pl->CalculateNumCandidates(static_cast<int32_t>(all.size())),
                                  &statuses, &errors);
  EXPECT_EQ(ByNode(got), (std::map<std::string, std::vector<std::string>>{
                             {"node1", {"p1"}}, {"node3", {"p3"}}, {"node5", {"p5"}}}));
  std::map<std::string, int64_t> violations;
  for (const auto& c : got) violations[c.node] = c.num_pdb_violations;
  EXPECT_EQ(violations, (std::map<std::string, int64_t>{{"node1", 1}, {"node3", 0}, {"node5", 1}}));
  // Non-violating candidates first.
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0].node, "node3");
  EXPECT_EQ(h.fake_filter.calls, 8);
  EXPECT_TRUE(errors.empty());
}

// upstream TestPostFilter (after kubernetes PR #128307): node1's victims are p1 (high, not
// violating) and p2 (low, violating); node2's is p3 (mid, violating). Both violate one
// budget, so the highest victim priority decides: high on node1 against mid on node2. That
// needs node1's victims ordered by importance after the reprieve (p1 first), not
// violating-first (p2 first would make node1's highest priority "low").
TEST(DefaultPreemptionPDBTest, PodCanBeMadeSchedulableOnMinHighestPriorityNode) {
  SCOPED_TRACE("pod can be made schedulable on minHighestPriority node");
  auto labelled = [](const std::string& name, int32_t prio, const std::string& node,
                     const std::string& v) {
    auto p = Pod(name, prio).NodeName(node).Label("is-violating-pdb", v).Obj();
    p.metadata.namespace_ = "default";
    return p;
  };
  auto budget = [](const std::string& name, const std::string& v, int32_t allowed) {
    api::PodDisruptionBudget pdb;
    pdb.metadata.name = name;
    pdb.metadata.namespace_ = "default";
    pdb.spec.selector = api::LabelSelector{{{"is-violating-pdb", v}}, {}};
    pdb.status.disruptions_allowed = allowed;
    return std::make_shared<const api::PodDisruptionBudget>(std::move(pdb));
  };
  Harness h;
  h.pdbs = {budget("violating-pdb", "violating", 0),
            budget("non-violating-pdb", "non-violating", INT32_MAX)};
  h.SetCluster(
      {MakeNode("node1", kOnePod), MakeNode("node2", kOnePod)},
      {labelled("p1", kHigh, "node1", "non-violating"), labelled("p2", kLow, "node1", "violating"),
       labelled("p3", kMid, "node2", "violating")});
  auto pl = h.Plugin();
  PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(Pod("p", kVeryHigh).Obj()));
  auto state = h.PreFilter(*pod);
  std::vector<std::pair<std::string, Status>> statuses;
  std::vector<std::string> errors;
  auto cands = pl->DryRunPreemption(*state, *pod, h.lister.List(), 0, 2, &statuses, &errors);
  ASSERT_EQ(cands.size(), 2u);
  for (const auto& c : cands) {
    EXPECT_EQ(c.num_pdb_violations, 1) << c.node;
    if (c.node == "node1") {
      EXPECT_EQ(Names(c.victims, /*sorted=*/false), (std::vector<std::string>{"p1", "p2"}));
    }
  }
  framework::PostFilterResult result;
  Status s = pl->PostFilter(
      *state, *pod, h.Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
      &result);
  ASSERT_TRUE(s.IsSuccess()) << s.ToString();
  EXPECT_EQ(result.nominated_node_name, "node2");
}

// metav1.LabelSelectorAsSelector fails on an invalid selector (here NotIn with a value that
// is no label value, which labels.NewRequirement rejects) and filterPodsWithPDBViolation
// skips the budget. (Malformed operators and value counts already never match.)
TEST(DefaultPreemptionPDBTest, InvalidSelectorMatchesNothing) {
  const api::Pod a = App("a", "db", 0, {}, "n");
  api::PodDisruptionBudget pdb = *Pdb("bad", "db", 0);
  pdb.spec.selector = api::LabelSelector{{}, {{"app", "NotIn", {"not a label value!"}}}};
  auto v = PodDisruptionBudgetViolations(
      {{&a}}, {std::make_shared<const api::PodDisruptionBudget>(std::move(pdb))});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].empty());
}

// Namespaces: only the pod's own namespace's budgets count; and a pod listed in
// status.disruptedPods of one budget still decrements the others.
TEST(DefaultPreemptionPDBTest, DisruptedPodsIsPerBudget) {
  const api::Pod a = App("a", "db", 0, {}, "n");
  auto other_ns = std::make_shared<api::PodDisruptionBudget>(*Pdb("db", "db", 0));
  other_ns->metadata.namespace_ = "prod";
  auto v = PodDisruptionBudgetViolations(
      {{&a}}, {Pdb("seen", "db", 0, {"a"}), Pdb("db", "db", 0), other_ns});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], std::vector<std::string>{"default/db"});
}

TEST(DefaultPreemptionPDBTest, PodDisruptionBudgetViolationsCountsAcrossUnits) {
  const api::Pod a = App("a", "db", 0, {}, "n"), b = App("b", "db", 0, {}, "n"),
                 c = App("c", "db", 0, {}, "n");
  // disruptionsAllowed 1: the first pod uses it up; the second and third violate.
  auto v = PodDisruptionBudgetViolations({{&a}, {&b, &c}}, {Pdb("db", "db", 1), Pdb("x", "x", 0)});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v[0].empty());
  EXPECT_EQ(v[1], std::vector<std::string>{"default/db"});
}

// The whole PostFilter (the dry run's parallel blocks, pickOneNodeForPreemption, the
// eviction) chooses the same node and victims with parallelism 1 and 16 for a seed: random
// clusters of 120 nodes with pods at four priorities, random start times and a
// PodDisruptionBudget over some of them, pods nominated to random nodes (some of a
// priority at least the preemptor's, so they count in the dry run), a seeded offset and
// random candidate limits; every other round with a PreFilter plugin that has extensions.
TEST(DefaultPreemptionPDBTest, PostFilterChoosesTheSameVictimsWithParallelism1And16) {
  std::mt19937_64 rng(24);
  const Res sizes[] = {kSmall, kMedium, kLarge};
  const int32_t prios[] = {kNeg, kLow, kMid, kVeryHigh};
  const char* apps[] = {"db", "web", ""};
  int preempted = 0;
  std::set<std::string> chosen;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<api::Node> nodes;
    std::vector<api::Pod> pods;
    std::map<std::string, Code> statuses;
    for (int i = 0; i < 120; ++i) {
      const std::string node = "node" + std::to_string(i);
      nodes.push_back(MakeNode(node));
      statuses[node] = Code::kUnschedulable;
      int used = 0;
      for (int k = 0; k < 4; ++k) {
        const size_t sz = rng() % 3;
        if (used + 100 * static_cast<int>(sz + 1) > 500) break;
        used += 100 * static_cast<int>(sz + 1);
        pods.push_back(WithStart(App(node + "-p" + std::to_string(k), apps[rng() % 3],
                                     prios[rng() % 4], sizes[sz], node),
                                 static_cast<api::Timestamp>(rng() % 50)));
      }
    }
    std::map<std::string, std::vector<PodInfoPtr>> nominated;
    for (int k = 0; k < 20; ++k) {
      const int32_t prio = k % 3 == 0 ? kLow : (k % 3 == 1 ? kHigh : kVeryHigh);
      nominated["node" + std::to_string(rng() % 120)].push_back(
          Pod("nom" + std::to_string(k), prio, sizes[rng() % 3]).Info());
    }
    const api::Pod preemptor = Pod("p", kHigh, rng() % 2 ? kLarge : kVeryLarge).Obj();
    const uint64_t seed = rng();
    const DefaultPreemptionArgs args{static_cast<int32_t>(rng() % 40),
                                     static_cast<int32_t>(1 + rng() % 20)};
    const std::vector<api::PodDisruptionBudgetPtr> pdbs = {
        Pdb("db", "db", static_cast<int32_t>(rng() % 3))};
    std::vector<std::string> outcome;  // per parallelism: code, message, node, victims, events
    for (int parallelism : {1, 16}) {
      std::vector<std::string> plugins = {"NodeResourcesFit"};
      if (round % 2 == 1) plugins.push_back("test-plugin");
      Harness h(plugins, parallelism);
      h.pdbs = pdbs;
      h.SetCluster(nodes, pods);
      h.nominated = nominated;
      h.random_value = seed;
      auto pl = h.Plugin(args);
      PodInfoPtr pod = PodInfo::Make(std::make_shared<api::Pod>(preemptor));
      auto state = h.PreFilter(*pod);
      framework::PostFilterResult result;
      Status s = pl->PostFilter(*state, *pod, h.Statuses(statuses), &result);
      std::string got = s.ToString() + " | " + result.nominated_node_name + " |";
      for (const auto& d : h.client.deleted) got += " " + d;
      got += " |";
      for (const auto& e : h.client.events) got += " " + e;
      outcome.push_back(got);
      if (parallelism == 1 && s.IsSuccess()) {
        ++preempted;
        chosen.insert(result.nominated_node_name);
      }
    }
    EXPECT_EQ(outcome[0], outcome[1]);
  }
  // The rounds exercise the choice: most preempt, on many different nodes.
  EXPECT_GE(preempted, 30);
  EXPECT_GE(chosen.size(), 10u);
}

// The dry-run memo against a fresh dry run: random clusters, a sequence of preemption
// attempts with a cluster change between each two (a pod removed or added on a node, a
// node's nominations replaced, the budgets replaced, an object epoch bump, a preemptor of
// another size or priority), on a plugin that keeps its memo across the attempts and on a
// new plugin without one. Every candidate (node, victims in order, PDB violations), every
// node status and the chosen candidate must be the same; the memo must have been used.
TEST(DefaultPreemptionMemoTest, MemoGivesTheOutcomeOfAFreshDryRun) {
  std::mt19937_64 rng(2026);
  const Res sizes[] = {kSmall, kMedium, kLarge};
  const int32_t prios[] = {kNeg, kLow, kMid, kVeryHigh};
  const char* apps[] = {"db", "web", ""};
  constexpr int kNodes = 60;
  for (int parallelism : {1, 16}) {
    SCOPED_TRACE("parallelism " + std::to_string(parallelism));
    Harness memo_h({"NodeResourcesFit"}, parallelism, /*track_epoch=*/true);
    memo_h.clock.now = 100;
    auto memo_pl = memo_h.Plugin();
    struct NodeModel {
      api::Node node;
      std::vector<api::Pod> pods;
      int64_t generation = 0;
    };
    int64_t next_generation = 1;
    int seq = 0;
    auto random_pod = [&](const std::string& node) {
      api::Pod p = App(node + "-q" + std::to_string(seq++), apps[rng() % 3], prios[rng() % 4],
                       sizes[rng() % 3], node);
      // Some pods have not started (their start time is "now" for the victim order).
      return rng() % 4 == 0 ? p : WithStart(std::move(p), static_cast<api::Timestamp>(rng() % 50));
    };
    std::vector<NodeModel> model(kNodes);
    for (int i = 0; i < kNodes; ++i) {
      model[i].node = MakeNode("node" + std::to_string(i));
      for (int k = 0, n = static_cast<int>(rng() % 4); k < n; ++k) {
        model[i].pods.push_back(random_pod(model[i].node.metadata.name));
      }
      model[i].generation = next_generation++;
    }
    std::map<std::string, std::shared_ptr<const std::vector<PodInfoPtr>>> views;
    std::vector<api::PodDisruptionBudgetPtr> pdbs = {Pdb("db", "db", 1)};
    auto load = [&](Harness& h, bool keep_unchanged) {
      std::vector<NodeInfo> infos;
      for (const auto& m : model) {
        NodeInfo ni = phalanx::testing::MakeNodeInfo(m.node, m.pods);
        ni.set_generation(m.generation);
        infos.push_back(std::move(ni));
      }
      if (keep_unchanged) {
        h.lister.Update(std::move(infos));
      } else {
        h.lister.Set(std::move(infos));
      }
      h.pdbs = pdbs;
      h.nominated_views = views;
      h.nominated.clear();
      for (const auto& [node, v] : views) h.nominated[node] = *v;
    };
    // A preemption's outcome: candidates, node statuses, errors, and the chosen node.
    auto outcome = [&](Harness& h, DefaultPreemption& pl, const PodInfo& pod, int32_t offset,
                       int32_t num) {
      std::vector<const NodeInfo*> potential(h.lister.List().begin(), h.lister.List().end());
      auto state = h.PreFilter(pod);
      std::vector<std::pair<std::string, Status>> statuses;
      std::vector<std::string> errors;
      auto cs = pl.DryRunPreemption(*state, pod, potential, offset, num, &statuses, &errors);
      std::string out;
      for (const auto& c : cs) {
        out += c.node + ":" + std::to_string(c.num_pdb_violations) + "[";
        for (const auto& v : c.victims) out += v->Pod().metadata.name + " ";
        for (const auto& [k, names] : c.pdb_violations) out += k + "=" + names + " ";
        out += "] ";
      }
      out += "| ";
      for (const auto& [node, st] : statuses) out += node + "=" + st.ToString() + " ";
      for (const auto& e : errors) out += "error " + e;
      std::map<std::string, Code> all;
      for (const auto* ni : h.lister.List()) all[ni->name()] = Code::kUnschedulable;
      Candidate best;
      Status s = pl.FindCandidate(*state, pod, h.Statuses(all), nullptr, &best);
      out += "| " + s.ToString() + " " + best.node + " " + std::to_string(best.victims.size());
      return out;
    };
    int candidates = 0;
    for (int step = 0; step < 80; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const Res& req = step % 9 == 8 ? kMedium : kLarge;
      const int32_t prio = step % 13 == 12 ? kMid : kHigh;
      PodInfoPtr preemptor = Pod("p" + std::to_string(step), prio, req).Info();
      const auto offset = static_cast<int32_t>(rng() % kNodes);
      const auto num = static_cast<int32_t>(1 + rng() % 20);
      load(memo_h, true);
      Harness fresh_h({"NodeResourcesFit"}, parallelism);
      fresh_h.clock.now = 100;
      load(fresh_h, false);
      auto fresh_pl = fresh_h.Plugin();
      const std::string got = outcome(memo_h, *memo_pl, *preemptor, offset, num);
      const std::string want = outcome(fresh_h, *fresh_pl, *preemptor, offset, num);
      ASSERT_EQ(got, want);
      if (want.find(":0[") != std::string::npos || want.find(":1[") != std::string::npos) {
        ++candidates;
      }
      // One change before the next attempt.
      NodeModel& m = model[rng() % kNodes];
      const std::string& name = m.node.metadata.name;
      switch (rng() % 6) {
        case 0:  // a pod leaves the node
          if (!m.pods.empty())
            m.pods.erase(m.pods.begin() + static_cast<long>(rng() % m.pods.size()));
          m.generation = next_generation++;
          break;
        case 1:  // a pod arrives
          m.pods.push_back(random_pod(name));
          m.generation = next_generation++;
          break;
        case 2: {  // the node's nominations are replaced (a new list object)
          auto v = std::make_shared<std::vector<PodInfoPtr>>();
          if (rng() % 3 != 0) {
            v->push_back(
                Pod("nom" + std::to_string(seq++), rng() % 2 ? kHigh : kVeryHigh, sizes[rng() % 3])
                    .Info());
          }
          views[name] = std::move(v);
          break;
        }
        case 3:  // the budgets change
          pdbs = {Pdb("db", "db", static_cast<int32_t>(rng() % 3))};
          break;
        case 4:  // some other cluster object changed
          ++memo_h.epoch;
          break;
        default:  // nothing: the next attempt reuses every node's outcome
          break;
      }
    }
    const auto [hits, misses] = memo_pl->MemoHitsAndMisses();
    EXPECT_GT(hits, 500) << "misses " << misses;
    EXPECT_GT(misses, 0);
    EXPECT_GE(candidates, 40);
  }
}

}  // namespace
}  // namespace phalanx::plugins::defaultpreemption
