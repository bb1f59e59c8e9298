#include "store/store.h"

#include <yaml-cpp/yaml.h>

#include <ctime>
#include <deque>
#include <functional>

namespace phalanx::store {

namespace {
// The API server's answer to a UID precondition that does not hold.
api::Status UidPreconditionFailed(const std::string& want, const std::string& have) {
  return absl::AbortedError("Precondition failed: UID in precondition: " + want +
                            ", UID in object meta: " + have);
}

std::string PodKey(const std::string& ns, const std::string& name) { return ns + "/" + name; }
bool IsTerminal(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}
}  // namespace

Store::Store(const cluster::Clock& clock) : clock_(clock) {}
Store::~Store() = default;

std::string Store::NextRV() { return std::to_string(++rv_); }

template <typename T>
void Store::Deliver(const std::vector<cluster::EventHandlers<T>>& hs,
                    const std::shared_ptr<const T>& o, const std::shared_ptr<const T>& n) {
  // By index: a handler may register another handler (push_back) while it runs.
  for (size_t i = 0; i < hs.size(); ++i) {
    const cluster::EventHandlers<T>& h = hs[i];
    if (o && n) {
      if (h.on_update) h.on_update(o, n);
    } else if (n) {
      if (h.on_add) h.on_add(n);
    } else if (o) {
      if (h.on_delete) h.on_delete(o);
    }
  }
}

template <typename T>
void Store::Dispatch(const std::vector<cluster::EventHandlers<T>>& hs,
                     const std::shared_ptr<const T>& o, const std::shared_ptr<const T>& n) {
  // A write made by a handler while an event is being delivered (a controller reacting to
  // an object) is applied at once, but its event waits until every handler has received
  // the current one: otherwise the handlers after the writer would see the newer object
  // first and then the older one, as a stale add or update (a watch never reorders).
  if (dispatching_) {
    pending_.push_back([&hs, o, n] { Deliver(hs, o, n); });
    return;
  }
  dispatching_ = true;
  try {
    Deliver(hs, o, n);
    while (!pending_.empty()) {
      std::function<void()> next = std::move(pending_.front());
      pending_.pop_front();
      next();
    }
  } catch (...) {
    dispatching_ = false;
    pending_.clear();
    throw;
  }
  dispatching_ = false;
}

api::Status Store::CreatePod(api::Pod pod) {
  RecursiveMutexLock l(&mu_);
  if (pod.metadata.name.empty()) {
    return absl::InvalidArgumentError("Pod: metadata.name: Required value");
  }
  if (pod.metadata.namespace_.empty()) pod.metadata.namespace_ = "default";
  std::string key = pod.Key();
  if (pods_.count(key)) {
    return absl::AlreadyExistsError("pods \"" + pod.metadata.name + "\" already exists");
  }
  if (pod.metadata.uid.empty()) pod.metadata.uid = "uid-" + std::to_string(++uid_seq_);
  if (pod.metadata.creation_timestamp == 0) pod.metadata.creation_timestamp = clock_.Now();
  // Priority admission.
  if (!pod.spec.priority_class_name.empty()) {
    auto it = priority_classes_.find(pod.spec.priority_class_name);
    if (it == priority_classes_.end()) {
      if (pod.spec.priority_class_name != "system-cluster-critical" &&
          pod.spec.priority_class_name != "system-node-critical") {
        return absl::InvalidArgumentError("pods \"" + pod.metadata.name +
                                          "\" is forbidden: no PriorityClass with name " +
                                          pod.spec.priority_class_name + " was found");
      }
      pod.spec.priority =
          pod.spec.priority_class_name == "system-node-critical" ? 2000001000 : 2000000000;
    } else {
      pod.spec.priority = it->second->value;
      if (pod.spec.preemption_policy.empty()) {
        pod.spec.preemption_policy = it->second->preemption_policy;
      }
    }
  } else if (!pod.spec.priority) {
    int32_t def = 0;
    for (const auto& [n, pc] : priority_classes_) {
      if (pc->global_default) def = pc->value;
    }
    pod.spec.priority = def;
  }
  pod.metadata.resource_version = NextRV();
  auto p = std::make_shared<const api::Pod>(std::move(pod));
  pods_[key] = p;
  Dispatch<api::Pod>(pod_handlers_, nullptr, p);
  return {};
}

api::Status Store::UpdatePod(api::Pod pod) {
  RecursiveMutexLock l(&mu_);
  std::string key = pod.Key();
  auto it = pods_.find(key);
  if (it == pods_.end()) return absl::NotFoundError("pods \"" + pod.metadata.name + "\" not found");
  api::PodPtr old = it->second;
  pod.metadata.uid = old->metadata.uid;
  pod.metadata.creation_timestamp = old->metadata.creation_timestamp;
  pod.metadata.resource_version = NextRV();
  auto p = std::make_shared<const api::Pod>(std::move(pod));
  it->second = p;
  Dispatch<api::Pod>(pod_handlers_, old, p);
  return {};
}

api::Status Store::DeletePod(const std::string& ns, const std::string& name) {
  RecursiveMutexLock l(&mu_);
  auto it = pods_.find(PodKey(ns, name));
  if (it == pods_.end()) return absl::NotFoundError("pods \"" + name + "\" not found");
  api::PodPtr old = it->second;
  pods_.erase(it);
  ++rv_;
  Dispatch<api::Pod>(pod_handlers_, old, nullptr);
  return {};
}

api::Status Store::BindPod(const std::string& ns, const std::string& name,
                           const std::string& node) {
  RecursiveMutexLock l(&mu_);
  auto it = pods_.find(PodKey(ns, name));
  if (it == pods_.end()) return absl::NotFoundError("pods \"" + name + "\" not found");
  if (!it->second->spec.node_name.empty()) {
    return absl::AbortedError("Operation cannot be fulfilled on pods/binding \"" + name +
                              "\": pod " + name + " is already assigned to node \"" +
                              it->second->spec.node_name + "\"");
  }
  if (IsTerminal(*it->second)) {
    return absl::AbortedError("pod " + name + " is terminated");
  }
  api::Pod p = *it->second;
  p.spec.node_name = node;
  // The binding sets PodScheduled=True, as the API server's binding REST does.
  std::erase_if(p.status.conditions,
                [](const api::PodCondition& c) { return c.type == "PodScheduled"; });
  p.status.conditions.push_back({"PodScheduled", "True", "", ""});
  p.status.nominated_node_name.clear();
  // The in-process store plays the kubelet too: the pod starts when bound (status.startTime,
  // which expected end times of running pods count from; gang/reservation.h).
  if (!p.status.start_time) p.status.start_time = clock_.Now();
  p.metadata.resource_version = NextRV();
  api::PodPtr old = it->second;
  auto np = std::make_shared<const api::Pod>(std::move(p));
  it->second = np;
  Dispatch<api::Pod>(pod_handlers_, old, np);
  return {};
}

api::Status Store::CreateNode(api::Node node) {
  RecursiveMutexLock l(&mu_);
  if (node.metadata.name.empty()) {
    return absl::InvalidArgumentError("Node: metadata.name: Required value");
  }
  if (nodes_.count(node.metadata.name)) {
    return absl::AlreadyExistsError("nodes \"" + node.metadata.name + "\" already exists");
  }
  if (node.metadata.uid.empty()) node.metadata.uid = "uid-" + std::to_string(++uid_seq_);
  if (node.metadata.creation_timestamp == 0) node.metadata.creation_timestamp = clock_.Now();
  node.metadata.resource_version = NextRV();
  auto n = std::make_shared<const api::Node>(std::move(node));
  nodes_[n->metadata.name] = n;
  Dispatch<api::Node>(node_handlers_, nullptr, n);
  return {};
}

api::Status Store::UpdateNode(api::Node node) {
  RecursiveMutexLock l(&mu_);
  auto it = nodes_.find(node.metadata.name);
  if (it == nodes_.end()) {
    return absl::NotFoundError("nodes \"" + node.metadata.name + "\" not found");
  }
  api::NodePtr old = it->second;
  node.metadata.uid = old->metadata.uid;
  node.metadata.resource_version = NextRV();
  auto n = std::make_shared<const api::Node>(std::move(node));
  it->second = n;
  Dispatch<api::Node>(node_handlers_, old, n);
  return {};
}

api::Status Store::DeleteNode(const std::string& name) {
  RecursiveMutexLock l(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return absl::NotFoundError("nodes \"" + name + "\" not found");
  api::NodePtr old = it->second;
  nodes_.erase(it);
  ++rv_;
  Dispatch<api::Node>(node_handlers_, old, nullptr);
  return {};
}

api::Status Store::CreateNamespace(api::Namespace ns) {
  RecursiveMutexLock l(&mu_);
  if (namespaces_.count(ns.metadata.name)) {
    return absl::AlreadyExistsError("namespaces \"" + ns.metadata.name + "\" already exists");
  }
  ns.metadata.resource_version = NextRV();
  auto n = std::make_shared<const api::Namespace>(std::move(ns));
  namespaces_[n->metadata.name] = n;
  Dispatch<api::Namespace>(ns_handlers_, nullptr, n);
  return {};
}

api::Status Store::CreatePriorityClass(api::PriorityClass pc) {
  RecursiveMutexLock l(&mu_);
  if (priority_classes_.count(pc.metadata.name)) {
    return absl::AlreadyExistsError("priorityclasses \"" + pc.metadata.name + "\" already exists");
  }
  pc.metadata.resource_version = NextRV();
  auto p = std::make_shared<const api::PriorityClass>(std::move(pc));
  priority_classes_[p->metadata.name] = p;
  Dispatch<api::PriorityClass>(pc_handlers_, nullptr, p);
  return {};
}

api::Status Store::CreatePodDisruptionBudget(api::PodDisruptionBudget pdb) {
  RecursiveMutexLock l(&mu_);
  if (pdb.metadata.namespace_.empty()) pdb.metadata.namespace_ = "default";
  if (pdb.metadata.name.empty()) {
    return absl::InvalidArgumentError("PodDisruptionBudget: metadata.name: Required value");
  }
  if (pdbs_.count(pdb.Key())) {
    return absl::AlreadyExistsError("poddisruptionbudgets.policy \"" + pdb.metadata.name +
                                    "\" already exists");
  }
  if (pdb.metadata.uid.empty()) pdb.metadata.uid = pdb.Key();
  if (pdb.metadata.creation_timestamp == 0) pdb.metadata.creation_timestamp = clock_.Now();
  pdb.metadata.resource_version = NextRV();
  auto p = std::make_shared<const api::PodDisruptionBudget>(std::move(pdb));
  pdbs_[p->Key()] = p;
  Dispatch<api::PodDisruptionBudget>(pdb_handlers_, nullptr, p);
  return {};
}

api::Status Store::UpdatePodDisruptionBudget(api::PodDisruptionBudget pdb) {
  RecursiveMutexLock l(&mu_);
  if (pdb.metadata.namespace_.empty()) pdb.metadata.namespace_ = "default";
  auto it = pdbs_.find(pdb.Key());
  if (it == pdbs_.end()) {
    return absl::NotFoundError("poddisruptionbudgets.policy \"" + pdb.metadata.name +
                               "\" not found");
  }
  api::PodDisruptionBudgetPtr old = it->second;
  pdb.metadata.uid = old->metadata.uid;
  pdb.metadata.creation_timestamp = old->metadata.creation_timestamp;
  pdb.metadata.resource_version = NextRV();
  auto p = std::make_shared<const api::PodDisruptionBudget>(std::move(pdb));
  it->second = p;
  Dispatch<api::PodDisruptionBudget>(pdb_handlers_, old, p);
  return {};
}

api::Status Store::DeletePodDisruptionBudget(const std::string& ns, const std::string& name) {
  RecursiveMutexLock l(&mu_);
  auto it = pdbs_.find(ns + "/" + name);
  if (it == pdbs_.end()) {
    return absl::NotFoundError("poddisruptionbudgets.policy \"" + name + "\" not found");
  }
  api::PodDisruptionBudgetPtr old = it->second;
  pdbs_.erase(it);
  ++rv_;
  Dispatch<api::PodDisruptionBudget>(pdb_handlers_, old, nullptr);
  return {};
}

std::vector<api::PodDisruptionBudgetPtr> Store::ListPodDisruptionBudgets() const {
  RecursiveMutexLock l(&mu_);
  std::vector<api::PodDisruptionBudgetPtr> out;
  out.reserve(pdbs_.size());
  for (const auto& [k, p] : pdbs_) out.push_back(p);
  return out;
}

api::Status Store::CreateObject(api::Unstructured obj) {
  RecursiveMutexLock l(&mu_);
  const std::string key = obj.Key();
  if (objects_.count(key)) {
    return absl::AlreadyExistsError(obj.kind + " \"" + obj.metadata.name + "\" already exists");
  }
  if (obj.metadata.uid.empty()) obj.metadata.uid = "uid-" + std::to_string(++uid_seq_);
  if (obj.metadata.creation_timestamp == 0) obj.metadata.creation_timestamp = clock_.Now();
  obj.metadata.resource_version = NextRV();
  auto o = std::make_shared<const api::Unstructured>(std::move(obj));
  objects_[key] = o;
  Dispatch<api::Unstructured>(obj_handlers_, nullptr, o);
  return {};
}

api::Status Store::UpdateObject(api::Unstructured obj) {
  RecursiveMutexLock l(&mu_);
  auto it = objects_.find(obj.Key());
  if (it == objects_.end()) {
    return absl::NotFoundError(obj.kind + " \"" + obj.metadata.name + "\" not found");
  }
  api::UnstructuredPtr old = it->second;
  obj.metadata.uid = old->metadata.uid;
  obj.metadata.creation_timestamp = old->metadata.creation_timestamp;
  obj.metadata.resource_version = NextRV();
  auto o = std::make_shared<const api::Unstructured>(std::move(obj));
  it->second = o;
  Dispatch<api::Unstructured>(obj_handlers_, old, o);
  return {};
}

api::Status Store::DeleteObject(const api::Unstructured& obj) {
  RecursiveMutexLock l(&mu_);
  auto it = objects_.find(obj.Key());
  if (it == objects_.end()) {
    return absl::NotFoundError(obj.kind + " \"" + obj.metadata.name + "\" not found");
  }
  api::UnstructuredPtr old = it->second;
  objects_.erase(it);
  ++rv_;
  Dispatch<api::Unstructured>(obj_handlers_, old, nullptr);
  return {};
}

api::StatusOr<api::Unstructured> Store::CreateResourceClaim(const api::Unstructured& claim) {
  return PostObject(claim);
}

api::StatusOr<api::Unstructured> Store::PostObject(const api::Unstructured& in) {
  RecursiveMutexLock l(&mu_);
  api::Unstructured obj = in;
  if (obj.metadata.name.empty()) {
    if (obj.metadata.generate_name.empty()) {
      return absl::InvalidArgumentError(
          obj.kind + ": metadata.name: Required value: name or generateName is required");
    }
    // names.SimpleNameGenerator: generateName + 5 characters of [bcdfghjklmnpqrstvwxz2456789].
    static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t n = static_cast<uint64_t>(uid_seq_) + 1;
    std::string suffix;
    for (int i = 0; i < 5; ++i, n /= 27) suffix += kAlphabet[n % 27];
    obj.metadata.name = obj.metadata.generate_name + suffix;
  }
  if (obj.object) {
    YAML::Node doc = YAML::Clone(*obj.object);
    doc["metadata"]["name"] = obj.metadata.name;
    obj.object = std::make_shared<const YAML::Node>(doc);
  }
  const std::string key = obj.Key();
  if (auto s = CreateObject(std::move(obj)); !s.ok()) return s;
  return *objects_.at(key);
}

api::Status Store::DeleteResourceClaim(const api::Unstructured& claim) {
  RecursiveMutexLock l(&mu_);
  auto it = objects_.find(claim.Key());
  if (it != objects_.end() && !claim.metadata.uid.empty() &&
      it->second->metadata.uid != claim.metadata.uid) {
    return UidPreconditionFailed(claim.metadata.uid, it->second->metadata.uid);
  }
  return DeleteObject(claim);
}

api::Status Store::PatchPodExtendedResourceClaimStatus(
    const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) {
  RecursiveMutexLock l(&mu_);
  return PatchPod(pod, [&](api::Pod* p) {
    if (p->status.extended_resource_claim_status == status) return false;
    p->status.extended_resource_claim_status = status;
    return true;
  });
}

api::UnstructuredPtr Store::GetObject(const std::string& key) const {
  RecursiveMutexLock l(&mu_);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<api::UnstructuredPtr> Store::ListObjects() const {
  RecursiveMutexLock l(&mu_);
  std::vector<api::UnstructuredPtr> out;
  for (const auto& [k, o] : objects_) out.push_back(o);
  return out;
}

api::PodPtr Store::GetPod(const std::string& ns, const std::string& name) const {
  RecursiveMutexLock l(&mu_);
  auto it = pods_.find(PodKey(ns, name));
  return it == pods_.end() ? nullptr : it->second;
}

api::NodePtr Store::GetNode(const std::string& name) const {
  RecursiveMutexLock l(&mu_);
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second;
}

std::vector<api::PodPtr> Store::ListPods() const {
  RecursiveMutexLock l(&mu_);
  std::vector<api::PodPtr> out;
  out.reserve(pods_.size());
  for (const auto& [k, p] : pods_) out.push_back(p);
  return out;
}

std::vector<api::NodePtr> Store::ListNodes() const {
  RecursiveMutexLock l(&mu_);
  std::vector<api::NodePtr> out;
  out.reserve(nodes_.size());
  for (const auto& [k, n] : nodes_) out.push_back(n);
  return out;
}

int64_t Store::resource_version() const {
  RecursiveMutexLock l(&mu_);
  return rv_;
}

std::vector<RecordedEvent> Store::Events() const {
  RecursiveMutexLock l(&mu_);
  if (keep_all_events_) return events_;
  std::vector<RecordedEvent> out;
  for (const auto& [k, e] : last_event_) out.push_back(e);
  return out;
}

std::optional<RecordedEvent> Store::LastEventFor(const std::string& pod_key) const {
  RecursiveMutexLock l(&mu_);
  auto it = last_event_.find(pod_key);
  if (it == last_event_.end()) return std::nullopt;
  return it->second;
}

void Store::AddPodHandlers(cluster::EventHandlers<api::Pod> h) {
  RecursiveMutexLock l(&mu_);
  if (h.on_add) {
    for (const auto& [k, p] : pods_) h.on_add(p);
  }
  pod_handlers_.push_back(std::move(h));
}
void Store::AddNodeHandlers(cluster::EventHandlers<api::Node> h) {
  RecursiveMutexLock l(&mu_);
  if (h.on_add) {
    for (const auto& [k, n] : nodes_) h.on_add(n);
  }
  node_handlers_.push_back(std::move(h));
}
void Store::AddPriorityClassHandlers(cluster::EventHandlers<api::PriorityClass> h) {
  RecursiveMutexLock l(&mu_);
  if (h.on_add) {
    for (const auto& [k, p] : priority_classes_) h.on_add(p);
  }
  pc_handlers_.push_back(std::move(h));
}
void Store::AddPodDisruptionBudgetHandlers(cluster::EventHandlers<api::PodDisruptionBudget> h) {
  RecursiveMutexLock l(&mu_);
  if (h.on_add) {
    for (const auto& [k, p] : pdbs_) h.on_add(p);
  }
  pdb_handlers_.push_back(std::move(h));
}
void Store::AddObjectHandlers(cluster::EventHandlers<api::Unstructured> h) {
  RecursiveMutexLock l(&mu_);
  if (h.on_add) {
    for (const auto& [k, o] : objects_) h.on_add(o);
  }
  obj_handlers_.push_back(std::move(h));
}

void Store::AddNamespaceHandlers(cluster::EventHandlers<api::Namespace> h) {
  RecursiveMutexLock l(&mu_);
  if (h.on_add) {
    for (const auto& [k, n] : namespaces_) h.on_add(n);
  }
  ns_handlers_.push_back(std::move(h));
}

api::Status Store::Bind(const api::Pod& pod, const std::string& node) {
  return BindPod(pod.metadata.namespace_, pod.metadata.name, node);
}

api::Status Store::DeletePod(const api::Pod& pod) {
  api::Status r = DeletePod(pod.metadata.namespace_, pod.metadata.name);
  if (absl::IsNotFound(r)) return absl::OkStatus();
  return r;
}

api::Status Store::PatchPod(const api::Pod& pod, const std::function<bool(api::Pod*)>& change) {
  auto it = pods_.find(pod.Key());
  if (it == pods_.end()) return absl::NotFoundError("pods \"" + pod.metadata.name + "\" not found");
  if (!pod.metadata.uid.empty() && it->second->metadata.uid != pod.metadata.uid) {
    return UidPreconditionFailed(pod.metadata.uid, it->second->metadata.uid);
  }
  api::Pod p = *it->second;
  if (!change(&p)) return absl::OkStatus();
  p.metadata.resource_version = NextRV();
  api::PodPtr old = it->second;
  auto np = std::make_shared<const api::Pod>(std::move(p));
  it->second = np;
  Dispatch<api::Pod>(pod_handlers_, old, np);
  return absl::OkStatus();
}

api::Status Store::PatchPodAnnotations(const api::Pod& pod,
                                       const std::map<std::string, std::string>& annotations) {
  RecursiveMutexLock l(&mu_);
  return PatchPod(pod, [&](api::Pod* p) {
    bool changed = false;
    for (const auto& [k, v] : annotations) {
      auto a = p->metadata.annotations.find(k);
      if (a != p->metadata.annotations.end() && a->second == v) continue;
      p->metadata.annotations[k] = v;
      changed = true;
    }
    return changed;
  });
}

api::Status Store::UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                                   const std::string* nominated_node_name) {
  RecursiveMutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end()) return absl::NotFoundError("pods \"" + pod.metadata.name + "\" not found");
  api::Pod p = *it->second;
  bool changed = false;
  if (condition) {
    bool found = false;
    for (auto& c : p.status.conditions) {
      if (c.type != condition->type) continue;
      found = true;
      if (c.status != condition->status || c.reason != condition->reason ||
          c.message != condition->message) {
        c = *condition;
        changed = true;
      }
    }
    if (!found) {
      p.status.conditions.push_back(*condition);
      changed = true;
    }
  }
  if (nominated_node_name && p.status.nominated_node_name != *nominated_node_name) {
    p.status.nominated_node_name = *nominated_node_name;
    changed = true;
  }
  if (!changed) return absl::OkStatus();
  p.metadata.resource_version = NextRV();
  api::PodPtr old = it->second;
  auto np = std::make_shared<const api::Pod>(std::move(p));
  it->second = np;
  Dispatch<api::Pod>(pod_handlers_, old, np);
  return absl::OkStatus();
}

void Store::RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                        std::string_view message) {
  RecursiveMutexLock l(&mu_);
  RecordedEvent e{pod.Key(), std::string(type), std::string(reason), std::string(message),
                  clock_.Now()};
  if (keep_all_events_) events_.push_back(e);
  last_event_[e.pod_key] = std::move(e);
}

void Store::RecordObjectEvent(std::string_view api_version, std::string_view kind,
                              std::string_view ns, std::string_view name, std::string_view type,
                              std::string_view reason, std::string_view message) {
  RecursiveMutexLock l(&mu_);
  std::string key = std::string(kind) + " " + std::string(ns) + "/" + std::string(name);
  RecordedEvent e{key, std::string(type), std::string(reason), std::string(message), clock_.Now()};
  (void)api_version;
  if (keep_all_events_) events_.push_back(e);
  last_object_event_[key] = std::move(e);
}

std::optional<RecordedEvent> Store::LastObjectEvent(const std::string& kind, const std::string& ns,
                                                    const std::string& name) const {
  RecursiveMutexLock l(&mu_);
  auto it = last_object_event_.find(kind + " " + ns + "/" + name);
  if (it == last_object_event_.end()) return std::nullopt;
  return it->second;
}

namespace {

std::string Rfc3339(api::Timestamp ns) {
  const time_t secs = static_cast<time_t>(ns / api::kNanosPerSecond);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The fields of `status` that the object's API group `group` has (cluster/client.h
// ClusterClient::PodGroupStatus, the same per-group choice as LiveClusterClient's JSON).
void WriteStatusFields(const std::string& group, const cluster::ClusterClient::PodGroupStatus& s,
                       const std::string& now, YAML::Node st) {
  auto condition = [&](bool kai) {
    YAML::Node c(YAML::NodeType::Map);
    c["type"] = s.condition_type;
    c["status"] = s.condition_status;
    c["reason"] = s.condition_reason;
    c["message"] = s.condition_message;
    c["lastTransitionTime"] = now;
    if (kai) {
      c["nodePool"] = "default";
      YAML::Node r(YAML::NodeType::Map);
      r["reason"] = s.condition_reason;
      r["message"] = s.condition_message;
      c["reasons"].push_back(r);
    }
    YAML::Node list(YAML::NodeType::Sequence);
    list.push_back(c);
    return list;
  };
  if (!s.phase.empty()) st["phase"] = s.phase;
  if (group == "scheduling.volcano.sh") {
    if (!s.condition_type.empty()) st["conditions"] = condition(false);
    st["running"] = s.running;
    st["succeeded"] = s.succeeded;
    st["failed"] = s.failed;
  } else if (group == "scheduling.run.ai") {
    st["pending"] = s.pending;
    st["running"] = s.running;
    st["succeeded"] = s.succeeded;
    st["failed"] = s.failed;
    st["schedulingConditions"] =
        s.condition_type.empty() ? YAML::Node(YAML::NodeType::Sequence) : condition(true);
  } else if (group == "scheduling.k8s.io") {
    if (!s.condition_type.empty()) st["conditions"] = condition(false);
  } else {
    // As the projects' CRDs keep it: scheduling.sigs.k8s.io has status.scheduled, the
    // scheduling.x-k8s.io CRD dropped it (a real server prunes it).
    if (group == "scheduling.sigs.k8s.io") st["scheduled"] = s.scheduled;
    st["running"] = s.running;
    st["succeeded"] = s.succeeded;
    st["failed"] = s.failed;
    if (s.schedule_start_time != 0) st["scheduleStartTime"] = Rfc3339(s.schedule_start_time);
    if (!s.occupied_by.empty()) st["occupiedBy"] = s.occupied_by;
  }
}

}  // namespace

void Store::UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                                 std::string_view ns, std::string_view name,
                                 const PodGroupStatus& status) {
  RecursiveMutexLock l(&mu_);
  api::Unstructured probe;
  probe.api_version = std::string(api_version);
  probe.kind = std::string(kind);
  probe.metadata.namespace_ = std::string(ns);
  probe.metadata.name = std::string(name);
  const std::string key = probe.Key();
  auto it = objects_.find(key);
  if (it == objects_.end() || !it->second->object) return;
  PodGroupStatus merged = status;
  auto last = podgroup_status_.find(key);
  if (last != podgroup_status_.end()) {
    if (merged.occupied_by.empty()) merged.occupied_by = last->second.occupied_by;
    if (merged.schedule_start_time == 0) {
      merged.schedule_start_time = last->second.schedule_start_time;
    }
  }
  merged.MergeConditionTime(last != podgroup_status_.end() ? &last->second : nullptr, clock_.Now());
  if (last != podgroup_status_.end() && merged == last->second) return;
  podgroup_status_[key] = merged;
  ++podgroup_status_writes_;
  api::Unstructured obj = *it->second;
  auto doc = std::make_shared<YAML::Node>(YAML::Clone(*obj.object));
  YAML::Node st = (*doc)["status"];
  if (!st.IsMap()) {
    (*doc)["status"] = YAML::Node(YAML::NodeType::Map);
    st = (*doc)["status"];
  }
  WriteStatusFields(probe.Group(), merged, Rfc3339(merged.condition_time), st);
  obj.object = std::move(doc);
  (void)UpdateObject(std::move(obj));
}

int64_t Store::podgroup_status_writes() const {
  RecursiveMutexLock l(&mu_);
  return podgroup_status_writes_;
}

}  // namespace phalanx::store
