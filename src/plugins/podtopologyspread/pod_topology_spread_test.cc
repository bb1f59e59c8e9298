// Ported from upstream podtopologyspread/{filtering,scoring,plugin}_test.go
// (TestPreFilterState, TestSingleConstraint, TestMultipleConstraints,
// TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore) plus minDomains, AddPod/RemovePod,
// args validation and queueing hints.
#include "plugins/podtopologyspread/pod_topology_spread.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>
#include <optional>

#include "plugins/parallel_equivalence_test.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

// Test tables leave trailing optional fields out.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::podtopologyspread {
namespace {

using framework::Code;
using phalanx::testing::MakeLabelSelector;
using phalanx::testing::PodBuilder;
using phalanx::testing::SelectorExists;

using Labels = std::map<std::string, std::string>;
using Counts = std::map<std::string, int64_t>;
using Path = PreFilterStateView::Path;

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

const api::LabelSelector kFoo = MakeLabelSelector({}, {SelectorExists("foo")});
const api::LabelSelector kBar = MakeLabelSelector({}, {SelectorExists("bar")});

api::Node Node(const std::string& name, Labels labels, std::vector<api::Taint> taints = {}) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  n.spec.taints = std::move(taints);
  return n;
}
// Nodes labelled zone=<zone> and node=<name> (upstream st.MakeNode().Label("zone", ...)).
api::Node ZN(const std::string& name, const std::string& zone) {
  return Node(name, {{"zone", zone}, {"node", name}});
}
// Nodes labelled with the well-known hostname label only.
api::Node HN(const std::string& name) { return Node(name, {{kHostname, name}}); }
api::Node ZH(const std::string& name, const std::string& zone) {
  return Node(name, {{"zone", zone}, {kHostname, name}});
}

const std::vector<api::Taint> kTaints = {{"node.kubernetes.io/unschedulable", "", "NoSchedule"}};

PodBuilder P(const std::string& name, const Labels& labels = {}) {
  PodBuilder b(name);
  for (const auto& [k, v] : labels) b.Label(k, v);
  return b;
}
// An existing pod with label foo="" on `node`.
api::Pod Foo(const std::string& name, const std::string& node) {
  return P(name, {{"foo", ""}}).NodeName(node).Obj();
}

std::vector<framework::NodeInfo> NodeInfos(const std::vector<api::Node>& nodes,
                                           const std::vector<api::Pod>& pods) {
  std::vector<framework::NodeInfo> out;
  for (const auto& n : nodes) {
    framework::NodeInfo ni(std::make_shared<api::Node>(n));
    for (const auto& p : pods) {
      if (p.spec.node_name == n.metadata.name) {
        ni.AddPod(framework::PodInfo::Make(std::make_shared<api::Pod>(p)));
      }
    }
    out.push_back(std::move(ni));
  }
  return out;
}

framework::PodInfoPtr Info(const api::Pod& p) {
  return framework::PodInfo::Make(std::make_shared<api::Pod>(p));
}

PodTopologySpreadArgs ListArgs(std::vector<api::TopologySpreadConstraint> defaults = {}) {
  PodTopologySpreadArgs a;
  a.defaulting_type = DefaultingType::kList;
  a.default_constraints = std::move(defaults);
  return a;
}

struct Env {
  fake::FakeHandle handle;
  std::unique_ptr<PodTopologySpread> pl;
};

std::unique_ptr<Env> MakeEnv(const std::vector<api::Node>& nodes, const std::vector<api::Pod>& pods,
                             PodTopologySpreadArgs args = ListArgs()) {
  auto env = std::make_unique<Env>();
  env->handle.SetNodes(NodeInfos(nodes, pods));
  env->pl = std::make_unique<PodTopologySpread>(std::move(args), env->handle);
  return env;
}

api::TopologySpreadConstraint Default(int32_t max_skew, std::string key, std::string when) {
  api::TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = std::move(key);
  c.when_unsatisfiable = std::move(when);
  return c;
}

// Upstream compares critical paths with equal match numbers sorted by value.
std::array<Path, 2> Sorted(std::array<Path, 2> p) {
  if (p[0].num == p[1].num && p[0].value > p[1].value) std::swap(p[0].value, p[1].value);
  return p;
}

// ---------------------------------------------------------------------------------------
// PreFilter state

struct PreFilterCase {
  std::string name;
  api::Pod pod;
  std::vector<api::Node> nodes;
  std::vector<api::Pod> pods;
  std::vector<Counts> want_counts;
  std::vector<std::array<Path, 2>> want_paths;
  Code want_code = Code::kSuccess;
  PodTopologySpreadArgs args = ListArgs();
};

TEST(PodTopologySpreadPreFilterTest, State) {
  const std::vector<api::Node> four = {ZN("node-a", "zone1"), ZN("node-b", "zone1"),
                                       ZN("node-x", "zone2"), ZN("node-y", "zone2")};
  const std::vector<api::Pod> pods5 = {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"),
                                       Foo("p-b1", "node-b"), Foo("p-y1", "node-y"),
                                       Foo("p-y2", "node-y")};
  const std::vector<api::Pod> pods7 = {
      Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b"), Foo("p-y1", "node-y"),
      Foo("p-y2", "node-y"), Foo("p-y3", "node-y"), Foo("p-y4", "node-y")};
  const std::vector<api::Node> abc = {Node("node-a", {{"node", "node-a"}, {"foo", ""}}),
                                      Node("node-b", {{"node", "node-b"}, {"foo", ""}}),
                                      Node("node-c", {{"node", "node-c"}, {"bar", ""}})};
  const std::vector<api::Node> abc_taint = {
      Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
      Node("node-c", {{"node", "node-c"}, {"bar", ""}}, kTaints)};
  const std::vector<api::Pod> bar_pods = {P("p-a", {{"bar", ""}}).NodeName("node-a").Obj(),
                                          P("p-b", {{"bar", ""}}).NodeName("node-b").Obj(),
                                          P("p-c", {{"bar", ""}}).NodeName("node-b").Obj(),
                                          P("p-d").NodeName("node-c").Obj()};
  const auto initial = std::array<Path, 2>{Path{"", kMaxInt32}, Path{"", kMaxInt32}};
  api::Pod owned =
      P("p", {{"foo", "bar"}, {"baz", "kar"}}).OwnerReference("ReplicaSet", "rs1").Obj();

  std::vector<PreFilterCase> cases = {
      {"clean cluster with one spreadConstraint",
       P("p", {{"foo", ""}})
           .SpreadConstraint(5, "zone", "DoNotSchedule", MakeLabelSelector({{"foo", "bar"}}))
           .Obj(),
       four,
       {},
       {{{"zone1", 0}, {"zone2", 0}}},
       {{Path{"zone1", 0}, Path{"zone2", 0}}}},
      {"normal case with one spreadConstraint",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "zone", "DoNotSchedule", kFoo).Obj(),
       four,
       pods5,
       {{{"zone1", 3}, {"zone2", 2}}},
       {{Path{"zone2", 2}, Path{"zone1", 3}}}},
      {"normal case with null label selector",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "zone", "DoNotSchedule", std::nullopt).Obj(),
       four,
       pods5,
       {{{"zone1", 0}, {"zone2", 0}}},
       {{Path{"zone1", 0}, Path{"zone2", 0}}}},
      {"normal case with one spreadConstraint, on a 3-zone cluster",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "zone", "DoNotSchedule", kFoo).Obj(),
       {ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-x", "zone2"), ZN("node-y", "zone2"),
        ZN("node-o", "zone3"), ZN("node-p", "zone3")},
       pods5,
       {{{"zone1", 3}, {"zone2", 2}, {"zone3", 0}}},
       {{Path{"zone3", 0}, Path{"zone2", 2}}}},
      {"namespace mismatch doesn't count",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "zone", "DoNotSchedule", kFoo).Obj(),
       four,
       {Foo("p-a1", "node-a"), P("p-a2", {{"foo", ""}}).Namespace("ns1").NodeName("node-a").Obj(),
        Foo("p-b1", "node-b"), P("p-y1", {{"foo", ""}}).Namespace("ns2").NodeName("node-y").Obj(),
        Foo("p-y2", "node-y")},
       {{{"zone1", 2}, {"zone2", 1}}},
       {{Path{"zone2", 1}, Path{"zone1", 2}}}},
      {"normal case with two spreadConstraints",
       P("p", {{"foo", ""}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
           .Obj(),
       four,
       pods7,
       {{{"zone1", 3}, {"zone2", 4}}, {{"node-a", 2}, {"node-b", 1}, {"node-x", 0}, {"node-y", 4}}},
       {{Path{"zone1", 3}, Path{"zone2", 4}}, {Path{"node-x", 0}, Path{"node-b", 1}}}},
      {"soft spreadConstraints should be bypassed",
       P("p", {{"foo", ""}})
           .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
           .SpreadConstraint(1, "node", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
           .Obj(),
       {ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-y", "zone2")},
       pods7,
       {{{"zone1", 3}, {"zone2", 4}}, {{"node-a", 2}, {"node-b", 1}, {"node-y", 4}}},
       {{Path{"zone1", 3}, Path{"zone2", 4}}, {Path{"node-b", 1}, Path{"node-a", 2}}}},
      {"different labelSelectors - simple version",
       P("p", {{"foo", ""}, {"bar", ""}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
           .SpreadConstraint(1, "node", "DoNotSchedule", kBar)
           .Obj(),
       {ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-y", "zone2")},
       {Foo("p-a", "node-a"), P("p-b", {{"bar", ""}}).NodeName("node-b").Obj()},
       {{{"zone1", 1}, {"zone2", 0}}, {{"node-a", 0}, {"node-b", 1}, {"node-y", 0}}},
       {{Path{"zone2", 0}, Path{"zone1", 1}}, {Path{"node-a", 0}, Path{"node-y", 0}}}},
      {"different labelSelectors - complex pods",
       P("p", {{"foo", ""}, {"bar", ""}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
           .SpreadConstraint(1, "node", "DoNotSchedule", kBar)
           .Obj(),
       {ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-y", "zone2")},
       {Foo("p-a1", "node-a"), P("p-a2", {{"foo", ""}, {"bar", ""}}).NodeName("node-a").Obj(),
        Foo("p-b1", "node-b"), Foo("p-y1", "node-y"),
        P("p-y2", {{"foo", ""}, {"bar", ""}}).NodeName("node-y").Obj(), Foo("p-y3", "node-y"),
        P("p-y4", {{"foo", ""}, {"bar", ""}}).NodeName("node-y").Obj()},
       {{{"zone1", 3}, {"zone2", 4}}, {{"node-a", 1}, {"node-b", 0}, {"node-y", 2}}},
       {{Path{"zone1", 3}, Path{"zone2", 4}}, {Path{"node-b", 0}, Path{"node-a", 1}}}},
      {"two spreadConstraints, and with podAffinity",
       P("p", {{"foo", ""}})
           .NodeAffinityNotIn("node", {"node-x"})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
           .Obj(),
       four,
       pods7,
       {{{"zone1", 3}, {"zone2", 4}}, {{"node-a", 2}, {"node-b", 1}, {"node-y", 4}}},
       {{Path{"zone1", 3}, Path{"zone2", 4}}, {Path{"node-b", 1}, Path{"node-a", 2}}}},
      {"default constraints and an owner (selector from the pod's labels)",
       owned,
       {},
       {},
       {{}, {}},
       {initial, initial},
       Code::kSuccess,
       ListArgs({Default(3, "node", "DoNotSchedule"), Default(2, "node", "ScheduleAnyway"),
                 Default(5, "rack", "DoNotSchedule")})},
      {"default constraints and no owner",
       P("p", {{"foo", "bar"}}).Obj(),
       {},
       {},
       {},
       {},
       Code::kSkip,
       ListArgs({Default(3, "node", "DoNotSchedule")})},
      {"default constraints and an owner, but pod has constraints",
       P("p", {{"foo", "bar"}, {"baz", "tar"}})
           .OwnerReference("ReplicaSet", "rs1")
           .SpreadConstraint(1, "zone", "DoNotSchedule", MakeLabelSelector({{"baz", "tar"}}))
           .SpreadConstraint(2, "planet", "ScheduleAnyway", MakeLabelSelector({{"fot", "rok"}}))
           .Obj(),
       {},
       {},
       {{}},
       {initial},
       Code::kSuccess,
       ListArgs({Default(2, "node", "DoNotSchedule")})},
      {"default soft constraints and an owner",
       owned,
       {},
       {},
       {},
       {},
       Code::kSkip,
       ListArgs({Default(2, "node", "ScheduleAnyway")})},
      {"NodeAffinityPolicy honored with labelSelectors",
       P("p", {{"foo", ""}})
           .NodeSelector({{"foo", ""}})
           .SpreadConstraint(1, "node", "DoNotSchedule", kBar)
           .Obj(),
       abc,
       bar_pods,
       {{{"node-a", 1}, {"node-b", 2}}},
       {{Path{"node-a", 1}, Path{"node-b", 2}}}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       P("p", {{"foo", ""}})
           .NodeSelector({{"foo", ""}})
           .SpreadConstraint(1, "node", "DoNotSchedule", kBar, std::nullopt, "Ignore")
           .Obj(),
       abc,
       bar_pods,
       {{{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}},
       {{Path{"node-c", 0}, Path{"node-a", 1}}}},
      {"NodeAffinityPolicy honored with nodeAffinity",
       P("p", {{"foo", ""}})
           .NodeAffinityIn("foo", {""})
           .SpreadConstraint(1, "node", "DoNotSchedule", kBar)
           .Obj(),
       abc,
       bar_pods,
       {{{"node-a", 1}, {"node-b", 2}}},
       {{Path{"node-a", 1}, Path{"node-b", 2}}}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       P("p", {{"foo", ""}})
           .NodeAffinityIn("foo", {""})
           .SpreadConstraint(1, "node", "DoNotSchedule", kBar, std::nullopt, "Ignore")
           .Obj(),
       abc,
       bar_pods,
       {{{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}},
       {{Path{"node-c", 0}, Path{"node-a", 1}}}},
      {"NodeTaintsPolicy ignored",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "node", "DoNotSchedule", kBar).Obj(),
       abc_taint,
       bar_pods,
       {{{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}},
       {{Path{"node-c", 0}, Path{"node-a", 1}}}},
      {"NodeTaintsPolicy honored",
       P("p", {{"foo", ""}})
           .SpreadConstraint(1, "node", "DoNotSchedule", kBar, std::nullopt, "", "Honor")
           .Obj(),
       abc_taint,
       bar_pods,
       {{{"node-a", 1}, {"node-b", 2}}},
       {{Path{"node-a", 1}, Path{"node-b", 2}}}},
      {"NodeTaintsPolicy honored with tolerated taints",
       P("p", {{"foo", ""}})
           .Toleration("node.kubernetes.io/unschedulable", "Exists", "", "")
           .SpreadConstraint(1, "node", "DoNotSchedule", kBar, std::nullopt, "", "Honor")
           .Obj(),
       abc_taint,
       bar_pods,
       {{{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}},
       {{Path{"node-c", 0}, Path{"node-a", 1}}}},
      {"two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
       P("p", {{"foo", ""}})
           .NodeSelector({{"foo", ""}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo, std::nullopt, "Ignore")
           .Obj(),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}})},
       {Foo("p-b1", "node-b"), Foo("p-b2", "node-b"), Foo("p-x1", "node-x")},
       {{{"zone1", 0}, {"zone2", 1}}, {{"node-a", 0}, {"node-b", 2}, {"node-x", 1}}},
       {{Path{"zone1", 0}, Path{"zone2", 1}}, {Path{"node-a", 0}, Path{"node-x", 1}}}},
      {"two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
       P("p", {{"foo", ""}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo, std::nullopt, "", "Honor")
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
           .Obj(),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}}, kTaints),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}})},
       {Foo("p-b1", "node-b"), Foo("p-b2", "node-b"), Foo("p-x1", "node-x")},
       {{{"zone1", 0}, {"zone2", 1}}, {{"node-a", 0}, {"node-b", 2}, {"node-x", 1}}},
       {{Path{"zone1", 0}, Path{"zone2", 1}}, {Path{"node-a", 0}, Path{"node-x", 1}}}},
      {"two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
       P("p", {{"foo", ""}})
           .NodeSelector({{"foo", ""}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
           .Obj(),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}, kTaints),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}})},
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-x1", "node-x"), Foo("p-y1", "node-y")},
       {{{"zone1", 0}, {"zone2", 1}}, {{"node-b", 0}, {"node-x", 1}}},
       {{Path{"zone1", 0}, Path{"zone2", 1}}, {Path{"node-b", 0}, Path{"node-x", 1}}}},
      {"two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
       P("p", {{"foo", ""}})
           .NodeSelector({{"foo", ""}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo, std::nullopt, "Ignore")
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo, std::nullopt, "", "Honor")
           .Obj(),
       {Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        Node("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}, kTaints),
        Node("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        Node("node-y", {{"zone", "zone2"}, {"node", "node-y"}, {"foo", ""}})},
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-x1", "node-x"), Foo("p-x2", "node-x"),
        Foo("p-y1", "node-y")},
       {{{"zone1", 2}, {"zone2", 3}}, {{"node-x", 2}, {"node-y", 1}}},
       {{Path{"zone1", 2}, Path{"zone2", 3}}, {Path{"node-y", 1}, Path{"node-x", 2}}}},
      {"matchLabelKeys ANDed with LabelSelector",
       P("p", {{"foo", ""}, {"bar", "b1"}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo, std::nullopt, "", "", {"bar"})
           .Obj(),
       four,
       {P("p-a1", {{"foo", ""}, {"bar", "b1"}}).NodeName("node-a").Obj(),
        P("p-a2", {{"foo", ""}, {"bar", "b2"}}).NodeName("node-a").Obj(),
        P("p-y1", {{"foo", ""}, {"bar", "b1"}}).NodeName("node-y").Obj(),
        P("p-y2", {{"bar", "b1"}}).NodeName("node-y").Obj()},
       {{{"zone1", 1}, {"zone2", 1}}},
       {{Path{"zone1", 1}, Path{"zone2", 1}}}},
      {"matchLabelKeys with an empty LabelSelector",
       P("p", {{"foo", ""}, {"bar", "b1"}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", api::LabelSelector{}, std::nullopt, "", "",
                             {"bar"})
           .Obj(),
       four,
       {P("p-a1", {{"bar", "b1"}}).NodeName("node-a").Obj(),
        P("p-a2", {{"bar", "b2"}}).NodeName("node-a").Obj(),
        P("p-b1", {{"bar", "b1"}}).NodeName("node-b").Obj()},
       {{{"zone1", 2}, {"zone2", 0}}},
       {{Path{"zone2", 0}, Path{"zone1", 2}}}},
      {"an empty LabelSelector counts no existing pod",
       P("p", {{"foo", ""}})
           .SpreadConstraint(1, "zone", "DoNotSchedule", api::LabelSelector{})
           .Obj(),
       four,
       pods5,
       {{{"zone1", 0}, {"zone2", 0}}},
       {{Path{"zone1", 0}, Path{"zone2", 0}}}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv(tc.nodes, tc.pods, tc.args);
    framework::CycleState state;
    framework::Status s = env->pl->PreFilter(state, *Info(tc.pod), nullptr);
    ASSERT_EQ(s.code(), tc.want_code) << s.ToString();
    if (!s.IsSuccess()) continue;
    auto got = GetPreFilterState(state);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->tp_value_to_match_num, tc.want_counts);
    ASSERT_EQ(got->critical_paths.size(), tc.want_paths.size());
    for (size_t i = 0; i < tc.want_paths.size(); ++i) {
      EXPECT_EQ(Sorted(got->critical_paths[i]), Sorted(tc.want_paths[i])) << "constraint " << i;
    }
  }
}

TEST(PodTopologySpreadPreFilterTest, InvalidSelectorIsError) {
  auto env = MakeEnv({ZN("node-a", "zone1")}, {});
  framework::CycleState state;
  api::LabelSelector bad;
  bad.match_expressions.push_back({"foo", "Gt", {"1"}});
  framework::Status s = env->pl->PreFilter(
      state, *Info(P("p").SpreadConstraint(1, "zone", "DoNotSchedule", bad).Obj()), nullptr);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message().rfind("get constraints from pod: obtaining pod's hard topology spread "
                              "constraints: matchExpressions[0].operator: Unsupported value: "
                              "\"Gt\"",
                              0),
            0u)
      << s.Message();
}

// ---------------------------------------------------------------------------------------
// Filter

struct FilterCase {
  std::string name;
  api::Pod pod;
  std::vector<api::Node> nodes;
  std::vector<api::Pod> pods;
  std::map<std::string, Code> want;
  PodTopologySpreadArgs args = ListArgs();
};

void RunFilterCases(const std::vector<FilterCase>& cases) {
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv(tc.nodes, tc.pods, tc.args);
    framework::CycleState state;
    auto pi = Info(tc.pod);
    framework::Status pre = env->pl->PreFilter(state, *pi, nullptr);
    ASSERT_TRUE(pre.IsSuccess()) << pre.ToString();
    for (const auto& n : tc.nodes) {
      const std::string& name = n.metadata.name;
      framework::Status s =
          env->pl->Filter(state, *pi, *env->handle.SnapshotSharedLister().Get(name));
      const Code want = tc.want.at(name);
      EXPECT_EQ(s.code(), want) << name << ": " << s.ToString();
      if (want == Code::kUnschedulable) {
        EXPECT_EQ(s.reasons(),
                  std::vector<std::string>{std::string(kErrReasonConstraintsNotMatch)});
      } else if (want == Code::kUnschedulableAndUnresolvable) {
        EXPECT_EQ(s.reasons(), std::vector<std::string>{std::string(kErrReasonNodeLabelNotMatch)});
      }
    }
  }
}

constexpr Code kOk = Code::kSuccess;
constexpr Code kUn = Code::kUnschedulable;
constexpr Code kUnres = Code::kUnschedulableAndUnresolvable;

TEST(PodTopologySpreadFilterTest, SingleConstraint) {
  const std::vector<api::Node> four = {ZN("node-a", "zone1"), ZN("node-b", "zone1"),
                                       ZN("node-x", "zone2"), ZN("node-y", "zone2")};
  const std::vector<api::Pod> pods_2103 = {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"),
                                           Foo("p-b1", "node-b"), Foo("p-y1", "node-y"),
                                           Foo("p-y2", "node-y"), Foo("p-y3", "node-y")};
  auto zone_foo = [](int32_t skew = 1) {
    return P("p", {{"foo", ""}}).SpreadConstraint(skew, "zone", "DoNotSchedule", kFoo);
  };
  auto node_foo = [](int32_t skew = 1) {
    return P("p", {{"foo", ""}}).SpreadConstraint(skew, "node", "DoNotSchedule", kFoo);
  };
  std::vector<FilterCase> cases = {
      {"no existing pods",
       zone_foo().Obj(),
       four,
       {},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"no existing pods, incoming pod doesn't match itself",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "zone", "DoNotSchedule", kBar).Obj(),
       four,
       {},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"existing pods in a different namespace do not count",
       zone_foo().Obj(),
       four,
       {P("p-a1", {{"foo", ""}}).Namespace("ns1").NodeName("node-a").Obj(),
        P("p-b1", {{"foo", ""}}).Namespace("ns2").NodeName("node-a").Obj(), Foo("p-x1", "node-x"),
        Foo("p-y1", "node-y")},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kUn}, {"node-y", kUn}}},
      {"pods spread across zones as 3/3, all nodes fit",
       zone_foo().Obj(),
       four,
       pods_2103,
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
       zone_foo().Obj(),
       {ZN("node-a", "zone1"), Node("node-b", {{"zon", "zone1"}, {"node", "node-b"}}),
        ZN("node-x", "zone2"), ZN("node-y", "zone2")},
       {Foo("p-a1", "node-a"), Foo("p-b1", "node-b"), Foo("p-x1", "node-x"), Foo("p-y1", "node-y")},
       {{"node-a", kOk}, {"node-b", kUnres}, {"node-x", kUn}, {"node-y", kUn}}},
      {"pod cannot be scheduled as all nodes don't have label 'rack'",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "rack", "DoNotSchedule", kFoo).Obj(),
       {ZN("node-a", "zone1"), ZN("node-x", "zone2")},
       {},
       {{"node-a", kUnres}, {"node-x", kUnres}}},
      {"pods spread across nodes as 2/1/0/3, only node-x fits",
       node_foo().Obj(),
       four,
       pods_2103,
       {{"node-a", kUn}, {"node-b", kUn}, {"node-x", kOk}, {"node-y", kUn}}},
      {"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
       node_foo(2).Obj(),
       four,
       pods_2103,
       {{"node-a", kUn}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kUn}}},
      {"pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
       P("p", {{"bar", ""}}).SpreadConstraint(1, "node", "DoNotSchedule", kFoo).Obj(),
       four,
       pods_2103,
       {{"node-a", kUn}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kUn}}},
      {"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
       P("p", {{"foo", ""}})
           .NodeAffinityIn("node", {"node-a", "node-y"})
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
           .Obj(),
       four,
       pods_2103,
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kUn}}},
      {"terminating Pods should be excluded",
       node_foo().Obj(),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}})},
       {P("p-a", {{"foo", ""}}).NodeName("node-a").Terminating().Obj(), Foo("p-b", "node-b")},
       {{"node-a", kOk}, {"node-b", kUn}}},
      {"minDomains larger than the number of domains: the global minimum is 0",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "node", "DoNotSchedule", kFoo, 4).Obj(),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
        Node("node-c", {{"node", "node-c"}})},
       {Foo("p-a", "node-a"), Foo("p-b", "node-b"), Foo("p-c", "node-c")},
       {{"node-a", kUn}, {"node-b", kUn}, {"node-c", kUn}}},
      {"minDomains equal to the number of domains: the global minimum is used",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "node", "DoNotSchedule", kFoo, 3).Obj(),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
        Node("node-c", {{"node", "node-c"}})},
       {Foo("p-a", "node-a"), Foo("p-b", "node-b"), Foo("p-c", "node-c")},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-c", kOk}}},
      {"minDomains with maxSkew 2: 2/1 over two of three domains",
       P("p", {{"foo", ""}}).SpreadConstraint(2, "zone", "DoNotSchedule", kFoo, 3).Obj(),
       {ZN("node-a", "zone1"), ZN("node-b", "zone2")},
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b")},
       {{"node-a", kUn}, {"node-b", kOk}}},
      {"NodeTaintsPolicy Honor excludes the tainted domain from the global minimum",
       P("p", {{"foo", ""}})
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo, std::nullopt, "", "Honor")
           .Obj(),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}, kTaints)},
       {Foo("p-a1", "node-a")},
       {{"node-a", kOk}, {"node-b", kOk}}},
      {"NodeTaintsPolicy Ignore counts the tainted domain",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "node", "DoNotSchedule", kFoo).Obj(),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}, kTaints)},
       {Foo("p-a1", "node-a")},
       {{"node-a", kUn}, {"node-b", kOk}}},
      {"List default constraints apply to owned pods with the pod's labels as selector",
       P("p", {{"foo", ""}}).OwnerReference("StatefulSet", "ss").Obj(),
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}})},
       {Foo("p-a1", "node-a")},
       {{"node-a", kUn}, {"node-b", kOk}},
       ListArgs({Default(1, "node", "DoNotSchedule")})},
  };
  RunFilterCases(cases);
}

TEST(PodTopologySpreadFilterTest, MultipleConstraints) {
  const std::vector<api::Node> four = {ZN("node-a", "zone1"), ZN("node-b", "zone1"),
                                       ZN("node-x", "zone2"), ZN("node-y", "zone2")};
  auto two = [](const Labels& labels, const api::LabelSelector& zone_sel,
                const api::LabelSelector& node_sel) {
    return P("p", labels)
        .SpreadConstraint(1, "zone", "DoNotSchedule", zone_sel)
        .SpreadConstraint(1, "node", "DoNotSchedule", node_sel)
        .Obj();
  };
  const Labels foo = {{"foo", ""}};
  const Labels foobar = {{"foo", ""}, {"bar", ""}};
  auto bar_pod = [](const std::string& name, const std::string& node) {
    return P(name, {{"bar", ""}}).NodeName(node).Obj();
  };
  std::vector<FilterCase> cases = {
      {"two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
       two(foo, kFoo, kFoo),
       four,
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b"), Foo("p-y1", "node-y"),
        Foo("p-y2", "node-y"), Foo("p-y3", "node-y")},
       {{"node-a", kUn}, {"node-b", kUn}, {"node-x", kOk}, {"node-y", kUn}}},
      {"two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
       two(foo, kFoo, kFoo),
       four,
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b"), Foo("p-y1", "node-y"),
        Foo("p-y2", "node-y"), Foo("p-y3", "node-y"), Foo("p-y4", "node-y")},
       {{"node-a", kUn}, {"node-b", kUn}, {"node-x", kUn}, {"node-y", kUn}}},
      {"Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
       two(foobar, kFoo, kBar),
       four,
       {Foo("p-a1", "node-a"), bar_pod("p-y1", "node-y")},
       {{"node-a", kUn}, {"node-b", kUn}, {"node-x", kOk}, {"node-y", kUn}}},
      {"Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
       two(foobar, kFoo, kBar),
       four,
       {Foo("p-a1", "node-a"), bar_pod("p-x1", "node-x"), bar_pod("p-y1", "node-y")},
       {{"node-a", kUn}, {"node-b", kUn}, {"node-x", kUn}, {"node-y", kUn}}},
      {"Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
       two(foobar, kFoo, kBar),
       four,
       {Foo("p-a1", "node-a"), P("p-a2", foobar).NodeName("node-a").Obj(), Foo("p-y1", "node-y"),
        P("p-y2", foobar).NodeName("node-y").Obj(), Foo("p-y3", "node-y")},
       {{"node-a", kUn}, {"node-b", kOk}, {"node-x", kUn}, {"node-y", kUn}}},
      {"Constraints hold different labelSelectors but pod doesn't match itself on 'zone' "
       "constraint",
       two({{"bar", ""}}, kFoo, kBar),
       four,
       {Foo("p-a1", "node-a"), bar_pod("p-x1", "node-x"), bar_pod("p-y1", "node-y")},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kUn}, {"node-y", kUn}}},
      {"two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, "
       "1/0/0/1]",
       two(foo, kFoo, kFoo),
       {ZN("node-a", "zone1"), ZN("node-b", "zone1"), Node("node-x", {{"zone", "zone2"}}),
        ZN("node-y", "zone2")},
       {Foo("p-a1", "node-a"), Foo("p-y3", "node-y")},
       {{"node-a", kUn}, {"node-b", kOk}, {"node-x", kUnres}, {"node-y", kUn}}},
      // A constraint without labelSelector (nil: labels.Nothing()) counts no pod; the
      // other constraint's counts still decide.
      {"zone constraint without labelSelector, node constraint spreads = [2/1/0/3]",
       P("p", foo)
           .SpreadConstraint(1, "zone", "DoNotSchedule", std::nullopt)
           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
           .Obj(),
       four,
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b"), Foo("p-y1", "node-y"),
        Foo("p-y2", "node-y"), Foo("p-y3", "node-y")},
       {{"node-a", kUn}, {"node-b", kUn}, {"node-x", kOk}, {"node-y", kUn}}},
      {"no constraint has a labelSelector: no existing pod counts, every node fits",
       P("p", foo)
           .SpreadConstraint(1, "zone", "DoNotSchedule", std::nullopt)
           .SpreadConstraint(1, "node", "DoNotSchedule", std::nullopt)
           .Obj(),
       four,
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b"), Foo("p-y1", "node-y"),
        Foo("p-y2", "node-y"), Foo("p-y3", "node-y")},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
  };
  RunFilterCases(cases);
}

TEST(PodTopologySpreadFilterTest, FilterWithoutPreFilter) {
  fake::FakeHandle h;
  PodTopologySpread pl(ListArgs(), h);
  framework::CycleState state;
  framework::NodeInfo ni(std::make_shared<api::Node>(Node("n", {})));
  framework::Status s = pl.Filter(state, *Info(P("p").Obj()), ni);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message(), "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
}

TEST(PodTopologySpreadFilterTest, AddRemovePod) {
  const std::vector<api::Node> nodes = {ZN("node-a", "zone1"), ZN("node-b", "zone1"),
                                        ZN("node-x", "zone2")};
  const api::Pod pod = P("p", {{"foo", ""}})
                           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
                           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
                           .Obj();
  struct Case {
    std::string name;
    api::Pod added;
    std::vector<Counts> want_counts;
    std::vector<std::array<Path, 2>> want_paths;
  } cases[] = {
      {"add a matching pod on node-x",
       Foo("add", "node-x"),
       {{{"zone1", 1}, {"zone2", 1}}, {{"node-a", 1}, {"node-b", 0}, {"node-x", 1}}},
       {{Path{"zone1", 1}, Path{"zone2", 1}}, {Path{"node-b", 0}, Path{"node-x", 1}}}},
      {"add a matching pod on node-b",
       Foo("add", "node-b"),
       {{{"zone1", 2}, {"zone2", 0}}, {{"node-a", 1}, {"node-b", 1}, {"node-x", 0}}},
       {{Path{"zone2", 0}, Path{"zone1", 2}}, {Path{"node-x", 0}, Path{"node-b", 1}}}},
      {"a pod not matching the selector changes nothing",
       P("add", {{"bar", ""}}).NodeName("node-x").Obj(),
       {{{"zone1", 1}, {"zone2", 0}}, {{"node-a", 1}, {"node-b", 0}, {"node-x", 0}}},
       {{Path{"zone2", 0}, Path{"zone1", 1}}, {Path{"node-b", 0}, Path{"node-x", 0}}}},
      {"a pod of another namespace changes nothing",
       P("add", {{"foo", ""}}).Namespace("other").NodeName("node-x").Obj(),
       {{{"zone1", 1}, {"zone2", 0}}, {{"node-a", 1}, {"node-b", 0}, {"node-x", 0}}},
       {{Path{"zone2", 0}, Path{"zone1", 1}}, {Path{"node-b", 0}, Path{"node-x", 0}}}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv(nodes, {Foo("p-a1", "node-a")});
    framework::CycleState state;
    auto pi = Info(pod);
    ASSERT_TRUE(env->pl->PreFilter(state, *pi, nullptr).IsSuccess());
    const PreFilterStateView before = *GetPreFilterState(state);
    const auto* node = env->handle.SnapshotSharedLister().Get(tc.added.spec.node_name);
    ASSERT_TRUE(env->pl->AddPod(state, *pi, Info(tc.added), *node).IsSuccess());
    auto got = *GetPreFilterState(state);
    EXPECT_EQ(got.tp_value_to_match_num, tc.want_counts);
    for (size_t i = 0; i < tc.want_paths.size(); ++i) {
      EXPECT_EQ(Sorted(got.critical_paths[i]), Sorted(tc.want_paths[i])) << i;
    }
    ASSERT_TRUE(env->pl->RemovePod(state, *pi, Info(tc.added), *node).IsSuccess());
    EXPECT_EQ(GetPreFilterState(state)->tp_value_to_match_num, before.tp_value_to_match_num);
  }
  // Filter follows the dry-run: removing the pod on node-a makes node-a feasible.
  auto env = MakeEnv(nodes, {Foo("p-a1", "node-a")});
  framework::CycleState state;
  auto pi = Info(pod);
  ASSERT_TRUE(env->pl->PreFilter(state, *pi, nullptr).IsSuccess());
  const auto* a = env->handle.SnapshotSharedLister().Get("node-a");
  EXPECT_EQ(env->pl->Filter(state, *pi, *a).code(), kUn);
  auto clone = state.Clone();
  ASSERT_TRUE(env->pl->RemovePod(state, *pi, Info(Foo("p-a1", "node-a")), *a).IsSuccess());
  EXPECT_EQ(env->pl->Filter(state, *pi, *a).code(), kOk);
  EXPECT_EQ(env->pl->Filter(*clone, *pi, *a).code(), kUn);
}

// ---------------------------------------------------------------------------------------
// Score

TEST(PodTopologySpreadScoreTest, PreScoreState) {
  struct Case {
    std::string name;
    api::Pod pod;
    std::vector<api::Node> nodes;
    PodTopologySpreadArgs args;
    std::vector<Counts> want_counts;
    std::vector<double> want_weights;  // sizes passed to log(size + 2)
    Code want_code = Code::kSuccess;
  };
  auto w = [](size_t size) { return std::log(static_cast<double>(size + 2)); };
  std::vector<Case> cases = {
      {"normal case",
       P("p", {{"foo", ""}})
           .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, kHostname, "ScheduleAnyway", kFoo)
           .Obj(),
       {ZH("node-a", "zone1"), ZH("node-b", "zone1"), ZH("node-x", "zone2")},
       ListArgs(),
       {{{"zone1", 0}, {"zone2", 0}}, {{"node-a", 0}, {"node-b", 0}, {"node-x", 0}}},
       {w(2), w(3)}},
      {"null selector",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "zone", "ScheduleAnyway", std::nullopt).Obj(),
       {ZH("node-a", "zone1"), ZH("node-b", "zone1"), ZH("node-x", "zone2")},
       ListArgs(),
       {{{"zone1", 0}, {"zone2", 0}}},
       {w(2)}},
      {"node-x doesn't have label zone",
       P("p", {{"foo", ""}})
           .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, kHostname, "ScheduleAnyway", kBar)
           .Obj(),
       {ZH("node-a", "zone1"), ZH("node-b", "zone1"), HN("node-x")},
       ListArgs(),
       {{{"zone1", 0}}, {{"node-a", 0}, {"node-b", 0}}},
       {w(1), w(2)}},
      {"system default constraints and a replicaset",
       P("p", {{"foo", "tar"}, {"baz", "sup"}}).OwnerReference("ReplicaSet", "rs1").Obj(),
       {Node("node-a", {{kHostname, "node-a"}, {kZone, "mars"}}),
        Node("node-b", {{kHostname, "node-b"}, {kZone, "mars"}}),
        // Nodes with no zone are not excluded. They are considered a separate zone.
        HN("node-c"), HN("node-d")},
       PodTopologySpreadArgs{},
       {{{"node-a", 0}, {"node-b", 0}, {"node-c", 0}, {"node-d", 0}}, {{"mars", 0}, {"", 0}}},
       {w(4), w(2)}},
      {"default constraints and a replicaset",
       P("p", {{"foo", "tar"}, {"baz", "sup"}}).OwnerReference("ReplicaSet", "rs1").Obj(),
       {Node("node-a", {{"rack", "rack1"}, {kHostname, "node-a"}, {"planet", "mars"}})},
       ListArgs({Default(1, kHostname, "ScheduleAnyway"), Default(2, "rack", "DoNotSchedule"),
                 Default(2, "planet", "ScheduleAnyway")}),
       {{{"node-a", 0}}, {{"mars", 0}}},
       {w(1), w(1)}},
      {"default constraints and a pod without a controller",
       P("p", {{"foo", "bar"}, {"baz", "sup"}}).Obj(),
       {Node("node-a", {{"planet", "mars"}})},
       ListArgs({Default(2, "planet", "ScheduleAnyway")}),
       {},
       {},
       Code::kSkip},
      {"default constraints and a replicaset, but pod has constraints",
       P("p", {{"foo", "bar"}, {"baz", "sup"}})
           .OwnerReference("ReplicaSet", "rs1")
           .SpreadConstraint(1, "zone", "DoNotSchedule", kBar)
           .SpreadConstraint(2, "planet", "ScheduleAnyway", MakeLabelSelector({{"baz", "sup"}}))
           .Obj(),
       {Node("node-a", {{"planet", "mars"}, {"galaxy", "andromeda"}})},
       ListArgs({Default(2, "galaxy", "ScheduleAnyway")}),
       {{{"mars", 0}}},
       {w(1)}},
      {"no nodes",
       P("p", {{"foo", ""}}).SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo).Obj(),
       {},
       ListArgs(),
       {},
       {},
       Code::kSkip},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv(tc.nodes, {}, tc.args);
    framework::CycleState state;
    const auto& nodes = env->handle.SnapshotSharedLister().List();
    framework::Status s = env->pl->PreScore(state, *Info(tc.pod), nodes);
    ASSERT_EQ(s.code(), tc.want_code) << s.ToString();
    if (!s.IsSuccess()) continue;
    auto got = GetPreScoreState(state);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->topology_value_to_pod_counts, tc.want_counts);
    ASSERT_EQ(got->topology_normalizing_weight.size(), tc.want_weights.size());
    for (size_t i = 0; i < tc.want_weights.size(); ++i) {
      EXPECT_DOUBLE_EQ(got->topology_normalizing_weight[i], tc.want_weights[i]) << i;
    }
  }
}

struct ScoreCase {
  std::string name;
  api::Pod pod;
  std::vector<api::Pod> pods;
  std::vector<api::Node> nodes;         // candidates (passed Filter)
  std::vector<api::Node> failed_nodes;  // nodes + failed_nodes = all nodes
  std::vector<int64_t> want;
  PodTopologySpreadArgs args = ListArgs();
};

TEST(PodTopologySpreadScoreTest, Score) {
  auto host_foo = [](int32_t skew = 1) {
    return P("p", {{"foo", ""}}).SpreadConstraint(skew, kHostname, "ScheduleAnyway", kFoo);
  };
  std::vector<api::Pod> p2103 = {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"),
                                 Foo("p-b1", "node-b"), Foo("p-d1", "node-d"),
                                 Foo("p-d2", "node-d"), Foo("p-d3", "node-d")};
  std::vector<api::Pod> p4321 = {
      Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-a3", "node-a"), Foo("p-a4", "node-a"),
      Foo("p-b1", "node-b"), Foo("p-b2", "node-b"), Foo("p-b3", "node-b"), Foo("p-c1", "node-c"),
      Foo("p-c2", "node-c"), Foo("p-d1", "node-d")};
  std::vector<api::Pod> p4213 = {
      Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-a3", "node-a"), Foo("p-a4", "node-a"),
      Foo("p-b1", "node-b"), Foo("p-b2", "node-b"), Foo("p-x1", "node-x"), Foo("p-y1", "node-y"),
      Foo("p-y2", "node-y"), Foo("p-y3", "node-y")};
  const std::vector<api::Node> abcd = {HN("node-a"), HN("node-b"), HN("node-c"), HN("node-d")};
  const Labels foo = {{"foo", ""}};
  const Labels bar = {{"bar", ""}};
  const Labels foobar = {{"foo", ""}, {"bar", ""}};
  auto pod_on = [](const std::string& name, const Labels& l, const std::string& node) {
    return P(name, l).NodeName(node).Obj();
  };
  auto abc_node = [] {
    return std::vector<api::Node>{Node("node-a", {{"node", "node-a"}, {"foo", ""}}),
                                  Node("node-b", {{"node", "node-b"}, {"foo", ""}}),
                                  Node("node-c", {{"node", "node-c"}})};
  };
  const std::vector<api::Pod> p211 = {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"),
                                      Foo("p-b1", "node-b"), Foo("p-c1", "node-c")};
  const std::vector<api::Pod> mlk_pods = {
      pod_on("p-a1", foo, "node-a"), pod_on("p-b1", foobar, "node-b"),
      pod_on("p-y1", foo, "node-c"), pod_on("p-y2", bar, "node-c")};
  const std::vector<api::Node> zone_abcd = {ZH("node-a", "zone1"), ZH("node-b", "zone1"),
                                            ZH("node-c", "zone2"), ZH("node-d", "zone2")};
  std::vector<ScoreCase> cases = {
      {"one constraint on node, no existing pods",
       host_foo().Obj(),
       {},
       {HN("node-a"), HN("node-b")},
       {},
       {100, 100}},
      {"one constraint on node, only one node is candidate",
       host_foo().Obj(),
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b")},
       {HN("node-a")},
       {HN("node-b")},
       {100}},
      {"one constraint on node, all nodes have the same number of matching pods",
       host_foo().Obj(),
       {Foo("p-a1", "node-a"), Foo("p-b1", "node-b")},
       {HN("node-a"), HN("node-b")},
       {},
       {100, 100}},
      {"one constraint on node, all 4 nodes are candidates",
       host_foo().Obj(),
       p2103,
       abcd,
       {},
       {20, 60, 100, 0}},
      {"one constraint on node, null selector",
       P("p", foo).SpreadConstraint(1, kHostname, "ScheduleAnyway", std::nullopt).Obj(),
       p2103,
       abcd,
       {},
       {100, 100, 100, 100}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=2",
       host_foo(2).Obj(),
       p2103,
       abcd,
       {},
       {33, 66, 100, 16}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=3",
       host_foo(3).Obj(),
       p4321,
       abcd,
       {},
       {44, 66, 77, 100}},
      {"system defaulting, nodes don't have zone, pods match the owner's selector",
       P("p", foo).OwnerReference("ReplicaSet", "rs").Obj(),
       p4321,
       abcd,
       {},
       {44, 66, 77, 100},
       PodTopologySpreadArgs{}},
      {"one constraint on node, 3 out of 4 nodes are candidates",
       host_foo().Obj(),
       p4213,
       {HN("node-a"), HN("node-b"), HN("node-x")},
       {HN("node-y")},
       {33, 83, 100}},
      {"one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match "
       "topology key",
       host_foo().Obj(),
       p4213,
       {HN("node-a"), Node("node-b", {{"n", "node-b"}}), HN("node-x")},
       {HN("node-y")},
       {16, 0, 100}},
      {"one constraint on zone, 3 out of 4 nodes are candidates",
       P("p", foo).SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo).Obj(),
       p4213,
       {ZH("node-a", "zone1"), ZH("node-b", "zone1"), ZH("node-x", "zone2")},
       {ZH("node-y", "zone2")},
       {75, 75, 100}},
      {"two Constraints on zone and node, 2 out of 4 nodes are candidates",
       P("p", foo)
           .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, kHostname, "ScheduleAnyway", kFoo)
           .Obj(),
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b"), Foo("p-x1", "node-x"),
        Foo("p-x2", "node-x"), Foo("p-y1", "node-y"), Foo("p-y2", "node-y"), Foo("p-y3", "node-y"),
        Foo("p-y4", "node-y")},
       {ZH("node-a", "zone1"), ZH("node-x", "zone2")},
       {ZH("node-b", "zone1"), ZH("node-y", "zone2")},
       {100, 63}},
      {"two Constraints on zone and node, with different labelSelectors",
       P("p", foobar)
           .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, kHostname, "ScheduleAnyway", kBar)
           .Obj(),
       {pod_on("p-a1", foo, "node-a"), pod_on("p-b1", foobar, "node-b"),
        pod_on("p-y1", foo, "node-y"), pod_on("p-y2", bar, "node-y")},
       {ZH("node-a", "zone1"), ZH("node-b", "zone1"), ZH("node-x", "zone2"), ZH("node-y", "zone2")},
       {},
       {60, 20, 100, 60}},
      {"two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
       P("p", foobar)
           .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, kHostname, "ScheduleAnyway", kBar)
           .Obj(),
       {pod_on("p-b1", bar, "node-b"), pod_on("p-x1", foo, "node-x"),
        pod_on("p-y1", foobar, "node-y")},
       {ZH("node-a", "zone1"), ZH("node-b", "zone1"), ZH("node-x", "zone2"), ZH("node-y", "zone2")},
       {},
       {100, 60, 40, 0}},
      {"two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are "
       "candidates",
       P("p", foobar)
           .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, kHostname, "ScheduleAnyway", kBar)
           .Obj(),
       {pod_on("p-a1", foo, "node-a"), pod_on("p-b1", foobar, "node-b"),
        pod_on("p-y1", foo, "node-y"), pod_on("p-y2", bar, "node-y")},
       {ZH("node-a", "zone1"), ZH("node-b", "zone1"), ZH("node-x", "zone2")},
       {ZH("node-y", "zone2")},
       {50, 25, 100}},
      {"existing pods in a different namespace do not count",
       host_foo().Obj(),
       {P("p-a1", foo).Namespace("ns1").NodeName("node-a").Obj(), Foo("p-a2", "node-a"),
        Foo("p-b1", "node-b"), Foo("p-b2", "node-b")},
       {HN("node-a"), HN("node-b")},
       {},
       {100, 33}},
      {"terminating Pods should be excluded",
       host_foo().Obj(),
       {P("p-a", foo).NodeName("node-a").Terminating().Obj(), Foo("p-b", "node-b")},
       {HN("node-a"), HN("node-b")},
       {},
       {100, 0}},
      {"minDomains has no effect when ScheduleAnyway",
       P("p", foo).SpreadConstraint(2, "node", "ScheduleAnyway", kFoo, 10).Obj(),
       {Foo("p-a1", "node-a"), Foo("p-a2", "node-a"), Foo("p-b1", "node-b"), Foo("p-b2", "node-b"),
        Foo("p-c1", "node-c")},
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
        Node("node-c", {{"node", "node-c"}})},
       {},
       {75, 75, 100}},
      {"NodeAffinityPolicy honored with labelSelectors",
       P("p", foo).NodeSelector(foo).SpreadConstraint(1, "node", "ScheduleAnyway", kFoo).Obj(),
       p211,
       abc_node(),
       {},
       {0, 33, 100}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       P("p", foo)
           .NodeSelector(foo)
           .SpreadConstraint(1, "node", "ScheduleAnyway", kFoo, std::nullopt, "Ignore")
           .Obj(),
       p211,
       abc_node(),
       {},
       {66, 100, 100}},
      {"NodeAffinityPolicy honored with nodeAffinity",
       P("p", foo)
           .NodeAffinityIn("foo", {""})
           .SpreadConstraint(1, "node", "ScheduleAnyway", kFoo)
           .Obj(),
       p211,
       abc_node(),
       {},
       {0, 33, 100}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       P("p", foo)
           .NodeAffinityIn("foo", {""})
           .SpreadConstraint(1, "node", "ScheduleAnyway", kFoo, std::nullopt, "Ignore")
           .Obj(),
       p211,
       abc_node(),
       {},
       {66, 100, 100}},
      {"NodeTaintsPolicy honored",
       P("p", foo)
           .SpreadConstraint(1, "node", "ScheduleAnyway", kFoo, std::nullopt, "", "Honor")
           .Obj(),
       p211,
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
        Node("node-c", {{"node", "node-c"}}, kTaints)},
       {},
       {0, 33, 100}},
      {"NodeTaintsPolicy ignored",
       P("p", foo).SpreadConstraint(1, "node", "ScheduleAnyway", kFoo).Obj(),
       p211,
       {Node("node-a", {{"node", "node-a"}}), Node("node-b", {{"node", "node-b"}}),
        Node("node-c", {{"node", "node-c"}}, kTaints)},
       {},
       {66, 100, 100}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
       P("p", foobar)
           .SpreadConstraint(1, "zone", "ScheduleAnyway", api::LabelSelector{}, std::nullopt, "",
                             "", {"foo"})
           .SpreadConstraint(1, kHostname, "ScheduleAnyway", api::LabelSelector{}, std::nullopt, "",
                             "", {"bar"})
           .Obj(),
       mlk_pods,
       zone_abcd,
       {},
       {60, 20, 60, 100}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
       P("p", {{"foo", ""}, {"bar", ""}, {"baz", ""}})
           .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
           .SpreadConstraint(1, kHostname, "ScheduleAnyway", kBar, std::nullopt, "", "", {"baz"})
           .Obj(),
       {pod_on("p-a1", foo, "node-a"),
        pod_on("p-b1", {{"foo", ""}, {"bar", ""}, {"baz", ""}}, "node-b"),
        pod_on("p-c1", foo, "node-c"), pod_on("p-c2", bar, "node-c"),
        pod_on("p-d3", {{"bar", ""}, {"baz", ""}}, "node-c")},
       zone_abcd,
       {},
       {60, 20, 60, 100}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    std::vector<api::Node> all = tc.nodes;
    all.insert(all.end(), tc.failed_nodes.begin(), tc.failed_nodes.end());
    auto env = MakeEnv(all, tc.pods, tc.args);
    framework::CycleState state;
    auto pi = Info(tc.pod);
    std::vector<const framework::NodeInfo*> filtered;
    for (const auto& n : tc.nodes) {
      filtered.push_back(env->handle.SnapshotSharedLister().Get(n.metadata.name));
    }
    framework::Status s = env->pl->PreScore(state, *pi, filtered);
    ASSERT_TRUE(s.IsSuccess()) << s.ToString();
    std::vector<int64_t> scores;
    for (const auto* ni : filtered) {
      int64_t score = 0;
      ASSERT_TRUE(env->pl->Score(state, *pi, *ni, &score).IsSuccess());
      scores.push_back(score);
    }
    ASSERT_TRUE(env->pl->NormalizeScore(state, *pi, filtered, scores).IsSuccess());
    EXPECT_EQ(scores, tc.want);
  }
}

TEST(PodTopologySpreadScoreTest, RawScores) {
  // 2/1/0/3 on hostname, maxSkew 1: cnt * log(4 + 2), rounded.
  auto env = MakeEnv({HN("node-a"), HN("node-b"), HN("node-c"), HN("node-d")},
                     {Foo("a1", "node-a"), Foo("a2", "node-a"), Foo("b1", "node-b"),
                      Foo("d1", "node-d"), Foo("d2", "node-d"), Foo("d3", "node-d")});
  framework::CycleState state;
  auto pi =
      Info(P("p", {{"foo", ""}}).SpreadConstraint(1, kHostname, "ScheduleAnyway", kFoo).Obj());
  const auto& nodes = env->handle.SnapshotSharedLister().List();
  ASSERT_TRUE(env->pl->PreScore(state, *pi, nodes).IsSuccess());
  std::vector<int64_t> raw;
  for (const auto* ni : nodes) {
    int64_t s = 0;
    ASSERT_TRUE(env->pl->Score(state, *pi, *ni, &s).IsSuccess());
    raw.push_back(s);
  }
  EXPECT_EQ(raw, (std::vector<int64_t>{4, 2, 0, 5}));
  // No ScheduleAnyway constraint: PreScore skips.
  framework::CycleState state2;
  EXPECT_TRUE(env->pl
                  ->PreScore(state2,
                             *Info(P("p", {{"foo", ""}})
                                       .SpreadConstraint(1, kHostname, "DoNotSchedule", kFoo)
                                       .Obj()),
                             nodes)
                  .IsSkip());
}

// PreFilter and PreScore split the nodes in chunks of 64 (framework::ParallelChunks): the
// Filter and Score results are the same inline and fanned out on the scheduler's pool.
TEST(PodTopologySpreadParallelTest, SameResultsInlineAndFannedOut) {
  std::vector<api::Node> nodes;
  std::vector<api::Pod> pods;
  for (int i = 0; i < 300; ++i) {
    const std::string name = "node-" + std::to_string(i);
    nodes.push_back(ZH(name, "zone" + std::to_string(i % 7)));
    for (int j = 0; j < i % 4; ++j) pods.push_back(Foo(name + "-p" + std::to_string(j), name));
  }
  fake::ExpectSameResultsWithAnyParallelizer([&](framework::Parallelizer* par) {
    auto env = MakeEnv(nodes, pods);
    env->handle.SetParallelizer(par);
    return fake::FilterAndScoreAll(*env->pl, env->handle.SnapshotSharedLister(),
                                   *Info(P("p", {{"foo", ""}})
                                             .SpreadConstraint(2, "zone", "DoNotSchedule", kFoo)
                                             .SpreadConstraint(3, kHostname, "DoNotSchedule", kFoo)
                                             .Obj()),
                                   *Info(P("q", {{"foo", ""}})
                                             .SpreadConstraint(1, "zone", "ScheduleAnyway", kFoo)
                                             .SpreadConstraint(1, kHostname, "ScheduleAnyway", kFoo)
                                             .Obj()));
  });
}

// ---------------------------------------------------------------------------------------
// Args

TEST(PodTopologySpreadArgsTest, Parse) {
  struct Case {
    std::string name;
    std::string yaml;
    std::string want_error;
    DefaultingType want_type = DefaultingType::kSystem;
    size_t want_constraints = 0;
  } cases[] = {
      {"defaults", "", ""},
      {"explicit System", "{kind: PodTopologySpreadArgs, defaultingType: System}", ""},
      {"List with constraints",
       "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: "
       "ScheduleAnyway, minDomains: 2, nodeAffinityPolicy: Ignore, nodeTaintsPolicy: Honor, "
       "matchLabelKeys: [app]}]}",
       "", DefaultingType::kList, 2},
      {"List without constraints", "{defaultingType: List}", "", DefaultingType::kList, 0},
      {"unsupported defaultingType", "{defaultingType: Foo}",
       "PodTopologySpreadArgs: defaultingType: Unsupported value: \"Foo\": supported values: "
       "\"System\", \"List\""},
      {"System with constraints",
       "{defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
       "DoNotSchedule}]}",
       "PodTopologySpreadArgs: defaultingType: Invalid value: \"System\": when "
       ".defaultConstraints are not empty"},
      {"maxSkew 0",
       "{defaultingType: List, defaultConstraints: [{maxSkew: 0, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule}]}",
       "PodTopologySpreadArgs: defaultConstraints[0].maxSkew: Invalid value: 0: not in valid "
       "range (0, inf)"},
      {"empty topologyKey",
       "{defaultingType: List, defaultConstraints: [{maxSkew: 1, whenUnsatisfiable: "
       "DoNotSchedule}]}",
       "PodTopologySpreadArgs: defaultConstraints[0].topologyKey: Required value: can not be "
       "empty"},
      {"empty whenUnsatisfiable",
       "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone}]}",
       "PodTopologySpreadArgs: defaultConstraints[0].whenUnsatisfiable: Required value: can not "
       "be empty"},
      {"unsupported whenUnsatisfiable",
       "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: Foo}]}",
       "PodTopologySpreadArgs: defaultConstraints[0].whenUnsatisfiable: Unsupported value: "
       "\"Foo\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""},
      {"labelSelector forbidden",
       "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]}",
       "PodTopologySpreadArgs: defaultConstraints[0].labelSelector: Forbidden: constraint must "
       "not define a selector, as they deduced for each pod"},
      {"duplicate constraint",
       "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: "
       "DoNotSchedule}]}",
       "PodTopologySpreadArgs: defaultConstraints[1]: Duplicate value: \"{zone, DoNotSchedule}\""},
      {"several errors are aggregated",
       "{defaultingType: List, defaultConstraints: [{maxSkew: -1, topologyKey: zone, "
       "whenUnsatisfiable: Foo}]}",
       "PodTopologySpreadArgs: [defaultConstraints[0].maxSkew: Invalid value: -1: not in valid "
       "range (0, inf), defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Foo\": "
       "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"]"},
      {"unknown constraint field",
       "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule, foo: 1}]}",
       "PodTopologySpreadArgs: unknown field \"defaultConstraints[0].foo\""},
      {"wrong kind", "{kind: NodeAffinityArgs}",
       "PodTopologySpreadArgs: want args of kind PodTopologySpreadArgs, got NodeAffinityArgs"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    std::optional<YAML::Node> node;
    if (!tc.yaml.empty()) node = YAML::Load(tc.yaml);
    auto got = ParsePodTopologySpreadArgs(node ? &*node : nullptr);
    if (!tc.want_error.empty()) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().Message(), tc.want_error);
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->defaulting_type, tc.want_type);
    EXPECT_EQ(got->default_constraints.size(), tc.want_constraints);
  }
  YAML::Node list = YAML::Load(
      "{defaultingType: List, defaultConstraints: [{maxSkew: 2, topologyKey: zone, "
      "whenUnsatisfiable: ScheduleAnyway, minDomains: 3, nodeAffinityPolicy: Ignore, "
      "nodeTaintsPolicy: Honor, matchLabelKeys: [app]}]}");
  auto got = ParsePodTopologySpreadArgs(&list);
  ASSERT_TRUE(got.ok());
  const auto& c = got->default_constraints[0];
  EXPECT_EQ(c.max_skew, 2);
  EXPECT_EQ(c.topology_key, "zone");
  EXPECT_EQ(c.when_unsatisfiable, "ScheduleAnyway");
  EXPECT_EQ(c.min_domains, 3);
  EXPECT_EQ(c.node_affinity_policy, "Ignore");
  EXPECT_EQ(c.node_taints_policy, "Honor");
  EXPECT_EQ(c.match_label_keys, std::vector<std::string>{"app"});

  fake::FakeHandle h;
  auto pl = PodTopologySpread::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* pts = dynamic_cast<PodTopologySpread*>(pl.value().get());
  ASSERT_NE(pts, nullptr);
  EXPECT_TRUE(pts->system_defaulted());
  ASSERT_EQ(pts->default_constraints().size(), 2u);
  EXPECT_EQ(pts->default_constraints()[0].topology_key, kHostname);
  EXPECT_EQ(pts->default_constraints()[0].max_skew, 3);
  EXPECT_EQ(pts->default_constraints()[0].when_unsatisfiable, "ScheduleAnyway");
  EXPECT_EQ(pts->default_constraints()[1].topology_key, kZone);
  EXPECT_EQ(pts->default_constraints()[1].max_skew, 5);
  YAML::Node bad = YAML::Load("{defaultingType: Foo}");
  EXPECT_FALSE(PodTopologySpread::New(&bad, h).ok());
}

// ---------------------------------------------------------------------------------------
// Queueing hints

TEST(PodTopologySpreadEventsTest, Registered) {
  fake::FakeHandle h;
  PodTopologySpread pl(ListArgs(), h);
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kAssignedPod);
  EXPECT_EQ(events[0].event.action,
            framework::kAdd | framework::kUpdatePodLabel | framework::kDelete);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kUnscheduledPod);
  EXPECT_EQ(events[1].event.action, framework::kUpdatePodTolerations | framework::kUpdatePodLabel);
  EXPECT_EQ(events[2].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[2].event.action, framework::kAdd | framework::kDelete |
                                        framework::kUpdateNodeLabel | framework::kUpdateNodeTaint);
}

TEST(PodTopologySpreadEventsTest, Hints) {
  using framework::QueueingHint;
  const api::Pod pod = P("p", {{"foo", ""}})
                           .UID("p")
                           .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo)
                           .SpreadConstraint(1, "node", "DoNotSchedule", kFoo)
                           .Obj();
  const api::Pod honor =
      P("p", {{"foo", ""}})
          .UID("p")
          .SpreadConstraint(1, "zone", "DoNotSchedule", kFoo, std::nullopt, "", "Honor")
          .Obj();
  auto bound = [](const Labels& l, const std::string& node = "node-a",
                  const std::string& ns = "default") {
    return P("other", l).UID("other").Namespace(ns).NodeName(node).Obj();
  };
  api::Pod nominated = P("other", {{"foo", ""}}).UID("other").Obj();
  nominated.status.nominated_node_name = "node-a";
  api::Pod pod_tolerating = honor;
  pod_tolerating.spec.tolerations.push_back({"key", "Exists", "", "NoSchedule", std::nullopt});
  api::Pod pod_relabeled = pod;
  pod_relabeled.metadata.labels = {{"bar", ""}};
  api::Pod pod_other_label = pod;
  pod_other_label.metadata.labels["baz"] = "1";
  const api::Node zn = ZN("node-a", "zone1");
  const api::Node zn2 = ZN("node-a", "zone2");
  const api::Node z_only = Node("node-a", {{"zone", "zone1"}});
  const api::Node zn_other = Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"x", "y"}});
  const api::Node zn_tainted = Node("node-a", {{"zone", "zone1"}, {"node", "node-a"}}, kTaints);
  const api::Node z_only_tainted = Node("node-a", {{"zone", "zone1"}}, kTaints);

  struct Case {
    std::string name;
    size_t event;
    api::Pod pod;
    std::optional<api::Pod> old_pod, new_pod;
    std::optional<api::Node> old_node, new_node;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"add a pod matching the constraints",
       0,
       pod,
       {},
       bound({{"foo", ""}}),
       {},
       {},
       QueueingHint::kQueue},
      {"add a nominated pod matching the constraints",
       0,
       pod,
       {},
       nominated,
       {},
       {},
       QueueingHint::kQueue},
      {"add an unscheduled pod",
       0,
       pod,
       {},
       bound({{"foo", ""}}, ""),
       {},
       {},
       QueueingHint::kQueueSkip},
      {"add a pod in another namespace",
       0,
       pod,
       {},
       bound({{"foo", ""}}, "node-a", "ns2"),
       {},
       {},
       QueueingHint::kQueueSkip},
      {"add a pod not matching the constraints",
       0,
       pod,
       {},
       bound({{"bar", ""}}),
       {},
       {},
       QueueingHint::kQueueSkip},
      {"update a pod to stop matching",
       0,
       pod,
       bound({{"foo", ""}}),
       bound({{"bar", ""}}),
       {},
       {},
       QueueingHint::kQueue},
      {"update a pod to start matching",
       0,
       pod,
       bound({{"bar", ""}}),
       bound({{"foo", ""}}),
       {},
       {},
       QueueingHint::kQueue},
      {"update a pod's unrelated label",
       0,
       pod,
       bound({{"foo", ""}}),
       bound({{"foo", ""}, {"x", "y"}}),
       {},
       {},
       QueueingHint::kQueueSkip},
      {"update a pod without label change",
       0,
       pod,
       bound({{"foo", ""}}),
       bound({{"foo", ""}}),
       {},
       {},
       QueueingHint::kQueueSkip},
      {"delete a matching pod", 0, pod, bound({{"foo", ""}}), {}, {}, {}, QueueingHint::kQueue},
      {"delete a non-matching pod",
       0,
       pod,
       bound({{"bar", ""}}),
       {},
       {},
       {},
       QueueingHint::kQueueSkip},
      {"the pod got a toleration and honors taints",
       1,
       pod_tolerating,
       honor,
       pod_tolerating,
       {},
       {},
       QueueingHint::kQueue},
      {"the pod got a toleration but ignores taints",
       1,
       pod,
       pod,
       [&] {
         api::Pod p = pod;
         p.spec.tolerations.push_back({"key", "Exists", "", "NoSchedule", std::nullopt});
         return p;
       }(),
       {},
       {},
       QueueingHint::kQueueSkip},
      {"the pod's label change makes it stop matching its constraints",
       1,
       pod_relabeled,
       pod,
       pod_relabeled,
       {},
       {},
       QueueingHint::kQueue},
      {"the pod's unrelated label change",
       1,
       pod_other_label,
       pod,
       pod_other_label,
       {},
       {},
       QueueingHint::kQueueSkip},
      {"add a node with all topology keys", 2, pod, {}, {}, {}, zn, QueueingHint::kQueue},
      {"add a node missing a topology key", 2, pod, {}, {}, {}, z_only, QueueingHint::kQueueSkip},
      {"delete a node with all topology keys", 2, pod, {}, {}, zn, {}, QueueingHint::kQueue},
      {"delete a node missing a topology key",
       2,
       pod,
       {},
       {},
       z_only,
       {},
       QueueingHint::kQueueSkip},
      {"a node gains a topology key", 2, pod, {}, {}, z_only, zn, QueueingHint::kQueue},
      {"a node loses a topology key", 2, pod, {}, {}, zn, z_only, QueueingHint::kQueue},
      {"a node moves to another domain", 2, pod, {}, {}, zn, zn2, QueueingHint::kQueue},
      {"a node's unrelated label changes", 2, pod, {}, {}, zn, zn_other, QueueingHint::kQueueSkip},
      {"a matching node's taints change", 2, pod, {}, {}, zn, zn_tainted, QueueingHint::kQueue},
      {"a non-matching node's taints change",
       2,
       pod,
       {},
       {},
       z_only,
       z_only_tainted,
       QueueingHint::kQueueSkip},
  };
  fake::FakeHandle h;
  PodTopologySpread pl(ListArgs(), h);
  const auto events = pl.EventsToRegister();
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    framework::EventObjects objs;
    objs.old_pod = tc.old_pod ? &*tc.old_pod : nullptr;
    objs.new_pod = tc.new_pod ? &*tc.new_pod : nullptr;
    objs.old_node = tc.old_node ? &*tc.old_node : nullptr;
    objs.new_node = tc.new_node ? &*tc.new_node : nullptr;
    EXPECT_EQ(events[tc.event].hint(tc.pod, objs), tc.want);
  }
}

}  // namespace
}  // namespace phalanx::plugins::podtopologyspread
