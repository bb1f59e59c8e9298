#include "sim/invariants.h"

#include <utility>

namespace phalanx::sim {

namespace {
bool Terminal(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}
}  // namespace

void InvariantChecker::Attach(cluster::InformerFactory& inf) {
  inf.AddNodeHandlers({[this](const api::NodePtr& n) {
                         absl::MutexLock l(&mu_);
                         OracleAmounts r = OracleAllocatable(*n);
                         AddAmounts(&capacity_, r, 1);
                         node_alloc_[n->metadata.name] = std::move(r);
                       },
                       [this](const api::NodePtr& o, const api::NodePtr& n) {
                         absl::MutexLock l(&mu_);
                         AddAmounts(&capacity_, node_alloc_[o->metadata.name], -1);
                         OracleAmounts r = OracleAllocatable(*n);
                         AddAmounts(&capacity_, r, 1);
                         node_alloc_[n->metadata.name] = std::move(r);
                       },
                       [this](const api::NodePtr& n) {
                         absl::MutexLock l(&mu_);
                         AddAmounts(&capacity_, node_alloc_[n->metadata.name], -1);
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
  const OracleAmounts req = OracleRequests(pod);
  auto& used = node_used_[pod.spec.node_name];
  AddAmounts(&used, req, 1);
  AddAmounts(&allocated_, req, 1);
  if (ait != node_alloc_.end()) {
    std::string what = FirstExceeded(used, ait->second);
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
  const OracleAmounts req = OracleRequests(pod);
  AddAmounts(&node_used_[it->second], req, -1);
  AddAmounts(&allocated_, req, -1);
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
    if (!has_reason)
      Violation("pending pod " + p->Key() + " has no reason (PodScheduled condition)");
  }
}

std::vector<std::string> InvariantChecker::violations() const {
  absl::MutexLock l(&mu_);
  return violations_;
}
api::Resource InvariantChecker::Allocated() const {
  absl::MutexLock l(&mu_);
  return OracleToResource(allocated_);
}
api::Resource InvariantChecker::Capacity() const {
  absl::MutexLock l(&mu_);
  return OracleToResource(capacity_);
}
size_t InvariantChecker::BoundPods() const {
  absl::MutexLock l(&mu_);
  return bound_.size();
}

}  // namespace phalanx::sim
