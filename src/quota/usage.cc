#include "quota/usage.h"

#include <algorithm>
#include <cmath>

namespace phalanx::quota {

namespace {
constexpr int64_t kBuckets = 64;
}  // namespace

UsageTracker::UsageTracker(UsageParams p) : p_(p) {
  if (p_.window_ns < kBuckets) p_.window_ns = kBuckets;
}

int64_t UsageTracker::Width() const { return p_.window_ns / kBuckets; }

int64_t UsageTracker::Epoch(api::Timestamp now) const { return now / Width(); }

void UsageTracker::Accrue(api::Timestamp now, const std::map<std::string, ResourceList>& allocated,
                          const ResourceList& capacity) {
  if (last_ < 0 || now <= last_) {
    last_ = std::max(last_, now);
    return;
  }
  const int64_t w = Width();
  api::Timestamp t = last_;
  while (t < now) {
    const api::Timestamp start = t - t % w;
    const api::Timestamp end = std::min<api::Timestamp>(now, start + w);
    const double secs = static_cast<double>(end - t) / static_cast<double>(api::kNanosPerSecond);
    if (buckets_.empty() || buckets_.back().start != start)
      buckets_.push_back(Bucket{start, {}, {}});
    Bucket& b = buckets_.back();
    for (const auto& [q, list] : allocated) {
      for (const auto& [r, a] : list) {
        if (a > 0) b.used[q][r] += static_cast<double>(a) * secs;
      }
    }
    for (const auto& [r, c] : capacity) {
      if (c > 0) b.capacity[r] += static_cast<double>(c) * secs;
    }
    t = end;
  }
  last_ = now;
  Prune(now);
}

void UsageTracker::Prune(api::Timestamp now) {
  const api::Timestamp from = p_.tumbling ? now - now % p_.window_ns : now - p_.window_ns - Width();
  while (!buckets_.empty() && buckets_.front().start + Width() <= from) buckets_.pop_front();
}

NormalizedUsage UsageTracker::Normalized(api::Timestamp now) const {
  NormalizedUsage out;
  const int64_t w = Width();
  const api::Timestamp from = p_.tumbling ? now - now % p_.window_ns : now - p_.window_ns;
  std::map<std::string, std::map<std::string, double>> used;
  std::map<std::string, double> cap;
  for (const Bucket& b : buckets_) {
    const api::Timestamp end = b.start + w;
    if (end <= from || b.start >= now) continue;
    // A bucket cut by the window's start counts in proportion to its part inside.
    double part = 1.0;
    if (b.start < from) part = static_cast<double>(end - from) / static_cast<double>(w);
    double decay = 1.0;
    if (p_.half_life_ns > 0) {
      const double age = static_cast<double>(now - (b.start + w / 2));
      decay = std::pow(0.5, std::max(0.0, age) / static_cast<double>(p_.half_life_ns));
    }
    const double f = part * decay;
    for (const auto& [q, list] : b.used) {
      for (const auto& [r, s] : list) used[q][r] += s * f;
    }
    for (const auto& [r, s] : b.capacity) cap[r] += s * f;
  }
  for (const auto& [q, list] : used) {
    for (const auto& [r, s] : list) {
      auto c = cap.find(r);
      if (c != cap.end() && c->second > 0) out[q][r] = s / c->second;
    }
  }
  return out;
}

}  // namespace phalanx::quota
