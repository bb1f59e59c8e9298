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

}  // namespace phalanx::gang
