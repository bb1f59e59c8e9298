// A stand-in for cluster-autoscaler in `phalanx simulate`: node groups (Scenario::node_groups,
// declared as kwok-provider template Nodes) grown for ProvisioningRequests
// (autoscaling.x-k8s.io/v1) and shrunk when their nodes stay empty. It answers requests as
// cluster-autoscaler's provisioningrequest orchestrators do (cluster-autoscaler/
// provisioningrequest/{besteffortatomic,checkcapacity}, conditions/conditions.go):
//  - Accepted=True (Accepted) when it first sees a request of a class it serves; requests of
//    other classes are left alone;
//  - every scan (scanIntervalSeconds, 10 s) it tries the unprovisioned requests: the pods of
//    the request's podSets (decoded from their PodTemplates) are packed first-fit onto the
//    free capacity of the cluster's nodes (allocatable minus the requests of bound pods;
//    nodeSelector, required node affinity and NoSchedule/NoExecute taints checked), the rest
//    onto new nodes of one node group (the group that needs the fewest, then declaration
//    order), within its max-count;
//  - check-capacity.autoscaling.x-k8s.io: Provisioned=True (CapacityIsFound) when all fit on
//    the free capacity, else Provisioned=False (CapacityIsNotFound);
//  - best-effort-atomic-scale-up.autoscaling.x-k8s.io: Provisioned=True (CapacityIsFound)
//    when no node is needed; Provisioned=True (CapacityIsProvisioned) when the group can add
//    them all, whose nodes join provisioning-delay-seconds later; otherwise
//    Provisioned=False (CapacityIsNotFound) and another try at the next scan. A scale-up
//    fails with the group's provisioning-failure-rate: then half the nodes (rounded down)
//    join and the others never do, and after maxNodeProvisionTime (15 min) the scale-up is
//    rolled back as for a group that scales to zero or max (the nodes that joined are
//    removed) and the request is Provisioned=False (CapacityIsNotFound) with a message
//    naming the failure; the group backs off (5 min, doubling to 30 min);
//  - Failed=True (Expired) for a request not provisioned 7 days after its creation;
//    BookingExpired=True (CapacityReservationTimeExpired) 10 min after its nodes joined;
//  - a node of a group that holds no pod for 10 min (scale-down-unneeded-time) is removed,
//    never below min-count, never while a Provisioned request is booked on it.
// Writes happen in Step (the simulator's loop), not inside the store's event handlers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "api/types.h"
#include "api/unstructured.h"
#include "cluster/client.h"
#include "sim/scale_up_report.h"
#include "sim/scenario.h"
#include "store/store.h"

namespace phalanx::sim {

// cluster-autoscaler's defaults (its flags and provisioningrequest package constants).
struct AutoscalerOptions {
  int64_t scan_interval_ns = 10 * api::kNanosPerSecond;
  int64_t max_node_provision_ns = 15 * 60 * api::kNanosPerSecond;
  int64_t initial_backoff_ns = 5 * 60 * api::kNanosPerSecond;
  int64_t max_backoff_ns = 30 * 60 * api::kNanosPerSecond;
  int64_t booking_ns = 10 * 60 * api::kNanosPerSecond;
  int64_t expiration_ns = 7 * 24 * 3600 * api::kNanosPerSecond;
  int64_t scale_down_unneeded_ns = 10 * 60 * api::kNanosPerSecond;
};

class Autoscaler {
 public:
  // `clock` is the store's (handler times); `seed` draws the injected failures.
  Autoscaler(store::Store& store, const cluster::Clock& clock, std::vector<NodeGroup> groups,
             uint64_t seed, AutoscalerOptions opts = {});
  // Called after a node of a group was created / deleted in the store (the simulator counts
  // capacity with them).
  std::function<void(const api::Node&)> on_node_added;
  std::function<void(const std::string&)> on_node_removed;
  // Registers the store handlers; the groups' desired nodes must already exist (or be created
  // later: nodes named "<group>-<n>" count as the group's when they are created).
  void Attach();
  // The earliest time Step has something to do; INT64_MAX when nothing.
  api::Timestamp NextTime() const;
  // Does what is due at `now` (the store's clock).
  void Step(api::Timestamp now);
  // Closes the idle integrals at `now`.
  const AutoscalerSummary& Finish(api::Timestamp now);

 private:
  struct Request {
    std::string key;  // namespace/name
    size_t record = 0;
    api::Timestamp created = 0;
    api::Timestamp next_try = 0;  // INT64_MAX: nothing to do until an event
    bool ended = false;
    bool provisioned = false;
    api::Timestamp booked_until = INT64_MAX;  // BookingExpired due (once its nodes joined)
    std::vector<std::string> nodes;           // of its scale-up
  };
  // Nodes of a scale-up joining at t, or (rollback) the end of a failed scale-up at t: its
  // joined nodes that hold no pod are removed and the request is answered.
  struct Arrival {
    api::Timestamp t = 0;
    std::string request;
    std::string group;
    std::vector<std::string> nodes;
    bool rollback = false;
    int32_t missing = 0;  // rollback: nodes that never joined
    int32_t wanted = 0;   // rollback: nodes the scale-up asked for
  };
  struct ManagedNode {
    std::string group;
    int32_t pods = 0;
    api::Timestamp empty_since = 0;  // when pods dropped to 0
  };

  void OnRequest(const api::Unstructured& obj, bool deleted);
  void OnPod(const api::Pod* old_pod, const api::Pod* pod);
  void OnNode(const api::Node& node, bool deleted);
  void Try(Request& r, api::Timestamp now);
  void Expire(Request& r, api::Timestamp now);
  void SetCondition(const std::string& key, const std::string& type, const std::string& status,
                    const std::string& reason, const std::string& message, api::Timestamp now);
  void Join(const Arrival& a, api::Timestamp now);
  void Rollback(const Arrival& a, api::Timestamp now);
  void ScaleDown(api::Timestamp now);
  void RemoveNode(const std::string& name, api::Timestamp now);
  int32_t GroupSize(const std::string& group) const;
  // The pods of the request's podSets; "" or why not (a missing template, a bad one).
  std::string RequestPods(const api::Unstructured& req, std::vector<api::Pod>* pods) const;

  store::Store& store_;
  const cluster::Clock& clock_;
  std::vector<NodeGroup> groups_;
  AutoscalerOptions opts_;
  std::mt19937_64 rng_;
  std::map<std::string, Request> requests_;  // by key
  std::vector<std::string> pending_;         // keys seen in handlers, handled in Step
  std::vector<Arrival> arrivals_;
  std::map<std::string, ManagedNode> nodes_;   // nodes of the groups, by name
  std::map<std::string, int32_t> next_index_;  // group -> next node number
  std::map<std::string, api::Timestamp> backoff_until_;
  std::map<std::string, int64_t> backoff_ns_;
  std::map<std::string, std::string> bound_;  // pod key -> its node (bound pods)
  std::map<std::string, size_t> record_of_;   // request key -> summary_.requests index
  AutoscalerSummary summary_;
};

}  // namespace phalanx::sim
