// ProvisioningRequest: atomic scale-up for gangs through cluster-autoscaler's
// ProvisioningRequest API (autoscaling.x-k8s.io/v1; KEP kubernetes/autoscaler
// provisioning-request.md, cluster-autoscaler/provisioningrequest; Kueue's provisioning
// admission check does the same for Kueue workloads).
//
// Without it, a gang that does not fit asks for nodes one pod at a time: cluster-autoscaler
// sees each pending member alone, adds a node for the first, the gang still does not fit
// and the node idles. With this plugin enabled (a PodGroup PostFilter, after
// DefaultPreemption), a gang whose PodGroup cycle failed in placement, that preemption
// could not help, gets one ProvisioningRequest for all its pending members:
//  - a v1 PodTemplate per distinct member shape ("ppt-<request>-<i>": the members'
//    labels, containers' requests and limits, nodeSelector, required node affinity,
//    tolerations, priority), then the request "<podgroup>-phalanx-<attempt>" with
//    spec.provisioningClassName (default best-effort-atomic-scale-up.autoscaling.x-k8s.io:
//    all the nodes or none) and spec.podSets [{count, podTemplateRef}];
//  - the members get the annotations autoscaling.x-k8s.io/consume-provisioning-request and
//    autoscaling.x-k8s.io/provisioning-class-name, so that cluster-autoscaler does not also
//    scale up for them one by one (its ProvisioningRequest pod filter);
//  - a Normal "ProvisioningRequestCreated" Event on the gang's object.
// The request's conditions (Accepted, Provisioned True/False, Failed, BookingExpired,
// CapacityRevoked; cluster-autoscaler provisioningrequest/conditions) are followed through
// the scheduler's object watch; every change activates the members, whose next cycle
// places them on the new nodes or carries the request's state in the gang's reason, e.g.
// "scale-up: ProvisioningRequest ml/train-phalanx-1: Provisioned=False (CapacityIsNotFound):
// ...". Failed, BookingExpired and CapacityRevoked end a request: it and its templates are
// deleted (a Warning Event says why) and, after retryBackoffSeconds, the next failed cycle
// creates the next one, up to maxRequestsPerGang. When the gang commits, its request and
// templates are deleted (the capacity is in use; the booking is no longer needed).
//
// Not carried into the templates (cluster-autoscaler's simulation may then place them
// differently from Phalanx): pod (anti-)affinity, topology spread constraints, volumes and
// resource claims; the creation message names those a member has.
//
// Args (ProvisioningRequestArgs):
//   provisioningClassName: string  (default best-effort-atomic-scale-up.autoscaling.x-k8s.io;
//                                   check-capacity.autoscaling.x-k8s.io only checks)
//   maxActiveRequests: int >= 1    (default 8: requests in flight at once, all gangs)
//   maxRequestsPerGang: int >= 1   (default 3: requests one gang may create in all)
//   retryBackoffSeconds: int >= 0  (default 60: after a request ended unprovisioned)
//   minMembers: int >= 1           (default 1: gangs with fewer pending members never ask)
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/types.h"
#include "api/unstructured.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/object_events.h"
#include "framework/podgroup.h"
#include "framework/registry.h"
#include "gang/podgroup_manager.h"

namespace phalanx::plugins::provisioningrequest {

inline constexpr std::string_view kApiVersion = "autoscaling.x-k8s.io/v1";
inline constexpr std::string_view kAtomicClass = "best-effort-atomic-scale-up.autoscaling.x-k8s.io";
inline constexpr std::string_view kCheckCapacityClass = "check-capacity.autoscaling.x-k8s.io";
// Pod annotations that tie a pod to a request (cluster-autoscaler
// provisioningrequest/pods: ProvisioningRequestPodAnnotationKey,
// ProvisioningClassPodAnnotationKey).
inline constexpr std::string_view kConsumeAnnotation =
    "autoscaling.x-k8s.io/consume-provisioning-request";
inline constexpr std::string_view kClassAnnotation = "autoscaling.x-k8s.io/provisioning-class-name";

struct Args {
  std::string class_name = std::string(kAtomicClass);
  int32_t max_active_requests = 8;
  int32_t max_requests_per_gang = 3;
  int64_t retry_backoff_ns = 60 * api::kNanosPerSecond;
  int32_t min_members = 1;
};

// The state a request's status.conditions give (cluster-autoscaler's condition types; the
// first that holds of Failed=True, BookingExpired=True, CapacityRevoked=True, Provisioned,
// Accepted=True).
struct RequestState {
  enum Phase { kPending, kAccepted, kProvisioned, kNotProvisioned, kEnded };
  Phase phase = kPending;
  std::string condition;  // e.g. "Provisioned=False (CapacityIsNotFound): message"; "" pending
};
RequestState ReadRequestState(const api::Unstructured& request);

// The v1 PodTemplate for pods shaped like `pod`, named `name` in the pod's namespace (the
// fields listed in the header comment). *not_carried gets the fields the pod has that the
// template leaves out ("podAffinity", "topologySpreadConstraints", ...).
api::Unstructured PodTemplateFor(const api::Pod& pod, const std::string& name,
                                 std::vector<std::string>* not_carried);

class ProvisioningRequest final : public framework::PodGroupPostFilterPlugin,
                                  public framework::PodGroupCycleListener {
 public:
  static constexpr std::string_view kName = "ProvisioningRequest";

  ProvisioningRequest(framework::Handle& h, Args args);
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  std::string_view Name() const override { return kName; }

  // After a failed PodGroup cycle: Skip when the placement did not fail (minResources or
  // admission refused: new nodes would not help) or the gang has fewer than minMembers
  // pending members; otherwise Unschedulable with the request's line for the gang's reason
  // (created now, its state, why none is made).
  framework::Status PodGroupPostFilter(framework::CycleState& state,
                                       const framework::QueuedPodGroupInfo& group,
                                       const framework::PodGroupAttempt& attempt,
                                       framework::PodGroupFeasibility& feasibility,
                                       framework::PodGroupPostFilterResult* result) override;
  // A committed gang's request and templates are deleted.
  void PodGroupCycleDone(const framework::QueuedPodGroupInfo& group, bool committed,
                         const std::string& reason) override;

 private:
  struct Gang {
    std::string request;                 // "namespace/name" of the live request, "" none
    std::vector<std::string> templates;  // its PodTemplates' names
    std::vector<std::string> members;    // pod keys it was created for
    RequestState state;
    int32_t created = 0;          // requests created for this gang so far
    api::Timestamp retry_at = 0;  // no new request before
    std::string last_end;         // why the last request ended ("" none)
    std::string last_failure;     // the live request's last Provisioned=False ("" none)
  };
  void OnRequest(const api::Unstructured& obj, bool deleted) ABSL_LOCKS_EXCLUDED(mu_);
  // Creates the templates and the request for `gang_key` (g is gangs_[gang_key]); the line
  // for the reason. Scheduling thread, without mu_ (it takes it for the maps).
  std::string Create(const std::string& gang_key, Gang& g,
                     const framework::PodGroupAttempt& attempt) ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes a request ("namespace/name") and its templates; the errors ("" none). Without mu_.
  std::string DeleteObjects(const std::string& request, const std::vector<std::string>& templates)
      ABSL_LOCKS_EXCLUDED(mu_);
  int32_t ActiveLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  framework::Handle& handle_;
  const Args args_;
  gang::PodGroupEventRecorder* events_;  // nullptr: no events on gang objects
  framework::PodActivator* activator_;   // nullptr: members wait for other events
  absl::Mutex mu_;
  std::map<std::string, Gang> gangs_ ABSL_GUARDED_BY(mu_);                // by gang key
  std::map<std::string, std::string> request_gang_ ABSL_GUARDED_BY(mu_);  // request -> gang
};

}  // namespace phalanx::plugins::provisioningrequest
