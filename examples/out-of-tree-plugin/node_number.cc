#include "node_number.h"

#include <yaml-cpp/yaml.h>

#include <string>

#include "plugins/helper/args.h"
#include "plugins/helper/validation.h"

namespace nodenumber {

namespace {

// What PreScore computes once per pod and Score reads for every node.
struct PreScoreState final : fw::StateData {
  int pod_suffix_number = 0;
  std::unique_ptr<fw::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

}  // namespace

std::optional<int> SuffixNumber(std::string_view name) {
  if (name.empty()) return std::nullopt;
  const char c = name.back();
  if (c < '0' || c > '9') return std::nullopt;
  return c - '0';
}

fw::Status NodeNumber::PreScore(fw::CycleState& state, const fw::PodInfo& pod,
                                const std::vector<const fw::NodeInfo*>& /*nodes*/) {
  const std::optional<int> n = SuffixNumber(pod.Pod().metadata.name);
  if (!n) return fw::Status();  // not an error: such pods just get no preference
  auto s = std::make_unique<PreScoreState>();
  s->pod_suffix_number = *n;
  state.Write(kPreScoreStateKey, std::move(s));
  return fw::Status();
}

fw::Status NodeNumber::Score(const fw::CycleState& state, const fw::PodInfo& /*pod*/,
                             const fw::NodeInfo& node, int64_t* score) {
  *score = 0;
  const auto* s = state.ReadAs<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) return fw::Status();  // the pod's name has no suffix digit
  const std::optional<int> n = SuffixNumber(node.name());
  if (!n) return fw::Status();
  const bool match = *n == s->pod_suffix_number;
  *score = match != reverse_ ? kMatchScore : kNonMatchScore;
  return fw::Status();
}

std::vector<fw::ClusterEventWithHint> NodeNumber::EventsToRegister() const {
  fw::ClusterEventWithHint e;
  e.event = {fw::EventResource::kNode, fw::kAdd, "NodeAdd"};
  return {std::move(e)};  // no hint: always requeue
}

fw::StatusOr<std::unique_ptr<fw::Plugin>> NodeNumber::New(fw::PluginArgs args,
                                                          fw::Handle& /*handle*/) {
  phalanx::plugins::helper::FieldErrors errs;
  bool has_content = false;
  bool reverse = false;
  if (phalanx::plugins::helper::CheckArgsMap(args, kArgsKind, {"reverse"}, &errs, &has_content) &&
      has_content) {
    const YAML::Node r = (*args)["reverse"];
    if (r && !r.IsNull() && !YAML::convert<bool>::decode(r, reverse)) {
      errs.Invalid("reverse", r.IsScalar() ? r.Scalar() : std::string("<non-scalar>"),
                   "must be a boolean");
    }
  }
  if (!errs.empty()) return phalanx::plugins::helper::ArgsError(errs, kArgsKind);
  return std::unique_ptr<fw::Plugin>(std::make_unique<NodeNumber>(reverse));
}

}  // namespace nodenumber
