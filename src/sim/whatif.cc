#include "sim/whatif.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace phalanx::sim {

namespace {

constexpr const char* kHostnameLabel = "kubernetes.io/hostname";

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

const api::Node* FindNode(const Scenario& sc, const std::string& name) {
  for (const auto& n : sc.nodes) {
    if (n.metadata.name == name) return &n;
  }
  for (const auto& tn : sc.later_nodes) {
    if (tn.node.metadata.name == name) return &tn.node;
  }
  return nullptr;
}

// A node's shape as a comparable string: resources, labels but the hostname, taints.
std::string ShapeOf(const api::Node& n) {
  std::string s;
  const auto& res = n.status.allocatable.empty() ? n.status.capacity : n.status.allocatable;
  for (const auto& [k, q] : res) s += k + "=" + std::to_string(q.MilliValue()) + ";";
  s += "|";
  for (const auto& [k, v] : n.metadata.labels) {
    if (k != kHostnameLabel) s += k + "=" + v + ";";
  }
  s += "|";
  for (const auto& t : n.spec.taints) s += t.key + "=" + t.value + ":" + t.effect + ";";
  return s;
}

TimedPod* FindPod(Scenario* sc, const std::string& key) {
  for (auto& tp : sc->pods) {
    const std::string& ns = tp.pod.metadata.namespace_;
    if ((ns.empty() ? "default" : ns) + "/" + tp.pod.metadata.name == key) return &tp;
  }
  return nullptr;
}

}  // namespace

api::Status ParseAddNodes(const std::string& spec, AddNodes* out) {
  const auto bad = [&] {
    return absl::InvalidArgumentError("--add-nodes \"" + spec +
                                      "\": want COUNTxNODE (e.g. 2xgpu-1), COUNT 1..10000");
  };
  const size_t x = spec.find('x');
  if (x == std::string::npos) return bad();
  const std::string count = Trim(spec.substr(0, x));
  std::string name = Trim(spec.substr(x + 1));
  if (name.size() >= 2 && name.front() == '{' && name.back() == '}') {
    name = Trim(name.substr(1, name.size() - 2));
  }
  if (count.empty() || count.size() > 5 || name.empty() ||
      !std::all_of(count.begin(), count.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return bad();
  }
  const int n = std::stoi(count);
  if (n < 1 || n > 10000) return bad();
  out->count = n;
  out->node_template = name;
  return absl::OkStatus();
}

api::Status AddNodeCopies(const AddNodes& add, Scenario* sc) {
  const api::Node* tmpl = FindNode(*sc, add.node_template);
  if (!tmpl) {
    std::string names;
    for (const auto& n : sc->nodes) names += (names.empty() ? "" : ", ") + n.metadata.name;
    return absl::InvalidArgumentError("--add-nodes: no node named \"" + add.node_template +
                                      "\" in the scenario (nodes: " + names + ")");
  }
  const api::Node templ = *tmpl;  // sc->nodes grows below
  std::set<std::string> taken;
  for (const auto& n : sc->nodes) taken.insert(n.metadata.name);
  for (const auto& tn : sc->later_nodes) taken.insert(tn.node.metadata.name);
  int k = 0;
  for (int i = 0; i < add.count; ++i) {
    std::string name;
    do {
      name = templ.metadata.name + "-whatif-" + std::to_string(++k);
    } while (taken.count(name));
    taken.insert(name);
    api::Node n = templ;
    n.metadata.name = name;
    n.metadata.uid.clear();
    n.metadata.resource_version.clear();
    auto it = n.metadata.labels.find(kHostnameLabel);
    if (it != n.metadata.labels.end() && it->second == templ.metadata.name) it->second = name;
    sc->nodes.push_back(std::move(n));
  }
  return absl::OkStatus();
}

namespace {

std::vector<std::string> SplitNames(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = Trim(list.substr(start, comma - start));
    if (!name.empty()) out.push_back(name);
    start = comma + 1;
  }
  return out;
}

api::Node* FindMutableNode(Scenario* sc, const std::string& name) {
  return const_cast<api::Node*>(FindNode(*sc, name));
}

}  // namespace

api::Status CordonNodes(const std::string& names, Scenario* sc) {
  for (const auto& name : SplitNames(names)) {
    api::Node* n = FindMutableNode(sc, name);
    if (!n)
      return absl::InvalidArgumentError("--cordon-nodes: no node named \"" + name +
                                        "\" in the scenario");
    n->spec.unschedulable = true;
  }
  return absl::OkStatus();
}

api::Status RemoveNodes(const std::string& names, Scenario* sc) {
  for (const auto& name : SplitNames(names)) {
    if (!FindNode(*sc, name)) {
      return absl::InvalidArgumentError("--remove-nodes: no node named \"" + name +
                                        "\" in the scenario");
    }
    for (const auto& tp : sc->pods) {
      if (tp.pod.spec.node_name == name) {
        return absl::InvalidArgumentError("--remove-nodes: pod " + tp.pod.Key() +
                                          " is bound to node \"" + name + "\" in the manifest");
      }
    }
    std::erase_if(sc->nodes, [&](const api::Node& n) { return n.metadata.name == name; });
    std::erase_if(sc->later_nodes,
                  [&](const TimedNode& n) { return n.node.metadata.name == name; });
  }
  return absl::OkStatus();
}

api::Status ApplyNodeEdits(const NodeEdits& edits, Scenario* sc) {
  if (auto s = RemoveNodes(edits.remove, sc); !s.ok()) return s;
  if (auto s = CordonNodes(edits.cordon, sc); !s.ok()) return s;
  for (const auto& spec : edits.add) {
    AddNodes add;
    if (auto s = ParseAddNodes(spec, &add); !s.ok()) return s;
    if (auto s = AddNodeCopies(add, sc); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::vector<std::string> NodeShapeTemplates(const Scenario& sc) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto visit = [&](const api::Node& n) {
    if (seen.insert(ShapeOf(n)).second) out.push_back(n.metadata.name);
  };
  for (const auto& n : sc.nodes) visit(n);
  for (const auto& tn : sc.later_nodes) visit(tn.node);
  return out;
}

const std::vector<std::string>& DroppableConstraints() {
  static const std::vector<std::string> k = {
      "spec.nodeSelector",
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
      "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
      "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
      "spec.topologySpreadConstraints",
      "node taints",
  };
  return k;
}

namespace {

// Drops `constraint` from one pod; false when it had none.
bool DropFromPod(const std::string& c, const std::vector<api::Taint>& any_taints, api::PodSpec* s) {
  if (c == "spec.nodeSelector") {
    if (s->node_selector.empty()) return false;
    s->node_selector.clear();
    return true;
  }
  if (c == "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution") {
    if (!s->affinity || !s->affinity->node_affinity ||
        !s->affinity->node_affinity->required_during_scheduling_ignored_during_execution) {
      return false;
    }
    s->affinity->node_affinity->required_during_scheduling_ignored_during_execution.reset();
    return true;
  }
  if (c == "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution" ||
      c == "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution") {
    if (!s->affinity) return false;
    auto& pa = c.find("podAnti") != std::string::npos ? s->affinity->pod_anti_affinity
                                                      : s->affinity->pod_affinity;
    if (!pa || pa->required.empty()) return false;
    pa->required.clear();
    return true;
  }
  if (c == "spec.topologySpreadConstraints") {
    const size_t before = s->topology_spread_constraints.size();
    std::erase_if(s->topology_spread_constraints,
                  [](const auto& t) { return t.when_unsatisfiable != "ScheduleAnyway"; });
    return s->topology_spread_constraints.size() != before;
  }
  if (c == "node taints") {
    if (any_taints.empty()) return false;
    api::Toleration all;
    all.op = "Exists";
    if (std::find(s->tolerations.begin(), s->tolerations.end(), all) != s->tolerations.end()) {
      return false;
    }
    s->tolerations.push_back(all);
    return true;
  }
  return false;
}

}  // namespace

bool DropConstraint(const std::string& constraint, const std::vector<std::string>& pod_keys,
                    Scenario* sc) {
  std::vector<api::Taint> taints;
  for (const auto& n : sc->nodes)
    taints.insert(taints.end(), n.spec.taints.begin(), n.spec.taints.end());
  for (const auto& tn : sc->later_nodes) {
    taints.insert(taints.end(), tn.node.spec.taints.begin(), tn.node.spec.taints.end());
  }
  bool any = false;
  for (const auto& key : pod_keys) {
    if (TimedPod* tp = FindPod(sc, key))
      any = DropFromPod(constraint, taints, &tp->pod.spec) || any;
  }
  return any;
}

}  // namespace phalanx::sim
