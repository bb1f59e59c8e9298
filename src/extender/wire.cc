// Encoders of the extender wire format (wire.h).
#include "extender/wire.h"

#include <cctype>
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

json Requirements(const std::vector<api::NodeSelectorRequirement>& reqs) {
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
    for (const auto& t : na.required_during_scheduling_ignored_during_execution->node_selector_terms) {
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
    json res = json::object();
    if (!c.resources.requests.empty()) res["requests"] = Resources(c.resources.requests);
    if (!c.resources.limits.empty()) res["limits"] = Resources(c.resources.limits);
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

}  // namespace

json PodJson(const api::Pod& pod) {
  const api::PodSpec& s = pod.spec;
  json spec = {{"containers", Containers(s.containers)}, {"schedulerName", s.scheduler_name}};
  if (!s.init_containers.empty()) spec["initContainers"] = Containers(s.init_containers);
  if (!s.node_name.empty()) spec["nodeName"] = s.node_name;
  if (!s.node_selector.empty()) spec["nodeSelector"] = s.node_selector;
  if (s.affinity && s.affinity->node_affinity) {
    spec["affinity"] = {{"nodeAffinity", NodeAffinityJson(*s.affinity->node_affinity)}};
  }
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
    for (const auto& c : node.status.conditions) conds.push_back({{"type", c.type}, {"status", c.status}});
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
