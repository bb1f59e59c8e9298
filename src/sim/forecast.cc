#include "sim/forecast.h"

#include <cmath>

#include "gang/reservation.h"

namespace phalanx::sim {

StartForecast ForecastStart(const std::vector<const framework::NodeInfo*>& nodes,
                            std::vector<api::Resource> members, const ExpectedEndFn& end_of,
                            api::Timestamp now) {
  // The nodes as the reservation planner builds them (gang::ForecastNodes), with the
  // simulation's knowledge of when pods started; an end already past frees now.
  const std::vector<gang::NodeForecast> fc =
      gang::ForecastNodes(nodes, nullptr, [&](const api::Pod& p) -> std::optional<api::Timestamp> {
        auto end = end_of(p);
        if (!end) return std::nullopt;
        return std::max(*end, now);
      });
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
