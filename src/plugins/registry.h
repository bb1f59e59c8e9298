// The in-tree plugin registry (upstream pkg/scheduler/framework/plugins/registry.go).
#pragma once

#include "framework/registry.h"

namespace phalanx::plugins {

// A Registry with every in-tree plugin under its kName: PrioritySort, SchedulingGates,
// NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit, NodeResourcesBalancedAllocation, ImageLocality, DefaultBinder.
// Out-of-tree plugins are added with Registry::Register / Merge.
framework::Registry NewInTreeRegistry();

}  // namespace phalanx::plugins
