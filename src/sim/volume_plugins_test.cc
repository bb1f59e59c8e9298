// VolumeZone, NodeVolumeLimits and VolumeRestrictions through the simulator, in the
// default profile: examples/volumes/zone-mismatch.yaml (a pod whose PV is in a zone without
// nodes stays pending with upstream's reason), a CSINode volume limit, and two pods sharing
// an EBS volume.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

std::map<std::string, PodOutcome> Simulate(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / (name + ".yaml");
  std::ofstream(path) << text;
  Scenario sc;
  EXPECT_EQ(LoadManifestScenario(path.string(), &sc), absl::OkStatus());
  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  SimulationResult r;
  EXPECT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  std::map<std::string, PodOutcome> out;
  for (const auto& p : r.outcomes) out[p.pod] = p;
  EXPECT_TRUE(r.invariant_violations.empty());
  return out;
}

std::string Read(const std::string& rel) {
  std::ifstream in(std::string(PHALANX_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(in.good()) << rel;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(VolumePluginsSimTest, ZoneMismatchExampleStaysPendingWithUpstreamsReason) {
  auto out = Simulate("zone", Read("examples/volumes/zone-mismatch.yaml"));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out["default/web"].node, "node-b") << out["default/web"].reason;
  EXPECT_EQ(out["default/db"].node, "");
  EXPECT_NE(out["default/db"].reason.find("2 node(s) had no available volume zone"),
            std::string::npos)
      << out["default/db"].reason;
}

std::string TwoNodes() {
  std::string out;
  for (const char* n : {"node-a", "node-b"}) {
    out += std::string("---\napiVersion: v1\nkind: Node\nmetadata: {name: ") + n +
           "}\nstatus:\n  capacity: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n";
  }
  return out;
}

TEST(VolumePluginsSimTest, CSINodeLimitAndSharedEBSVolume) {
  // node-a's CSINode allows no csi.example.com volume and node-b has no CSINode (no
  // limit): both CSI pods go to node-b. Two pods using one inline EBS volume may not share
  // a node (VolumeRestrictions), so they are on different nodes.
  std::string m = TwoNodes() + R"(---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-a}
spec:
  drivers: [{name: csi.example.com, nodeID: i-a, allocatable: {count: 0}}]
)";
  for (const char* n : {"1", "2"}) {
    m += std::string("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-") + n +
         "}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n"
         "  storageClassName: \"\"\n  csi: {driver: csi.example.com, volumeHandle: vol-" +
         n + "}\n  claimRef: {namespace: default, name: c-" + n +
         "}\n---\napiVersion: v1\n"
         "kind: PersistentVolumeClaim\nmetadata: {name: c-" +
         n +
         ", namespace: default}\n"
         "spec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: \"\"\n  volumeName: pv-" +
         n +
         "\n  resources: {requests: {storage: 1Gi}}\n---\napiVersion: v1\nkind: Pod\n"
         "metadata: {name: csi-" +
         n +
         ", namespace: default}\nspec:\n"
         "  containers: [{name: c, image: busybox}]\n"
         "  volumes: [{name: d, persistentVolumeClaim: {claimName: c-" +
         n + "}}]\n";
    m += std::string("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ebs-") + n +
         ", namespace: default}\nspec:\n  containers: [{name: c, image: busybox}]\n"
         "  volumes: [{name: d, awsElasticBlockStore: {volumeID: vol-shared}}]\n";
  }
  auto out = Simulate("limits", m);
  ASSERT_EQ(out.size(), 4u);
  // count 0 on node-a: both CSI pods go to node-b.
  EXPECT_EQ(out["default/csi-1"].node, "node-b") << out["default/csi-1"].reason;
  EXPECT_EQ(out["default/csi-2"].node, "node-b") << out["default/csi-2"].reason;
  // The two EBS pods are on different nodes.
  ASSERT_NE(out["default/ebs-1"].node, "") << out["default/ebs-1"].reason;
  ASSERT_NE(out["default/ebs-2"].node, "") << out["default/ebs-2"].reason;
  EXPECT_NE(out["default/ebs-1"].node, out["default/ebs-2"].node);
}

TEST(VolumePluginsSimTest, ExceedingTheVolumeLimitEverywhereGivesUpstreamsReason) {
  std::string m = TwoNodes();
  for (const char* node : {"node-a", "node-b"}) {
    m += std::string("---\napiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: ") +
         node +
         "}\nspec:\n  drivers: [{name: ebs.csi.aws.com, nodeID: x, allocatable: {count: 0}}]\n";
  }
  m += R"(---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c-1, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: pv-1
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: c-1}}]
)";
  auto out = Simulate("limit-all", m);
  EXPECT_EQ(out["default/p"].node, "");
  EXPECT_NE(out["default/p"].reason.find("2 node(s) exceed max volume count"), std::string::npos)
      << out["default/p"].reason;
}

TEST(VolumePluginsSimTest, MigratedInlineEBSCountsAgainstTheCSINodeLimit) {
  // node-a has a CSINode, so its inline EBS volumes are migrated to ebs.csi.aws.com, whose
  // count is 0 there; node-b has none. Two pods share one EBS volume: the first goes to
  // node-b, the second fits nowhere (limit on node-a, disk conflict on node-b).
  std::string m = TwoNodes() + R"(---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-a}
spec:
  drivers: [{name: ebs.csi.aws.com, nodeID: i-a, allocatable: {count: 0}}]
)";
  for (const char* n : {"1", "2"}) {
    m += std::string("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ebs-") + n +
         ", namespace: default}\nspec:\n  containers: [{name: c, image: busybox}]\n"
         "  volumes: [{name: d, awsElasticBlockStore: {volumeID: vol-shared}}]\n";
  }
  auto out = Simulate("migrated", m);
  int bound = 0;
  for (const char* p : {"default/ebs-1", "default/ebs-2"}) {
    if (out[p].node.empty()) {
      EXPECT_NE(out[p].reason.find("1 node(s) exceed max volume count"), std::string::npos)
          << out[p].reason;
      EXPECT_NE(out[p].reason.find("1 node(s) had no available disk"), std::string::npos)
          << out[p].reason;
    } else {
      EXPECT_EQ(out[p].node, "node-b");
      ++bound;
    }
  }
  EXPECT_EQ(bound, 1);
}

}  // namespace
}  // namespace phalanx::sim
