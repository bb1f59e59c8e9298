#include "plugins/topologyplacement/topology_placement.h"

#include <map>
#include <set>
#include <string>

namespace phalanx::plugins::topologyplacement {

using framework::Status;

framework::StatusOr<std::unique_ptr<framework::Plugin>> TopologyPlacement::New(
    framework::PluginArgs /*args*/, framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(new TopologyPlacement(h));
}

Status TopologyPlacement::GeneratePlacements(framework::CycleState&,
                                             const framework::QueuedPodGroupInfo&,
                                             const framework::PlacementLevel& level,
                                             std::vector<framework::Placement>* out) {
  const framework::NodeInfoLister& snapshot = handle_.SnapshotSharedLister();
  std::map<std::string, std::set<std::string>> domains;
  const bool tiers = !level.scope && level.pod_group && level.pod_group->topology_domains;
  if (tiers) {
    std::vector<const api::Node*> nodes;
    for (const auto* ni : snapshot.List()) {
      if (ni->node()) nodes.push_back(ni->node());
    }
    domains = level.pod_group->topology_domains(level.index, nodes);
  } else {
    for (const auto* ni : snapshot.List()) {
      const auto& labels = ni->node()->metadata.labels;
      auto it = labels.find(level.key);
      if (it == labels.end()) continue;
      if (level.parent && !level.parent->count(ni->name())) continue;
      domains[it->second].insert(ni->name());
    }
  }
  for (auto& [value, nodes] : domains) {
    if (nodes.empty()) continue;
    framework::Placement p;
    p.level = level.key;
    p.domain = value;
    p.nodes = std::move(nodes);
    out->push_back(std::move(p));
  }
  if (!out->empty()) return Status::Success();
  if (tiers) return Status::Unschedulable("no HyperNode of " + level.key + " has a node");
  return Status::Unschedulable("no node " +
                               std::string(level.parent ? "of the parent domain " : "") +
                               "has the label " + level.key);
}

}  // namespace phalanx::plugins::topologyplacement
