#include "backend/queue/scheduling_queue.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>

#include "absl/container/node_hash_map.h"

namespace phalanx::queue {

using framework::ClusterEvent;
using framework::EventObjects;
using framework::PodInfoPtr;
using framework::QueuedPodInfo;
using framework::QueuedPodInfoPtr;

namespace {

// a.Key() < b.Key() ("namespace/name", compared as strings) without building either key:
// the order of every tie-break below, as before, but no allocation per comparison.
bool KeyLess(const api::Pod& a, const api::Pod& b) {
  const std::string& na = a.metadata.namespace_;
  const std::string& nb = b.metadata.namespace_;
  if (na == nb) return a.metadata.name < b.metadata.name;
  // Different namespaces: compare "na/" + name_a with "nb/" + name_b character by
  // character up to the first difference (it lies within min(|na|, |nb|) + 1 characters,
  // since the shorter namespace's '/' meets a character of the longer one, or the
  // namespaces differ earlier).
  auto at = [](const api::Pod& p, size_t i) -> unsigned char {
    const std::string& ns = p.metadata.namespace_;
    if (i < ns.size()) return static_cast<unsigned char>(ns[i]);
    if (i == ns.size()) return '/';
    const std::string& name = p.metadata.name;
    i -= ns.size() + 1;
    return i < name.size() ? static_cast<unsigned char>(name[i]) : 0;
  };
  const size_t la = na.size() + 1 + a.metadata.name.size();
  const size_t lb = nb.size() + 1 + b.metadata.name.size();
  for (size_t i = 0; i < std::min(la, lb); ++i) {
    const unsigned char ca = at(a, i), cb = at(b, i);
    if (ca != cb) return ca < cb;
  }
  return la < lb;
}

}  // namespace

// Binary heap with an index by pod key, so entries can be updated or deleted in O(log n).
// Each entry records its heap position, so sifting moves pointers and positions without
// hashing keys (only Has/Get/AddOrUpdate/Delete look a key up, once).
class SchedulingQueue::Heap {
 public:
  explicit Heap(LessFn less, KeyFn key = nullptr) : less_(std::move(less)), key_(std::move(key)) {}

  bool Has(const std::string& key) const { return index_.count(key) > 0; }
  QueuedPodInfoPtr Get(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : it->second->p;
  }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const QueuedPodInfoPtr& Peek() const { return items_.front().e->p; }

  void AddOrUpdate(const std::string& key, QueuedPodInfoPtr p) {
    auto [it, inserted] = index_.try_emplace(key);
    const framework::QueueSortKey k = key_ ? key_(*p) : framework::QueueSortKey{};
    if (!inserted) {
      it->second->p = std::move(p);
      items_[it->second->pos].k = k;
      Fix(it->second->pos);
      return;
    }
    it->second = std::make_unique<Entry>(Entry{&it->first, std::move(p), items_.size()});
    items_.push_back(Slot{k, it->second.get()});
    Up(items_.size() - 1);
  }
  QueuedPodInfoPtr Delete(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    return Remove(it->second->pos);
  }
  QueuedPodInfoPtr Pop() {
    if (items_.empty()) return nullptr;
    return Remove(0);
  }
  template <typename F>
  void ForEach(F&& f) const {
    for (const Slot& s : items_) f(s.e->p);
  }

 private:
  struct Entry {
    const std::string* key;  // the index_ key (node-based map: stable address)
    QueuedPodInfoPtr p;
    size_t pos;  // index in items_
  };
  // A heap position: the entry and, with key_, its sort key (compared without touching
  // the entry).
  struct Slot {
    framework::QueueSortKey k;
    Entry* e;
  };
  QueuedPodInfoPtr Remove(size_t i) {
    QueuedPodInfoPtr out = std::move(items_[i].e->p);
    Swap(i, items_.size() - 1);
    const std::string* key = items_.back().e->key;
    items_.pop_back();
    index_.erase(*key);
    if (i < items_.size()) Fix(i);
    return out;
  }
  bool Less(size_t a, size_t b) const {
    return key_ ? items_[a].k < items_[b].k : less_(*items_[a].e->p, *items_[b].e->p);
  }
  void Swap(size_t a, size_t b) {
    if (a == b) return;
    std::swap(items_[a], items_[b]);
    items_[a].e->pos = a;
    items_[b].e->pos = b;
  }
  void Up(size_t i) {
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!Less(i, parent)) break;
      Swap(i, parent);
      i = parent;
    }
  }
  void Down(size_t i) {
    for (;;) {
      size_t l = 2 * i + 1, r = l + 1, m = i;
      if (l < items_.size() && Less(l, m)) m = l;
      if (r < items_.size() && Less(r, m)) m = r;
      if (m == i) return;
      Swap(i, m);
      i = m;
    }
  }
  void Fix(size_t i) {
    Up(i);
    Down(i);
  }

  LessFn less_;
  KeyFn key_;
  std::vector<Slot> items_;
  // Never iterated (order-free); node-based (Entry::key points at a key), and a lookup
  // masks the hash instead of dividing by the bucket count.
  absl::node_hash_map<std::string, std::unique_ptr<Entry>> index_;
};

// activeQ: one Heap, or with partitions one Heap per partition and the pod -> partition
// index. Pop asks the partition order afresh each time (the order moves while pods wait).
class SchedulingQueue::ActiveQueue {
 public:
  ActiveQueue(LessFn less, KeyFn key, PartitionFns parts)
      : less_(std::move(less)), key_(std::move(key)), parts_(std::move(parts)) {
    if (!parts_.of) single_ = std::make_unique<Heap>(less_, key_);
  }

  bool Has(const std::string& key) const {
    return single_ ? single_->Has(key) : where_.count(key) > 0;
  }
  QueuedPodInfoPtr Get(const std::string& key) const {
    if (single_) return single_->Get(key);
    auto it = where_.find(key);
    return it == where_.end() ? nullptr : heaps_.at(it->second)->Get(key);
  }
  size_t size() const { return single_ ? single_->size() : where_.size(); }
  bool empty() const { return size() == 0; }

  void AddOrUpdate(const std::string& key, QueuedPodInfoPtr p) {
    if (single_) return single_->AddOrUpdate(key, std::move(p));
    std::string part = parts_.of(*p);
    auto it = where_.find(key);
    if (it != where_.end() && it->second != part) {
      DeleteFrom(it->second, key);
      it = where_.end();
    }
    auto& h = heaps_[part];
    if (!h) h = std::make_unique<Heap>(less_, key_);
    h->AddOrUpdate(key, std::move(p));
    where_[key] = std::move(part);
  }
  QueuedPodInfoPtr Delete(const std::string& key) {
    if (single_) return single_->Delete(key);
    auto it = where_.find(key);
    if (it == where_.end()) return nullptr;
    const std::string part = std::move(it->second);
    where_.erase(it);
    return DeleteFrom(part, key);
  }
  QueuedPodInfoPtr Pop() {
    if (single_) return single_->Pop();
    auto best = heaps_.end();
    for (auto it = heaps_.begin(); it != heaps_.end(); ++it) {
      if (best == heaps_.end() || parts_.less(it->first, best->first) ||
          (!parts_.less(best->first, it->first) &&
           less_(*it->second->Peek(), *best->second->Peek()))) {
        best = it;
      }
    }
    if (best == heaps_.end()) return nullptr;
    QueuedPodInfoPtr p = best->second->Pop();
    where_.erase(p->Pod().Key());
    if (best->second->empty()) heaps_.erase(best);
    return p;
  }
  template <typename F>
  void ForEach(F&& f) const {
    if (single_) return single_->ForEach(f);
    for (const auto& [part, h] : heaps_) h->ForEach(f);
  }

 private:
  QueuedPodInfoPtr DeleteFrom(const std::string& part, const std::string& key) {
    auto h = heaps_.find(part);
    if (h == heaps_.end()) return nullptr;
    QueuedPodInfoPtr p = h->second->Delete(key);
    if (h->second->empty()) heaps_.erase(h);
    return p;
  }

  LessFn less_;
  KeyFn key_;
  PartitionFns parts_;
  std::unique_ptr<Heap> single_;  // without partitions
  // With partitions: non-empty heaps by partition, and each queued pod's partition.
  std::map<std::string, std::unique_ptr<Heap>> heaps_;
  std::unordered_map<std::string, std::string> where_;
};

// ---- Nominator ----

Nominator::Shard& Nominator::ShardOf(const std::string& node) const {
  return shards_[std::hash<std::string>{}(node) % kShards];
}

void Nominator::NoteChanged(const std::string& node) {
  if (changed_.size() < kMaxChanged) {
    changed_.push_back(node);
  } else {
    changed_overflow_ = true;
  }
}

void Nominator::RemoveFromNode(const std::string& node, const std::string& key) {
  NoteChanged(node);
  Shard& sh = ShardOf(node);
  absl::MutexLock l(&sh.mu);
  auto it = sh.by_node.find(node);
  if (it == sh.by_node.end()) return;
  auto v = std::make_shared<PodList>(*it->second);
  std::erase_if(*v, [&](const PodInfoPtr& p) { return p->pod->Key() == key; });
  if (v->empty()) {
    sh.by_node.erase(it);
  } else {
    it->second = std::move(v);
  }
}

void Nominator::Add(PodInfoPtr pod, const std::string& node) {
  absl::MutexLock l(&mu_);
  std::string key = pod->pod->Key();
  auto it = node_of_.find(key);
  if (it != node_of_.end()) {
    RemoveFromNode(it->second, key);
    node_of_.erase(it);
  }
  if (!node.empty()) {
    node_of_[key] = node;
    NoteChanged(node);
    Shard& sh = ShardOf(node);
    absl::MutexLock sl(&sh.mu);
    auto& cur = sh.by_node[node];
    auto v = cur ? std::make_shared<PodList>(*cur) : std::make_shared<PodList>();
    v->push_back(std::move(pod));
    cur = std::move(v);
  }
  count_.store(node_of_.size(), std::memory_order_release);
}

void Nominator::Delete(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  std::string key = pod.Key();
  auto it = node_of_.find(key);
  if (it == node_of_.end()) return;
  RemoveFromNode(it->second, key);
  node_of_.erase(it);
  count_.store(node_of_.size(), std::memory_order_release);
}

bool Nominator::DrainChanged(std::vector<std::string>* nodes) {
  absl::MutexLock l(&mu_);
  const bool complete = !changed_overflow_;
  changed_overflow_ = false;
  for (auto& n : changed_) nodes->push_back(std::move(n));
  changed_.clear();
  return complete;
}

std::shared_ptr<const Nominator::PodList> Nominator::ViewForNode(const std::string& node) const {
  if (Empty()) return nullptr;
  Shard& sh = ShardOf(node);
  absl::MutexLock l(&sh.mu);
  auto it = sh.by_node.find(node);
  return it == sh.by_node.end() ? nullptr : it->second;
}

Nominator::PodList Nominator::ForNode(const std::string& node) const {
  auto v = ViewForNode(node);
  return v ? *v : PodList{};
}

// ---- SchedulingQueue ----

SchedulingQueue::SchedulingQueue(LessFn less, const framework::Clock& clock, QueueOptions opts,
                                 KeyFn key, PartitionFns partitions)
    : clock_(clock), opts_(opts) {
  active_q_ = std::make_unique<ActiveQueue>(std::move(less), std::move(key), std::move(partitions));
  backoff_q_ = std::make_unique<Heap>([this](const QueuedPodInfo& a, const QueuedPodInfo& b) {
    api::Timestamp ea = BackoffExpiry(a), eb = BackoffExpiry(b);
    if (ea != eb) return ea < eb;
    return KeyLess(a.Pod(), b.Pod());
  });
}

SchedulingQueue::~SchedulingQueue() = default;

void SchedulingQueue::SetIncomingObserver(IncomingFn fn) {
  absl::MutexLock l(&mu_);
  incoming_ = std::move(fn);
}

void SchedulingQueue::SetHintObserver(HintFn fn) {
  absl::MutexLock l(&mu_);
  hint_observer_ = std::move(fn);
}

void SchedulingQueue::SetProfileHooks(const std::string& scheduler_name, ProfileHooks hooks) {
  absl::MutexLock l(&mu_);
  hooks_[scheduler_name] = std::move(hooks);
  event_interest_.clear();
}

api::Timestamp SchedulingQueue::BackoffExpiry(const QueuedPodInfo& p) const {
  int64_t d = opts_.initial_backoff_ns;
  for (int i = 1; i < p.attempts; ++i) {
    if (d > opts_.max_backoff_ns / 2) {
      d = opts_.max_backoff_ns;
      break;
    }
    d *= 2;
  }
  d = std::min(d, opts_.max_backoff_ns);
  return p.timestamp + d;
}

bool SchedulingQueue::IsBackingOff(const QueuedPodInfo& p) const {
  if (p.attempts == 0) return false;
  return BackoffExpiry(p) > clock_.Now();
}

bool SchedulingQueue::RunPreEnqueue(QueuedPodInfo& p) {
  auto it = hooks_.find(p.Pod().spec.scheduler_name);
  if (it == hooks_.end() || !it->second.pre_enqueue) {
    p.gating_plugin.clear();
    return true;
  }
  framework::Status s = it->second.pre_enqueue(*p.pod_info);
  const std::string key = p.Pod().Key();
  if (s.IsSuccess()) {
    p.gating_plugin.clear();
    gate_reports_.erase(key);
    return true;
  }
  p.gating_plugin = s.plugin();
  p.last_failure_message = s.Message();
  auto reported = reported_gates_.find(key);
  if (reported == reported_gates_.end() || reported->second != p.last_failure_message) {
    gate_reports_[key] = GateReport{p.pod_info, p.gating_plugin, p.last_failure_message};
  } else {
    gate_reports_.erase(key);
  }
  return false;
}

std::vector<SchedulingQueue::GateReport> SchedulingQueue::TakeGateReports() {
  absl::MutexLock l(&mu_);
  std::vector<GateReport> out;
  out.reserve(gate_reports_.size());
  for (auto& [key, r] : gate_reports_) {
    auto it = unschedulable_.find(key);
    if (it == unschedulable_.end() || it->second->gating_plugin.empty()) continue;  // not gated
    reported_gates_[key] = r.message;
    out.push_back(std::move(r));
  }
  gate_reports_.clear();
  return out;
}

void SchedulingQueue::Add(PodInfoPtr pod) {
  absl::MutexLock l(&mu_);
  AddLocked(std::move(pod));
}

void SchedulingQueue::AddAndActivate(PodInfoPtr pod, const std::vector<std::string>& pod_keys) {
  absl::MutexLock l(&mu_);
  AddLocked(std::move(pod));
  ActivateLocked(pod_keys);
}

void SchedulingQueue::AddLocked(PodInfoPtr pod) {
  std::string key = pod->pod->Key();
  auto p = std::make_shared<QueuedPodInfo>();
  p->pod_info = std::move(pod);
  p->timestamp = clock_.Now();
  if (active_q_->Has(key) || backoff_q_->Has(key) || unschedulable_.count(key)) return;
  if (!RunPreEnqueue(*p)) {
    unschedulable_[key] = std::move(p);
    Incoming("unschedulable", "PodAdd");
    return;
  }
  active_q_->AddOrUpdate(key, std::move(p));
  Incoming("active", "PodAdd");
  cv_.Signal();
}

void SchedulingQueue::Update(const api::Pod& old_pod, PodInfoPtr new_pod) {
  absl::MutexLock l(&mu_);
  std::string key = old_pod.Key();
  if (auto p = active_q_->Get(key)) {
    p->pod_info = std::move(new_pod);
    active_q_->AddOrUpdate(key, p);
    return;
  }
  if (auto p = backoff_q_->Get(key)) {
    p->pod_info = std::move(new_pod);
    backoff_q_->AddOrUpdate(key, p);
    return;
  }
  auto it = unschedulable_.find(key);
  if (it != unschedulable_.end()) {
    QueuedPodInfoPtr p = it->second;
    p->pod_info = new_pod;
    uint32_t actions = framework::PodUpdateActions(old_pod, *new_pod->pod);
    if (actions == 0) return;  // status-only update: nothing that can help
    ClusterEvent e{framework::EventResource::kUnscheduledPod, actions, "UnscheduledPodUpdate"};
    EventObjects objs;
    objs.old_pod = &old_pod;
    objs.new_pod = new_pod->pod.get();
    if (WorthRequeuing(*p, e, objs)) {
      unschedulable_.erase(it);
      MoveToActiveOrBackoff(p, e.label);
    }
    return;
  }
  // Not queued (new, or in flight): treat as an add.
  auto p = std::make_shared<QueuedPodInfo>();
  p->pod_info = std::move(new_pod);
  p->timestamp = clock_.Now();
  if (!RunPreEnqueue(*p)) {
    unschedulable_[key] = std::move(p);
    Incoming("unschedulable", "UnscheduledPodUpdate");
    return;
  }
  active_q_->AddOrUpdate(key, std::move(p));
  Incoming("active", "UnscheduledPodUpdate");
  cv_.Signal();
}

void SchedulingQueue::Delete(const api::Pod& pod) {
  absl::MutexLock l(&mu_);
  std::string key = pod.Key();
  active_q_->Delete(key);
  backoff_q_->Delete(key);
  unschedulable_.erase(key);
  reported_gates_.erase(key);
  gate_reports_.erase(key);
  nominator_.Delete(pod);
}

QueuedPodInfoPtr SchedulingQueue::Pop() {
  absl::MutexLock l(&mu_);
  while (!closed_ && active_q_->empty()) cv_.Wait(&mu_);
  if (closed_ && active_q_->empty()) return nullptr;
  auto p = active_q_->Pop();
  ++scheduling_cycle_;
  ++p->attempts;
  if (p->initial_attempt_timestamp == 0) p->initial_attempt_timestamp = clock_.Now();
  return p;
}

QueuedPodInfoPtr SchedulingQueue::TryPop() {
  absl::MutexLock l(&mu_);
  if (active_q_->empty()) return nullptr;
  auto p = active_q_->Pop();
  ++scheduling_cycle_;
  ++p->attempts;
  if (p->initial_attempt_timestamp == 0) p->initial_attempt_timestamp = clock_.Now();
  return p;
}

QueuedPodInfoPtr SchedulingQueue::Extract(const std::string& key) {
  absl::MutexLock l(&mu_);
  QueuedPodInfoPtr p = active_q_->Delete(key);
  if (!p) p = backoff_q_->Delete(key);
  if (!p) {
    auto it = unschedulable_.find(key);
    if (it == unschedulable_.end()) return nullptr;
    // A pod still gated at PreEnqueue (e.g. by its own scheduling gates) stays.
    if (!it->second->gating_plugin.empty() && !RunPreEnqueue(*it->second)) return nullptr;
    p = it->second;
    unschedulable_.erase(it);
  }
  ++p->attempts;
  if (p->initial_attempt_timestamp == 0) p->initial_attempt_timestamp = clock_.Now();
  return p;
}

int64_t SchedulingQueue::SchedulingCycle() const {
  absl::MutexLock l(&mu_);
  return scheduling_cycle_;
}

void SchedulingQueue::AddUnschedulableIfNotPresent(QueuedPodInfoPtr p, int64_t cycle) {
  absl::MutexLock l(&mu_);
  std::string key = p->Pod().Key();
  if (active_q_->Has(key) || backoff_q_->Has(key) || unschedulable_.count(key)) return;
  p->timestamp = clock_.Now();
  bool rejected_by_plugins = !p->unschedulable_plugins.empty() || !p->pending_plugins.empty();
  if (rejected_by_plugins) ++p->unschedulable_count;
  if (!rejected_by_plugins || move_request_cycle_ >= cycle) {
    backoff_q_->AddOrUpdate(key, std::move(p));
    Incoming("backoff", "ScheduleAttemptFailure");
    return;
  }
  unschedulable_[key] = std::move(p);
  Incoming("unschedulable", "ScheduleAttemptFailure");
}

void SchedulingQueue::MoveToActiveOrBackoff(QueuedPodInfoPtr p, std::string_view event) {
  std::string key = p->Pod().Key();
  if (!RunPreEnqueue(*p)) {
    p->timestamp = clock_.Now();  // still gated: its unschedulable timer starts again
    unschedulable_[key] = std::move(p);
    Incoming("unschedulable", event);
    return;
  }
  if (IsBackingOff(*p)) {
    backoff_q_->AddOrUpdate(key, std::move(p));
    Incoming("backoff", event);
  } else {
    active_q_->AddOrUpdate(key, std::move(p));
    Incoming("active", event);
    cv_.Signal();
  }
}

bool SchedulingQueue::WorthRequeuing(const QueuedPodInfo& p, const ClusterEvent& e,
                                     const EventObjects& objs) const {
  if (e.resource == framework::EventResource::kWildCard && e.action == framework::kAll) {
    return true;
  }
  auto hit = hooks_.find(p.Pod().spec.scheduler_name);
  std::vector<const std::string*> rejectors;
  if (!p.gating_plugin.empty()) {
    rejectors.push_back(&p.gating_plugin);
  } else {
    for (const auto& n : p.unschedulable_plugins) rejectors.push_back(&n);
    for (const auto& n : p.pending_plugins) rejectors.push_back(&n);
  }
  if (rejectors.empty()) return true;  // failed for an error or unknown reason
  if (hit == hooks_.end()) return true;
  for (const std::string* plugin : rejectors) {
    for (const auto& [name, h] : hit->second.hints) {
      if (name != *plugin || !h.event.Match(e)) continue;
      if (!h.hint) return true;
      if (!hint_observer_) {
        if (h.hint(p.Pod(), objs) == framework::QueueingHint::kQueue) return true;
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      const bool queue = h.hint(p.Pod(), objs) == framework::QueueingHint::kQueue;
      hint_observer_(name, e.label, queue ? "Queue" : "QueueSkip",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (queue) return true;
    }
  }
  return false;
}

void SchedulingQueue::MoveUnschedulable(const std::vector<QueuedPodInfoPtr>& pods,
                                        const ClusterEvent& e, const EventObjects& objs) {
  for (const auto& p : pods) {
    if (!WorthRequeuing(*p, e, objs)) continue;
    unschedulable_.erase(p->Pod().Key());
    MoveToActiveOrBackoff(p, e.label);
  }
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueue(const ClusterEvent& e,
                                                    const EventObjects& objs) {
  absl::MutexLock l(&mu_);
  // Fast path: an event no plugin registered for moves nothing (pods rejected without a
  // plugin never wait in unschedulablePods; they go to backoffQ).
  // (ClusterEvent::Match reads only the resource and the action.)
  const uint64_t kind = (static_cast<uint64_t>(e.resource) << 32) | e.action;
  auto [known, added] = event_interest_.try_emplace(kind, false);
  if (added) {
    bool wildcard =
        e.resource == framework::EventResource::kWildCard && e.action == framework::kAll;
    bool interesting = wildcard;
    for (const auto& [name, hooks] : hooks_) {
      for (const auto& [plugin, h] : hooks.hints) interesting = interesting || h.event.Match(e);
    }
    known->second = interesting;
  }
  if (!known->second) return;
  // By the map's key (the pod's key), sorted: a deterministic order regardless of
  // hash-map iteration, without building a key string per comparison.
  std::vector<std::pair<const std::string*, QueuedPodInfoPtr>> pods;
  for (const auto& [k, p] : unschedulable_) {
    if (WorthRequeuing(*p, e, objs)) pods.emplace_back(&k, p);
  }
  std::sort(pods.begin(), pods.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  for (auto& [k, p] : pods) {
    unschedulable_.erase(unschedulable_.find(*k));  // k points into that node: unused after
    MoveToActiveOrBackoff(std::move(p), e.label);
  }
  move_request_cycle_ = scheduling_cycle_;
}

void SchedulingQueue::Activate(const std::vector<std::string>& keys) {
  absl::MutexLock l(&mu_);
  ActivateLocked(keys);
}

void SchedulingQueue::ReleaseGated(const std::vector<std::string>& keys) {
  absl::MutexLock l(&mu_);
  for (const auto& key : keys) {
    auto it = unschedulable_.find(key);
    if (it == unschedulable_.end() || it->second->gating_plugin.empty()) continue;
    QueuedPodInfoPtr p = it->second;
    unschedulable_.erase(it);
    MoveToActiveOrBackoff(std::move(p), "ForceActivate");
  }
}

void SchedulingQueue::ActivateLocked(const std::vector<std::string>& keys) {
  bool missing = false;
  for (const auto& key : keys) {
    QueuedPodInfoPtr p = backoff_q_->Delete(key);
    if (!p) {
      auto it = unschedulable_.find(key);
      if (it == unschedulable_.end()) {
        // In activeQ already, unknown, or in flight: only the last is a request that the
        // pod's running attempt cannot have seen (upstream records a ForceActivate event
        // for in-flight pods only).
        missing = missing || !active_q_->Has(key);
        continue;
      }
      p = it->second;
      unschedulable_.erase(it);
    }
    if (!RunPreEnqueue(*p)) {
      unschedulable_[key] = std::move(p);
      Incoming("unschedulable", "ForceActivate");
      continue;
    }
    active_q_->AddOrUpdate(key, std::move(p));
    Incoming("active", "ForceActivate");
    cv_.Signal();
  }
  if (missing) move_request_cycle_ = scheduling_cycle_;
}

void SchedulingQueue::FlushBackoffQCompleted() {
  absl::MutexLock l(&mu_);
  api::Timestamp now = clock_.Now();
  while (!backoff_q_->empty()) {
    const auto& top = backoff_q_->Peek();
    if (BackoffExpiry(*top) > now) break;
    auto p = backoff_q_->Pop();
    std::string key = p->Pod().Key();
    // Every way into activeQ runs PreEnqueue (upstream moveToActiveQ): a pod gated
    // meanwhile waits in unschedulablePods for its gating plugin's events.
    if (!RunPreEnqueue(*p)) {
      unschedulable_[key] = std::move(p);
      Incoming("unschedulable", "BackoffComplete");
      continue;
    }
    active_q_->AddOrUpdate(key, std::move(p));
    Incoming("active", "BackoffComplete");
    cv_.Signal();
  }
}

void SchedulingQueue::FlushUnschedulablePodsLeftover() {
  absl::MutexLock l(&mu_);
  api::Timestamp now = clock_.Now();
  std::vector<QueuedPodInfoPtr> pods;
  for (const auto& [k, p] : unschedulable_) {
    if (now - p->timestamp > opts_.max_in_unschedulable_ns) pods.push_back(p);
  }
  std::sort(pods.begin(), pods.end(), [](const QueuedPodInfoPtr& a, const QueuedPodInfoPtr& b) {
    return KeyLess(a->Pod(), b->Pod());
  });
  ClusterEvent e{framework::EventResource::kWildCard, framework::kAll, "UnschedulableTimeout"};
  MoveUnschedulable(pods, e, EventObjects{});
  // Pods that PreEnqueue still gates stay; they are checked again max_in_unschedulable
  // from now (upstream re-checks them every 30 s), so that NextUnschedulableTimeout does
  // not stay in the past.
  for (const auto& p : pods) {
    auto it = unschedulable_.find(p->Pod().Key());
    if (it != unschedulable_.end() && it->second == p) p->timestamp = now;
  }
}

std::vector<QueuedPodInfoPtr> SchedulingQueue::UnschedulablePods() const {
  absl::MutexLock l(&mu_);
  std::vector<QueuedPodInfoPtr> out;
  out.reserve(unschedulable_.size());
  for (const auto& [k, p] : unschedulable_) out.push_back(p);
  std::sort(out.begin(), out.end(), [](const QueuedPodInfoPtr& a, const QueuedPodInfoPtr& b) {
    return KeyLess(a->Pod(), b->Pod());
  });
  return out;
}

bool SchedulingQueue::RecordRepeatedFlushes(const std::vector<QueuedPodInfoPtr>& pods,
                                            int32_t flushes, int64_t pops) {
  absl::MutexLock l(&mu_);
  for (const auto& p : pods) {
    auto it = unschedulable_.find(p->Pod().Key());
    if (it == unschedulable_.end() || it->second != p || !p->gating_plugin.empty() ||
        (p->unschedulable_plugins.empty() && p->pending_plugins.empty())) {
      return false;
    }
  }
  const api::Timestamp period = UnschedulableFlushPeriod();
  for (const auto& p : pods) {
    p->attempts += flushes;
    p->unschedulable_count += flushes;
    p->timestamp += static_cast<api::Timestamp>(flushes) * period;
    if (incoming_) {
      for (int32_t i = 0; i < flushes; ++i) {
        incoming_("active", "UnschedulableTimeout");
        incoming_("unschedulable", "ScheduleAttemptFailure");
      }
    }
  }
  scheduling_cycle_ += pops;
  return true;
}

api::Timestamp SchedulingQueue::NextBackoffExpiry() const {
  absl::MutexLock l(&mu_);
  if (backoff_q_->empty()) return LLONG_MAX;
  return BackoffExpiry(*backoff_q_->Peek());
}

api::Timestamp SchedulingQueue::NextUnschedulableTimeout() const {
  absl::MutexLock l(&mu_);
  api::Timestamp t = LLONG_MAX;
  for (const auto& [k, p] : unschedulable_) {
    t = std::min(t, p->timestamp + opts_.max_in_unschedulable_ns + 1);
  }
  return t;
}

void SchedulingQueue::Close() {
  absl::MutexLock l(&mu_);
  closed_ = true;
  cv_.SignalAll();
}

PendingCounts SchedulingQueue::Counts() const {
  absl::MutexLock l(&mu_);
  PendingCounts c;
  c.active = active_q_->size();
  c.backoff = backoff_q_->size();
  for (const auto& [k, p] : unschedulable_) {
    if (p->gating_plugin.empty()) {
      ++c.unschedulable;
    } else {
      ++c.gated;
    }
  }
  return c;
}

std::map<std::pair<std::string, std::string>, int64_t> SchedulingQueue::UnschedulableByPlugin()
    const {
  absl::MutexLock l(&mu_);
  std::map<std::pair<std::string, std::string>, int64_t> out;
  for (const auto& [k, p] : unschedulable_) {
    if (!p->gating_plugin.empty()) continue;
    const std::string& profile = p->Pod().spec.scheduler_name;
    for (const auto& plugin : p->unschedulable_plugins) ++out[{plugin, profile}];
    for (const auto& plugin : p->pending_plugins) {
      if (!p->unschedulable_plugins.count(plugin)) ++out[{plugin, profile}];
    }
  }
  return out;
}

std::vector<QueuedPodInfoPtr> SchedulingQueue::PendingPods() const {
  absl::MutexLock l(&mu_);
  std::vector<QueuedPodInfoPtr> out;
  active_q_->ForEach([&](const QueuedPodInfoPtr& p) { out.push_back(p); });
  backoff_q_->ForEach([&](const QueuedPodInfoPtr& p) { out.push_back(p); });
  for (const auto& [k, p] : unschedulable_) out.push_back(p);
  return out;
}

QueuedPodInfoPtr SchedulingQueue::Get(const std::string& key) const {
  absl::MutexLock l(&mu_);
  if (auto p = active_q_->Get(key)) return p;
  if (auto p = backoff_q_->Get(key)) return p;
  auto it = unschedulable_.find(key);
  return it == unschedulable_.end() ? nullptr : it->second;
}

}  // namespace phalanx::queue
