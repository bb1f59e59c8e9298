// Per-gang figures of a simulation (issue "gang metrics"): for every gang the run saw,
// whether it started whole, how long it waited from quorum (minMember pods existed) to
// running (minMember bound), and how many PodGroup cycles / Permit rounds it took.
#pragma once

#include <string>
#include <vector>

namespace phalanx::gang {
class DefaultPodGroupManager;
}

namespace phalanx::sim {

struct GangOutcome {
  std::string key;
  int min_member = 0;
  int pods = 0;                     // members that existed at the end
  int bound = 0;                    // members bound at the end
  bool started = false;             // reached minMember bound at some point
  double quorum_to_running_s = -1;  // -1 when it never started
  int attempts = 0;
  std::string last_reason;
};

struct GangSummary {
  size_t gangs = 0, started = 0, never_started = 0;
  double wait_mean_s = 0, wait_p50_s = 0, wait_max_s = 0;  // quorum -> running, started gangs
  int attempts_total = 0;
  std::vector<GangOutcome> outcomes;  // sorted by key
};

GangSummary CollectGangOutcomes(const gang::DefaultPodGroupManager& gangs);
// Lines for the terminal summary; empty when the run had no gangs.
std::string FormatGangSummary(const GangSummary& s);

}  // namespace phalanx::sim
