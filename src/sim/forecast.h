// When will a pending pod or gang start? (`phalanx explain`'s forecast, and its
// accuracy on a trace.) The forecast is EASY backfill's shadow time (gang/reservation.h
// PlanReservation, the same computation the GangReservation plugin's reservations use):
// the earliest time at which the members' requests fit on the capacity that is free now
// plus what running pods give back at their expected ends. It looks at resources only (no
// Filter plugin, no queue order: pods ahead in the queue may take the room first), so it
// is a lower bound for a pod that fits only on freed room.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/resource.h"
#include "api/types.h"
#include "framework/types.h"
#include "sim/scenario.h"

namespace phalanx::sim {

// A running pod's expected end (virtual ns), nullopt when unknown (it never frees).
using ExpectedEndFn = std::function<std::optional<api::Timestamp>(const api::Pod&)>;

struct StartForecast {
  bool ok = false;
  double start_s = 0;              // virtual seconds; == now when the members fit now
  std::vector<std::string> nodes;  // the nodes that free first for them, sorted
  std::string why_not;             // !ok: e.g. "fits only after pods of unknown runtime end"
};

// The forecast for `members` (one request per member still to place; allowed_pod_number is
// set to 1 here) over `nodes` (a snapshot's nodes; unschedulable ones are left out) at
// `now` (virtual ns). Pods on the nodes free their requests at end_of(pod).
StartForecast ForecastStart(const std::vector<const framework::NodeInfo*>& nodes,
                            std::vector<api::Resource> members, const ExpectedEndFn& end_of,
                            api::Timestamp now);

// Expected ends of the pods of one simulation run, from what is known when the forecast is
// made (never the future of the run): the pod's start (when it was bound, reported through
// OnBound) plus its expected runtime — the scheduling.phalanx.dev/expected-runtime-seconds
// annotation or spec.activeDeadlineSeconds (gang::ExpectedRuntimeNs, as the
// GangReservation plugin reads them) — else the scenario's own duration of the pod
// (simulation.phalanx.dev/duration-seconds, a trace's duration) or its absolute deletion
// time. Unknown otherwise.
class ExpectedEnds {
 public:
  explicit ExpectedEnds(const Scenario& sc);
  // Pod `i` (index in Scenario::pods) was bound at virtual second `t`.
  void OnBound(size_t i, double t);
  std::optional<api::Timestamp> EndOf(const api::Pod& pod) const;
  ExpectedEndFn Fn() const {
    return [this](const api::Pod& p) { return EndOf(p); };
  }

 private:
  const Scenario& sc_;
  std::unordered_map<std::string, size_t> index_;  // "ns/name" -> Scenario::pods index
  std::vector<std::optional<api::Timestamp>> bound_;
};

}  // namespace phalanx::sim
