#include "perf/perf_workload.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace phalanx::perf {
namespace {

namespace fs = std::filesystem;

const std::string kTestdata = std::string(PHALANX_SOURCE_DIR) + "/src/perf/testdata";
const std::string kConfig = kTestdata + "/config/performance-config.yaml";
// Upstream's config/ directory: the copy scripts/scheduler-perf.sh caches, or a source tree.
std::string UpstreamConfigDir() {
  std::vector<std::string> dirs = {
      "/tmp/k8ssrc/kubernetes-1.20.5+really1.20.2/test/integration/scheduler_perf/config",
      "/work/k8s-src/kubernetes-1.20.5+really1.20.2/test/integration/scheduler_perf/config"};
  if (const char* home = std::getenv("HOME")) {
    dirs.insert(dirs.begin(),
                std::string(home) + "/.cache/phalanx-k8s/1.20.2/scheduler_perf/config");
  }
  for (const auto& d : dirs) {
    if (fs::exists(d + "/performance-config.yaml")) return d;
  }
  return dirs.back();
}
const std::string kUpstream = UpstreamConfigDir();

// Parses `text` as if it were a file in testdata/perf/config (so templates resolve).
api::Status Parse(const std::string& text, PerfConfig* cfg) {
  return ParsePerfConfig(text, kTestdata + "/config/inline.yaml", cfg);
}

std::string ParseError(const std::string& text) {
  PerfConfig cfg;
  const api::Status s = Parse(text, &cfg);
  EXPECT_FALSE(s.ok()) << "expected an error for:\n" << text;
  return std::string(s.message());
}

const PerfTestCase* Case(const PerfConfig& cfg, const std::string& name) {
  for (const auto& tc : cfg.cases) {
    if (tc.name == name) return &tc;
  }
  return nullptr;
}

TEST(PerfWorkload, ParsesTestdataFile) {
  PerfConfig cfg;
  std::string err;
  ASSERT_EQ(LoadPerfConfig(kConfig, &cfg), absl::OkStatus());
  ASSERT_EQ(cfg.cases.size(), 9u);

  const PerfTestCase* basic = Case(cfg, "SchedulingBasic");
  ASSERT_NE(basic, nullptr);
  EXPECT_EQ(basic->labels, (std::vector<std::string>{"performance", "fast"}));
  ASSERT_EQ(basic->ops.size(), 3u);
  EXPECT_EQ(basic->ops[0].kind, PerfOpKind::kCreateNodes);
  EXPECT_EQ(basic->ops[0].count_param, "$initNodes");
  EXPECT_TRUE(basic->ops[0].node_template_path.empty());
  EXPECT_EQ(basic->ops[2].kind, PerfOpKind::kCreatePods);
  EXPECT_TRUE(basic->ops[2].collect_metrics);
  EXPECT_FALSE(basic->ops[1].collect_metrics);
  // "config/pod-default.yaml" resolves against the parent of the file's directory.
  EXPECT_EQ(fs::path(basic->ops[1].pod_template_path),
            fs::path(kTestdata + "/config/pod-default.yaml").lexically_normal());
  ASSERT_EQ(basic->workloads.size(), 2u);
  EXPECT_EQ(basic->workloads[1].labels, (std::vector<std::string>{"slow"}));
  EXPECT_EQ(basic->workloads[0].params.at("measurePods"), "100");

  const PerfTestCase* anti = Case(cfg, "SchedulingPodAntiAffinity");
  ASSERT_NE(anti, nullptr);
  EXPECT_EQ(anti->ops[0].strategy.kind, NodeStrategy::Kind::kUniqueLabel);
  EXPECT_EQ(anti->ops[0].strategy.label_key, "kubernetes.io/hostname");
  ASSERT_TRUE(anti->ops[2].namespace_.has_value());
  EXPECT_EQ(*anti->ops[2].namespace_, "sched-test");

  const PerfTestCase* spread = Case(cfg, "TopologySpreading");
  ASSERT_NE(spread, nullptr);
  EXPECT_EQ(spread->ops[0].strategy.kind, NodeStrategy::Kind::kLabel);
  EXPECT_EQ(spread->ops[0].strategy.label_values,
            (std::vector<std::string>{"moon-1", "moon-2", "moon-3"}));
  EXPECT_FALSE(spread->ops[0].node_template_path.empty());

  // The three PV workloads, as upstream's performance-config.yaml writes them.
  const PerfTestCase* csi = Case(cfg, "SchedulingCSIPVs");
  ASSERT_NE(csi, nullptr);
  EXPECT_TRUE(csi->feature_gates.empty());
  EXPECT_EQ(csi->ops[0].strategy.kind, NodeStrategy::Kind::kNodeAllocatable);
  EXPECT_EQ(csi->ops[0].strategy.allocatable.at("attachable-volumes-csi-ebs.csi.aws.com"), "39");
  ASSERT_EQ(csi->ops[0].strategy.csi_node_allocatable.size(), 1u);
  EXPECT_EQ(csi->ops[0].strategy.csi_node_allocatable.at("ebs.csi.aws.com"), 39);
  EXPECT_TRUE(csi->ops[0].strategy.migrated_plugins.empty());
  for (int i : {1, 2}) {
    EXPECT_EQ(fs::path(csi->ops[i].pv_template_path).filename(), "pv-csi.yaml");
    EXPECT_EQ(fs::path(csi->ops[i].pvc_template_path).filename(), "pvc.yaml");
  }
  EXPECT_TRUE(csi->ops[2].collect_metrics);
  const PerfTestCase* migrated = Case(cfg, "SchedulingMigratedInTreePVs");
  ASSERT_NE(migrated, nullptr);
  EXPECT_EQ(migrated->feature_gates,
            (std::map<std::string, bool>{{"CSIMigration", true}, {"CSIMigrationAWS", true}}));
  EXPECT_EQ(migrated->ops[0].strategy.csi_node_allocatable.at("ebs.csi.aws.com"), 39);
  EXPECT_EQ(migrated->ops[0].strategy.migrated_plugins,
            (std::vector<std::string>{"kubernetes.io/aws-ebs"}));
  EXPECT_EQ(fs::path(migrated->ops[1].pv_template_path).filename(), "pv-aws.yaml");
  const PerfTestCase* intree = Case(cfg, "SchedulingInTreePVs");
  ASSERT_NE(intree, nullptr);
  EXPECT_EQ(intree->ops[0].strategy.kind, NodeStrategy::Kind::kTrivial);
  EXPECT_EQ(fs::path(intree->ops[2].pv_template_path).filename(), "pv-aws.yaml");

  const PerfTestCase* gangs = Case(cfg, "Gangs");
  ASSERT_NE(gangs, nullptr);
  ASSERT_EQ(gangs->ops.size(), 7u);
  EXPECT_EQ(gangs->ops[1].kind, PerfOpKind::kCreateNamespaces);
  EXPECT_EQ(gangs->ops[1].prefix, "team");
  EXPECT_EQ(gangs->ops[2].skip_wait, true);
  EXPECT_EQ(gangs->ops[3].kind, PerfOpKind::kBarrier);
  EXPECT_EQ(gangs->ops[3].namespaces, (std::vector<std::string>{"team-0"}));
  EXPECT_EQ(gangs->ops[4].kind, PerfOpKind::kChurn);
  EXPECT_EQ(gangs->ops[4].mode, "recreate");
  EXPECT_EQ(gangs->ops[4].interval_ms, 1);
  EXPECT_EQ(gangs->ops[5].kind, PerfOpKind::kSleep);
  EXPECT_EQ(gangs->ops[5].duration_ns, 5'000'000);
  EXPECT_EQ(gangs->ops[6].kind, PerfOpKind::kCreatePodGroups);
  EXPECT_EQ(gangs->ops[6].pods_per_group_param, "$gangSize");
}

TEST(PerfWorkload, PatchParamsSubstitutes) {
  PerfConfig cfg;
  std::string err;
  ASSERT_EQ(LoadPerfConfig(kConfig, &cfg), absl::OkStatus());
  const PerfTestCase* basic = Case(cfg, "SchedulingBasic");
  std::vector<PerfOp> ops;
  ASSERT_EQ(PatchParams(cfg, *basic, basic->workloads[1], &ops), absl::OkStatus());
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].count, 100);
  EXPECT_EQ(ops[1].count, 50);
  EXPECT_EQ(ops[2].count, 200);
  // The test case itself keeps its parameters.
  EXPECT_EQ(basic->ops[0].count, 0);

  const PerfTestCase* gangs = Case(cfg, "Gangs");
  ASSERT_EQ(PatchParams(cfg, *gangs, gangs->workloads[0], &ops), absl::OkStatus());
  EXPECT_EQ(ops[6].count, 10);
  EXPECT_EQ(ops[6].pods_per_group, 4);
  EXPECT_EQ(ops[6].min_member, 4);  // defaults to podsPerGroup
  EXPECT_EQ(ops[1].count, 2);       // literal count untouched
}

TEST(PerfWorkload, PatchParamsErrors) {
  const std::string text = R"(
- name: T
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
  - opcode: sleep
    durationParam: $wait
  workloads:
  - name: missing
    params: {nodes: 5, wait: 1s}
  - name: notint
    params: {nodes: 5, pods: lots, wait: 1s}
  - name: zero
    params: {nodes: -1, pods: 3, wait: 1s}
  - name: baddur
    params: {nodes: 1, pods: 3, wait: 1d}
  - name: ok
    params: {nodes: 1, pods: 3, wait: 250ms}
)";
  PerfConfig cfg;
  std::string err;
  ASSERT_EQ(Parse(text, &cfg), absl::OkStatus());
  const auto& tc = cfg.cases[0];
  std::vector<PerfOp> ops;
  err = std::string(PatchParams(cfg, tc, tc.workloads[0], &ops).message());
  EXPECT_FALSE(err.empty());
  EXPECT_NE(err.find("inline.yaml: test case \"T/missing\": workloadTemplate[1] (createPods): "
                     "countParam: parameter $pods is undefined"),
            std::string::npos)
      << err;
  err = std::string(PatchParams(cfg, tc, tc.workloads[1], &ops).message());
  EXPECT_FALSE(err.empty());
  EXPECT_NE(err.find("parameter $pods must be an integer, got \"lots\""), std::string::npos) << err;
  err = std::string(PatchParams(cfg, tc, tc.workloads[2], &ops).message());
  EXPECT_FALSE(err.empty());
  EXPECT_NE(err.find("workloadTemplate[0] (createNodes): countParam: invalid Count=-1"),
            std::string::npos)
      << err;
  err = std::string(PatchParams(cfg, tc, tc.workloads[3], &ops).message());
  EXPECT_FALSE(err.empty());
  EXPECT_NE(err.find("durationParam: parameter $wait: time: unknown unit"), std::string::npos)
      << err;
  ASSERT_EQ(PatchParams(cfg, tc, tc.workloads[4], &ops), absl::OkStatus());
  EXPECT_EQ(ops[2].duration_ns, 250'000'000);
}

TEST(PerfWorkload, BadInputErrorsNameFileCaseOpAndField) {
  const std::string head =
      "- name: Bad\n  workloads: [{name: w, params: {n: 1}}]\n  workloadTemplate:\n";
  auto err = ParseError(
      head +
      "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n    podTemplatPath: x\n");
  EXPECT_NE(err.find("inline.yaml: test case \"Bad\": workloadTemplate[0] (createPods): "
                     "podTemplatPath: unknown field"),
            std::string::npos)
      << err;

  err = ParseError(
      head +
      "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n  - opcode: deleteNodes\n");
  EXPECT_NE(err.find("workloadTemplate[1] (deleteNodes): opcode: unknown opcode \"deleteNodes\""),
            std::string::npos)
      << err;

  // 1.36 ops: their fields are checked as upstream's isValid does.
  err =
      ParseError(head + "  - opcode: startCollectingMetrics\n  - opcode: stopCollectingMetrics\n");
  EXPECT_NE(err.find("(startCollectingMetrics): namespaces: namespaces cannot be empty"),
            std::string::npos)
      << err;
  err = ParseError(head +
                   "  - opcode: barrier\n    stageRequirement: Bound\n  - opcode: createPods\n"
                   "    count: 1\n    collectMetrics: true\n");
  EXPECT_NE(err.find("(barrier): stageRequirement: invalid StageRequirement Bound"),
            std::string::npos)
      << err;
  err = ParseError(head +
                   "  - opcode: createResourceDriver\n    driverName: d\n    nodes: n-*\n"
                   "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n");
  EXPECT_NE(err.find("(createResourceDriver): maxClaimsPerNode: one of maxClaimsPerNode (> 0) or "
                     "maxClaimsPerNodeParam"),
            std::string::npos)
      << err;
  err = ParseError(head +
                   "  - opcode: createAny\n  - opcode: createPods\n    count: 1\n    "
                   "collectMetrics: true\n");
  EXPECT_NE(err.find("(createAny): templatePath: TemplatePath must be set"), std::string::npos)
      << err;
  err = ParseError(head +
                   "  - opcode: deletePods\n    deletePodsPerSecond: 1\n"
                   "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n");
  EXPECT_NE(err.find("(deletePods): namespace: required"), std::string::npos) << err;
  err = ParseError(
      "- name: T\n  workloadTemplate:\n  - {opcode: createPods, count: 1, collectMetrics: true}\n"
      "  workloads: [{name: w, threshold: fast}]\n");
  EXPECT_NE(
      err.find("workloads[0]: threshold: expected either float64 or topic name -> float64 map"),
      std::string::npos)
      << err;

  err =
      ParseError(head + "  - opcode: createPods\n    countParam: pods\n    collectMetrics: true\n");
  EXPECT_NE(
      err.find("workloadTemplate[0] (createPods): countParam: \"pods\" must start with \"$\""),
      std::string::npos)
      << err;

  err = ParseError(head + "  - opcode: createPods\n    collectMetrics: true\n");
  EXPECT_NE(err.find("count: one of count (> 0) or countParam"), std::string::npos) << err;

  err = ParseError(head +
                   "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n    "
                   "skipWaitToCompletion: true\n");
  EXPECT_NE(err.find("collectMetrics and skipWaitToCompletion cannot be true at the same time"),
            std::string::npos)
      << err;

  err = ParseError(head + "  - opcode: createPods\n    count: 1\n");
  EXPECT_NE(
      err.find(
          "test case \"Bad\": workloadTemplate: no op in the workload template collects metrics"),
      std::string::npos)
      << err;

  err = ParseError(head +
                   "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n    "
                   "podTemplatePath: config/nope.yaml\n");
  EXPECT_NE(err.find("podTemplatePath: template \"config/nope.yaml\" not found"), std::string::npos)
      << err;

  err = ParseError(head + "  - opcode: createPods\n    count: two\n    collectMetrics: true\n");
  EXPECT_NE(err.find("workloadTemplate[0] (createPods): count: must be an integer"),
            std::string::npos)
      << err;

  err = ParseError(head + "  - opcode: createPods\n    count: 1\n    collectMetrics: maybe\n");
  EXPECT_NE(err.find("collectMetrics: must be true or false"), std::string::npos) << err;

  err = ParseError(
      head +
      "  - opcode: createNodes\n    count: 1\n    labelNodePrepareStrategy: {labelKey: zone}\n"
      "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n");
  EXPECT_NE(err.find("workloadTemplate[0] (createNodes): labelNodePrepareStrategy.labelValues"),
            std::string::npos)
      << err;

  err = ParseError(
      head +
      "  - opcode: churn\n    mode: sometimes\n    templatePaths: [config/service.yaml]\n"
      "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n");
  EXPECT_NE(err.find("workloadTemplate[0] (churn): mode: must be create or recreate"),
            std::string::npos)
      << err;

  err = ParseError(head +
                   "  - opcode: sleep\n    duration: 3 days\n  - opcode: createPods\n    count: "
                   "1\n    collectMetrics: true\n");
  EXPECT_NE(err.find("workloadTemplate[0] (sleep): duration: time:"), std::string::npos) << err;

  err = ParseError(head + "  - opcode: createPodGroups\n    count: 2\n    collectMetrics: true\n");
  EXPECT_NE(
      err.find("(createPodGroups): podsPerGroup: one of podsPerGroup (> 0) or podsPerGroupParam"),
      std::string::npos)
      << err;

  err = ParseError(
      "- name: NoWorkloads\n  workloadTemplate:\n  - {opcode: createPods, count: 1, "
      "collectMetrics: true}\n");
  EXPECT_NE(err.find("test case \"NoWorkloads\": workloads: no workloads defined"),
            std::string::npos)
      << err;

  err = ParseError(
      "- name: Dup\n  workloadTemplate:\n  - {opcode: createPods, count: 1, collectMetrics: true}\n"
      "  workloads: [{name: a}, {name: a}]\n");
  EXPECT_NE(err.find("workloads[1]: name: duplicate workload \"a\""), std::string::npos) << err;

  err = ParseError("- name: A\n  unknownKey: 1\n");
  EXPECT_NE(err.find("test case \"A\": unknownKey: unknown field"), std::string::npos) << err;

  err = ParseError("- name: [unclosed\n");
  EXPECT_NE(err.find("inline.yaml: invalid YAML"), std::string::npos) << err;

  err = ParseError("name: NotAList\n");
  EXPECT_NE(err.find("a workload file is a list of test cases"), std::string::npos) << err;

  err = ParseError("");
  EXPECT_NE(err.find("no test cases defined"), std::string::npos) << err;

  PerfConfig cfg;
  err = std::string(LoadPerfConfig(kTestdata + "/does-not-exist.yaml", &cfg).message());
  EXPECT_FALSE(err.empty());
  EXPECT_NE(err.find("does-not-exist.yaml: cannot read"), std::string::npos) << err;
}

TEST(PerfWorkload, TemplatePathRule) {
  // Relative to the workload file's directory first, then its parent; absolute as is.
  const std::string file = kTestdata + "/config/performance-config.yaml";
  EXPECT_EQ(fs::path(ResolveTemplatePath(file, "pod-default.yaml")),
            fs::path(kTestdata + "/config/pod-default.yaml").lexically_normal());
  EXPECT_EQ(fs::path(ResolveTemplatePath(file, "config/pod-default.yaml")),
            fs::path(kTestdata + "/config/pod-default.yaml").lexically_normal());
  EXPECT_EQ(ResolveTemplatePath(file, kTestdata + "/config/pvc.yaml"),
            kTestdata + "/config/pvc.yaml");
  EXPECT_EQ(ResolveTemplatePath(file, "nothing.yaml"), "");
  // A relative workload path one directory deep, as upstream's own run uses it from
  // scheduler_perf/: "config/..." templates resolve against the working directory.
  const fs::path cwd = fs::current_path();
  fs::current_path(kTestdata);
  const std::string got =
      ResolveTemplatePath("config/performance-config.yaml", "config/pod-default.yaml");
  fs::current_path(cwd);
  EXPECT_EQ(fs::path(got), fs::path("config/pod-default.yaml"));
}

TEST(PerfWorkload, LabelFilterAndSelection) {
  const std::vector<std::string> labels = {"performance", "fast"};
  EXPECT_TRUE(LabelFilterMatches("", labels));
  EXPECT_TRUE(LabelFilterMatches("performance", labels));
  EXPECT_TRUE(LabelFilterMatches("+fast,performance", labels));
  EXPECT_FALSE(LabelFilterMatches("-fast", labels));
  EXPECT_FALSE(LabelFilterMatches("performance,slow", labels));
  EXPECT_TRUE(LabelFilterMatches("performance,-slow", labels));
  EXPECT_FALSE(LabelFilterMatches("integration-test", {}));

  EXPECT_TRUE(WorkloadSelected("", "A", "w"));
  EXPECT_TRUE(WorkloadSelected("A", "A", "w"));
  EXPECT_TRUE(WorkloadSelected("Unschedulable/5000Nodes/200InitPods", "Unschedulable",
                               "5000Nodes/200InitPods"));
  EXPECT_FALSE(
      WorkloadSelected("Unschedulable/5000Nodes", "Unschedulable", "5000Nodes/200InitPods"));
  EXPECT_FALSE(WorkloadSelected("B", "A", "w"));
}

// The repository's own workload files (bench/workloads) parse and substitute.
TEST(PerfWorkload, BenchWorkloadFilesLoad) {
  const std::string dir = std::string(PHALANX_SOURCE_DIR) + "/bench/workloads";
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    PerfConfig cfg;
    std::string err;
    ASSERT_EQ(LoadPerfConfig(e.path().string(), &cfg), absl::OkStatus());
    for (const auto& tc : cfg.cases) {
      for (const auto& w : tc.workloads) {
        std::vector<PerfOp> ops;
        EXPECT_EQ(PatchParams(cfg, tc, w, &ops), absl::OkStatus());
      }
    }
  }
  EXPECT_GE(files, 3u);
}

TEST(PerfWorkload, CSINodeAllocatableErrorsNameTheField) {
  const std::string head =
      "- name: Bad\n  workloads: [{name: w}]\n  workloadTemplate:\n  - opcode: createNodes\n"
      "    count: 1\n    nodeAllocatableStrategy:\n";
  const std::string pods = "  - {opcode: createPods, count: 1, collectMetrics: true}\n";
  auto err =
      ParseError(head + "      csiNodeAllocatable:\n        ebs.csi.aws.com: {count: -1}\n" + pods);
  EXPECT_NE(err.find("workloadTemplate[0] (createNodes): "
                     "nodeAllocatableStrategy.csiNodeAllocatable.ebs.csi.aws.com.count: must be "
                     "between 0 and 2147483647, got -1"),
            std::string::npos)
      << err;
  err = ParseError(head + "      csiNodeAllocatable:\n        ebs.csi.aws.com: {cont: 3}\n" + pods);
  EXPECT_NE(
      err.find("nodeAllocatableStrategy.csiNodeAllocatable.ebs.csi.aws.com: cont: unknown field"),
      std::string::npos)
      << err;
  err = ParseError(head + "      csiNodeAllocatable:\n        ebs.csi.aws.com: {count: many}\n" +
                   pods);
  EXPECT_NE(err.find("ebs.csi.aws.com: count: must be an integer"), std::string::npos) << err;
  err = ParseError(head + "      csiNodeAllocatable: [ebs.csi.aws.com]\n" + pods);
  EXPECT_NE(err.find("nodeAllocatableStrategy.csiNodeAllocatable: must be a map"),
            std::string::npos)
      << err;
  err = ParseError(head + "      migratedPlugins: kubernetes.io/aws-ebs\n" + pods);
  EXPECT_NE(err.find("migratedPlugins: must be a list of strings"), std::string::npos) << err;
  // A driver without a count: no limit (count absent), as upstream's VolumeNodeResources.
  PerfConfig cfg;
  ASSERT_EQ(
      Parse(head + "      csiNodeAllocatable:\n        a.csi: {}\n        b.csi:\n" + pods, &cfg),
      absl::OkStatus());
  const auto& alloc = cfg.cases[0].ops[0].strategy.csi_node_allocatable;
  ASSERT_EQ(alloc.size(), 2u);
  EXPECT_FALSE(alloc.at("a.csi").has_value());
  EXPECT_FALSE(alloc.at("b.csi").has_value());
}

// The 1.36 files: every performance-config.yaml under ../shared/upstream/scheduler_perf-v1.36
// loads unchanged, and every workload's parameters patch.
TEST(PerfWorkload, Upstream136FilesLoad) {
  const std::string dir = std::string(PHALANX_UPSTREAM_DIR) + "/scheduler_perf-v1.36";
  if (!fs::exists(dir)) {
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true") FAIL() << "upstream data missing in CI: " << dir;
    GTEST_SKIP() << "needs ../shared/upstream (" << dir << "); not in a user's clone";
  }
  int files = 0, cases = 0, workloads = 0, thresholds = 0;
  std::set<std::string> opcodes;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename() != "performance-config.yaml") continue;
    PerfConfig cfg;
    ASSERT_EQ(LoadPerfConfig(e.path().string(), &cfg), absl::OkStatus());
    ++files;
    for (const auto& tc : cfg.cases) {
      ++cases;
      for (const auto& w : tc.workloads) {
        std::vector<PerfOp> ops;
        ASSERT_EQ(PatchParams(cfg, tc, w, &ops), absl::OkStatus()) << tc.name << "/" << w.name;
        ++workloads;
        thresholds += w.threshold > 0 || !w.threshold_by_topic.empty();  // number or topic map
        for (const auto& op : ops) opcodes.insert(PerfOpcodeName(op.kind));
      }
    }
  }
  EXPECT_EQ(files, 13);
  EXPECT_EQ(cases, 50);
  EXPECT_EQ(workloads, 242);
  EXPECT_EQ(thresholds, 61);
  for (const char* o : {"createAny", "updateAny", "createResourceDriver", "allocResourceClaims",
                        "startCollectingMetrics", "stopCollectingMetrics", "createPodSets",
                        "deletePods", "churn", "barrier"}) {
    EXPECT_TRUE(opcodes.count(o)) << o;
  }
}

TEST(PerfWorkload, DefaultPodTemplateThresholdAndFeatureGates) {
  PerfConfig cfg;
  const std::string yaml =
      "- name: T\n  defaultPodTemplatePath: config/pod-default.yaml\n  featureGates: {A: true}\n"
      "  workloadTemplate:\n  - {opcode: createPods, count: 1, collectMetrics: true}\n"
      "  - {opcode: createPods, count: 1, podTemplatePath: config/pod-default.yaml}\n"
      "  workloads:\n  - {name: w, threshold: 270, featureGates: {A: false}, params: {}}\n"
      "  - {name: t, threshold: {misc: 5, other: 7}}\n";
  ASSERT_EQ(ParsePerfConfig(yaml, kTestdata + "/perf.yaml", &cfg), absl::OkStatus());
  const PerfTestCase& tc = cfg.cases[0];
  EXPECT_NE(tc.ops[0].pod_template_path.find("pod-default.yaml"), std::string::npos);
  EXPECT_EQ(tc.workloads[0].threshold, 270);
  EXPECT_EQ(tc.workloads[0].feature_gates.at("A"), false);
  EXPECT_EQ(ThresholdOf(tc.workloads[1], "misc"), 5);
  EXPECT_EQ(ThresholdOf(tc.workloads[1], "dra"), 0);
  EXPECT_EQ(ThresholdMetricOf(tc, tc.workloads[0]).name, "SchedulingThroughput");
}

// Every file of upstream's config/ directory loads unchanged (when the source tree exists;
// CI has no upstream tree and uses the testdata files above).
TEST(PerfWorkload, UpstreamConfigDirectoryLoads) {
  if (!fs::exists(kUpstream + "/performance-config.yaml")) {
    GTEST_SKIP() << kUpstream << " not present";
  }
  PerfConfig cfg;
  std::string err;
  ASSERT_EQ(LoadPerfConfig(kUpstream + "/performance-config.yaml", &cfg), absl::OkStatus());
  EXPECT_EQ(cfg.cases.size(), 15u);
  std::set<std::string> referenced;
  size_t workloads = 0;
  for (const auto& tc : cfg.cases) {
    for (const auto& w : tc.workloads) {
      std::vector<PerfOp> ops;
      ASSERT_EQ(PatchParams(cfg, tc, w, &ops), absl::OkStatus());
      ++workloads;
      for (const auto& op : ops) {
        for (const auto* p : {&op.node_template_path, &op.pod_template_path, &op.pv_template_path,
                              &op.pvc_template_path}) {
          if (!p->empty()) referenced.insert(fs::path(*p).filename().string());
        }
      }
    }
  }
  EXPECT_EQ(workloads, 31u);
  // Every template file of the directory is used by some op and resolves.
  for (const auto& e : fs::directory_iterator(kUpstream)) {
    const std::string name = e.path().filename().string();
    if (name == "performance-config.yaml") continue;
    EXPECT_TRUE(referenced.count(name)) << name << " is not referenced by any op";
  }
}

}  // namespace
}  // namespace phalanx::perf
