// Node reservations for gangs that wait too long, with backfill.
//
// Phalanx's PodGroup cycle holds nothing for a gang that does not fit, which keeps gangs
// deadlock-free but lets small pods take every GPU that frees while a large gang waits
// (starvation). Slurm's EASY backfill (Lifka, "The ANL/IBM SP scheduling system", 1995;
// Slurm sched/backfill) is the model: the job at the head of the queue gets a reservation
// — the nodes where it will start, and a forecast start time ("shadow time") computed from
// the running jobs' expected end times — and other jobs may start on those nodes only if
// they will end before it. Users ask for the same in KAI-Scheduler#1969, Volcano#947 and
// kube-batch#821.
//
// This file holds the model — expected runtimes of pods, the node forecasts (ForecastNodes,
// built here once for the reservation planner and for `phalanx explain`'s start forecast,
// src/sim/forecast.h), the forecast and choice of nodes (PlanReservation) — and the
// ReservationManager, the shared, thread-safe record of the active reservations, which the
// scheduler owns and provides to plugins. The GangReservation plugin
// (src/plugins/gangreservation/) is the behaviour: it configures the ReservationManager from its
// args, enforces reservations at Filter, plans them and evicts for starving gangs behind the
// PodGroup PostFilter, and releases them at the gang's commit; the scheduler sweeps expired
// ones on its clock (Scheduler::Tick). Everything runs on the scheduler's clock: virtual in
// `phalanx simulate`, wall in `phalanx run`.
//
// Life of a reservation:
//
//   gang fails a PodGroup cycle after waiting >= threshold
//        │ PlanReservation fits (forecast exists, gang fits the cluster)
//        ▼
//   Active(nodes, forecast_start, expires = forecast_start + grace)
//        │ gang commits ──────────────► released (kBound)
//        │ gang deleted / unsatisfiable ► released (kGone)
//        │ now > expires ─────────────► released (kExpired); the next failed cycle re-plans
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/resource.h"
#include "api/types.h"
#include "framework/types.h"
#include "gang/podgroup_manager.h"

namespace phalanx::gang {

// Annotation on a pod: its expected runtime in seconds once started (a number > 0,
// decimals allowed). Phalanx's own name; the Philly replay sets it from the trace.
inline constexpr std::string_view kExpectedRuntimeAnnotation =
    "scheduling.phalanx.dev/expected-runtime-seconds";

// The expected runtime of `pod` in nanoseconds: the kExpectedRuntimeAnnotation, else
// spec.activeDeadlineSeconds (the kubelet kills the pod by then, so it is an upper bound),
// else nullopt (unknown). A malformed annotation counts as absent.
std::optional<int64_t> ExpectedRuntimeNs(const api::Pod& pod);

// When a running pod is expected to end: its start (status.startTime, else `fallback_start`)
// plus ExpectedRuntimeNs; nullopt when the runtime is unknown (it never ends in a forecast).
std::optional<api::Timestamp> ExpectedEnd(const api::Pod& pod, api::Timestamp fallback_start);

// One node as the forecast sees it. `free` is allocatable minus what is requested now, with
// allowed_pod_number = free pod slots. `releases`: for every running pod of known end, when
// it ends (ns) and what it gives back (allowed_pod_number 1). Pods of unknown end are in the
// requested amount only: they never free.
struct NodeForecast {
  std::string name;
  api::Resource allocatable;  // allowed_pod_number = the node's pod capacity
  api::Resource free;
  std::vector<std::pair<api::Timestamp, api::Resource>> releases;
};

// True when `request` fits in `free` in every dimension (cpu, memory, ephemeral storage,
// pod slots, scalar resources such as nvidia.com/gpu).
bool FitsIn(const api::Resource& request, const api::Resource& free);

// The outcome of PlanReservation.
struct ReservationPlan {
  bool ok = false;
  std::vector<std::string> nodes;     // the nodes chosen, sorted by name
  api::Timestamp forecast_start = 0;  // when the chosen nodes can host every member (ns)
  std::string why_not;                // !ok: why no reservation, for the gang's reason
};

// EASY backfill's reservation for one gang: the earliest time T (now, or the end of some
// running pod) at which every request of `members` (one per member still to place, each with
// allowed_pod_number 1) fits on the nodes' capacity freed by then, placed first-fit in
// decreasing size order on nodes ordered by when they free (those free earliest first, then
// by name), so that the chosen nodes are the ones that free soonest. forecast_start = T.
// Not ok, with why_not, when the members do not fit even on the empty cluster, or when they
// fit only once pods of unknown runtime end (no forecast). T is found by trying now, then the
// last release, then bisecting (free room only grows with time; first fit makes that nearly,
// not strictly, monotone, so T may be a little later than the earliest fit): O(log R x
// (pods + members x nodes)) with R the distinct release times; once per reservation.
ReservationPlan PlanReservation(const std::vector<NodeForecast>& nodes,
                                const std::vector<api::Resource>& members, api::Timestamp now);

// Plugin args of GangReservation (GangReservationArgs). threshold_ns 0 = reservations off.
struct ReservationSettings {
  int64_t threshold_ns = 0;                       // reservationThresholdSeconds
  int64_t grace_ns = 600 * api::kNanosPerSecond;  // reservationGraceSeconds
  int32_t max_reservations = 1;                   // maxReservations (1 = EASY backfill)
  int32_t min_members = 2;                        // minMembers: smaller gangs never reserve
  // preemptAfterSeconds (0 = off): a gang that holds a reservation, has waited this long
  // (since its quorum, as threshold_ns) and whose forecast start is still in the future
  // evicts the pods on its reserved nodes that keep it from starting now
  // (GangReservation's PodGroupPostFilter). Victims are never members of a gang of
  // >= min_members members.
  int64_t preempt_after_ns = 0;
  bool enabled() const { return threshold_ns > 0; }
  bool evicts() const { return enabled() && preempt_after_ns > 0; }
};

struct Reservation {
  std::string gang;                // the gang key ("ns/name") that holds it
  std::vector<std::string> gangs;  // every gang of its GangGroup (they see the nodes freely)
  std::vector<std::string> nodes;  // sorted
  api::Timestamp made = 0;
  api::Timestamp forecast_start = 0;
  api::Timestamp expires = 0;  // forecast_start + grace
  int32_t members = 0;         // members it was planned for
};

// Read-only view for the Filter hot path: the active reservations and, per node, which one
// holds it. Immutable once published (copy-on-write in the ReservationManager).
struct ReservationView {
  std::vector<Reservation> reservations;
  std::map<std::string, size_t, std::less<>> node_to_reservation;  // index into reservations
};

// The nodes as a forecast sees them: free room now and, per pod on a node whose end
// `end_of` knows, when it ends and what it gives back. Nodes without a Node object,
// unschedulable ones and those another reservation holds (`taken`, may be null) are left
// out. One builder for the reservation planner (end_of: ExpectedEnd, the pod's start or
// now) and `phalanx explain`'s forecast (the simulation's known starts and durations).
std::vector<NodeForecast> ForecastNodes(
    const std::vector<const framework::NodeInfo*>& nodes, const ReservationView* taken,
    const std::function<std::optional<api::Timestamp>(const api::Pod&)>& end_of);

enum class ReleaseCause { kBound, kGone, kExpired };

struct ReservationCounters {
  int64_t made = 0;
  int64_t released_bound = 0;  // the gang started
  int64_t released_gone = 0;   // the gang was deleted or can no longer use it
  int64_t expired = 0;         // not started within grace after the forecast start
  int64_t not_made = 0;        // a gang over the threshold for which PlanReservation failed
  // preemptAfterSeconds: evictions a starving gang started on its reserved nodes, and the
  // pods they evicted (whole jobs).
  int64_t evictions = 0;
  int64_t evicted_pods = 0;
};

// The active reservations of one scheduler. Thread-safe: written by the scheduling thread
// (plan, release, sweep), read by Filter workers (View) and reporters (Counters).
class ReservationManager {
 public:
  void Configure(const ReservationSettings& s) ABSL_LOCKS_EXCLUDED(mu_);
  ReservationSettings Settings() const ABSL_LOCKS_EXCLUDED(mu_);

  // The current view; nullptr when no reservation is active (the Filter's fast path).
  std::shared_ptr<const ReservationView> View() const ABSL_LOCKS_EXCLUDED(mu_);
  // The reservation held by `gang` (or by its GangGroup's gang), nullopt if none.
  std::optional<Reservation> HeldBy(const std::string& gang) const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether another reservation may be made now (fewer than max_reservations active).
  bool HasRoom() const ABSL_LOCKS_EXCLUDED(mu_);

  // Records `r` (expires = forecast_start + grace). False, nothing recorded, when the gang
  // already holds one, no room is left, or one of r.nodes is already reserved.
  bool Add(Reservation r) ABSL_LOCKS_EXCLUDED(mu_);
  // Releases the reservation that names `gang` among its gangs; nullopt when none.
  std::optional<Reservation> Release(const std::string& gang, ReleaseCause cause)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Releases every reservation whose expires < now (kExpired) or whose gang `gone` says
  // can no longer use it (kGone); returns them with their causes.
  std::vector<std::pair<Reservation, ReleaseCause>> Sweep(
      api::Timestamp now, const std::function<bool(const std::string& gang)>& gone)
      ABSL_LOCKS_EXCLUDED(mu_);
  // EASY backfill reserves for the head of the queue: the gang that has waited longest.
  // Records that `gang` (waiting since `since`, ns) is over the threshold, and returns
  // whether it is the longest-waiting such gang that `gone` does not rule out and that holds
  // no reservation yet (ties: the smaller key); gone gangs are forgotten. A gang is forgotten too
  // when its reservation is released as started or gone.
  bool TakeTurn(const std::string& gang, api::Timestamp since,
                const std::function<bool(const std::string& gang)>& gone) ABSL_LOCKS_EXCLUDED(mu_);
  // Counts a gang over the threshold that got no reservation (PlanReservation not ok).
  void CountNotMade() ABSL_LOCKS_EXCLUDED(mu_);
  // Counts one eviction for a starving gang that evicted `pods` pods (preemptAfterSeconds).
  void CountEviction(int64_t pods) ABSL_LOCKS_EXCLUDED(mu_);

  // Called (on the sweeping thread, without the manager's lock) after Sweep released a
  // reservation: its nodes are free for other pods again (the scheduler requeues the pods
  // GangReservation rejected). Set before the manager is shared.
  void SetOnReleased(std::function<void()> fn) { on_released_ = std::move(fn); }

  ReservationCounters Counters() const ABSL_LOCKS_EXCLUDED(mu_);
  // Every reservation made, in order (the first kHistoryLimit; reports and tests).
  static constexpr size_t kHistoryLimit = 1 << 16;
  std::vector<Reservation> History() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t ActiveCount() const ABSL_LOCKS_EXCLUDED(mu_);
  // The earliest `expires` of the active reservations (ns); INT64_MAX when none — a wake-up
  // time for the simulator's virtual clock (Scheduler::NextWakeTime).
  api::Timestamp NextExpiry() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void PublishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CountLocked(ReleaseCause c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  ReservationSettings settings_ ABSL_GUARDED_BY(mu_);
  std::vector<Reservation> active_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const ReservationView> view_ ABSL_GUARDED_BY(mu_);    // nullptr: none active
  std::map<std::string, api::Timestamp> waiting_ ABSL_GUARDED_BY(mu_);  // TakeTurn: gang -> since
  ReservationCounters counters_ ABSL_GUARDED_BY(mu_);
  std::vector<Reservation> history_ ABSL_GUARDED_BY(mu_);
  std::function<void()> on_released_;  // const once the manager is shared
};

// True when a reservation of gang `key` can no longer be used: the gang is gone, gated
// (fewer than minMember pods exist) or already satisfied (Sweep's and TakeTurn's `gone`).
bool ReservationGangGone(const PodGroupManager& gangs, const std::string& key);

// "2026-11-26T01:02:03Z" for a timestamp (ns since the epoch), for reasons and Events.
std::string FormatReservationTime(api::Timestamp t);

}  // namespace phalanx::gang
