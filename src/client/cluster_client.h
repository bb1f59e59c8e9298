// cluster::ClusterClient against a real kube-apiserver (what upstream's scheduler does
// through client-go: DefaultBinder, the event recorder, updatePod, preemption).
//
//   Bind            POST /api/v1/namespaces/{ns}/pods/{name}/binding (synchronous; on the
//                   binding workers). 404 (pod deleted) and 409 (already bound, or a new
//                   pod with the same name: the Binding carries the pod's UID) return an
//                   Error status naming the pod; the scheduler forgets the pod and the
//                   informer's update/delete removes it from the queue.
//   DeletePod       DELETE the pod (preemption victim), with a UID precondition; 404 is
//                   success (already gone).
//   PatchPodAnnotations PATCH pods/{name} (strategic merge patch
//                   {"metadata":{"uid":...,"annotations":{...}}}): GpuShare's device
//                   assignment at PreBind. Synchronous; the uid makes the server refuse
//                   a pod re-created under the same name. 404 returns NotFound.
//   UpdatePodStatus PATCH pods/{name}/status (strategic merge patch): the PodScheduled
//                   condition (merged by type) and status.nominatedNodeName (null clears
//                   it). Asynchronous: queued, coalesced per pod (the latest wins), sent
//                   by a writer thread; skipped when the pod already carries the same
//                   condition and nominated node. Returns Success once queued.
//   RecordEvent     core/v1 Event in the pod's namespace (reasons Scheduled,
//                   FailedScheduling, Preempted ...), source component "phalanx".
//                   Asynchronous and best effort (bounded queue; dropped when full);
//                   a repeat of the same reason and message for the same pod within 10
//                   minutes PATCHes the first event's count and lastTimestamp, as
//                   client-go's event correlator does.
//   RecordObjectEvent the same, with involvedObject = the gang's object (apiVersion,
//                   kind, namespace, name and the uid learned through ObserveObject).
//   UpdatePodGroupStatus  merge PATCH .../podgroups/{name}/status with the dialect's status
//                   fields (cluster::ClusterClient::PodGroupStatus); when the CRD has no
//                   status subresource (404 on /status while the object exists) the main
//                   resource is patched instead, and remembered per group/version.
//                   Asynchronous on the status writer thread, coalesced per object (the
//                   latest wins) and skipped when equal to what was last written, so
//                   repeated outcomes and each member's bind cost no API call unless the
//                   status changes. Best effort: a failed write is logged and counted, and
//                   the gang's next cycle outcome or member bind writes it again.
#pragma once

#include <deque>
#include <list>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/unstructured.h"
#include "client/rest_client.h"
#include "cluster/client.h"

namespace phalanx::client {

class LiveClusterClient final : public cluster::ClusterClient {
 public:
  // `api` serves binds, deletes and status patches; `events` serves events (upstream uses
  // a separate client, and so a separate rate limit, for events). `component` is the
  // event source ("phalanx"); `clock` stamps events.
  LiveClusterClient(RestClient& api, RestClient& events, const cluster::Clock& clock,
                    std::string component = "phalanx");
  ~LiveClusterClient() override;

  api::Status Bind(const api::Pod& pod, const std::string& node) override;
  api::Status DeletePod(const api::Pod& pod) override;
  api::Status PatchPodAnnotations(const api::Pod& pod,
                                  const std::map<std::string, std::string>& annotations) override;
  // The strategic merge patch body PatchPodAnnotations sends.
  static std::string AnnotationPatchJson(const api::Pod& pod,
                                         const std::map<std::string, std::string>& annotations);
  api::Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                              const std::string* nominated_node_name) override;
  // PUT of the whole object (VolumeBinding's PreBind: a PV's claimRef, a claim's
  // selected-node annotation) to client::UnstructuredPath(obj), its body client::YamlToJson of
  // the stored object as changed (metadata.resourceVersion kept: a newer version on the
  // server is a 409, Aborted). Synchronous. InvalidArgument for a kind without a path.
  api::Status PutObject(const api::Unstructured& obj) override;
  // PUT .../resourceclaims/NAME/status with the claim (DynamicResources' PreBind).
  api::Status UpdateResourceClaimStatus(const api::Unstructured& claim) override;
  // POST .../namespaces/NS/resourceclaims (the object as JSON; generateName completed by
  // the server) and the created object decoded from the response.
  api::StatusOr<api::Unstructured> CreateResourceClaim(const api::Unstructured& claim) override;
  // DELETE .../resourceclaims/NAME with a UID precondition; a claim already gone is OK.
  api::Status DeleteResourceClaim(const api::Unstructured& claim) override;
  // POST to the object's collection (client/objects.h UnstructuredPath: the kinds the
  // informers know, and v1 PodTemplates); the answer decoded as the stored object.
  api::StatusOr<api::Unstructured> PostObject(const api::Unstructured& obj) override;
  api::Status DeleteObject(const api::Unstructured& obj) override;
  // PATCH pods/NAME/status (strategic merge) with status.extendedResourceClaimStatus.
  api::Status PatchPodExtendedResourceClaimStatus(
      const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) override;
  void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                   std::string_view message) override;
  void RecordObjectEvent(std::string_view api_version, std::string_view kind, std::string_view ns,
                         std::string_view name, std::string_view type, std::string_view reason,
                         std::string_view message) override;
  void UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                            std::string_view ns, std::string_view name,
                            const PodGroupStatus& status) override;
  // Learns (or forgets, `deleted`) the uid of a gang or queue object (kinds PodGroup,
  // Workload, Queue, ElasticQuota; others are ignored) for involvedObject.uid. Wire to the
  // object informer. Events on cluster-scoped objects (Queues) go to namespace "default".
  void ObserveObject(const api::Unstructured& obj, bool deleted);
  // The JSON `status` object written for `status` of an object of `group`
  // (scheduling.volcano.sh: phase + conditions; others: the Coscheduling fields).
  // `now` stamps Volcano's lastTransitionTime.
  // The strategic merge patch PatchPodExtendedResourceClaimStatus sends (tests).
  static std::string ExtendedResourceClaimStatusPatchJson(
      const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status);
  static std::string PodGroupStatusJson(std::string_view group, const PodGroupStatus& status,
                                        api::Timestamp now);

  // Sends what is queued, waiting at most `timeout`; then stops the writer threads.
  void Flush(std::chrono::milliseconds timeout);

  struct Counters {
    int64_t binds = 0, bind_errors = 0, annotation_patches = 0, annotation_patch_errors = 0,
            status_patches = 0, status_errors = 0, events = 0, events_dropped = 0, event_errors = 0,
            podgroup_status_writes = 0, podgroup_status_skipped = 0, podgroup_status_errors = 0;
  };
  Counters counters() const;

 private:
  struct StatusPatch {
    std::string ns, name, body;
  };
  struct EventReq {
    std::string ns, pod_name, pod_uid, type, reason, message;
    api::Timestamp time = 0;
    // involvedObject type ("v1" "Pod" for pod events).
    std::string obj_api_version = "v1", obj_kind = "Pod";
  };
  struct PodGroupWrite {
    std::string api_version, kind, ns, name;
    PodGroupStatus status;
  };
  void SendPodGroupStatus(const PodGroupWrite& w);
  void StatusLoop();
  void EventLoop();
  void SendEvent(const EventReq& e);

  RestClient& api_;
  RestClient& events_;
  const cluster::Clock& clock_;
  std::string component_;

  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // signalled on every queue, in-flight and stop change
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // Status patches: FIFO of pod keys, the latest patch per key.
  std::deque<std::string> status_order_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, StatusPatch> status_pending_ ABSL_GUARDED_BY(mu_);
  int status_inflight_ ABSL_GUARDED_BY(mu_) = 0;
  // PodGroup status: FIFO of object keys, the latest per key, and the last written.
  std::deque<std::string> pg_order_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, PodGroupWrite> pg_pending_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, PodGroupStatus> pg_written_ ABSL_GUARDED_BY(mu_);
  // The status last queued per object, for its condition's lastTransitionTime.
  std::unordered_map<std::string, PodGroupStatus> pg_condition_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> no_status_subresource_;  // api_versions (status thread only)
  // "<apiGroup>/<kind>/<ns>/<name>"
  std::unordered_map<std::string, std::string> uids_ ABSL_GUARDED_BY(mu_);
  std::deque<EventReq> events_q_ ABSL_GUARDED_BY(mu_);
  int events_inflight_ ABSL_GUARDED_BY(mu_) = 0;
  Counters counters_ ABSL_GUARDED_BY(mu_);
  std::thread status_thread_;
  std::thread event_thread_;

  // Event correlation (event thread only): key -> name, count, first time.
  struct Seen {
    std::string name;
    int32_t count = 0;
    api::Timestamp first = 0;
    api::Timestamp last = 0;
  };
  std::map<std::string, Seen> seen_;
};

}  // namespace phalanx::client
