// framework::ClusterClient against a real kube-apiserver (what upstream's scheduler does
// through client-go: DefaultBinder, the event recorder, updatePod, preemption).
//
//   Bind            POST /api/v1/namespaces/{ns}/pods/{name}/binding (synchronous; on the
//                   binding workers). 404 (pod deleted) and 409 (already bound, or a new
//                   pod with the same name: the Binding carries the pod's UID) return an
//                   Error status naming the pod; the scheduler forgets the pod and the
//                   informer's update/delete removes it from the queue.
//   DeletePod       DELETE the pod (preemption victim), with a UID precondition; 404 is
//                   success (already gone).
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
#pragma once

#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "client/rest_client.h"
#include "framework/handle.h"

namespace phalanx::client {

class LiveClusterClient final : public framework::ClusterClient {
 public:
  // `api` serves binds, deletes and status patches; `events` serves events (upstream uses
  // a separate client, and so a separate rate limit, for events). `component` is the
  // event source ("phalanx"); `clock` stamps events.
  LiveClusterClient(RestClient& api, RestClient& events, const framework::Clock& clock,
                    std::string component = "phalanx");
  ~LiveClusterClient() override;

  framework::Status Bind(const api::Pod& pod, const std::string& node) override;
  framework::Status DeletePod(const api::Pod& pod) override;
  framework::Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                                    const std::string* nominated_node_name) override;
  void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                   std::string_view message) override;

  // Sends what is queued, waiting at most `timeout`; then stops the writer threads.
  void Flush(std::chrono::milliseconds timeout);

  struct Counters {
    int64_t binds = 0, bind_errors = 0, status_patches = 0, status_errors = 0, events = 0,
            events_dropped = 0, event_errors = 0;
  };
  Counters counters() const;

 private:
  struct StatusPatch {
    std::string ns, name, body;
  };
  struct EventReq {
    std::string ns, pod_name, pod_uid, type, reason, message;
    api::Timestamp time = 0;
  };
  void StatusLoop();
  void EventLoop();
  void SendEvent(const EventReq& e);

  RestClient& api_;
  RestClient& events_;
  const framework::Clock& clock_;
  std::string component_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  // Status patches: FIFO of pod keys, the latest patch per key.
  std::deque<std::string> status_order_;
  std::unordered_map<std::string, StatusPatch> status_pending_;
  int status_inflight_ = 0;
  std::deque<EventReq> events_q_;
  int events_inflight_ = 0;
  Counters counters_;
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
