// Ported from upstream interpodaffinity/{filtering,scoring,plugin}_test.go
// (TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes,
// TestPreFilterStateAddRemovePod, TestPreferredAffinity,
// TestPreferredAffinityWithHardPodAffinitySymmetricWeight,
// Test_isSchedulableAfterAssignedPodChange, Test_isSchedulableAfterNodeChange) plus args
// decoding, matchLabelKeys/mismatchLabelKeys and the namespace-lister-less behaviour.
#include "plugins/interpodaffinity/interpod_affinity.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <optional>

#include "plugins/parallel_equivalence_test.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

// Test tables leave trailing optional fields out.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::interpodaffinity {
namespace {

using framework::Code;
using phalanx::testing::AffinityTerm;
using phalanx::testing::MakeLabelSelector;
using phalanx::testing::PodBuilder;
using phalanx::testing::SelectorDoesNotExist;
using phalanx::testing::SelectorExists;
using phalanx::testing::SelectorIn;
using phalanx::testing::SelectorNotIn;

using Labels = std::map<std::string, std::string>;

api::Node Node(const std::string& name, Labels labels) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  return n;
}

// Pods are placed on the node named by spec.nodeName; pods on other nodes are dropped.
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

std::shared_ptr<MapNamespaceLister> TeamNamespaces() {
  auto l = std::make_shared<MapNamespaceLister>();
  auto add = [&](const std::string& name, Labels labels) {
    api::Namespace ns;
    ns.metadata.name = name;
    ns.metadata.labels = std::move(labels);
    l->Upsert(ns);
  };
  add("subteam1.team1", {{"team", "team1"}});
  add("subteam2.team1", {{"team", "team1"}});
  add("subteam1.team2", {{"team", "team2"}});
  add("subteam2.team2", {{"team", "team2"}});
  add("default", {});
  add("NS1", {});
  return l;
}

struct Env {
  fake::FakeHandle handle;
  std::unique_ptr<InterPodAffinity> pl;
};

std::unique_ptr<Env> MakeEnv(const std::vector<api::Node>& nodes, const std::vector<api::Pod>& pods,
                             InterPodAffinityArgs args = {}, bool with_namespaces = true) {
  auto env = std::make_unique<Env>();
  env->handle.SetNodes(NodeInfos(nodes, pods));
  env->pl = std::make_unique<InterPodAffinity>(args, env->handle);
  if (with_namespaces) env->pl->SetNamespaceLister(TeamNamespaces());
  return env;
}

framework::PodInfoPtr Info(const api::Pod& p) {
  return framework::PodInfo::Make(std::make_shared<api::Pod>(p));
}

struct Want {
  Code code = Code::kSuccess;
  std::string reason;
};
Want Ok() { return {}; }
Want AffFail() {
  return {Code::kUnschedulableAndUnresolvable, std::string(kErrReasonAffinityRulesNotMatch)};
}
Want AntiFail() { return {Code::kUnschedulable, std::string(kErrReasonAntiAffinityRulesNotMatch)}; }
Want ExistingFail() {
  return {Code::kUnschedulable, std::string(kErrReasonExistingAntiAffinityRulesNotMatch)};
}

void ExpectStatus(const framework::Status& got, const Want& want, const std::string& where) {
  EXPECT_EQ(got.code(), want.code) << where << ": " << got.ToString();
  if (want.code != Code::kSuccess && !want.reason.empty()) {
    EXPECT_EQ(got.reasons(), std::vector<std::string>{want.reason}) << where;
  }
}

api::PodAffinityTerm Term(std::vector<api::LabelSelectorRequirement> exprs, std::string topology,
                          std::vector<std::string> namespaces = {},
                          std::optional<api::LabelSelector> ns_selector = std::nullopt) {
  api::PodAffinityTerm t = AffinityTerm(std::move(exprs), std::move(topology));
  t.namespaces = std::move(namespaces);
  t.namespace_selector = std::move(ns_selector);
  return t;
}

const Labels kPodLabel = {{"service", "securityscan"}};
const Labels kPodLabel2 = {{"security", "S1"}};

PodBuilder P(const std::string& name = "p", const Labels& labels = {}) {
  PodBuilder b(name);
  for (const auto& [k, v] : labels) b.Label(k, v);
  return b;
}

// ---------------------------------------------------------------------------------------
// Filter

struct SingleNodeCase {
  std::string name;
  api::Pod pod;
  std::vector<api::Pod> pods;
  Code want_prefilter = Code::kSuccess;
  Want want_filter;
  std::string want_prefilter_msg;  // substring
};

TEST(InterPodAffinityFilterTest, RequiredAffinitySingleNode) {
  const api::Pod existing = P("e", kPodLabel).NodeName("node1").Obj();
  const api::Node node1 = Node("node1", {{"region", "r1"}, {"zone", "z11"}});
  const api::LabelSelector team1 = MakeLabelSelector({}, {SelectorIn("team", {"team1"})});
  const auto in_service = SelectorIn("service", {"securityscan", "value2"});

  std::vector<SingleNodeCase> cases = {
      {"A pod that has no required pod affinity scheduling rules can schedule onto a node with "
       "no existing pods",
       P().Obj(),
       {},
       Code::kSkip},
      {"satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
       "operator that matches the existing pod",
       P("p", kPodLabel2).PodAffinityIn("service", "region", {"securityscan", "value2"}).Obj(),
       {existing}},
      {"satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity "
       "using not in operator in labelSelector that matches the existing pod",
       P("p", kPodLabel2).PodAffinityNotIn("service", "region", {"securityscan3", "value3"}).Obj(),
       {existing}},
      {"Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
       P("p", kPodLabel2).PodAffinity(Term({in_service}, "", {"DiffNameSpace"})).Obj(),
       {P("e", kPodLabel).Namespace("ns").NodeName("node1").Obj()},
       Code::kSuccess,
       AffFail()},
      {"Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
       P("p", kPodLabel).PodAffinityIn("service", "", {"antivirusscan", "value2"}).Obj(),
       {existing},
       Code::kSuccess,
       AffFail()},
      {"satisfies the PodAffinity with different label Operators in multiple "
       "RequiredDuringSchedulingIgnoredDuringExecution",
       P("p", kPodLabel2)
           .PodAffinity(
               Term({SelectorExists("service"), SelectorDoesNotExist("wrongkey")}, "region"))
           .PodAffinity(Term(
               {SelectorIn("service", {"securityscan"}), SelectorNotIn("service", {"WrongValue"})},
               "region"))
           .Obj(),
       {existing}},
      {"The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
       "schedule onto the node because one of the matchExpression item don't match.",
       P("p", kPodLabel2)
           .PodAffinity(
               Term({SelectorExists("service"), SelectorDoesNotExist("wrongkey")}, "region"))
           .PodAffinity(Term(
               {SelectorIn("service", {"securityscan2"}), SelectorNotIn("service", {"WrongValue"})},
               "region"))
           .Obj(),
       {existing},
       Code::kSuccess,
       AffFail()},
      {"satisfies the PodAffinity and PodAntiAffinity with the existing pod",
       P("p", kPodLabel2)
           .PodAffinityIn("service", "region", {"securityscan", "value2"})
           .PodAntiAffinityIn("service", "node", {"antivirusscan", "value2"})
           .Obj(),
       {existing}},
      {"satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the "
       "existing pod",
       P("p", kPodLabel2)
           .PodAffinityIn("service", "region", {"securityscan", "value2"})
           .PodAntiAffinityIn("service", "node", {"antivirusscan", "value2"})
           .Obj(),
       {P("e", kPodLabel)
            .NodeName("node1")
            .PodAntiAffinityIn("service", "node", {"antivirusscan", "value2"})
            .Obj()}},
      {"satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
       P("p", kPodLabel2)
           .PodAffinityIn("service", "region", {"securityscan", "value2"})
           .PodAntiAffinityIn("service", "zone", {"securityscan", "value2"})
           .Obj(),
       {existing},
       Code::kSuccess,
       AntiFail()},
      {"satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity "
       "symmetry with the existing pod",
       P("p", kPodLabel)
           .PodAffinityIn("service", "region", {"securityscan", "value2"})
           .PodAntiAffinityIn("service", "node", {"antivirusscan", "value2"})
           .Obj(),
       {P("e", kPodLabel)
            .NodeName("node1")
            .PodAntiAffinityIn("service", "zone", {"securityscan", "value2"})
            .Obj()},
       Code::kSuccess,
       ExistingFail()},
      {"pod matches its own Label in PodAffinity and that matches the existing pod Labels",
       P("p", kPodLabel).PodAffinityNotIn("service", "region", {"securityscan", "value2"}).Obj(),
       {P("e", kPodLabel).NodeName("node2").Obj()},
       Code::kSuccess,
       AffFail()},
      {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
       "constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
       P("p", kPodLabel).Obj(),
       {P("e", kPodLabel)
            .NodeName("node1")
            .PodAntiAffinityIn("service", "zone", {"securityscan", "value2"})
            .Obj()},
       Code::kSuccess,
       ExistingFail()},
      {"verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
       "constraints. satisfy PodAntiAffinity symmetry with the existing pod",
       P("p", kPodLabel).Obj(),
       {P("e", kPodLabel)
            .NodeName("node1")
            .PodAntiAffinityNotIn("service", "zone", {"securityscan", "value2"})
            .Obj()},
       Code::kSkip},
      {"satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
       "symmetry with incoming pod",
       P("p", kPodLabel)
           .PodAntiAffinityExists("service", "region")
           .PodAntiAffinityExists("security", "region")
           .Obj(),
       {P("e", kPodLabel2).NodeName("node1").PodAntiAffinityExists("security", "zone").Obj()},
       Code::kSuccess,
       AntiFail()},
      {"PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each "
       "other on AffinityTerms",
       P("p", kPodLabel)
           .PodAntiAffinityExists("service", "zone")
           .PodAntiAffinityExists("security", "zone")
           .Obj(),
       {P("e", kPodLabel2).NodeName("node1").PodAntiAffinityExists("security", "zone").Obj()},
       Code::kSuccess,
       AntiFail()},
      {"PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each "
       "other on AffinityTerms",
       P("p", kPodLabel2).PodAntiAffinityExists("security", "zone").Obj(),
       {P("e", kPodLabel)
            .NodeName("node1")
            .PodAntiAffinityExists("service", "zone")
            .PodAntiAffinityExists("security", "zone")
            .Obj()},
       Code::kSuccess,
       ExistingFail()},
      {"PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each "
       "other on AffinityTerms",
       P("p", {{"abc", ""}, {"xyz", ""}})
           .PodAntiAffinityExists("abc", "zone")
           .PodAntiAffinityExists("def", "zone")
           .Obj(),
       {P("e", {{"def", ""}, {"xyz", ""}})
            .NodeName("node1")
            .PodAntiAffinityExists("abc", "zone")
            .PodAntiAffinityExists("def", "zone")
            .Obj()},
       Code::kSuccess,
       AntiFail()},
      {"PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each "
       "other on AffinityTerms",
       P("p", {{"def", ""}, {"xyz", ""}})
           .PodAntiAffinityExists("abc", "zone")
           .PodAntiAffinityExists("def", "zone")
           .Obj(),
       {P("e", {{"abc", ""}, {"xyz", ""}})
            .NodeName("node1")
            .PodAntiAffinityExists("abc", "zone")
            .PodAntiAffinityExists("def", "zone")
            .Obj()},
       Code::kSuccess,
       AntiFail()},
      {"PodAffinity fails PreFilter with an invalid affinity label syntax",
       P("p", kPodLabel)
           .PodAffinityIn("service", "region", {"{{.bad-value.}}"})
           .PodAffinityIn("service", "node", {"antivirusscan", "value2"})
           .Obj(),
       {},
       Code::kUnschedulableAndUnresolvable,
       Ok(),
       "parsing pod: requiredAffinityTerms: matchExpressions[0].values[0]: Invalid value: "
       "\"{{.bad-value.}}\""},
      {"PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
       P("p", kPodLabel)
           .PodAntiAffinityIn("service", "region", {"foo"})
           .PodAntiAffinityIn("service", "node", {"{{.bad-value.}}"})
           .Obj(),
       {},
       Code::kUnschedulableAndUnresolvable,
       Ok(),
       "parsing pod: requiredAntiAffinityTerms: matchExpressions[0].values[0]: Invalid value: "
       "\"{{.bad-value.}}\""},
      {"affinity with NamespaceSelector",
       P("p", kPodLabel2).PodAffinity(Term({in_service}, "region", {}, team1)).Obj(),
       {P("e", kPodLabel).Namespace("subteam1.team1").NodeName("node1").Obj()}},
      {"affinity with non-matching NamespaceSelector",
       P("p", kPodLabel2).PodAffinity(Term({in_service}, "region", {}, team1)).Obj(),
       {P("e", kPodLabel).Namespace("subteam1.team2").NodeName("node1").Obj()},
       Code::kSuccess,
       AffFail()},
      {"anti-affinity with matching NamespaceSelector",
       P("p", kPodLabel2)
           .Namespace("subteam1.team1")
           .PodAntiAffinity(Term({in_service}, "zone", {}, team1))
           .Obj(),
       {P("e", kPodLabel).Namespace("subteam2.team1").NodeName("node1").Obj()},
       Code::kSuccess,
       AntiFail()},
      {"anti-affinity with matching all NamespaceSelector",
       P("p", kPodLabel2)
           .Namespace("subteam1.team1")
           .PodAntiAffinity(Term({in_service}, "zone", {}, api::LabelSelector{}))
           .Obj(),
       {P("e", kPodLabel).Namespace("subteam2.team1").NodeName("node1").Obj()},
       Code::kSuccess,
       AntiFail()},
      {"anti-affinity with non-matching NamespaceSelector",
       P("p", kPodLabel2)
           .Namespace("subteam1.team1")
           .PodAntiAffinity(Term({in_service}, "zone", {}, team1))
           .Obj(),
       {P("e", kPodLabel).Namespace("subteam1.team2").NodeName("node1").Obj()}},
      {"existing pod's anti-affinity with namespaceSelector matches the incoming pod's "
       "namespace labels",
       P("p", kPodLabel).Namespace("subteam1.team1").Obj(),
       {P("e", kPodLabel2)
            .Namespace("subteam1.team2")
            .NodeName("node1")
            .PodAntiAffinity(Term({SelectorExists("service")}, "zone", {}, team1))
            .Obj()},
       Code::kSuccess,
       ExistingFail()},
      {"existing pod's anti-affinity with namespaceSelector doesn't match the incoming pod's "
       "namespace labels",
       P("p", kPodLabel).Namespace("subteam1.team2").Obj(),
       {P("e", kPodLabel2)
            .Namespace("subteam1.team2")
            .NodeName("node1")
            .PodAntiAffinity(Term({SelectorExists("service")}, "zone", {"other"}, team1))
            .Obj()},
       Code::kSkip},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv({node1}, tc.pods);
    framework::CycleState state;
    auto pi = Info(tc.pod);
    framework::Status s = env->pl->PreFilter(state, *pi, nullptr);
    ASSERT_EQ(s.code(), tc.want_prefilter) << s.ToString();
    if (!tc.want_prefilter_msg.empty()) {
      EXPECT_NE(s.Message().find(tc.want_prefilter_msg), std::string::npos) << s.Message();
    }
    if (!s.IsSuccess()) continue;
    ExpectStatus(env->pl->Filter(state, *pi, *env->handle.SnapshotSharedLister().Get("node1")),
                 tc.want_filter, "node1");
  }
}

struct MultiNodeCase {
  std::string name;
  api::Pod pod;
  std::vector<api::Pod> pods;
  std::vector<api::Node> nodes;
  std::vector<Want> want;  // per node
  Code want_prefilter = Code::kSuccess;
};

TEST(InterPodAffinityFilterTest, RequiredAffinityMultipleNodes) {
  const Labels rg_china = {{"region", "China"}};
  const Labels rg_china_az1 = {{"region", "China"}, {"az", "az1"}};
  const Labels rg_india = {{"region", "India"}};
  auto rzh = [](const std::string& r, const std::string& z, const std::string& h) {
    return Labels{{"region", r}, {"zone", z}, {"hostname", h}};
  };
  std::vector<MultiNodeCase> cases = {
      {"A pod can be scheduled onto all the nodes that have the same topology key & label value "
       "with one of them has an existing pod that matches the affinity rules",
       P().PodAffinityIn("foo", "region", {"bar"}).Obj(),
       {P("p1", {{"foo", "bar"}}).NodeName("node1").Obj()},
       {Node("node1", rg_china), Node("node2", rg_china_az1), Node("node3", rg_india)},
       {Ok(), Ok(), AffFail()}},
      {"The affinity rule is to schedule all of the pods of this collection to the same zone. "
       "The first pod of the collection should not be blocked from being scheduled onto any "
       "node, even there's no existing pod that matches the rule anywhere.",
       P("p", {{"foo", "bar"}, {"service", "securityscan"}})
           .PodAffinityIn("foo", "zone", {"bar"})
           .PodAffinityIn("service", "zone", {"securityscan"})
           .Obj(),
       {P("p1", {{"foo", "bar"}}).NodeName("nodeA").Obj()},
       {Node("nodeA", {{"zone", "az1"}, {"hostname", "h1"}}),
        Node("nodeB", {{"zone", "az2"}, {"hostname", "h2"}})},
       {Ok(), Ok()}},
      {"The first pod of the collection can only be scheduled on nodes labelled with the "
       "requested topology keys",
       P("p", {{"foo", "bar"}, {"service", "securityscan"}})
           .PodAffinityIn("foo", "zone", {"bar"})
           .PodAffinityIn("service", "zone", {"securityscan"})
           .Obj(),
       {P("p1", {{"foo", "bar"}}).NodeName("nodeA").Obj()},
       {Node("nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}),
        Node("nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}})},
       {AffFail(), AffFail()}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
       "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
       P().PodAntiAffinityIn("foo", "region", {"abc"}).Obj(),
       {P("e", {{"foo", "abc"}}).NodeName("nodeA").Obj()},
       {Node("nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}),
        Node("nodeB", {{"region", "r1"}, {"hostname", "nodeB"}})},
       {AntiFail(), AntiFail()}},
      {"This test ensures that anti-affinity matches a pod when any term of the anti-affinity "
       "rule matches a pod.",
       P().PodAntiAffinityIn("foo", "region", {"abc"})
           .PodAntiAffinityIn("service", "zone", {"securityscan"})
           .Obj(),
       {P("e", {{"foo", "abc"}, {"service", "securityscan"}}).NodeName("nodeA").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB"))},
       {AntiFail(), AntiFail()}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
       "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB "
       "but can be scheduled onto nodeC",
       P().PodAntiAffinityIn("foo", "region", {"abc"}).Obj(),
       {P("e", {{"foo", "abc"}}).NodeName("nodeA").Obj()},
       {Node("nodeA", rg_china), Node("nodeB", rg_china_az1), Node("nodeC", rg_india)},
       {AntiFail(), AntiFail(), Ok()}},
      {"NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
       "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, "
       "but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod "
       "affinity rule but in different namespace)",
       P("p", {{"foo", "123"}}).Namespace("NS1").PodAntiAffinityIn("foo", "region", {"bar"}).Obj(),
       {P("e1", {{"foo", "bar"}}).Namespace("NS1").NodeName("nodeA").Obj(),
        P("e2")
            .Namespace("NS2")
            .NodeName("nodeC")
            .PodAntiAffinityIn("foo", "region", {"123"})
            .Obj()},
       {Node("nodeA", rg_china), Node("nodeB", rg_china_az1), Node("nodeC", rg_india)},
       {AntiFail(), AntiFail(), Ok()}},
      {"Test existing pod's anti-affinity: if an existing pod has a term with invalid "
       "topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the "
       "term is also checked",
       P("p", {{"foo", ""}}).Obj(),
       {P("e").NodeName("nodeA").PodAntiAffinityExists("foo", "invalid-node-label").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z1", "nodeB"))},
       {Ok(), Ok()},
       Code::kSkip},
      {"Test incoming pod's anti-affinity: even if labelSelector matches, we still check if "
       "topologyKey matches",
       P().NodeName("nodeA").PodAntiAffinityExists("foo", "invalid-node-label").Obj(),
       {P("e", {{"foo", ""}}).NodeName("nodeA").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z1", "nodeB"))},
       {Ok(), Ok()}},
      {"Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it "
       "violates each existingPod's terms on all nodes",
       P("p", {{"foo", ""}, {"bar", ""}}).Obj(),
       {P("e1").NodeName("nodeA").PodAntiAffinityExists("foo", "zone").Obj(),
        P("e2").NodeName("nodeA").PodAntiAffinityExists("bar", "region").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB"))},
       {ExistingFail(), ExistingFail()}},
      {"Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at "
       "least violates one anti-affinity rule of existingPod",
       P().PodAntiAffinityExists("foo", "zone").PodAntiAffinityExists("bar", "region").Obj(),
       {P("e1", {{"foo", ""}}).NodeName("nodeA").Obj(),
        P("e2", {{"bar", ""}}).NodeName("nodeB").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB"))},
       {AntiFail(), AntiFail()}},
      {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, "
       "it's counted as a single term match - case when one term has invalid topologyKey",
       P("p", {{"foo", ""}, {"bar", ""}}).Obj(),
       {P("e")
            .NodeName("nodeA")
            .PodAntiAffinityExists("foo", "invalid-node-label")
            .PodAntiAffinityExists("bar", "zone")
            .Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB"))},
       {ExistingFail(), Ok()}},
      {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, "
       "it's counted as a single term match - case when one term has invalid topologyKey",
       P().PodAntiAffinityExists("foo", "invalid-node-label")
           .PodAntiAffinityExists("bar", "zone")
           .Obj(),
       {P("podA", {{"foo", ""}, {"bar", ""}}).NodeName("nodeA").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB"))},
       {AntiFail(), Ok()}},
      {"Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, "
       "it's counted as a single term match - case when all terms have valid topologyKey",
       P("p", {{"foo", ""}, {"bar", ""}}).Obj(),
       {P("e")
            .NodeName("nodeA")
            .PodAntiAffinityExists("foo", "region")
            .PodAntiAffinityExists("bar", "zone")
            .Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB"))},
       {ExistingFail(), ExistingFail()}},
      {"Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, "
       "it's counted as a single term match - case when all terms have valid topologyKey",
       P().PodAntiAffinityExists("foo", "region").PodAntiAffinityExists("bar", "zone").Obj(),
       {P("e", {{"foo", ""}, {"bar", ""}}).NodeName("nodeA").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB"))},
       {AntiFail(), AntiFail()}},
      {"Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
       "anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
       P("p", {{"foo", ""}, {"bar", ""}}).Obj(),
       {P("e1")
            .NodeName("nodeA")
            .PodAntiAffinityExists("foo", "zone")
            .PodAntiAffinityExists("labelA", "zone")
            .Obj(),
        P("e2")
            .NodeName("nodeB")
            .PodAntiAffinityExists("bar", "zone")
            .PodAntiAffinityExists("labelB", "zone")
            .Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB")),
        Node("nodeC", rzh("r1", "z3", "nodeC"))},
       {ExistingFail(), ExistingFail(), Ok()}},
      {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check "
       "if all topologyKeys match",
       P().PodAffinityExists("foo", "region").PodAffinityExists("bar", "zone").Obj(),
       {P("pod1", {{"foo", ""}, {"bar", ""}}).NodeName("nodeA").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z1", "nodeB"))},
       {Ok(), Ok()}},
      {"Test incoming pod's affinity: firstly check if all affinityTerms match, and then check "
       "if all topologyKeys match, and the match logic should be satisfied on the same pod",
       P().PodAffinityExists("foo", "region").PodAffinityExists("bar", "zone").Obj(),
       {P("pod1", {{"foo", ""}}).NodeName("nodeA").Obj(),
        P("pod2", {{"bar", ""}}).NodeName("nodeB").Obj()},
       {Node("nodeA", rzh("r1", "z1", "nodeA")), Node("nodeB", rzh("r1", "z2", "nodeB"))},
       {AffFail(), AffFail()}},
  };
  // matchLabelKeys / mismatchLabelKeys (merged into the selector with the owner's values).
  {
    api::PodAffinityTerm t = Term({SelectorExists("app")}, "region");
    t.match_label_keys = {"version"};
    cases.push_back({"matchLabelKeys: only pods with the same version count",
                     P("p", {{"app", "web"}, {"version", "v1"}}).PodAffinity(t).Obj(),
                     {P("e1", {{"app", "web"}, {"version", "v2"}}).NodeName("node1").Obj(),
                      P("e2", {{"app", "web"}, {"version", "v1"}}).NodeName("node2").Obj()},
                     {Node("node1", {{"region", "r1"}}), Node("node2", {{"region", "r2"}})},
                     {AffFail(), Ok()}});
    api::PodAffinityTerm a = Term({SelectorExists("app")}, "hostname");
    a.mismatch_label_keys = {"tenant"};
    cases.push_back(
        {"mismatchLabelKeys: only pods of other tenants are avoided",
         P("p", {{"app", "web"}, {"tenant", "a"}}).PodAntiAffinity(a).Obj(),
         {P("e1", {{"app", "web"}, {"tenant", "a"}}).NodeName("node1").Obj(),
          P("e2", {{"app", "web"}, {"tenant", "b"}}).NodeName("node2").Obj()},
         {Node("node1", {{"hostname", "node1"}}), Node("node2", {{"hostname", "node2"}})},
         {Ok(), AntiFail()}});
    api::PodAffinityTerm e = Term({SelectorExists("app")}, "hostname");
    e.match_label_keys = {"tenant"};
    cases.push_back(
        {"matchLabelKeys of an existing pod's anti-affinity use the existing pod's labels",
         P("p", {{"app", "web"}, {"tenant", "a"}}).Obj(),
         {P("e1", {{"tenant", "a"}}).NodeName("node1").PodAntiAffinity(e).Obj(),
          P("e2", {{"tenant", "b"}}).NodeName("node2").PodAntiAffinity(e).Obj()},
         {Node("node1", {{"hostname", "node1"}}), Node("node2", {{"hostname", "node2"}})},
         {ExistingFail(), Ok()}});
  }
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv(tc.nodes, tc.pods);
    framework::CycleState state;
    auto pi = Info(tc.pod);
    framework::Status s = env->pl->PreFilter(state, *pi, nullptr);
    ASSERT_EQ(s.code(), tc.want_prefilter) << s.ToString();
    if (s.IsSkip()) continue;
    ASSERT_EQ(tc.want.size(), tc.nodes.size());
    for (size_t i = 0; i < tc.nodes.size(); ++i) {
      const auto* ni = env->handle.SnapshotSharedLister().Get(tc.nodes[i].metadata.name);
      ExpectStatus(env->pl->Filter(state, *pi, *ni), tc.want[i], tc.nodes[i].metadata.name);
    }
  }
}

TEST(InterPodAffinityFilterTest, NamespaceSelectorWithoutLister) {
  // Without a namespace lister an incoming pod's non-empty namespaceSelector selects no
  // namespace; an empty one still selects all.
  const api::Node node1 = Node("node1", {{"region", "r1"}});
  const auto in_service = SelectorIn("service", {"securityscan"});
  const api::Pod existing = P("e", kPodLabel).Namespace("subteam1.team1").NodeName("node1").Obj();
  struct Case {
    std::string name;
    std::optional<api::LabelSelector> ns_selector;
    Want want;
  } cases[] = {
      {"non-empty selector", MakeLabelSelector({{"team", "team1"}}), AffFail()},
      {"empty selector", api::LabelSelector{}, Ok()},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv({node1}, {existing}, {}, /*with_namespaces=*/false);
    framework::CycleState state;
    auto pi = Info(
        P("p", kPodLabel2).PodAffinity(Term({in_service}, "region", {}, tc.ns_selector)).Obj());
    ASSERT_TRUE(env->pl->PreFilter(state, *pi, nullptr).IsSuccess());
    ExpectStatus(env->pl->Filter(state, *pi, *env->handle.SnapshotSharedLister().Get("node1")),
                 tc.want, "node1");
  }
}

TEST(InterPodAffinityFilterTest, FilterWithoutPreFilter) {
  fake::FakeHandle h;
  InterPodAffinity pl({}, h);
  framework::CycleState state;
  framework::NodeInfo ni(std::make_shared<api::Node>(Node("n", {})));
  framework::Status s = pl.Filter(state, *Info(P().Obj()), ni);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message(), "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

TEST(InterPodAffinityFilterTest, PreFilterStateAddRemovePod) {
  const Labels label1 = {{"region", "r1"}, {"zone", "z11"}};
  const Labels label2 = {{"region", "r1"}, {"zone", "z12"}};
  const Labels label3 = {{"region", "r2"}, {"zone", "z21"}};
  const Labels selector1 = {{"foo", "bar"}};
  const api::PodAffinityTerm foo_bar = Term({SelectorIn("foo", {"bar"})}, "region");
  const std::vector<api::PodAffinityTerm> complex = {
      Term({SelectorIn("foo", {"bar", "buzz"})}, "region"),
      Term({SelectorNotIn("service", {"bar", "security", "test"})}, "zone")};
  auto with_anti = [](PodBuilder b, const std::vector<api::PodAffinityTerm>& terms) {
    for (const auto& t : terms) b.PodAntiAffinity(t);
    return b;
  };
  auto with_aff = [](PodBuilder b, const std::vector<api::PodAffinityTerm>& terms) {
    for (const auto& t : terms) b.PodAffinity(t);
    return b;
  };
  using Map = PreFilterCounts::Map;
  struct Case {
    std::string name;
    api::Pod pending;
    api::Pod added;
    std::vector<api::Pod> existing;
    Map want_existing_anti;
    Map want_anti;
    Map want_affinity;
  };
  const std::vector<api::Node> nodes = {Node("nodeA", label1), Node("nodeB", label2),
                                        Node("nodeC", label3)};
  std::vector<Case> cases = {
      {"preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
       with_anti(P("pending", selector1), {foo_bar}).Obj(),
       with_anti(P("addedPod", selector1).NodeName("nodeB"), {foo_bar}).Obj(),
       {P("p1", selector1).NodeName("nodeA").Obj(),
        with_anti(P("p2").NodeName("nodeC"), {foo_bar}).Obj()},
       {{{"region", "r1"}, 1}, {{"region", "r2"}, 1}},
       {{{"region", "r1"}, 2}},
       {}},
      {"preFilterState anti-affinity terms are updated correctly after adding and removing a "
       "pod (complex)",
       with_anti(P("pending", selector1), complex).Obj(),
       with_anti(P("addedPod", selector1).NodeName("nodeA"), complex).Obj(),
       {P("p1", selector1).NodeName("nodeA").Obj(),
        with_anti(P("p2").NodeName("nodeC"), {foo_bar}).Obj()},
       {{{"region", "r1"}, 1}, {{"region", "r2"}, 1}, {{"zone", "z11"}, 1}},
       {{{"region", "r1"}, 2}, {{"zone", "z11"}, 2}, {{"zone", "z21"}, 1}},
       {}},
      {"preFilterState matching pod affinity terms are updated correctly after adding and "
       "removing a pod",
       with_aff(P("pending", selector1), complex).Obj(),
       with_aff(P("addedPod", selector1).NodeName("nodeB"), complex).Obj(),
       {P("p1", selector1).NodeName("nodeA").Obj(),
        with_anti(P("p2").NodeName("nodeC"), {foo_bar}).Obj()},
       {{{"region", "r2"}, 1}},
       {},
       {{{"region", "r1"}, 2}, {{"zone", "z11"}, 1}, {{"zone", "z12"}, 1}}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv(nodes, tc.existing);
    framework::CycleState state;
    auto pi = Info(tc.pending);
    ASSERT_TRUE(env->pl->PreFilter(state, *pi, nullptr).IsSuccess());
    const PreFilterCounts before = *GetPreFilterCounts(state);
    const auto* node = env->handle.SnapshotSharedLister().Get(tc.added.spec.node_name);
    auto cloned = state.Clone();
    ASSERT_TRUE(env->pl->AddPod(state, *pi, Info(tc.added), *node).IsSuccess());
    const PreFilterCounts after = *GetPreFilterCounts(state);
    EXPECT_EQ(after.existing_anti_affinity, tc.want_existing_anti);
    EXPECT_EQ(after.anti_affinity, tc.want_anti);
    EXPECT_EQ(after.affinity, tc.want_affinity);
    // The clone taken before AddPod is unaffected.
    EXPECT_EQ(GetPreFilterCounts(*cloned)->anti_affinity, before.anti_affinity);
    ASSERT_TRUE(env->pl->RemovePod(state, *pi, Info(tc.added), *node).IsSuccess());
    const PreFilterCounts removed = *GetPreFilterCounts(state);
    EXPECT_EQ(removed.existing_anti_affinity, before.existing_anti_affinity);
    EXPECT_EQ(removed.anti_affinity, before.anti_affinity);
    EXPECT_EQ(removed.affinity, before.affinity);
  }
}

TEST(InterPodAffinityFilterTest, AddPodMakesNodeInfeasible) {
  // Preemption dry-run: removing the only anti-affinity victim makes the node feasible.
  const api::Node n = Node("n1", {{"hostname", "n1"}});
  const api::Pod victim = P("victim", {{"app", "db"}}).NodeName("n1").Obj();
  auto env = MakeEnv({n}, {victim});
  framework::CycleState state;
  auto pi = Info(P("p").PodAntiAffinityIn("app", "hostname", {"db"}).Obj());
  ASSERT_TRUE(env->pl->PreFilter(state, *pi, nullptr).IsSuccess());
  const auto* ni = env->handle.SnapshotSharedLister().Get("n1");
  ExpectStatus(env->pl->Filter(state, *pi, *ni), AntiFail(), "before");
  ASSERT_TRUE(env->pl->RemovePod(state, *pi, Info(victim), *ni).IsSuccess());
  ExpectStatus(env->pl->Filter(state, *pi, *ni), Ok(), "after remove");
  ASSERT_TRUE(env->pl->AddPod(state, *pi, Info(victim), *ni).IsSuccess());
  ExpectStatus(env->pl->Filter(state, *pi, *ni), AntiFail(), "after add");
}

// ---------------------------------------------------------------------------------------
// Score

struct ScoreCase {
  std::string name;
  api::Pod pod;
  std::vector<api::Pod> pods;
  std::vector<api::Node> nodes;
  std::vector<int64_t> want;  // normalized, aligned with nodes
  Code want_prescore = Code::kSuccess;
  std::string want_msg;  // substring of the PreScore message
  InterPodAffinityArgs args = {};
};

void RunScoreCases(const std::vector<ScoreCase>& cases) {
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto env = MakeEnv(tc.nodes, tc.pods, tc.args);
    framework::CycleState state;
    auto pi = Info(tc.pod);
    const auto& nodes = env->handle.SnapshotSharedLister().List();
    framework::Status s = env->pl->PreScore(state, *pi, nodes);
    ASSERT_EQ(s.code(), tc.want_prescore) << s.ToString();
    if (!tc.want_msg.empty()) {
      EXPECT_NE(s.Message().find(tc.want_msg), std::string::npos) << s.Message();
    }
    if (!s.IsSuccess()) continue;
    std::vector<int64_t> scores;
    for (const auto* ni : nodes) {
      int64_t score = 0;
      ASSERT_TRUE(env->pl->Score(state, *pi, *ni, &score).IsSuccess());
      scores.push_back(score);
    }
    ASSERT_TRUE(env->pl->NormalizeScore(state, *pi, nodes, scores).IsSuccess());
    EXPECT_EQ(scores, tc.want);
  }
}

api::Affinity Preferred(std::vector<api::WeightedPodAffinityTerm> aff,
                        std::vector<api::WeightedPodAffinityTerm> anti = {}) {
  api::Affinity a;
  if (!aff.empty()) {
    a.pod_affinity.emplace();
    a.pod_affinity->preferred = std::move(aff);
  }
  if (!anti.empty()) {
    a.pod_anti_affinity.emplace();
    a.pod_anti_affinity->preferred = std::move(anti);
  }
  return a;
}

api::Pod WithAffinity(api::Pod p, const api::Affinity& a) {
  p.spec.affinity = a;
  return p;
}

TEST(InterPodAffinityScoreTest, PreferredAffinity) {
  const Labels rg_china = {{"region", "China"}};
  const Labels rg_india = {{"region", "India"}};
  const Labels az1 = {{"az", "az1"}};
  const Labels az2 = {{"az", "az2"}};
  const Labels rg_china_az1 = {{"region", "China"}, {"az", "az1"}};
  const Labels s1 = {{"security", "S1"}};
  const Labels s2 = {{"security", "S2"}};
  const api::Affinity stay_with_s1_in_region =
      Preferred({{5, Term({SelectorIn("security", {"S1"})}, "region")}});
  const api::Affinity stay_with_s2_in_region =
      Preferred({{6, Term({SelectorIn("security", {"S2"})}, "region")}});
  const api::Affinity affinity3 = Preferred(
      {{8, Term({SelectorNotIn("security", {"S1"}), SelectorIn("security", {"S2"})}, "region")},
       {2, Term({SelectorExists("security"), SelectorDoesNotExist("wrongkey")}, "region")}});
  api::Affinity hard_affinity;
  hard_affinity.pod_affinity.emplace();
  hard_affinity.pod_affinity->required = {
      Term({SelectorIn("security", {"S1", "value2"})}, "region"),
      Term({SelectorExists("security"), SelectorDoesNotExist("wrongkey")}, "region")};
  const api::Affinity away_from_s1_in_az =
      Preferred({}, {{5, Term({SelectorIn("security", {"S1"})}, "az")}});
  const api::Affinity away_from_s2_in_az =
      Preferred({}, {{5, Term({SelectorIn("security", {"S2"})}, "az")}});
  const api::Affinity stay_with_s1_in_region_away_from_s2_in_az =
      Preferred({{8, Term({SelectorIn("security", {"S1"})}, "region")}},
                {{5, Term({SelectorIn("security", {"S2"})}, "az")}});
  const api::LabelSelector team1 = MakeLabelSelector({}, {SelectorIn("team", {"team1"})});
  const api::Affinity affinity_ns_selector =
      Preferred({{5, Term({SelectorIn("security", {"S1"})}, "region", {"subteam2.team2"}, team1)}});
  const api::Affinity anti_affinity_ns_selector = Preferred(
      {}, {{5, Term({SelectorIn("security", {"S1"})}, "region", {"subteam2.team2"}, team1)}});
  const api::Affinity invalid_affinity =
      Preferred({{8, Term({SelectorIn("security", {"{{.bad-value.}}"})}, "region")}});
  const api::Affinity invalid_anti_affinity =
      Preferred({}, {{5, Term({SelectorIn("security", {"{{.bad-value.}}"})}, "az")}});

  auto pod = [](const Labels& l, const std::optional<api::Affinity>& a = std::nullopt,
                const std::string& node = "", const std::string& ns = "default") {
    static int n = 0;
    api::Pod p = P("pod" + std::to_string(n++), l).Namespace(ns).NodeName(node).Obj();
    if (a) p.spec.affinity = *a;
    return p;
  };
  InterPodAffinityArgs ignore_existing;
  ignore_existing.ignore_preferred_terms_of_existing_pods = true;

  std::vector<ScoreCase> cases = {
      {"all nodes are same priority as Affinity is nil",
       pod(s1),
       {},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", az1)},
       {},
       Code::kSkip},
      {"Affinity: pod that matches topology key & pods in nodes will get high score comparing "
       "to others which doesn't match either pods in nodes or in topology key",
       pod(s1, stay_with_s1_in_region),
       {pod(s1, {}, "node1"), pod(s2, {}, "node2"), pod(s1, {}, "node3")},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", az1)},
       {100, 0, 0}},
      {"All the nodes that have the same topology key & label value with one of them has an "
       "existing pod that match the affinity rules, have the same score",
       pod({}, stay_with_s1_in_region),
       {pod(s1, {}, "node1")},
       {Node("node1", rg_china), Node("node2", rg_china_az1), Node("node3", rg_india)},
       {100, 100, 0}},
      {"Affinity: nodes in one region has more matching pods comparing to other region, so the "
       "region which has more matches will get high score",
       pod(s1, stay_with_s2_in_region),
       {pod(s2, {}, "node1"), pod(s2, {}, "node1"), pod(s2, {}, "node2"), pod(s2, {}, "node3"),
        pod(s2, {}, "node4"), pod(s2, {}, "node5")},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", rg_china),
        Node("node4", rg_china), Node("node5", rg_india)},
       {100, 0, 100, 100, 0}},
      {"Affinity: different Label operators and values for pod affinity scheduling preference, "
       "including some match failures",
       pod(s1, affinity3),
       {pod(s1, {}, "node1"), pod(s2, {}, "node2"), pod(s1, {}, "node3")},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", az1)},
       {20, 100, 0}},
      {"Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution "
       "in pod affinity symmetry",
       pod(s2),
       {pod(s1, stay_with_s1_in_region, "node1"), pod(s2, stay_with_s2_in_region, "node2")},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", az1)},
       {0, 100, 0}},
      {"Affinity symmetry with namespace selector",
       pod(s1, {}, "", "subteam1.team1"),
       {pod(s1, affinity_ns_selector, "node1"), pod(s2, stay_with_s2_in_region, "node2")},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", az1)},
       {100, 0, 0}},
      {"AntiAffinity symmetry with namespace selector",
       pod(s1, {}, "", "subteam1.team1"),
       {pod(s1, anti_affinity_ns_selector, "node1"), pod(s2, stay_with_s2_in_region, "node2")},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", az1)},
       {0, 100, 100}},
      {"Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
       "affinity symmetry",
       pod(s1),
       {pod(s1, hard_affinity, "node1"), pod(s2, hard_affinity, "node2")},
       {Node("node1", rg_china), Node("node2", rg_india), Node("node3", az1)},
       {100, 100, 0}},
      {"Anti Affinity: pod that does not match existing pods in node will get high score",
       pod(s1, away_from_s1_in_az),
       {pod(s1, {}, "node1"), pod(s2, {}, "node2")},
       {Node("node1", az1), Node("node2", rg_china)},
       {0, 100}},
      {"Anti Affinity: pod that does not match topology key & match the pods in nodes will get "
       "higher score comparing to others",
       pod(s1, away_from_s1_in_az),
       {pod(s1, {}, "node1"), pod(s1, {}, "node2")},
       {Node("node1", az1), Node("node2", rg_china)},
       {0, 100}},
      {"Anti Affinity: one node has more matching pods comparing to other node, so the node "
       "which has more unmatches will get high score",
       pod(s1, away_from_s1_in_az),
       {pod(s1, {}, "node1"), pod(s1, {}, "node1"), pod(s2, {}, "node2")},
       {Node("node1", az1), Node("node2", rg_india)},
       {0, 100}},
      {"Anti Affinity symmetry: the existing pods in node which has anti affinity match will "
       "get high score",
       pod(s2),
       {pod(s1, away_from_s2_in_az, "node1"), pod(s2, away_from_s1_in_az, "node2")},
       {Node("node1", az1), Node("node2", az2)},
       {0, 100}},
      {"Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuring"
       "Execution in both pod affinity & anti affinity",
       pod(s1, stay_with_s1_in_region_away_from_s2_in_az),
       {pod(s1, {}, "node1"), pod(s1, {}, "node2")},
       {Node("node1", rg_china), Node("node2", az1)},
       {100, 0}},
      {"Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
       "schedule and existing pods have the same labels",
       pod(s1, stay_with_s1_in_region_away_from_s2_in_az),
       {pod(s1, {}, "node1"), pod(s1, {}, "node1"), pod(s1, {}, "node2"), pod(s1, {}, "node3"),
        pod(s1, {}, "node3"), pod(s1, {}, "node4"), pod(s1, {}, "node5")},
       {Node("node1", rg_china_az1), Node("node2", rg_india), Node("node3", rg_china),
        Node("node4", rg_china), Node("node5", rg_india)},
       {100, 0, 100, 100, 0}},
      {"Affinity and Anti Affinity and symmetry: considered only preferredDuringScheduling"
       "IgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
       pod(s1, stay_with_s1_in_region_away_from_s2_in_az),
       {pod(s1, {}, "node1"), pod(s2, {}, "node2"),
        pod({}, stay_with_s1_in_region_away_from_s2_in_az, "node3"),
        pod({}, away_from_s1_in_az, "node4")},
       {Node("node1", rg_china), Node("node2", az1), Node("node3", rg_india), Node("node4", az2)},
       {100, 0, 100, 0}},
      {"Avoid panic when partial nodes in a topology don't have pods with affinity",
       pod(s1),
       {pod(s1, {}, "node1"), pod({}, stay_with_s1_in_region_away_from_s2_in_az, "node2")},
       {Node("node1", rg_china), Node("node2", rg_china)},
       {0, 0}},
      {"invalid Affinity fails PreScore",
       pod({}, invalid_affinity),
       {},
       {Node("node1", rg_china), Node("node2", rg_china)},
       {},
       Code::kError,
       "Invalid value: \"{{.bad-value.}}\""},
      {"invalid AntiAffinity fails PreScore",
       pod({}, invalid_anti_affinity),
       {},
       {Node("node1", rg_china), Node("node2", rg_china)},
       {},
       Code::kError,
       "Invalid value: \"{{.bad-value.}}\""},
      {"Affinity with pods matching NamespaceSelector",
       pod(s1, affinity_ns_selector, "", "subteam1.team1"),
       {pod(s1, {}, "node1", "subteam1.team1"), pod(s1, {}, "node1", "subteam1.team1"),
        pod(s1, {}, "node1", "subteam1.team2"), pod(s1, {}, "node2", "subteam2.team1")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {100, 0}},
      {"Affinity with pods matching both NamespaceSelector and Namespaces fields",
       pod(s1, affinity_ns_selector, "", "subteam1.team1"),
       {pod(s1, {}, "node1", "subteam1.team1"), pod(s1, {}, "node1", "subteam1.team1"),
        pod(s1, {}, "node1", "subteam2.team2"), pod(s1, {}, "node2", "subteam2.team1")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {100, 0}},
      {"AntiAffinity with pods matching NamespaceSelector",
       pod(s1, anti_affinity_ns_selector, "", "subteam1.team1"),
       {pod(s1, {}, "node1", "subteam1.team1"), pod(s1, {}, "node1", "subteam1.team1"),
        pod(s1, {}, "node1", "subteam1.team2"), pod(s1, {}, "node2", "subteam2.team1")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {0, 100}},
      {"AntiAffinity with pods matching both NamespaceSelector and Namespaces fields",
       pod(s1, anti_affinity_ns_selector, "", "subteam1.team1"),
       {pod(s1, {}, "node1", "subteam1.team1"), pod(s1, {}, "node1", "subteam1.team1"),
        pod(s1, {}, "node1", "subteam2.team2"), pod(s1, {}, "node2", "subteam2.team1")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {0, 100}},
      {"Ignore preferred terms of existing pods",
       pod(s2),
       {pod(s1, stay_with_s1_in_region_away_from_s2_in_az, "node1"),
        pod(s2, stay_with_s2_in_region, "node2")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {},
       Code::kSkip,
       "",
       ignore_existing},
      {"Do not ignore preferred terms of existing pods",
       pod(s2),
       {pod(s1, stay_with_s1_in_region_away_from_s2_in_az, "node1"),
        pod(s2, stay_with_s2_in_region, "node2")},
       {Node("node1", rg_china), Node("node2", rg_india)},
       {0, 100}},
      {"No nodes to score", pod(s2), {}, {}, {}, Code::kSkip},
  };
  RunScoreCases(cases);
}

TEST(InterPodAffinityScoreTest, PreferredAffinityWithHardPodAffinitySymmetricWeight) {
  const Labels service_s1 = {{"service", "S1"}};
  api::Affinity hard;
  hard.pod_affinity.emplace();
  hard.pod_affinity->required = {Term({SelectorIn("service", {"S1"})}, "region",
                                      {"", "subteam2.team2"},
                                      MakeLabelSelector({}, {SelectorIn("team", {"team1"})}))};
  const std::vector<api::Node> nodes = {Node("node1", {{"region", "China"}}),
                                        Node("node2", {{"region", "India"}}),
                                        Node("node3", {{"az", "az1"}})};
  const std::vector<api::Pod> pods = {WithAffinity(P("e1").NodeName("node1").Obj(), hard),
                                      WithAffinity(P("e2").NodeName("node2").Obj(), hard)};
  auto args = [](int32_t w) {
    InterPodAffinityArgs a;
    a.hard_pod_affinity_weight = w;
    return a;
  };
  std::vector<ScoreCase> cases = {
      {"with default weight",
       P("p", service_s1).Namespace("").Obj(),
       pods,
       nodes,
       {100, 100, 0},
       Code::kSuccess,
       "",
       args(1)},
      {"with zero weight",
       P("p", service_s1).Namespace("").Obj(),
       pods,
       nodes,
       {},
       Code::kSkip,
       "",
       args(0)},
      {"with no matching namespace",
       P("p", service_s1).Namespace("subteam1.team2").Obj(),
       pods,
       nodes,
       {},
       Code::kSkip,
       "",
       args(1)},
      {"with matching NamespaceSelector",
       P("p", service_s1).Namespace("subteam1.team1").Obj(),
       pods,
       nodes,
       {100, 100, 0},
       Code::kSuccess,
       "",
       args(1)},
      {"with matching Namespaces",
       P("p", service_s1).Namespace("subteam2.team2").Obj(),
       pods,
       nodes,
       {100, 100, 0},
       Code::kSuccess,
       "",
       args(1)},
  };
  RunScoreCases(cases);
}

TEST(InterPodAffinityScoreTest, RawScoresAndNormalization) {
  // node1 China: +8 (affinity); node2 az1: -5 (anti-affinity); node3: 0.
  const Labels s1 = {{"security", "S1"}};
  const api::Pod pod = WithAffinity(
      P("p", s1).Obj(), Preferred({{8, Term({SelectorIn("security", {"S1"})}, "region")}},
                                  {{5, Term({SelectorIn("security", {"S2"})}, "az")}}));
  auto env = MakeEnv(
      {Node("node1", {{"region", "China"}}), Node("node2", {{"az", "az1"}}),
       Node("node3", {{"other", "x"}})},
      {P("a", s1).NodeName("node1").Obj(), P("b", {{"security", "S2"}}).NodeName("node2").Obj()});
  framework::CycleState state;
  auto pi = Info(pod);
  const auto& nodes = env->handle.SnapshotSharedLister().List();
  ASSERT_TRUE(env->pl->PreScore(state, *pi, nodes).IsSuccess());
  std::vector<int64_t> raw;
  for (const auto* ni : nodes) {
    int64_t s = 0;
    ASSERT_TRUE(env->pl->Score(state, *pi, *ni, &s).IsSuccess());
    raw.push_back(s);
  }
  EXPECT_EQ(raw, (std::vector<int64_t>{8, -5, 0}));
  ASSERT_TRUE(env->pl->NormalizeScore(state, *pi, nodes, raw).IsSuccess());
  // 100 * (v - min) / (max - min), truncated: 100, 0, 38.
  EXPECT_EQ(raw, (std::vector<int64_t>{100, 0, 38}));
}

// Several matching pods per node and several nodes per topology domain (PreFilter and
// PreScore sum a node's pods before merging into the counts), a node lacking the key, and
// terms cancelling to a zero sum (the pair still exists, so PreScore is not skipped).
TEST(InterPodAffinityScoreTest, ManyPodsPerNodeAndDomain) {
  const std::vector<api::Node> nodes = {
      Node("n1", {{"zone", "z1"}, {"host", "n1"}}), Node("n2", {{"zone", "z1"}, {"host", "n2"}}),
      Node("n3", {{"zone", "z2"}, {"host", "n3"}}), Node("n4", {{"host", "n4"}})};
  const Labels a = {{"app", "a"}};
  const api::PodAffinityTerm a_zone = Term({SelectorIn("app", {"a"})}, "zone");
  const api::PodAffinityTerm b_host = Term({SelectorIn("app", {"b"})}, "host");
  const std::vector<api::Pod> existing = {P("a1", a).NodeName("n1").Obj(),
                                          P("a2", a).NodeName("n1").Obj(),
                                          P("x1").NodeName("n1").PodAntiAffinity(a_zone).Obj(),
                                          P("a3", a).NodeName("n2").Obj(),
                                          P("b1", {{"app", "b"}}).NodeName("n2").Obj(),
                                          P("x2").NodeName("n2").PodAntiAffinity(a_zone).Obj(),
                                          P("a4", a).NodeName("n3").Obj(),
                                          P("a5", a).NodeName("n4").Obj()};
  auto env = MakeEnv(nodes, existing);
  const auto& infos = env->handle.SnapshotSharedLister().List();

  {
    SCOPED_TRACE("PreFilter");
    framework::CycleState state;
    auto pi = Info(P("p", a).PodAffinity(a_zone).PodAntiAffinity(b_host).Obj());
    ASSERT_TRUE(env->pl->PreFilter(state, *pi, nullptr).IsSuccess());
    const PreFilterCounts c = *GetPreFilterCounts(state);
    EXPECT_EQ(c.affinity, (PreFilterCounts::Map{{{"zone", "z1"}, 3}, {{"zone", "z2"}, 1}}));
    EXPECT_EQ(c.anti_affinity, (PreFilterCounts::Map{{{"host", "n2"}, 1}}));
    EXPECT_EQ(c.existing_anti_affinity, (PreFilterCounts::Map{{{"zone", "z1"}, 2}}));
  }
  auto raw_scores = [&](const api::Pod& pod, std::vector<int64_t>* raw) {
    framework::CycleState state;
    auto pi = Info(pod);
    ASSERT_TRUE(env->pl->PreScore(state, *pi, infos).IsSuccess());
    for (const auto* ni : infos) {
      int64_t s = 0;
      ASSERT_TRUE(env->pl->Score(state, *pi, *ni, &s).IsSuccess());
      raw->push_back(s);
    }
  };
  {
    SCOPED_TRACE("PreScore sums");
    std::vector<int64_t> raw;
    raw_scores(P("p", a).PreferredPodAffinity(2, a_zone).PreferredPodAffinity(5, b_host).Obj(),
               &raw);
    // z1: 3 matching pods * 2; n2 also +5 for b1; z2: 1 * 2; n4 has no zone.
    EXPECT_EQ(raw, (std::vector<int64_t>{6, 11, 2, 0}));
  }
  {
    SCOPED_TRACE("PreScore zero sum");
    std::vector<int64_t> raw;
    raw_scores(P("p", a).PreferredPodAffinity(3, a_zone).PreferredPodAntiAffinity(3, a_zone).Obj(),
               &raw);
    EXPECT_EQ(raw, (std::vector<int64_t>{0, 0, 0, 0}));
  }
}

// ---------------------------------------------------------------------------------------
// Args

TEST(InterPodAffinityArgsTest, Parse) {
  struct Case {
    std::string name;
    std::string yaml;
    std::string want_error;
    int32_t want_weight = 1;
    bool want_ignore = false;
  } cases[] = {
      {"defaults", "", "", 1, false},
      {"empty map", "{}", "", 1, false},
      {"values",
       "{kind: InterPodAffinityArgs, hardPodAffinityWeight: 5, "
       "ignorePreferredTermsOfExistingPods: true}",
       "", 5, true},
      {"zero weight", "{hardPodAffinityWeight: 0}", "", 0, false},
      {"weight too high", "{hardPodAffinityWeight: 101}",
       "InterPodAffinityArgs: hardPodAffinityWeight: Invalid value: 101: not in valid range [0, "
       "100]"},
      {"negative weight", "{hardPodAffinityWeight: -1}",
       "InterPodAffinityArgs: hardPodAffinityWeight: Invalid value: -1: not in valid range [0, "
       "100]"},
      {"not a boolean", "{ignorePreferredTermsOfExistingPods: maybe}",
       "InterPodAffinityArgs: ignorePreferredTermsOfExistingPods: Invalid value: \"maybe\": must "
       "be a boolean"},
      {"unknown field", "{foo: 1}", "InterPodAffinityArgs: unknown field \"foo\""},
      {"wrong kind", "{kind: NodeAffinityArgs}",
       "InterPodAffinityArgs: want args of kind InterPodAffinityArgs, got NodeAffinityArgs"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    std::optional<YAML::Node> node;
    if (!tc.yaml.empty()) node = YAML::Load(tc.yaml);
    auto got = ParseInterPodAffinityArgs(node ? &*node : nullptr);
    if (!tc.want_error.empty()) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().Message(), tc.want_error);
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->hard_pod_affinity_weight, tc.want_weight);
    EXPECT_EQ(got->ignore_preferred_terms_of_existing_pods, tc.want_ignore);
  }
  fake::FakeHandle h;
  YAML::Node bad = YAML::Load("{hardPodAffinityWeight: 200}");
  EXPECT_FALSE(InterPodAffinity::New(&bad, h).ok());
  auto pl = InterPodAffinity::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  EXPECT_EQ(pl.value()->Name(), "InterPodAffinity");
}

// ---------------------------------------------------------------------------------------
// Queueing hints

framework::QueueingHint Hint(const InterPodAffinity& pl, size_t event, const api::Pod& pod,
                             const framework::EventObjects& objs) {
  return pl.EventsToRegister()[event].hint(pod, objs);
}

TEST(InterPodAffinityEventsTest, Registered) {
  fake::FakeHandle h;
  InterPodAffinity pl({}, h);
  auto events = pl.EventsToRegister();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kAssignedPod);
  EXPECT_EQ(events[0].event.action,
            framework::kAdd | framework::kUpdatePodLabel | framework::kDelete);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kUnscheduledPod);
  EXPECT_EQ(events[1].event.action, framework::kUpdatePodLabel);
  EXPECT_EQ(events[2].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[2].event.action, framework::kAdd | framework::kUpdateNodeLabel);
  // The pod's own label update always requeues it (upstream isSchedulableAfterTarget...).
  const api::Pod p = P("p", {{"foo", "baz"}}).UID("p").Obj();
  EXPECT_EQ(Hint(pl, 1, p, {&p, &p}), framework::QueueingHint::kQueue);
}

TEST(InterPodAffinityEventsTest, AssignedPodChange) {
  using framework::QueueingHint;
  auto target_aff =
      P("p").UID("p").PodAffinityIn("service", "region", {"securityscan", "value2"}).Obj();
  auto target_anti =
      P("p").UID("p").PodAntiAffinityIn("service", "region", {"securityscan", "value2"}).Obj();
  auto target_multi = P("p")
                          .UID("p")
                          .PodAffinityExists("aaa", "hostname")
                          .PodAffinityExists("bbb", "hostname")
                          .Obj();
  auto target_two_anti = P("p")
                             .UID("p")
                             .PodAntiAffinityIn("service", "region", {"securityscan"})
                             .PodAntiAffinityIn("app", "region", {"web"})
                             .Obj();
  auto other = [](const Labels& l, const std::string& node = "fake-node") {
    return P("other", l).UID("other").NodeName(node).Obj();
  };
  api::Pod nominated_aaa = P("other", {{"aaa", "a"}}).Obj();
  nominated_aaa.status.nominated_node_name = "fake-node";
  api::Pod nominated_match = P("other", {{"service", "securityscan"}}).Obj();
  nominated_match.status.nominated_node_name = "fake-node";
  struct Case {
    std::string name;
    api::Pod pod;
    std::optional<api::Pod> old_pod, new_pod;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"add a pod which matches the pod affinity",
       target_aff,
       {},
       other({{"service", "securityscan"}}),
       QueueingHint::kQueue},
      {"add an un-scheduled pod",
       target_aff,
       {},
       other({{"service", "securityscan"}}, ""),
       QueueingHint::kQueueSkip},
      {"add a pod which doesn't match the pod affinity",
       target_aff,
       {},
       other({{"aaa", "a"}}),
       QueueingHint::kQueueSkip},
      {"update a pod from non-match to match pod affinity", target_aff, other({{"aaa", "a"}}),
       other({{"service", "securityscan"}}), QueueingHint::kQueue},
      {"the updating pod matches target pod's affinity both before and after label changes",
       target_aff, other({{"service", "value2"}}), other({{"service", "securityscan"}}),
       QueueingHint::kQueueSkip},
      {"update an un-scheduled pod", target_aff, other({{"aaa", "a"}}, ""),
       other({{"service", "securityscan"}}, ""), QueueingHint::kQueueSkip},
      {"update a pod from match to non-match the pod affinity", target_aff,
       other({{"service", "securityscan"}}), other({{"aaa", "a"}}), QueueingHint::kQueueSkip},
      {"update a pod from match to non-match pod's affinity - multiple terms case", target_multi,
       other({{"aaa", "a"}}), other({{"service", "securityscan"}}), QueueingHint::kQueueSkip},
      {"update a pod from non-match to match pod's affinity - multiple terms case", target_multi,
       other({{"aaa", "a"}}), other({{"aaa", ""}, {"bbb", ""}}), QueueingHint::kQueue},
      {"modify pod label to change it from satisfying pod anti-affinity to not satisfying "
       "anti-affinity",
       target_anti, other({{"service", "securityscan"}}), other({{"service", "aaaa"}}),
       QueueingHint::kQueue},
      {"modify pod label to change it from not satisfying pod anti-affinity to satisfying "
       "anti-affinity",
       target_anti, other({{"service", "bbb"}}), other({{"service", "securityscan"}}),
       QueueingHint::kQueueSkip},
      {"delete a pod which doesn't match pod's anti-affinity",
       target_anti,
       other({{"aaa", "a"}}),
       {},
       QueueingHint::kQueueSkip},
      {"delete a pod which matches pod's anti-affinity",
       target_anti,
       other({{"service", "securityscan"}}),
       {},
       QueueingHint::kQueue},
      {"delete a pod with anti-affinity that matches pending pod",
       P("p", {{"service", "securityscan"}}).Obj(),
       P("e")
           .NodeName("fake-node")
           .PodAntiAffinityIn("service", "region", {"securityscan", "value2"})
           .Obj(),
       {},
       QueueingHint::kQueue},
      {"delete a pod with anti-affinity that doesn't match pending pod",
       P("p", {{"service", "foo"}}).Obj(),
       P("e")
           .NodeName("fake-node")
           .PodAntiAffinityIn("service", "region", {"securityscan", "value2"})
           .Obj(),
       {},
       QueueingHint::kQueueSkip},
      {"delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that "
       "doesn't match pending pod",
       P("p", {{"service", "foo"}})
           .PodAntiAffinityIn("service", "region", {"securityscan", "value2"})
           .Obj(),
       P("e", {{"service", "foo"}})
           .NodeName("fake-node")
           .PodAntiAffinityIn("service", "region", {"securityscan", "value2"})
           .Obj(),
       {},
       QueueingHint::kQueueSkip},
      {"delete a nominated pod which doesn't match pod's anti-affinity",
       target_anti,
       nominated_aaa,
       {},
       QueueingHint::kQueueSkip},
      {"delete a nominated pod which matches pod's anti-affinity",
       target_anti,
       nominated_match,
       {},
       QueueingHint::kQueue},
      {"modify pod label to change it from matching only one of target pod's anti-affinity "
       "terms to matching none",
       target_two_anti, other({{"service", "securityscan"}, {"app", "bar"}}),
       other({{"service", "foo"}, {"app", "bar"}}), QueueingHint::kQueue},
      {"modify pod label but it still matches one of target pod's anti-affinity terms",
       target_two_anti, other({{"service", "securityscan"}, {"app", "bar"}}),
       other({{"service", "foo"}, {"app", "web"}}), QueueingHint::kQueueSkip},
      {"delete a pod which matches only one of target pod's anti-affinity terms",
       target_two_anti,
       other({{"service", "securityscan"}}),
       {},
       QueueingHint::kQueue},
      {"delete a pod with anti-affinity that matches pending pod on only one term",
       P("p", {{"service", "securityscan"}}).Obj(),
       P("e")
           .UID("other")
           .NodeName("fake-node")
           .PodAntiAffinityIn("service", "region", {"securityscan"})
           .PodAntiAffinityIn("app", "region", {"web"})
           .Obj(),
       {},
       QueueingHint::kQueue},
  };
  fake::FakeHandle h;
  InterPodAffinity pl({}, h);
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    framework::EventObjects objs;
    objs.old_pod = tc.old_pod ? &*tc.old_pod : nullptr;
    objs.new_pod = tc.new_pod ? &*tc.new_pod : nullptr;
    EXPECT_EQ(Hint(pl, 0, tc.pod, objs), tc.want);
  }
}

TEST(InterPodAffinityEventsTest, NodeChange) {
  using framework::QueueingHint;
  const api::Pod aff_zone =
      P("p").PodAffinityIn("service", "zone", {"securityscan", "value2"}).Obj();
  const api::Pod aff_region =
      P("p").PodAffinityIn("service", "region", {"securityscan", "value2"}).Obj();
  api::PodAffinityTerm anti_term;
  anti_term.label_selector = MakeLabelSelector({{"another", "label"}});
  anti_term.topology_key = "zone";
  const api::Pod anti = P("p").PodAntiAffinity(anti_term).Obj();
  struct Case {
    std::string name;
    api::Pod pod;
    std::optional<api::Node> old_node, new_node;
    QueueingHint want;
  };
  std::vector<Case> cases = {
      {"add a new node with matched pod affinity topologyKey",
       aff_zone,
       {},
       Node("node-a", {{"zone", "zone1"}}),
       QueueingHint::kQueue},
      {"add a new node without matched topologyKey",
       aff_region,
       {},
       Node("node-a", {{"zone", "zone1"}}),
       QueueingHint::kQueueSkip},
      {"update node label but not topologyKey", aff_zone, Node("node-a", {{"aaa", "a"}}),
       Node("node-a", {{"aaa", "b"}}), QueueingHint::kQueueSkip},
      {"update node label that isn't related to the pod affinity", aff_zone,
       Node("node-a", {{"zone", "zone1"}}),
       Node("node-a", {{"zone", "zone1"}, {"unrelated-label", "unrelated"}}),
       QueueingHint::kQueueSkip},
      {"update node with different affinity topologyKey value", aff_zone,
       Node("node-a", {{"zone", "zone1"}}), Node("node-a", {{"zone", "zone2"}}),
       QueueingHint::kQueue},
      {"update node to have the affinity topology label", aff_zone, Node("node-a", {{"aaa", "a"}}),
       Node("node-a", {{"zone", "zone1"}}), QueueingHint::kQueue},
      {"add a new node with matched pod anti-affinity topologyKey",
       anti,
       {},
       Node("node-a", {{"zone", "zone1"}}),
       QueueingHint::kQueue},
      {"add a new node without matched pod anti-affinity topologyKey",
       anti,
       {},
       Node("node-a", {}),
       QueueingHint::kQueue},
      {"update node label that isn't related to the pod anti-affinity", anti,
       Node("node-a", {{"zone", "zone1"}}),
       Node("node-a", {{"zone", "zone1"}, {"unrelated-label", "unrelated"}}),
       QueueingHint::kQueueSkip},
      {"update node with different anti-affinity topologyKey value", anti,
       Node("node-a", {{"zone", "zone1"}}), Node("node-a", {{"zone", "zone2"}}),
       QueueingHint::kQueue},
      {"update node to have the anti-affinity topology label", anti, Node("node-a", {{"aaa", "a"}}),
       Node("node-a", {{"zone", "zone1"}}), QueueingHint::kQueueSkip},
      {"update node label not to have anti-affinity topology label", anti,
       Node("node-a", {{"zone", "zone1"}}), Node("node-a", {{"aaa", "a"}}), QueueingHint::kQueue},
  };
  fake::FakeHandle h;
  InterPodAffinity pl({}, h);
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    framework::EventObjects objs;
    objs.old_node = tc.old_node ? &*tc.old_node : nullptr;
    objs.new_node = tc.new_node ? &*tc.new_node : nullptr;
    EXPECT_EQ(Hint(pl, 2, tc.pod, objs), tc.want);
  }
}

// PreFilter and PreScore split the nodes in chunks of 64 (framework::ParallelChunks): the
// Filter and Score results are the same inline and fanned out on the scheduler's pool.
TEST(InterPodAffinityParallelTest, SameResultsInlineAndFannedOut) {
  std::vector<api::Node> nodes;
  std::vector<api::Pod> pods;
  for (int i = 0; i < 300; ++i) {
    const std::string name = "node-" + std::to_string(i);
    nodes.push_back(Node(name, {{"zone", "z" + std::to_string(i % 5)}, {"host", name}}));
    if (i % 3 == 0) pods.push_back(P("a-" + name, {{"service", "a"}}).NodeName(name).Obj());
    if (i % 7 == 0) {
      pods.push_back(P("b-" + name, {{"service", "b"}})
                         .PodAntiAffinityIn("app", "host", {"web"})
                         .NodeName(name)
                         .Obj());
    }
  }
  fake::ExpectSameResultsWithAnyParallelizer([&](framework::Parallelizer* par) {
    auto env = MakeEnv(nodes, pods);
    env->handle.SetParallelizer(par);
    return fake::FilterAndScoreAll(
        *env->pl, env->handle.SnapshotSharedLister(),
        *Info(P("p", {{"app", "web"}})
                  .PodAffinityIn("service", "zone", {"a"})
                  .PodAntiAffinityIn("service", "host", {"b"})
                  .Obj()),
        *Info(P("q", {{"app", "api"}})
                  .PreferredPodAffinity(5, Term({SelectorIn("service", {"a"})}, "zone"))
                  .PreferredPodAntiAffinity(3, Term({SelectorIn("service", {"b"})}, "host"))
                  .Obj()));
  });
}

}  // namespace
}  // namespace phalanx::plugins::interpodaffinity
