// What the simulated cluster-autoscaler (sim/autoscaler.h) did in a run, for the summary
// and the --results JSON ("scale-up:" / "scale_up"). Times are virtual seconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::sim {

// One request as the autoscaler handled it, for the summary.
struct ProvisioningRecord {
  std::string request;  // namespace/name
  std::string class_name;
  std::string node_group;  // "" when no node was added for it
  int32_t pods = 0;
  int32_t nodes = 0;  // added for it by its last scale-up
  double created_s = 0;
  std::optional<double> provisioned_s;  // Provisioned=True
  std::optional<double> nodes_ready_s;  // all its nodes joined
  std::optional<double> started_s;      // first of its pods bound
  int32_t failed_scale_ups = 0;
  std::string outcome;  // last condition, e.g. "Provisioned=True (CapacityIsProvisioned)"
};

struct AutoscalerSummary {
  int64_t nodes_added = 0;
  int64_t nodes_removed = 0;                 // by scale-down or a rolled-back scale-up
  double idle_node_seconds = 0;              // nodes of groups while they held no pod
  std::vector<ProvisioningRecord> requests;  // in creation order
};

}  // namespace phalanx::sim
