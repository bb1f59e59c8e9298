#include "sim/scenario.h"

#include <algorithm>
#include <cmath>

#include "api/decode.h"
#include "api/resource.h"

namespace phalanx::sim {

namespace {

bool ParseSeconds(const std::string& s, int64_t* ns) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0 || v > 1e12) {
    return false;
  }
  *ns = static_cast<int64_t>(std::llround(v * 1e9));
  return true;
}

}  // namespace

api::Status LoadManifestScenario(const std::string& path, Scenario* out) {
  api::Manifests m;
  if (auto s = api::LoadManifests(path, &m); !s.ok()) return s;
  out->name = path;
  for (auto& n : m.nodes) {
    auto a = n.metadata.annotations.find(kArrivalAnnotation);
    int64_t at = 0;
    if (a != n.metadata.annotations.end() && !ParseSeconds(a->second, &at)) {
      return absl::InvalidArgumentError(
          path + ": Node " + n.metadata.name + ": metadata.annotations[" + kArrivalAnnotation +
          "]: Invalid value: \"" + a->second + "\": must be a non-negative number of seconds");
    }
    if (at > 0) {
      out->later_nodes.push_back({std::move(n), at});
    } else {
      out->nodes.push_back(std::move(n));
    }
  }
  std::stable_sort(out->later_nodes.begin(), out->later_nodes.end(),
                   [](const TimedNode& a, const TimedNode& b) { return a.arrival < b.arrival; });
  out->namespaces = std::move(m.namespaces);
  out->priority_classes = std::move(m.priority_classes);
  out->objects = std::move(m.objects);
  out->pod_disruption_budgets = std::move(m.pod_disruption_budgets);
  std::vector<api::Pod> pods = std::move(m.pods);
  for (const auto& c : m.controllers) {
    if (c.kind != "Job") out->controller_replicas[c.metadata.uid] = c.replicas;
    auto expanded = api::ExpandController(c);
    for (auto& p : expanded) {
      // Controller-level simulation annotations apply to every pod.
      for (const char* k : {kArrivalAnnotation, kDurationAnnotation}) {
        auto it = c.metadata.annotations.find(k);
        if (it != c.metadata.annotations.end() && !p.metadata.annotations.count(k)) {
          p.metadata.annotations[k] = it->second;
        }
      }
      pods.push_back(std::move(p));
    }
  }
  api::Timestamp earliest = 0;
  bool have = false;
  for (const auto& p : pods) {
    if (p.metadata.creation_timestamp != 0 && (!have || p.metadata.creation_timestamp < earliest)) {
      earliest = p.metadata.creation_timestamp;
      have = true;
    }
  }
  for (auto& p : pods) {
    TimedPod tp;
    auto a = p.metadata.annotations.find(kArrivalAnnotation);
    if (a != p.metadata.annotations.end()) {
      if (!ParseSeconds(a->second, &tp.arrival)) {
        return absl::InvalidArgumentError(
            path + ": Pod " + p.Key() + ": metadata.annotations[" + kArrivalAnnotation +
                 "]: Invalid value: \"" + a->second + "\": must be a non-negative number of seconds");
      }
    } else if (p.metadata.creation_timestamp != 0) {
      tp.arrival = p.metadata.creation_timestamp - earliest;
    }
    auto d = p.metadata.annotations.find(kDurationAnnotation);
    if (d != p.metadata.annotations.end()) {
      int64_t ns = 0;
      if (!ParseSeconds(d->second, &ns)) {
        return absl::InvalidArgumentError(
            path + ": Pod " + p.Key() + ": metadata.annotations[" + kDurationAnnotation +
                 "]: Invalid value: \"" + d->second + "\": must be a non-negative number of seconds");
      }
      tp.run_duration_ns = ns;
    }
    p.metadata.creation_timestamp = 0;  // the store stamps the virtual arrival time
    tp.pod = std::move(p);
    out->pods.push_back(std::move(tp));
  }
  std::stable_sort(out->pods.begin(), out->pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival < b.arrival; });
  return absl::OkStatus();
}

}  // namespace phalanx::sim
