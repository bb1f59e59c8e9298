// The PodGroup cycle: place a gang (or every gang of a GangGroup) as one transaction.
//
// All pending members are placed pod by pod with the profile's normal plugins on one
// copy-on-write view of the snapshot (Snapshot::AddPodToView), so each member sees the
// ones placed before it. Only if every unit reaches its `need` is anything assumed; then
// all placed members are assumed, reserved, permitted and bound. Otherwise nothing is
// held: the view is discarded at the next snapshot update and every member gets one
// gang-level reason. Because no partial gang ever holds resources, gangs cannot deadlock
// each other (design.md; contrast Coscheduling's Permit-only flow).
#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "gang/manager.h"
#include "scheduler/podgroup_status.h"
#include "scheduler/scheduler.h"

namespace phalanx::scheduler {

using framework::CycleState;
using framework::PodInfo;
using framework::PodInfoPtr;
using framework::QueuedPodInfoPtr;
using framework::Status;

namespace {

struct Member {
  QueuedPodInfoPtr qp;
  size_t unit = 0;
  std::shared_ptr<CycleState> state;
  std::string host;
  PodInfoPtr assumed;  // the pod with spec.nodeName = host, shared by the view and the cache
  bool placed = false;
  Status status;
  Diagnosis diag;
};

// Sum over nodes of max(0, allocatable - requested), per resource (units of api::Resource).
api::Resource FreeCapacity(const framework::NodeInfoLister& snap) {
  api::Resource free;
  for (const auto* ni : snap.List()) {
    const auto& a = ni->allocatable();
    const auto& r = ni->requested();
    free.milli_cpu += std::max<int64_t>(0, a.milli_cpu - r.milli_cpu);
    free.memory += std::max<int64_t>(0, a.memory - r.memory);
    free.ephemeral_storage += std::max<int64_t>(0, a.ephemeral_storage - r.ephemeral_storage);
    free.allowed_pod_number +=
        std::max<int64_t>(0, a.allowed_pod_number - static_cast<int64_t>(ni->pods().size()));
    for (const auto& [id, v] : a.scalar) free.AddScalar(id, std::max<int64_t>(0, v - r.Scalar(id)));
  }
  return free;
}

// "" if `want` fits in `free`, else e.g. "cpu: 64000m requested, 12000m free".
std::string MinResourcesShortfall(const api::Resource& want, const api::Resource& free) {
  auto fmt = [](const std::string& name, int64_t w, int64_t f, const char* unit) {
    return name + ": " + std::to_string(w) + unit + " requested, " + std::to_string(f) + unit +
           " free";
  };
  if (want.milli_cpu > free.milli_cpu) return fmt("cpu", want.milli_cpu, free.milli_cpu, "m");
  if (want.memory > free.memory) return fmt("memory", want.memory, free.memory, "");
  if (want.ephemeral_storage > free.ephemeral_storage) {
    return fmt("ephemeral-storage", want.ephemeral_storage, free.ephemeral_storage, "");
  }
  if (want.allowed_pod_number > 0 && want.allowed_pod_number > free.allowed_pod_number) {
    return fmt("pods", want.allowed_pod_number, free.allowed_pod_number, "");
  }
  for (const auto& [id, v] : want.scalar) {
    if (v > free.Scalar(id)) return fmt(api::ScalarResourceName(id), v, free.Scalar(id), "");
  }
  return "";
}

// Records an Event on the gang's own object (dialects that have one), so that a Pending
// gang is never opaque: "gang nlp/giant: 1 of 5 pending members fit, 5 needed; ...".
void RecordGangEvent(gang::Manager& gangs, framework::ClusterClient& client,
                     const framework::PodGroupUnit& unit, bool ok, const std::string& message) {
  auto info = gangs.SummaryOf(unit.key);
  if (!info || !info->spec) return;
  const gang::PodGroupSpec& spec = *info->spec;
  std::string api_version, kind = "PodGroup";
  switch (spec.dialect) {
    case gang::Dialect::kCoscheduling: api_version = "scheduling.x-k8s.io/v1alpha1"; break;
    case gang::Dialect::kVolcano: api_version = "scheduling.volcano.sh/v1beta1"; break;
    case gang::Dialect::kKAI: api_version = "scheduling.run.ai/v2alpha2"; break;
    case gang::Dialect::kWorkload: api_version = "scheduling.k8s.io/v1alpha1"; kind = "Workload"; break;
    default: return;  // annotation-defined or derived gangs have no object of their own
  }
  std::string name = spec.name;
  if (spec.dialect == gang::Dialect::kWorkload) name = name.substr(0, name.find('/'));
  client.RecordObjectEvent(api_version, kind, spec.namespace_, name, ok ? "Normal" : "Warning",
                           ok ? "Scheduled" : "FailedScheduling", message);
}

}  // namespace

void Scheduler::RunPodGroupCycle(framework::Framework* fwk, const QueuedPodInfoPtr& popped,
                                 const framework::PodGroupPlan& plan, int64_t cycle) {
  // 1. Take every pending member of every unit out of the queue.
  std::vector<Member> members;
  const std::string popped_key = popped->Pod().Key();
  bool popped_included = false;
  for (size_t u = 0; u < plan.units.size(); ++u) {
    for (const auto& key : plan.units[u].pending_pods) {
      QueuedPodInfoPtr qp;
      if (key == popped_key) {
        qp = popped;
        popped_included = true;
      } else {
        auto queued = queue_->Get(key);
        if (!queued || queued->Pod().spec.scheduler_name != popped->Pod().spec.scheduler_name) continue;
        qp = queue_->Extract(key);
        if (!qp) continue;
      }
      Member m;
      m.qp = std::move(qp);
      m.unit = u;
      members.push_back(std::move(m));
    }
  }
  if (!popped_included) {
    Member m;
    m.qp = popped;
    m.unit = 0;
    members.push_back(std::move(m));
  }
  {
    // ScheduleOne already counted the popped pod.
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.attempts += static_cast<int64_t>(members.size()) - 1;
  }
  cache_.UpdateSnapshot(&snapshot_);

  std::vector<int32_t> placed(plan.units.size(), 0);
  std::vector<int32_t> pending(plan.units.size(), 0);
  for (const auto& m : members) ++pending[m.unit];
  std::string reject_reason;

  // 2. minResources: a gang whose minimum exceeds the cluster's free capacity is rejected
  //    before any per-pod work.
  bool have_free = false;
  api::Resource free;
  for (const auto& u : plan.units) {
    if (!u.has_min_resources) continue;
    if (!have_free) {
      free = FreeCapacity(snapshot_);
      have_free = true;
    }
    std::string shortfall = MinResourcesShortfall(u.min_resources, free);
    if (!shortfall.empty()) {
      reject_reason = u.display + ": minResources exceed the cluster's free capacity (" +
                      shortfall + ")";
      break;
    }
  }

  // 2b. Admission (queue quota): the whole gang's request against its queue, inside the
  //     transaction, so quota is never half-consumed by a gang.
  std::string admit_plugin;
  if (reject_reason.empty()) {
    std::vector<const PodInfo*> pods;
    std::vector<size_t> unit_of;
    for (const auto& m : members) {
      pods.push_back(m.qp->pod_info.get());
      unit_of.push_back(m.unit);
    }
    Status a = fwk->RunAdmitPodGroup(plan, pods, unit_of);
    if (!a.IsSuccess()) {
      reject_reason = a.Message();
      admit_plugin = a.plugin();
    } else {
      cache_.UpdateSnapshot(&snapshot_);  // admission may have freed capacity (queue reclaim)
    }
  }

  // 3. Place members on the snapshot view, in order. With a topology key the gang is
  //    placed inside one domain of that node label: domains are tried in order (most
  //    nodes first, then by name); a preferred key falls back to the whole cluster.
  auto place = [&](const std::set<std::string>* restriction) -> std::string {
    node_restriction_ = restriction;
    std::string reason;
    std::vector<int32_t> remaining = pending;
    std::fill(placed.begin(), placed.end(), 0);
    for (auto& m : members) {
      m.placed = false;
      m.host.clear();
      m.diag = Diagnosis{};
    }
    // Members of one signature share the nodes filtered and scored for the first of them.
    PlacementBatch batch;
    for (auto& m : members) {
      --remaining[m.unit];
      m.state = std::make_shared<CycleState>();
      ScheduleResult r;
      m.status = SchedulePod(*fwk, *m.state, *m.qp->pod_info, &r, &m.diag, &batch);
      if (m.status.IsSuccess()) {
        auto ap = std::make_shared<api::Pod>(*m.qp->pod_info->pod);
        ap->spec.node_name = r.suggested_host;
        m.assumed = PodInfo::Make(std::move(ap));
        snapshot_.AddPodToView(m.assumed);
        m.host = r.suggested_host;
        m.placed = true;
        ++placed[m.unit];
      } else if (!m.status.IsRejected()) {
        reason = "error placing " + m.qp->Pod().Key() + ": " + m.status.Message();
        break;
      }
      // Give up early once a unit can no longer reach its need.
      const auto& u = plan.units[m.unit];
      if (placed[m.unit] + remaining[m.unit] < u.need) break;
    }
    node_restriction_ = nullptr;
    {
      std::lock_guard<std::mutex> l(stats_mu_);
      stats_.batched_placements += batch.batched_pods;
    }
    for (size_t u = 0; reason.empty() && u < plan.units.size(); ++u) {
      if (placed[u] < plan.units[u].need) {
        reason = plan.units[u].display + ": " + std::to_string(placed[u]) + " of " +
                 std::to_string(pending[u]) + " pending members fit, " +
                 std::to_string(plan.units[u].need) + " needed";
      }
    }
    return reason;
  };

  if (reject_reason.empty()) {
    std::string topology_key;
    bool required = false;
    for (const auto& u : plan.units) {
      if (!u.topology_key.empty()) {
        topology_key = u.topology_key;
        required = required || u.topology_required;
      }
    }
    if (topology_key.empty()) {
      reject_reason = place(nullptr);
    } else {
      std::map<std::string, std::set<std::string>> domains;
      for (const auto* ni : snapshot_.List()) {
        auto it = ni->node()->metadata.labels.find(topology_key);
        if (it != ni->node()->metadata.labels.end()) domains[it->second].insert(ni->name());
      }
      std::vector<const std::pair<const std::string, std::set<std::string>>*> order;
      for (const auto& d : domains) order.push_back(&d);
      std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
        return a->second.size() > b->second.size();
      });
      std::string first_reason;
      bool done = false;
      for (const auto* d : order) {
        std::string r = place(&d->second);
        if (r.empty()) {
          done = true;
          break;
        }
        if (first_reason.empty()) first_reason = r + " in " + topology_key + "=" + d->first;
        cache_.UpdateSnapshot(&snapshot_);  // drop this attempt's view
      }
      if (!done && !required) {
        std::string r = place(nullptr);
        done = r.empty();
        if (!done) first_reason = r;
      }
      if (!done) {
        reject_reason = first_reason.empty()
                            ? "no node has the topology label " + topology_key
                            : first_reason + " (required topology " + topology_key +
                                  ": no single domain fits the gang)";
        if (!required) reject_reason = first_reason;
      }
    }
  }

  if (reject_reason.empty()) {
    // 4a. Commit: every placed member is assumed and bound; members that did not fit stay
    //     pending and schedule alone now that the gang is satisfied.
    // Inline bindings of this commit write each gang's status once, after the loop.
    // With the binding pool, the bindings start once every member is reserved.
    if (!binding_pool_) {
      gang_status_batch_thread_ = std::this_thread::get_id();
    } else {
      hold_bindings_thread_ = std::this_thread::get_id();
    }
    for (auto& m : members) {
      if (m.placed) CommitPod(fwk, m.qp, m.state, m.host, cycle, m.assumed);
    }
    gang_status_batch_thread_ = std::thread::id();
    hold_bindings_thread_ = std::thread::id();
    // Each unit's status is written once below (kPlaced, after RunPodGroupCycleDone): with
    // inline bindings it replaces the per-binding writes, whose last one it would overwrite
    // anyway, and carries that binding's member for status.occupiedBy; a unit with members
    // still assumed (held for the pool, or waiting in Permit) leaves it to the binding that
    // completes last. Other gangs (none expected) flush now.
    std::map<std::string, api::PodPtr> last_bound;
    std::erase_if(gang_status_batch_, [&](auto& e) {
      for (const auto& u : plan.units) {
        if (u.key == e.first) {
          last_bound[e.first] = std::move(e.second);
          return true;
        }
      }
      return false;
    });
    FlushGangStatusWrites();
    for (auto& m : members) {
      if (!m.placed) HandleSchedulingFailure(*fwk, m.qp, m.status, &m.diag, "", cycle);
    }
    for (const auto& u : plan.units) {
      int32_t n = 0;
      for (const auto& m : members) n += m.placed && plan.units[m.unit].key == u.key;
      RecordGangEvent(*gangs_, *opts_.client, u, true,
                      "gang " + u.key + ": " + std::to_string(n) + " members placed");
    }
    fwk->RunPodGroupCycleDone(plan, true, "");
    for (const auto& u : plan.units) {
      if (GangBindingsInFlight(u.key)) continue;
      auto it = last_bound.find(u.key);
      WriteGangStatus(u.key, GangOutcome::kPlaced, "",
                      it == last_bound.end() ? nullptr : it->second.get());
    }
    // The bindings start after the cycle's own status write: a binding that completes
    // last writes fuller counts, and must not be overwritten by this one.
    for (auto& b : std::exchange(held_bindings_, {})) SubmitBinding(std::move(b));
    return;
  }

  // 4b. Reject: nothing is held (the view is dropped at the next snapshot update).
  std::set<std::string> plugins{"GangScheduling"};
  if (!admit_plugin.empty()) plugins.insert(admit_plugin);
  std::string member_msg;
  std::vector<std::string> reasons{reject_reason};
  for (const auto& m : members) {
    for (const auto& p : m.diag.unschedulable_plugins) plugins.insert(p);
    for (const auto& p : m.diag.pending_plugins) plugins.insert(p);
    if (member_msg.empty() && !m.placed && m.status.IsRejected() && !m.status.reasons().empty()) {
      member_msg = m.qp->Pod().Key() + ": " + m.status.Message();
      std::set<std::string> distinct;
      for (const auto& [node, st] : m.diag.node_statuses) {
        for (const auto& r : st.reasons()) distinct.insert(r);
      }
      reasons.insert(reasons.end(), distinct.begin(), distinct.end());
    }
  }
  std::string msg = reject_reason;
  if (!member_msg.empty()) msg += "; " + member_msg;
  Status s(framework::Code::kUnschedulable, msg);
  s.WithPlugin("GangScheduling");
  for (auto& m : members) {
    m.qp->unschedulable_plugins = plugins;
    m.qp->pending_plugins.clear();
    HandleSchedulingFailure(*fwk, m.qp, s, nullptr, "", cycle, &reasons);
  }
  for (const auto& u : plan.units) RecordGangEvent(*gangs_, *opts_.client, u, false, "gang " + msg);
  fwk->RunPodGroupCycleDone(plan, false, msg);
  for (const auto& u : plan.units) {
    WriteGangStatus(u.key, GangOutcome::kUnschedulable, msg, nullptr);
  }
}

}  // namespace phalanx::scheduler
