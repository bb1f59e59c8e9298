// TopologyPlacement's placements: one per domain of a level's node label, by domain; inside a
// parent domain for a subgroup scope; HyperNode tiers through PodGroupInfo::topology_domains;
// Unschedulable naming the level when it has no domain.
#include "plugins/topologyplacement/topology_placement.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::topologyplacement {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;

// "n1" -> {"rack", "r1"}: the node's labels.
using Labels = std::map<std::string, std::map<std::string, std::string>>;

std::string Render(const std::vector<framework::Placement>& ps) {
  std::string out;
  for (const auto& p : ps) {
    out += (out.empty() ? "" : " ") + p.Name() + ":";
    for (const auto& n : p.nodes) out += n + ",";
  }
  return out;
}

TEST(TopologyPlacementTest, GeneratePlacements) {
  const Labels nodes = {{"n1", {{"rack", "r2"}, {"block", "b1"}}},
                        {"n2", {{"rack", "r1"}, {"block", "b1"}}},
                        {"n3", {{"rack", "r2"}, {"block", "b2"}}},
                        {"n4", {{"block", "b2"}}}};
  const std::set<std::string> parent = {"n1", "n2"};
  struct Case {
    const char* name;
    std::string key;
    bool scope;
    const std::set<std::string>* parent;
    bool hypernodes;
    std::string want;  // Render of the placements
    framework::Code want_code;
    std::string want_message;
  };
  const std::vector<Case> cases = {
      {"one placement per label value, by value", "rack", false, nullptr, false,
       "rack=r1:n2, rack=r2:n1,n3,", framework::Code::kSuccess, ""},
      {"another level", "block", false, nullptr, false, "block=b1:n1,n2, block=b2:n3,n4,",
       framework::Code::kSuccess, ""},
      {"a scope's level inside its parent's domain", "rack", true, &parent, false,
       "rack=r1:n2, rack=r2:n1,", framework::Code::kSuccess, ""},
      {"no node has the label", "zone", false, nullptr, false, "", framework::Code::kUnschedulable,
       "no node has the label zone"},
      {"no node of the parent domain has the label", "zone", true, &parent, false, "",
       framework::Code::kUnschedulable, "no node of the parent domain has the label zone"},
      {"HyperNode tiers", "tier1", false, nullptr, true, "tier1=s0:n1,n2, tier1=s1:n3,",
       framework::Code::kSuccess, ""},
      {"a HyperNode tier with no node", "tier2", false, nullptr, true, "",
       framework::Code::kUnschedulable, "no HyperNode of tier2 has a node"},
  };
  for (const auto& c : cases) {
    fake::FakeHandle h;
    std::vector<framework::NodeInfo> infos;
    for (const auto& [name, labels] : nodes) {
      NodeBuilder b(name);
      for (const auto& [k, v] : labels) b.Label(k, v);
      infos.push_back(MakeNodeInfo(b.Obj()));
    }
    h.SetNodes(std::move(infos));
    auto pl = TopologyPlacement::New(nullptr, h);
    ASSERT_TRUE(pl.ok()) << c.name;
    auto* gp = dynamic_cast<framework::PlacementGeneratePlugin*>(pl.value().get());
    ASSERT_NE(gp, nullptr) << c.name;
    framework::PodGroupInfo pg;
    pg.key = "ml/train";
    pg.topology_levels = {c.key};
    if (c.hypernodes) {
      // tier1: s0 = {n1, n2}, s1 = {n3}; tier2: one HyperNode with no node.
      pg.topology_domains = [](size_t, const std::vector<const api::Node*>& ns) {
        std::map<std::string, std::set<std::string>> d;
        for (const auto* n : ns) {
          if (n->metadata.name == "n4") continue;
          d[n->metadata.name == "n3" ? "s1" : "s0"].insert(n->metadata.name);
        }
        return d;
      };
      if (c.key == "tier2") {
        pg.topology_domains = [](size_t, const std::vector<const api::Node*>&) {
          return std::map<std::string, std::set<std::string>>{{"s9", {}}};
        };
      }
    }
    framework::PlacementLevel level;
    level.pod_group = &pg;
    level.key = c.key;
    level.scope = c.scope;
    level.parent = c.parent;
    framework::CycleState state;
    std::vector<framework::Placement> out;
    const auto s = gp->GeneratePlacements(state, {}, level, &out);
    EXPECT_EQ(s.code(), c.want_code) << c.name << ": " << s.Message();
    EXPECT_EQ(s.Message(), c.want_message) << c.name;
    EXPECT_EQ(Render(out), c.want) << c.name;
  }
}

}  // namespace
}  // namespace phalanx::plugins::topologyplacement
