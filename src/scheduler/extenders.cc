// The scheduler's HTTP extenders (upstream pkg/scheduler/schedule_one.go
// findNodesThatPassExtenders, prioritizeNodes' extender part, extendersBinding; and
// scheduler.go buildExtenders). The extenders themselves are src/extender.
#include <yaml-cpp/yaml.h>

#include <memory>

#include "extender/http_extender.h"
#include "scheduler/scheduler.h"
#include "spdlog/spdlog.h"

namespace phalanx::scheduler {

using framework::Code;
using framework::NodeInfo;
using framework::Status;

Status Scheduler::BuildExtenders() {
  config::KubeSchedulerConfiguration& cfg = opts_.config;
  if (opts_.extenders.empty() && !cfg.extenders.empty()) {
    auto built = extender::BuildExtenders(cfg.extenders);
    if (!built.ok()) return Status::Error(std::string(built.status().message()));
    for (auto& e : *built) opts_.extenders.push_back(std::move(e));
  }
  for (const auto& e : opts_.extenders) extender_list_.extenders.push_back(e.get());
  if (extender_list_.extenders.empty()) return Status::Success();
  // A rejection that an extender shares is remembered by nothing the memo watches (the
  // extender's state is its own): every PodGroup cycle runs in full.
  opts_.replay_podgroup_rejections = false;
  // upstream buildExtenders: the managed resources with ignoredByScheduler become
  // NodeResourcesFitArgs.ignoredResources of every profile (replacing the profile's list:
  // "the extender ignored resources take precedence").
  const std::vector<std::string> ignored = extender::IgnoredExtendedResources(cfg.extenders);
  if (ignored.empty()) return Status::Success();
  for (config::Profile& p : cfg.profiles) {
    config::PluginConfig* fit = nullptr;
    for (config::PluginConfig& pc : p.plugin_config) {
      if (pc.name == "NodeResourcesFit") fit = &pc;
    }
    if (fit == nullptr) {
      p.plugin_config.push_back({"NodeResourcesFit", nullptr});
      fit = &p.plugin_config.back();
    }
    YAML::Node args =
        fit->args && fit->args->IsMap() ? YAML::Clone(*fit->args) : YAML::Node(YAML::NodeType::Map);
    YAML::Node list(YAML::NodeType::Sequence);
    for (const std::string& r : ignored) list.push_back(r);
    args["ignoredResources"] = list;
    fit->args = std::make_shared<const YAML::Node>(args);
  }
  return Status::Success();
}

bool Scheduler::ExtendersPass(const FilterPass& pass, std::vector<const NodeInfo*>* feasible) {
  const size_t before = feasible->size();
  for (framework::Extender* ext : extender_list_.extenders) {
    if (feasible->empty()) break;
    if (!ext->IsInterested(*pass.pod.pod)) continue;
    framework::ExtenderFilterResult r;
    api::Status s = ext->Filter(*pass.pod.pod, *feasible, &r);
    if (!s.ok()) {
      if (ext->IsIgnorable()) {
        spdlog::warn("Skipping extender {} as it returned error {} and has ignorable flag set",
                     ext->Name(), std::string(s.message()));
        continue;
      }
      *pass.err = Status::Error(std::string(s.message()));
      return false;
    }
    // Current upstream: FailedAndUnresolvableNodes take precedence; statuses are set (a node
    // already failed by a plugin gets the extender's status instead).
    auto set = [&](const std::string& node, Status st) {
      st.WithPlugin(framework::kExtenderName);
      for (auto& [name, old] : pass.diag->node_statuses) {
        if (name == node) {
          old = std::move(st);
          return;
        }
      }
      pass.diag->node_statuses.emplace_back(node, std::move(st));
    };
    for (const auto& [node, msg] : r.unresolvable) {
      set(node, Status(Code::kUnschedulableAndUnresolvable, msg));
    }
    for (const auto& [node, msg] : r.failed) {
      if (!r.unresolvable.count(node)) set(node, Status(Code::kUnschedulable, msg));
    }
    *feasible = std::move(r.nodes);
  }
  // Extenders have no queueing hints: a pod they rejected waits for any cluster event.
  if (feasible->size() != before) pass.diag->unschedulable_plugins.insert(framework::kExtenderName);
  return true;
}

void Scheduler::AddExtenderScores(const framework::PodInfo& pod,
                                  const std::vector<const NodeInfo*>& feasible,
                                  std::vector<int64_t>* totals) {
  std::map<std::string, int64_t> combined;
  for (framework::Extender* ext : extender_list_.extenders) {
    if (!ext->IsInterested(*pod.pod)) continue;
    std::map<std::string, int64_t> scores;
    int64_t weight = 0;
    // Prioritization errors are ignored: the plugins and other extenders decide.
    if (api::Status s = ext->Prioritize(*pod.pod, feasible, &scores, &weight); !s.ok()) {
      spdlog::warn("extender {} prioritize: {}", ext->Name(), std::string(s.message()));
      continue;
    }
    for (const auto& [host, score] : scores) combined[host] += score * weight;
  }
  // MaxNodeScore / MaxExtenderPriority = 100 / 10.
  constexpr int64_t kScale = framework::kMaxNodeScore / framework::kMaxExtenderPriority;
  for (size_t i = 0; i < feasible.size(); ++i) {
    auto it = combined.find(feasible[i]->name());
    if (it != combined.end()) (*totals)[i] += it->second * kScale;
  }
}

bool Scheduler::ExtendersBinding(const api::Pod& pod, const std::string& node, Status* out) {
  for (framework::Extender* ext : extender_list_.extenders) {
    if (!ext->IsBinder() || !ext->IsInterested(pod)) continue;
    api::Status s = ext->Bind(pod, node);
    if (s.ok() && opts_.bind_after_extender_binding) s = opts_.client->Bind(pod, node);
    *out = s.ok() ? Status::Success() : Status::Error(std::string(s.message()));
    return true;
  }
  return false;
}

}  // namespace phalanx::scheduler
