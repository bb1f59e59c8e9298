#include "plugins/nodeports/node_ports.h"

namespace phalanx::plugins::nodeports {

namespace {

constexpr std::string_view kBindAllHostIP = "0.0.0.0";

void AppendPorts(const api::Container& c, std::vector<framework::HostPort>* out) {
  for (const auto& p : c.ports) {
    if (p.host_port <= 0) continue;
    out->push_back(framework::HostPort{p.host_ip.empty() ? std::string(kBindAllHostIP) : p.host_ip,
                                       p.protocol.empty() ? "TCP" : p.protocol, p.host_port});
  }
}

// Sanitized views (HostPortInfo.sanitize): empty IP is the wildcard, empty protocol TCP.
std::string_view IP(const framework::HostPort& p) {
  return p.ip.empty() ? kBindAllHostIP : std::string_view(p.ip);
}
std::string_view Protocol(const framework::HostPort& p) {
  return p.protocol.empty() ? std::string_view("TCP") : std::string_view(p.protocol);
}

}  // namespace

std::vector<framework::HostPort> GetHostPorts(const api::Pod& pod) {
  std::vector<framework::HostPort> out;
  for (const auto& c : pod.spec.init_containers) {
    if (c.restart_policy == "Always") AppendPorts(c, &out);
  }
  for (const auto& c : pod.spec.containers) AppendPorts(c, &out);
  return out;
}

bool CheckConflict(const framework::HostPort& want, const std::vector<framework::HostPort>& used) {
  if (want.port <= 0) return false;
  const std::string_view want_ip = IP(want);
  const std::string_view want_proto = Protocol(want);
  const bool wildcard = want_ip == kBindAllHostIP;
  for (const auto& u : used) {
    if (u.port != want.port || Protocol(u) != want_proto) continue;
    // 0.0.0.0 conflicts with every IP on the same protocol/port, and vice versa.
    if (wildcard) return true;
    const std::string_view used_ip = IP(u);
    if (used_ip == kBindAllHostIP || used_ip == want_ip) return true;
  }
  return false;
}

bool FitsPorts(const std::vector<framework::HostPort>& want,
               const std::vector<framework::HostPort>& used) {
  for (const auto& p : want) {
    if (CheckConflict(p, used)) return false;
  }
  return true;
}

framework::Status NodePorts::PreFilter(framework::CycleState& /*state*/,
                                       const framework::PodInfo& pod,
                                       framework::PreFilterResult* /*result*/) {
  // The wanted ports are precomputed in PodInfo, so no CycleState entry is needed.
  if (pod.host_ports.empty()) return framework::Status(framework::Code::kSkip);
  return framework::Status();
}

framework::Status NodePorts::Filter(const framework::CycleState& /*state*/,
                                    const framework::PodInfo& pod,
                                    const framework::NodeInfo& node) {
  if (FitsPorts(pod.host_ports, node.used_ports())) return framework::Status();
  return framework::Status::Unschedulable(std::string(kErrReason));
}

std::vector<framework::ClusterEventWithHint> NodePorts::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events(2);
  events[0].event = {framework::EventResource::kPod, framework::kDelete, "PodDelete"};
  // isSchedulableAfterPodDeleted.
  events[0].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    const api::Pod* deleted = objs.old_pod;
    if (deleted == nullptr) return framework::QueueingHint::kQueue;
    if (deleted->spec.node_name.empty() && deleted->status.nominated_node_name.empty()) {
      return framework::QueueingHint::kQueueSkip;
    }
    const auto freed = GetHostPorts(*deleted);
    if (freed.empty()) return framework::QueueingHint::kQueueSkip;
    // No common port: deleting that pod cannot make `pod` schedulable.
    return FitsPorts(GetHostPorts(pod), freed) ? framework::QueueingHint::kQueueSkip
                                               : framework::QueueingHint::kQueue;
  };
  // No hint: a new node always gets the pod retried (upstream: same as Queue).
  events[1].event = {framework::EventResource::kNode, framework::kAdd, "NodeAdd"};
  return events;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> NodePorts::New(
    framework::PluginArgs /*args*/, framework::Handle& /*h*/) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<NodePorts>());
}

bool NodePorts::SameSignature(const framework::PodInfo& canonical,
                              const framework::PodInfo& pod) const {
  return canonical.host_ports == pod.host_ports;
}

}  // namespace phalanx::plugins::nodeports
