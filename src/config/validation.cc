// Validation of a defaulted KubeSchedulerConfiguration. Upstream sources:
// pkg/scheduler/apis/config/validation/validation.go (ValidateKubeSchedulerConfiguration,
// validateKubeSchedulerProfile, validatePluginConfig, validateCommonQueueSort),
// k8s.io/component-base/config/validation (client connection, leader election) and
// k8s.io/client-go/tools/leaderelection (NewLeaderElector's renewDeadline rule).
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/labels_internal.h"
#include "config/internal.h"

namespace phalanx::config::internal {
namespace {

std::string Idx(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

// Plugins removed upstream; naming them is invalid in every version (upstream
// invalidPluginsByVersion lists them under v1, and isPluginInvalid checks the names
// before comparing versions).
constexpr std::string_view kInvalidPluginsVersion = kV1;
bool IsRemovedPlugin(const std::string& name) {
  static const std::set<std::string> kRemoved = {"AzureDiskLimits", "CinderLimits", "EBSLimits",
                                                 "GCEPDLimits"};
  return kRemoved.count(name) != 0;
}

// Plugins of other schedulers that a KubeSchedulerConfiguration written for them names,
// whose job a Phalanx plugin does: the hint the "not registered" error gives.
const char* ForeignPluginHint(const std::string& name) {
  if (name == "Coscheduling") {
    return "scheduler-plugins' (and Koordinator's) Coscheduling is not a Phalanx plugin: "
           "Phalanx's GangScheduling, in every profile by default, serves the same gangs "
           "(PodGroup scheduling.x-k8s.io / scheduling.sigs.k8s.io with label "
           "scheduling.x-k8s.io/pod-group, Koordinator's gang annotations); remove "
           "Coscheduling from plugins and pluginConfig (its permitWaitingTimeSeconds is "
           "GangSchedulingArgs permitWaitingTimeSeconds)";
  }
  if (name == "CapacityScheduling" || name == "ElasticQuota") {
    return "is not a Phalanx plugin: Phalanx's Queues plugin serves ElasticQuota objects "
           "(enable Queues instead; phalanx simulate enables it when the manifests hold "
           "queue objects)";
  }
  return nullptr;
}

std::string RemovedDetail(const std::string& api_version) {
  return "was invalid in version " + GoQuote(kInvalidPluginsVersion) +
         " (KubeSchedulerConfiguration is version " + GoQuote(api_version) + ")";
}

// The extension points validated for removed plugins (upstream's stagesToPluginSet; it
// leaves multiPoint out).
std::vector<std::pair<const char*, const PluginSet*>> Stages(const Plugins& p) {
  return {
      {"preEnqueue", &p.pre_enqueue},
      {"queueSort", &p.queue_sort},
      {"preFilter", &p.pre_filter},
      {"filter", &p.filter},
      {"postFilter", &p.post_filter},
      {"preScore", &p.pre_score},
      {"score", &p.score},
      {"reserve", &p.reserve},
      {"permit", &p.permit},
      {"preBind", &p.pre_bind},
      {"bind", &p.bind},
      {"postBind", &p.post_bind},
  };
}

bool SameRefs(const std::vector<PluginRef>& a, const std::vector<PluginRef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].weight != b[i].weight) return false;
  }
  return true;
}

bool SamePluginSet(const PluginSet& a, const PluginSet& b) {
  return SameRefs(a.enabled, b.enabled) && SameRefs(a.disabled, b.disabled);
}

std::string RenderRefs(const std::vector<PluginRef>& refs) {
  std::string out = "[";
  for (size_t i = 0; i < refs.size(); ++i) {
    if (i > 0) out += ",";
    out += "{\"name\":" + GoQuote(refs[i].name);
    if (refs[i].weight != 0) out += ",\"weight\":" + std::to_string(refs[i].weight);
    out += "}";
  }
  return out + "]";
}

std::string RenderPluginSet(const PluginSet& s) {
  return "{\"enabled\":" + RenderRefs(s.enabled) + ",\"disabled\":" + RenderRefs(s.disabled) + "}";
}

std::string RenderArgs(const YAML::Node* args) {
  if (args == nullptr) return "null";
  YAML::Emitter e;
  e << YAML::Flow << YAML::DoubleQuoted << *args;
  return e.good() ? std::string(e.c_str()) : std::string("object");
}

void ValidatePercentage(const std::string& path, int32_t value, FieldErrors* errs) {
  if (value < 0 || value > 100) {
    errs->push_back(Invalid(path, std::to_string(value), "not in valid range [0-100]"));
  }
}

void ValidateProfile(const std::string& path, const std::string& api_version, const Profile& p,
                     FieldErrors* errs) {
  if (p.scheduler_name.empty()) errs->push_back(Required(path + ".schedulerName"));
  if (p.percentage_of_nodes_to_score) {
    ValidatePercentage(path + ".percentageOfNodesToScore", *p.percentage_of_nodes_to_score, errs);
  }
  // validatePluginConfig: removed plugins in the per-point sets.
  for (const auto& [stage, set] : Stages(p.plugins)) {
    for (size_t i = 0; i < set->enabled.size(); ++i) {
      if (IsRemovedPlugin(set->enabled[i].name)) {
        errs->push_back(Invalid(Idx(path + ".plugins." + stage + ".enabled", i),
                                GoQuote(set->enabled[i].name), RemovedDetail(api_version)));
      }
    }
  }
  // Other schedulers' plugins with a Phalanx counterpart: not registered, and the hint.
  {
    std::vector<std::pair<std::string, const PluginSet*>> all = {
        {"multiPoint", &p.plugins.multi_point}};
    for (const auto& [stage, set] : Stages(p.plugins)) all.emplace_back(stage, set);
    std::set<std::string> hinted;
    for (const auto& [stage, set] : all) {
      for (size_t i = 0; i < set->enabled.size(); ++i) {
        const std::string& name = set->enabled[i].name;
        const char* hint = ForeignPluginHint(name);
        if (hint == nullptr || !hinted.insert(name).second) continue;
        errs->push_back(Invalid(Idx(path + ".plugins." + stage + ".enabled", i), GoQuote(name),
                                std::string("plugin is not registered: ") + hint));
      }
    }
    for (size_t i = 0; i < p.plugin_config.size(); ++i) {
      const std::string& name = p.plugin_config[i].name;
      const char* hint = ForeignPluginHint(name);
      if (hint == nullptr || !hinted.insert(name).second) continue;
      errs->push_back(Invalid(Idx(path + ".pluginConfig", i) + ".name", GoQuote(name),
                              std::string("plugin is not registered: ") + hint));
    }
  }
  // One pluginConfig per plugin; removed plugins may not be configured.
  std::set<std::string> seen;
  for (size_t i = 0; i < p.plugin_config.size(); ++i) {
    const std::string pc_path = Idx(path + ".pluginConfig", i);
    const std::string& name = p.plugin_config[i].name;
    if (!seen.insert(name).second) errs->push_back(Duplicate(pc_path, GoQuote(name)));
    if (IsRemovedPlugin(name)) {
      errs->push_back(Invalid(pc_path, GoQuote(name), RemovedDetail(api_version)));
    }
  }
}

// validateCommonQueueSort: every profile must have the queueSort set (and queue sort
// args) of the first profile.
void ValidateCommonQueueSort(const std::vector<Profile>& profiles, FieldErrors* errs) {
  const PluginSet& canon = profiles[0].plugins.queue_sort;
  std::string queue_sort_name;
  if (!canon.enabled.empty()) queue_sort_name = canon.enabled[0].name;
  if (canon.enabled.size() > 1) {
    errs->push_back(Invalid("profiles[0].plugins.queueSort.enabled",
                            std::to_string(canon.enabled.size()),
                            "only one queue sort plugin can be enabled"));
  }
  const YAML::Node* queue_sort_args = nullptr;
  if (!queue_sort_name.empty()) {
    for (const PluginConfig& pc : profiles[0].plugin_config) {
      if (pc.name == queue_sort_name && pc.args) queue_sort_args = pc.args.get();
    }
  }
  for (size_t i = 1; i < profiles.size(); ++i) {
    const PluginSet& curr = profiles[i].plugins.queue_sort;
    const std::string path = Idx("profiles", i);
    if (!SamePluginSet(canon, curr)) {
      errs->push_back(Invalid(path + ".plugins.queueSort", RenderPluginSet(curr),
                              "must be the same for all profiles"));
    }
    for (const PluginConfig& pc : profiles[i].plugin_config) {
      if (pc.name != queue_sort_name) continue;
      const bool equal =
          queue_sort_args != nullptr && pc.args && YamlEqual(*queue_sort_args, *pc.args);
      if (!equal) {
        errs->push_back(Invalid(path + ".pluginConfig.args", RenderArgs(pc.args.get()),
                                "queueSort must be the same for all profiles"));
      }
    }
  }
}

void ValidateLeaderElection(const LeaderElection& le, FieldErrors* errs) {
  if (!le.leader_elect) return;
  const std::string p = "leaderElection";
  if (le.lease_duration_seconds <= 0) {
    errs->push_back(Invalid(p + ".leaseDuration", FormatSeconds(le.lease_duration_seconds),
                            "must be greater than zero"));
  }
  if (le.renew_deadline_seconds <= 0) {
    errs->push_back(Invalid(p + ".renewDeadline", FormatSeconds(le.renew_deadline_seconds),
                            "must be greater than zero"));
  }
  if (le.retry_period_seconds <= 0) {
    errs->push_back(Invalid(p + ".retryPeriod", FormatSeconds(le.retry_period_seconds),
                            "must be greater than zero"));
  }
  if (le.lease_duration_seconds <= le.renew_deadline_seconds) {
    errs->push_back(Invalid(
        p + ".leaseDuration", FormatSeconds(le.lease_duration_seconds),
        "must be greater than `RenewDeadline` (" + FormatSeconds(le.renew_deadline_seconds) + ")"));
  }
  // client-go leaderelection.NewLeaderElector refuses RenewDeadline <= JitterFactor (1.2) *
  // RetryPeriod when the scheduler starts; report it with the other config errors.
  if (le.renew_deadline_seconds > 0 && le.retry_period_seconds > 0 &&
      static_cast<double>(le.renew_deadline_seconds) <=
          1.2 * static_cast<double>(le.retry_period_seconds)) {
    errs->push_back(Invalid(p + ".renewDeadline", FormatSeconds(le.renew_deadline_seconds),
                            "must be greater than retryPeriod*JitterFactor (" +
                                FormatSeconds(le.retry_period_seconds) + "*1.2)"));
  }
  if (le.resource_lock.empty()) errs->push_back(Required(p + ".resourceLock"));
  if (le.resource_namespace.empty()) errs->push_back(Required(p + ".resourceNamespace"));
  if (le.resource_name.empty()) errs->push_back(Required(p + ".resourceName"));
}

// upstream validateExtendedResourceName (validation.go): IsQualifiedName, then
// v1helper.IsExtendedResourceName (a '/' outside the kubernetes.io/ namespace, no
// "requests." prefix, and "requests.<name>" a qualified name). Empty when valid.
std::vector<std::string> ExtendedResourceNameErrors(const std::string& name) {
  if (api::Status e = api::internal::QualifiedNameError(name); !e.ok())
    return {std::string(e.message())};
  const bool native =
      name.find('/') == std::string::npos || name.find("kubernetes.io/") != std::string::npos;
  const bool extended = !native && name.rfind("requests.", 0) != 0 &&
                        api::internal::QualifiedNameError("requests." + name).ok();
  if (!extended) return {name + " is an invalid extended resource name"};
  return {};
}

// upstream validateExtenders (pkg/scheduler/apis/config/validation/validation.go), plus a
// required urlPrefix (upstream accepts an empty one and then posts to "/<verb>" on no host)
// and a non-negative httpTimeout.
void ValidateExtenders(const std::vector<Extender>& extenders, FieldErrors* errs) {
  int binders = 0;
  std::set<std::string> managed;
  for (size_t i = 0; i < extenders.size(); ++i) {
    const Extender& e = extenders[i];
    const std::string path = Idx("extenders", i);
    if (e.url_prefix.empty()) errs->push_back(Required(path + ".urlPrefix"));
    if (!e.prioritize_verb.empty() && e.weight <= 0) {
      errs->push_back(Invalid(path + ".weight", std::to_string(e.weight),
                              "must have a positive weight applied to it"));
    }
    if (e.http_timeout_ns < 0) {
      errs->push_back(Invalid(path + ".httpTimeout", FormatGoDuration(e.http_timeout_ns),
                              "must be non-negative"));
    }
    if (!e.bind_verb.empty()) ++binders;
    for (size_t j = 0; j < e.managed_resources.size(); ++j) {
      const std::string name_path = Idx(path + ".managedResources", j) + ".name";
      const std::string& name = e.managed_resources[j].name;
      for (const std::string& msg : ExtendedResourceNameErrors(name)) {
        errs->push_back(Invalid(name_path, GoQuote(name), msg));
      }
      if (!managed.insert(name).second) {
        errs->push_back(
            Invalid(name_path, GoQuote(name), "duplicate extender managed resource name"));
      }
    }
  }
  if (binders > 1) {
    errs->push_back(Invalid(
        "extenders", GoQuote("found " + std::to_string(binders) + " extenders implementing bind"),
        "only one extender can implement bind"));
  }
}

}  // namespace

FieldErrors Validate(const KubeSchedulerConfiguration& cfg) {
  FieldErrors errs;
  if (cfg.client_connection.burst < 0) {
    errs.push_back(Invalid("clientConnection.burst", std::to_string(cfg.client_connection.burst),
                           "must be non-negative"));
  }
  ValidateLeaderElection(cfg.leader_election, &errs);
  // Only ResourceLock "leases" is allowed (upstream TODO until ResourceLock goes away).
  if (cfg.leader_election.leader_elect && cfg.leader_election.resource_lock != "leases") {
    errs.push_back(Invalid("leaderElection.resourceLock",
                           GoQuote(cfg.leader_election.resource_lock),
                           "resourceLock value must be \"leases\""));
  }
  if (cfg.parallelism <= 0) {
    errs.push_back(Invalid("parallelism", std::to_string(cfg.parallelism),
                           "should be an integer value greater than zero"));
  }
  if (cfg.profiles.empty()) {
    errs.push_back(Required("profiles"));
  } else {
    std::map<std::string, size_t> existing;
    for (size_t i = 0; i < cfg.profiles.size(); ++i) {
      const Profile& p = cfg.profiles[i];
      const std::string path = Idx("profiles", i);
      ValidateProfile(path, cfg.api_version, p, &errs);
      if (existing.count(p.scheduler_name) != 0) {
        errs.push_back(Duplicate(path + ".schedulerName", GoQuote(p.scheduler_name)));
      }
      existing[p.scheduler_name] = i;
    }
    ValidateCommonQueueSort(cfg.profiles, &errs);
  }
  ValidatePercentage("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score, &errs);
  ValidateExtenders(cfg.extenders, &errs);
  if (cfg.pod_initial_backoff_seconds <= 0) {
    errs.push_back(Invalid("podInitialBackoffSeconds",
                           std::to_string(cfg.pod_initial_backoff_seconds),
                           "must be greater than 0"));
  }
  if (cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds) {
    errs.push_back(Invalid("podMaxBackoffSeconds", std::to_string(cfg.pod_max_backoff_seconds),
                           "must be greater than or equal to PodInitialBackoffSeconds"));
  }
  return errs;
}

}  // namespace phalanx::config::internal
