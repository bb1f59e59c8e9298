// Multi-level topology of a gang: from its TopologyConstraint (podgroup.h) and, for KAI, the
// Topology object it names, to the ordered list of node-label levels that the PodGroup
// cycle tries (src/scheduler/podgroup_algorithm.h scores the domains of each level).
//
// Semantics (KAI pkg/scheduler/plugins/topology/job_filtering.go
// calculateRelevantDomainLevels): the preferred level is tried first, then each level above
// it in the Topology, up to and including the required level. A required level is hard:
// when no domain of it fits, the gang does not fit. Without a required level the whole
// cluster is the last resort. Without a Topology object only the named levels exist
// (preferred, then required).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/status.h"
#include "gang/podgroup.h"

namespace phalanx::gang {

// The levels one gang's placement tries, in order.
struct PlacementLevels {
  std::vector<std::string> levels;  // node label keys, narrowest first; empty = no topology
  // The last level is a hard constraint (no fallback to the whole cluster).
  bool required = false;
  std::string topology;  // the Topology object's name, "" when none (for messages)
};

// Resolves `c` against `topology` (the object named by c.topology, nullptr when it names
// none or it does not exist). Returns OK and fills *out; else the reason the gang cannot be
// placed as the message, NotFound for a missing Topology, InvalidArgument otherwise, e.g.:
//   `topology "cluster-topology" not found (kai.scheduler/v1alpha1 Topology)`
//   `topology constraint: required level "rack" is not a level of topology "t" (zone, block)`
//   `topology constraint: preferred level "zone" is above required level "rack" in topology "t"`
// (KAI's newTopologyConstraintConfigError says the same of a missing level), the Topology's
// own `invalid`, or c.unsupported. A Volcano networkTopology (c.hyper_node_tiers) is
// resolved by topology_hypernode.h ResolveHyperNodeLevels instead.
api::Status ResolvePlacementLevels(const TopologyConstraint& c, const Topology* topology,
                                   PlacementLevels* out);

// One subgroup with its own topology (KAI spec.subGroups[].topologyConstraint).
struct SubGroupScope {
  std::string name;  // the subgroup
  int parent = -1;   // index of the nearest ancestor scope in the list; -1: the gang
  PlacementLevels levels;
};

// The subgroups of `spec` whose topologyConstraint asks for a level, parents before their
// children, each resolved as ResolvePlacementLevels does (`topology_of` looks a Topology up
// by name, nullptr when none exists). An empty `topology` name inherits the nearest
// constrained ancestor's, then the PodGroup's spec.topologyConstraint.topology (KAI
// subgroup_info/factory.go would leave such a subgroup unconstrained; here a level is
// never ignored). Returns OK or the first error (ResolvePlacementLevels' code), its message
// naming the field, e.g.
//   `spec.subGroups[1].topologyConstraint: required level "rck" is not a level of
//    topology "dc" (rack, block)`
api::Status ResolveSubGroupScopes(
    const PodGroupSpec& spec,
    const std::function<std::shared_ptr<const Topology>(const std::string&)>& topology_of,
    std::vector<SubGroupScope>* out);

}  // namespace phalanx::gang
