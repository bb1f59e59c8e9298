// Dynamic Resource Allocation end to end in the simulator: the DynamicResources plugin,
// the structured allocator, the simulated resourceclaim controller (Must show).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include "config/config.h"
#include "dra/dra_manager.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "store/store.h"

namespace phalanx::sim {
namespace {

SimulationOptions Options() {
  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  return o;
}

const PodOutcome* Find(const SimulationResult& r, const std::string& pod) {
  for (const auto& o : r.outcomes) {
    if (o.pod == pod) return &o;
  }
  return nullptr;
}

std::string Claim(const SimulationResult& r, const std::string& prefix) {
  for (const auto& c : r.dra_claims) {
    if (c.rfind(prefix, 0) == 0) return c;
  }
  return "";
}

// examples/dra: two 80Gi GPUs exist together only on node-b; the template's claim gets
// exactly those; the claim asking for three 80Gi GPUs on one node is named in the reason.
TEST(DraSimulationTest, TwoBigGpusGoToTheNodeThatHasThem) {
  Scenario sc;
  ASSERT_EQ(LoadManifestScenario(std::string(PHALANX_SOURCE_DIR) + "/examples/dra", &sc),
            absl::OkStatus());
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_TRUE(r.dra_errors.empty()) << r.dra_errors[0];
  const PodOutcome* trainer = Find(r, "default/trainer");
  ASSERT_NE(trainer, nullptr);
  EXPECT_EQ(trainer->node, "node-b") << trainer->reason;
  // The generated claim: "<pod>-<entry>-" + 5 characters, allocated node-b's 80Gi GPUs.
  const std::string claim = Claim(r, "default/trainer-gpus-");
  ASSERT_FALSE(claim.empty()) << FormatSummary(r);
  EXPECT_EQ(claim.size(), std::string("default/trainer-gpus-xxxxx").size() +
                              std::string(": gpu.example.com/node-b/gpu-1, "
                                          "gpu.example.com/node-b/gpu-2 (reserved for trainer)")
                                  .size())
      << claim;
  EXPECT_NE(claim.find(": gpu.example.com/node-b/gpu-1, gpu.example.com/node-b/gpu-2 "
                       "(reserved for trainer)"),
            std::string::npos)
      << claim;
  const PodOutcome* big = Find(r, "default/too-big");
  ASSERT_NE(big, nullptr);
  EXPECT_TRUE(big->node.empty());
  EXPECT_NE(big->reason.find("cannot allocate all claims (claim default/three-big-gpus)"),
            std::string::npos)
      << big->reason;
  EXPECT_EQ(Claim(r, "default/three-big-gpus"), "default/three-big-gpus: not allocated");
}

}  // namespace
}  // namespace phalanx::sim

namespace phalanx::sim {
namespace {

Scenario LoadText(const std::string& name, const std::string& yaml) {
  Scenario sc;
  const auto path = std::filesystem::path(::testing::TempDir()) / ("dra_test_" + name + ".yaml");
  {
    std::ofstream out(path);
    out << yaml;
  }
  const api::Status s = LoadManifestScenario(path.string(), &sc);
  EXPECT_TRUE(s.ok()) << s;
  return sc;
}

// One node, four GPUs in two NVLink domains; the H100 pair comes first in the slice.
const std::string kNvlinkNode = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1}
  devices:
  - {name: h100-0, attributes: {model: {string: H100}, nvlink: {int: 0}}}
  - {name: h100-1, attributes: {model: {string: H100}, nvlink: {int: 0}}}
  - {name: a100-0, attributes: {model: {string: A100}, nvlink: {int: 1}}}
  - {name: a100-1, attributes: {model: {string: A100}, nvlink: {int: 1}}}
---
)";

// A claim for 2 GPUs of one NVLink domain; `selector` (CEL) restricts the model.
std::string PairClaim(const std::string& name, const std::string& selector) {
  std::string sel =
      selector.empty() ? "" : "        selectors: [{cel: {expression: \"" + selector + "\"}}]\n";
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
         ", namespace: default}\nspec:\n  devices:\n    requests:\n    - name: pair\n      "
         "exactly:\n"
         "        deviceClassName: gpu\n        count: 2\n" +
         sel + "    constraints: [{matchAttribute: gpu.example.com/nvlink}]\n---\n";
}

// A pod using claim `claim`; `labels` e.g. the gang label.
std::string ClaimPod(const std::string& name, const std::string& claim, const std::string& labels) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: default, labels: {" +
         labels + "}}\nspec:\n  resourceClaims: [{name: gpus, resourceClaimName: " + claim +
         "}]\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: "
         "[{name: gpus}]}}]\n---\n";
}

const std::string kGang =
    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: train, "
    "namespace: default}\nspec: {minMember: 2}\n---\n";
const std::string kGangLabel = "scheduling.x-k8s.io/pod-group: train";

// The gang case member-by-member first fit misses (kubernetes/kubernetes#138765): worker-0
// takes any NVLink pair, worker-1 needs the H100 pair. First fit gives worker-0 the H100s
// (first in the slice) and strands worker-1; the PodGroup transaction allocates both
// members' claims jointly and binds both.
const std::string kStrandingClaims =
    PairClaim("any-pair", "") +
    PairClaim("h100-pair", "device.attributes['gpu.example.com'].model == 'H100'");

TEST(DraGangTest, FirstFitStrandsTheSecondMember) {
  // The same input without a gang: each pod on its own, in order (upstream's behaviour for a
  // gang too, whose members are placed one at a time).
  Scenario sc = LoadText("firstfit", kNvlinkNode + kStrandingClaims +
                                         ClaimPod("worker-0", "any-pair", "app: train") +
                                         ClaimPod("worker-1", "h100-pair", "app: train"));
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_EQ(Find(r, "default/worker-0")->node, "n1");
  EXPECT_EQ(Claim(r, "default/any-pair"),
            "default/any-pair: gpu.example.com/n1/h100-0, gpu.example.com/n1/h100-1 (reserved "
            "for worker-0)");
  const PodOutcome* w1 = Find(r, "default/worker-1");
  EXPECT_TRUE(w1->node.empty());
  EXPECT_NE(w1->reason.find("cannot allocate all claims (claim default/h100-pair)"),
            std::string::npos)
      << w1->reason;
}

TEST(DraGangTest, PodGroupAllocatesTheMembersClaimsJointly) {
  Scenario sc = LoadText("joint", kNvlinkNode + kStrandingClaims + kGang +
                                      ClaimPod("worker-0", "any-pair", kGangLabel) +
                                      ClaimPod("worker-1", "h100-pair", kGangLabel));
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_EQ(Find(r, "default/worker-0")->node, "n1") << Find(r, "default/worker-0")->reason;
  EXPECT_EQ(Find(r, "default/worker-1")->node, "n1") << Find(r, "default/worker-1")->reason;
  EXPECT_EQ(Claim(r, "default/any-pair"),
            "default/any-pair: gpu.example.com/n1/a100-0, gpu.example.com/n1/a100-1 (reserved "
            "for worker-0)");
  EXPECT_EQ(Claim(r, "default/h100-pair"),
            "default/h100-pair: gpu.example.com/n1/h100-0, gpu.example.com/n1/h100-1 (reserved "
            "for worker-1)");
}

// Consumable capacity in a gang: two members whose own claims each ask for half of the one
// shareable device fit on it together (a member placed on the PodGroup cycle's view holds
// its share, not the whole device).
TEST(DraGangTest, MembersSharesOfOneDeviceFitTogether) {
  const std::string node = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, allowMultipleAllocations: true, capacity: {compute: {value: "1000"}}}
---
)";
  auto half = [](const std::string& name) {
    return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
           ", namespace: default}\nspec: {devices: {requests: [{name: g, exactly: "
           "{deviceClassName: gpu, capacity: {requests: {compute: \"500\"}}}}]}}\n---\n";
  };
  Scenario sc = LoadText("shares", node + half("half-0") + half("half-1") + kGang +
                                       ClaimPod("worker-0", "half-0", kGangLabel) +
                                       ClaimPod("worker-1", "half-1", kGangLabel));
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  for (const char* p : {"default/worker-0", "default/worker-1"}) {
    EXPECT_EQ(Find(r, p)->node, "n1") << p << ": " << Find(r, p)->reason;
  }
}

// A claim shared by the whole gang (a plain ResourceClaim every member references): one
// allocation, every member in reservedFor; a member arriving later joins it.
TEST(DraGangTest, GangSharesOneClaimAndALateMemberJoinsIt) {
  const std::string late =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: worker-2, namespace: default, labels: {" +
      kGangLabel +
      "}, annotations: {simulation.phalanx.dev/arrival-seconds: \"30\"}}\nspec:\n"
      "  resourceClaims: [{name: gpus, resourceClaimName: shared}]\n  containers: [{name: c, "
      "image: x, resources: {requests: {cpu: \"1\"}, claims: [{name: gpus}]}}]\n---\n";
  Scenario sc = LoadText("shared", kNvlinkNode + PairClaim("shared", "") + kGang +
                                       ClaimPod("worker-0", "shared", kGangLabel) +
                                       ClaimPod("worker-1", "shared", kGangLabel) + late);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  for (const char* p : {"default/worker-0", "default/worker-1", "default/worker-2"}) {
    EXPECT_EQ(Find(r, p)->node, "n1") << p << ": " << Find(r, p)->reason;
  }
  EXPECT_GT(Find(r, "default/worker-2")->arrival_s,
            Find(r, "default/worker-0")->scheduled_s.value_or(1e9));
  EXPECT_EQ(Claim(r, "default/shared"),
            "default/shared: gpu.example.com/n1/h100-0, gpu.example.com/n1/h100-1 (reserved "
            "for worker-0, worker-1, worker-2)");
}

// The resourceclaim controller's part: when the last consumer of a claim is gone the claim is
// deallocated and its devices serve the next pod; a pod's generated claim is deleted.
TEST(DraSimulationTest, DevicesAreFreedWhenTheLastConsumerGoes) {
  auto pod = [](const std::string& name, const std::string& claim, const std::string& annotations) {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
           ", namespace: default, annotations: {" + annotations +
           "}}\nspec:\n  resourceClaims: [{name: gpus, " + claim +
           "}]\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: "
           "[{name: gpus}]}}]\n---\n";
  };
  const std::string h100 = "device.attributes['gpu.example.com'].model == 'H100'";
  const std::string tmpl =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: pair, "
      "namespace: default}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: pair\n"
      "        exactly: {deviceClassName: gpu, count: 2, selectors: [{cel: {expression: \"" +
      h100 + "\"}}]}\n---\n";
  Scenario sc = LoadText(
      "dealloc",
      kNvlinkNode + PairClaim("first", h100) + PairClaim("second", h100) + tmpl +
          pod("a", "resourceClaimName: first", "simulation.phalanx.dev/duration-seconds: \"10\"") +
          pod("b", "resourceClaimName: second",
              "simulation.phalanx.dev/arrival-seconds: \"5\", "
              "simulation.phalanx.dev/duration-seconds: \"20\"") +
          pod("c", "resourceClaimTemplateName: pair",
              "simulation.phalanx.dev/arrival-seconds: \"6\", "
              "simulation.phalanx.dev/duration-seconds: \"1\""));
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  const PodOutcome* a = Find(r, "default/a");
  const PodOutcome* b = Find(r, "default/b");
  const PodOutcome* c = Find(r, "default/c");
  ASSERT_TRUE(a->scheduled_s && b->scheduled_s && c->scheduled_s) << FormatSummary(r);
  // One H100 pair: a holds it 0..10 s, then b (20 s) and c (1 s) one after the other.
  EXPECT_EQ(*a->scheduled_s, 0.0);
  const double first = std::min(*b->scheduled_s, *c->scheduled_s);
  const double second = std::max(*b->scheduled_s, *c->scheduled_s);
  EXPECT_GE(first, 10.0);
  EXPECT_GE(second, first + (*b->scheduled_s < *c->scheduled_s ? 20.0 : 1.0));
  // Every consumer is gone: the plain claims are deallocated, c's generated one deleted.
  EXPECT_EQ(Claim(r, "default/first"), "default/first: not allocated");
  EXPECT_EQ(Claim(r, "default/second"), "default/second: not allocated");
  EXPECT_EQ(Claim(r, "default/c-gpus-"), "");
  EXPECT_EQ(r.dra_claims.size(), 2u) << FormatSummary(r);
}

// KEP-5055 end to end: a DeviceTaintRule from the manifests taints n1's h100-0; a claim
// for an NVLink pair without a toleration gets the A100 pair (the H100 pair comes first in
// the slice), one tolerating the taint gets the H100s; alone, a claim for the H100 pair
// without the toleration stays pending with the claim named.
TEST(DraSimulationTest, DeviceTaintRuleKeepsUntoleratingClaimsOffTheDevices) {
  const std::string rule =
      "apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: h100-ecc}\n"
      "spec: {deviceSelector: {driver: gpu.example.com, pool: n1, device: h100-0},\n"
      "       taint: {key: gpu.example.com/ecc, value: \"true\", effect: NoSchedule}}\n---\n";
  const std::string tolerant =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: tolerant, namespace: "
      "default}\nspec:\n  devices:\n    requests:\n    - name: pair\n      exactly:\n"
      "        deviceClassName: gpu\n        count: 2\n        tolerations: [{key: "
      "gpu.example.com/ecc, operator: Exists}]\n"
      "    constraints: [{matchAttribute: gpu.example.com/nvlink}]\n---\n";
  Scenario sc = LoadText("taintrule", kNvlinkNode + rule + PairClaim("plain", "") + tolerant +
                                          ClaimPod("a", "plain", "app: x") +
                                          ClaimPod("b", "tolerant", "app: x"));
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.dra_errors.empty()) << r.dra_errors[0];
  EXPECT_EQ(Claim(r, "default/plain"),
            "default/plain: gpu.example.com/n1/a100-0, gpu.example.com/n1/a100-1 (reserved for a)");
  EXPECT_EQ(Claim(r, "default/tolerant"),
            "default/tolerant: gpu.example.com/n1/h100-0, gpu.example.com/n1/h100-1 (reserved "
            "for b)");
  Scenario alone =
      LoadText("taintrule-alone",
               kNvlinkNode + rule +
                   PairClaim("h100-only", "device.attributes['gpu.example.com'].model == 'H100'") +
                   ClaimPod("c", "h100-only", "app: x"));
  SimulationResult r2;
  ASSERT_EQ(RunSimulation(alone, Options(), &r2), absl::OkStatus());
  const PodOutcome* c = Find(r2, "default/c");
  EXPECT_TRUE(c->node.empty());
  EXPECT_NE(c->reason.find("cannot allocate all claims (claim default/h100-only)"),
            std::string::npos)
      << c->reason;
}

// ---- KEP-5729: claims owned by a Workload API PodGroup ----

// A scheduling.k8s.io/v1alpha2 PodGroup (gang of `min`) whose claim `gpus` comes from
// template `pair` (2 GPUs of one NVLink domain, `selector` on the model).
std::string WorkloadGang(int min, const std::string& selector) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: pair, "
         "namespace: default}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: pair\n"
         "        exactly: {deviceClassName: gpu, count: 2" +
         (selector.empty() ? std::string()
                           : ", selectors: [{cel: {expression: \"" + selector + "\"}}]") +
         "}\n      constraints: [{matchAttribute: gpu.example.com/nvlink}]\n---\n"
         "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: train, "
         "namespace: default}\nspec:\n  schedulingPolicy: {gang: {minCount: " +
         std::to_string(min) +
         "}}\n  resourceClaims: [{name: gpus, resourceClaimTemplateName: "
         "pair}]\n---\n";
}

// A member of PodGroup train using its claim `gpus` (the entry matches the PodGroup's).
std::string WorkloadMember(const std::string& name, const std::string& annotations = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         ", namespace: default, annotations: {" + annotations +
         "}}\nspec:\n"
         "  schedulingGroup: {podGroupName: train}\n"
         "  resourceClaims: [{name: gpus, resourceClaimTemplateName: pair}]\n"
         "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: "
         "[{name: gpus}]}}]\n---\n";
}

// One claim generated for the PodGroup, allocated once in the gang's transaction, reserved
// for the PodGroup; every member uses it, and a member arriving later joins it.
TEST(DraWorkloadClaimTest, PodGroupClaimIsSharedByTheGangAndALateMember) {
  std::string members;
  for (int i = 0; i < 4; ++i) members += WorkloadMember("worker-" + std::to_string(i));
  members += WorkloadMember("late", "simulation.phalanx.dev/arrival-seconds: \"30\"");
  Scenario sc = LoadText("pgclaim", kNvlinkNode +
                                        WorkloadGang(4,
                                                     "device.attributes['gpu.example.com']"
                                                     ".model == 'A100'") +
                                        members);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_TRUE(r.dra_errors.empty()) << r.dra_errors[0];
  for (const char* p : {"default/worker-0", "default/worker-1", "default/worker-2",
                        "default/worker-3", "default/late"}) {
    ASSERT_NE(Find(r, p), nullptr) << p;
    EXPECT_EQ(Find(r, p)->node, "n1") << p << ": " << Find(r, p)->reason;
  }
  EXPECT_GT(Find(r, "default/late")->scheduled_s.value_or(0),
            Find(r, "default/worker-0")->scheduled_s.value_or(1e9));
  // Exactly one claim: the PodGroup's ("train-gpus-" + 5 characters), the A100 pair, one
  // reservedFor entry for the whole group; no claim per pod.
  ASSERT_EQ(r.dra_claims.size(), 1u) << FormatSummary(r);
  const std::string& claim = r.dra_claims[0];
  EXPECT_EQ(claim.rfind("default/train-gpus-", 0), 0u) << claim;
  EXPECT_EQ(claim.substr(std::string("default/train-gpus-xxxxx").size()),
            ": gpu.example.com/n1/a100-0, gpu.example.com/n1/a100-1 (reserved for PodGroup train)");
}

// No node has the devices: the gang stays pending and the reason names the PodGroup's claim.
TEST(DraWorkloadClaimTest, UnsatisfiablePodGroupClaimKeepsTheGangPendingWithTheClaimNamed) {
  std::string members;
  for (int i = 0; i < 4; ++i) members += WorkloadMember("worker-" + std::to_string(i));
  Scenario sc = LoadText(
      "pgclaim-none", kNvlinkNode +
                          WorkloadGang(4, "device.attributes['gpu.example.com'].model == 'B200'") +
                          members);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  ASSERT_EQ(r.dra_claims.size(), 1u) << FormatSummary(r);
  const std::string claim = r.dra_claims[0].substr(0, r.dra_claims[0].find(':'));
  EXPECT_EQ(r.dra_claims[0], claim + ": not allocated");
  for (int i = 0; i < 4; ++i) {
    const PodOutcome* o = Find(r, "default/worker-" + std::to_string(i));
    ASSERT_NE(o, nullptr);
    EXPECT_TRUE(o->node.empty());
    EXPECT_NE(o->reason.find("(claim " + claim + ")"), std::string::npos) << o->reason;
  }
}

// The PodGroup's claim must be the PodGroup's: a claim of that name owned by someone else
// is refused with upstream-style wording; a pod entry that does not match the PodGroup's
// entry exactly gets a claim of its own (KEP-5729 "Pod").
TEST(DraWorkloadClaimTest, OnlyExactlyMatchingEntriesUseThePodGroupClaim) {
  const std::string own =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: solo, namespace: default}\nspec:\n"
      "  schedulingGroup: {podGroupName: train}\n"
      "  resourceClaims: [{name: mine, resourceClaimTemplateName: pair}]\n"
      "  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: "
      "[{name: mine}]}}]\n---\n";
  Scenario sc = LoadText("pgclaim-own", kNvlinkNode + WorkloadGang(1, "") + own);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_EQ(Find(r, "default/solo")->node, "n1") << Find(r, "default/solo")->reason;
  ASSERT_EQ(r.dra_claims.size(), 1u) << FormatSummary(r);
  EXPECT_EQ(r.dra_claims[0].rfind("default/solo-mine-", 0), 0u) << r.dra_claims[0];
  EXPECT_NE(r.dra_claims[0].find("(reserved for solo)"), std::string::npos) << r.dra_claims[0];
}

// 1.36 pools end to end: n1's GPU is sold whole or as two 40Gi halves, the counter set in a
// slice of its own (the split shape drivers publish); a NIC with allowMultipleAllocations is
// shared by bandwidth (KEP-5075). Two half pods run at once and the whole-GPU pod waits for
// both to finish; 3500Mi requests round up to 4Gi (validRange step 1Gi), so two shares fit
// the NIC's 10Gi and the third waits for the first to finish.
TEST(DraSimulationTest, SplitCounterSlicesAndSharedDevices) {
  const std::string cluster = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: nic}
spec: {selectors: [{cel: {expression: "device.driver == 'nic.example.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-counters}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, resourceSliceCount: 2}
  sharedCounters: [{name: gpu-0, counters: {memory: {value: 80Gi}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, resourceSliceCount: 2}
  devices:
  - {name: whole, capacity: {memory: {value: 80Gi}},
     consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 80Gi}}}]}
  - {name: half-0, capacity: {memory: {value: 40Gi}},
     consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}}}]}
  - {name: half-1, capacity: {memory: {value: 40Gi}},
     consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 40Gi}}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-nic}
spec:
  driver: nic.example.com
  nodeName: n1
  pool: {name: n1-nic}
  devices:
  - name: nic-0
    allowMultipleAllocations: true
    capacity:
      bandwidth: {value: 10Gi, requestPolicy: {default: 1Gi, validRange: {min: 1Gi, step: 1Gi}}}
---
)";
  // Plain claims, one per pod: deallocated when their pod goes, which requeues the others.
  auto claim = [](const std::string& name, const std::string& request) {
    return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
           ", namespace: default}\nspec:\n  devices:\n    requests:\n" + request + "---\n";
  };
  const std::string mem = "device.capacity['gpu.example.com'].memory.compareTo(quantity('";
  auto gpu = [&](const std::string& size) {
    return "    - name: gpu\n      exactly: {deviceClassName: gpu, selectors: [{cel: "
           "{expression: \"" +
           mem + size + "')) == 0\"}}]}\n";
  };
  const std::string nic =
      "    - name: nic\n      exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: "
      "3500Mi}}}\n";
  auto pod = [](const std::string& name, const std::string& ann) {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
           ", namespace: default, annotations: {" + ann +
           "}}\nspec:\n  resourceClaims: [{name: dev, resourceClaimName: " + name +
           "}]\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: "
           "[{name: dev}]}}]\n---\n";
  };
  const std::string ten = "simulation.phalanx.dev/duration-seconds: \"10\"";
  const std::string later =
      "simulation.phalanx.dev/arrival-seconds: \"1\", simulation.phalanx.dev/duration-seconds: "
      "\"10\"";
  std::string objects = cluster;
  for (const auto& [name, request, ann] : {std::tuple{"half-a", gpu("40Gi"), ten},
                                           {"half-b", gpu("40Gi"), ten},
                                           {"whole", gpu("80Gi"), later},
                                           {"nic-a", nic, ten},
                                           {"nic-b", nic, ten},
                                           {"nic-c", nic, later}}) {
    objects += claim(name, request) + pod(name, ann);
  }
  Scenario sc = LoadText("pools", objects);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_TRUE(r.dra_errors.empty()) << r.dra_errors[0];
  auto at = [&](const std::string& name) {
    const PodOutcome* o = Find(r, "default/" + name);
    EXPECT_TRUE(o && o->scheduled_s) << name << "\n" << FormatSummary(r);
    return o && o->scheduled_s ? *o->scheduled_s : -1.0;
  };
  EXPECT_EQ(at("half-a"), 0.0);
  EXPECT_EQ(at("half-b"), 0.0);
  EXPECT_GE(at("whole"), 10.0);  // the counters are free once both halves are gone
  EXPECT_EQ(at("nic-a"), 0.0);
  EXPECT_EQ(at("nic-b"), 0.0);
  EXPECT_GE(at("nic-c"), 10.0);  // 4Gi + 4Gi + 4Gi > 10Gi
}

}  // namespace
}  // namespace phalanx::sim

namespace phalanx::sim {
namespace {

// Extended resources backed by DRA (DeviceClass extendedResourceName, KEP-5004): a plain
// `nvidia.com/gpu` request runs on a node that has no such allocatable but a ResourceSlice
// of the class's devices; the scheduler creates the pod's claim (owned by it, annotated,
// reserved for it), and deletes nothing else. The device-plugin node (allocatable
// nvidia.com/gpu: 1) serves a one-GPU pod the classic way, without a claim. A three-GPU pod
// waits until the first pod ends and its claim is gone, then takes three of the four.
TEST(DraSimulationTest, ExtendedResourceRunsOnDraOnlyNodeThroughItsDeviceClass) {
  const std::string yaml = R"(apiVersion: v1
kind: Node
metadata: {name: dra-node}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: dp-node, labels: {role: device-plugin}}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "1"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  extendedResourceName: nvidia.com/gpu
  selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: dra-node-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: dra-node
  pool: {name: dra-node}
  devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, {name: gpu-3}]
---
apiVersion: v1
kind: Pod
metadata:
  name: two
  annotations: {simulation.phalanx.dev/duration-seconds: "100"}
spec:
  containers:
  - name: main
    resources: {requests: {cpu: "1", nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: one
  annotations: {simulation.phalanx.dev/arrival-seconds: "5"}
spec:
  nodeSelector: {role: device-plugin}
  containers:
  - name: main
    resources: {requests: {cpu: "1", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: three
  annotations: {simulation.phalanx.dev/arrival-seconds: "10"}
spec:
  containers:
  - name: main
    resources: {requests: {cpu: "1", nvidia.com/gpu: "3"}, limits: {nvidia.com/gpu: "3"}}
)";
  Scenario sc = LoadText("extended", yaml);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations[0];
  EXPECT_TRUE(r.dra_errors.empty()) << r.dra_errors[0];
  const PodOutcome* two = Find(r, "default/two");
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->node, "dra-node") << two->reason;  // dp-node has one GPU only
  const PodOutcome* one = Find(r, "default/one");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->node, "dp-node") << one->reason;
  const PodOutcome* three = Find(r, "default/three");
  ASSERT_NE(three, nullptr);
  EXPECT_EQ(three->node, "dra-node") << three->reason;
  ASSERT_TRUE(three->scheduled_s.has_value());
  // Not before `two` ended (100 s after it was bound at 0) and its claim was deleted.
  EXPECT_GE(*three->scheduled_s, 100.0);
  EXPECT_GE(three->attempts, 2);
  // At the end: `two`'s claim is gone with it; `three`'s holds three devices for it; the
  // device-plugin pod has none.
  EXPECT_TRUE(Claim(r, "default/two-extended-resources-").empty()) << FormatSummary(r);
  const std::string claim = Claim(r, "default/three-extended-resources-");
  ASSERT_FALSE(claim.empty()) << FormatSummary(r);
  EXPECT_EQ(claim.substr(claim.find(':')),
            ": gpu.nvidia.com/dra-node/gpu-0, gpu.nvidia.com/dra-node/gpu-1, "
            "gpu.nvidia.com/dra-node/gpu-2 (reserved for three)")
      << claim;
  EXPECT_TRUE(Claim(r, "default/one-").empty());
  EXPECT_EQ(r.dra_claims.size(), 1u) << FormatSummary(r);
}

// Without the DeviceClass the same pod is NodeResourcesFit's: Insufficient on both nodes.
TEST(DraSimulationTest, ExtendedResourceWithoutDeviceClassIsInsufficient) {
  const std::string yaml = R"(apiVersion: v1
kind: Node
metadata: {name: dra-node}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: dra-node-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: dra-node
  pool: {name: dra-node}
  devices: [{name: gpu-0}]
---
apiVersion: v1
kind: Pod
metadata: {name: one}
spec:
  containers:
  - name: main
    resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
)";
  Scenario sc = LoadText("extended-noclass", yaml);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(), &r), absl::OkStatus());
  const PodOutcome* one = Find(r, "default/one");
  ASSERT_NE(one, nullptr);
  EXPECT_TRUE(one->node.empty());
  EXPECT_NE(one->reason.find("Insufficient nvidia.com/gpu"), std::string::npos) << one->reason;
  EXPECT_TRUE(r.dra_claims.empty());
}

// ---- KEP-5007: device binding conditions ----

// Two nodes and a fabric pool offered to both (allNodes) with one device that binds to the
// node it is allocated for and becomes usable when its driver sets FabricDeviceReady
// (FabricDeviceFailed: it cannot), as CoHDI's composable-dra-driver publishes them. Claims
// c1 (pod a at 0 s) and c2 (pod b at `b_arrival` s) each want one such device.
std::string FabricScenario(int b_arrival) {
  std::string out =
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
      "status: {capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}}\n---\n"
      "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
      "status: {capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}}\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: fabric-gpu}\n"
      "spec: {selectors: [{cel: {expression: \"device.driver == 'fabric.example.com'\"}}]}\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: fabric}\n"
      "spec:\n  driver: fabric.example.com\n  allNodes: true\n  pool: {name: fabric}\n"
      "  devices:\n  - name: gpu-0\n    bindsToNode: true\n"
      "    bindingConditions: [FabricDeviceReady]\n"
      "    bindingFailureConditions: [FabricDeviceFailed]\n---\n";
  for (const char* c : {"c1", "c2"}) {
    out += std::string("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: ") +
           c +
           ", namespace: default}\nspec: {devices: {requests: [{name: gpu, exactly: "
           "{deviceClassName: fabric-gpu}}]}}\n---\n";
  }
  auto pod = [](const std::string& name, const std::string& claim, int arrival) {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
           ", namespace: default, annotations: {simulation.phalanx.dev/arrival-seconds: \"" +
           std::to_string(arrival) + "\"}}\nspec:\n  resourceClaims: [{name: gpu, " +
           "resourceClaimName: " + claim +
           "}]\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}, claims: "
           "[{name: gpu}]}}]\n---\n";
  };
  out += pod("a", "c1", 0);
  if (b_arrival >= 0) out += pod("b", "c2", b_arrival);
  return out;
}

constexpr char kC1Key[] = "ResourceClaim.resource.k8s.io/default/c1";

// The claim's stored status, parsed.
std::optional<dra::ResourceClaim> StoredClaim(store::Store& st, const std::string& key) {
  auto obj = st.GetObject(key);
  if (!obj) return std::nullopt;
  auto c = dra::ParseResourceClaim(*obj);
  if (!c.ok()) return std::nullopt;
  return *c;
}

// Plays the fabric driver: claim `key`'s status.devices gets gpu-0 with condition `type`
// True (reason FabricError / Attached, message M).
void SetDeviceCondition(store::Store& st, const std::string& key, const std::string& type,
                        const std::string& reason, const std::string& message) {
  auto obj = st.GetObject(key);
  ASSERT_NE(obj, nullptr);
  api::Unstructured u = *obj;
  YAML::Node doc = YAML::Clone(*u.object);
  YAML::Node cond;
  cond["type"] = type;
  cond["status"] = "True";
  cond["reason"] = reason;
  cond["message"] = message;
  cond["lastTransitionTime"] = "1970-01-01T00:00:30Z";
  YAML::Node dev;
  dev["driver"] = "fabric.example.com";
  dev["pool"] = "fabric";
  dev["device"] = "gpu-0";
  dev["conditions"].push_back(cond);
  YAML::Node devs(YAML::NodeType::Sequence);
  devs.push_back(dev);
  doc["status"]["devices"] = devs;
  u.object = std::make_shared<const YAML::Node>(doc);
  ASSERT_TRUE(st.UpdateObject(u).ok());
}

// Nobody sets the condition: a waits in PreBind holding the device (b, arriving at 10 s,
// cannot have it) until upstream's default bindingTimeout of 600 s ends the wait with
// "device binding timeout"; a's retry deallocates c1, and the freed device goes to b.
TEST(DraBindingConditionsTest, UnmetConditionTimesOutAndFreesTheDeviceForAnotherPod) {
  Scenario sc = LoadText("binding-timeout", FabricScenario(10));
  SimulationOptions o = Options();
  o.stop_at_s = 700;
  std::optional<double> failed_at;
  std::string failure, a_at_300 = "unset", c1_at_300, timestamp_at_300;
  o.hooks.on_step_store = [&](double t, store::Store& st) {
    auto ev = st.LastEventFor("default/a");
    if (!failed_at && ev && ev->reason == "FailedScheduling" &&
        ev->message.find("binding") != std::string::npos) {
      failed_at = t;
      failure = ev->message;
    }
    if (t >= 300 && a_at_300 == "unset") {
      auto pod = st.GetPod("default", "a");
      a_at_300 = pod ? pod->spec.node_name : "gone";
      auto c = StoredClaim(st, kC1Key);
      c1_at_300 = c && c->allocation && c->reserved_for.size() == 1 ? c->reserved_for[0].name : "";
      auto obj = st.GetObject(kC1Key);
      timestamp_at_300 = (*obj->object)["status"]["allocation"]["allocationTimestamp"].Scalar();
    }
  };
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  EXPECT_TRUE(r.dra_errors.empty()) << r.dra_errors[0];
  // At 300 s a is still waiting in PreBind: not bound, c1 allocated and reserved for it,
  // allocated at the start of the virtual clock.
  EXPECT_EQ(a_at_300, "");
  EXPECT_EQ(c1_at_300, "a");
  EXPECT_EQ(timestamp_at_300, "1970-01-01T00:00:00Z");
  ASSERT_TRUE(failed_at.has_value()) << FormatSummary(r);
  EXPECT_EQ(*failed_at, 600.0);
  EXPECT_NE(failure.find("running PreBind plugin \"DynamicResources\": device binding timeout"),
            std::string::npos)
      << failure;
  // The device went to b after c1 was deallocated; b waits in its turn (until 1201 s).
  EXPECT_EQ(Claim(r, "default/c1"), "default/c1: not allocated");
  EXPECT_EQ(Claim(r, "default/c2"), "default/c2: fabric.example.com/fabric/gpu-0 (reserved for b)");
  EXPECT_TRUE(Find(r, "default/a")->node.empty());
  EXPECT_TRUE(Find(r, "default/b")->node.empty());
}

// The driver sets FabricDeviceReady True at 30 s (through the store, as its status update):
// the next poll, 5 s later (upstream polls every 5 s), lets a bind. The allocation is
// pinned to a's node although the pool reaches both nodes (bindsToNode), and the result
// carries the device's binding conditions.
TEST(DraBindingConditionsTest, ConditionSetTrueLaterLetsThePodBind) {
  Scenario sc = LoadText("binding-ready", FabricScenario(-1));
  SimulationOptions o = Options();
  o.hooks.on_step_store = [&](double t, store::Store& st) {
    if (t == 30) SetDeviceCondition(st, kC1Key, "FabricDeviceReady", "Attached", "");
  };
  std::optional<dra::ResourceClaim> end;
  std::string timestamp;
  o.hooks.on_end = [&](scheduler::Scheduler&, store::Store& st) {
    end = StoredClaim(st, kC1Key);
    timestamp =
        (*st.GetObject(kC1Key)->object)["status"]["allocation"]["allocationTimestamp"].Scalar();
  };
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  EXPECT_TRUE(r.invariant_violations.empty());
  const PodOutcome* a = Find(r, "default/a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->scheduled_s.has_value()) << a->reason;
  EXPECT_EQ(*a->scheduled_s, 35.0);
  ASSERT_FALSE(a->node.empty());
  ASSERT_TRUE(end.has_value());
  ASSERT_TRUE(end->allocation.has_value());
  ASSERT_TRUE(end->allocation->node_selector.has_value());
  const auto& terms = end->allocation->node_selector->node_selector_terms;
  ASSERT_EQ(terms.size(), 1u);
  ASSERT_EQ(terms[0].match_fields.size(), 1u);
  EXPECT_EQ(terms[0].match_fields[0].key, "metadata.name");
  EXPECT_EQ(terms[0].match_fields[0].values, std::vector<std::string>{a->node});
  ASSERT_EQ(end->allocation->devices.size(), 1u);
  EXPECT_EQ(end->allocation->devices[0].binding_conditions,
            std::vector<std::string>{"FabricDeviceReady"});
  EXPECT_EQ(end->allocation->devices[0].binding_failure_conditions,
            std::vector<std::string>{"FabricDeviceFailed"});
  EXPECT_EQ(timestamp, "1970-01-01T00:00:00Z");
  // The driver's device status is kept by the scheduler's writes.
  ASSERT_EQ(end->devices.size(), 1u);
  EXPECT_EQ(end->devices[0].conditions[0].type, "FabricDeviceReady");
  EXPECT_EQ(Claim(r, "default/c1"), "default/c1: fabric.example.com/fabric/gpu-0 (reserved for a)");
}

// FabricDeviceFailed True at 30 s fails the binding at the next poll (35 s), long before the
// timeout, with the condition's reason and message; the retry deallocates c1 (its device
// status goes with the allocation) and allocates the free device anew.
TEST(DraBindingConditionsTest, FailureConditionFailsTheBindingAtOnce) {
  Scenario sc = LoadText("binding-failed", FabricScenario(-1));
  SimulationOptions o = Options();
  o.stop_at_s = 100;
  std::optional<double> failed_at, deallocated_at;
  std::string failure;
  o.hooks.on_step_store = [&](double t, store::Store& st) {
    if (t == 30) SetDeviceCondition(st, kC1Key, "FabricDeviceFailed", "FabricError", "link down");
    auto ev = st.LastEventFor("default/a");
    if (!failed_at && ev && ev->message.find("binding failed") != std::string::npos) {
      failed_at = t;
      failure = ev->message;
    }
    auto c = StoredClaim(st, kC1Key);
    if (failed_at && !deallocated_at && c && !c->allocation) deallocated_at = t;
  };
  std::optional<dra::ResourceClaim> end;
  o.hooks.on_end = [&](scheduler::Scheduler&, store::Store& st) { end = StoredClaim(st, kC1Key); };
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  ASSERT_TRUE(failed_at.has_value()) << FormatSummary(r);
  EXPECT_EQ(*failed_at, 35.0);
  EXPECT_NE(failure.find("claim c1 binding failed: reason=FabricError, message=\"link down\""),
            std::string::npos)
      << failure;
  EXPECT_TRUE(Find(r, "default/a")->node.empty());
  ASSERT_TRUE(deallocated_at.has_value());
  EXPECT_GT(*deallocated_at, 35.0);  // the retry after backoff
  EXPECT_LT(*deallocated_at, 600.0);
  // Allocated again after the deallocation, without the failed device status.
  ASSERT_TRUE(end.has_value());
  ASSERT_TRUE(end->allocation.has_value());
  EXPECT_TRUE(end->devices.empty());
  ASSERT_TRUE(end->allocation->allocation_timestamp.has_value());
  EXPECT_GT(*end->allocation->allocation_timestamp, 35 * api::kNanosPerSecond);
}

// DynamicResourcesArgs' bindingTimeout from a KubeSchedulerConfiguration reaches the plugin:
// with 60s the unmet condition ends the wait at 60 s instead of upstream's default 600 s.
TEST(DraBindingConditionsTest, BindingTimeoutFromTheConfigurationEndsTheWait) {
  Scenario sc = LoadText("binding-timeout-config", FabricScenario(-1));
  SimulationOptions o = Options();
  auto cfg = config::DecodeConfiguration(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
      "  - name: DynamicResources\n    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: "
      "DynamicResourcesArgs, bindingTimeout: 60s}\n",
      "sched.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  o.config = *cfg;
  o.stop_at_s = 100;
  std::optional<double> failed_at;
  std::string failure;
  o.hooks.on_step_store = [&](double t, store::Store& st) {
    auto ev = st.LastEventFor("default/a");
    if (!failed_at && ev && ev->reason == "FailedScheduling") {
      failed_at = t;
      failure = ev->message;
    }
  };
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  ASSERT_TRUE(failed_at.has_value()) << FormatSummary(r);
  EXPECT_EQ(*failed_at, 60.0);
  EXPECT_NE(failure.find("device binding timeout"), std::string::npos) << failure;
}

}  // namespace
}  // namespace phalanx::sim
