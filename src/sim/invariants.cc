#include "sim/invariants.h"

#include "api/pod_resources.h"

namespace phalanx::sim {

namespace {
bool Terminal(const api::Pod& p) { return p.status.phase == "Succeeded" || p.status.phase == "Failed"; }

// True if any component of `used` exceeds `alloc` (pods count included).
std::string Exceeds(const api::Resource& used, const api::Resource& alloc) {
  if (used.milli_cpu > alloc.milli_cpu) return "cpu";
  if (used.memory > alloc.memory) return "memory";
  if (used.ephemeral_storage > alloc.ephemeral_storage && used.ephemeral_storage > 0) {
    return "ephemeral-storage";
  }
  if (used.allowed_pod_number > alloc.allowed_pod_number) return "pods";
  for (const auto& [id, v] : used.scalar) {
    if (v > alloc.Scalar(id)) return api::ScalarResourceName(id);
  }
  return "";
}
}  // namespace

void InvariantChecker::Attach(store::InformerFactory& inf) {
  inf.AddNodeHandlers(
      {[this](const api::NodePtr& n) {
         absl::MutexLock l(&mu_);
         auto r = api::ResourceListToResource(n->status.allocatable);
         capacity_.Add(r);
         node_alloc_[n->metadata.name] = r;
       },
       [this](const api::NodePtr& o, const api::NodePtr& n) {
         absl::MutexLock l(&mu_);
         capacity_.Subtract(node_alloc_[o->metadata.name]);
         auto r = api::ResourceListToResource(n->status.allocatable);
         capacity_.Add(r);
         node_alloc_[n->metadata.name] = r;
       },
       [this](const api::NodePtr& n) {
         absl::MutexLock l(&mu_);
         capacity_.Subtract(node_alloc_[n->metadata.name]);
         node_alloc_.erase(n->metadata.name);
       }});
  inf.AddPodHandlers({[this](const api::PodPtr& p) {
                        if (!p->spec.node_name.empty() && !Terminal(*p)) OnBound(*p);
                      },
                      [this](const api::PodPtr& o, const api::PodPtr& n) {
                        bool was = !o->spec.node_name.empty() && !Terminal(*o);
                        bool is = !n->spec.node_name.empty() && !Terminal(*n);
                        if (was && is && o->spec.node_name != n->spec.node_name) {
                          absl::MutexLock l(&mu_);
                          Violation("pod " + n->Key() + " moved from " + o->spec.node_name +
                                    " to " + n->spec.node_name + " (bound twice)");
                        }
                        if (was && !is) OnUnbound(*o);
                        if (!was && is) OnBound(*n);
                      },
                      [this](const api::PodPtr& p) {
                        if (!p->spec.node_name.empty() && !Terminal(*p)) OnUnbound(*p);
                      }});
}

void InvariantChecker::Violation(std::string v) { violations_.push_back(std::move(v)); }

void InvariantChecker::OnBound(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  const std::string key = pod.Key();
  if (bound_.count(key)) {
    Violation("pod " + key + " bound twice (" + bound_[key] + ", " + pod.spec.node_name + ")");
    return;
  }
  auto ait = node_alloc_.find(pod.spec.node_name);
  if (ait == node_alloc_.end()) {
    Violation("pod " + key + " bound to node " + pod.spec.node_name + " that does not exist");
  }
  bound_[key] = pod.spec.node_name;
  api::Resource req = api::PodRequests(pod);
  req.allowed_pod_number = 1;
  auto& used = node_used_[pod.spec.node_name];
  used.Add(req);
  allocated_.Add(req);
  if (ait != node_alloc_.end()) {
    std::string what = Exceeds(used, ait->second);
    if (!what.empty()) {
      Violation("node " + pod.spec.node_name + ": bound requests exceed allocatable " + what +
                " after binding " + key);
    }
  }
}

void InvariantChecker::OnUnbound(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  const std::string key = pod.Key();
  auto it = bound_.find(key);
  if (it == bound_.end()) return;
  api::Resource req = api::PodRequests(pod);
  req.allowed_pod_number = 1;
  node_used_[it->second].Subtract(req);
  allocated_.Subtract(req);
  bound_.erase(it);
}

void InvariantChecker::CheckPendingReasons(const std::vector<api::PodPtr>& pods) {
  absl::MutexLock l(&mu_);
  for (const auto& p : pods) {
    if (!p->spec.node_name.empty() || Terminal(*p)) continue;
    bool has_reason = false;
    for (const auto& c : p->status.conditions) {
      if (c.type == "PodScheduled" && c.status == "False" && !c.message.empty()) has_reason = true;
    }
    if (!has_reason) Violation("pending pod " + p->Key() + " has no reason (PodScheduled condition)");
  }
}

std::vector<std::string> InvariantChecker::violations() const {
  absl::MutexLock l(&mu_);
  return violations_;
}
api::Resource InvariantChecker::Allocated() const {
  absl::MutexLock l(&mu_);
  return allocated_;
}
api::Resource InvariantChecker::Capacity() const {
  absl::MutexLock l(&mu_);
  return capacity_;
}
size_t InvariantChecker::BoundPods() const {
  absl::MutexLock l(&mu_);
  return bound_.size();
}

}  // namespace phalanx::sim
