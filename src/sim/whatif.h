// What-if edits of a scenario before it runs: `phalanx simulate --add-nodes
// 4xgpu-1` adds four copies of an existing node, and `phalanx explain` searches such edits
// (more nodes of an existing shape, a pod constraint dropped) for the smallest one that
// lets a pending pod or gang bind.
#pragma once

#include <string>
#include <vector>

#include "api/status.h"
#include "sim/scenario.h"

namespace phalanx::sim {

// `count` copies of the scenario's node named `node_template`.
struct AddNodes {
  int count = 0;
  std::string node_template;
};

// Parses "COUNTxNODE" ("4xgpu-1", "4 x gpu-1", or "4x{gpu-1}"). COUNT is 1..10000.
// Errors: `--add-nodes "SPEC": want COUNTxNODE (e.g. 2xgpu-1), COUNT 1..10000`.
api::Status ParseAddNodes(const std::string& spec, AddNodes* out);

// Adds add.count copies of the node named add.node_template (a node present from the
// start or joining later; the copies are present from the start) to `sc`. A copy is the
// template with metadata.name "<template>-whatif-<k>" (k = 1, 2, ... skipping names taken),
// no uid, and the kubernetes.io/hostname label set to that name when the template's label
// was its own name (as a kubelet would register it). Errors: `--add-nodes: no node named
// "X" in the scenario (nodes: a, b, ...)`.
api::Status AddNodeCopies(const AddNodes& add, Scenario* sc);

// `names` ("a,b"): cordons those nodes (spec.unschedulable = true, as `kubectl cordon`),
// or removes them from the scenario. Errors: `--cordon-nodes: no node named "X" in the
// scenario`, `--remove-nodes: pod NS/NAME is bound to node "X" in the manifest`.
api::Status CordonNodes(const std::string& names, Scenario* sc);
api::Status RemoveNodes(const std::string& names, Scenario* sc);

// The what-if flags of `simulate` and `explain` in order: --remove-nodes, --cordon-nodes,
// then every --add-nodes entry. Errors as the functions above.
struct NodeEdits {
  std::vector<std::string> add;  // "COUNTxNODE" entries
  std::string cordon, remove;    // "a,b"
};
api::Status ApplyNodeEdits(const NodeEdits& edits, Scenario* sc);

// The distinct node shapes of `sc` (allocatable or capacity, labels other than the
// hostname, taints): the name of the first node of each, in scenario order.
std::vector<std::string> NodeShapeTemplates(const Scenario& sc);

// A pod constraint that `phalanx explain` may drop to make a pod fit (a field path as the
// user writes it, e.g. "spec.nodeSelector"). Dropping it from every pod of `pod_keys`
// ("ns/name") in `sc`: DropConstraint returns false when none of them had it.
//   spec.nodeSelector
//   spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
//   spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution
//   spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution
//   spec.topologySpreadConstraints (whenUnsatisfiable: DoNotSchedule)
//   node taints (the pods tolerate every taint: toleration {operator: Exists})
const std::vector<std::string>& DroppableConstraints();
bool DropConstraint(const std::string& constraint, const std::vector<std::string>& pod_keys,
                    Scenario* sc);

}  // namespace phalanx::sim
