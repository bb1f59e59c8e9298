#include "sim/gang_report.h"

#include <algorithm>
#include <sstream>

#include "gang/default_podgroup_manager.h"

namespace phalanx::sim {

GangSummary CollectGangOutcomes(const gang::DefaultPodGroupManager& gangs) {
  GangSummary s;
  std::vector<double> waits;
  for (const auto& key : gangs.GangKeys()) {
    auto info = gangs.Info(key);
    if (!info) continue;
    GangOutcome o;
    o.key = key;
    o.min_member = info->spec ? info->spec->min_member : 0;
    o.pods = info->counts.pods;
    o.bound = info->counts.bound;
    o.started = info->running;
    if (o.started && info->has_quorum) {
      o.quorum_to_running_s = static_cast<double>(info->running_time - info->quorum_time) / 1e9;
      waits.push_back(o.quorum_to_running_s);
    }
    o.attempts = info->attempts;
    o.last_reason = info->last_reason;
    s.attempts_total += o.attempts;
    ++s.gangs;
    if (o.started) {
      ++s.started;
    } else {
      ++s.never_started;
    }
    s.outcomes.push_back(std::move(o));
  }
  if (!waits.empty()) {
    std::sort(waits.begin(), waits.end());
    double sum = 0;
    for (double w : waits) sum += w;
    s.wait_mean_s = sum / static_cast<double>(waits.size());
    s.wait_p50_s = waits[waits.size() / 2];
    s.wait_max_s = waits.back();
  }
  return s;
}

std::string FormatGangSummary(const GangSummary& s) {
  if (s.gangs == 0) return "";
  std::ostringstream o;
  o << "gangs: " << s.gangs << "  started whole: " << s.started
    << "  never started: " << s.never_started << "  PodGroup attempts: " << s.attempts_total
    << "\n";
  if (s.started > 0) {
    o << "  quorum -> running (s): mean " << s.wait_mean_s << "  p50 " << s.wait_p50_s << "  max "
      << s.wait_max_s << "\n";
  }
  return o.str();
}

}  // namespace phalanx::sim
