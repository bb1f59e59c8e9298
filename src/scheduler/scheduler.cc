#include "scheduler/scheduler.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <deque>
#include <thread>

#include "api/pod_resources.h"
#include "gang/manager.h"
#include "quota/manager.h"
#include "scheduler/podgroup_status.h"

namespace phalanx::scheduler {

using framework::Code;
using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::QueuedPodInfoPtr;
using framework::Status;

namespace {
constexpr int kMinFeasibleNodesToFind = 100;
constexpr int kMinFeasibleNodesPercentageToFind = 5;

bool IsTerminal(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}
bool IsAssigned(const api::Pod& p) { return !p.spec.node_name.empty(); }
}  // namespace

// Binding cycles block on API calls (live mode) and on nothing else, so they get plain
// threads rather than the CPU-bound TBB arena used for Filter/Score.
struct Scheduler::BindingPool {
  explicit BindingPool(int n) {
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([this] {
        for (;;) {
          std::function<void()> fn;
          {
            std::unique_lock<std::mutex> l(mu);
            cv.wait(l, [&] { return stop || !tasks.empty(); });
            if (tasks.empty()) return;
            fn = std::move(tasks.front());
            tasks.pop_front();
          }
          fn();
        }
      });
    }
  }
  ~BindingPool() {
    {
      std::lock_guard<std::mutex> l(mu);
      stop = true;
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
  }
  void Submit(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> l(mu);
      tasks.push_back(std::move(fn));
    }
    cv.notify_one();
  }
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  std::vector<std::thread> threads;
  bool stop = false;
};

std::string Diagnosis::Message() const {
  std::string msg = "0/" + std::to_string(num_all_nodes) + " nodes are available:";
  if (!pre_filter_msg.empty()) {
    msg += " " + pre_filter_msg + ".";
  } else {
    std::map<std::string, int> hist;
    for (const auto& [node, st] : node_statuses) {
      for (const auto& r : st.reasons()) ++hist[r];
    }
    // Nodes left out by PreFilterResult count under the absent-nodes reason (upstream
    // FitError.Error: NumAllNodes - NodeToStatus.Len()).
    const int absent = num_all_nodes - static_cast<int>(node_statuses.size());
    if (!absent_nodes_reason.empty() && absent > 0) hist[absent_nodes_reason] += absent;
    std::vector<std::string> parts;
    parts.reserve(hist.size());
    for (const auto& [r, n] : hist) parts.push_back(std::to_string(n) + " " + r);
    std::sort(parts.begin(), parts.end());
    if (!parts.empty()) {
      msg += " ";
      for (size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
      msg += ".";
    }
  }
  if (!post_filter_msg.empty()) msg += " " + post_filter_msg + ".";
  return msg;
}

Scheduler::Scheduler(SchedulerOptions opts)
    : opts_(std::move(opts)),
      gangs_(std::make_unique<gang::Manager>()),
      queues_(std::make_unique<quota::QueueManager>(gangs_.get())),
      cache_(opts_.assumed_pod_ttl_ns),
      rng_(opts_.seed) {}

Scheduler::~Scheduler() { Stop(); }

framework::StatusOr<std::unique_ptr<Scheduler>> Scheduler::New(SchedulerOptions opts) {
  if (!opts.clock || !opts.client) return Status::Error("scheduler needs a clock and a client");
  std::unique_ptr<Scheduler> s(new Scheduler(std::move(opts)));
  const auto& cfg = s->opts_.config;
  s->parallelizer_ = std::make_unique<framework::Parallelizer>(cfg.parallelism);
  if (cfg.profiles.empty()) return Status::Error("no profiles configured");
  Scheduler* self = s.get();
  for (const auto& prof : cfg.profiles) {
    framework::FrameworkOptions fo;
    fo.clock = s->opts_.clock;
    fo.client = s->opts_.client;
    fo.snapshot = &s->snapshot_;
    fo.parallelizer = s->parallelizer_.get();
    fo.percentage_of_nodes_to_score = cfg.percentage_of_nodes_to_score;
    fo.nominated_pods_for_node = [self](const std::string& node) {
      return self->queue_->nominator().ForNode(node);
    };
    fo.nominated_pods_view = [self](const framework::NodeInfo& ni) {
      // Cached on the NodeInfo until the node's nominations change (SyncNominatedLookups
      // resets it at the start of each Filter pass) or the NodeInfo is replaced.
      if (auto cached = ni.nominated_lookup()) return cached->pods;
      auto pods = self->queue_->nominator().ViewForNode(ni.name());
      ni.set_nominated_lookup(
          std::make_shared<const framework::NominatedLookup>(framework::NominatedLookup{pods}));
      return pods;
    };
    fo.priority_of = [self](const api::Pod& p) { return self->PriorityOf(p); };
    fo.random = [self](uint64_t n) { return self->Random(n); };
    fo.gangs = s->gangs_.get();
    fo.queues = s->queues_.get();
    fo.namespace_labels = [self](std::string_view name, std::map<std::string, std::string>* out) {
      std::lock_guard<std::mutex> l(self->ns_mu_);
      auto it = self->namespace_labels_.find(std::string(name));
      if (it == self->namespace_labels_.end()) return false;
      *out = it->second;
      return true;
    };
    fo.for_each_namespace =
        [self](const std::function<void(const std::string&, const std::map<std::string, std::string>&)>&
                   fn) {
          std::map<std::string, std::map<std::string, std::string>> copy;
          {
            std::lock_guard<std::mutex> l(self->ns_mu_);
            copy = self->namespace_labels_;
          }
          for (const auto& [n, labels] : copy) fn(n, labels);
        };
    auto fw = framework::Framework::New(s->opts_.registry, prof, std::move(fo));
    if (!fw.ok()) return fw.status();
    if (s->profiles_.count(prof.scheduler_name)) {
      return Status::Error("duplicate profile " + prof.scheduler_name);
    }
    s->profiles_[prof.scheduler_name] = std::move(fw).value();
  }
  // All profiles share one queue; upstream requires the same QueueSort everywhere.
  std::string qs;
  for (const auto& [name, fw] : s->profiles_) {
    auto l = fw->ListPlugins("QueueSort");
    if (qs.empty()) {
      qs = l[0];
    } else if (qs != l[0]) {
      return Status::Error("profiles use different QueueSort plugins (" + qs + ", " + l[0] +
                           "); all profiles must share one");
    }
  }
  framework::Framework* first = s->profiles_.begin()->second.get();
  queue::QueueOptions qo;
  qo.initial_backoff_ns = cfg.pod_initial_backoff_seconds * api::kNanosPerSecond;
  qo.max_backoff_ns = cfg.pod_max_backoff_seconds * api::kNanosPerSecond;
  qo.max_in_unschedulable_ns =
      cfg.pod_max_in_unschedulable_pods_duration_seconds * api::kNanosPerSecond;
  s->queue_ = std::make_unique<queue::SchedulingQueue>(
      [first](const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) {
        return first->QueueSortLess(a, b);
      },
      *s->opts_.clock, qo,
      first->QueueSortHasKey()
          ? queue::SchedulingQueue::KeyFn(
                [first](const framework::QueuedPodInfo& p) { return first->QueueSortKeyOf(p); })
          : nullptr);
  for (auto& [name, fw] : s->profiles_) {
    queue::ProfileHooks hooks;
    framework::Framework* f = fw.get();
    hooks.pre_enqueue = [f](const PodInfo& p) { return f->RunPreEnqueuePlugins(p); };
    hooks.hints = f->EventHints();
    s->queue_->SetProfileHooks(name, std::move(hooks));
  }
  if (s->opts_.binding_workers > 0) {
    s->binding_pool_ = std::make_unique<BindingPool>(s->opts_.binding_workers);
  }
  return s;
}

// ---- event handlers ----

void Scheduler::AddEventHandlers(store::InformerFactory& inf) {
  inf.AddPriorityClassHandlers(
      {[this](const auto& pc) { OnPriorityClassAdd(pc); },
       [this](const auto&, const auto& pc) { OnPriorityClassAdd(pc); },
       [this](const auto& pc) { OnPriorityClassDelete(pc); }});
  inf.AddNamespaceHandlers(
      {[this](const std::shared_ptr<const api::Namespace>& n) {
         std::lock_guard<std::mutex> l(ns_mu_);
         namespace_labels_[n->metadata.name] = n->metadata.labels;
       },
       [this](const std::shared_ptr<const api::Namespace>&, const std::shared_ptr<const api::Namespace>& n) {
         std::lock_guard<std::mutex> l(ns_mu_);
         namespace_labels_[n->metadata.name] = n->metadata.labels;
       },
       [this](const std::shared_ptr<const api::Namespace>& n) {
         std::lock_guard<std::mutex> l(ns_mu_);
         namespace_labels_.erase(n->metadata.name);
       }});
  inf.AddObjectHandlers(
      {[this](const api::UnstructuredPtr& o) { OnObjectAdd(o); },
       [this](const api::UnstructuredPtr& o, const api::UnstructuredPtr& n) { OnObjectUpdate(o, n); },
       [this](const api::UnstructuredPtr& o) { OnObjectDelete(o); }});
  inf.AddNodeHandlers({[this](const api::NodePtr& n) { OnNodeAdd(n); },
                       [this](const api::NodePtr& o, const api::NodePtr& n) { OnNodeUpdate(o, n); },
                       [this](const api::NodePtr& n) { OnNodeDelete(n); }});
  inf.AddPodHandlers({[this](const api::PodPtr& p) { OnPodAdd(p); },
                      [this](const api::PodPtr& o, const api::PodPtr& n) { OnPodUpdate(o, n); },
                      [this](const api::PodPtr& p) { OnPodDelete(p); }});
}

bool Scheduler::ResponsibleFor(const api::Pod& pod) const {
  return profiles_.count(pod.spec.scheduler_name) > 0;
}

void Scheduler::OnObjectAdd(const api::UnstructuredPtr& obj) {
  gangs_->OnObjectAdd(obj);
  queues_->OnObjectAdd(obj);
  framework::EventObjects objs;
  objs.other_new = obj.get();
  queue_->MoveAllToActiveOrBackoffQueue({framework::EventResource::kPodGroup, framework::kAdd, "PodGroupAdd"},
                                        objs);
}

void Scheduler::OnObjectUpdate(const api::UnstructuredPtr& old_obj, const api::UnstructuredPtr& obj) {
  // Status-only updates (our own PodGroup status writes among them) carry nothing that
  // could make a pod schedulable: the gang keeps its parsed spec, and no requeue, so they
  // cannot churn gated pods.
  const bool status_only = old_obj && OnlyStatusChanged(*old_obj, *obj);
  if (status_only) {
    gangs_->OnObjectStatusUpdate(obj);
  } else {
    gangs_->OnObjectUpdate(obj);
  }
  queues_->OnObjectUpdate(obj);
  if (status_only) return;
  framework::EventObjects objs;
  objs.other_old = old_obj.get();
  objs.other_new = obj.get();
  queue_->MoveAllToActiveOrBackoffQueue(
      {framework::EventResource::kPodGroup, framework::kUpdate, "PodGroupUpdate"}, objs);
}

void Scheduler::OnObjectDelete(const api::UnstructuredPtr& obj) {
  gangs_->OnObjectDelete(obj);
  queues_->OnObjectDelete(obj);
}

void Scheduler::OnPodAdd(const api::PodPtr& pod) {
  if (IsTerminal(*pod)) return;
  gangs_->OnPodAdd(pod, opts_.clock->Now());
  queues_->OnPodAdd(pod);
  if (IsAssigned(*pod)) {
    Status s = cache_.AddPod(PodInfo::Make(pod));
    (void)s;
    framework::EventObjects objs;
    objs.new_pod = pod.get();
    queue_->MoveAllToActiveOrBackoffQueue(
        {framework::EventResource::kAssignedPod, framework::kAdd, "AssignedPodAdd"}, objs);
    return;
  }
  if (ResponsibleFor(*pod)) {
    auto info = PodInfo::Make(pod);
    // A nomination from an earlier preemption (ours, or before a restart) is honoured.
    if (!pod->status.nominated_node_name.empty()) {
      queue_->nominator().Add(info, pod->status.nominated_node_name);
    }
    // The member that completes its gang's quorum activates the gang (and its GangGroup):
    // the others were gated at PreEnqueue waiting for it. Added and activated at once, so
    // that no member is in flight when the others are activated (that would count as a
    // move request and send the gang's first failed attempt to backoffQ for a second one).
    std::vector<std::string> keys;
    if (auto ref = gangs_->RefOf(*pod)) {
      auto sum = gangs_->SummaryOf(ref->key);
      if (sum && sum->spec && sum->counts.pods == sum->spec->min_member) {
        for (const auto& g : gangs_->GroupOf(ref->key)) {
          if (auto gi = gangs_->Info(g)) {
            keys.insert(keys.end(), gi->member_pods.begin(), gi->member_pods.end());
          }
        }
      }
    }
    if (keys.empty()) {
      queue_->Add(std::move(info));
    } else {
      queue_->AddAndActivate(std::move(info), keys);
    }
    // Pods waiting for their gang's other members may now pass PreEnqueue.
    framework::EventObjects objs;
    objs.new_pod = pod.get();
    queue_->MoveAllToActiveOrBackoffQueue(
        {framework::EventResource::kUnscheduledPod, framework::kAdd, "UnscheduledPodAdd"}, objs);
  }
}

void Scheduler::OnPodUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod) {
  gangs_->OnPodUpdate(old_pod, new_pod, opts_.clock->Now());
  queues_->OnPodUpdate(old_pod, new_pod);
  if (IsAssigned(*old_pod)) {
    if (IsTerminal(*new_pod)) {
      OnPodDelete(old_pod);
      return;
    }
    Status s = cache_.UpdatePod(*old_pod, PodInfo::Make(new_pod));
    (void)s;
    uint32_t actions = framework::PodUpdateActions(*old_pod, *new_pod);
    if (actions != 0) {
      framework::EventObjects objs;
      objs.old_pod = old_pod.get();
      objs.new_pod = new_pod.get();
      queue_->MoveAllToActiveOrBackoffQueue(
          {framework::EventResource::kAssignedPod, actions, "AssignedPodUpdate"}, objs);
    }
    return;
  }
  if (IsAssigned(*new_pod)) {
    // The pod was bound (by us or by someone else).
    queue_->Delete(*old_pod);
    if (auto ref = gangs_->RefOf(*new_pod)) {
      if (gang_status_batch_thread_ == std::this_thread::get_id()) {
        auto it = std::find_if(gang_status_batch_.begin(), gang_status_batch_.end(),
                               [&](const auto& e) { return e.first == ref->key; });
        if (it == gang_status_batch_.end()) {
          gang_status_batch_.emplace_back(ref->key, new_pod);
        } else {
          it->second = new_pod;
        }
      } else if (!GangBindingsInFlight(ref->key)) {
        // With the binding pool a gang's members bind on several threads: the binding
        // that completes last writes the status (its counts include every earlier one),
        // not one write per member; a failed binding writes instead if it was the last.
        WriteGangStatus(ref->key, GangOutcome::kNone, "", new_pod.get());
      }
    }
    if (IsTerminal(*new_pod)) return;
    Status s = cache_.AddPod(PodInfo::Make(new_pod));
    (void)s;
    framework::EventObjects objs;
    objs.new_pod = new_pod.get();
    queue_->MoveAllToActiveOrBackoffQueue(
        {framework::EventResource::kAssignedPod, framework::kAdd, "AssignedPodAdd"}, objs);
    return;
  }
  if (!ResponsibleFor(*new_pod)) return;
  if (IsTerminal(*new_pod)) {
    queue_->Delete(*old_pod);
    return;
  }
  auto info = PodInfo::Make(new_pod);
  if (new_pod->status.nominated_node_name != old_pod->status.nominated_node_name) {
    if (new_pod->status.nominated_node_name.empty()) {
      queue_->nominator().Delete(*new_pod);
    } else {
      queue_->nominator().Add(info, new_pod->status.nominated_node_name);
    }
  }
  queue_->Update(*old_pod, std::move(info));
}

void Scheduler::OnPodDelete(const api::PodPtr& pod) {
  gangs_->OnPodDelete(pod);
  queues_->OnPodDelete(pod);
  if (IsAssigned(*pod)) {
    Status s = cache_.RemovePod(*pod);
    (void)s;
    framework::EventObjects objs;
    objs.old_pod = pod.get();
    queue_->MoveAllToActiveOrBackoffQueue(
        {framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete"}, objs);
    return;
  }
  queue_->Delete(*pod);
  if (auto* fw = ProfileFor(*pod)) fw->RejectWaitingPod(pod->metadata.uid);
}

void Scheduler::OnNodeAdd(const api::NodePtr& node) {
  cache_.AddNode(node);
  framework::EventObjects objs;
  objs.new_node = node.get();
  queue_->MoveAllToActiveOrBackoffQueue({framework::EventResource::kNode, framework::kAdd, "NodeAdd"},
                                        objs);
}

void Scheduler::OnNodeUpdate(const api::NodePtr& old_node, const api::NodePtr& new_node) {
  cache_.UpdateNode(new_node);
  uint32_t actions = framework::NodeUpdateActions(*old_node, *new_node);
  if (actions == 0) return;
  framework::EventObjects objs;
  objs.old_node = old_node.get();
  objs.new_node = new_node.get();
  queue_->MoveAllToActiveOrBackoffQueue({framework::EventResource::kNode, actions, "NodeUpdate"},
                                        objs);
}

void Scheduler::OnNodeDelete(const api::NodePtr& node) { cache_.RemoveNode(*node); }

void Scheduler::OnPriorityClassAdd(const std::shared_ptr<const api::PriorityClass>& pc) {
  std::lock_guard<std::mutex> l(pc_mu_);
  priority_classes_[pc->metadata.name] = pc;
}

void Scheduler::OnPriorityClassDelete(const std::shared_ptr<const api::PriorityClass>& pc) {
  std::lock_guard<std::mutex> l(pc_mu_);
  priority_classes_.erase(pc->metadata.name);
}

int32_t Scheduler::PriorityOf(const api::Pod& pod) const {
  if (pod.spec.priority) return *pod.spec.priority;
  std::lock_guard<std::mutex> l(pc_mu_);
  if (!pod.spec.priority_class_name.empty()) {
    auto it = priority_classes_.find(pod.spec.priority_class_name);
    if (it != priority_classes_.end()) return it->second->value;
  }
  for (const auto& [n, pc] : priority_classes_) {
    if (pc->global_default) return pc->value;
  }
  return 0;
}

void Scheduler::WriteGangStatus(const std::string& gang_key, GangOutcome outcome,
                                std::string_view message, const api::Pod* member) {
  WritePodGroupStatus(*gangs_, *opts_.client, gang_key, outcome, message, member);
}

bool Scheduler::GangBindingsInFlight(const std::string& gang_key) const {
  auto sum = gangs_->SummaryOf(gang_key);
  return sum && sum->counts.assumed > 0;
}

void Scheduler::FlushGangStatusWrites() {
  auto batch = std::move(gang_status_batch_);
  gang_status_batch_.clear();
  for (const auto& [key, member] : batch) {
    WriteGangStatus(key, GangOutcome::kNone, "", member.get());
  }
}

uint64_t Scheduler::Random(uint64_t n) {
  if (n == 0) return 0;
  std::lock_guard<std::mutex> l(rng_mu_);
  return rng_() % n;
}

framework::Framework* Scheduler::ProfileFor(const api::Pod& pod) {
  return Profile(pod.spec.scheduler_name);
}

framework::Framework* Scheduler::Profile(const std::string& name) {
  auto it = profiles_.find(name);
  return it == profiles_.end() ? nullptr : it->second.get();
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard<std::mutex> l(stats_mu_);
  return stats_;
}

// ---- the scheduling algorithm ----

int Scheduler::NumFeasibleNodesToFind(int32_t percentage, int num_all_nodes) const {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  if (percentage == 0) {
    percentage = 50 - num_all_nodes / 125;
    if (percentage < kMinFeasibleNodesPercentageToFind) percentage = kMinFeasibleNodesPercentageToFind;
  }
  int n = static_cast<int>(static_cast<int64_t>(num_all_nodes) * percentage / 100);
  if (n < kMinFeasibleNodesToFind) return kMinFeasibleNodesToFind;
  return n;
}

void Scheduler::SyncNominatedLookups() {
  changed_nominations_.clear();
  if (queue_->nominator().DrainChanged(&changed_nominations_)) {
    for (const auto& name : changed_nominations_) {
      if (const NodeInfo* ni = snapshot_.Get(name)) ni->reset_nominated_lookup();
    }
  } else {
    for (const NodeInfo* ni : snapshot_.List()) ni->reset_nominated_lookup();
  }
}

namespace {
// How far ahead of the node being filtered its NodeInfo is prefetched.
constexpr size_t kPrefetchDistance = 6;
}  // namespace

void Scheduler::FindNodesThatFitPod(framework::Framework& fwk, CycleState& state,
                                    const PodInfo& pod, Diagnosis* diag,
                                    std::vector<const NodeInfo*>* feasible, Status* err,
                                    PlacementBatch* follow, ScheduleResult* result,
                                    bool* placed) {
  if (placed) *placed = false;
  feasible->clear();
  SyncNominatedLookups();
  const auto& all = snapshot_.List();
  diag->num_all_nodes = static_cast<int>(all.size());
  framework::PreFilterResult pfr;
  Status s = fwk.RunPreFilterPlugins(state, pod, &pfr);
  if (!s.IsSuccess()) {
    if (!s.IsRejected()) {
      *err = std::move(s);
      return;
    }
    diag->pre_filter_msg = s.Message();
    if (s.code() == Code::kPending) {
      diag->pending_plugins.insert(s.plugin());
    } else {
      diag->unschedulable_plugins.insert(s.plugin());
    }
    for (const auto* ni : all) diag->node_statuses.emplace_back(ni->name(), s);
    return;
  }
  if (follow && pfr.all_nodes) {
    if (ScheduleFromBatch(fwk, state, pod, follow, result, err)) {
      *placed = true;
      return;
    }
    if (!err->IsSuccess()) return;
  }
  if (follow) follow->Reset();

  // A nominated node (from an earlier preemption) is tried first (upstream
  // evaluateNominatedNode).
  const std::string& nominated = pod.pod->status.nominated_node_name;
  if (!nominated.empty() && (!node_restriction_ || node_restriction_->count(nominated))) {
    if (const NodeInfo* ni = snapshot_.Get(nominated)) {
      if (pfr.all_nodes || pfr.node_names.count(nominated)) {
        Status fs = fwk.RunFilterPluginsWithNominatedPods(state, pod, *ni);
        if (fs.IsSuccess()) {
          feasible->push_back(ni);
          return;
        }
      }
    }
  }

  std::vector<const NodeInfo*> subset;
  const std::vector<const NodeInfo*>* nodes = &all;
  if (!pfr.all_nodes) {
    std::string names;
    for (const auto& p : pfr.narrowed_by) names += (names.empty() ? "" : " ") + p;
    diag->absent_nodes_reason = "node(s) didn't satisfy plugin(s) [" + names + "]";
  }
  if (!pfr.all_nodes || node_restriction_) {
    for (const auto* ni : all) {
      if ((pfr.all_nodes || pfr.node_names.count(ni->name())) &&
          (!node_restriction_ || node_restriction_->count(ni->name()))) {
        subset.push_back(ni);
      }
    }
    nodes = &subset;
  }
  const size_t n = nodes->size();
  if (n == 0) return;
  const size_t to_find =
      static_cast<size_t>(NumFeasibleNodesToFind(fwk.PercentageOfNodesToScore(), static_cast<int>(n)));
  const size_t start = next_start_node_index_ % n;
  if (!fwk.HasFilterPlugins()) {
    for (size_t i = 0; i < std::min(n, to_find); ++i) feasible->push_back((*nodes)[(start + i) % n]);
    next_start_node_index_ = (start + feasible->size()) % n;
    return;
  }
  const bool check_nominated = !queue_->nominator().Empty();
  framework::ExtensionPointTimer timer(fwk.extension_point_observer(),
                                       framework::ExtensionPoint::kFilter);
  statuses_.resize(n);
  fits_.resize(n);  // every index of a block is written before it is read
  // Blocks of nodes are filtered in parallel; feasible nodes are then taken in node order
  // so that the result does not depend on thread timing.
  const size_t block = std::max<size_t>(to_find, 256);
  size_t processed = 0;
  bool failed = false;
  for (size_t b = 0; b < n && feasible->size() < to_find && !failed; b += block) {
    const size_t e = std::min(n, b + block);
    parallelizer_->Until(e - b, 16, [&](size_t lo, size_t hi) {
      const size_t end = b + hi;
      for (size_t k = b + lo; k < end; ++k) {
        if (k + kPrefetchDistance < end) (*nodes)[(start + k + kPrefetchDistance) % n]->Prefetch();
        const NodeInfo& ni = *(*nodes)[(start + k) % n];
        Status fs = check_nominated ? fwk.RunFilterPluginsWithNominatedPods(state, pod, ni)
                                    : fwk.RunFilterPlugins(state, pod, ni);
        if (fs.IsSuccess()) {
          fits_[k] = 1;  // statuses_[k] is not read for feasible nodes
        } else {
          fits_[k] = 0;
          statuses_[k] = std::move(fs);
        }
      }
    });
    for (size_t k = b; k < e; ++k) {
      ++processed;
      const NodeInfo* ni = (*nodes)[(start + k) % n];
      if (fits_[k]) {
        feasible->push_back(ni);
        if (feasible->size() >= to_find) break;
        continue;
      }
      Status& fs = statuses_[k];
      if (fs.IsError()) {
        *err = std::move(fs);
        failed = true;
        break;
      }
      if (fs.code() == Code::kPending) {
        diag->pending_plugins.insert(fs.plugin());
      } else {
        diag->unschedulable_plugins.insert(fs.plugin());
      }
      diag->node_statuses.emplace_back(ni->name(), std::move(fs));
    }
  }
  next_start_node_index_ = (start + processed) % n;
}

bool Scheduler::ScheduleFromBatch(framework::Framework& fwk, CycleState& state,
                                  const PodInfo& pod, PlacementBatch* batch,
                                  ScheduleResult* result, Status* err) {
  auto& nodes = batch->nodes;
  if (nodes.empty() || batch->chosen >= nodes.size()) return false;
  // Only the node the previous pod took has changed for this pod (the signature).
  const size_t i = batch->chosen;
  Status fs;
  {
    framework::ExtensionPointTimer timer(fwk.extension_point_observer(),
                                         framework::ExtensionPoint::kFilter);
    fs = queue_->nominator().Empty() ? fwk.RunFilterPlugins(state, pod, *nodes[i])
                                     : fwk.RunFilterPluginsWithNominatedPods(state, pod, *nodes[i]);
  }
  if (fs.IsError()) {
    *err = std::move(fs);
    return false;
  }
  const bool removed = !fs.IsSuccess();
  if (removed) {
    nodes.erase(nodes.begin() + static_cast<ptrdiff_t>(i));
    if (nodes.empty()) return false;
  }
  // With one node left there is no choice to make, but a dropped node still leaves the
  // table and totals (scores are normalized again over the remaining node).
  if (batch->scored && (nodes.size() > 1 || removed)) {
    Status s = fwk.RunPreScorePlugins(state, pod, nodes);
    if (!s.IsSuccess()) {
      *err = std::move(s);
      return false;
    }
    if (fwk.HasScorePlugins()) {
      if (!fwk.RescoreScoreTable(state, pod, nodes, i, removed, &batch->table, &batch->totals,
                                 &s)) {
        return false;  // the plugins that score this pod differ: schedule it in full
      }
      if (!s.IsSuccess()) {
        *err = std::move(s);
        return false;
      }
    } else {
      batch->totals.assign(nodes.size(), 1);
    }
    batch->chosen = SelectHost(batch->totals);
  } else {
    batch->chosen = 0;  // one node left (a batch without scores started with one node)
  }
  result->suggested_host = nodes[batch->chosen]->name();
  result->feasible_nodes = static_cast<int>(nodes.size());
  result->evaluated_nodes = static_cast<int>(nodes.size());
  ++batch->batched_pods;
  return true;
}

size_t Scheduler::SelectHost(const std::vector<int64_t>& totals) {
  // Uniform among the highest totals, as upstream's reservoir sampling (one draw per
  // tie), with one draw per call: count the ties, draw which one, find it.
  int64_t max_score = totals[0];
  uint64_t count = 1;
  for (size_t i = 1; i < totals.size(); ++i) {
    if (totals[i] > max_score) {
      max_score = totals[i];
      count = 1;
    } else if (totals[i] == max_score) {
      ++count;
    }
  }
  uint64_t pick = count == 1 ? 0 : Random(count);
  for (size_t i = 0;; ++i) {
    if (totals[i] == max_score && pick-- == 0) return i;
  }
}

Status Scheduler::SchedulePod(framework::Framework& fwk, CycleState& state, const PodInfo& pod,
                              ScheduleResult* result, Diagnosis* diag, PlacementBatch* batch) {
  if (snapshot_.NumNodes() == 0) return Status::Error("no nodes available to schedule pods");
  // A pod of the batch's signature is placed from it (node_restriction_ is fixed for the
  // batch's life: the PodGroup cycle makes one batch per placement attempt).
  PlacementBatch* follow =
      batch && batch->canonical && fwk.SameSignature(*batch->canonical, pod) ? batch : nullptr;
  std::vector<const NodeInfo*> feasible;
  Status err;
  bool placed = false;
  FindNodesThatFitPod(fwk, state, pod, diag, &feasible, &err, follow, result, &placed);
  if (placed) return Status::Success();
  if (batch) batch->Reset();
  if (!err.IsSuccess()) return err;
  if (feasible.empty()) {
    Status s(Code::kUnschedulable, diag->Message());
    return s;
  }
  result->feasible_nodes = static_cast<int>(feasible.size());
  result->evaluated_nodes = static_cast<int>(feasible.size() + diag->node_statuses.size());
  const bool start_batch = batch && fwk.SameSignature(pod, pod);
  if (feasible.size() == 1) {
    result->suggested_host = feasible[0]->name();
    if (start_batch) {
      batch->canonical = &pod;
      batch->nodes = std::move(feasible);
      batch->chosen = 0;
    }
    return Status::Success();
  }
  Status s = fwk.RunPreScorePlugins(state, pod, feasible);
  if (!s.IsSuccess()) return s;
  std::vector<int64_t> totals;
  if (fwk.HasScorePlugins()) {
    s = fwk.RunScorePlugins(state, pod, feasible, &totals,
                            start_batch ? &batch->table : nullptr);
    if (!s.IsSuccess()) return s;
  } else {
    totals.assign(feasible.size(), 1);
  }
  const size_t best = SelectHost(totals);
  result->suggested_host = feasible[best]->name();
  if (start_batch) {
    batch->canonical = &pod;
    batch->nodes = std::move(feasible);
    batch->totals = std::move(totals);
    batch->scored = true;
    batch->chosen = best;
  }
  return Status::Success();
}

// ---- scheduleOne ----

bool Scheduler::ScheduleOne(bool blocking) {
  QueuedPodInfoPtr qp = blocking ? queue_->Pop() : queue_->TryPop();
  if (!qp) return false;
  const int64_t cycle = queue_->SchedulingCycle();
  PodInfoPtr pod = qp->pod_info;
  framework::Framework* fwk = ProfileFor(*pod->pod);
  if (!fwk) return true;
  if (pod->pod->metadata.deletion_timestamp || cache_.IsAssumedPod(*pod->pod)) return true;
  {
    std::lock_guard<std::mutex> l(stats_mu_);
    ++stats_.attempts;
  }
  if (fwk->HasPodGroupPlugins()) {
    framework::PodGroupPlan plan;
    Status ps = fwk->RunPlanPodGroup(*pod, &plan);
    if (!ps.IsSuccess()) {
      if (ps.IsRejected()) qp->unschedulable_plugins = {ps.plugin()};
      HandleSchedulingFailure(*fwk, qp, ps, nullptr, "", cycle);
      return true;
    }
    if (!plan.empty()) {
      RunPodGroupCycle(fwk, qp, plan, cycle);
      return true;
    }
  }
  cache_.UpdateSnapshot(&snapshot_);
  auto state = std::make_shared<CycleState>();
  ScheduleResult result;
  Diagnosis diag;
  Status s = SchedulePod(*fwk, *state, *pod, &result, &diag);
  if (!s.IsSuccess()) {
    std::string nominated;
    if (s.IsRejected() && fwk->HasPostFilterPlugins()) {
      framework::NodeToStatus m;
      for (auto& [name, st] : diag.node_statuses) {
        if (const NodeInfo* ni = snapshot_.Get(name)) m.statuses.emplace_back(ni, st);
      }
      framework::PostFilterResult pr;
      Status ps = fwk->RunPostFilterPlugins(*state, *pod, m, &pr);
      if (ps.IsSuccess()) {
        nominated = pr.nominated_node_name;
      } else if (ps.IsRejected()) {
        diag.post_filter_msg = ps.Message();
      }
      if (!diag.post_filter_msg.empty() || !nominated.empty()) {
        s = Status(s.code(), diag.Message());
      }
    }
    HandleSchedulingFailure(*fwk, qp, s, s.IsRejected() ? &diag : nullptr, nominated, cycle);
    return true;
  }

  CommitPod(fwk, qp, std::move(state), result.suggested_host, cycle);
  return true;
}

void Scheduler::CommitPod(framework::Framework* fwk, const QueuedPodInfoPtr& qp,
                          std::shared_ptr<CycleState> state, const std::string& host,
                          int64_t cycle, PodInfoPtr assumed) {
  // Assume: the pod counts on its node before the binding is confirmed.
  const PodInfoPtr& pod = qp->pod_info;
  if (!assumed) {
    auto copy = std::make_shared<api::Pod>(*pod->pod);
    copy->spec.node_name = host;
    assumed = PodInfo::Make(std::move(copy));
  }
  const api::PodPtr& assumed_pod = assumed->pod;
  Status as = cache_.AssumePod(assumed);
  if (!as.IsSuccess()) {
    HandleSchedulingFailure(*fwk, qp, as, nullptr, "", cycle);
    return;
  }
  queue_->nominator().Delete(*pod->pod);
  Status rs = fwk->RunReservePluginsReserve(*state, *assumed, host);
  if (!rs.IsSuccess()) {
    fwk->RunReservePluginsUnreserve(*state, *assumed, host);
    (void)cache_.ForgetPod(*assumed_pod);
    if (rs.IsRejected()) qp->unschedulable_plugins = {rs.plugin()};
    HandleSchedulingFailure(*fwk, qp, rs, nullptr, "", cycle);
    return;
  }
  Status ps = fwk->RunPermitPlugins(
      *state, *assumed, host, [this, fwk, state, qp, assumed, cycle](Status outcome) {
        SubmitBinding([this, fwk, state, qp, assumed, cycle, outcome]() mutable {
          RunBindingCycle(fwk, state, qp, assumed, cycle, std::move(outcome));
        });
      });
  if (ps.IsWait()) return;
  if (!ps.IsSuccess()) {
    fwk->RunReservePluginsUnreserve(*state, *assumed, host);
    (void)cache_.ForgetPod(*assumed_pod);
    if (ps.IsRejected()) qp->unschedulable_plugins = {ps.plugin()};
    HandleSchedulingFailure(*fwk, qp, ps, nullptr, "", cycle);
    return;
  }
  SubmitBinding([this, fwk, state, qp, assumed, cycle]() {
    RunBindingCycle(fwk, state, qp, assumed, cycle, Status::Success());
  });
}

void Scheduler::SubmitBinding(std::function<void()> fn) {
  if (!binding_pool_) {
    fn();
    return;
  }
  if (hold_bindings_thread_ == std::this_thread::get_id()) {
    held_bindings_.push_back(std::move(fn));
    return;
  }
  {
    std::lock_guard<std::mutex> l(inflight_mu_);
    ++inflight_bindings_;
  }
  binding_pool_->Submit([this, fn = std::move(fn)]() {
    fn();
    std::lock_guard<std::mutex> l(inflight_mu_);
    if (--inflight_bindings_ == 0) inflight_cv_.notify_all();
  });
}

void Scheduler::WaitForBindings() {
  std::unique_lock<std::mutex> l(inflight_mu_);
  inflight_cv_.wait(l, [&] { return inflight_bindings_ == 0; });
}

void Scheduler::RunBindingCycle(framework::Framework* fwk, std::shared_ptr<CycleState> state,
                                QueuedPodInfoPtr qp, PodInfoPtr assumed, int64_t cycle,
                                Status permit_status) {
  const std::string& host = assumed->pod->spec.node_name;
  Status s = std::move(permit_status);
  if (s.IsSuccess()) s = fwk->RunPreBindPlugins(*state, *assumed, host);
  // A node deleted while the binding waited (Permit, a rate-limited client's backlog,
  // PreBind) would get a pod that the pod GC then deletes: fail the binding instead, so
  // the pod is forgotten and requeued. Upstream v1.20 binds regardless (the API server does
  // not check the node); the fault test load_churn saw bindings sent 35 s after deletion.
  if (s.IsSuccess() && !cache_.HasNode(host)) {
    s = Status::Error("node " + host + " was deleted before pod " + assumed->pod->Key() +
                      " could be bound to it");
  }
  if (s.IsSuccess()) {
    s = fwk->RunBindPlugins(*state, *assumed, host);
    if (s.IsSkip()) s = Status::Error("no bind plugin bound the pod");
  }
  if (s.IsSuccess()) {
    (void)cache_.FinishBinding(*assumed->pod, opts_.clock->Now());
    fwk->RunPostBindPlugins(*state, *assumed, host);
    {
      std::lock_guard<std::mutex> l(stats_mu_);
      ++stats_.scheduled;
    }
    opts_.client->RecordEvent(*assumed->pod, "Normal", "Scheduled",
                              "Successfully assigned " + assumed->pod->Key() + " to " + host);
    if (on_bound) on_bound(*assumed->pod, host);
    return;
  }
  // Binding cycle failed: undo and requeue (upstream handleBindingCycleError).
  fwk->RunReservePluginsUnreserve(*state, *assumed, host);
  (void)cache_.ForgetPod(*assumed->pod);
  {
    std::lock_guard<std::mutex> l(stats_mu_);
    ++stats_.bind_failures;
  }
  // The members that bound before this one left the status write to the last binding.
  if (auto ref = gangs_->RefOf(*assumed->pod); ref && !GangBindingsInFlight(ref->key)) {
    WriteGangStatus(ref->key, GangOutcome::kNone, "", nullptr);
  }
  framework::EventObjects objs;
  objs.old_pod = assumed->pod.get();
  queue_->MoveAllToActiveOrBackoffQueue(
      {framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete"}, objs);
  if (s.IsRejected()) qp->unschedulable_plugins = {s.plugin()};
  HandleSchedulingFailure(*fwk, qp, s, nullptr, "", cycle);
}

void Scheduler::HandleSchedulingFailure(framework::Framework& fwk, const QueuedPodInfoPtr& qp,
                                        const Status& status, const Diagnosis* diag,
                                        const std::string& nominated, int64_t cycle,
                                        const std::vector<std::string>* reasons) {
  {
    std::lock_guard<std::mutex> l(stats_mu_);
    if (status.IsRejected()) {
      ++stats_.unschedulable;
    } else {
      ++stats_.errors;
    }
  }
  if (diag) {
    qp->unschedulable_plugins = diag->unschedulable_plugins;
    qp->pending_plugins = diag->pending_plugins;
  } else if (!status.IsRejected()) {
    qp->unschedulable_plugins.clear();
    qp->pending_plugins.clear();
  }
  std::string msg = status.Message();
  qp->last_failure_message = msg;
  qp->last_failure_reasons.clear();
  if (diag) {
    std::set<std::string> reasons;
    if (!diag->pre_filter_msg.empty()) reasons.insert(diag->pre_filter_msg);
    for (const auto& [node, st] : diag->node_statuses) {
      for (const auto& r : st.reasons()) reasons.insert(r);
    }
    qp->last_failure_reasons.assign(reasons.begin(), reasons.end());
  } else if (reasons) {
    qp->last_failure_reasons = *reasons;
  } else {
    qp->last_failure_reasons.push_back(msg);
  }
  const api::Pod& pod = qp->Pod();
  queue_->AddUnschedulableIfNotPresent(qp, cycle);
  if (!nominated.empty()) queue_->nominator().Add(qp->pod_info, nominated);
  if (on_failure) on_failure(*qp, status);
  opts_.client->RecordEvent(pod, "Warning", "FailedScheduling", msg);
  api::PodCondition cond{"PodScheduled", "False",
                         status.IsRejected() ? "Unschedulable" : "SchedulerError", msg};
  const std::string* nnn = nominated.empty() ? nullptr : &nominated;
  (void)opts_.client->UpdatePodStatus(pod, &cond, nnn);
}

// ---- periodic work ----

void Scheduler::Tick() {
  const api::Timestamp now = opts_.clock->Now();
  queue_->FlushBackoffQCompleted();
  queue_->FlushUnschedulablePodsLeftover();
  for (auto& [name, fw] : profiles_) fw->ExpireWaitingPods(now);
  auto expired = cache_.CleanupExpiredAssumedPods(now);
  if (!expired.empty()) {
    queue_->MoveAllToActiveOrBackoffQueue(
        {framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete"}, {});
  }
}

api::Timestamp Scheduler::NextWakeTime() const {
  api::Timestamp t = std::min(queue_->NextBackoffExpiry(), queue_->NextUnschedulableTimeout());
  for (const auto& [name, fw] : profiles_) t = std::min(t, fw->NextPermitDeadline());
  return t;
}

void Scheduler::Run() {
  std::thread ticker([this] {
    while (!stopped_.load()) {
      Tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  while (!stopped_.load()) {
    if (!ScheduleOne(/*blocking=*/true)) break;
  }
  stopped_ = true;
  ticker.join();
}

void Scheduler::Stop() {
  stopped_ = true;
  if (queue_) queue_->Close();
  WaitForBindings();
}

}  // namespace phalanx::scheduler
