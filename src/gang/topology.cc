#include "gang/topology.h"

#include <algorithm>
#include <tuple>

namespace phalanx::gang {

namespace {

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string JoinLevels(const std::vector<std::string>& levels) {
  std::string out;
  for (const auto& l : levels) out += (out.empty() ? "" : ", ") + l;
  return out;
}

// Index of `level` in `levels`, or -1.
int IndexOf(const std::vector<std::string>& levels, const std::string& level) {
  auto it = std::find(levels.begin(), levels.end(), level);
  return it == levels.end() ? -1 : static_cast<int>(it - levels.begin());
}

// Index of `level` in the topology, by label key or (Koordinator) by layer name.
int LevelIndex(const Topology& t, const std::string& level) {
  const int i = IndexOf(t.levels, level);
  return i >= 0 ? i : IndexOf(t.layer_names, level);
}

}  // namespace

api::Status ResolvePlacementLevels(const TopologyConstraint& c, const Topology* topology,
                                   PlacementLevels* out) {
  *out = PlacementLevels{};
  if (!c.unsupported.empty()) return absl::InvalidArgumentError(c.unsupported);
  out->topology = c.topology;
  out->required = !c.required_level.empty();
  if (c.topology.empty()) {
    if (!c.preferred_level.empty()) out->levels.push_back(c.preferred_level);
    if (out->required && c.required_level != c.preferred_level) {
      out->levels.push_back(c.required_level);
    }
    return absl::OkStatus();
  }
  if (topology == nullptr) {
    if (c.topology.rfind("scheduling.koordinator.sh/", 0) == 0) {
      return absl::NotFoundError(
          "ClusterNetworkTopology " +
          Quote(c.topology.substr(std::string("scheduling.koordinator.sh/").size())) +
          " not found (scheduling.koordinator.sh/v1alpha1)");
    }
    return absl::NotFoundError("topology " + Quote(c.topology) +
                               " not found (kai.scheduler/v1alpha1 Topology)");
  }
  if (!topology->invalid.empty()) return absl::InvalidArgumentError("invalid " + topology->invalid);
  if (!c.must_gather.empty() || !c.prefer_gather.empty()) {
    // Koordinator gather rules: the narrowest layer of each kind (the lowest in the chain).
    TopologyConstraint narrowed = c;
    narrowed.must_gather.clear();
    narrowed.prefer_gather.clear();
    for (const auto& [layers, level] : {std::pair<const std::vector<std::string>*, std::string*>{
                                            &c.must_gather, &narrowed.required_level},
                                        std::pair<const std::vector<std::string>*, std::string*>{
                                            &c.prefer_gather, &narrowed.preferred_level}}) {
      int best = -1;
      for (const auto& layer : *layers) {
        const int i = LevelIndex(*topology, layer);
        if (i < 0) {
          return absl::InvalidArgumentError("gather rule layer " + Quote(layer) +
                                            " is not a layer of " + Quote(c.topology) + " (" +
                                            JoinLevels(topology->layer_names) + ")");
        }
        best = std::max(best, i);
      }
      if (best >= 0) *level = topology->levels[static_cast<size_t>(best)];
    }
    if (LevelIndex(*topology, narrowed.preferred_level) <=
        LevelIndex(*topology, narrowed.required_level)) {
      narrowed.preferred_level.clear();  // implied by the required layer
    }
    return ResolvePlacementLevels(narrowed, topology, out);
  }
  const auto& levels = topology->levels;
  const int required = c.required_level.empty() ? -1 : LevelIndex(*topology, c.required_level);
  const int preferred = c.preferred_level.empty() ? -1 : LevelIndex(*topology, c.preferred_level);
  for (const auto& [what, name, index] :
       {std::tuple<const char*, const std::string&, int>{"required", c.required_level, required},
        std::tuple<const char*, const std::string&, int>{"preferred", c.preferred_level,
                                                         preferred}}) {
    if (!name.empty() && index < 0) {
      return absl::InvalidArgumentError(std::string("topology constraint: ") + what + " level " +
                                        Quote(name) + " is not a level of topology " +
                                        Quote(c.topology) + " (" + JoinLevels(levels) + ")");
    }
  }
  if (required >= 0 && preferred >= 0 && preferred < required) {
    return absl::InvalidArgumentError("topology constraint: preferred level " +
                                      Quote(c.preferred_level) + " is above required level " +
                                      Quote(c.required_level) + " in topology " +
                                      Quote(c.topology));
  }
  if (preferred < 0 && required < 0)
    return absl::OkStatus();  // a Topology named, no level asked for
  // From the preferred level (or the required one alone) up to the required level, or up
  // to the top level when nothing is required.
  const int from = preferred >= 0 ? preferred : required;
  const int to = required >= 0 ? required : 0;
  for (int i = from; i >= to; --i) out->levels.push_back(levels[static_cast<size_t>(i)]);
  return absl::OkStatus();
}

namespace {

// Depth-first from the children of `parent_name` ("" = top level), `parent_scope` the
// nearest constrained ancestor's index, `inherited` its Topology name.
api::Status ScopesBelow(
    const PodGroupSpec& spec, const std::string& parent_name, int parent_scope,
    const std::string& inherited,
    const std::function<std::shared_ptr<const Topology>(const std::string&)>& topology_of,
    size_t depth, std::vector<SubGroupScope>* out) {
  if (depth > spec.sub_groups.size())
    return absl::OkStatus();  // parent cycles are rejected by the parser
  for (size_t i = 0; i < spec.sub_groups.size(); ++i) {
    const SubGroup& g = spec.sub_groups[i];
    if (g.parent != parent_name) continue;
    int scope = parent_scope;
    std::string topology_name = inherited;
    TopologyConstraint c = g.topology;
    if (!c.topology.empty()) topology_name = c.topology;
    c.topology = topology_name;
    if (!c.required_level.empty() || !c.preferred_level.empty()) {
      std::shared_ptr<const Topology> t;
      if (!c.topology.empty()) t = topology_of(c.topology);
      SubGroupScope s;
      s.name = g.name;
      s.parent = parent_scope;
      api::Status err = ResolvePlacementLevels(c, t.get(), &s.levels);
      if (!err.ok()) {
        return api::Status(err.code(), "spec.subGroups[" + std::to_string(i) +
                                           "].topologyConstraint: " + std::string(err.message()));
      }
      out->push_back(std::move(s));
      scope = static_cast<int>(out->size()) - 1;
    }
    api::Status err = ScopesBelow(spec, g.name, scope, topology_name, topology_of, depth + 1, out);
    if (!err.ok()) return err;
  }
  return absl::OkStatus();
}

}  // namespace

api::Status ResolveSubGroupScopes(
    const PodGroupSpec& spec,
    const std::function<std::shared_ptr<const Topology>(const std::string&)>& topology_of,
    std::vector<SubGroupScope>* out) {
  out->clear();
  return ScopesBelow(spec, "", -1, spec.topology.topology, topology_of, 0, out);
}

}  // namespace phalanx::gang
