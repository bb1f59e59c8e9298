// Level resolution of multi-level topology constraints (topology.h) and the KAI Topology /
// Volcano networkTopology parsing behind it (dialects.h).
#include "gang/topology.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "gang/default_podgroup_manager.h"
#include "gang/dialects.h"
#include "gang/topology_hypernode.h"

namespace phalanx::gang {
namespace {

// A resolver's outcome as the tables compare it: "" for OK, else its message; a failure is
// NotFound (a missing Topology or HyperNode) or InvalidArgument.
std::string Reason(const api::Status& s) {
  if (s.ok()) return "";
  const bool not_found = std::string(s.message()).find("not found") != std::string::npos ||
                         std::string(s.message()).find("no HyperNode exists") != std::string::npos;
  EXPECT_EQ(s.code(), not_found ? absl::StatusCode::kNotFound : absl::StatusCode::kInvalidArgument)
      << s;
  return std::string(s.message());
}

api::UnstructuredPtr Object(const std::string& yaml) {
  api::Manifests m;
  std::string err;
  EXPECT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "t.yaml", &m), &err)) << err;
  EXPECT_EQ(m.objects.size(), 1u);
  return std::make_shared<api::Unstructured>(m.objects.at(0));
}

Topology Dc() {
  Topology t;
  t.name = "dc";
  t.levels = {"zone", "rack", "block", "kubernetes.io/hostname"};
  return t;
}

TopologyConstraint Tc(std::string topology, std::string required, std::string preferred) {
  TopologyConstraint c;
  c.topology = std::move(topology);
  c.required_level = std::move(required);
  c.preferred_level = std::move(preferred);
  return c;
}

TEST(ResolvePlacementLevelsTest, Table) {
  const Topology dc = Dc();
  struct Case {
    const char* name;
    TopologyConstraint c;
    const Topology* topology;
    std::vector<std::string> levels;
    bool required;
    std::string error;  // substring; "" = success
  };
  const std::vector<Case> cases = {
      {"PreferredThenEachLevelUpToRequired",
       Tc("dc", "zone", "block"),
       &dc,
       {"block", "rack", "zone"},
       true,
       ""},
      {"PreferredEqualsRequired", Tc("dc", "rack", "rack"), &dc, {"rack"}, true, ""},
      {"RequiredOnly", Tc("dc", "rack", ""), &dc, {"rack"}, true, ""},
      {"PreferredOnlyClimbsToTheTopThenCluster",
       Tc("dc", "", "block"),
       &dc,
       {"block", "rack", "zone"},
       false,
       ""},
      {"NoTopologyObjectUsesTheNamedLevels",
       Tc("", "rack", "block"),
       nullptr,
       {"block", "rack"},
       true,
       ""},
      {"NoTopologyObjectPreferredOnly", Tc("", "", "zone"), nullptr, {"zone"}, false, ""},
      {"TopologyMissing",
       Tc("dc", "rack", ""),
       nullptr,
       {},
       false,
       "topology \"dc\" not found (kai.scheduler/v1alpha1 Topology)"},
      {"RequiredLevelMissing",
       Tc("dc", "row", ""),
       &dc,
       {},
       false,
       "required level \"row\" is not a level of topology \"dc\" (zone, rack, block, "
       "kubernetes.io/hostname)"},
      {"PreferredLevelMissing",
       Tc("dc", "", "row"),
       &dc,
       {},
       false,
       "preferred level \"row\" is not a level"},
      {"PreferredAboveRequired",
       Tc("dc", "block", "zone"),
       &dc,
       {},
       false,
       "preferred level \"zone\" is above required level \"block\" in topology \"dc\""},
  };
  for (const auto& tc : cases) {
    PlacementLevels out;
    std::string err = Reason(ResolvePlacementLevels(tc.c, tc.topology, &out));
    if (!tc.error.empty()) {
      EXPECT_NE(err.find(tc.error), std::string::npos) << tc.name << ": " << err;
      continue;
    }
    EXPECT_EQ(err, "") << tc.name;
    EXPECT_EQ(out.levels, tc.levels) << tc.name;
    EXPECT_EQ(out.required, tc.required) << tc.name;
  }
  TopologyConstraint unsupported;
  unsupported.unsupported = "not honoured: ...";
  PlacementLevels out;
  EXPECT_EQ(Reason(ResolvePlacementLevels(unsupported, nullptr, &out)), "not honoured: ...");
  Topology bad = Dc();
  bad.invalid = "Topology dc: spec.levels: must have at least 1 item";
  EXPECT_EQ(Reason(ResolvePlacementLevels(Tc("dc", "rack", ""), &bad, &out)),
            "invalid Topology dc: spec.levels: must have at least 1 item");
}

TEST(TopologyObjectTest, ParsesLevelsTopToBottomAndRejectsBadOnes) {
  auto obj = Object(
      "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: dc}\n"
      "spec:\n  levels:\n  - nodeLabel: rack\n  - nodeLabel: block\n");
  ASSERT_TRUE(IsTopologyObject(*obj));
  EXPECT_FALSE(IsGangObject(*obj));
  Topology t = TopologyFromObject(*obj);
  EXPECT_EQ(t.name, "dc");
  EXPECT_EQ(t.levels, (std::vector<std::string>{"rack", "block"}));
  EXPECT_EQ(t.invalid, "");

  auto empty =
      Object("apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: e}\nspec: {}\n");
  EXPECT_EQ(TopologyFromObject(*empty).invalid,
            "Topology e: spec.levels: must have at least 1 item");
  auto dup = Object(
      "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: d}\n"
      "spec:\n  levels: [{nodeLabel: rack}, {nodeLabel: rack}]\n");
  EXPECT_NE(TopologyFromObject(*dup).invalid.find("spec.levels[1].nodeLabel"), std::string::npos)
      << TopologyFromObject(*dup).invalid;
  // Another group's Topology kind is not ours.
  auto other = Object("apiVersion: example.com/v1\nkind: Topology\nmetadata: {name: x}\n");
  EXPECT_FALSE(IsTopologyObject(*other));
}

TEST(TopologyObjectTest, ManagerKeepsTopologiesByName) {
  DefaultPodGroupManager m;
  auto obj = Object(
      "apiVersion: kai.scheduler/v1alpha1\nkind: Topology\nmetadata: {name: dc}\n"
      "spec:\n  levels: [{nodeLabel: rack}]\n");
  EXPECT_EQ(m.TopologyOf("dc"), nullptr);
  m.OnObjectAdd(obj);
  ASSERT_NE(m.TopologyOf("dc"), nullptr);
  EXPECT_EQ(m.TopologyOf("dc")->levels, (std::vector<std::string>{"rack"}));
  m.OnObjectDelete(obj);
  EXPECT_EQ(m.TopologyOf("dc"), nullptr);
}

TEST(TopologyDialectTest, VolcanoNetworkTopologyIsDecodedStrictly) {
  auto pg = [](const std::string& nt) {
    return SpecsFromObject(
        *Object("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: v, "
                "namespace: ml}\nspec: {minMember: 2, networkTopology: " +
                nt + "}\n"))[0];
  };
  auto hard = pg("{mode: hard, highestTierAllowed: 2}");
  EXPECT_EQ(hard.invalid, "");
  EXPECT_TRUE(hard.topology.hyper_node_tiers);
  EXPECT_TRUE(hard.topology.hard);
  EXPECT_EQ(hard.topology.highest_tier, 2);
  auto dflt = pg("{highestTierName: rack}");  // mode defaults to hard
  EXPECT_TRUE(dflt.topology.hard);
  EXPECT_EQ(dflt.topology.highest_tier_name, "rack");
  EXPECT_FALSE(dflt.topology.highest_tier.has_value());
  auto soft = pg("{mode: soft}");
  EXPECT_TRUE(soft.topology.hyper_node_tiers);
  EXPECT_FALSE(soft.topology.hard);
  EXPECT_FALSE(soft.topology.empty());
  EXPECT_EQ(pg("{mode: strict}").invalid,
            "PodGroup ml/v (scheduling.volcano.sh/v1beta1): spec.networkTopology.mode: "
            "Unsupported value: \"strict\": supported values: \"hard\", \"soft\"");
  EXPECT_NE(pg("{highestTierAllowed: -1}")
                .invalid.find("spec.networkTopology.highestTierAllowed: must be >= 0, got -1"),
            std::string::npos);
  EXPECT_NE(
      pg("{highestTierAllowed: two}")
          .invalid.find("spec.networkTopology.highestTierAllowed: must be an integer, got \"two\""),
      std::string::npos);
  EXPECT_NE(pg("{highestTierAllowed: 1, highestTierName: rack}")
                .invalid.find("highestTierAllowed and highestTierName cannot both be set"),
            std::string::npos);
  EXPECT_NE(pg("hard").invalid.find("spec.networkTopology: must be an object"), std::string::npos);
}

// ---- Volcano HyperNodes (topology_hypernode.h) ----

std::shared_ptr<const HyperNode> Hn(const std::string& yaml) {
  auto obj = Object("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\n" + yaml);
  EXPECT_TRUE(IsHyperNodeObject(*obj));
  return std::make_shared<const HyperNode>(HyperNodeFromObject(*obj));
}

api::Node NodeNamed(const std::string& name, std::map<std::string, std::string> labels = {}) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  return n;
}

TEST(HyperNodeTest, DecodesEverySelectorKind) {
  auto h =
      Hn("metadata: {name: s0}\nspec:\n  tier: 1\n  tierName: rack\n  members:\n"
         "  - {type: Node, selector: {exactMatch: {name: n1}}}\n"
         "  - {type: Node, selector: {regexMatch: {pattern: \"^gpu-[0-9]+$\"}}}\n"
         "  - {type: Node, selector: {labelMatch: {matchLabels: {rack: r1}}}}\n");
  EXPECT_EQ(h->invalid, "");
  EXPECT_EQ(h->tier, 1);
  EXPECT_EQ(h->tier_name, "rack");
  ASSERT_EQ(h->members.size(), 3u);
  EXPECT_EQ(h->members[0].exact, "n1");
  EXPECT_EQ(h->members[1].regex, "^gpu-[0-9]+$");
  ASSERT_TRUE(h->members[2].labels.has_value());
  EXPECT_EQ(h->members[2].labels->match_labels.at("rack"), "r1");
  auto other = Object("apiVersion: example.com/v1\nkind: HyperNode\nmetadata: {name: x}\n");
  EXPECT_FALSE(IsHyperNodeObject(*other));
}

TEST(HyperNodeTest, BadFieldsAreNamed) {
  struct Case {
    const char* spec;
    const char* error;
  } cases[] = {
      {"{members: [{type: Node, selector: {exactMatch: {name: n1}}}]}",
       "spec.tier: Required value"},
      {"{tier: x, members: [{type: Node, selector: {exactMatch: {name: n1}}}]}",
       "spec.tier: Invalid value: must be an integer"},
      {"{tier: -1, members: [{type: Node, selector: {exactMatch: {name: n1}}}]}",
       "spec.tier: Invalid value: -1: must be >= 0"},
      {"{tier: 1}", "spec.members: Required value: must have at least 1 item"},
      {"{tier: 1, members: [{selector: {exactMatch: {name: n1}}}]}",
       "spec.members[0].type: Required value"},
      {"{tier: 1, members: [{type: Switch, selector: {exactMatch: {name: n1}}}]}",
       "spec.members[0].type: Unsupported value: \"Switch\""},
      {"{tier: 1, members: [{type: Node, selector: {}}]}",
       "spec.members[0].selector: exactly one of exactMatch, regexMatch, labelMatch must be set, "
       "got 0"},
      {"{tier: 1, members: [{type: Node, selector: {exactMatch: {name: a}, regexMatch: {pattern: "
       "b}}}]}",
       "got 2"},
      {"{tier: 1, members: [{type: Node, selector: {regexMatch: {pattern: \"([\"}}}]}",
       "spec.members[0].selector.regexMatch.pattern: Invalid value: \"([\": invalid regular "
       "expression"},
      {"{tier: 1, members: [{type: Node, selector: {labelMatch: {matchExpressions: [{key: k, "
       "operator: Gt, values: [\"1\"]}]}}}]}",
       "spec.members[0].selector.labelMatch.matchExpressions[0].operator"},
      {"{tier: 2, members: [{type: HyperNode, selector: {regexMatch: {pattern: s}}}]}",
       "spec.members[0].selector: a member of type HyperNode is selected by exactMatch only"},
  };
  for (const auto& c : cases) {
    auto h = Hn(std::string("metadata: {name: bad}\nspec: ") + c.spec + "\n");
    EXPECT_NE(h->invalid.find("HyperNode bad: "), std::string::npos) << c.spec;
    EXPECT_NE(h->invalid.find(c.error), std::string::npos) << c.spec << "\n  got: " << h->invalid;
  }
}

// Two tiers: s0 {n1, n2} and s1 {gpu-3, gpu-4 by regex} under s2 (tier 2); s3 by label.
HyperNodeList Tree() {
  return {
      Hn("metadata: {name: s0}\nspec: {tier: 1, tierName: rack, members: [{type: Node, "
         "selector: {exactMatch: {name: n1}}}, {type: Node, selector: {exactMatch: {name: n2}}}]}"),
      Hn("metadata: {name: s1}\nspec: {tier: 1, tierName: rack, members: [{type: Node, "
         "selector: {regexMatch: {pattern: \"gpu-\"}}}]}"),
      Hn("metadata: {name: s2}\nspec: {tier: 2, tierName: spine, members: [{type: HyperNode, "
         "selector: {exactMatch: {name: s0}}}, {type: HyperNode, selector: {exactMatch: {name: "
         "s1}}}]}"),
      Hn("metadata: {name: s3}\nspec: {tier: 1, members: [{type: Node, selector: {labelMatch: "
         "{matchLabels: {rack: r9}}}}]}"),
  };
}

TEST(HyperNodeTest, DomainsAreEachHyperNodesLeafNodes) {
  const api::Node n1 = NodeNamed("n1"), n2 = NodeNamed("n2"), g3 = NodeNamed("gpu-3"),
                  g4 = NodeNamed("gpu-4"), x = NodeNamed("x", {{"rack", "r9"}}),
                  lone = NodeNamed("lone");
  const std::vector<const api::Node*> nodes{&n1, &n2, &g3, &g4, &x, &lone};
  DomainMap t1 = HyperNodeDomains(Tree(), 1, nodes);
  EXPECT_EQ(t1, (DomainMap{{"s0", {"n1", "n2"}}, {"s1", {"gpu-3", "gpu-4"}}, {"s3", {"x"}}}));
  DomainMap t2 = HyperNodeDomains(Tree(), 2, nodes);
  EXPECT_EQ(t2, (DomainMap{{"s2", {"n1", "n2", "gpu-3", "gpu-4"}}}));
  // A HyperNode without a matching node is no candidate.
  EXPECT_EQ(HyperNodeDomains(Tree(), 1, {&n1}), (DomainMap{{"s0", {"n1"}}}));
}

TEST(HyperNodeTest, ResolvesTiersFromTheConstraint) {
  auto tc = [](bool hard, std::optional<int32_t> tier, std::string name) {
    TopologyConstraint c;
    c.hyper_node_tiers = true;
    c.hard = hard;
    c.highest_tier = tier;
    c.highest_tier_name = std::move(name);
    return c;
  };
  PlacementLevels out;
  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(true, 1, ""), Tree(), &out)), "");
  EXPECT_EQ(out.levels, (std::vector<std::string>{"tier 1"}));
  EXPECT_TRUE(out.required);
  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(true, 2, ""), Tree(), &out)), "");
  EXPECT_EQ(out.levels, (std::vector<std::string>{"tier 1", "tier 2"}));
  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(true, std::nullopt, "rack"), Tree(), &out)), "");
  EXPECT_EQ(out.levels, (std::vector<std::string>{"tier 1"}));
  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(false, std::nullopt, ""), Tree(), &out)), "");
  EXPECT_EQ(out.levels, (std::vector<std::string>{"tier 1", "tier 2"}));
  EXPECT_FALSE(out.required);
  EXPECT_EQ(LevelTier("tier 2"), 2);
  EXPECT_EQ(LevelTier("rack"), -1);

  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(true, 0, ""), Tree(), &out)),
            "spec.networkTopology: highestTierAllowed 0: no HyperNode has tier <= 0 (tiers: 1, 2)");
  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(true, std::nullopt, "zone"), Tree(), &out)),
            "spec.networkTopology: highestTierName \"zone\" is no HyperNode's spec.tierName "
            "(rack, spine)");
  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(true, 1, ""), {}, &out)),
            "spec.networkTopology: no HyperNode exists (topology.volcano.sh/v1alpha1)");
  HyperNodeList bad = Tree();
  bad.push_back(Hn("metadata: {name: s9}\nspec: {tier: 1}"));
  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(true, 1, ""), bad, &out)),
            "invalid HyperNode s9: spec.members: Required value: must have at least 1 item");
  HyperNodeList two_parents = Tree();
  two_parents.push_back(
      Hn("metadata: {name: s5}\nspec: {tier: 2, members: [{type: HyperNode, "
         "selector: {exactMatch: {name: s1}}}]}"));
  EXPECT_EQ(Reason(ResolveHyperNodeLevels(tc(true, 1, ""), two_parents, &out)),
            "HyperNode s1: member of both s2 and s5 (a HyperNode has one parent)");
  HyperNodeList cycle = {
      Hn("metadata: {name: a}\nspec: {tier: 1, members: [{type: HyperNode, selector: "
         "{exactMatch: {name: b}}}]}"),
      Hn("metadata: {name: b}\nspec: {tier: 2, members: [{type: HyperNode, selector: "
         "{exactMatch: {name: a}}}]}"),
  };
  const std::string err = Reason(ResolveHyperNodeLevels(tc(true, 2, ""), cycle, &out));
  EXPECT_NE(err.find("cycle"), std::string::npos) << err;
  EXPECT_NE(err.find("through spec.members"), std::string::npos) << err;
  // The guard still stops a walk over a cycle.
  const api::Node n1 = NodeNamed("n1");
  EXPECT_TRUE(HyperNodeDomains(cycle, 1, {&n1}).empty());
}

TEST(HyperNodeTest, ManagerKeepsHyperNodesByName) {
  DefaultPodGroupManager m;
  auto obj = Object(
      "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: s0}\n"
      "spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: n1}}}]}\n");
  EXPECT_TRUE(m.HyperNodes().empty());
  m.OnObjectAdd(obj);
  ASSERT_EQ(m.HyperNodes().size(), 1u);
  EXPECT_EQ(m.HyperNodes()[0]->name, "s0");
  m.OnObjectDelete(obj);
  EXPECT_TRUE(m.HyperNodes().empty());
}

// ---- KAI per-subgroup topology ----

TEST(SubGroupScopesTest, ParentsFirstInheritingTheTopologyName) {
  auto specs = SpecsFromObject(*Object(
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: k, namespace: "
      "ml}\nspec:\n  minMember: 4\n  topologyConstraint: {topology: dc, requiredTopologyLevel: "
      "zone}\n  subGroups:\n"
      "  - {name: serve, minMember: 4, topologyConstraint: {requiredTopologyLevel: rack}}\n"
      "  - {name: prefill, parent: serve, minMember: 2, topologyConstraint: "
      "{preferredTopologyLevel: block}}\n"
      "  - {name: decode, parent: serve, minMember: 2, topologyConstraint: "
      "{requiredTopologyLevel: block}}\n"
      "  - {name: router, minMember: 1}\n"));
  ASSERT_EQ(specs.size(), 1u);
  ASSERT_EQ(specs[0].invalid, "");
  EXPECT_EQ(specs[0].sub_groups[0].topology.required_level, "rack");
  const Topology dc = Dc();
  auto lookup = [&](const std::string& name) -> std::shared_ptr<const Topology> {
    return name == "dc" ? std::make_shared<const Topology>(dc) : nullptr;
  };
  std::vector<SubGroupScope> scopes;
  ASSERT_EQ(Reason(ResolveSubGroupScopes(specs[0], lookup, &scopes)), "");
  ASSERT_EQ(scopes.size(), 3u);
  EXPECT_EQ(scopes[0].name, "serve");
  EXPECT_EQ(scopes[0].parent, -1);
  EXPECT_EQ(scopes[0].levels.levels, (std::vector<std::string>{"rack"}));
  EXPECT_TRUE(scopes[0].levels.required);
  EXPECT_EQ(scopes[0].levels.topology, "dc");
  EXPECT_EQ(scopes[1].name, "prefill");
  EXPECT_EQ(scopes[1].parent, 0);
  // Preferred only: block, then each level above it (KAI calculateRelevantDomainLevels).
  EXPECT_EQ(scopes[1].levels.levels, (std::vector<std::string>{"block", "rack", "zone"}));
  EXPECT_FALSE(scopes[1].levels.required);
  EXPECT_EQ(scopes[2].name, "decode");
  EXPECT_EQ(scopes[2].parent, 0);
  EXPECT_EQ(scopes[2].levels.levels, (std::vector<std::string>{"block"}));

  // A level the Topology lacks names the subgroup's field.
  auto bad = specs[0];
  bad.sub_groups[2].topology.required_level = "blok";
  EXPECT_EQ(Reason(ResolveSubGroupScopes(bad, lookup, &scopes)),
            "spec.subGroups[2].topologyConstraint: topology constraint: required level \"blok\" "
            "is not a level of topology \"dc\" (zone, rack, block, kubernetes.io/hostname)");
  bad.sub_groups[2].topology.topology = "nope";
  bad.sub_groups[2].topology.required_level = "block";
  EXPECT_EQ(Reason(ResolveSubGroupScopes(bad, lookup, &scopes)),
            "spec.subGroups[2].topologyConstraint: topology \"nope\" not found "
            "(kai.scheduler/v1alpha1 Topology)");
  auto non_object = SpecsFromObject(*Object(
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: k, namespace: "
      "ml}\nspec:\n  minMember: 1\n  subGroups: [{name: a, minMember: 1, topologyConstraint: "
      "rack}]\n"));
  EXPECT_NE(non_object[0].invalid.find("spec.subGroups[0].topologyConstraint: must be an object"),
            std::string::npos)
      << non_object[0].invalid;
}

TEST(TopologyDialectTest, KaiConstraintKeepsTopologyAndBothLevels) {
  auto specs = SpecsFromObject(*Object(
      "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: k, namespace: "
      "ml}\nspec:\n  minMember: 2\n  topologyConstraint: {topology: dc, requiredTopologyLevel: "
      "rack, preferredTopologyLevel: block}\n"));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].topology.topology, "dc");
  EXPECT_EQ(specs[0].topology.required_level, "rack");
  EXPECT_EQ(specs[0].topology.preferred_level, "block");
}

}  // namespace
}  // namespace phalanx::gang

namespace phalanx::gang {
namespace {

// Koordinator gather rules against a ClusterNetworkTopology: the narrowest MustGather
// layer is the required level, the narrowest PreferGather below it the preferred one, by
// layer name; an unknown layer names the layers there are.
TEST(TopologyLevels, KoordinatorGatherRules) {
  Topology t;
  t.name = "scheduling.koordinator.sh/default";
  t.levels = {"spine", "block", "kubernetes.io/hostname"};
  t.layer_names = {"SpineLayer", "BlockLayer", "NodeTopologyLayer"};
  TopologyConstraint c;
  c.topology = t.name;
  c.must_gather = {"SpineLayer"};
  c.prefer_gather = {"SpineLayer", "BlockLayer"};
  PlacementLevels out;
  EXPECT_EQ(Reason(ResolvePlacementLevels(c, &t, &out)), "");
  EXPECT_EQ(out.levels, (std::vector<std::string>{"block", "spine"}));
  EXPECT_TRUE(out.required);

  c.must_gather = {"BlockLayer", "SpineLayer"};  // the narrowest wins: block
  c.prefer_gather = {"SpineLayer"};              // implied
  EXPECT_EQ(Reason(ResolvePlacementLevels(c, &t, &out)), "");
  EXPECT_EQ(out.levels, std::vector<std::string>{"block"});

  c.must_gather = {"RackLayer"};
  EXPECT_EQ(Reason(ResolvePlacementLevels(c, &t, &out)),
            "gather rule layer \"RackLayer\" is not a layer of "
            "\"scheduling.koordinator.sh/default\" (SpineLayer, BlockLayer, NodeTopologyLayer)");
  EXPECT_EQ(Reason(ResolvePlacementLevels(c, nullptr, &out)),
            "ClusterNetworkTopology \"default\" not found (scheduling.koordinator.sh/v1alpha1)");
}

}  // namespace
}  // namespace phalanx::gang
