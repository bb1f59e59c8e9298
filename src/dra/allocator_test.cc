// The resource.k8s.io object parsers (model.h) and the structured allocator (allocator.h).
#include "dra/allocator.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <random>
#include <string>

#include "dra/dra_manager.h"
#include "dra/model.h"

namespace phalanx::dra {
namespace {

api::Unstructured Obj(const std::string& yaml) {
  YAML::Node doc = YAML::Load(yaml);
  api::Unstructured u;
  u.api_version = doc["apiVersion"].Scalar();
  u.kind = doc["kind"].Scalar();
  u.metadata.name = doc["metadata"]["name"].Scalar();
  if (doc["metadata"]["namespace"]) u.metadata.namespace_ = doc["metadata"]["namespace"].Scalar();
  u.metadata.uid = "uid-" + u.metadata.name;
  u.object = std::make_shared<const YAML::Node>(doc);
  return u;
}

std::string ClaimErr(const std::string& spec) {
  auto c =
      ParseResourceClaim(Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                             "metadata: {name: c, namespace: ns}\n" +
                             spec));
  return c.ok() ? "" : std::string(c.status().message());
}

TEST(DraModelTest, ClaimErrorsNameTheObjectAndTheField) {
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, "
                     "count: 0}}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.count: Invalid value: 0: must "
            "be greater than zero");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, "
                     "allocationMode: Some}}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.allocationMode: Unsupported "
            "value: \"Some\": supported values: \"All\", \"ExactCount\"");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {count: 1}}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.deviceClassName: Required value");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g}}], "
                     "constraints: [{requests: [x], matchAttribute: a.com/b}]}}"),
            "ResourceClaim ns/c: spec.devices.constraints[0].requests[0]: Invalid value: \"x\": "
            "must be the name of a request in the claim");
  // A selector outside the CEL subset: the error names the claim, the field and the column.
  const std::string cel = ClaimErr(
      "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, selectors: "
      "[{cel: {expression: 'device.driver.indexOf(\"x\") == 0'}}]}}]}}");
  EXPECT_EQ(cel.rfind("ResourceClaim ns/c: spec.devices.requests[0].exactly.selectors[0].cel."
                      "expression: column ",
                      0),
            0u)
      << cel;
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g}}]}}\n"
                     "status: {reservedFor: [{resource: pods, name: p, uid: u}]}"),
            "ResourceClaim ns/c: status.reservedFor: Forbidden: may not be specified when "
            "`allocated` is not set");
}

TEST(DraModelTest, SliceErrorsNameTheObjectAndTheField) {
  auto bad_quantity = ParseResourceSlice(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: d\n  nodeName: n\n  pool: {name: p}\n"
          "  devices: [{name: g, capacity: {memory: {value: 12XB}}}]\n"));
  ASSERT_FALSE(bad_quantity.ok());
  EXPECT_EQ(
      std::string(bad_quantity.status().message())
          .rfind("ResourceSlice s: spec.devices[0].capacity[\"memory\"].value: Invalid value: "
                 "\"12XB\": ",
                 0),
      0u)
      << bad_quantity.status();
  auto two_sources = ParseResourceSlice(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: d\n  nodeName: n\n  allNodes: true\n  pool: {name: p}\n"));
  EXPECT_EQ(two_sources.status().message(),
            "ResourceSlice s: spec: Invalid value: exactly one of `nodeName`, `nodeSelector`, "
            "`allNodes`, `perDeviceNodeSelection` is required");
  auto attr = ParseResourceSlice(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: d\n  nodeName: n\n  pool: {name: p}\n"
          "  devices: [{name: g, attributes: {x: {int: 1, string: a}}}]\n"));
  EXPECT_EQ(attr.status().message(),
            "ResourceSlice s: spec.devices[0].attributes[\"x\"]: Invalid value: exactly one "
            "value must be specified");
  auto counter = ParseResourceSlice(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: d\n  nodeName: n\n  pool: {name: p}\n"
          "  devices: [{name: g, consumesCounters: [{counterSet: nope, counters: {m: {value: "
          "1}}}]}]\n"));
  // The counter set may be in another slice of the pool: checked per pool by the allocator.
  EXPECT_TRUE(counter.ok()) << counter.status();
  auto slice_err = [](const std::string& spec) {
    auto s = ParseResourceSlice(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
            "  driver: d\n  pool: {name: p}\n" +
            spec));
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  EXPECT_EQ(slice_err("  nodeName: n\n  sharedCounters: [{name: c, counters: {m: {value: 1}}}]\n"
                      "  devices: [{name: g}]\n"),
            "ResourceSlice s: spec.sharedCounters: Forbidden: only one of `devices` and "
            "`sharedCounters` can be set in a ResourceSlice (publish the counter sets in a slice "
            "of their own in the pool)");
  EXPECT_EQ(slice_err("  nodeName: n\n  sharedCounters: [{name: c, counters: {m: {value: 1}}}, "
                      "{name: c, counters: {m: {value: 2}}}]\n"),
            "ResourceSlice s: spec.sharedCounters[1].name: Duplicate value: \"c\"");
  EXPECT_EQ(slice_err("  nodeName: n\n  devices: [{name: g, nodeName: n}]\n"),
            "ResourceSlice s: spec.devices[0].nodeName: Forbidden: must only be set if "
            "`spec.perDeviceNodeSelection` is true");
  EXPECT_EQ(slice_err("  perDeviceNodeSelection: true\n  devices: [{name: g}]\n"),
            "ResourceSlice s: spec.devices[0]: Invalid value: exactly one of `nodeName`, "
            "`nodeSelector`, `allNodes` is required when `spec.perDeviceNodeSelection` is true");
  EXPECT_EQ(slice_err("  perDeviceNodeSelection: true\n  devices: [{name: g, nodeName: n, "
                      "allNodes: true}]\n"),
            "ResourceSlice s: spec.devices[0]: Invalid value: exactly one of `nodeName`, "
            "`nodeSelector`, `allNodes` is required when `spec.perDeviceNodeSelection` is true");
  EXPECT_EQ(slice_err("  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: a, "
                      "operator: Exists}]}, {matchExpressions: [{key: b, operator: Exists}]}]}\n"),
            "ResourceSlice s: spec.nodeSelector.nodeSelectorTerms: Invalid value: must have "
            "exactly one node selector term");
  EXPECT_EQ(slice_err("  perDeviceNodeSelection: true\n  devices: [{name: g, nodeName: n}, "
                      "{name: h, allNodes: true}, {name: i, nodeSelector: {nodeSelectorTerms: "
                      "[{matchExpressions: [{key: a, operator: Exists}]}]}}]\n"),
            "");
}

TEST(DraModelTest, GeneratedClaimNameFollowsTheController) {
  EXPECT_EQ(GeneratedClaimName("trainer", "gpus", "x7k2q"), "trainer-gpus-x7k2q");
  // Longer than 57: both parts cut in proportion, no trailing hyphen (controller.go).
  const std::string pod(50, 'p'), claim(20, 'c');
  const std::string name = GeneratedClaimName(pod, claim, "bcdfg");
  // generateName is 72 long: 50*57/72 = 39, 20*57/72 = 15.
  EXPECT_EQ(name, std::string(39, 'p') + "-" + std::string(15, 'c') + "bcdfg");
}

// A small cluster: one node-local slice per node plus the classes.
class AllocatorTest : public ::testing::Test {
 protected:
  // The node's slice in pool <node>; `slices` is the pool's resourceSliceCount.
  void Slice(const std::string& node, const std::string& devices, const std::string& extra = "",
             int slices = 1) {
    auto s = ParseResourceSlice(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
            "metadata: {name: " +
            node +
            "}\nspec:\n  driver: gpu.x.com\n"
            "  nodeName: " +
            node + "\n  pool: {name: " + node + ", resourceSliceCount: " + std::to_string(slices) +
            "}\n" + extra + "  devices: " + devices + "\n"));
    ASSERT_TRUE(s.ok()) << s.status();
    slices_.push_back(std::make_shared<const ResourceSlice>(std::move(*s)));
  }
  // Any slice: `name` and its spec (YAML, indented by two).
  void AddSlice(const std::string& name, const std::string& spec) {
    auto s = ParseResourceSlice(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + name +
            "}\nspec:\n" + spec));
    ASSERT_TRUE(s.ok()) << s.status();
    slices_.push_back(std::make_shared<const ResourceSlice>(std::move(*s)));
  }
  ResourceClaimPtr Claim(const std::string& name, const std::string& devices) {
    auto c =
        ParseResourceClaim(Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                               "metadata: {name: " +
                               name +
                               ", namespace: ns}\n"
                               "spec: {devices: " +
                               devices + "}\n"));
    EXPECT_TRUE(c.ok()) << c.status();
    return std::make_shared<const ResourceClaim>(std::move(*c));
  }
  AllocationOutcome Run(std::vector<ResourceClaimPtr> claims, const std::string& node,
                        std::set<DeviceId> in_use = {}) {
    AllocatorInput in;
    in.claims = std::move(claims);
    in.classes = &classes_;
    in.slices = slices_;
    in.in_use = std::move(in_use);
    auto a = Allocator::New(std::move(in));
    EXPECT_TRUE(a.ok()) << a.status();
    api::Node n;
    n.metadata.name = node;
    auto r = a->Allocate(n);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : AllocationOutcome{};
  }
  static std::string Devices(const AllocationResult& r) {
    std::string out;
    for (const auto& d : r.devices) out += (out.empty() ? "" : ",") + d.request + "=" + d.device;
    return out;
  }
  void SetUp() override {
    DeviceClass gpu;
    gpu.name = "gpu";
    classes_["gpu"] = gpu;
  }
  std::map<std::string, DeviceClass> classes_;
  std::vector<ResourceSlicePtr> slices_;
};

TEST_F(AllocatorTest, MatchAttributeBacktracksOverDeviceChoices) {
  // First fit would take g0 (numa 0) and then find no second numa-0 device; the search
  // moves on to g1+g2 (numa 1).
  Slice("n1",
        "[{name: g0, attributes: {numa: {int: 0}}}, {name: g1, attributes: {numa: {int: 1}}},"
        " {name: g2, attributes: {numa: {int: 1}}}]");
  auto r = Run({Claim("c",
                      "{requests: [{name: r, exactly: {deviceClassName: gpu, count: 2}}], "
                      "constraints: [{matchAttribute: gpu.x.com/numa}]}")},
               "n1");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(Devices(r.results[0]), "r=g1,r=g2");
  ASSERT_TRUE(r.results[0].node_selector.has_value());
  EXPECT_EQ(r.results[0].node_selector->node_selector_terms[0].match_fields[0].values[0], "n1");
}

TEST_F(AllocatorTest, FirstAvailableTakesTheFirstSubrequestThatFits) {
  Slice("n1", "[{name: small, capacity: {memory: {value: 40Gi}}}]");
  const std::string req =
      "{requests: [{name: r, firstAvailable: ["
      "{name: big, deviceClassName: gpu, selectors: [{cel: {expression: "
      "\"device.capacity['gpu.x.com']"
      ".memory.compareTo(quantity('80Gi')) >= 0\"}}]},"
      "{name: any, deviceClassName: gpu}]}]}";
  auto r = Run({Claim("c", req)}, "n1");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(Devices(r.results[0]), "r/any=small");
}

TEST_F(AllocatorTest, AllocationModeAllNeedsEveryMatchingDeviceFree) {
  Slice("n1", "[{name: g0}, {name: g1}]");
  const std::string all =
      "{requests: [{name: r, exactly: {deviceClassName: gpu, allocationMode: All}}]}";
  auto r = Run({Claim("c", all)}, "n1");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(Devices(r.results[0]), "r=g0,r=g1");
  auto used = Run({Claim("c", all)}, "n1", {DeviceId{"gpu.x.com", "n1", "g1"}});
  EXPECT_FALSE(used.ok);
  EXPECT_EQ(used.failed_claim, "ns/c");
  // No device on another node.
  EXPECT_FALSE(Run({Claim("c", all)}, "n2").ok);
}

TEST_F(AllocatorTest, DevicesInUseAreSkippedUnlessAdminAccess) {
  Slice("n1", "[{name: g0}]");
  std::set<DeviceId> used = {DeviceId{"gpu.x.com", "n1", "g0"}};
  EXPECT_FALSE(
      Run({Claim("c", "{requests: [{name: r, exactly: {deviceClassName: gpu}}]}")}, "n1", used).ok);
  auto admin = Run({Claim("c",
                          "{requests: [{name: r, exactly: {deviceClassName: gpu, "
                          "adminAccess: true}}]}")},
                   "n1", used);
  ASSERT_TRUE(admin.ok);
  EXPECT_TRUE(admin.results[0].devices[0].admin_access);
}

TEST_F(AllocatorTest, TwoClaimsOfOnePodNeverShareADevice) {
  Slice("n1", "[{name: g0}, {name: g1}]");
  const std::string one = "{requests: [{name: r, exactly: {deviceClassName: gpu}}]}";
  auto r = Run({Claim("a", one), Claim("b", one)}, "n1");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(Devices(r.results[0]), "r=g0");
  EXPECT_EQ(Devices(r.results[1]), "r=g1");
  auto three = Run({Claim("a", one), Claim("b", one), Claim("c", one)}, "n1");
  EXPECT_FALSE(three.ok);
  EXPECT_EQ(three.failed_claim, "");  // each fits alone, not all together
}

TEST_F(AllocatorTest, PartitionsShareTheirCounters) {
  // One 80Gi GPU sold as a whole device or as two 40Gi partitions (KEP-4815), the counter
  // set in a slice of its own as 1.36 drivers publish it.
  AddSlice("n1-counters",
           "  driver: gpu.x.com\n  nodeName: n1\n  pool: {name: n1, resourceSliceCount: 2}\n"
           "  sharedCounters: [{name: gpu0, counters: {memory: {value: 80Gi}}}]\n");
  Slice(
      "n1",
      "[{name: whole, consumesCounters: [{counterSet: gpu0, counters: {memory: {value: 80Gi}}}]},"
      " {name: half-0, consumesCounters: [{counterSet: gpu0, counters: {memory: {value: 40Gi}}}]},"
      " {name: half-1, consumesCounters: [{counterSet: gpu0, counters: {memory: {value: 40Gi}}}]}]",
      "", 2);
  const std::string one = "{requests: [{name: r, exactly: {deviceClassName: gpu}}]}";
  auto r = Run({Claim("a", one), Claim("b", one)}, "n1");
  ASSERT_TRUE(r.ok);  // whole + a half would need 120Gi: the search takes the two halves
  EXPECT_EQ(Devices(r.results[0]) + " " + Devices(r.results[1]), "r=half-0 r=half-1");
  EXPECT_FALSE(Run({Claim("a", one)}, "n1", {DeviceId{"gpu.x.com", "n1", "whole"}}).ok);
}

TEST_F(AllocatorTest, CelRuntimeErrorAbortsWithTheClaimNamed) {
  Slice("n1", "[{name: g0}]");
  AllocatorInput in;
  in.claims = {Claim("c",
                     "{requests: [{name: r, exactly: {deviceClassName: gpu, selectors: "
                     "[{cel: {expression: \"device.attributes['gpu.x.com'].model == 'x'\"}}]}}]}")};
  in.classes = &classes_;
  in.slices = slices_;
  auto a = Allocator::New(std::move(in));
  ASSERT_TRUE(a.ok());
  api::Node n;
  n.metadata.name = "n1";
  auto r = a->Allocate(n);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "claim ns/c: selector #0: CEL runtime error: no such key: model");
}

// ---- Device taints and tolerations (KEP-5055) ----
// The cases of upstream's structured allocator tests (k8s.io/dynamic-resource-allocation/
// structured/internal/allocatortesting allocator_testing.go, "tainted-*"), on this model.

TEST(DraTaintTest, ToleratesTaintAsUpstream) {
  const DeviceTaint taint{"example.com/taint", "bad", "NoSchedule", ""};
  auto tol = [](std::string key, std::string op, std::string value, std::string effect) {
    DeviceToleration t;
    t.key = std::move(key);
    t.op = std::move(op);
    t.value = std::move(value);
    t.effect = std::move(effect);
    return t;
  };
  EXPECT_TRUE(ToleratesTaint(tol("example.com/taint", "Equal", "bad", "NoSchedule"), taint));
  EXPECT_TRUE(ToleratesTaint(tol("example.com/taint", "Equal", "bad", ""), taint));
  EXPECT_TRUE(ToleratesTaint(tol("example.com/taint", "Exists", "", ""), taint));
  EXPECT_TRUE(ToleratesTaint(tol("", "Exists", "", ""), taint));  // tolerates everything
  EXPECT_FALSE(ToleratesTaint(tol("example.com/taint", "Equal", "good", "NoSchedule"), taint));
  EXPECT_FALSE(ToleratesTaint(tol("example.com/taint", "Equal", "bad", "NoExecute"), taint));
  EXPECT_FALSE(ToleratesTaint(tol("example.com/other", "Exists", "", ""), taint));
  EXPECT_FALSE(ToleratesTaint(tol("", "Exists", "", "NoExecute"), taint));
  // Every NoSchedule / NoExecute taint needs its own toleration; None needs none.
  const std::vector<DeviceTaint> two = {taint, {"example.com/taint", "bad", "NoExecute", ""}};
  EXPECT_FALSE(AllTaintsTolerated(two, {tol("example.com/taint", "Equal", "bad", "NoExecute")}));
  EXPECT_TRUE(AllTaintsTolerated(two, {tol("example.com/taint", "Equal", "bad", "NoExecute"),
                                       tol("example.com/taint", "Equal", "bad", "NoSchedule")}));
  EXPECT_TRUE(AllTaintsTolerated({{"example.com/info", "", "None", ""}}, {}));
  EXPECT_TRUE(AllTaintsTolerated({}, {}));
}

constexpr char kTwoTainted[] =
    "[{name: g0, taints: [{key: example.com/taint, value: bad, effect: NoSchedule}]},"
    " {name: g1, taints: [{key: example.com/taint, value: bad, effect: NoSchedule}]}]";
constexpr char kToleration[] =
    "tolerations: [{key: example.com/taint, operator: Equal, value: bad, effect: NoSchedule}]";

TEST_F(AllocatorTest, TaintedDevicesAreNotAllocated) {
  Slice("n1", kTwoTainted);
  // tainted-two-devices: no toleration, no allocation.
  auto r = Run({Claim("c", "{requests: [{name: r, exactly: {deviceClassName: gpu}}]}")}, "n1");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failed_claim, "ns/c");
  // tainted-two-devices-tolerated.
  auto ok = Run({Claim("c", std::string("{requests: [{name: r, exactly: {deviceClassName: gpu, ") +
                                kToleration + "}}]}")},
                "n1");
  ASSERT_TRUE(ok.ok);
  EXPECT_EQ(Devices(ok.results[0]), "r=g0");
}

TEST_F(AllocatorTest, EveryTaintOfADeviceMustBeTolerated) {
  // tainted-one-device-two-taints / -both-tolerated.
  Slice("n1",
        "[{name: g0, taints: [{key: example.com/taint, value: bad, effect: NoSchedule},"
        " {key: example.com/taint, value: bad, effect: NoExecute}]}]");
  auto one = Run({Claim("c",
                        "{requests: [{name: r, exactly: {deviceClassName: gpu, tolerations: "
                        "[{key: example.com/taint, value: bad, effect: NoExecute}]}}]}")},
                 "n1");
  EXPECT_FALSE(one.ok);  // a NoExecute toleration does not imply NoSchedule
  auto both = Run({Claim("c",
                         "{requests: [{name: r, exactly: {deviceClassName: gpu, tolerations: "
                         "[{key: example.com/taint, value: bad, effect: NoExecute},"
                         " {key: example.com/taint, value: bad, effect: NoSchedule}]}}]}")},
                  "n1");
  EXPECT_TRUE(both.ok);
  // An untainted device is taken when the tainted one is not tolerated.
  Slice("n1b", "[{name: t, taints: [{key: k, effect: NoSchedule}]}, {name: clean}]");
  auto clean = Run({Claim("c", "{requests: [{name: r, exactly: {deviceClassName: gpu}}]}")}, "n1b");
  ASSERT_TRUE(clean.ok);
  EXPECT_EQ(Devices(clean.results[0]), "r=clean");
  // effect None is informational (1.35+): no toleration needed.
  Slice("n1c", "[{name: info, taints: [{key: k, effect: None}]}]");
  EXPECT_TRUE(
      Run({Claim("c", "{requests: [{name: r, exactly: {deviceClassName: gpu}}]}")}, "n1c").ok);
}

TEST_F(AllocatorTest, TaintsWithFirstAvailableAdminAccessAndAll) {
  Slice("n1", kTwoTainted);
  // tainted-prioritized-list: the first subrequest does not tolerate, the second does.
  auto pl = Run({Claim("c", std::string("{requests: [{name: r, firstAvailable: ["
                                        "{name: plain, deviceClassName: gpu},"
                                        "{name: tolerant, deviceClassName: gpu, ") +
                                kToleration + "}]}]}")},
                "n1");
  ASSERT_TRUE(pl.ok);
  EXPECT_EQ(Devices(pl.results[0]), "r/tolerant=g0");
  // tainted-admin-access: admin access does not bypass taints.
  EXPECT_FALSE(Run({Claim("c",
                          "{requests: [{name: r, exactly: {deviceClassName: gpu, "
                          "adminAccess: true}}]}")},
                   "n1")
                   .ok);
  EXPECT_TRUE(Run({Claim("c", std::string("{requests: [{name: r, exactly: {deviceClassName: gpu, "
                                          "adminAccess: true, ") +
                                  kToleration + "}}]}")},
                  "n1")
                  .ok);
  // tainted-all-devices-single: All needs every matching device, tainted ones included.
  Slice("n2",
        "[{name: clean}, {name: t, taints: [{key: example.com/taint, value: bad, "
        "effect: NoSchedule}]}]");
  const std::string all =
      "{requests: [{name: r, exactly: {deviceClassName: gpu, allocationMode: All";
  EXPECT_FALSE(Run({Claim("c", all + "}}]}")}, "n2").ok);
  auto tolerated = Run({Claim("c", all + ", " + kToleration + "}}]}")}, "n2");
  ASSERT_TRUE(tolerated.ok);
  EXPECT_EQ(Devices(tolerated.results[0]), "r=clean,r=t");
}

TEST(DraTaintTest, ParseErrorsNameTheObjectAndTheField) {
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, "
                     "tolerations: [{key: k, operator: Maybe}]}}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.tolerations[0].operator: "
            "Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\"");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, "
                     "tolerations: [{value: v}]}}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.tolerations[0].operator: "
            "Invalid value: \"Equal\": value must be Exists when `key` is empty, which means "
            "\"match all values and all keys\"");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, "
                     "tolerations: [{key: k, operator: Exists, value: v}]}}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.tolerations[0].operator: "
            "Invalid value: \"v\": value must be empty when `operator` is 'Exists'");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, firstAvailable: [{name: s, "
                     "deviceClassName: g, tolerations: [{key: k, effect: PreferNoSchedule}]}]}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].firstAvailable[0].tolerations[0].effect: "
            "Unsupported value: \"PreferNoSchedule\": supported values: \"NoExecute\", "
            "\"NoSchedule\", \"None\"");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, "
                     "tolerations: [{key: k, tolerationSeconds: soon}]}}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.tolerations[0]."
            "tolerationSeconds: Invalid value: \"soon\": must be an integer");
  auto no_effect = ParseResourceSlice(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: d\n  nodeName: n\n  pool: {name: p}\n"
          "  devices: [{name: g, taints: [{key: k}]}]\n"));
  EXPECT_EQ(no_effect.status().message(),
            "ResourceSlice s: spec.devices[0].taints[0].effect: Required value: supported "
            "values: \"NoExecute\", \"NoSchedule\", \"None\"");
  auto no_key = ParseResourceSlice(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: d\n  nodeName: n\n  pool: {name: p}\n"
          "  devices: [{name: g, taints: [{effect: NoSchedule}]}]\n"));
  EXPECT_EQ(no_key.status().message(),
            "ResourceSlice s: spec.devices[0].taints[0].key: Required value");
  auto rule = ParseDeviceTaintRule(
      Obj("apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
          "spec: {deviceSelector: {driver: d}}\n"));
  EXPECT_EQ(rule.status().message(), "DeviceTaintRule r: spec.taint: Required value");
  auto old = ParseDeviceTaintRule(
      Obj("apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
          "spec: {deviceSelector: {deviceClassName: gpu}, taint: {key: k, effect: NoSchedule}}\n"));
  EXPECT_EQ(old.status().message(),
            "DeviceTaintRule r: spec.deviceSelector.deviceClassName: Forbidden: removed from "
            "DeviceTaintSelector upstream (1.35); select devices by driver, pool and device");
}

TEST(DraTaintTest, DeviceTaintRulesTaintTheDevicesTheySelect) {
  DefaultDRAManager m;
  auto add = [&](const std::string& yaml) {
    ASSERT_TRUE(m.OnObjectAdd(std::make_shared<const api::Unstructured>(Obj(yaml))));
  };
  add("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s1}\nspec:\n"
      "  driver: gpu.x.com\n  nodeName: n1\n  pool: {name: n1}\n"
      "  devices: [{name: g0}, {name: g1, taints: [{key: own, effect: NoExecute}]}]\n");
  ASSERT_EQ(m.Slices().size(), 1u);
  EXPECT_TRUE(m.Slices()[0]->devices[0].taints.empty());
  add("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: broken-g1}\n"
      "spec: {deviceSelector: {driver: gpu.x.com, pool: n1, device: g1},\n"
      "       taint: {key: example.com/broken, value: 'true', effect: NoSchedule}}\n");
  add("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: none}\n"
      "spec: {taint: {key: k, effect: NoSchedule}}\n");  // no selector: no device
  auto slices = m.Slices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_TRUE(slices[0]->devices[0].taints.empty());
  ASSERT_EQ(slices[0]->devices[1].taints.size(), 2u);  // cumulative: own, then the rule's
  EXPECT_EQ(slices[0]->devices[1].taints[1].key, "example.com/broken");
  // An empty selector matches every device.
  add("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: all}\n"
      "spec: {deviceSelector: {}, taint: {key: maintenance, effect: NoSchedule}}\n");
  EXPECT_EQ(m.Slices()[0]->devices[0].taints.size(), 1u);
  // Deleting the rules removes their taints.
  for (const char* name : {"broken-g1", "all", "none"}) {
    m.OnObjectDelete(std::make_shared<const api::Unstructured>(
        Obj(std::string("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\n"
                        "metadata: {name: ") +
            name + "}\n")));
  }
  EXPECT_TRUE(m.Slices()[0]->devices[0].taints.empty());
  EXPECT_EQ(m.Slices()[0]->devices[1].taints.size(), 1u);
  EXPECT_EQ(m.TaintRules().size(), 0u);
}

// The caches (SliceIndex, InUseIndex, SelectorMemo shared across attempts) against a plain
// recomputation from the slices and a std::set of devices in use, on random clusters,
// claims and allocations: same outcome (ok, devices, node selectors, failed claim, steps).
TEST_F(AllocatorTest, FastPathMatchesRecomputationOnRandomStates) {
  std::mt19937 rng(19);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  auto memo = std::make_shared<SelectorMemo>();
  const char* kSelectors[] = {
      "device.attributes['gpu.x.com'].numa == 1",
      "device.capacity['gpu.x.com'].memory.compareTo(quantity('60Gi')) >= 0",
      "device.attributes['gpu.x.com'].model == 'a100'",  // runtime error where absent
      "device.driver == 'gpu.x.com'"};
  int compared = 0, allocated = 0, shares = 0;
  for (int round = 0; round < 60; ++round) {
    slices_.clear();
    for (int n = 0; n < 3; ++n) {
      std::string devs = "[";
      const int count = 1 + pick(4);
      for (int g = 0; g < count; ++g) {
        // Now and then a shared device (allowMultipleAllocations) with a requestPolicy.
        const bool multi = pick(4) == 0;
        devs +=
            std::string(g ? ", " : "") + "{name: g" + std::to_string(g) +
            ", attributes: {numa: {int: " + std::to_string(pick(2)) + "}" +
            (pick(3) ? ", model: {string: " + std::string(pick(2) ? "a100" : "h100") + "}" : "") +
            "}, capacity: {memory: {value: " + std::to_string(40 * (1 + pick(2))) + "Gi" +
            (multi ? ", requestPolicy: {default: 20Gi, validRange: {min: 10Gi, step: 10Gi}}}}, "
                     "allowMultipleAllocations: true"
                   : "}}") +
            (pick(4) == 0 ? ", consumesCounters: [{counterSet: s, counters: {mem: {value: 40Gi}}}]"
                          : "") +
            "}";
      }
      // The pool's counters in a slice of their own (1.36's split shape); now and then the
      // counter slice is missing, so the pool is incomplete.
      const std::string node = "n" + std::to_string(n);
      if (pick(6)) {
        AddSlice(node + "-counters", "  driver: gpu.x.com\n  nodeName: " + node +
                                         "\n  pool: {name: " + node +
                                         ", resourceSliceCount: 2}\n"
                                         "  sharedCounters: [{name: s, counters: {mem: {value: "
                                         "80Gi}}}]\n");
      }
      Slice(node, devs + "]", "", 2);
    }
    std::vector<ResourceClaimPtr> claims;
    const int nclaims = 1 + pick(2);
    for (int c = 0; c < nclaims; ++c) {
      std::string sel;
      if (pick(2)) {
        sel = std::string(", selectors: [{cel: {expression: \"") + kSelectors[pick(4)] + "\"}}]";
      }
      std::string mode =
          pick(5) == 0 ? ", allocationMode: All" : ", count: " + std::to_string(1 + pick(2));
      std::string cons = pick(3) == 0   ? ", constraints: [{matchAttribute: gpu.x.com/numa}]"
                         : pick(6) == 0 ? ", constraints: [{distinctAttribute: gpu.x.com/numa}]"
                                        : "";
      if (pick(3) == 0)
        mode += ", capacity: {requests: {memory: " + std::to_string(10 * (1 + pick(4))) + "Gi}}";
      claims.push_back(
          Claim("c" + std::to_string(c), "{requests: [{name: r, exactly: {deviceClassName: gpu" +
                                             mode + sel + "}}]" + cons + "}"));
    }
    std::set<DeviceId> used;
    std::map<DeviceId, std::map<std::string, api::Quantity>> shared;
    auto index = std::make_shared<InUseIndex>();
    for (const auto& s : slices_) {
      for (const auto& d : s->devices) {
        if (d.view.allow_multiple_allocations) {
          // Shares of 10Gi or 20Gi already allocated.
          for (int k = pick(3); k > 0; --k) {
            const DeviceId id{s->driver, s->pool, d.name};
            const std::map<std::string, api::Quantity> one = {
                {"memory", *api::Quantity::Parse(pick(2) ? "10Gi" : "20Gi")}};
            auto& sum = shared[id]["memory"];
            sum = sum.Plus(one.at("memory"));
            index->AddShare(id, one, +1);
          }
          continue;
        }
        if (pick(3) == 0) {
          used.insert(DeviceId{s->driver, s->pool, d.name});
          index->Add(DeviceId{s->driver, s->pool, d.name}, +1);
        }
      }
    }
    ASSERT_EQ(index->ToSet(), used);
    for (int n = 0; n < 3; ++n) {
      api::Node node;
      node.metadata.name = "n" + std::to_string(n);
      AllocatorInput plain;
      plain.claims = claims;
      plain.classes = &classes_;
      plain.slices = slices_;
      plain.in_use = used;
      plain.shared = shared;
      AllocatorInput fast;
      fast.claims = claims;
      fast.classes = &classes_;
      fast.slice_index = SliceIndex::Build(slices_);
      fast.in_use_index = index;
      fast.memo = memo;
      auto a = Allocator::New(std::move(plain));
      auto b = Allocator::New(std::move(fast));
      ASSERT_TRUE(a.ok() && b.ok());
      for (int twice = 0; twice < 2; ++twice) {  // the second time from a warm memo
        auto ra = a->Allocate(node);
        auto rb = b->Allocate(node);
        ASSERT_EQ(ra.ok(), rb.ok()) << round;
        if (!ra.ok()) {
          EXPECT_EQ(ra.status().message(), rb.status().message());
          continue;
        }
        EXPECT_EQ(ra->ok, rb->ok) << round;
        EXPECT_EQ(ra->failed_claim, rb->failed_claim);
        EXPECT_EQ(ra->steps, rb->steps);
        EXPECT_EQ(ra->results, rb->results);
        allocated += ra->ok;
        ++compared;
        for (const auto& res : ra->results) {
          for (const auto& d : res.devices) shares += !d.share_id.empty();
        }
      }
    }
  }
  // The random states cover both outcomes, shares, and the memo was used.
  EXPECT_GT(shares, 10);
  EXPECT_GT(allocated, 20);
  EXPECT_LT(allocated, compared);
  EXPECT_GT(memo->size(), 0u);
  slices_.clear();
  memo->Prune();  // only the memo held the slices: every entry goes
  EXPECT_EQ(memo->size(), 0u);
}

// dra::DefaultDRAManager's incremental devices-in-use against the set recomputed from its claims
// (informer claims, allocations in flight, written statuses) after each random event.
TEST(DraManagerTest, IncrementalInUseMatchesRecomputation) {
  std::mt19937 rng(7);
  DefaultDRAManager m;
  std::map<std::string, std::string> informer_dev;  // claim name -> device ("" unallocated)
  std::map<std::string, std::string> pending_dev;   // claim name -> device in flight
  std::map<std::string, std::string> written_dev;
  auto claim_obj = [](const std::string& name, const std::string& dev) {
    std::string y =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
        ", namespace: ns}\nspec: {devices: {requests: [{name: r, exactly: "
        "{deviceClassName: gpu}}]}}\n";
    if (!dev.empty()) {
      y += "status: {allocation: {devices: {results: [{request: r, driver: d, pool: p, device: " +
           dev + "}]}}}\n";
    }
    return std::make_shared<const api::Unstructured>(Obj(y));
  };
  auto claim_with = [&](const std::string& name, const std::string& dev) {
    auto c = ParseResourceClaim(*claim_obj(name, ""));
    EXPECT_TRUE(c.ok());
    if (!dev.empty())
      c->allocation = AllocationResult{{DeviceResult{"r", "d", "p", dev, false}}, {}};
    return *c;
  };
  for (int step = 0; step < 400; ++step) {
    const std::string name = "c" + std::to_string(rng() % 6);
    const std::string dev = rng() % 3 ? "g" + std::to_string(rng() % 4) : "";
    switch (rng() % 5) {
      case 0:
        ASSERT_TRUE(m.OnObjectAdd(claim_obj(name, dev)));
        informer_dev[name] = dev;
        written_dev.erase(name);
        break;
      case 1:
        ASSERT_TRUE(m.OnObjectDelete(claim_obj(name, "")));
        informer_dev.erase(name);
        written_dev.erase(name);
        break;
      case 2:
        m.SignalPendingAllocation(claim_with(name, dev));
        pending_dev[name] = dev;
        break;
      case 3:
        m.RemovePendingAllocation("uid-" + name);
        pending_dev.erase(name);
        break;
      case 4:
        m.AssumeWritten(claim_with(name, dev));
        pending_dev.erase(name);
        if (informer_dev.count(name) && informer_dev[name] == dev) {
          written_dev.erase(name);
        } else {
          written_dev[name] = dev;
        }
        break;
    }
    std::map<std::string, int> want;  // what the plain recomputation counts
    for (const auto& [n, d] : informer_dev) {
      if (pending_dev.count(n)) continue;
      const std::string eff = written_dev.count(n) ? written_dev[n] : d;
      if (!eff.empty()) ++want[eff];
    }
    for (const auto& [n, d] : pending_dev) {
      if (!d.empty()) ++want[d];
    }
    std::set<DeviceId> want_set;
    for (const auto& [d, k] : want) want_set.insert(DeviceId{"d", "p", d});
    ASSERT_EQ(m.InUse()->ToSet(), want_set) << "step " << step;
    ASSERT_EQ(m.AllocatedDevices(), want_set);
    // Leaving one claim out drops its devices unless another claim holds them too.
    std::map<std::string, int> except = want;
    const std::string out = "c0";
    if (!pending_dev.count(out) && informer_dev.count(out)) {
      const std::string eff = written_dev.count(out) ? written_dev[out] : informer_dev[out];
      if (!eff.empty()) --except[eff];
    }
    if (pending_dev.count(out) && !pending_dev[out].empty()) --except[pending_dev[out]];
    std::set<DeviceId> except_set;
    for (const auto& [d, k] : except) {
      if (k > 0) except_set.insert(DeviceId{"d", "p", d});
    }
    ASSERT_EQ(m.AllocatedDevicesExcept({"uid-c0"}), except_set) << "step " << step;
  }
}

}  // namespace
}  // namespace phalanx::dra

namespace phalanx::dra {
namespace {

// ---- Pools (pools_incubating.go) ----

// A ResourceSlice spec in upstream's test vocabulary (allocator_testing.go): `sel` is the
// node selection line ("nodeName: node-1", "perDeviceNodeSelection: true", ...), the pool has
// `count` slices and generation `gen`; `body` holds devices or sharedCounters.
std::string PoolSlice(const std::string& driver, const std::string& sel, const std::string& pool,
                      int count, const std::string& body, int gen = 1) {
  return "  driver: " + driver + "\n  " + sel + "\n  pool: {name: " + pool +
         ", generation: " + std::to_string(gen) + ", resourceSliceCount: " + std::to_string(count) +
         "}\n" + body;
}
// A device consuming `amount` of counter "memory" from `set`, its capacity the same
// (upstream's device(name, fromCounters, nil).withDeviceCounterConsumption(...)); `more` adds
// fields (its node selection).
std::string CountedDevice(const std::string& name, const std::string& set,
                          const std::string& amount, const std::string& more = "") {
  return "{name: " + name + ", capacity: {memory: {value: " + amount +
         "}}, consumesCounters: [{counterSet: " + set + ", counters: {memory: {value: " + amount +
         "}}}]" + more + "}";
}
std::string CounterSet(const std::string& name, const std::string& counter,
                       const std::string& amount) {
  return "  sharedCounters: [{name: " + name + ", counters: {" + counter + ": {value: " + amount +
         "}}}]\n";
}

std::string SelectorString(const std::optional<api::NodeSelector>& sel) {
  if (!sel) return "all nodes";
  std::string out;
  for (const auto& t : sel->node_selector_terms) {
    for (const auto* reqs : {&t.match_fields, &t.match_expressions}) {
      for (const auto& r : *reqs) {
        out += std::string(reqs == &t.match_fields ? "field " : "label ") + r.key + " " + r.op;
        for (const auto& v : r.values) out += " " + v;
        out += ";";
      }
    }
  }
  return out;
}

struct PoolCase {
  std::string name;  // upstream's test case (allocator_testing.go)
  std::vector<std::pair<std::string, std::string>> slices;  // name, spec
  std::vector<std::string> claims;                          // spec.devices of claim-0, ...
  std::set<DeviceId> allocated;
  // Expected, from upstream's table: the results "request=driver/pool/device" sorted (their
  // order is irrelevant upstream) and " @ " the node selector; "" for no allocation.
  std::string want;
  std::string error;   // a substring of the error upstream expects
  std::string reason;  // upstream's ErrFailedAllocationOnNode error ("invalid resource pools")
  // Upstream's allocatedCapacityDevices: capacity consumed by allocated shares.
  std::map<DeviceId, std::map<std::string, std::string>> shared = {};
};

std::map<std::string, DeviceClass> UpstreamClasses() {
  std::map<std::string, DeviceClass> classes;
  // class(...) and classWithAllowMultipleAllocations(...) of allocator_testing.go.
  for (const auto& [cls, expr] :
       {std::pair{"class-a", "device.driver == \"driver-a\""},
        {"class-b", "device.driver == \"driver-b\""},
        {"class-a-multi",
         "device.driver == \"driver-a\" && device.allowMultipleAllocations == true"},
        {"class-a-dedicated",
         "device.driver == \"driver-a\" && device.allowMultipleAllocations == false"}}) {
    auto c = ParseDeviceClass(Obj(std::string("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
                                              "metadata: {name: ") +
                                  cls + "}\nspec: {selectors: [{cel: {expression: '" + expr +
                                  "'}}]}\n"));
    EXPECT_TRUE(c.ok()) << c.status();
    if (c.ok()) classes[cls] = *c;
  }
  return classes;
}

// Runs upstream's cases on node-1 (labels region=region-1, planet=earth). The results of
// every claim, " | " between claims; a share shows "*" and its consumed capacity.
void RunPoolCases(const std::vector<PoolCase>& cases) {
  const std::map<std::string, DeviceClass> classes = UpstreamClasses();
  api::Node node;
  node.metadata.name = "node-1";
  node.metadata.labels = {{"region", "region-1"}, {"planet", "earth"}};
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    AllocatorInput in;
    for (const auto& [name, spec] : tc.slices) {
      auto s =
          ParseResourceSlice(Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                                 "metadata: {name: " +
                                 name + "}\nspec:\n" + spec));
      ASSERT_TRUE(s.ok()) << s.status();
      in.slices.push_back(std::make_shared<const ResourceSlice>(std::move(*s)));
    }
    for (size_t i = 0; i < tc.claims.size(); ++i) {
      auto c = ParseResourceClaim(
          Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
              "metadata: {name: claim-" +
              std::to_string(i) + ", namespace: ns}\nspec: {devices: " + tc.claims[i] + "}\n"));
      ASSERT_TRUE(c.ok()) << c.status();
      in.claims.push_back(std::make_shared<const ResourceClaim>(std::move(*c)));
    }
    in.classes = &classes;
    in.in_use = tc.allocated;
    for (const auto& [id, amounts] : tc.shared) {
      for (const auto& [name, q] : amounts) in.shared[id][name] = *api::Quantity::Parse(q);
    }
    auto alloc = Allocator::New(std::move(in));
    ASSERT_TRUE(alloc.ok()) << alloc.status();
    auto r = alloc->Allocate(node);
    if (!tc.error.empty()) {
      ASSERT_FALSE(r.ok());
      EXPECT_NE(std::string(r.status().message()).find(tc.error), std::string::npos) << r.status();
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->reason, tc.reason);
    std::string got;
    if (r->ok) {
      for (size_t ci = 0; ci < r->results.size(); ++ci) {
        std::vector<std::string> devices;
        for (const auto& d : r->results[ci].devices) {
          std::string one = d.request + "=" + d.driver + "/" + d.pool + "/" + d.device;
          if (!d.share_id.empty()) one += "*";
          if (!d.consumed_capacity.empty()) {
            one += "{";
            for (const auto& [name, q] : d.consumed_capacity) {
              one += name + "=" + std::to_string(q.Value()) + ",";
            }
            one.back() = '}';
          }
          devices.push_back(one);
        }
        std::sort(devices.begin(), devices.end());
        std::string claim;
        for (const auto& d : devices) claim += (claim.empty() ? "" : ",") + d;
        got += (ci ? " | " : "") + claim + " @ " + SelectorString(r->results[ci].node_selector);
      }
    }
    EXPECT_EQ(got, tc.want);
  }
}

std::string Req(const std::string& name, const std::string& cls, int count) {
  return "{name: " + name + ", exactly: {deviceClassName: " + cls +
         ", count: " + std::to_string(count) + "}}";
}

TEST(DraPoolTest, UpstreamPoolCases) {
  const std::string a = "driver-a", b = "driver-b";
  const std::string n1 = "nodeName: node-1", n2 = "nodeName: node-2";
  const std::string per_device = "perDeviceNodeSelection: true";
  auto devs = [](std::vector<std::string> d) {
    std::string out = "  devices: [";
    for (size_t i = 0; i < d.size(); ++i) out += (i ? ", " : "") + d[i];
    return out + "]\n";
  };
  const std::string one = "{requests: [" + Req("req-0", "class-a", 1) + "]}";
  const std::string all =
      "{requests: [{name: req-0, exactly: {deviceClassName: class-a, allocationMode: All}}]}";
  const std::string local1 = " @ field metadata.name In node-1;";
  const std::string sub =
      "{requests: [{name: req-0, firstAvailable: ["
      "{name: subReq-0, deviceClassName: class-a, selectors: [{cel: {expression: "
      "'device.capacity[\"driver-a\"].memory.compareTo(quantity(\"6Gi\")) >= 0'}}]}, "
      "{name: subReq-1, deviceClassName: class-a, selectors: [{cel: {expression: "
      "'device.capacity[\"driver-a\"].memory.compareTo(quantity(\"SMALL\")) >= 0'}}]}]}]}";
  auto sub_with = [&](const std::string& small) {
    std::string s = sub;
    s.replace(s.find("SMALL"), 5, small);
    return s;
  };
  const std::vector<PoolCase> cases = {
      {"all-devices-of-the-incomplete-pool",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))}},
       {all},
       {},
       "",
       "claim ns/claim-0, request req-0: asks for all devices, but resource pool "
       "driver-a/pool-1 is currently being updated"},
      {"allocation-mode-all-with-multi-host-resource-pool",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))},
        {"slice-2", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-2}"}))}},
       {all},
       {},
       "req-0=driver-a/pool-1/device-1" + local1},
      {"multi-host-resource-pool-with-stale-slice-for-current-node",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}), 1)},
        {"slice-2", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-2}"}), 2)}},
       {one},
       {},
       ""},
      {"multi-host-resource-pool-complete-update-from-node-1-to-node-2",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}), 1)},
        {"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-2}"}), 1)},
        {"slice-2", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-1}"}), 2)},
        {"slice-2", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-2}"}), 2)}},
       {one},
       {},
       "req-0=driver-a/pool-1/device-1" + local1},
      {"multi-host-resource-pool-complete-update-from-node-2-to-node-1",
       {{"slice-1", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-1}"}), 1)},
        {"slice-1", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-2}"}), 1)},
        {"slice-2", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}), 2)},
        {"slice-2", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-2}"}), 2)}},
       {one},
       {},
       "req-0=driver-a/pool-1/device-1" + local1},
      {"multi-host-resource-pool-incomplete-update-from-node-1-to-node-2",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}), 1)},
        {"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-2}"}), 1)},
        {"slice-2", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-1}"}), 2)}},
       {one},
       {},
       "req-0=driver-a/pool-1/device-1" + local1},
      {"multi-host-resource-pool-incomplete-update-from-node-2-to-node-1",
       {{"slice-1", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-1}"}), 1)},
        {"slice-1", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-2}"}), 1)},
        {"slice-2", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}), 2)}},
       {one},
       {},
       ""},
      {"duplicate-slice",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))},
        {"slice-1-2", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))}},
       {one},
       {},
       "",
       "",
       "invalid resource pools were encountered"},
      // Upstream's counter sets are empty (counterSet(counterSet1, nil)); API validation wants
      // a counter, so they have one here: the point is the name defined twice.
      {"partitionable-devices-same-counter-set-name-in-different-resource-slices",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 4, devs({"{name: device-1}"}))},
        {"slice-2", PoolSlice(a, n1, "pool-1", 4, CounterSet("counter-set-1", "memory", "1"))},
        {"slice-3", PoolSlice(a, n1, "pool-1", 4, devs({"{name: device-2}"}))},
        {"slice-4", PoolSlice(a, n1, "pool-1", 4, CounterSet("counter-set-1", "memory", "1"))}},
       {one},
       {},
       "",
       "",
       "invalid resource pools were encountered"},
      {"partitionable-devices-device-counter-consumption-references-unknown-counter-set",
       {{"slice-1",
         PoolSlice(a, n1, "pool-1", 2, devs({CountedDevice("device-1", "counter-set-2", "1")}))},
        {"slice-2", PoolSlice(a, n1, "pool-1", 2, CounterSet("counter-set-1", "memory", "1"))}},
       {one},
       {},
       "",
       "",
       "invalid resource pools were encountered"},
      {"partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-"
       "set",
       {{"slice-1",
         PoolSlice(a, n1, "pool-1", 2, devs({CountedDevice("device-1", "counter-set-1", "8Gi")}))},
        {"slice-2",
         PoolSlice(a, n1, "pool-1", 2, CounterSet("counter-set-1", "other-memory", "8Gi"))}},
       {one},
       {},
       "",
       "",
       "invalid resource pools were encountered"},
      {"partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool",
       {{"slice-1",
         PoolSlice(a, n1, "pool-1", 1, devs({CountedDevice("device-1", "counter-set-1", "8Gi")}))},
        {"slice-2", PoolSlice(a, n1, "pool-2", 1, CounterSet("counter-set-1", "memory", "8Gi"))}},
       {one},
       {},
       "",
       "",
       "invalid resource pools were encountered"},
      {"partitionable-devices-devices-on-different-nodes-consume-same-counter-set",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 3, CounterSet("counter-set-1", "memory", "8Gi"))},
        {"slice-2", PoolSlice(a, n1, "pool-1", 3,
                              devs({CountedDevice("device-1", "counter-set-1", "6Gi"),
                                    CountedDevice("device-2", "counter-set-1", "2Gi")}))},
        {"slice-3",
         PoolSlice(a, n2, "pool-1", 3, devs({CountedDevice("device-3", "counter-set-1", "6Gi")}))}},
       {sub_with("2Gi")},
       {DeviceId{a, "pool-1", "device-3"}},
       "req-0/subReq-1=driver-a/pool-1/device-2" + local1},
      {"partitionable-devices-validation-error-on-non-targeting-slice",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 3, CounterSet("counter-set-1", "memory", "8Gi"))},
        {"slice-2",
         PoolSlice(a, n1, "pool-1", 3, devs({CountedDevice("device-1", "counter-set-1", "6Gi")}))},
        {"slice-3",
         PoolSlice(a, n2, "pool-1", 3, devs({CountedDevice("device-3", "counter-set-2", "6Gi")}))}},
       {one},
       {},
       "",
       "",
       "invalid resource pools were encountered"},
      {"different-resourceslices-in-pool-can-target-different-nodes",
       {{"slice-1", PoolSlice(a, n2, "pool-1", 2, devs({"{name: device-1}"}))},
        {"slice-2", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-2}"}))}},
       {one},
       {},
       "req-0=driver-a/pool-1/device-2" + local1},
      {"invalid-pool-is-ok-if-devices-can-be-allocated-from-other",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))},
        {"slice-2", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))},
        {"slice-3", PoolSlice(a, n1, "pool-2", 1, devs({"{name: device-2}"}))}},
       {one},
       {},
       "req-0=driver-a/pool-2/device-2" + local1},
      {"invalid-pool-is-error-if-no-other-device-can-be-allocated",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))},
        {"slice-2", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))},
        {"slice-3", PoolSlice(a, n1, "pool-2", 1, devs({"{name: device-2}"}))}},
       {one},
       {DeviceId{a, "pool-2", "device-2"}},
       "",
       "",
       "invalid resource pools were encountered"},
      {"no-allocation-from-incomplete-pools",
       {{"slice-1", PoolSlice(a, n1, "pool-1", 2, devs({"{name: device-1}"}))}},
       {one},
       {},
       ""},
      {"partitionable-devices-per-device-node-selection-nodename",
       {{"slice-1",
         PoolSlice(
             a, per_device, "pool-1", 2,
             devs({CountedDevice("device-1", "counter-set-1", "4Gi", ", nodeName: node-1"),
                   CountedDevice("device-2", "counter-set-1", "6Gi", ", nodeName: node-2")}))},
        {"slice-2",
         PoolSlice(a, per_device, "pool-1", 2, CounterSet("counter-set-1", "memory", "18Gi"))}},
       {sub_with("4Gi")},
       {},
       "req-0/subReq-1=driver-a/pool-1/device-1" + local1},
      {"partitionable-devices-per-device-node-selection-node-selector",
       {{"slice-1",
         PoolSlice(a, per_device, "pool-1", 2,
                   devs({CountedDevice("device-1", "counter-set-1", "4Gi",
                                       ", nodeSelector: {nodeSelectorTerms: [{matchExpressions: "
                                       "[{key: region, operator: In, values: [region-1]}]}]}")}))},
        {"slice-2",
         PoolSlice(a, per_device, "pool-1", 2, CounterSet("counter-set-1", "memory", "18Gi"))}},
       {one},
       {},
       "req-0=driver-a/pool-1/device-1 @ label region In region-1;"},
      {"partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
       {{"slice-1",
         PoolSlice(a, per_device, "pool-1", 2,
                   devs({CountedDevice("device-1", "counter-set-1", "4Gi",
                                       ", nodeSelector: {nodeSelectorTerms: [{matchExpressions: "
                                       "[{key: region, operator: In, values: [region-1]}]}]}"),
                         CountedDevice("device-2", "counter-set-1", "4Gi", ", nodeName: node-1"),
                         CountedDevice("device-3", "counter-set-1", "4Gi", ", allNodes: true")}))},
        {"slice-2",
         PoolSlice(a, per_device, "pool-1", 2, CounterSet("counter-set-1", "memory", "18Gi"))},
        {"slice-3", PoolSlice(b, n1, "pool-2", 2,
                              devs({CountedDevice("device-1", "counter-set-2", "4Gi"),
                                    CountedDevice("device-2", "counter-set-2", "4Gi"),
                                    CountedDevice("device-3", "counter-set-2", "4Gi")}))},
        {"slice-4", PoolSlice(b, n1, "pool-2", 2, CounterSet("counter-set-2", "memory", "12Gi"))}},
       {"{requests: [" + Req("req-0", "class-a", 3) + ", " + Req("req-1", "class-b", 3) + "]}"},
       {},
       "req-0=driver-a/pool-1/device-1,req-0=driver-a/pool-1/device-2,req-0=driver-a/pool-1/"
       "device-3,req-1=driver-b/pool-2/device-1,req-1=driver-b/pool-2/device-2,req-1=driver-b/"
       "pool-2/device-3" +
           local1},
  };
  RunPoolCases(cases);
}

}  // namespace
}  // namespace phalanx::dra

namespace phalanx::dra {
namespace {

api::Unstructured FromNode(YAML::Node doc) {
  api::Unstructured u;
  u.api_version = doc["apiVersion"].Scalar();
  u.kind = doc["kind"].Scalar();
  u.metadata.name = doc["metadata"]["name"].Scalar();
  u.object = std::make_shared<const YAML::Node>(doc);
  return u;
}

// The 1.36 API fixture's ResourceSlice (k8s-api-fixtures v1.36.0) made into the split shape
// current drivers publish: one slice with the pool's sharedCounters only, one with the device,
// whose consumesCounters names the other slice's counter set, with per-device node selection.
TEST(DraPoolTest, SplitSlicesOfTheApiFixture) {
  const YAML::Node fixture =
      YAML::LoadFile(std::string(PHALANX_UPSTREAM_DIR) +
                     "/k8s-api-fixtures/v1.36.0/resource.k8s.io.v1.ResourceSlice.yaml");
  ASSERT_TRUE(fixture["spec"]["perDeviceNodeSelection"].as<bool>());
  auto make = [&](const std::string& name, bool counters) {
    YAML::Node doc = YAML::Clone(fixture);
    doc["metadata"]["name"] = name;
    YAML::Node spec = doc["spec"];
    spec.remove("nodeName");
    spec.remove("nodeSelector");
    spec.remove("allNodes");
    spec["pool"]["resourceSliceCount"] = 2;  // these two slices
    if (counters) {
      spec.remove("devices");
      spec["sharedCounters"][0]["name"] = "counterSetValue";  // what the device names
    } else {
      spec.remove("sharedCounters");
      YAML::Node d = spec["devices"][0];
      // One node selection per device: its nodeName; one value per attribute.
      d.remove("nodeSelector");
      d.remove("allNodes");
      // A requestPolicy with validRange or validValues, not both; a step above zero.
      d["capacity"]["capacityKey"]["requestPolicy"].remove("validValues");
      d["capacity"]["capacityKey"]["requestPolicy"]["validRange"].remove("step");
      YAML::Node attr = d["attributes"]["attributesKey"];
      for (const char* list :
           {"bools", "ints", "strings", "versions", "bool", "string", "version"}) {
        attr.remove(list);
      }
    }
    auto s = ParseResourceSlice(FromNode(doc));
    EXPECT_TRUE(s.ok()) << s.status();
    return std::make_shared<const ResourceSlice>(s.ok() ? std::move(*s) : ResourceSlice{});
  };
  const auto counter_slice = make("counters", true);
  const auto device_slice = make("devices", false);
  ASSERT_EQ(device_slice->devices.size(), 1u);
  EXPECT_EQ(device_slice->devices[0].node_name, "nodeNameValue");
  EXPECT_TRUE(device_slice->per_device_node_selection);
  EXPECT_EQ(counter_slice->shared_counters.count("counterSetValue"), 1u);

  std::map<std::string, DeviceClass> classes;
  classes["c"].name = "c";
  auto claim = std::make_shared<const ResourceClaim>(*ParseResourceClaim(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: "
          "ns}\nspec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}\n")));
  auto run = [&](std::vector<ResourceSlicePtr> slices, const std::string& node_name) {
    AllocatorInput in;
    in.claims = {claim};
    in.classes = &classes;
    in.slices = std::move(slices);
    auto a = Allocator::New(std::move(in));
    EXPECT_TRUE(a.ok());
    api::Node node;
    node.metadata.name = node_name;
    auto r = a->Allocate(node);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : AllocationOutcome{};
  };
  auto r = run({counter_slice, device_slice}, "nodeNameValue");
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.results[0].devices.size(), 1u);
  const DeviceResult& res = r.results[0].devices[0];
  EXPECT_EQ(res.request + " " + res.driver + "/" + res.pool + "/" + res.device,
            "r driverValue/nameValue/nameValue");
  // The fixture's device allows multiple allocations: a share, consuming the capacity's
  // requestPolicy default ("0").
  EXPECT_EQ(res.share_id, ShareId("uid-c", "r", DeviceId{"driverValue", "nameValue", "nameValue"}));
  ASSERT_EQ(res.consumed_capacity.size(), 1u);
  EXPECT_TRUE(res.consumed_capacity.at("capacityKey").IsZero());
  // The device's own nodeName pins the allocation to the node (createNodeSelector).
  EXPECT_EQ(SelectorString(r.results[0].node_selector), "field metadata.name In nodeNameValue;");
  EXPECT_FALSE(run({counter_slice, device_slice}, "other-node").ok);
  // Without its counter slice the pool is incomplete: no device of it is allocated.
  auto alone = run({device_slice}, "nodeNameValue");
  EXPECT_FALSE(alone.ok);
  EXPECT_EQ(alone.reason, "");
}

// A dra-example-driver pool (its "gpu" profile, internal/profiles/gpu/gpu.go: one slice per
// node named <node>-gpu.example.com, pool = node, devices gpu-0..gpu-7 with attributes index,
// uuid, model, driverVersion and capacity memory), as examples/ecosystem/dra-example-driver
// writes it out.
TEST(DraPoolTest, DraExampleDriverPoolPerNode) {
  std::vector<ResourceSlicePtr> slices;
  for (const std::string node : {"gpu-1", "gpu-2"}) {
    std::string devices;
    for (int i = 0; i < 8; ++i) {
      devices += "  - name: gpu-" + std::to_string(i) +
                 "\n    attributes:\n      index: {int: " + std::to_string(i) +
                 "}\n      uuid: {string: \"gpu-" + node + "-" + std::to_string(i) +
                 "\"}\n      model: {string: \"LATEST-GPU-MODEL\"}\n      driverVersion: "
                 "{version: \"1.0.0\"}\n    capacity:\n      memory: {value: 80Gi}\n";
    }
    auto s = ParseResourceSlice(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + node +
            "-gpu.example.com}\nspec:\n  driver: gpu.example.com\n  nodeName: " + node +
            "\n  pool: {name: " + node + ", generation: 1, resourceSliceCount: 1}\n  devices:\n" +
            devices));
    ASSERT_TRUE(s.ok()) << s.status();
    slices.push_back(std::make_shared<const ResourceSlice>(std::move(*s)));
  }
  std::map<std::string, DeviceClass> classes;
  auto cls = ParseDeviceClass(
      Obj("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
          "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n"));
  ASSERT_TRUE(cls.ok());
  classes["gpu.example.com"] = *cls;
  auto claim = [](const std::string& name, const std::string& devices) {
    return std::make_shared<const ResourceClaim>(*ParseResourceClaim(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
            ", namespace: ns}\nspec: {devices: " + devices + "}\n")));
  };
  // Two GPUs of one driver version, index >= 6; and every GPU of a node.
  auto pair = claim("pair",
                    "{requests: [{name: gpus, exactly: {deviceClassName: gpu.example.com, count: "
                    "2, selectors: [{cel: {expression: \"device.attributes['gpu.example.com']."
                    "index >= 6\"}}]}}], constraints: [{matchAttribute: "
                    "gpu.example.com/driverVersion}]}");
  auto all = claim("all",
                   "{requests: [{name: gpus, exactly: {deviceClassName: gpu.example.com, "
                   "allocationMode: All}}]}");
  api::Node node;
  node.metadata.name = "gpu-2";
  AllocatorInput in;
  in.claims = {pair, all};
  in.classes = &classes;
  in.slices = slices;
  auto a = Allocator::New(in);
  ASSERT_TRUE(a.ok());
  auto r = a->Allocate(node);
  ASSERT_TRUE(r.ok()) << r.status();
  // Every GPU of the node for "all" cannot be had with two of them taken by "pair".
  EXPECT_FALSE(r->ok);
  auto devices = [](const AllocationResult& res) {
    std::string out;
    for (const auto& d : res.devices) out += d.pool + "/" + d.device + " ";
    return out + "@ " + SelectorString(res.node_selector);
  };
  for (const auto& [c, want] :
       {std::pair{pair, "gpu-2/gpu-6 gpu-2/gpu-7 @ field metadata.name In gpu-2;"},
        {all,
         "gpu-2/gpu-0 gpu-2/gpu-1 gpu-2/gpu-2 gpu-2/gpu-3 gpu-2/gpu-4 gpu-2/gpu-5 gpu-2/gpu-6 "
         "gpu-2/gpu-7 @ field metadata.name In gpu-2;"}}) {
    in.claims = {c};
    a = Allocator::New(in);
    r = a->Allocate(node);
    ASSERT_TRUE(r.ok() && r->ok) << c->Key();
    EXPECT_EQ(devices(r->results[0]), want);
  }
  // gpu-6 in use: one GPU with index >= 6 is left, "pair" needs two.
  in.claims = {pair};
  in.in_use = {DeviceId{"gpu.example.com", "gpu-2", "gpu-6"}};
  a = Allocator::New(in);
  r = a->Allocate(node);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok);
  // A newer generation of gpu-2's pool that is not complete yet (two slices announced, one
  // published): no GPU of gpu-2 is allocated, and "all" is an error until it is complete.
  auto newer = std::make_shared<ResourceSlice>(*slices[1]);
  newer->name = "gpu-2-gpu.example.com-2";
  newer->pool_generation = 2;
  newer->resource_slice_count = 2;
  in.slices.push_back(newer);
  in.in_use.clear();
  a = Allocator::New(in);
  r = a->Allocate(node);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok);
  in.claims = {all};
  a = Allocator::New(in);
  r = a->Allocate(node);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "claim ns/all, request gpus: asks for all devices, but resource pool "
            "gpu.example.com/gpu-2 is currently being updated");
  node.metadata.name = "gpu-1";  // gpu-1's own pool is complete
  r = a->Allocate(node);
  ASSERT_TRUE(r.ok() && r->ok);
}

}  // namespace
}  // namespace phalanx::dra

namespace phalanx::dra {
namespace {

// ---- Consumable capacity (KEP-5075; consumable_capacity.go, constraint.go) ----

// Upstream's helpers: a device with allowMultipleAllocations; withCapacityRequestPolicyRange
// (default 2, validRange min 2 step 2 max 4); withCapacityRequestPolicyValidValues (default d,
// validValues [d, more...]); a request with capacity.requests {capacity-0: q}.
std::string MultiDevice(const std::string& name, const std::string& capacity,
                        const std::string& attributes = "") {
  return "{name: " + name + ", allowMultipleAllocations: true" +
         (capacity.empty() ? "" : ", capacity: {" + capacity + "}") +
         (attributes.empty() ? "" : ", attributes: {" + attributes + "}") + "}";
}
std::string RangePolicy(const std::string& value) {
  return "capacity-0: {value: " + value +
         ", requestPolicy: {default: 2, validRange: {min: 2, step: 2, max: 4}}}";
}
std::string ValuesPolicy(const std::string& def, const std::string& value,
                         const std::string& more = "") {
  return "capacity-0: {value: " + value + ", requestPolicy: {default: " + def + ", validValues: [" +
         def + (more.empty() ? "" : ", " + more) + "]}}";
}
std::string CapReq(const std::string& name, const std::string& cls, const std::string& q,
                   bool all = false, int count = 1) {
  return "{name: " + name + ", exactly: {deviceClassName: " + cls +
         (all ? ", allocationMode: All" : ", count: " + std::to_string(count)) +
         (q.empty() ? "" : ", capacity: {requests: {capacity-0: " + q + "}}") + "}}";
}

TEST(DraConsumableCapacityTest, UpstreamCases) {
  const std::string a = "driver-a";
  const std::string n1 = "nodeName: node-1";
  auto slice = [&](const std::vector<std::string>& devices, int count = 1) {
    std::string body = "  devices: [";
    for (size_t i = 0; i < devices.size(); ++i) body += (i ? ", " : "") + devices[i];
    return PoolSlice(a, n1, "pool-1", count, body + "]\n");
  };
  auto claim = [](std::vector<std::string> reqs, const std::string& constraints = "") {
    std::string out = "{requests: [";
    for (size_t i = 0; i < reqs.size(); ++i) out += (i ? ", " : "") + reqs[i];
    return out + "]" + (constraints.empty() ? "" : ", constraints: [" + constraints + "]") + "}";
  };
  const std::string at = " @ field metadata.name In node-1;";
  const std::string d1 = "req-0=driver-a/pool-1/device-1*";
  const std::vector<PoolCase> cases = {
      {"consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-1: {value: 1}")})}},
       {claim({CapReq("req-0", "class-a", "1")})},
       {},
       ""},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-"
       "request",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-1: {value: 1}")})}},
       {claim({CapReq("req-0", "class-a-multi", "1", true)})},
       {},
       ""},
      {"consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
       {{"slice-1", slice({MultiDevice("device-1", "")})}},
       {claim({CapReq("req-0", "class-a-multi", "")}),
        claim({CapReq("req-0", "class-a-multi", "")})},
       {},
       d1 + at + " | " + d1 + at},
      {"consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-0: {value: 1}"),
                           MultiDevice("device-2", "capacity-0: {value: 1}")})}},
       {claim({CapReq("req-0", "class-a-multi", "")}),
        claim({CapReq("req-0", "class-a-multi", "")})},
       {},
       d1 + "{capacity-0=1}" + at + " | req-0=driver-a/pool-1/device-2*{capacity-0=1}" + at},
      {"consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-0: {value: 2}")})}},
       {claim({CapReq("req-0", "class-a-multi", "")}),
        claim({CapReq("req-0", "class-a-multi", "")})},
       {},
       ""},
      {"consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-0: {value: 2}")})}},
       {claim({CapReq("req-0", "class-a-multi", "1")}),
        claim({CapReq("req-0", "class-a-multi", "1")})},
       {},
       d1 + "{capacity-0=1}" + at + " | " + d1 + "{capacity-0=1}" + at},
      {"consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("4"))})}},
       {claim({CapReq("req-0", "class-a-multi", "")}),
        claim({CapReq("req-0", "class-a-multi", "")})},
       {},
       d1 + "{capacity-0=2}" + at + " | " + d1 + "{capacity-0=2}" + at},
      {"consumable-capacity-multi-allocatable-device-with-zero-request-policy",
       {{"slice-1", slice({MultiDevice("device-1", ValuesPolicy("0", "1"))})}},
       {claim({CapReq("req-0", "class-a-multi", "")}),
        claim({CapReq("req-0", "class-a-multi", "")})},
       {},
       d1 + "{capacity-0=0}" + at + " | " + d1 + "{capacity-0=0}" + at},
      {"consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
       {{"slice-1", slice({MultiDevice("device-1", ValuesPolicy("0", "1"))})}},
       {claim({CapReq("req-0", "class-a-multi", "1")})},
       {},
       ""},
      {"consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("4"))})}},
       {claim({CapReq("req-0", "class-a-multi", "1")}),
        claim({CapReq("req-0", "class-a-multi", "1")})},
       {},
       d1 + "{capacity-0=2}" + at + " | " + d1 + "{capacity-0=2}" + at},
      {"consumable-capacity-multi-allocatable-device-with-range-policy-step",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("4"))})}},
       {claim({CapReq("req-0", "class-a-multi", "3")})},
       {},
       d1 + "{capacity-0=4}" + at},
      {"consumable-capacity-multi-allocatable-device-with-valid-values-policy",
       {{"slice-1", slice({MultiDevice("device-1", ValuesPolicy("1", "4", "2"))})}},
       {claim({CapReq("req-0", "class-a-multi", "2")})},
       {},
       d1 + "{capacity-0=2}" + at},
      {"consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
       {{"slice-1", slice({MultiDevice("device-1", ValuesPolicy("1", "3", "3"))})}},
       {claim({CapReq("req-0", "class-a-multi", "2")})},
       {},
       d1 + "{capacity-0=3}" + at},
      {"consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("2"))})}},
       {claim({CapReq("req-0", "class-a-multi", "1")}),
        claim({CapReq("req-0", "class-a-multi", "2")})},
       {},
       ""},
      {"consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("10"))})}},
       {claim({CapReq("req-0", "class-a-multi", "6")})},
       {},
       ""},
      {"consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("4"))})}},
       {claim({CapReq("req-0", "class-a-multi", "2")})},
       {},
       d1 + "{capacity-0=2}" + at,
       "",
       "",
       {{DeviceId{a, "pool-1", "device-1"}, {{"capacity-0", "2"}}}}},
      {"consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("2")),
                           MultiDevice("device-2", RangePolicy("2"))})}},
       {claim({CapReq("req-0", "class-a-multi", "2")})},
       {},
       "req-0=driver-a/pool-1/device-2*{capacity-0=2}" + at,
       "",
       "",
       {{DeviceId{a, "pool-1", "device-1"}, {{"capacity-0", "2"}}}}},
      {"consumable-capacity-with-multi-allocatable-device-backtrack",
       {{"slice-1", slice({MultiDevice("device-2", RangePolicy("2"),
                                       "stringAttribute: {string: stringAttributeValue1}"),
                           MultiDevice("device-1", RangePolicy("4"),
                                       "stringAttribute: {string: stringAttributeValue2}")})}},
       {claim({CapReq("req-0", "class-a", "2"), CapReq("req-1", "class-a", "2")},
              "{matchAttribute: driver-a/stringAttribute}"),
        claim({CapReq("req-0", "class-a", "2")})},
       {},
       d1 + "{capacity-0=2},req-1=driver-a/pool-1/device-1*{capacity-0=2}" + at +
           " | req-0=driver-a/pool-1/device-2*{capacity-0=2}" + at},
      {"consumable-capacity-multi-allocatable-device-with-subrequest",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("2"))})}},
       {"{requests: [{name: req-0, firstAvailable: ["
        "{name: subReq-0, deviceClassName: class-a-multi, capacity: {requests: {capacity-0: 4}}},"
        "{name: subReq-1, deviceClassName: class-a-multi, capacity: {requests: {capacity-0: 2}}},"
        "{name: subReq-2, deviceClassName: class-a-multi}]}]}"},
       {},
       "req-0/subReq-1=driver-a/pool-1/device-1*{capacity-0=2}" + at},
      {"consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("2"))})}},
       {claim({CapReq("req-0", "class-a-multi", "2")})},
       {},
       "",
       "",
       "",
       {{DeviceId{a, "pool-1", "device-1"}, {{"capacity-0", "2"}}}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
       {{"slice-1",
         slice({MultiDevice("device-1", "capacity-0: {value: 2}"), MultiDevice("device-2", "")})}},
       {claim({CapReq("req-0", "class-a-multi", "2", true)})},
       {},
       d1 + "{capacity-0=2}" + at},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-"
       "capacity",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-0: {value: 2}"),
                           MultiDevice("device-2", "capacity-0: {value: 1}")})}},
       {claim({CapReq("req-0", "class-a-multi", "2", true)})},
       {},
       d1 + "{capacity-0=2}" + at},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-0: {value: 2}"),
                           MultiDevice("device-2", "capacity-0: {value: 1}")})}},
       {claim({CapReq("req-0", "class-a", "1"), CapReq("req-1", "class-a", "1", true)})},
       {},
       d1 +
           "{capacity-0=1},req-1=driver-a/pool-1/device-1*{capacity-0=1},req-1=driver-a/pool-1/"
           "device-2*{capacity-0=1}" +
           at},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-0: {value: 2}"),
                           MultiDevice("device-2", "capacity-0: {value: 1}")})}},
       {claim({CapReq("req-0", "class-a", "1", true)})},
       {},
       d1 + "{capacity-0=1},req-0=driver-a/pool-1/device-2*{capacity-0=1}" + at,
       "",
       "",
       {{DeviceId{a, "pool-1", "device-1"}, {{"capacity-0", "1"}}}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-0: {value: 1}"),
                           MultiDevice("device-2", "capacity-0: {value: 1}")})}},
       {claim({CapReq("req-0", "class-a", "1"), CapReq("req-1", "class-a", "1", true)})},
       {},
       ""},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
       {{"slice-1", slice({MultiDevice("device-1", "capacity-0: {value: 1}"),
                           MultiDevice("device-2", "capacity-0: {value: 1}")})}},
       {claim({CapReq("req-0", "class-a", "1", true)})},
       {},
       "req-0=driver-a/pool-1/device-2*{capacity-0=1}" + at,
       "",
       "",
       {{DeviceId{a, "pool-1", "device-1"}, {{"capacity-0", "1"}}}}},
      // A dedicated device: a capacity request is a filter, nothing is consumed or shared.
      {"consumable-capacity-dedicated-device-with-consumable-capacity-request",
       {{"slice-1", slice({"{name: device-1, capacity: {capacity-0: {value: 1}}}"})}},
       {claim({CapReq("req-0", "class-a-dedicated", "1")})},
       {},
       "req-0=driver-a/pool-1/device-1" + at},
      {"with-distinct-constraints",
       {{"slice-1",
         slice({MultiDevice("device-1", "",
                            "driverVersion: {version: 1.0.0}, numa: {int: 0}, boolAttribute: "
                            "{bool: true}"),
                MultiDevice("device-2", "",
                            "driverVersion: {version: 1.0.1}, numa: {int: 1}, boolAttribute: "
                            "{bool: false}"),
                MultiDevice("device-3", "",
                            "driverVersion: {version: 1.0.2}, numa: {int: 2}, boolAttribute: "
                            "{bool: true}"),
                MultiDevice("device-4", "",
                            "driverVersion: {version: 1.0.0}, numa: {int: 3}, boolAttribute: "
                            "{bool: true}")})}},
       {claim({CapReq("req-0", "class-a", ""), CapReq("req-1", "class-a", ""),
               CapReq("req-2", "class-a", ""), CapReq("req-3", "class-a", "")},
              "{distinctAttribute: driver-a/boolAttribute, requests: [req-0, req-1]}, "
              "{distinctAttribute: driver-a/driverVersion, requests: [req-0, req-1, req-2]}, "
              "{distinctAttribute: driver-a/numa, requests: [req-0, req-1, req-2, req-3]}")},
       {},
       d1 +
           ",req-1=driver-a/pool-1/device-2*,req-2=driver-a/pool-1/device-3*,req-3=driver-a/"
           "pool-1/device-4*" +
           at},
      {"with-distinct-constraints-attribute-not-set",
       {{"slice-1", slice({MultiDevice("device-1", "")})}},
       {claim({CapReq("req-0", "class-a", "")},
              "{distinctAttribute: driver-a/boolAttribute, requests: [req-0]}")},
       {},
       ""},
      {"distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("2"),
                                       "stringAttribute: {string: stringAttributeValue}")})}},
       {claim({CapReq("req-0", "class-a-multi", "1"), CapReq("req-1", "class-a-multi", "1")},
              "{distinctAttribute: driver-a/stringAttribute}")},
       {},
       ""},
      {"distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
       {{"slice-1", slice({MultiDevice("device-1", RangePolicy("4"),
                                       "stringAttribute: {string: stringAttributeValue1}")},
                          2)},
        {"slice-1", slice({MultiDevice("device-2", RangePolicy("4"),
                                       "stringAttribute: {string: stringAttributeValue2}")},
                          2)}},
       {claim({CapReq("req-0", "class-a-multi", "2"), CapReq("req-1", "class-a-multi", "2")},
              "{distinctAttribute: driver-a/stringAttribute}")},
       {},
       d1 + "{capacity-0=2},req-1=driver-a/pool-1/device-2*{capacity-0=2}" + at},
  };
  RunPoolCases(cases);
}

TEST(DraConsumableCapacityTest, ShareIdsAreDeterministicUuids) {
  const DeviceId id{"d", "p", "g"};
  const std::string s = ShareId("uid-1", "req", id);
  EXPECT_EQ(s, ShareId("uid-1", "req", id));
  EXPECT_NE(s, ShareId("uid-2", "req", id));
  EXPECT_NE(s, ShareId("uid-1", "other", id));
  ASSERT_EQ(s.size(), 36u);
  for (size_t i : {8u, 13u, 18u, 23u}) EXPECT_EQ(s[i], '-');
  EXPECT_EQ(s[14], '8');                                          // version 8
  EXPECT_NE(std::string("89ab").find(s[19]), std::string::npos);  // RFC 4122 variant
}

}  // namespace
}  // namespace phalanx::dra

namespace phalanx::dra {
namespace {

// dra::DefaultDRAManager keeps the shares of devices with allowMultipleAllocations (results
// with a shareID) apart from the devices in use whole, with the capacity they consume.
TEST(DraManagerTest, SharesCountTheirConsumedCapacity) {
  DefaultDRAManager m;
  auto claim = [](const std::string& name, const std::string& results) {
    return std::make_shared<const api::Unstructured>(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
            ", namespace: ns}\nspec: {devices: {requests: [{name: r, exactly: {deviceClassName: "
            "gpu}}]}}\nstatus: {allocation: {devices: {results: [" +
            results + "]}}}\n"));
  };
  const std::string share =
      "{request: r, driver: d, pool: p, device: g, shareID: SHARE, consumedCapacity: {memory: "
      "AMOUNT}}";
  auto with = [&](const std::string& id, const std::string& amount) {
    std::string s = share;
    s.replace(s.find("SHARE"), 5, id);
    s.replace(s.find("AMOUNT"), 6, amount);
    return s;
  };
  ASSERT_TRUE(m.OnObjectAdd(claim("a", with("11111111-1111-8111-8111-111111111111", "10Gi"))));
  ASSERT_TRUE(m.OnObjectAdd(claim("b", with("22222222-2222-8222-8222-222222222222", "20Gi") +
                                           ", {request: r, driver: d, pool: p, device: whole}")));
  const DeviceId g{"d", "p", "g"};
  auto consumed = [&](const std::shared_ptr<const InUseIndex>& in) {
    const InUseIndex::Shared* s = in->SharedUse(g);
    return s ? std::to_string(s->shares) + " " + std::to_string(s->consumed.at("memory").Value())
             : std::string("none");
  };
  EXPECT_EQ(consumed(m.InUse()), "2 32212254720");                             // 30Gi
  EXPECT_EQ(m.AllocatedDevices(), (std::set<DeviceId>{{"d", "p", "whole"}}));  // not g
  EXPECT_EQ(consumed(m.InUseExcept({"uid-b"})), "1 10737418240");
  // b's share shrinks, then a is deleted: the counts follow.
  ASSERT_TRUE(m.OnObjectUpdate(claim("b", with("22222222-2222-8222-8222-222222222222", "5Gi"))));
  EXPECT_EQ(consumed(m.InUse()), "2 16106127360");
  ASSERT_TRUE(m.OnObjectDelete(claim("a", "")));
  EXPECT_EQ(consumed(m.InUse()), "1 5368709120");
  ASSERT_TRUE(m.OnObjectDelete(claim("b", "")));
  EXPECT_EQ(consumed(m.InUse()), "none");
}

}  // namespace
}  // namespace phalanx::dra

namespace phalanx::dra {
namespace {

// WithClaimStatus writes a share's consumedCapacity and shareID in the v1 field names, and
// the claim parses back to the same allocation.
TEST(DraModelTest, WithClaimStatusWritesSharesInV1Names) {
  const api::Unstructured obj =
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: "
          "ns}\nspec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, capacity: "
          "{requests: {memory: 10Gi}}}}]}}\n");
  auto claim = ParseResourceClaim(obj);
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->spec.requests[0].exactly->capacity_requests.at("memory").Value(), 10LL << 30);
  DeviceResult share{"r", "d", "p", "g", false};
  share.share_id = ShareId("uid-c", "r", DeviceId{"d", "p", "g"});
  share.consumed_capacity = {{"memory", *api::Quantity::Parse("10Gi")},
                             {"cores", *api::Quantity::Parse("1500m")},
                             {"zero", *api::Quantity::Parse("0")}};
  claim->allocation = AllocationResult{{share}, {}};
  const api::Unstructured written = WithClaimStatus(obj, *claim);
  const YAML::Node r = (*written.object)["status"]["allocation"]["devices"]["results"][0];
  EXPECT_EQ(r["shareID"].Scalar(), share.share_id);
  EXPECT_EQ(r["consumedCapacity"]["memory"].Scalar(), "10Gi");
  EXPECT_EQ(r["consumedCapacity"]["cores"].Scalar(), "1500m");
  EXPECT_EQ(r["consumedCapacity"]["zero"].Scalar(), "0");
  auto back = ParseResourceClaim(written);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->allocation, claim->allocation);
  // A whole device: neither field.
  claim->allocation = AllocationResult{{DeviceResult{"r", "d", "p", "g", false}}, {}};
  const YAML::Node w =
      (*WithClaimStatus(obj, *claim).object)["status"]["allocation"]["devices"]["results"][0];
  EXPECT_FALSE(w["shareID"].IsDefined());
  EXPECT_FALSE(w["consumedCapacity"].IsDefined());
}

TEST(DraModelTest, ConsumableCapacityErrorsNameTheField) {
  auto slice_err = [](const std::string& capacity, bool multi = true) {
    auto s = ParseResourceSlice(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
            "  driver: d\n  nodeName: n\n  pool: {name: p}\n  devices: [{name: g" +
            std::string(multi ? ", allowMultipleAllocations: true" : "") + ", capacity: {" +
            capacity + "}}]\n"));
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  const std::string p = "ResourceSlice s: spec.devices[0].capacity[\"m\"].requestPolicy";
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {default: 2}}", false),
            p + ": Forbidden: allowMultipleAllocations must be true");
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {default: 2, validRange: {min: 1}, "
                      "validValues: [2]}}"),
            p + ": Invalid value: only one of `validRange` and `validValues` can be set");
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {validRange: {min: 1}}}"),
            p + ".default: Required value: when `validRange` or `validValues` is set");
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {default: 2, validRange: {max: 3}}}"),
            p + ".validRange.min: Required value");
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {default: 2, validRange: {min: 1, step: 0}}}"),
            p + ".validRange.step: Invalid value: must be greater than zero");
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {default: 2, validValues: [3, 1]}}"),
            p + ".validValues[1]: Invalid value: must be sorted in ascending order");
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {default: 2, validValues: [1, 3]}}"),
            p + ".default: Invalid value: must be one of `validValues`");
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {default: 2, validRange: {min: 3}}}"),
            p + ".default: Invalid value: must be within `validRange`");
  EXPECT_EQ(slice_err("m: {value: 4, requestPolicy: {default: 2, validRange: {min: 1, max: 4, "
                      "step: 1}}}"),
            "");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g}}], "
                     "constraints: [{matchAttribute: a.com/b, distinctAttribute: a.com/c}]}}"),
            "ResourceClaim ns/c: spec.devices.constraints[0]: Invalid value: exactly one of "
            "`matchAttribute` or `distinctAttribute` is required");
  EXPECT_EQ(ClaimErr("spec: {devices: {requests: [{name: r, exactly: {deviceClassName: g, "
                     "capacity: {requests: {m: -1}}}}]}}"),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.capacity.requests[\"m\"]: "
            "Invalid value: must be greater than or equal to 0");
}

}  // namespace
}  // namespace phalanx::dra

namespace phalanx::dra {
namespace {

// AllocatorInput::Hold: an allocation held (tentatively taken) counts its whole devices as
// in use and its shares against the shared device's capacity.
TEST(DraConsumableCapacityTest, HeldSharesConsumeCapacity) {
  const std::map<std::string, DeviceClass> classes = UpstreamClasses();
  auto slice = ParseResourceSlice(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: driver-a\n  nodeName: node-1\n  pool: {name: pool-1}\n  devices: [" +
          MultiDevice("nic", "capacity-0: {value: 4}") + ", {name: gpu}]\n"));
  ASSERT_TRUE(slice.ok()) << slice.status();
  auto claim = [](const std::string& name, const std::string& request) {
    return std::make_shared<const ResourceClaim>(*ParseResourceClaim(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
            ", namespace: ns}\nspec: {devices: {requests: [" + request + "]}}\n")));
  };
  const auto share = claim("share", CapReq("req-0", "class-a-multi", "3"));
  const auto whole = claim("whole", CapReq("req-0", "class-a-dedicated", ""));
  api::Node node;
  node.metadata.name = "node-1";
  AllocatorInput in;
  in.classes = &classes;
  in.slices = {std::make_shared<const ResourceSlice>(std::move(*slice))};
  in.claims = {share, whole};
  auto first = Allocator::New(in)->Allocate(node);
  ASSERT_TRUE(first.ok() && first->ok);
  // Held, the first attempt's allocations leave 1 of the NIC's 4 and no dedicated device.
  for (const auto& r : first->results) in.Hold(r);
  EXPECT_EQ(in.in_use, (std::set<DeviceId>{{"driver-a", "pool-1", "gpu"}}));
  EXPECT_EQ(in.shared.at(DeviceId{"driver-a", "pool-1", "nic"}).at("capacity-0").Value(), 3);
  for (const auto& c : {share, whole}) {
    in.claims = {c};
    auto again = Allocator::New(in)->Allocate(node);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->ok) << c->Key();
  }
  in.claims = {claim("small", CapReq("req-0", "class-a-multi", "1"))};
  auto small = Allocator::New(in)->Allocate(node);
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(small->ok);
}

// Shares held for an attempt (AllocatorInput::Hold, e.g. a gang member's on the PodGroup
// cycle's view) add to the shares already allocated (the in-use index) of the same device:
// 3 allocated + 1 held fill a capacity of 4, so another share of 1 does not fit.
TEST(DraConsumableCapacityTest, HeldSharesAddToAllocatedOnes) {
  const std::map<std::string, DeviceClass> classes = UpstreamClasses();
  DefaultDRAManager m;
  ASSERT_TRUE(m.OnObjectAdd(std::make_shared<const api::Unstructured>(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: driver-a\n  nodeName: node-1\n  pool: {name: pool-1}\n  devices: [" +
          MultiDevice("nic", "capacity-0: {value: 4}") + "]\n"))));
  ASSERT_TRUE(m.OnObjectAdd(std::make_shared<const api::Unstructured>(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: taken, "
          "namespace: ns}\nspec: {devices: {requests: [" +
          CapReq("req-0", "class-a-multi", "3") +
          "]}}\nstatus: {allocation: {devices: {results: [{request: req-0, driver: driver-a, "
          "pool: pool-1, device: nic, shareID: 11111111-1111-8111-8111-111111111111, "
          "consumedCapacity: {capacity-0: \"3\"}}]}}}\n"))));
  auto claim = [](const std::string& name, const std::string& q) {
    return std::make_shared<const ResourceClaim>(*ParseResourceClaim(
        Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
            ", uid: " + name + ", namespace: ns}\nspec: {devices: {requests: [" +
            CapReq("req-0", "class-a-multi", q) + "]}}\n")));
  };
  api::Node node;
  node.metadata.name = "node-1";
  AllocatorInput in;
  in.classes = &classes;
  in.slice_index = m.SliceIndexView();
  in.in_use_index = m.InUse();
  in.claims = {claim("held", "1")};
  auto held = Allocator::New(in)->Allocate(node);
  ASSERT_TRUE(held.ok() && held->ok);  // 3 + 1 <= 4
  in.Hold(held->results[0]);
  in.claims = {claim("more", "1")};
  auto more = Allocator::New(in)->Allocate(node);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(more->ok);  // 3 + 1 + 1 > 4
}

// AllocatorInput::preferred: the preferred devices are tried first, in the order given
// (also for shares of devices with allowMultipleAllocations); preferring a device that does
// not fit changes nothing but the order, and an unknown driver or name is ignored.
TEST(DraConsumableCapacityTest, PreferredDevicesAreTriedFirst) {
  const std::map<std::string, DeviceClass> classes = UpstreamClasses();
  auto slice = ParseResourceSlice(
      Obj("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
          "  driver: driver-a\n  nodeName: node-1\n  pool: {name: pool-1}\n  devices: [" +
          MultiDevice("d0", "capacity-0: {value: 4}") + ", " +
          MultiDevice("d1", "capacity-0: {value: 4}") + ", " +
          MultiDevice("d2", "capacity-0: {value: 2}") + "]\n"));
  ASSERT_TRUE(slice.ok()) << slice.status();
  auto claim = [](const std::string& name, const std::string& request) {
    return std::make_shared<const ResourceClaim>(*ParseResourceClaim(Obj(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
        ", uid: " + name + ", namespace: ns}\nspec: {devices: {requests: [" + request + "]}}\n")));
  };
  api::Node node;
  node.metadata.name = "node-1";
  AllocatorInput in;
  in.classes = &classes;
  in.slices = {std::make_shared<const ResourceSlice>(std::move(*slice))};
  auto devices = [&](const AllocationOutcome& out) {
    std::vector<std::string> names;
    for (const auto& d : out.results.at(0).devices) names.push_back(d.device);
    return names;
  };
  in.claims = {claim("two", CapReq("req-0", "class-a-multi", "3", false, 2))};
  auto plain = Allocator::New(in)->Allocate(node);
  ASSERT_TRUE(plain.ok() && plain->ok);
  EXPECT_EQ(devices(*plain), (std::vector<std::string>{"d0", "d1"}));  // upstream's order
  in.preferred["driver-a"] = {"d1"};
  auto one = Allocator::New(in)->Allocate(node);
  ASSERT_TRUE(one.ok() && one->ok);
  EXPECT_EQ(devices(*one), (std::vector<std::string>{"d1", "d0"}));
  // d2 cannot hold 3: it stays out although preferred.
  in.preferred["driver-a"] = {"d2", "d1"};
  auto skip = Allocator::New(in)->Allocate(node);
  ASSERT_TRUE(skip.ok() && skip->ok);
  EXPECT_EQ(devices(*skip), (std::vector<std::string>{"d1", "d0"}));
  in.preferred.clear();
  in.preferred["driver-b"] = {"d1"};
  in.preferred["driver-a"] = {"nope"};
  auto other = Allocator::New(in)->Allocate(node);
  ASSERT_TRUE(other.ok() && other->ok);
  EXPECT_EQ(devices(*other), (std::vector<std::string>{"d0", "d1"}));
}

}  // namespace
}  // namespace phalanx::dra
