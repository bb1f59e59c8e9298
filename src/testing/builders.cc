#include "testing/builders.h"

#include <cstdio>
#include <cstdlib>

namespace phalanx::testing {

api::Quantity Q(const std::string& text) {
  api::Quantity q;
  std::string err;
  if (!api::MoveOrMessage(api::Quantity::Parse(text), &q, &err)) {
    std::fprintf(stderr, "bad test quantity %s: %s\n", text.c_str(), err.c_str());
    std::abort();
  }
  return q;
}

namespace {
api::ResourceList ToList(const std::map<std::string, std::string>& m) {
  api::ResourceList l;
  for (const auto& [k, v] : m) l[k] = Q(v);
  return l;
}
api::NodeSelectorTerm& FirstRequiredTerm(api::Pod& pod) {
  auto& aff = pod.spec.affinity;
  if (!aff) aff.emplace();
  if (!aff->node_affinity) aff->node_affinity.emplace();
  auto& req = aff->node_affinity->required_during_scheduling_ignored_during_execution;
  if (!req) req.emplace();
  if (req->node_selector_terms.empty()) req->node_selector_terms.emplace_back();
  return req->node_selector_terms[0];
}
}  // namespace

PodBuilder::PodBuilder(std::string name, std::string ns) {
  pod_.metadata.name = std::move(name);
  pod_.metadata.namespace_ = std::move(ns);
  pod_.metadata.uid = pod_.metadata.namespace_ + "/" + pod_.metadata.name;
}
PodBuilder& PodBuilder::Namespace(std::string ns) {
  pod_.metadata.namespace_ = std::move(ns);
  pod_.metadata.uid = pod_.metadata.namespace_ + "/" + pod_.metadata.name;
  return *this;
}
PodBuilder& PodBuilder::UID(std::string uid) {
  pod_.metadata.uid = std::move(uid);
  return *this;
}
PodBuilder& PodBuilder::Label(std::string k, std::string v) {
  pod_.metadata.labels[std::move(k)] = std::move(v);
  return *this;
}
PodBuilder& PodBuilder::Annotation(std::string k, std::string v) {
  pod_.metadata.annotations[std::move(k)] = std::move(v);
  return *this;
}
PodBuilder& PodBuilder::Container(const std::map<std::string, std::string>& requests,
                                  std::string image) {
  api::Container c;
  c.name = "c" + std::to_string(pod_.spec.containers.size());
  c.image = std::move(image);
  c.resources.requests = ToList(requests);
  pod_.spec.containers.push_back(std::move(c));
  return *this;
}
PodBuilder& PodBuilder::Req(const std::string& resource, const std::string& quantity) {
  if (pod_.spec.containers.empty()) Container({});
  pod_.spec.containers[0].resources.requests[resource] = Q(quantity);
  return *this;
}
PodBuilder& PodBuilder::InitContainer(const std::map<std::string, std::string>& requests,
                                      bool sidecar) {
  api::Container c;
  c.name = "init" + std::to_string(pod_.spec.init_containers.size());
  c.resources.requests = ToList(requests);
  if (sidecar) c.restart_policy = "Always";
  pod_.spec.init_containers.push_back(std::move(c));
  return *this;
}
PodBuilder& PodBuilder::Overhead(const std::map<std::string, std::string>& overhead) {
  pod_.spec.overhead = ToList(overhead);
  return *this;
}
PodBuilder& PodBuilder::HostPort(int32_t port, std::string protocol, std::string ip) {
  if (pod_.spec.containers.empty()) Container({});
  api::ContainerPort p;
  p.container_port = port;
  p.host_port = port;
  p.protocol = std::move(protocol);
  p.host_ip = std::move(ip);
  pod_.spec.containers[0].ports.push_back(std::move(p));
  return *this;
}
PodBuilder& PodBuilder::NodeName(std::string node) {
  pod_.spec.node_name = std::move(node);
  return *this;
}
PodBuilder& PodBuilder::SchedulerName(std::string name) {
  pod_.spec.scheduler_name = std::move(name);
  return *this;
}
PodBuilder& PodBuilder::Priority(int32_t p) {
  pod_.spec.priority = p;
  return *this;
}
PodBuilder& PodBuilder::NodeSelector(std::map<std::string, std::string> sel) {
  pod_.spec.node_selector = std::move(sel);
  return *this;
}
PodBuilder& PodBuilder::NodeAffinityIn(std::string key, std::vector<std::string> values) {
  FirstRequiredTerm(pod_).match_expressions.push_back({std::move(key), "In", std::move(values)});
  return *this;
}
PodBuilder& PodBuilder::NodeAffinityNotIn(std::string key, std::vector<std::string> values) {
  FirstRequiredTerm(pod_).match_expressions.push_back({std::move(key), "NotIn", std::move(values)});
  return *this;
}
PodBuilder& PodBuilder::PreferredNodeAffinity(int32_t weight, std::string key,
                                              std::vector<std::string> values) {
  auto& aff = pod_.spec.affinity;
  if (!aff) aff.emplace();
  if (!aff->node_affinity) aff->node_affinity.emplace();
  api::PreferredSchedulingTerm t;
  t.weight = weight;
  t.preference.match_expressions.push_back({std::move(key), "In", std::move(values)});
  aff->node_affinity->preferred_during_scheduling_ignored_during_execution.push_back(std::move(t));
  return *this;
}
PodBuilder& PodBuilder::Toleration(std::string key, std::string op, std::string value,
                                   std::string effect) {
  api::Toleration t;
  t.key = std::move(key);
  t.op = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  pod_.spec.tolerations.push_back(std::move(t));
  return *this;
}
PodBuilder& PodBuilder::SchedulingGate(std::string name) {
  pod_.spec.scheduling_gates.push_back({std::move(name)});
  return *this;
}
PodBuilder& PodBuilder::CreationTimestamp(api::Timestamp t) {
  pod_.metadata.creation_timestamp = t;
  return *this;
}
PodBuilder& PodBuilder::Phase(std::string phase) {
  pod_.status.phase = std::move(phase);
  return *this;
}

PodBuilder& PodBuilder::Terminating(api::Timestamp t) {
  pod_.metadata.deletion_timestamp = t;
  return *this;
}
PodBuilder& PodBuilder::OwnerReference(std::string kind, std::string name,
                                       std::string api_version) {
  api::OwnerReference ref;
  ref.api_version = api_version.empty() ? "apps/v1" : std::move(api_version);
  ref.kind = std::move(kind);
  ref.name = std::move(name);
  ref.uid = ref.kind + "/" + ref.name;
  ref.controller = true;
  pod_.metadata.owner_references.push_back(std::move(ref));
  return *this;
}

namespace {
api::PodAffinity& PodAffinityOf(api::Pod& pod, bool anti) {
  auto& aff = pod.spec.affinity;
  if (!aff) aff.emplace();
  auto& pa = anti ? aff->pod_anti_affinity : aff->pod_affinity;
  if (!pa) pa.emplace();
  return *pa;
}
}  // namespace

PodBuilder& PodBuilder::PodAffinity(api::PodAffinityTerm term) {
  PodAffinityOf(pod_, false).required.push_back(std::move(term));
  return *this;
}
PodBuilder& PodBuilder::PodAntiAffinity(api::PodAffinityTerm term) {
  PodAffinityOf(pod_, true).required.push_back(std::move(term));
  return *this;
}
PodBuilder& PodBuilder::PreferredPodAffinity(int32_t weight, api::PodAffinityTerm term) {
  PodAffinityOf(pod_, false).preferred.push_back({weight, std::move(term)});
  return *this;
}
PodBuilder& PodBuilder::PreferredPodAntiAffinity(int32_t weight, api::PodAffinityTerm term) {
  PodAffinityOf(pod_, true).preferred.push_back({weight, std::move(term)});
  return *this;
}
PodBuilder& PodBuilder::PodAffinityIn(std::string label_key, std::string topology_key,
                                      std::vector<std::string> values) {
  return PodAffinity(
      AffinityTerm({SelectorIn(std::move(label_key), std::move(values))}, std::move(topology_key)));
}
PodBuilder& PodBuilder::PodAffinityNotIn(std::string label_key, std::string topology_key,
                                         std::vector<std::string> values) {
  return PodAffinity(AffinityTerm({SelectorNotIn(std::move(label_key), std::move(values))},
                                  std::move(topology_key)));
}
PodBuilder& PodBuilder::PodAffinityExists(std::string label_key, std::string topology_key) {
  return PodAffinity(AffinityTerm({SelectorExists(std::move(label_key))}, std::move(topology_key)));
}
PodBuilder& PodBuilder::PodAntiAffinityIn(std::string label_key, std::string topology_key,
                                          std::vector<std::string> values) {
  return PodAntiAffinity(
      AffinityTerm({SelectorIn(std::move(label_key), std::move(values))}, std::move(topology_key)));
}
PodBuilder& PodBuilder::PodAntiAffinityNotIn(std::string label_key, std::string topology_key,
                                             std::vector<std::string> values) {
  return PodAntiAffinity(AffinityTerm({SelectorNotIn(std::move(label_key), std::move(values))},
                                      std::move(topology_key)));
}
PodBuilder& PodBuilder::PodAntiAffinityExists(std::string label_key, std::string topology_key) {
  return PodAntiAffinity(
      AffinityTerm({SelectorExists(std::move(label_key))}, std::move(topology_key)));
}
PodBuilder& PodBuilder::SpreadConstraint(int32_t max_skew, std::string topology_key,
                                         std::string when_unsatisfiable,
                                         std::optional<api::LabelSelector> selector,
                                         std::optional<int32_t> min_domains,
                                         std::string node_affinity_policy,
                                         std::string node_taints_policy,
                                         std::vector<std::string> match_label_keys) {
  api::TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = std::move(topology_key);
  c.when_unsatisfiable = std::move(when_unsatisfiable);
  c.label_selector = std::move(selector);
  c.min_domains = min_domains;
  c.node_affinity_policy = std::move(node_affinity_policy);
  c.node_taints_policy = std::move(node_taints_policy);
  c.match_label_keys = std::move(match_label_keys);
  pod_.spec.topology_spread_constraints.push_back(std::move(c));
  return *this;
}

api::LabelSelectorRequirement SelectorIn(std::string key, std::vector<std::string> values) {
  return {std::move(key), "In", std::move(values)};
}
api::LabelSelectorRequirement SelectorNotIn(std::string key, std::vector<std::string> values) {
  return {std::move(key), "NotIn", std::move(values)};
}
api::LabelSelectorRequirement SelectorExists(std::string key) {
  return {std::move(key), "Exists", {}};
}
api::LabelSelectorRequirement SelectorDoesNotExist(std::string key) {
  return {std::move(key), "DoesNotExist", {}};
}
api::LabelSelector MakeLabelSelector(std::map<std::string, std::string> match_labels,
                                     std::vector<api::LabelSelectorRequirement> exprs) {
  api::LabelSelector s;
  s.match_labels = std::move(match_labels);
  s.match_expressions = std::move(exprs);
  return s;
}
api::PodAffinityTerm AffinityTerm(std::vector<api::LabelSelectorRequirement> exprs,
                                  std::string topology_key) {
  api::PodAffinityTerm t;
  t.label_selector = MakeLabelSelector({}, std::move(exprs));
  t.topology_key = std::move(topology_key);
  return t;
}

NodeBuilder::NodeBuilder(std::string name) {
  node_.metadata.name = std::move(name);
  node_.metadata.uid = "node/" + node_.metadata.name;
  node_.metadata.labels["kubernetes.io/hostname"] = node_.metadata.name;
}
NodeBuilder& NodeBuilder::Label(std::string k, std::string v) {
  node_.metadata.labels[std::move(k)] = std::move(v);
  return *this;
}
NodeBuilder& NodeBuilder::Capacity(const std::map<std::string, std::string>& res) {
  node_.status.capacity = ToList(res);
  node_.status.allocatable = node_.status.capacity;
  return *this;
}
NodeBuilder& NodeBuilder::Taint(std::string key, std::string value, std::string effect) {
  node_.spec.taints.push_back({std::move(key), std::move(value), std::move(effect)});
  return *this;
}
NodeBuilder& NodeBuilder::Unschedulable(bool u) {
  node_.spec.unschedulable = u;
  return *this;
}
NodeBuilder& NodeBuilder::Image(std::string name, int64_t size_bytes) {
  node_.status.images.push_back({{std::move(name)}, size_bytes});
  return *this;
}

framework::NodeInfo MakeNodeInfo(const api::Node& node, const std::vector<api::Pod>& pods) {
  framework::NodeInfo ni(std::make_shared<api::Node>(node));
  for (auto p : pods) {
    p.spec.node_name = node.metadata.name;
    ni.AddPod(framework::PodInfo::Make(std::make_shared<api::Pod>(std::move(p))));
  }
  return ni;
}

}  // namespace phalanx::testing
