#include "dra/allocator.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "api/labels.h"

namespace phalanx::dra {

namespace {

std::string PoolKey(const std::string& driver, const std::string& pool) {
  return driver + "/" + pool;
}

// How a slice reaches a node: 0 node-local, 1 node selector, 2 all nodes, -1 not at all.
int Reach(const ResourceSlice& s, const api::Node& node) {
  if (!s.node_name.empty()) return s.node_name == node.metadata.name ? 0 : -1;
  if (s.node_selector) {
    return api::NodeSelectorMatches(*s.node_selector, node.metadata.labels, node.metadata.name)
               ? 1
               : -1;
  }
  return s.all_nodes ? 2 : -1;
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

// Defined below (AllocateOn's helpers).
std::map<std::string, std::map<std::string, api::Quantity>> CountersLeft(
    const SliceIndex& index, const std::function<bool(const DeviceId&)>& in_use);

// One device reachable from a node of the attempt.
struct Cand {
  DeviceId id;
  const ResourceSlice* slice = nullptr;
  const Device* device = nullptr;
  int reach = 2;
  const ResourceSlicePtr* owner = nullptr;  // the slice's pointer (SelectorMemo keys)
};

// One way to satisfy a request, with its candidate devices (indices into Search::cands_).
struct Alt {
  const RequestSpec* spec = nullptr;
  std::vector<size_t> cands;
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
    std::optional<cel::AttributeValue> value;
    int devices = 0;
  };

  bool Request(size_t slot) {
    if (slot == slots_.size()) return true;
    for (const Alt& alt : slots_[slot].alts) {
      if (aborted_) return false;
      if (alt.spec->all) {
        if (alt.cands.empty()) continue;
        size_t took = 0;
        bool ok = true;
        for (size_t c : alt.cands) {
          if (!CanTake(slot, alt, c)) {
            ok = false;
            break;
          }
          Take(slot, alt, c);
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
      const size_t c = alt.cands[i];
      if (!CanTake(slot, alt, c)) continue;
      Take(slot, alt, c);
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

  bool CanTake(size_t slot, const Alt& alt, size_t c) const {
    const Cand& cand = cands_[c];
    const bool admin = alt.spec->admin_access;
    if (admin ? admin_used_.count(c) : used_.count(c)) return false;
    const size_t claim = slots_[slot].claim;
    const auto& cons = claims_[claim]->spec.constraints;
    for (size_t k = 0; k < cons.size(); ++k) {
      if (!Applies(cons[k], slots_[slot].request, alt.spec->name)) continue;
      const cel::AttributeValue* v = LookupAttribute(*cand.device, cons[k].match_attribute);
      if (!v) return false;
      const auto& st = constraint_values_[claim][k];
      if (st.value && !SameValue(*st.value, *v)) return false;
    }
    if (!admin) {
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

  void Take(size_t slot, const Alt& alt, size_t c) {
    const bool admin = alt.spec->admin_access;
    (admin ? admin_used_ : used_).insert(c);
    taken_[slot].push_back({c, alt.spec->name, admin});
    const size_t claim = slots_[slot].claim;
    const auto& cons = claims_[claim]->spec.constraints;
    for (size_t k = 0; k < cons.size(); ++k) {
      if (!Applies(cons[k], slots_[slot].request, alt.spec->name)) continue;
      auto& st = constraint_values_[claim][k];
      if (!st.value) st.value = *LookupAttribute(*cands_[c].device, cons[k].match_attribute);
      ++st.devices;
    }
    if (!admin) Consume(cands_[c], /*sign=*/-1);
  }

  void Untake(size_t slot) {
    const Taken t = taken_[slot].back();
    taken_[slot].pop_back();
    (t.admin ? admin_used_ : used_).erase(t.cand);
    const size_t claim = slots_[slot].claim;
    const auto& cons = claims_[claim]->spec.constraints;
    for (size_t k = 0; k < cons.size(); ++k) {
      if (!Applies(cons[k], slots_[slot].request, t.request)) continue;
      auto& st = constraint_values_[claim][k];
      if (--st.devices == 0) st.value.reset();
    }
    if (!t.admin) Consume(cands_[t.cand], /*sign=*/+1);
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
  a.counters_left_ = CountersLeft(*a.index_, [&a](const DeviceId& id) { return a.InUse(id); });
  return a;
}

std::shared_ptr<const SliceIndex> SliceIndex::Build(const std::vector<ResourceSlicePtr>& slices) {
  auto x = std::make_shared<SliceIndex>();
  // The newest generation of each pool.
  std::map<std::string, int64_t> newest;
  for (const auto& s : slices) {
    auto [it, inserted] = newest.emplace(PoolKey(s->driver, s->pool), s->pool_generation);
    if (!inserted) it->second = std::max(it->second, s->pool_generation);
  }
  for (const auto& s : slices) {
    if (s->pool_generation != newest[PoolKey(s->driver, s->pool)]) continue;
    x->current.push_back(s);
    if (!s->node_name.empty()) {
      x->node_local[s->node_name].push_back(s);
    } else {
      x->not_node_local.push_back(s);
    }
    for (const auto& d : s->devices) {
      if (!d.consumes_counters.empty()) x->consuming.emplace_back(s.get(), &d);
    }
  }
  return x;
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

// The shared counters of the current slices, less what the allocated devices consume.
Counters CountersLeft(const SliceIndex& index, const std::function<bool(const DeviceId&)>& in_use) {
  Counters counters;
  for (const auto& s : index.current) {
    for (const auto& [set, cs] : s->shared_counters) {
      auto& left = counters[PoolKey(s->driver, s->pool) + "/" + set];
      for (const auto& [name, q] : cs) left[name] = q;
    }
  }
  for (const auto& [s, d] : index.consuming) {
    if (!in_use(DeviceId{s->driver, s->pool, d->name})) continue;
    for (const auto& [set, cs] : d->consumes_counters) {
      auto& left = counters[PoolKey(s->driver, s->pool) + "/" + set];
      for (const auto& [name, q] : cs) left[name] = left[name].Minus(q);
    }
  }
  return counters;
}

// Devices reachable from the attempt's nodes (each once), and per node which of them.
void GatherCandidates(const std::map<std::string, std::vector<ResourceSlicePtr>>& node_local,
                      const std::vector<ResourceSlicePtr>& not_node_local,
                      const std::vector<const api::Node*>& nodes, std::vector<Cand>* cands,
                      std::map<const api::Node*, std::vector<size_t>>* by_node) {
  // One node (every Filter call): a device appears once, no identity index is needed.
  const bool one_node = std::all_of(nodes.begin(), nodes.end(),
                                    [&](const api::Node* n) { return n == nodes.front(); });
  std::map<DeviceId, size_t> index;
  static const std::vector<ResourceSlicePtr> kNone;
  for (const api::Node* node : nodes) {
    if (by_node->count(node)) continue;
    auto& list = (*by_node)[node];
    auto local = node_local.find(node->metadata.name);
    for (const auto* slices :
         {local == node_local.end() ? &kNone : &local->second, &not_node_local}) {
      for (const auto& s : *slices) {
        const int reach = Reach(*s, *node);
        if (reach < 0) continue;
        for (const auto& d : s->devices) {
          if (one_node) {
            list.push_back(cands->size());
            cands->push_back(Cand{DeviceId{s->driver, s->pool, d.name}, s.get(), &d, reach, &s});
            continue;
          }
          DeviceId id{s->driver, s->pool, d.name};
          auto [it, inserted] = index.emplace(id, cands->size());
          if (inserted) cands->push_back(Cand{id, s.get(), &d, reach, &s});
          list.push_back(it->second);
        }
      }
    }
  }
}

// The candidates of one way to satisfy a request among `node_cands`. allocationMode All
// keeps every matching device and none when one of them is in use or has a taint the
// request does not tolerate (allocator.go: allocateDevice fails for such a device, and
// All takes every matching device or none). A device whose NoSchedule / NoExecute taints
// the request does not all tolerate is never a candidate (allTaintsTolerated, KEP-5055).
api::StatusOr<Alt> BuildAlt(const RequestSpec& spec, const DeviceClass& cls,
                            const ResourceClaim& claim, const std::vector<Cand>& cands,
                            const std::vector<size_t>& node_cands,
                            const std::function<bool(const DeviceId&)>& in_use,
                            SelectorMemo* memo) {
  Alt alt;
  alt.spec = &spec;
  bool any_used = false;
  for (size_t c : node_cands) {
    const bool used = !spec.admin_access && in_use(cands[c].id);
    if (used && !spec.all) continue;
    auto m = Selectable(cands[c], cls, spec, claim, memo);
    if (!m.ok()) return m.status();
    if (!*m) continue;
    const bool untolerated = !AllTaintsTolerated(cands[c].device->taints, spec.tolerations);
    if (untolerated && !spec.all) continue;
    any_used = any_used || used || untolerated;
    alt.cands.push_back(c);
  }
  if (spec.all && any_used) alt.cands.clear();  // not every matching device is free
  return alt;
}

// The allocation results of a successful search, with each claim's node selector.
std::vector<AllocationResult> Results(const Search& search,
                                      const std::vector<ResourceClaimPtr>& claims,
                                      const std::vector<const api::Node*>& nodes) {
  std::vector<AllocationResult> results(claims.size());
  size_t slot = 0;  // slots were built claim by claim, request by request
  for (size_t ci = 0; ci < claims.size(); ++ci) {
    int best_reach = 3;
    const ResourceSlice* selector_slice = nullptr;
    for (size_t r = 0; r < claims[ci]->spec.requests.size(); ++r, ++slot) {
      for (const Taken& t : search.taken()[slot]) {
        const Cand& c = search.cands()[t.cand];
        // KEP-5007: the result carries the device's binding conditions, and a device that
        // bindsToNode pins the allocation to this node as a node-local one does
        // (allocator_incubating.go: the result's BindingConditions, createNodeSelector).
        results[ci].devices.push_back(
            DeviceResult{.request = t.request,
                         .driver = c.id.driver,
                         .pool = c.id.pool,
                         .device = c.id.device,
                         .admin_access = t.admin,
                         .binding_conditions = c.device->binding_conditions,
                         .binding_failure_conditions = c.device->binding_failure_conditions});
        const int reach = c.device->binds_to_node ? 0 : c.reach;
        if (reach < best_reach) {
          best_reach = reach;
          if (reach == 1) selector_slice = c.slice;
        }
      }
    }
    if (best_reach == 0) {
      api::NodeSelector sel;
      sel.node_selector_terms.push_back(api::NodeSelectorTerm{
          {}, {api::NodeSelectorRequirement{"metadata.name", "In", {nodes[ci]->metadata.name}}}});
      results[ci].node_selector = std::move(sel);
    } else if (best_reach == 1) {
      results[ci].node_selector = selector_slice->node_selector;
    }
  }
  return results;
}

}  // namespace

api::StatusOr<AllocationOutcome> Allocator::AllocateOn(
    const std::vector<const api::Node*>& nodes) const {
  AllocationOutcome out;
  std::vector<Cand> cands;
  std::map<const api::Node*, std::vector<size_t>> by_node;
  GatherCandidates(index_->node_local, index_->not_node_local, nodes, &cands, &by_node);
  const std::function<bool(const DeviceId&)> in_use = [this](const DeviceId& id) {
    return InUse(id);
  };
  // Slots: one per request of each claim, with the candidates of each alternative.
  std::vector<Slot> slots;
  for (size_t ci = 0; ci < in_.claims.size(); ++ci) {
    const ResourceClaim& claim = *in_.claims[ci];
    for (const auto& req : claim.spec.requests) {
      Slot slot;
      slot.claim = ci;
      slot.request = req.name;
      std::vector<const RequestSpec*> specs;
      if (req.exactly) specs.push_back(&*req.exactly);
      for (const auto& sub : req.first_available) specs.push_back(&sub);
      for (const RequestSpec* spec : specs) {
        auto alt = BuildAlt(*spec, in_.classes->at(spec->device_class_name), claim, cands,
                            by_node[nodes[ci]], in_use, in_.memo.get());
        if (!alt.ok()) return alt.status();
        slot.alts.push_back(std::move(*alt));
      }
      slots.push_back(std::move(slot));
    }
  }
  Search search(in_.claims, std::move(cands), std::move(slots), counters_left_);
  out.ok = search.Run();
  out.steps = search.steps();
  if (out.ok) {
    out.results = Results(search, in_.claims, nodes);
    return out;
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
