// Taint/toleration matching (upstream k8s.io/api/core/v1/toleration.go ToleratesTaint and
// k8s.io/component-helpers/scheduling/corev1 helpers).
#pragma once

#include <string_view>
#include <vector>

#include "api/types.h"

namespace phalanx::plugins::helper {

inline constexpr std::string_view kTaintEffectNoSchedule = "NoSchedule";
inline constexpr std::string_view kTaintEffectPreferNoSchedule = "PreferNoSchedule";
inline constexpr std::string_view kTaintEffectNoExecute = "NoExecute";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

// True if `t` tolerates `taint`: a non-empty toleration effect must equal the taint's,
// a non-empty key must equal the taint's (empty key + Exists tolerates every taint);
// operator "" or "Equal" compares values, "Exists" matches any value, any other
// operator matches nothing.
bool ToleratesTaint(const api::Toleration& t, const api::Taint& taint);

// As above for a taint given by its fields (no api::Taint needed).
bool ToleratesTaint(const api::Toleration& t, std::string_view key, std::string_view value,
                    std::string_view effect);

// True if any toleration tolerates `taint`.
bool TolerationsTolerateTaint(const std::vector<api::Toleration>& tolerations,
                              const api::Taint& taint);

bool TolerationsTolerateTaint(const std::vector<api::Toleration>& tolerations, std::string_view key,
                              std::string_view value, std::string_view effect);

// The first taint with effect NoSchedule or NoExecute that no toleration tolerates, or
// nullptr (upstream FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc).
const api::Taint* FindUntoleratedDoNotScheduleTaint(
    const std::vector<api::Taint>& taints, const std::vector<api::Toleration>& tolerations);

}  // namespace phalanx::plugins::helper
