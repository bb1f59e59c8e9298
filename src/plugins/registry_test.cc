// NewInTreeRegistry registers every in-tree plugin under its name, and each factory builds
// a plugin with default args.
#include "plugins/registry.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "framework/interface.h"
#include "plugins/testing_fake_handle.h"

namespace phalanx::plugins {
namespace {

TEST(RegistryTest, InTreePlugins) {
  // The plugins of this module; other modules register more (e.g. gang scheduling).
  const std::vector<std::string> want = {
      "DefaultBinder",    "ImageLocality",     "NodeAffinity",
      "NodeName",         "NodePorts",         "NodeResourcesBalancedAllocation",
      "NodeResourcesFit", "NodeUnschedulable", "PrioritySort",
      "SchedulingGates",  "TaintToleration",
  };
  framework::Registry r = NewInTreeRegistry();
  fake::FakeHandle h;
  YAML::Node empty = YAML::Load("{}");
  for (const auto& name : want) {
    const framework::PluginFactory* f = r.Find(name);
    ASSERT_NE(f, nullptr) << name;
    for (framework::PluginArgs args : {static_cast<framework::PluginArgs>(nullptr),
                                       static_cast<framework::PluginArgs>(&empty)}) {
      auto pl = (*f)(args, h);
      ASSERT_TRUE(pl.ok()) << name << ": " << pl.status().ToString();
      EXPECT_EQ(pl.value()->Name(), name);
    }
  }
  // Registering an in-tree name again is an error (out-of-tree plugins cannot shadow).
  EXPECT_FALSE(r.Register("NodeResourcesFit", *r.Find("NodeResourcesFit")).IsSuccess());
}

TEST(RegistryTest, BadArgsAreReported) {
  framework::Registry r = NewInTreeRegistry();
  fake::FakeHandle h;
  YAML::Node bad = YAML::Load("{scoringStrategy: {type: Foo}}");
  auto pl = (*r.Find("NodeResourcesFit"))(&bad, h);
  ASSERT_FALSE(pl.ok());
  EXPECT_EQ(pl.status().Message().rfind(
                "NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: \"Foo\"", 0),
            0u);
}

}  // namespace
}  // namespace phalanx::plugins
