// Structured allocation of DRA devices (upstream k8s.io/dynamic-resource-allocation/
// structured, the "incubating" allocator Kubernetes 1.36 runs with its default features,
// structured/internal/incubating/allocator_incubating.go and pools_incubating.go): given the claims
// that still need an allocation, the device classes, the ResourceSlices and the devices already
// allocated, find devices for every request of every claim on a node, or report that there
// are none.
//
// Semantics carried over:
//   - pools as upstream's pools_incubating.go GatherPools / buildPool sees them for a node:
//     a slice is relevant when it has sharedCounters, when spec.nodeName is the node,
//     spec.nodeSelector matches it or spec.allNodes is set, or (spec.perDeviceNodeSelection)
//     when one of its devices' own nodeName / nodeSelector / allNodes reaches the node; per
//     pool the newest relevant generation counts; a pool with fewer slices of it than
//     resourceSliceCount is incomplete (left out when a newer generation exists elsewhere)
//     and one with duplicate device names, a counter set defined twice or a consumesCounters
//     naming an unknown counter set / counter is invalid: neither gives devices, and a
//     request with allocationMode All fails with upstream's error ("claim C, request R: asks
//     for all devices, but resource pool D/P is currently being updated" / "... invalid");
//     pools are searched by driver and pool name, slices by name, devices in slice order;
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
//     a device may be in use and does not count as used, KEP-5018) or the device has
//     allowMultipleAllocations (KEP-5075, consumable_capacity.go): then each allocation is a
//     share consuming, of each capacity, the request's capacity.requests amount rounded up by
//     the capacity's requestPolicy (else its default, else the whole capacity), and the
//     shares allocated and being allocated must fit every capacity; a request's capacity
//     requests also filter dedicated devices (capacity >= amount); a shared device's
//     counters are consumed by its first share;
//   - matchAttribute constraints: every device allocated for the constraint's requests (all
//     requests of the claim when it lists none) has the attribute, with one value;
//     distinctAttribute constraints: each such device has it, with a value no other has;
//   - partitionable devices (KEP-4815): a device's consumesCounters must fit the counters
//     left in its pool's counter sets (from any slice of the pool) after the devices already
//     allocated from any slice of the pool's generation;
//   - the search backtracks over device choices (allocator.go allocateOne is a depth-first
//     search too); devices of one request are chosen in slice order without permutations.
//     A budget of kMaxSearchSteps device trials bounds pathological inputs (upstream has
//     none; a search that exceeds it counts as "cannot allocate").
// The allocation's node selector (AllocationResult.nodeSelector, allocator_incubating.go
// createNodeSelector) is the node's name (matchFields metadata.name) when a device is
// node-local (its slice's nodeName, or its own with per-device node selection) or has
// bindsToNode (KEP-5007; each result also carries its device's bindingConditions and
// bindingFailureConditions), else the requirements of every device's node selector (slice's
// or own) in one term, else none.
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

// Shared counters: counter set name -> counter -> amount.
using CounterSets = std::map<std::string, std::map<std::string, api::Quantity>>;

// One generation of one resource pool: every slice of the driver's pool with that
// spec.pool.generation, and what upstream's buildPool (pools_incubating.go) checks across
// them. A pool's counter sets may be published in any of its slices (1.36: slices of their
// own, holding sharedCounters only).
struct PoolGeneration {
  std::string driver, pool;
  int64_t generation = 0;
  std::vector<ResourceSlicePtr> slices;  // by name (upstream's sortSlicesByName)
  CounterSets counter_sets;              // from the slices with sharedCounters
  // Why the generation is invalid, "" when it is not: upstream's getAndValidateCounterSets
  // ("duplicate counter set name S") and validateDeviceCounterConsumption ("counter set S not
  // found", "counter C not found in counter set S"), over every slice of the generation.
  std::string invalid;
  // Some device name appears in two device slices: upstream's validateDeviceNames runs over
  // the slices that target the node only, so this is decided per node.
  bool duplicate_names = false;
  std::vector<std::pair<const ResourceSlice*, const Device*>> consuming;  // consumesCounters
};

// The slices an attempt considers, indexed: node-local slices by node name, the others
// (node selector, all nodes, per-device node selection) apart, and each pool's generations.
// Which generation of a pool a node sees, and whether it is complete, is decided per node as
// upstream's GatherPools does (allocator.cc NodePools). Immutable once built;
// dra::DefaultDRAManager rebuilds it when a slice changes.
struct SliceIndex {
  std::map<std::string, std::vector<ResourceSlicePtr>> node_local;
  std::vector<ResourceSlicePtr> not_node_local;
  // (driver, pool) -> generation -> the generation's slices.
  std::map<std::pair<std::string, std::string>, std::map<int64_t, PoolGeneration>> pools;
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
  // Shares of devices with allowMultipleAllocations (allocation results with a shareID,
  // KEP-5075): such a device is never in use whole; its shares consume its capacity. Per
  // device: the shares held and the capacity they consume together (upstream's
  // AllocatedState.AggregatedCapacity). Copy-on-write as a whole.
  struct Shared {
    int shares = 0;
    std::map<std::string, api::Quantity> consumed;
  };
  std::shared_ptr<const std::map<DeviceId, Shared>> shared;
  const Shared* SharedUse(const DeviceId& id) const;  // nullptr: no share allocated
  // Adds (delta > 0) or removes a share consuming `consumed`; the last one removes the device.
  void AddShare(const DeviceId& id, const std::map<std::string, api::Quantity>& consumed,
                int delta);
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
  // Devices with shares held for this attempt (results with a shareID): the capacity the
  // shares consume together, per device (a device with shares is present, even with no
  // capacities); added to the shares `in_use_index` has of the same device.
  std::map<DeviceId, std::map<std::string, api::Quantity>> shared;
  // Counts `allocation` as allocated (devices tentatively taken, e.g. by a gang's earlier
  // member): its whole devices into `in_use`, its shares (results with a shareID) into
  // `shared` with their consumedCapacity; results for admin access hold nothing.
  void Hold(const AllocationResult& allocation);
  // Devices to try first, per driver, in order (names in the driver's pools); the others
  // follow in upstream's order. Upstream takes the first devices that fit; a preference lets
  // another plugin's choice of the same devices stand (framework/device_choice.h). It
  // changes which devices are taken, never whether the claims fit.
  std::map<std::string, std::vector<std::string>> preferred;
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
  // When !ok and a pool the node(s) see is invalid (duplicate device names, a consumesCounters
  // naming an unknown counter set or counter, a counter set defined twice): upstream's
  // "invalid resource pools were encountered" (allocator_incubating.go; unschedulable on the
  // node, not an error: other nodes may still fit). "" otherwise.
  std::string reason;
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
  // What the allocated shares of a device consume; nullptr when it has none.
  const std::map<std::string, api::Quantity>* SharedConsumed(const DeviceId& id) const {
    if (auto it = in_.shared.find(id); it != in_.shared.end()) return &it->second;
    if (!in_.in_use_index) return nullptr;
    const InUseIndex::Shared* s = in_.in_use_index->SharedUse(id);
    return s ? &s->consumed : nullptr;
  }

  AllocatorInput in_;
  std::shared_ptr<const SliceIndex> index_;
};

// The shareID of a share of device `id` allocated for `request` ("req" or "req/sub") of the
// claim with UID `claim_uid`: upstream generates a random UUID (internal.GenerateShareID);
// the simulator needs the same one on every run, so it is derived from these (a UUID of
// version 8, from two FNV-1a hashes). A request takes a device at most once, so the share of
// one claim, request and device is unique.
std::string ShareId(const std::string& claim_uid, const std::string& request, const DeviceId& id);

// The device identity's fully qualified attribute lookup used by matchAttribute: `name`
// is "domain/id"; a device attribute "id" belongs to the driver's domain. nullptr: absent.
const cel::AttributeValue* LookupAttribute(const Device& d, const std::string& qualified_name);

}  // namespace phalanx::dra
