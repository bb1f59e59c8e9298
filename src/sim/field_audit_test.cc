// The field audit: every field of core/v1 Pod and Node and of the storage objects
// that current kube-scheduler (master, 1.35/1.36: pkg/scheduler and its plugins,
// k8s.io/component-helpers resource and storage helpers, pkg/api/v1/resource,
// pkg/controller/volume/persistentvolume's binder) reads, as data, each with what Phalanx
// does with it:
//   kHonoured     decoded, and honoured by the named plugin / component. The test decodes a
//                 manifest with the field set and one without; the decoded objects must
//                 differ in that field (a probe reads it), so a field the decoder drops fails.
//   kUnsupported  decoded as present but not honoured: the pod is unschedulable with
//                 "<field>: not supported by this scheduler" (api/field_audit.h), checked
//                 through the simulator (the real decoder, queue and scheduler).
//   kNotRead      a core/v1 field kube-scheduler does not read for placement (listed where
//                 users often expect otherwise); a pod with it is scheduled normally.
// docs/compatibility.md's "Field audit" section must list every row as this table says
// (FieldAuditTest.DocsListEveryRow prints the expected lines when it does not).
#include "api/field_audit.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "api/decode.h"
#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "volume/objects.h"

namespace phalanx::sim {
namespace {

enum class Audit { kHonoured, kUnsupported, kNotRead };

const char* AuditWord(Audit a) {
  switch (a) {
    case Audit::kHonoured:
      return "honoured";
    case Audit::kUnsupported:
      return "unschedulable, reason names the field";
    case Audit::kNotRead:
      return "not read by kube-scheduler";
  }
  return "";
}

// One audited field. `manifest` is the object's YAML with the field set; `base` the same
// object without it (empty: the kind's default base below). `probe` renders the decoded
// field, so that base and manifest must give different text.
template <typename T>
struct Row {
  const char* field;
  Audit audit;
  const char* by;  // plugin / component that honours it, or the reason / owner
  std::string manifest;
  std::function<std::string(const T&)> probe;
};

constexpr char kPodHead[] = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default";
const std::string kBasePod =
    std::string(kPodHead) + "}\nspec: {containers: [{name: c, image: busybox}]}\n";

// A pod whose spec is `spec` (flow YAML, without braces) and optional status / labels.
std::string PodWith(const std::string& spec, const std::string& status = "",
                    const std::string& meta = "") {
  std::string out =
      std::string(kPodHead) + (meta.empty() ? "" : ", " + meta) + "}\nspec: {" + spec + "}\n";
  if (!status.empty()) out += "status: {" + status + "}\n";
  return out;
}
std::string WithContainer(const std::string& rest) {
  return "containers: [{name: c, image: busybox}], " + rest;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + ",";
  return out;
}
std::string List(const api::ResourceList& l) {
  std::string out;
  for (const auto& [k, q] : l) out += k + "=" + std::to_string(q.MilliValue()) + "m,";
  return out;
}
std::string Sel(const std::optional<api::LabelSelector>& s) {
  if (!s) return "nil";
  std::string out = "{";
  for (const auto& [k, v] : s->match_labels) out += k + "=" + v + ",";
  for (const auto& r : s->match_expressions) out += r.key + " " + r.op + ",";
  return out + "}";
}

api::Pod DecodePod(const std::string& text) {
  api::Manifests m;
  const api::Status st = api::DecodeManifests(text, "audit.yaml", &m);
  EXPECT_TRUE(st.ok()) << st << "\n" << text;
  if (!st.ok() || m.pods.size() != 1) {
    ADD_FAILURE() << "expected one pod from\n" << text;
    return {};
  }
  return m.pods[0];
}
api::Node DecodeNode(const std::string& text) {
  api::Manifests m;
  const api::Status st = api::DecodeManifests(text, "audit.yaml", &m);
  EXPECT_TRUE(st.ok()) << st << "\n" << text;
  if (!st.ok() || m.nodes.size() != 1) {
    ADD_FAILURE() << "expected one node from\n" << text;
    return {};
  }
  return m.nodes[0];
}
api::UnstructuredPtr DecodeObject(const std::string& text) {
  api::Manifests m;
  const api::Status st = api::DecodeManifests(text, "audit.yaml", &m);
  EXPECT_TRUE(st.ok()) << st << "\n" << text;
  if (!st.ok() || m.objects.size() != 1) {
    ADD_FAILURE() << "expected one object from\n" << text;
    return std::make_shared<api::Unstructured>();
  }
  return std::make_shared<api::Unstructured>(m.objects[0]);
}

const api::Container& C0(const api::Pod& p) {
  static const api::Container kNone;
  return p.spec.containers.empty() ? kNone : p.spec.containers[0];
}
const api::Container& I0(const api::Pod& p) {
  static const api::Container kNone;
  return p.spec.init_containers.empty() ? kNone : p.spec.init_containers[0];
}
const api::PodAffinity& PodAff(const api::Pod& p, bool anti) {
  static const api::PodAffinity kNone;
  if (!p.spec.affinity) return kNone;
  const auto& a = anti ? p.spec.affinity->pod_anti_affinity : p.spec.affinity->pod_affinity;
  return a ? *a : kNone;
}
const api::PodAffinityTerm& Term0(const api::Pod& p) {
  static const api::PodAffinityTerm kNone;
  const auto& r = PodAff(p, false).required;
  return r.empty() ? kNone : r[0];
}
const api::TopologySpreadConstraint& Tsc0(const api::Pod& p) {
  static const api::TopologySpreadConstraint kNone;
  return p.spec.topology_spread_constraints.empty() ? kNone : p.spec.topology_spread_constraints[0];
}
std::string Ports(const api::Pod& p) {
  std::string out;
  for (const auto& port : C0(p).ports) {
    out += std::to_string(port.host_port) + "/" + port.protocol + "@" + port.host_ip + ",";
  }
  return out;
}

const std::string kTerm = "{topologyKey: zone, labelSelector: {matchLabels: {app: a}}}";
const std::string kTsc = "{maxSkew: 1, topologyKey: zone, labelSelector: {matchLabels: {a: b}}";

// ---- Pod ------------------------------------------------------------------------------

std::vector<Row<api::Pod>> PodRows() {
  using P = const api::Pod&;
  std::vector<Row<api::Pod>> rows = {
      {"metadata.labels", Audit::kHonoured, "InterPodAffinity, PodTopologySpread (selectors)",
       PodWith(WithContainer("priority: 0"), "", "labels: {app: a}"),
       [](P p) { return std::to_string(p.metadata.labels.size()); }},
      {"metadata.deletionTimestamp", Audit::kHonoured, "scheduler (skips deleting pods)",
       PodWith(WithContainer("priority: 0"), "", "deletionTimestamp: \"2024-01-01T00:00:00Z\""),
       [](P p) { return std::to_string(p.metadata.deletion_timestamp.has_value()); }},
      {"spec.nodeName", Audit::kHonoured, "NodeName; a bound pod is never scheduled",
       PodWith(WithContainer("nodeName: n1")), [](P p) { return p.spec.node_name; }},
      {"spec.schedulerName", Audit::kHonoured, "profile selection",
       PodWith(WithContainer("schedulerName: other")), [](P p) { return p.spec.scheduler_name; }},
      {"spec.priority", Audit::kHonoured, "PrioritySort, DefaultPreemption",
       PodWith(WithContainer("priority: 7")),
       [](P p) { return std::to_string(p.spec.priority.value_or(-1)); }},
      {"spec.priorityClassName", Audit::kHonoured, "priority resolution (PriorityClass)",
       PodWith(WithContainer("priorityClassName: high")),
       [](P p) { return p.spec.priority_class_name; }},
      {"spec.preemptionPolicy", Audit::kHonoured, "DefaultPreemption",
       PodWith(WithContainer("preemptionPolicy: Never")),
       [](P p) { return p.spec.preemption_policy; }},
      {"spec.schedulingGates", Audit::kHonoured, "SchedulingGates",
       PodWith(WithContainer("schedulingGates: [{name: g}]")),
       [](P p) { return std::to_string(p.spec.scheduling_gates.size()); }},
      {"spec.nodeSelector", Audit::kHonoured, "NodeAffinity",
       PodWith(WithContainer("nodeSelector: {zone: a}")),
       [](P p) { return std::to_string(p.spec.node_selector.size()); }},
      {"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
       Audit::kHonoured, "NodeAffinity",
       PodWith(WithContainer("affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuring"
                             "Execution: {nodeSelectorTerms: [{matchExpressions: [{key: z, "
                             "operator: Exists}]}]}}}")),
       [](P p) {
         return std::to_string(
             p.spec.affinity && p.spec.affinity->node_affinity &&
             p.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution);
       }},
      {"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
       Audit::kHonoured, "NodeAffinity (score)",
       PodWith(WithContainer("affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuring"
                             "Execution: [{weight: 3, preference: {matchFields: [{key: "
                             "metadata.name, operator: In, values: [n1]}]}}]}}")),
       [](P p) {
         return std::to_string(
             p.spec.affinity && p.spec.affinity->node_affinity
                 ? p.spec.affinity->node_affinity
                       ->preferred_during_scheduling_ignored_during_execution.size()
                 : 0);
       }},
      {"spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution", Audit::kHonoured,
       "InterPodAffinity",
       PodWith(WithContainer("affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuring"
                             "Execution: [" +
                             kTerm + "]}}")),
       [](P p) { return std::to_string(PodAff(p, false).required.size()); }},
      {"spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution",
       Audit::kHonoured, "InterPodAffinity (score)",
       PodWith(WithContainer("affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuring"
                             "Execution: [{weight: 5, podAffinityTerm: " +
                             kTerm + "}]}}")),
       [](P p) { return std::to_string(PodAff(p, false).preferred.size()); }},
      {"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
       Audit::kHonoured, "InterPodAffinity",
       PodWith(WithContainer("affinity: {podAntiAffinity: {requiredDuringSchedulingIgnored"
                             "DuringExecution: [" +
                             kTerm + "]}}")),
       [](P p) { return std::to_string(PodAff(p, true).required.size()); }},
      {"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
       Audit::kHonoured, "InterPodAffinity (score)",
       PodWith(WithContainer("affinity: {podAntiAffinity: {preferredDuringSchedulingIgnored"
                             "DuringExecution: [{weight: 5, podAffinityTerm: " +
                             kTerm + "}]}}")),
       [](P p) { return std::to_string(PodAff(p, true).preferred.size()); }},
  };
  // The fields of a pod affinity term, each against a term that lacks it.
  auto term = [](const std::string& extra) {
    return PodWith(
        WithContainer("affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "[{topologyKey: zone" +
                      extra + "}]}}"));
  };
  auto term_rows = std::vector<Row<api::Pod>>{
      {"podAffinityTerm.labelSelector", Audit::kHonoured, "InterPodAffinity",
       term(", labelSelector: {matchLabels: {a: b}}"),
       [](P p) { return Sel(Term0(p).label_selector); }},
      {"podAffinityTerm.namespaces", Audit::kHonoured, "InterPodAffinity",
       term(", namespaces: [ns1]"), [](P p) { return Join(Term0(p).namespaces); }},
      {"podAffinityTerm.namespaceSelector", Audit::kHonoured, "InterPodAffinity",
       term(", namespaceSelector: {matchLabels: {t: x}}"),
       [](P p) { return Sel(Term0(p).namespace_selector); }},
      {"podAffinityTerm.topologyKey", Audit::kHonoured, "InterPodAffinity",
       term("").replace(term("").find("zone"), 4, "rack"),
       [](P p) { return Term0(p).topology_key; }},
      {"podAffinityTerm.matchLabelKeys", Audit::kHonoured, "InterPodAffinity (KEP-3633)",
       term(", matchLabelKeys: [v]"), [](P p) { return Join(Term0(p).match_label_keys); }},
      {"podAffinityTerm.mismatchLabelKeys", Audit::kHonoured, "InterPodAffinity (KEP-3633)",
       term(", mismatchLabelKeys: [v]"), [](P p) { return Join(Term0(p).mismatch_label_keys); }},
  };
  for (auto& r : term_rows) rows.push_back(std::move(r));
  auto tsc = [](const std::string& extra) {
    return PodWith(WithContainer("topologySpreadConstraints: [" + kTsc + extra + "}]"));
  };
  std::vector<Row<api::Pod>> more = {
      {"spec.tolerations", Audit::kHonoured, "TaintToleration",
       PodWith(WithContainer("tolerations: [{key: k, operator: Exists, effect: NoSchedule}]")),
       [](P p) {
         return p.spec.tolerations.empty() ? std::string()
                                           : p.spec.tolerations[0].key + p.spec.tolerations[0].op +
                                                 p.spec.tolerations[0].effect;
       }},
      {"spec.topologySpreadConstraints", Audit::kHonoured, "PodTopologySpread", tsc(""),
       [](P p) { return std::to_string(p.spec.topology_spread_constraints.size()); }},
      {"topologySpreadConstraints.minDomains", Audit::kHonoured, "PodTopologySpread",
       tsc(", minDomains: 3"), [](P p) { return std::to_string(Tsc0(p).min_domains.value_or(0)); }},
      {"topologySpreadConstraints.whenUnsatisfiable", Audit::kHonoured, "PodTopologySpread",
       tsc(", whenUnsatisfiable: ScheduleAnyway"), [](P p) { return Tsc0(p).when_unsatisfiable; }},
      {"topologySpreadConstraints.nodeAffinityPolicy", Audit::kHonoured, "PodTopologySpread",
       tsc(", nodeAffinityPolicy: Ignore"), [](P p) { return Tsc0(p).node_affinity_policy; }},
      {"topologySpreadConstraints.nodeTaintsPolicy", Audit::kHonoured, "PodTopologySpread",
       tsc(", nodeTaintsPolicy: Honor"), [](P p) { return Tsc0(p).node_taints_policy; }},
      {"topologySpreadConstraints.matchLabelKeys", Audit::kHonoured, "PodTopologySpread",
       tsc(", matchLabelKeys: [pod-template-hash]"),
       [](P p) { return Join(Tsc0(p).match_label_keys); }},
      {"spec.overhead", Audit::kHonoured, "NodeResourcesFit (pod requests)",
       PodWith(WithContainer("overhead: {cpu: 250m}")), [](P p) { return List(p.spec.overhead); }},
      {"spec.containers[].resources.requests", Audit::kHonoured,
       "NodeResourcesFit, "
       "NodeResourcesBalancedAllocation",
       PodWith("containers: [{name: c, resources: {requests: {cpu: \"2\"}}}]"),
       [](P p) { return List(C0(p).resources.requests); }},
      {"spec.containers[].resources.limits", Audit::kHonoured,
       "request defaulted from the limit (SetDefaults_Pod)",
       PodWith("containers: [{name: c, resources: {limits: {memory: 1Gi}}}]"),
       [](P p) { return List(C0(p).resources.limits) + "|" + List(C0(p).resources.requests); }},
      {"spec.containers[].resources.claims", Audit::kHonoured, "DynamicResources",
       PodWith("containers: [{name: c, resources: {claims: [{name: gpu}]}}], resourceClaims: "
               "[{name: gpu, resourceClaimName: rc}]"),
       [](P p) { return Join(C0(p).resource_claims); }},
      {"spec.containers[].image", Audit::kHonoured, "ImageLocality",
       PodWith("containers: [{name: c, image: nginx:1.27}]"), [](P p) { return C0(p).image; }},
      {"spec.containers[].ports[].hostPort", Audit::kHonoured, "NodePorts",
       PodWith("containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}]}]"),
       [](P p) { return Ports(p); }},
      {"spec.containers[].ports[].hostIP", Audit::kHonoured, "NodePorts",
       PodWith("containers: [{name: c, ports: [{containerPort: 80, hostPort: 80, hostIP: "
               "10.0.0.1}]}]"),
       [](P p) { return Ports(p); }},
      {"spec.containers[].ports[].protocol", Audit::kHonoured, "NodePorts",
       PodWith("containers: [{name: c, ports: [{containerPort: 80, hostPort: 80, protocol: "
               "UDP}]}]"),
       [](P p) { return Ports(p); }},
      {"spec.initContainers[].resources.requests", Audit::kHonoured, "NodeResourcesFit",
       PodWith(WithContainer("initContainers: [{name: i, resources: {requests: {cpu: \"3\"}}}]")),
       [](P p) { return List(I0(p).resources.requests); }},
      {"spec.initContainers[].restartPolicy", Audit::kHonoured,
       "NodeResourcesFit (restartable sidecars, KEP-753)",
       PodWith(WithContainer("initContainers: [{name: i, restartPolicy: Always}]")),
       [](P p) { return I0(p).restart_policy; }},
      {"spec.containers[].restartPolicyRules", Audit::kHonoured,
       "NodeDeclaredFeatures (RestartAllContainersOnContainerExits)",
       PodWith("containers: [{name: c, restartPolicy: Never, restartPolicyRules: [{action: "
               "RestartAllContainers, exitCodes: {operator: In, values: [42]}}]}]"),
       [](P p) { return Join(p.spec.required_node_features); }},
      {"spec.hostNetwork", Audit::kHonoured,
       "NodePorts (hostPort defaulted to containerPort), NodeDeclaredFeatures",
       PodWith("hostNetwork: true, containers: [{name: c, ports: [{containerPort: 9100}]}]"),
       [](P p) { return std::to_string(p.spec.host_network) + Ports(p); }},
      {"spec.hostUsers", Audit::kHonoured,
       "NodeDeclaredFeatures (UserNamespacesHostNetworkSupport)",
       PodWith(WithContainer("hostNetwork: true, hostUsers: false")),
       [](P p) { return Join(p.spec.required_node_features); }},
      {"spec.resources", Audit::kHonoured, "NodeResourcesFit (pod-level resources, KEP-2837)",
       PodWith(WithContainer("resources: {requests: {cpu: \"4\"}}")),
       [](P p) { return p.spec.resources ? List(p.spec.resources->requests) : "nil"; }},
      {"spec.volumes[].persistentVolumeClaim", Audit::kHonoured, "VolumeBinding",
       PodWith(WithContainer("volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]")),
       [](P p) { return p.spec.volumes.empty() ? "" : p.spec.volumes[0].persistent_volume_claim; }},
      {"spec.volumes[].ephemeral", Audit::kHonoured, "VolumeBinding (claim <pod>-<volume>)",
       PodWith(WithContainer("volumes: [{name: v, ephemeral: {volumeClaimTemplate: {spec: "
                             "{accessModes: [ReadWriteOnce]}}}}]")),
       [](P p) {
         return std::to_string(!p.spec.volumes.empty() &&
                               p.spec.volumes[0].ephemeral_claim_template != nullptr);
       }},
      {"spec.resourceClaims", Audit::kHonoured, "DynamicResources",
       PodWith(WithContainer("resourceClaims: [{name: g, resourceClaimTemplateName: t}]")),
       [](P p) {
         return p.spec.resource_claims.empty()
                    ? ""
                    : p.spec.resource_claims[0].name +
                          p.spec.resource_claims[0].resource_claim_template_name;
       }},
      {"spec.workloadRef", Audit::kHonoured, "GangScheduling (Workload API, 1.35)",
       PodWith(WithContainer("workloadRef: {name: w, podGroup: g, podGroupReplicaKey: r}")),
       [](P p) {
         return p.spec.workload_ref ? p.spec.workload_ref->name + p.spec.workload_ref->pod_group +
                                          p.spec.workload_ref->pod_group_replica_key
                                    : "nil";
       }},
      {"spec.schedulingGroup", Audit::kHonoured, "GangScheduling (Workload API, 1.36)",
       PodWith(WithContainer("schedulingGroup: {podGroupName: g}")),
       [](P p) { return p.spec.scheduling_group_pod_group_name; }},
      {"status.nominatedNodeName", Audit::kHonoured, "scheduler (nominated pods, preemption)",
       PodWith(WithContainer("priority: 0"), "nominatedNodeName: n1"),
       [](P p) { return p.status.nominated_node_name; }},
      {"status.phase", Audit::kHonoured, "scheduler (terminal pods free their node)",
       PodWith(WithContainer("nodeName: n1"), "phase: Succeeded"),
       [](P p) { return p.status.phase; }},
      {"status.conditions", Audit::kHonoured, "pod requests (PodResizePending: Infeasible)",
       PodWith(WithContainer("priority: 0"),
               "conditions: [{type: PodResizePending, status: \"True\", reason: Infeasible}]"),
       [](P p) { return std::to_string(p.status.conditions.size()); }},
      {"status.containerStatuses[].allocatedResources", Audit::kHonoured,
       "pod requests (in-place resize, KEP-1287)",
       PodWith(WithContainer("priority: 0"),
               "containerStatuses: [{name: c, allocatedResources: {cpu: \"2\"}}]"),
       [](P p) {
         return p.status.container_statuses.empty() ||
                        !p.status.container_statuses[0].allocated_resources
                    ? "nil"
                    : List(*p.status.container_statuses[0].allocated_resources);
       }},
      {"status.containerStatuses[].resources", Audit::kHonoured,
       "pod requests (in-place resize, KEP-1287)",
       PodWith(WithContainer("priority: 0"),
               "containerStatuses: [{name: c, resources: {requests: {cpu: \"2\"}}}]"),
       [](P p) {
         return p.status.container_statuses.empty() ||
                        !p.status.container_statuses[0].resources_requests
                    ? "nil"
                    : List(*p.status.container_statuses[0].resources_requests);
       }},
      {"status.initContainerStatuses[]", Audit::kHonoured, "pod requests (in-place resize)",
       PodWith(WithContainer("priority: 0"),
               "initContainerStatuses: [{name: i, allocatedResources: {cpu: \"1\"}}]"),
       [](P p) { return std::to_string(p.status.init_container_statuses.size()); }},
      {"status.resourceClaimStatuses", Audit::kHonoured, "DynamicResources (generated claims)",
       PodWith(WithContainer("priority: 0"),
               "resourceClaimStatuses: [{name: g, resourceClaimName: p-g-1}]"),
       [](P p) {
         return p.status.resource_claim_statuses.empty()
                    ? ""
                    : p.status.resource_claim_statuses[0].resource_claim_name;
       }},
  };
  for (auto& r : more) rows.push_back(std::move(r));
  // In-tree block devices: VolumeRestrictions (isVolumeConflict: gcePersistentDisk,
  // awsElasticBlockStore, iscsi, rbd) and NodeVolumeLimits (inline volumes migrated to CSI:
  // aws-ebs, gce-pd, azure-disk, cinder), api/volume_source.h.
  auto source_type = [](P p) {
    return p.spec.volumes.empty()
               ? std::string("none")
               : std::to_string(static_cast<int>(p.spec.volumes[0].source.type)) + "/" +
                     p.spec.volumes[0].source.id;
  };
  const std::vector<std::pair<const char*, const char*>> devices = {
      {"awsElasticBlockStore", "{volumeID: vol-1}"},
      {"gcePersistentDisk", "{pdName: pd-1}"},
      {"azureDisk", "{diskName: d, diskURI: uri-1}"},
      {"cinder", "{volumeID: c-1}"},
      {"iscsi", "{targetPortal: \"10.0.0.1:3260\", iqn: iqn-1, lun: 0}"},
      {"rbd", "{monitors: [m], image: img-1}"}};
  for (const auto& [src, body] : devices) {
    const std::string s = src;
    const char* by = s == "awsElasticBlockStore" || s == "gcePersistentDisk"
                         ? "VolumeRestrictions (disk conflicts), NodeVolumeLimits (CSI migration)"
                     : s == "azureDisk" || s == "cinder" ? "NodeVolumeLimits (CSI migration)"
                                                         : "VolumeRestrictions (disk conflicts)";
    rows.push_back({src, Audit::kHonoured, by,
                    PodWith(WithContainer("volumes: [{name: v, " + s + ": " + body + "}]")),
                    source_type});
  }
  // Volume sources upstream reads and Phalanx does not (field_audit.h).
  for (std::string_view src : api::UnsupportedVolumeSources()) {
    rows.push_back(
        {nullptr, Audit::kUnsupported,
         "NodeVolumeLimits upstream (inline Portworx migrated to CSI under "
         "CSIMigrationPortworx); not ported",
         PodWith(WithContainer("volumes: [{name: v, " + std::string(src) + ": {volumeID: x}}]")),
         nullptr});
    rows.back().field = src.data();  // static storage
  }
  // Not read by kube-scheduler for placement: the pod is scheduled as without them.
  for (const char* src : {"configMap", "secret", "emptyDir", "hostPath", "nfs", "csi"}) {
    rows.push_back({src, Audit::kNotRead, "no scheduler plugin reads this volume source",
                    PodWith(WithContainer(std::string("volumes: [{name: v, ") + src +
                                          ": {path: /x, server: s, name: n, driver: d}}]")),
                    nullptr});
  }
  for (const char* src : {"azureFile", "vsphereVolume"}) {
    rows.push_back({src, Audit::kNotRead,
                    "NodeVolumeLimits counts nothing for it (isCSIMigrationOn is false for "
                    "its plugin)",
                    PodWith(WithContainer(std::string("volumes: [{name: v, ") + src +
                                          ": {shareName: s, secretName: x, volumePath: /p}}]")),
                    nullptr});
  }
  rows.push_back({"spec.hostIPC", Audit::kNotRead, "kubelet only",
                  PodWith(WithContainer("hostIPC: true")), nullptr});
  rows.push_back({"spec.hostPID", Audit::kNotRead, "kubelet only",
                  PodWith(WithContainer("hostPID: true")), nullptr});
  return rows;
}

// The display name of a pod row: affinity-term and spread-constraint fields under their
// lists, volume sources as spec.volumes[].<source>.
std::string PodField(const Row<api::Pod>& r) {
  const std::string f = r.field;
  if (f.rfind("podAffinityTerm.", 0) == 0) {
    return "spec.affinity.pod(Anti)Affinity.*[]." + f.substr(16);
  }
  if (f.rfind("topologySpreadConstraints.", 0) == 0) {
    return "spec.topologySpreadConstraints[]." + f.substr(26);
  }
  if (f.find('.') == std::string::npos) return "spec.volumes[]." + f;
  return f;
}

TEST(FieldAuditTest, HonouredPodFieldsChangeTheDecodedPod) {
  const api::Pod base = DecodePod(kBasePod);
  for (const auto& r : PodRows()) {
    if (r.audit != Audit::kHonoured) continue;
    const api::Pod with = DecodePod(r.manifest);
    // Pod-affinity-term rows compare against a term without the field.
    std::string base_text = r.probe(base);
    if (std::string(r.field).rfind("podAffinityTerm.", 0) == 0) {
      base_text = r.probe(DecodePod(PodWith(
          WithContainer("affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                        "[{topologyKey: zone}]}}"))));
    } else if (std::string(r.field).rfind("topologySpreadConstraints.", 0) == 0) {
      base_text =
          r.probe(DecodePod(PodWith(WithContainer("topologySpreadConstraints: [" + kTsc + "}]"))));
    }
    EXPECT_NE(r.probe(with), base_text) << PodField(r) << " is dropped by the decoder\n"
                                        << r.manifest;
    EXPECT_TRUE(with.spec.unsupported_fields.empty()) << PodField(r);
  }
}

// hostNetwork's port defaulting in detail: an explicit hostPort is kept, a missing one is
// the containerPort, in init containers too (SetDefaults_PodSpec).
TEST(FieldAuditTest, HostNetworkDefaultsHostPorts) {
  const api::Pod p = DecodePod(PodWith(
      "hostNetwork: true, containers: [{name: c, ports: [{containerPort: 80}, {containerPort: "
      "81, hostPort: 9000}]}], initContainers: [{name: i, restartPolicy: Always, ports: "
      "[{containerPort: 53, protocol: UDP}]}]"));
  ASSERT_EQ(C0(p).ports.size(), 2u);
  EXPECT_EQ(C0(p).ports[0].host_port, 80);
  EXPECT_EQ(C0(p).ports[1].host_port, 9000);
  ASSERT_EQ(I0(p).ports.size(), 1u);
  EXPECT_EQ(I0(p).ports[0].host_port, 53);
  const api::Pod no = DecodePod(PodWith("containers: [{name: c, ports: [{containerPort: 80}]}]"));
  EXPECT_EQ(C0(no).ports[0].host_port, 0);
}

constexpr char kNodes[] = R"(apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {zone: a}}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
)";

SimulationResult Simulate(const std::string& name, const std::string& manifests) {
  Scenario sc;
  api::Manifests m;
  EXPECT_EQ(api::DecodeManifests(std::string(kNodes) + manifests, name, &m), absl::OkStatus());
  EXPECT_EQ(ScenarioFromManifests(std::move(m), name, &sc), absl::OkStatus());
  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  SimulationResult r;
  EXPECT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  return r;
}

// Through the simulator: each unsupported field leaves its pod unschedulable with a reason
// naming the field, while the same pod without it (and each not-read field) is bound.
TEST(FieldAuditTest, UnsupportedPodFieldsMakeThePodUnschedulableNamingTheField) {
  std::string m;
  std::vector<std::pair<std::string, Row<api::Pod>>> expect;  // pod name -> row
  int i = 0;
  for (auto& r : PodRows()) {
    if (r.audit != Audit::kUnsupported && r.audit != Audit::kNotRead) continue;
    const std::string name = "p" + std::to_string(i++);
    std::string text = r.manifest;
    text.replace(text.find("name: p,"), 8, "name: " + name + ",");
    m += "---\n" + text;
    expect.emplace_back("default/" + name, r);
  }
  m += "---\n" + std::string(kBasePod);
  ASSERT_GT(expect.size(), 10u);
  SimulationResult res = Simulate("unsupported", m);
  ASSERT_EQ(res.outcomes.size(), expect.size() + 1);
  for (const auto& o : res.outcomes) {
    if (o.pod == "default/p") {
      EXPECT_EQ(o.node, "node-1") << "the pod without any audited field: " << o.reason;
      continue;
    }
    const auto it =
        std::find_if(expect.begin(), expect.end(), [&](const auto& e) { return e.first == o.pod; });
    ASSERT_NE(it, expect.end()) << o.pod;
    const std::string field = PodField(it->second);
    if (it->second.audit == Audit::kNotRead) {
      EXPECT_EQ(o.node, "node-1") << field << ": " << o.reason;
      continue;
    }
    EXPECT_EQ(o.node, "") << field << " was placed as if absent";
    const std::string want = "spec.volumes[0]." +
                             field.substr(std::string("spec.volumes[].").size()) +
                             ": not supported by this scheduler";
    EXPECT_NE(o.reason.find(want), std::string::npos) << field << ": " << o.reason;
  }
}

// A controller's template carries the audit to every pod it expands into.
TEST(FieldAuditTest, ControllerTemplatePodsCarryUnsupportedFields) {
  SimulationResult res = Simulate("deploy", R"(---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx}]
      volumes: [{name: d, portworxVolume: {volumeID: x}}]
)");
  ASSERT_EQ(res.outcomes.size(), 2u);
  for (const auto& o : res.outcomes) {
    EXPECT_EQ(o.node, "") << o.pod;
    EXPECT_NE(o.reason.find(
                  "spec.template.spec.volumes[0].portworxVolume: not supported by this scheduler"),
              std::string::npos)
        << o.reason;
  }
}

// ---- Node -----------------------------------------------------------------------------

const std::string kBaseNode = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";

std::vector<Row<api::Node>> NodeRows() {
  using N = const api::Node&;
  auto node = [](const std::string& rest) { return kBaseNode + rest; };
  return {
      {"metadata.labels", Audit::kHonoured, "NodeAffinity, PodTopologySpread, InterPodAffinity",
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n",
       [](N n) { return std::to_string(n.metadata.labels.size()); }},
      {"spec.unschedulable", Audit::kHonoured, "NodeUnschedulable",
       node("spec: {unschedulable: true}\n"),
       [](N n) { return std::to_string(n.spec.unschedulable); }},
      {"spec.taints", Audit::kHonoured, "TaintToleration",
       node("spec: {taints: [{key: k, effect: NoSchedule}]}\n"),
       [](N n) { return std::to_string(n.spec.taints.size()); }},
      {"status.allocatable", Audit::kHonoured, "NodeResourcesFit",
       node("status: {allocatable: {cpu: \"2\"}}\n"),
       [](N n) { return List(n.status.allocatable); }},
      {"status.capacity", Audit::kHonoured, "NodeResourcesFit when allocatable is absent",
       node("status: {capacity: {cpu: \"8\"}}\n"), [](N n) { return List(n.status.allocatable); }},
      {"status.images", Audit::kHonoured, "ImageLocality",
       node("status: {images: [{names: [nginx], sizeBytes: 1000}]}\n"),
       [](N n) { return std::to_string(n.status.images.size()); }},
      {"status.declaredFeatures", Audit::kHonoured, "NodeDeclaredFeatures",
       node("status: {declaredFeatures: [RestartAllContainersOnContainerExits]}\n"),
       [](N n) { return Join(n.status.declared_features); }},
      {"status.conditions", Audit::kNotRead,
       "upstream schedules on the taints the node lifecycle controller derives from them",
       node("status: {conditions: [{type: Ready, status: \"False\"}]}\n"), nullptr},
  };
}

TEST(FieldAuditTest, HonouredNodeFieldsChangeTheDecodedNode) {
  const api::Node base = DecodeNode(kBaseNode);
  for (const auto& r : NodeRows()) {
    if (r.audit != Audit::kHonoured) continue;
    EXPECT_NE(r.probe(DecodeNode(r.manifest)), r.probe(base))
        << "Node " << r.field << " is dropped by the decoder";
  }
}

// ---- storage --------------------------------------------------------------------------

struct StorageRow {
  const char* kind;
  const char* field;
  Audit audit;
  const char* by;
  std::string base;      // object without the field
  std::string manifest;  // object with it
  std::function<std::string(const api::UnstructuredPtr&)> probe;
};

std::string Pv(const std::string& spec, const std::string& meta = "") {
  return "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv" + meta +
         "}\nspec: {capacity: {storage: 1Gi}" + spec + "}\n";
}
std::string Pvc(const std::string& spec, const std::string& meta = "") {
  return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, namespace: default" +
         meta + "}\nspec: {resources: {requests: {storage: 1Gi}}" + spec + "}\n";
}
std::string Sc(const std::string& rest) {
  return "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\n"
         "provisioner: p\n" +
         rest;
}

std::vector<StorageRow> StorageRows() {
  using U = const api::UnstructuredPtr&;
  auto pv = [](U o) { return volume::DecodePersistentVolume(o); };
  auto pvc = [](U o) { return volume::DecodePersistentVolumeClaim(o); };
  return {
      {"PersistentVolume", "spec.capacity.storage", Audit::kHonoured, "VolumeBinding",
       Pv("").replace(Pv("").find("{storage: 1Gi}"), 14, "{storage: 2Gi}"), Pv(""),
       [pv](U o) { return std::to_string(pv(o).capacity); }},
      {"PersistentVolume", "spec.accessModes", Audit::kHonoured, "VolumeBinding", Pv(""),
       Pv(", accessModes: [ReadWriteOnce]"), [pv](U o) { return Join(pv(o).access_modes); }},
      {"PersistentVolume", "spec.storageClassName", Audit::kHonoured, "VolumeBinding", Pv(""),
       Pv(", storageClassName: fast"), [pv](U o) { return pv(o).storage_class; }},
      {"PersistentVolume", "spec.volumeMode", Audit::kHonoured, "VolumeBinding", Pv(""),
       Pv(", volumeMode: Block"), [pv](U o) { return pv(o).volume_mode; }},
      {"PersistentVolume", "spec.nodeAffinity", Audit::kHonoured, "VolumeBinding", Pv(""),
       Pv(", nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: k, "
          "operator: Exists}]}]}}"),
       [pv](U o) { return std::to_string(pv(o).node_affinity.has_value()); }},
      {"PersistentVolume", "spec.claimRef", Audit::kHonoured, "VolumeBinding", Pv(""),
       Pv(", claimRef: {namespace: default, name: c}"),
       [pv](U o) { return pv(o).claim_ref ? pv(o).claim_ref->Key() : "nil"; }},
      {"PersistentVolume", "status.phase", Audit::kHonoured, "VolumeBinding", Pv(""),
       Pv("") + "status: {phase: Bound}\n", [pv](U o) { return pv(o).phase; }},
      {"PersistentVolume", "metadata.deletionTimestamp", Audit::kHonoured, "VolumeBinding", Pv(""),
       Pv("", ", deletionTimestamp: \"2024-01-01T00:00:00Z\""),
       [pv](U o) { return std::to_string(pv(o).deleting); }},
      {"PersistentVolume", "metadata.labels (topology.kubernetes.io/zone, region)",
       Audit::kHonoured, "VolumeZone", Pv(""), Pv("", ", labels: {topology.kubernetes.io/zone: a}"),
       [pv](U o) { return std::to_string(pv(o).labels.size()); }},
      {"PersistentVolume", "spec.csi.driver", Audit::kHonoured, "NodeVolumeLimits", Pv(""),
       Pv(", csi: {driver: d, volumeHandle: h}"), [pv](U o) { return pv(o).csi_driver; }},
      {"PersistentVolume", "spec.csi.volumeHandle", Audit::kHonoured,
       "NodeVolumeLimits (unique volumes)", Pv(", csi: {driver: d, volumeHandle: h}"),
       Pv(", csi: {driver: d, volumeHandle: h2}"), [pv](U o) { return pv(o).source.id; }},
      {"PersistentVolume", "spec.gcePersistentDisk (and the other in-tree sources)",
       Audit::kHonoured, "NodeVolumeLimits (CSI migration)", Pv(""),
       Pv(", gcePersistentDisk: {pdName: pd-1}"),
       [pv](U o) { return std::to_string(static_cast<int>(pv(o).source.type)); }},
      {"PersistentVolume", "spec.volumeAttributesClassName", Audit::kHonoured,
       "VolumeBinding (static PV matching)", Pv(""), Pv(", volumeAttributesClassName: gold"),
       [pv](U o) { return pv(o).volume_attributes_class; }},
      {"PersistentVolumeClaim", "spec.storageClassName", Audit::kHonoured, "VolumeBinding", Pvc(""),
       Pvc(", storageClassName: fast"),
       [pvc](U o) { return pvc(o).storage_class.value_or("nil"); }},
      {"PersistentVolumeClaim", "spec.volumeName", Audit::kHonoured, "VolumeBinding", Pvc(""),
       Pvc(", volumeName: pv"), [pvc](U o) { return pvc(o).volume_name; }},
      {"PersistentVolumeClaim", "spec.accessModes", Audit::kHonoured,
       "VolumeBinding, VolumeRestrictions (ReadWriteOncePod)", Pvc(""),
       Pvc(", accessModes: [ReadWriteOncePod]"), [pvc](U o) { return Join(pvc(o).access_modes); }},
      {"PersistentVolumeClaim", "spec.volumeMode", Audit::kHonoured, "VolumeBinding", Pvc(""),
       Pvc(", volumeMode: Block"), [pvc](U o) { return pvc(o).volume_mode; }},
      {"PersistentVolumeClaim", "spec.resources.requests.storage", Audit::kHonoured,
       "VolumeBinding", Pvc(""), Pvc("").replace(Pvc("").find("storage: 1Gi"), 12, "storage: 5Gi"),
       [pvc](U o) { return std::to_string(pvc(o).request); }},
      {"PersistentVolumeClaim", "spec.volumeAttributesClassName", Audit::kHonoured,
       "VolumeBinding (static PV matching)", Pvc(""), Pvc(", volumeAttributesClassName: gold"),
       [pvc](U o) { return pvc(o).volume_attributes_class; }},
      {"PersistentVolumeClaim", "spec.selector", Audit::kHonoured, "VolumeBinding", Pvc(""),
       Pvc(", selector: {matchLabels: {a: b}}"), [pvc](U o) { return Sel(pvc(o).selector); }},
      {"PersistentVolumeClaim", "status.phase", Audit::kHonoured, "VolumeBinding", Pvc(""),
       Pvc("") + "status: {phase: Bound}\n", [pvc](U o) { return pvc(o).phase; }},
      {"PersistentVolumeClaim", "metadata.annotations (volume.kubernetes.io/selected-node)",
       Audit::kHonoured, "VolumeBinding", Pvc(""),
       Pvc("", ", annotations: {volume.kubernetes.io/selected-node: n1}"),
       [pvc](U o) { return std::to_string(pvc(o).annotations.size()); }},
      {"PersistentVolumeClaim", "metadata.deletionTimestamp", Audit::kHonoured, "VolumeBinding",
       Pvc(""), Pvc("", ", deletionTimestamp: \"2024-01-01T00:00:00Z\""),
       [pvc](U o) { return std::to_string(pvc(o).deleting); }},
      {"StorageClass", "volumeBindingMode", Audit::kHonoured, "VolumeBinding", Sc(""),
       Sc("volumeBindingMode: WaitForFirstConsumer\n"),
       [](U o) { return volume::DecodeStorageClass(*o).volume_binding_mode; }},
      {"StorageClass", "allowedTopologies", Audit::kHonoured, "VolumeBinding", Sc(""),
       Sc("allowedTopologies: [{matchLabelExpressions: [{key: zone, values: [a]}]}]\n"),
       [](U o) {
         return std::to_string(volume::DecodeStorageClass(*o).allowed_topologies.size());
       }},
      {"StorageClass", "provisioner", Audit::kHonoured, "VolumeBinding",
       Sc("").replace(Sc("").find("provisioner: p"), 14, "provisioner: q"), Sc(""),
       [](U o) { return volume::DecodeStorageClass(*o).provisioner; }},
      {"CSINode", "spec.drivers[].allocatable.count", Audit::kHonoured, "NodeVolumeLimits",
       "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
       "spec: {drivers: [{name: d, nodeID: n1}]}\n",
       "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\n"
       "spec: {drivers: [{name: d, nodeID: n1, allocatable: {count: 3}}]}\n",
       [](U o) {
         const auto n = volume::DecodeCSINode(*o);
         return n.drivers.empty() ? ""
                                  : std::to_string(n.drivers[0].allocatable_count.value_or(-1));
       }},
      {"CSIDriver", "spec.storageCapacity", Audit::kHonoured, "VolumeBinding (provisioning)",
       "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\nspec: {}\n",
       "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: d}\n"
       "spec: {storageCapacity: true}\n",
       [](U o) { return std::to_string(volume::DecodeCSIDriver(*o).storage_capacity); }},
      {"CSIStorageCapacity", "capacity", Audit::kHonoured, "VolumeBinding (provisioning)",
       "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c, "
       "namespace: default}\nstorageClassName: sc\n",
       "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c, "
       "namespace: default}\nstorageClassName: sc\ncapacity: 10Gi\n",
       [](U o) {
         return std::to_string(volume::DecodeCSIStorageCapacity(*o).capacity.value_or(-1));
       }},
      {"CSIStorageCapacity", "nodeTopology", Audit::kHonoured, "VolumeBinding (provisioning)",
       "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c, "
       "namespace: default}\nstorageClassName: sc\n",
       "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c, "
       "namespace: default}\nstorageClassName: sc\nnodeTopology: {matchLabels: {z: a}}\n",
       [](U o) { return Sel(volume::DecodeCSIStorageCapacity(*o).node_topology); }},
      {"CSIStorageCapacity", "maximumVolumeSize", Audit::kHonoured, "VolumeBinding (provisioning)",
       "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c, "
       "namespace: default}\nstorageClassName: sc\n",
       "apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: c, "
       "namespace: default}\nstorageClassName: sc\nmaximumVolumeSize: 1Gi\n",
       [](U o) {
         return std::to_string(
             volume::DecodeCSIStorageCapacity(*o).maximum_volume_size.value_or(-1));
       }},
  };
}

// Every audited storage field survives decoding.
TEST(FieldAuditTest, StorageFieldsChangeTheDecodedObject) {
  for (const auto& r : StorageRows()) {
    const std::string with = r.probe(DecodeObject(r.manifest));
    const std::string without = r.probe(DecodeObject(r.base));
    EXPECT_NE(with, without) << r.kind << " " << r.field << " is dropped by the decoder";
  }
}

// volumeAttributesClassName in the binder: a WaitForFirstConsumer claim of class "gold" takes
// the larger PV of that class on node-2, not the smallest PV (node-1, no class), as
// upstream's FindMatchingVolume with VolumeAttributesClass on; a claim without a class does
// not take the gold PV.
TEST(FieldAuditTest, VolumeAttributesClassMustMatchForStaticPVs) {
  std::string m = R"(---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {zone: b}}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
)";
  for (const auto& [name, node, extra] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"pv-plain", "a", "  capacity: {storage: 1Gi}\n"},
           {"pv-gold", "b", "  capacity: {storage: 2Gi}\n  volumeAttributesClassName: gold\n"}}) {
    m += "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name + "}\nspec:\n" +
         extra +
         "  accessModes: [ReadWriteOnce]\n  storageClassName: local\n"
         "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: zone, "
         "operator: In, values: [" +
         node + "]}]}]}}\n";
  }
  m += R"(---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: gold, namespace: default}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, volumeAttributesClassName: gold, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: gold, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: gold}}]
)";
  SimulationResult res = Simulate("vac", m);
  ASSERT_EQ(res.outcomes.size(), 1u);
  EXPECT_EQ(res.outcomes[0].node, "node-2") << res.outcomes[0].reason;

  // Only the gold PV and a claim without a class: nothing to bind.
  std::string plain =
      m.substr(0, m.find("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-plain"));
  plain +=
      m.substr(m.find("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-gold"));
  const size_t at = plain.find(", volumeAttributesClassName: gold,");
  ASSERT_NE(at, std::string::npos);
  plain.erase(at, std::string(", volumeAttributesClassName: gold").size());
  SimulationResult none = Simulate("vac-none", plain);
  ASSERT_EQ(none.outcomes.size(), 1u);
  EXPECT_EQ(none.outcomes[0].node, "") << "a claim without a class took the gold PV";
  EXPECT_NE(none.outcomes[0].reason.find("didn't find available persistent volumes to bind"),
            std::string::npos)
      << none.outcomes[0].reason;
}

// ---- docs -----------------------------------------------------------------------------

std::vector<std::string> ExpectedDocLines() {
  std::vector<std::string> out;
  for (const auto& r : PodRows()) {
    out.push_back("| Pod | `" + PodField(r) + "` | " + AuditWord(r.audit) + " | " + r.by + " |");
  }
  for (const auto& r : NodeRows()) {
    out.push_back("| Node | `" + std::string(r.field) + "` | " + AuditWord(r.audit) + " | " + r.by +
                  " |");
  }
  for (const auto& r : StorageRows()) {
    out.push_back("| " + std::string(r.kind) + " | `" + r.field + "` | " + AuditWord(r.audit) +
                  " | " + r.by + " |");
  }
  return out;
}

TEST(FieldAuditTest, DocsListEveryRow) {
  std::ifstream in(std::string(PHALANX_SOURCE_DIR) + "/docs/compatibility.md");
  ASSERT_TRUE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  std::string missing;
  for (const auto& line : ExpectedDocLines()) {
    if (doc.find(line + "\n") == std::string::npos) missing += line + "\n";
  }
  EXPECT_TRUE(missing.empty()) << "docs/compatibility.md \"Field audit\" lacks these rows:\n"
                               << missing;
}

}  // namespace
}  // namespace phalanx::sim
