#include "sim/autoscaler.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <utility>

#include "api/decode.h"
#include "api/pod_resources.h"
#include "api/rfc3339.h"
#include "plugins/helper/taints.h"
#include "plugins/nodeaffinity/node_affinity.h"

namespace phalanx::sim {

namespace {

constexpr const char* kGroup = "autoscaling.x-k8s.io";
constexpr const char* kAtomicClass = "best-effort-atomic-scale-up.autoscaling.x-k8s.io";
constexpr const char* kCheckCapacityClass = "check-capacity.autoscaling.x-k8s.io";
// cluster-autoscaler provisioningrequest/pods: the annotation that ties a pod to a request.
constexpr const char* kConsumeAnnotation = "autoscaling.x-k8s.io/consume-provisioning-request";

double Seconds(api::Timestamp t) { return static_cast<double>(t) / 1e9; }

std::string KeyOf(const api::Unstructured& o) {
  return o.metadata.namespace_ + "/" + o.metadata.name;
}

std::string Scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : std::string(); }

// n[key] when n is a map, else an undefined node (yaml-cpp throws on a key of a missing key).
YAML::Node Child(const YAML::Node& n, const char* key) {
  if (!n || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node c = n[key];
  return c ? c : YAML::Node(YAML::NodeType::Undefined);
}

// True when a node's labels, taints and unschedulable flag admit the pod (what
// cluster-autoscaler's scheduler simulation checks besides resources, minus inter-pod
// terms, which the pod templates do not carry).
bool Admits(const api::Node& node, const api::Pod& pod) {
  if (node.spec.unschedulable) return false;
  if (!plugins::nodeaffinity::MatchesRequiredNodeAffinity(pod, node)) return false;
  return plugins::helper::FindUntoleratedDoNotScheduleTaint(node.spec.taints,
                                                            pod.spec.tolerations) == nullptr;
}

// True when `req` (one pod) fits into `free`; then `free` is reduced by it.
bool Take(const api::Resource& req, api::Resource* free) {
  if (req.milli_cpu > free->milli_cpu || req.memory > free->memory ||
      req.ephemeral_storage > free->ephemeral_storage || free->allowed_pod_number < 1) {
    return false;
  }
  for (const auto& [id, v] : req.scalar) {
    if (v > 0 && v > free->Scalar(id)) return false;
  }
  free->Subtract(req);
  free->allowed_pod_number -= 1;
  return true;
}

struct Bin {
  const api::Node* node;
  api::Resource free;
};

// First fit of pods (indices `todo`) into bins; the indices that fit nowhere.
std::vector<size_t> FirstFit(const std::vector<api::Pod>& pods,
                             const std::vector<api::Resource>& reqs,
                             const std::vector<size_t>& todo, std::vector<Bin>* bins) {
  std::vector<size_t> left;
  for (size_t i : todo) {
    bool placed = false;
    for (auto& b : *bins) {
      if (Admits(*b.node, pods[i]) && Take(reqs[i], &b.free)) {
        placed = true;
        break;
      }
    }
    if (!placed) left.push_back(i);
  }
  return left;
}

}  // namespace

Autoscaler::Autoscaler(store::Store& store, const cluster::Clock& clock,
                       std::vector<NodeGroup> groups, uint64_t seed, AutoscalerOptions opts)
    : store_(store), clock_(clock), groups_(std::move(groups)), opts_(opts), rng_(seed) {}

void Autoscaler::Attach() {
  for (const auto& g : groups_) next_index_[g.name] = 1;
  store_.AddNodeHandlers({[this](const api::NodePtr& n) { OnNode(*n, false); },
                          [this](const api::NodePtr&, const api::NodePtr&) {},
                          [this](const api::NodePtr& n) { OnNode(*n, true); }});
  store_.AddPodHandlers(
      {[this](const api::PodPtr& p) { OnPod(nullptr, p.get()); },
       [this](const api::PodPtr& o, const api::PodPtr& p) { OnPod(o.get(), p.get()); },
       [this](const api::PodPtr& p) { OnPod(p.get(), nullptr); }});
  store_.AddObjectHandlers(
      {[this](const api::UnstructuredPtr& o) { OnRequest(*o, false); },
       [this](const api::UnstructuredPtr&, const api::UnstructuredPtr& o) { OnRequest(*o, false); },
       [this](const api::UnstructuredPtr& o) { OnRequest(*o, true); }});
}

void Autoscaler::OnNode(const api::Node& node, bool deleted) {
  auto ann = node.metadata.annotations.find(kNodeGroupAnnotation);
  if (ann == node.metadata.annotations.end()) return;
  const bool ours = std::any_of(groups_.begin(), groups_.end(),
                                [&](const NodeGroup& g) { return g.name == ann->second; });
  if (!ours) return;
  const api::Timestamp now = clock_.Now();
  if (deleted) {
    auto it = nodes_.find(node.metadata.name);
    if (it == nodes_.end()) return;
    if (it->second.pods == 0) summary_.idle_node_seconds += Seconds(now - it->second.empty_since);
    nodes_.erase(it);
    return;
  }
  ManagedNode& m = nodes_[node.metadata.name];
  m.group = ann->second;
  m.pods = 0;
  m.empty_since = now;
  // Nodes "<group>-<n>" move the group's numbering past n.
  const std::string prefix = ann->second + "-";
  if (node.metadata.name.rfind(prefix, 0) == 0) {
    const std::string tail = node.metadata.name.substr(prefix.size());
    if (!tail.empty() && std::all_of(tail.begin(), tail.end(), ::isdigit) && tail.size() < 9) {
      int32_t& next = next_index_[ann->second];
      next = std::max(next, std::stoi(tail) + 1);
    }
  }
}

void Autoscaler::OnPod(const api::Pod* old_pod, const api::Pod* pod) {
  const api::Timestamp now = clock_.Now();
  const api::Pod& any = pod ? *pod : *old_pod;
  const std::string key = any.Key();
  const std::string node = pod ? pod->spec.node_name : std::string();
  auto b = bound_.find(key);
  const std::string was = b == bound_.end() ? std::string() : b->second;
  if (node == was) return;
  if (!was.empty()) {
    bound_.erase(b);
    auto m = nodes_.find(was);
    if (m != nodes_.end() && --m->second.pods == 0) m->second.empty_since = now;
  }
  if (node.empty()) return;
  bound_[key] = node;
  auto m = nodes_.find(node);
  if (m != nodes_.end() && m->second.pods++ == 0) {
    summary_.idle_node_seconds += Seconds(now - m->second.empty_since);
  }
  auto c = pod->metadata.annotations.find(kConsumeAnnotation);
  if (c == pod->metadata.annotations.end()) return;
  auto r = record_of_.find(pod->metadata.namespace_ + "/" + c->second);
  if (r == record_of_.end()) return;
  ProvisioningRecord& rec = summary_.requests[r->second];
  if (!rec.started_s) rec.started_s = Seconds(now);
}

void Autoscaler::OnRequest(const api::Unstructured& obj, bool deleted) {
  if (obj.kind != "ProvisioningRequest" || obj.Group() != kGroup) return;
  const std::string key = KeyOf(obj);
  if (deleted) {
    // Its booking ends with it; its nodes stay until scale-down finds them empty.
    auto it = requests_.find(key);
    if (it != requests_.end()) {
      summary_.requests[it->second.record].outcome += " (deleted)";
      requests_.erase(it);
    }
    pending_.erase(std::remove(pending_.begin(), pending_.end(), key), pending_.end());
    return;
  }
  if (requests_.count(key) || record_of_.count(key)) return;  // known (or ours, re-created)
  if (std::find(pending_.begin(), pending_.end(), key) == pending_.end()) pending_.push_back(key);
}

int32_t Autoscaler::GroupSize(const std::string& group) const {
  int32_t n = 0;
  for (const auto& [name, m] : nodes_) n += m.group == group ? 1 : 0;
  for (const auto& a : arrivals_) {
    if (a.group == group && !a.rollback) n += static_cast<int32_t>(a.nodes.size());
    if (a.group == group && a.rollback) n += a.missing;  // asked for, not (yet) given up
  }
  return n;
}

void Autoscaler::SetCondition(const std::string& key, const std::string& type,
                              const std::string& status, const std::string& reason,
                              const std::string& message, api::Timestamp now) {
  const api::UnstructuredPtr cur =
      store_.GetObject("ProvisioningRequest." + std::string(kGroup) + "/" + key);
  if (!cur || !cur->object) return;
  YAML::Node doc = YAML::Clone(*cur->object);
  const YAML::Node conds = Child(Child(*cur->object, "status"), "conditions");
  YAML::Node out(YAML::NodeType::Sequence);
  bool found = false;
  if (conds && conds.IsSequence()) {
    for (YAML::Node c0 : conds) {
      YAML::Node c = YAML::Clone(c0);
      if (Scalar(c["type"]) == type) {
        if (Scalar(c["status"]) == status && Scalar(c["reason"]) == reason &&
            Scalar(c["message"]) == message) {
          return;  // unchanged
        }
        found = true;
        c["status"] = status;
        c["reason"] = reason;
        c["message"] = message;
        c["lastTransitionTime"] = api::FormatRFC3339(now);
      }
      out.push_back(c);
    }
  }
  if (!found) {
    YAML::Node c;
    c["type"] = type;
    c["status"] = status;
    c["reason"] = reason;
    c["message"] = message;
    c["lastTransitionTime"] = api::FormatRFC3339(now);
    c["observedGeneration"] = 1;
    out.push_back(c);
  }
  if (const YAML::Node st = Child(doc, "status"); !st || !st.IsMap())
    doc["status"] = YAML::Node(YAML::NodeType::Map);
  doc["status"]["conditions"] = out;
  api::Unstructured next = *cur;
  next.object = std::make_shared<const YAML::Node>(doc);
  (void)store_.UpdateObject(std::move(next));
  auto r = requests_.find(key);
  if (r != requests_.end()) {
    summary_.requests[r->second.record].outcome =
        type + "=" + status + (reason.empty() ? "" : " (" + reason + ")");
  }
}

std::string Autoscaler::RequestPods(const api::Unstructured& req,
                                    std::vector<api::Pod>* pods) const {
  const YAML::Node sets = Child(Child(*req.object, "spec"), "podSets");
  if (!sets || !sets.IsSequence() || sets.size() == 0) return "spec.podSets: Required value";
  for (size_t i = 0; i < sets.size(); ++i) {
    const std::string field = "spec.podSets[" + std::to_string(i) + "]";
    const std::string name = Scalar(Child(Child(sets[i], "podTemplateRef"), "name"));
    int64_t count = 0;
    try {
      const YAML::Node c = Child(sets[i], "count");
      count = c ? c.as<int64_t>() : 0;
    } catch (const YAML::Exception&) {
      return field + ".count: Invalid value";
    }
    if (count < 1 || count > 100000) return field + ".count: must be from 1 to 100000";
    const api::UnstructuredPtr t =
        store_.GetObject("PodTemplate./" + req.metadata.namespace_ + "/" + name);
    if (!t || !t->object) return field + ".podTemplateRef: PodTemplate " + name + " not found";
    const YAML::Node tmpl = Child(*t->object, "template");
    YAML::Node doc;
    doc["apiVersion"] = "v1";
    doc["kind"] = "Pod";
    doc["metadata"]["name"] = name;
    doc["metadata"]["namespace"] = req.metadata.namespace_;
    if (const YAML::Node l = Child(Child(tmpl, "metadata"), "labels"); l)
      doc["metadata"]["labels"] = l;
    doc["spec"] = Child(tmpl, "spec");
    api::Manifests m;
    if (auto s = api::DecodeManifestNode(doc, "PodTemplate " + name, &m);
        !s.ok() || m.pods.empty()) {
      return field + ": PodTemplate " + name + ": " + std::string(s.message());
    }
    for (int64_t k = 0; k < count; ++k) pods->push_back(m.pods[0]);
  }
  return "";
}

void Autoscaler::Try(Request& r, api::Timestamp now) {
  r.next_try = INT64_MAX;
  const api::UnstructuredPtr obj =
      store_.GetObject("ProvisioningRequest." + std::string(kGroup) + "/" + r.key);
  if (!obj || !obj->object) return;
  const std::string cls = Scalar(Child(Child(*obj->object, "spec"), "provisioningClassName"));
  std::vector<api::Pod> pods;
  if (std::string err = RequestPods(*obj, &pods); !err.empty()) {
    r.ended = true;
    SetCondition(r.key, "Failed", "True", "FailedToCreatePods", err, now);
    return;
  }
  ProvisioningRecord& rec = summary_.requests[r.record];
  rec.pods = static_cast<int32_t>(pods.size());
  std::vector<api::Resource> reqs;
  reqs.reserve(pods.size());
  for (const auto& p : pods) reqs.push_back(api::PodRequests(p));
  // The cluster's free capacity: allocatable minus the requests of the pods bound there.
  std::vector<api::NodePtr> nodes = store_.ListNodes();
  std::map<std::string, api::Resource> used;
  for (const auto& p : store_.ListPods()) {
    if (p->spec.node_name.empty() || p->status.phase == "Succeeded" || p->status.phase == "Failed")
      continue;
    used[p->spec.node_name].Add(api::PodRequests(*p));
    used[p->spec.node_name].allowed_pod_number += 1;
  }
  std::vector<Bin> bins;
  for (const auto& n : nodes) {
    Bin b{n.get(), api::ResourceListToResource(n->status.allocatable)};
    if (auto u = used.find(n->metadata.name); u != used.end()) b.free.Subtract(u->second);
    bins.push_back(std::move(b));
  }
  std::vector<size_t> all(pods.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<size_t> left = FirstFit(pods, reqs, all, &bins);
  if (left.empty()) {
    r.provisioned = true;
    r.booked_until = now + opts_.booking_ns;
    SetCondition(r.key, "Provisioned", "True", "CapacityIsFound",
                 "Capacity is found in the cluster", now);
    if (!rec.provisioned_s) rec.provisioned_s = Seconds(now);
    return;
  }
  if (cls == kCheckCapacityClass) {
    SetCondition(r.key, "Provisioned", "False", "CapacityIsNotFound",
                 "Capacity is not found: " + std::to_string(left.size()) + " of " +
                     std::to_string(pods.size()) + " pods do not fit",
                 now);
    r.next_try = now + opts_.initial_backoff_ns;
    return;
  }
  // The group that needs the fewest new nodes for the pods left over, within its max.
  const NodeGroup* best = nullptr;
  int32_t best_n = 0;
  std::string why;
  for (const auto& g : groups_) {
    auto bo = backoff_until_.find(g.name);
    if (bo != backoff_until_.end() && bo->second > now) {
      why += (why.empty() ? "" : "; ") + g.name + ": backing off after a failed scale-up";
      continue;
    }
    std::vector<Bin> fresh;
    std::vector<size_t> todo = left;
    const api::Resource cap = api::ResourceListToResource(g.node_template.status.allocatable);
    int32_t n = 0;
    bool impossible = false;
    while (!todo.empty()) {
      fresh.push_back(Bin{&g.node_template, cap});
      ++n;
      std::vector<size_t> next = FirstFit(pods, reqs, todo, &fresh);
      if (next.size() == todo.size()) {
        impossible = true;  // a pod fits no empty node of the group
        break;
      }
      todo = std::move(next);
    }
    if (impossible) {
      why += (why.empty() ? "" : "; ") + g.name + ": a pod does not fit its nodes";
      continue;
    }
    const int32_t size = GroupSize(g.name);
    if (size + n > g.max_size) {
      why += (why.empty() ? "" : "; ") + g.name + ": needs " + std::to_string(n) + " nodes, " +
             std::to_string(std::max(0, g.max_size - size)) + " left to max-count " +
             std::to_string(g.max_size);
      continue;
    }
    if (!best || n < best_n) {
      best = &g;
      best_n = n;
    }
  }
  if (!best) {
    SetCondition(r.key, "Provisioned", "False", "CapacityIsNotFound",
                 "No node group can add the nodes for " + std::to_string(left.size()) + " pods" +
                     (why.empty() ? std::string() : ": " + why),
                 now);
    r.next_try = now + opts_.initial_backoff_ns;
    return;
  }
  Arrival join;
  join.t = now + best->provisioning_delay_ns;
  join.request = r.key;
  join.group = best->name;
  int32_t& next = next_index_[best->name];
  std::vector<std::string> names;
  for (int32_t i = 0; i < best_n; ++i) names.push_back(best->name + "-" + std::to_string(next++));
  const bool fails = best->failure_rate > 0 &&
                     std::uniform_real_distribution<double>(0, 1)(rng_) < best->failure_rate;
  r.provisioned = true;
  r.nodes = names;
  rec.node_group = best->name;
  rec.nodes = best_n;
  if (!rec.provisioned_s) rec.provisioned_s = Seconds(now);
  if (fails) {
    const int32_t joined = best_n / 2;
    join.nodes.assign(names.begin(), names.begin() + joined);
    Arrival rb;
    rb.t = now + opts_.max_node_provision_ns;
    rb.request = r.key;
    rb.group = best->name;
    rb.nodes = join.nodes;
    rb.rollback = true;
    rb.missing = best_n - joined;
    rb.wanted = best_n;
    arrivals_.push_back(std::move(rb));
  } else {
    join.nodes = names;
  }
  if (!join.nodes.empty()) arrivals_.push_back(std::move(join));
  SetCondition(
      r.key, "Provisioned", "True", "CapacityIsProvisioned",
      "Capacity is provisioned: " + std::to_string(best_n) + " nodes of node group " + best->name,
      now);
}

void Autoscaler::Join(const Arrival& a, api::Timestamp now) {
  const NodeGroup* g = nullptr;
  for (const auto& x : groups_) {
    if (x.name == a.group) g = &x;
  }
  if (!g) return;
  for (const auto& name : a.nodes) {
    const std::string prefix = g->name + "-";
    const int32_t n = std::stoi(name.substr(prefix.size()));
    api::Node node = NodeGroupNode(*g, n);
    if (!store_.CreateNode(node).ok()) continue;
    ++summary_.nodes_added;
    if (on_node_added) on_node_added(node);
  }
  auto r = requests_.find(a.request);
  const bool complete = std::none_of(arrivals_.begin(), arrivals_.end(), [&](const Arrival& x) {
    return x.rollback && x.request == a.request && x.missing > 0;
  });
  if (r != requests_.end() && complete) {
    r->second.booked_until = now + opts_.booking_ns;
    ProvisioningRecord& rec = summary_.requests[r->second.record];
    if (!rec.nodes_ready_s) rec.nodes_ready_s = Seconds(now);
  }
}

void Autoscaler::RemoveNode(const std::string& name, api::Timestamp) {
  if (!store_.DeleteNode(name).ok()) return;
  ++summary_.nodes_removed;
  if (on_node_removed) on_node_removed(name);
}

void Autoscaler::Rollback(const Arrival& a, api::Timestamp now) {
  int32_t removed = 0;
  for (const auto& name : a.nodes) {
    auto m = nodes_.find(name);
    if (m == nodes_.end() || m->second.pods > 0) continue;
    RemoveNode(name, now);
    ++removed;
  }
  int64_t& bo = backoff_ns_[a.group];
  bo = bo == 0 ? opts_.initial_backoff_ns : std::min(2 * bo, opts_.max_backoff_ns);
  backoff_until_[a.group] = now + bo;
  auto r = requests_.find(a.request);
  if (r == requests_.end()) return;
  Request& req = r->second;
  req.provisioned = false;
  req.booked_until = INT64_MAX;
  req.nodes.clear();
  req.next_try = now + bo;
  ++summary_.requests[req.record].failed_scale_ups;
  SetCondition(
      req.key, "Provisioned", "False", "CapacityIsNotFound",
      "scale-up of node group " + a.group + " failed: " + std::to_string(a.missing) + " of " +
          std::to_string(a.wanted) + " nodes did not join within maxNodeProvisionTime (" +
          std::to_string(opts_.max_node_provision_ns / api::kNanosPerSecond / 60) +
          "m); the scale-up was rolled back (" + std::to_string(removed) + " joined nodes removed)",
      now);
}

void Autoscaler::Expire(Request& r, api::Timestamp now) {
  if (r.ended) return;
  if (r.provisioned && now >= r.booked_until) {
    r.ended = true;
    SetCondition(r.key, "BookingExpired", "True", "CapacityReservationTimeExpired",
                 "Capacity reservation time expired", now);
  } else if (!r.provisioned && now >= r.created + opts_.expiration_ns) {
    r.ended = true;
    SetCondition(r.key, "Failed", "True", "Expired", "Provisioning request expired", now);
  }
}

void Autoscaler::ScaleDown(api::Timestamp now) {
  std::set<std::string> booked;
  for (const auto& [key, r] : requests_) {
    if (r.provisioned && !r.ended) booked.insert(r.nodes.begin(), r.nodes.end());
  }
  std::vector<std::string> victims;
  std::map<std::string, int32_t> size;
  for (const auto& g : groups_) size[g.name] = GroupSize(g.name);
  for (const auto& g : groups_) {
    for (const auto& [name, m] : nodes_) {
      if (m.group != g.name || m.pods > 0 || booked.count(name)) continue;
      if (now - m.empty_since < opts_.scale_down_unneeded_ns || size[g.name] <= g.min_size)
        continue;
      victims.push_back(name);
      --size[g.name];
    }
  }
  for (const auto& v : victims) RemoveNode(v, now);
}

api::Timestamp Autoscaler::NextTime() const {
  api::Timestamp t = INT64_MAX;
  if (!pending_.empty()) return clock_.Now();
  for (const auto& [key, r] : requests_) {
    if (r.ended) continue;
    if (!r.provisioned) t = std::min({t, r.next_try, r.created + opts_.expiration_ns});
    if (r.provisioned) t = std::min(t, r.booked_until);
  }
  for (const auto& a : arrivals_) t = std::min(t, a.t);
  std::set<std::string> booked;
  for (const auto& [key, r] : requests_) {
    if (r.provisioned && !r.ended) booked.insert(r.nodes.begin(), r.nodes.end());
  }
  for (const auto& g : groups_) {
    if (GroupSize(g.name) <= g.min_size) continue;
    for (const auto& [name, m] : nodes_) {
      if (m.group == g.name && m.pods == 0 && !booked.count(name)) {
        t = std::min(t, m.empty_since + opts_.scale_down_unneeded_ns);
      }
    }
  }
  return t;
}

void Autoscaler::Step(api::Timestamp now) {
  // New requests: accepted when of a class served here; tried at the next scan.
  std::vector<std::string> fresh;
  fresh.swap(pending_);
  for (const auto& key : fresh) {
    const api::UnstructuredPtr obj =
        store_.GetObject("ProvisioningRequest." + std::string(kGroup) + "/" + key);
    if (!obj || !obj->object) continue;
    const std::string cls = Scalar(Child(Child(*obj->object, "spec"), "provisioningClassName"));
    if (cls != kAtomicClass && cls != kCheckCapacityClass) continue;
    Request r;
    r.key = key;
    r.created = now;
    r.next_try = (now / opts_.scan_interval_ns + 1) * opts_.scan_interval_ns;
    r.record = summary_.requests.size();
    ProvisioningRecord rec;
    rec.request = key;
    rec.class_name = cls;
    rec.created_s = Seconds(now);
    summary_.requests.push_back(std::move(rec));
    record_of_[key] = r.record;
    requests_[key] = std::move(r);
    SetCondition(key, "Accepted", "True", "Accepted", "Provisioning Request was accepted", now);
  }
  // Nodes joining and failed scale-ups ending, in time order.
  std::stable_sort(arrivals_.begin(), arrivals_.end(),
                   [](const Arrival& a, const Arrival& b) { return a.t < b.t; });
  while (!arrivals_.empty() && arrivals_.front().t <= now) {
    Arrival a = std::move(arrivals_.front());
    arrivals_.erase(arrivals_.begin());
    if (a.rollback) {
      Rollback(a, now);
    } else {
      Join(a, now);
    }
  }
  for (auto& [key, r] : requests_) {
    Expire(r, now);
    if (!r.ended && !r.provisioned && r.next_try <= now) Try(r, now);
  }
  ScaleDown(now);
}

const AutoscalerSummary& Autoscaler::Finish(api::Timestamp now) {
  for (auto& [name, m] : nodes_) {
    if (m.pods == 0) {
      summary_.idle_node_seconds += Seconds(now - m.empty_since);
      m.empty_since = now;
    }
  }
  return summary_;
}

}  // namespace phalanx::sim
