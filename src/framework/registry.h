// Plugin registry (upstream pkg/scheduler/framework/runtime/registry.go).
//
// A Registry maps plugin names to factories. NewInTreeRegistry() (plugins/registry.h)
// returns the in-tree plugins; out-of-tree plugins are merged in with
// Registry::Register, as upstream's app.WithPlugin(name, factory) does.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "framework/status.h"

namespace YAML {
class Node;
}

namespace phalanx::framework {

class Plugin;
class Handle;

// Plugin arguments: the pluginConfig[].args YAML node of the profile, or nullptr when the
// profile gives none (the plugin applies its defaults). A factory validates its args and
// returns an Error status naming the field, e.g.
// "NodeResourcesFitArgs: scoringStrategy.type: Unsupported value \"Foo\"".
using PluginArgs = const YAML::Node*;
using PluginFactory =
    std::function<StatusOr<std::unique_ptr<Plugin>>(PluginArgs args, Handle& handle)>;

class Registry {
 public:
  // Error if `name` is already registered.
  Status Register(const std::string& name, PluginFactory factory);
  // Error on the first duplicate name.
  Status Merge(const Registry& other);
  const PluginFactory* Find(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  const std::map<std::string, PluginFactory, std::less<>>& factories() const { return factories_; }

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

}  // namespace phalanx::framework
