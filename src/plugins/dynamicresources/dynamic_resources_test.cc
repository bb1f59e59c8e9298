// DynamicResources' extension points on a fake handle: the allocation made in Reserve is an
// allocation in flight (devices taken for the next pod) until Unreserve reverts it; the
// PreEnqueue / PreFilter reasons; device binding conditions (KEP-5007): the status PreBind
// writes, the wait and its three endings, PostFilter's deallocation; DynamicResourcesArgs.
// (End to end: src/sim/dra_test.cc.)
#include "plugins/dynamicresources/dynamic_resources.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "framework/cycle_state.h"
#include "plugins/testing_fake_handle.h"

namespace phalanx::plugins::dynamicresources {
namespace {

api::UnstructuredPtr Obj(const std::string& yaml) {
  YAML::Node doc = YAML::Load(yaml);
  auto u = std::make_shared<api::Unstructured>();
  u->api_version = doc["apiVersion"].Scalar();
  u->kind = doc["kind"].Scalar();
  u->metadata.name = doc["metadata"]["name"].Scalar();
  if (doc["metadata"]["namespace"]) u->metadata.namespace_ = doc["metadata"]["namespace"].Scalar();
  u->metadata.uid = "uid-" + u->metadata.name;
  u->object = std::make_shared<const YAML::Node>(doc);
  return u;
}

framework::PodInfoPtr Pod(const std::string& name, const std::string& claim) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "ns";
  p->metadata.uid = "uid-" + name;
  p->spec.resource_claims.push_back(api::PodResourceClaim{"gpu", claim, ""});
  return framework::PodInfo::Make(p);
}

TEST(DynamicResourcesTest, ReserveTakesDevicesUnreserveGivesThemBack) {
  dra::DefaultDRAManager m;
  m.OnObjectAdd(Obj("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"));
  m.OnObjectAdd(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
          "spec: {driver: d, nodeName: n1, pool: {name: n1}, devices: [{name: g0}]}\n"));
  for (const char* c : {"a", "b"}) {
    m.OnObjectAdd(
        Obj(std::string("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                        "metadata: {name: ") +
            c +
            ", namespace: ns}\n"
            "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n"));
  }
  ASSERT_TRUE(m.Errors().empty()) << m.Errors()[0];
  fake::FakeHandle h;
  h.services().Provide<dra::DefaultDRAManager>(&m);
  auto node = std::make_shared<api::Node>();
  node->metadata.name = "n1";
  std::vector<framework::NodeInfo> nodes;
  nodes.emplace_back(node);
  h.SetNodes(std::move(nodes));
  DynamicResources pl(h, &m);
  const framework::NodeInfo& ni = *h.SnapshotSharedLister().Get("n1");

  auto pa = Pod("pa", "a");
  framework::CycleState sa;
  ASSERT_TRUE(pl.PreFilter(sa, *pa, nullptr).IsSuccess());
  ASSERT_TRUE(pl.Filter(sa, *pa, ni).IsSuccess());
  ASSERT_TRUE(pl.Reserve(sa, *pa, "n1").IsSuccess());
  EXPECT_TRUE(m.HasPendingAllocation("uid-a"));
  EXPECT_EQ(m.AllocatedDevices().size(), 1u);

  // The only device is in flight for pa: pb's claim cannot be allocated, and names itself.
  auto pb = Pod("pb", "b");
  framework::CycleState sb;
  ASSERT_TRUE(pl.PreFilter(sb, *pb, nullptr).IsSuccess());
  framework::Status fb = pl.Filter(sb, *pb, ni);
  EXPECT_EQ(fb.code(), framework::Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(fb.Message(), "cannot allocate all claims (claim ns/b)");

  // Unreserve reverts the allocation: pb fits again.
  pl.Unreserve(sa, *pa, "n1");
  EXPECT_FALSE(m.HasPendingAllocation("uid-a"));
  EXPECT_TRUE(m.AllocatedDevices().empty());
  framework::CycleState sb2;
  ASSERT_TRUE(pl.PreFilter(sb2, *pb, nullptr).IsSuccess());
  EXPECT_TRUE(pl.Filter(sb2, *pb, ni).IsSuccess());
}

TEST(DynamicResourcesTest, PreEnqueueWaitsForTheClaimAndClassErrorsAreReasons) {
  dra::DefaultDRAManager m;
  fake::FakeHandle h;
  DynamicResources pl(h, &m);
  EXPECT_EQ(pl.PreEnqueue(*Pod("p", "missing")).Message(), "resourceclaim \"missing\" not found");
  auto tmpl = Pod("t", "");
  auto tp = std::make_shared<api::Pod>(*tmpl->pod);
  tp->spec.resource_claims[0].resource_claim_template_name = "tmpl";
  EXPECT_EQ(pl.PreEnqueue(*framework::PodInfo::Make(tp)).Message(),
            "pod \"ns/t\": ResourceClaim not created yet");
  m.OnObjectAdd(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
          "metadata: {name: c, namespace: ns}\n"
          "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: nope}}]}}\n"));
  framework::CycleState s;
  framework::Status st = pl.PreFilter(s, *Pod("p", "c"), nullptr);
  EXPECT_EQ(st.code(), framework::Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.Message(), "request r: device class nope does not exist");
  // Pods without claims are not the plugin's business.
  auto plain = std::make_shared<api::Pod>();
  plain->metadata.name = "plain";
  EXPECT_EQ(pl.PreFilter(s, *framework::PodInfo::Make(plain), nullptr).code(),
            framework::Code::kSkip);
}

// The manager of a PodGroup "train" in ns whose claim "gpu" (from template tmpl) is
// ns/train-gpu-x, of one device g0 on node n1; `owned_by` makes that claim owned by a kind.
struct PodGroupClaimFixture {
  dra::DefaultDRAManager m;
  std::function<api::UnstructuredPtr(const std::string&, const std::string&)> owned_by;
  std::function<framework::PodInfoPtr(const std::string&)> member;
};

void SetUpPodGroupClaim(PodGroupClaimFixture& f) {
  dra::DefaultDRAManager& m = f.m;
  m.OnObjectAdd(Obj("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"));
  m.OnObjectAdd(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
          "spec: {driver: d, nodeName: n1, pool: {name: n1}, devices: [{name: g0}]}\n"));
  m.OnPodGroup(
      Obj("apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\n"
          "metadata: {name: train, namespace: ns}\n"
          "spec: {resourceClaims: [{name: gpu, resourceClaimTemplateName: tmpl}]}\n"
          "status: {resourceClaimStatuses: [{name: gpu, resourceClaimName: train-gpu-x}]}\n"),
      /*deleted=*/false);
  const std::string claim =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
      "metadata: {name: train-gpu-x, namespace: ns}\n"
      "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n";
  f.owned_by = [claim](const std::string& kind, const std::string& name) {
    auto c = Obj(claim);
    auto copy = std::make_shared<api::Unstructured>(*c);
    copy->metadata.owner_references.push_back(
        api::OwnerReference{"v1", kind, name, "uid-" + name, true});
    return copy;
  };
  f.member = [](const std::string& name) {
    auto p = std::make_shared<api::Pod>();
    p->metadata.name = name;
    p->metadata.namespace_ = "ns";
    p->metadata.uid = "uid-" + name;
    p->spec.scheduling_group_pod_group_name = "train";
    p->spec.resource_claims.push_back(api::PodResourceClaim{"gpu", "", "tmpl"});
    return framework::PodInfo::Make(p);
  };
}

// KEP-5729: a claim generated for the pod's PodGroup must be owned by it; it is reserved for
// the PodGroup once (the second member writes nothing), and Unreserve of the member that
// wrote the reservation takes it back and deallocates.
TEST(DynamicResourcesTest, PodGroupClaimIsReservedForThePodGroup) {
  PodGroupClaimFixture f;
  SetUpPodGroupClaim(f);
  dra::DefaultDRAManager& m = f.m;
  auto& owned_by = f.owned_by;
  auto& member = f.member;
  fake::FakeHandle h;
  auto node = std::make_shared<api::Node>();
  node->metadata.name = "n1";
  std::vector<framework::NodeInfo> nodes;
  nodes.emplace_back(node);
  h.SetNodes(std::move(nodes));
  DynamicResources pl(h, &m);
  auto pa = member("pa");
  auto pb = member("pb");
  // Owned by a pod: refused.
  m.OnObjectAdd(owned_by("Pod", "pa"));
  EXPECT_EQ(pl.PreEnqueue(*pa).Message(),
            "ResourceClaim ns/train-gpu-x was not created for pod group ns/train (pod group is "
            "not owner)");
  // Owned by the PodGroup: the name comes from the PodGroup's status.
  m.OnObjectAdd(owned_by("PodGroup", "train"));
  ASSERT_TRUE(pl.PreEnqueue(*pa).IsSuccess());
  const framework::NodeInfo& ni = *h.SnapshotSharedLister().Get("n1");
  framework::CycleState sa;
  ASSERT_TRUE(pl.PreFilter(sa, *pa, nullptr).IsSuccess());
  ASSERT_TRUE(pl.Filter(sa, *pa, ni).IsSuccess());
  ASSERT_TRUE(pl.Reserve(sa, *pa, "n1").IsSuccess());
  ASSERT_TRUE(pl.PreBind(sa, *pa, "n1").IsSuccess());
  auto c = m.GetClaim("ns", "train-gpu-x");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->allocation.has_value());
  ASSERT_EQ((*c)->reserved_for.size(), 1u);
  EXPECT_EQ((*c)->reserved_for[0],
            (dra::ConsumerReference{"scheduling.k8s.io", "podgroups", "train", "uid-train"}));
  ASSERT_EQ(h.fake_client().claim_status_writes.size(), 1u);
  const YAML::Node written = (*h.fake_client().claim_status_writes[0].object)["status"];
  EXPECT_EQ(written["reservedFor"][0]["apiGroup"].Scalar(), "scheduling.k8s.io");
  EXPECT_EQ(written["reservedFor"][0]["resource"].Scalar(), "podgroups");
  // A second member: the claim is allocated and already reserved for its group.
  framework::CycleState sb;
  ASSERT_TRUE(pl.PreFilter(sb, *pb, nullptr).IsSuccess());
  ASSERT_TRUE(pl.Filter(sb, *pb, ni).IsSuccess());
  ASSERT_TRUE(pl.Reserve(sb, *pb, "n1").IsSuccess());
  ASSERT_TRUE(pl.PreBind(sb, *pb, "n1").IsSuccess());
  EXPECT_EQ(h.fake_client().claim_status_writes.size(), 1u);  // nothing to write
  pl.Unreserve(sb, *pb, "n1");  // pb did not reserve it: the group keeps it
  EXPECT_EQ((*m.GetClaim("ns", "train-gpu-x"))->reserved_for.size(), 1u);
  pl.Unreserve(sa, *pa, "n1");  // pa did: reservation and allocation go
  auto after = m.GetClaim("ns", "train-gpu-x");
  EXPECT_TRUE((*after)->reserved_for.empty());
  EXPECT_FALSE((*after)->allocation.has_value());
}

// Two members of a gang sharing the PodGroup's claim PreBind at once (parallel binding
// cycles): the claim status is written once, by one of them, and both PreBinds return only
// once it is written (live, the second writer would lose with 409 Conflict and its member
// would wait a retry while the first was bound).
TEST(DynamicResourcesTest, GangMembersSharingAClaimWriteItOnce) {
  PodGroupClaimFixture f;
  SetUpPodGroupClaim(f);
  f.m.OnObjectAdd(f.owned_by("PodGroup", "train"));
  fake::FakeHandle h;
  auto node = std::make_shared<api::Node>();
  node->metadata.name = "n1";
  std::vector<framework::NodeInfo> nodes;
  nodes.emplace_back(node);
  h.SetNodes(std::move(nodes));
  DynamicResources pl(h, &f.m);
  auto pa = f.member("pa");
  auto pb = f.member("pb");
  const framework::NodeInfo& ni = *h.SnapshotSharedLister().Get("n1");
  framework::CycleState sa, sb;
  for (auto [state, pod] : {std::pair{&sa, pa.get()}, std::pair{&sb, pb.get()}}) {
    ASSERT_TRUE(pl.PreFilter(*state, *pod, nullptr).IsSuccess());
    ASSERT_TRUE(pl.Filter(*state, *pod, ni).IsSuccess());
    ASSERT_TRUE(pl.Reserve(*state, *pod, "n1").IsSuccess());
  }
  // The write is slow: the other member's PreBind gets every chance to read the claim before
  // it lands.
  std::atomic<int> writing{0}, overlapped{0};
  h.fake_client().on_claim_status = [&](const api::Unstructured&) {
    if (writing.fetch_add(1) > 0) overlapped.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    writing.fetch_sub(1);
  };
  framework::Status ra, rb;
  std::thread ta([&] { ra = pl.PreBind(sa, *pa, "n1"); });
  std::thread tb([&] { rb = pl.PreBind(sb, *pb, "n1"); });
  ta.join();
  tb.join();
  EXPECT_TRUE(ra.IsSuccess()) << ra.Message();
  EXPECT_TRUE(rb.IsSuccess()) << rb.Message();
  EXPECT_EQ(h.fake_client().claim_status_writes.size(), 1u);
  EXPECT_EQ(overlapped.load(), 0);
  auto c = f.m.GetClaim("ns", "train-gpu-x");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE((*c)->allocation.has_value());
  EXPECT_EQ((*c)->reserved_for.size(), 1u);
}

// ---- KEP-5007: device binding conditions ----

// A fabric pool offered to every node: one device that binds to the node it is allocated
// for and needs FabricDeviceReady (FabricDeviceFailed fails it), as CoHDI's
// composable-dra-driver publishes them.
constexpr char kFabricSlice[] =
    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: fabric}\n"
    "spec:\n  driver: fabric.example.com\n  allNodes: true\n  pool: {name: fabric}\n"
    "  devices:\n  - name: gpu-0\n    bindsToNode: true\n"
    "    bindingConditions: [FabricDeviceReady]\n"
    "    bindingFailureConditions: [FabricDeviceFailed]\n";

constexpr char kClaimC[] =
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
    "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n";

// The object `written` with a driver's status.devices entry for gpu-0 holding condition
// `type` = `status` (reason R, message M).
api::UnstructuredPtr WithDeviceCondition(const api::Unstructured& written, const std::string& type,
                                         const std::string& status) {
  auto out = std::make_shared<api::Unstructured>(written);
  YAML::Node doc = YAML::Clone(*written.object);
  YAML::Node cond;
  cond["type"] = type;
  cond["status"] = status;
  cond["reason"] = "R";
  cond["message"] = "M \"quoted\"";
  cond["lastTransitionTime"] = "2023-11-14T22:13:30Z";
  YAML::Node dev;
  dev["driver"] = "fabric.example.com";
  dev["pool"] = "fabric";
  dev["device"] = "gpu-0";
  dev["conditions"].push_back(cond);
  doc["status"]["devices"].push_back(dev);
  out->object = std::make_shared<const YAML::Node>(doc);
  return out;
}

struct BindingEnv {
  dra::DefaultDRAManager m;
  fake::FakeHandle h;
  std::unique_ptr<DynamicResources> pl;
  explicit BindingEnv(int64_t timeout_ns = DynamicResources::kBindingTimeoutDefaultNs) {
    m.OnObjectAdd(
        Obj("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"));
    m.OnObjectAdd(Obj(kFabricSlice));
    m.OnObjectAdd(Obj(kClaimC));
    EXPECT_TRUE(m.Errors().empty()) << m.Errors()[0];
    h.services().Provide<dra::DefaultDRAManager>(&m);
    std::vector<framework::NodeInfo> nodes;
    for (const char* n : {"n1", "n2"}) {
      auto node = std::make_shared<api::Node>();
      node->metadata.name = n;
      nodes.emplace_back(node);
    }
    h.SetNodes(std::move(nodes));
    h.fake_clock().now = 1'700'000'000LL * api::kNanosPerSecond;  // 2023-11-14T22:13:20Z
    pl = std::make_unique<DynamicResources>(h, &m, timeout_ns);
  }
  // PreFilter .. PreBind of `pod` on n2 (both nodes fit); PreBind's status.
  framework::Status ToPreBind(framework::CycleState& s, const framework::PodInfo& pod) {
    EXPECT_TRUE(pl->PreFilter(s, pod, nullptr).IsSuccess());
    EXPECT_TRUE(pl->Filter(s, pod, *h.SnapshotSharedLister().Get("n2")).IsSuccess());
    EXPECT_TRUE(pl->Reserve(s, pod, "n2").IsSuccess());
    return pl->PreBind(s, pod, "n2");
  }
};

// PreBind writes allocationTimestamp (the handle's clock), the result's binding conditions
// copied from the device and a node selector naming the node (bindsToNode, although the
// pool reaches every node), then waits; PreBindWait polls every 5 s until the driver's
// FabricDeviceReady is True.
TEST(DynamicResourcesBindingTest, PreBindWaitsUntilTheBindingConditionIsTrue) {
  BindingEnv e;
  auto pod = Pod("pa", "c");
  framework::CycleState s;
  framework::Status st = e.ToPreBind(s, *pod);
  EXPECT_EQ(st.code(), framework::Code::kWait);
  ASSERT_EQ(e.h.fake_client().claim_status_writes.size(), 1u);
  const api::Unstructured written = e.h.fake_client().claim_status_writes[0];
  const YAML::Node alloc = (*written.object)["status"]["allocation"];
  EXPECT_EQ(alloc["allocationTimestamp"].Scalar(), "2023-11-14T22:13:20Z");
  const YAML::Node res = alloc["devices"]["results"][0];
  EXPECT_EQ(res["device"].Scalar(), "gpu-0");
  ASSERT_EQ(res["bindingConditions"].size(), 1u);
  EXPECT_EQ(res["bindingConditions"][0].Scalar(), "FabricDeviceReady");
  ASSERT_EQ(res["bindingFailureConditions"].size(), 1u);
  EXPECT_EQ(res["bindingFailureConditions"][0].Scalar(), "FabricDeviceFailed");
  const YAML::Node mf = alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0];
  EXPECT_EQ(mf["key"].Scalar(), "metadata.name");
  EXPECT_EQ(mf["operator"].Scalar(), "In");
  EXPECT_EQ(mf["values"][0].Scalar(), "n2");
  ASSERT_EQ(e.h.fake_client().events.size(), 1u);
  EXPECT_EQ(e.h.fake_client().events[0],
            "BindingConditionsPending: waiting for binding conditions for device on node n2");

  // No device status yet: wait, and poll again 5 s later.
  const int64_t t0 = e.h.fake_clock().now;
  int64_t wake = 0;
  EXPECT_EQ(e.pl->PreBindWait(s, *pod, "n2", t0, &wake).code(), framework::Code::kWait);
  EXPECT_EQ(wake, t0 + 5 * api::kNanosPerSecond);
  // The driver reports another condition False: still waiting.
  e.m.OnObjectUpdate(WithDeviceCondition(written, "FabricDeviceReady", "False"));
  EXPECT_EQ(e.pl->PreBindWait(s, *pod, "n2", t0 + 10 * api::kNanosPerSecond, &wake).code(),
            framework::Code::kWait);
  // True: the pod may be bound.
  e.m.OnObjectUpdate(WithDeviceCondition(written, "FabricDeviceReady", "True"));
  EXPECT_TRUE(e.pl->PreBindWait(s, *pod, "n2", t0 + 15 * api::kNanosPerSecond, &wake).IsSuccess());
}

// A True failure condition fails at once with upstream's message; the retry's Filter finds
// the claim unavailable on every node and PostFilter deallocates it (status.devices too), so
// that the next attempt can have the device.
TEST(DynamicResourcesBindingTest, FailureConditionFailsAtOnceAndTheRetryDeallocates) {
  BindingEnv e;
  auto pod = Pod("pa", "c");
  framework::CycleState s;
  ASSERT_EQ(e.ToPreBind(s, *pod).code(), framework::Code::kWait);
  const api::Unstructured written = e.h.fake_client().claim_status_writes[0];
  e.m.OnObjectUpdate(WithDeviceCondition(written, "FabricDeviceFailed", "True"));
  int64_t wake = 0;
  framework::Status st = e.pl->PreBindWait(s, *pod, "n2", e.h.fake_clock().now, &wake);
  EXPECT_EQ(st.code(), framework::Code::kError);
  EXPECT_EQ(st.Message(), "claim c binding failed: reason=R, message=\"M \\\"quoted\\\"\"");
  // The binding cycle's failure: Unreserve takes the pod out of reservedFor.
  e.pl->Unreserve(s, *pod, "n2");
  ASSERT_EQ(e.h.fake_client().claim_status_writes.size(), 2u);
  e.m.OnObjectUpdate(std::make_shared<api::Unstructured>(e.h.fake_client().claim_status_writes[1]));
  auto c = e.m.GetClaim("ns", "c");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE((*c)->reserved_for.empty());
  EXPECT_TRUE((*c)->allocation.has_value());
  EXPECT_EQ((*c)->devices.size(), 1u);  // Unreserve leaves the driver's status alone
  // The retry.
  framework::CycleState s2;
  ASSERT_TRUE(e.pl->PreFilter(s2, *pod, nullptr).IsSuccess());
  for (const char* n : {"n1", "n2"}) {
    framework::Status f = e.pl->Filter(s2, *pod, *e.h.SnapshotSharedLister().Get(n));
    EXPECT_EQ(f.code(), framework::Code::kUnschedulableAndUnresolvable) << n;
    EXPECT_EQ(f.Message(), "resourceclaim not available on the node") << n;
  }
  framework::PostFilterResult pr;
  framework::Status pf = e.pl->PostFilter(s2, *pod, framework::NodeToStatus{}, &pr);
  EXPECT_EQ(pf.Message(), "deallocation of ResourceClaim completed");
  ASSERT_EQ(e.h.fake_client().claim_status_writes.size(), 3u);
  const YAML::Node cleared = (*e.h.fake_client().claim_status_writes[2].object)["status"];
  EXPECT_FALSE(cleared["allocation"].IsDefined());
  EXPECT_FALSE(cleared["reservedFor"].IsDefined());
  EXPECT_FALSE(cleared["devices"].IsDefined());
  // The device is free: the next attempt allocates it again.
  e.m.OnObjectUpdate(std::make_shared<api::Unstructured>(e.h.fake_client().claim_status_writes[2]));
  framework::CycleState s3;
  ASSERT_TRUE(e.pl->PreFilter(s3, *pod, nullptr).IsSuccess());
  EXPECT_TRUE(e.pl->Filter(s3, *pod, *e.h.SnapshotSharedLister().Get("n1")).IsSuccess());
}

// The wait ends with "device binding timeout" once bindingTimeout (here 60 s) passed; before
// that the poll never goes past the deadline. A later attempt on a claim whose
// allocationTimestamp is older than the timeout finds it unavailable.
TEST(DynamicResourcesBindingTest, TimeoutEndsTheWaitAndMakesTheClaimUnavailable) {
  BindingEnv e(60 * api::kNanosPerSecond);
  auto pod = Pod("pa", "c");
  framework::CycleState s;
  ASSERT_EQ(e.ToPreBind(s, *pod).code(), framework::Code::kWait);
  const int64_t t0 = e.h.fake_clock().now;
  int64_t wake = 0;
  EXPECT_EQ(e.pl->PreBindWait(s, *pod, "n2", t0 + 58 * api::kNanosPerSecond, &wake).code(),
            framework::Code::kWait);
  EXPECT_EQ(wake, t0 + 60 * api::kNanosPerSecond);  // not 63 s: the deadline comes first
  framework::Status st = e.pl->PreBindWait(s, *pod, "n2", wake, &wake);
  EXPECT_EQ(st.code(), framework::Code::kError);
  EXPECT_EQ(st.Message(), "device binding timeout");
  e.pl->Unreserve(s, *pod, "n2");
  e.m.OnObjectUpdate(
      std::make_shared<api::Unstructured>(e.h.fake_client().claim_status_writes.back()));
  // At exactly timestamp + timeout the claim is not timed out yet (upstream: Before(now)).
  e.h.fake_clock().now = t0 + 60 * api::kNanosPerSecond;
  framework::CycleState s2;
  ASSERT_TRUE(e.pl->PreFilter(s2, *pod, nullptr).IsSuccess());
  EXPECT_TRUE(e.pl->Filter(s2, *pod, *e.h.SnapshotSharedLister().Get("n2")).IsSuccess());
  // One second later it is: unavailable, and a wait that resumes on it says so.
  e.h.fake_clock().now = t0 + 61 * api::kNanosPerSecond;
  framework::CycleState s3;
  ASSERT_TRUE(e.pl->PreFilter(s3, *pod, nullptr).IsSuccess());
  EXPECT_EQ(e.pl->Filter(s3, *pod, *e.h.SnapshotSharedLister().Get("n2")).Message(),
            "resourceclaim not available on the node");
  EXPECT_EQ(e.pl->PreBindWait(s, *pod, "n2", e.h.fake_clock().now, &wake).Message(),
            "claim c binding timeout");
}

TEST(DynamicResourcesBindingTest, ArgsBindingTimeout) {
  auto parse = [](const std::string& yaml) {
    YAML::Node n = YAML::Load(yaml);
    return DynamicResources::ParseArgs(&n);
  };
  auto dflt = DynamicResources::ParseArgs(nullptr);
  ASSERT_TRUE(dflt.ok());
  EXPECT_EQ(*dflt, 600 * api::kNanosPerSecond);  // DynamicResourcesBindingTimeoutDefault
  auto ok = parse("{kind: DynamicResourcesArgs, bindingTimeout: 90s, filterTimeout: 0s}");
  ASSERT_TRUE(ok.ok()) << ok.status().Message();
  EXPECT_EQ(*ok, 90 * api::kNanosPerSecond);
  EXPECT_EQ(parse("{bindingTimeout: 500ms}").status().Message(),
            "DynamicResourcesArgs: bindingTimeout: Invalid value: \"500ms\": must be at least 1 "
            "second");
  EXPECT_EQ(parse("{filterTimeout: -1s}").status().Message(),
            "DynamicResourcesArgs: filterTimeout: Invalid value: \"-1s\": must be zero or "
            "positive");
  EXPECT_FALSE(parse("{bindingTimeout: 10x}").ok());
  EXPECT_FALSE(parse("{bindTimeout: 10s}").ok());  // unknown field
}

// Validation of the device's binding fields (validateDeviceBindingParameters).
TEST(DynamicResourcesBindingTest, SliceBindingFieldsAreValidated) {
  auto slice = [](const std::string& fields) {
    return dra::ParseResourceSlice(
        *Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
             "spec: {driver: d, allNodes: true, pool: {name: p}, devices: [{name: g0, " +
             fields + "}]}\n"));
  };
  auto ok = slice("bindsToNode: true, bindingConditions: [a], bindingFailureConditions: [b]");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->devices[0].binds_to_node);
  EXPECT_EQ(ok->devices[0].binding_conditions, std::vector<std::string>{"a"});
  EXPECT_EQ(ok->devices[0].binding_failure_conditions, std::vector<std::string>{"b"});
  EXPECT_EQ(
      slice("bindingConditions: [a, b, c, d, e], bindingFailureConditions: [f]").status().message(),
      "ResourceSlice s: spec.devices[0].bindingConditions: Too many: 5: must have at most 4 "
      "items");
  EXPECT_EQ(slice("bindingConditions: [a]").status().message(),
            "ResourceSlice s: spec.devices[0].bindingFailureConditions: Invalid value: []: "
            "bindingFailureConditions are required to use bindingConditions");
  EXPECT_EQ(slice("bindingConditions: [a], bindingFailureConditions: [a]").status().message(),
            "ResourceSlice s: spec.devices[0].bindingFailureConditions[0]: Invalid value: \"a\": "
            "bindingFailureConditions must not overlap with bindingConditions");
  EXPECT_EQ(slice("bindingConditions: [a, a], bindingFailureConditions: [b]").status().message(),
            "ResourceSlice s: spec.devices[0].bindingConditions[1]: Duplicate value: \"a\"");
  const std::string bad_name =
      std::string(slice("bindingConditions: [\"no spaces\"], bindingFailureConditions: [b]")
                      .status()
                      .message());
  EXPECT_EQ(bad_name.rfind("ResourceSlice s: spec.devices[0].bindingConditions[0]: Invalid value: "
                           "\"no spaces\": name part ",
                           0),
            0u)
      << bad_name;
  EXPECT_EQ(slice("bindsToNode: yes").status().message(),
            "ResourceSlice s: spec.devices[0].bindsToNode: Invalid value: must be a boolean");
}

}  // namespace
}  // namespace phalanx::plugins::dynamicresources
