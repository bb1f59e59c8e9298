// Ported from upstream nodeaffinity/node_affinity_test.go (TestNodeAffinity,
// TestNodeAffinityPriority, Test_isSchedulableAfterNodeChange) plus args decoding.
#include "plugins/nodeaffinity/node_affinity.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <optional>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

// Test tables leave trailing optional fields out.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::nodeaffinity {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

api::NodeSelectorRequirement R(std::string key, std::string op,
                               std::vector<std::string> values = {}) {
  return {std::move(key), std::move(op), std::move(values)};
}

api::NodeSelectorTerm Exprs(std::vector<api::NodeSelectorRequirement> e) {
  api::NodeSelectorTerm t;
  t.match_expressions = std::move(e);
  return t;
}

api::NodeSelectorTerm Fields(std::vector<api::NodeSelectorRequirement> f,
                             std::vector<api::NodeSelectorRequirement> e = {}) {
  api::NodeSelectorTerm t;
  t.match_fields = std::move(f);
  t.match_expressions = std::move(e);
  return t;
}

api::Pod PodRequired(std::vector<api::NodeSelectorTerm> terms,
                     std::map<std::string, std::string> node_selector = {}) {
  api::Pod p = PodBuilder("pod").NodeSelector(std::move(node_selector)).Obj();
  p.spec.affinity.emplace();
  p.spec.affinity->node_affinity.emplace();
  p.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution =
      api::NodeSelector{std::move(terms)};
  return p;
}

api::Pod PodPreferred(std::vector<api::PreferredSchedulingTerm> terms) {
  api::Pod p = PodBuilder("pod").Obj();
  p.spec.affinity.emplace();
  p.spec.affinity->node_affinity.emplace();
  p.spec.affinity->node_affinity->preferred_during_scheduling_ignored_during_execution =
      std::move(terms);
  return p;
}

api::Node NodeWithLabels(const std::string& name, const std::map<std::string, std::string>& l) {
  api::Node n = NodeBuilder(name.empty() ? "unnamed" : name).Obj();
  n.metadata.name = name;
  n.metadata.labels = l;
  return n;
}

std::unique_ptr<framework::Plugin> NewPlugin(const std::string& yaml, fake::FakeHandle& h) {
  std::optional<YAML::Node> args;
  if (!yaml.empty()) args = YAML::Load(yaml);
  auto pl = NodeAffinity::New(args ? &*args : nullptr, h);
  EXPECT_TRUE(pl.ok()) << pl.status().ToString();
  return pl.ok() ? std::move(pl.value()) : nullptr;
}

constexpr char kAddedNode2[] = R"(
addedAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
    - matchFields:
      - {key: metadata.name, operator: In, values: [node2]}
)";
constexpr char kAddedZoneBar[] = R"(
addedAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
    - matchExpressions:
      - {key: zone, operator: In, values: [bar]}
)";

TEST(NodeAffinityTest, Filter) {
  const std::string kPod(kErrReasonPod);
  struct Case {
    std::string name;
    api::Pod pod;
    std::map<std::string, std::string> labels;
    std::string node_name;
    std::string want_filter;  // "" = success, else the UnschedulableAndUnresolvable reason
    framework::Code want_prefilter_code = framework::Code::kSuccess;
    std::optional<std::set<std::string>> want_prefilter_nodes;
    std::string args;
    bool run_prefilter = true;
  };
  std::vector<Case> cases = {
      {"missing labels", PodBuilder("p").NodeSelector({{"foo", "bar"}}).Obj(), {}, "", kPod},
      {"same labels",
       PodBuilder("p").NodeSelector({{"foo", "bar"}}).Obj(),
       {{"foo", "bar"}},
       "",
       ""},
      {"node labels are superset",
       PodBuilder("p").NodeSelector({{"foo", "bar"}}).Obj(),
       {{"foo", "bar"}, {"baz", "blah"}},
       "",
       ""},
      {"node labels are subset",
       PodBuilder("p").NodeSelector({{"foo", "bar"}, {"baz", "blah"}}).Obj(),
       {{"foo", "bar"}},
       "",
       kPod},
      {"Pod with matchExpressions using In operator that matches the existing node",
       PodRequired({Exprs({R("foo", "In", {"bar", "value2"})})}),
       {{"foo", "bar"}},
       "",
       ""},
      {"Pod with matchExpressions using Gt operator that matches the existing node",
       PodRequired({Exprs({R("kernel-version", "Gt", {"0204"})})}),
       {{"kernel-version", "0206"}},
       "",
       ""},
      {"Pod with matchExpressions using NotIn operator that matches the existing node",
       PodRequired({Exprs({R("mem-type", "NotIn", {"DDR", "DDR2"})})}),
       {{"mem-type", "DDR3"}},
       "",
       ""},
      {"Pod with matchExpressions using Exists operator that matches the existing node",
       PodRequired({Exprs({R("GPU", "Exists")})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       ""},
      {"Pod with affinity that don't match node's labels won't schedule onto the node",
       PodRequired({Exprs({R("foo", "In", {"value1", "value2"})})}),
       {{"foo", "bar"}},
       "",
       kPod},
      {"Pod with empty MatchExpressions is not a valid value will match no objects and won't "
       "schedule onto the node",
       PodRequired({Exprs({})}),
       {{"foo", "bar"}},
       "",
       kPod},
      {"Pod with no Affinity will schedule onto a node",
       PodBuilder("p").Obj(),
       {{"foo", "bar"}},
       "",
       "",
       framework::Code::kSkip},
      {"Pod with multiple matchExpressions ANDed that matches the existing node",
       PodRequired({Exprs({R("GPU", "Exists"), R("GPU", "NotIn", {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       ""},
      {"Pod with multiple matchExpressions ANDed that doesn't match the existing node",
       PodRequired({Exprs({R("GPU", "Exists"), R("GPU", "In", {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       kPod},
      {"Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will "
       "schedule onto the node",
       PodRequired({Exprs({R("foo", "In", {"bar", "value2"})}),
                    Exprs({R("diffkey", "In", {"wrong", "value2"})})}),
       {{"foo", "bar"}},
       "",
       ""},
      {"Pod with an Affinity and a PodSpec.NodeSelector both are satisfied, will schedule onto "
       "the node",
       PodRequired({Exprs({R("foo", "Exists")})}, {{"foo", "bar"}}),
       {{"foo", "bar"}},
       "",
       ""},
      {"Pod with an Affinity matches node's labels but the PodSpec.NodeSelector is not "
       "satisfied, won't schedule onto the node",
       PodRequired({Exprs({R("foo", "Exists")})}, {{"foo", "bar"}}),
       {{"foo", "barrrrrr"}},
       "",
       kPod},
      {"Pod with matchFields using In operator that matches the existing node",
       PodRequired({Fields({R("metadata.name", "In", {"node1"})})}),
       {},
       "node1",
       "",
       framework::Code::kSuccess,
       std::set<std::string>{"node1"}},
      {"Pod with matchFields using In operator that does not match the existing node",
       PodRequired({Fields({R("metadata.name", "In", {"node1"})})}),
       {},
       "node2",
       kPod,
       framework::Code::kSuccess,
       std::set<std::string>{"node1"}},
      {"Pod with two terms: matchFields does not match, but matchExpressions matches",
       PodRequired(
           {Fields({R("metadata.name", "In", {"node1"})}), Exprs({R("foo", "In", {"bar"})})}),
       {{"foo", "bar"}},
       "node2",
       ""},
      {"Pod with one term: matchFields does not match, but matchExpressions matches",
       PodRequired({Fields({R("metadata.name", "In", {"node1"})}, {R("foo", "In", {"bar"})})}),
       {{"foo", "bar"}},
       "node2",
       kPod,
       framework::Code::kSuccess,
       std::set<std::string>{"node1"}},
      {"Pod with one term: both matchFields and matchExpressions match",
       PodRequired({Fields({R("metadata.name", "In", {"node1"})}, {R("foo", "In", {"bar"})})}),
       {{"foo", "bar"}},
       "node1",
       "",
       framework::Code::kSuccess,
       std::set<std::string>{"node1"}},
      {"Pod with two terms: both matchFields and matchExpressions do not match",
       PodRequired({Fields({R("metadata.name", "In", {"node1"})}),
                    Exprs({R("foo", "In", {"not-match-to-bar"})})}),
       {{"foo", "bar"}},
       "node2",
       kPod},
      {"Pod with two terms of node.Name affinity",
       PodRequired({Fields({R("metadata.name", "In", {"node1"})}),
                    Fields({R("metadata.name", "In", {"node2"})})}),
       {},
       "node2",
       "",
       framework::Code::kSuccess,
       std::set<std::string>{"node1", "node2"}},
      {"Pod with two conflicting mach field requirements",
       PodRequired(
           {Fields({R("metadata.name", "In", {"node1"}), R("metadata.name", "In", {"node2"})})}),
       {{"foo", "bar"}},
       "node2",
       kPod,
       framework::Code::kUnschedulableAndUnresolvable},
      {"Matches added affinity and Pod's node affinity",
       PodRequired({Exprs({R("zone", "In", {"foo"})})}),
       {{"zone", "foo"}},
       "node2",
       "",
       framework::Code::kSuccess,
       std::nullopt,
       kAddedNode2},
      {"Matches added affinity but not Pod's node affinity",
       PodRequired({Exprs({R("zone", "In", {"bar"})})}),
       {{"zone", "foo"}},
       "node2",
       kPod,
       framework::Code::kSuccess,
       std::nullopt,
       kAddedNode2},
      {"Doesn't match added affinity",
       PodBuilder("p").Obj(),
       {{"zone", "foo"}},
       "node2",
       std::string(kErrReasonEnforced),
       framework::Code::kSuccess,
       std::nullopt,
       kAddedZoneBar},
      {"Matches node selector correctly even if PreFilter is not called",
       PodBuilder("p").NodeSelector({{"foo", "bar"}}).Obj(),
       {{"foo", "bar"}, {"baz", "blah"}},
       "",
       "",
       framework::Code::kSuccess,
       std::nullopt,
       "",
       false},
      {"Matches node affinity correctly even if PreFilter is not called",
       PodRequired({Exprs({R("GPU", "Exists"), R("GPU", "NotIn", {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       "",
       framework::Code::kSuccess,
       std::nullopt,
       "",
       false},
      {"Pod with empty nodeSelectorTerms matches no node",
       PodRequired({}),
       {{"foo", "bar"}},
       "",
       kPod},
  };
  for (const auto& c : cases) {
    fake::FakeHandle h;
    auto pl = NewPlugin(c.args, h);
    ASSERT_NE(pl, nullptr) << c.name;
    auto* pf = dynamic_cast<framework::PreFilterPlugin*>(pl.get());
    auto* f = dynamic_cast<framework::FilterPlugin*>(pl.get());
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    if (c.run_prefilter) {
      framework::PreFilterResult result;
      auto s = pf->PreFilter(state, *pi, &result);
      EXPECT_EQ(s.code(), c.want_prefilter_code) << c.name << ": " << s.ToString();
      if (s.code() == framework::Code::kUnschedulableAndUnresolvable) {
        EXPECT_EQ(s.reasons(), std::vector<std::string>{"pod affinity terms conflict"}) << c.name;
      }
      if (c.want_prefilter_nodes) {
        EXPECT_FALSE(result.all_nodes) << c.name;
        EXPECT_EQ(result.node_names, *c.want_prefilter_nodes) << c.name;
      } else {
        EXPECT_TRUE(result.all_nodes) << c.name;
      }
    }
    auto ni = MakeNodeInfo(NodeWithLabels(c.node_name, c.labels));
    auto s = f->Filter(state, *pi, ni);
    if (c.want_filter.empty()) {
      EXPECT_TRUE(s.IsSuccess()) << c.name << ": " << s.ToString();
    } else {
      EXPECT_EQ(s.code(), framework::Code::kUnschedulableAndUnresolvable) << c.name;
      EXPECT_EQ(s.reasons(), std::vector<std::string>{c.want_filter}) << c.name;
    }
  }
}

TEST(NodeAffinityTest, Priority) {
  const std::map<std::string, std::string> label1{{"foo", "bar"}};
  const std::map<std::string, std::string> label2{{"key", "value"}};
  const std::map<std::string, std::string> label3{{"az", "az1"}};
  const std::map<std::string, std::string> label4{{"abc", "az11"}, {"def", "az22"}};
  const std::map<std::string, std::string> label5{{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};
  const std::vector<api::PreferredSchedulingTerm> affinity1 = {
      {2, Exprs({R("foo", "In", {"bar"})})}};
  const std::vector<api::PreferredSchedulingTerm> affinity2 = {
      {2, Exprs({R("foo", "In", {"bar"})})},
      {4, Exprs({R("key", "In", {"value"})})},
      {5, Exprs({R("foo", "In", {"bar"}), R("key", "In", {"value"}), R("az", "In", {"az1"})})},
  };
  constexpr char kAddedAffinity1[] = R"(
addedAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 2
    preference:
      matchExpressions:
      - {key: foo, operator: In, values: [bar]}
)";
  constexpr char kAddedKeyValue3[] = R"(
addedAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 3
    preference:
      matchExpressions:
      - {key: key, operator: In, values: [value]}
)";
  struct Case {
    const char* name;
    api::Pod pod;
    std::vector<api::Node> nodes;
    std::vector<int64_t> want;
    std::string args;
    bool run_prescore = true;
    framework::Code want_prescore = framework::Code::kSuccess;
  };
  const Case cases[] = {
      {"all nodes are same priority as NodeAffinity is nil",
       PodBuilder("p").Obj(),
       {NodeWithLabels("node1", label1), NodeWithLabels("node2", label2),
        NodeWithLabels("node3", label3)},
       {0, 0, 0},
       "",
       false},
      {"Skip is returned in PreScore when NodeAffinity is nil",
       PodBuilder("p").Obj(),
       {NodeWithLabels("node1", label1)},
       {},
       "",
       true,
       framework::Code::kSkip},
      {"PreScore returns error when an incoming Pod has a broken affinity",
       PodPreferred({{2, Exprs({R("foo", "Gt", {"1", "2"})})}}),
       {NodeWithLabels("node1", label1)},
       {},
       "",
       true,
       framework::Code::kError},
      {"no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' "
       "priority is zero",
       PodPreferred(affinity1),
       {NodeWithLabels("node1", label4), NodeWithLabels("node2", label2),
        NodeWithLabels("node3", label3)},
       {0, 0, 0}},
      {"only node1 matches the preferred scheduling requirements of pod",
       PodPreferred(affinity1),
       {NodeWithLabels("node1", label1), NodeWithLabels("node2", label2),
        NodeWithLabels("node3", label3)},
       {100, 0, 0}},
      {"all nodes matches the preferred scheduling requirements of pod but with different "
       "priorities",
       PodPreferred(affinity2),
       {NodeWithLabels("node1", label1), NodeWithLabels("node5", label5),
        NodeWithLabels("node2", label2)},
       {18, 100, 36}},
      {"added affinity",
       PodBuilder("p").Obj(),
       {NodeWithLabels("node1", label1), NodeWithLabels("node2", label2)},
       {100, 0},
       kAddedAffinity1},
      {"added affinity and pod has default affinity",
       PodPreferred(affinity1),
       {NodeWithLabels("node1", label1), NodeWithLabels("node2", label2),
        NodeWithLabels("node3", label5)},
       {40, 60, 100},
       kAddedKeyValue3},
      {"calculate the priorities correctly even if PreScore is not called",
       PodPreferred(affinity2),
       {NodeWithLabels("node1", label1), NodeWithLabels("node5", label5),
        NodeWithLabels("node2", label2)},
       {18, 100, 36},
       "",
       false},
      {"zero-weight and empty preferred terms are ignored",
       PodPreferred({{0, Exprs({R("foo", "In", {"bar"})})},
                     {7, Exprs({})},
                     {1, Exprs({R("key", "In", {"value"})})}}),
       {NodeWithLabels("node1", label1), NodeWithLabels("node2", label2)},
       {0, 100}},
  };
  for (const auto& c : cases) {
    fake::FakeHandle h;
    std::vector<framework::NodeInfo> infos;
    for (const auto& n : c.nodes) infos.push_back(MakeNodeInfo(n));
    h.SetNodes(infos);
    auto pl = NewPlugin(c.args, h);
    ASSERT_NE(pl, nullptr) << c.name;
    auto* ps = dynamic_cast<framework::PreScorePlugin*>(pl.get());
    auto* sp = dynamic_cast<framework::ScorePlugin*>(pl.get());
    std::vector<const framework::NodeInfo*> ptrs;
    for (const auto& n : infos) ptrs.push_back(&n);
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    if (c.run_prescore) {
      auto s = ps->PreScore(state, *pi, ptrs);
      EXPECT_EQ(s.code(), c.want_prescore) << c.name << ": " << s.ToString();
      if (c.want_prescore == framework::Code::kError) {
        EXPECT_EQ(s.Message().rfind("[0].", 0), 0u) << s.Message();
      }
      if (!s.IsSuccess()) continue;
    }
    std::vector<int64_t> scores;
    for (const auto& n : infos) {
      int64_t v = -1;
      ASSERT_TRUE(sp->Score(state, *pi, n, &v).IsSuccess()) << c.name;
      scores.push_back(v);
    }
    ASSERT_TRUE(sp->GetScoreExtensions()->NormalizeScore(state, *pi, ptrs, scores).IsSuccess());
    EXPECT_EQ(scores, c.want) << c.name;
  }
}

TEST(NodeAffinityTest, IsSchedulableAfterNodeChange) {
  const api::Pod pod = PodBuilder("p").NodeAffinityIn("foo", {"bar"}).Obj();
  const api::Node plain = NodeWithLabels("n", {});
  const api::Node foo_bar = NodeWithLabels("n", {{"foo", "bar"}});
  const api::Node k_v = NodeWithLabels("n", {{"k", "v"}});
  api::Node plain_capacity = plain;
  plain_capacity.status.allocatable["cpu"] = phalanx::testing::Q("1");
  struct Case {
    const char* name;
    std::string args;
    const api::Node* old_node;
    const api::Node* new_node;
    framework::QueueingHint want;
  };
  const Case cases[] = {
      {"skip-queue-on-add", "", nullptr, &plain, framework::QueueingHint::kQueueSkip},
      {"queue-on-add", "", nullptr, &foo_bar, framework::QueueingHint::kQueue},
      {"skip-unrelated-changes", "", &plain, &plain_capacity, framework::QueueingHint::kQueueSkip},
      {"skip-unrelated-changes-on-labels", "", &plain, &k_v, framework::QueueingHint::kQueueSkip},
      {"skip-labels-changes-on-node-from-suitable-to-unsuitable", "", &foo_bar, &k_v,
       framework::QueueingHint::kQueueSkip},
      {"queue-on-labels-change-makes-pod-schedulable", "", &plain, &foo_bar,
       framework::QueueingHint::kQueue},
      {"skip-queue-on-add-scheduler-enforced-node-affinity",
       "addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}",
       nullptr, &plain, framework::QueueingHint::kQueueSkip},
      {"queue-on-add-scheduler-enforced-node-affinity",
       "addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}",
       nullptr, &foo_bar, framework::QueueingHint::kQueue},
  };
  for (const auto& c : cases) {
    fake::FakeHandle h;
    auto pl = NewPlugin(c.args, h);
    ASSERT_NE(pl, nullptr) << c.name;
    auto events = dynamic_cast<framework::EnqueueExtensions*>(pl.get())->EventsToRegister();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].event.resource, framework::EventResource::kNode);
    EXPECT_EQ(events[0].event.action, framework::kAdd | framework::kUpdateNodeLabel);
    framework::EventObjects objs;
    objs.old_node = c.old_node;
    objs.new_node = c.new_node;
    EXPECT_EQ(events[0].hint(pod, objs), c.want) << c.name;
  }
}

TEST(NodeAffinityTest, Args) {
  struct Case {
    const char* name;
    std::string yaml;
    std::string want_error_prefix;  // "" = ok
  };
  const Case cases[] = {
      {"empty map", "{}", ""},
      {"kind and apiVersion are accepted",
       "{apiVersion: kubescheduler.config.k8s.io/v1, kind: NodeAffinityArgs}", ""},
      {"valid added affinity", kAddedZoneBar, ""},
      {"unknown top-level field", "{foo: 1}", "NodeAffinityArgs: unknown field \"foo\""},
      {"unknown nested field", "{addedAffinity: {bar: 1}}",
       "NodeAffinityArgs: unknown field \"addedAffinity.bar\""},
      {"wrong kind", "{kind: NodeResourcesFitArgs}",
       "NodeAffinityArgs: want args of kind NodeAffinityArgs, got NodeResourcesFitArgs"},
      {"invalid operator",
       "addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: foo, operator: Foo, values: [bar]}]}]}}",
       "NodeAffinityArgs: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0]."},
      {"invalid preferred term",
       "addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, "
       "preference: {matchExpressions: [{key: foo, operator: Exists, values: [bar]}]}}]}",
       "NodeAffinityArgs: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."},
      {"non-integer weight",
       "addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: x}]}",
       "NodeAffinityArgs: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
       "weight: Invalid value: \"x\": must be an integer"},
  };
  for (const auto& c : cases) {
    YAML::Node n = YAML::Load(c.yaml);
    auto parsed = ParseNodeAffinityArgs(&n);
    if (c.want_error_prefix.empty()) {
      EXPECT_TRUE(parsed.ok()) << c.name << ": " << parsed.status().ToString();
    } else {
      ASSERT_FALSE(parsed.ok()) << c.name;
      EXPECT_EQ(parsed.status().code(), framework::Code::kError);
      EXPECT_EQ(parsed.status().Message().rfind(c.want_error_prefix, 0), 0u)
          << c.name << ": " << parsed.status().Message();
    }
  }
  auto defaults = ParseNodeAffinityArgs(nullptr);
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults.value().added_required.has_value());
  EXPECT_TRUE(defaults.value().added_preferred.empty());
}

}  // namespace
}  // namespace phalanx::plugins::nodeaffinity
