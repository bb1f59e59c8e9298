// In-memory object store with resourceVersion, list and watch semantics: the embedded
// API server used by `phalanx simulate`, tests and in-process benchmarks.
//
// Writes are serialized; each write bumps the store's resourceVersion, stamps the object
// and dispatches one event to every registered handler, so watchers see a single total
// order. A write made by a handler while an event is being delivered takes effect at once
// (reads see it) and its event follows the current one, as a watch delivers them. Writes return
// api::Status with the API server's message and the code of its HTTP status, as
// client::ResponseCode maps them:
//   Invalid (422)       -> InvalidArgument   ("Pod: metadata.name: Required value")
//   AlreadyExists (409) -> AlreadyExists     ("pods \"web-0\" already exists")
//   NotFound (404)      -> NotFound          ("pods \"web-0\" not found")
//   Conflict (409)      -> Aborted           (binding a pod that already has a node, or
//                          a terminated one: the write lost a race with another writer; as
//                          Kubernetes' 409 Conflict it is retried after a fresh read, which
//                          is what Aborted means, not FailedPrecondition's "fix the system
//                          state first"). Callers test with absl::IsNotFound etc.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "api/status.h"
#include "api/types.h"
#include "cluster/client.h"
#include "cluster/informer.h"

namespace phalanx::store {

struct RecordedEvent {
  std::string pod_key;
  std::string type;    // Normal | Warning
  std::string reason;  // Scheduled | FailedScheduling | Preempted ...
  std::string message;
  api::Timestamp time = 0;
};

// std::recursive_mutex as a thread-safety capability (ABSL_LOCKABLE): the Store's handlers
// run under its lock and may call back into the Store (absl::Mutex is not reentrant). The
// analysis does not model reentrancy: inside store.cc a function that holds the lock calls
// the *Locked helpers, not the public methods.
class ABSL_LOCKABLE RecursiveMutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::recursive_mutex mu_;
};

// Holds a RecursiveMutex for a scope (as absl::MutexLock does an absl::Mutex).
class ABSL_SCOPED_LOCKABLE RecursiveMutexLock {
 public:
  explicit RecursiveMutexLock(RecursiveMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~RecursiveMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  RecursiveMutexLock(const RecursiveMutexLock&) = delete;
  RecursiveMutexLock& operator=(const RecursiveMutexLock&) = delete;

 private:
  RecursiveMutex* const mu_;
};

class Store : public cluster::InformerFactory, public cluster::ClusterClient {
 public:
  // `clock` stamps creation times of objects created without one and event times.
  explicit Store(const cluster::Clock& clock);
  ~Store() override;

  // Creation applies the API server's defaulting that scheduling depends on: namespace
  // "default", uid, creationTimestamp, and the Priority admission plugin (spec.priority
  // from priorityClassName, or the global default PriorityClass, or 0; unknown class ->
  // Invalid "no PriorityClass with name X was found").
  api::Status CreatePod(api::Pod pod);
  api::Status UpdatePod(api::Pod pod);  // replaces by namespace/name
  api::Status DeletePod(const std::string& ns, const std::string& name);
  // Conflict (Aborted) when the pod already has a node or is terminated.
  api::Status BindPod(const std::string& ns, const std::string& name, const std::string& node);
  api::Status CreateNode(api::Node node);
  api::Status UpdateNode(api::Node node);
  api::Status DeleteNode(const std::string& name);
  api::Status CreateNamespace(api::Namespace ns);
  api::Status CreatePriorityClass(api::PriorityClass pc);
  // policy/v1 PodDisruptionBudgets, keyed namespace/name (namespace defaults to "default").
  // Create: AlreadyExists; Update (spec and status, as the disruption controller's status
  // write) and Delete: NotFound.
  api::Status CreatePodDisruptionBudget(api::PodDisruptionBudget pdb);
  api::Status UpdatePodDisruptionBudget(api::PodDisruptionBudget pdb);
  api::Status DeletePodDisruptionBudget(const std::string& ns, const std::string& name);
  std::vector<api::PodDisruptionBudgetPtr> ListPodDisruptionBudgets() const;
  // Objects of other kinds, keyed by Unstructured::Key().
  api::Status CreateObject(api::Unstructured obj);
  api::Status UpdateObject(api::Unstructured obj);
  // (also ClusterClient::DeleteObject) NotFound when it is gone.
  api::Status DeleteObject(const api::Unstructured& obj) override;
  api::UnstructuredPtr GetObject(const std::string& key) const;
  std::vector<api::UnstructuredPtr> ListObjects() const;

  api::PodPtr GetPod(const std::string& ns, const std::string& name) const;
  api::NodePtr GetNode(const std::string& name) const;
  std::vector<api::PodPtr> ListPods() const;
  std::vector<api::NodePtr> ListNodes() const;
  int64_t resource_version() const;

  // Events recorded through ClusterClient::RecordEvent. Only the latest event of each pod
  // is kept when keep_all_events is false (the simulator's default, to bound memory).
  std::vector<RecordedEvent> Events() const;
  void set_keep_all_events(bool v) {
    RecursiveMutexLock l(&mu_);
    keep_all_events_ = v;
  }
  std::optional<RecordedEvent> LastEventFor(const std::string& pod_key) const;

  // InformerFactory
  void AddPodHandlers(cluster::EventHandlers<api::Pod> h) override;
  void AddNodeHandlers(cluster::EventHandlers<api::Node> h) override;
  void AddPriorityClassHandlers(cluster::EventHandlers<api::PriorityClass> h) override;
  void AddNamespaceHandlers(cluster::EventHandlers<api::Namespace> h) override;
  void AddObjectHandlers(cluster::EventHandlers<api::Unstructured> h) override;
  void AddPodDisruptionBudgetHandlers(cluster::EventHandlers<api::PodDisruptionBudget> h) override;

  // ClusterClient (what the scheduler writes)
  api::Status Bind(const api::Pod& pod, const std::string& node) override;
  api::Status DeletePod(const api::Pod& pod) override;
  // Merges `annotations` into the stored pod's and dispatches an update (none when every
  // key already has that value). NotFound when the pod is gone; Aborted when the stored
  // pod has another UID (re-created), as the API server rejects the UID in the patch.
  api::Status PatchPodAnnotations(const api::Pod& pod,
                                  const std::map<std::string, std::string>& annotations) override;
  api::Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                              const std::string* nominated_node_name) override;
  // UpdateObject (the store keeps no older versions: the write always applies).
  api::Status PutObject(const api::Unstructured& obj) override { return UpdateObject(obj); }
  // UpdateObject of the claim (NotFound when it is gone); the update is dispatched to the
  // object handlers before this returns (when called from a handler: after the event
  // being delivered).
  api::Status UpdateResourceClaimStatus(const api::Unstructured& claim) override {
    return UpdateObject(claim);
  }
  // CreateObject of the claim; an empty metadata.name is completed from
  // metadata.generateName with 5 characters derived from the store's UID sequence (the
  // API server's are random; these keep runs reproducible). Returns the stored object.
  api::StatusOr<api::Unstructured> CreateResourceClaim(const api::Unstructured& claim) override;
  // CreateObject, with generateName completed as CreateResourceClaim does.
  api::StatusOr<api::Unstructured> PostObject(const api::Unstructured& obj) override;
  // DeleteObject of the claim; Aborted when `claim` has a UID and the stored one differs.
  api::Status DeleteResourceClaim(const api::Unstructured& claim) override;
  // Sets the pod's status.extendedResourceClaimStatus and dispatches the update.
  api::Status PatchPodExtendedResourceClaimStatus(
      const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) override;
  void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                   std::string_view message) override;
  void RecordObjectEvent(std::string_view api_version, std::string_view kind, std::string_view ns,
                         std::string_view name, std::string_view type, std::string_view reason,
                         std::string_view message) override;
  // Sets the PodGroup's `status` (the fields of cluster::ClusterClient::PodGroupStatus in
  // the dialect's names, as the live client writes them) and dispatches an update, only
  // when the status changed; empty occupiedBy / zero scheduleStartTime keep the previous
  // value (a merge patch that omits them). Unknown objects are ignored (deleted meanwhile).
  void UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                            std::string_view ns, std::string_view name,
                            const PodGroupStatus& status) override;
  // Number of PodGroup status writes that changed an object (for tests).
  int64_t podgroup_status_writes() const;
  // Events recorded on objects other than pods, keyed "<kind> <namespace>/<name>"; only the
  // latest per object is kept.
  std::optional<RecordedEvent> LastObjectEvent(const std::string& kind, const std::string& ns,
                                               const std::string& name) const;

 private:
  std::string NextRV() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The pod writes of ClusterClient: finds `pod` (NotFound), checks its UID when it has one
  // (Aborted, the API server's precondition message), applies `change` to a copy and, when
  // it reports a change, stores the copy with a new resourceVersion and dispatches it.
  api::Status PatchPod(const api::Pod& pod, const std::function<bool(api::Pod*)>& change)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Delivers one event to every handler of `hs`, in registration order; an event raised by
  // a write inside a handler is delivered after the current one (pending_).
  template <typename T>
  void Dispatch(const std::vector<cluster::EventHandlers<T>>& hs, const std::shared_ptr<const T>& o,
                const std::shared_ptr<const T>& n) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename T>
  static void Deliver(const std::vector<cluster::EventHandlers<T>>& hs,
                      const std::shared_ptr<const T>& o, const std::shared_ptr<const T>& n);

  const cluster::Clock& clock_;
  mutable RecursiveMutex mu_;  // guards everything; held while dispatching
  int64_t rv_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t uid_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, api::PodPtr> pods_ ABSL_GUARDED_BY(mu_);  // namespace/name
  std::map<std::string, api::NodePtr> nodes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const api::Namespace>> namespaces_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<const api::PriorityClass>> priority_classes_
      ABSL_GUARDED_BY(mu_);
  std::vector<cluster::EventHandlers<api::Pod>> pod_handlers_ ABSL_GUARDED_BY(mu_);
  std::vector<cluster::EventHandlers<api::Node>> node_handlers_ ABSL_GUARDED_BY(mu_);
  std::vector<cluster::EventHandlers<api::PriorityClass>> pc_handlers_ ABSL_GUARDED_BY(mu_);
  std::vector<cluster::EventHandlers<api::Namespace>> ns_handlers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, api::PodDisruptionBudgetPtr> pdbs_ ABSL_GUARDED_BY(mu_);  // ns/name
  std::vector<cluster::EventHandlers<api::PodDisruptionBudget>> pdb_handlers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, api::UnstructuredPtr> objects_ ABSL_GUARDED_BY(mu_);
  std::vector<cluster::EventHandlers<api::Unstructured>> obj_handlers_ ABSL_GUARDED_BY(mu_);
  bool keep_all_events_ ABSL_GUARDED_BY(mu_) = true;
  std::vector<RecordedEvent> events_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, RecordedEvent> last_event_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, RecordedEvent> last_object_event_ ABSL_GUARDED_BY(mu_);
  // by object key, last written
  std::map<std::string, PodGroupStatus> podgroup_status_ ABSL_GUARDED_BY(mu_);
  int64_t podgroup_status_writes_ ABSL_GUARDED_BY(mu_) = 0;
  // Dispatch in progress, and the events of writes made meanwhile, in write order.
  bool dispatching_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::function<void()>> pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::store
