#include "plugins/gangreservation/gang_reservation.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <utility>

#include "plugins/helper/args.h"

namespace phalanx::plugins::gangreservation {

using framework::Status;

namespace {

constexpr std::string_view kStateKey = "PreFilterGangReservation";

// The reserved nodes barred to this pod, each with the reason naming its reservation.
struct BarredNodes final : framework::StateData {
  std::shared_ptr<const gang::ReservationView> view;
  std::vector<std::string> reasons;  // per reservation index; "" = the pod may use it
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<BarredNodes>(*this);
  }
};

}  // namespace

framework::StatusOr<std::unique_ptr<framework::Plugin>> GangReservation::New(
    framework::PluginArgs args, framework::Handle& h) {
  gang::ReservationSettings s;
  s.threshold_ns = 300 * api::kNanosPerSecond;
  // Unknown fields are errors, as upstream's strict decoding.
  auto seconds = [](int64_t v) {
    return std::min<int64_t>(v, int64_t{1} << 32) * api::kNanosPerSecond;
  };
  auto count = [](int64_t v) { return static_cast<int32_t>(std::min<int64_t>(v, 1 << 20)); };
  const Status st = helper::ReadIntArgs(
      args, "GangReservationArgs",
      {{"reservationThresholdSeconds", 0, [&](int64_t v) { s.threshold_ns = seconds(v); }},
       {"reservationGraceSeconds", 0, [&](int64_t v) { s.grace_ns = seconds(v); }},
       {"maxReservations", 1, [&](int64_t v) { s.max_reservations = count(v); }},
       {"preemptAfterSeconds", 0, [&](int64_t v) { s.preempt_after_ns = seconds(v); }},
       {"minMembers", 1, [&](int64_t v) { s.min_members = count(v); }}});
  if (!st.IsSuccess()) return st;
  auto* ledger = h.Service<gang::ReservationManager>();
  if (ledger) ledger->Configure(s);
  return std::unique_ptr<framework::Plugin>(new GangReservation(h, ledger));
}

Status GangReservation::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                  framework::PreFilterResult*) {
  if (!ledger_) return Status(framework::Code::kSkip);
  auto view = ledger_->View();
  if (!view) return Status(framework::Code::kSkip);
  std::shared_ptr<const gang::GangRef> ref = gangs_ ? gangs_->RefPtrOf(pod.Pod()) : nullptr;
  const auto runtime = gang::ExpectedRuntimeNs(pod.Pod());
  const api::Timestamp now = handle_.GetClock().Now();
  auto barred = std::make_unique<BarredNodes>();
  bool any = false;
  for (const auto& r : view->reservations) {
    std::string reason;
    const bool own = ref && std::find(r.gangs.begin(), r.gangs.end(), ref->key) != r.gangs.end();
    if (!own && (!runtime || now + *runtime > r.forecast_start)) {
      reason = "node(s) reserved for gang " + r.gang + " from " +
               gang::FormatReservationTime(r.forecast_start) +
               " (backfill only for pods ending before it)";
      any = true;
    }
    barred->reasons.push_back(std::move(reason));
  }
  if (!any) return Status(framework::Code::kSkip);
  barred->view = std::move(view);
  state.Write(kStateKey, std::move(barred));
  return Status::Success();
}

Status GangReservation::Filter(const framework::CycleState& state, const framework::PodInfo&,
                               const framework::NodeInfo& node) {
  const auto* barred = state.ReadAs<BarredNodes>(kStateKey);
  if (!barred) return Status::Success();
  auto it = barred->view->node_to_reservation.find(node.name());
  if (it == barred->view->node_to_reservation.end()) return Status::Success();
  const std::string& reason = barred->reasons[it->second];
  if (reason.empty()) return Status::Success();
  return Status::UnschedulableAndUnresolvable(reason);
}

bool GangReservation::SameSignature(const framework::PodInfo& canonical,
                                    const framework::PodInfo& pod) const {
  // Without a reservation (fixed for the whole PodGroup cycle) every pod passes.
  if (!ledger_ || !ledger_->View()) return true;
  if (gang::ExpectedRuntimeNs(canonical.Pod()) != gang::ExpectedRuntimeNs(pod.Pod())) return false;
  if (!gangs_) return true;
  auto a = gangs_->RefPtrOf(canonical.Pod());
  auto b = gangs_->RefPtrOf(pod.Pod());
  if (!a || !b) return !a && !b;
  return a->key == b->key;
}

std::vector<framework::ClusterEventWithHint> GangReservation::EventsToRegister() const {
  return {
      {{framework::EventResource::kAssignedPod, framework::kAdd | framework::kDelete,
        "AssignedPodAddOrDelete"},
       nullptr},
  };
}

}  // namespace phalanx::plugins::gangreservation
