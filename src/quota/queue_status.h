// Queue status written back to the queue objects, in each dialect's own fields, and the
// report of invalid queue objects (live mode; `phalanx run`).
//
// What each dialect's status gets (the figures come from QueueManager::ObjectReports):
//   Volcano Queue (scheduling.volcano.sh/v1beta1; volcano-sh/apis
//     pkg/apis/scheduling/v1beta1/types.go QueueStatus):
//       state      "Open" (Phalanx does not close queues)
//       pending / running / inqueue   PodGroups of the queue by phase (QueueUnitCounts)
//       allocated  requests of the queue's (and its children's) bound or assumed pods
//   KAI Queue (scheduling.run.ai/v2; NVIDIA/KAI-Scheduler pkg/apis/scheduling/v2/
//     queue_types.go QueueStatus):
//       childQueues  usable child queues, by name
//       allocated    as Volcano's allocated (the queue and its children)
//       requested    allocated + the requests of the pods still pending
//     (allocatedNonPreemptible and conditions are not written.)
//   ElasticQuota (scheduling.x-k8s.io/v1alpha1 and scheduling.sigs.k8s.io/v1alpha1;
//     kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1/types.go
//     ElasticQuotaStatus):
//       used         requests of the bound or assumed pods the quota governs
// Resource lists are Kubernetes quantities: cpu "2" or "1500m", memory and the rest as
// integers ("67108864", "4"); the "pods" count is left out. A resource that was written
// before and is now unused is written as "0" (a JSON merge patch keeps keys it is not
// given).
//
// QueueStatusWriter is the writer: one pass (Sync) recomputes every queue object's status
// and writes only the ones that changed since the last successful write — coalesced (the
// latest figures win; a queue whose pods change 100 times between passes costs one write)
// and rate-limited (at most one pass per min_interval), as the PodGroup status writer is
// (client/cluster_client.h UpdatePodGroupStatus). An object whose spec is invalid, sits on a
// cycle, names a missing parent or duplicates another object's queue name is reported
// once per distinct message through the sink (an Event on the object and a log line); the
// rest of the tree keeps working (queue_tree.h).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "api/types.h"
#include "api/unstructured.h"
#include "quota/queue_manager.h"

namespace phalanx::quota {

// Which queue object a write or an event is about.
struct QueueObjectRef {
  std::string api_version;  // "scheduling.volcano.sh/v1beta1"
  std::string kind;         // "Queue" | "ElasticQuota"
  std::string resource;     // plural: "queues" | "elasticquotas"
  std::string namespace_;   // "" for the cluster-scoped Queues
  std::string name;
  std::string uid;
  // "scheduling.volcano.sh/v1beta1/Queue//team-a": the writer's per-object key.
  std::string Key() const;
};
QueueObjectRef RefOf(const api::Unstructured& obj);

// A resource amount (queue_tree.h units) as a Kubernetes quantity string: cpu milli-CPU ->
// "2" or "1500m"; anything else -> the integer ("67108864").
std::string QuantityString(const std::string& resource, int64_t amount);

// The JSON object written as `status` for `report` (dialect from its object's group and
// kind, fields above). `zero_keys`: resources to write as "0" when absent (written before).
// "" for an object that is not a queue kind.
std::string QueueStatusJson(const QueueObjectReport& report,
                            const std::set<std::string>& zero_keys = {});

// Where the writer's output goes: the API server in live mode (app/queue_status_sink.h),
// a fake in tests.
class QueueStatusSink {
 public:
  virtual ~QueueStatusSink() = default;
  // Merge-patches {"status": <status_json>} into the object. Non-OK: not written (the
  // writer tries again at its next pass).
  virtual api::Status PatchStatus(const QueueObjectRef& ref, const std::string& status_json) = 0;
  // `message` (naming the object and field, queue_tree.h) says why the object takes no part
  // in scheduling: a Warning Event on the object, and a log line.
  virtual void ReportInvalid(const QueueObjectRef& ref, const std::string& message) = 0;
  // A QueueManager::Warnings() entry (queue accounting that is not what a queue asks for,
  // e.g. a device class that maps to no quota resource): a log line, once.
  virtual void ReportWarning(const std::string& message) = 0;
};

struct QueueStatusWriterCounters {
  int64_t passes = 0;     // passes that recomputed the statuses
  int64_t writes = 0;     // successful PatchStatus calls
  int64_t unchanged = 0;  // statuses equal to the last written, not sent
  int64_t errors = 0;     // failed PatchStatus calls
  int64_t invalid_reports = 0;
  int64_t warnings = 0;  // QueueManager::Warnings() entries reported
};

class QueueStatusWriter {
 public:
  // `min_interval_ns`: the least time between two passes (rate limit). The writer reads
  // `queues` (thread-safe itself) and calls `sink` from the thread that calls Sync.
  QueueStatusWriter(const QueueManager& queues, QueueStatusSink& sink,
                    int64_t min_interval_ns = 1'000'000'000);

  // One pass at time `now` (ns; any monotonic or wall clock): does nothing when the last
  // pass was less than min_interval ago, or when nothing changed (QueueManager::Generation)
  // and no write is waiting for a retry. Otherwise writes every changed status and reports
  // every new invalid-object message and every new QueueManager::Warnings() entry. Returns
  // the counters so far.
  QueueStatusWriterCounters Sync(api::Timestamp now) ABSL_LOCKS_EXCLUDED(mu_);
  QueueStatusWriterCounters counters() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Written {
    std::string json;            // the last status written
    std::set<std::string> keys;  // resources it has ever written (zero_keys)
    std::string reported;        // the last invalid message reported ("" = none)
  };
  const QueueManager& queues_;
  QueueStatusSink& sink_;
  const int64_t min_interval_ns_;
  mutable absl::Mutex mu_;  // held for a whole pass: Sync is not reentrant
  bool any_pass_ ABSL_GUARDED_BY(mu_) = false;
  api::Timestamp last_pass_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t last_generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool retry_ ABSL_GUARDED_BY(mu_) = false;
  size_t warnings_reported_ ABSL_GUARDED_BY(mu_) = 0;            // of QueueManager::Warnings()
  std::map<std::string, Written> objects_ ABSL_GUARDED_BY(mu_);  // by QueueObjectRef::Key
  QueueStatusWriterCounters counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::quota
