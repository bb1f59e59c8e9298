// Historical usage of queues for time-based fair share (KAI-Scheduler "time based
// fairshare", docs/time-based-fairshare/README.md; the weight formula in
// pkg/scheduler/plugins/proportion/resource_division/resource_division.go calcShareWeights).
//
// KAI reads each queue's allocation history from Prometheus; Phalanx integrates the
// allocation it accounts itself (quota::QueueManager) over time, on the scheduler's clock
// (virtual in `phalanx simulate`, wall in `phalanx run`). Per queue and resource the
// allocation-seconds are kept in buckets of window/64; a queue's usage at time t is
//   U = Σ_buckets allocated·seconds · 0.5^((t - bucket middle) / halfLife)
// over the buckets inside the window (sliding: the last `window`; tumbling: since the last
// multiple of `window`), halfLife 0 = no decay, and it is normalized to the cluster's
// capacity over the same buckets with the same decay ("a queue which consumed 24 GPU hours
// of a potential 100 gets 0.24"). Usage kept in memory only: a restart starts from zero.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "api/types.h"
#include "quota/queue_tree.h"

namespace phalanx::quota {

// QueuesArgs.timeBasedFairShare (KAI SchedulingShard usageDBConfig.usageParams and the
// proportion plugin's kValue). Durations in ns.
struct UsageParams {
  int64_t window_ns = 7 * 24 * 3600 * api::kNanosPerSecond;  // KAI windowSize default 1w
  bool tumbling = false;                                     // KAI windowType, default sliding
  int64_t half_life_ns = 0;                                  // KAI halfLifePeriod, 0 = off
  double k_value = 1.0;                                      // KAI kValue, default 1.0
};

// Queue -> resource -> normalized usage in [0, 1] (0 for a resource without capacity).
using NormalizedUsage = std::map<std::string, std::map<std::string, double>>;

class UsageTracker {
 public:
  explicit UsageTracker(UsageParams p);
  const UsageParams& params() const { return p_; }

  // Adds the allocation held since the previous call (or since `now` on the first call) up
  // to `now` (ns): `allocated` per queue (subtree sums, as QueueManager keeps them) and the
  // cluster `capacity`. Call it before the allocation or capacity changes. A `now` earlier
  // than the previous call adds nothing.
  void Accrue(api::Timestamp now, const std::map<std::string, ResourceList>& allocated,
              const ResourceList& capacity);
  // Normalized usage of every queue that used something inside the window at `now`.
  NormalizedUsage Normalized(api::Timestamp now) const;
  // The bucket index of `now` (changes when the window moves by a bucket): callers that
  // cache results derived from Normalized refresh them when it changes.
  int64_t Epoch(api::Timestamp now) const;

 private:
  struct Bucket {
    api::Timestamp start = 0;
    std::map<std::string, std::map<std::string, double>> used;  // queue -> resource -> s
    std::map<std::string, double> capacity;                     // resource -> s
  };
  int64_t Width() const;
  void Prune(api::Timestamp now);

  UsageParams p_;
  std::deque<Bucket> buckets_;  // oldest first, by start
  api::Timestamp last_ = -1;
};

}  // namespace phalanx::quota
