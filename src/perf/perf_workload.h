// Upstream scheduler_perf workload files (test/integration/scheduler_perf, config/
// performance-config.yaml): parsing, validation and parameter substitution.
//
// A file is a YAML list of test cases:
//   - name: SchedulingBasic
//     featureGates: {Foo: true}        # accepted and ignored (noted in the results)
//     labels: [performance]             # later upstream; filtered with --label
//     workloadTemplate:                 # ops, run in order
//     - opcode: createNodes
//       countParam: $initNodes
//     - opcode: createPods
//       countParam: $measurePods
//       podTemplatePath: config/pod-default.yaml
//       collectMetrics: true
//     workloads:
//     - name: 5000Nodes
//       labels: [fast]
//       params: {initNodes: 5000, measurePods: 1000}
//
// Ops (upstream v1.20 scheduler_perf_test.go, plus the later upstream additions churn,
// createNamespaces and sleep, plus Phalanx's createPodGroups):
//   createNodes      count | countParam, nodeTemplatePath, nodeAllocatableStrategy
//                    (nodeAllocatable, csiNodeAllocatable {driver: {count}},
//                    migratedPlugins), labelNodePrepareStrategy, uniqueNodeLabelStrategy
//   createPods       count | countParam, podTemplatePath, namespace, collectMetrics,
//                    skipWaitToCompletion, persistentVolumeTemplatePath,
//                    persistentVolumeClaimTemplatePath
//   barrier          namespaces
//   churn            mode (create | recreate), number, intervalMilliseconds, namespace,
//                    templatePaths
//   createNamespaces prefix, count | countParam, namespaceTemplatePath
//   sleep            duration (Go duration, "1s") | durationParam
//   createPodGroups  count | countParam (gangs), podsPerGroup | podsPerGroupParam,
//                    minMember | minMemberParam (default podsPerGroup), podTemplatePath,
//                    namespace, collectMetrics, skipWaitToCompletion: Coscheduling
//                    PodGroups (scheduling.x-k8s.io/v1alpha1) and their pods.
//
// As upstream (yaml.UnmarshalStrict), unknown fields are errors. Errors name the file,
// the test case, the op index and the field, e.g.
//   "perf.yaml: test case \"SchedulingBasic\": workloadTemplate[2] (createPods):
//    countParam: \"measurePods\" must start with \"$\""
//
// Template paths: upstream runs from the scheduler_perf directory and writes paths such
// as "config/pod-default.yaml" relative to it, with the workload file in config/. A
// relative template path is therefore tried against the workload file's directory first
// and then against its parent directory; an absolute path is used as is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/status.h"

namespace phalanx::perf {

enum class PerfOpKind {
  kCreateNodes,
  kCreatePods,
  kBarrier,
  kChurn,
  kCreateNamespaces,
  kSleep,
  kCreatePodGroups,
};

// "createNodes", "createPods", ...
const char* PerfOpcodeName(PerfOpKind k);

// createNodes' node prepare strategy (upstream test/utils/runners.go). At most one
// applies, by upstream's precedence: nodeAllocatable, then label, then unique label.
struct NodeStrategy {
  enum class Kind { kTrivial, kNodeAllocatable, kLabel, kUniqueLabel };
  Kind kind = Kind::kTrivial;
  std::string label_key;                           // label / unique label
  std::vector<std::string> label_values;           // label: round robin over nodes
  std::map<std::string, std::string> allocatable;  // nodeAllocatable: resource -> quantity
  // nodeAllocatable only (upstream NodeAllocatableStrategy.PrepareDependentObjects): a CSINode
  // named as the node is created for every node, with one driver per csiNodeAllocatable
  // entry (driver name -> allocatable.count; nullopt: the entry has no count, i.e. no
  // limit) and the annotation storage.alpha.kubernetes.io/migrated-plugins =
  // migratedPlugins joined with ",".
  std::map<std::string, std::optional<int32_t>> csi_node_allocatable;
  std::vector<std::string> migrated_plugins;  // e.g. "kubernetes.io/aws-ebs"
};

struct PerfOp {
  PerfOpKind kind = PerfOpKind::kBarrier;
  int index = 0;  // position in workloadTemplate

  // count / countParam ("$name"): nodes, pods, namespaces or gangs.
  int64_t count = 0;
  std::string count_param;

  // createNodes
  std::string node_template_path;  // resolved; empty: upstream's default node
  NodeStrategy strategy;

  // createPods / createPodGroups
  std::string pod_template_path;  // resolved; empty: upstream's makeBasePod()
  std::optional<std::string> namespace_;
  bool collect_metrics = false;
  bool skip_wait = false;
  std::string pv_template_path;   // resolved
  std::string pvc_template_path;  // resolved

  // createPodGroups
  int64_t pods_per_group = 0;
  std::string pods_per_group_param;
  int64_t min_member = 0;  // 0: pods_per_group
  std::string min_member_param;

  // barrier
  std::vector<std::string> namespaces;

  // churn
  std::string mode;  // create | recreate
  int64_t number = 0;
  int64_t interval_ms = 500;
  std::vector<std::string> template_paths;  // resolved

  // createNamespaces
  std::string prefix;
  std::string namespace_template_path;  // resolved; empty: bare Namespace

  // sleep
  int64_t duration_ns = 0;
  std::string duration_param;
};

struct PerfWorkload {
  std::string name;
  // Parameter values as written (integers, or Go durations for durationParam).
  std::map<std::string, std::string> params;
  std::vector<std::string> labels;
};

struct PerfTestCase {
  std::string name;
  std::map<std::string, bool> feature_gates;  // accepted, not applied
  std::vector<std::string> labels;
  std::vector<PerfOp> ops;
  std::vector<PerfWorkload> workloads;
};

struct PerfConfig {
  std::string path;  // the workload file
  std::vector<PerfTestCase> cases;
};

// Reads and validates a workload file (upstream getTestCases + validateTestCases: at least
// one test case; each with workloads, ops and an op that collects metrics). Template paths
// are resolved (see above) and must exist. Returns the first error ("FILE: test case
// \"NAME\": workloadTemplate[2] (createPods): FIELD: ...").
api::Status LoadPerfConfig(const std::string& path, PerfConfig* out);

// As LoadPerfConfig on `text`; `path` names the file in errors and anchors template paths.
api::Status ParsePerfConfig(const std::string& text, const std::string& path, PerfConfig* out);

// Upstream patchParams: a copy of the test case's ops with every *Param replaced by the
// workload's value. Errors: "parameter $x is undefined", a non-integer value, or a count
// that is not positive after substitution (upstream isValid(false)); they name the file,
// test case, workload, op index and field.
api::Status PatchParams(const PerfConfig& cfg, const PerfTestCase& tc, const PerfWorkload& w,
                        std::vector<PerfOp>* out);

// Resolves a template path written in `workload_file` (rule above). Returns the first
// existing candidate, or "" when none exists.
std::string ResolveTemplatePath(const std::string& workload_file, const std::string& path);

// Upstream's label filter (later scheduler_perf, -perf-scheduling-label-filter): a comma-
// separated list; "x" or "+x": the labels must contain x; "-x": must not. Empty: all.
bool LabelFilterMatches(const std::string& filter, const std::vector<std::string>& labels);

// --workload selection: "" (all), "CASE" (every workload of a test case) or
// "CASE/WORKLOAD" (workload names may contain '/', e.g. "Unschedulable/5000Nodes/200InitPods").
bool WorkloadSelected(const std::string& selector, const std::string& case_name,
                      const std::string& workload_name);

}  // namespace phalanx::perf
