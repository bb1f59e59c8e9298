// Volcano HyperNode tiers as topology levels: a Volcano PodGroup's
// spec.networkTopology keeps the gang inside one HyperNode of a tier at or below its
// highest allowed tier; each tier is a level whose domains are its HyperNodes, generated
// and scored exactly like the node-label levels of a KAI Topology
// (src/scheduler/podgroup_algorithm.h PlaceInTopology).
//
// Sources:
//   API: volcano.sh/apis pkg/apis/topology/v1alpha1/hypernode_types.go (HyperNode
//     spec.tier int, spec.tierName, spec.members[]{type Node|HyperNode, selector
//     {exactMatch{name} | regexMatch{pattern} | labelMatch (metav1.LabelSelector, Node
//     members only)}}) and its CRD config/crd/volcano/bases/topology.volcano.sh_hypernodes
//     .yaml (tier required, minimum 0; members minItems 1; exactly one selector).
//   Tree: volcano pkg/scheduler/api/hyper_node_info.go — a HyperNode member names a child
//     HyperNode by exactMatch; a child has one parent ("already has a parent"); a cycle is
//     an error; a HyperNode's nodes are its Node members plus its children's, recursively.
//     A regexMatch is Go regexp.MatchString (unanchored: matches anywhere in the name).
//   Job constraint: volcano docs/user-guide/how_to_use_network_topology_aware_scheduling.md
//     — mode hard (default): the tasks inside one HyperNode of tier <= highestTierAllowed
//     (or of the tier named by highestTierName; both set is an error), else Pending; mode
//     soft: "within the same HyperNode as much as possible". Volcano's allocate action
//     tries the tiers from the lowest up and bin-packs HyperNodes.
//
// Phalanx semantics: the levels are the HyperNode tiers that exist, lowest first (named
// "tier <n>"), up to the highest allowed one; hard = required (no domain of any allowed
// tier fits: pending), soft = every tier, then the whole cluster. Hard without a highest
// tier: every tier, still required.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "api/types.h"
#include "api/unstructured.h"
#include "gang/podgroup.h"
#include "gang/topology.h"

namespace phalanx::gang {

using HyperNodeList = std::vector<std::shared_ptr<const HyperNode>>;
// Domains of one level: domain name (a HyperNode, or a label value) -> node names.
using DomainMap = std::map<std::string, std::set<std::string>>;

// True for kind HyperNode of group topology.volcano.sh.
bool IsHyperNodeObject(const api::Unstructured& obj);

// Decodes a HyperNode strictly. Never throws: a bad field sets `invalid`, naming the object
// and each field, e.g. `HyperNode s0: spec.tier: Required value; spec.members[1].selector:
// exactly one of exactMatch, regexMatch, labelMatch must be set, got 2`.
HyperNode HyperNodeFromObject(const api::Unstructured& obj);

// The level name of a tier ("tier 2") and back (-1 when `level` is not such a name).
std::string TierLevel(int32_t tier);
int32_t LevelTier(const std::string& level);

// Resolves a Volcano networkTopology (c.hyper_node_tiers) against every HyperNode. Returns
// OK and fills *out (levels "tier <n>", lowest first; required = mode hard;
// topology = "HyperNode tiers"); else why the gang cannot be placed as the message,
// NotFound when no HyperNode exists, InvalidArgument otherwise, e.g.
//   `spec.networkTopology: no HyperNode exists (topology.volcano.sh/v1alpha1)`
//   `spec.networkTopology: highestTierAllowed 0: no HyperNode has tier <= 0 (tiers: 1, 2)`
//   `spec.networkTopology: highestTierName "zone" is no HyperNode's spec.tierName (rack, spine)`
//   `HyperNode s0: spec.tier: Required value` (an invalid HyperNode: its own reason)
//   `HyperNode s1: member of both s4 and s5 (a HyperNode has one parent)`
//   `HyperNode s4: cycle s4 -> s5 -> s4 through spec.members`
api::Status ResolveHyperNodeLevels(const TopologyConstraint& c, const HyperNodeList& all,
                                   PlacementLevels* out);

// The HyperNodes of `tier` over `nodes`: each one's leaf nodes (its Node members' matches
// among `nodes` plus its children's, recursively); HyperNodes with no node are left out.
// A member naming a HyperNode that does not exist contributes nothing (Volcano waits for it
// too). Precondition: ResolveHyperNodeLevels accepted `all` (no cycle; a guard stops one).
DomainMap HyperNodeDomains(const HyperNodeList& all, int32_t tier,
                           const std::vector<const api::Node*>& nodes);

}  // namespace phalanx::gang
