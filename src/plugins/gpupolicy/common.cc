#include "plugins/gpupolicy/common.h"

#include <yaml-cpp/yaml.h>

#include "plugins/helper/args.h"
#include "plugins/helper/validation.h"

namespace phalanx::plugins::gpupolicy {

framework::StatusOr<PolicyArgs> ParsePolicyArgs(framework::PluginArgs args, std::string_view kind,
                                                bool with_target_workload) {
  PolicyArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  const bool ok =
      with_target_workload
          ? helper::CheckArgsMap(args, kind, {"tieBreak", "targetWorkload"}, &errs, &has_content)
          : helper::CheckArgsMap(args, kind, {"tieBreak"}, &errs, &has_content);
  if (!ok) return helper::ArgsError(errs, kind);
  if (has_content) {
    std::string tb;
    helper::ReadString((*args)["tieBreak"], "tieBreak", &tb, &errs);
    if (tb.empty() || tb == "Random") {
      out.tie_break = TieBreak::kRandom;
    } else if (tb == "NodeOrder") {
      out.tie_break = TieBreak::kNodeOrder;
    } else {
      errs.NotSupported("tieBreak", tb, {"Random", "NodeOrder"});
    }
  }
  if (!errs.empty()) return helper::ArgsError(errs, kind);
  return out;
}

namespace {
uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t Fnv(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}
}  // namespace

uint64_t NodeOrderKey(uint64_t salt, std::string_view node_name) {
  return Mix(salt ^ Fnv(node_name));
}

void NodeOrderTieBreak::Apply(framework::Handle& h,
                              const std::vector<const framework::NodeInfo*>& nodes,
                              std::vector<int64_t>& scores) {
  if (scores.empty() || scores.size() != nodes.size()) return;
  if (!have_salt_) {
    salt_ = h.Random(UINT64_MAX);
    have_salt_ = true;
  }
  const int64_t best = *std::max_element(scores.begin(), scores.end());
  size_t winner = scores.size();
  uint64_t winner_key = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] != best) continue;
    const uint64_t key = NodeOrderKey(salt_, nodes[i]->name());
    if (winner == scores.size() || key < winner_key) {
      winner = i;
      winner_key = key;
    }
  }
  if (best < framework::kMaxNodeScore) {
    scores[winner] = best + 1;
    return;
  }
  for (size_t i = 0; i < scores.size(); ++i) {
    if (i != winner && scores[i] == best) scores[i] = best - 1;
  }
}

}  // namespace phalanx::plugins::gpupolicy
