// Reflectors and informers against a real kube-apiserver (upstream client-go
// tools/cache Reflector + SharedInformerFactory), implementing cluster::InformerFactory so
// that the scheduler consumes live clusters exactly as it consumes the in-process store.
//
// One reflector thread per resource: paged LIST (limit 500, consistent read), then WATCH
// from the list's resourceVersion with allowWatchBookmarks and a server-side timeout of
// 5-10 minutes, re-watching from the last seen resourceVersion; on 410 Gone (expired
// resourceVersion, or an expired continue token while paging) it relists; on other
// errors it retries with exponential backoff (0.8 s doubling to 30 s, with jitter).
// Reflectors decode JSON into the typed model (client/objects.h) and hand the result to
// one dispatcher thread, which keeps the per-resource caches and calls the handlers: all
// handler calls happen on that one thread, in the order the server sent the changes for
// each resource. A relist is diffed against the cache (adds, updates with a changed
// resourceVersion, deletes of objects that are gone).
//
// Resources: pods (not Succeeded/Failed), pods in Succeeded/Failed (a second watch, for gang
// status only: AddTerminalPodHandlers), nodes, namespaces, priorityclasses, and the
// object kinds of the gang dialects and PodGrouper owners that the server serves
// (discovered via /api and /apis; absent ones are skipped): PodGroups of
// scheduling.x-k8s.io, scheduling.sigs.k8s.io, scheduling.volcano.sh, scheduling.run.ai,
// Workloads/PodGroups of scheduling.k8s.io, Jobs, JobSets, PyTorchJobs, MPIJobs; the queue
// kinds (KAI and Volcano Queues, ElasticQuotas of scheduling.x-k8s.io and
// scheduling.sigs.k8s.io).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "client/objects.h"
#include "client/rest_client.h"
#include "cluster/informer.h"

namespace phalanx::client {

// The object kinds live mode may watch as api::Unstructured, in discovery order.
std::vector<ResourceType> OptionalObjectResources();
// pods, terminal pods, nodes, namespaces, priorityclasses.
std::vector<ResourceType> CoreResources();

struct InformerOptions {
  int64_t page_size = 500;
  // Watch timeoutSeconds is drawn from [min, 2*min) per watch, as client-go does.
  int64_t min_watch_timeout_seconds = 300;
  std::chrono::milliseconds initial_backoff{800};
  std::chrono::milliseconds max_backoff{30000};
};

// Status of one reflector, for logs, /readyz and errors.
struct ReflectorStatus {
  std::string resource;
  bool synced = false;
  // OK when the last request succeeded (or none failed yet); else its error: the failed
  // response's status (RestClient::ToStatus), the decode error of a list or event, or
  // Unavailable for a watch ERROR event.
  api::Status last_error;
  std::string resource_version;
  int64_t relists = 0;
  int64_t events = 0;
};

class LiveInformerFactory final : public cluster::InformerFactory {
 public:
  LiveInformerFactory(RestClient& client, InformerOptions opts = {});
  ~LiveInformerFactory() override;

  // Discovery: which OptionalObjectResources() the server serves (GET /apis, then the
  // group versions). Fails on transport, TLS and auth errors (RestClient::ToStatus: the
  // HTTP status mapped, Describe's message), so that a bad kubeconfig is reported before
  // anything starts; DataLoss for a malformed /apis body.
  api::Status Discover();
  // The resources Start() watches (core + discovered), e.g. "podgroups.scheduling.x-k8s.io".
  std::vector<std::string> Resources() const;
  // The resource types Start() watches (core + discovered), for one-shot listing
  // (app/cluster_import.h).
  const std::vector<ResourceType>& Types() const { return types_; }

  // Starts one reflector thread per resource. Call after the handlers are registered, or
  // register later (registration replays the cache).
  void Start();
  // Waits until every reflector has delivered its first full list, `stop` is set, or the
  // timeout passes. DeadlineExceeded (timeout) or Cancelled (`stop`) listing the resources
  // not synced and their last errors (e.g. "pods: Forbidden: pods is forbidden: User \"x\"
  // cannot list ...").
  api::Status WaitForCacheSync(std::chrono::milliseconds timeout, const std::atomic<bool>* stop);
  bool HasSynced() const;
  // Stops the reflectors (within about a second) and the dispatcher. Idempotent.
  void Stop();
  std::vector<ReflectorStatus> Status() const;

  // cluster::InformerFactory. Blocks until the dispatcher has replayed the cache into `h`.
  void AddPodHandlers(cluster::EventHandlers<api::Pod> h) override;
  void AddTerminalPodHandlers(cluster::EventHandlers<api::Pod> h) override;
  void AddNodeHandlers(cluster::EventHandlers<api::Node> h) override;
  void AddPriorityClassHandlers(cluster::EventHandlers<api::PriorityClass> h) override;
  void AddNamespaceHandlers(cluster::EventHandlers<api::Namespace> h) override;
  void AddObjectHandlers(cluster::EventHandlers<api::Unstructured> h) override;
  // PodDisruptionBudgets, when discovery found them served (policy/v1 or v1beta1).
  void AddPodDisruptionBudgetHandlers(cluster::EventHandlers<api::PodDisruptionBudget> h) override;

 private:
  struct Reflector;
  struct Cache {
    ResourceType type;
    std::unordered_map<std::string, Object> objects;
  };
  enum class Op { kAdd, kUpdate, kDelete };

  void RunReflector(Reflector* r);
  // Returns false on error (with the reflector's ReflectorStatus::last_error set); sets *gone
  // on 410.
  bool ListAll(Reflector* r, std::string* rv, bool* gone);
  bool Watch(Reflector* r, std::string* rv, bool* gone);
  bool Sleep(std::chrono::milliseconds d);  // false when stopping
  void SetError(Reflector* r, api::Status e);
  // The reflector's ReflectorStatus::last_error (OK when its last request succeeded).
  api::Status LastError(const Reflector& r) const;

  // Dispatcher side (all on the dispatcher thread).
  void Post(std::function<void()> fn);
  void PostAndWait(std::function<void()> fn);
  void DispatchLoop();
  void Replace(size_t idx, std::vector<Object> items);
  void Apply(size_t idx, Op op, Object obj);
  void Notify(Target t, Op op, const std::shared_ptr<const void>& old_obj,
              const std::shared_ptr<const void>& obj);

  RestClient& client_;
  InformerOptions opts_;
  std::vector<ResourceType> types_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::atomic<bool> stop_{false};
  absl::Mutex sleep_mu_;
  absl::CondVar sleep_cv_;  // Stop() wakes the reflectors' backoff sleeps

  mutable absl::Mutex status_mu_;
  absl::CondVar synced_cv_;  // signalled when a reflector syncs or fails
  // By reflector index (Reflector::index); filled by Start().
  std::vector<ReflectorStatus> status_ ABSL_GUARDED_BY(status_mu_);

  // Dispatcher.
  absl::Mutex q_mu_;
  absl::CondVar q_cv_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(q_mu_);
  bool q_stop_ ABSL_GUARDED_BY(q_mu_) = false;
  std::thread dispatcher_;
  std::vector<Cache> caches_;  // by resource index; dispatcher thread only
  std::vector<cluster::EventHandlers<api::Pod>> pod_h_;
  std::vector<cluster::EventHandlers<api::Pod>> terminal_pod_h_;
  std::vector<cluster::EventHandlers<api::Node>> node_h_;
  std::vector<cluster::EventHandlers<api::PriorityClass>> pc_h_;
  std::vector<cluster::EventHandlers<api::Namespace>> ns_h_;
  std::vector<cluster::EventHandlers<api::PodDisruptionBudget>> pdb_h_;
  std::vector<cluster::EventHandlers<api::Unstructured>> obj_h_;
  bool started_ = false;
};

}  // namespace phalanx::client
