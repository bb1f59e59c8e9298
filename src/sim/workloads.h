// The ecosystem's workload kinds in `phalanx simulate`: the objects their controllers create
// from them (Jobs, pods, PodGroups), made from the manifests as those controllers make them, so
// that a JobSet, a LeaderWorkerSet, a Kubeflow job, a TrainJob or a Volcano Job runs in the
// simulator as it runs in a cluster with its controller installed.
//
// Kinds and the facts carried over (each controller's source; the projects' CRDs in
// ../shared/upstream/crds define the fields):
//   JobSet jobset.x-k8s.io/v1alpha2 (kubernetes-sigs/jobset pkg/controllers/
//     jobset_controller.go constructJob, labelAndAnnotateObject; pkg/webhooks/
//     jobset_webhook.go Default, pod_webhook.go): one Job "<jobset>-<replicatedJob>-<i>" per
//     replica of each spec.replicatedJobs[] (replicas default 1), owned by the JobSet, its
//     template's labels and annotations plus the jobset.sigs.k8s.io/* ones on the Job and its
//     pod template; completionMode Indexed unless set; spec.suspend suspends every Job.
//     Exclusive placement (annotation alpha.jobset.sigs.k8s.io/exclusive-topology on the
//     JobSet or a replicatedJob's template): every pod of a Job gets the required pod
//     affinity to its Job's key and the anti-affinity to other Jobs' keys of the same
//     priority in that topology (upstream puts them on the index-0 pod and a nodeSelector
//     for its domain on the others once it is bound: the same domains); with
//     alpha.jobset.sigs.k8s.io/node-selector the nodeSelector
//     alpha.jobset.sigs.k8s.io/namespaced-job: "<ns>_<job>" and the no-schedule toleration.
//   LeaderWorkerSet leaderworkerset.x-k8s.io/v1 (kubernetes-sigs/lws pkg/controllers,
//     pkg/webhooks/pod_webhook.go): spec.replicas groups (default 1) of
//     leaderWorkerTemplate.size pods (default 1): the leader "<lws>-<g>" (leaderTemplate, else
//     workerTemplate) and the workers "<lws>-<g>-<w>" (w = 1..size-1), with the
//     leaderworkerset.sigs.k8s.io/{name, group-index, worker-index, group-key} labels and the
//     size annotation; leaders owned by the StatefulSet "<lws>", workers by the StatefulSet
//     "<lws>-<g>", both StatefulSets owned by the LWS (upstream: the workers' set by the
//     leader pod). Exclusive placement (leaderworkerset.sigs.k8s.io/exclusive-topology): the
//     group's pods get the pod affinity / anti-affinity on the group key. Gang scheduling:
//     when the pods' schedulerName is "volcano" (LWS's gangSchedulingManagement with the
//     Volcano provider, pkg/schedulerprovider/volcano_provider.go), one Volcano PodGroup
//     "<lws>-<g>-<revision>" per group, minMember = size (1 with startupPolicy LeaderReady),
//     named by each pod's scheduling.k8s.io/group-name annotation; otherwise PodGrouper
//     (gang/dialects.h) makes each group a gang.
//   PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob kubeflow.org/v1 (the training
//     operator v1): for each replica spec (pytorchReplicaSpecs, ...; replicas default 1) the
//     pods "<job>-<type>-<i>" (type in lower case) with the training.kubeflow.org/{job-name,
//     replica-type, replica-index, operator-name} labels (job-role "master" on Master 0),
//     owned by the job. MPIJob kubeflow.org/v2beta1 (mpi-operator): the launcher Job
//     "<job>-launcher" and the workers "<job>-worker-<i>".
//   TrainJob trainer.kubeflow.org/v1alpha1 with its TrainingRuntime / ClusterTrainingRuntime
//     (kubeflow/trainer pkg/runtime/core/trainingruntime.go newRuntimeInfo,
//     framework/plugins/jobset/builder.go, coscheduling, volcano): the runtime's JobSet
//     template, the TrainJob's runtimePatches merged into it (maps by key, lists of named
//     items by name, other lists replaced), the trainer step's replicatedJob (label
//     trainer.kubeflow.org/trainjob-ancestor-step: trainer) with parallelism = completions =
//     trainer.numNodes (else the runtime's mlPolicy.numNodes) and the "node" container's
//     resources merged with trainer.resourcesPerNode; the JobSet is named as the TrainJob,
//     owned by it, suspended with it. podGroupPolicy coscheduling: a scheduling.x-k8s.io
//     PodGroup of every pod (scheduleTimeoutSeconds) and the pods' scheduling.x-k8s.io/
//     pod-group label; volcano: a scheduling.volcano.sh PodGroup (queue from the
//     scheduling.volcano.sh/queue-name annotation, networkTopology) and the pods'
//     scheduling.k8s.io/group-name annotation.
//   Job batch.volcano.sh/v1alpha1 (volcano pkg/controllers/job job_controller_util.go
//     createJobPod, job_controller_actions.go createOrUpdatePodGroup; the admission webhook's
//     defaults): the pods "<job>-<task>-<i>" owned by the job, annotations
//     scheduling.k8s.io/group-name "<job>-<uid>", volcano.sh/task-spec, volcano.sh/job-name,
//     ...; schedulerName and priorityClassName from the job when the template has none;
//     the PodGroup "<job>-<uid>" with minMember = spec.minAvailable (default: the tasks'
//     minAvailable, else replicas, summed), minTaskMember per task, queue (default
//     "default"), priorityClassName, networkTopology, and for a task with partitionPolicy a
//     subGroupPolicy entry and the volcano.sh/partition-id label (index / partitionSize).
// Workloads labelled kueue.x-k8s.io/queue-name are created as Kueue would admit them (their
// spec.suspend, which Kueue's webhook sets, is not honoured), with a warning: Kueue's quota
// admission (ClusterQueue, LocalQueue) is not modelled.
//
// Not modelled, each reported by name (a warning naming the object and field): JobSet
// dependsOn and startupPolicy InOrder (Jobs are created together), volumeClaimPolicies,
// LWS subGroupPolicy and startupPolicy LeaderReady (workers are created with the leader),
// TrainJob initializer / dependsOn ordering.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "api/decode.h"
#include "api/status.h"

namespace phalanx::sim {

struct WorkloadExpansion {
  // What the controllers create: pods, Jobs to expand further (controllers), and the
  // objects the PodGrouper and the gang dialects read (Jobs, StatefulSets, JobSets,
  // PodGroups), all as api::DecodeManifestNode decodes them.
  api::Manifests created;
  // Parts that affect placement and are not modelled: "<file>: <Kind ns/name>: <field>:
  // <what happens instead>".
  std::vector<std::string> warnings;
  // What a user may not expect, e.g. "<file>: JobSet ml/train: spec.suspend: true: no pods
  // are created (the JobSet controller suspends its Jobs)".
  std::vector<std::string> notes;
  // api::Unstructured::Key() of every object an expander read (the workloads, their
  // runtimes): used, not "not used" in the summary.
  std::set<std::string> used;
};

// Expands every workload of `in.objects` (and of the objects that creates, e.g. a TrainJob's
// JobSet) into *out; a workload that some pod or object of `in` names as its controller
// (a cluster snapshot: the controller already ran) is left as it is, with a note. `in` is not
// changed; typed Jobs, Deployments and StatefulSets are expanded by the caller
// (api::ExpandController). Errors name the file, the workload and the field, e.g. "jobs.yaml:
// JobSet ml/train: spec.replicatedJobs[0].replicas: Invalid value:
// \"two\": must be an integer", or the decode error of a created object prefixed with its
// workload ("jobs.yaml: JobSet ml/train creates: Job ml/train-w-0: spec.template.spec...").
api::Status ExpandWorkloads(const api::Manifests& in, WorkloadExpansion* out);

// True for the kinds ExpandWorkloads expands (by kind and API group).
bool IsExpandedWorkload(const std::string& kind, const std::string& group);

// The Kueue label that makes a workload Kueue-managed.
inline constexpr const char* kKueueQueueNameLabel = "kueue.x-k8s.io/queue-name";

}  // namespace phalanx::sim
