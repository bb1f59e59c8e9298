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

}  // namespace

std::string ResolvePlacementLevels(const TopologyConstraint& c, const Topology* topology,
                                   PlacementLevels* out) {
  *out = PlacementLevels{};
  if (!c.unsupported.empty()) return c.unsupported;
  out->topology = c.topology;
  out->required = !c.required_level.empty();
  if (c.topology.empty()) {
    if (!c.preferred_level.empty()) out->levels.push_back(c.preferred_level);
    if (out->required && c.required_level != c.preferred_level) {
      out->levels.push_back(c.required_level);
    }
    return "";
  }
  if (topology == nullptr) {
    return "topology " + Quote(c.topology) + " not found (kai.scheduler/v1alpha1 Topology)";
  }
  if (!topology->invalid.empty()) return "invalid " + topology->invalid;
  const auto& levels = topology->levels;
  const int required = c.required_level.empty() ? -1 : IndexOf(levels, c.required_level);
  const int preferred = c.preferred_level.empty() ? -1 : IndexOf(levels, c.preferred_level);
  for (const auto& [what, name, index] :
       {std::tuple<const char*, const std::string&, int>{"required", c.required_level, required},
        std::tuple<const char*, const std::string&, int>{"preferred", c.preferred_level,
                                                         preferred}}) {
    if (!name.empty() && index < 0) {
      return std::string("topology constraint: ") + what + " level " + Quote(name) +
             " is not a level of topology " + Quote(c.topology) + " (" + JoinLevels(levels) + ")";
    }
  }
  if (required >= 0 && preferred >= 0 && preferred < required) {
    return "topology constraint: preferred level " + Quote(c.preferred_level) +
           " is above required level " + Quote(c.required_level) + " in topology " +
           Quote(c.topology);
  }
  if (preferred < 0 && required < 0) return "";  // a Topology named, no level asked for
  // From the preferred level (or the required one alone) up to the required level, or up
  // to the top level when nothing is required.
  const int from = preferred >= 0 ? preferred : required;
  const int to = required >= 0 ? required : 0;
  for (int i = from; i >= to; --i) out->levels.push_back(levels[static_cast<size_t>(i)]);
  return "";
}

namespace {

// Depth-first from the children of `parent_name` ("" = top level), `parent_scope` the
// nearest constrained ancestor's index, `inherited` its Topology name.
std::string ScopesBelow(
    const PodGroupSpec& spec, const std::string& parent_name, int parent_scope,
    const std::string& inherited,
    const std::function<std::shared_ptr<const Topology>(const std::string&)>& topology_of,
    size_t depth, std::vector<SubGroupScope>* out) {
  if (depth > spec.sub_groups.size()) return "";  // parent cycles are rejected by the parser
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
      std::string err = ResolvePlacementLevels(c, t.get(), &s.levels);
      if (!err.empty()) {
        return "spec.subGroups[" + std::to_string(i) + "].topologyConstraint: " + err;
      }
      out->push_back(std::move(s));
      scope = static_cast<int>(out->size()) - 1;
    }
    std::string err = ScopesBelow(spec, g.name, scope, topology_name, topology_of, depth + 1, out);
    if (!err.empty()) return err;
  }
  return "";
}

}  // namespace

std::string ResolveSubGroupScopes(
    const PodGroupSpec& spec,
    const std::function<std::shared_ptr<const Topology>(const std::string&)>& topology_of,
    std::vector<SubGroupScope>* out) {
  out->clear();
  return ScopesBelow(spec, "", -1, spec.topology.topology, topology_of, 0, out);
}

}  // namespace phalanx::gang
