#include "plugins/noderesources/balanced_allocation.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "plugins/helper/args.h"

namespace phalanx::plugins::noderesources {

namespace {

constexpr std::string_view kArgsKind = "NodeResourcesBalancedAllocationArgs";

struct PreScoreState final : framework::StateData {
  std::vector<int64_t> pod_requests;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

bool IsBestEffort(const int64_t* reqs, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (reqs[i] != 0) return false;
  }
  return true;
}

}  // namespace

framework::StatusOr<NodeResourcesBalancedAllocationArgs> ParseNodeResourcesBalancedAllocationArgs(
    framework::PluginArgs args) {
  NodeResourcesBalancedAllocationArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind, {"resources"}, &errs, &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  std::vector<ResourceSpec> res;
  if (has_content) {
    const YAML::Node n = (*args)["resources"];
    if (n.IsDefined() && !n.IsNull()) {
      if (!n.IsSequence()) {
        errs.TypeInvalid("resources", "must be a list");
      } else {
        for (size_t i = 0; i < n.size(); ++i) {
          const std::string p = "resources[" + std::to_string(i) + "]";
          ResourceSpec r;
          r.weight = 0;
          if (helper::CheckMap(n[i], p, {"name", "weight"}, &errs)) {
            helper::ReadString(n[i]["name"], p + ".name", &r.name, &errs);
            helper::ReadInt(n[i]["weight"], p + ".weight", &r.weight, &errs);
          }
          res.push_back(std::move(r));
        }
      }
    }
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  // SetDefaults_NodeResourcesBalancedAllocationArgs.
  if (!res.empty()) {
    for (auto& r : res) {
      if (r.weight == 0) r.weight = 1;
    }
    out.resources = std::move(res);
  }
  // ValidateNodeResourcesBalancedAllocationArgs.
  std::set<std::string> seen;
  for (size_t i = 0; i < out.resources.size(); ++i) {
    const auto& r = out.resources[i];
    const std::string p = "resources[" + std::to_string(i) + "]";
    if (!seen.insert(r.name).second) errs.Duplicate(p + ".name", r.name);
    if (r.weight != 1) errs.Invalid(p + ".weight", r.weight, "must be 1");
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  return out;
}

BalancedAllocation::BalancedAllocation(NodeResourcesBalancedAllocationArgs args)
    : args_(std::move(args)), allocation_(args_.resources, /*use_requested=*/true) {}

framework::Status BalancedAllocation::PreScore(framework::CycleState& state,
                                               const framework::PodInfo& pod,
                                               const std::vector<const framework::NodeInfo*>&) {
  auto s = std::make_unique<PreScoreState>();
  s->pod_requests.resize(allocation_.size());
  allocation_.PodRequests(pod, s->pod_requests.data());
  // Scoring best-effort pods would stack them on the same node (kubernetes#129138).
  if (IsBestEffort(s->pod_requests.data(), s->pod_requests.size())) {
    return framework::Status(framework::Code::kSkip);
  }
  state.Write(kPreScoreStateKey, std::move(s));
  return framework::Status();
}

framework::Status BalancedAllocation::ScoreRange(const framework::CycleState& state,
                                                 const framework::PodInfo& pod,
                                                 const framework::NodeInfo* const* nodes,
                                                 size_t count, int64_t* scores) {
  const size_t n = allocation_.size();
  if (n == 0) return framework::Status::Error("resources not found");
  ScratchBuffer pod_req(n);
  const int64_t* reqs;
  if (const auto* s = state.ReadAs<PreScoreState>(kPreScoreStateKey)) {
    reqs = s->pod_requests.data();
  } else {
    allocation_.PodRequests(pod, pod_req.data());
    reqs = pod_req.data();
    if (IsBestEffort(reqs, n)) {
      std::fill(scores, scores + count, 0);
      return framework::Status();
    }
  }
  allocation_.ScoreNodes(
      nodes, count, reqs,
      [n](const int64_t* requested, const int64_t* allocatable) {
        return BalancedResourceScore(n, requested, allocatable);
      },
      scores);
  return framework::Status();
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> BalancedAllocation::New(
    framework::PluginArgs args, framework::Handle& /*h*/) {
  auto parsed = ParseNodeResourcesBalancedAllocationArgs(args);
  if (!parsed.ok()) return parsed.status();
  return std::unique_ptr<framework::Plugin>(
      std::make_unique<BalancedAllocation>(std::move(parsed.value())));
}

bool BalancedAllocation::SameSignature(const framework::PodInfo& canonical,
                                       const framework::PodInfo& pod) const {
  return canonical.requests == pod.requests &&
         canonical.non_zero_requests == pod.non_zero_requests &&
         canonical.scoring_non_zero_requests == pod.scoring_non_zero_requests;
}

}  // namespace phalanx::plugins::noderesources
