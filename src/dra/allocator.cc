#include "dra/allocator.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "api/labels.h"

namespace phalanx::dra {

namespace {

std::string PoolKey(const std::string& driver, const std::string& pool) {
  return driver + "/" + pool;
}

// How a node name / node selector / all nodes triple reaches a node (upstream's NodeMatches):
// 0 by name, 1 by selector, 2 all nodes, -1 not at all.
int Reach(const std::string& node_name, const std::optional<api::NodeSelector>& selector,
          bool all_nodes, const api::Node& node) {
  if (!node_name.empty()) return node_name == node.metadata.name ? 0 : -1;
  if (all_nodes) return 2;
  if (selector) {
    return api::NodeSelectorMatches(*selector, node.metadata.labels, node.metadata.name) ? 1 : -1;
  }
  return -1;
}

// Whether a slice is relevant for a node (pools_incubating.go GatherPools): a slice with
// sharedCounters always is; one with slice-level node selection when it reaches the node; one
// with per-device node selection when one of its devices does.
bool Relevant(const ResourceSlice& s, const api::Node& node) {
  if (!s.shared_counters.empty()) return true;
  if (!s.per_device_node_selection)
    return Reach(s.node_name, s.node_selector, s.all_nodes, node) >= 0;
  for (const auto& d : s.devices) {
    if (Reach(d.node_name, d.node_selector, d.all_nodes, node) >= 0) return true;
  }
  return false;
}

bool SameValue(const cel::AttributeValue& a, const cel::AttributeValue& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case cel::AttributeValue::Kind::kInt:
      return a.int_value == b.int_value;
    case cel::AttributeValue::Kind::kBool:
      return a.bool_value == b.bool_value;
    default:
      return a.string_value == b.string_value;
  }
}

// One device reachable from a node of the attempt.
struct Cand {
  DeviceId id;
  const ResourceSlice* slice = nullptr;
  const Device* device = nullptr;
  int reach = 2;                                // as Reach: 0 name, 1 selector, 2 all nodes
  const api::NodeSelector* selector = nullptr;  // reach 1: the slice's or the device's
  const ResourceSlicePtr* owner = nullptr;      // the slice's pointer (SelectorMemo keys)
  // allowMultipleAllocations: the device is shared, never taken whole (KEP-5075).
  bool multi = false;
  // Multi: the capacity the allocated shares consume (nullptr: the device has none).
  const std::map<std::string, api::Quantity>* shared = nullptr;
};

// One way to satisfy a request, with its candidate devices (indices into Search::cands_).
struct Alt {
  const RequestSpec* spec = nullptr;
  std::vector<size_t> cands;
  // Per candidate of a device with allowMultipleAllocations: what one allocation of it for
  // this request consumes of each of its capacities (consumable_capacity.go
  // GetConsumedCapacityFromRequest); empty for other devices.
  std::vector<std::map<std::string, api::Quantity>> consumed;
};

struct Slot {
  size_t claim = 0;
  std::string request;  // the request's name
  std::vector<Alt> alts;
};

struct Taken {
  size_t cand = 0;
  std::string request;  // result name ("req" or "req/sub")
  bool admin = false;
  const std::map<std::string, api::Quantity>* consumed = nullptr;  // a share's (multi)
};

// The depth-first search of one attempt.
class Search {
 public:
  Search(const std::vector<ResourceClaimPtr>& claims, std::vector<Cand> cands,
         std::vector<Slot> slots,
         std::map<std::string, std::map<std::string, api::Quantity>> counters_left)
      : claims_(claims),
        cands_(std::move(cands)),
        slots_(std::move(slots)),
        counters_(std::move(counters_left)),
        taken_(slots_.size()),
        constraint_values_(claims.size()) {
    for (size_t c = 0; c < claims.size(); ++c) {
      constraint_values_[c].resize(claims[c]->spec.constraints.size());
    }
  }

  bool Run() { return Request(0); }
  int64_t steps() const { return steps_; }
  const std::vector<std::vector<Taken>>& taken() const { return taken_; }
  const std::vector<Cand>& cands() const { return cands_; }

 private:
  struct ConstraintState {
    std::optional<cel::AttributeValue> value;  // matchAttribute
    int devices = 0;
    std::vector<cel::AttributeValue> distinct;  // distinctAttribute: the values taken
  };

  bool Request(size_t slot) {
    if (slot == slots_.size()) return true;
    for (const Alt& alt : slots_[slot].alts) {
      if (aborted_) return false;
      if (alt.spec->all) {
        if (alt.cands.empty()) continue;
        size_t took = 0;
        bool ok = true;
        for (size_t i = 0; i < alt.cands.size(); ++i) {
          if (!CanTake(slot, alt, i)) {
            ok = false;
            break;
          }
          Take(slot, alt, i);
          ++took;
        }
        if (ok && Request(slot + 1)) return true;
        while (took--) Untake(slot);
        continue;
      }
      if (Pick(slot, alt, 0, 0)) return true;
    }
    return false;
  }

  bool Pick(size_t slot, const Alt& alt, int64_t picked, size_t start) {
    if (picked == alt.spec->count) return Request(slot + 1);
    for (size_t i = start; i < alt.cands.size(); ++i) {
      if (static_cast<int64_t>(alt.cands.size() - i) < alt.spec->count - picked) break;
      if (++steps_ > kMaxSearchSteps) {
        aborted_ = true;
        return false;
      }
      if (!CanTake(slot, alt, i)) continue;
      Take(slot, alt, i);
      if (Pick(slot, alt, picked + 1, i + 1)) return true;
      Untake(slot);
      if (aborted_) return false;
    }
    return false;
  }

  bool Applies(const DeviceConstraint& con, const std::string& request,
               const std::string& result_name) const {
    if (con.requests.empty()) return true;
    for (const auto& r : con.requests) {
      if (r == request || r == result_name) return true;
    }
    return false;
  }

  static const std::string& Attribute(const DeviceConstraint& con) {
    return con.match_attribute.empty() ? con.distinct_attribute : con.match_attribute;
  }

  // Whether a share of `cand` consuming `consumed` fits the device's capacities besides the
  // allocated shares and those of this attempt (consumable_capacity.go CmpRequestOverCapacity).
  bool ShareFits(size_t c, const std::map<std::string, api::Quantity>& consumed) const {
    const Cand& cand = cands_[c];
    auto taking = allocating_.find(c);
    for (const auto& [name, q] : consumed) {
      api::Quantity total = q;
      if (cand.shared) {
        if (auto it = cand.shared->find(name); it != cand.shared->end())
          total = total.Plus(it->second);
      }
      if (taking != allocating_.end()) {
        if (auto it = taking->second.find(name); it != taking->second.end()) {
          total = total.Plus(it->second);
        }
      }
      if (total.Compare(cand.device->view.capacity.at(name)) > 0) return false;
    }
    return true;
  }

  // Whether a share of a multi device takes its counters: its first share (the counters are
  // consumed once, allocator_incubating.go allocateDevice skipCounterCheck).
  bool FirstShare(size_t c) const { return !cands_[c].shared && !shares_.count(c); }

  bool CanTake(size_t slot, const Alt& alt, size_t i) const {
    const size_t c = alt.cands[i];
    const Cand& cand = cands_[c];
    const bool admin = alt.spec->admin_access;
    if (!cand.multi && (admin ? admin_used_.count(c) : used_.count(c))) return false;
    const size_t claim = slots_[slot].claim;
    const auto& cons = claims_[claim]->spec.constraints;
    for (size_t k = 0; k < cons.size(); ++k) {
      if (!Applies(cons[k], slots_[slot].request, alt.spec->name)) continue;
      const cel::AttributeValue* v = LookupAttribute(*cand.device, Attribute(cons[k]));
      if (!v) return false;
      const auto& st = constraint_values_[claim][k];
      if (st.value && !SameValue(*st.value, *v)) return false;
      for (const auto& taken : st.distinct) {
        if (SameValue(taken, *v)) return false;
      }
    }
    if (cand.multi && !ShareFits(c, alt.consumed[i])) return false;
    if (!admin && (!cand.multi || FirstShare(c))) {
      for (const auto& [set, counters] : cand.device->consumes_counters) {
        const auto sit = counters_.find(PoolKey(cand.id.driver, cand.id.pool) + "/" + set);
        if (sit == counters_.end()) return false;
        for (const auto& [name, q] : counters) {
          auto it = sit->second.find(name);
          if (it == sit->second.end() || it->second.Compare(q) < 0) return false;
        }
      }
    }
    return true;
  }

  void Take(size_t slot, const Alt& alt, size_t i) {
    const size_t c = alt.cands[i];
    const bool admin = alt.spec->admin_access;
    const bool multi = cands_[c].multi;
    const bool counters = !admin && (!multi || FirstShare(c));
    if (multi) {
      auto& taking = allocating_[c];
      for (const auto& [name, q] : alt.consumed[i]) taking[name] = taking[name].Plus(q);
      ++shares_[c];
    } else {
      (admin ? admin_used_ : used_).insert(c);
    }
    taken_[slot].push_back({c, alt.spec->name, admin, multi ? &alt.consumed[i] : nullptr});
    const size_t claim = slots_[slot].claim;
    const auto& cons = claims_[claim]->spec.constraints;
    for (size_t k = 0; k < cons.size(); ++k) {
      if (!Applies(cons[k], slots_[slot].request, alt.spec->name)) continue;
      auto& st = constraint_values_[claim][k];
      const cel::AttributeValue& v = *LookupAttribute(*cands_[c].device, Attribute(cons[k]));
      if (cons[k].match_attribute.empty()) {
        st.distinct.push_back(v);
      } else if (!st.value) {
        st.value = v;
      }
      ++st.devices;
    }
    if (counters) Consume(cands_[c], /*sign=*/-1);
  }

  void Untake(size_t slot) {
    const Taken t = taken_[slot].back();
    taken_[slot].pop_back();
    const bool multi = cands_[t.cand].multi;
    if (multi) {
      auto& taking = allocating_[t.cand];
      for (const auto& [name, q] : *t.consumed) taking[name] = taking[name].Minus(q);
      if (--shares_[t.cand] == 0) {
        shares_.erase(t.cand);
        allocating_.erase(t.cand);
      }
    } else {
      (t.admin ? admin_used_ : used_).erase(t.cand);
    }
    const size_t claim = slots_[slot].claim;
    const auto& cons = claims_[claim]->spec.constraints;
    for (size_t k = 0; k < cons.size(); ++k) {
      if (!Applies(cons[k], slots_[slot].request, t.request)) continue;
      auto& st = constraint_values_[claim][k];
      if (cons[k].match_attribute.empty()) st.distinct.pop_back();
      if (--st.devices == 0) st.value.reset();
    }
    if (!t.admin && (!multi || FirstShare(t.cand))) Consume(cands_[t.cand], /*sign=*/+1);
  }

  void Consume(const Cand& cand, int sign) {
    for (const auto& [set, counters] : cand.device->consumes_counters) {
      auto& left = counters_[PoolKey(cand.id.driver, cand.id.pool) + "/" + set];
      for (const auto& [name, q] : counters) {
        left[name] = sign < 0 ? left[name].Minus(q) : left[name].Plus(q);
      }
    }
  }

  const std::vector<ResourceClaimPtr>& claims_;
  std::vector<Cand> cands_;
  std::vector<Slot> slots_;
  std::map<std::string, std::map<std::string, api::Quantity>> counters_;  // pool/set -> c -> q
  std::vector<std::vector<Taken>> taken_;
  std::vector<std::vector<ConstraintState>> constraint_values_;  // [claim][constraint]
  std::set<size_t> used_, admin_used_;
  // Shares of multi devices taken in this attempt: how many, and what they consume.
  std::map<size_t, int> shares_;
  std::map<size_t, std::map<std::string, api::Quantity>> allocating_;
  int64_t steps_ = 0;
  bool aborted_ = false;
};

// One selector on a candidate: from the memo when there is one.
absl::StatusOr<bool> MatchOne(const cel::Selector& sel, const Cand& cand, SelectorMemo* memo) {
  if (!memo || !cand.owner) return sel.Matches(cand.device->prepared);
  return memo->Matches(*cand.owner, static_cast<size_t>(cand.device - cand.slice->devices.data()),
                       sel);
}

// Whether `cand` matches the class's and the request's selectors; a runtime error names the
// class or the claim and the selector's index (allocator.go isSelectable).
api::StatusOr<bool> Selectable(const Cand& cand, const DeviceClass& cls, const RequestSpec& spec,
                               const ResourceClaim& claim, SelectorMemo* memo) {
  for (size_t i = 0; i < cls.selectors.size(); ++i) {
    auto m = MatchOne(cls.selectors[i], cand, memo);
    if (!m.ok()) {
      return absl::InvalidArgumentError(
          "class " + cls.name + ": selector #" + std::to_string(i) +
          ": CEL runtime error: " + std::string(m.status().message()));
    }
    if (!*m) return false;
  }
  for (size_t i = 0; i < spec.selectors.size(); ++i) {
    auto m = MatchOne(spec.selectors[i], cand, memo);
    if (!m.ok()) {
      return absl::InvalidArgumentError(
          "claim " + claim.Key() + ": selector #" + std::to_string(i) +
          ": CEL runtime error: " + std::string(m.status().message()));
    }
    if (!*m) return false;
  }
  return true;
}

}  // namespace

const cel::AttributeValue* LookupAttribute(const Device& d, const std::string& qualified) {
  auto it = d.view.attributes.find(qualified);
  if (it != d.view.attributes.end()) return &it->second;
  const size_t slash = qualified.find('/');
  if (slash != std::string::npos && qualified.substr(0, slash) == d.view.driver) {
    it = d.view.attributes.find(qualified.substr(slash + 1));
    if (it != d.view.attributes.end()) return &it->second;
  }
  return nullptr;
}

api::StatusOr<Allocator> Allocator::New(AllocatorInput in) {
  Allocator a;
  for (const auto& claim : in.claims) {
    for (const auto& req : claim->spec.requests) {
      auto check = [&](const RequestSpec& s) -> api::Status {
        if (!in.classes || !in.classes->count(s.device_class_name)) {
          return absl::NotFoundError("request " + s.name + ": device class " + s.device_class_name +
                                     " does not exist");
        }
        return absl::OkStatus();
      };
      if (req.exactly) {
        if (auto s = check(*req.exactly); !s.ok()) return s;
      }
      for (const auto& sub : req.first_available) {
        if (auto s = check(sub); !s.ok()) return s;
      }
    }
  }
  a.index_ = in.slice_index ? in.slice_index : SliceIndex::Build(in.slices);
  a.in_ = std::move(in);
  return a;
}

std::shared_ptr<const SliceIndex> SliceIndex::Build(const std::vector<ResourceSlicePtr>& slices) {
  auto x = std::make_shared<SliceIndex>();
  for (const auto& s : slices) {
    // Slices with counter sets are relevant for every node (upstream's slicesShared).
    if (!s->node_name.empty() && s->shared_counters.empty()) {
      x->node_local[s->node_name].push_back(s);
    } else {
      x->not_node_local.push_back(s);
    }
    PoolGeneration& g = x->pools[{s->driver, s->pool}][s->pool_generation];
    g.driver = s->driver;
    g.pool = s->pool;
    g.generation = s->pool_generation;
    g.slices.push_back(s);
  }
  // pools_incubating.go buildPool's checks that do not depend on the node.
  for (auto& [id, gens] : x->pools) {
    for (auto& [gen, g] : gens) {
      std::stable_sort(
          g.slices.begin(), g.slices.end(),
          [](const ResourceSlicePtr& a, const ResourceSlicePtr& b) { return a->name < b->name; });
      std::set<std::string> names;
      for (const auto& s : g.slices) {
        for (const auto& [set, counters] : s->shared_counters) {
          if (g.counter_sets.count(set) && g.invalid.empty()) {
            g.invalid = "duplicate counter set name " + set;
          }
          g.counter_sets[set] = counters;
        }
        for (const auto& d : s->devices) {
          if (!names.insert(d.name).second) g.duplicate_names = true;
        }
      }
      for (const auto& s : g.slices) {
        for (const auto& d : s->devices) {
          if (d.consumes_counters.empty()) continue;
          g.consuming.emplace_back(s.get(), &d);
          for (const auto& [set, counters] : d.consumes_counters) {
            auto it = g.counter_sets.find(set);
            if (it == g.counter_sets.end()) {
              if (g.invalid.empty()) g.invalid = "counter set " + set + " not found";
              continue;
            }
            for (const auto& [c, q] : counters) {
              if (!it->second.count(c) && g.invalid.empty()) {
                g.invalid = "counter " + c + " not found in counter set " + set;
              }
            }
          }
        }
      }
    }
  }
  return x;
}

void AllocatorInput::Hold(const AllocationResult& allocation) {
  for (const auto& d : allocation.devices) {
    if (d.admin_access) continue;
    const DeviceId id{d.driver, d.pool, d.device};
    if (d.share_id.empty()) {
      in_use.insert(id);
      continue;
    }
    auto& sum = shared[id];  // present even for a device without capacities
    for (const auto& [name, q] : d.consumed_capacity) sum[name] = sum[name].Plus(q);
  }
}

bool InUseIndex::Contains(const DeviceId& id) const {
  auto d = pools.find(id.driver);
  if (d == pools.end()) return false;
  auto p = d->second.find(id.pool);
  return p != d->second.end() && p->second->count(id.device) > 0;
}

void InUseIndex::Add(const DeviceId& id, int delta) {
  auto& driver = pools[id.driver];
  auto& pool = driver[id.pool];
  auto copy = pool ? std::make_shared<Pool>(*pool) : std::make_shared<Pool>();
  if ((((*copy)[id.device] += delta)) <= 0) copy->erase(id.device);
  if (copy->empty()) {
    driver.erase(id.pool);
    if (driver.empty()) pools.erase(id.driver);
    return;
  }
  pool = std::move(copy);
}

const InUseIndex::Shared* InUseIndex::SharedUse(const DeviceId& id) const {
  if (!shared) return nullptr;
  auto it = shared->find(id);
  return it == shared->end() ? nullptr : &it->second;
}

void InUseIndex::AddShare(const DeviceId& id, const std::map<std::string, api::Quantity>& consumed,
                          int delta) {
  auto copy = shared ? std::make_shared<std::map<DeviceId, Shared>>(*shared)
                     : std::make_shared<std::map<DeviceId, Shared>>();
  Shared& s = (*copy)[id];
  s.shares += delta;
  for (const auto& [name, q] : consumed) {
    s.consumed[name] = delta > 0 ? s.consumed[name].Plus(q) : s.consumed[name].Minus(q);
  }
  if (s.shares <= 0) copy->erase(id);
  shared = std::move(copy);
}

std::set<DeviceId> InUseIndex::ToSet() const {
  std::set<DeviceId> out;
  for (const auto& [driver, ps] : pools) {
    for (const auto& [pool, devices] : ps) {
      for (const auto& [device, n] : *devices) out.insert(DeviceId{driver, pool, device});
    }
  }
  return out;
}

absl::StatusOr<bool> SelectorMemo::Matches(const ResourceSlicePtr& slice, size_t device,
                                           const cel::Selector& sel) {
  {
    absl::ReaderMutexLock l(&mu_);
    auto e = memo_.find(sel.expression());
    if (e != memo_.end()) {
      auto s = e->second.find(slice.get());
      if (s != e->second.end()) {
        switch (s->second.result[device]) {
          case 1:
            return false;
          case 2:
            return true;
          case 3:
            return absl::InvalidArgumentError(s->second.errors.at(device));
          default:
            break;
        }
      }
    }
  }
  auto m = sel.Matches(slice->devices[device].prepared);
  absl::MutexLock l(&mu_);
  // Bounded: distinct request selectors (one per claim when claims carry their own) would
  // otherwise grow the memo until the next slice change.
  if (memo_.size() >= kMaxMemoExpressions && !memo_.contains(sel.expression())) memo_.clear();
  Entry& e = memo_[sel.expression()][slice.get()];
  if (!e.slice) {
    e.slice = slice;
    e.result.assign(slice->devices.size(), 0);
  }
  if (m.ok()) {
    e.result[device] = *m ? 2 : 1;
  } else {
    e.result[device] = 3;
    e.errors[device] = std::string(m.status().message());
  }
  return m;
}

void SelectorMemo::Prune() {
  absl::MutexLock l(&mu_);
  // A slice is held by the memo once per expression that has an entry for it.
  absl::flat_hash_map<const ResourceSlice*, long> held;
  for (const auto& [expr, slices] : memo_) {
    for (const auto& [s, e] : slices) ++held[s];
  }
  for (auto it = memo_.begin(); it != memo_.end();) {
    absl::erase_if(it->second,
                   [&](const auto& kv) { return kv.second.slice.use_count() <= held[kv.first]; });
    if (it->second.empty()) {
      memo_.erase(it++);
    } else {
      ++it;
    }
  }
}

size_t SelectorMemo::size() const {
  absl::ReaderMutexLock l(&mu_);
  size_t n = 0;
  for (const auto& [expr, slices] : memo_) n += slices.size();
  return n;
}

api::StatusOr<AllocationOutcome> Allocator::Allocate(const api::Node& node) const {
  std::vector<const api::Node*> nodes(in_.claims.size(), &node);
  return AllocateOn(nodes);
}

namespace {

using Counters = std::map<std::string, std::map<std::string, api::Quantity>>;  // pool/set -> left

// A pool as one node sees it (pools_incubating.go GatherPools and buildPool).
struct NodePool {
  const PoolGeneration* gen = nullptr;
  std::string id;           // "driver/pool" (upstream's PoolID.String())
  bool incomplete = false;  // fewer slices than spec.pool.resourceSliceCount: no devices
  std::string invalid;      // why the pool is invalid: no devices
  std::vector<const ResourceSlicePtr*> targeting;  // its device slices relevant for the node
};

// The pools `node` sees, by driver and pool name (upstream's sortPoolsByID). Per pool, the
// newest generation among the slices relevant for the node; complete when that generation has
// resourceSliceCount relevant slices, or, looking at every slice of the pool, when no newer
// generation exists (else the pool is being replaced and is left out) and the generation
// has resourceSliceCount slices; incomplete otherwise.
std::vector<NodePool> NodePools(const SliceIndex& index, const api::Node& node) {
  struct Seen {
    int64_t gen = 0;
    std::vector<const ResourceSlicePtr*> slices;
  };
  std::map<std::pair<std::string, std::string>, Seen> seen;
  static const std::vector<ResourceSlicePtr> kNone;
  auto local = index.node_local.find(node.metadata.name);
  for (const auto* list :
       {local == index.node_local.end() ? &kNone : &local->second, &index.not_node_local}) {
    for (const auto& s : *list) {
      if (!Relevant(*s, node)) continue;
      auto [it, inserted] = seen.try_emplace({s->driver, s->pool});
      Seen& p = it->second;
      if (!inserted && s->pool_generation < p.gen) continue;  // out-dated
      if (inserted || s->pool_generation > p.gen) {
        p.gen = s->pool_generation;
        p.slices.clear();
      }
      p.slices.push_back(&s);
    }
  }
  std::vector<NodePool> out;
  for (auto& [key, p] : seen) {
    const auto& gens = index.pools.at(key);
    const PoolGeneration& g = gens.at(p.gen);
    const int64_t want = (*p.slices.front())->resource_slice_count;
    NodePool np;
    np.gen = &g;
    np.id = key.first + "/" + key.second;
    if (static_cast<int64_t>(p.slices.size()) != want) {
      if (gens.rbegin()->first > p.gen) continue;  // a newer generation is being published
      np.incomplete = static_cast<int64_t>(g.slices.size()) != want;
    }
    if (!np.incomplete) {
      std::stable_sort(p.slices.begin(), p.slices.end(),
                       [](const ResourceSlicePtr* a, const ResourceSlicePtr* b) {
                         return (*a)->name < (*b)->name;
                       });
      for (const ResourceSlicePtr* s : p.slices) {
        if ((*s)->shared_counters.empty()) np.targeting.push_back(s);
      }
      np.invalid = g.invalid;
      if (g.duplicate_names && np.invalid.empty()) {
        std::set<std::string> names;
        for (const ResourceSlicePtr* s : np.targeting) {
          for (const auto& d : (*s)->devices) {
            if (!names.insert(d.name).second && np.invalid.empty()) {
              np.invalid = "duplicate device name " + d.name;
            }
          }
        }
      }
      if (!np.invalid.empty()) np.targeting.clear();
    }
    out.push_back(std::move(np));
  }
  return out;
}

// The shared counters of the pools in `pools`, less what their allocated devices consume
// (every slice of the pool's generation counts, upstream's checkAvailableCounters).
void AddCountersLeft(const std::vector<NodePool>& pools,
                     const std::function<bool(const DeviceId&)>& in_use, Counters* counters) {
  for (const NodePool& np : pools) {
    if (np.incomplete || !np.invalid.empty() || np.gen->counter_sets.empty()) continue;
    const std::string prefix = PoolKey(np.gen->driver, np.gen->pool) + "/";
    if (counters->count(prefix + np.gen->counter_sets.begin()->first)) continue;  // seen
    for (const auto& [set, cs] : np.gen->counter_sets) (*counters)[prefix + set] = cs;
    for (const auto& [s, d] : np.gen->consuming) {
      if (!in_use(DeviceId{s->driver, s->pool, d->name})) continue;
      for (const auto& [set, cs] : d->consumes_counters) {
        auto& left = (*counters)[prefix + set];
        for (const auto& [name, q] : cs) left[name] = left[name].Minus(q);
      }
    }
  }
}

// A candidate of a node: whether the device is available on that node (a device of a slice
// with per-device node selection may not be; its selectors are still evaluated first, as
// upstream's isSelectable does).
struct NodeCand {
  size_t cand = 0;
  bool on_node = true;
};

// Devices of the pools the attempt's nodes see (each once), and per node which of them, in
// upstream's order: pools by ID, slices by name, devices in slice order.
void GatherCandidates(const std::map<const api::Node*, std::vector<NodePool>>& pools,
                      const std::vector<const api::Node*>& nodes, std::vector<Cand>* cands,
                      std::map<const api::Node*, std::vector<NodeCand>>* by_node) {
  // One node (every Filter call): a device appears once, no identity index is needed.
  const bool one_node = std::all_of(nodes.begin(), nodes.end(),
                                    [&](const api::Node* n) { return n == nodes.front(); });
  std::map<DeviceId, size_t> index;
  for (const api::Node* node : nodes) {
    if (by_node->count(node)) continue;
    auto& list = (*by_node)[node];
    for (const NodePool& np : pools.at(node)) {
      for (const ResourceSlicePtr* sp : np.targeting) {
        const ResourceSlice& s = **sp;
        for (const auto& d : s.devices) {
          Cand c{DeviceId{s.driver, s.pool, d.name}, &s, &d, 2, nullptr, sp};
          bool on_node = true;
          if (s.per_device_node_selection) {
            const int r = Reach(d.node_name, d.node_selector, d.all_nodes, *node);
            on_node = r >= 0;
            c.reach = !d.node_name.empty() ? 0 : d.node_selector ? 1 : 2;
            if (d.node_selector) c.selector = &*d.node_selector;
          } else {
            c.reach = !s.node_name.empty() ? 0 : s.node_selector ? 1 : 2;
            if (s.node_selector) c.selector = &*s.node_selector;
          }
          if (one_node) {
            list.push_back(NodeCand{cands->size(), on_node});
            cands->push_back(std::move(c));
            continue;
          }
          auto [it, inserted] = index.emplace(c.id, cands->size());
          if (inserted) cands->push_back(std::move(c));
          list.push_back(NodeCand{it->second, on_node});
        }
      }
    }
  }
}

// Consumable capacity (consumable_capacity.go).
using Amounts = std::map<std::string, api::Quantity>;

// roundUpRange: below min -> min; with a step, up to min + a multiple of step (in whole
// units, Quantity.Value()); else as requested.
api::Quantity RoundUpRange(const api::Quantity& requested, const CapacityRequestPolicy& p) {
  if (requested.Compare(p.min) < 0) return p.min;
  if (!p.step) return requested;
  const int64_t step = p.step->Value(), min = p.min.Value();
  const int64_t added = requested.Value() - min;
  int64_t n = added / step;
  if (added % step != 0) ++n;
  return api::Quantity::FromValue(min + step * n);
}

// calculateConsumedCapacity: what one allocation consumes of a capacity of `value`.
api::Quantity ConsumedOf(const api::Quantity* requested, const api::Quantity& value,
                         const CapacityRequestPolicy* p) {
  if (!requested) return p && p->default_value ? *p->default_value : value;
  if (!p) return *requested;
  if (p->has_range) return RoundUpRange(*requested, *p);
  for (const auto& v : p->valid_values) {  // roundUpValidValues
    if (requested->Compare(v) <= 0) return v;
  }
  return *requested;
}

// violatesPolicy: the default never does; else beyond max, off the step from min, or not one
// of the valid values.
bool Violates(const api::Quantity& q, const CapacityRequestPolicy* p) {
  if (!p) return false;
  if (p->default_value && q.Compare(*p->default_value) == 0) return false;
  if (p->has_range) {
    if (p->max && q.Compare(*p->max) > 0) return true;
    return p->step && (q.Value() - p->min.Value()) % p->step->Value() != 0;
  }
  if (p->valid_values.empty()) return false;
  return std::none_of(p->valid_values.begin(), p->valid_values.end(),
                      [&](const api::Quantity& v) { return q.Compare(v) == 0; });
}

// CmpRequestOverCapacity against the allocated shares (`shared`, may be null): every capacity
// the request names exists, no consumed amount violates its policy, and the consumed amounts
// plus the shares' fit the capacities. The consumed amount of every capacity, or nullopt.
std::optional<Amounts> CapacityFit(const Device& d, const RequestSpec& spec,
                                   const Amounts* shared) {
  for (const auto& [name, q] : spec.capacity_requests) {
    if (!d.view.capacity.count(name)) return std::nullopt;  // "not been defined"
  }
  Amounts out;
  for (const auto& [name, value] : d.view.capacity) {
    auto r = spec.capacity_requests.find(name);
    auto p = d.request_policies.find(name);
    const CapacityRequestPolicy* policy = p == d.request_policies.end() ? nullptr : &p->second;
    const api::Quantity consumed =
        ConsumedOf(r == spec.capacity_requests.end() ? nullptr : &r->second, value, policy);
    if (Violates(consumed, policy)) return std::nullopt;
    api::Quantity total = consumed;
    if (shared) {
      if (auto it = shared->find(name); it != shared->end()) total = total.Plus(it->second);
    }
    if (total.Compare(value) > 0) return std::nullopt;
    out[name] = consumed;
  }
  return out;
}

// The candidates of one way to satisfy a request among `node_cands`. allocationMode All
// keeps every matching device and none when one of them is in use or has a taint the
// request does not tolerate (allocator.go: allocateDevice fails for such a device, and
// All takes every matching device or none). A device whose NoSchedule / NoExecute taints
// the request does not all tolerate is never a candidate (allTaintsTolerated, KEP-5055).
api::StatusOr<Alt> BuildAlt(const RequestSpec& spec, const DeviceClass& cls,
                            const ResourceClaim& claim, const std::vector<Cand>& cands,
                            const std::vector<NodeCand>& node_cands,
                            const std::function<bool(const DeviceId&)>& in_use,
                            SelectorMemo* memo) {
  Alt alt;
  alt.spec = &spec;
  bool any_used = false;
  for (const NodeCand& nc : node_cands) {
    const size_t c = nc.cand;
    const bool used = !spec.admin_access && in_use(cands[c].id);
    if (used && !spec.all) continue;
    auto m = Selectable(cands[c], cls, spec, claim, memo);
    if (!m.ok()) return m.status();
    if (!*m || !nc.on_node) continue;
    // A device whose capacity the request does not fit is not a candidate, in All mode too
    // (allocator_incubating.go: CmpRequestOverCapacity before allocateDevice).
    auto fit = CapacityFit(*cands[c].device, spec, cands[c].shared);
    if (!fit) continue;
    const bool untolerated = !AllTaintsTolerated(cands[c].device->taints, spec.tolerations);
    if (untolerated && !spec.all) continue;
    any_used = any_used || used || untolerated;
    alt.cands.push_back(c);
    alt.consumed.push_back(cands[c].multi ? std::move(*fit) : Amounts{});
  }
  if (spec.all && any_used) {  // not every matching device is free
    alt.cands.clear();
    alt.consumed.clear();
  }
  return alt;
}

// Moves the preferred devices to the front of `alt`, in the order of preference; the others
// keep their order.
void Prefer(const std::map<std::string, std::vector<std::string>>& preferred,
            const std::vector<Cand>& cands, Alt* alt) {
  auto rank = [&](size_t c) -> size_t {
    auto it = preferred.find(cands[c].id.driver);
    if (it == preferred.end()) return SIZE_MAX;
    auto pos = std::find(it->second.begin(), it->second.end(), cands[c].id.device);
    return pos == it->second.end() ? SIZE_MAX : static_cast<size_t>(pos - it->second.begin());
  };
  std::vector<size_t> order(alt->cands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank(alt->cands[a]) < rank(alt->cands[b]); });
  Alt sorted;
  sorted.spec = alt->spec;
  const bool with_consumed = !alt->consumed.empty();
  for (size_t i : order) {
    sorted.cands.push_back(alt->cands[i]);
    if (with_consumed) sorted.consumed.push_back(std::move(alt->consumed[i]));
  }
  *alt = std::move(sorted);
}

}  // namespace

std::string ShareId(const std::string& claim_uid, const std::string& request, const DeviceId& id) {
  // Two FNV-1a 64-bit hashes (different offsets) of the parts, as 128 bits.
  const std::string key =
      claim_uid + "\n" + request + "\n" + id.driver + "\n" + id.pool + "\n" + id.device;
  auto fnv = [&key](uint64_t h) {
    for (unsigned char ch : key) {
      h ^= ch;
      h *= 1099511628211ull;
    }
    return h;
  };
  uint64_t hi = fnv(14695981039346656037ull), lo = fnv(0x84222325cbf29ce4ull);
  hi = (hi & ~0xf000ull) | 0x8000ull;        // version 8 (custom)
  lo = (lo & ~(3ull << 62)) | (2ull << 62);  // RFC 4122 variant
  char buf[37];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffull));
  return buf;
}

namespace {

// Adds the requirements of `from` not already in `to` (upstream's
// addNewNodeSelectorRequirements).
void AddRequirements(const std::vector<api::NodeSelectorRequirement>& from,
                     std::vector<api::NodeSelectorRequirement>* to) {
  for (const auto& r : from) {
    const bool present = std::any_of(to->begin(), to->end(), [&](const auto& t) {
      return t.key == r.key && t.op == r.op && t.values == r.values;
    });
    if (!present) to->push_back(r);
  }
}

// The allocation results of a successful search, with each claim's node selector
// (allocator_incubating.go createNodeSelector): the node's name when a device is node-local
// (its slice's nodeName, or its own with per-device node selection), else the requirements of
// every device's node selector in one term, else none (all nodes).
std::vector<AllocationResult> Results(const Search& search,
                                      const std::vector<ResourceClaimPtr>& claims,
                                      const std::vector<const api::Node*>& nodes) {
  std::vector<AllocationResult> results(claims.size());
  size_t slot = 0;  // slots were built claim by claim, request by request
  for (size_t ci = 0; ci < claims.size(); ++ci) {
    bool local = false;
    api::NodeSelectorTerm term;
    for (size_t r = 0; r < claims[ci]->spec.requests.size(); ++r, ++slot) {
      for (const Taken& t : search.taken()[slot]) {
        const Cand& c = search.cands()[t.cand];
        DeviceResult res;
        res.request = t.request;
        res.driver = c.id.driver;
        res.pool = c.id.pool;
        res.device = c.id.device;
        res.admin_access = t.admin;
        // KEP-5007: the result carries the device's binding conditions, and a device that
        // bindsToNode pins the allocation to this node as a node-local one does
        // (allocator_incubating.go: the result's BindingConditions, createNodeSelector).
        res.binding_conditions = c.device->binding_conditions;
        res.binding_failure_conditions = c.device->binding_failure_conditions;
        if (t.consumed) {
          res.consumed_capacity = *t.consumed;
          res.share_id = ShareId(claims[ci]->metadata.uid, t.request, c.id);
        }
        results[ci].devices.push_back(std::move(res));
        if (c.reach == 0 || c.device->binds_to_node) local = true;
        if (c.reach == 1 && c.selector && !c.selector->node_selector_terms.empty()) {
          const auto& from = c.selector->node_selector_terms.front();
          AddRequirements(from.match_fields, &term.match_fields);
          AddRequirements(from.match_expressions, &term.match_expressions);
        }
      }
    }
    if (local) {
      api::NodeSelector sel;
      sel.node_selector_terms.push_back(api::NodeSelectorTerm{
          {}, {api::NodeSelectorRequirement{"metadata.name", "In", {nodes[ci]->metadata.name}}}});
      results[ci].node_selector = std::move(sel);
    } else if (!term.match_fields.empty() || !term.match_expressions.empty()) {
      api::NodeSelector sel;
      sel.node_selector_terms.push_back(std::move(term));
      results[ci].node_selector = std::move(sel);
    }
  }
  return results;
}

}  // namespace

api::StatusOr<AllocationOutcome> Allocator::AllocateOn(
    const std::vector<const api::Node*>& nodes) const {
  AllocationOutcome out;
  std::map<const api::Node*, std::vector<NodePool>> pools;
  for (const api::Node* node : nodes) {
    if (!pools.count(node)) pools[node] = NodePools(*index_, *node);
  }
  std::vector<Cand> cands;
  std::map<const api::Node*, std::vector<NodeCand>> by_node;
  GatherCandidates(pools, nodes, &cands, &by_node);
  // What the shares of each shareable device consume: those allocated (the index) plus those
  // held for this attempt (`shared`, e.g. a gang member's on the view), summed where both have
  // some (kept in `merged` for the search's lifetime).
  std::deque<Amounts> merged;
  for (Cand& c : cands) {
    c.multi = c.device->view.allow_multiple_allocations;
    if (!c.multi) continue;
    c.shared = SharedConsumed(c.id);
    const InUseIndex::Shared* indexed =
        in_.in_use_index ? in_.in_use_index->SharedUse(c.id) : nullptr;
    if (indexed && in_.shared.count(c.id)) {
      Amounts sum = indexed->consumed;
      for (const auto& [name, q] : in_.shared.at(c.id)) sum[name] = sum[name].Plus(q);
      merged.push_back(std::move(sum));
      c.shared = &merged.back();
    }
  }
  const std::function<bool(const DeviceId&)> in_use = [this](const DeviceId& id) {
    return InUse(id);
  };
  // Counters: a device with allocated shares consumes its counters too
  // (internal.IsDeviceAllocated).
  const std::function<bool(const DeviceId&)> allocated = [this](const DeviceId& id) {
    return InUse(id) || SharedConsumed(id) != nullptr;
  };
  // Slots: one per request of each claim, with the candidates of each alternative.
  std::vector<Slot> slots;
  for (size_t ci = 0; ci < in_.claims.size(); ++ci) {
    const ResourceClaim& claim = *in_.claims[ci];
    for (const auto& req : claim.spec.requests) {
      Slot slot;
      slot.claim = ci;
      slot.request = req.name;
      for (const RequestSpec* spec : req.Specs()) {
        // "All" needs every pool the node sees complete and valid (allocator_incubating.go
        // validateDeviceRequest); the request's own name, a subrequest's without its parent.
        if (spec->all) {
          for (const NodePool& np : pools.at(nodes[ci])) {
            if (!np.incomplete && np.invalid.empty()) continue;
            const std::string name = spec->name.substr(spec->name.find('/') + 1);
            return absl::FailedPreconditionError("claim " + claim.Key() + ", request " + name +
                                                 ": asks for all devices, but resource pool " +
                                                 np.id + " is currently " +
                                                 (np.incomplete ? "being updated" : "invalid"));
          }
        }
        auto alt = BuildAlt(*spec, in_.classes->at(spec->device_class_name), claim, cands,
                            by_node[nodes[ci]], in_use, in_.memo.get());
        if (!alt.ok()) return alt.status();
        if (!in_.preferred.empty()) Prefer(in_.preferred, cands, &*alt);
        slot.alts.push_back(std::move(*alt));
      }
      slots.push_back(std::move(slot));
    }
  }
  Counters counters;
  for (const auto& [node, ps] : pools) AddCountersLeft(ps, allocated, &counters);
  Search search(in_.claims, std::move(cands), std::move(slots), std::move(counters));
  out.ok = search.Run();
  out.steps = search.steps();
  if (out.ok) {
    out.results = Results(search, in_.claims, nodes);
    return out;
  }
  for (const auto& [node, ps] : pools) {
    for (const NodePool& np : ps) {
      if (!np.invalid.empty()) out.reason = "invalid resource pools were encountered";
    }
  }
  // Which claim cannot be allocated even alone?
  if (in_.claims.size() == 1) {
    out.failed_claim = in_.claims[0]->Key();
  } else {
    for (size_t ci = 0; ci < in_.claims.size(); ++ci) {
      AllocatorInput one;
      one.claims = {in_.claims[ci]};
      one.classes = in_.classes;
      one.slice_index = index_;
      one.in_use = in_.in_use;
      one.shared = in_.shared;
      one.in_use_index = in_.in_use_index;
      one.memo = in_.memo;
      auto alone = Allocator::New(std::move(one));
      if (!alone.ok()) return alone.status();
      auto r = alone->AllocateOn({nodes[ci]});
      if (!r.ok()) return r.status();
      if (!r->ok) {
        out.failed_claim = in_.claims[ci]->Key();
        break;
      }
    }
  }
  return out;
}

}  // namespace phalanx::dra
