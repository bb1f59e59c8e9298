#include "gang/staleness.h"

#include <algorithm>
#include <climits>
#include <set>

#include "gang/subgroups.h"

namespace phalanx::gang {

api::Status StaleReason(const GangInfo& g) {
  if (!g.counts.satisfied_once || g.counts.succeeded > 0 || !g.spec || !g.spec->invalid.empty()) {
    return absl::OkStatus();
  }
  const int32_t active = g.counts.assumed + g.counts.bound;
  if (active == 0) return absl::OkStatus();
  if (active < g.spec->min_member) {
    return absl::FailedPreconditionError(
        std::to_string(active) + " of " + std::to_string(g.counts.pods) +
        " members running (minMember " + std::to_string(g.spec->min_member) + ")");
  }
  return ShortSubGroup(*g.spec, g.sub_group_active, "running");
}

void StaleGangTracker::SetDefaultGrace(std::optional<int64_t> grace_ns) {
  absl::MutexLock l(&mu_);
  default_grace_ns_ = grace_ns;
}

int64_t StaleGangTracker::GraceLocked(const GangInfo& g) const {
  if (g.spec && g.spec->staleness_grace_ns) return *g.spec->staleness_grace_ns;
  if (default_grace_ns_) return *default_grace_ns_;
  return g.spec && g.spec->dialect == Dialect::kKAI ? kKaiDefaultStalenessGraceNs : -1;
}

int64_t StaleGangTracker::GraceOf(const GangInfo& g) const {
  absl::MutexLock l(&mu_);
  return GraceLocked(g);
}

std::vector<StaleGangTracker::Action> StaleGangTracker::Check(
    const PodGroupManager& ledger, const std::vector<std::string>& candidates, api::Timestamp now) {
  std::vector<Action> out;
  absl::MutexLock l(&mu_);
  std::set<std::string> keys(candidates.begin(), candidates.end());
  for (const auto& [key, spell] : stale_) keys.insert(key);
  for (const auto& key : keys) {
    auto info = ledger.Info(key);
    if (!info) {
      stale_.erase(key);
      continue;
    }
    const api::Status stale = StaleReason(*info);
    auto it = stale_.find(key);
    if (stale.ok()) {
      if (it != stale_.end()) {
        // Whole again (a replacement bound), or no member left running (evicted, ended).
        const int32_t active = info->counts.assumed + info->counts.bound;
        if (active > 0 && info->spec && active >= info->spec->min_member) {
          out.push_back({Action::Kind::kRecovered, key, "gang " + key + " is whole again", {}});
        }
        stale_.erase(it);
      }
      continue;
    }
    if (it == stale_.end()) {
      Spell s{now, GraceLocked(*info), false};
      std::string next = s.grace_ns < 0
                             ? "waiting to be made whole (stale-gang eviction is off for it)"
                             : "its running members are evicted in " +
                                   std::to_string(s.grace_ns / api::kNanosPerSecond) +
                                   " s unless it is made whole";
      out.push_back({Action::Kind::kStale,
                     key,
                     "gang " + key + " is stale: " + std::string(stale.message()) + "; " + next,
                     {}});
      it = stale_.emplace(key, s).first;
    }
    Spell& s = it->second;
    if (s.evicted || s.grace_ns < 0 || now - s.since < s.grace_ns) continue;
    Action a{Action::Kind::kEvict,
             key,
             "Evicted: gang " + key + " stayed below its minimum for " +
                 std::to_string((now - s.since) / api::kNanosPerSecond) + " s (" +
                 std::string(stale.message()) + ")",
             {}};
    for (size_t i = 0; i < info->member_pods.size(); ++i) {
      if (i < info->member_active.size() && info->member_active[i]) {
        a.pods.push_back(info->member_pods[i]);
      }
    }
    s.evicted = true;
    out.push_back(std::move(a));
  }
  return out;
}

api::Timestamp StaleGangTracker::NextDeadline() const {
  absl::MutexLock l(&mu_);
  api::Timestamp t = INT64_MAX;
  for (const auto& [key, s] : stale_) {
    if (!s.evicted && s.grace_ns >= 0) t = std::min(t, s.since + s.grace_ns);
  }
  return t;
}

}  // namespace phalanx::gang
