// The scheduling cycle of one pod and its binding cycle (upstream
// pkg/scheduler/schedule_one.go): pop, snapshot, PreFilter / Filter / PostFilter /
// PreScore / Score / NormalizeScore, selectHost, assume, Reserve, Permit; then WaitOnPermit,
// PreBind, Bind, PostBind on the binding pool (or inline).
#include <algorithm>
#include <chrono>
#include <map>

#include "framework/score_util.h"
#include "gang/coordinator.h"
#include "scheduler/binding_pool.h"
#include "scheduler/scheduler.h"
#include "spdlog/spdlog.h"

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
// How far ahead of the node being filtered its NodeInfo is prefetched.
constexpr size_t kPrefetchDistance = 6;

void RecordRejection(Diagnosis* diag, const Status& s) {
  if (s.code() == Code::kPending) {
    diag->pending_plugins.insert(s.plugin());
  } else {
    diag->unschedulable_plugins.insert(s.plugin());
  }
}
}  // namespace

void Scheduler::LogCacheError(const char* op, const api::Pod& pod, const Status& s) {
  if (!s.IsSuccess()) spdlog::warn("cache: {} {}: {}", op, pod.Key(), s.Message());
}

std::string Diagnosis::Message() const {
  std::string msg;
  if (!pre_filter_msg.empty()) {
    msg = framework::NodesAvailableMessage(static_cast<size_t>(num_all_nodes), {}) + " " +
          pre_filter_msg + ".";
  } else {
    std::map<std::string, size_t> hist;
    for (const auto& [node, st] : node_statuses) {
      for (const auto& r : st.reasons()) ++hist[r];
    }
    // Nodes left out by PreFilterResult count under the absent-nodes reason (upstream
    // FitError.Error: NumAllNodes - NodeToStatus.Len()).
    const int absent = num_all_nodes - static_cast<int>(node_statuses.size());
    if (!absent_nodes_reason.empty() && absent > 0) hist[absent_nodes_reason] += absent;
    msg = framework::NodesAvailableMessage(static_cast<size_t>(num_all_nodes), hist);
  }
  // upstream FitError.Error (1.36): PostFilter messages end in their own full stop
  // ("preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.").
  if (!post_filter_msg.empty()) msg += " " + post_filter_msg;
  return msg;
}

// ---- the scheduling algorithm ----

int Scheduler::NumFeasibleNodesToFind(int32_t percentage, int num_all_nodes) const {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  if (percentage == 0) {
    percentage = 50 - num_all_nodes / 125;
    if (percentage < kMinFeasibleNodesPercentageToFind)
      percentage = kMinFeasibleNodesPercentageToFind;
  }
  int n = static_cast<int>(static_cast<int64_t>(num_all_nodes) * percentage / 100);
  if (n < kMinFeasibleNodesToFind) return kMinFeasibleNodesToFind;
  return n;
}

bool Scheduler::SyncNominatedLookups() {
  changed_nominations_.clear();
  if (queue_->nominator().DrainChanged(&changed_nominations_)) {
    for (const auto& name : changed_nominations_) {
      if (const NodeInfo* ni = snapshot_.Get(name)) ni->reset_nominated_lookup();
    }
    return !changed_nominations_.empty();
  }
  for (const NodeInfo* ni : snapshot_.List()) ni->reset_nominated_lookup();
  return true;
}

void Scheduler::FindNodesThatFitPod(const FilterPass& pass, PlacementBatch* follow,
                                    ScheduleResult* result, bool* placed) {
  if (placed) *placed = false;
  pass.feasible->clear();
  // Pods nominated onto the batch's nodes changed their Filter results: start afresh.
  if (SyncNominatedLookups()) {
    if (follow) follow->Reset();
    follow = nullptr;
    // A node-local cache checks each node's nominations itself.
    if (pass.cache && !pass.cache->node_local) pass.cache->ClearNodes();
  }
  const auto& all = snapshot_.List();
  Diagnosis* diag = pass.diag;
  diag->num_all_nodes = static_cast<int>(all.size());
  framework::PreFilterResult pfr;
  Status s = pass.fwk.RunPreFilterPlugins(pass.state, pass.pod, &pfr);
  if (!s.IsSuccess()) {
    if (!s.IsRejected()) {
      *pass.err = std::move(s);
      return;
    }
    diag->pre_filter_msg = s.Message();
    RecordRejection(diag, s);
    for (const auto* ni : all) {
      diag->node_statuses.emplace_back(ni->name(), s);
      diag->node_infos.push_back(ni);
    }
    return;
  }
  if (follow && pfr.all_nodes) {
    if (ScheduleFromBatch(pass.fwk, pass.state, pass.pod, follow, result, pass.err)) {
      *placed = true;
      return;
    }
    if (!pass.err->IsSuccess()) return;
  }
  if (follow) follow->Reset();
  if (const NodeInfo* ni = EvaluateNominatedNode(pass, pfr)) {
    pass.feasible->push_back(ni);
    // upstream evaluateNominatedNode runs the extenders on the nominated node too; when they
    // drop it, every node is filtered.
    if (extender_list_.extenders.empty()) return;
    if (!ExtendersPass(pass, pass.feasible) || !pass.feasible->empty()) return;
  }
  if (!pfr.all_nodes) {
    std::string names;
    for (const auto& p : pfr.narrowed_by) names += (names.empty() ? "" : " ") + p;
    diag->absent_nodes_reason = "node(s) didn't satisfy plugin(s) [" + names + "]";
  }
  if (pfr.all_nodes && !pass.restriction) {
    if (pass.cache) {
      FilterNodesCached(pass);
      if (pass.cache->walked || !pass.err->IsSuccess()) return;
    }
    FilterNodes(pass, all);
  } else {
    std::vector<const NodeInfo*> subset;
    for (const auto* ni : all) {
      if ((pfr.all_nodes || pfr.node_names.count(ni->name())) &&
          (!pass.restriction || pass.restriction->count(ni->name()))) {
        subset.push_back(ni);
      }
    }
    FilterNodes(pass, subset);
  }
  if (!extender_list_.extenders.empty() && pass.err->IsSuccess())
    ExtendersPass(pass, pass.feasible);
}

const NodeInfo* Scheduler::EvaluateNominatedNode(const FilterPass& pass,
                                                 const framework::PreFilterResult& pfr) {
  const std::string& nominated = pass.pod.pod->status.nominated_node_name;
  if (nominated.empty() || (pass.restriction && !pass.restriction->count(nominated))) {
    return nullptr;
  }
  const NodeInfo* ni = snapshot_.Get(nominated);
  if (!ni || !(pfr.all_nodes || pfr.node_names.count(nominated))) return nullptr;
  Status fs = pass.fwk.RunFilterPluginsWithNominatedPods(pass.state, pass.pod, *ni);
  return fs.IsSuccess() ? ni : nullptr;
}

void Scheduler::FilterNodes(const FilterPass& pass, const std::vector<const NodeInfo*>& nodes) {
  framework::Framework& fwk = pass.fwk;
  std::vector<const NodeInfo*>* feasible = pass.feasible;
  const size_t n = nodes.size();
  if (n == 0) return;
  const size_t to_find = static_cast<size_t>(
      NumFeasibleNodesToFind(fwk.PercentageOfNodesToScore(), static_cast<int>(n)));
  const size_t start = next_start_node_index_ % n;
  if (!fwk.HasFilterPlugins()) {
    for (size_t i = 0; i < std::min(n, to_find); ++i) feasible->push_back(nodes[(start + i) % n]);
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
        if (k + kPrefetchDistance < end) nodes[(start + k + kPrefetchDistance) % n]->Prefetch();
        const NodeInfo& ni = *nodes[(start + k) % n];
        Status fs = check_nominated
                        ? fwk.RunFilterPluginsWithNominatedPods(pass.state, pass.pod, ni)
                        : fwk.RunFilterPlugins(pass.state, pass.pod, ni);
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
      const NodeInfo* ni = nodes[(start + k) % n];
      if (fits_[k]) {
        feasible->push_back(ni);
        if (feasible->size() >= to_find) break;
        continue;
      }
      Status& fs = statuses_[k];
      if (fs.IsError()) {
        *pass.err = std::move(fs);
        failed = true;
        timer.set_code(framework::Code::kError);
        break;
      }
      RecordRejection(pass.diag, fs);
      pass.diag->node_statuses.emplace_back(ni->name(), std::move(fs));
      pass.diag->node_infos.push_back(ni);
    }
  }
  next_start_node_index_ = (start + processed) % n;
}

void Scheduler::FilterNodesCached(const FilterPass& pass) {
  framework::Framework& fwk = pass.fwk;
  NodeResultCache& c = *pass.cache;
  const auto& nodes = snapshot_.List();
  const size_t n = nodes.size();
  c.walked = false;
  c.feasible_slots.clear();
  if (n == 0) return;
  if (c.node.size() != n) {
    c.ClearNodes();
    c.node.assign(n, nullptr);
    c.generation.assign(n, 0);
    c.fits.assign(n, 0);
    c.status.assign(n, Status());
    c.nominated.assign(n, nullptr);
  }
  const size_t to_find = static_cast<size_t>(
      NumFeasibleNodesToFind(fwk.PercentageOfNodesToScore(), static_cast<int>(n)));
  const size_t start = next_start_node_index_ % n;
  const bool has_filters = fwk.HasFilterPlugins();
  const bool check_nominated = !queue_->nominator().Empty();
  const std::vector<int64_t>& generations = snapshot_.NodeGenerations();
  auto view_of = [&](size_t slot) {
    return check_nominated ? fwk.NominatedPodsViewForNode(*nodes[slot]) : nullptr;
  };
  auto evaluate = [&](size_t slot) {
    const NodeInfo& ni = *nodes[slot];
    Status fs;
    if (has_filters) {
      fs = check_nominated ? fwk.RunFilterPluginsWithNominatedPods(pass.state, pass.pod, ni)
                           : fwk.RunFilterPlugins(pass.state, pass.pod, ni);
    }
    c.fits[slot] = fs.IsSuccess() ? 1 : 0;
    c.status[slot] = fs.IsSuccess() ? Status() : std::move(fs);
    c.node[slot] = &ni;
    c.generation[slot] = ni.generation();
    c.nominated[slot] = view_of(slot);
  };
  // The same blocks as FilterNodes; only the nodes without a valid verdict are filtered
  // (in parallel when there are many), then the block is taken in node order. Slots are
  // stepped with a wrap instead of `% n` per node (a division per slot was most of the
  // walk's cost at 5,000 nodes).
  const size_t block = std::max<size_t>(to_find, 256);
  size_t processed = 0;
  std::vector<uint32_t>& stale = c.stale;
  pass.feasible->reserve(std::min(n, to_find));
  c.feasible_slots.reserve(std::min(n, to_find));
  const NodeInfo* const* node_at = nodes.data();
  const int64_t* gen_at = generations.data();
  for (size_t b = 0; b < n && c.feasible_slots.size() < to_find; b += block) {
    const size_t e = std::min(n, b + block);
    const size_t first = (start + b) % n;
    stale.clear();
    for (size_t k = b, slot = first; k < e; ++k) {
      if (c.node[slot] != node_at[slot] || c.generation[slot] != gen_at[slot] ||
          (c.node_local && c.nominated[slot] != view_of(slot))) {
        stale.push_back(static_cast<uint32_t>(slot));
      }
      if (++slot == n) slot = 0;
    }
    if (!stale.empty()) {
      framework::ExtensionPointTimer timer(fwk.extension_point_observer(),
                                           framework::ExtensionPoint::kFilter);
      if (stale.size() < 16) {
        for (uint32_t slot : stale) evaluate(slot);
      } else {
        parallelizer_->Until(stale.size(), 16, [&](size_t lo, size_t hi) {
          for (size_t q = lo; q < hi; ++q) evaluate(stale[q]);
        });
      }
      c.filtered += static_cast<int64_t>(stale.size());
    }
    for (size_t k = b, slot = first; k < e; ++k) {
      ++processed;
      if (c.fits[slot]) {
        pass.feasible->push_back(node_at[slot]);
        c.feasible_slots.push_back(static_cast<uint32_t>(slot));
        if (c.feasible_slots.size() >= to_find) break;
      } else if (c.status[slot].IsError()) {
        *pass.err = c.status[slot];
        c.ClearNodes();
        pass.feasible->clear();
        c.feasible_slots.clear();
        next_start_node_index_ = (start + processed) % n;
        return;
      }
      if (++slot == n) slot = 0;
    }
  }
  if (pass.feasible->empty()) {
    // Every node was looked at and none fits: the Diagnosis FilterNodes would build (each
    // node's status in walk order; the start index stays) comes from the verdicts just
    // taken, instead of filtering every node a second time.
    for (size_t k = 0; k < n; ++k) {
      const size_t slot = (start + k) % n;
      RecordRejection(pass.diag, c.status[slot]);
      pass.diag->node_statuses.emplace_back(nodes[slot]->name(), c.status[slot]);
      pass.diag->node_infos.push_back(nodes[slot]);
    }
    c.walked = true;
    c.evaluated = static_cast<int>(n);
    return;
  }
  c.walked = true;
  c.evaluated = static_cast<int>(processed);
  next_start_node_index_ = (start + processed) % n;
}

bool Scheduler::ScheduleFromBatch(framework::Framework& fwk, CycleState& state, const PodInfo& pod,
                                  PlacementBatch* batch, ScheduleResult* result, Status* err) {
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
  // tie), with one draw per call: count the ties, draw which one, find it. The maximum and
  // the count are separate branch-free passes (framework::MaxWithFloor: no dependency chain).
  const int64_t* t = totals.data();
  const size_t n = totals.size();
  const int64_t max_score = framework::MaxWithFloor(t + 1, n - 1, t[0]);
  uint64_t count = 0;
  for (size_t k = 0; k < n; ++k) count += t[k] == max_score ? 1 : 0;
  uint64_t pick = count == 1 ? 0 : Random(count);
  for (size_t k = 0;; ++k) {
    if (t[k] == max_score && pick-- == 0) return k;
  }
}

Status Scheduler::SchedulePod(framework::Framework& fwk, CycleState& state, const PodInfo& pod,
                              ScheduleResult* result, Diagnosis* diag, PlacementBatch* batch,
                              const std::set<std::string>* restriction, NodeResultCache* cache) {
  if (snapshot_.NumNodes() == 0) return Status::Error("no nodes available to schedule pods");
  // A pod of the batch's signature is placed from it (the restriction is fixed for the
  // batch's life: the PodGroup cycle makes one batch per placement attempt).
  // Placements are never batched past an extender: its answer for the next pod is its own.
  if (!extender_list_.extenders.empty()) {
    batch = nullptr;
    cache = nullptr;
  }
  // A pod of another signature passes a cache kept after failed cycles by (an unsignable
  // pod: a preemptor retrying on its nominated node) or restarts it (a signable one).
  if (cache && cache->keep_failed && cache->canonical && !fwk.SameSignature(pod, pod)) {
    cache = nullptr;
  }
  if (cache) {
    cache->walked = false;
    if (!cache->canonical || !fwk.SameSignature(*cache->canonical, pod)) {
      cache->Reset();
      if (fwk.SameSignature(pod, pod)) {
        cache->canonical = &pod;
      } else {
        cache = nullptr;
      }
    }
  }
  PlacementBatch* follow =
      batch && batch->canonical && fwk.SameSignature(*batch->canonical, pod) ? batch : nullptr;
  std::vector<const NodeInfo*> feasible;
  Status err;
  bool placed = false;
  FindNodesThatFitPod({fwk, state, pod, diag, &feasible, &err, restriction, cache}, follow, result,
                      &placed);
  if (placed) return Status::Success();
  if (batch) batch->Reset();
  if (!err.IsSuccess()) return err;
  if (feasible.empty()) return Status(Code::kUnschedulable, diag->Message());
  result->feasible_nodes = static_cast<int>(feasible.size());
  const bool walked = cache && cache->walked;
  result->evaluated_nodes =
      walked ? cache->evaluated : static_cast<int>(feasible.size() + diag->node_statuses.size());
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
  return PrioritizeNodes(fwk, state, pod, feasible, result, start_batch ? batch : nullptr,
                         walked ? cache : nullptr);
}

Status Scheduler::PrioritizeNodes(framework::Framework& fwk, CycleState& state, const PodInfo& pod,
                                  std::vector<const NodeInfo*>& feasible, ScheduleResult* result,
                                  PlacementBatch* batch, NodeResultCache* cache) {
  Status s = fwk.RunPreScorePlugins(state, pod, feasible);
  if (!s.IsSuccess()) return s;
  std::vector<int64_t> totals;
  if (fwk.HasScorePlugins() && cache) {
    s = fwk.RunScorePluginsCached(state, pod, feasible, cache->feasible_slots,
                                  snapshot_.NodeGenerations(), &cache->scores, &totals);
    if (!s.IsSuccess()) return s;
  } else if (fwk.HasScorePlugins()) {
    s = fwk.RunScorePlugins(state, pod, feasible, &totals, batch ? &batch->table : nullptr);
    if (!s.IsSuccess()) return s;
  } else {
    // upstream: every node scores 1 only when there are neither score plugins nor extenders.
    totals.assign(feasible.size(), extender_list_.extenders.empty() ? 1 : 0);
  }
  if (!extender_list_.extenders.empty()) AddExtenderScores(pod, feasible, &totals);
  const size_t best = SelectHost(totals);
  result->suggested_host = feasible[best]->name();
  if (batch) {
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
  CountAttempts(1);
  if (fwk->HasPodGroupPlugins()) {
    framework::QueuedPodGroupInfo plan;
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
  const ClusterMark mark = UpdateSnapshotAndMark();
  NodeResultCache* batch = PlainBatchFor(fwk, cycle, mark);
  auto state = std::make_shared<CycleState>();
  ScheduleResult result;
  Diagnosis diag;
  framework::ExtensionPointObserver* observer = fwk->extension_point_observer();
  if (observer) {
    // Upstream samples pluginMetricsSamplePercent of the cycles at random; every
    // (100/percent)-th cycle here, so that the scheduler's random stream is not touched.
    const int64_t percent = observer->PluginSamplePercent();
    state->record_plugin_metrics = (plugin_sample_counter_++ * percent) % 100 < percent;
  }
  const auto algorithm_start = std::chrono::steady_clock::now();
  Status s = SchedulePod(*fwk, *state, *pod, &result, &diag, nullptr, nullptr, batch);
  if (observer) observer->ObserveAlgorithm(framework::NanosSince(algorithm_start));
  if (!s.IsSuccess()) {
    AfterPlainCycle(fwk, pod, cycle, mark, false);
    HandleFailedAttempt(*fwk, qp, *state, std::move(s), diag, cycle);
    return true;
  }
  // The pod followed a cache an earlier pod started.
  if (batch && batch->canonical && batch->canonical != pod.get()) {
    absl::MutexLock l(&stats_mu_);
    ++stats_.batched_plain_pods;
  }
  const bool assumed = CommitPod(fwk, qp, std::move(state), result.suggested_host, cycle);
  AfterPlainCycle(fwk, pod, cycle, mark, assumed);
  return true;
}

// ---- opportunistic batching of plain pods ----

Scheduler::ClusterMark Scheduler::UpdateSnapshotAndMark() {
  absl::MutexLock l(&batch_mu_);
  cache_.UpdateSnapshot(&snapshot_);
  return {snapshot_.generation(), confirmed_assumed_touches_,
          object_epoch_.load(std::memory_order_acquire)};
}

NodeResultCache* Scheduler::PlainBatchFor(framework::Framework* fwk, int64_t cycle,
                                          const ClusterMark& mark) {
  if (!opts_.opportunistic_batching || !extender_list_.extenders.empty()) return nullptr;
  if (plain_batch_.canonical && plain_batch_.keep_failed) {
    if (plain_batch_fwk_ != fwk || mark.object_epoch != plain_batch_.epoch ||
        !FilterVerdictsNodeLocal()) {
      plain_batch_.Reset();
    }
  } else if (plain_batch_.canonical) {
    // Between the batch's last cycle and this one the cache saw that cycle's assume (one
    // touch of the chosen node) and confirmations of our own assumed pods, nothing else.
    const ClusterMark& was = plain_batch_mark_;
    const bool unchanged = mark.object_epoch == was.object_epoch &&
                           mark.snapshot_generation - was.snapshot_generation ==
                               1 + (mark.confirmations - was.confirmations);
    if (plain_batch_fwk_ != fwk || cycle != plain_batch_cycle_ + 1 || !unchanged) {
      plain_batch_.Reset();
    }
  }
  plain_batch_fwk_ = fwk;
  return &plain_batch_;
}

void Scheduler::AfterPlainCycle(framework::Framework* fwk, const PodInfoPtr& pod, int64_t cycle,
                                const ClusterMark& mark, bool assumed) {
  if (!opts_.opportunistic_batching) return;
  const bool used = plain_batch_.canonical != nullptr && fwk == plain_batch_fwk_ &&
                    fwk->SameSignature(*plain_batch_.canonical, *pod);
  // A pod that passed a cache kept after failed cycles by leaves it as it was.
  if (plain_batch_.keep_failed && !used) return;
  // A failed cycle of the cache's signature: the verdicts are kept for the next such pod
  // when they are node-local (NodeResultCache::keep_failed), without raw scores.
  if (!assumed && used && FilterVerdictsNodeLocal()) {
    if (plain_batch_.canonical == pod.get()) plain_batch_.canonical_ref = pod;
    plain_batch_.keep_failed = true;
    plain_batch_.node_local = true;
    plain_batch_.epoch = mark.object_epoch;
    plain_batch_.scores.Clear();
    return;
  }
  // upstream StoreScheduleResults / batchStateCompatible: a failed cycle ends the batch.
  if (!assumed || !plain_batch_.canonical) {
    plain_batch_.Reset();
    return;
  }
  // Placed from a cache kept after failed cycles: from here it goes on under the ordinary
  // rules (its slots still check their nominations).
  plain_batch_.keep_failed = false;
  // A batch the pod started holds its canonical pod (the queue may drop it).
  if (plain_batch_.canonical == pod.get()) plain_batch_.canonical_ref = pod;
  plain_batch_fwk_ = fwk;
  plain_batch_cycle_ = cycle;
  plain_batch_mark_ = mark;
}

bool Scheduler::FilterVerdictsNodeLocal() const {
  return snapshot_.HavePodsWithAffinityList().empty() &&
         snapshot_.HavePodsWithRequiredAntiAffinityList().empty() &&
         reservations_->View() == nullptr;
}

void Scheduler::HandleFailedAttempt(framework::Framework& fwk, const QueuedPodInfoPtr& qp,
                                    CycleState& state, Status s, Diagnosis& diag, int64_t cycle) {
  std::string nominated;
  if (s.IsRejected() && fwk.HasPostFilterPlugins()) {
    framework::NodeToStatus m;
    const bool aligned = diag.node_infos.size() == diag.node_statuses.size();
    m.statuses.reserve(diag.node_statuses.size());
    for (size_t i = 0; i < diag.node_statuses.size(); ++i) {
      const auto& [name, st] = diag.node_statuses[i];
      if (const NodeInfo* ni = aligned ? diag.node_infos[i] : snapshot_.Get(name)) {
        m.statuses.emplace_back(ni, st);
      }
    }
    framework::PostFilterResult pr;
    Status ps = fwk.RunPostFilterPlugins(state, *qp->pod_info, m, &pr);
    if (ps.IsSuccess()) {
      nominated = pr.nominated_node_name;
    } else if (ps.IsRejected()) {
      diag.post_filter_msg = ps.Message();
    }
    if (!diag.post_filter_msg.empty() || !nominated.empty()) s = Status(s.code(), diag.Message());
  }
  HandleSchedulingFailure(fwk, qp, s, s.IsRejected() ? &diag : nullptr, nominated, cycle);
}

bool Scheduler::CommitPod(framework::Framework* fwk, const QueuedPodInfoPtr& qp,
                          std::shared_ptr<CycleState> state, const std::string& host, int64_t cycle,
                          PodInfoPtr assumed, std::shared_ptr<BindingBatch> hold) {
  // Assume: the pod counts on its node before the binding is confirmed.
  const PodInfoPtr& pod = qp->pod_info;
  if (!assumed) {
    auto copy = std::make_shared<api::Pod>(*pod->pod);
    copy->spec.node_name = host;
    assumed = PodInfo::WithPod(*pod, std::move(copy));  // spec.nodeName is not derived from
  }
  const api::PodPtr& assumed_pod = assumed->pod;
  Status as = cache_.AssumePod(assumed);
  if (!as.IsSuccess()) {
    HandleSchedulingFailure(*fwk, qp, as, nullptr, "", cycle);
    return false;
  }
  queue_->nominator().Delete(*pod->pod);
  auto undo = [&](const Status& st) {
    fwk->RunReservePluginsUnreserve(*state, *assumed, host);
    LogCacheError("forget", *assumed_pod, cache_.ForgetPod(*assumed_pod));
    if (st.IsRejected()) qp->unschedulable_plugins = {st.plugin()};
    HandleSchedulingFailure(*fwk, qp, st, nullptr, "", cycle);
  };
  Status rs = fwk->RunReservePluginsReserve(*state, *assumed, host);
  if (!rs.IsSuccess()) {
    undo(rs);
    return false;
  }
  Status ps = fwk->RunPermitPlugins(
      *state, *assumed, host, [this, fwk, state, qp, assumed, cycle, hold](Status outcome) {
        SubmitBinding(
            [this, fwk, state, qp, assumed, cycle, outcome]() mutable {
              RunBindingCycle(fwk, state, qp, assumed, cycle, std::move(outcome));
            },
            hold.get());
      });
  if (ps.IsWait()) return true;
  if (!ps.IsSuccess()) {
    undo(ps);
    return false;
  }
  SubmitBinding([this, fwk, state, qp, assumed,
                 cycle]() { RunBindingCycle(fwk, state, qp, assumed, cycle, Status::Success()); },
                hold.get());
  return true;
}

void Scheduler::SubmitBinding(std::function<void()> fn, BindingBatch* hold) {
  if (!binding_pool_) {
    fn();
    return;
  }
  if (hold && hold->Hold(fn)) return;
  binding_pool_->Submit(std::move(fn));
}

void Scheduler::RunBindingCycle(framework::Framework* fwk, std::shared_ptr<CycleState> state,
                                QueuedPodInfoPtr qp, PodInfoPtr assumed, int64_t cycle,
                                Status permit_status) {
  Status s = std::move(permit_status);
  if (s.IsSuccess()) s = ContinuePreBind(fwk, state, qp, assumed, cycle, 0);
  if (s.IsWait()) return;  // parked; RetryWaitingPreBinds goes on with it
  FinishBindingCycle(fwk, std::move(state), std::move(qp), std::move(assumed), cycle, std::move(s));
}

Status Scheduler::ContinuePreBind(framework::Framework* fwk,
                                  const std::shared_ptr<CycleState>& state,
                                  const QueuedPodInfoPtr& qp, const PodInfoPtr& assumed,
                                  int64_t cycle, size_t from) {
  const std::string& host = assumed->pod->spec.node_name;
  while (true) {
    size_t waiting = 0;
    Status s = fwk->RunPreBindPlugins(*state, *assumed, host, from, &waiting);
    if (!s.IsWait()) return s;
    api::Timestamp wake_at = INT64_MAX;
    s = fwk->RunPreBindWait(waiting, *state, *assumed, host, opts_.clock->Now(), &wake_at);
    if (s.IsWait()) {
      absl::MutexLock l(&prebind_mu_);
      prebind_waiting_.push_back(PreBindWaiter{fwk, state, qp, assumed, cycle, waiting, wake_at});
      return s;
    }
    if (!s.IsSuccess()) return s;
    from = waiting + 1;
  }
}

void Scheduler::RetryWaitingPreBinds(api::Timestamp now) {
  std::vector<PreBindWaiter> waiters;
  {
    absl::MutexLock l(&prebind_mu_);
    if (prebind_waiting_.empty()) return;
    waiters.swap(prebind_waiting_);
  }
  std::vector<PreBindWaiter> still;
  for (PreBindWaiter& w : waiters) {
    api::Timestamp wake_at = INT64_MAX;
    Status s = w.fwk->RunPreBindWait(w.plugin, *w.state, *w.assumed, w.assumed->pod->spec.node_name,
                                     now, &wake_at);
    if (s.IsWait()) {
      w.wake_at = wake_at;
      still.push_back(std::move(w));
      continue;
    }
    SubmitBinding([this, w, s]() mutable {
      if (s.IsSuccess())
        s = ContinuePreBind(w.fwk, w.state, w.qp, w.assumed, w.cycle, w.plugin + 1);
      if (s.IsWait()) return;
      FinishBindingCycle(w.fwk, w.state, w.qp, w.assumed, w.cycle, std::move(s));
    });
  }
  absl::MutexLock l(&prebind_mu_);
  // Parked meanwhile (a binding thread): after the older ones.
  still.insert(still.end(), std::make_move_iterator(prebind_waiting_.begin()),
               std::make_move_iterator(prebind_waiting_.end()));
  prebind_waiting_.swap(still);
}

size_t Scheduler::WaitingInPreBind() const {
  absl::MutexLock l(&prebind_mu_);
  return prebind_waiting_.size();
}

void Scheduler::FinishBindingCycle(framework::Framework* fwk, std::shared_ptr<CycleState> state,
                                   QueuedPodInfoPtr qp, PodInfoPtr assumed, int64_t cycle,
                                   Status s) {
  const std::string& host = assumed->pod->spec.node_name;
  // A node deleted while the binding waited (Permit, a rate-limited client's backlog,
  // PreBind) would get a pod that the pod GC then deletes: fail the binding instead, so
  // the pod is forgotten and requeued. Upstream v1.20 binds regardless (the API server does
  // not check the node); the fault test load_churn saw bindings sent 35 s after deletion.
  if (s.IsSuccess() && !cache_.HasNode(host)) {
    s = Status::Error("node " + host + " was deleted before pod " + assumed->pod->Key() +
                      " could be bound to it");
  }
  // upstream bind: a binder extender interested in the pod binds it instead of the plugins.
  if (s.IsSuccess() && !ExtendersBinding(*assumed->pod, host, &s)) {
    s = fwk->RunBindPlugins(*state, *assumed, host);
    if (s.IsSkip()) s = Status::Error("no bind plugin bound the pod");
  }
  if (s.IsSuccess()) {
    LogCacheError("finish binding", *assumed->pod,
                  cache_.FinishBinding(*assumed->pod, opts_.clock->Now()));
    fwk->RunPostBindPlugins(*state, *assumed, host);
    {
      absl::MutexLock l(&stats_mu_);
      ++stats_.scheduled;
    }
    opts_.client->RecordEvent(*assumed->pod, "Normal", "Scheduled",
                              "Successfully assigned " + assumed->pod->Key() + " to " + host);
    if (on_bound) on_bound(*assumed->pod, host);
    if (on_scheduled) on_scheduled(*qp, host);
    return;
  }
  // Binding cycle failed: undo and requeue (upstream handleBindingCycleError).
  fwk->RunReservePluginsUnreserve(*state, *assumed, host);
  LogCacheError("forget", *assumed->pod, cache_.ForgetPod(*assumed->pod));
  {
    absl::MutexLock l(&stats_mu_);
    ++stats_.bind_failures;
  }
  gang_coordinator_->OnBindingFailed(*assumed->pod);
  framework::EventObjects objs;
  objs.old_pod = assumed->pod.get();
  Requeue(framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete", objs);
  if (s.IsRejected()) qp->unschedulable_plugins = {s.plugin()};
  HandleSchedulingFailure(*fwk, qp, s, nullptr, "", cycle, nullptr, FailurePhase::kBinding);
}

void Scheduler::HandleSchedulingFailure(framework::Framework& fwk, const QueuedPodInfoPtr& qp,
                                        const Status& status, const Diagnosis* diag,
                                        const std::string& nominated, int64_t cycle,
                                        const std::vector<std::string>* reasons,
                                        FailurePhase phase) {
  {
    absl::MutexLock l(&stats_mu_);
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
  // Replaced in place (assignment keeps the strings' storage: a backlog's pods fail with
  // the same reasons again and again).
  if (diag) {
    std::set<std::string> distinct;
    if (!diag->pre_filter_msg.empty()) distinct.insert(diag->pre_filter_msg);
    for (const auto& [node, st] : diag->node_statuses) {
      for (const auto& r : st.reasons()) distinct.insert(r);
    }
    qp->last_failure_reasons.assign(distinct.begin(), distinct.end());
  } else if (reasons) {
    qp->last_failure_reasons = *reasons;
  } else {
    qp->last_failure_reasons.assign(1, msg);
  }
  const api::Pod& pod = qp->Pod();
  queue_->AddUnschedulableIfNotPresent(qp, cycle);
  if (!nominated.empty()) queue_->nominator().Add(qp->pod_info, nominated);
  if (on_failure) on_failure(*qp, status, phase);
  opts_.client->RecordEvent(pod, "Warning", "FailedScheduling", msg);
  const char* cond_reason = status.IsRejected() ? "Unschedulable" : "SchedulerError";
  const std::string* nnn = nominated.empty() ? nullptr : &nominated;
  // Nothing to write when the pod already shows this condition and nomination (upstream
  // updatePod: podutil.UpdatePodCondition reports no change and nominatedNodeName needs
  // none): a pod that fails the same way again costs no API call (nor a condition built
  // to find that out).
  const bool nnn_same = nnn == nullptr || pod.status.nominated_node_name == *nnn;
  const bool cond_same = std::any_of(pod.status.conditions.begin(), pod.status.conditions.end(),
                                     [&](const api::PodCondition& c) {
                                       return c.type == "PodScheduled" && c.status == "False" &&
                                              c.reason == cond_reason && c.message == msg;
                                     });
  if (nnn_same && cond_same) return;
  api::PodCondition cond{"PodScheduled", "False", cond_reason, msg};
  // A pod deleted meanwhile has no status to write; anything else is logged.
  if (api::Status st = opts_.client->UpdatePodStatus(pod, &cond, nnn);
      !st.ok() && !absl::IsNotFound(st)) {
    spdlog::warn("PodScheduled condition of {}: {}", pod.Key(), std::string(st.message()));
  }
}

}  // namespace phalanx::scheduler
