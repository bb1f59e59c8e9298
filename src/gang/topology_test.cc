// Level resolution of multi-level topology constraints (topology.h) and the KAI Topology /
// Volcano networkTopology parsing behind it (dialects.h).
#include "gang/topology.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "gang/dialects.h"
#include "gang/manager.h"

namespace phalanx::gang {
namespace {

api::UnstructuredPtr Object(const std::string& yaml) {
  api::Manifests m;
  std::string err;
  EXPECT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "t.yaml", &m), &err)) << err;
  EXPECT_EQ(m.objects.size(), 1u);
  return std::make_shared<api::Unstructured>(m.objects.at(0));
}

Topology Dc() { return Topology{"dc", {"zone", "rack", "block", "kubernetes.io/hostname"}, ""}; }

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
    std::string err = ResolvePlacementLevels(tc.c, tc.topology, &out);
    if (!tc.error.empty()) {
      EXPECT_NE(err.find(tc.error), std::string::npos) << tc.name << ": " << err;
      continue;
    }
    EXPECT_EQ(err, "") << tc.name;
    EXPECT_EQ(out.levels, tc.levels) << tc.name;
    EXPECT_EQ(out.required, tc.required) << tc.name;
  }
  TopologyConstraint unsupported;
  unsupported.unsupported = "spec.networkTopology: ...";
  PlacementLevels out;
  EXPECT_EQ(ResolvePlacementLevels(unsupported, nullptr, &out), "spec.networkTopology: ...");
  Topology bad = Dc();
  bad.invalid = "Topology dc: spec.levels: must have at least 1 item";
  EXPECT_EQ(ResolvePlacementLevels(Tc("dc", "rack", ""), &bad, &out),
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
  Manager m;
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

TEST(TopologyDialectTest, VolcanoHardNetworkTopologyIsUnsupportedSoftIsNot) {
  auto pg = [](const std::string& nt) {
    return Object(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: v, "
        "namespace: ml}\nspec: {minMember: 2, networkTopology: " +
        nt + "}\n");
  };
  auto hard = SpecsFromObject(*pg("{mode: hard, highestTierAllowed: 2}"));
  ASSERT_EQ(hard.size(), 1u);
  EXPECT_EQ(hard[0].topology.unsupported,
            "spec.networkTopology: mode \"hard\" with highest tier \"2\" needs Volcano HyperNode "
            "tiers, which Phalanx does not support");
  EXPECT_EQ(hard[0].invalid, "");
  auto dflt = SpecsFromObject(*pg("{highestTierAllowed: 1}"));  // mode defaults to hard
  EXPECT_NE(dflt[0].topology.unsupported, "");
  auto soft = SpecsFromObject(*pg("{mode: soft}"));
  EXPECT_TRUE(soft[0].topology.empty());
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
