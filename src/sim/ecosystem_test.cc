// The ecosystem's published examples (examples/ecosystem, copied unchanged from each
// project; README.md there names the repository, path and commit of each file) run in the
// simulator on one 8-node cluster (examples/ecosystem/00-cluster.yaml: 2 zones x 2 racks x
// 2 nodes, the first node of each rack with 8 GPUs) under examples/ecosystem/schedulers.yaml
// (a profile per scheduler name). Each test checks what the project's documentation
// promises of its example — the pods it makes, the nodes, racks or zones they land on, gang
// and queue effects — or that what Phalanx does not model is refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

const std::string kEco = std::string(PHALANX_SOURCE_DIR) + "/examples/ecosystem/";
const std::string kTestdata = std::string(PHALANX_SOURCE_DIR) + "/src/sim/testdata/ecosystem/";

struct EcoRun {
  api::Status load, run;
  Scenario sc;
  SimulationResult res;
  std::map<std::string, std::map<std::string, std::string>> node_labels;  // node -> labels

  const PodOutcome* Pod(const std::string& key) const {
    for (const auto& o : res.outcomes) {
      if (o.pod == key) return &o;
    }
    return nullptr;
  }
  // Outcomes of the pods whose key starts with `prefix`.
  std::vector<const PodOutcome*> Pods(const std::string& prefix) const {
    std::vector<const PodOutcome*> v;
    for (const auto& o : res.outcomes) {
      if (o.pod.rfind(prefix, 0) == 0) v.push_back(&o);
    }
    return v;
  }
  std::string Label(const std::string& node, const std::string& key) const {
    auto n = node_labels.find(node);
    if (n == node_labels.end()) return "";
    auto l = n->second.find(key);
    return l == n->second.end() ? "" : l->second;
  }
  bool GpuNode(const std::string& node) const {
    return !Label(node, "nvidia.com/gpu.product").empty();
  }
  // The distinct values of label `key` of the nodes the pods are bound to.
  std::set<std::string> Domains(const std::vector<const PodOutcome*>& pods,
                                const std::string& key) const {
    std::set<std::string> d;
    for (const auto* o : pods) {
      if (!o->node.empty()) d.insert(Label(o->node, key));
    }
    return d;
  }
  size_t Bound(const std::vector<const PodOutcome*>& pods) const {
    return static_cast<size_t>(std::count_if(pods.begin(), pods.end(),
                                             [](const PodOutcome* o) { return o->scheduled_s; }));
  }
  bool Warned(const std::string& part) const {
    return std::any_of(res.warnings.begin(), res.warnings.end(),
                       [&](const std::string& w) { return w.find(part) != std::string::npos; });
  }
  std::string Warnings() const {
    std::string s;
    for (const auto& w : res.warnings) s += "\n  " + w;
    return s;
  }
};

// Loads `files` (under examples/ecosystem unless absolute) after the cluster, applies
// `adjust` (e.g. a later arrival for one pod: the published files carry no timing), and
// runs them under `config` ("" = Phalanx's defaults).
EcoRun Simulate(std::vector<std::string> files, const std::string& config = "schedulers.yaml",
                const std::function<void(Scenario*)>& adjust = nullptr,
                const std::string& cluster = "00-cluster.yaml") {
  EcoRun r;
  std::vector<std::string> paths;
  for (const auto& f : std::vector<std::string>{cluster})
    paths.push_back(f[0] == '/' ? f : kEco + f);
  for (const auto& f : files) paths.push_back(f[0] == '/' ? f : kEco + f);
  r.load = LoadManifestScenario(paths, &r.sc);
  if (!r.load.ok()) return r;
  if (adjust) adjust(&r.sc);
  for (const auto& n : r.sc.nodes) r.node_labels[n.metadata.name] = n.metadata.labels;
  SimulationOptions o;
  o.seed = 1;
  if (config.empty()) {
    o.config = config::DefaultConfiguration();
  } else {
    auto c = config::LoadConfiguration(config[0] == '/' ? config : kEco + config);
    if (!c.ok()) {
      r.run = c.status();
      return r;
    }
    o.config = *c;
  }
  o.registry = plugins::NewInTreeRegistry();
  r.run = RunSimulation(r.sc, o, &r.res);
  return r;
}

// The pod `key` arrives `seconds` after the others.
std::function<void(Scenario*)> ArriveLater(const std::string& key, double seconds) {
  return [key, seconds](Scenario* sc) {
    for (auto& tp : sc->pods) {
      if (tp.pod.Key() == key) tp.arrival = static_cast<api::Timestamp>(seconds * 1e9);
    }
    std::stable_sort(sc->pods.begin(), sc->pods.end(),
                     [](const TimedPod& a, const TimedPod& b) { return a.arrival < b.arrival; });
  };
}

#define ASSERT_RAN(r)                               \
  ASSERT_TRUE((r).load.ok()) << (r).load.message(); \
  ASSERT_TRUE((r).run.ok()) << (r).run.message();   \
  EXPECT_TRUE((r).res.invariant_violations.empty()) \
      << (r).res.invariant_violations.size()        \
      << " violations, first: " << (r).res.invariant_violations[0]

const GangOutcome* Gang(const EcoRun& r, const std::string& key) {
  for (const auto& g : r.res.gangs.outcomes) {
    if (g.key == key) return &g;
  }
  return nullptr;
}

std::string Gangs(const EcoRun& r) {
  std::string s;
  for (const auto& g : r.res.gangs.outcomes) {
    s += "\n  " + g.key + " min " + std::to_string(g.min_member) + " bound " +
         std::to_string(g.bound);
  }
  return s;
}

// ---- KAI Scheduler (NVIDIA/KAI-Scheduler docs/) ----

// docs/quickstart: a GPU pod and a CPU-only pod in default-queue.
TEST(EcosystemKai, QuickstartPodsRunInTheirQueue) {
  EcoRun r = Simulate({"kai/default-queues.yaml", "kai/gpu-pod.yaml", "kai/cpu-only-pod.yaml"});
  ASSERT_RAN(r);
  const PodOutcome* gpu = r.Pod("default/gpu-pod");
  const PodOutcome* cpu = r.Pod("default/cpu-only-pod");
  ASSERT_TRUE(gpu && cpu);
  ASSERT_TRUE(gpu->scheduled_s && cpu->scheduled_s) << gpu->reason << " / " << cpu->reason;
  EXPECT_TRUE(r.GpuNode(gpu->node)) << gpu->node;
  ASSERT_FALSE(r.res.queues.empty());
  bool seen = false;
  for (const auto& q : r.res.queues) seen = seen || (q.name == "default-queue" && q.error.empty());
  EXPECT_TRUE(seen);
}

// docs/batch/batch-job.yaml: "This will create 2 pods that will be scheduled separately" —
// not a gang.
TEST(EcosystemKai, BatchJobPodsAreScheduledSeparately) {
  EcoRun r = Simulate({"kai/default-queues.yaml", "kai/batch-job.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/batch-job-");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(r.Bound(pods), 2u);
  for (const auto* p : pods) EXPECT_TRUE(r.GpuNode(p->node)) << p->pod << " on " << p->node;
  EXPECT_EQ(r.res.gangs.gangs, 0u) << Gangs(r);
}

// docs/batch/pytorch-job.yaml: "all 3 pods will be scheduled together" (a master and two
// workers, 1 GPU each).
TEST(EcosystemKai, PyTorchJobIsAGangOfThree) {
  EcoRun r = Simulate({"kai/default-queues.yaml", "kai/pytorch-job.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/pytorch-dist-mnist-nccl-");
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_TRUE(r.Pod("default/pytorch-dist-mnist-nccl-master-0"));
  EXPECT_TRUE(r.Pod("default/pytorch-dist-mnist-nccl-worker-1"));
  EXPECT_EQ(r.Bound(pods), 3u);
  const GangOutcome* g = Gang(r, "default/PyTorchJob-pytorch-dist-mnist-nccl");
  ASSERT_TRUE(g) << Gangs(r);
  EXPECT_EQ(g->min_member, 3);
  EXPECT_TRUE(g->started);
}

// docs/elastic/pytorch-elastic.yaml: elasticPolicy.minReplicas 1 — the job may start with
// one worker, so it is no all-or-nothing gang.
TEST(EcosystemKai, ElasticPyTorchJobStartsWithItsMinimum) {
  EcoRun r = Simulate({"kai/default-queues.yaml", "kai/pytorch-elastic.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/elastic-example-imagenet-worker-");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(r.Bound(pods), 2u);
  EXPECT_EQ(Gang(r, "default/PyTorchJob-elastic-example-imagenet"), nullptr) << Gangs(r);
}

// docs/gpu-sharing/gpu-sharing.yaml (gpu-fraction "0.5", no nvidia.com/gpu request) and
// gpu-memory.yaml (gpu-memory "2000"): under the kai-scheduler profile (GpuShare) they get
// a share of a GPU; never a node without GPUs.
TEST(EcosystemKai, GpuFractionPodGetsAShareOfAGpu) {
  for (const char* file : {"kai/gpu-sharing.yaml", "kai/gpu-memory.yaml"}) {
    EcoRun r = Simulate({"kai/default-queues.yaml", file});
    ASSERT_RAN(r);
    const PodOutcome* p = r.Pod("default/gpu-sharing");
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->scheduled_s) << file << ": " << p->reason;
    EXPECT_TRUE(r.GpuNode(p->node)) << file << ": " << p->node;
  }
}

// The same pod under a kai-scheduler profile without GpuShare (Phalanx's defaults): never on
// a CPU node — pending, naming the annotation and the plugin to enable.
TEST(EcosystemKai, GpuFractionPodUnderTheDefaultProfileIsNeverOnACpuNode) {
  EcoRun r = Simulate({"kai/default-queues.yaml", "kai/gpu-sharing.yaml"},
                      kTestdata + "kai-default-profile.yaml");
  ASSERT_RAN(r);
  const PodOutcome* p = r.Pod("default/gpu-sharing");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->scheduled_s) << "placed on " << p->node;
  EXPECT_NE(p->reason.find("annotation gpu-fraction \"0.5\""), std::string::npos) << p->reason;
  EXPECT_NE(p->reason.find("GpuShare"), std::string::npos) << p->reason;
}

// docs/priority: train-pod (priority class train, 50) runs; build-pod (build, 100) comes
// later, wants the same GPU, and "the scheduler will preempt lower priority train-pod and
// schedule higher priority build-pod" — the classes named by the priorityClassName
// label, in the same queue. On one node of one GPU (the docs' queue limit of 1 GPU in
// effect).
TEST(EcosystemKai, PriorityLabelPreemptsInsideTheQueue) {
  EcoRun r = Simulate(
      {"kai/priorityclass-train.yaml", "kai/priorityclass-build.yaml", "kai/default-queues.yaml",
       "kai/train-priority-pod.yaml", "kai/build-priority-pod.yaml"},
      "schedulers.yaml", ArriveLater("default/build-pod", 10), kTestdata + "one-gpu-node.yaml");
  ASSERT_RAN(r);
  const PodOutcome* train = r.Pod("default/train-pod");
  const PodOutcome* build = r.Pod("default/build-pod");
  ASSERT_TRUE(train && build);
  EXPECT_TRUE(train->preempted);
  ASSERT_TRUE(build->scheduled_s) << build->reason;
  EXPECT_EQ(build->node, "gpu-a");
  EXPECT_GE(*build->scheduled_s, 10.0);
}

// docs/priority/example/limited-queue.yaml defines queues default and test, while the
// example pods name default-queue (the quickstart's): applied as published, they wait for
// that queue, naming it.
TEST(EcosystemKai, LimitedQueueExampleNamesTheQueueItLacks) {
  EcoRun r = Simulate({"kai/limited-queue.yaml", "kai/train-priority-pod.yaml"});
  ASSERT_RAN(r);
  const PodOutcome* p = r.Pod("default/train-pod");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->scheduled_s);
  EXPECT_NE(p->reason.find("default-queue"), std::string::npos) << p->reason;
}

// ---- Volcano (volcano-sh/volcano example/) ----

// example/job.yaml: a Volcano Job of 6 nginx pods with minAvailable 3: its controller's
// PodGroup (minMember 3, queue default), every pod bound.
TEST(EcosystemVolcano, JobExampleMakesItsPodGroup) {
  EcoRun r = Simulate({"volcano/job.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/test-job-default-nginx-");
  ASSERT_EQ(pods.size(), 6u);
  EXPECT_EQ(r.Bound(pods), 6u);
  ASSERT_EQ(r.res.gangs.outcomes.size(), 1u) << Gangs(r);
  const GangOutcome& g = r.res.gangs.outcomes[0];
  EXPECT_EQ(g.key.rfind("default/test-job-", 0), 0u) << g.key;
  EXPECT_EQ(g.min_member, 3);
  EXPECT_TRUE(g.started);
}

// example/integrations/mpi/mpi-example.yaml: a master and two workers, minAvailable 3.
TEST(EcosystemVolcano, MpiExampleIsAGangOfMasterAndWorkers) {
  EcoRun r = Simulate({"volcano/mpi-example.yaml"});
  ASSERT_RAN(r);
  EXPECT_TRUE(r.Pod("default/lm-mpi-job-mpimaster-0"));
  EXPECT_TRUE(r.Pod("default/lm-mpi-job-mpiworker-1"));
  const auto pods = r.Pods("default/lm-mpi-job-");
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(r.Bound(pods), 3u);
  ASSERT_EQ(r.res.gangs.outcomes.size(), 1u) << Gangs(r);
  EXPECT_EQ(r.res.gangs.outcomes[0].min_member, 3);
}

// example/hierarchical-jobs: four Volcano Jobs in four queues. The queues' hierarchy
// annotations (volcano.sh/hierarchy, hierarchy-weights: the DRF plugin's hierarchical
// share) are not modelled: said so by name.
TEST(EcosystemVolcano, HierarchicalQueuesAreNamedAsNotModelled) {
  EcoRun r = Simulate({"volcano/hierarchical-queues.yaml", "volcano/hierarchical-jobs.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Pods("default/").size(), 24u);
  EXPECT_EQ(r.Bound(r.Pods("default/")), 24u);
  EXPECT_TRUE(r.Warned("volcano.sh/hierarchy")) << r.Warnings();
}

// ---- scheduler-plugins (kubernetes-sigs/scheduler-plugins site/content/en/docs/plugins) ----

// coscheduling.md's demo: "a cluster which can only afford 3 nginx pods", a ReplicaSet of 6
// in a PodGroup of minMember 3: three run, three wait.
TEST(EcosystemSchedulerPlugins, CoschedulingDemoRunsThreeOfSix) {
  EcoRun r = Simulate({"scheduler-plugins/coscheduling-demo.yaml"}, "schedulers.yaml", nullptr,
                      kTestdata + "three-nginx.yaml");
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/nginx-");
  ASSERT_EQ(pods.size(), 6u);
  EXPECT_EQ(r.Bound(pods), 3u);
  const GangOutcome* g = Gang(r, "default/nginx");
  ASSERT_TRUE(g) << Gangs(r);
  EXPECT_EQ(g->min_member, 3);
  EXPECT_TRUE(g->started);
}

// manifests/coscheduling/scheduler-config.yaml names the Coscheduling plugin: refused, with
// the hint that GangScheduling serves the same PodGroups.
TEST(EcosystemSchedulerPlugins, CoschedulingConfigGetsTheGangSchedulingHint) {
  auto c = config::LoadConfiguration(kEco + "scheduler-plugins/coscheduling-scheduler-config.yaml");
  ASSERT_FALSE(c.ok());
  const std::string msg(c.status().message());
  EXPECT_NE(msg.find("\"Coscheduling\": plugin is not registered"), std::string::npos) << msg;
  EXPECT_NE(msg.find("GangScheduling"), std::string::npos) << msg;
}

// capacity-scheduling.md's demo on its 8-CPU cluster: quota1 (min 4, max 6 CPUs) runs 3 of
// its 4 two-CPU pods ("Finally, there is one pending pod"); quota2's pods come later, the
// first takes the free 2 CPUs and the second reclaims 2 CPUs of quota1's, which is above
// its min ("making the usage of quota2 min(4) with a cost of preempting one pod in quota1").
TEST(EcosystemSchedulerPlugins, CapacitySchedulingDemoReclaimsForTheQuotaBelowItsMin) {
  auto later = [](Scenario* sc) {
    for (auto& tp : sc->pods) {
      if (tp.pod.metadata.namespace_ == "quota2") tp.arrival = 60 * api::kNanosPerSecond;
    }
    std::stable_sort(sc->pods.begin(), sc->pods.end(),
                     [](const TimedPod& a, const TimedPod& b) { return a.arrival < b.arrival; });
  };
  EcoRun r =
      Simulate({"scheduler-plugins/capacity-quota1.yaml", "scheduler-plugins/capacity-quota2.yaml",
                "scheduler-plugins/capacity-app1.yaml", "scheduler-plugins/capacity-app2.yaml"},
               "schedulers.yaml", later, kTestdata + "eight-cpus.yaml");
  ASSERT_RAN(r);
  const auto q1 = r.Pods("quota1/");
  const auto q2 = r.Pods("quota2/");
  ASSERT_EQ(q1.size(), 4u);
  ASSERT_EQ(q2.size(), 2u);
  size_t q1_running = 0, q1_preempted = 0;
  for (const auto* p : q1) {
    if (p->preempted) ++q1_preempted;
    if (p->scheduled_s && !p->preempted) ++q1_running;
  }
  EXPECT_EQ(q1_preempted, 1u);
  EXPECT_EQ(q1_running, 2u);
  EXPECT_EQ(r.Bound(q2), 2u);
}

// ---- Koordinator (koordinator-sh/koordinator.sh docs/user-manuals/gang-scheduling.md) ----

// "apply gang through gang crd": PodGroup gang-example (minMember 2) and two pods.
TEST(EcosystemKoordinator, GangThroughTheCrdStartsWhole) {
  EcoRun r = Simulate({"koordinator/gang-crd.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Bound(r.Pods("default/pod-example")), 2u);
  const GangOutcome* g = Gang(r, "default/gang-example");
  ASSERT_TRUE(g) << Gangs(r);
  EXPECT_EQ(g->min_member, 2);
  EXPECT_TRUE(g->started);
}

// "apply gang through annotation": the same gang from the pods' annotations.
TEST(EcosystemKoordinator, GangThroughAnnotationsStartsWhole) {
  EcoRun r = Simulate({"koordinator/gang-annotation.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Bound(r.Pods("default/pod-example")), 2u);
  const GangOutcome* g = Gang(r, "default/gang-example");
  ASSERT_TRUE(g) << Gangs(r);
  EXPECT_EQ(g->min_member, 2);
}

// "advanced configuration for gang": the PodGroup gang-example1 (minMember 2, in a
// GangGroup with gang-example2) and one pod of it: the PodGroup object defines the gang
// (its pod's own gang annotations, with the docs' placeholder mode "Strict\NonStrict",
// yield to it as in Koordinator's gang cache), so the pod waits for a second member.
TEST(EcosystemKoordinator, AdvancedExampleWaitsForItsSecondMember) {
  EcoRun r = Simulate({"koordinator/gang-advanced.yaml"});
  ASSERT_RAN(r);
  const PodOutcome* p = r.Pod("default/pod-example2");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->scheduled_s);
  EXPECT_NE(p->reason.find("waiting for minMember pods of pod group default/gang-example1"),
            std::string::npos)
      << p->reason;
  EXPECT_NE(p->reason.find("1/2 exist"), std::string::npos) << p->reason;
}

// docs/proposals/scheduling/20250611-networktopology-aware-scheduling.md's
// ClusterNetworkTopology uses spec.hierarchy, the proposal's draft shape; the API (and the
// CRD) has spec.networkTopologySpec: a gang gathering on it waits, naming the field.
TEST(EcosystemKoordinator, ProposalNetworkTopologyNamesItsUnknownField) {
  EcoRun r =
      Simulate({"koordinator/cluster-network-topology.yaml", kTestdata + "koord-gather.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/gather-");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(r.Bound(pods), 0u);
  EXPECT_NE(pods[0]->reason.find("spec.hierarchy: unknown field"), std::string::npos)
      << pods[0]->reason;
}

// ---- Kueue (kubernetes-sigs/kueue site/static/examples) ----

// jobs/sample-job.yaml in admin/single-clusterqueue-setup.yaml's queue: 3 pods of 1 CPU run;
// Kueue's admission is not modelled and says so, naming the label and the kinds.
TEST(EcosystemKueue, SampleJobRunsAsAdmittedAndKueueIsNamed) {
  EcoRun r = Simulate({"kueue/single-clusterqueue-setup.yaml", "kueue/sample-job.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/sample-job-");
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(r.Bound(pods), 3u);
  EXPECT_TRUE(r.Warned("kueue.x-k8s.io/queue-name")) << r.Warnings();
  EXPECT_TRUE(r.Warned("ClusterQueue (kueue.x-k8s.io/v1beta2) not modelled")) << r.Warnings();
}

// jobs/sample-jobset-tas-required.yaml: kueue.x-k8s.io/podset-required-topology on the
// rack label: the 4 workers in one rack.
TEST(EcosystemKueue, RequiredTopologyKeepsThePodsetInOneRack) {
  EcoRun r =
      Simulate({"kueue/single-clusterqueue-setup.yaml", "kueue/sample-jobset-tas-required.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/jobset-tas-required-workers-0-");
  ASSERT_EQ(pods.size(), 4u);
  EXPECT_EQ(r.Bound(pods), 4u);
  EXPECT_EQ(r.Domains(pods, "cloud.provider.com/topology-rack").size(), 1u);
}

// jobs/sample-jobset-tas-sliced.yaml: slices of 4 pods per rack are not modelled: the pods
// wait, naming the annotation.
TEST(EcosystemKueue, SliceTopologyIsRefusedByName) {
  EcoRun r =
      Simulate({"kueue/single-clusterqueue-setup.yaml", "kueue/sample-jobset-tas-sliced.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/jobset-tas-sliced-workers-0-");
  ASSERT_EQ(pods.size(), 8u);
  EXPECT_EQ(r.Bound(pods), 0u);
  EXPECT_NE(pods[0]->reason.find("kueue.x-k8s.io/podset-slice-required-topology"),
            std::string::npos)
      << pods[0]->reason;
}

// jobs/sample-pytorchjob.yaml: a master and a worker.
TEST(EcosystemKueue, SamplePyTorchJobRuns) {
  EcoRun r = Simulate({"kueue/single-clusterqueue-setup.yaml", "kueue/sample-pytorchjob.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Bound(r.Pods("default/pytorch-simple-")), 2u);
}

// ---- JobSet (kubernetes-sigs/jobset site/static/examples) ----

// simple/paralleljobs.yaml: a Job of 4 workers and a driver Job.
TEST(EcosystemJobSet, ParallelJobsMakeTheirJobsAndPods) {
  EcoRun r = Simulate({"jobset/paralleljobs.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Pods("default/paralleljobs-workers-0-").size(), 4u);
  EXPECT_EQ(r.Pods("default/paralleljobs-driver-0-").size(), 1u);
  EXPECT_EQ(r.Bound(r.Pods("default/paralleljobs-")), 5u);
  const GangOutcome* g = Gang(r, "default/JobSet-paralleljobs");
  ASSERT_TRUE(g) << Gangs(r);
  EXPECT_EQ(g->min_member, 5);
}

// simple/exclusive-placement.yaml: one Job per node pool (cloud.google.com/gke-nodepool);
// the cluster has no node pool label: no pod is placed, and the reason says so.
TEST(EcosystemJobSet, ExclusivePlacementNeedsItsTopologyLabel) {
  EcoRun r = Simulate({"jobset/exclusive-placement.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/exclusive-placement-workers-");
  ASSERT_EQ(pods.size(), 9u);
  EXPECT_EQ(r.Bound(pods), 0u);
  EXPECT_NE(pods[0]->reason.find("affinity"), std::string::npos) << pods[0]->reason;
}

// The same JobSet on a cluster whose racks are node pools: each Job alone in its pool.
TEST(EcosystemJobSet, ExclusivePlacementGivesEachJobItsOwnPool) {
  EcoRun r = Simulate({"jobset/exclusive-placement.yaml"}, "schedulers.yaml", nullptr,
                      kTestdata + "nodepools.yaml");
  ASSERT_RAN(r);
  std::set<std::string> pools;
  for (int j = 0; j < 3; ++j) {
    const auto pods = r.Pods("default/exclusive-placement-workers-" + std::to_string(j) + "-");
    ASSERT_EQ(pods.size(), 3u);
    EXPECT_EQ(r.Bound(pods), 3u);
    const auto d = r.Domains(pods, "cloud.google.com/gke-nodepool");
    EXPECT_EQ(d.size(), 1u) << "job " << j;
    pools.insert(d.begin(), d.end());
  }
  EXPECT_EQ(pools.size(), 3u);
}

// startup-policy/startup-driver-ready.yaml: InOrder — each replicatedJob a gang of its own
// (the creation order itself is not modelled: a warning says so).
TEST(EcosystemJobSet, InOrderStartupMakesAGangPerReplicatedJob) {
  EcoRun r = Simulate({"jobset/startup-driver-ready.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Bound(r.Pods("default/startup-driver-ready-")), 5u);
  const GangOutcome* workers = Gang(r, "default/JobSet-startup-driver-ready-workers");
  ASSERT_TRUE(workers) << Gangs(r);
  EXPECT_EQ(workers->min_member, 4);
  EXPECT_TRUE(r.Warned("startupPolicyOrder")) << r.Warnings();
}

// simple/group.yaml: two replicatedJobs in groups default and group-b; their pods carry
// the group labels.
TEST(EcosystemJobSet, GroupsLabelTheirPods) {
  EcoRun r = Simulate({"jobset/group.yaml"});
  ASSERT_RAN(r);
  size_t group_b = 0;
  for (const auto& tp : r.sc.pods) {
    auto it = tp.pod.metadata.labels.find("jobset.sigs.k8s.io/group-name");
    if (it != tp.pod.metadata.labels.end() && it->second == "group-b") ++group_b;
  }
  EXPECT_EQ(group_b, 2u);
  EXPECT_EQ(r.Bound(r.Pods("default/group-example-")), 4u);
}

// ---- LeaderWorkerSet (kubernetes-sigs/lws docs/examples/sample) ----

// lws.yaml: 3 groups of 4 (a leader and 3 workers); each group a gang.
TEST(EcosystemLws, GroupsOfLeaderAndWorkersAreGangs) {
  EcoRun r = Simulate({"lws/lws.yaml"});
  ASSERT_RAN(r);
  EXPECT_TRUE(r.Pod("default/leaderworkerset-sample-0"));
  EXPECT_TRUE(r.Pod("default/leaderworkerset-sample-2-3"));
  EXPECT_EQ(r.Pods("default/leaderworkerset-sample-").size(), 12u);
  EXPECT_EQ(r.Bound(r.Pods("default/leaderworkerset-sample-")), 12u);
  const GangOutcome* g = Gang(r, "default/LeaderWorkerSet-leaderworkerset-sample-group-1");
  ASSERT_TRUE(g) << Gangs(r);
  EXPECT_EQ(g->min_member, 4);
}

// lws-multi-template.yaml: the leader from leaderTemplate (container nginx2).
TEST(EcosystemLws, LeaderTemplateMakesTheLeader) {
  EcoRun r = Simulate({"lws/lws-multi-template.yaml"});
  ASSERT_RAN(r);
  for (const auto& tp : r.sc.pods) {
    if (tp.pod.metadata.name == "leaderworkerset-multi-template-0") {
      ASSERT_EQ(tp.pod.spec.containers.size(), 1u);
      EXPECT_EQ(tp.pod.spec.containers[0].name, "nginx2");
    }
    if (tp.pod.metadata.name == "leaderworkerset-multi-template-0-1") {
      EXPECT_EQ(tp.pod.spec.containers[0].name, "nginx");
    }
  }
  EXPECT_EQ(r.Bound(r.Pods("default/leaderworkerset-multi-template-")), 12u);
}

// gang-scheduling/lws-sample-volcano.yaml: schedulerName volcano -> a Volcano PodGroup per
// group (minMember = size 4).
TEST(EcosystemLws, VolcanoGangSchedulingMakesAPodGroupPerGroup) {
  EcoRun r = Simulate({"lws/lws-sample-volcano.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Bound(r.Pods("default/lws-sample-volcano-")), 8u);
  ASSERT_EQ(r.res.gangs.outcomes.size(), 2u) << Gangs(r);
  for (const auto& g : r.res.gangs.outcomes) {
    EXPECT_EQ(g.key.rfind("default/lws-sample-volcano-", 0), 0u) << g.key;
    EXPECT_EQ(g.min_member, 4);
  }
}

// lws-exclusive-placement.yaml on a cluster whose racks are node pools: each group alone in
// its pool.
TEST(EcosystemLws, ExclusivePlacementGivesEachGroupItsOwnPool) {
  EcoRun r = Simulate({"lws/lws-exclusive-placement.yaml"}, "schedulers.yaml", nullptr,
                      kTestdata + "nodepools.yaml");
  ASSERT_RAN(r);
  std::set<std::string> pools;
  for (int g = 0; g < 3; ++g) {
    std::vector<const PodOutcome*> group;
    for (const auto* o : r.Pods("default/leaderworkerset-sample-" + std::to_string(g))) {
      group.push_back(o);
    }
    ASSERT_EQ(group.size(), 4u);
    EXPECT_EQ(r.Bound(group), 4u);
    const auto d = r.Domains(group, "cloud.google.com/gke-nodepool");
    EXPECT_EQ(d.size(), 1u) << "group " << g;
    pools.insert(d.begin(), d.end());
  }
  EXPECT_EQ(pools.size(), 3u);
}

// ---- Kubeflow Trainer (kubeflow/trainer examples/yaml, manifests/base/runtimes) ----

// 01-multi-node.yaml on the torch-distributed runtime: numNodes 3 -> a JobSet with 3 node
// pods.
TEST(EcosystemTrainer, MultiNodeTrainJobMakesItsNodes) {
  EcoRun r = Simulate({"trainer/torch_distributed.yaml", "trainer/01-multi-node.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/multi-node-example-node-0-");
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(r.Bound(pods), 3u);
}

// 04-volcano-integration.yaml: podGroupPolicy volcano -> a Volcano PodGroup of the 4 nodes,
// each with resourcesPerNode (1 CPU, 2Gi).
TEST(EcosystemTrainer, VolcanoPodGroupPolicyMakesTheGang) {
  EcoRun r = Simulate({"trainer/04-volcano-integration.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/volcano-example-node-0-");
  ASSERT_EQ(pods.size(), 4u);
  EXPECT_EQ(r.Bound(pods), 4u);
  const GangOutcome* g = Gang(r, "default/volcano-example");
  ASSERT_TRUE(g) << Gangs(r);
  EXPECT_EQ(g->min_member, 4);
  for (const auto& tp : r.sc.pods) {
    if (tp.pod.metadata.name.rfind("volcano-example-node-0-", 0) != 0) continue;
    EXPECT_EQ(tp.pod.spec.containers[0].resources.requests.at("cpu").MilliValue(), 1000);
  }
}

// 02-runtime-patches.yaml: the patch's nodeSelector node-type: training and toleration;
// no node of the cluster is a training node: the pods wait, naming the selector.
TEST(EcosystemTrainer, RuntimePatchesReachThePods) {
  EcoRun r = Simulate({"trainer/torch_distributed.yaml", "trainer/02-runtime-patches.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("default/runtime-patches-example-node-0-");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(r.Bound(pods), 0u);
  EXPECT_NE(pods[0]->reason.find("node affinity/selector"), std::string::npos) << pods[0]->reason;
}

// 03-kueue-integration.yaml: suspended for Kueue; created as admitted, with the warning.
TEST(EcosystemTrainer, KueueTrainJobRunsWithTheWarning) {
  EcoRun r = Simulate({"trainer/torch_distributed.yaml", "trainer/03-kueue-integration.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Bound(r.Pods("default/kueue-example-node-0-")), 3u);
  EXPECT_TRUE(r.Warned("kueue.x-k8s.io/queue-name")) << r.Warnings();
}

// 05-multi-step.yaml: dependsOn (the trainer after the dataset initializer) is not modelled:
// the warning names it.
TEST(EcosystemTrainer, MultiStepNamesItsDependsOn) {
  EcoRun r = Simulate({"trainer/05-multi-step.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Pods("default/multi-step-example-").size(), 3u);
  EXPECT_TRUE(r.Warned("dependsOn")) << r.Warnings();
}

// ---- DRA drivers (kubernetes-sigs/dra-example-driver demo/examples, NVIDIA/
// k8s-dra-driver-gpu demo/specs/quickstart/v1) on the drivers' DeviceClasses and the
// ResourceSlices they publish (00-driver.yaml of each directory) ----

// basic-resourceclaimtemplate: two pods, one GPU each, on GPU nodes.
TEST(EcosystemDra, ExampleDriverTemplateGivesEachPodAGpu) {
  EcoRun r = Simulate(
      {"dra-example-driver/00-driver.yaml", "dra-example-driver/basic-resourceclaimtemplate.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("basic-resourceclaimtemplate/pod");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(r.Bound(pods), 2u);
  for (const auto* p : pods) EXPECT_TRUE(r.GpuNode(p->node)) << p->node;
}

// basic-shared-claim-across-pods: the pods sharing one claim land on its node.
TEST(EcosystemDra, ExampleDriverSharedClaimKeepsItsPodsTogether) {
  EcoRun r = Simulate({"dra-example-driver/00-driver.yaml",
                       "dra-example-driver/basic-shared-claim-across-pods.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("basic-shared-claim-across-pods/");
  ASSERT_GE(pods.size(), 2u);
  std::set<std::string> nodes;
  for (const auto* p : pods) {
    EXPECT_TRUE(p->scheduled_s) << p->pod << ": " << p->reason;
    nodes.insert(p->node);
  }
  EXPECT_EQ(r.Bound(pods), pods.size());
}

// cel-selector: the model and memory selectors match the published devices.
TEST(EcosystemDra, ExampleDriverCelSelectorMatches) {
  EcoRun r =
      Simulate({"dra-example-driver/00-driver.yaml", "dra-example-driver/cel-selector.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.Bound(r.Pods("cel-selector/")), r.Pods("cel-selector/").size());
}

// prioritized-alternatives: firstAvailable falls back to the published model.
TEST(EcosystemDra, ExampleDriverPrioritizedAlternativesFallBack) {
  EcoRun r = Simulate(
      {"dra-example-driver/00-driver.yaml", "dra-example-driver/prioritized-alternatives.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("prioritized-alternatives/");
  ASSERT_FALSE(pods.empty());
  for (const auto* p : pods) EXPECT_TRUE(p->scheduled_s) << p->pod << ": " << p->reason;
}

// NVIDIA gpu-test1: two pods, one GPU each.
TEST(EcosystemDra, NvidiaQuickstartGivesEachPodAGpu) {
  EcoRun r = Simulate({"k8s-dra-driver-gpu/00-driver.yaml", "k8s-dra-driver-gpu/gpu-test1.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("gpu-test1/");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(r.Bound(pods), 2u);
}

// NVIDIA gpu-test3: two pods share one ResourceClaim: one GPU, one node.
TEST(EcosystemDra, NvidiaSharedClaimPutsBothPodsOnItsNode) {
  EcoRun r = Simulate({"k8s-dra-driver-gpu/00-driver.yaml", "k8s-dra-driver-gpu/gpu-test3.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("gpu-test3/");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(r.Bound(pods), 2u);
  EXPECT_EQ(pods[0]->node, pods[1]->node);
}

// NVIDIA gpu-test4: MIG devices of DeviceClass mig.nvidia.com, which these GPUs do not
// publish: the pods wait, naming the class.
TEST(EcosystemDra, NvidiaMigDevicesNameTheMissingDeviceClass) {
  EcoRun r = Simulate({"k8s-dra-driver-gpu/00-driver.yaml", "k8s-dra-driver-gpu/gpu-test4.yaml"});
  ASSERT_RAN(r);
  const auto pods = r.Pods("gpu-test4/");
  ASSERT_FALSE(pods.empty());
  EXPECT_EQ(r.Bound(pods), 0u);
  EXPECT_NE(pods[0]->reason.find("mig.nvidia.com"), std::string::npos) << pods[0]->reason;
}

// ---- Mixed kinds, held-back pods ----

// A directory of mixed kinds where one would create pods and is not modelled (a
// DaemonSet): the summary names it and its count, and it is a warning.
TEST(EcosystemKinds, NotModelledKindIsAWarningNamingIt) {
  EcoRun r = Simulate({kTestdata + "mixed-kinds.yaml"});
  ASSERT_RAN(r);
  EXPECT_EQ(r.res.unused_kinds.at("DaemonSet (apps/v1)"), 1u);
  EXPECT_EQ(r.res.unused_kinds.at("ConfigMap (v1)"), 2u);
  EXPECT_TRUE(r.Warned("1 DaemonSet (apps/v1) not modelled")) << r.Warnings();
  EXPECT_FALSE(r.Warned("ConfigMap")) << r.Warnings();
  EXPECT_TRUE(r.res.HasWarnings());
  EXPECT_NE(FormatSummary(r.res).find("objects not used: 2 ConfigMap (v1), 1 DaemonSet (apps/v1)"),
            std::string::npos)
      << FormatSummary(r.res);
}

// A gang object that does not decode is a warning naming its field even before any member
// pod exists (the members' reason says the same once they do).
TEST(EcosystemKinds, InvalidPodGroupWithoutPodsIsAWarningNamingTheField) {
  EcoRun r = Simulate({kTestdata + "draft-topology-podgroup.yaml"});
  ASSERT_RAN(r);
  EXPECT_TRUE(
      r.Warned("PodGroup default/pg (scheduling.k8s.io/v1alpha2): "
               "spec.schedulingConstraints.topologyConstraints: unknown field"))
      << r.Warnings();
  EXPECT_TRUE(r.res.HasWarnings());
}

// Pods held back before their first attempt: a Coscheduling gang short of members, a pod
// whose ResourceClaimTemplate is missing. Pending with the gate's reason, no invariant
// violation.
TEST(EcosystemHeldBack, GatedPodsArePendingWithTheirReason) {
  EcoRun r = Simulate({kTestdata + "held-back.yaml"}, "");
  ASSERT_RAN(r);
  EXPECT_FALSE(r.res.HasWarnings()) << r.Warnings();
  const PodOutcome* a = r.Pod("default/member-a");
  const PodOutcome* claimer = r.Pod("default/claimer");
  ASSERT_TRUE(a && claimer);
  EXPECT_FALSE(a->scheduled_s);
  EXPECT_NE(a->reason.find("waiting for minMember pods of"), std::string::npos) << a->reason;
  EXPECT_FALSE(claimer->scheduled_s);
  EXPECT_NE(claimer->reason.find("missing-template"), std::string::npos) << claimer->reason;
  for (const auto& [reason, n] : r.res.pending_reasons) {
    EXPECT_EQ(reason.find("not attempted"), std::string::npos) << reason;
  }
}

}  // namespace
}  // namespace phalanx::sim
