// Structured allocation of DRA devices (upstream k8s.io/dynamic-resource-allocation/
// structured/allocator.go, the "stable" allocator of Kubernetes 1.34): given the claims that
// still need an allocation, the device classes, the ResourceSlices and the devices already
// allocated, find devices for every request of every claim on a node, or report that there
// are none.
//
// Semantics carried over:
//   - a ResourceSlice offers its devices to a node when spec.nodeName is the node,
//     spec.nodeSelector matches it, or spec.allNodes is set; only the slices of a pool's
//     newest generation count (allocator.go GatherPools: "pool.generation");
//   - a device fits a request when every selector of the request's DeviceClass and of the
//     request matches (CEL, cel/cel.h); a selector that fails at runtime (e.g. "no such
//     key") is an error that aborts the attempt, as upstream's isSelectable ("claim %s:
//     selector #%d: CEL runtime error: ..." / "class %s: ...");
//   - allocationMode ExactCount takes `count` devices, All takes every matching device on the
//     node (at least one, all of them free); firstAvailable subrequests are tried in order,
//     the first that lets the whole allocation succeed wins (result request "req/sub");
//   - a device with a NoSchedule or NoExecute taint (its slice's devices[].taints[] and the
//     DeviceTaintRules dra::DefaultDRAManager::Slices adds) is allocated only for a request whose
//     tolerations tolerate every such taint (allocator.go allTaintsTolerated, KEP-5055);
//   - a device is used by at most one claim, unless the request asks for adminAccess (such
//     a device may be in use and does not count as used, KEP-5018);
//   - matchAttribute constraints: every device allocated for the constraint's requests (all
//     requests of the claim when it lists none) has the attribute, with one value;
//   - partitionable devices (KEP-4815): a device's consumesCounters must fit the counters
//     left in its pool's sharedCounters after the devices already allocated;
//   - the search backtracks over device choices (allocator.go allocateOne is a depth-first
//     search too); devices of one request are chosen in slice order without permutations.
//     A budget of kMaxSearchSteps device trials bounds pathological inputs (upstream has
//     none; a search that exceeds it counts as "cannot allocate").
// The allocation's node selector (AllocationResult.nodeSelector) is the node's name
// (matchFields metadata.name) when a device comes from a node-local slice or has
// bindsToNode (KEP-5007; each result also carries its device's bindingConditions and
// bindingFailureConditions), the slice's
// selector when one comes from a nodeSelector slice, and none for allNodes devices only.
//
// Thread safety: an Allocator is immutable; Allocate is const and runs concurrently for
// many nodes (Filter is parallel over nodes).
//
// Speed (bench/dra/run.sh; docs/performance.md): what does not change from one pod to the
// next is computed once and shared by the cycles, not recomputed per pod and node — the
// slice index (SliceIndex: newest generations, slices by node), the devices in use
// (InUseIndex, kept incrementally by dra::DefaultDRAManager) and the selectors' results per device
// (SelectorMemo). They are caches only: an Allocator given none of them (as the tests do)
// computes the same outcome from `slices` and `in_use` (allocator_test.cc
// FastPathMatchesRecomputationOnRandomStates).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "api/types.h"
#include "dra/model.h"

namespace phalanx::dra {

inline constexpr int64_t kMaxSearchSteps = 200000;

// A device by identity: driver, pool, device name.
struct DeviceId {
  std::string driver, pool, device;
  bool operator<(const DeviceId& o) const {
    return std::tie(driver, pool, device) < std::tie(o.driver, o.pool, o.device);
  }
  bool operator==(const DeviceId& o) const = default;
};

// The slices an attempt considers, indexed: only each pool's newest generation
// (allocator.go GatherPools), node-local slices by node name, the others (node selector,
// all nodes) apart, and the devices that consume shared counters. Immutable once built;
// dra::DefaultDRAManager rebuilds it when a slice changes.
struct SliceIndex {
  std::vector<ResourceSlicePtr> current;
  std::map<std::string, std::vector<ResourceSlicePtr>> node_local;
  std::vector<ResourceSlicePtr> not_node_local;
  std::vector<std::pair<const ResourceSlice*, const Device*>> consuming;  // consumesCounters
  static std::shared_ptr<const SliceIndex> Build(const std::vector<ResourceSlicePtr>& slices);
};

// Devices in use (allocated, not for admin access), by driver and pool, each with the
// number of claims that hold it. Copy-on-write per pool: a copy shares the pools' maps, so
// a snapshot per cycle costs one pointer per pool (dra::DefaultDRAManager::InUse).
struct InUseIndex {
  using Pool = std::map<std::string, int>;  // device name -> claims holding it (> 0)
  std::map<std::string, std::map<std::string, std::shared_ptr<const Pool>>> pools;  // driver, pool
  bool Contains(const DeviceId& id) const;
  // Adds `delta` claims holding `id` (a count that reaches 0 removes the device).
  void Add(const DeviceId& id, int delta);
  std::set<DeviceId> ToSet() const;
};

// Results of selectors per device, kept across cycles: a selector's result depends only on
// its expression and the device (cel.h: evaluation is deterministic), and a ResourceSlice
// object is immutable (a changed slice is a new object). Entries hold their slice, so a
// slice's address is never reused while an entry names it; Prune drops the entries of
// slices nobody else holds. Thread-safe (Filter runs in parallel over nodes).
class SelectorMemo {
 public:
  // Distinct expressions kept; inserting one more starts the memo afresh.
  static constexpr size_t kMaxMemoExpressions = 1024;
  // `sel` on device `device` (an index into slice->devices): true / false, or the CEL
  // runtime error's message as an InvalidArgumentError.
  absl::StatusOr<bool> Matches(const ResourceSlicePtr& slice, size_t device,
                               const cel::Selector& sel);
  void Prune();
  size_t size() const;

 private:
  struct Entry {
    ResourceSlicePtr slice;
    std::vector<int8_t> result;  // per device: 0 not evaluated, 1 false, 2 true, 3 error
    std::map<size_t, std::string> errors;
  };
  mutable absl::Mutex mu_;
  // expression -> slice -> results
  absl::flat_hash_map<std::string, absl::flat_hash_map<const ResourceSlice*, Entry>> memo_
      ABSL_GUARDED_BY(mu_);
};

// The inputs of one allocation attempt; the pointers must outlive the Allocator.
struct AllocatorInput {
  std::vector<ResourceClaimPtr> claims;                         // claims to allocate, in order
  const std::map<std::string, DeviceClass>* classes = nullptr;  // by name
  std::vector<ResourceSlicePtr> slices;  // every slice (unused with slice_index)
  std::set<DeviceId> in_use;             // devices allocated (non-admin)
  // Caches (see the file comment); each may be null. A device is in use when it is in
  // `in_use` or in `in_use_index`.
  std::shared_ptr<const SliceIndex> slice_index;  // built from `slices` when null
  std::shared_ptr<const InUseIndex> in_use_index;
  std::shared_ptr<SelectorMemo> memo;
};

// The outcome of one attempt.
struct AllocationOutcome {
  bool ok = false;                        // every claim got an allocation
  std::vector<AllocationResult> results;  // one per claim, when ok
  // When !ok: the first claim (ns/name) that cannot be allocated even alone on the node(s),
  // or "" when each fits alone but not all together.
  std::string failed_claim;
  int64_t steps = 0;  // device trials made (statistics, tests)
};

class Allocator {
 public:
  // NotFound "request R: device class C does not exist" when a class is missing (the
  // plugin checks classes in PreFilter first, with upstream's wording).
  static api::StatusOr<Allocator> New(AllocatorInput in);

  // Every claim on `node`. Error: a selector failed at runtime.
  api::StatusOr<AllocationOutcome> Allocate(const api::Node& node) const;
  // Claim i on *nodes[i] (a gang's claims on its members' nodes), all jointly; `nodes` has
  // one entry per claim. Error as Allocate.
  api::StatusOr<AllocationOutcome> AllocateOn(const std::vector<const api::Node*>& nodes) const;

  const std::vector<ResourceClaimPtr>& claims() const { return in_.claims; }

 private:
  bool InUse(const DeviceId& id) const {
    return in_.in_use.count(id) || (in_.in_use_index && in_.in_use_index->Contains(id));
  }

  AllocatorInput in_;
  std::shared_ptr<const SliceIndex> index_;
  // Shared counters left after the devices in use consume theirs: "driver/pool/set" ->
  // counter -> amount (computed once in New).
  std::map<std::string, std::map<std::string, api::Quantity>> counters_left_;
};

// The device identity's fully qualified attribute lookup used by matchAttribute: `name`
// is "domain/id"; a device attribute "id" belongs to the driver's domain. nullptr: absent.
const cel::AttributeValue* LookupAttribute(const Device& d, const std::string& qualified_name);

}  // namespace phalanx::dra
