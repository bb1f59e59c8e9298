// Volumes end to end through the simulator (Must show): a StatefulSet with
// WaitForFirstConsumer local PVs on 4 nodes of which 3 have a PV; a Coscheduling gang of 4
// that needs one local PV each with only 3 available (binds nothing, holds no PV); dynamic
// provisioning and generic ephemeral volumes completed by the simulator's controllers
// (sim/volume_controllers.h); bad input.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "volume/catalog.h"

namespace phalanx::sim {
namespace {

std::string Nodes() {
  std::string out;
  for (const char* n : {"node-a", "node-b", "node-c", "node-d"}) {
    out += std::string("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: ") + n +
           "\n  labels: {kubernetes.io/hostname: " + n +
           "}\nstatus:\n  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n";
  }
  return out;
}

std::string LocalPVs() {
  std::string out = R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-storage}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
)";
  for (const char* n : {"a", "b", "c"}) {
    out += std::string("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: local-pv-") +
           n +
           "}\nspec:\n  capacity: {storage: 100Gi}\n  accessModes: [ReadWriteOnce]\n"
           "  storageClassName: local-storage\n  nodeAffinity:\n    required:\n"
           "      nodeSelectorTerms:\n      - matchExpressions:\n"
           "        - {key: kubernetes.io/hostname, operator: In, values: [node-" +
           n + "]}\n";
  }
  return out;
}

struct SimRun {
  SimulationResult result;
  volume::ViewPtr view;  // the scheduler's storage objects at the end
  std::map<std::string, const PodOutcome*> by_pod;
};

SimRun Simulate(const std::string& name, const std::string& manifests) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / (name + ".yaml");
  std::ofstream(path) << manifests;
  Scenario sc;
  EXPECT_EQ(LoadManifestScenario(path.string(), &sc), absl::OkStatus());
  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  SimRun r;
  scheduler::Scheduler* sched = nullptr;
  o.hooks.on_start = [&](scheduler::Scheduler& s) { sched = &s; };
  o.hooks.on_step = [&](double) { r.view = sched->volumes().Snapshot(); };
  EXPECT_EQ(RunSimulation(sc, o, &r.result), absl::OkStatus());
  for (const auto& out : r.result.outcomes) r.by_pod[out.pod] = &out;
  return r;
}

TEST(VolumeSimTest, StatefulSetWithLocalPVsOnThreeOfFourNodes) {
  std::ifstream in(std::string(PHALANX_SOURCE_DIR) + "/examples/volumes/statefulset-local-pv.yaml");
  ASSERT_TRUE(in.good());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SimRun r = Simulate("sts", text);
  ASSERT_EQ(r.result.outcomes.size(), 4u);
  ASSERT_TRUE(r.view);
  int bound = 0;
  for (int i = 0; i < 4; ++i) {
    const std::string pod = "default/db-" + std::to_string(i);
    ASSERT_TRUE(r.by_pod.count(pod)) << pod;
    const PodOutcome& o = *r.by_pod[pod];
    volume::PVCPtr claim = r.view->PVC("default/data-db-" + std::to_string(i));
    ASSERT_TRUE(claim) << pod;
    if (o.node.empty()) {
      EXPECT_NE(o.reason.find("node(s) didn't find available persistent volumes to bind"),
                std::string::npos)
          << o.reason;
      EXPECT_EQ(claim->volume_name, "") << pod;
      continue;
    }
    ++bound;
    // The claim is Bound (by the simulator's PV controller) to the PV of the pod's node.
    ASSERT_FALSE(claim->volume_name.empty()) << pod;
    EXPECT_EQ(claim->phase, "Bound") << pod;
    volume::PVPtr pv = r.view->PV(claim->volume_name);
    ASSERT_TRUE(pv);
    EXPECT_EQ(pv->name, "local-pv-" + o.node.substr(5)) << pod << " on " << o.node;
    ASSERT_TRUE(pv->claim_ref.has_value());
    EXPECT_EQ(pv->claim_ref->Key(), claim->Key());
    EXPECT_EQ(pv->phase, "Bound") << YAML::Dump(*pv->object->object);
  }
  EXPECT_EQ(bound, 3);
  EXPECT_TRUE(r.result.invariant_violations.empty());
}

TEST(VolumeSimTest, GangOfFourWithThreeLocalPVsBindsNothingAndHoldsNoPV) {
  std::string m = Nodes() + LocalPVs() + R"(---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: default}
spec: {minMember: 4}
)";
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    m += "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: ckpt-" + n +
         ", namespace: default}\nspec:\n  accessModes: [ReadWriteOnce]\n"
         "  storageClassName: local-storage\n  resources: {requests: {storage: 10Gi}}\n";
    m += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: worker-" + n +
         "\n  namespace: default\n  labels: {scheduling.x-k8s.io/pod-group: train}\n"
         "spec:\n  containers: [{name: w, image: busybox, resources: {requests: {cpu: \"1\"}}}]\n"
         "  volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt-" +
         n + "}}]\n";
  }
  SimRun r = Simulate("gang", m);
  ASSERT_EQ(r.result.outcomes.size(), 4u);
  for (const auto& o : r.result.outcomes) {
    EXPECT_EQ(o.node, "") << o.pod;
    EXPECT_NE(o.reason.find("3 of 4 pending members fit, 4 needed"), std::string::npos) << o.reason;
  }
  ASSERT_TRUE(r.view);
  for (const char* pv : {"local-pv-a", "local-pv-b", "local-pv-c"}) {
    EXPECT_FALSE(r.view->PV(pv)->claim_ref.has_value()) << pv << " is held";
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r.view->PVC("default/ckpt-" + std::to_string(i))->volume_name, "");
  }

  // With a 4th PV the same gang binds, every member on the node of a distinct PV.
  std::string pv_d = LocalPVs().substr(LocalPVs().rfind("---"));
  for (std::string::size_type p; (p = pv_d.find("-c")) != std::string::npos;)
    pv_d.replace(p, 2, "-d");
  SimRun ok = Simulate("gang-fits", m + pv_d);
  std::set<std::string> pvs;
  for (const auto& o : ok.result.outcomes) {
    ASSERT_NE(o.node, "") << o.pod << ": " << o.reason;
    const std::string claim = "default/ckpt-" + o.pod.substr(o.pod.size() - 1);
    pvs.insert(ok.view->PVC(claim)->volume_name);
    EXPECT_EQ(ok.view->PVC(claim)->volume_name, "local-pv-" + o.node.substr(5));
  }
  EXPECT_EQ(pvs.size(), 4u);
}

TEST(VolumeSimTest, ProvisioningAndEphemeralVolumesAreCompletedByTheControllers) {
  const std::string m = Nodes() + R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: csi}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - {key: kubernetes.io/hostname, values: [node-c]}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: w, image: busybox}]
  volumes:
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        metadata: {labels: {type: scratch}}
        spec:
          accessModes: [ReadWriteOnce]
          storageClassName: csi
          resources: {requests: {storage: 1Gi}}
)";
  SimRun r = Simulate("eph", m);
  ASSERT_EQ(r.result.outcomes.size(), 1u);
  EXPECT_EQ(r.result.outcomes[0].node, "node-c") << r.result.outcomes[0].reason;
  volume::PVCPtr claim = r.view->PVC("default/web-scratch");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->annotations.at(volume::kAnnSelectedNode), "node-c");
  volume::PVPtr pv = r.view->PV(claim->volume_name);
  ASSERT_TRUE(pv) << claim->volume_name;
  EXPECT_EQ(pv->capacity, int64_t{1} << 30);
  EXPECT_EQ(pv->claim_ref->Key(), "default/web-scratch");
}

TEST(VolumeSimTest, ImmediateClaimsAreBoundByThePVControllerStandIn) {
  // Before the PV controller binds it the pod would be rejected ("pod has unbound immediate
  // PersistentVolumeClaims"); the stand-in binds it at creation to the smallest PV that
  // fits, and the pod follows the PV's node affinity.
  const std::string m = Nodes() + R"(---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: manual}
provisioner: kubernetes.io/no-provisioner
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-big}
spec:
  capacity: {storage: 500Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-fit}
spec:
  capacity: {storage: 20Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [node-b]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  resources: {requests: {storage: 10Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec:
  containers: [{name: w, image: busybox}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
)";
  SimRun r = Simulate("immediate", m);
  ASSERT_EQ(r.result.outcomes.size(), 1u);
  EXPECT_EQ(r.result.outcomes[0].node, "node-b") << r.result.outcomes[0].reason;
  EXPECT_EQ(r.view->PVC("default/data")->volume_name, "pv-fit");
}

// Pre-bound claims (spec.volumeName written by the user): the simulator's PV controller
// completes a claim naming a free PV that satisfies it (the PV gets the claimRef, the claim
// bind-completed) and the pod follows the PV's node affinity; a claim naming a PV that
// another claim holds stays Pending, and its pod is unschedulable as an unbound Immediate
// claim, as kube-scheduler leaves it (binder.go: prebound PVCs are treated as unbound
// immediate binding).
TEST(VolumeSimTest, PreBoundClaimsBindOnlyWhenTheirPVIsFree) {
  std::string m = Nodes() + LocalPVs();
  for (const char* c : {"want-a", "held-a", "also-a"}) {
    m += std::string("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: ") + c +
         ", namespace: default}\nspec:\n  accessModes: [ReadWriteOnce]\n"
         "  storageClassName: local-storage\n  volumeName: local-pv-" +
         (std::string(c) == "want-a" ? "b" : "a") + "\n  resources: {requests: {storage: 1Gi}}\n";
  }
  for (const char* c : {"want-a", "held-a", "also-a"}) {
    m += std::string("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-") + c +
         ", namespace: default}\nspec:\n  containers: [{name: w, image: busybox}]\n"
         "  volumes: [{name: v, persistentVolumeClaim: {claimName: " +
         c + "}}]\n";
  }
  SimRun r = Simulate("prebound", m);
  ASSERT_EQ(r.by_pod.size(), 3u);
  EXPECT_EQ(r.by_pod.at("default/p-want-a")->node, "node-b")
      << r.by_pod.at("default/p-want-a")->reason;
  EXPECT_TRUE(r.view->PVC("default/want-a")->FullyBound());
  // held-a and also-a both name local-pv-a: the first one the controller sees gets it.
  const bool held_first = r.view->PVC("default/held-a")->FullyBound();
  const std::string winner = held_first ? "held-a" : "also-a";
  const std::string loser = held_first ? "also-a" : "held-a";
  EXPECT_TRUE(r.view->PVC("default/" + winner)->FullyBound());
  EXPECT_FALSE(r.view->PVC("default/" + loser)->FullyBound());
  EXPECT_EQ(r.by_pod.at("default/p-" + winner)->node, "node-a");
  EXPECT_EQ(r.by_pod.at("default/p-" + loser)->node, "");
  EXPECT_NE(r.by_pod.at("default/p-" + loser)
                ->reason.find("pod has unbound immediate PersistentVolumeClaims"),
            std::string::npos)
      << r.by_pod.at("default/p-" + loser)->reason;
}

TEST(VolumeSimTest, BadInputLeavesPodsPendingWithClearReasons) {
  const std::string m = Nodes() + LocalPVs() + R"(---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-bad}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local-storage
  nodeAffinity: {required: {nodeSelectorTerms: []}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: on-bad, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local-storage
  volumeName: pv-bad
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: negative, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local-storage
  resources: {requests: {storage: "-1Gi"}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: no-class, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: gold
  resources: {requests: {storage: 1Gi}}
)";
  std::string pods;
  for (const char* c : {"on-bad", "negative", "no-class"}) {
    pods += std::string("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-") + c +
            ", namespace: default}\nspec:\n  containers: [{name: w, image: busybox}]\n"
            "  volumes: [{name: v, persistentVolumeClaim: {claimName: " +
            c + "}}]\n";
  }
  SimRun r = Simulate("bad", m + pods);
  const std::map<std::string, std::string> want = {
      {"default/p-on-bad",
       "PersistentVolume \"pv-bad\": spec.nodeAffinity.required.nodeSelectorTerms: Required value"},
      {"default/p-negative",
       "PersistentVolumeClaim \"default/negative\": spec.resources.requests[storage]: Invalid "
       "value: \"-1Gi\": must be greater than zero"},
      {"default/p-no-class", "storageclass.storage.k8s.io \"gold\" not found"},
  };
  for (const auto& [pod, reason] : want) {
    ASSERT_TRUE(r.by_pod.count(pod)) << pod;
    EXPECT_EQ(r.by_pod[pod]->node, "") << pod;
    EXPECT_NE(r.by_pod[pod]->reason.find(reason), std::string::npos)
        << pod << ": " << r.by_pod[pod]->reason;
  }
}

}  // namespace
}  // namespace phalanx::sim
