#include "plugins/helper/taints.h"

namespace phalanx::plugins::helper {

bool ToleratesTaint(const api::Toleration& t, std::string_view key, std::string_view value,
                    std::string_view effect) {
  if (!t.effect.empty() && t.effect != effect) return false;
  if (!t.key.empty() && t.key != key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == value;
  if (t.op == "Exists") return true;
  return false;
}

bool ToleratesTaint(const api::Toleration& t, const api::Taint& taint) {
  return ToleratesTaint(t, taint.key, taint.value, taint.effect);
}

bool TolerationsTolerateTaint(const std::vector<api::Toleration>& tolerations, std::string_view key,
                              std::string_view value, std::string_view effect) {
  for (const auto& t : tolerations) {
    if (ToleratesTaint(t, key, value, effect)) return true;
  }
  return false;
}

bool TolerationsTolerateTaint(const std::vector<api::Toleration>& tolerations,
                              const api::Taint& taint) {
  return TolerationsTolerateTaint(tolerations, taint.key, taint.value, taint.effect);
}

const api::Taint* FindUntoleratedDoNotScheduleTaint(
    const std::vector<api::Taint>& taints, const std::vector<api::Toleration>& tolerations) {
  for (const auto& taint : taints) {
    if (taint.effect != kTaintEffectNoSchedule && taint.effect != kTaintEffectNoExecute) {
      continue;
    }
    if (!TolerationsTolerateTaint(tolerations, taint)) return &taint;
  }
  return nullptr;
}

}  // namespace phalanx::plugins::helper
