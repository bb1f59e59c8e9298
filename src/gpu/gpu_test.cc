// Table tests for the GPU device model (device.h: asks, node GPUs, device choices) and the
// fragmentation measure (frag.h: numbers worked by hand from the FGD artifact's definitions).
#include <gtest/gtest.h>

#include "gpu/device.h"
#include "gpu/frag.h"
#include "gpu/gpu_builders_test.h"
#include "testing/builders.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::gpu {
namespace {

using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;
using testing::GpuNode;
using testing::Share;

TEST(GpuAskTest, ParsesEveryDialect) {
  struct Case {
    std::string name;
    api::Pod pod;
    AskSource source;
    int32_t count, milli;
    int64_t memory_mib;
    std::vector<std::string> models;
    bool error;
  };
  const std::vector<Case> cases = {
      {"no GPU", PodBuilder("p").Req("cpu", "1").Obj(), AskSource::kNone, 0, 0, 0, {}, false},
      {"alibaba share", Share("p", 300), AskSource::kAlibaba, 1, 300, 0, {}, false},
      {"alibaba whole x4", Share("p", 1000, 4), AskSource::kAlibaba, 4, 1000, 0, {}, false},
      {"alibaba milli only",
       PodBuilder("p").Annotation(kGpuMilliAnnotation, "250").Obj(),
       AskSource::kAlibaba,
       1,
       250,
       0,
       {},
       false},
      {"alibaba count only",
       PodBuilder("p").Annotation(kGpuCountAnnotation, "2").Obj(),
       AskSource::kAlibaba,
       2,
       1000,
       0,
       {},
       false},
      {"alibaba zero milli is no GPU", Share("p", 0), AskSource::kNone, 0, 0, 0, {}, false},
      {"alibaba models",
       Share("p", 500, 1, "", "T4|P100"),
       AskSource::kAlibaba,
       1,
       500,
       0,
       {"T4", "P100"},
       false},
      {"alibaba bad milli",
       PodBuilder("p").Annotation(kGpuMilliAnnotation, "lots").Obj(),
       AskSource::kAlibaba,
       0,
       0,
       0,
       {},
       true},
      {"alibaba milli > 1000",
       PodBuilder("p").Annotation(kGpuMilliAnnotation, "1500").Obj(),
       AskSource::kAlibaba,
       0,
       0,
       0,
       {},
       true},
      {"kai fraction",
       PodBuilder("p").Annotation("gpu-fraction", "0.5").Obj(),
       AskSource::kKaiFraction,
       1,
       500,
       0,
       {},
       false},
      {"kai fraction on 2 devices",
       PodBuilder("p")
           .Annotation("gpu-fraction", "0.25")
           .Annotation("gpu-fraction-num-devices", "2")
           .Obj(),
       AskSource::kKaiFraction,
       2,
       250,
       0,
       {},
       false},
      {"kai fraction 1 is whole",
       PodBuilder("p").Annotation("gpu-fraction", "1").Obj(),
       AskSource::kKaiFraction,
       1,
       1000,
       0,
       {},
       false},
      {"kai bad fraction",
       PodBuilder("p").Annotation("gpu-fraction", "1.5").Obj(),
       AskSource::kKaiFraction,
       0,
       0,
       0,
       {},
       true},
      {"kai memory MiB",
       PodBuilder("p").Annotation("gpu-memory", "8000").Obj(),
       AskSource::kKaiMemory,
       1,
       0,
       8000,
       {},
       false},
      {"kai memory quantity",
       PodBuilder("p").Annotation("gpu-memory", "4Gi").Obj(),
       AskSource::kKaiMemory,
       1,
       0,
       4096,
       {},
       false},
      {"nvidia.com/gpu request",
       PodBuilder("p").Req("nvidia.com/gpu", "2").Obj(),
       AskSource::kExtendedResource,
       2,
       1000,
       0,
       {},
       false},
      {"nvidia.com/gpu init container max",
       PodBuilder("p").Req("nvidia.com/gpu", "1").InitContainer({{"nvidia.com/gpu", "3"}}).Obj(),
       AskSource::kExtendedResource,
       3,
       1000,
       0,
       {},
       false},
      {"annotations win over nvidia.com/gpu",
       PodBuilder("p").Req("nvidia.com/gpu", "1").Annotation(kGpuMilliAnnotation, "400").Obj(),
       AskSource::kAlibaba,
       1,
       400,
       0,
       {},
       false},
  };
  for (const auto& c : cases) {
    GpuAsk a = ParseGpuAsk(c.pod);
    EXPECT_EQ(a.source, c.source) << c.name;
    EXPECT_EQ(a.count, c.count) << c.name;
    EXPECT_EQ(a.milli, c.milli) << c.name;
    EXPECT_EQ(a.memory_mib, c.memory_mib) << c.name;
    EXPECT_EQ(a.models, c.models) << c.name;
    EXPECT_EQ(!a.error.empty(), c.error) << c.name << ": " << a.error;
  }
}

TEST(GpuAskTest, NodesAndMemoryAsks) {
  NodeGpus g = ParseNodeGpus(GpuNode("n", 8, "T4"));
  EXPECT_EQ(g.count, 8);
  EXPECT_EQ(g.model, "T4");
  EXPECT_EQ(g.memory_mib, 15109);
  NodeGpus l = ParseNodeGpus(NodeBuilder("n")
                                 .Label(kGpuCountAnnotation, "4")
                                 .Label(kGfdProductLabel, "NVIDIA-A100")
                                 .Label(kGfdMemoryLabel, "40960")
                                 .Obj());
  EXPECT_EQ(l.count, 4);
  EXPECT_EQ(l.model, "NVIDIA-A100");
  EXPECT_EQ(l.memory_mib, 40960);
  GpuAsk mem = ParseGpuAsk(PodBuilder("p").Annotation("gpu-memory", "7555").Obj());
  EXPECT_EQ(MilliOnNode(mem, g), 501);                   // ceil(7555 * 1000 / 15109)
  EXPECT_EQ(MilliOnNode(mem, NodeGpus{2, "Z9", 0}), 0);  // unknown memory
  std::vector<int32_t> idx;
  EXPECT_TRUE(ParseGpuIndex("2-3-4", &idx));
  EXPECT_EQ(idx, (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(FormatGpuIndex(idx), "2-3-4");
  EXPECT_FALSE(ParseGpuIndex("2--3", &idx));
  EXPECT_FALSE(ParseGpuIndex("", &idx));
}

// Alibaba gpushare: pods limit aliyun.com/gpu-mem; nodes report it with aliyun.com/gpu-count
// in status.capacity (gpushare-scheduler-extender pkg/utils/node.go, pod.go).
TEST(GpuAskTest, AliyunGpuMemDialect) {
  api::Pod p = PodBuilder("p").Obj();
  p.spec.containers.resize(2);
  p.spec.containers[0].resources.limits[kAliyunGpuMemResource] = api::Quantity::FromValue(3);
  p.spec.containers[1].resources.requests[kAliyunGpuMemResource] = api::Quantity::FromValue(1);
  GpuAsk a = ParseGpuAsk(p);
  EXPECT_EQ(a.source, AskSource::kAliyunMemory);
  EXPECT_EQ(a.count, 1);
  EXPECT_EQ(a.aliyun_mem, 4);  // 3 (limit) + 1 (request without a limit)
  EXPECT_TRUE(a.error.empty());

  api::Node n =
      NodeBuilder("n")
          .Capacity({{"cpu", "8"}, {kAliyunGpuMemResource, "30"}, {kAliyunGpuCountResource, "2"}})
          .Obj();
  NodeGpus g = ParseNodeGpus(n);
  EXPECT_EQ(g.count, 2);
  EXPECT_EQ(g.aliyun_mem_per_device, 15);
  EXPECT_EQ(MilliOnNode(a, g), 267);  // ceil(4 * 1000 / 15)
  a.aliyun_mem = 1;
  EXPECT_EQ(MilliOnNode(a, g), 67);
  a.aliyun_mem = 40;
  EXPECT_EQ(MilliOnNode(a, g), 1000);  // more than a device: capped (Filter: no device fits)
  EXPECT_EQ(MilliOnNode(a, ParseNodeGpus(GpuNode("v", 2))), 0);  // not a gpushare node
}

TEST(AssignmentAnnotationsTest, WrittenPerDialectAndReadBack) {
  const NodeGpus gpus{4, "V100M16", 16160, 16};
  GpuAsk share;
  share.source = AskSource::kAlibaba;
  share.count = 1;
  share.milli = 500;
  auto a = AssignmentAnnotations(share, gpus, "n1", {2}, 1234567890123);
  EXPECT_EQ(a,
            (std::map<std::string, std::string>{{"alibabacloud.com/gpu-index", "2"},
                                                {"alibabacloud.com/assume-time", "1234567890123"},
                                                {"scheduling.phalanx.dev/gpu-node", "n1"}}));
  GpuAsk whole = share;
  whole.count = 2;
  whole.milli = 1000;
  EXPECT_EQ(AssignmentAnnotations(whole, gpus, "n1", {0, 3}, 5).at(kGpuIndexAnnotation), "0-3");
  GpuAsk aliyun;
  aliyun.source = AskSource::kAliyunMemory;
  aliyun.count = 1;
  aliyun.aliyun_mem = 4;
  a = AssignmentAnnotations(aliyun, gpus, "n1", {1}, 77);
  EXPECT_EQ(a.at("ALIYUN_COM_GPU_MEM_IDX"), "1");
  EXPECT_EQ(a.at("ALIYUN_COM_GPU_MEM_POD"), "4");
  EXPECT_EQ(a.at("ALIYUN_COM_GPU_MEM_DEV"), "16");
  EXPECT_EQ(a.at("ALIYUN_COM_GPU_MEM_ASSIGNED"), "false");
  EXPECT_EQ(a.at("ALIYUN_COM_GPU_MEM_ASSUME_TIME"), "77");
  EXPECT_EQ(a.at(kGpuIndexAnnotation), "1");

  // Already written (at another time): nothing to write. Another device: write.
  api::Pod p = PodBuilder("p").Obj();
  for (const auto& [k, v] : AssignmentAnnotations(aliyun, gpus, "n1", {1}, 5)) {
    p.metadata.annotations[k] = v;
  }
  EXPECT_TRUE(HasAssignmentAnnotations(p, a));
  EXPECT_FALSE(HasAssignmentAnnotations(p, AssignmentAnnotations(aliyun, gpus, "n1", {0}, 77)));
  EXPECT_FALSE(HasAssignmentAnnotations(p, AssignmentAnnotations(aliyun, gpus, "n2", {1}, 77)));

  std::vector<int32_t> d;
  EXPECT_TRUE(RecordedDevices(p, "n1", &d));
  EXPECT_EQ(d, (std::vector<int32_t>{1}));
  EXPECT_FALSE(RecordedDevices(p, "n2", &d)) << "written for n1: stale on n2";
  EXPECT_FALSE(HasPredefinedGpuIndex(p));
  // A manifest's own index (no gpu-node) is the user's choice on any node.
  api::Pod user = PodBuilder("u").Annotation(kGpuIndexAnnotation, "0-2").Obj();
  EXPECT_TRUE(HasPredefinedGpuIndex(user));
  EXPECT_TRUE(RecordedDevices(user, "any", &d));
  EXPECT_EQ(d, (std::vector<int32_t>{0, 2}));
  // Bound by Alibaba's extender: only ALIYUN_COM_GPU_MEM_IDX.
  api::Pod ext = PodBuilder("e").Annotation(kAliyunMemIdxAnnotation, "3").Obj();
  EXPECT_TRUE(RecordedDevices(ext, "n", &d));
  EXPECT_EQ(d, (std::vector<int32_t>{3}));
  for (const char* bad : {"", "x", "-1", "1-", "2000"}) {
    api::Pod b = PodBuilder("b").Annotation(kGpuIndexAnnotation, bad).Obj();
    EXPECT_FALSE(RecordedDevices(b, "n", &d)) << bad;
  }
}

TEST(DeviceChoiceTest, Table) {
  struct Case {
    std::string name;
    std::vector<int32_t> free;
    int32_t count, milli;
    std::vector<int32_t> best, worst, first;
  };
  const std::vector<Case> cases = {
      {"share picks tightest", {1000, 300, 600, 500}, 1, 500, {3}, {0}, {0}},
      {"share ties lowest index", {600, 600}, 1, 500, {0}, {0}, {0}},
      {"whole takes lowest free devices", {500, 1000, 1000, 1000}, 2, 1000, {1, 2}, {1, 2}, {1, 2}},
      {"whole needs fully free", {500, 500}, 1, 1000, {}, {}, {}},
      {"two shares on distinct devices", {200, 900, 400}, 2, 300, {1, 2}, {1, 2}, {1, 2}},
      {"not enough devices", {1000}, 2, 100, {}, {}, {}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ChooseBestFit(c.free, c.count, c.milli), c.best) << c.name;
    EXPECT_EQ(ChooseWorstFit(c.free, c.count, c.milli), c.worst) << c.name;
    EXPECT_EQ(ChooseFirstFit(c.free, c.count, c.milli), c.first) << c.name;
    EXPECT_EQ(Fits(c.free, c.count, c.milli), !c.best.empty()) << c.name;
  }
}

// ---- fragmentation (frag.h) ----

TargetWorkload HalfShareHalfWhole() {
  return TargetWorkload({{{1000, 500, 1, ""}, 0.5}, {{1000, 1000, 1, ""}, 0.5}});
}

NodeShape Shape(std::vector<int32_t> free, int64_t cpu_left = 10000,
                std::string model = "V100M16") {
  NodeShape n;
  n.milli_cpu_left = cpu_left;
  n.milli_cpu_capacity = 32000;
  n.model = std::move(model);
  n.free_milli = std::move(free);
  return n;
}

TEST(FragTest, ClassifyQuadrants) {
  struct Case {
    std::string name;
    NodeShape node;
    PodShape pod;
    FragClass want;
  };
  const std::vector<Case> cases = {
      {"fits", Shape({1000, 1000}), {1000, 500, 1, ""}, FragClass::kQ3Satisfied},
      {"lacks cpu", Shape({1000}, 500), {1000, 500, 1, ""}, FragClass::kQ4LackCpu},
      {"lacks gpu", Shape({400, 400}), {1000, 500, 1, ""}, FragClass::kQ2LackGpu},
      {"lacks both", Shape({400}, 10), {1000, 500, 1, ""}, FragClass::kQ1LackBoth},
      {"multi-gpu lacks devices", Shape({1000, 600}), {1000, 1000, 2, ""}, FragClass::kQ2LackGpu},
      {"cpu-only pod fits", Shape({0}), {1000, 0, 0, ""}, FragClass::kXLSatisfied},
      {"cpu-only pod lacks cpu", Shape({0}, 10), {1000, 0, 0, ""}, FragClass::kXRLackCpu},
      {"model not allowed",
       Shape({1000}, 10000, "T4"),
       {1000, 500, 1, "V100M16|P100"},
       FragClass::kNoAccess},
      {"model allowed",
       Shape({1000}, 10000, "P100"),
       {1000, 500, 1, "V100M16|P100"},
       FragClass::kQ3Satisfied},
      {"cpu node never accessible to a model ask",
       Shape({}, 10000, ""),
       {1000, 500, 1, "T4"},
       FragClass::kNoAccess},
  };
  for (const auto& c : cases) EXPECT_EQ(Classify(c.node, c.pod), c.want) << c.name;
}

TEST(FragTest, NodeFragmentationAndFgdScores) {
  const TargetWorkload w = HalfShareHalfWhole();
  auto frag = [&](const NodeShape& n) { return NodeFragMilli(n, w); };
  struct Case {
    std::string name;
    NodeShape node;
    double frag;
    PodShape pod;
    int64_t score;
    int32_t device;
  };
  // frag([500, 1000]) = 0.5 * (free < 1000 under the whole shape: 500) = 250;
  // frag([500, 500]) = 0.5 * 0 (share: Q3, nothing < 500) + 0.5 * 1000 (whole: Q2) = 500.
  const std::vector<Case> cases = {
      {"idle node, share", Shape({1000, 1000}), 0, {1000, 500, 1, ""}, 43, 0},  // sig(-0.25)
      {"half-used node, share fills it", Shape({500, 1000}), 250, {1000, 500, 1, ""}, 56, 0},
      {"half-used node, whole", Shape({500, 1000}), 250, {1000, 1000, 1, ""}, 50, -1},
      {"two halves, share", Shape({500, 500}), 500, {1000, 500, 1, ""}, 56, 0},  // -> [0,500]: 250
  };
  for (const auto& c : cases) {
    EXPECT_DOUBLE_EQ(frag(c.node), c.frag) << c.name;
    int32_t device = -2;
    EXPECT_EQ(FgdScore(c.node, c.pod, frag, &device), c.score) << c.name;
    EXPECT_EQ(device, c.device) << c.name;
  }
  // A CPU-only pod taking the node's last CPU turns all 2000 idle milli into fragment:
  // sigmoid((0 - 2000) / 1000) * 100 = 11.92 -> 11.
  int32_t device;
  EXPECT_EQ(FgdScore(Shape({1000, 1000}, 1000), PodShape{1000, 0, 0, ""}, frag, &device), 11);
}

TEST(FragTest, TargetWorkloadKeepsTheMostPopularShapes) {
  // 10 pods: A x6, B x3, C x1. 95% of 10 = 9.5: A (6) + B (9) < 9.5, so C is kept too.
  const PodShape a{1000, 500, 1, ""}, b{2000, 1000, 1, ""}, c{4000, 0, 0, ""};
  std::vector<PodShape> shapes(6, a);
  shapes.insert(shapes.end(), 3, b);
  shapes.push_back(c);
  TargetWorkload w = TargetWorkload::FromShapes(shapes);
  ASSERT_EQ(w.pods().size(), 3u);
  EXPECT_EQ(w.pods()[0].shape, a);
  EXPECT_DOUBLE_EQ(w.pods()[0].freq, 0.6);
  // 20 pods: A x12, B x7, C x1 -> A + B = 19 >= 19: C is dropped, renormalized over 19.
  shapes.assign(12, a);
  shapes.insert(shapes.end(), 7, b);
  shapes.push_back(c);
  w = TargetWorkload::FromShapes(shapes);
  ASSERT_EQ(w.pods().size(), 2u);
  EXPECT_DOUBLE_EQ(w.pods()[0].freq, 12.0 / 19.0);
  EXPECT_DOUBLE_EQ(w.pods()[1].freq, 7.0 / 19.0);
  // Equal counts: the larger shape first (upstream sort.Reverse of PodResource.Less).
  w = TargetWorkload::FromShapes({a, b});
  EXPECT_EQ(w.pods()[0].shape, b);
}

TEST(FragTest, SubtractPacksOntoTheLeastFreeDevices) {
  NodeShape out;
  EXPECT_TRUE(SubtractPod(Shape({1000, 300, 700}), PodShape{500, 300, 1, ""}, &out));
  EXPECT_EQ(out.free_milli, (std::vector<int32_t>{1000, 0, 700}));
  EXPECT_EQ(out.milli_cpu_left, 9500);
  EXPECT_TRUE(SubtractPod(Shape({1000, 300, 1000}), PodShape{0, 1000, 2, ""}, &out));
  EXPECT_EQ(out.free_milli, (std::vector<int32_t>{0, 300, 0}));
  EXPECT_FALSE(SubtractPod(Shape({1000}), PodShape{0, 1000, 2, ""}, &out));
  FragMemo memo(std::make_shared<const TargetWorkload>(HalfShareHalfWhole()));
  EXPECT_DOUBLE_EQ(memo.Get(Shape({1000, 500})), 250);  // same multiset as [500, 1000]
  EXPECT_DOUBLE_EQ(memo.Get(Shape({500, 1000})), 250);
}

// ---- the plugin ----

}  // namespace
}  // namespace phalanx::gpu

namespace phalanx::gpu {
namespace {

// NVIDIA DRA driver device names: "gpu-<i>" <-> index i; other names (MIG partitions,
// leading zeros, no digits) are no GPU index.
TEST(DraGpuNames, IndexRoundTrips) {
  for (int32_t i : {0, 1, 7, 15, 128}) EXPECT_EQ(DraGpuIndex(DraGpuDeviceName(i)), i);
  EXPECT_EQ(DraGpuDeviceName(3), "gpu-3");
  for (const char* name : {"gpu-", "gpu", "gpu-01", "gpu-0-mig-1g.5gb-0", "gpu-x", "nic-1", ""}) {
    EXPECT_EQ(DraGpuIndex(name), -1) << name;
  }
}

}  // namespace
}  // namespace phalanx::gpu
