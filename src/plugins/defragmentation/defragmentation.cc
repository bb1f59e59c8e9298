#include "plugins/defragmentation/defragmentation.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <utility>

#include "plugins/defaultpreemption/default_preemption.h"
#include "plugins/helper/args.h"
#include "plugins/helper/taints.h"
#include "plugins/nodeaffinity/node_affinity.h"

namespace phalanx::plugins::defragmentation {

using framework::Code;
using framework::NodeInfo;
using framework::PodInfoPtr;
using framework::Status;

namespace {

// What is left of `node` for one more pod: allocatable minus requested minus `planned`
// (pods placed there by the plan), and whether `r` (one pod's requests) fits into it.
bool FitsOn(const NodeInfo& node, const api::Resource& planned, int64_t planned_pods,
            const api::Resource& r) {
  const api::Resource& alloc = node.allocatable();
  const api::Resource& used = node.requested();
  if (static_cast<int64_t>(node.pods().size()) + planned_pods + 1 > alloc.allowed_pod_number) {
    return false;
  }
  if (r.milli_cpu > alloc.milli_cpu - used.milli_cpu - planned.milli_cpu) return false;
  if (r.memory > alloc.memory - used.memory - planned.memory) return false;
  if (r.ephemeral_storage >
      alloc.ephemeral_storage - used.ephemeral_storage - planned.ephemeral_storage) {
    return false;
  }
  for (const auto& [id, v] : r.scalar) {
    if (v > alloc.Scalar(id) - used.Scalar(id) - planned.Scalar(id)) return false;
  }
  return true;
}

// The share of the node's allocatable left free after the pod is added, in the dimension
// best fit compares (the first scalar resource the pod asks for, e.g. GPUs; else CPU): the
// node left with the least free wins.
double FreeAfter(const NodeInfo& node, const api::Resource& planned, const api::Resource& r) {
  const api::Resource& alloc = node.allocatable();
  const api::Resource& used = node.requested();
  auto left = [](int64_t a, int64_t u, int64_t p, int64_t want) {
    return a <= 0 ? 0.0 : static_cast<double>(a - u - p - want) / static_cast<double>(a);
  };
  // The scarcest dimension the pod asks for: scalars (GPUs) first when it asks for any.
  for (const auto& [id, v] : r.scalar) {
    if (v > 0) return left(alloc.Scalar(id), used.Scalar(id), planned.Scalar(id), v);
  }
  return left(alloc.milli_cpu, used.milli_cpu, planned.milli_cpu, r.milli_cpu);
}

}  // namespace

bool RecreatedByController(const api::Pod& pod) {
  for (const auto& o : pod.metadata.owner_references) {
    if (o.controller) return o.kind != "DaemonSet";
  }
  return false;
}

std::vector<Move> PlanMoves(const std::vector<PodInfoPtr>& pods, const std::string& from,
                            const std::vector<const NodeInfo*>& nodes, std::string* why) {
  std::map<std::string, std::pair<api::Resource, int64_t>> planned;  // node -> (sum, pods)
  std::vector<Move> out;
  for (const auto& p : pods) {
    const api::Pod& pod = p->Pod();
    const NodeInfo* best = nullptr;
    double best_left = 0;
    for (const NodeInfo* n : nodes) {
      if (n == nullptr || n->node() == nullptr || n->name() == from) continue;
      const api::Node& node = *n->node();
      if (node.spec.unschedulable) continue;
      if (!nodeaffinity::MatchesRequiredNodeAffinity(pod, node)) continue;
      if (helper::FindUntoleratedDoNotScheduleTaint(node.spec.taints, pod.spec.tolerations)) {
        continue;
      }
      const auto& [sum, count] = planned[n->name()];
      if (!FitsOn(*n, sum, count, p->requests)) continue;
      const double left = FreeAfter(*n, sum, p->requests);
      if (best == nullptr || left < best_left) {
        best = n;
        best_left = left;
      }
    }
    if (best == nullptr) {
      *why = "pod " + pod.Key() + " would fit no other node";
      return {};
    }
    auto& [sum, count] = planned[best->name()];
    sum.Add(p->requests);
    ++count;
    out.push_back({p, best->name()});
  }
  return out;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> Defragmentation::New(
    framework::PluginArgs args, framework::Handle& h) {
  Args a;
  const Status st = helper::ReadIntArgs(
      args, "DefragmentationArgs",
      {{"maxMovesPerPod", 1,
        [&](int64_t v) {
          a.max_moves_per_pod = static_cast<int32_t>(std::min<int64_t>(v, 1 << 20));
        }},
       {"maxMoves", 0, [&](int64_t v) { a.max_moves = v; }},
       {"minRuntimeSeconds", 0, [&](int64_t v) {
          a.min_runtime_ns = std::min<int64_t>(v, int64_t{1} << 32) * api::kNanosPerSecond;
        }}});
  if (!st.IsSuccess()) return st;
  return std::unique_ptr<framework::Plugin>(new Defragmentation(h, a));
}

Defragmentation::Defragmentation(framework::Handle& h, Args args)
    : handle_(h),
      args_(args),
      executor_(framework::PreemptionExecutorOf(h, &own_executor_)),
      gangs_(h.Service<gang::PodGroupManager>()) {}

int64_t Defragmentation::moves() const {
  absl::MutexLock l(&mu_);
  return moves_;
}

bool Defragmentation::Movable(const api::Pod& v, int32_t priority, api::Timestamp now) const {
  if (v.spec.node_name.empty() || v.metadata.deletion_timestamp) return false;
  if (!RecreatedByController(v)) return false;
  if (handle_.PriorityOf(v) > priority) return false;
  if (gangs_ != nullptr && gangs_->RefPtrOf(v) != nullptr) return false;
  const api::Timestamp started = v.status.start_time.value_or(v.metadata.creation_timestamp);
  return now - started >= args_.min_runtime_ns;
}

Status Defragmentation::PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                   const framework::NodeToStatus& filtered,
                                   framework::PostFilterResult* result) {
  const api::Pod& pending = pod.Pod();
  if (pending.spec.preemption_policy == "Never") {
    return Status::Unschedulable("defragmentation: not eligible due to preemptionPolicy=Never");
  }
  int64_t budget = 0;
  {
    absl::MutexLock l(&mu_);
    budget = args_.max_moves - moves_;
  }
  if (budget <= 0) {
    return Status::Unschedulable("defragmentation: the budget of " +
                                 std::to_string(args_.max_moves) + " moves is used up (maxMoves)");
  }
  const auto& all = handle_.SnapshotSharedLister().List();
  const std::vector<const NodeInfo*> potential = defaultpreemption::PotentialNodes(all, filtered);
  if (potential.empty()) {
    return Status::Unschedulable("defragmentation: no node where moving pods could help");
  }
  const int32_t priority = handle_.PriorityOf(pending);
  const api::Timestamp now = handle_.GetClock().Now();
  const defaultpreemption::VictimFilter movable = [&](const api::Pod& v) {
    return Movable(v, priority, now);
  };
  // Every potential node, from offset 0: the dry run's own candidate count and random
  // offset serve preemption's sampling, not a search for the fewest moves.
  defaultpreemption::DefaultPreemption dry_run(defaultpreemption::DefaultPreemptionArgs{100, 0},
                                               handle_);
  std::vector<std::pair<std::string, Status>> statuses;
  std::vector<std::string> errors;
  std::vector<defaultpreemption::Candidate> candidates =
      dry_run.DryRunPreemption(state, pod, potential, 0, static_cast<int32_t>(potential.size()),
                               &statuses, &errors, &movable);
  if (candidates.empty() && !errors.empty()) {
    std::string e;
    for (const auto& s : errors) e += (e.empty() ? "" : "; ") + s;
    return Status::Error("defragmentation: " + e);
  }
  std::erase_if(candidates, [](const auto& c) { return c.num_pdb_violations > 0; });
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    if (a.victims.size() != b.victims.size()) return a.victims.size() < b.victims.size();
    return a.node < b.node;
  });
  std::string why =
      "no movable pods would make room (" + std::to_string(potential.size()) + " nodes tried)";
  for (const auto& c : candidates) {
    if (c.victims.empty()) continue;
    if (static_cast<int64_t>(c.victims.size()) > args_.max_moves_per_pod) {
      why = "the next plan needs " + std::to_string(c.victims.size()) + " moves (maxMovesPerPod " +
            std::to_string(args_.max_moves_per_pod) + ")";
      break;  // sorted: every other candidate needs as many or more
    }
    if (static_cast<int64_t>(c.victims.size()) > budget) {
      why = "the next plan needs " + std::to_string(c.victims.size()) + " moves, " +
            std::to_string(budget) + " left of the budget (maxMoves)";
      break;
    }
    std::string unplaced;
    // Largest first, so that small pods fill what the large ones leave.
    std::vector<PodInfoPtr> order = c.victims;
    std::stable_sort(order.begin(), order.end(), [](const PodInfoPtr& a, const PodInfoPtr& b) {
      const int64_t ga = a->requests.scalar.empty() ? 0 : a->requests.scalar[0].second;
      const int64_t gb = b->requests.scalar.empty() ? 0 : b->requests.scalar[0].second;
      if (ga != gb) return ga > gb;
      return a->requests.milli_cpu > b->requests.milli_cpu;
    });
    std::vector<Move> moves = PlanMoves(order, c.node, all, &unplaced);
    if (moves.empty()) {
      why = "moving pods off node " + c.node + " would not place them again: " + unplaced;
      continue;
    }
    {
      absl::MutexLock l(&mu_);
      moves_ += static_cast<int64_t>(moves.size());
    }
    framework::PreemptionRequest req;
    req.plugin = std::string(kName);
    req.preemptors.push_back(std::make_shared<framework::PodInfo>(pod));
    req.disruption_message = pending.spec.scheduler_name +
                             ": moved by defragmentation to make room for pod " + pending.Key();
    std::string list;
    for (const auto& m : moves) {
      req.victims.push_back({m.pod,
                             "Moved off node " + c.node + " to make room for pod " + pending.Key() +
                                 " (placed again on node " + m.to + " in the plan)",
                             "Moved"});
      list += (list.empty() ? "" : ", ") + m.pod->Pod().Key() + " -> " + m.to;
    }
    req.reject_if_waiting = framework::RejectIfWaitingIn(handle_);
    handle_.Client().RecordEvent(pending, "Normal", "Defragmentation",
                                 "moving " + std::to_string(moves.size()) + " pods off node " +
                                     c.node + " to make room: " + list);
    executor_->Execute(std::move(req));
    result->nominated_node_name = c.node;
    return Status::Success();
  }
  return Status::Unschedulable("defragmentation: " + why);
}

}  // namespace phalanx::plugins::defragmentation
