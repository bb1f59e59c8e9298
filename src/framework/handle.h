// What plugins can reach of the scheduler (upstream framework.Handle).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "framework/cycle_state.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::framework {

// Read access to the cycle's Snapshot (upstream SharedLister / NodeInfoLister).
class NodeInfoLister {
 public:
  virtual ~NodeInfoLister() = default;
  virtual const std::vector<const NodeInfo*>& List() const = 0;
  virtual const std::vector<const NodeInfo*>& HavePodsWithAffinityList() const = 0;
  virtual const std::vector<const NodeInfo*>& HavePodsWithRequiredAntiAffinityList() const = 0;
  // nullptr if no such node.
  virtual const NodeInfo* Get(std::string_view node_name) const = 0;
  // How many of the listed nodes report `image` (a normalized name, "repo:tag") in
  // status.images; -1 when this lister does not keep the count (callers then look at
  // each node). The Snapshot keeps it (upstream: ImageStateSummary.NumNodes).
  virtual int32_t NumNodesWithImage(const std::string& /*image*/) const { return -1; }
};

// Time source, injected so that simulate and tests are deterministic.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual api::Timestamp Now() const = 0;
};

// Writes that plugins (binder, preemption) make to the cluster: the embedded store in
// simulate, the API server in live mode.
class ClusterClient {
 public:
  virtual ~ClusterClient() = default;
  // POST pods/binding. Errors: pod gone (NotFound), already bound (Conflict), transport.
  virtual Status Bind(const api::Pod& pod, const std::string& node) = 0;
  // DELETE a pod (preemption victim).
  virtual Status DeletePod(const api::Pod& pod) = 0;
  // PATCH status.nominatedNodeName (empty clears it) and/or the PodScheduled condition.
  virtual Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                                 const std::string* nominated_node_name) = 0;
  // Records an Event (reason Scheduled / FailedScheduling / Preempted ...).
  virtual void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                           std::string_view message) = 0;
  // Records an Event on another object (e.g. a gang's PodGroup). `api_version`/`kind`
  // name the object's type. Sources that cannot record such events may ignore it.
  virtual void RecordObjectEvent(std::string_view api_version, std::string_view kind,
                                 std::string_view ns, std::string_view name, std::string_view type,
                                 std::string_view reason, std::string_view message) {}
  // Writes the status of a gang's PodGroup object (see PodGroupStatus below for the
  // dialects and fields). Asynchronous and coalesced by implementations that talk to a
  // server; never blocks the caller on the network. Sources that cannot write it may
  // ignore it.
  struct PodGroupStatus;
  virtual void UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                                    std::string_view ns, std::string_view name,
                                    const PodGroupStatus& status) {}
};

// The scheduler's view of a gang, written to its PodGroup's status. Field names follow
// the dialect's own API:
//   scheduling.x-k8s.io/v1alpha1 (scheduler-plugins apis/scheduling/v1alpha1/types.go):
//     status.phase (Pending | Scheduling | Scheduled | Running | Failed ...),
//     status.scheduled (the pre-v0.23 field, kept for tools that read it),
//     status.scheduleStartTime (RFC 3339), status.occupiedBy ("ns/owner,...").
//   scheduling.volcano.sh/v1beta1 (volcano pkg/apis/scheduling/v1beta1/types.go):
//     status.phase (Pending | Inqueue | Running | Unknown | Completed),
//     status.conditions[] {type Scheduled | Unschedulable, status, reason, message,
//     lastTransitionTime}.
struct ClusterClient::PodGroupStatus {
  std::string phase;
  int32_t scheduled = 0;                // members bound
  api::Timestamp schedule_start_time = 0;  // 0 = unknown (not written)
  std::string occupied_by;              // "" = not written
  // The latest scheduling outcome (Volcano conditions): type "Scheduled" or
  // "Unschedulable" ("" = none), reason (CamelCase) and message.
  std::string condition_type;
  std::string condition_reason;
  std::string condition_message;
  bool operator==(const PodGroupStatus& o) const {
    return phase == o.phase && scheduled == o.scheduled &&
           schedule_start_time == o.schedule_start_time && occupied_by == o.occupied_by &&
           condition_type == o.condition_type && condition_reason == o.condition_reason &&
           condition_message == o.condition_message;
  }
};

// A pod waiting in Permit (upstream WaitingPod).
class WaitingPod {
 public:
  virtual ~WaitingPod() = default;
  virtual const api::Pod& GetPod() const = 0;
  virtual std::vector<std::string> GetPendingPlugins() const = 0;
  // Marks `plugin` as allowing; the pod proceeds when every waiting plugin allowed.
  virtual void Allow(std::string_view plugin) = 0;
  virtual void Reject(std::string_view plugin, std::string_view msg) = 0;
};

// Domain services that the scheduler hands to plugins — gang state, queues and quotas, and
// whatever an out-of-tree scheduler adds — each under the narrow interface a plugin asks for
// (gang::GangLedger, quota::QueueLedger). The framework names none of them; upstream's
// Handle likewise hands plugins interfaces (SharedDRAManager, ...), not the scheduler's own
// classes. Filled before the profiles are built and read-only afterwards, so plugins look
// their services up once, in their factory or constructor.
class ServiceRegistry {
 public:
  // Registers `service` (not owned; must outlive every Framework built with this registry)
  // as the provider of interface T, replacing an earlier one.
  template <typename T>
  void Provide(T* service) {
    services_[std::type_index(typeid(T))] = service;
  }
  // The provider of interface T, or nullptr when none was given.
  template <typename T>
  T* Get() const {
    auto it = services_.find(std::type_index(typeid(T)));
    return it == services_.end() ? nullptr : static_cast<T*>(it->second);
  }

 private:
  std::unordered_map<std::type_index, void*> services_;
};

class Handle {
 public:
  virtual ~Handle() = default;
  virtual const NodeInfoLister& SnapshotSharedLister() const = 0;
  virtual const Clock& GetClock() const = 0;
  virtual ClusterClient& Client() = 0;
  // Calls fn for each waiting pod (under the waiting-pods lock; do not block).
  virtual void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) = 0;
  // nullptr if the pod (by UID) is not waiting.
  virtual WaitingPod* GetWaitingPod(std::string_view uid) = 0;
  virtual void RejectWaitingPod(std::string_view uid) = 0;
  // Runs PreFilter extensions + Filter of this profile, as preemption needs.
  virtual Status RunFilterPlugins(const CycleState& state, const PodInfo& pod,
                                  const NodeInfo& node) = 0;
  virtual Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod,
                                             const PodInfoPtr& to_add, const NodeInfo& node) = 0;
  virtual Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                                const PodInfoPtr& to_remove,
                                                const NodeInfo& node) = 0;
  // Pods nominated to `node` (upstream PodNominator.NominatedPodsForNode).
  virtual std::vector<PodInfoPtr> NominatedPodsForNode(const std::string& node) const = 0;
  // The same pods as a shared immutable list (nullptr when none), for callers on a hot
  // path; the default copies NominatedPodsForNode.
  virtual std::shared_ptr<const std::vector<PodInfoPtr>> NominatedPodsViewForNode(
      const NodeInfo& node) const {
    auto v = NominatedPodsForNode(node.name());
    if (v.empty()) return nullptr;
    return std::make_shared<const std::vector<PodInfoPtr>>(std::move(v));
  }
  // Priority of a PriorityClass by name; falls back to the global default or 0.
  virtual int32_t PriorityOf(const api::Pod& pod) const = 0;
  // Deterministic random number in [0, n) from the scheduler's seeded RNG.
  virtual uint64_t Random(uint64_t n) = 0;
  // The domain services of this scheduler (see ServiceRegistry); empty by default.
  virtual const ServiceRegistry& Services() const {
    static const ServiceRegistry kNone;
    return kNone;
  }
  // The provider of interface T (e.g. gang::GangLedger), or nullptr when the scheduler runs
  // without one.
  template <typename T>
  T* Service() const {
    return Services().template Get<T>();
  }
  // Namespace labels from the scheduler's namespace informer (for namespaceSelector).
  // HasNamespaces() is false when no informer is wired; then NamespaceLabels is false and
  // ForEachNamespace calls nothing.
  virtual bool HasNamespaces() const { return false; }
  virtual bool NamespaceLabels(std::string_view name,
                               std::map<std::string, std::string>* out) const {
    return false;
  }
  virtual void ForEachNamespace(
      const std::function<void(const std::string&, const std::map<std::string, std::string>&)>&
          fn) const {}
};

}  // namespace phalanx::framework
