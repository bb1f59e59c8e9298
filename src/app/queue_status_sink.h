// The live side of the queue status writer (quota/queue_status.h): status patches to the
// API server and invalid-object reports as Events, for `phalanx run`.
//
//   PatchStatus    merge PATCH {"status": ...} to .../queues/{name}/status (cluster-scoped
//                  Queues) or .../namespaces/{ns}/elasticquotas/{name}/status. A 404 on
//                  /status while the object exists means the CRD has no status subresource:
//                  the main resource is patched instead, and remembered per apiVersion (as
//                  the PodGroup status writer does, client/cluster_client.h). 404 on both:
//                  the object is gone (OK; the informer's delete follows).
//   ReportInvalid  a log line (warning) and a Warning Event, reason InvalidQueue, whose
//                  involvedObject is the queue object (recorded through the ClusterClient,
//                  which learns the object's uid from the object informer; a cluster-scoped
//                  Queue's Event goes to namespace "default", as client-go records events
//                  for cluster-scoped objects).
//   ReportWarning  a log line (warning) "queue accounting: <message>".
#pragma once

#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "client/rest_client.h"
#include "cluster/client.h"
#include "quota/queue_status.h"

namespace phalanx::app {

class LiveQueueStatusSink final : public quota::QueueStatusSink {
 public:
  // `api` sends the patches (its QPS limit applies); `events` records the Events.
  LiveQueueStatusSink(client::RestClient& api, cluster::ClusterClient& events)
      : api_(api), events_(events) {}

  api::Status PatchStatus(const quota::QueueObjectRef& ref,
                          const std::string& status_json) override;
  void ReportInvalid(const quota::QueueObjectRef& ref, const std::string& message) override;
  // A log line "queue accounting: <message>" (warning).
  void ReportWarning(const std::string& message) override;

  // "/apis/scheduling.volcano.sh/v1beta1/queues/team-a",
  // "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ns/elasticquotas/q".
  static std::string ObjectPath(const quota::QueueObjectRef& ref);

 private:
  client::RestClient& api_;
  cluster::ClusterClient& events_;
  absl::Mutex mu_;
  std::set<std::string> no_status_subresource_ ABSL_GUARDED_BY(mu_);  // apiVersion/resource
};

}  // namespace phalanx::app
