#include "sim/kinds.h"

#include <yaml-cpp/yaml.h>

#include <string_view>

#include "dra/model.h"
#include "gang/dialects.h"
#include "gang/topology_hypernode.h"
#include "quota/queue_tree.h"
#include "sim/workloads.h"
#include "volume/objects.h"

namespace phalanx::sim {

namespace {

struct KnownKind {
  std::string_view group;  // API group ("" = core)
  std::string_view kind;
  std::string_view why;  // what a cluster does with it that the simulation leaves out
};

// Kinds whose controllers create pods, or that change placement, and that the simulator
// does not model.
constexpr KnownKind kNotModelled[] = {
    {"apps", "DaemonSet", "a DaemonSet creates a pod on every matching node; none are simulated"},
    {"", "ReplicationController", "its pods are not simulated (use a Deployment or ReplicaSet)"},
    {"batch", "CronJob", "a CronJob creates Jobs on a schedule; none are simulated"},
    {"batch.volcano.sh", "CronJob",
     "a Volcano CronJob creates Jobs on a schedule; none are simulated"},
    {"flow.volcano.sh", "JobFlow", "a JobFlow creates Volcano Jobs; none are simulated"},
    {"flow.volcano.sh", "JobTemplate", "its Jobs are created by a JobFlow, which is not simulated"},
    {"ray.io", "RayCluster", "its head and worker pods are not simulated"},
    {"ray.io", "RayJob", "its RayCluster and submitter pods are not simulated"},
    {"ray.io", "RayService", "its RayCluster pods are not simulated"},
    {"sparkoperator.k8s.io", "SparkApplication", "its driver and executor pods are not simulated"},
    {"sparkoperator.k8s.io", "ScheduledSparkApplication", "its applications are not simulated"},
    {"argoproj.io", "Workflow", "its step pods are not simulated"},
    {"tekton.dev", "PipelineRun", "its task pods are not simulated"},
    {"tekton.dev", "TaskRun", "its pod is not simulated"},
    {"kubeflow.org", "Notebook", "its StatefulSet pod is not simulated"},
    {"kubeflow.org", "ScheduledWorkflow", "its workflows are not simulated"},
    {"serving.knative.dev", "Service", "its revisions' pods are not simulated"},
    {"serving.kserve.io", "InferenceService", "its predictor pods are not simulated"},
    {"workload.codeflare.dev", "AppWrapper", "its wrapped objects are not created"},
    {"grove.io", "PodCliqueSet", "its pod cliques are not simulated"},
    {"leaderworkerset.x-k8s.io", "DisaggregatedSet", "its LeaderWorkerSets are not simulated"},
    {"autoscaling", "HorizontalPodAutoscaler", "replica counts stay as the manifests set them"},
    {"", "LimitRange", "admission's default requests and limits are not applied to pods"},
    {"", "ResourceQuota", "quota admission is not applied: pods over the quota are created"},
    {"kueue.x-k8s.io", "ClusterQueue", "Kueue's quota admission is not modelled"},
    {"kueue.x-k8s.io", "LocalQueue", "Kueue's quota admission is not modelled"},
    {"kueue.x-k8s.io", "ResourceFlavor",
     "Kueue's flavor assignment (its node labels and taints) is not applied to pods"},
    {"kueue.x-k8s.io", "Cohort", "Kueue's quota admission is not modelled"},
    {"kueue.x-k8s.io", "Workload", "Kueue's admission is not modelled"},
    {"kueue.x-k8s.io", "AdmissionCheck", "Kueue's admission checks are not modelled"},
    {"kueue.x-k8s.io", "ProvisioningRequestConfig", "Kueue's admission checks are not modelled"},
    {"autoscaling.x-k8s.io", "ProvisioningRequest", "no nodes are provisioned for it"},
    {"scheduling.koordinator.sh", "Reservation", "the resources it reserves stay free for others"},
    {"quota.koordinator.sh", "ElasticQuotaProfile", "its node-pool quotas are not created"},
    {"scheduling.run.ai", "BindRequest", "KAI's binder requests are not replayed"},
    {"kai.scheduler", "SchedulingShard", "KAI's shard partitioning is not modelled"},
    {"appgroup.diktyo.x-k8s.io", "AppGroup", "NetworkAware scheduling is not modelled"},
    {"networktopology.diktyo.x-k8s.io", "NetworkTopology",
     "NetworkAware scheduling is not modelled"},
    {"topology.node.k8s.io", "NodeResourceTopology", "NUMA-aware placement is not modelled"},
    {"nodeinfo.volcano.sh", "Numatopology", "NUMA-aware placement is not modelled"},
};

// Kinds read by something outside the helpers below.
constexpr KnownKind kUsed[] = {
    {"apps", "Deployment", ""},
    {"apps", "ReplicaSet", ""},
    {"apps", "StatefulSet", ""},
    {"extensions", "Deployment", ""},
    {"extensions", "ReplicaSet", ""},
    {"batch", "Job", ""},
    {"scheduling.koordinator.sh", "ClusterNetworkTopology", ""},
    {"trainer.kubeflow.org", "ClusterTrainingRuntime", ""},
    {"trainer.kubeflow.org", "TrainingRuntime", ""},
};

// True when `n` (an object's spec, searched a few levels deep) holds a pod template: a
// `template` map whose `spec.containers` is set.
bool HoldsPodTemplate(const YAML::Node& n, int depth) {
  if (depth > 5 || !n.IsDefined()) return false;
  if (n.IsSequence()) {
    for (const auto& item : n) {
      if (HoldsPodTemplate(item, depth + 1)) return true;
    }
    return false;
  }
  if (!n.IsMap()) return false;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node v = it->second;
    if (it->first.IsScalar() && it->first.Scalar() == "template" && v.IsMap()) {
      const YAML::Node spec = v["spec"];
      if (spec.IsDefined() && spec.IsMap() && spec["containers"].IsDefined()) return true;
    }
    if (HoldsPodTemplate(v, depth + 1)) return true;
  }
  return false;
}

}  // namespace

std::string KindName(const api::Unstructured& obj) {
  return obj.kind + " (" + obj.api_version + ")";
}

std::vector<std::string> UnmodelledFields(const api::Unstructured& obj) {
  std::vector<std::string> out;
  if (obj.kind == "Queue" && obj.Group() == "scheduling.volcano.sh") {
    for (const char* key : {"volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"}) {
      if (obj.metadata.annotations.count(key)) {
        out.push_back(std::string("metadata.annotations[") + key +
                      "]: not modelled (the DRF plugin's hierarchical shares): the queue is "
                      "a top-level queue unless spec.parent names its parent");
      }
    }
  }
  return out;
}

ObjectClass ClassifyObject(const api::Unstructured& obj) {
  const std::string group = obj.Group();
  if (gang::IsGangObject(obj) || gang::IsTopologyObject(obj) || gang::IsHyperNodeObject(obj) ||
      quota::IsQueueObject(obj) || dra::KindOf(obj) != dra::Kind::kNone ||
      volume::KindOf(obj) != volume::Kind::kNone || IsExpandedWorkload(obj.kind, group)) {
    return {ObjectUse::kUsed, ""};
  }
  for (const auto& k : kUsed) {
    if (k.group == group && k.kind == obj.kind) return {ObjectUse::kUsed, ""};
  }
  for (const auto& k : kNotModelled) {
    if (k.group == group && k.kind == obj.kind) {
      return {ObjectUse::kNotModelled, std::string(k.why)};
    }
  }
  if (obj.object && HoldsPodTemplate((*obj.object)["spec"], 0)) {
    return {ObjectUse::kNotModelled,
            "it holds a pod template: its controller would create pods, which are not "
            "simulated"};
  }
  return {ObjectUse::kNotUsed, ""};
}

}  // namespace phalanx::sim
