// Ported from upstream noderesources/fit_test.go (TestEnoughRequests,
// TestPreFilterDisabled, TestNotEnoughRequests, TestStorageRequests, TestFitScore,
// Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange, TestIsFit),
// least/most_allocated_test.go and requested_to_capacity_ratio_test.go, and
// validation_pluginargs_test.go for NodeResourcesFitArgs.
#include "plugins/noderesources/fit.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <optional>

#include "dra/dra_manager.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

// Test tables leave trailing optional fields out.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::noderesources {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;
using C = framework::Code;

constexpr char kExtA[] = "example.com/aaa";
constexpr char kExtB[] = "example.com/bbb";
constexpr char kK8sIOA[] = "kubernetes.io/something";
constexpr char kK8sIOB[] = "subdomain.kubernetes.io/something";
constexpr char kHugeA[] = "hugepages-2Mi";

// framework.Resource as upstream tests write requests: cpu in millicores.
struct Res {
  int64_t cpu = 0;
  int64_t mem = 0;
  int64_t eph = 0;
  std::map<std::string, int64_t> scalar;
};

std::map<std::string, std::string> ToReq(const Res& r) {
  std::map<std::string, std::string> m{{"cpu", std::to_string(r.cpu) + "m"},
                                       {"memory", std::to_string(r.mem)},
                                       {"ephemeral-storage", std::to_string(r.eph)}};
  for (const auto& [k, v] : r.scalar) m[k] = std::to_string(v);
  return m;
}

api::Pod ResourcePod(const std::vector<Res>& containers, const std::vector<Res>& inits = {}) {
  static int seq = 0;
  PodBuilder b("pod-" + std::to_string(seq++));
  for (const auto& c : containers) b.Container(ToReq(c));
  for (const auto& c : inits) b.InitContainer(ToReq(c));
  return b.Obj();
}

// makeAllocatableResources(milliCPU, memory, pods, extendedA, storage, hugePageA).
api::Node AllocNode(int64_t cpu, int64_t mem, int64_t pods, int64_t ext_a, int64_t eph,
                    int64_t huge_a) {
  return NodeBuilder("node")
      .Capacity({{"cpu", std::to_string(cpu) + "m"},
                 {"memory", std::to_string(mem)},
                 {"pods", std::to_string(pods)},
                 {kExtA, std::to_string(ext_a)},
                 {"ephemeral-storage", std::to_string(eph)},
                 {kHugeA, std::to_string(huge_a)}})
      .Obj();
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> NewFit(const std::string& yaml,
                                                               fake::FakeHandle& h) {
  std::optional<YAML::Node> args;
  if (!yaml.empty()) args = YAML::Load(yaml);
  return Fit::New(args ? &*args : nullptr, h);
}

struct FilterCase {
  std::string name;
  api::Pod pod;
  api::Pod existing;
  framework::Code want_code;
  std::vector<std::string> want_reasons;
  std::string args;
};

void RunFilterCases(const std::vector<FilterCase>& cases, const api::Node& node) {
  for (const auto& c : cases) {
    fake::FakeHandle h;
    auto pl = NewFit(c.args, h);
    ASSERT_TRUE(pl.ok()) << c.name << ": " << pl.status().ToString();
    auto* fit = dynamic_cast<Fit*>(pl.value().get());
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    ASSERT_TRUE(fit->PreFilter(state, *pi, nullptr).IsSuccess()) << c.name;
    auto ni = MakeNodeInfo(node, {c.existing});
    auto s = fit->Filter(state, *pi, ni);
    EXPECT_EQ(s.code(), c.want_code) << c.name << ": " << s.ToString();
    EXPECT_EQ(s.reasons(), c.want_reasons) << c.name;
  }
}

TEST(NodeResourcesFitTest, EnoughRequests) {
  const std::string cpu = "Insufficient cpu", mem = "Insufficient memory";
  const std::string ext_a = std::string("Insufficient ") + kExtA;
  const std::string ext_b = std::string("Insufficient ") + kExtB;
  const std::string huge_a = std::string("Insufficient ") + kHugeA;
  api::Pod overhead_fits = ResourcePod({{1, 1}});
  overhead_fits.spec.overhead = {{"cpu", phalanx::testing::Q("3m")},
                                 {"memory", phalanx::testing::Q("13")}};
  api::Pod overhead_too_big = ResourcePod({{1, 1}});
  overhead_too_big.spec.overhead = {{"cpu", phalanx::testing::Q("1m")},
                                    {"memory", phalanx::testing::Q("15")}};
  const std::vector<FilterCase> cases = {
      {"no resources requested always fits",
       PodBuilder("p").Obj(),
       ResourcePod({{10, 20}}),
       C::kSuccess,
       {}},
      {"too many resources fails",
       ResourcePod({{1, 1}}),
       ResourcePod({{10, 20}}),
       C::kUnschedulable,
       {cpu, mem}},
      {"too many resources fails due to init container cpu",
       ResourcePod({{1, 1}}, {{3, 1}}),
       ResourcePod({{8, 19}}),
       C::kUnschedulable,
       {cpu}},
      {"too many resources fails due to highest init container cpu",
       ResourcePod({{1, 1}}, {{3, 1}, {2, 1}}),
       ResourcePod({{8, 19}}),
       C::kUnschedulable,
       {cpu}},
      {"too many resources fails due to init container memory",
       ResourcePod({{1, 1}}, {{1, 3}}),
       ResourcePod({{9, 19}}),
       C::kUnschedulable,
       {mem}},
      {"too many resources fails due to highest init container memory",
       ResourcePod({{1, 1}}, {{1, 3}, {1, 2}}),
       ResourcePod({{9, 19}}),
       C::kUnschedulable,
       {mem}},
      {"init container fits because it's the max, not sum, of containers and init containers",
       ResourcePod({{1, 1}}, {{1, 1}}),
       ResourcePod({{9, 19}}),
       C::kSuccess,
       {}},
      {"multiple init containers fit because it's the max, not sum, of containers and init "
       "containers",
       ResourcePod({{1, 1}}, {{1, 1}, {1, 1}}),
       ResourcePod({{9, 19}}),
       C::kSuccess,
       {}},
      {"both resources fit", ResourcePod({{1, 1}}), ResourcePod({{5, 5}}), C::kSuccess, {}},
      {"one resource memory fits",
       ResourcePod({{2, 1}}),
       ResourcePod({{9, 5}}),
       C::kUnschedulable,
       {cpu}},
      {"one resource cpu fits",
       ResourcePod({{1, 2}}),
       ResourcePod({{5, 19}}),
       C::kUnschedulable,
       {mem}},
      {"equal edge case", ResourcePod({{5, 1}}), ResourcePod({{5, 19}}), C::kSuccess, {}},
      {"equal edge case for init container",
       ResourcePod({{4, 1}}, {{5, 1}}),
       ResourcePod({{5, 19}}),
       C::kSuccess,
       {}},
      {"extended resource fits",
       ResourcePod({{0, 0, 0, {{kExtA, 1}}}}),
       ResourcePod({{}}),
       C::kSuccess,
       {}},
      {"extended resource fits for init container",
       ResourcePod({{}}, {{0, 0, 0, {{kExtA, 1}}}}),
       ResourcePod({{}}),
       C::kSuccess,
       {}},
      {"extended resource capacity enforced",
       ResourcePod({{1, 1, 0, {{kExtA, 10}}}}),
       ResourcePod({{0, 0, 0, {{kExtA, 0}}}}),
       C::kUnschedulableAndUnresolvable,
       {ext_a}},
      {"extended resource capacity enforced for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kExtA, 10}}}}),
       ResourcePod({{0, 0, 0, {{kExtA, 0}}}}),
       C::kUnschedulableAndUnresolvable,
       {ext_a}},
      {"extended resource allocatable enforced",
       ResourcePod({{1, 1, 0, {{kExtA, 1}}}}),
       ResourcePod({{0, 0, 0, {{kExtA, 5}}}}),
       C::kUnschedulable,
       {ext_a}},
      {"extended resource allocatable enforced for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kExtA, 1}}}}),
       ResourcePod({{0, 0, 0, {{kExtA, 5}}}}),
       C::kUnschedulable,
       {ext_a}},
      {"extended resource allocatable enforced for multiple containers",
       ResourcePod({{1, 1, 0, {{kExtA, 3}}}, {1, 1, 0, {{kExtA, 3}}}}),
       ResourcePod({{0, 0, 0, {{kExtA, 2}}}}),
       C::kUnschedulableAndUnresolvable,
       {ext_a}},
      {"extended resource allocatable admits multiple init containers",
       ResourcePod({{}}, {{1, 1, 0, {{kExtA, 3}}}, {1, 1, 0, {{kExtA, 3}}}}),
       ResourcePod({{0, 0, 0, {{kExtA, 2}}}}),
       C::kSuccess,
       {}},
      {"extended resource allocatable enforced for multiple init containers",
       ResourcePod({{}}, {{1, 1, 0, {{kExtA, 6}}}, {1, 1, 0, {{kExtA, 3}}}}),
       ResourcePod({{0, 0, 0, {{kExtA, 2}}}}),
       C::kUnschedulableAndUnresolvable,
       {ext_a}},
      {"extended resource allocatable enforced for unknown resource",
       ResourcePod({{1, 1, 0, {{kExtB, 1}}}}),
       ResourcePod({{}}),
       C::kUnschedulableAndUnresolvable,
       {ext_b}},
      {"extended resource allocatable enforced for unknown resource for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kExtB, 1}}}}),
       ResourcePod({{}}),
       C::kUnschedulableAndUnresolvable,
       {ext_b}},
      {"kubernetes.io resource capacity enforced",
       ResourcePod({{1, 1, 0, {{kK8sIOA, 10}}}}),
       ResourcePod({{}}),
       C::kUnschedulableAndUnresolvable,
       {std::string("Insufficient ") + kK8sIOA}},
      {"kubernetes.io resource capacity enforced for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kK8sIOB, 10}}}}),
       ResourcePod({{}}),
       C::kUnschedulableAndUnresolvable,
       {std::string("Insufficient ") + kK8sIOB}},
      {"hugepages resource capacity enforced",
       ResourcePod({{1, 1, 0, {{kHugeA, 10}}}}),
       ResourcePod({{0, 0, 0, {{kHugeA, 0}}}}),
       C::kUnschedulableAndUnresolvable,
       {huge_a}},
      {"hugepages resource capacity enforced for init container",
       ResourcePod({{}}, {{1, 1, 0, {{kHugeA, 10}}}}),
       ResourcePod({{0, 0, 0, {{kHugeA, 0}}}}),
       C::kUnschedulableAndUnresolvable,
       {huge_a}},
      {"hugepages resource allocatable enforced for multiple containers",
       ResourcePod({{1, 1, 0, {{kHugeA, 3}}}, {1, 1, 0, {{kHugeA, 3}}}}),
       ResourcePod({{0, 0, 0, {{kHugeA, 2}}}}),
       C::kUnschedulableAndUnresolvable,
       {huge_a}},
      {"skip checking ignored extended resource",
       ResourcePod({{1, 1, 0, {{kExtB, 1}}}}),
       ResourcePod({{}}),
       C::kSuccess,
       {},
       "{ignoredResources: [example.com/bbb]}"},
      {"resources + pod overhead fits", overhead_fits, ResourcePod({{5, 5}}), C::kSuccess, {}},
      {"requests + overhead does not fit for memory",
       overhead_too_big,
       ResourcePod({{5, 5}}),
       C::kUnschedulable,
       {mem}},
      {"skip checking ignored extended resource via resource groups",
       ResourcePod({{1, 1, 0, {{kExtB, 1}, {kK8sIOA, 1}}}}),
       ResourcePod({{}}),
       C::kUnschedulableAndUnresolvable,
       {std::string("Insufficient ") + kK8sIOA},
       "{ignoredResourceGroups: [example.com]}"},
      {"skip checking extended resource request with quantity zero via resource groups",
       ResourcePod({{1, 1, 0, {{kExtA, 0}}}}),
       ResourcePod({{0, 0, 0, {{kExtA, 6}}}}),
       C::kSuccess,
       {}},
      {"skip checking resource request with quantity zero",
       ResourcePod({{0, 0, 0, {{kExtA, 1}}}}),
       ResourcePod({{20, 30, 0, {{kExtA, 1}}}}),
       C::kSuccess,
       {}},
      {"ignored resources do not hide native insufficiencies",
       ResourcePod({{11, 1, 0, {{kExtB, 1}}}}),
       ResourcePod({{}}),
       C::kUnschedulableAndUnresolvable,
       {cpu},
       "{ignoredResources: [example.com/bbb]}"},
  };
  RunFilterCases(cases, AllocNode(10, 20, 32, 5, 20, 5));
}

TEST(NodeResourcesFitTest, PreFilterDisabled) {
  fake::FakeHandle h;
  auto pl = NewFit("", h);
  ASSERT_TRUE(pl.ok());
  auto* f = dynamic_cast<framework::FilterPlugin*>(pl.value().get());
  framework::CycleState state;
  auto pi = PodBuilder("p").Info();
  auto ni = MakeNodeInfo(NodeBuilder("n").Obj());
  auto s = f->Filter(state, *pi, ni);
  EXPECT_EQ(s.code(), C::kError);
  EXPECT_EQ(s.Message(), "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
}

TEST(NodeResourcesFitTest, NotEnoughRequests) {
  const std::vector<FilterCase> cases = {
      {"even without specified resources, predicate fails when there's no space for additional "
       "pod",
       PodBuilder("p").Obj(),
       ResourcePod({{10, 20}}),
       C::kUnschedulable,
       {"Too many pods"}},
      {"even if both resources fit, predicate fails when there's no space for additional pod",
       ResourcePod({{1, 1}}),
       ResourcePod({{5, 5}}),
       C::kUnschedulable,
       {"Too many pods"}},
      {"even for equal edge case, predicate fails when there's no space for additional pod",
       ResourcePod({{5, 1}}),
       ResourcePod({{5, 19}}),
       C::kUnschedulable,
       {"Too many pods"}},
      {"even for equal edge case, predicate fails when there's no space for additional pod due "
       "to init container",
       ResourcePod({{5, 1}}, {{5, 1}}),
       ResourcePod({{5, 19}}),
       C::kUnschedulable,
       {"Too many pods"}},
      {"too many pods is listed before the other reasons",
       ResourcePod({{11, 21}}),
       ResourcePod({{}}),
       C::kUnschedulableAndUnresolvable,
       {"Too many pods", "Insufficient cpu", "Insufficient memory"}},
  };
  RunFilterCases(cases, AllocNode(10, 20, 1, 0, 0, 0));
}

TEST(NodeResourcesFitTest, StorageRequests) {
  const std::vector<FilterCase> cases = {
      {"empty storage requested, and pod fits",
       ResourcePod({{1, 1}}),
       ResourcePod({{2, 10}}),
       C::kSuccess,
       {}},
      {"storage ephemeral local storage request exceeds allocatable",
       ResourcePod({{0, 0, 25}}),
       ResourcePod({{2, 2}}),
       C::kUnschedulableAndUnresolvable,
       {"Insufficient ephemeral-storage"}},
      {"ephemeral local storage is sufficient",
       ResourcePod({{0, 0, 5}}),
       ResourcePod({{2, 2, 10}}),
       C::kSuccess,
       {}},
      {"pod fits", ResourcePod({{0, 0, 10}}), ResourcePod({{2, 2}}), C::kSuccess, {}},
      {"ephemeral storage used by other pods",
       ResourcePod({{0, 0, 11}}),
       ResourcePod({{2, 2, 10}}),
       C::kUnschedulable,
       {"Insufficient ephemeral-storage"}},
  };
  RunFilterCases(cases, AllocNode(10, 20, 32, 5, 20, 5));
}

TEST(NodeResourcesFitTest, FitsReportsDetails) {
  const auto ni = MakeNodeInfo(AllocNode(10, 20, 32, 5, 20, 5), {ResourcePod({{8, 19}})});
  const auto got = Fits(ResourcePod({{1, 1}}, {{3, 1}}), ni);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (InsufficientResource{"cpu", "Insufficient cpu", 3, 8, 10, false}));
}

struct ScoreCase {
  std::string name;
  api::Pod pod;
  std::vector<api::Node> nodes;
  std::vector<api::Pod> existing;  // spec.nodeName selects the node
  std::vector<int64_t> want;
  std::string args;
};

void RunScoreCases(const std::vector<ScoreCase>& cases) {
  for (const auto& c : cases) {
    for (bool run_prescore : {true, false}) {
      fake::FakeHandle h;
      std::vector<framework::NodeInfo> infos;
      for (const auto& n : c.nodes) {
        std::vector<api::Pod> on_node;
        for (const auto& p : c.existing) {
          if (p.spec.node_name == n.metadata.name) on_node.push_back(p);
        }
        infos.push_back(MakeNodeInfo(n, on_node));
      }
      std::vector<const framework::NodeInfo*> ptrs;
      for (const auto& n : infos) ptrs.push_back(&n);
      auto pl = NewFit(c.args, h);
      ASSERT_TRUE(pl.ok()) << c.name << ": " << pl.status().ToString();
      auto* fit = dynamic_cast<Fit*>(pl.value().get());
      framework::CycleState state;
      auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
      if (run_prescore) {
        ASSERT_TRUE(fit->PreScore(state, *pi, ptrs).IsSuccess()) << c.name;
      }
      std::vector<int64_t> got;
      for (const auto& n : infos) {
        int64_t s = -1;
        ASSERT_TRUE(fit->Score(state, *pi, n, &s).IsSuccess()) << c.name;
        got.push_back(s);
      }
      EXPECT_EQ(got, c.want) << c.name << (run_prescore ? "" : " if PreScore is not called");
    }
  }
}

TEST(NodeResourcesFitTest, FitScore) {
  auto node = [](const std::string& name, const std::string& cpu, const std::string& mem) {
    return NodeBuilder(name).Capacity({{"cpu", cpu}, {"memory", mem}}).Obj();
  };
  auto pod = [](const std::string& cpu, const std::string& mem, const std::string& node_name) {
    return PodBuilder("e-" + node_name + cpu)
        .NodeName(node_name)
        .Req("cpu", cpu)
        .Req("memory", mem)
        .Obj();
  };
  const std::vector<api::Node> nodes = {node("node1", "4000", "10000"),
                                        node("node2", "6000", "10000")};
  const std::vector<api::Pod> existing = {pod("2000", "4000", "node1"),
                                          pod("1000", "2000", "node2")};
  const api::Pod big = PodBuilder("p").Req("cpu", "3000").Req("memory", "5000").Obj();
  const api::Pod small = PodBuilder("p").Req("cpu", "1000").Req("memory", "2000").Obj();
  const std::vector<ScoreCase> cases = {
      {"test case for ScoringStrategy RequestedToCapacityRatio case1",
       big,
       nodes,
       existing,
       {10, 32},
       "{scoringStrategy: {type: RequestedToCapacityRatio, resources: [{name: cpu, weight: 1}, "
       "{name: memory, weight: 1}], requestedToCapacityRatio: {shape: [{utilization: 0, score: "
       "10}, {utilization: 100, score: 0}]}}}"},
      {"test case for ScoringStrategy RequestedToCapacityRatio case2",
       big,
       nodes,
       existing,
       {95, 68},
       "{scoringStrategy: {type: RequestedToCapacityRatio, resources: [{name: cpu, weight: 1}, "
       "{name: memory, weight: 1}], requestedToCapacityRatio: {shape: [{utilization: 0, score: "
       "0}, {utilization: 100, score: 10}]}}}"},
      {"test case for ScoringStrategy MostAllocated",
       small,
       nodes,
       existing,
       {67, 36},
       "{scoringStrategy: {type: MostAllocated}}"},
      {"test case for ScoringStrategy LeastAllocated",
       small,
       nodes,
       existing,
       {32, 63},
       "{scoringStrategy: {type: LeastAllocated}}"},
      {"default args are LeastAllocated over cpu and memory", small, nodes, existing, {32, 63}, ""},
  };
  RunScoreCases(cases);
}

TEST(NodeResourcesFitTest, StrategyScores) {
  const api::Node gpu_node =
      NodeBuilder("node1").Capacity({{"cpu", "4000m"}, {"memory", "10000"}, {kExtA, "4"}}).Obj();
  const api::Node plain_node =
      NodeBuilder("node2").Capacity({{"cpu", "4000m"}, {"memory", "10000"}}).Obj();
  const api::Pod ext_pod =
      PodBuilder("p").Req("cpu", "1000m").Req("memory", "2000").Req(kExtA, "1").Obj();
  const api::Pod plain_pod = PodBuilder("p").Req("cpu", "1000m").Req("memory", "2000").Obj();
  const api::Node gib_node =
      NodeBuilder("node1").Capacity({{"cpu", "1000m"}, {"memory", "1Gi"}}).Obj();
  const char* kWeighted =
      "{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 1}, {name: "
      "memory, weight: 1}, {name: example.com/aaa, weight: 2}]}}";
  const std::vector<ScoreCase> cases = {
      // cpu 75, memory 80, aaa 75 (weight 2): (75 + 80 + 150) / 4 = 76; node2 lacks aaa.
      {"LeastAllocated with a weighted extended resource",
       ext_pod,
       {gpu_node, plain_node},
       {},
       {76, 77},
       kWeighted},
      {"an extended resource the pod does not request is left out",
       plain_pod,
       {gpu_node, plain_node},
       {},
       {77, 77},
       kWeighted},
      // Non-zero defaults: 100m cpu and 200Mi memory: (90 + 80) / 2.
      {"LeastAllocated counts default requests for a best-effort pod",
       PodBuilder("p").Container({}).Obj(),
       {gib_node},
       {},
       {85},
       ""},
      // (10 + 19) / 2.
      {"MostAllocated counts default requests for a best-effort pod",
       PodBuilder("p").Container({}).Obj(),
       {gib_node},
       {},
       {14},
       "{scoringStrategy: {type: MostAllocated}}"},
      // cpu 25% -> 50, memory 20% -> 40; weights 1 and 3: round(170 / 4) = 43.
      {"RequestedToCapacityRatio with a three-point shape rounds half away from zero",
       plain_pod,
       {plain_node},
       {},
       {43},
       "{scoringStrategy: {type: RequestedToCapacityRatio, resources: [{name: cpu, weight: 1}, "
       "{name: memory, weight: 3}], requestedToCapacityRatio: {shape: [{utilization: 0, score: "
       "0}, {utilization: 50, score: 10}, {utilization: 100, score: 0}]}}}"},
      // cpu 8000m > 4000m and the default 200Mi memory > 10000 bytes: both capped to 100.
      {"MostAllocated caps requests above capacity",
       PodBuilder("p").Req("cpu", "8000m").Obj(),
       {plain_node},
       {},
       {100},
       "{scoringStrategy: {type: MostAllocated}}"},
      {"LeastAllocated scores 0 for requests above capacity",
       PodBuilder("p").Req("cpu", "8000m").Req("memory", "2000").Obj(),
       {plain_node},
       {},
       {40},
       ""},
  };
  RunScoreCases(cases);
}

TEST(NodeResourcesFitTest, ScoringHelpers) {
  EXPECT_EQ(LeastRequestedScore(0, 0), 0);
  EXPECT_EQ(LeastRequestedScore(5, 4), 0);
  EXPECT_EQ(LeastRequestedScore(1, 3), 66);
  EXPECT_EQ(MostRequestedScore(5, 4), 100);
  EXPECT_EQ(MostRequestedScore(1, 3), 33);
  EXPECT_EQ(ScaledUtilization(int64_t{1} << 62, INT64_MAX, 100), 50);
  EXPECT_EQ(ScaledUtilization(-1, 10, 100), 0);
  EXPECT_EQ(ScaledUtilization(20, 10, 100), 100);
  BrokenLinearFunction f({{10, 100}, {50, 0}, {80, 50}});
  EXPECT_EQ(f(0), 100);
  EXPECT_EQ(f(10), 100);
  EXPECT_EQ(f(30), 50);
  EXPECT_EQ(f(65), 25);
  EXPECT_EQ(f(90), 50);
}

TEST(NodeResourcesFitTest, EventsToRegister) {
  fake::FakeHandle h;
  auto pl = NewFit("", h);
  ASSERT_TRUE(pl.ok());
  auto events = dynamic_cast<Fit*>(pl.value().get())->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kPod);
  EXPECT_EQ(events[0].event.action, framework::kDelete | framework::kUpdatePodScaleDown);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[1].event.action, framework::kAdd | framework::kUpdateNodeAllocatable);
}

TEST(NodeResourcesFitTest, IsSchedulableAfterPodChange) {
  fake::FakeHandle h;
  auto pl = NewFit("", h);
  ASSERT_TRUE(pl.ok());
  auto events = dynamic_cast<Fit*>(pl.value().get())->EventsToRegister();
  auto pod = [](const std::string& name, const std::string& uid) {
    return PodBuilder(name).UID(uid);
  };
  api::Pod nominated = pod("pod2", "uid1").Req("cpu", "1").Obj();
  nominated.status.nominated_node_name = "fake";
  struct Case {
    const char* name;
    api::Pod target;
    std::optional<api::Pod> old_obj, new_obj;
    framework::QueueingHint want;
  };
  using Q = framework::QueueingHint;
  const Case cases[] = {
      {"queue-on-other-pod-deleted", pod("pod1", "uid0").Req("cpu", "1").Obj(),
       pod("pod2", "uid1").Req("cpu", "1").NodeName("fake").Obj(), std::nullopt, Q::kQueue},
      {"skip-queue-on-unscheduled-pod-deleted", pod("pod1", "uid0").Obj(),
       pod("pod2", "uid1").Obj(), std::nullopt, Q::kQueueSkip},
      {"queue-on-nominated-pod-deleted", pod("pod1", "uid0").Req("cpu", "1").Obj(), nominated,
       std::nullopt, Q::kQueue},
      {"skip-queue-on-other-unscheduled-pod", pod("pod1", "uid0").Req("cpu", "1").Obj(),
       pod("pod2", "uid1").Req("cpu", "2").Obj(), pod("pod2", "uid1").Req("cpu", "1").Obj(),
       Q::kQueueSkip},
      {"skip-queue-on-other-pod-non-resource-changes", pod("pod1", "uid0").Obj(),
       pod("pod2", "uid1").Label("k", "v").NodeName("fake").Obj(),
       pod("pod2", "uid1").Label("foo", "bar").NodeName("fake").Obj(), Q::kQueueSkip},
      {"skip-queue-on-other-pod-unrelated-resource-changes",
       pod("pod1", "uid0").Req("cpu", "1").Obj(),
       pod("pod2", "uid1").Req("memory", "2").NodeName("fake").Obj(),
       pod("pod2", "uid1").Req("memory", "1").NodeName("fake").Obj(), Q::kQueueSkip},
      {"skip-queue-on-other-pod-resource-scale-up", pod("pod1", "uid0").Req("cpu", "1").Obj(),
       pod("pod2", "uid1").Req("cpu", "1").NodeName("fake").Obj(),
       pod("pod2", "uid1").Req("cpu", "2").NodeName("fake").Obj(), Q::kQueueSkip},
      {"queue-on-other-pod-some-resource-scale-down", pod("pod1", "uid0").Req("cpu", "1").Obj(),
       pod("pod2", "uid1").Req("cpu", "2").NodeName("fake").Obj(),
       pod("pod2", "uid1").Req("cpu", "1").NodeName("fake").Obj(), Q::kQueue},
      {"queue-on-target-pod-some-resource-scale-down", pod("pod1", "uid0").Req("cpu", "1").Obj(),
       pod("pod1", "uid0").Req("cpu", "2").Obj(), pod("pod1", "uid0").Req("cpu", "1").Obj(),
       Q::kQueue},
      {"queue-on-other-pod-extended-resource-scale-down", pod("pod1", "uid0").Req(kExtA, "1").Obj(),
       pod("pod2", "uid1").Req(kExtA, "2").NodeName("fake").Obj(),
       pod("pod2", "uid1").Req(kExtA, "1").NodeName("fake").Obj(), Q::kQueue},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.old_pod = c.old_obj ? &*c.old_obj : nullptr;
    objs.new_pod = c.new_obj ? &*c.new_obj : nullptr;
    EXPECT_EQ(events[0].hint(c.target, objs), c.want) << c.name;
  }
}

TEST(NodeResourcesFitTest, IsSchedulableAfterNodeChange) {
  fake::FakeHandle h;
  auto pl = NewFit("", h);
  ASSERT_TRUE(pl.ok());
  auto events = dynamic_cast<Fit*>(pl.value().get())->EventsToRegister();
  auto node = [](std::map<std::string, std::string> cap) {
    cap.emplace("pods", "32");  // upstream st.MakeNode().Capacity defaults pods to 32
    return NodeBuilder("n").Capacity(cap).Obj();
  };
  const api::Pod mem2 = ResourcePod({{0, 2}});
  const api::Pod mem2_ext = ResourcePod({{0, 2, 0, {{kExtA, 1}}}});
  struct Case {
    const char* name;
    api::Pod pod;
    std::optional<api::Node> old_obj;
    api::Node new_obj;
    framework::QueueingHint want;
  };
  using Q = framework::QueueingHint;
  const Case cases[] = {
      {"skip-queue-on-node-add-without-sufficient-resources", mem2, std::nullopt,
       node({{"memory", "1"}}), Q::kQueueSkip},
      {"skip-queue-on-node-add-without-required-resource-type",
       ResourcePod({{0, 0, 0, {{kExtA, 1}}}}), std::nullopt, node({{kExtB, "1"}}), Q::kQueueSkip},
      {"queue-on-node-add-with-sufficient-resources", mem2_ext, std::nullopt,
       node({{"memory", "4"}, {kExtA, "2"}}), Q::kQueue},
      {"skip-queue-on-node-changes-from-suitable-to-unsuitable", mem2_ext,
       node({{"memory", "4"}, {kExtA, "2"}}), node({{"memory", "1"}, {kExtA, "2"}}), Q::kQueueSkip},
      {"queue-on-node-changes-from-unsuitable-to-suitable", mem2_ext,
       node({{"memory", "1"}, {kExtA, "2"}}), node({{"memory", "4"}, {kExtA, "2"}}), Q::kQueue},
      {"skip-queue-on-node-unrelated-changes", mem2_ext, node({{"memory", "4"}, {kExtA, "2"}}),
       node({{"memory", "4"}, {kExtA, "2"}, {"cpu", "8"}}), Q::kQueueSkip},
      {"queue-on-node-allowed-pods-increase", mem2, node({{"memory", "4"}}),
       NodeBuilder("n").Capacity({{"memory", "4"}, {"pods", "64"}}).Obj(), Q::kQueue},
      {"skip-queue-on-node-add-without-pods-capacity", PodBuilder("p").Obj(), std::nullopt,
       NodeBuilder("n").Capacity({{"memory", "4"}}).Obj(), Q::kQueueSkip},
  };
  for (const auto& c : cases) {
    framework::EventObjects objs;
    objs.old_node = c.old_obj ? &*c.old_obj : nullptr;
    objs.new_node = &c.new_obj;
    EXPECT_EQ(events[1].hint(c.pod, objs), c.want) << c.name;
  }
}

TEST(NodeResourcesFitTest, Args) {
  struct Case {
    const char* name;
    std::string yaml;
    std::string want_error;  // "" = ok; otherwise exact message
  };
  const std::string kQualified =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
      "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
      "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const Case cases[] = {
      {"empty", "{}", ""},
      {"valid",
       "{ignoredResources: [example.com/foo], ignoredResourceGroups: [example.com], "
       "scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 100}]}}",
       ""},
      {"unsupported type", "{scoringStrategy: {type: Foo}}",
       "NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: \"Foo\": supported values: "
       "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
      {"strategy without type", "{scoringStrategy: {resources: [{name: cpu}]}}",
       "NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: \"\": supported values: "
       "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
      {"ignored resource with an invalid name", "{ignoredResources: [\"-bad\"]}",
       "NodeResourcesFitArgs: ignoredResources[0]: Invalid value: \"-bad\": " + kQualified},
      {"ignored resource group with a slash", "{ignoredResourceGroups: [example.com/aaa]}",
       "NodeResourcesFitArgs: ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": "
       "resource group name can't contain '/'"},
      {"weight out of range",
       "{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 101}, {name: "
       "memory, weight: -1}]}}",
       "NodeResourcesFitArgs: [scoringStrategy.resources[0].weight: Invalid value: 101: resource "
       "weight of cpu not in valid range (0, 100], scoringStrategy.resources[1].weight: Invalid "
       "value: -1: resource weight of memory not in valid range (0, 100]]"},
      {"shape not sorted",
       "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 50, score: 1}, {utilization: 10, score: 2}]}}}",
       "NodeResourcesFitArgs: scoringStrategy.shape[1].utilization: Invalid value: 10: "
       "utilization values must be sorted in increasing order"},
      {"shape out of range",
       "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 0, score: 11}, {utilization: 101, score: 0}]}}}",
       "NodeResourcesFitArgs: [scoringStrategy.shape[0].score: Invalid value: 11: not in valid "
       "range [0, 10], scoringStrategy.shape[1].utilization: Invalid value: 101: not in valid "
       "range [0, 100]]"},
      {"empty shape",
       "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: []}}}",
       "NodeResourcesFitArgs: scoringStrategy.shape: Required value: at least one point must be "
       "specified"},
      {"RequestedToCapacityRatio without its parameters",
       "{scoringStrategy: {type: RequestedToCapacityRatio}}",
       "NodeResourcesFitArgs: scoringStrategy.requestedToCapacityRatio: Required value: must be "
       "set for type RequestedToCapacityRatio"},
      {"unknown field", "{scoringStrategy: {type: LeastAllocated, foo: 1}}",
       "NodeResourcesFitArgs: unknown field \"scoringStrategy.foo\""},
      {"non-integer weight",
       "{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, "
       "weight: heavy}]}}",
       "NodeResourcesFitArgs: scoringStrategy.resources[0].weight: Invalid value: \"heavy\": must "
       "be an integer"},
  };
  for (const auto& c : cases) {
    YAML::Node n = YAML::Load(c.yaml);
    auto parsed = ParseNodeResourcesFitArgs(&n);
    if (c.want_error.empty()) {
      EXPECT_TRUE(parsed.ok()) << c.name << ": " << parsed.status().ToString();
    } else {
      ASSERT_FALSE(parsed.ok()) << c.name;
      EXPECT_EQ(parsed.status().code(), C::kError) << c.name;
      EXPECT_EQ(parsed.status().Message(), c.want_error) << c.name;
    }
  }
  auto defaults = ParseNodeResourcesFitArgs(nullptr);
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults.value().type, ScoringStrategyType::kLeastAllocated);
  EXPECT_EQ(defaults.value().resources, (std::vector<ResourceSpec>{{"cpu", 1}, {"memory", 1}}));
  YAML::Node zero =
      YAML::Load("{scoringStrategy: {type: MostAllocated, resources: [{name: cpu}]}}");
  auto zero_weight = ParseNodeResourcesFitArgs(&zero);
  ASSERT_TRUE(zero_weight.ok());
  EXPECT_EQ(zero_weight.value().resources, (std::vector<ResourceSpec>{{"cpu", 1}}));
}

}  // namespace
}  // namespace phalanx::plugins::noderesources

namespace phalanx::plugins::noderesources {
namespace {

api::UnstructuredPtr DeviceClassObj(const std::string& name, const std::string& ern) {
  YAML::Node doc = YAML::Load("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n");
  doc["metadata"]["name"] = name;
  if (!ern.empty()) doc["spec"]["extendedResourceName"] = ern;
  auto u = std::make_shared<api::Unstructured>();
  u->api_version = "resource.k8s.io/v1";
  u->kind = "DeviceClass";
  u->metadata.name = name;
  u->object = std::make_shared<const YAML::Node>(doc);
  return u;
}

// fit.go fitsRequest with DRAExtendedResource: an extended resource that a DeviceClass
// serves (its extendedResourceName, or the implicit deviceclass.resource.kubernetes.io/
// name) is left to DynamicResources on a node without allocatable of it, and checked here
// on a node that advertises it (a device plugin's), like any extended resource.
TEST(NodeResourcesFitTest, ExtendedResourceBackedByDraIsLeftToDynamicResources) {
  dra::DefaultDRAManager m;
  ASSERT_TRUE(m.OnObjectAdd(DeviceClassObj("gpu.example.com", kExtB)));
  ASSERT_TRUE(m.OnObjectAdd(DeviceClassObj("fpga", "")));
  ASSERT_TRUE(m.Errors().empty()) << m.Errors()[0];
  const std::string implicit = std::string(dra::kImplicitExtendedResourcePrefix) + "fpga";
  struct Case {
    std::string name;
    std::string resource;
    bool with_manager;
    bool node_has_it;  // allocatable 1 of the resource
    framework::Code want;
  };
  const std::vector<Case> cases = {
      {"explicit name, DRA-only node", kExtB, true, false, C::kSuccess},
      {"implicit name, DRA-only node", implicit, true, false, C::kSuccess},
      // More than the node's allocatable: unresolvable, as for any resource.
      {"explicit name, device-plugin node short", kExtB, true, true,
       C::kUnschedulableAndUnresolvable},
      {"no class maps it", kExtA, true, false, C::kUnschedulableAndUnresolvable},
      {"no DRA state", kExtB, false, false, C::kUnschedulableAndUnresolvable},
  };
  for (const auto& c : cases) {
    fake::FakeHandle h;
    if (c.with_manager) h.services().Provide<dra::DefaultDRAManager>(&m);
    auto pl = NewFit("", h);
    ASSERT_TRUE(pl.ok()) << c.name;
    auto* fit = dynamic_cast<Fit*>(pl.value().get());
    const api::Pod pod = PodBuilder("p").Container({{"cpu", "1"}, {c.resource, "2"}}).Obj();
    std::map<std::string, std::string> cap{{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "10"}};
    if (c.node_has_it) cap[c.resource] = "1";
    const api::Node node = NodeBuilder("node").Capacity(cap).Obj();
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(pod));
    ASSERT_TRUE(fit->PreFilter(state, *pi, nullptr).IsSuccess()) << c.name;
    auto ni = MakeNodeInfo(node, {});
    auto s = fit->Filter(state, *pi, ni);
    EXPECT_EQ(s.code(), c.want) << c.name << ": " << s.ToString();
    if (c.want != C::kSuccess) {
      EXPECT_EQ(s.reasons(), std::vector<std::string>{"Insufficient " + c.resource}) << c.name;
    }
  }
}

}  // namespace
}  // namespace phalanx::plugins::noderesources
