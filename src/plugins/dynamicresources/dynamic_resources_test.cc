// DynamicResources' extension points on a fake handle: the allocation made in Reserve is an
// allocation in flight (devices taken for the next pod) until Unreserve reverts it; the
// PreEnqueue / PreFilter reasons. (PreBind's status write: src/sim/dra_test.cc.)
#include "plugins/dynamicresources/dynamic_resources.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>

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

// KEP-5729: a claim generated for the pod's PodGroup must be owned by it; it is reserved for
// the PodGroup once (the second member writes nothing), and Unreserve of the member that
// wrote the reservation takes it back and deallocates.
TEST(DynamicResourcesTest, PodGroupClaimIsReservedForThePodGroup) {
  dra::DefaultDRAManager m;
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
  auto owned_by = [&](const std::string& kind, const std::string& name) {
    auto c = Obj(claim);
    auto copy = std::make_shared<api::Unstructured>(*c);
    copy->metadata.owner_references.push_back(
        api::OwnerReference{"v1", kind, name, "uid-" + name, true});
    return copy;
  };
  auto member = [](const std::string& name) {
    auto p = std::make_shared<api::Pod>();
    p->metadata.name = name;
    p->metadata.namespace_ = "ns";
    p->metadata.uid = "uid-" + name;
    p->spec.scheduling_group_pod_group_name = "train";
    p->spec.resource_claims.push_back(api::PodResourceClaim{"gpu", "", "tmpl"});
    return framework::PodInfo::Make(p);
  };
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

}  // namespace
}  // namespace phalanx::plugins::dynamicresources
