#include "sim/forecast.h"

#include <cmath>

#include "gang/reservation.h"

namespace phalanx::sim {

StartForecast ForecastStart(const std::vector<const framework::NodeInfo*>& nodes,
                            std::vector<api::Resource> members, const ExpectedEndFn& end_of,
                            api::Timestamp now) {
  // As the scheduler's reservation planner (src/scheduler/reservation_planner.cc
  // ForecastNodes), with the simulation's knowledge of when pods started.
  std::vector<gang::NodeForecast> fc;
  fc.reserve(nodes.size());
  for (const framework::NodeInfo* ni : nodes) {
    if (!ni->node() || ni->unschedulable()) continue;
    gang::NodeForecast f;
    f.name = ni->name();
    f.allocatable = ni->allocatable();
    f.free = ni->allocatable();
    f.free.Subtract(ni->requested());
    f.free.allowed_pod_number =
        ni->allocatable().allowed_pod_number - static_cast<int64_t>(ni->pods().size());
    for (const auto& p : ni->pods()) {
      auto end = end_of(p->Pod());
      if (!end) continue;
      api::Resource r = p->requests;
      r.allowed_pod_number = 1;
      f.releases.emplace_back(std::max(*end, now), std::move(r));
    }
    fc.push_back(std::move(f));
  }
  for (auto& m : members) m.allowed_pod_number = 1;
  const gang::ReservationPlan plan = gang::PlanReservation(fc, members, now);
  StartForecast out;
  out.ok = plan.ok;
  out.why_not = plan.why_not;
  out.nodes = plan.nodes;
  out.start_s = static_cast<double>(plan.forecast_start) / 1e9;
  return out;
}

namespace {
std::string KeyOf(const api::Pod& p) {
  return (p.metadata.namespace_.empty() ? "default" : p.metadata.namespace_) + "/" +
         p.metadata.name;
}
}  // namespace

ExpectedEnds::ExpectedEnds(const Scenario& sc) : sc_(sc), bound_(sc.pods.size()) {
  index_.reserve(sc.pods.size());
  for (size_t i = 0; i < sc.pods.size(); ++i) index_[KeyOf(sc.pods[i].pod)] = i;
}

void ExpectedEnds::OnBound(size_t i, double t) {
  if (i < bound_.size()) bound_[i] = static_cast<api::Timestamp>(std::llround(t * 1e9));
}

std::optional<api::Timestamp> ExpectedEnds::EndOf(const api::Pod& pod) const {
  auto it = index_.find(KeyOf(pod));
  const TimedPod* tp = it == index_.end() ? nullptr : &sc_.pods[it->second];
  const std::optional<api::Timestamp> start =
      it == index_.end() ? pod.status.start_time : bound_[it->second];
  if (start) {
    if (auto rt = gang::ExpectedRuntimeNs(pod)) return *start + *rt;
    if (tp && tp->run_duration_ns) return *start + *tp->run_duration_ns;
  }
  if (tp && tp->deletion) return *tp->deletion;
  return std::nullopt;
}

}  // namespace phalanx::sim
