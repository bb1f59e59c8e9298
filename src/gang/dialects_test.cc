// Table-driven tests of the gang dialect adapters, from manifests as users write them.
// Cases use designated initializers and leave unneeded fields at their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "gang/dialects.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "api/decode.h"
#include "api/resource.h"
#include "gang/default_podgroup_manager.h"
#include "gang/dialects_parse.h"

namespace phalanx::gang {
namespace {

constexpr int64_t kSec = api::kNanosPerSecond;

// Decoded manifests plus an OwnerLookup over their objects.
struct World {
  api::Manifests m;
  std::map<std::string, const api::Unstructured*> objects;  // "<ns>/<kind>/<name>"

  OwnerLookup Lookup() const {
    return [this](const std::string& ns, const std::string& kind, const std::string& name) {
      auto it = objects.find(ns + "/" + kind + "/" + name);
      return it == objects.end() ? nullptr : it->second;
    };
  }
  const api::Pod* Pod(const std::string& name) const {
    for (const auto& p : m.pods) {
      if (p.metadata.name == name) return &p;
    }
    return nullptr;
  }
};

bool Decode(const std::string& yaml, World* w) {
  std::string err;
  if (!api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &w->m), &err)) {
    ADD_FAILURE() << "decode: " << err;
    return false;
  }
  for (const auto& o : w->m.objects) {
    w->objects[o.metadata.namespace_ + "/" + o.kind + "/" + o.metadata.name] = &o;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// ResolvePodGang
// ---------------------------------------------------------------------------------------

struct PodCase {
  std::string name;
  std::string yaml;      // manifests; the pod under test is named "p"
  bool gang = true;      // false: expect nullopt
  std::string key;       // GangRef::key
  std::string spec_key;  // GangRef::spec_key (defaults to key)
  Dialect dialect = Dialect::kCoscheduling;
  std::string via;          // substring of GangRef::via
  bool has_inline = false;  // inline_spec present
  int32_t min_member = 0;   // inline_spec->min_member when has_inline and valid
  std::string invalid;      // substring of inline_spec->invalid ("" = must be valid)
  std::function<void(DialectOptions*)> opts;
  std::function<void(const GangRef&)> check;
};
// Short names in test listings (ctest shows GetParam()).
void PrintTo(const PodCase& c, std::ostream* os) { *os << c.name; }

std::string PodYaml(const std::string& meta_extra, const std::string& spec_extra = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: team\n"
         "  creationTimestamp: \"2024-05-01T10:00:00Z\"\n" +
         meta_extra + "spec:\n" + spec_extra +
         "  containers:\n  - name: c\n    image: busybox\n"
         "    resources: {requests: {cpu: 100m}}\n";
}

std::string Owner(const std::string& api_version, const std::string& kind,
                  const std::string& name) {
  return "  ownerReferences:\n  - apiVersion: " + api_version + "\n    kind: " + kind +
         "\n    name: " + name + "\n    uid: uid-" + name + "\n    controller: true\n";
}

std::string JobYaml(const std::string& name, const std::string& spec_extra,
                    const std::string& meta_extra = "") {
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n  namespace: team\n" +
         meta_extra + "spec:\n" + spec_extra +
         "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
         "      - name: c\n        image: busybox\n";
}

const std::string kKoordFull = R"(  annotations:
    gang.scheduling.koordinator.sh/name: gang-a
    gang.scheduling.koordinator.sh/min-available: "3"
    gang.scheduling.koordinator.sh/total-number: "5"
    gang.scheduling.koordinator.sh/mode: NonStrict
    gang.scheduling.koordinator.sh/waiting-time: 1m30s
    gang.scheduling.koordinator.sh/match-policy: only-waiting
    gang.scheduling.koordinator.sh/groups: '["other/gang-b", "team/gang-a"]'
)";

std::string KoordPod(const std::string& overrides) {
  std::string a = "  annotations:\n    gang.scheduling.koordinator.sh/name: gang-a\n";
  if (overrides.find("min-available") == std::string::npos) {
    a += "    gang.scheduling.koordinator.sh/min-available: \"2\"\n";
  }
  return PodYaml(a + overrides);
}

const std::string kPyTorchJob = R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: torch, namespace: team}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template: {spec: {containers: [{name: pytorch, image: pt}]}}
    Worker:
      replicas: 3
      template: {spec: {containers: [{name: pytorch, image: pt}]}}
---
)";

const std::string kMPIJob = R"(apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi, namespace: team}
spec:
  slotsPerWorker: 1
  %POLICY%
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template: {spec: {containers: [{name: launcher, image: mpi}]}}
    Worker:
      replicas: 4
      template: {spec: {containers: [{name: worker, image: mpi}]}}
---
)";

std::string MPIJob(const std::string& policy) {
  std::string s = kMPIJob;
  s.replace(s.find("%POLICY%"), 8, policy);
  return s;
}

std::string JobSetYaml(const std::string& extra_spec) {
  return R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: team}
spec:
)" + extra_spec +
         R"(  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        completions: 4
        template: {spec: {containers: [{name: w, image: w}]}}
  - name: driver
    replicas: 1
    template:
      spec:
        template: {spec: {containers: [{name: d, image: d}]}}
---
)" +
         JobYaml("js-workers-0", "  parallelism: 4\n  completions: 4\n",
                 Owner("jobset.x-k8s.io/v1alpha2", "JobSet", "js")) +
         "---\n" +
         PodYaml("  labels: {jobset.sigs.k8s.io/replicatedjob-name: workers}\n" +
                 Owner("batch/v1", "Job", "js-workers-0"));
}

std::vector<PodCase> PodCases() {
  std::vector<PodCase> c;
  // --- scheduler-plugins Coscheduling ---
  c.push_back({.name = "CoschedulingLabel",
               .yaml = PodYaml("  labels: {scheduling.x-k8s.io/pod-group: pg1}\n"),
               .key = "team/pg1",
               .dialect = Dialect::kCoscheduling,
               .via = "label scheduling.x-k8s.io/pod-group"});
  c.push_back({.name = "CoschedulingLegacyLabel",
               .yaml = PodYaml("  labels: {pod-group.scheduling.sigs.k8s.io: pg-old}\n"),
               .key = "team/pg-old",
               .dialect = Dialect::kCoscheduling,
               .via = "label pod-group.scheduling.sigs.k8s.io"});
  c.push_back({.name = "CoschedulingEmptyLabelIsNoGang",
               .yaml = PodYaml("  labels: {scheduling.x-k8s.io/pod-group: \"\"}\n"),
               .gang = false});
  // --- upstream Workload API ---
  c.push_back({.name = "WorkloadRef135",
               .yaml = PodYaml("", "  workloadRef: {name: train, podGroup: workers}\n"),
               .key = "team/train/workers",
               .dialect = Dialect::kWorkload,
               .via = "spec.workloadRef"});
  c.push_back({.name = "WorkloadRefReplicaKey",
               .yaml = PodYaml(
                   "", "  workloadRef: {name: train, podGroup: workers, podGroupReplicaKey: r1}\n"),
               .key = "team/train/workers/r1",
               .spec_key = "team/train/workers",
               .dialect = Dialect::kWorkload,
               .check = [](const GangRef& r) {
                 EXPECT_EQ(r.name, "train");
                 EXPECT_FALSE(r.inline_spec.has_value());
               }});
  c.push_back({.name = "WorkloadRefBasicPolicyIsNoGang",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train, namespace: team}
spec:
  podGroups:
  - name: workers
    policy: {gang: {minCount: 4}}
  - name: logger
    policy: {basic: {}}
---
)" + PodYaml("", "  workloadRef: {name: train, podGroup: logger}\n"),
               .gang = false});
  c.push_back({.name = "WorkloadRefGangPolicyInDecodedWorkload",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train, namespace: team}
spec:
  podGroups:
  - name: workers
    policy: {gang: {minCount: 4}}
---
)" + PodYaml("", "  workloadRef: {name: train, podGroup: workers}\n"),
               .key = "team/train/workers",
               .dialect = Dialect::kWorkload});
  c.push_back({.name = "WorkloadRefMissingPodGroupIsInvalid",
               .yaml = PodYaml("", "  workloadRef: {name: train}\n"),
               .key = "team/train/",
               .dialect = Dialect::kWorkload,
               .has_inline = true,
               .invalid = "Pod team/p: spec.workloadRef.podGroup: required"});
  c.push_back({.name = "SchedulingGroup136",
               .yaml = PodYaml("", "  schedulingGroup: {podGroupName: train-0}\n"),
               .key = "team/train-0",
               .dialect = Dialect::kWorkload,
               .via = "spec.schedulingGroup.podGroupName"});
  c.push_back({.name = "SchedulingGroupBasicPodGroupIsNoGang",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train-0, namespace: team}
spec:
  schedulingPolicy: {basic: {}}
---
)" + PodYaml("", "  schedulingGroup: {podGroupName: train-0}\n"),
               .gang = false});
  c.push_back({.name = "SchedulingGroupIgnoresOtherGroupsPodGroup",
               .yaml = R"(apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train-0, namespace: team}
spec: {minMember: 1}
---
)" + PodYaml("", "  schedulingGroup: {podGroupName: train-0}\n"),
               .key = "team/train-0",
               .dialect = Dialect::kWorkload});
  // --- Koordinator ---
  c.push_back({.name = "KoordinatorFull",
               .yaml = PodYaml(kKoordFull),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .via = "annotation gang.scheduling.koordinator.sh/name",
               .has_inline = true,
               .min_member = 3,
               .check = [](const GangRef& r) {
                 const PodGroupSpec& s = *r.inline_spec;
                 EXPECT_EQ(s.key, "team/gang-a");
                 EXPECT_EQ(s.dialect, Dialect::kKoordinator);
                 EXPECT_EQ(s.total_member, 5);
                 EXPECT_EQ(s.mode, GangMode::kNonStrict);
                 EXPECT_EQ(s.match_policy, MatchPolicy::kOnlyWaiting);
                 EXPECT_EQ(s.schedule_timeout_ns, 90 * kSec);
                 EXPECT_EQ(s.gang_group, (std::vector<std::string>{"other/gang-b", "team/gang-a"}));
                 EXPECT_GT(s.creation_timestamp, 0);
               }});
  c.push_back({.name = "KoordinatorDefaults",
               .yaml = KoordPod(""),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .min_member = 2,
               .check = [](const GangRef& r) {
                 const PodGroupSpec& s = *r.inline_spec;
                 EXPECT_EQ(s.mode, GangMode::kStrict);
                 EXPECT_EQ(s.match_policy, MatchPolicy::kOnceSatisfied);
                 EXPECT_EQ(s.total_member, 2);  // defaults to min-available
                 EXPECT_FALSE(s.schedule_timeout_ns.has_value());
                 EXPECT_TRUE(s.gang_group.empty());
               }});
  c.push_back({.name = "KoordinatorGroupsAddsSelf",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/groups: '[\"team/gang-b\"]'\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .min_member = 2,
               .check = [](const GangRef& r) {
                 EXPECT_EQ(r.inline_spec->gang_group,
                           (std::vector<std::string>{"team/gang-a", "team/gang-b"}));
               }});
  c.push_back({.name = "KoordinatorTotalBelowMinIsClamped",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/total-number: \"1\"\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .min_member = 2,
               .check = [](const GangRef& r) { EXPECT_EQ(r.inline_spec->total_member, 2); }});
  c.push_back({.name = "KoordinatorUnknownMode",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/mode: Loose\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "Pod team/p: annotation gang.scheduling.koordinator.sh/mode: must be "
                          "Strict or NonStrict, got \"Loose\""});
  c.push_back({.name = "KoordinatorBadWaitingTime",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/waiting-time: 10 minutes\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "annotation gang.scheduling.koordinator.sh/waiting-time: time:"});
  c.push_back({.name = "KoordinatorNegativeWaitingTime",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/waiting-time: -5s\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "waiting-time: must not be negative"});
  c.push_back(
      {.name = "KoordinatorGroupsNotJson",
       .yaml = KoordPod("    gang.scheduling.koordinator.sh/groups: team/gang-a,team/gang-b\n"),
       .key = "team/gang-a",
       .dialect = Dialect::kKoordinator,
       .has_inline = true,
       .invalid = "gang.scheduling.koordinator.sh/groups: must be a JSON array of strings"});
  c.push_back({.name = "KoordinatorGroupsNotStrings",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/groups: '[1, 2]'\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "must be a JSON array of strings: item 0 is a number"});
  c.push_back({.name = "KoordinatorGroupsBadGangId",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/groups: '[\"gang-b\"]'\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "entries must be gang ids \"<namespace>/<name>\", got \"gang-b\""});
  c.push_back({.name = "KoordinatorMinZero",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/min-available: \"0\"\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "annotation gang.scheduling.koordinator.sh/min-available: must be >= 1, "
                          "got 0"});
  c.push_back({.name = "KoordinatorMinMissing",
               .yaml = PodYaml("  annotations: {gang.scheduling.koordinator.sh/name: gang-a}\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "min-available: required"});
  c.push_back({.name = "KoordinatorBadMatchPolicy",
               .yaml = KoordPod("    gang.scheduling.koordinator.sh/match-policy: sometimes\n"),
               .key = "team/gang-a",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "match-policy: must be one of once-satisfied"});
  c.push_back({.name = "KoordinatorBadName",
               .yaml = PodYaml("  annotations:\n    gang.scheduling.koordinator.sh/name: Gang_A\n"
                               "    gang.scheduling.koordinator.sh/min-available: \"2\"\n"),
               .key = "team/Gang_A",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .invalid = "must be a lowercase RFC 1123 subdomain, got \"Gang_A\""});
  c.push_back({.name = "KoordinatorLegacyAnnotations",
               .yaml = PodYaml("  annotations:\n    pod-group.scheduling.sigs.k8s.io/name: old\n"
                               "    pod-group.scheduling.sigs.k8s.io/min-available: \"4\"\n"
                               "    pod-group.scheduling.sigs.k8s.io/match-policy: "
                               "waiting-and-running\n"),
               .key = "team/old",
               .dialect = Dialect::kKoordinator,
               .via = "annotation pod-group.scheduling.sigs.k8s.io/name",
               .has_inline = true,
               .min_member = 4,
               .check = [](const GangRef& r) {
                 EXPECT_EQ(r.inline_spec->match_policy, MatchPolicy::kWaitingAndRunning);
               }});
  c.push_back({.name = "KoordinatorLegacyMinAsLabel",
               .yaml = PodYaml("  labels: {pod-group.scheduling.sigs.k8s.io/min-available: \"3\"}\n"
                               "  annotations: {gang.scheduling.koordinator.sh/name: g}\n"),
               .key = "team/g",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .min_member = 3});
  // --- Volcano ---
  c.push_back({.name = "VolcanoAnnotation",
               .yaml = PodYaml("  annotations: {scheduling.k8s.io/group-name: vc-pg}\n"),
               .key = "team/vc-pg",
               .dialect = Dialect::kVolcano,
               .via = "annotation scheduling.k8s.io/group-name"});
  c.push_back({.name = "VolcanoAliasAnnotation",
               .yaml = PodYaml("  annotations: {scheduling.volcano.sh/group-name: vc-pg2}\n"),
               .key = "team/vc-pg2",
               .dialect = Dialect::kVolcano,
               .via = "annotation scheduling.volcano.sh/group-name"});
  // --- KAI ---
  c.push_back({.name = "KAIAnnotation",
               .yaml = PodYaml("  labels: {kai.scheduler/queue: research}\n"
                               "  annotations: {pod-group-name: pg-kai}\n"),
               .key = "team/pg-kai",
               .dialect = Dialect::kKAI,
               .via = "annotation pod-group-name"});
  // --- precedence ---
  const std::string all_meta =
      "  labels: {scheduling.x-k8s.io/pod-group: cosched}\n"
      "  annotations:\n    gang.scheduling.koordinator.sh/name: koord\n"
      "    gang.scheduling.koordinator.sh/min-available: \"2\"\n"
      "    scheduling.k8s.io/group-name: volcano\n    pod-group-name: kai\n";
  c.push_back({.name = "PrecedenceWorkloadFirst",
               .yaml = PodYaml(all_meta, "  workloadRef: {name: w, podGroup: g}\n"),
               .key = "team/w/g",
               .dialect = Dialect::kWorkload});
  c.push_back({.name = "PrecedenceSchedulingGroupOverWorkloadRef",
               .yaml = PodYaml(all_meta,
                               "  workloadRef: {name: w, podGroup: g}\n"
                               "  schedulingGroup: {podGroupName: pg}\n"),
               .key = "team/pg",
               .dialect = Dialect::kWorkload});
  c.push_back({.name = "PrecedenceCoschedulingOverKoordinator",
               .yaml = PodYaml(all_meta),
               .key = "team/cosched",
               .dialect = Dialect::kCoscheduling});
  c.push_back({.name = "PrecedenceKoordinatorOverVolcano",
               .yaml = PodYaml("  annotations:\n    gang.scheduling.koordinator.sh/name: koord\n"
                               "    gang.scheduling.koordinator.sh/min-available: \"2\"\n"
                               "    scheduling.k8s.io/group-name: volcano\n"
                               "    pod-group-name: kai\n"),
               .key = "team/koord",
               .dialect = Dialect::kKoordinator,
               .has_inline = true,
               .min_member = 2});
  c.push_back({.name = "PrecedenceVolcanoOverKAI",
               .yaml = PodYaml("  annotations:\n    scheduling.k8s.io/group-name: volcano\n"
                               "    pod-group-name: kai\n"),
               .key = "team/volcano",
               .dialect = Dialect::kVolcano});
  c.push_back({.name = "PrecedenceExplicitOverPodGrouper",
               .yaml = JobYaml("train", "  parallelism: 4\n") + "---\n" +
                       PodYaml("  annotations: {pod-group-name: kai}\n" +
                               Owner("batch/v1", "Job", "train")),
               .key = "team/kai",
               .dialect = Dialect::kKAI});
  // --- PodGrouper ---
  // KAI's BatchJob grouper: a Job's pods each have a PodGroup of their own (KAI
  // docs/batch: "2 pods that will be scheduled separately").
  c.push_back({.name = "PodGrouperJobIsNoGang",
               .yaml = JobYaml("train", "  parallelism: 4\n  completions: 4\n") + "---\n" +
                       PodYaml(Owner("batch/v1", "Job", "train")),
               .gang = false});
  // KAI topology annotations on the Job: its pods placed together, minMember 1 (KAI
  // docs/topology's Job example; defaultgrouper reads them from the top owner).
  c.push_back({.name = "PodGrouperJobWithKaiTopology",
               .yaml = JobYaml("train", "  parallelism: 4\n  completions: 4\n",
                               "  annotations:\n    kai.scheduler/topology: cluster-topology\n"
                               "    kai.scheduler/topology-required-placement: zone\n"
                               "    kai.scheduler/topology-preferred-placement: rack\n") +
                       "---\n" + PodYaml(Owner("batch/v1", "Job", "train")),
               .key = "team/Job-train",
               .dialect = Dialect::kDerived,
               .via = "ownerReferences -> Job/train",
               .has_inline = true,
               .min_member = 1,
               .check = [](const GangRef& r) {
                 EXPECT_EQ(r.inline_spec->total_member, 4);
                 EXPECT_EQ(r.inline_spec->topology.topology, "cluster-topology");
                 EXPECT_EQ(r.inline_spec->topology.required_level, "zone");
                 EXPECT_EQ(r.inline_spec->topology.preferred_level, "rack");
               }});
  // Kueue TAS on the pod template: the podset (min(parallelism, completions) pods) is
  // admitted whole: one gang required in one rack.
  c.push_back({.name = "PodGrouperJobWithKueueRequiredTopology",
               .yaml = JobYaml("train", "  parallelism: 8\n  completions: 3\n") + "---\n" +
                       PodYaml("  annotations: {kueue.x-k8s.io/podset-required-topology: rack}\n" +
                               Owner("batch/v1", "Job", "train")),
               .key = "team/Job-train",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 3,
               .check = [](const GangRef& r) {
                 EXPECT_EQ(r.inline_spec->topology.required_level, "rack");
                 EXPECT_TRUE(r.inline_spec->topology.unsupported.empty());
               }});
  c.push_back({.name = "PodGrouperJobWithKueueSliceIsUnsupported",
               .yaml = JobYaml("idx",
                               "  completionMode: Indexed\n  parallelism: 6\n"
                               "  completions: 6\n") +
                       "---\n" +
                       PodYaml("  annotations:\n    kueue.x-k8s.io/podset-slice-required-topology: "
                               "rack\n    kueue.x-k8s.io/podset-slice-size: \"2\"\n" +
                               Owner("batch/v1", "Job", "idx")),
               .key = "team/Job-idx",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 6,
               .check = [](const GangRef& r) {
                 EXPECT_NE(r.inline_spec->topology.unsupported.find(
                               "annotation kueue.x-k8s.io/podset-slice"),
                           std::string::npos)
                     << r.inline_spec->topology.unsupported;
               }});
  c.push_back({.name = "PodGrouperJobParallelismOneIsNoGang",
               .yaml = JobYaml("one", "  parallelism: 1\n  completions: 10\n") + "---\n" +
                       PodYaml(Owner("batch/v1", "Job", "one")),
               .gang = false});
  c.push_back({.name = "PodGrouperJobMinMemberOverride",
               .yaml = JobYaml("train", "  parallelism: 8\n",
                               "  annotations: {kai.scheduler/batch-min-member: \"2\"}\n") +
                       "---\n" + PodYaml(Owner("batch/v1", "Job", "train")),
               .key = "team/Job-train",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 2,
               .check = [](const GangRef& r) { EXPECT_EQ(r.inline_spec->total_member, 8); }});
  c.push_back({.name = "PodGrouperJobBadOverride",
               .yaml = JobYaml("train", "  parallelism: 8\n",
                               "  annotations: {kai.scheduler/batch-min-member: lots}\n") +
                       "---\n" + PodYaml(Owner("batch/v1", "Job", "train")),
               .key = "team/Job-train",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .invalid = "Job team/train (batch/v1): metadata.annotations.kai.scheduler/"
                          "batch-min-member: must be an integer"});
  c.push_back({.name = "PodGrouperJobSet",
               .yaml = JobSetYaml(""),
               .key = "team/JobSet-js",
               .dialect = Dialect::kDerived,
               .via = "ownerReferences -> Job/js-workers-0 -> JobSet/js",
               .has_inline = true,
               .min_member = 9,  // 2 x 4 workers + 1 driver
               .check = [](const GangRef& r) { EXPECT_EQ(r.inline_spec->total_member, 9); }});
  // KAI jobset_grouper.go: InOrder -> one PodGroup per replicatedJob (the pod's label).
  c.push_back({.name = "PodGrouperJobSetInOrder",
               .yaml = JobSetYaml("  startupPolicy: {startupPolicyOrder: InOrder}\n"),
               .key = "team/JobSet-js-workers",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 8,  // the pod's replicatedJob: 2 x 4 workers
               .check = [](const GangRef& r) { EXPECT_EQ(r.inline_spec->total_member, 8); }});
  c.push_back({.name = "PodGrouperJobSetDisabledFallsBackToJob",
               .yaml = JobSetYaml(""),
               .gang = false,  // a Job is no gang of its own
               .opts = [](DialectOptions* o) { o->pod_grouper_kinds = {"Job"}; }});
  // A LeaderWorkerSet group: found by the pods' label (the workers' owner chain runs
  // through the leader pod), a gang of `size` per group (KAI lws_grouper.go).
  c.push_back({.name = "PodGrouperLeaderWorkerSetGroup",
               .yaml = "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
                       "metadata: {name: serve, namespace: team}\nspec:\n  replicas: 2\n"
                       "  leaderWorkerTemplate:\n    size: 4\n    workerTemplate: {spec: "
                       "{containers: [{name: w, image: w}]}}\n---\n" +
                       PodYaml("  labels: {leaderworkerset.sigs.k8s.io/name: serve, "
                               "leaderworkerset.sigs.k8s.io/group-index: \"1\"}\n"),
               .key = "team/LeaderWorkerSet-serve-group-1",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 4});
  // KAI's priority: the owner's priorityClassName label.
  c.push_back(
      {.name = "PodGrouperPriorityFromOwnerLabel",
       .yaml = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: torch, "
               "namespace: team, labels: {priorityClassName: build}}\nspec:\n"
               "  pytorchReplicaSpecs:\n    Worker: {replicas: 2}\n---\n" +
               PodYaml(Owner("kubeflow.org/v1", "PyTorchJob", "torch")),
       .key = "team/PyTorchJob-torch",
       .dialect = Dialect::kDerived,
       .has_inline = true,
       .min_member = 2,
       .check = [](const GangRef& r) { EXPECT_EQ(r.inline_spec->priority_class_name, "build"); }});
  c.push_back({.name = "PodGrouperPyTorchJob",
               .yaml = kPyTorchJob + PodYaml(Owner("kubeflow.org/v1", "PyTorchJob", "torch")),
               .key = "team/PyTorchJob-torch",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 4});
  c.push_back({.name = "PodGrouperPyTorchJobElastic",
               .yaml = R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: elastic, namespace: team}
spec:
  elasticPolicy: {minReplicas: 2, maxReplicas: 6, rdzvBackend: c10d}
  pytorchReplicaSpecs:
    Worker:
      replicas: 6
      template: {spec: {containers: [{name: pytorch, image: pt}]}}
---
)" + PodYaml(Owner("kubeflow.org/v1", "PyTorchJob", "elastic")),
               .key = "team/PyTorchJob-elastic",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 2,
               .check = [](const GangRef& r) { EXPECT_EQ(r.inline_spec->total_member, 6); }});
  c.push_back({.name = "PodGrouperPyTorchJobMissingReplicaSpecs",
               .yaml = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: bad, "
                       "namespace: team}\nspec: {}\n---\n" +
                       PodYaml(Owner("kubeflow.org/v1", "PyTorchJob", "bad")),
               .key = "team/PyTorchJob-bad",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .invalid = "PyTorchJob team/bad (kubeflow.org/v1): spec.pytorchReplicaSpecs: "
                          "required"});
  c.push_back({.name = "PodGrouperMPIJobLauncherThroughJob",
               .yaml = MPIJob("") +
                       JobYaml("mpi-launcher", "  parallelism: 1\n",
                               Owner("kubeflow.org/v2beta1", "MPIJob", "mpi")) +
                       "---\n" + PodYaml(Owner("batch/v1", "Job", "mpi-launcher")),
               .key = "team/MPIJob-mpi",
               .dialect = Dialect::kDerived,
               .via = "-> MPIJob/mpi",
               .has_inline = true,
               .min_member = 5});
  c.push_back({.name = "PodGrouperMPIJobWorker",
               .yaml = MPIJob("") + PodYaml(Owner("kubeflow.org/v2beta1", "MPIJob", "mpi")),
               .key = "team/MPIJob-mpi",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 5});
  c.push_back({.name = "PodGrouperMPIJobWaitForWorkers",
               .yaml = MPIJob("launcherCreationPolicy: WaitForWorkersReady") +
                       PodYaml(Owner("kubeflow.org/v2beta1", "MPIJob", "mpi")),
               .key = "team/MPIJob-mpi",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 4,
               .check = [](const GangRef& r) { EXPECT_EQ(r.inline_spec->total_member, 5); }});
  c.push_back({.name = "PodGrouperMPIJobMinAvailable",
               .yaml = MPIJob("runPolicy: {schedulingPolicy: {minAvailable: 3}}") +
                       PodYaml(Owner("kubeflow.org/v2beta1", "MPIJob", "mpi")),
               .key = "team/MPIJob-mpi",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 3});
  c.push_back({.name = "PodGrouperDeploymentIsNoGang",
               .yaml = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-5d4f
  namespace: team
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: web, uid: u1, controller: true}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
)" + PodYaml(Owner("apps/v1", "ReplicaSet", "web-5d4f")),
               .gang = false});
  c.push_back({.name = "PodGrouperDisabled",
               .yaml = kPyTorchJob + PodYaml(Owner("kubeflow.org/v1", "PyTorchJob", "torch")),
               .gang = false,
               .opts = [](DialectOptions* o) { o->pod_grouper = false; }});
  c.push_back({.name = "PodGrouperKindNotListed",
               .yaml = kPyTorchJob + PodYaml(Owner("kubeflow.org/v1", "PyTorchJob", "torch")),
               .gang = false,
               .opts = [](DialectOptions* o) {
                 o->pod_grouper_kinds = {"JobSet", "MPIJob"};
               }});
  c.push_back({.name = "PodGrouperOwnerNotFound",
               .yaml = PodYaml(Owner("batch/v1", "Job", "gone")),
               .gang = false});
  c.push_back({.name = "PodGrouperNonControllerOwnerIgnored",
               .yaml = JobYaml("train", "  parallelism: 4\n") + "---\n" +
                       PodYaml("  ownerReferences:\n  - {apiVersion: batch/v1, kind: Job, "
                               "name: train, uid: u, controller: false}\n"),
               .gang = false});
  c.push_back({.name = "PodGrouperCronJobUsesJob",
               .yaml = R"(apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: team}
spec:
  schedule: "0 0 * * *"
  jobTemplate: {spec: {parallelism: 3, template: {spec: {containers: [{name: c, image: c}]}}}}
---
)" + JobYaml("nightly-123", "  parallelism: 3\n", Owner("batch/v1", "CronJob", "nightly")) +
                       "---\n" + PodYaml(Owner("batch/v1", "Job", "nightly-123")),
               .gang = false});  // its Job is no gang (KAI's CronJob grouper: per pod too)
  c.push_back({.name = "PodGrouperUnknownKindIsInvalid",
               .yaml = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: ray, namespace: "
                       "team}\nspec: {}\n---\n" +
                       PodYaml(Owner("ray.io/v1", "RayJob", "ray")),
               .key = "team/RayJob-ray",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .invalid = "PodGrouper has no rule to derive a gang from RayJob",
               .opts = [](DialectOptions* o) { o->pod_grouper_kinds.push_back("RayJob"); }});
  c.push_back({.name = "PodGrouperQueueFromKAILabel",
               .yaml = JobYaml("train", "  parallelism: 2\n",
                               "  annotations: {kai.scheduler/batch-min-member: \"2\"}\n") +
                       "---\n" +
                       PodYaml("  labels: {kai.scheduler/queue: research}\n" +
                               Owner("batch/v1", "Job", "train")),
               .key = "team/Job-train",
               .dialect = Dialect::kDerived,
               .has_inline = true,
               .min_member = 2,
               .check = [](const GangRef& r) { EXPECT_EQ(r.inline_spec->queue, "research"); }});
  c.push_back({.name = "PlainPodIsNoGang", .yaml = PodYaml(""), .gang = false});
  return c;
}

class DialectPodTest : public ::testing::TestWithParam<PodCase> {};

TEST_P(DialectPodTest, Resolve) {
  const PodCase& tc = GetParam();
  World w;
  ASSERT_TRUE(Decode(tc.yaml, &w));
  const api::Pod* pod = w.Pod("p");
  ASSERT_NE(pod, nullptr);
  DialectOptions opts;
  if (tc.opts) tc.opts(&opts);
  const std::optional<GangRef> ref = ResolvePodGang(*pod, opts, w.Lookup());
  if (!tc.gang) {
    EXPECT_FALSE(ref.has_value()) << "unexpected gang " << (ref ? ref->key : "");
    return;
  }
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->key, tc.key);
  EXPECT_EQ(ref->spec_key, tc.spec_key.empty() ? tc.key : tc.spec_key);
  EXPECT_EQ(ref->dialect, tc.dialect) << DialectName(ref->dialect);
  EXPECT_EQ(ref->namespace_, "team");
  if (!tc.via.empty()) {
    EXPECT_NE(ref->via.find(tc.via), std::string::npos) << ref->via;
  }
  EXPECT_EQ(ref->inline_spec.has_value(), tc.has_inline);
  if (ref->inline_spec) {
    const PodGroupSpec& s = *ref->inline_spec;
    EXPECT_EQ(s.key, ref->spec_key);
    if (tc.invalid.empty()) {
      EXPECT_EQ(s.invalid, "");
      EXPECT_EQ(s.min_member, tc.min_member);
    } else {
      EXPECT_NE(s.invalid.find(tc.invalid), std::string::npos) << s.invalid;
    }
  }
  if (tc.check) tc.check(*ref);
}

INSTANTIATE_TEST_SUITE_P(Dialects, DialectPodTest, ::testing::ValuesIn(PodCases()),
                         [](const ::testing::TestParamInfo<PodCase>& i) { return i.param.name; });

// A pod of each dialect in one manifest set resolves independently (the OwnerLookup sees
// every object, only the pod's own reference matters).
TEST(DialectPodMixed, EachPodItsOwnDialect) {
  World w;
  ASSERT_TRUE(Decode(R"(apiVersion: v1
kind: Pod
metadata: {name: a, namespace: ns, labels: {scheduling.x-k8s.io/pod-group: pg}}
spec: {containers: [{name: c, image: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: ns, annotations: {scheduling.volcano.sh/group-name: pg}}
spec: {containers: [{name: c, image: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: c, namespace: ns, annotations: {pod-group-name: pg}}
spec: {containers: [{name: c, image: c}]}
)",
                     &w));
  const std::map<std::string, Dialect> want = {
      {"a", Dialect::kCoscheduling}, {"b", Dialect::kVolcano}, {"c", Dialect::kKAI}};
  for (const auto& [name, dialect] : want) {
    auto ref = ResolvePodGang(*w.Pod(name), DialectOptions{}, w.Lookup());
    ASSERT_TRUE(ref.has_value()) << name;
    EXPECT_EQ(ref->dialect, dialect) << name;
    EXPECT_EQ(ref->key, "ns/pg") << name;
  }
}

TEST(DialectPodMixed, NullLookupStillResolvesExplicitGangs) {
  World w;
  ASSERT_TRUE(Decode(PodYaml("  labels: {scheduling.x-k8s.io/pod-group: pg1}\n"), &w));
  auto ref = ResolvePodGang(*w.Pod("p"), DialectOptions{}, OwnerLookup{});
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->key, "team/pg1");
}

// ---------------------------------------------------------------------------------------
// SpecsFromObject / IsGangObject
// ---------------------------------------------------------------------------------------

struct ObjCase {
  std::string name;
  std::string yaml;  // exactly one object of interest (the first Unstructured)
  bool is_gang = true;
  size_t count = 1;
  std::string key;  // of specs[0]
  Dialect dialect = Dialect::kCoscheduling;
  int32_t min_member = 0;
  std::string invalid;  // substring of specs[0].invalid ("" = must be valid)
  std::function<void(const std::vector<PodGroupSpec>&)> check;
};
// Short names in test listings (ctest shows GetParam()).
void PrintTo(const ObjCase& c, std::ostream* os) { *os << c.name; }

std::vector<ObjCase> ObjCases() {
  std::vector<ObjCase> c;
  // --- Coscheduling ---
  c.push_back({.name = "CoschedulingPodGroup",
               .yaml = R"(apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: nginx
  namespace: team
  creationTimestamp: "2024-05-01T10:00:00Z"
spec:
  minMember: 3
  scheduleTimeoutSeconds: 60
  minResources:
    cpu: "4"
    memory: 8Gi
    nvidia.com/gpu: "2"
)",
               .key = "team/nginx",
               .dialect = Dialect::kCoscheduling,
               .min_member = 3,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_TRUE(s[0].has_min_resources);
                 EXPECT_EQ(s[0].min_resources.milli_cpu, 4000);
                 EXPECT_EQ(s[0].min_resources.memory, 8LL << 30);
                 EXPECT_EQ(s[0].min_resources.Get("nvidia.com/gpu"), 2);
                 EXPECT_EQ(s[0].schedule_timeout_ns, 60 * kSec);
                 EXPECT_EQ(s[0].match_policy, MatchPolicy::kWaitingAndRunning);
                 EXPECT_EQ(s[0].mode, GangMode::kStrict);
                 EXPECT_EQ(s[0].total_member, 0);
                 EXPECT_GT(s[0].creation_timestamp, 0);
                 EXPECT_NE(s[0].source.find("scheduling.x-k8s.io/v1alpha1"), std::string::npos);
               }});
  c.push_back({.name = "CoschedulingMinMemberZero",
               .yaml = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {minMember: 0}\n",
               .key = "team/pg",
               .invalid = "PodGroup team/pg (scheduling.x-k8s.io/v1alpha1): spec.minMember: "
                          "must be >= 1, got 0"});
  c.push_back({.name = "CoschedulingMinMemberMissing",
               .yaml = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {scheduleTimeoutSeconds: 10}\n",
               .key = "team/pg",
               .invalid = "spec.minMember: required"});
  c.push_back({.name = "CoschedulingMinMemberNotInt",
               .yaml = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {minMember: three}\n",
               .key = "team/pg",
               .invalid = "spec.minMember: must be an integer, got \"three\""});
  c.push_back({.name = "CoschedulingBadQuantity",
               .yaml = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {minMember: 2, minResources: {cpu: "
                       "4 cores}}\n",
               .key = "team/pg",
               .invalid = "spec.minResources.cpu: quantities must match"});
  c.push_back({.name = "CoschedulingNegativeTimeout",
               .yaml = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {minMember: 2, "
                       "scheduleTimeoutSeconds: -1}\n",
               .key = "team/pg",
               .invalid = "spec.scheduleTimeoutSeconds: must be between 0"});
  c.push_back(
      {.name = "CoschedulingLegacyGroupWithKoordinatorAnnotations",
       .yaml = R"(apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: gang-a
  namespace: team
  annotations:
    gang.scheduling.koordinator.sh/total-number: "6"
    gang.scheduling.koordinator.sh/mode: NonStrict
    gang.scheduling.koordinator.sh/groups: '["team/gang-a", "other/gang-b"]'
spec:
  minMember: 4
  scheduleTimeoutSeconds: 600
)",
       .key = "team/gang-a",
       .dialect = Dialect::kCoscheduling,
       .min_member = 4,
       .check = [](const std::vector<PodGroupSpec>& s) {
         EXPECT_EQ(s[0].total_member, 6);
         EXPECT_EQ(s[0].mode, GangMode::kNonStrict);
         EXPECT_EQ(s[0].match_policy, MatchPolicy::kOnceSatisfied);
         EXPECT_EQ(s[0].gang_group, (std::vector<std::string>{"other/gang-b", "team/gang-a"}));
         EXPECT_EQ(s[0].schedule_timeout_ns, 600 * kSec);
       }});
  c.push_back({.name = "CoschedulingKoordinatorBadMode",
               .yaml = "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n"
                       "  name: pg\n  namespace: team\n  annotations: "
                       "{gang.scheduling.koordinator.sh/mode: strict}\nspec: {minMember: 2}\n",
               .key = "team/pg",
               .invalid = "metadata.annotations.gang.scheduling.koordinator.sh/mode: must be "
                          "Strict or NonStrict, got \"strict\""});
  // --- Volcano ---
  c.push_back({.name = "VolcanoPodGroup",
               .yaml = R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: tf-job, namespace: team}
spec:
  minMember: 4
  minTaskMember: {ps: 1, worker: 3}
  queue: research
  priorityClassName: high
  minResources: {cpu: 2500m, nvidia.com/gpu: "4"}
)",
               .key = "team/tf-job",
               .dialect = Dialect::kVolcano,
               .min_member = 4,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[0].queue, "research");
                 EXPECT_EQ(s[0].priority_class_name, "high");
                 EXPECT_EQ(s[0].min_resources.milli_cpu, 2500);
                 EXPECT_EQ(s[0].min_resources.Get("nvidia.com/gpu"), 4);
                 ASSERT_EQ(s[0].sub_groups.size(), 2u);
                 EXPECT_EQ(s[0].sub_groups[0].name, "ps");
                 EXPECT_EQ(s[0].sub_groups[0].min_member, 1);
                 EXPECT_EQ(s[0].sub_groups[1].name, "worker");
                 EXPECT_EQ(s[0].sub_groups[1].min_member, 3);
                 EXPECT_EQ(s[0].match_policy, MatchPolicy::kWaitingAndRunning);
               }});
  c.push_back({.name = "VolcanoDefaultQueue",
               .yaml = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {minMember: 2}\n",
               .key = "team/pg",
               .dialect = Dialect::kVolcano,
               .min_member = 2,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[0].queue, "default");
                 EXPECT_FALSE(s[0].has_min_resources);
               }});
  c.push_back({.name = "VolcanoNegativeMinMember",
               .yaml = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {minMember: -1}\n",
               .key = "team/pg",
               .dialect = Dialect::kVolcano,
               .invalid = "spec.minMember: must be >= 1, got -1"});
  c.push_back({.name = "VolcanoBadTaskMember",
               .yaml = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {minMember: 2, minTaskMember: "
                       "{worker: many}}\n",
               .key = "team/pg",
               .dialect = Dialect::kVolcano,
               .invalid = "spec.minTaskMember.worker: must be an integer"});
  // --- KAI ---
  c.push_back({.name = "KAIPodGroup",
               .yaml = R"(apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: pg-train, namespace: team}
spec:
  minMember: 5
  queue: research
  priorityClassName: train
  topologyConstraint:
    topology: cluster-topology
    requiredTopologyLevel: cloud.provider.com/rack
  subGroups:
  - {name: leader, minMember: 1}
  - {name: workers, minMember: 4}
  - {name: workers-a, minMember: 2, parent: workers}
)",
               .key = "team/pg-train",
               .dialect = Dialect::kKAI,
               .min_member = 5,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[0].queue, "research");
                 EXPECT_EQ(s[0].priority_class_name, "train");
                 EXPECT_EQ(s[0].topology.topology, "cluster-topology");
                 EXPECT_EQ(s[0].topology.required_level, "cloud.provider.com/rack");
                 EXPECT_EQ(s[0].topology.preferred_level, "");
                 ASSERT_EQ(s[0].sub_groups.size(), 3u);
                 EXPECT_EQ(s[0].sub_groups[2].name, "workers-a");
                 EXPECT_EQ(s[0].sub_groups[2].parent, "workers");
                 EXPECT_EQ(s[0].sub_groups[2].min_member, 2);
               }});
  c.push_back({.name = "KAIMinFromSubGroups",
               .yaml = R"(apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata:
  name: pg-js
  namespace: team
  labels: {kai.scheduler/queue: team-queue}
spec:
  topologyConstraint: {preferredTopologyLevel: zone}
  subGroups:
  - {name: workers, minSubGroup: 2}
  - {name: workers-0, minMember: 4, parent: workers}
  - {name: workers-1, minMember: 4, parent: workers}
  - {name: workers-2, minMember: 4, parent: workers}
  - {name: driver, minMember: 1}
)",
               .key = "team/pg-js",
               .dialect = Dialect::kKAI,
               .min_member = 9,  // 2 of 3 worker replicas (4 each) + the driver
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[0].queue, "team-queue");
                 EXPECT_EQ(s[0].topology.preferred_level, "zone");
                 EXPECT_EQ(s[0].topology.required_level, "");
                 EXPECT_EQ(s[0].sub_groups[0].min_member, 8);
                 EXPECT_EQ(s[0].sub_groups[0].min_sub_group, 2);  // kept for subgroups.h
                 EXPECT_FALSE(s[0].sub_groups[1].min_sub_group.has_value());
                 EXPECT_FALSE(s[0].min_sub_group.has_value());
               }});
  c.push_back({.name = "KAIUnknownParent",
               .yaml = "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec:\n  minMember: 2\n  subGroups:\n  - "
                       "{name: a, minMember: 1, parent: nope}\n",
               .key = "team/pg",
               .dialect = Dialect::kKAI,
               .invalid = "spec.subGroups[0].parent: unknown sub-group \"nope\""});
  c.push_back({.name = "KAIMinMemberZero",
               .yaml = "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {minMember: 0, queue: q}\n",
               .key = "team/pg",
               .dialect = Dialect::kKAI,
               .invalid = "spec.minMember: must be >= 1, got 0"});
  // --- upstream Workload API ---
  c.push_back({.name = "Workload135",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train, namespace: team}
spec:
  controllerRef: {apiGroup: batch, kind: Job, name: train}
  podGroups:
  - name: workers
    policy:
      gang: {minCount: 4}
  - name: logger
    policy:
      basic: {}
)",
               .key = "team/train/workers",
               .dialect = Dialect::kWorkload,
               .min_member = 4,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[0].schedule_timeout_ns, 300 * kSec);
                 EXPECT_EQ(s[0].namespace_, "team");
               }});
  c.push_back({.name = "Workload135TwoGangs",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: lws, namespace: team}
spec:
  podGroups:
  - {name: leader, policy: {gang: {minCount: 1}}}
  - {name: workers, policy: {gang: {minCount: 8}}}
)",
               .count = 2,
               .key = "team/lws/leader",
               .dialect = Dialect::kWorkload,
               .min_member = 1,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[1].key, "team/lws/workers");
                 EXPECT_EQ(s[1].min_member, 8);
               }});
  c.push_back({.name = "Workload135MinCountZero",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: "
                       "{name: w, namespace: team}\nspec:\n  podGroups:\n  - {name: g, policy: "
                       "{gang: {minCount: 0}}}\n",
               .key = "team/w/g",
               .dialect = Dialect::kWorkload,
               .invalid = "Workload team/w (scheduling.k8s.io/v1alpha1): "
                          "spec.podGroups[0].policy.gang.minCount: must be >= 1, got 0"});
  c.push_back({.name = "Workload135BothPolicies",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: "
                       "{name: w, namespace: team}\nspec:\n  podGroups:\n  - {name: g, policy: "
                       "{basic: {}, gang: {minCount: 2}}}\n",
               .key = "team/w/g",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.podGroups[0].policy: exactly one of basic or gang"});
  c.push_back({.name = "Workload136Templates",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: train, namespace: team}
spec:
  podGroupTemplates:
  - name: worker
    schedulingPolicy: {gang: {minCount: 3}}
    schedulingConstraints:
      topology: [{key: topology.kubernetes.io/rack}]
)",
               .key = "team/train/worker",
               .dialect = Dialect::kWorkload,
               .min_member = 3,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[0].topology.required_level, "topology.kubernetes.io/rack");
               }});
  c.push_back({.name = "UpstreamPodGroup136",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train-0, namespace: team}
spec:
  podGroupTemplateRef:
    workload: {workloadName: train, podGroupTemplateName: worker}
  schedulingPolicy:
    gang: {minCount: 4}
  schedulingConstraints:
    topology: [{key: topology.kubernetes.io/zone}]
)",
               .key = "team/train-0",
               .dialect = Dialect::kWorkload,
               .min_member = 4,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[0].topology.required_level, "topology.kubernetes.io/zone");
                 EXPECT_EQ(s[0].schedule_timeout_ns, 300 * kSec);
               }});
  // The drafts' names (KEP-4671 before 1.36) are refused as the API server refuses them
  // under strict decoding (and drops them otherwise): never a gang without its constraint.
  c.push_back({.name = "UpstreamPodGroupDraftTopologyNames",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: pg, namespace: team}
spec:
  schedulingPolicy: {gang: {minCount: 4}}
  schedulingConstraints:
    topologyConstraints: [{topologyKey: topology.kubernetes.io/zone}]
)",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .min_member = 4,
               .invalid = "PodGroup team/pg (scheduling.k8s.io/v1alpha2): "
                          "spec.schedulingConstraints.topologyConstraints: unknown field "
                          "(scheduling.k8s.io/v1alpha2 names it topology[].key)"});
  c.push_back({.name = "UpstreamPodGroupDraftKeyName",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: "
                       "2}}, schedulingConstraints: {topology: [{topologyKey: zone}]}}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.schedulingConstraints.topology[0].topologyKey: unknown field "
                          "(scheduling.k8s.io/v1alpha2 names it key)"});
  c.push_back({.name = "UpstreamPodGroupTwoTopologies",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: "
                       "2}}, schedulingConstraints: {topology: [{key: zone}, {key: rack}]}}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.schedulingConstraints.topology: must have at most 1 item, got 2"});
  c.push_back({.name = "UpstreamPodGroupTopologyWithoutKey",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: "
                       "2}}, schedulingConstraints: {topology: [{}]}}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.schedulingConstraints.topology[0].key: required"});
  c.push_back({.name = "UpstreamPodGroupUnknownSpecField",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: "
                       "2}}, minMember: 2}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.minMember: unknown field"});
  // 1.37 names the template reference workloadRef; 1.36 podGroupTemplateRef.
  c.push_back({.name = "UpstreamPodGroup136RefusesThe137Reference",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: "
                       "2}}, workloadRef: {workloadName: w, templateName: t}}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.workloadRef: unknown field"});
  c.push_back({.name = "UpstreamPodGroup137WorkloadRef",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: team}
spec:
  workloadRef: {workloadName: train, templateName: worker}
  schedulingPolicy: {gang: {minCount: 3}}
  schedulingConstraints: {topology: [{key: topology.kubernetes.io/rack}]}
)",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .min_member = 3,
               .check = [](const std::vector<PodGroupSpec>& s) {
                 EXPECT_EQ(s[0].topology.required_level, "topology.kubernetes.io/rack");
               }});
  // Workload-aware preemption's fields (alpha) are defined but not honoured: named.
  c.push_back({.name = "UpstreamPodGroupDisruptionModeNotHonoured",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: "
                       "2}}, disruptionMode: PodGroup, priority: 7}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.disruptionMode: not supported by this scheduler; spec.priority: "
                          "not supported by this scheduler"});
  c.push_back({.name = "UpstreamPodGroup137InACompositePodGroup",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: "
                       "2}}, parentCompositePodGroupName: cpg}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.parentCompositePodGroupName: not supported by this scheduler"});
  c.push_back({.name = "CompositePodGroupIsGangObjectWithoutSpecs",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\n"
                       "metadata: {name: cpg, namespace: team}\nspec: {schedulingPolicy: {gang: "
                       "{minGroupCount: 2}}}\n",
               .count = 0});
  c.push_back({.name = "CompositePodGroupMinGroupCountZero",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\n"
                       "metadata: {name: cpg, namespace: team}\nspec: {schedulingPolicy: {gang: "
                       "{minCount: 2}}}\n",
               .key = "team/cpg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.schedulingPolicy.gang.minCount: unknown field; "
                          "spec.schedulingPolicy.gang.minGroupCount: required, must be >= 1"});
  c.push_back({.name = "Workload137CompositeTemplates",
               .yaml = R"(apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: team}
spec:
  podGroupTemplates:
  - {name: t, schedulingPolicy: {gang: {minCount: 2}}}
  compositePodGroupTemplates:
  - name: c
    schedulingPolicy: {gang: {minGroupCount: 2}}
    podGroupTemplates: [{name: inner, schedulingPolicy: {gang: {minCount: 1}}}]
)",
               .key = "team/w/t",
               .dialect = Dialect::kWorkload,
               .min_member = 2});
  c.push_back({.name = "UpstreamPodGroupBasicIsNoSpec",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {basic: {}}}\n",
               .count = 0});
  c.push_back({.name = "UpstreamPodGroupNoPolicy",
               .yaml = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .invalid = "spec.schedulingPolicy: required"});
  c.push_back({.name = "UpstreamPodGroup137",
               .yaml = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: "
                       "{name: pg, namespace: team}\nspec: {schedulingPolicy: {gang: {minCount: "
                       "2}}}\n",
               .key = "team/pg",
               .dialect = Dialect::kWorkload,
               .min_member = 2});
  c.push_back({.name = "Workload137Templates",
               .yaml = "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: "
                       "{name: w, namespace: team}\nspec:\n  podGroupTemplates:\n  - {name: t, "
                       "schedulingPolicy: {gang: {minCount: 6}}}\n",
               .key = "team/w/t",
               .dialect = Dialect::kWorkload,
               .min_member = 6});
  // --- not gang objects ---
  c.push_back({.name = "VolcanoQueueIsNotGang",
               .yaml = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: "
                       "{name: research}\nspec: {weight: 1}\n",
               .is_gang = false,
               .count = 0});
  c.push_back({.name = "KueueWorkloadIsNotGang",
               .yaml = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: "
                       "{name: job-a, namespace: team}\nspec: {queueName: q}\n",
               .is_gang = false,
               .count = 0});
  c.push_back({.name = "JobIsNotGangObject",
               .yaml = JobYaml("train", "  parallelism: 4\n"),
               .is_gang = false,
               .count = 0});
  return c;
}

class DialectObjectTest : public ::testing::TestWithParam<ObjCase> {};

TEST_P(DialectObjectTest, Specs) {
  const ObjCase& tc = GetParam();
  World w;
  ASSERT_TRUE(Decode(tc.yaml, &w));
  ASSERT_FALSE(w.m.objects.empty());
  const api::Unstructured& obj = w.m.objects.front();
  EXPECT_EQ(IsGangObject(obj), tc.is_gang);
  const std::vector<PodGroupSpec> specs = SpecsFromObject(obj);
  ASSERT_EQ(specs.size(), tc.count);
  if (tc.count == 0) return;
  const PodGroupSpec& s = specs[0];
  EXPECT_EQ(s.key, tc.key);
  EXPECT_EQ(s.dialect, tc.dialect) << DialectName(s.dialect);
  EXPECT_EQ(s.namespace_, "team");
  EXPECT_FALSE(s.source.empty());
  if (tc.invalid.empty()) {
    EXPECT_EQ(s.invalid, "");
    EXPECT_EQ(s.min_member, tc.min_member);
  } else {
    EXPECT_NE(s.invalid.find(tc.invalid), std::string::npos) << s.invalid;
  }
  if (tc.check) tc.check(specs);
}

INSTANTIATE_TEST_SUITE_P(Dialects, DialectObjectTest, ::testing::ValuesIn(ObjCases()),
                         [](const ::testing::TestParamInfo<ObjCase>& i) { return i.param.name; });

// A pod's reference and the object's spec meet on the same key.
TEST(DialectKeys, RefMatchesSpecKey) {
  World w;
  ASSERT_TRUE(Decode(R"(apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train, namespace: team}
spec:
  podGroups:
  - {name: workers, policy: {gang: {minCount: 2}}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: vc, namespace: team}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: w0, namespace: team}
spec:
  workloadRef: {name: train, podGroup: workers, podGroupReplicaKey: "0"}
  containers: [{name: c, image: c}]
---
apiVersion: v1
kind: Pod
metadata: {name: v0, namespace: team, annotations: {scheduling.k8s.io/group-name: vc}}
spec: {containers: [{name: c, image: c}]}
)",
                     &w));
  std::map<std::string, PodGroupSpec> specs;
  for (const auto& o : w.m.objects) {
    for (auto& s : SpecsFromObject(o)) specs[s.key] = s;
  }
  for (const char* pod : {"w0", "v0"}) {
    auto ref = ResolvePodGang(*w.Pod(pod), DialectOptions{}, w.Lookup());
    ASSERT_TRUE(ref.has_value()) << pod;
    ASSERT_TRUE(specs.count(ref->spec_key)) << pod << " " << ref->spec_key;
    EXPECT_EQ(specs[ref->spec_key].dialect, ref->dialect) << pod;
  }
  EXPECT_EQ(ResolvePodGang(*w.Pod("w0"), DialectOptions{}, w.Lookup())->key,
            "team/train/workers/0");
}

TEST(DialectNames, AllDialectsNamed) {
  EXPECT_STREQ(DialectName(Dialect::kCoscheduling), "Coscheduling");
  EXPECT_STREQ(DialectName(Dialect::kWorkload), "Workload");
  EXPECT_STREQ(DialectName(Dialect::kKoordinator), "Koordinator");
  EXPECT_STREQ(DialectName(Dialect::kVolcano), "Volcano");
  EXPECT_STREQ(DialectName(Dialect::kKAI), "KAI");
  EXPECT_STREQ(DialectName(Dialect::kDerived), "PodGrouper");
}

// ---------------------------------------------------------------------------------------
// Value parsers
// ---------------------------------------------------------------------------------------

TEST(DialectParse, GoDuration) {
  struct Case {
    const char* in;
    bool ok;
    int64_t ns;
  };
  const Case cases[] = {
      {"0", true, 0},
      {"300ms", true, 300'000'000},
      {"1.5h", true, 5400 * kSec},
      {"2h45m", true, (2 * 3600 + 45 * 60) * kSec},
      {"-1m30s", true, -90 * kSec},
      {"+10s", true, 10 * kSec},
      {"1us", true, 1000},
      {"1\xC2\xB5s", true, 1000},
      {".5s", true, 500'000'000},
      {"1.s", true, kSec},
      {"3600s", true, 3600 * kSec},
      {"2562047h", true, 2562047LL * 3600 * kSec},
      {"", false, 0},
      {"10", false, 0},
      {"10 s", false, 0},
      {"1d", false, 0},
      {".s", false, 0},
      {"s", false, 0},
      {"-", false, 0},
      {"9999999999999h", false, 0},
  };
  for (const auto& c : cases) {
    int64_t ns = -7;
    std::string err;
    EXPECT_EQ(api::MoveOrMessage(detail::ParseGoDuration(c.in), &ns, &err), c.ok)
        << c.in << " " << err;
    if (c.ok) {
      EXPECT_EQ(ns, c.ns) << c.in;
    } else {
      EXPECT_NE(err.find("time: "), std::string::npos) << c.in;
    }
  }
}

TEST(DialectParse, JsonStringArray) {
  struct Case {
    const char* in;
    bool ok;
    std::vector<std::string> out;
  };
  const Case cases[] = {
      {R"(["a/b", "c/d"])", true, {"a/b", "c/d"}},
      {R"( [ ] )", true, {}},
      {"null", true, {}},
      {R"(["q\"x", "\u0041\n"])", true, {"q\"x", "A\n"}},
      {R"(["\ud83d\ude00"])", true, {"\xF0\x9F\x98\x80"}},
      {R"(["a",])", false, {}},
      {R"([a/b])", false, {}},
      {R"(["a" "b"])", false, {}},
      {R"(["a"] x)", false, {}},
      {R"("a")", false, {}},
      {R"([1])", false, {}},
      {R"(["a)", false, {}},
      {R"(["\x"])", false, {}},
      {"", false, {}},
      {R"({"a": "b"})", false, {}},
      {R"(["a", null])", false, {}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> out;
    std::string err;
    EXPECT_EQ(api::MoveOrMessage(detail::ParseJsonStringArray(c.in), &out, &err), c.ok)
        << c.in << " " << err;
    if (!c.ok) {
      EXPECT_EQ(err.rfind("must be a JSON array of strings: ", 0), 0u) << c.in << " " << err;
    }
    if (c.ok) {
      EXPECT_EQ(out, c.out) << c.in;
    }
  }
}

TEST(DialectParse, IntAndNames) {
  int64_t v = 0;
  EXPECT_TRUE(detail::ParseInt64("42", &v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(detail::ParseInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(detail::ParseInt64("9223372036854775808", &v));
  EXPECT_FALSE(detail::ParseInt64("4.0", &v));
  EXPECT_FALSE(detail::ParseInt64(" 4", &v));
  EXPECT_FALSE(detail::ParseInt64("", &v));
  EXPECT_FALSE(detail::ParseInt64("-", &v));

  EXPECT_TRUE(detail::IsDNS1123Subdomain("gang-a"));
  EXPECT_TRUE(detail::IsDNS1123Subdomain("a.b-c.d0"));
  EXPECT_FALSE(detail::IsDNS1123Subdomain("Gang"));
  EXPECT_FALSE(detail::IsDNS1123Subdomain("-a"));
  EXPECT_FALSE(detail::IsDNS1123Subdomain("a..b"));
  EXPECT_FALSE(detail::IsDNS1123Subdomain("a_b"));
  EXPECT_FALSE(detail::IsDNS1123Subdomain(""));
  EXPECT_FALSE(detail::IsDNS1123Subdomain(std::string(254, 'a')));
}

// ---------------------------------------------------------------------------------------
// DefaultPodGroupManager: RefPtrOf and status-only object updates
// ---------------------------------------------------------------------------------------

constexpr const char* kManagerYaml = R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ns
  labels: {scheduling.x-k8s.io/pod-group: pg}
spec:
  containers: [{name: c, image: i}]
---
apiVersion: v1
kind: Pod
metadata: {name: loner, namespace: ns}
spec:
  containers: [{name: c, image: i}]
)";

TEST(ManagerRefs, RefPtrOfMatchesRefOf) {
  World w;
  ASSERT_TRUE(Decode(kManagerYaml, &w));
  DefaultPodGroupManager m;
  for (const auto& o : w.m.objects) m.OnObjectAdd(std::make_shared<const api::Unstructured>(o));
  for (const auto& p : w.m.pods) m.OnPodAdd(std::make_shared<const api::Pod>(p), 1);
  auto ref = m.RefOf(*w.Pod("p"));
  auto ptr = m.RefPtrOf(*w.Pod("p"));
  ASSERT_TRUE(ref.has_value());
  ASSERT_NE(ptr, nullptr);
  EXPECT_EQ(ptr->key, "ns/pg");
  EXPECT_EQ(ptr->key, ref->key);
  EXPECT_EQ(ptr->spec_key, ref->spec_key);
  EXPECT_EQ(ptr->via, ref->via);
  EXPECT_EQ(m.RefPtrOf(*w.Pod("loner")), nullptr);
  EXPECT_FALSE(m.RefOf(*w.Pod("loner")).has_value());
  // A pod key longer than RefPtrOf's stack buffer takes the heap path.
  api::Pod long_name = *w.Pod("p");
  long_name.metadata.name = std::string(300, 'x');
  m.OnPodAdd(std::make_shared<const api::Pod>(long_name), 1);
  auto lp = m.RefPtrOf(long_name);
  ASSERT_NE(lp, nullptr);
  EXPECT_EQ(lp->key, "ns/pg");
}

TEST(ManagerRefs, StatusUpdateKeepsSpecsAndUnknownObjectsAreAdded) {
  World w;
  ASSERT_TRUE(Decode(kManagerYaml, &w));
  const api::Unstructured& pg = w.m.objects.at(0);
  DefaultPodGroupManager m;
  // Unknown object: handled as an add (its spec is parsed).
  m.OnObjectStatusUpdate(std::make_shared<const api::Unstructured>(pg));
  auto s = m.SummaryOf("ns/pg");
  ASSERT_TRUE(s && s->spec);
  EXPECT_EQ(s->spec->min_member, 2);
  // A status write on a known object keeps the parsed spec (same shared object).
  api::Unstructured with_status = pg;
  auto doc = std::make_shared<YAML::Node>(YAML::Clone(*pg.object));
  (*doc)["status"]["phase"] = "Scheduled";
  with_status.object = doc;
  with_status.metadata.resource_version = "7";
  m.OnObjectStatusUpdate(std::make_shared<const api::Unstructured>(with_status));
  auto s2 = m.SummaryOf("ns/pg");
  ASSERT_TRUE(s2 && s2->spec);
  EXPECT_EQ(s2->spec.get(), s->spec.get());
  // A real spec change through OnObjectUpdate re-parses.
  api::Unstructured changed = pg;
  auto doc2 = std::make_shared<YAML::Node>(YAML::Clone(*pg.object));
  (*doc2)["spec"]["minMember"] = 5;
  changed.object = doc2;
  m.OnObjectUpdate(std::make_shared<const api::Unstructured>(changed));
  auto s3 = m.SummaryOf("ns/pg");
  ASSERT_TRUE(s3 && s3->spec);
  EXPECT_EQ(s3->spec->min_member, 5);
}

}  // namespace
}  // namespace phalanx::gang

namespace phalanx::gang {
namespace {

api::Unstructured OneObject(const std::string& yaml) {
  api::Manifests m;
  std::string err;
  EXPECT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &m), &err)) << err;
  return m.objects.empty() ? api::Unstructured{} : m.objects[0];
}

// Koordinator's gather rules (apis/extension/network_topology.go): the annotation's JSON
// becomes MustGather / PreferGather layers against the ClusterNetworkTopology "default";
// the proposal's draft key is refused by name; podCountMultiple is unsupported.
TEST(DialectKoordinatorNetworkTopology, GatherRulesBecomeTheConstraint) {
  const auto specs = SpecsFromObject(OneObject(R"(apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: g
  namespace: team
  annotations:
    gang.scheduling.koordinator.sh/network-topology-spec: '{"gatherStrategy": [{"layer": "SpineLayer", "strategy": "MustGather"}, {"layer": "BlockLayer", "strategy": "PreferGather"}]}'
spec: {minMember: 2}
)"));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].invalid, "");
  EXPECT_EQ(specs[0].topology.topology, "scheduling.koordinator.sh/default");
  EXPECT_EQ(specs[0].topology.must_gather, std::vector<std::string>{"SpineLayer"});
  EXPECT_EQ(specs[0].topology.prefer_gather, std::vector<std::string>{"BlockLayer"});

  const auto draft = SpecsFromObject(OneObject(R"(apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: g
  namespace: team
  annotations:
    gang.scheduling.koordinator.sh/networkTopologyAware: '{"gatherStrategy": []}'
spec: {minMember: 2}
)"));
  ASSERT_EQ(draft.size(), 1u);
  EXPECT_NE(draft[0].invalid.find("gang.scheduling.koordinator.sh/networkTopologyAware: not read "
                                  "by Koordinator"),
            std::string::npos)
      << draft[0].invalid;

  const auto multiple = SpecsFromObject(OneObject(R"(apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: g
  namespace: team
  annotations:
    gang.scheduling.koordinator.sh/network-topology-spec: '{"gatherStrategy": [{"layer": "BlockLayer", "strategy": "MustGather", "podCountMultiple": 4}]}'
spec: {minMember: 2}
)"));
  ASSERT_EQ(multiple.size(), 1u);
  EXPECT_NE(multiple[0].topology.unsupported.find("podCountMultiple: not supported"),
            std::string::npos)
      << multiple[0].topology.unsupported;
}

// A ClusterNetworkTopology (apis/scheduling/v1alpha1/cluster_network_topology_types.go):
// levels from the chain of parentTopologyLayer, the node layer last; an unknown field (the
// proposal's spec.hierarchy) makes it invalid.
TEST(DialectKoordinatorNetworkTopology, ClusterNetworkTopologyLevels) {
  const api::Unstructured cnt = OneObject(R"(apiVersion: scheduling.koordinator.sh/v1alpha1
kind: ClusterNetworkTopology
metadata: {name: default}
spec:
  networkTopologySpec:
  - {topologyLayer: SpineLayer, labelKey: [network.topology.nvidia.com/spine]}
  - {topologyLayer: BlockLayer, parentTopologyLayer: SpineLayer, labelKey: [network.topology.nvidia.com/block]}
  - {topologyLayer: NodeTopologyLayer, parentTopologyLayer: BlockLayer}
)");
  ASSERT_TRUE(IsTopologyObject(cnt));
  const Topology t = TopologyFromObject(cnt);
  EXPECT_EQ(t.invalid, "");
  EXPECT_EQ(t.name, "scheduling.koordinator.sh/default");
  EXPECT_EQ(t.levels, (std::vector<std::string>{"network.topology.nvidia.com/spine",
                                                "network.topology.nvidia.com/block",
                                                "kubernetes.io/hostname"}));
  EXPECT_EQ(t.layer_names,
            (std::vector<std::string>{"SpineLayer", "BlockLayer", "NodeTopologyLayer"}));

  const Topology draft =
      TopologyFromObject(OneObject(R"(apiVersion: scheduling.koordinator.sh/v1alpha1
kind: ClusterNetworkTopology
metadata: {name: default}
spec:
  hierarchy:
  - {layerName: nodeLayer, parentTopologyLayer: blockLayer}
)"));
  EXPECT_NE(draft.invalid.find("spec.hierarchy: unknown field"), std::string::npos)
      << draft.invalid;
  EXPECT_NE(draft.invalid.find("spec.networkTopologySpec: must have at least 1 item"),
            std::string::npos)
      << draft.invalid;
}

}  // namespace
}  // namespace phalanx::gang
