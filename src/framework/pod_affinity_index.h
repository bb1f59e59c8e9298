// PodAffinityIndex: the snapshot's pods grouped into classes of pods that every inter-pod
// (anti-)affinity term treats alike, with per-topology-domain member counts, so that
// InterPodAffinity's PreFilter and PreScore match each class once instead of each pod
// (the results are upstream's, pkg/scheduler/framework/plugins/interpodaffinity/
// {filtering,scoring}.go, where every existing pod is matched per cycle).
//
// A class is (namespace, labels, spec.affinity.podAffinity, spec.affinity.podAntiAffinity,
// whether metadata.deletionTimestamp is set):
// whether a term matches a pod reads only the pod's namespace and labels
// (AffinityTerm.Matches), and an existing pod's own terms (with matchLabelKeys merged from
// its labels) are the same for every member. Terminating pods form classes of their own
// because PodTopologySpread does not count them (kubernetes#87621). Node affinity and
// everything else of the pod do not enter.
//
// Counts: for each tracked topology key K (Track), each class keeps
// {value of K on the member's node -> members on nodes with that value}; members on nodes
// without K are not counted, as upstream skips such nodes. Keys are tracked on first use and
// stay tracked (a cluster uses few topology keys: hostname, zone, region). Per tracked key
// the index also counts nodes per value (NodeDomains), so that PodTopologySpread can list
// the domains, empty ones included, without walking the nodes.
//
// Maintenance: the Snapshot that owns the index keeps it in step with its NodeInfos
// (Cache::UpdateSnapshot for nodes whose generation moved, AddPodToView / RemovePodFromView),
// once Enable has built it; a snapshot that no plugin asked for an index never pays for it.
// Cost per changed node: its pods diffed by PodInfo identity, each new pod's class key
// computed once (one string of its namespace, labels and pod affinity).
//
// Thread safety: none. Built, tracked and updated on the scheduling thread only (the
// owner's Snapshot is updated there, and PreFilter / PreScore run there); Filter and Score
// workers read the plugins' cycle state, never the index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/types.h"

namespace phalanx::framework {

class PodAffinityIndex {
 public:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Topology value -> members on nodes with that value (entries are > 0).
  using DomainCounts = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

  struct Class {
    PodInfoPtr representative;  // any member: namespace, labels and pod affinity of all
    int64_t members = 0;
    // Parallel to keys(): counts(Track(K)). Copy on write: a cycle may keep a map
    // (Shared) past later updates of the index, which then change a copy.
    std::vector<std::shared_ptr<DomainCounts>> domains;
    const DomainCounts& counts(size_t slot) const { return *domains[slot]; }
    std::shared_ptr<const DomainCounts> Shared(size_t slot) const { return domains[slot]; }
    bool has_affinity = false;  // PodInfo::has_affinity of the members
    bool has_required_anti_affinity = false;
    size_t pos_all = 0, pos_affinity = 0, pos_anti = 0;  // positions in the lists below
  };

  PodAffinityIndex() = default;
  PodAffinityIndex(const PodAffinityIndex&) = delete;
  PodAffinityIndex& operator=(const PodAffinityIndex&) = delete;

  bool enabled() const { return enabled_; }
  // Builds the index from `nodes` (NodeInfos without a Node are skipped) and keeps it
  // enabled; no-op when already enabled.
  void Enable(const std::vector<const NodeInfo*>& nodes);
  // Drops everything and stops maintaining (a fresh resync rebuilds on the next Enable).
  void Disable();

  // The slot of topology key `key` in Class::domains, counting every member on `nodes`
  // (the snapshot's list) the first time the key is asked for.
  size_t Track(std::string_view key, const std::vector<const NodeInfo*>& nodes);
  const std::vector<std::string>& keys() const { return keys_; }
  // Topology value of key slot `slot` -> nodes (with a Node object) carrying that value;
  // nodes without the key are not counted. Valid until the next maintenance call.
  const DomainCounts& NodeDomains(size_t slot) const { return node_domains_[slot]; }

  // Every class / classes whose members have pod (anti-)affinity terms / required
  // anti-affinity terms; order unspecified.
  const std::vector<Class*>& Classes() const { return all_; }
  const std::vector<Class*>& ClassesWithAffinity() const { return with_affinity_; }
  const std::vector<Class*>& ClassesWithRequiredAntiAffinity() const { return with_anti_; }
  size_t NumPods() const { return pods_.size(); }

  // Maintenance (enabled only; no-ops otherwise). `node` is the node the pod is counted on.
  void AddPod(const PodInfoPtr& pod, const api::Node& node);
  // Removes a pod added before (by PodInfo identity); false when it is not indexed.
  bool RemovePod(const PodInfo& pod, const api::Node& node);
  // Removes the node and every pod of `ni` counted on ni.node() (before the NodeInfo is
  // dropped or its Node replaced); AddNodePods counts a node new to the index (or its new
  // Node object) and its pods. Each node is added once and removed once.
  void RemoveNodePods(const NodeInfo& ni);
  void AddNodePods(const NodeInfo& ni);
  // `ni` now holds `now` on the same Node object as before; `before` are the PodInfos it
  // held (any order). Removes the pods that left and adds the new ones.
  void SyncPods(std::vector<const PodInfo*> before, const NodeInfo& ni);

  // The class identity of `pod` (a byte string; equal iff same class).
  static std::string ClassKey(const api::Pod& pod);

 private:
  struct Indexed {
    PodInfoPtr pod;  // keeps the address unique while indexed
    Class* cls;
  };
  void Count(Class& c, const api::Node& node, int64_t delta);
  void CountNode(const api::Node& node, int64_t delta);
  static DomainCounts& Mutable(Class& c, size_t slot);
  void Unlist(Class* c);

  bool enabled_ = false;
  std::vector<std::string> keys_;
  std::vector<DomainCounts> node_domains_;  // parallel to keys_
  std::unordered_map<std::string, std::unique_ptr<Class>> classes_;
  std::unordered_map<const PodInfo*, Indexed> pods_;
  std::vector<Class*> all_, with_affinity_, with_anti_;
};

}  // namespace phalanx::framework
