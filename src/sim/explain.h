// `phalanx explain`: why a pod or gang is pending in a simulation, when it would start,
// and the smallest change that lets it bind.
//
// The scenario runs through the real scheduler (RunSimulation) up to --at (or to its end);
// then, on the scheduler's snapshot as it is at that moment, every pending member is
// diagnosed with its profile's plugins as a scheduling cycle would: PreFilter, Filter on
// every node (upstream framework.Diagnosis / NodeToStatus in
// pkg/scheduler/framework/types.go: the rejecting plugin and its reasons per node; filled
// by findNodesThatFitPod in pkg/scheduler/schedule_one.go), PreScore and Score on the
// feasible nodes (each Score plugin's weighted normalized score, as upstream's
// NodePluginScores / PluginScore in pkg/scheduler/framework/interface.go). A gang's pending
// members are placed one after another on the best node of their own pass (each sees the
// ones placed before it, as the PodGroup cycle does, without its topology step and without
// extenders), which tells which members fit where and how many are short.
//
// The fix search re-runs the whole simulation with what-if edits (sim/whatif.h) and keeps
// those after which the target is bound by the same time: N more nodes of an existing
// shape (N = 1, 2, ... up to a bound, every shape tried for each N, so the first success
// is the fewest nodes), and each pod constraint of the target's pods dropped alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/status.h"
#include "sim/forecast.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {

struct ExplainRequest {
  std::string pod;             // "NAMESPACE/NAME", or
  std::string gang;            // a gang key "NAMESPACE/NAME" (gang::DefaultPodGroupManager's)
  std::optional<double> at_s;  // diagnose at this virtual second (unset: the run's end)
  int max_add_nodes = 8;       // fix search: at most this many nodes added (0: no search)
  bool search_constraints = true;
};

// One node as the target member's scheduling pass saw it.
struct NodeVerdict {
  std::string node;
  bool feasible = false;
  std::string plugin;  // rejected: the PreFilter or Filter plugin that rejected it
  std::string reason;  // its message, e.g. "Insufficient nvidia.com/gpu"
  int64_t total = 0;   // feasible: sum of the weighted scores
  std::vector<std::pair<std::string, int64_t>> scores;  // Score plugin -> weight * normalized
};

struct MemberExplanation {
  std::string pod;       // "ns/name"
  bool bound = false;    // bound (or assumed) at the diagnosis time
  std::string node;      // bound: its node; pending: where the member would go ("" none)
  std::string unserved;  // no profile serves its schedulerName: why (nothing else is set)
  // A PreEnqueue plugin holds it back before any attempt (a gang short of members, a
  // missing ResourceClaim, a scheduling gate): the plugin and its message; no node is
  // diagnosed then (it would not be tried on any).
  std::string gate_plugin, gate_reason;
  std::string prefilter_plugin, prefilter_reason;  // PreFilter rejected every node
  std::vector<NodeVerdict> nodes;  // feasible by total descending, then rejected by name
  std::string last_attempt;        // the simulation's last FailedScheduling message
  int feasible_nodes() const;
};

// A change after which the target binds in a what-if run.
struct ExplainFix {
  std::string kind;           // "add-nodes" | "drop-constraint"
  int count = 0;              // add-nodes: how many
  std::string node_template;  // add-nodes: copies of this node
  std::string constraint;     // drop-constraint: sim/whatif.h DroppableConstraints()
  std::string what_if;        // how to run it, e.g. "phalanx simulate ... --add-nodes 2xgpu-1"
  double bound_s = 0;         // when the target was bound in that run (virtual s)
  size_t others_pending = 0;  // side effect: other pods left pending in that run
};

struct Explanation {
  std::string target;  // "pod ns/name" or "gang ns/name"
  bool is_gang = false;
  double at_s = 0;     // virtual time of the diagnosis
  int min_member = 1;  // gang: minMember (pod: 1)
  int active = 0;      // members bound or assumed then
  int pending = 0;     // members pending then
  int fit = 0;         // pending members placed by the greedy pass
  bool satisfied() const { return active >= min_member; }
  std::vector<MemberExplanation> members;  // bound members first, then pending in order
  // Pending targets only: ForecastStart over the nodes where some pending member is feasible
  // or rejected only for want of room (NodeResourcesFit, GpuShare, GangReservation).
  std::optional<StartForecast> forecast;
  size_t others_pending = 0;      // other pods pending at the diagnosis time
  std::vector<ExplainFix> fixes;  // smallest add-nodes fix first, then constraints
  std::string search_note;        // e.g. "no fix with up to 8 added nodes"
};

// Runs the diagnosis and the fix search. `base` is the run's configuration (seed, config,
// registry); its progress callback is not used. Errors: the simulation's errors; "pod
// ns/name is not in the scenario"; "pod ns/name does not exist at t=..s (deleted or not yet
// created)"; "no gang ns/name at t=..s (gangs: ...)"; exactly one of pod / gang must be set.
api::Status Explain(const Scenario& sc, const SimulationOptions& base, const ExplainRequest& req,
                    Explanation* out);

// The explanation for a terminal (several lines).
std::string FormatExplanation(const Explanation& e);

// The explanation as one JSON document (`phalanx explain --json F`): {"target", "gang",
// "at_s", "min_member", "active", "pending", "fit", "satisfied", "others_pending",
// "members": [{"pod", "bound", "node", "unserved", "gate": {plugin, reason} | null,
// "prefilter": {plugin, reason},
// "last_attempt", "nodes": [{"node", "feasible", "plugin", "reason", "total",
// "scores": {plugin: score}}]}], "forecast": {ok, start_s, nodes, why_not} | null,
// "fixes": [{kind, count, node_template, constraint, what_if, bound_s, others_pending}],
// "search_note"}.
std::string ExplanationJson(const Explanation& e);

}  // namespace phalanx::sim
