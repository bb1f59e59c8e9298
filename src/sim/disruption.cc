#include "sim/disruption.h"

#include <charconv>
#include <map>
#include <string_view>

#include "api/labels.h"

namespace phalanx::sim {

namespace {

// intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true)
// (k8s.io/apimachinery/pkg/util/intstr/intstr.go: ceil(N * total / 100)), as
// getExpectedPodCount calls it for both maxUnavailable and minAvailable. The decoder admits
// only "N%" with N <= 100; anything else scales to 0 here.
int32_t Scaled(const api::IntOrString& v, int32_t total) {
  if (!v.is_string) return v.int_value;
  int64_t pct = 0;
  const std::string_view s = v.str_value;
  if (s.size() < 2 || s.back() != '%' ||
      std::from_chars(s.data(), s.data() + s.size() - 1, pct).ptr != s.data() + s.size() - 1 ||
      pct < 0 || pct > 100) {
    return 0;
  }
  return static_cast<int32_t>((pct * total + 99) / 100);
}

bool Ready(const api::Pod& p) {
  if (p.spec.node_name.empty()) return false;
  if (p.status.phase == "Succeeded" || p.status.phase == "Failed") return false;
  for (const auto& c : p.status.conditions) {
    if (c.type == "Ready") return c.status == "True";
  }
  return true;
}

const api::OwnerReference* ControllerOf(const api::Pod& p) {
  for (const auto& o : p.metadata.owner_references) {
    if (o.controller) return &o;
  }
  return nullptr;
}

// getExpectedScale: the sum of the scales of the pods' controllers; nullopt when a
// controller is unknown.
std::optional<int32_t> ExpectedScale(const std::vector<const api::Pod*>& pods,
                                     const ControllerScaleFn& scale) {
  std::map<std::string, int32_t> by_uid;
  for (const api::Pod* p : pods) {
    const api::OwnerReference* ref = ControllerOf(*p);
    if (ref == nullptr || by_uid.count(ref->uid)) continue;  // unmanaged, or known
    std::optional<int32_t> s = scale ? scale(*ref, p->metadata.namespace_) : std::nullopt;
    if (!s) return std::nullopt;
    by_uid[ref->uid] = *s;
  }
  int32_t total = 0;
  for (const auto& [uid, n] : by_uid) total += n;
  return total;
}

}  // namespace

api::PodDisruptionBudget::Status ComputePodDisruptionBudgetStatus(
    const api::PodDisruptionBudget& pdb, const std::vector<api::PodPtr>& pods,
    const ControllerScaleFn& scale, api::Timestamp now) {
  std::vector<const api::Pod*> matched;
  // policy/v1beta1: an empty selector selects nothing (its conversion to v1 says so).
  const bool empty_selects_nothing = pdb.api_version == "policy/v1beta1" && pdb.spec.selector &&
                                     pdb.spec.selector->match_labels.empty() &&
                                     pdb.spec.selector->match_expressions.empty();
  if (pdb.spec.selector && !empty_selects_nothing) {
    for (const auto& p : pods) {
      if (p->metadata.namespace_ == pdb.metadata.namespace_ &&
          api::LabelSelectorMatches(*pdb.spec.selector, p->metadata.labels)) {
        matched.push_back(p.get());
      }
    }
  }
  api::PodDisruptionBudget::Status st = pdb.status;
  int32_t expected = 0, desired = 0;
  const auto& spec = pdb.spec;
  if (spec.max_unavailable || (spec.min_available && spec.min_available->is_string)) {
    std::optional<int32_t> e = ExpectedScale(matched, scale);
    if (!e) {  // failSafe
      st.disruptions_allowed = 0;
      return st;
    }
    expected = *e;
    if (spec.max_unavailable) {
      desired = std::max(0, expected - Scaled(*spec.max_unavailable, expected));
    } else {
      desired = Scaled(*spec.min_available, expected);
    }
  } else if (spec.min_available) {
    expected = static_cast<int32_t>(matched.size());
    desired = spec.min_available->int_value;
  }
  // buildDisruptedPodMap keeps an entry until its expected deletion (disruption time +
  // DeletionTimeout) is Before(now), i.e. while expected >= now; countHealthyPods skips the
  // pod only while expected.After(now). At expected == now the entry stays in the map and
  // the pod counts as healthy (pkg/controller/disruption/disruption.go).
  std::map<std::string, api::Timestamp> disrupted;
  int32_t healthy = 0;
  for (const api::Pod* p : matched) {
    if (p->metadata.deletion_timestamp) continue;
    auto d = pdb.status.disrupted_pods.find(p->metadata.name);
    if (d != pdb.status.disrupted_pods.end()) {
      const api::Timestamp expected_deletion = d->second + kDisruptedPodTimeout;
      if (expected_deletion >= now) disrupted.insert(*d);
      if (expected_deletion > now) continue;
    }
    if (Ready(*p)) ++healthy;
  }
  st.disrupted_pods = std::move(disrupted);
  st.expected_pods = expected;
  st.desired_healthy = desired;
  st.current_healthy = healthy;
  st.disruptions_allowed = expected <= 0 ? 0 : std::max(0, healthy - desired);
  return st;
}

}  // namespace phalanx::sim
