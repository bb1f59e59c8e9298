// Encoders of the extender wire format (wire.h).
#include "extender/wire.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <string>

namespace phalanx::extender {
namespace {

using nlohmann::json;

std::string QuantityString(const api::Quantity& q) {
  const int64_t milli = q.MilliValue();
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

json Resources(const api::ResourceList& rl) {
  json out = json::object();
  for (const auto& [name, q] : rl) out[name] = QuantityString(q);
  return out;
}

json RequirementsJson(const api::ResourceRequirements& r) {
  json res = json::object();
  if (!r.requests.empty()) res["requests"] = Resources(r.requests);
  if (!r.limits.empty()) res["limits"] = Resources(r.limits);
  return res;
}

// RFC 3339 in UTC, seconds precision (metav1.Time).
std::string Rfc3339(api::Timestamp ns) {
  const std::time_t secs = static_cast<std::time_t>(ns / api::kNanosPerSecond);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json Meta(const api::ObjectMeta& m) {
  json out = {{"name", m.name}};
  if (!m.namespace_.empty()) out["namespace"] = m.namespace_;
  if (!m.uid.empty()) out["uid"] = m.uid;
  if (!m.resource_version.empty()) out["resourceVersion"] = m.resource_version;
  if (!m.labels.empty()) out["labels"] = m.labels;
  if (!m.annotations.empty()) out["annotations"] = m.annotations;
  if (m.creation_timestamp != 0) out["creationTimestamp"] = Rfc3339(m.creation_timestamp);
  if (m.deletion_timestamp) out["deletionTimestamp"] = Rfc3339(*m.deletion_timestamp);
  if (!m.owner_references.empty()) {
    json refs = json::array();
    for (const auto& r : m.owner_references) {
      json o = {{"apiVersion", r.api_version}, {"kind", r.kind}, {"name", r.name}, {"uid", r.uid}};
      if (r.controller) o["controller"] = true;
      refs.push_back(std::move(o));
    }
    out["ownerReferences"] = std::move(refs);
  }
  return out;
}

// A selector's matchExpressions: NodeSelectorRequirement or LabelSelectorRequirement (the
// same {key, operator, values} in core/v1 and metav1 JSON).
template <class Requirement>
json Requirements(const std::vector<Requirement>& reqs) {
  json out = json::array();
  for (const auto& r : reqs) {
    json o = {{"key", r.key}, {"operator", r.op}};
    if (!r.values.empty()) o["values"] = r.values;
    out.push_back(std::move(o));
  }
  return out;
}

json Term(const api::NodeSelectorTerm& t) {
  json o = json::object();
  if (!t.match_expressions.empty()) o["matchExpressions"] = Requirements(t.match_expressions);
  if (!t.match_fields.empty()) o["matchFields"] = Requirements(t.match_fields);
  return o;
}

json NodeAffinityJson(const api::NodeAffinity& na) {
  json o = json::object();
  if (na.required_during_scheduling_ignored_during_execution) {
    json terms = json::array();
    for (const auto& t :
         na.required_during_scheduling_ignored_during_execution->node_selector_terms) {
      terms.push_back(Term(t));
    }
    o["requiredDuringSchedulingIgnoredDuringExecution"] = {{"nodeSelectorTerms", terms}};
  }
  if (!na.preferred_during_scheduling_ignored_during_execution.empty()) {
    json prefs = json::array();
    for (const auto& p : na.preferred_during_scheduling_ignored_during_execution) {
      prefs.push_back({{"weight", p.weight}, {"preference", Term(p.preference)}});
    }
    o["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(prefs);
  }
  return o;
}

json Containers(const std::vector<api::Container>& cs) {
  json out = json::array();
  for (const auto& c : cs) {
    json o = {{"name", c.name}};
    if (!c.image.empty()) o["image"] = c.image;
    json res = RequirementsJson(c.resources);
    if (!c.resource_claims.empty()) {
      json claims = json::array();
      for (const auto& name : c.resource_claims) claims.push_back({{"name", name}});
      res["claims"] = std::move(claims);
    }
    o["resources"] = std::move(res);
    if (!c.ports.empty()) {
      json ports = json::array();
      for (const auto& p : c.ports) {
        json po = {{"containerPort", p.container_port}, {"protocol", p.protocol}};
        if (p.host_port != 0) po["hostPort"] = p.host_port;
        if (!p.name.empty()) po["name"] = p.name;
        if (!p.host_ip.empty()) po["hostIP"] = p.host_ip;
        ports.push_back(std::move(po));
      }
      o["ports"] = std::move(ports);
    }
    if (!c.restart_policy.empty()) o["restartPolicy"] = c.restart_policy;
    out.push_back(std::move(o));
  }
  return out;
}

json LabelSelectorJson(const api::LabelSelector& ls) {
  json o = json::object();
  if (!ls.match_labels.empty()) o["matchLabels"] = ls.match_labels;
  if (!ls.match_expressions.empty()) o["matchExpressions"] = Requirements(ls.match_expressions);
  return o;
}

json PodAffinityTermJson(const api::PodAffinityTerm& t) {
  json o = {{"topologyKey", t.topology_key}};
  if (t.label_selector) o["labelSelector"] = LabelSelectorJson(*t.label_selector);
  if (!t.namespaces.empty()) o["namespaces"] = t.namespaces;
  if (t.namespace_selector) o["namespaceSelector"] = LabelSelectorJson(*t.namespace_selector);
  if (!t.match_label_keys.empty()) o["matchLabelKeys"] = t.match_label_keys;
  if (!t.mismatch_label_keys.empty()) o["mismatchLabelKeys"] = t.mismatch_label_keys;
  return o;
}

json PodAffinityJson(const api::PodAffinity& a) {
  json o = json::object();
  if (!a.required.empty()) {
    json terms = json::array();
    for (const auto& t : a.required) terms.push_back(PodAffinityTermJson(t));
    o["requiredDuringSchedulingIgnoredDuringExecution"] = std::move(terms);
  }
  if (!a.preferred.empty()) {
    json terms = json::array();
    for (const auto& w : a.preferred) {
      terms.push_back(
          {{"weight", w.weight}, {"podAffinityTerm", PodAffinityTermJson(w.pod_affinity_term)}});
    }
    o["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(terms);
  }
  return o;
}

json AffinityJson(const api::Affinity& a) {
  json o = json::object();
  if (a.node_affinity) o["nodeAffinity"] = NodeAffinityJson(*a.node_affinity);
  if (a.pod_affinity) o["podAffinity"] = PodAffinityJson(*a.pod_affinity);
  if (a.pod_anti_affinity) o["podAntiAffinity"] = PodAffinityJson(*a.pod_anti_affinity);
  return o;
}

json SpreadConstraintsJson(const std::vector<api::TopologySpreadConstraint>& cs) {
  json out = json::array();
  for (const auto& c : cs) {
    json o = {{"maxSkew", c.max_skew},
              {"topologyKey", c.topology_key},
              {"whenUnsatisfiable", c.when_unsatisfiable}};
    if (c.label_selector) o["labelSelector"] = LabelSelectorJson(*c.label_selector);
    if (c.min_domains) o["minDomains"] = *c.min_domains;
    if (!c.node_affinity_policy.empty()) o["nodeAffinityPolicy"] = c.node_affinity_policy;
    if (!c.node_taints_policy.empty()) o["nodeTaintsPolicy"] = c.node_taints_policy;
    if (!c.match_label_keys.empty()) o["matchLabelKeys"] = c.match_label_keys;
    out.push_back(std::move(o));
  }
  return out;
}

// A YAML tree (a claim template as decoded) as JSON: maps, sequences, and scalars as
// strings, except plain true/false and integers (the forms core/v1 JSON uses for them).
json YamlJson(const YAML::Node& n) {
  if (n.IsMap()) {
    json o = json::object();
    for (const auto& kv : n) o[kv.first.Scalar()] = YamlJson(kv.second);
    return o;
  }
  if (n.IsSequence()) {
    json a = json::array();
    for (const auto& e : n) a.push_back(YamlJson(e));
    return a;
  }
  if (!n.IsScalar()) return nullptr;
  const std::string& v = n.Scalar();
  if (n.Tag() != "!") {  // unquoted in the source: may be a bool or a number
    if (v == "true") return true;
    if (v == "false") return false;
    char* end = nullptr;
    const long long i = std::strtoll(v.c_str(), &end, 10);
    if (!v.empty() && end == v.c_str() + v.size()) return i;
  }
  return v;
}

// The volume source fields the model keeps (api/volume_source.h); the other kinds of
// source (configMap, secret, emptyDir, ...) are not kept, so such a volume is sent by name.
void VolumeSourceJson(const api::VolumeSource& s, json* v) {
  using T = api::VolumeSource::Type;
  json o = json::object();
  if (s.read_only) o["readOnly"] = true;
  switch (s.type) {
    case T::kOther:
      return;
    case T::kAWSElasticBlockStore:
      o["volumeID"] = s.id;
      (*v)["awsElasticBlockStore"] = o;
      return;
    case T::kGCEPersistentDisk:
      o["pdName"] = s.id;
      (*v)["gcePersistentDisk"] = o;
      return;
    case T::kAzureDisk:
      o["diskName"] = s.disk_name;
      o["diskURI"] = s.id;
      (*v)["azureDisk"] = o;
      return;
    case T::kCinder:
      o["volumeID"] = s.id;
      (*v)["cinder"] = o;
      return;
    case T::kRBD:
      o["monitors"] = s.monitors;
      o["pool"] = s.pool;
      o["image"] = s.id;
      (*v)["rbd"] = o;
      return;
    case T::kISCSI:
      o["targetPortal"] = s.target_portal;
      o["iqn"] = s.id;
      o["lun"] = s.lun;
      (*v)["iscsi"] = o;
      return;
    case T::kCSI:
      o["driver"] = s.driver;
      (*v)["csi"] = o;
      return;
  }
}

json VolumesJson(const std::vector<api::Volume>& vols) {
  json out = json::array();
  for (const auto& vol : vols) {
    json v = {{"name", vol.name}};
    if (!vol.persistent_volume_claim.empty()) {
      v["persistentVolumeClaim"] = {{"claimName", vol.persistent_volume_claim}};
    } else if (vol.ephemeral_claim_template) {
      v["ephemeral"] = {{"volumeClaimTemplate", YamlJson(*vol.ephemeral_claim_template)}};
    } else {
      VolumeSourceJson(vol.source, &v);
    }
    out.push_back(std::move(v));
  }
  return out;
}

json ResourceClaimsJson(const std::vector<api::PodResourceClaim>& claims) {
  json out = json::array();
  for (const auto& c : claims) {
    json o = {{"name", c.name}};
    if (!c.resource_claim_name.empty()) o["resourceClaimName"] = c.resource_claim_name;
    if (!c.resource_claim_template_name.empty()) {
      o["resourceClaimTemplateName"] = c.resource_claim_template_name;
    }
    out.push_back(std::move(o));
  }
  return out;
}

// The spec fields beyond the node-level ones of PodJson: pod affinity and anti-affinity,
// topology spread, volumes, DRA claims, pod-level resources, gates, hostNetwork, deadline.
void AddWorkloadSpec(const api::PodSpec& s, json* spec) {
  if (s.affinity) (*spec)["affinity"] = AffinityJson(*s.affinity);
  if (!s.topology_spread_constraints.empty()) {
    (*spec)["topologySpreadConstraints"] = SpreadConstraintsJson(s.topology_spread_constraints);
  }
  if (!s.volumes.empty()) (*spec)["volumes"] = VolumesJson(s.volumes);
  if (!s.resource_claims.empty()) (*spec)["resourceClaims"] = ResourceClaimsJson(s.resource_claims);
  if (s.resources) (*spec)["resources"] = RequirementsJson(*s.resources);
  if (!s.scheduling_gates.empty()) {
    json gates = json::array();
    for (const auto& g : s.scheduling_gates) gates.push_back({{"name", g.name}});
    (*spec)["schedulingGates"] = std::move(gates);
  }
  if (s.host_network) (*spec)["hostNetwork"] = true;
  if (s.active_deadline_seconds) (*spec)["activeDeadlineSeconds"] = *s.active_deadline_seconds;
}
}  // namespace

json PodJson(const api::Pod& pod) {
  const api::PodSpec& s = pod.spec;
  json spec = {{"containers", Containers(s.containers)}, {"schedulerName", s.scheduler_name}};
  if (!s.init_containers.empty()) spec["initContainers"] = Containers(s.init_containers);
  if (!s.node_name.empty()) spec["nodeName"] = s.node_name;
  if (!s.node_selector.empty()) spec["nodeSelector"] = s.node_selector;
  AddWorkloadSpec(s, &spec);
  if (!s.tolerations.empty()) {
    json tols = json::array();
    for (const auto& t : s.tolerations) {
      json o = json::object();
      if (!t.key.empty()) o["key"] = t.key;
      o["operator"] = t.op;
      if (!t.value.empty()) o["value"] = t.value;
      if (!t.effect.empty()) o["effect"] = t.effect;
      if (t.toleration_seconds) o["tolerationSeconds"] = *t.toleration_seconds;
      tols.push_back(std::move(o));
    }
    spec["tolerations"] = std::move(tols);
  }
  if (!s.overhead.empty()) spec["overhead"] = Resources(s.overhead);
  if (s.priority) spec["priority"] = *s.priority;
  if (!s.priority_class_name.empty()) spec["priorityClassName"] = s.priority_class_name;
  if (!s.preemption_policy.empty()) spec["preemptionPolicy"] = s.preemption_policy;
  if (!s.restart_policy.empty()) spec["restartPolicy"] = s.restart_policy;
  json status = {{"phase", pod.status.phase}};
  if (!pod.status.nominated_node_name.empty()) {
    status["nominatedNodeName"] = pod.status.nominated_node_name;
  }
  if (!pod.status.conditions.empty()) {
    json conds = json::array();
    for (const auto& c : pod.status.conditions) {
      json o = {{"type", c.type}, {"status", c.status}};
      if (!c.reason.empty()) o["reason"] = c.reason;
      if (!c.message.empty()) o["message"] = c.message;
      conds.push_back(std::move(o));
    }
    status["conditions"] = std::move(conds);
  }
  return {{"kind", "Pod"},
          {"apiVersion", "v1"},
          {"metadata", Meta(pod.metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

json NodeJson(const api::Node& node) {
  json spec = json::object();
  if (node.spec.unschedulable) spec["unschedulable"] = true;
  if (!node.spec.taints.empty()) {
    json taints = json::array();
    for (const auto& t : node.spec.taints) {
      json o = {{"key", t.key}, {"effect", t.effect}};
      if (!t.value.empty()) o["value"] = t.value;
      taints.push_back(std::move(o));
    }
    spec["taints"] = std::move(taints);
  }
  json status = {{"capacity", Resources(node.status.capacity)},
                 {"allocatable", Resources(node.status.allocatable)}};
  if (!node.status.conditions.empty()) {
    json conds = json::array();
    for (const auto& c : node.status.conditions)
      conds.push_back({{"type", c.type}, {"status", c.status}});
    status["conditions"] = std::move(conds);
  }
  return {{"kind", "Node"},
          {"apiVersion", "v1"},
          {"metadata", Meta(node.metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

const json* Field(const json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  if (auto it = obj.find(std::string(name)); it != obj.end()) return &*it;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() != name.size()) continue;
    bool eq = true;
    for (size_t i = 0; i < k.size() && eq; ++i) {
      eq = std::tolower(static_cast<unsigned char>(k[i])) ==
           std::tolower(static_cast<unsigned char>(name[i]));
    }
    if (eq) return &*it;
  }
  return nullptr;
}

}  // namespace phalanx::extender
