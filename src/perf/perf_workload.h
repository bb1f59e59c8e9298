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
// Test case fields: name, featureGates, labels, workloadTemplate, workloads, and (1.36)
// defaultPodTemplatePath (createPods without podTemplatePath use it), schedulerConfigPath
// (the profile the workloads run with unless --config names one), metricsCollectorConfig
// and defaultThresholdMetricSelector (read; only SchedulingThroughput is measured).
// Workload fields: name, params, labels, and (1.36) featureGates (over the test case's),
// threshold (a number, or a map topic -> number: the least SchedulingThroughput average
// in pods/s; reported against the measured figure) and thresholdMetricSelector.
//
// Ops (upstream v1.20 scheduler_perf_test.go; the 1.36 operations of scheduler_perf.go,
// operations.go, dra.go and update.go; plus Phalanx's createPodGroups):
//   createNodes      count | countParam, nodeTemplatePath, nodeAllocatableStrategy
//                    (nodeAllocatable, csiNodeAllocatable {driver: {count}},
//                    migratedPlugins), labelNodePrepareStrategy, uniqueNodeLabelStrategy
//   createPods       count | countParam, podTemplatePath, namespace, collectMetrics,
//                    skipWaitToCompletion, persistentVolumeTemplatePath,
//                    persistentVolumeClaimTemplatePath, steadyState | steadyStateParam,
//                    duration | durationParam (steady state: how long)
//   createPodSets    count | countParam, namespacePrefix, createPodsOp (a createPods op
//                    run once in each namespace <prefix>-<i>)
//   deletePods       namespace, labelSelector, skipWaitToCompletion, deletePodsPerSecond
//   barrier          namespaces, labelSelector, stageRequirement (Scheduled | Attempted)
//   churn            mode (create | recreate), number, intervalMilliseconds, namespace,
//                    templatePaths
//   createNamespaces prefix, count | countParam, namespaceTemplatePath
//   sleep            duration (Go duration, "1s") | durationParam
//   createAny        templatePath, count | countParam (default 1), namespace
//   updateAny        templatePath, count | countParam (default 1), namespace,
//                    updatePerSecond, subresources
//   createResourceDriver  driverName, nodes (a glob of node names),
//                    maxClaimsPerNode | maxClaimsPerNodeParam: a ResourceSlice per node
//   allocResourceClaims   namespace: allocates the namespace's unallocated claims
//   startCollectingMetrics name, namespaces, labelSelector; stopCollectingMetrics
//   createPodGroups  count | countParam (gangs), podsPerGroup | podsPerGroupParam,
//                    minMember | minMemberParam (default podsPerGroup), podTemplatePath,
//                    namespace, collectMetrics, skipWaitToCompletion: Coscheduling
//                    PodGroups (scheduling.x-k8s.io/v1alpha1) and their pods.
// Templates (node, pod, createAny, updateAny) are Go text/template files: {{.Index}},
// {{.Count}} and the functions AddInt, SubtractInt, MultiplyInt, DivideInt, Mod and their
// Float forms (operations.go getTemplateFuncs) are rendered per object (perf_template.h).
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
#include <memory>
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
  kCreatePodSets,
  kDeletePods,
  kCreateAny,
  kUpdateAny,
  kCreateResourceDriver,
  kAllocResourceClaims,
  kStartCollectingMetrics,
  kStopCollectingMetrics,
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

  // sleep; createPods in steady state (how long)
  int64_t duration_ns = 0;
  std::string duration_param;

  // createPods: steady state (each scheduled pod is deleted and replaced by a new one for
  // `duration_ns`)
  bool steady_state = false;
  std::string steady_state_param;

  // createPodSets: the createPods op run in each namespace <namespace_prefix>-<i>
  std::string namespace_prefix;
  std::shared_ptr<PerfOp> create_pods;

  // barrier, deletePods, startCollectingMetrics: pods whose labels contain these
  std::map<std::string, std::string> label_selector;
  std::string stage_requirement = "Scheduled";  // barrier: Scheduled | Attempted
  int64_t per_second = 0;  // deletePods deletePodsPerSecond, updateAny updatePerSecond

  // createAny / updateAny
  std::string template_path;  // resolved
  std::vector<std::string> subresources;

  // createResourceDriver
  std::string driver_name;
  std::string nodes_glob;
  int64_t max_claims_per_node = 0;
  std::string max_claims_per_node_param;

  // startCollectingMetrics
  std::string metrics_name;
};

// What a workload's threshold is compared with (upstream thresholdMetricSelector; default
// SchedulingThroughput, data bucket Average).
struct ThresholdMetric {
  std::string name = "SchedulingThroughput";
  std::string data_bucket = "Average";  // Average | Perc50 | Perc90 | Perc95 | Perc99
  bool expect_lower = false;            // the threshold is a maximum
  std::map<std::string, std::string> labels;
};

struct PerfWorkload {
  std::string name;
  // Parameter values as written (integers, booleans, or Go durations for durationParam).
  std::map<std::string, std::string> params;
  std::vector<std::string> labels;
  std::map<std::string, bool> feature_gates;  // over the test case's; accepted, not applied
  // threshold: one value, or per topic (upstream RunBenchmarkPerfScheduling's topic name;
  // `phalanx bench` uses the workload file's directory name, e.g. "misc"). 0: none.
  double threshold = 0;
  std::map<std::string, double> threshold_by_topic;
  std::optional<ThresholdMetric> threshold_metric;
};

struct PerfTestCase {
  std::string name;
  std::map<std::string, bool> feature_gates;  // accepted, not applied
  std::vector<std::string> labels;
  std::vector<PerfOp> ops;
  std::vector<PerfWorkload> workloads;
  std::string default_pod_template_path;  // resolved; "" = upstream's makeBasePod()
  std::string scheduler_config_path;      // resolved; "" = the default configuration
  std::optional<ThresholdMetric> default_threshold_metric;
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

// The threshold of workload `w` for `topic` (its topic entry, else its single value; 0:
// none) and the metric it is compared with (the workload's selector, else the test case's
// default, else SchedulingThroughput Average).
double ThresholdOf(const PerfWorkload& w, const std::string& topic);
ThresholdMetric ThresholdMetricOf(const PerfTestCase& tc, const PerfWorkload& w);

// Upstream's label filter (later scheduler_perf, -perf-scheduling-label-filter): a comma-
// separated list; "x" or "+x": the labels must contain x; "-x": must not. Empty: all.
bool LabelFilterMatches(const std::string& filter, const std::vector<std::string>& labels);

// --workload selection: "" (all), "CASE" (every workload of a test case) or
// "CASE/WORKLOAD" (workload names may contain '/', e.g. "Unschedulable/5000Nodes/200InitPods").
bool WorkloadSelected(const std::string& selector, const std::string& case_name,
                      const std::string& workload_name);

}  // namespace phalanx::perf
