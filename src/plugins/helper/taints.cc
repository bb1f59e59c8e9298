#include "plugins/helper/taints.h"

namespace phalanx::plugins::helper {

bool ToleratesTaint(const api::Toleration& t, const api::Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == taint.value;
  if (t.op == "Exists") return true;
  return false;
}

bool TolerationsTolerateTaint(const std::vector<api::Toleration>& tolerations,
                              const api::Taint& taint) {
  for (const auto& t : tolerations) {
    if (ToleratesTaint(t, taint)) return true;
  }
  return false;
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
