#include "quota/queue_manager.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "api/pod_resources.h"
#include "api/resource.h"
#include "dra/dra_manager.h"
#include "gang/default_podgroup_manager.h"
#include "gang/dialects.h"

namespace phalanx::quota {

namespace {

bool Terminal(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}

void AddTo(ResourceList& to, const ResourceList& v, int sign) {
  for (const auto& [r, a] : v) {
    int64_t& x = to[r];
    x += sign * a;
    if (x == 0) to.erase(r);
  }
}

// Calls f(name, amount) for each entry of QueueManager::RequestOf(r): the non-zero cpu
// (milli), memory, ephemeral-storage and extended resources, then "pods": 1. The one list
// of what a request holds, for RequestOf and SameRequest.
template <typename F>
void ForEachRequestEntry(const api::Resource& r, F&& f) {
  static const std::string kCpu = "cpu", kMemory = "memory", kEphemeral = "ephemeral-storage",
                           kPods = "pods";
  if (r.milli_cpu) f(kCpu, r.milli_cpu);
  if (r.memory) f(kMemory, r.memory);
  if (r.ephemeral_storage) f(kEphemeral, r.ephemeral_storage);
  for (const auto& [id, v] : r.scalar) {
    if (v) f(api::ScalarResourceName(id), v);
  }
  f(kPods, int64_t{1});
}

// Whether `list` is RequestOf(r), without building it (a pod's bind leaves its request as
// it was: OnPodUpdate keeps the entry's list then).
bool SameRequest(const ResourceList& list, const api::Resource& r) {
  size_t n = 0;
  bool same = true;
  ForEachRequestEntry(r, [&](const std::string& name, int64_t v) {
    ++n;
    if (!same) return;
    auto it = list.find(name);
    same = it != list.end() && it->second == v;
  });
  return same && list.size() == n;
}

int64_t Get(const ResourceList& l, const std::string& r) {
  auto it = l.find(r);
  return it == l.end() ? 0 : it->second;
}

constexpr double kEps = 1e-6;

// Whether the pod's claims take devices that count as nvidia.com/gpu: then its GPU-share
// annotations describe those devices and are not charged on top (a trace's GPU shares
// turned into whole DRA devices keep their annotations, replay/dra_gpus.h).
bool ClaimsTakeGpus(const DeviceCharge& c) {
  if (Get(c.own, kGpuQuotaResource) > 0) return true;
  for (const auto& [id, charge] : c.shared) {
    if (Get(charge, kGpuQuotaResource) > 0) return true;
  }
  return false;
}

}  // namespace

QueueManager::QueueManager(const gang::PodGroupManager* gangs) : gangs_(gangs) {}

ResourceList QueueManager::RequestOf(const api::Pod& pod) {
  return RequestOf(api::PodRequests(pod));
}

ResourceList QueueManager::RequestOf(const api::Resource& r) {
  ResourceList out;
  ForEachRequestEntry(r, [&](const std::string& name, int64_t v) { out[name] = v; });
  return out;
}

void QueueManager::OnObjectAdd(const api::UnstructuredPtr& obj) {
  absl::MutexLock l(&mu_);
  if (IsQueueObject(*obj)) {
    objects_[obj->Key()] = obj;
    RebuildTreeLocked();
    return;
  }
  if (gangs_ && !objects_.empty() && gang::IsGangObject(*obj)) {
    // A PodGroup's spec.queue may name a queue for members that arrived first.
    std::set<std::string> keys;
    for (const auto& s : gang::SpecsFromObject(*obj)) keys.insert(s.key);
    for (auto& [k, e] : pods_) {
      if (e.gang_spec.empty() || keys.count(e.gang_spec)) RefreshLocked(e);
    }
    ++generation_;
  }
}

void QueueManager::OnObjectStatusUpdate(const api::UnstructuredPtr& obj) {
  {
    absl::MutexLock l(&mu_);
    auto it = objects_.find(obj->Key());
    if (it != objects_.end() && IsQueueObject(*obj)) {
      it->second = obj;  // spec unchanged: the tree and the counts stand
      return;
    }
  }
  OnObjectAdd(obj);  // not seen before (or not a queue kind): the full path
}

void QueueManager::OnObjectDelete(const api::UnstructuredPtr& obj) {
  absl::MutexLock l(&mu_);
  if (objects_.erase(obj->Key())) RebuildTreeLocked();
}

void QueueManager::RebuildTreeLocked() {
  std::vector<QueueSpec> specs;
  for (const auto& [k, o] : objects_) {
    if (auto q = QueueFromObject(*o)) specs.push_back(std::move(*q));
  }
  tree_ = BuildQueueTree(specs);
  // Volcano's consumable-capacity keys (<dim>.deviceclass/<DeviceClass>) are not charged:
  // say so rather than leave the limit unenforced in silence.
  for (const auto& [name, q] : tree_.queues) {
    for (const auto* list : {&q.limit, &q.guarantee}) {
      for (const auto& [r, v] : *list) {
        const size_t at = r.find(std::string(".") + kDeviceClassCountPrefix);
        if (at == std::string::npos || at == 0) continue;
        std::string w = q.source + ": " + r +
                        " (Volcano DRA consumable capacity) is not charged by any pod: this "
                        "limit is not enforced";
        if (warned_.insert(w).second) warnings_.push_back(std::move(w));
      }
    }
  }
  bool min_runtime = false;
  for (const auto& [n, q] : tree_.queues) min_runtime = min_runtime || q.preempt_min_runtime_ns;
  any_preempt_min_runtime_.store(min_runtime, std::memory_order_release);
  invalid_quota_by_namespace_.clear();
  for (const auto& [name, q] : tree_.queues) {
    if (!q.namespace_.empty() && tree_.errors.count(name) &&
        !tree_.quota_by_namespace.count(q.namespace_) &&
        !invalid_quota_by_namespace_.count(q.namespace_)) {
      invalid_quota_by_namespace_[q.namespace_] = name;
    }
  }
  for (auto& [k, e] : pods_) UncountLocked(e);
  shared_claims_.clear();  // every pod uncounted: no claim is in use (kept exact anyway)
  allocated_.clear();
  pending_.clear();
  running_pods_.clear();
  pending_pods_.clear();
  own_demand_.clear();
  if (objects_.empty()) {
    // No queue object: nothing is counted until one arrives (Entry::stale).
    for (auto& [k, e] : pods_) e.stale = true;
    ++generation_;
    return;
  }
  for (auto& [k, e] : pods_) {
    std::string g, gs;
    e.assignment = ResolveLocked(*e.pod, &g, &gs);
    e.gang = std::move(g);
    e.gang_spec = std::move(gs);
    if (e.stale || !e.pod->spec.resource_claims.empty()) {
      ChargeLocked(e, nullptr);
      e.stale = false;
    }
    CountLocked(e);
  }
  ++generation_;
}

Assignment QueueManager::ResolveLocked(const api::Pod& pod, std::string* gang,
                                       std::string* gang_spec) const {
  Assignment a;
  std::shared_ptr<const gang::GangRef> ref;
  if (gangs_) ref = gangs_->RefPtrOf(pod);
  if (ref) {
    *gang = ref->key;
    *gang_spec = ref->spec_key;
  }
  // Non-empty value of `k` in `m`. Pods carry few labels/annotations: scan small maps
  // instead of building a std::string key for find (the comparator is not transparent).
  auto lookup = [](const std::map<std::string, std::string>& m,
                   const char* k) -> const std::string* {
    const std::string* v = nullptr;
    if (m.size() <= 8) {
      const std::string_view key(k);
      for (const auto& [mk, mv] : m) {
        if (mk == key) {
          v = &mv;
          break;
        }
      }
    } else if (auto it = m.find(k); it != m.end()) {
      v = &it->second;
    }
    return v == nullptr || v->empty() ? nullptr : v;
  };
  auto label = [&](const char* k) { return lookup(pod.metadata.labels, k); };
  auto annotation = [&](const char* k) { return lookup(pod.metadata.annotations, k); };
  if (const auto* v = label(kKAIQueueLabel)) {
    a.queue = *v;
    a.via = std::string("label ") + kKAIQueueLabel;
  } else if (const auto* v2 = annotation(kVolcanoQueueAnnotation)) {
    a.queue = *v2;
    a.via = std::string("annotation ") + kVolcanoQueueAnnotation;
  } else if (const auto* v3 = label(kKoordinatorQuotaLabel)) {
    a.queue = *v3;
    a.via = std::string("label ") + kKoordinatorQuotaLabel;
  } else if (ref && gangs_) {
    auto sum = gangs_->SummaryOf(ref->key);
    if (sum && sum->spec && !sum->spec->queue.empty()) {
      a.queue = sum->spec->queue;
      a.via = "spec.queue of " + std::string(gang::DialectName(sum->spec->dialect)) + " PodGroup " +
              sum->spec->namespace_ + "/" + sum->spec->name;
    }
  }
  if (a.queue.empty()) {
    if (tree_.quota_by_namespace.empty() && invalid_quota_by_namespace_.empty()) return a;
    const std::string ns = pod.metadata.namespace_.empty() ? "default" : pod.metadata.namespace_;
    auto it = tree_.quota_by_namespace.find(ns);
    if (it != tree_.quota_by_namespace.end()) {
      a.queue = it->second;
      a.via = "ElasticQuota of namespace " + ns;
    } else if (auto bad = invalid_quota_by_namespace_.find(ns);
               bad != invalid_quota_by_namespace_.end()) {
      // The namespace's only ElasticQuotas are invalid: its pods wait (with the reason)
      // rather than run as if the namespace had no quota.
      a.queue = bad->second;
      a.via = "ElasticQuota of namespace " + ns;
      a.error = "queue " + a.queue + " is invalid: " + tree_.errors.at(a.queue);
    }
    return a;
  }
  if (!tree_.Has(a.queue)) {
    a.error = "queue " + a.queue + " does not exist (named by " + a.via + ")";
  } else if (auto e = tree_.errors.find(a.queue); e != tree_.errors.end()) {
    a.error = "queue " + a.queue + " is invalid: " + e->second;
  }
  return a;
}

void QueueManager::UncountLocked(Entry& e) {
  if (!e.counted) return;
  if (e.counted_allocated) AccrueLocked();
  const int64_t n = e.counted_allocated ? 1 : 0;
  if (e.counted_allocated) AddTo(total_allocated_, e.request, -1);
  if (!e.counted_queue.empty()) {
    AddTo(own_demand_[e.counted_queue], e.request, -1);
    for (const auto& q : tree_.PathToRoot(e.counted_queue)) {
      if (e.counted_allocated) {
        AddTo(allocated_[q], e.request, -1);
        running_pods_[q] -= n;
      } else {
        AddTo(pending_[q], e.request, -1);
        pending_pods_[q] -= 1;
      }
    }
  }
  for (const auto& [id, charge] : e.shared) {
    ShareLocked(e.counted_queue, id, charge, e.counted_allocated, -1);
  }
  e.counted = false;
}

void QueueManager::CountLocked(Entry& e) {
  if (e.stale) return;  // no queue object yet: counted when one arrives
  if (e.allocated) AccrueLocked();
  e.counted = true;
  e.counted_allocated = e.allocated;
  e.counted_queue.clear();
  if (e.allocated) AddTo(total_allocated_, e.request, +1);
  if (!e.assignment.queue.empty() && e.assignment.error.empty()) {
    e.counted_queue = e.assignment.queue;
    AddTo(own_demand_[e.counted_queue], e.request, +1);
    for (const auto& q : tree_.PathToRoot(e.counted_queue)) {
      if (e.allocated) {
        AddTo(allocated_[q], e.request, +1);
        running_pods_[q] += 1;
      } else {
        AddTo(pending_[q], e.request, +1);
        pending_pods_[q] += 1;
      }
    }
  }
  for (const auto& [id, charge] : e.shared) {
    ShareLocked(e.counted_queue, id, charge, e.allocated, +1);
  }
}

void QueueManager::ApplyLocked(const std::string& queue, const ResourceList& charge, bool allocated,
                               int sign) {
  if (allocated) AddTo(total_allocated_, charge, sign);
  if (queue.empty()) return;
  AddTo(own_demand_[queue], charge, sign);
  for (const auto& q : tree_.PathToRoot(queue)) {
    AddTo(allocated ? allocated_[q] : pending_[q], charge, sign);
  }
}

void QueueManager::ShareLocked(const std::string& queue, const std::string& id,
                               const ResourceList& charge, bool allocated, int delta) {
  const auto key = std::make_pair(queue, id);
  SharedClaim& s = shared_claims_[key];
  if (s.pods > 0) ApplyLocked(queue, s.charge, s.allocated > 0, -1);
  if (delta > 0) s.charge = charge;  // the latest pod's view of the claim
  s.pods += delta;
  if (allocated) s.allocated += delta;
  if (s.pods > 0) {
    ApplyLocked(queue, s.charge, s.allocated > 0, +1);
  } else {
    shared_claims_.erase(key);
  }
}

void QueueManager::ChargeLocked(Entry& e, const api::Resource* requests) {
  e.request = requests ? RequestOf(*requests) : RequestOf(*e.pod);
  e.shared.clear();
  const bool in_queue = !e.assignment.queue.empty() && e.assignment.error.empty();
  DeviceCharge c;
  if (dra_ && !e.pod->spec.resource_claims.empty()) c = PodDeviceCharge(*dra_, *e.pod, mapper_);
  if (!e.pod->metadata.annotations.empty() && !ClaimsTakeGpus(c)) {
    std::string note;
    if (const int64_t milli = GpuShareMilli(*e.pod, &note); milli > 0) {
      e.request[kGpuShareMilli] = milli;
    }
    if (!note.empty() && in_queue) {
      std::string w = "queue " + e.assignment.queue + ": " + note;
      if (warned_.insert(w).second) warnings_.push_back(std::move(w));
    }
  }
  AddTo(e.request, c.own, +1);
  e.shared = std::move(c.shared);
  if (in_queue) WarnLocked(e.assignment.queue, c);
}

void QueueManager::WarnLocked(const std::string& queue, const DeviceCharge& c) const {
  // A lambda is not seen to hold mu_ by the thread-safety analysis: the annotation says so.
  auto warn = [&](std::string w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (warned_.insert(w).second) warnings_.push_back(std::move(w));
  };
  for (const auto& n : c.notes) warn(n);
  if (c.unmapped.empty()) return;
  // The unmapped class matters where a queue of the pod's path limits (or guarantees)
  // devices: an extended resource or a deviceclass/ key, but not deviceclass/<class>.
  for (const auto& q : tree_.PathToRoot(queue)) {
    const QueueSpec& spec = tree_.queues.at(q);
    for (const auto& [cls, claim] : c.unmapped) {
      const std::string own_key = kDeviceClassCountPrefix + cls;
      if (spec.limit.count(own_key) || spec.guarantee.count(own_key)) continue;
      std::string limited;
      for (const auto* list : {&spec.limit, &spec.guarantee}) {
        for (const auto& [r, v] : *list) {
          if (r == "cpu" || r == "memory" || r == "ephemeral-storage" || r == "pods") continue;
          if (limited.empty()) limited = r;
        }
      }
      if (limited.empty()) continue;
      warn("queue " + q + " limits " + limited + " but device class " + cls + " (" + claim +
           ") maps to no quota resource: its devices count only as " + own_key +
           "; map it in QueuesArgs deviceClassMappings");
    }
  }
}

void QueueManager::UseDRA(const dra::DefaultDRAManager* dra) {
  absl::MutexLock l(&mu_);
  dra_ = dra;
  device_capacity_key_.clear();
}

void QueueManager::SetDeviceClassMappings(const std::vector<DeviceClassMapping>& mappings) {
  absl::MutexLock l(&mu_);
  if (mappings == mapper_.mappings()) return;
  mapper_ = DeviceClassMapper(mappings);
  device_capacity_key_.clear();
  for (auto& [k, e] : pods_) {
    if (e.stale || e.pod->spec.resource_claims.empty()) continue;
    UncountLocked(e);
    ChargeLocked(e, nullptr);
    CountLocked(e);
  }
  ++generation_;
}

ResourceList QueueManager::ChargeOf(const std::vector<const api::Pod*>& pods) const {
  absl::MutexLock l(&mu_);
  ResourceList out;
  std::set<std::string> seen;
  for (const api::Pod* p : pods) {
    AddTo(out, RequestOf(*p), +1);
    DeviceCharge c;
    if (dra_ && !p->spec.resource_claims.empty()) c = PodDeviceCharge(*dra_, *p, mapper_);
    if (!p->metadata.annotations.empty() && !ClaimsTakeGpus(c)) {
      out[kGpuShareMilli] += GpuShareMilli(*p, nullptr);
      if (out[kGpuShareMilli] == 0) out.erase(kGpuShareMilli);
    }
    if (!dra_ || p->spec.resource_claims.empty()) continue;
    std::string queue;
    if (auto it = pods_.find(p->Key()); it != pods_.end() && !it->second.stale) {
      queue = it->second.assignment.queue;
    } else {
      std::string g, gs;
      queue = ResolveLocked(*p, &g, &gs).queue;
    }
    if (!queue.empty()) WarnLocked(queue, c);
    AddTo(out, c.own, +1);
    for (const auto& [id, charge] : c.shared) {
      if (!seen.insert(id).second) continue;
      auto s = shared_claims_.find({queue, id});
      if (s != shared_claims_.end() && s->second.allocated > 0) continue;  // held already
      AddTo(out, charge, +1);
    }
  }
  return out;
}

std::vector<std::string> QueueManager::Warnings() const {
  absl::MutexLock l(&mu_);
  return warnings_;
}

void QueueManager::RefreshLocked(Entry& e) {
  UncountLocked(e);
  if (objects_.empty()) {
    e.stale = true;
    return;
  }
  std::string g, gs;
  e.assignment = ResolveLocked(*e.pod, &g, &gs);
  e.gang = std::move(g);
  e.gang_spec = std::move(gs);
  if (e.stale || !e.pod->spec.resource_claims.empty()) {
    ChargeLocked(e, nullptr);
    e.stale = false;
  }
  CountLocked(e);
}

void QueueManager::OnPodAdd(const api::PodPtr& pod, const api::Resource* requests) {
  if (Terminal(*pod)) return;
  absl::MutexLock l(&mu_);
  Entry& e = pods_[pod->Key()];
  UncountLocked(e);
  e.pod = pod;
  e.allocated = !pod->spec.node_name.empty();
  if (objects_.empty()) {
    // No queue object: the pod is only remembered (Entry::stale).
    e.stale = true;
    ++generation_;
    return;
  }
  e.stale = false;
  std::string g, gs;
  e.assignment = ResolveLocked(*pod, &g, &gs);
  e.gang = std::move(g);
  e.gang_spec = std::move(gs);
  ChargeLocked(e, requests);
  CountLocked(e);
  ++generation_;
}

void QueueManager::OnPodUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod,
                               const api::Resource* requests) {
  if (Terminal(*new_pod)) {
    OnPodDelete(old_pod);
    return;
  }
  absl::MutexLock l(&mu_);
  auto it = pods_.find(new_pod->Key());
  if (objects_.empty()) {
    // No queue object: the pod is only remembered (Entry::stale).
    Entry& e = it == pods_.end() ? pods_[new_pod->Key()] : it->second;
    UncountLocked(e);
    e.pod = new_pod;
    e.allocated = e.allocated || !new_pod->spec.node_name.empty();
    e.stale = true;
    ++generation_;
    return;
  }
  std::optional<api::Resource> computed;
  if (requests == nullptr) requests = &computed.emplace(api::PodRequests(*new_pod));
  if (it == pods_.end()) {
    Entry& e = pods_[new_pod->Key()];
    e.pod = new_pod;
    e.allocated = !new_pod->spec.node_name.empty();
    std::string g, gs;
    e.assignment = ResolveLocked(*new_pod, &g, &gs);
    e.gang = std::move(g);
    e.gang_spec = std::move(gs);
    ChargeLocked(e, requests);
    CountLocked(e);
  } else {
    Entry& e = it->second;
    UncountLocked(e);
    e.pod = new_pod;
    if (!new_pod->spec.node_name.empty() && !e.allocated) {
      e.allocated = true;
      holds_.erase(e.assignment.queue);  // the reclaiming queue got its capacity
    }
    std::string g, gs;
    e.assignment = ResolveLocked(*new_pod, &g, &gs);
    e.gang = std::move(g);
    e.gang_spec = std::move(gs);
    // A pod with claims is charged again (its claims may have been created or allocated
    // since); without, its request changes only with its spec.
    if (e.stale || !new_pod->spec.resource_claims.empty() || !SameRequest(e.request, *requests)) {
      ChargeLocked(e, requests);
    }
    e.stale = false;
    CountLocked(e);
  }
  ++generation_;
}

void QueueManager::OnPodDelete(const api::PodPtr& pod) {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod->Key());
  if (it == pods_.end()) return;
  UncountLocked(it->second);
  pods_.erase(it);
  ++generation_;
}

void QueueManager::MarkAssumed(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || it->second.allocated) return;
  UncountLocked(it->second);
  it->second.allocated = true;
  holds_.erase(it->second.assignment.queue);  // the reclaiming queue got its capacity
  if (!it->second.pod->spec.resource_claims.empty()) ChargeLocked(it->second, nullptr);
  CountLocked(it->second);
  ++generation_;
}

void QueueManager::MarkForgotten(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end() || !it->second.allocated || !it->second.pod->spec.node_name.empty()) return;
  UncountLocked(it->second);
  it->second.allocated = false;
  CountLocked(it->second);
  ++generation_;
}

void QueueManager::SetCapacity(const ResourceList& capacity) {
  absl::MutexLock l(&mu_);
  if (dra_) {
    // The devices of the ResourceSlices, per quota resource they charge, recomputed when a
    // class or slice changed (by identity: the DRA manager's views are immutable).
    const auto classes = dra_->Classes();
    const auto slices = dra_->Slices();
    std::vector<const void*> key{classes.get()};
    for (const auto& sl : slices) key.push_back(sl.get());
    if (key != device_capacity_key_) {
      device_capacity_ = DeviceCapacity(*dra_, mapper_);
      device_capacity_key_ = std::move(key);
    }
  }
  ResourceList total = capacity;
  for (const auto& [r, v] : device_capacity_) total[r] += v;
  if (total == capacity_) return;
  AccrueLocked();
  capacity_ = std::move(total);
  ++generation_;
}

bool QueueManager::HasQueues() const {
  absl::MutexLock l(&mu_);
  return !objects_.empty();
}

uint64_t QueueManager::Generation() const {
  absl::MutexLock l(&mu_);
  return generation_;
}

Assignment QueueManager::QueueOf(const api::Pod& pod) const {
  absl::MutexLock l(&mu_);
  auto it = pods_.find(pod.Key());
  if (it != pods_.end() && !it->second.stale) return it->second.assignment;
  std::string g, gs;
  return ResolveLocked(pod, &g, &gs);
}

void QueueManager::SetReclaimHold(const std::string& queue, api::Timestamp until) {
  absl::MutexLock l(&mu_);
  holds_[queue] = until;
}

bool QueueManager::HasReclaimHold(const std::string& queue, api::Timestamp now) const {
  absl::MutexLock l(&mu_);
  auto it = holds_.find(queue);
  return it != holds_.end() && it->second > now;
}

api::Status QueueManager::CheckAdmission(const std::string& queue, const ResourceList& request,
                                         api::Timestamp now) const {
  absl::MutexLock l(&mu_);
  if (!tree_.Usable(queue)) return absl::OkStatus();
  for (const auto& [holder, until] : holds_) {
    if (holder == queue || until <= now) continue;
    EnsureShareLocked();
    auto a = allocated_.find(queue);
    auto s = share_.find(queue);
    for (const auto& [r, want] : request) {
      if (r == "pods" || r == kGpuShareMilli || want <= 0) continue;
      const double have = a == allocated_.end() ? 0.0 : static_cast<double>(Get(a->second, r));
      const double deserved = s == share_.end() || !s->second.count(r) ? 0.0 : s->second.at(r);
      if (have + static_cast<double>(want) > deserved + kEps) {
        return absl::ResourceExhaustedError("waiting for queue " + queue +
                                            ": capacity reclaimed by queue " + holder +
                                            " is held for it");
      }
    }
  }
  // GPU shares (device_charge.h): nvidia.com/gpu is checked in milli-GPU, whole devices and
  // shares together; the share key itself is no queue's resource.
  ResourceList req = request;
  if (req.erase(kGpuShareMilli)) req.emplace(kGpuQuotaResource, 0);
  const auto path = tree_.PathToRoot(queue);
  for (const auto& q : path) {
    const QueueSpec& spec = tree_.queues.at(q);
    auto ait = allocated_.find(q);
    static const ResourceList kEmpty;
    const ResourceList& used = ait == allocated_.end() ? kEmpty : ait->second;
    const std::string who = q == queue ? "queue " + q : "queue " + q + " (parent of " + queue + ")";
    for (const auto& entry : req) {
      const std::string& r = entry.first;  // named, not bound: the lambdas below capture it
      const int64_t amount = entry.second;
      const bool gpu = r == kGpuQuotaResource;
      const int64_t k = gpu ? 1000 : 1;  // milli-GPU
      const auto amount_of = [&](const ResourceList& l) { return gpu ? GpuMilli(l) : Get(l, r); };
      const auto format = [&](int64_t x) { return gpu ? FormatGpuMilli(x) : FormatAmount(r, x); };
      const int64_t want = gpu ? GpuMilli(request) : amount;
      if (want <= 0 || (r == "pods" && !spec.limit.count("pods"))) continue;
      const int64_t limit = spec.LimitOf(r) == INT64_MAX ? INT64_MAX : spec.LimitOf(r) * k;
      const int64_t guarantee = spec.GuaranteeOf(r) * k;
      const int64_t u = amount_of(used);
      int64_t free = limit == INT64_MAX ? INT64_MAX : std::max<int64_t>(0, limit - u);
      std::string detail;
      if (spec.borrows_idle_min && u + want > guarantee) {
        // CapacityScheduling: above min only while the sum over all top-level quotas stays
        // within the sum of their min (idle min is borrowed, never more). Only resources
        // some quota names in min are constrained this way.
        int64_t sum_min = 0, sum_used = 0;
        bool named = false;
        for (const auto& [n, s] : tree_.queues) {
          if (!s.borrows_idle_min || !s.parent.empty() || tree_.errors.count(n)) continue;
          named = named || s.guarantee.count(r) > 0;
          sum_min += s.GuaranteeOf(r) * k;
          auto a = allocated_.find(n);
          if (a != allocated_.end()) sum_used += amount_of(a->second);
        }
        const int64_t borrowable =
            std::max<int64_t>({int64_t{0}, guarantee - u, sum_min - sum_used});
        if (named && borrowable < free) {
          free = borrowable;
          detail = " (min " + format(guarantee) + ", idle min of all quotas " +
                   format(std::max<int64_t>(0, sum_min - sum_used)) + ")";
        }
      }
      if (want > free) {
        const std::string f = format(free);
        return absl::ResourceExhaustedError("waiting for " + who + " quota: needs " + format(want) +
                                            ", " + f.substr(0, f.find(' ')) + " free" + detail);
      }
    }
  }
  return LendingCheckLocked(queue, request);
}

int64_t QueueManager::KeptIdleLocked(const std::string& q, const std::string& r,
                                     const std::set<std::string>& path) const {
  int64_t kids = 0;
  auto ch = tree_.children.find(q);
  if (ch != tree_.children.end()) {
    for (const auto& c : ch->second) kids += KeptIdleLocked(c, r, path);
  }
  if (path.count(q) || !tree_.Usable(q)) return kids;
  const QueueSpec& spec = tree_.queues.at(q);
  auto lend = spec.lending_limit.find(r);
  if (lend == spec.lending_limit.end()) return kids;
  auto a = allocated_.find(q);
  const int64_t used = a == allocated_.end() ? 0 : Get(a->second, r);
  return std::max(kids, std::max<int64_t>(0, spec.GuaranteeOf(r) - lend->second - used));
}

api::Status QueueManager::LendingCheckLocked(const std::string& queue,
                                             const ResourceList& request) const {
  bool any = false;
  for (const auto& [n, spec] : tree_.queues) any = any || !spec.lending_limit.empty();
  if (!any) return absl::OkStatus();
  const auto p = tree_.PathToRoot(queue);
  const std::set<std::string> path(p.begin(), p.end());
  auto roots = tree_.children.find("");
  for (const auto& [r, want] : request) {
    if (r == "pods" || want <= 0 || !capacity_.count(r)) continue;
    int64_t kept = 0;
    if (roots != tree_.children.end()) {
      for (const auto& q : roots->second) kept += KeptIdleLocked(q, r, path);
    }
    if (kept == 0) continue;
    const int64_t free = std::max<int64_t>(0, Get(capacity_, r) - Get(total_allocated_, r) - kept);
    if (want > free) {
      const std::string f = FormatAmount(r, free);
      return absl::ResourceExhaustedError(
          "waiting for queue " + queue + ": needs " + FormatAmount(r, want) + ", " +
          f.substr(0, f.find(' ')) + " free outside the idle quota other queues do not " +
          "lend (lendingLimit: " + FormatAmount(r, kept) + " kept)");
    }
  }
  return absl::OkStatus();
}

void QueueManager::AccrueLocked() const {
  if (usage_) usage_->Accrue(now_(), allocated_, capacity_);
}

void QueueManager::UseClock(std::function<api::Timestamp()> now) {
  absl::MutexLock l(&mu_);
  if (usage_) AccrueLocked();
  now_ = std::move(now);
}

bool QueueManager::PreemptProtected(const api::Pod& victim) const {
  // Every preemption dry run asks for each victim: no lock while no queue sets one.
  if (!any_preempt_min_runtime_.load(std::memory_order_acquire)) return false;
  absl::MutexLock l(&mu_);
  if (!now_ || !victim.status.start_time) return false;
  auto it = pods_.find(victim.Key());
  if (it == pods_.end() || it->second.counted_queue.empty()) return false;
  for (const auto& q : tree_.PathToRoot(it->second.counted_queue)) {
    const auto& min = tree_.queues.at(q).preempt_min_runtime_ns;
    if (min) return *victim.status.start_time + *min > now_();
  }
  return false;
}

int64_t QueueManager::ReclaimMinRuntimeLocked(const std::string& reclaimer,
                                              const std::string& victim_queue) const {
  std::vector<std::string> rp = tree_.PathToRoot(reclaimer);
  std::vector<std::string> vp = tree_.PathToRoot(victim_queue);
  std::reverse(rp.begin(), rp.end());  // top level first, as KAI's getQueueHierarchyPath
  std::reverse(vp.begin(), vp.end());
  if (vp.empty()) return 0;
  if (rp.empty() || rp[0] != vp[0]) {
    return tree_.queues.at(vp[0]).reclaim_min_runtime_ns.value_or(0);
  }
  size_t lca = 0;
  for (size_t i = 0; i < std::min(rp.size(), vp.size()) && rp[i] == vp[i]; ++i) lca = i;
  if (lca + 1 < vp.size()) ++lca;
  for (size_t i = lca + 1; i-- > 0;) {
    const auto& min = tree_.queues.at(vp[i]).reclaim_min_runtime_ns;
    if (min) return *min;
  }
  return 0;
}

void QueueManager::EnableTimeBasedFairShare(const UsageParams& params,
                                            std::function<api::Timestamp()> now) {
  absl::MutexLock l(&mu_);
  now_ = std::move(now);
  usage_ = std::make_unique<UsageTracker>(params);
  usage_->Accrue(now_(), allocated_, capacity_);
  share_epoch_ = -1;
  ++generation_;
}

NormalizedUsage QueueManager::UsageNow() const {
  absl::MutexLock l(&mu_);
  if (!usage_) return {};
  AccrueLocked();
  return usage_->Normalized(now_());
}

void QueueManager::EnsureShareLocked() const {
  // With time-based fair share the shares also move with time: recomputed once per usage
  // bucket (window / 64) even when nothing else changed.
  const int64_t epoch = usage_ ? usage_->Epoch(now_()) : -1;
  if (share_generation_ == generation_ && share_epoch_ == epoch) return;
  std::map<std::string, ResourceList> demand;
  for (const auto& [q, d] : own_demand_) demand[q] = FoldGpuShares(d);
  if (usage_) {
    AccrueLocked();
    const NormalizedUsage u = usage_->Normalized(now_());
    share_ = ComputeFairShare(tree_, capacity_, demand, &u, usage_->params().k_value);
  } else {
    share_ = ComputeFairShare(tree_, capacity_, demand);
  }
  share_generation_ = generation_;
  share_epoch_ = epoch;
}

double QueueManager::DominantShareOf(const std::string& queue) const {
  absl::MutexLock l(&mu_);
  if (queue.empty() || !tree_.Usable(queue)) return 0;
  EnsureShareLocked();
  auto a = allocated_.find(queue);
  auto s = share_.find(queue);
  if (a == allocated_.end()) return 0;
  static const Share kNone;
  return DominantShare(FoldGpuShares(a->second), s == share_.end() ? kNone : s->second);
}

ResourceList QueueManager::FreeCapacity() const {
  absl::MutexLock l(&mu_);
  ResourceList f;
  for (const auto& [r, c] : capacity_) f[r] = std::max<int64_t>(0, c - Get(total_allocated_, r));
  return f;
}

const ResourceList& QueueManager::AllocatedLocked(const std::string& q) const {
  static const ResourceList kEmpty;
  auto it = allocated_.find(q);
  return it == allocated_.end() ? kEmpty : it->second;
}

double QueueManager::DeservedLocked(const std::string& q, const std::string& r) const {
  auto it = share_.find(q);
  if (it == share_.end()) return 0.0;
  auto jt = it->second.find(r);
  return jt == it->second.end() ? 0.0 : jt->second;
}

api::Status QueueManager::ReclaimerCheckLocked(const std::string& queue,
                                               const ResourceList& request) const {
  if (!tree_.Usable(queue))
    return absl::FailedPreconditionError("queue " + queue + " is not usable");
  // The reclaimer must stay within its deserved share (KAI reclaim: a queue below its fair
  // share takes back what it deserves, never more).
  for (const auto& [r, want] : request) {
    if (want <= 0 || r == "pods") continue;
    const double deserved = DeservedLocked(queue, r);
    const int64_t have = Get(AllocatedLocked(queue), r);
    if (static_cast<double>(have + want) > deserved + kEps) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.6g", deserved);
      return absl::FailedPreconditionError(
          "queue " + queue + " would exceed its deserved share of " + r + " (" +
          std::to_string(have) + " allocated + " + std::to_string(want) + " > " + buf + ")");
    }
  }
  return absl::OkStatus();
}

std::vector<ReclaimUnit> QueueManager::VictimUnitsLocked(const std::string& queue) const {
  // Every allocated unit of another reclaimable queue, in victim order.
  std::map<std::string, ReclaimUnit> units;
  std::map<std::string, api::Timestamp> newest;
  std::map<std::string, api::Timestamp> last_start;  // unit -> latest member start
  for (const auto& [k, e] : pods_) {
    if (!e.allocated || !e.counted || e.counted_queue.empty() || e.counted_queue == queue) continue;
    if (e.pod->metadata.deletion_timestamp) continue;
    const QueueSpec& spec = tree_.queues.at(e.counted_queue);
    if (!spec.reclaimable) continue;
    const std::string key = e.gang.empty() ? k : e.gang;
    ReclaimUnit& u = units[key];
    if (u.pods.empty()) {
      u.key = key;
      u.queue = e.counted_queue;
      u.priority = INT32_MIN;
    }
    u.pods.push_back(e.pod);
    AddTo(u.request, e.request, +1);
    u.priority = std::max(u.priority, e.pod->spec.priority.value_or(0));
    newest[key] = std::max(newest[key], e.pod->metadata.creation_timestamp);
    if (e.pod->status.start_time) {
      last_start[key] = std::max(last_start[key], *e.pod->status.start_time);
    }
  }
  std::vector<ReclaimUnit> order;
  const api::Timestamp now = now_ ? now_() : 0;
  for (auto& [k, u] : units) {
    auto ls = last_start.find(k);
    if (now_ && ls != last_start.end() &&
        ls->second + ReclaimMinRuntimeLocked(queue, u.queue) > now) {
      continue;  // KAI minruntime: protected from reclaim until it has run that long
    }
    order.push_back(std::move(u));
  }
  std::stable_sort(order.begin(), order.end(), [&](const ReclaimUnit& a, const ReclaimUnit& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (newest[a.key] != newest[b.key]) return newest[a.key] > newest[b.key];
    return a.key < b.key;
  });
  return order;
}

std::vector<ReclaimUnit> QueueManager::SelectReclaimVictims(const std::string& queue,
                                                            const ResourceList& request,
                                                            const ResourceList& free,
                                                            std::string* why) const {
  absl::MutexLock l(&mu_);
  why->clear();
  EnsureShareLocked();
  if (api::Status no = ReclaimerCheckLocked(queue, request); !no.ok()) {
    *why = std::string(no.message());
    return {};
  }
  ResourceList needed;
  for (const auto& [r, want] : request) {
    if (want <= 0 || r == "pods") continue;
    const int64_t short_by = want - Get(free, r);
    if (short_by > 0) needed[r] = short_by;
  }
  if (needed.empty()) {
    *why = "the cluster has room for the request; nothing to reclaim";
    return {};
  }
  std::map<std::string, ResourceList> left;  // victim queues' allocation as victims go
  std::vector<ReclaimUnit> out;
  for (ReclaimUnit& u : VictimUnitsLocked(queue)) {
    bool helps = false;
    for (const auto& [r, n] : needed) helps = helps || (n > 0 && Get(u.request, r) > 0);
    if (!helps) continue;
    const auto path = tree_.PathToRoot(u.queue);
    bool ok = true, above = false;
    for (const auto& q : path) {
      if (!left.count(q)) left[q] = AllocatedLocked(q);
      const QueueSpec& spec = tree_.queues.at(q);
      for (const auto& [r, amount] : u.request) {
        if (r == "pods") continue;
        // Never below a queue's guarantee.
        if (Get(left[q], r) - amount < spec.GuaranteeOf(r)) ok = false;
      }
    }
    // Only from a queue above its deserved share in a needed resource.
    for (const auto& [r, n] : needed) {
      if (n > 0 && static_cast<double>(Get(left[u.queue], r)) > DeservedLocked(u.queue, r) + kEps) {
        above = true;
      }
    }
    if (!ok || !above) continue;
    for (const auto& q : path) AddTo(left[q], u.request, -1);
    for (auto& [r, n] : needed) n -= Get(u.request, r);
    out.push_back(std::move(u));
    bool done = true;
    for (const auto& [r, n] : needed) done = done && n <= 0;
    if (done) return out;
  }
  std::string short_list;
  for (const auto& [r, n] : needed) {
    if (n > 0) short_list += (short_list.empty() ? "" : ", ") + FormatAmount(r, n);
  }
  *why = "queues above their deserved share cannot free " + short_list +
         " without dropping below their guarantee";
  return {};
}

std::vector<ReclaimUnit> QueueManager::ReclaimCandidates(const std::string& queue,
                                                         const ResourceList& request,
                                                         std::string* why) const {
  absl::MutexLock l(&mu_);
  why->clear();
  EnsureShareLocked();
  if (api::Status no = ReclaimerCheckLocked(queue, request); !no.ok()) {
    *why = std::string(no.message());
    return {};
  }
  std::vector<ReclaimUnit> out;
  for (ReclaimUnit& u : VictimUnitsLocked(queue)) {
    bool above = false;  // its queue is above its deserved share in a resource the request needs
    for (const auto& [r, want] : request) {
      if (want <= 0 || r == "pods" || Get(u.request, r) <= 0) continue;
      above = above || static_cast<double>(Get(AllocatedLocked(u.queue), r)) >
                           DeservedLocked(u.queue, r) + kEps;
    }
    if (above) out.push_back(std::move(u));
  }
  if (out.empty()) *why = "no other reclaimable queue is above its deserved share";
  return out;
}

api::Status QueueManager::CheckReclaimVictims(const std::vector<std::string>& queues,
                                              const ResourceList& request,
                                              const std::vector<ReclaimVictim>& victims) const {
  absl::MutexLock l(&mu_);
  EnsureShareLocked();
  std::map<std::string, ResourceList> freed;    // per queue on a victim's path: all victims
  std::map<std::string, ResourceList> largest;  // per victim queue: largest reclaim unit
  for (const auto& v : victims) {
    if (v.queue.empty() || !tree_.Has(v.queue)) continue;
    if (std::find(queues.begin(), queues.end(), v.queue) != queues.end()) continue;
    for (const auto& q : tree_.PathToRoot(v.queue)) AddTo(freed[q], v.request, +1);
    if (!v.reclaim) continue;
    ResourceList& big = largest[v.queue];
    for (const auto& [r, n] : v.request) big[r] = std::max(Get(big, r), n);
  }
  for (const auto& [q, f] : freed) {
    const QueueSpec& spec = tree_.queues.at(q);
    for (const auto& [r, n] : f) {
      if (r == "pods") continue;
      const int64_t left = Get(AllocatedLocked(q), r) - n;
      if (left < spec.GuaranteeOf(r)) {
        return absl::FailedPreconditionError("queue " + q + " would drop below its guarantee (" +
                                             r + ": " + std::to_string(left) + " left, " +
                                             std::to_string(spec.GuaranteeOf(r)) + " guaranteed)");
      }
    }
  }
  for (const auto& [q, big] : largest) {
    bool above = false;
    for (const auto& [r, want] : request) {
      if (want <= 0 || r == "pods" || Get(big, r) <= 0) continue;
      const int64_t until_last = Get(AllocatedLocked(q), r) - Get(freed[q], r) + Get(big, r);
      above = above || static_cast<double>(until_last) > DeservedLocked(q, r) + kEps;
    }
    if (!above)
      return absl::FailedPreconditionError("queue " + q +
                                           " would be reclaimed below its deserved share");
  }
  return absl::OkStatus();
}

QueueStatus QueueManager::StatusOfLocked(const std::string& name, const QueueSpec& spec) const {
  QueueStatus s;
  s.name = name;
  s.parent = spec.parent;
  s.dialect = QueueDialectName(spec.dialect);
  if (auto it = allocated_.find(name); it != allocated_.end()) s.allocated = it->second;
  if (auto it = pending_.find(name); it != pending_.end()) s.pending = it->second;
  s.guarantee = spec.guarantee;
  s.limit = spec.limit;
  if (auto it = share_.find(name); it != share_.end()) s.deserved = it->second;
  s.dominant_share = DominantShare(FoldGpuShares(s.allocated), s.deserved);
  if (auto it = running_pods_.find(name); it != running_pods_.end()) s.running_pods = it->second;
  if (auto it = pending_pods_.find(name); it != pending_pods_.end()) s.pending_pods = it->second;
  if (auto it = tree_.errors.find(name); it != tree_.errors.end()) s.error = it->second;
  return s;
}

std::vector<QueueStatus> QueueManager::Status() const {
  absl::MutexLock l(&mu_);
  EnsureShareLocked();
  std::vector<QueueStatus> out;
  for (const auto& [name, spec] : tree_.queues) out.push_back(StatusOfLocked(name, spec));
  return out;
}

std::map<std::string, QueueUnitCounts> QueueManager::UnitCountsLocked() const {
  // Per queue: unit ({is a gang, gang key or pod key}: a pod may share its gang's name)
  // -> members seen, members allocated.
  using Unit = std::pair<bool, std::string>;
  std::map<std::string, std::map<Unit, std::pair<int32_t, int32_t>>> units;
  for (const auto& [key, e] : pods_) {
    if (!e.counted || e.counted_queue.empty()) continue;
    auto& u = units[e.counted_queue][e.gang.empty() ? Unit{false, key} : Unit{true, e.gang}];
    u.first += 1;
    u.second += e.counted_allocated ? 1 : 0;
  }
  std::map<std::string, QueueUnitCounts> out;
  for (const auto& [queue, by_unit] : units) {
    QueueUnitCounts& c = out[queue];
    for (const auto& [unit, n] : by_unit) {
      int32_t min = 1;
      if (gangs_ && unit.first) {
        auto sum = gangs_->SummaryOf(unit.second);
        if (sum && sum->spec && sum->spec->min_member > 0) min = sum->spec->min_member;
      }
      if (n.second >= min) {
        ++c.running;
      } else if (n.second > 0) {
        ++c.inqueue;
      } else {
        ++c.pending;
      }
    }
  }
  return out;
}

std::vector<QueueObjectReport> QueueManager::ObjectReports() const {
  absl::MutexLock l(&mu_);
  EnsureShareLocked();
  const std::map<std::string, QueueUnitCounts> units = UnitCountsLocked();
  std::vector<QueueObjectReport> out;
  out.reserve(objects_.size());
  for (const auto& [key, obj] : objects_) {
    std::optional<QueueSpec> spec = QueueFromObject(*obj);
    if (!spec) continue;
    QueueObjectReport r;
    r.object = obj;
    auto kept = tree_.queues.find(spec->name);
    if (kept == tree_.queues.end()) {
      r.status.name = spec->name;
      r.status.dialect = QueueDialectName(spec->dialect);
      r.error = !spec->invalid.empty() ? spec->invalid : spec->source + ": not in the queue tree";
    } else if (kept->second.source != spec->source) {
      // Another object (another dialect) defines the same queue name and was kept.
      r.status.name = spec->name;
      r.status.dialect = QueueDialectName(spec->dialect);
      r.error = spec->source + ": metadata.name: queue " + spec->name + " is also defined by " +
                kept->second.source + "; queue names must be unique across dialects";
    } else {
      r.status = StatusOfLocked(spec->name, kept->second);
      r.error = r.status.error;
      if (auto c = tree_.children.find(spec->name); c != tree_.children.end())
        r.children = c->second;
      if (auto u = units.find(spec->name); u != units.end()) r.units = u->second;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace phalanx::quota
