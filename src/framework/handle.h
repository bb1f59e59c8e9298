// What plugins can reach of the scheduler (upstream framework.Handle).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "cluster/client.h"
#include "framework/cycle_state.h"
#include "framework/status.h"
#include "framework/types.h"

namespace phalanx::framework {

class Parallelizer;
class PodAffinityIndex;

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
  // The listed pods grouped by inter-pod affinity class with per-topology-domain counts
  // (framework/pod_affinity_index.h), built on the first call and kept in step with the
  // list from then on; nullptr when this lister keeps none (callers then walk the pods).
  // Scheduling thread only.
  virtual PodAffinityIndex* AffinityIndex() const { return nullptr; }
};

// Clock and ClusterClient are the seam interfaces of src/cluster/client.h, named here as
// framework types for plugins and the scheduler.
using Clock = cluster::Clock;
using ClusterClient = cluster::ClusterClient;

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
// (gang::PodGroupManager, quota::SharedQueueManager). The framework names none of them; upstream's
// Handle likewise hands plugins interfaces (SharedDRAManager, PodGroupManager, ...), not the
// scheduler's own classes. Filled before the profiles are built and read-only afterwards, so
// plugins look their services up once, in their factory or constructor.
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
  // The scheduler's pool of `parallelism` threads (upstream Handle.Parallelizer()), for
  // plugins that split work over nodes (framework::ParallelChunks); nullptr: run inline.
  virtual Parallelizer* GetParallelizer() { return nullptr; }
  // The domain services of this scheduler (see ServiceRegistry); empty by default.
  virtual const ServiceRegistry& Services() const {
    static const ServiceRegistry kNone;
    return kNone;
  }
  // The provider of interface T (e.g. gang::PodGroupManager), or nullptr when the scheduler runs
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
      const std::function<void(const std::string&, const std::map<std::string, std::string>&)>& fn)
      const {}
  // Every PodDisruptionBudget of the scheduler's PDB informer, in namespace/name order
  // (upstream's pdbLister.List, read by DefaultPreemption); empty when none is wired.
  virtual std::vector<api::PodDisruptionBudgetPtr> PodDisruptionBudgets() const { return {}; }
  // The KEP-5598 pod signature of this profile (Framework::SameSignature: every
  // PreFilter/Filter/PreScore/Score plugin is a BatchablePlugin that finds the two pods the
  // same). False by default: a handle that does not know is never batched on.
  virtual bool SameSignature(const PodInfo& canonical, const PodInfo& pod) const { return false; }
  // A counter that moves with every event of a cluster object other than pods and nodes
  // that a plugin may read (PriorityClasses, PodDisruptionBudgets, namespaces, storage and
  // DRA objects, PodGroups and queues; the scheduler's object epoch, also bumped by
  // scheduling-relevant updates of pending pods), for callers that cache results across
  // cycles. nullopt: not tracked (such callers must not cache).
  virtual std::optional<uint64_t> ClusterObjectEpoch() const { return std::nullopt; }
};

}  // namespace phalanx::framework
