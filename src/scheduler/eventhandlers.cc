// Informer callbacks (upstream pkg/scheduler/eventhandlers.go): they feed the cache
// (assigned pods, nodes), the queue (pending pods of our profiles), the gang and queue
// state, and turn changes into cluster events that move unschedulable pods back according
// to queueing hints.
#include "api/pod_resources.h"
#include "dra/dra_manager.h"
#include "gang/coordinator.h"
#include "gang/default_podgroup_manager.h"
#include "gang/podgroup_status.h"
#include "quota/queue_manager.h"
#include "scheduler/scheduler.h"
#include "spdlog/spdlog.h"
#include "volume/catalog.h"

namespace phalanx::scheduler {

using framework::PodInfo;
using framework::Status;

namespace {

bool IsTerminal(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}
bool IsAssigned(const api::Pod& p) { return !p.spec.node_name.empty(); }

// Whether the API's bound pod is the pod we assumed, for every plugin that reads it on
// its node: same node, labels, annotations, node selector, tolerations and requests.
// (PodInfo::requests is api::PodRequests, computed once per PodInfo.)
bool ConfirmsAssumedUnchanged(const PodInfo& assumed, const PodInfo& bound) {
  return assumed.pod->spec.node_name == bound.pod->spec.node_name &&
         framework::PodUpdateActions(assumed, bound) == 0 && assumed.requests == bound.requests;
}

}  // namespace

void Scheduler::AddEventHandlers(cluster::InformerFactory& inf) {
  inf.AddPriorityClassHandlers({[this](const auto& pc) { OnPriorityClassAdd(pc); },
                                [this](const auto&, const auto& pc) { OnPriorityClassAdd(pc); },
                                [this](const auto& pc) { OnPriorityClassDelete(pc); }});
  inf.AddNamespaceHandlers(
      {[this](const std::shared_ptr<const api::Namespace>& n) { OnNamespaceSet(*n); },
       [this](const std::shared_ptr<const api::Namespace>&,
              const std::shared_ptr<const api::Namespace>& n) { OnNamespaceSet(*n); },
       [this](const std::shared_ptr<const api::Namespace>& n) { OnNamespaceDelete(*n); }});
  inf.AddPodDisruptionBudgetHandlers(
      {[this](const api::PodDisruptionBudgetPtr& p) { OnPodDisruptionBudgetSet(p); },
       [this](const api::PodDisruptionBudgetPtr&, const api::PodDisruptionBudgetPtr& p) {
         OnPodDisruptionBudgetSet(p);
       },
       [this](const api::PodDisruptionBudgetPtr& p) { OnPodDisruptionBudgetDelete(p); }});
  inf.AddObjectHandlers({[this](const api::UnstructuredPtr& o) { OnObjectAdd(o); },
                         [this](const api::UnstructuredPtr& o, const api::UnstructuredPtr& n) {
                           OnObjectUpdate(o, n);
                         },
                         [this](const api::UnstructuredPtr& o) { OnObjectDelete(o); }});
  inf.AddNodeHandlers({[this](const api::NodePtr& n) { OnNodeAdd(n); },
                       [this](const api::NodePtr& o, const api::NodePtr& n) { OnNodeUpdate(o, n); },
                       [this](const api::NodePtr& n) { OnNodeDelete(n); }});
  inf.AddPodHandlers({[this](const api::PodPtr& p) { OnPodAdd(p); },
                      [this](const api::PodPtr& o, const api::PodPtr& n) { OnPodUpdate(o, n); },
                      [this](const api::PodPtr& p) { OnPodDelete(p); }});
  // Sources whose pod events leave terminal pods out (live: the field selector, as
  // upstream's) report them here; gang status counts them, nothing else does.
  inf.AddTerminalPodHandlers(
      {[this](const api::PodPtr& p) { OnPodFinished(p); },
       [this](const api::PodPtr&, const api::PodPtr& p) { OnPodFinished(p); }, nullptr});
}

void Scheduler::OnPodFinished(const api::PodPtr& pod) {
  const std::string gang = gangs_->OnPodFinished(pod);
  if (!gang.empty()) gang_coordinator_->OnMemberPhase(*pod, gang);
}

void Scheduler::Requeue(framework::EventResource resource, uint32_t action, const char* label,
                        const framework::EventObjects& objs) {
  queue_->MoveAllToActiveOrBackoffQueue({resource, action, label}, objs);
}

void Scheduler::OnNamespaceSet(const api::Namespace& ns) {
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  absl::MutexLock l(&ns_mu_);
  namespace_labels_[ns.metadata.name] = ns.metadata.labels;
}

void Scheduler::OnNamespaceDelete(const api::Namespace& ns) {
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  absl::MutexLock l(&ns_mu_);
  namespace_labels_.erase(ns.metadata.name);
}

// PDB changes requeue nothing: upstream registers no PDB event for any plugin (a PDB
// only orders preemption victims, it never makes a pod fit).
void Scheduler::OnPodDisruptionBudgetSet(const api::PodDisruptionBudgetPtr& pdb) {
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  absl::MutexLock l(&pdb_mu_);
  pdbs_[pdb->Key()] = pdb;
}

void Scheduler::OnPodDisruptionBudgetDelete(const api::PodDisruptionBudgetPtr& pdb) {
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  absl::MutexLock l(&pdb_mu_);
  pdbs_.erase(pdb->Key());
}

std::vector<api::PodDisruptionBudgetPtr> Scheduler::ListPodDisruptionBudgets() const {
  absl::MutexLock l(&pdb_mu_);
  std::vector<api::PodDisruptionBudgetPtr> out;
  out.reserve(pdbs_.size());
  for (const auto& [k, p] : pdbs_) out.push_back(p);
  return out;
}

// Storage objects (src/volume/objects.h) go to the volume catalog, and every change of one
// is reported as a PersistentVolumeClaim event: VolumeBinding registers it (the framework
// has one event resource for the storage kinds). Returns false for other objects.
bool Scheduler::OnStorageObject(const api::UnstructuredPtr& obj, uint32_t action) {
  if (volume::KindOf(*obj) == volume::Kind::kNone) return false;
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  if (action == framework::kDelete) {
    volumes_->OnObjectDelete(*obj);
  } else if (api::Status err = volumes_->OnObjectAdd(obj); !err.ok()) {
    spdlog::warn("{}", std::string(err.message()));
  }
  framework::EventObjects objs;
  objs.other_new = obj.get();
  Requeue(framework::EventResource::kPersistentVolumeClaim, action,
          action == framework::kAdd      ? "StorageObjectAdd"
          : action == framework::kDelete ? "StorageObjectDelete"
                                         : "StorageObjectUpdate",
          objs);
  return true;
}

namespace {

// The cluster event of a resource.k8s.io object (DynamicResources' registrations).
framework::EventResource DraResource(const api::Unstructured& obj) {
  switch (dra::KindOf(obj)) {
    case dra::Kind::kResourceClaim:
      return framework::EventResource::kResourceClaim;
    case dra::Kind::kResourceSlice:
      return framework::EventResource::kResourceSlice;
    case dra::Kind::kDeviceClass:
      return framework::EventResource::kDeviceClass;
    // A DeviceTaintRule changes the taints of slices' devices: upstream's scheduler sees it
    // as updates of those ResourceSlices (resourceslice/tracker), so it is one here too.
    case dra::Kind::kDeviceTaintRule:
      return framework::EventResource::kResourceSlice;
    default:
      return framework::EventResource::kWildCard;  // templates: nothing waits on them
  }
}

}  // namespace

bool Scheduler::OnDraObject(const api::UnstructuredPtr& old_obj, const api::UnstructuredPtr& obj,
                            uint32_t action) {
  const bool handled =
      action == framework::kDelete ? dra_->OnObjectDelete(obj) : dra_->OnObjectAdd(obj);
  if (!handled) return false;
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  const framework::EventResource r = DraResource(*obj);
  // A DeviceTaintRule's removal frees its devices: a slice update, not a delete.
  if (dra::KindOf(*obj) == dra::Kind::kDeviceTaintRule) action = framework::kUpdateOther;
  if (r == framework::EventResource::kWildCard || action == framework::kDelete) return true;
  framework::EventObjects objs;
  objs.other_old = old_obj.get();
  objs.other_new = obj.get();
  Requeue(r, action, action == framework::kAdd ? "DraObjectAdd" : "DraObjectUpdate", objs);
  return true;
}

void Scheduler::ObjectWatch::Watch(const std::string& group, const std::string& kind,
                                   Handler handler) {
  absl::MutexLock l(&mu_);
  handlers_[kind + "." + group].push_back(std::move(handler));
  any_.store(true, std::memory_order_release);
}

void Scheduler::ObjectWatch::Activate(const std::vector<std::string>& pod_keys) {
  if (!pod_keys.empty()) s_->queue_->Activate(pod_keys);
}

bool Scheduler::ObjectWatch::Deliver(const api::Unstructured* old, const api::Unstructured& obj,
                                     bool deleted) {
  if (!any_.load(std::memory_order_acquire)) return false;
  std::vector<Handler> hs;
  {
    absl::MutexLock l(&mu_);
    auto it = handlers_.find(obj.kind + "." + obj.Group());
    if (it == handlers_.end()) return false;
    hs = it->second;
  }
  for (const auto& h : hs) h(old, obj, deleted);
  return true;
}

void Scheduler::OnObjectAdd(const api::UnstructuredPtr& obj) {
  if (object_watch_->Deliver(nullptr, *obj, /*deleted=*/false)) return;
  if (OnStorageObject(obj, framework::kAdd)) return;
  if (OnDraObject(nullptr, obj, framework::kAdd)) return;
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  dra_->OnPodGroup(obj, /*deleted=*/false);  // KEP-5729 PodGroup claims
  gangs_->OnObjectAdd(obj);
  queues_->OnObjectAdd(obj);
  framework::EventObjects objs;
  objs.other_new = obj.get();
  Requeue(framework::EventResource::kPodGroup, framework::kAdd, "PodGroupAdd", objs);
}

void Scheduler::OnObjectUpdate(const api::UnstructuredPtr& old_obj,
                               const api::UnstructuredPtr& obj) {
  if (object_watch_->Deliver(old_obj.get(), *obj, /*deleted=*/false)) return;
  if (OnStorageObject(obj, framework::kUpdate)) return;
  if (OnDraObject(old_obj, obj, framework::kUpdateOther)) return;
  // Status-only updates (our own PodGroup status writes among them) carry nothing that
  // could make a pod schedulable: the gang keeps its parsed spec, and no requeue, so they
  // cannot churn gated pods.
  const bool status_only = old_obj && gang::OnlyStatusChanged(*old_obj, *obj);
  dra_->OnPodGroup(obj, /*deleted=*/false);  // its status.resourceClaimStatuses too
  if (status_only) {
    gangs_->OnObjectStatusUpdate(obj);
  } else {
    gangs_->OnObjectUpdate(obj);
  }
  if (status_only) {
    queues_->OnObjectStatusUpdate(obj);  // our own queue status writes: no tree rebuild
    return;
  }
  queues_->OnObjectUpdate(obj);
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  framework::EventObjects objs;
  objs.other_old = old_obj.get();
  objs.other_new = obj.get();
  Requeue(framework::EventResource::kPodGroup, framework::kUpdate, "PodGroupUpdate", objs);
}

void Scheduler::OnObjectDelete(const api::UnstructuredPtr& obj) {
  if (object_watch_->Deliver(nullptr, *obj, /*deleted=*/true)) return;
  if (OnStorageObject(obj, framework::kDelete)) return;
  if (OnDraObject(nullptr, obj, framework::kDelete)) return;
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  dra_->OnPodGroup(obj, /*deleted=*/true);
  gangs_->OnObjectDelete(obj);
  queues_->OnObjectDelete(obj);
}

void Scheduler::OnPodAdd(const api::PodPtr& pod) {
  if (IsTerminal(*pod)) {  // not in the cache or the queue; its gang counts it
    OnPodFinished(pod);
    return;
  }
  gangs_->OnPodAdd(pod, opts_.clock->Now());
  // One PodInfo for the queue manager's request, the cache and the scheduling queue.
  auto info = PodInfo::Make(pod);
  queues_->OnPodAdd(pod, &info->requests);
  framework::EventObjects objs;
  objs.new_pod = pod.get();
  if (IsAssigned(*pod)) {
    LogCacheError("add", *pod, cache_.AddPod(std::move(info)));
    Requeue(framework::EventResource::kAssignedPod, framework::kAdd, "AssignedPodAdd", objs);
    return;
  }
  if (!ResponsibleFor(*pod)) return;
  // A nomination from an earlier preemption (ours, or before a restart) is honoured.
  if (!pod->status.nominated_node_name.empty()) {
    queue_->nominator().Add(info, pod->status.nominated_node_name);
  }
  // The member that completes its gang's quorum activates the gang (and its GangGroup):
  // the others were gated at PreEnqueue waiting for it. Added and activated at once, so
  // that no member is in flight when the others are activated (that would count as a
  // move request and send the gang's first failed attempt to backoffQ for a second one).
  std::vector<std::string> keys = gang_coordinator_->MembersToActivate(*pod);
  if (keys.empty()) {
    queue_->Add(std::move(info));
  } else {
    queue_->AddAndActivate(std::move(info), keys);
  }
  // Pods waiting for their gang's other members may now pass PreEnqueue.
  Requeue(framework::EventResource::kUnscheduledPod, framework::kAdd, "UnscheduledPodAdd", objs);
}

void Scheduler::OnPodUpdate(const api::PodPtr& old_pod, const api::PodPtr& new_pod) {
  // A phase change (Running / Succeeded / Failed) moves the gang's status counts and
  // lifecycle phase; a terminal pod leaves the gang's members (OnPodFinished counts it).
  const bool phase_changed = old_pod->status.phase != new_pod->status.phase;
  if (phase_changed && IsTerminal(*new_pod)) {
    OnPodFinished(new_pod);
  } else {
    gangs_->OnPodUpdate(old_pod, new_pod, opts_.clock->Now());
    if (phase_changed) gang_coordinator_->OnMemberPhase(*new_pod, "");
  }
  // One PodInfo of the new pod for the queue manager's request and whichever of the cache
  // or the scheduling queue takes it below (none for a terminal pod).
  framework::PodInfoPtr info = IsTerminal(*new_pod) ? nullptr : PodInfo::Make(new_pod);
  queues_->OnPodUpdate(old_pod, new_pod, info ? &info->requests : nullptr);
  if (IsAssigned(*old_pod)) {
    if (IsTerminal(*new_pod)) {
      OnPodDelete(old_pod);
      return;
    }
    LogCacheError("update", *new_pod, cache_.UpdatePod(*old_pod, info));
    uint32_t actions = framework::PodUpdateActions(*old_pod, *new_pod);
    if (actions != 0) {
      framework::EventObjects objs;
      objs.old_pod = old_pod.get();
      objs.new_pod = new_pod.get();
      Requeue(framework::EventResource::kAssignedPod, actions, "AssignedPodUpdate", objs);
    }
    return;
  }
  if (IsAssigned(*new_pod)) {
    OnPodBound(old_pod, new_pod, std::move(info));
    return;
  }
  if (!ResponsibleFor(*new_pod)) return;
  if (IsTerminal(*new_pod)) {
    queue_->Delete(*old_pod);
    return;
  }
  // An update of a pod in its binding cycle (e.g. the annotations a PreBind plugin writes)
  // must not queue it again: upstream updatePodInSchedulingQueue returns for assumed pods.
  if (cache_.IsAssumedPod(*new_pod)) return;
  // A pending pod's scheduling-relevant change: a remembered PodGroup rejection that read
  // it may no longer hold (podgroup_memo.h).
  if (framework::PodUpdateActions(*old_pod, *new_pod) != 0) {
    object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  }
  if (new_pod->status.nominated_node_name != old_pod->status.nominated_node_name) {
    if (new_pod->status.nominated_node_name.empty()) {
      queue_->nominator().Delete(*new_pod);
    } else {
      queue_->nominator().Add(info, new_pod->status.nominated_node_name);
    }
  }
  queue_->Update(*old_pod, std::move(info));
}

void Scheduler::OnPodBound(const api::PodPtr& old_pod, const api::PodPtr& new_pod,
                           framework::PodInfoPtr bound) {
  // The pod was bound (by us or by someone else).
  queue_->Delete(*old_pod);
  gang_coordinator_->OnMemberBound(new_pod);
  if (IsTerminal(*new_pod)) return;
  {
    // Confirming our own assumed pod unchanged is no cluster change for a plain-pod
    // placement batch: counted with the cache update, under the lock the scheduling thread
    // holds while it takes its snapshot (UpdateSnapshotAndMark).
    absl::MutexLock l(&batch_mu_);
    framework::PodInfoPtr assumed;
    Status st = cache_.AddPod(bound, &assumed);
    if (st.IsSuccess() && assumed && ConfirmsAssumedUnchanged(*assumed, *bound)) {
      confirmed_assumed_touches_ += 2;  // Cache::AddPod removes and adds it again
    }
    LogCacheError("add", *new_pod, st);
  }
  framework::EventObjects objs;
  objs.new_pod = new_pod.get();
  Requeue(framework::EventResource::kAssignedPod, framework::kAdd, "AssignedPodAdd", objs);
}

void Scheduler::OnPodDelete(const api::PodPtr& pod) {
  gangs_->OnPodDelete(pod);
  queues_->OnPodDelete(pod);
  if (IsAssigned(*pod)) {
    LogCacheError("remove", *pod, cache_.RemovePod(*pod));
    framework::EventObjects objs;
    objs.old_pod = pod.get();
    Requeue(framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete", objs);
    return;
  }
  queue_->Delete(*pod);
  if (auto* fw = ProfileFor(*pod)) fw->RejectWaitingPod(pod->metadata.uid);
}

void Scheduler::OnNodeAdd(const api::NodePtr& node) {
  cache_.AddNode(node);
  framework::EventObjects objs;
  objs.new_node = node.get();
  Requeue(framework::EventResource::kNode, framework::kAdd, "NodeAdd", objs);
}

void Scheduler::OnNodeUpdate(const api::NodePtr& old_node, const api::NodePtr& new_node) {
  cache_.UpdateNode(new_node);
  uint32_t actions = framework::NodeUpdateActions(*old_node, *new_node);
  if (actions == 0) return;
  framework::EventObjects objs;
  objs.old_node = old_node.get();
  objs.new_node = new_node.get();
  Requeue(framework::EventResource::kNode, actions, "NodeUpdate", objs);
}

// Upstream deleteNodeFromCache: the pods whose rejecting plugins' hints accept a node's
// deletion (PodTopologySpread: a domain may disappear) move first, then the cache drops it.
void Scheduler::OnNodeDelete(const api::NodePtr& node) {
  framework::EventObjects objs;
  objs.old_node = node.get();
  Requeue(framework::EventResource::kNode, framework::kDelete, "NodeDelete", objs);
  cache_.RemoveNode(*node);
}

void Scheduler::OnPriorityClassAdd(const std::shared_ptr<const api::PriorityClass>& pc) {
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  absl::MutexLock l(&pc_mu_);
  priority_classes_[pc->metadata.name] = pc;
  UpdateDefaultPriorityLocked();
}

void Scheduler::OnPriorityClassDelete(const std::shared_ptr<const api::PriorityClass>& pc) {
  object_epoch_.fetch_add(1, std::memory_order_acq_rel);
  absl::MutexLock l(&pc_mu_);
  priority_classes_.erase(pc->metadata.name);
  UpdateDefaultPriorityLocked();
}

}  // namespace phalanx::scheduler
