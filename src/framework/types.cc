#include "framework/types.h"

#include <algorithm>

#include "api/pod_resources.h"

namespace phalanx::framework {

namespace {

void AppendPorts(const api::Container& c, std::vector<HostPort>* out) {
  for (const auto& p : c.ports) {
    if (p.host_port <= 0) continue;
    out->push_back(HostPort{p.host_ip.empty() ? "0.0.0.0" : p.host_ip,
                            p.protocol.empty() ? "TCP" : p.protocol, p.host_port});
  }
}

bool HasTerms(const std::optional<api::PodAffinity>& a) {
  return a && (!a->required.empty() || !a->preferred.empty());
}

}  // namespace

std::shared_ptr<const PodInfo> PodInfo::Make(api::PodPtr pod) {
  auto pi = std::make_shared<PodInfo>();
  pi->requests = api::PodRequests(*pod);
  pi->non_zero_requests = api::PodNonZeroRequests(*pod);
  pi->scoring_non_zero_requests = api::IsPodLevelRequestsSet(*pod)
                                      ? api::PodScoringNonZeroRequests(*pod)
                                      : pi->non_zero_requests;
  for (const auto& c : pod->spec.init_containers) {
    if (c.restart_policy == "Always") AppendPorts(c, &pi->host_ports);
  }
  for (const auto& c : pod->spec.containers) AppendPorts(c, &pi->host_ports);
  if (pod->spec.affinity) {
    pi->has_affinity = HasTerms(pod->spec.affinity->pod_affinity) ||
                       HasTerms(pod->spec.affinity->pod_anti_affinity);
    pi->has_required_anti_affinity = pod->spec.affinity->pod_anti_affinity &&
                                     !pod->spec.affinity->pod_anti_affinity->required.empty();
  }
  pi->priority = pod->spec.priority.value_or(0);
  pi->pod = std::move(pod);
  return pi;
}

std::shared_ptr<const PodInfo> PodInfo::WithPod(const PodInfo& from, api::PodPtr pod) {
  auto pi = std::make_shared<PodInfo>(from);
  pi->pod = std::move(pod);
  return pi;
}

const std::string& NodeInfo::name() const {
  static const std::string kEmpty;
  return node_ ? node_->metadata.name : kEmpty;
}

void NodeInfo::SetNode(api::NodePtr node) {
  nominated_overlay_.Reset();
  node_ = std::move(node);
  unschedulable_ = node_->spec.unschedulable;
  has_taints_ = !node_->spec.taints.empty();
  allocatable_ = api::ResourceListToResource(node_->status.allocatable);
  image_states_.clear();
  for (const auto& img : node_->status.images) {
    for (const auto& n : img.names) image_states_[n] = ImageStateSummary{img.size_bytes, 0};
  }
}

void NodeInfo::AddPod(PodInfoPtr pod) {
  nominated_overlay_.Reset();
  requested_.Add(pod->requests);
  non_zero_requested_.milli_cpu += pod->non_zero_requests.milli_cpu;
  non_zero_requested_.memory += pod->non_zero_requests.memory;
  requested_.allowed_pod_number = 0;
  for (const auto& hp : pod->host_ports) used_ports_.push_back(hp);
  if (pod->has_affinity) pods_with_affinity_.push_back(pod);
  if (pod->has_required_anti_affinity) pods_with_required_anti_affinity_.push_back(pod);
  pods_.push_back(std::move(pod));
}

namespace {
bool SamePod(const PodInfoPtr& p, const api::Pod& pod) {
  return p->pod->metadata.name == pod.metadata.name &&
         p->pod->metadata.namespace_ == pod.metadata.namespace_;
}
bool EraseOne(std::vector<PodInfoPtr>& v, const api::Pod& pod) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (SamePod(v[i], pod)) {
      v[i] = std::move(v.back());
      v.pop_back();
      return true;
    }
  }
  return false;
}
}  // namespace

bool NodeInfo::RemovePod(const api::Pod& pod) {
  PodInfoPtr found;
  for (const auto& p : pods_) {
    if (SamePod(p, pod)) {
      found = p;
      break;
    }
  }
  if (!found) return false;
  nominated_overlay_.Reset();
  EraseOne(pods_, pod);
  EraseOne(pods_with_affinity_, pod);
  EraseOne(pods_with_required_anti_affinity_, pod);
  requested_.Subtract(found->requests);
  requested_.allowed_pod_number = 0;
  non_zero_requested_.milli_cpu -= found->non_zero_requests.milli_cpu;
  non_zero_requested_.memory -= found->non_zero_requests.memory;
  for (const auto& hp : found->host_ports) {
    auto it = std::find(used_ports_.begin(), used_ports_.end(), hp);
    if (it != used_ports_.end()) used_ports_.erase(it);
  }
  return true;
}

bool ClusterEvent::Match(const ClusterEvent& e) const {
  if ((action & e.action) == 0) return false;
  if (resource == EventResource::kWildCard || resource == e.resource) return true;
  if (resource == EventResource::kPod) {
    return e.resource == EventResource::kAssignedPod ||
           e.resource == EventResource::kUnscheduledPod;
  }
  return false;
}

namespace {
bool SameTaints(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].effect != b[i].effect) {
      return false;
    }
  }
  return true;
}
bool SameConditions(const std::vector<api::NodeCondition>& a,
                    const std::vector<api::NodeCondition>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type != b[i].type || a[i].status != b[i].status) return false;
  }
  return true;
}
bool SameTolerations(const std::vector<api::Toleration>& a, const std::vector<api::Toleration>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].value != b[i].value ||
        a[i].effect != b[i].effect || a[i].toleration_seconds != b[i].toleration_seconds) {
      return false;
    }
  }
  return true;
}
}  // namespace

uint32_t NodeUpdateActions(const api::Node& o, const api::Node& n) {
  uint32_t a = 0;
  if (api::ResourceListToResource(o.status.allocatable) !=
      api::ResourceListToResource(n.status.allocatable)) {
    a |= kUpdateNodeAllocatable;
  }
  if (o.metadata.labels != n.metadata.labels) a |= kUpdateNodeLabel;
  if (!SameTaints(o.spec.taints, n.spec.taints) || o.spec.unschedulable != n.spec.unschedulable) {
    a |= kUpdateNodeTaint;
  }
  if (!SameConditions(o.status.conditions, n.status.conditions)) a |= kUpdateNodeCondition;
  if (o.metadata.annotations != n.metadata.annotations) a |= kUpdateNodeAnnotation;
  if (o.status.declared_features != n.status.declared_features) a |= kUpdateNodeDeclaredFeature;
  return a;
}

namespace {
// PodUpdateActions with the pods' requests (api::PodRequests) given.
uint32_t UpdateActions(const api::Pod& o, const api::Pod& n, const api::Resource& ro,
                       const api::Resource& rn) {
  uint32_t a = 0;
  if (o.metadata.labels != n.metadata.labels) a |= kUpdatePodLabel;
  if (ro != rn) {
    // upstream extractPodScaleDown: any request that decreased or was removed frees room,
    // whatever the other requests did.
    bool down = rn.milli_cpu < ro.milli_cpu || rn.memory < ro.memory ||
                rn.ephemeral_storage < ro.ephemeral_storage;
    for (const auto& [id, v] : ro.scalar) down = down || rn.Scalar(id) < v;
    if (down) a |= kUpdatePodScaleDown;
  }
  if (!SameTolerations(o.spec.tolerations, n.spec.tolerations)) a |= kUpdatePodTolerations;
  if (!o.spec.scheduling_gates.empty() && n.spec.scheduling_gates.empty()) {
    a |= kUpdatePodSchedulingGatesEliminated;
  }
  // upstream: extractPodGeneratedResourceClaimChange (pod.status.resourceClaimStatuses).
  if (o.status.resource_claim_statuses != n.status.resource_claim_statuses) {
    a |= kUpdatePodGeneratedResourceClaim;
  }
  if (a == 0 && (o.metadata.annotations != n.metadata.annotations ||
                 o.spec.node_selector != n.spec.node_selector)) {
    a = kUpdateOther;
  }
  return a;
}
}  // namespace

uint32_t PodUpdateActions(const api::Pod& o, const api::Pod& n) {
  return UpdateActions(o, n, api::PodRequests(o), api::PodRequests(n));
}

uint32_t PodUpdateActions(const PodInfo& o, const PodInfo& n) {
  return UpdateActions(*o.pod, *n.pod, o.requests, n.requests);
}

}  // namespace phalanx::framework
