// Table tests for the GpuShare plugin (the GPU device model and the fragmentation
// measure it uses: src/gpu/gpu_test.cc).
#include "plugins/gpushare/gpu_share.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <optional>

#include "dra/dra_manager.h"
#include "framework/device_choice.h"
#include "gpu/device.h"
#include "gpu/gpu_builders_test.h"
#include "plugins/gpushare/guard.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace phalanx::plugins::gpushare {
namespace {

using phalanx::gpu::testing::GpuNode;
using phalanx::gpu::testing::Share;
using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;
using C = framework::Code;

class GpuShareTest : public ::testing::Test {
 protected:
  std::unique_ptr<GpuShare> New(const std::string& args_yaml = "") {
    std::optional<YAML::Node> args;
    if (!args_yaml.empty()) args = YAML::Load(args_yaml);
    auto p = GpuShare::New(args ? &*args : nullptr, h_);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return std::unique_ptr<GpuShare>(dynamic_cast<GpuShare*>(p.value().release()));
  }
  fake::FakeHandle h_;
};

TEST_F(GpuShareTest, FilterAccountsPerDevice) {
  struct Case {
    std::string name;
    api::Node node;
    std::vector<api::Pod> existing;
    api::Pod pod;
    C want;
    std::string reason;
  };
  const api::Node n2 = GpuNode("n", 2);
  const std::vector<Case> cases = {
      {"share on an idle node", n2, {}, Share("p", 500), C::kSuccess, ""},
      {"two half-used GPUs cannot take a whole GPU",
       n2,
       {Share("a", 500, 1, "0"), Share("b", 500, 1, "1")},
       Share("p", 1000),
       C::kUnschedulable,
       GpuShare::kReasonInsufficient},
      {"two half-used GPUs take another half",
       n2,
       {Share("a", 500, 1, "0"), Share("b", 500, 1, "1")},
       Share("p", 500),
       C::kSuccess,
       ""},
      {"a share does not fit in 400 free",
       n2,
       {Share("a", 600, 1, "0"), Share("b", 600, 1, "1")},
       Share("p", 500),
       C::kUnschedulable,
       GpuShare::kReasonInsufficient},
      {"whole GPU next to a share",
       n2,
       {Share("a", 500, 1, "0")},
       Share("p", 1000),
       C::kSuccess,
       ""},
      {"nvidia.com/gpu pod counts as whole devices",
       n2,
       {PodBuilder("w").UID("uid-w").Req("nvidia.com/gpu", "1").Obj()},
       Share("p", 1000, 2),
       C::kUnschedulable,
       GpuShare::kReasonInsufficient},
      {"more GPUs than the node has",
       n2,
       {},
       Share("p", 1000, 4),
       C::kUnschedulableAndUnresolvable,
       GpuShare::kReasonTooFew},
      {"wrong model",
       n2,
       {},
       Share("p", 500, 1, "", "T4|A10"),
       C::kUnschedulableAndUnresolvable,
       GpuShare::kReasonModel},
      {"allowed model", n2, {}, Share("p", 500, 1, "", "T4|V100M16"), C::kSuccess, ""},
      {"node without GPUs",
       NodeBuilder("c").Capacity({{"cpu", "8"}}).Obj(),
       {},
       Share("p", 100),
       C::kUnschedulableAndUnresolvable,
       GpuShare::kReasonNoGpus},
      {"KAI fraction",
       n2,
       {Share("a", 700, 1, "0"), Share("b", 700, 1, "1")},
       PodBuilder("p").Annotation("gpu-fraction", "0.3").Obj(),
       C::kSuccess,
       ""},
      {"KAI memory on a model of unknown size",
       GpuNode("n", 2, "Z9"),
       {},
       PodBuilder("p").Annotation("gpu-memory", "1000").Obj(),
       C::kUnschedulableAndUnresolvable,
       GpuShare::kReasonMemory},
      {"unassigned pods are packed best fit",
       n2,
       {Share("a", 600), Share("b", 600)},
       Share("p", 500),
       C::kUnschedulable,
       GpuShare::kReasonInsufficient},
  };
  for (const auto& c : cases) {
    auto pl = New();
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess()) << c.name;
    auto ni = MakeNodeInfo(c.node, c.existing);
    auto s = pl->Filter(state, *pi, ni);
    EXPECT_EQ(s.code(), c.want) << c.name << ": " << s.ToString();
    if (!c.reason.empty()) {
      ASSERT_EQ(s.reasons().size(), 1u) << c.name;
      EXPECT_EQ(s.reasons()[0], c.reason) << c.name;
    }
  }
}

TEST_F(GpuShareTest, PreFilterSkipsPodsWithoutGpuAndRejectsBadAnnotations) {
  auto pl = New();
  framework::CycleState state;
  auto cpu = PodBuilder("cpu").Req("cpu", "1").Info();
  EXPECT_TRUE(pl->PreFilter(state, *cpu, nullptr).IsSkip());
  auto bad = PodBuilder("bad").Annotation(gpu::kGpuMilliAnnotation, "x").Info();
  auto s = pl->PreFilter(state, *bad, nullptr);
  EXPECT_EQ(s.code(), C::kUnschedulableAndUnresolvable);
  EXPECT_NE(s.Message().find("alibabacloud.com/gpu-milli"), std::string::npos) << s.Message();
}

TEST_F(GpuShareTest, ReserveRecordsDevicesAndUnreserveReleasesThem) {
  const api::Node n = GpuNode("n", 4);
  // Device 0: 300 free, 1: 700 free, 2 and 3 idle.
  h_.SetNodes({MakeNodeInfo(n, {Share("a", 700, 1, "0"), Share("b", 300, 1, "1")})});
  auto pl = New();
  struct Step {
    api::Pod pod;
    std::vector<int32_t> want;
  };
  for (const auto& [pod, want] : std::vector<Step>{{Share("p1", 300), {0}},         // tightest
                                                   {Share("p2", 1000, 2), {2, 3}},  // lowest idle
                                                   {Share("p3", 600), {1}}}) {
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(pod));
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
    ASSERT_TRUE(pl->Reserve(state, *pi, "n").IsSuccess()) << pod.metadata.name;
    EXPECT_EQ(pl->context().Assignment("uid-" + pod.metadata.name), want) << pod.metadata.name;
  }
  framework::CycleState state;
  auto p1 = framework::PodInfo::Make(std::make_shared<api::Pod>(Share("p1", 300)));
  pl->Unreserve(state, *p1, "n");
  EXPECT_FALSE(pl->context().Assignment("uid-p1").has_value());
  // The state of a node follows the assignments of the pods on it.
  auto ni = MakeNodeInfo(n, {Share("a", 700, 1, "0"), Share("p3", 600)});
  EXPECT_EQ(pl->context().ComputeState(ni, "").shape.free_milli,
            (std::vector<int32_t>{300, 400, 1000, 1000}));
}

// A pod whose GPUs are DRA devices (framework/device_choice.h): reserving first, GpuShare
// hands its choice to DynamicResources; reserving after DynamicResources, it takes the
// devices the allocation names ("gpu-<i>" of gpu.nvidia.com), and refuses them when they do
// not fit its own accounting.
TEST_F(GpuShareTest, DraPodsHandTheirDevicesOverInEitherOrder) {
  const api::Node n = GpuNode("n", 4);
  h_.SetNodes({MakeNodeInfo(n, {Share("a", 700, 1, "0"), Share("b", 300, 1, "1")})});
  auto pl = New();
  auto dra_pod = [](const std::string& name, int32_t milli) {
    api::Pod p = Share(name, milli);
    p.spec.resource_claims.push_back(
        api::PodResourceClaim{"gpu", "", "gpu-1-" + std::to_string(milli) + "m"});
    return framework::PodInfo::Make(std::make_shared<api::Pod>(p));
  };
  // What DynamicResources, reserving first, leaves in the CycleState.
  auto allocated = [](framework::CycleState& state, const std::string& device) {
    auto chosen = std::make_unique<framework::DeviceChoice>();
    chosen->node = "n";
    chosen->devices["gpu.nvidia.com"] = {device};
    state.Write(framework::kAllocatedDevicesKey, std::move(chosen));
  };
  {  // first: the best-fit device, device 0, handed over
    framework::CycleState state;
    auto pi = dra_pod("p1", 300);
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
    ASSERT_TRUE(pl->Reserve(state, *pi, "n").IsSuccess());
    const auto* pref = state.ReadAs<framework::DeviceChoice>(framework::kPreferredDevicesKey);
    ASSERT_NE(pref, nullptr);
    EXPECT_EQ(pref->node, "n");
    EXPECT_EQ(pref->devices.at("gpu.nvidia.com"), std::vector<std::string>{"gpu-0"});
    pl->Unreserve(state, *pi, "n");
  }
  {  // after DynamicResources: its device 3 although best fit would be 0
    framework::CycleState state;
    auto pi = dra_pod("p2", 300);
    allocated(state, "gpu-3");
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
    ASSERT_TRUE(pl->Reserve(state, *pi, "n").IsSuccess());
    EXPECT_EQ(pl->context().Assignment("uid-p2"), std::vector<int32_t>{3});
    pl->Unreserve(state, *pi, "n");
  }
  {  // the allocation names device 0, which has 700 of 1000 taken: refused
    framework::CycleState state;
    auto pi = dra_pod("p3", 500);
    allocated(state, "gpu-0");
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
    EXPECT_EQ(pl->Reserve(state, *pi, "n").code(), C::kUnschedulable);
  }
}

TEST_F(GpuShareTest, ReserveFailsWhenDevicesNoLongerFit) {
  h_.SetNodes({MakeNodeInfo(GpuNode("n", 1), {Share("a", 800, 1, "0")})});
  auto pl = New();
  framework::CycleState state;
  auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(Share("p", 500)));
  ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
  EXPECT_EQ(pl->Reserve(state, *pi, "n").code(), C::kUnschedulable);
  EXPECT_FALSE(pl->context().Assignment("uid-p").has_value());
}

TEST_F(GpuShareTest, GangMembersPlacedTogetherGetTheDevicesFilterAssumed) {
  // The PodGroup cycle's view holds members a (share) and b (whole) on the node, neither
  // reserved yet. Filter for b assumed a takes device 1 (best fit: 600 free); a must get
  // device 1 at Reserve even with WorstFit selection, so b still fits.
  const api::Node n = GpuNode("n", 2);
  api::Pod used = Share("x", 400, 1, "1");
  h_.SetNodes({MakeNodeInfo(n, {used, Share("a", 500), Share("b", 1000)})});
  auto pl = New("deviceSelection: WorstFit");
  for (const char* name : {"a", "b"}) {
    framework::CycleState state;
    api::Pod p = std::string(name) == "a" ? Share("a", 500) : Share("b", 1000);
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(p));
    ASSERT_TRUE(pl->PreFilter(state, *pi, nullptr).IsSuccess());
    ASSERT_TRUE(pl->Reserve(state, *pi, "n").IsSuccess()) << name;
  }
  EXPECT_EQ(pl->context().Assignment("uid-a"), (std::vector<int32_t>{1}));
  EXPECT_EQ(pl->context().Assignment("uid-b"), (std::vector<int32_t>{0}));
}

// Runs PreFilter + Reserve + PreBind for `pod` on `node`; returns PreBind's status.
framework::Status ReserveAndPreBind(GpuShare& pl, const api::Pod& pod, const std::string& node) {
  framework::CycleState state;
  auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(pod));
  EXPECT_TRUE(pl.PreFilter(state, *pi, nullptr).IsSuccess()) << pod.metadata.name;
  auto r = pl.Reserve(state, *pi, node);
  EXPECT_TRUE(r.IsSuccess()) << r.ToString();
  return pl.PreBind(state, *pi, node);
}

TEST_F(GpuShareTest, PreBindWritesTheReservedDevicesToThePod) {
  h_.SetNodes({MakeNodeInfo(GpuNode("n", 4), {Share("a", 700, 1, "0")})});
  h_.fake_clock().now = 42 * api::kNanosPerSecond;
  auto pl = New();
  ASSERT_TRUE(ReserveAndPreBind(*pl, Share("p", 300), "n").IsSuccess());
  ASSERT_EQ(h_.fake_client().annotation_patches.size(), 1u);
  const auto& [key, ann] = h_.fake_client().annotation_patches[0];
  EXPECT_EQ(key, "default/p");
  EXPECT_EQ(ann, (std::map<std::string, std::string>{
                     {"alibabacloud.com/gpu-index", "0"},  // best fit: 300 free on device 0
                     {"alibabacloud.com/assume-time", "42000000000"},
                     {"scheduling.phalanx.dev/gpu-node", "n"}}));
  // Whole devices: "1-2".
  ASSERT_TRUE(ReserveAndPreBind(*pl, Share("w", 1000, 2), "n").IsSuccess());
  EXPECT_EQ(h_.fake_client().annotation_patches.back().second.at(gpu::kGpuIndexAnnotation), "1-2");
  // A pod without a GPU: nothing written.
  framework::CycleState state;
  auto cpu = PodBuilder("cpu").Req("cpu", "1").Info();
  EXPECT_TRUE(pl->PreBind(state, *cpu, "n").IsSuccess());
  EXPECT_EQ(h_.fake_client().annotation_patches.size(), 2u);
}

TEST_F(GpuShareTest, PreBindWritesAlibabaGpushareAnnotationsForGpuMemPods) {
  api::Node n = NodeBuilder("n")
                    .Capacity({{"cpu", "32"},
                               {"pods", "110"},
                               {gpu::kAliyunGpuMemResource, "32"},
                               {gpu::kAliyunGpuCountResource, "2"}})
                    .Obj();
  h_.SetNodes({MakeNodeInfo(n, {})});
  h_.fake_clock().now = 7;
  auto pl = New();
  api::Pod p = PodBuilder("m").UID("uid-m").Req("cpu", "1").Obj();
  p.spec.containers[0].resources.limits[gpu::kAliyunGpuMemResource] = api::Quantity::FromValue(8);
  ASSERT_TRUE(ReserveAndPreBind(*pl, p, "n").IsSuccess());
  ASSERT_EQ(h_.fake_client().annotation_patches.size(), 1u);
  EXPECT_EQ(h_.fake_client().annotation_patches[0].second,
            (std::map<std::string, std::string>{{"ALIYUN_COM_GPU_MEM_ASSIGNED", "false"},
                                                {"ALIYUN_COM_GPU_MEM_ASSUME_TIME", "7"},
                                                {"ALIYUN_COM_GPU_MEM_DEV", "16"},
                                                {"ALIYUN_COM_GPU_MEM_IDX", "0"},
                                                {"ALIYUN_COM_GPU_MEM_POD", "8"},
                                                {"alibabacloud.com/assume-time", "7"},
                                                {"alibabacloud.com/gpu-index", "0"},
                                                {"scheduling.phalanx.dev/gpu-node", "n"}}));
}

TEST_F(GpuShareTest, PreBindFailsWhenTheWriteFailsAndSkipsWhenAlreadyWritten) {
  h_.SetNodes({MakeNodeInfo(GpuNode("n", 1), {})});
  auto pl = New();
  h_.fake_client().patch_status = absl::NotFoundError("pods \"p\" not found");
  auto s = ReserveAndPreBind(*pl, Share("p", 500), "n");
  EXPECT_EQ(s.code(), C::kError);
  EXPECT_NE(s.Message().find("writing GPU devices 0 of node n to pod default/p"), std::string::npos)
      << s.Message();
  h_.fake_client().patch_status = absl::OkStatus();
  // Carrying this very assignment already (a retry after the write): no second write.
  api::Pod again = Share("q", 500);
  again.metadata.annotations[gpu::kGpuIndexAnnotation] = "0";
  again.metadata.annotations[gpu::kAssumeTimeAnnotation] = "1";
  again.metadata.annotations[gpu::kGpuNodeAnnotation] = "n";
  const size_t before = h_.fake_client().annotation_patches.size();
  h_.SetNodes({MakeNodeInfo(GpuNode("n", 1), {})});
  auto pl2 = New();
  EXPECT_TRUE(ReserveAndPreBind(*pl2, again, "n").IsSuccess());
  EXPECT_EQ(h_.fake_client().annotation_patches.size(), before);
}

// A restarted Phalanx has no assignments: it must count the bound pods on the devices their
// annotations name. Best fit in pod order would put both halves on device 0 and leave
// device 1 idle for a whole-GPU pod; the annotations say one half is on each device.
TEST_F(GpuShareTest, RestartCountsBoundPodsOnTheirAnnotatedDevices) {
  auto annotated = [](const std::string& name, const std::string& dev) {
    api::Pod p = Share(name, 500, 1, dev);
    p.metadata.annotations[gpu::kGpuNodeAnnotation] = "n";
    p.spec.node_name = "n";
    return p;
  };
  auto pl = New();  // a fresh GpuContext: nothing assigned in this process
  auto ni = MakeNodeInfo(GpuNode("n", 2), {annotated("a", "0"), annotated("b", "1")});
  EXPECT_EQ(pl->context().ComputeState(ni, "").shape.free_milli, (std::vector<int32_t>{500, 500}));
  framework::CycleState state;
  auto whole = framework::PodInfo::Make(std::make_shared<api::Pod>(Share("w", 1000)));
  ASSERT_TRUE(pl->PreFilter(state, *whole, nullptr).IsSuccess());
  EXPECT_EQ(pl->Filter(state, *whole, ni).code(), C::kUnschedulable);
  // Without the annotations (bound by a scheduler that records no device) the same pods
  // are placed best fit in pod order: both on device 0.
  auto bare = MakeNodeInfo(GpuNode("n", 2), {Share("a", 500), Share("b", 500)});
  EXPECT_EQ(pl->context().ComputeState(bare, "").shape.free_milli, (std::vector<int32_t>{0, 1000}));
  // An index written for another node (a binding that never happened) is not counted
  // there as that device.
  api::Pod moved = annotated("c", "1");
  moved.metadata.annotations[gpu::kGpuNodeAnnotation] = "other";
  auto ni2 = MakeNodeInfo(GpuNode("n", 2), {Share("x", 600, 1, "0"), moved});
  EXPECT_EQ(pl->context().ComputeState(ni2, "").shape.free_milli, (std::vector<int32_t>{400, 500}));
}

// An index Phalanx wrote for an attempt that never bound (crash between the patch and the
// binding) is not a user's choice: Reserve chooses again. A manifest's own index is kept.
TEST_F(GpuShareTest, ReserveIgnoresAStaleIndexButKeepsAPredefinedOne) {
  h_.SetNodes({MakeNodeInfo(GpuNode("n", 2), {Share("x", 700, 1, "1")})});
  auto pl = New();
  api::Pod stale = Share("s", 300, 1, "0");
  stale.metadata.annotations[gpu::kGpuNodeAnnotation] = "n";
  framework::CycleState st1;
  auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(stale));
  ASSERT_TRUE(pl->PreFilter(st1, *pi, nullptr).IsSuccess());
  ASSERT_TRUE(pl->Reserve(st1, *pi, "n").IsSuccess());
  EXPECT_EQ(pl->context().Assignment("uid-s"), (std::vector<int32_t>{1}));  // best fit
  framework::CycleState st2;
  auto user = framework::PodInfo::Make(std::make_shared<api::Pod>(Share("u", 300, 1, "0")));
  ASSERT_TRUE(pl->PreFilter(st2, *user, nullptr).IsSuccess());
  ASSERT_TRUE(pl->Reserve(st2, *user, "n").IsSuccess());
  EXPECT_EQ(pl->context().Assignment("uid-u"), (std::vector<int32_t>{0}));
}

// A pod without a GPU ask whose ResourceClaims hold DRA GPUs on the node (placed by another
// scheduler) takes those devices in the node's state: a whole GPU, and a share by its
// consumed compute; a claim two such pods share counts once, and devices of another node's
// pool or another driver do not count.
TEST_F(GpuShareTest, DraGpusOfPodsWithoutAnAskAreCounted) {
  dra::DefaultDRAManager m;
  auto claim = [&](const std::string& name, const std::string& results) {
    YAML::Node doc = YAML::Load(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
        ", namespace: default, uid: uid-" + name +
        "}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
        "status: {allocation: {devices: {results: [" +
        results + "]}}}\n");
    auto u = std::make_shared<api::Unstructured>();
    u->api_version = "resource.k8s.io/v1";
    u->kind = "ResourceClaim";
    u->metadata.name = name;
    u->metadata.namespace_ = "default";
    u->metadata.uid = "uid-" + name;
    u->object = std::make_shared<const YAML::Node>(doc);
    ASSERT_TRUE(m.OnObjectAdd(u));
  };
  claim("whole", "{request: gpu, driver: gpu.nvidia.com, pool: n, device: gpu-1}");
  claim("share",
        "{request: gpu, driver: gpu.nvidia.com, pool: n, device: gpu-2, shareID: "
        "1f4d9a4c-8c1e-4a5e-9d67-2f2b6f0c9a11, consumedCapacity: {compute: \"300\"}}");
  claim("elsewhere",
        "{request: gpu, driver: gpu.nvidia.com, pool: other-node, device: gpu-0}, "
        "{request: gpu, driver: nic.example.com, pool: n, device: gpu-3}");
  h_.services().Provide<dra::DefaultDRAManager>(&m);
  auto with_claims = [](const std::string& name, const std::vector<std::string>& claims) {
    api::Pod p = phalanx::testing::PodBuilder(name).UID("uid-" + name).Req("cpu", "1").Obj();
    p.spec.node_name = "n";
    for (const auto& c : claims) p.spec.resource_claims.push_back(api::PodResourceClaim{c, c, ""});
    return p;
  };
  auto pl = New();
  auto ni =
      MakeNodeInfo(GpuNode("n", 4), {with_claims("a", {"whole", "share"}),
                                     with_claims("b", {"share"}), with_claims("c", {"elsewhere"})});
  EXPECT_EQ(pl->context().ComputeState(ni, "").shape.free_milli,
            (std::vector<int32_t>{1000, 0, 700, 1000}));
}

// GpuShareGuard: GPU asks by annotation only are held with the plugin to enable; a pod that
// also requests nvidia.com/gpu for each device of its ask is left to NodeResourcesFit.
TEST(GpuShareGuardTest, HoldsAnnotationOnlyAsksAndLeavesExtendedRequests) {
  struct Case {
    std::string name;
    api::Pod pod;
    int64_t gpu_request;  // nvidia.com/gpu of the first container (0: none)
    C want;
  };
  api::Pod plain = phalanx::testing::PodBuilder("plain").Req("cpu", "1").Obj();
  const std::vector<Case> cases = {
      {"half a GPU by annotation", Share("p", 500), 0, C::kUnschedulableAndUnresolvable},
      {"half a GPU and one nvidia.com/gpu", Share("p", 500), 1, C::kSkip},
      {"two whole GPUs and one nvidia.com/gpu", Share("p", 1000, 2), 1,
       C::kUnschedulableAndUnresolvable},
      {"two whole GPUs and two nvidia.com/gpu", Share("p", 1000, 2), 2, C::kSkip},
      {"no GPU ask", plain, 0, C::kSkip},
  };
  fake::FakeHandle h;
  auto guard = GpuShareGuard::New(nullptr, h);
  ASSERT_TRUE(guard.ok());
  auto* pl = dynamic_cast<framework::PreFilterPlugin*>(guard->get());
  ASSERT_NE(pl, nullptr);
  for (const auto& c : cases) {
    api::Pod pod = c.pod;
    if (c.gpu_request) {
      pod.spec.containers[0].resources.requests["nvidia.com/gpu"] =
          api::Quantity::FromValue(c.gpu_request);
    }
    framework::CycleState state;
    const framework::Status st =
        pl->PreFilter(state, *framework::PodInfo::Make(std::make_shared<api::Pod>(pod)), nullptr);
    EXPECT_EQ(st.code(), c.want) << c.name << ": " << st.Message();
    if (c.want == C::kUnschedulableAndUnresolvable) {
      EXPECT_NE(st.Message().find("placed only by the GpuShare plugin"), std::string::npos)
          << c.name;
    }
  }
}

TEST_F(GpuShareTest, ArgsAreValidated) {
  EXPECT_TRUE(GpuShare::New(nullptr, h_).ok());
  YAML::Node bad = YAML::Load("deviceSelection: Tightest");
  auto r = GpuShare::New(&bad, h_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().Message().find("GpuShareArgs: deviceSelection: Unsupported value"),
            std::string::npos)
      << r.status().Message();
  YAML::Node unknown = YAML::Load("gpuSel: best");
  EXPECT_FALSE(GpuShare::New(&unknown, h_).ok());
}

}  // namespace
}  // namespace phalanx::plugins::gpushare
