#include "testing/builders.h"

#include <cstdio>
#include <cstdlib>

namespace phalanx::testing {

api::Quantity Q(const std::string& text) {
  api::Quantity q;
  std::string err;
  if (!api::Quantity::Parse(text, &q, &err)) {
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
  FirstRequiredTerm(pod_).match_expressions.push_back(
      {std::move(key), "NotIn", std::move(values)});
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
  aff->node_affinity->preferred_during_scheduling_ignored_during_execution.push_back(
      std::move(t));
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
