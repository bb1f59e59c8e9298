#include "framework/registry.h"

namespace phalanx::framework {

Status Registry::Register(const std::string& name, PluginFactory factory) {
  if (factories_.count(name)) {
    return Status::Error("a plugin named " + name + " already exists");
  }
  factories_.emplace(name, std::move(factory));
  return Status::Success();
}

Status Registry::Merge(const Registry& other) {
  for (const auto& [name, f] : other.factories_) {
    Status s = Register(name, f);
    if (!s.IsSuccess()) return s;
  }
  return Status::Success();
}

const PluginFactory* Registry::Find(std::string_view name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

}  // namespace phalanx::framework
