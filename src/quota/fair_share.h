// Hierarchical fair share of queues (KAI Proportion plugin semantics; Volcano proportion
// and Koordinator's runtime quota follow the same shape).
//
// For every resource separately, top down from the cluster's capacity, a parent's share X
// is divided among its children c:
//   1. cap_c = min(limit_c, demand_c), where demand_c is the subtree's requested amount
//      (allocated + pending) — a queue never deserves more than it asks for or its limit.
//   2. Quota first: each child gets g_c = min(guarantee_c, cap_c) — or, with a lendingLimit
//      L_c (Kueue KEP-1224 semantics), max(min(guarantee_c, cap_c), guarantee_c - L_c): the
//      part of its quota a queue may not lend is its share even when it does not ask for
//      it. If the guarantees do not fit in X they are scaled down in proportion to g_c.
//   3. Over quota: what is left of X is divided among children with cap_c > g_c in
//      descending priority groups (KAI over-quota priority), within a group by
//      over-quota weight (max-min water filling: a child that reaches cap_c leaves, the
//      rest is re-divided). Weight 0 gets nothing over quota.
//   4. Each child's share is divided among its own children the same way.
// Pods should name leaf queues (as in KAI); a non-leaf queue's own pods count toward its
// demand but get no share of their own.
//
// The dominant share of a queue (DRF, Ghodsi et al., NSDI '11) is max over resources of
// allocated / deserved; QueueSort serves the queue with the lowest dominant share first.
#pragma once

#include <map>
#include <string>

#include "quota/queue_tree.h"
#include "quota/usage.h"

namespace phalanx::quota {

// Resource name -> amount (fractional: a share need not be whole devices).
using Share = std::map<std::string, double>;

// Deserved share of every usable queue of `tree` (queues listed in tree.errors get none).
// `capacity`: the cluster's allocatable per resource; `demand`: per queue, its own pods'
// requests (allocated + pending) — subtree sums are formed here. Resources considered are
// those of `capacity`. With `usage` (time-based fair share, quota/usage.h), step 3's
// weights become KAI's calcShareWeights in every round among the children still taking:
// nW = w / Σ w, weight = max(0, nW + k_value·(nW - usage)) — a queue that used more than
// its weight's part of the cluster gets less over quota; quota (step 2) is unaffected.
// Pure function.
std::map<std::string, Share> ComputeFairShare(const QueueTree& tree, const ResourceList& capacity,
                                              const std::map<std::string, ResourceList>& demand,
                                              const NormalizedUsage* usage = nullptr,
                                              double k_value = 1.0);

// max over resources r with deserved[r] > 0 of allocated[r] / deserved[r]; a queue that
// holds some resource r it deserves none of gets +inf; 0 when it holds nothing.
double DominantShare(const ResourceList& allocated, const Share& deserved);

}  // namespace phalanx::quota
