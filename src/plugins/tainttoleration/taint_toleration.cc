#include "plugins/tainttoleration/taint_toleration.h"

#include <fmt/format.h>

#include "plugins/helper/normalize_score.h"
#include "plugins/helper/taints.h"

namespace phalanx::plugins::tainttoleration {

namespace {

struct PreScoreState final : framework::StateData {
  std::vector<api::Toleration> tolerations_prefer_no_schedule;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

}  // namespace

framework::Status TaintToleration::Filter(const framework::CycleState& /*state*/,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node) {
  const api::Node* n = node.node();
  if (n == nullptr) return framework::Status::Error("invalid nodeInfo");
  if (!node.has_taints()) return framework::Status();
  const api::Taint* taint =
      helper::FindUntoleratedDoNotScheduleTaint(n->spec.taints, pod.Pod().spec.tolerations);
  if (taint == nullptr) return framework::Status();
  return framework::Status::UnschedulableAndUnresolvable(
      fmt::format("node(s) had untolerated taint {{{}: {}}}", taint->key, taint->value));
}

framework::Status TaintToleration::PreScore(framework::CycleState& state,
                                            const framework::PodInfo& pod,
                                            const std::vector<const framework::NodeInfo*>&) {
  auto s = std::make_unique<PreScoreState>();
  for (const auto& t : pod.Pod().spec.tolerations) {
    // An empty effect means all effects, PreferNoSchedule included.
    if (t.effect.empty() || t.effect == helper::kTaintEffectPreferNoSchedule) {
      s->tolerations_prefer_no_schedule.push_back(t);
    }
  }
  state.Write(kPreScoreStateKey, std::move(s));
  return framework::Status();
}

framework::Status TaintToleration::ScoreRange(const framework::CycleState& state,
                                              const framework::PodInfo& /*pod*/,
                                              const framework::NodeInfo* const* nodes, size_t count,
                                              int64_t* scores) {
  const auto* s = state.ReadAs<PreScoreState>(kPreScoreStateKey);
  if (s == nullptr) {
    return framework::Status::Error(
        "failed to read \"PreScoreTaintToleration\" from cycleState: not found");
  }
  for (size_t i = 0; i < count; ++i) {
    const framework::NodeInfo& node = *nodes[i];
    const api::Node* n = node.node();
    if (n == nullptr) return framework::Status::Error("invalid nodeInfo");
    int64_t untolerated = 0;
    if (node.has_taints()) {
      for (const auto& taint : n->spec.taints) {
        if (taint.effect != helper::kTaintEffectPreferNoSchedule) continue;
        if (!helper::TolerationsTolerateTaint(s->tolerations_prefer_no_schedule, taint)) {
          ++untolerated;
        }
      }
    }
    scores[i] = untolerated;
  }
  return framework::Status();
}

framework::Status TaintToleration::NormalizeScore(const framework::CycleState&,
                                                  const framework::PodInfo&,
                                                  const std::vector<const framework::NodeInfo*>&,
                                                  std::vector<int64_t>& scores) {
  helper::DefaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/true, scores);
  return framework::Status();
}

std::vector<framework::ClusterEventWithHint> TaintToleration::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events(2);
  events[0].event = {framework::EventResource::kNode, framework::kAdd | framework::kUpdateNodeTaint,
                     "NodeAdd|NodeTaintChange"};
  // isSchedulableAfterNodeChange: queue when the node was (or did not exist as)
  // untolerated and is tolerated now.
  events[0].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.new_node == nullptr) return framework::QueueingHint::kQueue;
    const auto& tolerations = pod.spec.tolerations;
    bool was_untolerated = true;
    if (objs.old_node != nullptr) {
      was_untolerated = helper::FindUntoleratedDoNotScheduleTaint(objs.old_node->spec.taints,
                                                                  tolerations) != nullptr;
    }
    const bool is_untolerated = helper::FindUntoleratedDoNotScheduleTaint(
                                    objs.new_node->spec.taints, tolerations) != nullptr;
    return was_untolerated && !is_untolerated ? framework::QueueingHint::kQueue
                                              : framework::QueueingHint::kQueueSkip;
  };
  events[1].event = {framework::EventResource::kPod, framework::kUpdatePodTolerations,
                     "PodTolerationChange"};
  // isSchedulableAfterPodTolerationChange.
  events[1].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.new_pod == nullptr) return framework::QueueingHint::kQueue;
    return objs.new_pod->metadata.uid == pod.metadata.uid ? framework::QueueingHint::kQueue
                                                          : framework::QueueingHint::kQueueSkip;
  };
  return events;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> TaintToleration::New(
    framework::PluginArgs /*args*/, framework::Handle& /*h*/) {
  return std::unique_ptr<framework::Plugin>(std::make_unique<TaintToleration>());
}

bool TaintToleration::SameSignature(const framework::PodInfo& canonical,
                                    const framework::PodInfo& pod) const {
  return canonical.pod->spec.tolerations == pod.pod->spec.tolerations;
}

}  // namespace phalanx::plugins::tainttoleration
