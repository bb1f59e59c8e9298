#include "gang/reservation.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <set>

namespace phalanx::gang {

std::optional<int64_t> ExpectedRuntimeNs(const api::Pod& pod) {
  auto it = pod.metadata.annotations.find(std::string(kExpectedRuntimeAnnotation));
  if (it != pod.metadata.annotations.end()) {
    const std::string& s = it->second;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(v) && v > 0 && v < 1e10) {
      return static_cast<int64_t>(std::llround(v * 1e9));
    }
  }
  if (pod.spec.active_deadline_seconds && *pod.spec.active_deadline_seconds > 0) {
    return *pod.spec.active_deadline_seconds * api::kNanosPerSecond;
  }
  return std::nullopt;
}

std::optional<api::Timestamp> ExpectedEnd(const api::Pod& pod, api::Timestamp fallback_start) {
  auto rt = ExpectedRuntimeNs(pod);
  if (!rt) return std::nullopt;
  return (pod.status.start_time ? *pod.status.start_time : fallback_start) + *rt;
}

bool FitsIn(const api::Resource& r, const api::Resource& f) {
  if (r.milli_cpu > f.milli_cpu || r.memory > f.memory ||
      r.ephemeral_storage > f.ephemeral_storage || r.allowed_pod_number > f.allowed_pod_number) {
    return false;
  }
  for (const auto& [id, v] : r.scalar) {
    if (v > 0 && v > f.Scalar(id)) return false;
  }
  return true;
}

namespace {

// A scalar key for first-fit-decreasing: the largest scalar (GPUs first), then cpu, memory.
std::tuple<int64_t, int64_t, int64_t> SizeKey(const api::Resource& r) {
  int64_t scalar = 0;
  for (const auto& [id, v] : r.scalar) scalar = std::max(scalar, v);
  return {scalar, r.milli_cpu, r.memory};
}

// Each node's capacity free by time t, and when it last grew (its "free since" time).
struct NodeAt {
  size_t index;
  api::Resource free;
  api::Timestamp since;
};

std::vector<NodeAt> FreeAt(const std::vector<NodeForecast>& nodes, api::Timestamp t,
                           api::Timestamp now) {
  std::vector<NodeAt> out;
  out.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeAt n{i, nodes[i].free, now};
    for (const auto& [end, res] : nodes[i].releases) {
      if (end > t) continue;
      n.free.Add(res);
      n.since = std::max(n.since, end);
    }
    out.push_back(std::move(n));
  }
  std::stable_sort(out.begin(), out.end(), [&](const NodeAt& a, const NodeAt& b) {
    if (a.since != b.since) return a.since < b.since;
    return nodes[a.index].name < nodes[b.index].name;
  });
  return out;
}

// First-fit of `order` (indices into members) on `at`; the names of the nodes used, or
// nullopt when a member does not fit.
std::optional<std::set<std::string>> FirstFit(const std::vector<NodeForecast>& nodes,
                                              std::vector<NodeAt> at,
                                              const std::vector<api::Resource>& members,
                                              const std::vector<size_t>& order) {
  std::set<std::string> used;
  for (size_t m : order) {
    bool placed = false;
    for (auto& n : at) {
      if (!FitsIn(members[m], n.free)) continue;
      n.free.Subtract(members[m]);
      used.insert(nodes[n.index].name);
      placed = true;
      break;
    }
    if (!placed) return std::nullopt;
  }
  return used;
}

}  // namespace

ReservationPlan PlanReservation(const std::vector<NodeForecast>& nodes,
                                const std::vector<api::Resource>& members, api::Timestamp now) {
  ReservationPlan plan;
  if (members.empty()) {
    plan.why_not = "no member left to place";
    return plan;
  }
  std::vector<size_t> order(members.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return SizeKey(members[a]) > SizeKey(members[b]); });
  // The empty cluster first: a gang that never fits gets no reservation.
  std::vector<NodeForecast> empty = nodes;
  for (auto& n : empty) {
    n.free = n.allocatable;
    n.releases.clear();
  }
  if (!FirstFit(empty, FreeAt(empty, now, now), members, order)) {
    plan.why_not = "the gang does not fit even on the empty cluster";
    return plan;
  }
  std::vector<api::Timestamp> times = {now};
  for (const auto& n : nodes) {
    for (const auto& [end, res] : n.releases) times.push_back(std::max(end, now));
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  // Free room only grows with t, so feasibility is (nearly: first fit is a heuristic)
  // monotone in t: try now, then the last release time, then bisect between them —
  // O(log T) first-fit passes instead of T on clusters with many running pods.
  auto try_at = [&](size_t i) {
    return FirstFit(nodes, FreeAt(nodes, times[i], now), members, order);
  };
  auto found = [&](size_t i, std::set<std::string>&& used) {
    plan.ok = true;
    plan.nodes.assign(used.begin(), used.end());
    plan.forecast_start = times[i];
    return plan;
  };
  if (auto used = try_at(0)) return found(0, std::move(*used));
  auto last = times.size() > 1 ? try_at(times.size() - 1) : std::nullopt;
  if (last) {
    size_t lo = 0, hi = times.size() - 1;  // infeasible at lo, feasible at hi
    std::set<std::string> best = std::move(*last);
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      if (auto used = try_at(mid)) {
        hi = mid;
        best = std::move(*used);
      } else {
        lo = mid;
      }
    }
    return found(hi, std::move(best));
  }
  plan.why_not = "no forecast: the gang fits only once pods of unknown runtime end (set " +
                 std::string(kExpectedRuntimeAnnotation) + " or activeDeadlineSeconds)";
  return plan;
}

void ReservationManager::Configure(const ReservationSettings& s) {
  absl::MutexLock l(&mu_);
  settings_ = s;
}

ReservationSettings ReservationManager::Settings() const {
  absl::MutexLock l(&mu_);
  return settings_;
}

std::shared_ptr<const ReservationView> ReservationManager::View() const {
  absl::MutexLock l(&mu_);
  return view_;
}

std::optional<Reservation> ReservationManager::HeldBy(const std::string& gang) const {
  absl::MutexLock l(&mu_);
  for (const auto& r : active_) {
    if (std::find(r.gangs.begin(), r.gangs.end(), gang) != r.gangs.end()) return r;
  }
  return std::nullopt;
}

bool ReservationManager::HasRoom() const {
  absl::MutexLock l(&mu_);
  return static_cast<int64_t>(active_.size()) < settings_.max_reservations;
}

bool ReservationManager::Add(Reservation r) {
  absl::MutexLock l(&mu_);
  if (static_cast<int64_t>(active_.size()) >= settings_.max_reservations) return false;
  for (const auto& a : active_) {
    for (const auto& g : r.gangs) {
      if (std::find(a.gangs.begin(), a.gangs.end(), g) != a.gangs.end()) return false;
    }
    for (const auto& n : r.nodes) {
      if (std::binary_search(a.nodes.begin(), a.nodes.end(), n)) return false;
    }
  }
  if (std::find(r.gangs.begin(), r.gangs.end(), r.gang) == r.gangs.end()) r.gangs.push_back(r.gang);
  std::sort(r.nodes.begin(), r.nodes.end());
  r.expires = r.forecast_start + settings_.grace_ns;
  if (history_.size() < kHistoryLimit) history_.push_back(r);
  active_.push_back(std::move(r));
  ++counters_.made;
  PublishLocked();
  return true;
}

std::optional<Reservation> ReservationManager::Release(const std::string& gang,
                                                       ReleaseCause cause) {
  absl::MutexLock l(&mu_);
  for (size_t i = 0; i < active_.size(); ++i) {
    const auto& gs = active_[i].gangs;
    if (std::find(gs.begin(), gs.end(), gang) == gs.end()) continue;
    Reservation r = std::move(active_[i]);
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
    if (cause != ReleaseCause::kExpired) {
      for (const auto& g : r.gangs) waiting_.erase(g);
    }
    CountLocked(cause);
    PublishLocked();
    return r;
  }
  return std::nullopt;
}

std::vector<std::pair<Reservation, ReleaseCause>> ReservationManager::Sweep(
    api::Timestamp now, const std::function<bool(const std::string&)>& gone) {
  std::vector<Reservation> candidates;
  {
    absl::MutexLock l(&mu_);
    if (active_.empty()) return {};
    candidates = active_;
  }
  // `gone` reads the gang state (its own lock): called without ours.
  std::vector<std::pair<std::string, ReleaseCause>> drop;
  for (const auto& r : candidates) {
    if (gone && gone(r.gang)) {
      drop.emplace_back(r.gang, ReleaseCause::kGone);
    } else if (now > r.expires) {
      drop.emplace_back(r.gang, ReleaseCause::kExpired);
    }
  }
  std::vector<std::pair<Reservation, ReleaseCause>> out;
  for (const auto& [g, c] : drop) {
    if (auto r = Release(g, c)) out.emplace_back(std::move(*r), c);
  }
  if (!out.empty() && on_released_) on_released_();
  return out;
}

bool ReservationGangGone(const PodGroupManager& gangs, const std::string& key) {
  auto sum = gangs.SummaryOf(key);
  if (!sum || !sum->spec || sum->counts.pods == 0) return true;
  return sum->counts.pods < sum->spec->min_member || gangs.Satisfied(key);
}

std::vector<NodeForecast> ForecastNodes(
    const std::vector<const framework::NodeInfo*>& nodes, const ReservationView* taken,
    const std::function<std::optional<api::Timestamp>(const api::Pod&)>& end_of) {
  std::vector<NodeForecast> out;
  out.reserve(nodes.size());
  for (const framework::NodeInfo* ni : nodes) {
    if (!ni->node() || ni->unschedulable()) continue;
    if (taken && taken->node_to_reservation.count(ni->name())) continue;
    NodeForecast f;
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
      f.releases.emplace_back(*end, std::move(r));
    }
    out.push_back(std::move(f));
  }
  return out;
}

bool ReservationManager::TakeTurn(const std::string& gang, api::Timestamp since,
                                  const std::function<bool(const std::string&)>& gone) {
  std::map<std::string, api::Timestamp> waiting;
  {
    absl::MutexLock l(&mu_);
    waiting_[gang] = since;
    waiting = waiting_;
    // Gangs that already hold a reservation are not competing for the next one.
    for (const auto& r : active_) {
      for (const auto& g : r.gangs) waiting.erase(g);
    }
    waiting[gang] = since;
  }
  // `gone` reads the gang state (its own lock): called without ours.
  std::vector<std::string> drop;
  std::pair<api::Timestamp, std::string> head{since, gang};
  for (const auto& [g, t] : waiting) {
    if (g == gang) continue;
    if (gone && gone(g)) {
      drop.push_back(g);
    } else {
      head = std::min(head, std::make_pair(t, g));
    }
  }
  absl::MutexLock l(&mu_);
  for (const auto& g : drop) waiting_.erase(g);
  return head.second == gang;
}

void ReservationManager::CountNotMade() {
  absl::MutexLock l(&mu_);
  ++counters_.not_made;
}

void ReservationManager::CountEviction(int64_t pods) {
  absl::MutexLock l(&mu_);
  ++counters_.evictions;
  counters_.evicted_pods += pods;
}

ReservationCounters ReservationManager::Counters() const {
  absl::MutexLock l(&mu_);
  return counters_;
}

std::vector<Reservation> ReservationManager::History() const {
  absl::MutexLock l(&mu_);
  return history_;
}

size_t ReservationManager::ActiveCount() const {
  absl::MutexLock l(&mu_);
  return active_.size();
}

api::Timestamp ReservationManager::NextExpiry() const {
  absl::MutexLock l(&mu_);
  api::Timestamp t = INT64_MAX;
  // Sweep releases once now > expires: wake just after.
  for (const auto& r : active_) t = std::min(t, r.expires + 1);
  return t;
}

void ReservationManager::PublishLocked() {
  if (active_.empty()) {
    view_ = nullptr;
    return;
  }
  auto v = std::make_shared<ReservationView>();
  v->reservations = active_;
  for (size_t i = 0; i < active_.size(); ++i) {
    for (const auto& n : active_[i].nodes) v->node_to_reservation.emplace(n, i);
  }
  view_ = std::move(v);
}

void ReservationManager::CountLocked(ReleaseCause c) {
  switch (c) {
    case ReleaseCause::kBound:
      ++counters_.released_bound;
      break;
    case ReleaseCause::kGone:
      ++counters_.released_gone;
      break;
    case ReleaseCause::kExpired:
      ++counters_.expired;
      break;
  }
}

std::string FormatReservationTime(api::Timestamp t) {
  const std::time_t secs = static_cast<std::time_t>(t / api::kNanosPerSecond);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace phalanx::gang
