// Stale gangs: a running gang that fell below its minimum (a member lost: its node failed,
// it was deleted or evicted) is reported, and after a grace period its remaining members
// are evicted, or the gang waits to be made whole — the user's choice. The reference is
// KAI's stale-gang eviction (pkg/scheduler/actions/stalegangeviction and
// PodGroupInfo.IsStale in pkg/scheduler/api/podgroup_info):
//  - stale: the gang ran (minMember were assumed or bound at some point), no member ended
//    Succeeded, at least one member is still assumed or bound, and fewer than minMember
//    are (or a subgroup is short of its own minMember);
//  - the grace period is the gang's own (KAI PodGroup annotation
//    kai.scheduler/staleness-grace-period, a Go duration), else the scheduler's default;
//    a negative grace never evicts (the gang waits to be made whole), 0 evicts at once;
//  - KAI's default is 60 s. Phalanx applies it to KAI gangs; other dialects (Coscheduling,
//    Volcano, Koordinator, the Workload API) have no stale-gang eviction of their own, so
//    by default their stale gangs are reported and wait. GangSchedulingArgs
//    staleGangGracePeriodSeconds sets one default for every dialect.
// A gang that is whole again (a replacement member bound) is no longer stale; its clock
// starts anew if it falls short again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "api/types.h"
#include "gang/podgroup_manager.h"

namespace phalanx::gang {

// KAI's default grace (schedulerParams.GlobalDefaultStalenessGracePeriod: 60 s).
inline constexpr int64_t kKaiDefaultStalenessGraceNs = 60LL * api::kNanosPerSecond;

// OK when `g` is not stale (rules above); else FailedPrecondition saying why, e.g. "1 of 2
// members running (minMember 2)" or `subgroup "decode": 1/2 members running`.
api::Status StaleReason(const GangInfo& g);

class StaleGangTracker {
 public:
  // The default grace for every dialect (ns; negative: never evict); unset: KAI gangs
  // kKaiDefaultStalenessGraceNs, the others never.
  void SetDefaultGrace(std::optional<int64_t> grace_ns) ABSL_LOCKS_EXCLUDED(mu_);

  struct Action {
    enum class Kind {
      kStale,      // became stale: report (message says what happens next)
      kEvict,      // stale for its grace: evict `pods` (the members still assumed or bound)
      kRecovered,  // whole again
    };
    Kind kind = Kind::kStale;
    std::string gang;               // gang key
    std::string message;            // for the event
    std::vector<std::string> pods;  // kEvict: pod keys (namespace/name)
  };
  // Checks, at `now`, the gangs `candidates` of `ledger` (those that may have become stale,
  // e.g. DefaultPodGroupManager::TakeRunningLosses) and every gang already stale; returns what to
  // do, in key order. A gang is evicted once per stale spell; a gang the ledger no longer knows
  // ends its spell silently.
  std::vector<Action> Check(const PodGroupManager& ledger,
                            const std::vector<std::string>& candidates, api::Timestamp now)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The earliest time a stale gang's grace ends (INT64_MAX: none pending).
  api::Timestamp NextDeadline() const ABSL_LOCKS_EXCLUDED(mu_);
  // The grace that applies to `g` (ns; negative: never).
  int64_t GraceOf(const GangInfo& g) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Spell {
    api::Timestamp since = 0;
    int64_t grace_ns = -1;
    bool evicted = false;
  };
  int64_t GraceLocked(const GangInfo& g) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::optional<int64_t> default_grace_ns_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Spell> stale_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::gang
